# A module the program holds (layerprof.hpp): test_attach.cpp, and examples/attach.cpp run as a
# user would. Both link libtorch themselves (cmake/LpTorchProgram.cmake).
find_package(Torch REQUIRED QUIET)
include(${CMAKE_SOURCE_DIR}/cmake/LpTorchProgram.cmake)
add_executable(test_attach ${CMAKE_CURRENT_SOURCE_DIR}/test_attach.cpp)
target_compile_definitions(test_attach PRIVATE LP_MODELS_DIR="${LP_MODELS_DIR}")
lp_torch_program(test_attach)
if(TARGET models)
  add_dependencies(test_attach models)
endif()
add_test(NAME integration.attach COMMAND test_attach)
add_test(NAME examples.attach
         COMMAND ${LP_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/test_attach_example.sh $<TARGET_FILE:attach>
                 $<TARGET_FILE:layerprof> ${LP_MODELS_DIR}/nested.pt 1x3x16x16)
set_tests_properties(integration.attach examples.attach PROPERTIES LABELS "integration" TIMEOUT ${LP_TEST_TIMEOUT})

# A live session under load: 4 threads of forwards and a reader of the exposition
# (docs/sampling.md). Under ThreadSanitizer too, in its own build (scripts/tsan.sh).
add_executable(test_live ${CMAKE_CURRENT_SOURCE_DIR}/test_live.cpp)
target_compile_definitions(test_live PRIVATE LP_MODELS_DIR="${LP_MODELS_DIR}")
lp_torch_program(test_live)
if(TARGET models)
  add_dependencies(test_live models)
endif()
add_test(NAME integration.live COMMAND test_live)
set_tests_properties(integration.live PROPERTIES LABELS "integration" TIMEOUT ${LP_TEST_TIMEOUT})

# Attached sessions on a GPU (ctest label gpu; skipped without one): a module the program moved
# to CUDA, on the default stream and on a pool stream, and a CUDA package when bench/cuda_check.sh
# passes one. Needs a CUDA libtorch: c10_cuda (the program's own stream) and the runtime headers
# that c10/cuda/CUDAStream.h includes (found by cmake/LpShimCuda.cmake).
if(CAFFE2_USE_CUDA AND TARGET c10_cuda AND LP_CUDART_INCLUDE_DIR)
  add_executable(test_attach_cuda ${CMAKE_CURRENT_SOURCE_DIR}/test_attach_cuda.cpp)
  target_compile_definitions(test_attach_cuda PRIVATE LP_MODELS_DIR="${LP_MODELS_DIR}"
                             LP_TEST_PT2=$<VERSION_GREATER_EQUAL:${LP_TORCH_VERSION},2>)
  lp_torch_program(test_attach_cuda)
  target_include_directories(test_attach_cuda SYSTEM PRIVATE ${LP_CUDART_INCLUDE_DIR})
  target_link_libraries(test_attach_cuda PRIVATE c10_cuda)
  if(TARGET models)
    add_dependencies(test_attach_cuda models)
  endif()
  add_test(NAME gpu.attach_cuda COMMAND test_attach_cuda)
  set_tests_properties(gpu.attach_cuda PROPERTIES LABELS gpu SKIP_RETURN_CODE 77
                       TIMEOUT ${LP_TEST_TIMEOUT})
endif()
