#!/usr/bin/env bash
# test_attach_example.sh ATTACH MODEL SHAPE: runs examples/attach.cpp as a user would, in both
# modes: a module tree, the mode it ran in, and the program's own forward after the session.
set -euo pipefail
attach=$1 model=$2 shape=$3
for mode in markers hooks; do
    out=$("$attach" "$model" "$shape" "$mode")
    for want in '^├── ' "^mode: $mode" '^after the session: output '; do
        grep -q "$want" <<< "$out" || { echo "$mode: no '$want' in:"; echo "$out"; exit 1; }
    done
done
# A model that cannot be loaded: the program's own error, exit 1, no crash.
if "$attach" /nonexistent.pt "$shape" 2> /dev/null; then echo "a missing model succeeded"; exit 1; fi
echo "test_attach_example: ok"
