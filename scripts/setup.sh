#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Installs everything rope-mlir needs (Debian packages, pinned Python
# packages), configures and builds the project, and installs the Python
# package (editable). Idempotent: a second run only rebuilds what changed.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${ROPE_BUILD_DIR:-$ROOT/build}"
LLVM=/usr/lib/llvm-22

SUDO=""
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null; then SUDO=sudo; fi

packages=(llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools clang-22 libomp-22-dev
          cmake ninja-build clang-format)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

PYTHON="${PYTHON:-python3}"
"$PYTHON" -m pip install -q --disable-pip-version-check --root-user-action=ignore \
  -r "$ROOT/python/requirements.txt"

if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -G Ninja -S "$ROOT" -B "$BUILD" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DMLIR_DIR="$LLVM/lib/cmake/mlir" \
    -DLLVM_EXTERNAL_LIT="$LLVM/bin/lit"
fi
ninja -C "$BUILD"
ninja -C "$BUILD" mlir-doc > /dev/null

# The package finds libRopeJit.so in the build tree (editable install);
# (re)install when the importable package is not this checkout's.
installed="$(cd / && "$PYTHON" -c 'import os, rope_mlir; print(os.path.dirname(os.path.realpath(rope_mlir.__file__)))' 2>/dev/null || true)"
if [ "$installed" != "$(realpath "$ROOT/python/rope_mlir")" ]; then
  "$PYTHON" -m pip install -q --disable-pip-version-check --root-user-action=ignore \
    --no-deps -e "$ROOT/python"
fi
echo "setup: done (build in $BUILD)"
