#!/usr/bin/env bash
# test_openmetrics.sh: the openmetrics format from the CLI (docs/sampling.md). The file is written
# whole or not at all (no temporary file left beside it, a previous file replaced in one rename);
# its figures are the run's (calls per forward times iterations, from the JSON report written in
# the same run); its series are bounded by --metrics-depth; and `promtool check metrics` (Debian's
# prometheus package) accepts it. Exits 77 (skip) after the other checks when promtool is absent.
#   test_openmetrics.sh LAYERPROF MODELS_DIR
set -u
LP=$1
MODELS=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
failures=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# A previous file that the run replaces; a run with --metrics-depth 1 (the default) and -1.
echo "stale" >"$TMP/nested.prom"
"$LP" "$MODELS/nested.pt" --iterations 4 --format openmetrics --output "$TMP/nested.prom" \
    --format json --output "$TMP/nested.json" >/dev/null || fail "the run failed"
"$LP" "$MODELS/nested.pt" --iterations 4 --metrics-depth -1 --output "$TMP/all.prom" \
    >/dev/null || fail "the run with --metrics-depth -1 failed"
left=$(ls "$TMP" | grep -v -x -e nested.prom -e nested.json -e all.prom)
[ -z "$left" ] || fail "files left beside the outputs: $left"
grep -q stale "$TMP/nested.prom" && fail "the previous file was not replaced"

count() { # FILE FAMILY MODULE
    grep -E "^$2\\{model=\"nested\",module=\"$3\",[^}]*\\} " "$1" | grep -v ',le="' | awk '{print $2}'
}
inf() { # FILE FAMILY MODULE: the +Inf bucket
    grep -F "$2_bucket{model=\"nested\",module=\"$3\"," "$1" | grep -F 'le="+Inf"' | awk '{print $2}'
}
# nested: the root, stem, pool and head run once per forward, block twice (models/nested.counts.json).
for m in ".:4" "stem:4" "block:8" "head:4"; do
    module=${m%%:*} want=${m##*:}
    for fam in layerprof_module_self_seconds_count layerprof_module_total_seconds_count \
        layerprof_module_calls_total; do
        got=$(count "$TMP/nested.prom" "$fam" "$module")
        [ "$got" = "$want" ] || fail "$fam{module=\"$module\"} is '$got', want $want"
    done
    got=$(inf "$TMP/nested.prom" layerprof_module_self_seconds "$module")
    [ "$got" = "$want" ] || fail "self +Inf bucket of $module is '$got', want $want"
done
# The JSON report of the same run agrees: block's calls.
json_calls=$(/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1]));
print([m["calls"] for m in r["modules"] if m["path"]=="block"][0])' "$TMP/nested.json" 2>/dev/null)
[ "$json_calls" = 8 ] || fail "the JSON report says block ran '$json_calls' times, want 8"
grep -q 'module="block.body' "$TMP/nested.prom" && fail "depth 1: block.body has series"
# At depth 1, block is folded: its self time per call is its total.
self_sum=$(count "$TMP/nested.prom" layerprof_module_self_seconds_sum block)
total_sum=$(count "$TMP/nested.prom" layerprof_module_total_seconds_sum block)
[ -n "$self_sum" ] && [ "$self_sum" = "$total_sum" ] ||
    fail "folded block: self sum '$self_sum' differs from its total '$total_sum'"
all=$(grep -c 'module="block.body.0"' "$TMP/all.prom")
[ "$all" -gt 0 ] || fail "--metrics-depth -1: no series for block.body.0"
series=$(grep -vc '^#' "$TMP/nested.prom")
echo "nested, depth 1: $series series; depth -1: $(grep -vc '^#' "$TMP/all.prom")"
grep -q '^layerprof_sampled_forwards_total{model="nested"} 4$' "$TMP/nested.prom" ||
    fail "sampled forwards is not 4"

if ! command -v promtool >/dev/null; then
    echo "SKIP: promtool not found (Debian's prometheus package; scripts/setup.sh --test installs it)"
    [ "$failures" -eq 0 ] && exit 77
    exit 1
fi
for f in nested.prom all.prom; do
    out=$(promtool check metrics <"$TMP/$f" 2>&1) || fail "promtool check metrics on $f: $out"
    [ -z "$out" ] || fail "promtool check metrics on $f says: $out"
done
[ "$failures" -eq 0 ] || exit 1
echo "openmetrics: all checks passed"
