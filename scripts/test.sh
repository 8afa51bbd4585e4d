#!/usr/bin/env bash
# The whole test suite, as CI runs it: both libtorch builds, then the sanitizer build.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --torch2 --test

status=0
# One test per core: the tests check what a run records, never how fast it was (benchmarks print
# ratios, the instruction gate counts instructions), and the few that judge one process against
# another are RUN_SERIAL. CI has 90 minutes for all five builds and suites.
run_suite() { # NAME DIR [ENV_FILE: sourced for this suite only] [ctest args...]
  echo "=== $1: ctest in $2 ($(date -u +%T))"
  local name=$1 dir=$2 env=${3:-}
  shift $(($# < 3 ? $# : 3))
  if ! ( if [ -n "$env" ]; then source "$env"; fi
         ctest --test-dir "$dir" --output-on-failure --timeout 1800 -j"$(nproc)" "$@" ); then
    echo "=== $name: FAILED"; status=1
  fi
}

scripts/build.sh build debian
run_suite "libtorch 1.13 (Debian)" build

# The fuzzers (label fuzz) build the core alone with clang, whatever the libtorch: once is enough.
scripts/build.sh build-torch2 torch2
run_suite "libtorch 2.x (PyPI wheel)" build-torch2 "" -LE fuzz

# Every 2.x the README claims compiles the shim: 2.11 (what GPU machines ship), with the CUDA
# runtime headers the newest wheel brings, so the CUDA-events timer compiles too.
echo "=== libtorch 2.11: the shim compiles ($(date -u +%T))"
cuda_inc=$(ls -d .deps/torch2/lib/python3*/site-packages/nvidia/cu*/include 2>/dev/null | head -1)
if ! scripts/compile_shim.sh .deps/torch211/torch "$cuda_inc"; then
  echo "=== libtorch 2.11: FAILED"; status=1
fi

# ASan + UBSan over the whole suite (the shim keeps NDEBUG: see shim/CMakeLists.txt).
scripts/build.sh build-asan debian -DLP_SANITIZE=ON -DLP_EXPORT_MODELS=OFF
run_suite "ASan+UBSan (libtorch 1.13)" build-asan scripts/sanitizer_env.sh -LE fuzz

# ThreadSanitizer over the live session: 4 threads of forwards and a reader (docs/sampling.md).
echo "=== ThreadSanitizer: the live-session test ($(date -u +%T))"
if ! scripts/tsan.sh; then
  echo "=== ThreadSanitizer: FAILED"; status=1
fi

if [ $status = 0 ]; then echo "=== all suites passed ($(date -u +%T))"; else echo "=== some suites FAILED"; fi
exit $status
