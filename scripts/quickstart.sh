#!/usr/bin/env bash
# Quick start: set up, build against Debian's libtorch, export the models, print resnet18's tree.
#
# A newcomer sees one line per step (what it does, how long it took, where its log is) and then
# the tree; apt's and CMake's own output goes to the step's log under build/quickstart/, and is
# shown (its last 40 lines) only when the step fails.
set -euo pipefail
cd "$(dirname "$0")/.."
logs=build/quickstart
mkdir -p "$logs"

step() { # NAME LOG COMMAND...
  local name=$1 log=$logs/$2 start=$SECONDS
  shift 2
  printf 'quickstart: %s ... ' "$name"
  if "$@" >"$log" 2>&1; then
    printf 'done in %ds (log: %s)\n' $((SECONDS - start)) "$log"
  else
    local rc=$?
    printf 'FAILED after %ds (exit %d); the end of %s:\n' $((SECONDS - start)) "$rc" "$log"
    tail -n 40 "$log" | sed 's/^/    /'
    exit "$rc"
  fi
}

step "installing what layerprof needs (apt: libtorch, libyaml, ...)" setup.log scripts/setup.sh
step "building against Debian's libtorch and exporting the models" build.log \
  scripts/build.sh build debian
echo "quickstart: resnet18's layers (./build/layerprof models/resnet18.pt):"
echo
./build/layerprof models/resnet18.pt
