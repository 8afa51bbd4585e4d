# LpCuda.cmake: the core's CUDA parts (src/collect/cupti.c, nvtx.c): CUPTI activity records for
# CUDA kernel time per module, and NVTX ranges. They need the CUDA Toolkit's headers and no libtorch:
# libcupti is opened at run time (preferring the copy libtorch already loaded, since a process has
# one CUPTI), so nothing here adds a link dependency. Included from the top CMakeLists.txt after
# lp_core_obj is defined. Says what it found, or what is missing, in one line.
#
# Without a toolkit, the headers PyPI's CUDA wheels carry do as well: torch's wheel depends on them
# (site-packages/nvidia/cu13/include for CUDA 13; nvidia/cuda_cupti/include, nvidia/nvtx/include,
# ... for CUDA 12), found beside each CMAKE_PREFIX_PATH entry (scripts/build.sh passes torch's
# folder). So a machine with no toolkit still compiles every CUDA path of the core (the wheel's
# own CMake files, though, want a toolkit to link a CUDA libtorch: CI's machines have one).
# Found either way, the CUDA facts live in LP_CUDA_* variables: the CUDAToolkit_* ones are left
# to FindCUDAToolkit, which libtorch's own CMake files call again after this.
set(LP_HAVE_CUPTI OFF)
set(LP_HAVE_NVTX OFF)
set(LP_CUDA_FOUND OFF)
find_package(CUDAToolkit QUIET)
set(_lp_wheel_cuda_dirs "")
foreach(_lp_prefix ${CMAKE_PREFIX_PATH})
  file(GLOB _lp_found LIST_DIRECTORIES true "${_lp_prefix}/../nvidia/*/include")
  list(APPEND _lp_wheel_cuda_dirs ${_lp_found})
endforeach()
if(CUDAToolkit_FOUND)
  set(LP_CUDA_FOUND ON)
  set(LP_CUDA_VERSION ${CUDAToolkit_VERSION})
  set(LP_CUDA_INCLUDE_DIRS ${CUDAToolkit_INCLUDE_DIRS})
  set(_lp_cuda_hints ${CUDAToolkit_INCLUDE_DIRS} "${CUDAToolkit_LIBRARY_ROOT}/extras/CUPTI/include"
                     "${CUDAToolkit_TARGET_DIR}/extras/CUPTI/include" ${_lp_wheel_cuda_dirs})
  set(_lp_cuda_lib_hints ${CUDAToolkit_LIBRARY_DIR} "${CUDAToolkit_LIBRARY_ROOT}/extras/CUPTI/lib64")
elseif(_lp_wheel_cuda_dirs)
  find_path(_lp_wheel_cuda_h cuda.h HINTS ${_lp_wheel_cuda_dirs} NO_DEFAULT_PATH)
  if(_lp_wheel_cuda_h)
    set(LP_CUDA_FOUND ON)
    set(LP_CUDA_INCLUDE_DIRS ${_lp_wheel_cuda_h})
    file(STRINGS "${_lp_wheel_cuda_h}/cuda.h" _lp_cuda_version REGEX "#define CUDA_VERSION ")
    string(REGEX REPLACE ".*CUDA_VERSION ([0-9]+).*" "\\1" _lp_cuda_version "${_lp_cuda_version}")
    math(EXPR _lp_major "${_lp_cuda_version} / 1000")
    math(EXPR _lp_minor "(${_lp_cuda_version} % 1000) / 10")
    set(LP_CUDA_VERSION "${_lp_major}.${_lp_minor} (the headers of PyPI's nvidia wheels)")
    set(_lp_cuda_hints ${_lp_wheel_cuda_dirs})
    set(_lp_cuda_lib_hints "")
    foreach(_lp_dir ${_lp_wheel_cuda_dirs})
      get_filename_component(_lp_lib "${_lp_dir}/../lib" ABSOLUTE)
      list(APPEND _lp_cuda_lib_hints ${_lp_lib})
    endforeach()
  endif()
endif()
if(LP_CUDA_FOUND)
  find_path(LP_CUPTI_INCLUDE_DIR cupti.h HINTS ${_lp_cuda_hints} NO_DEFAULT_PATH)
  find_path(LP_NVTX_INCLUDE_DIR nvtx3/nvToolsExt.h HINTS ${_lp_cuda_hints} NO_DEFAULT_PATH)
  set(_lp_cupti_lib "")
  if(TARGET CUDA::cupti)
    get_target_property(_lp_cupti_lib CUDA::cupti IMPORTED_LOCATION)
  endif()
  if(NOT _lp_cupti_lib)
    find_library(LP_CUPTI_LIBRARY NAMES cupti libcupti.so.13 libcupti.so.12
                 HINTS ${_lp_cuda_lib_hints} NO_DEFAULT_PATH)
    set(_lp_cupti_lib "${LP_CUPTI_LIBRARY}")
  endif()
  if(LP_CUPTI_INCLUDE_DIR)
    set(LP_HAVE_CUPTI ON)
    target_include_directories(lp_core_obj SYSTEM PRIVATE ${LP_CUPTI_INCLUDE_DIR}
                                                      ${LP_CUDA_INCLUDE_DIRS})
    target_compile_definitions(lp_core_obj PRIVATE LP_HAVE_CUPTI=1
                                               LP_CUPTI_LIBRARY="${_lp_cupti_lib}")
  endif()
  if(LP_NVTX_INCLUDE_DIR)
    set(LP_HAVE_NVTX ON)
    target_include_directories(lp_core_obj SYSTEM PRIVATE ${LP_NVTX_INCLUDE_DIR})
    target_compile_definitions(lp_core_obj PRIVATE LP_HAVE_NVTX=1)
  endif()
  # Both open their libraries with dlopen.
  target_link_libraries(lp_core_obj PUBLIC ${CMAKE_DL_LIBS})
endif()

if(LP_HAVE_CUPTI AND LP_HAVE_NVTX)
  message(STATUS "layerprof: CUDA ${LP_CUDA_VERSION}: CUPTI kernel time per module "
                 "(${_lp_cupti_lib}, opened at run time) and NVTX ranges")
elseif(LP_CUDA_FOUND)
  if(LP_HAVE_CUPTI)
    set(_lp_missing "NVTX ranges (no nvtx3/nvToolsExt.h)")
  elseif(LP_HAVE_NVTX)
    set(_lp_missing "CUPTI kernel time per module (no cupti.h)")
  else()
    set(_lp_missing "CUPTI kernel time per module and NVTX ranges (no cupti.h, no nvtx3 headers)")
  endif()
  message(STATUS "layerprof: CUDA ${LP_CUDA_VERSION} found, but building without ${_lp_missing}")
else()
  message(STATUS "layerprof: no CUDA Toolkit found: building without CUPTI kernel time per "
                 "module and NVTX ranges (the CUDA-events timer of a CUDA libtorch still works)")
endif()
