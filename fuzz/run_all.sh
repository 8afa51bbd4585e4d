#!/bin/sh
# fuzz/run_all.sh SECONDS [TARGET...]: builds every libFuzzer target fuzz/fuzz_*.c (or the named
# ones, e.g. fuzz_paths) with clang, libFuzzer, ASan and UBSan straight from the C core's sources
# (src/<layer>/*.c but src/api/: no libtorch, no CMake), and runs each for SECONDS.
#
# Seeds: fuzz/corpus/NAME/ (NAME is the target without "fuzz_"), plus examples/*.yaml and
# tests/fixtures/config/*.yaml for the configuration fuzzer. Dictionary: fuzz/NAME.dict if present.
# Exits non-zero when any target fails to build or finds a crash, leak, sanitizer report, timeout
# (-timeout, 10 s per input) or out-of-memory (2 GB); the input is left in $work/artifacts/TARGET/.
#
# Environment: CC (default clang), LP_FUZZ_DIR (default build-fuzz/, git-ignored; the working corpus
# in $LP_FUZZ_DIR/corpus/TARGET grows across runs), LP_FUZZ_JOBS (parallel processes per target,
# default 1).
set -eu

seconds=${1:?usage: fuzz/run_all.sh SECONDS [TARGET...]}
shift
root=$(cd "$(dirname "$0")/.." && pwd)
work=${LP_FUZZ_DIR:-$root/build-fuzz}
cc=${CC:-clang}
jobs=${LP_FUZZ_JOBS:-1}

if [ $# -eq 0 ]; then
    for f in "$root"/fuzz/fuzz_*.c; do set -- "$@" "$(basename "$f" .c)"; done
fi

# The C core, as CMake's lp_core has it: every layer's sources but the API's (docs/architecture.md).
core=""
for f in "$root"/src/*/*.c; do
    case $f in "$root"/src/api/*) ;; *) core="$core $f" ;; esac
done
# shellcheck disable=SC2046 # pkg-config output is a list of words
libs="$(pkg-config --cflags --libs yaml-0.1 jansson) -lpthread -lm"

failed=""
for target in "$@"; do
    name=${target#fuzz_}
    src=$root/fuzz/$target.c
    bin=$work/$target
    mkdir -p "$work/corpus/$target" "$work/seeds/$target" "$work/artifacts/$target"
    echo "== $target: building"
    # -fno-sanitize-recover: a UBSan report must stop the run like a crash does.
    # shellcheck disable=SC2086 # $core and $libs are lists of words
    if ! "$cc" -std=c11 -g -O1 -Wall -Wextra \
        -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
        -fno-omit-frame-pointer -I"$root/include" -I"$root/src" \
        $core "$src" $libs -o "$bin"; then
        failed="$failed $target(build)"
        continue
    fi

    seeds=$work/seeds/$target
    rm -f "$seeds"/*
    [ -d "$root/fuzz/corpus/$name" ] && cp "$root/fuzz/corpus/$name"/* "$seeds/" 2>/dev/null || true
    if [ "$name" = config ]; then
        cp "$root"/examples/*.yaml "$root"/tests/fixtures/config/*.yaml "$seeds/" 2>/dev/null || true
    fi
    dict=""
    [ -f "$root/fuzz/$name.dict" ] && dict="-dict=$root/fuzz/$name.dict"
    fork=""
    [ "$jobs" -gt 1 ] && fork="-fork=$jobs"

    echo "== $target: fuzzing for ${seconds}s"
    status=0
    # shellcheck disable=SC2086 # $fork and $dict are empty or one word
    "$bin" $fork $dict -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$work/artifacts/$target/" \
        "$work/corpus/$target" "$seeds" >"$work/$target.log" 2>&1 || status=$?
    grep -E '^(stat::number_of_executed_units|stat::new_units_added|#[0-9]+ +DONE)' \
        "$work/$target.log" || true
    if [ "$status" -ne 0 ]; then
        echo "== $target: FAILED (status $status); log $work/$target.log, inputs in" \
            "$work/artifacts/$target/" >&2
        grep -E 'ERROR|SUMMARY|abort|Test unit written' "$work/$target.log" | head -20 >&2 || true
        failed="$failed $target"
    else
        echo "== $target: no findings in ${seconds}s"
    fi
done

if [ -n "$failed" ]; then
    echo "fuzz/run_all.sh: failed:$failed" >&2
    exit 1
fi
echo "fuzz/run_all.sh: all targets ran ${seconds}s without findings"
