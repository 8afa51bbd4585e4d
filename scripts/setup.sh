#!/usr/bin/env bash
# Installs what layerprof needs on Debian 12. Idempotent: re-running it is cheap.
#   scripts/setup.sh                 to build and run: Debian's libtorch 1.13, python3-torch (exports),
#                                    libmicrohttpd (the /metrics server of examples/serve.cpp)
#   scripts/setup.sh --test          also what the tests use: clang (fuzzers), valgrind, Chromium
#                                    and Selenium (the HTML view's headless-browser test),
#                                    Prometheus (integration.prometheus scrapes the example)
#   scripts/setup.sh --torch2 ...    also PyPI's torch 2.x wheel, in its own venv (.deps/torch2),
#                                    and torch 2.11's headers (.deps/torch211), to compile against
set -euo pipefail
cd "$(dirname "$0")/.."

want_test=0 want_torch2=0
for arg in "$@"; do
  case "$arg" in
    --test) want_test=1 ;;
    --torch2) want_torch2=1 ;;
    *) echo "setup: unknown option $arg" >&2; exit 2 ;;
  esac
done

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

PACKAGES=(build-essential cmake pkg-config git
          libtorch-dev python3-torch python3-torchvision python3-venv
          libyaml-dev libcmocka-dev libjansson-dev libmicrohttpd-dev)
if [ $want_test = 1 ]; then
  # python3-torchaudio: the speech models of the real-model suite (integration.real_models)
  PACKAGES+=(clang libclang-rt-14-dev valgrind chromium chromium-driver python3-torchaudio)
  # prometheus (with promtool): integration.openmetrics checks the openmetrics output,
  # integration.prometheus scrapes examples/serve.cpp; libtsan2 is what scripts/tsan.sh links
  # (ThreadSanitizer over the live-session test)
  PACKAGES+=(prometheus libtsan2)
fi
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# Any python3 can make the venvs; Debian's needs python3-venv (installed above).
make_venv() { # DIR PACKAGE IMPORT
  if ! "$1/bin/python" -c "import $3" 2>/dev/null; then
    echo "setup: installing $2 into $1"
    python3 -m venv "$1"
    "$1/bin/python" -m pip install -q --upgrade pip
    "$1/bin/python" -m pip install -q "$2"
  fi
}

if [ $want_test = 1 ]; then
  make_venv .deps/selenium selenium selenium
fi
if [ $want_torch2 = 1 ]; then
  make_venv .deps/torch2 torch torch
  # The .pt2 tests export torchvision's resnet18 with this torch (python/layerprof_export.py).
  # --no-deps: torchvision's own pin would replace the wheel's torch; numpy and pillow are what
  # importing torchvision needs.
  if ! .deps/torch2/bin/python -c 'import torchvision' 2>/dev/null; then
    echo "setup: installing torchvision into .deps/torch2"
    .deps/torch2/bin/python -m pip install -q numpy pillow
    .deps/torch2/bin/python -m pip install -q --no-deps torchvision
  fi
  .deps/torch2/bin/python -c 'import torch; print("setup: torch", torch.__version__)' 2>/dev/null
  # The oldest 2.x layerprof claims (README: "Supported libtorch"), the one GPU machines ship:
  # only its headers, for scripts/compile_shim.sh (--no-deps: no CUDA libraries, nothing to run).
  if [ ! -d .deps/torch211/torch-2.11.0.dist-info ]; then
    echo "setup: installing torch 2.11.0's headers into .deps/torch211"
    .deps/torch2/bin/python -m pip install -q --no-deps --target .deps/torch211 torch==2.11.0
  fi
fi
