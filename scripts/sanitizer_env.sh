# Sourced: the sanitizers' options for a suite run of an LP_SANITIZE build (scripts/test.sh,
# scripts/stress_suite.sh). Leaks are reported against tests/lsan.supp (libtorch's own, at exit).
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
