#!/usr/bin/env bash
# The regions example (examples/regions.c) runs, and what it prints and writes parses:
#   test_regions_example.sh REGIONS_BINARY MODELS_DIR
set -euo pipefail
bin=$1 models=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; echo "--- output:" >&2; cat "$dir/out" >&2; exit 1; }

"$bin" "$models/nested.pt" 1x3x16x16 "$dir" >"$dir/out" 2>"$dir/err" || fail "exit $?: $(cat "$dir/err")"
[[ ! -s $dir/err ]] || fail "stderr is not empty: $(cat "$dir/err")"

grep -q '^cycle 1: 40 forwards' "$dir/out" || fail "no line for cycle 1"
grep -q '^cycle 2: 40 forwards' "$dir/out" || fail "no line for cycle 2"
# The tree: regions under context main, the model's modules under the forward region.
grep -q '^└── main ' "$dir/out" || fail "no context row"
grep -Eq '^ ├── forward +\|' "$dir/out" || fail "no forward region row"
grep -Eq '^ │└── Nested +\|' "$dir/out" || fail "the model is not under the forward region"
grep -Eq '^ │ │├── body +\|.*\| 2$' "$dir/out" || fail "block.body does not show 2 calls per iteration"
# torchtimer's summary: a title, the header, the separator and one row per region.
grep -Eq '^###### Nested::main: \(total runtime [0-9.]+s\)$' "$dir/out" || fail "no summary title"
grep -q "^| name " "$dir/out" || fail "no summary header"
for r in preprocess forward postprocess; do
    grep -Eq "^\| '$r' +\| 40 +\| [0-9.]+ +\| [0-9.]+ +\| [0-9.]+ +\| [0-9.]+[KMG]?B - [0-9.]+[KMG]?B +\|" "$dir/out" ||
        fail "no summary row for $r"
done
# One JSON report per cycle, each holding exactly that cycle's 40 active iterations.
for c in 1 2; do
    /usr/bin/python3 - "$dir/regions_$c.json" <<'PY' || fail "regions_$c.json"
import json, sys
d = json.load(open(sys.argv[1]))
nodes = {n["path"]: n for n in d["modules"]}
assert d["iterations"] == 40, d["iterations"]
assert nodes[""]["kind"] == "session" and nodes["main"]["kind"] == "context"
for r in ("main/preprocess", "main/forward", "main/postprocess"):
    assert nodes[r]["kind"] == "region" and nodes[r]["calls"] == 40, (r, nodes[r])
assert nodes["main/forward/"]["kind"] == "module" and nodes["main/forward/"]["calls"] == 40
assert nodes["main/forward/block"]["calls"] == 80
PY
done
[[ ! -e $dir/regions_3.json ]] || fail "a third cycle was written"
echo "ok: regions example"
