# AOTInductor packages (.pt2). On a libtorch 2.x build: the packages are exported at test time with
# that torch's own Python through python/layerprof_export.py (pt2_models.py), then profiled through
# the CLI (check_pt2.py: calls against eager hooks, times that add up, broken packages, diff). On
# a 1.x build: a .pt2 is refused with exit 2 and one line saying which libtorch it needs.
if(LP_TORCH_VERSION VERSION_GREATER_EQUAL 2)
  # The torch the build links is site-packages/torch of a venv (scripts/setup.sh --torch2).
  get_filename_component(_lp_venv "${LP_TORCH_PREFIX}/../../../.." ABSOLUTE)
  set(LP_TORCH2_PYTHON "${_lp_venv}/bin/python" CACHE FILEPATH
      "The Python whose torch this build links (exports the .pt2 test packages)")
  add_test(NAME integration.pt2_export
           COMMAND ${LP_TORCH2_PYTHON} -W ignore ${CMAKE_CURRENT_SOURCE_DIR}/pt2_models.py
                   ${CMAKE_CURRENT_BINARY_DIR}/pt2)
  set_tests_properties(integration.pt2_export PROPERTIES LABELS "integration;pt2" TIMEOUT ${LP_TEST_TIMEOUT}
                       FIXTURES_SETUP pt2_packages)
  add_test(NAME integration.pt2
           COMMAND ${LP_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_pt2.py $<TARGET_FILE:layerprof>
                   ${CMAKE_CURRENT_BINARY_DIR}/pt2)
  set_tests_properties(integration.pt2 PROPERTIES LABELS "integration;pt2" TIMEOUT ${LP_TEST_TIMEOUT}
                       FIXTURES_REQUIRED pt2_packages)
else()
  add_test(NAME integration.pt2
           COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/test_pt2_refused.sh $<TARGET_FILE:layerprof>
                   ${CMAKE_CURRENT_BINARY_DIR})
  set_tests_properties(integration.pt2 PROPERTIES LABELS "integration;pt2" TIMEOUT ${LP_TEST_TIMEOUT})
endif()

# A package the program loaded itself (layerprof_pt2.hpp), against the CLI's sessions on the same
# packages; links libtorch itself (cmake/LpTorchProgram.cmake).
if(LP_TORCH_VERSION VERSION_GREATER_EQUAL 2)
  add_executable(test_attach_pt2 ${CMAKE_CURRENT_SOURCE_DIR}/test_attach_pt2.cpp)
  lp_torch_program(test_attach_pt2)
  add_test(NAME integration.attach_pt2 COMMAND test_attach_pt2 ${CMAKE_CURRENT_BINARY_DIR}/pt2)
  add_test(NAME examples.attach_pt2
           COMMAND ${LP_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/test_attach_pt2_example.sh
                   $<TARGET_FILE:attach_pt2> $<TARGET_FILE:layerprof> ${CMAKE_CURRENT_BINARY_DIR}/pt2)
  set_tests_properties(integration.attach_pt2 examples.attach_pt2 PROPERTIES
                       LABELS "integration;pt2" TIMEOUT ${LP_TEST_TIMEOUT} FIXTURES_REQUIRED pt2_packages)
endif()

# --memory per module of a package: exact on a known-activation package, against its TorchScript
# file, and resnet18's package against its TorchScript file (check_pt2_memory.py).
if(LP_TORCH_VERSION VERSION_GREATER_EQUAL 2)
  add_test(NAME integration.pt2_memory
           COMMAND ${LP_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_pt2_memory.py
                   $<TARGET_FILE:layerprof> ${CMAKE_CURRENT_BINARY_DIR}/pt2)
  set_tests_properties(integration.pt2_memory PROPERTIES LABELS "integration;pt2"
                       TIMEOUT ${LP_TEST_TIMEOUT} FIXTURES_REQUIRED pt2_packages)
endif()
