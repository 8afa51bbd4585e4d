#!/usr/bin/env bash
# test_merge.sh: `layerprof merge` and --label from the command line, against real reports.
#
#     test_merge.sh LAYERPROF RANK_REPORT FLEET_RANKS_SH MODELS_DIR
#
# 1. The multi-process example (examples/fleet_ranks.sh): 4 ranks of resnet18 (224x224), rank 2 with a batch
#    8 times larger, one rank after the other (LP_FLEET_SERIAL: this machine has fewer cores than
#    ranks); merge --top must name rank=2 for the module at the top of the skew ranking, or the
#    test fails.
# 2. --label on a run: in the report's run.labels, and merge names the report by it.
# 3. Bad input: a missing file, corrupt JSON, another module tree, other options without --force,
#    a bad label (merge's and a run's), an unknown column: each exits non-zero with one line.
set -u
[ $# -eq 4 ] || { echo "usage: $0 LAYERPROF RANK_REPORT FLEET_RANKS_SH MODELS_DIR" >&2; exit 2; }
LP=$1 RANK_REPORT=$2 FLEET=$3 MODELS=$4
PY=${LP_PYTHON:-/usr/bin/python3}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/lp_merge.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok:   $*"; }

# 1. The straggler is named. -----------------------------------------------------------------------
# At 224x224 a module's call takes long enough that a rank descheduled for a few ms (this
# machine is shared) moves its mean by a little; at 64x64 a 25us batch norm looked 17x slower.
if LP_FLEET_SERIAL=1 bash "$FLEET" "$RANK_REPORT" "$LP" "$MODELS/resnet18.pt" "$TMP/ranks" 4 2 1x3x224x224 >"$TMP/fleet.out" 2>"$TMP/fleet.err"; then
    cat "$TMP/fleet.out"
    # The ranked rows: after the header line "Module | ...".
    rows=$(sed -n '/^Module /,$p' "$TMP/fleet.out" | tail -n +2)
    top=$(echo "$rows" | head -1)
    if [ -z "$top" ]; then
        fail "fleet: no ranked rows"
    elif ! echo "$top" | grep -q '| rank=2$'; then
        fail "fleet: the top module by skew does not name rank=2: $top"
    else
        ok "fleet: straggler rank=2 named at the top of the skew ranking, module '${top%% *}'" \
            "($(echo "$rows" | grep -c '| rank=2$') of the top 5 name it)"
    fi
    grep -q "note: merged with --force: the reports differ in inputs" "$TMP/fleet.out" ||
        fail "fleet: no note naming the inputs that differ"
else
    fail "fleet_ranks.sh failed: $(cat "$TMP/fleet.err")"
fi

# 2. --label on a run, read back by merge. ----------------------------------------------------------
FAST=(--warmup 1 --iterations 2 --threads 1)
for h in a b; do
    "$LP" "$MODELS/nested.pt" "${FAST[@]}" --label host=$h --label rank=0 \
        --output "$TMP/nested_$h.json" >/dev/null 2>"$TMP/err" || fail "run --label host=$h: $(cat "$TMP/err")"
done
labels=$("$PY" -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1]))["run"]["labels"]))' "$TMP/nested_b.json" 2>&1)
[ "$labels" = '{"host": "b", "rank": "0"}' ] && ok "run.labels holds the labels in order" ||
    fail "run.labels: $labels"
"$LP" merge --columns total_max,total_source "$TMP/nested_a.json" "$TMP/nested_b.json" >"$TMP/out" 2>"$TMP/err"
grep -qE 'host=(a|b),rank=0$' "$TMP/out" && ok "merge names reports by their run labels" ||
    fail "merge did not name reports by their labels: $(head -5 "$TMP/out") $(cat "$TMP/err")"
"$LP" merge --label rank=7 "$TMP/nested_a.json" "$TMP/nested_a.json" --columns total_source >"$TMP/out" 2>&1
grep -q 'rank=7' "$TMP/out" && ok "merge --label names the report after it" || fail "merge --label: $(cat "$TMP/out")"
for f in json csv markdown; do
    "$LP" merge --format $f "$TMP/nested_a.json" "$TMP/nested_b.json" >"$TMP/out.$f" 2>"$TMP/err" &&
        [ -s "$TMP/out.$f" ] && ok "merge --format $f" || fail "merge --format $f: $(cat "$TMP/err")"
done
"$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["reports"] == 2 and d["modules"][0]["total"]["median_ns"] > 0' \
    "$TMP/out.json" && ok "merge JSON parses" || fail "merge JSON"

# 3. Refusals: non-zero, one line on stderr, nothing on stdout. --------------------------------------
"$LP" "$MODELS/resnet18.pt" --warmup 0 --iterations 1 --threads 1 --input 1x3x32x32 \
    --output "$TMP/resnet.json" >/dev/null 2>&1 || fail "resnet18 run"
"$LP" "$MODELS/nested.pt" "${FAST[@]}" --threads 2 --output "$TMP/nested_t2.json" >/dev/null 2>&1 || fail "nested t2 run"
printf '{"schema_version": 2, "run": ' >"$TMP/corrupt.json"
expect() { # CODE PATTERN what... -- command
    local code=$1 pattern=$2 what=$3
    shift 3
    "$@" >"$TMP/out" 2>"$TMP/err"
    local rc=$? lines
    lines=$(wc -l <"$TMP/err")
    if [ $rc -ne "$code" ] || [ "$lines" -ne 1 ] || [ -s "$TMP/out" ] || ! grep -q -- "$pattern" "$TMP/err"; then
        fail "$what: exit $rc (want $code), $lines stderr lines: $(cat "$TMP/err")"
    else
        ok "$what: exit $code: $(cat "$TMP/err")"
    fi
}
expect 1 "cannot read '$TMP/missing.json'" "missing file" "$LP" merge "$TMP/nested_a.json" "$TMP/missing.json"
expect 2 "corrupt.json:1:" "corrupt JSON" "$LP" merge "$TMP/nested_a.json" "$TMP/corrupt.json"
expect 2 "another model ('resnet18.pt') than" "another model" "$LP" merge "$TMP/nested_a.json" "$TMP/resnet.json"
expect 2 "run with other options than host=a,rank=0 (threads); --force merges them anyway" \
    "other options" "$LP" merge "$TMP/nested_a.json" "$TMP/nested_t2.json"
expect 2 "--label takes KEY=VALUE" "merge bad label" "$LP" merge --label 9x=1 "$TMP/nested_a.json"
expect 2 "unknown column 'total_p99'" "unknown column" "$LP" merge --columns total_p99 "$TMP/nested_a.json"
expect 2 "no reports to merge" "no reports" "$LP" merge
expect 2 "--sort orders --top's rows" "--sort without --top" "$LP" merge --sort total_max "$TMP/nested_a.json"
expect 2 "layerprof: error: --label: the label 'module' is taken" "run --label module=x" \
    "$LP" "$MODELS/nested.pt" --label module=x
expect 2 "not valid UTF-8" "run --label bad UTF-8" "$LP" "$MODELS/nested.pt" --label $'rank=\xff'
expect 2 "starting with '__'" "run --label __x" "$LP" "$MODELS/nested.pt" --label __x=1
# Another module tree of the same model file name: nested's tree with a module renamed.
"$PY" - "$TMP/nested_a.json" "$TMP/renamed.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
m = d["modules"][-1]
m["path"] = m["path"] + "_renamed"
json.dump(d, open(sys.argv[2], "w"))
PYEOF
expect 2 "another module tree than" "another tree" "$LP" merge "$TMP/nested_a.json" "$TMP/renamed.json"

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
