#!/usr/bin/env bash
# The suite under load, repeated: the proof that no test judges a duration the machine decides.
#
#   scripts/stress_suite.sh BUILD_DIR [REPEATS] [CTEST_ARGS...]
#
# Keeps every core busy (one spinning process per core, at the tests' own priority, plus one
# that churns memory), then runs ctest in BUILD_DIR with --repeat until-fail:REPEATS (default 5):
# every test runs REPEATS times in a row and the first failure stops that test. A build made with
# LP_SANITIZE=ON gets the sanitizers' options (scripts/sanitizer_env.sh). The load goes when the
# script ends, however it ends. Prints the load average before and after, and ctest's summary.
# Exit: ctest's.
#
# Any other load does as well (LP_STRESS_LOAD=0 starts none: another build running beside it,
# say); the note that reports a run says which load it was.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ] || [ ! -f "$1/CTestTestfile.cmake" ]; then
  echo "usage: $0 BUILD_DIR [REPEATS] [CTEST_ARGS...] (BUILD_DIR: a configured, built tree)" >&2
  exit 2
fi
dir=$1; repeats=${2:-5}; shift $(( $# >= 2 ? 2 : 1 ))
case "$repeats" in ''|*[!0-9]*|0) echo "$0: REPEATS must be an integer >= 1, got '$repeats'" >&2; exit 2 ;; esac

loaders=()
stop_load() { for p in "${loaders[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap stop_load EXIT
if [ "${LP_STRESS_LOAD:-1}" != 0 ]; then
  for _ in $(seq "$(nproc)"); do
    bash -c 'while :; do :; done' &
    loaders+=($!)
  done
  # 256 MiB written and freed over and over: the caches and the allocator see pressure too
  python3 -c '
while True:
    b = bytearray(256 << 20)
    for i in range(0, len(b), 4096): b[i] = 1
    del b' &
  loaders+=($!)
  echo "stress: $(nproc) spinning processes and a 256 MiB memory churner started"
fi
sleep 2
echo "stress: load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

if grep -q '^LP_SANITIZE:BOOL=ON' "$dir/CMakeCache.txt"; then
  source scripts/sanitizer_env.sh
  echo "stress: $dir is a sanitizer build: $ASAN_OPTIONS"
fi
start=$(date +%s)
rc=0
ctest --test-dir "$dir" --output-on-failure --timeout 1800 --repeat "until-fail:$repeats" "$@" || rc=$?
echo "stress: load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "stress: $dir, each test up to $repeats times in a row under load: exit $rc in $(( $(date +%s) - start )) s"
exit $rc
