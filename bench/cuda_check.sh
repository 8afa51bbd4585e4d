#!/usr/bin/env bash
# cuda_check.sh: everything CUDA that needs a GPU, in one command (see docs/cuda.md).
#
#     bench/cuda_check.sh [cuda_compare.py options]
#
# 1. finds a Python whose torch has CUDA (or takes $PY) and builds layerprof against that wheel's
#    libtorch in $BUILD (default build-gpu), exporting the gpu tests' model with the same Python;
# 2. runs the CUDA tests: unit.test_cuda_join, integration.cuda_device and gpu.cuda (label gpu);
# 3. compares layerprof's per-module CUDA totals for resnet18 with torch.profiler's.
# Needs models/resnet18.pt, models/memory_known.pt and models/nested.pt (models/export.py, or
# copied from a machine that exported them). Exit status: the first step that failed.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$ROOT/build-gpu}
JOBS=${JOBS:-$(nproc)}

if [ -z "${PY:-}" ]; then
    for c in python3 python /usr/bin/python3 /root/.pyenv/versions/*/bin/python3; do
        if command -v "$c" >/dev/null 2>&1 &&
            "$c" -c 'import torch, sys; sys.exit(0 if torch.version.cuda else 1)' 2>/dev/null; then
            PY=$c
            break
        fi
    done
fi
[ -n "${PY:-}" ] || { echo "cuda_check: no Python with a CUDA torch found (set PY)" >&2; exit 1; }
PY=$(command -v "$PY") # CMake takes LP_PYTHON as a path: make it absolute
TORCH=$("$PY" -c 'import os, torch; print(os.path.dirname(torch.__file__))')
"$PY" -c 'import torch; print("torch", torch.__version__, "CUDA", torch.version.cuda,
    "GPU:", torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none")'
for m in resnet18 memory_known nested; do
    [ -f "$ROOT/models/$m.pt" ] || echo "cuda_check: warning: models/$m.pt missing" >&2
done

cmake -S "$ROOT" -B "$BUILD" -DCMAKE_PREFIX_PATH="$TORCH" -DLP_PYTHON="$PY" \
    -DLP_EXPORT_MODELS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$BUILD" -j"$JOBS" --target layerprof test_cuda_join test_cuda_device test_cuda_gpu
# -V: the gpu test prints its figures (shares, per-forward times, the reports) even when it passes.
tests=0
ctest --test-dir "$BUILD" -R 'cuda' -V || tests=$?
compare=0
"$PY" "$ROOT/bench/cuda_compare.py" --layerprof "$BUILD/layerprof" \
    --model "$ROOT/models/resnet18.pt" "$@" || compare=$?
echo "cuda_check: tests $([ $tests = 0 ] && echo passed || echo FAILED)," \
    "comparison $([ $compare = 0 ] && echo agrees || echo DIFFERS)"
[ $tests = 0 ] || exit $tests
exit $compare
