#!/usr/bin/env bash
# test_cli.sh: the layerprof command line against the real libtorch and the exported models.
#
#     test_cli.sh LAYERPROF_BINARY MODELS_DIR
#
# Run by ctest (integration.cli). Exit codes documented in the README: 0 ok, 1 runtime failure
# (model, libtorch, I/O), 2 usage error. Every failure must print exactly one line on stderr,
# starting with "layerprof: error:", and nothing on stdout.
set -u

if [ $# -ne 2 ]; then
    echo "usage: $0 LAYERPROF_BINARY MODELS_DIR" >&2
    exit 2
fi
LP=$1
MODELS=$2
HERE=$(cd "$(dirname "$0")" && pwd)
[ -x "$LP" ] || { echo "not executable: $LP" >&2; exit 1; }
for m in nested resnet18; do
    [ -f "$MODELS/$m.pt" ] || { echo "missing $MODELS/$m.pt (build the 'models' target)" >&2; exit 1; }
done

TMP=$(mktemp -d "${TMPDIR:-/tmp}/lp_cli.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
OUT=$TMP/stdout
ERR=$TMP/stderr

NESTED=$MODELS/nested.pt
RESNET=$MODELS/resnet18.pt
FAST=(--warmup 1 --iterations 2) # successful runs: keep them short

failures=0
checks=0
fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}
ok() {
    echo "ok:   $*"
}

# run [TIMEOUT_S] -- ARGS...: runs the binary, stdout to $OUT, stderr to $ERR, exit code in $rc,
# seconds in $secs.
run() {
    local limit=120
    if [ "$1" != "--" ]; then
        limit=$1
        shift
    fi
    shift # --
    local t0 t1
    t0=$(date +%s%N)
    timeout -k 5 "$limit" "$LP" "$@" >"$OUT" 2>"$ERR" </dev/null
    rc=$?
    t1=$(date +%s%N)
    secs=$(((t1 - t0) / 1000000000))
}

show() {
    echo "      exit $rc; stdout $(wc -c <"$OUT") bytes; stderr:"
    sed 's/^/      | /' "$ERR" | head -20
}

# expect_error NAME CODE REGEX [TIMEOUT_S] -- ARGS...
# Exit CODE, nothing on stdout, exactly one line on stderr that starts with "layerprof: error:" and
# matches the extended REGEX (case-insensitive).
expect_error() {
    local name=$1 code=$2 regex=$3
    shift 3
    checks=$((checks + 1))
    run "$@"
    local lines problems=""
    lines=$(wc -l <"$ERR")
    [ "$rc" -eq "$code" ] || problems+=" exit $rc (want $code);"
    [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || problems+=" timed out or killed;"
    [ ! -s "$OUT" ] || problems+=" stdout not empty;"
    [ "$lines" -eq 1 ] || problems+=" $lines stderr lines (want 1);"
    # a final line without its newline counts as one more
    if [ -s "$ERR" ] && [ "$(tail -c 1 "$ERR" | od -An -c | tr -d ' ')" != '\n' ]; then
        problems+=" stderr does not end with a newline;"
    fi
    head -n 1 "$ERR" | grep -q '^layerprof: error: ' || problems+=" stderr does not start with 'layerprof: error: ';"
    grep -Eqi -- "$regex" "$ERR" || problems+=" message does not match /$regex/;"
    if [ -n "$problems" ]; then
        fail "$name:$problems"
        show
    else
        ok "$name (exit $rc, ${secs}s): $(head -c 200 "$ERR")"
    fi
}

# A python3 for the zip fixture (any python3: only the standard zipfile module is used).
PY=""
for p in python3 /usr/bin/python3; do
    if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import zipfile' >/dev/null 2>&1; then
        PY=$p
        break
    fi
done

# ---- fixtures -------------------------------------------------------------------------------------
: >"$TMP/empty.pt"
printf 'this is a text file, not a TorchScript model\n' >"$TMP/text.pt"
mkdir "$TMP/adir.pt"
size=$(stat -c %s "$NESTED")
head -c $((size / 2)) "$NESTED" >"$TMP/truncated.pt"
# corrupted: 256 bytes in the middle of nested.pt inverted (the zip's central directory stays valid)
cp "$NESTED" "$TMP/corrupt.pt"
chmod u+w "$TMP/corrupt.pt"
mid=$((size / 2 - 128))
head -c "$((mid + 256))" "$NESTED" | tail -c 256 | od -An -v -tu1 |
    awk '{for (i = 1; i <= NF; i++) printf "\\%03o", 255 - $i}' >"$TMP/flip.esc"
printf "$(cat "$TMP/flip.esc")" | dd of="$TMP/corrupt.pt" bs=1 seek="$mid" conv=notrunc status=none
cmp -s "$NESTED" "$TMP/corrupt.pt" && { echo "could not corrupt the copy of nested.pt" >&2; exit 1; }
if [ -n "$PY" ]; then
    "$PY" - "$TMP/notscript.pt" <<'EOF'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as z:
    z.writestr("notes/readme.txt", "a valid zip archive that is not a TorchScript model\n")
EOF
elif command -v zip >/dev/null 2>&1; then
    mkdir -p "$TMP/z/notes" && echo "not a model" >"$TMP/z/notes/readme.txt"
    (cd "$TMP/z" && zip -q ../notscript.pt notes/readme.txt)
fi

echo "== binary: $LP"
echo "== models: $MODELS"

# ---- --help, --version ------------------------------------------------------------------------------
checks=$((checks + 1))
run -- --help
if [ "$rc" -eq 0 ] && grep -q '^usage: layerprof' "$OUT" && grep -q -- '--iterations' "$OUT" && [ ! -s "$ERR" ]; then
    ok "--help"
else
    fail "--help: exit $rc, want 0 with the usage on stdout and nothing on stderr"
    show
fi
checks=$((checks + 1))
run -- --version
if [ "$rc" -eq 0 ] && grep -Eq '^layerprof [0-9]+\.[0-9]+\.[0-9]+ \(libtorch [0-9]+\.[0-9]+\)$' "$OUT" &&
    [ "$(wc -l <"$OUT")" -eq 1 ] && [ ! -s "$ERR" ]; then
    ok "--version: $(cat "$OUT")"
else
    fail "--version: exit $rc, stdout '$(head -c 200 "$OUT")'"
    show
fi

# ---- a successful run: the tree ------------------------------------------------------------------------
# The rows between the header's rule and the closing rule are modules: "name | self | total | calls".
# check_tree NAME FILE EXPECTED_ROWS BLANK_ROWS_REGEX: every module row has numeric cells, except rows
# whose name matches BLANK_ROWS_REGEX, modules that never ran: blank cells and 0 calls.
check_tree() {
    local name=$1 file=$2 want_rows=$3 blank=$4
    checks=$((checks + 1))
    local report
    report=$(awk -F'|' -v blank="$blank" '
        function trim(s) { gsub(/^[ \t]+|[ \t]+$/, "", s); return s }
        /^-+\|/ { rule++; next }
        rule == 0 && NR == 1 { header = $0; next }
        rule == 1 {
            rows++
            label = trim($1); sub(/^[^A-Za-z0-9_]*/, "", label)
            numeric = 1; empty = 1
            for (i = 2; i <= NF; i++) {
                c = trim($i)
                if (c != "" && !(i == NF && c == "0")) empty = 0
                if (i < NF && c !~ /^[0-9]+(\.[0-9]+)?(ns|us|ms|s)$/) numeric = 0
                if (i == NF && c !~ /^[0-9]+$/) numeric = 0
            }
            if (blank != "" && label ~ blank) { if (!empty || trim($NF) != "0") print "row \"" $0 "\" should be blank with 0 calls"; nblank++ }
            else if (!numeric) print "row \"" $0 "\" is not numeric"
        }
        rule == 2 && /^Total/ { total = $0 }
        END {
            if (NF < 0) {}
            if (header !~ /Self CPU total/ || header !~ /CPU total/ || header !~ /Number of Calls/)
                print "header \"" header "\" lacks the default columns"
            if (rule < 2) print "the table is not closed by a rule"
            if (total == "") print "no Total row"
            print "ROWS " rows + 0 " BLANK " nblank + 0
        }' "$file")
    local rows
    rows=$(echo "$report" | sed -n 's/^ROWS \([0-9]*\) BLANK \([0-9]*\)$/\1 \2/p')
    local problems
    problems=$(echo "$report" | grep -v '^ROWS ')
    if [ "${rows%% *}" != "$want_rows" ]; then
        problems+=$'\n'"$rows rows+blank, want $want_rows module rows"
    fi
    if [ -n "$problems" ]; then
        fail "$name: tree:"
        echo "$problems" | head -20 | sed 's/^/      /'
    else
        ok "$name: tree of $want_rows numeric rows (blank: ${rows#* })"
    fi
}

for mode in hooks markers graph; do
    checks=$((checks + 1))
    run -- "$RESNET" --mode "$mode" "${FAST[@]}"
    if [ "$rc" -ne 0 ]; then
        fail "resnet18 --mode $mode: exit $rc"
        show
        continue
    fi
    # libtorch's own chatter (glog, TORCH_WARN) must not reach stderr without --verbose
    if [ -s "$ERR" ]; then
        fail "resnet18 --mode $mode: stderr is not empty on success:"
        show
    else
        ok "resnet18 --mode $mode: exit 0, stderr empty"
    fi
    # graph runs as markers, and says so
    want="mode: $mode"
    [ "$mode" = graph ] && want="mode: markers (asked for graph"
    grep -qF "$want" "$OUT" || fail "resnet18 --mode $mode: no '$want' note under the table"
    check_tree "resnet18 --mode $mode" "$OUT" 68 ""
done

# --memory on a model that frees, during the profiled forwards, a tensor it stored before them:
# libtorch's allocator warns about the unknown block (a glog line in Debian's build). Not the
# report: stderr stays empty without --verbose, and the warning is still there with it.
checks=$((checks + 1))
run -- "$MODELS/pat_state.pt" --memory "${FAST[@]}"
if [ "$rc" -eq 0 ] && [ ! -s "$ERR" ]; then
    ok "pat_state --memory: exit 0, stderr empty"
else
    fail "pat_state --memory: libtorch's output reached stderr without --verbose"
    show
fi
run -- "$MODELS/pat_state.pt" --memory --verbose "${FAST[@]}"
if grep -q "unknown size" "$ERR"; then
    ok "pat_state --memory --verbose: libtorch's warning is shown"
else
    echo "note: pat_state --memory --verbose: this libtorch gave no 'unknown size' warning"
fi

# Custom-op libraries: pat_customop calls torchvision::roi_align. Without its library the load
# fails with one line naming the operator and the flag; with it, the model runs. Debian's
# torchvision library is built for Debian's libtorch 1.13: another libtorch cannot load it.
expect_error "pat_customop without its library" 1 \
    "^layerprof: error: cannot load '.*pat_customop.pt': it uses the operator 'torchvision::roi_align', which no loaded library provides: load the library of the 'torchvision' operators with --load-library PATH" \
    -- "$MODELS/pat_customop.pt" "${FAST[@]}"
expect_error "--load-library of a missing file" 1 \
    "^layerprof: error: cannot load library '$TMP/nosuch.so': cannot open shared object file" \
    -- "$MODELS/pat_customop.pt" --load-library "$TMP/nosuch.so" "${FAST[@]}"
TV_LIB=$(ls /usr/lib/python3/dist-packages/torchvision/_C*.so 2>/dev/null | head -n 1)
if [ -z "$TV_LIB" ]; then
    echo "note: skipped --load-library on a real library: Debian's python3-torchvision is not installed"
elif ! "$LP" --version | grep -q "libtorch 1\.13"; then
    echo "note: skipped --load-library $TV_LIB: built for Debian's libtorch 1.13, not this one ($("$LP" --version))"
else
    checks=$((checks + 1))
    run -- "$MODELS/pat_customop.pt" --load-library "$TV_LIB" "${FAST[@]}"
    if [ "$rc" -eq 0 ] && [ ! -s "$ERR" ] && grep -q "^└── conv " "$OUT"; then
        ok "pat_customop --load-library torchvision: runs, the tree has its conv"
    else
        fail "pat_customop --load-library $TV_LIB: exit $rc"
        show
    fi
    printf 'model: %s\nlibraries: ["%s"]\nwarmup: 1\niterations: 2\n' "$MODELS/pat_customop.pt" \
        "$TV_LIB" >"$TMP/libs.yaml"
    checks=$((checks + 1))
    run -- --config "$TMP/libs.yaml"
    if [ "$rc" -eq 0 ] && grep -q "^└── conv " "$OUT"; then
        ok "libraries: [...] in a YAML file loads them too"
    else
        fail "libraries in YAML: exit $rc"
        show
    fi
    # An op with no FLOPs formula (roi_align) is named under the tree, not silently counted 0.
    checks=$((checks + 1))
    run -- "$MODELS/pat_customop.pt" --load-library "$TV_LIB" --columns self_cpu,flops "${FAST[@]}"
    if [ "$rc" -eq 0 ] && grep -q "^flops: no formula for torchvision::roi_align (counted as 0)$" "$OUT" &&
        grep -q "^model: 112 parameters, .*FLOPs per forward (2 per multiply-add)$" "$OUT"; then
        ok "--columns flops names the op that has no formula (torchvision::roi_align)"
    else
        fail "--columns flops on pat_customop: exit $rc"
        show
    fi
fi

# --prune: with --path, only the selected modules and their ancestors have rows; the Total and the
# selected rows' figures are those of the run without it.
checks=$((checks + 1))
run -- "$NESTED" --path block --prune "${FAST[@]}"
if [ "$rc" -eq 0 ] && grep -q '^└── block ' "$OUT" && grep -q '^ └── proj ' "$OUT" &&
    ! grep -Eq '── (stem|unused|pool|head) ' "$OUT" && grep -q '^Total ' "$OUT"; then
    ok "--prune: the rows of block and its ancestors only"
else
    fail "--prune with --path block: exit $rc, or rows of unprofiled modules left"
    sed 's/^/      | /' "$OUT" | head -15
fi

# The model's FLOPs line describes the whole model, or says it sums the selection: with --path the
# rest of the model was not profiled, and its FLOPs were not counted.
checks=$((checks + 1))
run -- "$RESNET" --columns self_cpu,flops "${FAST[@]}"
whole=$(grep -o '; [0-9.]* [KMGT]FLOPs per forward (2 per multiply-add)$' "$OUT")
run -- "$RESNET" --columns self_cpu,flops --path conv1 "${FAST[@]}"
if [ "$rc" -eq 0 ] && [ -n "$whole" ] &&
    grep -q '; [0-9.]* [KMGT]FLOPs per forward in the selected modules (2 per multiply-add; the rest was not profiled)$' "$OUT"; then
    ok "the FLOPs line: the whole model's ($whole), or the selection's, labelled so, with --path"
else
    fail "the FLOPs line with --path conv1: exit $rc, whole model '$whole'"
    grep -i flops "$OUT" | sed 's/^/      | /'
fi

# SIGINT and SIGTERM mid-run: the forward in progress finishes, every report is written from the
# completed iterations and says it was interrupted, and the exit code is 128 + the signal.
for sig in INT TERM; do
    checks=$((checks + 1))
    want_rc=$([ $sig = INT ] && echo 130 || echo 143)
    rm -f "$TMP/int.json" "$TMP/int.txt"
    # The signal goes once the run's progress line shows a profiled iteration done: an event of
    # the run, not a sleep that a loaded machine can outlast while the model loads.
    python3 "$HERE/signal_mid_run.py" $sig "$ERR" "$LP" "$NESTED" --iterations 10000000 \
        --format json --output "$TMP/int.json" --format tree --output "$TMP/int.txt" >"$OUT"
    rc=$?
    if [ "$rc" -eq "$want_rc" ] && [ ! -s "$ERR" ] &&
        python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); r=d["run"]
assert r["iterations"] > 0, r["iterations"]
assert any(n.startswith("interrupted: stopped after") for n in r["notes"]), r["notes"]' "$TMP/int.json" &&
        grep -q "^interrupted: stopped after [0-9]* of 10000000 profiled iterations" "$TMP/int.txt" &&
        grep -q "^Total " "$TMP/int.txt" && [ -z "$(ls "$TMP" | grep lp-tmp)" ]; then
        ok "SIG$sig mid-run: exit $rc, the JSON and tree reports written and marked interrupted"
    else
        fail "SIG$sig mid-run: exit $rc (want $want_rc), or a report missing, unmarked or unparsable"
        show
    fi
done

# A run killed while writing its report leaves the previous report as it was: the report goes to
# a temporary file renamed over the old one. RLIMIT_FSIZE makes the write itself kill the process
# (SIGXFSZ) once the new report passes 4 KiB.
checks=$((checks + 1))
printf 'the previous report\n' >"$TMP/keep.json"
(ulimit -f 4 && exec "$LP" "$RESNET" "${FAST[@]}" --events --format json --output "$TMP/keep.json") \
    >"$OUT" 2>"$ERR" </dev/null
rc=$?
if [ "$rc" -ne 0 ] && [ "$(cat "$TMP/keep.json")" = "the previous report" ]; then
    ok "killed while writing (exit $rc): the previous report is intact"
else
    fail "killed while writing: exit $rc, keep.json now starts '$(head -c 40 "$TMP/keep.json")'"
fi
rm -f "$TMP"/keep.json.lp-tmp-*

# nested: `unused` never runs, so its row (and only its row) is blank but for its 0 calls
checks=$((checks + 1))
run -- "$NESTED" "${FAST[@]}"
if [ "$rc" -eq 0 ] && [ ! -s "$ERR" ]; then
    check_tree "nested" "$OUT" 11 '^unused$'
    grep -Eq '^[^|]*unused +\| +\| +\| 0$' "$OUT" || fail "nested: the 'unused' row is not blank with 0 calls"
else
    fail "nested: exit $rc"
    show
fi

# ---- --output FILE writes what stdout would -------------------------------------------------------
normalise() { # times (units are chosen per value), numbers, the padding that follows them, and
    # the noise notes (whether a run's ranking is within its noise is the machine's to decide)
    sed -E '/^noise: /d; s/[0-9]+(\.[0-9]+)?(ns|us|ms|s)( |$)/T\3/g; s/[0-9]+(\.[0-9]+)?/N/g; s/ +/ /g; s/-+/-/g' "$1"
}
# one run, both outputs: byte-identical
checks=$((checks + 1))
run -- "$RESNET" "${FAST[@]}" --output - --output "$TMP/both.txt"
if [ "$rc" -eq 0 ] && [ ! -s "$ERR" ] && [ -s "$OUT" ] && cmp -s "$OUT" "$TMP/both.txt"; then
    ok "--output - --output FILE: identical reports from one run"
else
    fail "--output - --output FILE: exit $rc, or the file differs from stdout"
    show
    diff "$OUT" "$TMP/both.txt" | head -10
fi
cp "$OUT" "$TMP/stdout_run.txt"
# --output FILE alone: nothing on stdout, and the same tree as a run to stdout (numbers aside)
checks=$((checks + 1))
run -- "$RESNET" "${FAST[@]}" --output "$TMP/report.txt"
if [ "$rc" -eq 0 ] && [ ! -s "$ERR" ] && [ ! -s "$OUT" ] && [ -s "$TMP/report.txt" ] &&
    diff <(normalise "$TMP/stdout_run.txt") <(normalise "$TMP/report.txt") >"$TMP/diff"; then
    ok "--output FILE: nothing on stdout, the same tree as stdout (numbers normalised)"
else
    fail "--output FILE: exit $rc, stdout $(wc -c <"$OUT") bytes, or the tree differs"
    show
    head -10 "$TMP/diff"
fi
check_tree "--output FILE" "$TMP/report.txt" 68 ""

# ---- bad model files: a wrong path is the user's to change (exit 2); a file that is no model, or
# one libtorch cannot load, fails at run time (exit 1). Each gets its own reason (README: exit
# status).
expect_error "missing file" 2 "model '.*nosuch\.pt' does not exist\$" -- "$TMP/nosuch.pt"
expect_error "a directory" 2 "model '.*adir\.pt' is a directory: give the model file" -- "$TMP/adir.pt"
expect_error "empty file" 1 "model '.*empty\.pt' is empty \(0 bytes\)\$" -- "$TMP/empty.pt"
expect_error "text file" 1 "text\.pt' is not a model: torchscript files and aotinductor packages are zip archives" -- "$TMP/text.pt"
expect_error "truncated .pt" 1 "truncated\.pt.*torchscript" -- "$TMP/truncated.pt"
expect_error "corrupted zip" 1 "corrupt\.pt" -- "$TMP/corrupt.pt"
if [ -f "$TMP/notscript.pt" ]; then
    expect_error "zip, not TorchScript" 1 "notscript\.pt.*torchscript" -- "$TMP/notscript.pt"
else
    echo "SKIP: zip, not TorchScript (no python3 with zipfile, no zip)"
fi

# ---- a figure this run does not record: a usage error naming the option that records it --------------
expect_error "--sort peak_cpu_mem without --memory" 2 \
    "^layerprof: error: sort key 'peak_cpu_mem' is recorded only with --memory \\(memory: true\\)\$" -- \
    "$NESTED" --sort peak_cpu_mem
expect_error "--columns cuda_total on the CPU" 2 \
    "^layerprof: error: column 'cuda_total' is recorded only with --device cuda" -- \
    "$NESTED" --columns self_cpu,cuda_total

# ---- inputs the model rejects: libtorch's reason in the one line (exit 1) ------------------------------
# Inputs that do not fit forward's signature: TorchScript's complaint, the whole signature, and
# --input arguments of the types it takes.
expect_error "one input too many" 1 \
    "argument.*; the model's forward is forward\\(__torch__\\.torchvision\\.models\\.resnet\\.ResNet self, Tensor x\\) -> Tensor; inputs of these types: --input 2x3 \\(shapes are examples\\)\$" -- \
    "$RESNET" --input 1x3x224x224 --input 2x2 "${FAST[@]}"
expect_error "wrong input rank" 1 "expected.*(input|dim|channels)" -- \
    "$RESNET" --input 1x3x224 --warmup 0 --iterations 1
expect_error "wrong input shape" 1 "channels" -- \
    "$RESNET" --input 1x5x224x224 --warmup 0 --iterations 1
expect_error "wrong input dtype" 1 "(scalar type|dtype).*(Long|Float)|(Long|Float).*(Long|Float)" -- \
    "$RESNET" --input 1x3x224x224:int64:0..10 --warmup 0 --iterations 1

# ---- structured arguments: List[Tensor], tuples, dicts, scalars, none, torch.save files ----------
STRUCT=$MODELS/pat_structured.pt
STRUCT_ARGS=(--input "[3x8x8]" --input "(2x8, int:3)" --input "{shift: 2x4}" --input float:1
             --input bool:false --input "str:x" --input 2x4)
# mix runs once per the tuple's int: 3 calls, where the recorded inputs give 2.
checks=$((checks + 1))
run -- "$STRUCT" "${STRUCT_ARGS[@]}" --mode hooks "${FAST[@]}"
if [ "$rc" -eq 0 ] && grep -Eq "stem +\|.*\| 1\$" "$OUT" && grep -Eq "mix +\|.*\| 3\$" "$OUT"; then
    ok "structured --input arguments reach forward (stem 1 call, mix 3)"
else
    fail "structured --input arguments"; show; cat "$OUT"
fi
expect_error "a list whose items are not all tensors" 1 \
    "argument 'images'.*; the model's forward is forward\\(.*Tensor\\[\\] images.*; inputs of these types: --input '\\[2x3, 2x3\\]' --input '\\(2x3, int:1\\)' --input '\\{key: 2x3\\}' --input float:0.5 --input bool:true --input str:text --input 2x3 \\(shapes are examples\\)\$" -- \
    "$STRUCT" --input "[3x8x8, int:2]" "${STRUCT_ARGS[@]:2}" "${FAST[@]}"
expect_error "an unclosed list" 2 "input '\\[3x8x8, 3x6x6': '\\]' is missing at the end" -- \
    "$STRUCT" --input "[3x8x8, 3x6x6"
expect_error "an unknown value" 2 "unknown value 'tensor'.*int:N, float:X" -- \
    "$STRUCT" --input "(tensor, 1x2)"
expect_error "--inputs of a missing file" 1 "cannot open saved inputs .*nosuch\\.pt" -- \
    "$STRUCT" --inputs "$TMP/nosuch.pt"
printf 'not a zip' >"$TMP/notsaved.pt"
expect_error "--inputs of a file torch.save did not write" 1 \
    "notsaved\\.pt' is not a file torch.save wrote" -- "$STRUCT" --inputs "$TMP/notsaved.pt"
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
    /usr/bin/python3 - "$TMP/args.pt" <<'PY'
import sys, torch
# Two dict entries: libtorch 1.13's unpickler lacks SETITEM, which a one-entry dict uses.
torch.save(([torch.rand(3, 8, 8), torch.rand(3, 6, 10)], (torch.rand(2, 8), 4),
            {"shift": torch.rand(2, 4), "unused": torch.rand(1)}, 0.5, True, "double", None),
           sys.argv[1])
PY
    checks=$((checks + 1))
    run -- "$STRUCT" --inputs "$TMP/args.pt" --mode hooks --format json --output "$TMP/saved.json" \
        "${FAST[@]}"
    if [ "$rc" -eq 0 ] && python3 - "$TMP/saved.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
calls = {m["path"]: m["calls"] for m in d["modules"]}  # over all iterations
assert calls["stem"] == 2 * calls[""] and calls["mix"] == 4 * calls[""], calls  # 2 images; 4
assert d["run"]["options"]["inputs"] == ["saved:" + sys.argv[1].replace("saved.json", "args.pt")]
PY
    then
        ok "--inputs FILE.pt: torch.save's tuple is the argument list (mix 4 calls)"
    else
        fail "--inputs FILE.pt"; show
    fi
    # Python pickles a one-item list with APPEND, which libtorch 1.13's unpickler lacks.
    /usr/bin/python3 -c 'import sys, torch; torch.save(([torch.rand(3, 8, 8)],), sys.argv[1])' \
        "$TMP/one_image.pt"
    if "$LP" --version | grep -q "libtorch 1\.13"; then
        expect_error "--inputs with a one-item list on libtorch 1.13" 2 \
            "one_image\\.pt' holds a list or dict of exactly one item, which libtorch 1\\.13 cannot read.*--input instead" -- \
            "$STRUCT" --inputs "$TMP/one_image.pt" --input "(2x8, int:1)" --input "{shift: 2x4}" \
            --input float:1 --input bool:true --input str:x --input none
    else
        checks=$((checks + 1))
        run -- "$STRUCT" --inputs "$TMP/one_image.pt" --input "(2x8, int:1)" \
            --input "{shift: 2x4}" --input float:1 --input bool:true --input str:x --input none \
            "${FAST[@]}"
        if [ "$rc" -eq 0 ]; then ok "--inputs with a one-item list"; else fail "--inputs with a one-item list"; show; fi
    fi
else
    echo "note: skipped --inputs FILE.pt: /usr/bin/python3 has no torch to write the file"
fi

# ---- bad options (exit 2: usage) ------------------------------------------------------------------
expect_error "--iterations 0" 2 "iterations" -- "$NESTED" --iterations 0
expect_error "--iterations -1" 2 "iterations" -- "$NESTED" --iterations -1
expect_error "--iterations 99999999999" 2 "iterations" -- "$NESTED" --iterations 99999999999
expect_error "--iterations abc" 2 "iterations.*abc" -- "$NESTED" --iterations abc
expect_error "--warmup -1" 2 "warmup" -- "$NESTED" --warmup -1
expect_error "unknown option" 2 "--no-such-option" -- "$NESTED" --no-such-option
expect_error "--input 1x0" 2 "1x0" -- "$NESTED" --input 1x0
expect_error "--input 1x3:int64 (no range)" 2 "range.*e\.g\. 1x3:int64:0\.\.100" -- "$NESTED" --input 1x3:int64
expect_error "--mode foo" 2 "mode.*foo" -- "$NESTED" --mode foo
expect_error "--device gpu" 2 "device.*gpu" -- "$NESTED" --device gpu
expect_error "--iterations (no value)" 2 "iterations.*needs a value" -- "$NESTED" --iterations
expect_error "two models" 2 "unexpected argument" -- "$NESTED" "$RESNET"
expect_error "no model" 2 "no model" -- --iterations 1

# ---- module paths (exit 2) -------------------------------------------------------------------------
# A name with nothing close to it gets a hint at the syntax; a near miss gets "did you mean".
expect_error "--path nosuch" 2 "nosuch.*(did you mean|e\.g\.)" -- "$NESTED" --path nosuch
expect_error "--path blok" 2 "blok.*did you mean 'block'" -- "$NESTED" --path blok
expect_error "--path block.bdy" 2 "block\.bdy.*did you mean 'block\.body'" -- "$NESTED" --path block.bdy

# ---- unwritable outputs: fail before the model runs ---------------------------------------------------
# 10,000,000 iterations of resnet18 would take days: finishing within the limit proves the output
# was checked before any forward ran. The limit (120 s, as for every run here) is hours short of
# a run that started, and far past a refusal (under a second idle; a loaded machine under the
# sanitizers takes several times that), so the machine's load cannot decide it.
expect_error "--output /proc/nonexistent/x.txt" 1 "/proc/nonexistent/x\.txt" 120 -- \
    "$RESNET" --iterations 10000000 --output /proc/nonexistent/x.txt
expect_error "--output / (a directory)" 1 "'/'" 120 -- \
    "$RESNET" --iterations 10000000 --output /

# ---- inputs too large to allocate: a clear message, no OOM kill --------------------------------------
expect_error "--input 100000x100000x1000" 1 "memory" 120 -- \
    "$NESTED" --input 100000x100000x1000
expect_error "--input 2^62 bytes" 1 "memory" 120 -- \
    "$NESTED" --input 1073741824x1073741824x4

# ---- --format and --output pair up in order --------------------------------------------------------
# A --format applies to the next --output; one with no --output before the next --format (or the
# end) writes to stdout. `--format tree --format json --output F`: the tree on stdout, JSON in F.
checks=$((checks + 1))
run -- "$NESTED" "${FAST[@]}" --format tree --format json --output "$TMP/pair.json"
if [ "$rc" -eq 0 ] && [ ! -s "$ERR" ] && grep -q '^Module ' "$OUT" && ! grep -q '^{' "$OUT" &&
    head -c 1 "$TMP/pair.json" | grep -q '{' && grep -q '"schema_version"' "$TMP/pair.json"; then
    ok "--format tree --format json --output F: the tree on stdout, JSON in F"
else
    fail "--format tree --format json --output F: exit $rc; stdout starts '$(head -c 40 "$OUT")'"
    show
fi
checks=$((checks + 1))
run -- "$NESTED" --format tree --format json --output "$TMP/pair.json" --format md --print-config
want=$(printf '%s\n' 'outputs:' '  - {format: tree, file: null}' \
    "  - {format: json, file: \"$TMP/pair.json\"}" '  - {format: markdown, file: null}')
if [ "$rc" -eq 0 ] && grep -A3 '^outputs:' "$OUT" | diff - <(echo "$want") >/dev/null; then
    ok "--print-config shows the --format/--output pairs in order"
else
    fail "--print-config of three --format and one --output: exit $rc"
    grep -A3 '^outputs:' "$OUT" | sed 's/^/      | /'
fi

# ---- flags override the config file; a list on the command line replaces the file's ---------------
printf 'model: %s\niterations: 3\npaths: [block]\ndisplay: {sort: calls}\n' "$NESTED" >"$TMP/base.yaml"
checks=$((checks + 1))
run -- --config "$TMP/base.yaml" --iterations 4 --path unused --print-config
if [ "$rc" -eq 0 ] && grep -qx 'iterations: 4' "$OUT" && grep -qx 'paths: \["unused"\]' "$OUT" &&
    grep -qx '  sort: "calls"' "$OUT"; then
    ok "--config with flags: the flags win, --path replaces the file's paths, the rest is kept"
else
    fail "--config with flags: exit $rc"
    show
    grep -E '^(iterations|paths)|sort' "$OUT" | sed 's/^/      | /'
fi

# ---- every option that takes a name: a bad one is refused before anything runs ---------------------
# resnet18 for 10,000,000 iterations would take days and the output file would be created when the
# run starts: exiting within the timeout without the file proves the value was refused first, in
# every output format. The file says the same as the flag, with its position instead of the flag.
FORMATS=(tree json csv markdown trace html summary openmetrics)
# option  bad value  YAML (the value's line, under the model line)  what the message says
BAD_NAMES=(
    "sort|cpu_totl|display: {sort: cpu_totl}|must be a column id, got 'cpu_totl'; did you mean 'cpu_total'\\?"
    "columns|self_cpu,weights|display: {columns: [self_cpu, weights]}|must be column ids \\(one of: self_cpu, .*\\), got 'weights'"
    "mode|fast|mode: fast|must be hooks, graph or markers, got 'fast'"
    "units|minutes|display: {units: minutes}|must be auto, us, ms or s, got 'minutes'"
    "cuda-timing|sometimes|profile: {cuda_timing: sometimes}|must be auto, cupti, events or off, got 'sometimes'"
)
# the message once the flag (--sort) or the position and key (run.yaml:2:17: 'sort') is cut off
body_of() { sed -E '1!d; s/^layerprof: error: (--[a-z-]+|[^ ]+:[0-9]+:[0-9]+: '"'"'[a-z_]+'"'"') //' "$1"; }
for entry in "${BAD_NAMES[@]}"; do
    IFS='|' read -r flag value yaml regex <<<"$entry"
    for f in "${FORMATS[@]}"; do
        rm -f "$TMP/out.$f"
        expect_error "--$flag $value, --format $f" 2 "^layerprof: error: --$flag $regex\$" 120 -- \
            "$RESNET" --iterations 10000000 --"$flag" "$value" --format "$f" --output "$TMP/out.$f"
        [ -e "$TMP/out.$f" ] && fail "--$flag $value, --format $f: $TMP/out.$f was created"
        cli_body=$(body_of "$ERR")
        printf 'model: %s\n%s\niterations: 10000000\noutputs: [{format: %s, file: "%s"}]\n' \
            "$RESNET" "$yaml" "$f" "$TMP/out.$f" >"$TMP/bad.yaml"
        checks=$((checks + 1))
        run 120 -- --config "$TMP/bad.yaml"
        if [ "$rc" -eq 2 ] && [ ! -s "$OUT" ] && [ ! -e "$TMP/out.$f" ] &&
            head -n 1 "$ERR" | grep -Eq "^layerprof: error: $TMP/bad\.yaml:2:[0-9]+: " &&
            [ "$(body_of "$ERR")" = "$cli_body" ]; then
            ok "the same in a file (format $f): $(head -n 1 "$ERR" | head -c 160)"
        else
            fail "YAML $yaml (format $f): exit $rc, or not the flag's message '$cli_body'"
            show
        fi
    done
done
# A bad format, next to a good output of each format: neither file is created.
for f in "${FORMATS[@]}"; do
    rm -f "$TMP/out.$f" "$TMP/bad.out"
    expect_error "--format xml beside --format $f" 2 \
        "^layerprof: error: --format must be tree, json, csv, markdown, trace, html, summary or openmetrics, got 'xml'" 120 -- \
        "$RESNET" --iterations 10000000 --format "$f" --output "$TMP/out.$f" --format xml --output "$TMP/bad.out"
    [ -e "$TMP/out.$f" ] || [ -e "$TMP/bad.out" ] && fail "--format xml beside --format $f: a file was created"
    cli_body=$(body_of "$ERR")
    printf 'model: %s\niterations: 10000000\noutputs: [{format: %s, file: "%s"}, {format: xml}]\n' \
        "$RESNET" "$f" "$TMP/out.$f" >"$TMP/bad.yaml"
    checks=$((checks + 1))
    run 120 -- --config "$TMP/bad.yaml"
    if [ "$rc" -eq 2 ] && [ ! -e "$TMP/out.$f" ] && head -n 1 "$ERR" | grep -q "bad\.yaml:3:[0-9]*: 'format' " &&
        [ "$(body_of "$ERR")" = "$cli_body" ]; then
        ok "the same in a file: $(head -n 1 "$ERR" | head -c 160)"
    else
        fail "YAML format xml beside $f: exit $rc, or not the flag's message '$cli_body'"
        show
    fi
done
# Sampling and the exposition's depth: out of range is a usage error, before anything runs.
expect_error "--sample-every 0" 2 "^layerprof: error: --sample-every must be an integer >= 1, got '0'\$" 120 -- \
    "$RESNET" --iterations 10000000 --sample-every 0
expect_error "--sample-every -3" 2 "^layerprof: error: --sample-every must be an integer >= 1, got '-3'\$" 120 -- \
    "$RESNET" --iterations 10000000 --sample-every -3
for p in 0 1.5 -0.1 nan inf 0x1p-3 abc; do
    expect_error "--sample-probability $p" 2 \
        "^layerprof: error: --sample-probability must be a number in \\(0, 1\\], got '$p'\$" 120 -- \
        "$RESNET" --iterations 10000000 --sample-probability "$p"
done
expect_error "--sample-budget 0.9" 2 "^layerprof: error: --sample-budget must be a number in \\[0, 0.5\\], got '0.9'\$" 120 -- \
    "$RESNET" --iterations 10000000 --sample-budget 0.9
expect_error "--metrics-depth -2" 2 "^layerprof: error: --metrics-depth must be an integer >= -1 \\(-1: no limit\\), got '-2'\$" 120 -- \
    "$RESNET" --iterations 10000000 --metrics-depth -2
printf 'model: %s\niterations: 10000000\nsample_probability: 2\n' "$RESNET" >"$TMP/bad.yaml"
checks=$((checks + 1))
run 120 -- --config "$TMP/bad.yaml"
if [ "$rc" -eq 2 ] && head -n 1 "$ERR" |
    grep -q "bad\.yaml:3:[0-9]*: 'sample_probability' must be a number in (0, 1\], got '2'"; then
    ok "the same in a file: $(head -n 1 "$ERR" | head -c 160)"
else
    fail "YAML sample_probability: 2: exit $rc, or not the message"
    show
fi

expect_error "--format json:x" 2 "--format must be tree, json, csv, markdown, trace, html, summary or openmetrics, got 'json:x'" 120 -- \
    "$RESNET" --iterations 10000000 --format json:x

# ---------------------------------------------------------------------------------------------------
echo
if [ "$failures" -ne 0 ]; then
    echo "$failures of $checks CLI checks FAILED"
    exit 1
fi
echo "all $checks CLI checks passed"
exit 0
