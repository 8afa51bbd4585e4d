# LpCudaTests.cmake: the CUDA integration tests. Included from tests/integration/CMakeLists.txt.
#  integration.cuda_device (label integration): --device cuda and the CUDA options on any machine;
#    without a GPU it checks the clean "CUDA is not available: ..." failure.
#  gpu.cuda (label gpu): CUDA kernel time and memory per module on a real GPU; without one it
#    prints "skipped: no CUDA device (...)" and exits 77, which ctest reports as skipped.
# Run the GPU ones with:  ctest --test-dir BUILD -L gpu --output-on-failure
set(LP_CUDA_MODELS_DIR "${CMAKE_CURRENT_BINARY_DIR}/cuda_models")

# cuda_matmul.pt is exported at build time (no GPU needed to export) by LP_PYTHON.
execute_process(COMMAND ${LP_PYTHON} -c "import torch" RESULT_VARIABLE _lp_py_rc
                OUTPUT_QUIET ERROR_QUIET)
if(_lp_py_rc EQUAL 0)
  add_custom_command(
    OUTPUT ${LP_CUDA_MODELS_DIR}/cuda_matmul.pt
    COMMAND ${LP_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/cuda_models.py --out ${LP_CUDA_MODELS_DIR}
    DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/cuda_models.py
    COMMENT "Exporting the gpu tests' TorchScript models with ${LP_PYTHON}"
    VERBATIM)
  add_custom_target(cuda_models ALL DEPENDS ${LP_CUDA_MODELS_DIR}/cuda_matmul.pt)
else()
  message(STATUS "layerprof: ${LP_PYTHON} cannot import torch: the gpu tests will skip "
                 "cuda_matmul (set LP_PYTHON)")
endif()

foreach(name test_cuda_device test_cuda_gpu)
  add_executable(${name} ${CMAKE_CURRENT_SOURCE_DIR}/${name}.c)
  target_compile_options(${name} PRIVATE ${LP_WARNINGS})
  target_compile_definitions(${name} PRIVATE LP_MODELS_DIR="${LP_MODELS_DIR}"
                             LP_CUDA_MODELS_DIR="${LP_CUDA_MODELS_DIR}"
                             LP_TEST_HAVE_NVTX=$<BOOL:${LP_HAVE_NVTX}>)
  target_link_libraries(${name} PRIVATE liblayerprof PkgConfig::CMOCKA)
  if(TARGET models)
    add_dependencies(${name} models)
  endif()
  if(TARGET cuda_models)
    add_dependencies(${name} cuda_models)
  endif()
endforeach()

add_test(NAME integration.cuda_device COMMAND test_cuda_device $<TARGET_FILE:layerprof>)
set_tests_properties(integration.cuda_device PROPERTIES LABELS integration TIMEOUT ${LP_TEST_TIMEOUT})

add_test(NAME gpu.cuda COMMAND test_cuda_gpu)
set_tests_properties(gpu.cuda PROPERTIES LABELS gpu SKIP_RETURN_CODE 77 TIMEOUT ${LP_TEST_TIMEOUT})
