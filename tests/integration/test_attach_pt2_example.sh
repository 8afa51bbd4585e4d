#!/usr/bin/env bash
# test_attach_pt2_example.sh ATTACH_PT2 CLI PT2_DIR: runs examples/attach_pt2.cpp as a user would on
# packages integration.pt2_export wrote: a module tree whose modules and calls are the CLI's on the
# same package, and the program's own forward after the session.
set -euo pipefail
attach=$1 cli=$2 dir=$3
# Each module row's name and calls (the tree's first and last cells), the Total row excluded.
calls_of() { awk -F'|' 'NR > 2 && /\|/ && $1 !~ /^(Total|-)/ { gsub(/ /, "", $NF); print $1 "|" $NF }'; }
for spec in nested:1x3x16x16 pat_loops:2x32; do
    name=${spec%%:*} shape=${spec#*:}
    pkg=$dir/$name.pt2
    out=$("$attach" "$pkg" "$shape")
    for want in '^├── ' '^mode: AOTInductor package' '^after the session: '; do
        grep -q "$want" <<< "$out" || { echo "$name: no '$want' in:"; echo "$out"; exit 1; }
    done
    theirs=$("$cli" "$pkg" --iterations 2 | calls_of)
    ours=$(calls_of <<< "$out")
    [ -n "$ours" ] && [ "$ours" = "$theirs" ] ||
        { echo "$name: module calls differ from the CLI's:"; diff <(echo "$ours") <(echo "$theirs"); exit 1; }
    echo "$name: the attached tree's calls are the CLI's"
done
# A package without layerprof's map: refused with the reason, exit 1, no crash.
if err=$("$attach" "$dir/nested_nomap.pt2" 1x3x16x16 2>&1); then
    echo "a package without a map was attached"; exit 1
fi
grep -q 'no layerprof module map' <<< "$err" || { echo "no reason given: $err"; exit 1; }
echo "test_attach_pt2_example: ok"
