#!/bin/sh
# A libtorch 1.x build and an AOTInductor package: exit 2 and one line naming the libtorch needed.
#   test_pt2_refused.sh LAYERPROF WORK_DIR
lp=$1
pkg=$2/refused.pt2
# A zip's first bytes, as every package has them (a file that is no zip is refused as no model first)
printf 'PK\003\004' > "$pkg"
out=$("$lp" "$pkg" 2>&1)
rc=$?
lines=$(printf '%s\n' "$out" | grep -c .)
echo "$out"
[ "$rc" = 2 ] || { echo "FAIL: exit $rc, not 2"; exit 1; }
[ "$lines" = 1 ] || { echo "FAIL: $lines lines, not 1"; exit 1; }
case "$out" in
  *"AOTInductor package"*"libtorch 2.x"*) ;;
  *) echo "FAIL: the line does not say it needs libtorch 2.x"; exit 1 ;;
esac
echo "1 passed, 0 failed"
