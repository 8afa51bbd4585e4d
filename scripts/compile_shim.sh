#!/usr/bin/env bash
# Compiles every file of the shim (and the package-attach example, on 2.x) against another libtorch's headers, without linking: proof that
# a libtorch layerprof claims to support still builds it (README: "Supported libtorch"), cheaply
# enough for every CI run. The full build and the tests run against Debian's 1.13 and the newest
# wheel (scripts/test.sh); this covers the 2.x releases in between, 2.11 first: the one GPU
# machines ship.
#   scripts/compile_shim.sh TORCH_DIR [CUDA_INCLUDE_DIR]
# TORCH_DIR is a torch package folder (site-packages/torch: include/ in it). With
# CUDA_INCLUDE_DIR (cuda_runtime_api.h), shim/cuda.cpp's CUDA-events timer is compiled too.
set -euo pipefail
cd "$(dirname "$0")/.."
torch=$1
cuda=${2:-}
[ -d "$torch/include/torch" ] || { echo "compile_shim: no torch headers in $torch/include" >&2; exit 2; }
version=$(sed -n "s/^__version__ = '\(.*\)'/\1/p" "$torch/version.py" 2>/dev/null || true)
flags=(-std=c++17 -DNDEBUG -Wall -Wextra -Werror -Ishim -Iinclude -Isrc
       -isystem "$torch/include" -isystem "$torch/include/torch/csrc/api/include")
abi=$(grep -o '_GLIBCXX_USE_CXX11_ABI=[01]' "$torch/share/cmake/Caffe2/Caffe2Targets.cmake" \
      2>/dev/null | head -1 || true)
[ -n "$abi" ] && flags+=("-D$abi")
[ -n "$cuda" ] && flags+=(-DLPS_HAVE_CUDA=1 -isystem "$cuda")
failed=0
# One file per core at a time (g++ names the file of any error): each is a few hundred MB of
# compiler for torch's headers.
# examples/attach_pt2.cpp stands for include/layerprof_pt2.hpp, the public header that includes
# AOTInductor's (libtorch 2.x only).
files=(shim/*.cpp)
# libtorch's headers once, as the build does (shim/torch_pch.hpp): a precompiled header with the
# same flags, which g++ takes in place of the header wherever -include names it.
pch=$(mktemp -d)
trap 'rm -rf "$pch"' EXIT
# A header of its own that includes ours: g++ warns of #pragma once in a header compiled alone.
echo "#include \"$PWD/shim/torch_pch.hpp\"" > "$pch/torch_pch.hpp"
g++ "${flags[@]}" -x c++-header "$pch/torch_pch.hpp" -o "$pch/torch_pch.hpp.gch" ||
    failed=1
printf '%s\n' "${files[@]}" |
    xargs -P "$(nproc)" -n 1 g++ "${flags[@]}" -fsyntax-only -Winvalid-pch -include "$pch/torch_pch.hpp" ||
    failed=1
# The example stands for the public header: compiled as a user would, with nothing included
# before it, so a header it forgets to include shows.
if [ -e "$torch/include/torch/csrc/inductor/aoti_package/model_package_loader.h" ]; then
  g++ "${flags[@]}" -fsyntax-only examples/attach_pt2.cpp || failed=1
fi
if [ $failed = 0 ]; then
  echo "compile_shim: every shim file compiles against libtorch $version${cuda:+ (with CUDA)}"
else
  echo "compile_shim: the shim does not compile against libtorch $version (errors above)" >&2
fi
exit $failed
