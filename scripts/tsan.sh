#!/usr/bin/env bash
# ThreadSanitizer over the live-session test (tests/integration/test_live.cpp: 4 threads of
# forwards and a reader of the exposition; docs/sampling.md): the library, the shim and the test
# instrumented, libtorch not. Builds only what the test needs, in build-tsan.
#   scripts/tsan.sh [forwards per thread, default 150]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build-tsan
mkdir -p "$dir"
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLP_WERROR=ON -DLP_SANITIZE_THREAD=ON \
  -DLP_EXPORT_MODELS=OFF > "$dir/configure.log" 2>&1 || { cat "$dir/configure.log"; exit 1; }
cmake --build "$dir" -j"$(nproc)" --target test_live
# halt_on_error: any report fails the run. The suppressions file says why each entry is there.
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/tests/tsan.supp" \
LP_LIVE_FORWARDS=${1:-150} "$dir/tests/integration/test_live"
echo "tsan: no data race reported"
