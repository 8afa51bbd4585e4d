# lp_torch_program(TARGET): a program that uses libtorch itself beside liblayerprof (the C++
# tests, examples/attach.cpp). Call find_package(Torch) in the calling directory first.
#
# Only the CPU library and c10 are linked: everything such a program needs lives there, and linking
# the pip wheel's libtorch_cuda into an executable fails on its NCCL dependency (undefined
# ncclCommGrow, ... at link time). What `torch` asks of its users' compilers (C++20 for libtorch
# 2.x's headers, the C++ ABI flag) is copied from its interface.
function(lp_torch_program target)
  target_compile_options(${target} PRIVATE ${LP_WARNINGS} ${TORCH_CXX_FLAGS})
  target_include_directories(${target} SYSTEM PRIVATE ${TORCH_INCLUDE_DIRS})
  if(TARGET torch_cpu AND TARGET c10 AND TARGET torch)
    target_link_libraries(${target} PRIVATE liblayerprof torch_cpu c10)
    foreach(prop COMPILE_FEATURES COMPILE_OPTIONS COMPILE_DEFINITIONS)
      get_target_property(lp_torch_${prop} torch INTERFACE_${prop})
      if(lp_torch_${prop})
        set_property(TARGET ${target} APPEND PROPERTY ${prop} ${lp_torch_${prop}})
      endif()
    endforeach()
  else()
    target_link_libraries(${target} PRIVATE liblayerprof ${TORCH_LIBRARIES})
  endif()
endfunction()
