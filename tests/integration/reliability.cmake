# Reliability tests against the real libtorch (docs/reliability.md, docs/threads.md). Included
# from tests/integration/CMakeLists.txt, which defines LP_MODELS_DIR and finds cmocka and jansson.

foreach(name test_api_null test_outputs test_threads test_sessions_loop test_stop)
  add_executable(${name} ${CMAKE_CURRENT_SOURCE_DIR}/${name}.c)
  target_compile_options(${name} PRIVATE ${LP_WARNINGS})
  target_compile_definitions(${name} PRIVATE LP_MODELS_DIR="${LP_MODELS_DIR}")
  target_link_libraries(${name} PRIVATE liblayerprof PkgConfig::CMOCKA PkgConfig::JANSSON)
  if(TARGET models)
    add_dependencies(${name} models)
  endif()
endforeach()

# libtorch's own profilers next to layerprof: this test drives them, so it links libtorch itself,
# as the attach test and example do. -DNDEBUG as in the shim (docs/libtorch.md).
find_package(Torch REQUIRED QUIET)
include(${CMAKE_SOURCE_DIR}/cmake/LpTorchProgram.cmake)
add_executable(test_other_profiler ${CMAKE_CURRENT_SOURCE_DIR}/test_other_profiler.cpp)
target_compile_definitions(test_other_profiler PRIVATE NDEBUG LP_MODELS_DIR="${LP_MODELS_DIR}")
lp_torch_program(test_other_profiler)

# The shim's errors: its status codes and messages in the one channel (lp_error_last). Links the
# shim and the core directly, as the benchmarks do.
add_executable(test_shim_errors ${CMAKE_CURRENT_SOURCE_DIR}/test_shim_errors.c)
target_compile_options(test_shim_errors PRIVATE ${LP_WARNINGS})
target_compile_definitions(test_shim_errors PRIVATE LP_MODELS_DIR="${LP_MODELS_DIR}")
target_link_libraries(test_shim_errors PRIVATE lp_shim lp_core PkgConfig::CMOCKA)
if(TARGET models)
  add_dependencies(test_shim_errors models)
endif()

# 1,000 sessions one after another: about 10-20 ms each in a normal build and 45 ms under ASan
# (48 s in all on an idle 2-core machine, 133 s on a loaded one); lower it for a quick run.
set(LP_SESSIONS_LOOP 1000 CACHE STRING
    "Sessions opened one after another by integration.sessions_loop")

add_test(NAME integration.api_null COMMAND test_api_null)
add_test(NAME integration.outputs COMMAND test_outputs)
add_test(NAME integration.threads COMMAND test_threads)
add_test(NAME integration.sessions_loop COMMAND test_sessions_loop ${LP_SESSIONS_LOOP})
add_test(NAME integration.other_profiler COMMAND test_other_profiler)
add_test(NAME integration.shim_errors COMMAND test_shim_errors)
add_test(NAME integration.stop COMMAND test_stop)
set_tests_properties(integration.api_null integration.outputs integration.threads
                     integration.sessions_loop integration.other_profiler
                     integration.shim_errors integration.stop PROPERTIES
                     LABELS "integration;reliability"
                     TIMEOUT ${LP_TEST_TIMEOUT})

# leak.cli: the CLI on a real model with memory and op events, checked for leaks. The sanitizer
# build has LeakSanitizer built in; otherwise valgrind, when installed. Leaks that are libtorch's
# own are suppressed in tests/lsan.supp / tests/valgrind.supp, each entry saying why.
set(LP_LEAK_ARGS ${LP_MODELS_DIR}/nested.pt --memory --events --warmup 1 --iterations 2
                 --output /dev/null)
if(LP_SANITIZE)
  add_test(NAME leak.cli COMMAND $<TARGET_FILE:layerprof> ${LP_LEAK_ARGS})
  set_tests_properties(leak.cli PROPERTIES
                       LABELS leak
                       TIMEOUT ${LP_TEST_TIMEOUT}
                       ENVIRONMENT
                       "ASAN_OPTIONS=detect_leaks=1;LSAN_OPTIONS=suppressions=${CMAKE_SOURCE_DIR}/tests/lsan.supp:print_suppressions=0")
else()
  find_program(LP_VALGRIND valgrind)
  if(LP_VALGRIND)
    add_test(NAME leak.cli
             COMMAND ${LP_VALGRIND} --leak-check=full --error-exitcode=1
                     --suppressions=${CMAKE_SOURCE_DIR}/tests/valgrind.supp
                     $<TARGET_FILE:layerprof> ${LP_LEAK_ARGS})
    # About 45 s (libtorch 1.13) to 70 s (2.x) of CPU; the timeout leaves room for a loaded machine.
    set_tests_properties(leak.cli PROPERTIES LABELS leak TIMEOUT ${LP_TEST_TIMEOUT} COST 70)
  else()
    message(STATUS "layerprof: no valgrind, so no leak.cli test in this (non-sanitizer) build")
  endif()
endif()
