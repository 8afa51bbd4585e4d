#!/usr/bin/env bash
# Quick start: set up, build against Debian's libtorch, export the models, print resnet18's tree.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
scripts/build.sh build debian
./build/layerprof models/resnet18.pt
