#!/bin/sh
# fuzz/run.sh SECONDS: builds the configuration fuzzer (fuzz_config.c) with clang, libFuzzer, ASan
# and UBSan straight from the sources (no libtorch, no CMake), seeds it with examples/*.yaml and
# tests/fixtures/config/*.yaml, and runs it for SECONDS. Exits non-zero on any crash, leak,
# sanitizer report or round-trip mismatch; the input that caused it is left in $work/artifacts.
#
# Environment: CC (default clang), LP_FUZZ_DIR (default build-fuzz/, git-ignored), LP_FUZZ_JOBS
# (parallel fuzzing processes, default 1). The corpus in $LP_FUZZ_DIR/corpus grows across runs.
set -eu

seconds=${1:?usage: fuzz/run.sh SECONDS}
root=$(cd "$(dirname "$0")/.." && pwd)
work=${LP_FUZZ_DIR:-$root/build-fuzz}
cc=${CC:-clang}
jobs=${LP_FUZZ_JOBS:-1}

# The reader's dependencies in the core, named rather than globbed so that work in progress
# elsewhere in src/ cannot break the fuzzer's build.
srcs="config.c config_emit.c error.c suggest.c options.c input_spec.c columns.c format.c tree.c"

mkdir -p "$work/corpus" "$work/seeds" "$work/artifacts"
set --
for f in $srcs; do set -- "$@" "$root/src/$f"; done
# -fno-sanitize-recover: a UBSan report must stop the run like a crash does.
"$cc" -std=c11 -g -O1 -Wall -Wextra \
    -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -fno-omit-frame-pointer -I"$root/include" -I"$root/src" \
    "$@" "$root/fuzz/fuzz_config.c" $(pkg-config --cflags --libs yaml-0.1) -lm \
    -o "$work/fuzz_config"

cp "$root"/examples/*.yaml "$root"/tests/fixtures/config/*.yaml "$work/seeds/"

# Every key and enum value, so mutations reach the handlers rather than "unknown key".
cat > "$work/config.dict" <<'DICT'
"model:"
"device:"
"mode:"
"inputs:"
"seed:"
"warmup:"
"iterations:"
"threads:"
"profile:"
"paths:"
"display:"
"outputs:"
"verbose:"
"memory:"
"events:"
"shapes:"
"depth:"
"sort:"
"top:"
"columns:"
"units:"
"ascii:"
"shape:"
"dtype:"
"fill:"
"range:"
"file:"
"format:"
"cuda:0"
"hooks"
"graph"
"random"
"zeros"
"ones"
"float16"
"bfloat16"
"int64"
"uint8"
"bool"
"self_cpu"
"cpu_total"
"calls"
"null"
"true"
"- "
"{"
"}"
"["
"]"
"&a"
"*a"
"---"
"\"\\u2028\""
"\"\\x01\""
"1e300"
DICT

status=0
if [ "$jobs" -gt 1 ]; then
    fork="-fork=$jobs"
else
    fork=""
fi
# shellcheck disable=SC2086 # $fork is empty or one word
"$work/fuzz_config" $fork -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -dict="$work/config.dict" -artifact_prefix="$work/artifacts/" \
    "$work/corpus" "$work/seeds" || status=$?
if [ "$status" -ne 0 ]; then
    echo "fuzz/run.sh: the fuzzer failed (status $status); inputs in $work/artifacts" >&2
    exit "$status"
fi
echo "fuzz/run.sh: no findings in ${seconds}s"
