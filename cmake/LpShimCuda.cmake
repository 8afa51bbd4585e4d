# LpShimCuda.cmake: the shim's CUDA parts (shim/cuda.cpp). The device check and synchronisation use
# torch::cuda, present in every libtorch; the CUDA-events timer (the fallback when CUPTI cannot be
# had) needs a CUDA-enabled libtorch: the CUDA runtime headers and c10_cuda. Included from
# shim/CMakeLists.txt after find_package(Torch) and the lp_shim target. One status line.
target_sources(lp_shim PRIVATE ${CMAKE_SOURCE_DIR}/shim/cuda.cpp)

# Caffe2Config sets CAFFE2_USE_CUDA in CUDA builds of libtorch; TorchConfig then lists c10_cuda.
set(LP_TORCH_CUDA OFF)
if(CAFFE2_USE_CUDA AND (C10_CUDA_LIBRARY OR TARGET c10_cuda))
  set(_lp_cuda_inc "")
  if(TARGET CUDA::cudart)
    get_target_property(_lp_cuda_inc CUDA::cudart INTERFACE_INCLUDE_DIRECTORIES)
  endif()
  find_path(LP_CUDART_INCLUDE_DIR cuda_runtime_api.h
            HINTS ${_lp_cuda_inc} ${LP_CUDA_INCLUDE_DIRS} ${CUDA_INCLUDE_DIRS})
  if(LP_CUDART_INCLUDE_DIR)
    set(LP_TORCH_CUDA ON)
  endif()
endif()

if(LP_TORCH_CUDA)
  target_compile_definitions(lp_shim PRIVATE LPS_HAVE_CUDA=1)
  target_include_directories(lp_shim SYSTEM PRIVATE ${LP_CUDART_INCLUDE_DIR})
  # The CUDA runtime symbols come from the libcudart that libtorch_cuda itself loads (the wheel's
  # nvidia/cu*/lib copy): linking the toolkit's libcudart here could load a second, older one.
  message(STATUS "layerprof: libtorch ${Torch_VERSION} has CUDA: --device cuda, CUDA memory and "
                 "the CUDA-events timer are built")
else()
  message(STATUS "layerprof: libtorch ${Torch_VERSION} has no CUDA: --device cuda is refused at "
                 "run time and there is no CUDA-events timer")
endif()
