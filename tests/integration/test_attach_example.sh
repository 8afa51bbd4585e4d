#!/usr/bin/env bash
# test_attach_example.sh ATTACH CLI MODEL SHAPE: runs examples/attach.cpp as a user would, in both
# modes: a module tree whose modules and calls are the CLI's on the same model and mode, the mode
# it ran in, and the program's own forward after the session.
set -euo pipefail
attach=$1 cli=$2 model=$3 shape=$4
# Each module row's name and calls (the tree's first and last cells), the Total row excluded.
calls_of() { awk -F'|' 'NR > 2 && /\|/ && $1 !~ /^(Total|-)/ { gsub(/ /, "", $NF); print $1 "|" $NF }'; }
for mode in markers hooks; do
    out=$("$attach" "$model" "$shape" "$mode")
    for want in '^├── ' "^mode: $mode" '^after the session: output '; do
        grep -q "$want" <<< "$out" || { echo "$mode: no '$want' in:"; echo "$out"; exit 1; }
    done
    theirs=$("$cli" "$model" --input "$shape" --mode "$mode" --iterations 2 --warmup 3 | calls_of)
    ours=$(calls_of <<< "$out")
    [ -n "$ours" ] && [ "$ours" = "$theirs" ] ||
        { echo "$mode: module calls differ from the CLI's:"; diff <(echo "$ours") <(echo "$theirs"); exit 1; }
done
# A model that cannot be loaded: the program's own error, exit 1, no crash.
if "$attach" /nonexistent.pt "$shape" 2> /dev/null; then echo "a missing model succeeded"; exit 1; fi
echo "test_attach_example: ok"
