# Reliability checks that need no libtorch (docs/reliability.md): the public header compiled as C
# and as C++, and a bounded run of every libFuzzer target. Included from tests/CMakeLists.txt.

# The header test: both files are built with exactly these flags, whatever LP_WERROR says, and
# linked against the core so the C++ file also proves the extern "C" block.
set(LP_HEADER_FLAGS -Wall -Wextra -pedantic -Werror)
add_executable(header_c ${CMAKE_CURRENT_SOURCE_DIR}/header/header_c.c)
set_target_properties(header_c PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
target_compile_options(header_c PRIVATE ${LP_HEADER_FLAGS})
target_link_libraries(header_c PRIVATE lp_core)
add_executable(header_cxx ${CMAKE_CURRENT_SOURCE_DIR}/header/header_cxx.cpp)
set_target_properties(header_cxx PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON
                                            CXX_EXTENSIONS OFF)
target_compile_options(header_cxx PRIVATE ${LP_HEADER_FLAGS})
target_link_libraries(header_cxx PRIVATE lp_core)
add_test(NAME header.c COMMAND header_c)
add_test(NAME header.cxx COMMAND header_cxx)
set_tests_properties(header.c header.cxx PROPERTIES LABELS "unit;header")

# fuzz.smoke: fuzz/run_all.sh builds every fuzz/fuzz_*.c with clang (libFuzzer, ASan, UBSan) and
# runs each for LP_FUZZ_SMOKE_SECONDS; any crash, leak, sanitizer report or timeout fails it.
# Label `fuzz`: `ctest -LE fuzz` leaves it out. Needs clang with libFuzzer (libclang-rt-14-dev).
set(LP_FUZZ_SMOKE_SECONDS 20 CACHE STRING "Seconds per fuzz target in the fuzz.smoke test")
find_program(LP_CLANG NAMES clang clang-14)
find_program(LP_SH sh)
if(LP_CLANG AND LP_SH)
  add_test(NAME fuzz.smoke
           COMMAND ${LP_SH} ${CMAKE_SOURCE_DIR}/fuzz/run_all.sh ${LP_FUZZ_SMOKE_SECONDS})
  set_tests_properties(fuzz.smoke PROPERTIES
                       LABELS fuzz
                       COST 120
                       TIMEOUT ${LP_TEST_TIMEOUT}
                       ENVIRONMENT "CC=${LP_CLANG};LP_FUZZ_DIR=${CMAKE_BINARY_DIR}/fuzz")
else()
  message(STATUS "layerprof: no clang, so no fuzz.smoke test")
endif()
