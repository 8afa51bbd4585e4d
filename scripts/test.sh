#!/usr/bin/env bash
# The whole test suite, as CI runs it: both libtorch builds, then the sanitizer build.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --torch2 --test

status=0
run_suite() { # NAME DIR [ENV_FILE: sourced for this suite only]
  echo "=== $1: ctest in $2"
  if ! ( if [ -n "${3:-}" ]; then source "$3"; fi
         ctest --test-dir "$2" --output-on-failure --timeout 1800 ); then
    echo "=== $1: FAILED"; status=1
  fi
}

scripts/build.sh build debian
run_suite "libtorch 1.13 (Debian)" build

scripts/build.sh build-torch2 torch2
run_suite "libtorch 2.x (PyPI wheel)" build-torch2

# Every 2.x the README claims compiles the shim: 2.11 (what GPU machines ship), with the CUDA
# runtime headers the newest wheel brings, so the CUDA-events timer compiles too.
echo "=== libtorch 2.11: the shim compiles"
cuda_inc=$(ls -d .deps/torch2/lib/python3*/site-packages/nvidia/cu*/include 2>/dev/null | head -1)
if ! scripts/compile_shim.sh .deps/torch211/torch "$cuda_inc"; then
  echo "=== libtorch 2.11: FAILED"; status=1
fi

# ASan + UBSan over the whole suite (the shim keeps NDEBUG: see shim/CMakeLists.txt).
scripts/build.sh build-asan debian -DLP_SANITIZE=ON -DLP_EXPORT_MODELS=OFF
run_suite "ASan+UBSan (libtorch 1.13)" build-asan scripts/sanitizer_env.sh

# ThreadSanitizer over the live session: 4 threads of forwards and a reader (docs/sampling.md).
echo "=== ThreadSanitizer: the live-session test"
if ! scripts/tsan.sh; then
  echo "=== ThreadSanitizer: FAILED"; status=1
fi

if [ $status = 0 ]; then echo "=== all suites passed"; else echo "=== some suites FAILED"; fi
exit $status
