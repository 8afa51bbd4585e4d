#!/usr/bin/env bash
# Installs what layerprof needs on Debian 12. Idempotent: re-running it is cheap.
#   scripts/setup.sh          Debian packages (libtorch 1.13, python3-torch for the model export)
#   scripts/setup.sh --torch2 also PyPI's torch 2.x wheel into .deps/torch2 (a venv)
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

PACKAGES=(build-essential cmake pkg-config git
          libtorch-dev python3-torch python3-torchvision python3-venv
          libyaml-dev libcmocka-dev libjansson-dev
          clang libclang-rt-14-dev valgrind)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

if [ "${1:-}" = "--torch2" ]; then
  VENV=.deps/torch2
  if ! "$VENV/bin/python" -c 'import torch' 2>/dev/null; then
    echo "setup: installing PyPI's torch into $VENV"
    # Any python3 will do; Debian's needs python3-venv (installed above).
    PY=$(command -v python3)
    "$PY" -m venv "$VENV"
    "$VENV/bin/python" -m pip install -q --upgrade pip
    "$VENV/bin/python" -m pip install -q torch
  fi
  "$VENV/bin/python" -c 'import torch; print("setup: torch", torch.__version__)'
fi
