#!/usr/bin/env bash
# test_exports_cli.sh LAYERPROF MODELS_DIR SCRATCH_DIR
# The CLI's outputs: --format/--output pairs, formats inferred from file names, a --format alone
# on stdout, --trace and --trace-iterations, and `layerprof diff` (plain when not on a terminal,
# NO_COLOR honoured, a report against itself all zero, usage errors).
set -u
LP=$1
MODELS=$2
DIR=$3
rm -rf "$DIR" && mkdir -p "$DIR" && cd "$DIR" || exit 1
MODEL=$MODELS/nested.pt
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
check() { # check DESCRIPTION COMMAND...
  local what=$1; shift
  "$@" || fail "$what"
}

# Pairs, inference and a --format with no --output (stdout), all from one run.
"$LP" "$MODEL" --iterations 2 --memory --events \
  --format json --output pair.json --output inferred.csv --output page.html \
  --output timeline.trace.json --trace-iterations 1 --output plain.txt \
  --format markdown >stdout.md 2>stderr.txt
rc=$?
check "run exits 0 (rc $rc: $(cat stderr.txt))" test "$rc" -eq 0
check "no progress line when stderr is not a terminal" test ! -s stderr.txt
check "json pair written" grep -q '"schema_version": 2' pair.json
check "csv inferred from .csv" grep -q '^path,kind,name,class,depth,' inferred.csv
check "html inferred from .html" grep -q '<!DOCTYPE html>' page.html
check "trace inferred from .trace.json" grep -q '"traceEvents"' timeline.trace.json
check "trace output implies recording a timeline" grep -q '"ph":"X"' timeline.trace.json
check "--trace-iterations 1 caps the timeline" grep -q '"iterations_recorded":1' timeline.trace.json
check "other names get the tree" grep -q '^Total' plain.txt
check "a lone --format goes to stdout" grep -q '^| Module |' stdout.md
check "the html page has its memory timeline" grep -q '"forwards":\[\[' page.html

# --trace without a trace output: the HTML view gets memory over time; without it, none.
"$LP" "$MODEL" --iterations 1 --memory --output notrace.html 2>/dev/null
check "html without --trace has no timeline" grep -q '"timeline":null' notrace.html
"$LP" "$MODEL" --iterations 1 --memory --trace --output withtrace.html 2>/dev/null
check "html with --trace has a timeline" grep -q '"timeline":{' withtrace.html

# diff: plain text when stdout is not a terminal.
"$LP" "$MODEL" --iterations 2 --output before.json 2>/dev/null
"$LP" "$MODEL" --iterations 3 --output after.json 2>/dev/null
"$LP" diff before.json after.json >diff.txt 2>diff.err
rc=$?
check "diff exits 0 (rc $rc: $(cat diff.err))" test "$rc" -eq 0
check "diff lists the root" grep -q '^Nested ' diff.txt
check "diff lists a nested module" grep -q '── body ' diff.txt
check "diff has the Total row" grep -q '^Total ' diff.txt
check "diff names both reports" grep -q '^before: .*nested.pt' diff.txt
check "no colour when not a terminal" bash -c "! grep -q $'\033' diff.txt"
"$LP" diff --color before.json after.json >color.txt
check "--color forces colour" grep -q $'\033\[' color.txt
NO_COLOR=1 "$LP" diff before.json after.json >nocolor.txt
check "NO_COLOR: no colour" bash -c "! grep -q $'\033' nocolor.txt"

"$LP" diff before.json before.json >self.txt
check "a report against itself: no change anywhere" bash -c "! grep -q '+' self.txt"
check "a report against itself: 0.0% rows" grep -q '0.0%' self.txt

# Usage errors.
"$LP" "$MODEL" --format xml >/dev/null 2>err.txt
check "unknown format is a usage error" test $? -eq 2
check "the error lists the formats" grep -q 'markdown' err.txt
"$LP" diff before.json >/dev/null 2>&1
check "diff needs two reports" test $? -eq 2
# A schema-1 report (m2 where 2 has std_ns) still reads, beside a schema-2 one.
python3 - pair.json v1.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["schema_version"] = 1
def walk(o):
    if isinstance(o, dict):
        t = o.get("time")
        if isinstance(t, dict) and "std_ns" in t:
            std = t.pop("std_ns") or 0.0  # null: fewer than two calls
            t["m2"] = std * std * max(t["n"] - 1, 0)
        for v in o.values():
            walk(v)
    elif isinstance(o, list):
        for v in o:
            walk(v)
walk(d)
json.dump(d, open(sys.argv[2], "w"))
PY
"$LP" diff v1.json pair.json >v1diff.txt 2>err.txt
check "diff reads a schema-1 report beside a schema-2 one ($(cat err.txt))" test $? -eq 0
echo '{"schema_version": 1}' >bad.json
"$LP" diff bad.json after.json >/dev/null 2>err.txt
check "diff of a bad report fails" test $? -ne 0
check "the error names the file" grep -q 'bad.json' err.txt
"$LP" diff missing.json after.json >/dev/null 2>err.txt
check "diff of a missing file is a runtime error" test $? -eq 1

if [ "$failures" -ne 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all export CLI checks passed"
