#!/usr/bin/env bash
# Configures and builds one build directory.
#   scripts/build.sh DIR [debian|torch2] [extra cmake args...]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$1; flavour=${2:-debian}; shift 2 || shift $#
args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DLP_WERROR=ON)
if [ "$flavour" = torch2 ]; then
  root=$(.deps/torch2/bin/python -c 'import os, torch; print(os.path.dirname(torch.__file__))')
  # The wheel's root first: its lib/ must win over Debian's /usr/lib (see shim/CMakeLists.txt).
  args+=(-DCMAKE_PREFIX_PATH="$root")
fi
mkdir -p "$dir"
cmake -S . -B "$dir" "${args[@]}" "$@" > "$dir/configure.log" 2>&1 || { cat "$dir/configure.log"; exit 1; }
cmake --build "$dir" -j"$(nproc)"
