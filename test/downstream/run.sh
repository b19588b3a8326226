#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Installs rope-mlir from the build tree into a prefix, builds this
# downstream project against the installed package, runs it and checks it
# lowered a rope.apply it built through the C++ API.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BUILD="$(cd "${1:?usage: run.sh <rope-mlir build dir>}" && pwd)"
PREFIX="$BUILD/downstream-install"
OUT="$BUILD/downstream-build"
cmake --install "$BUILD" --prefix "$PREFIX" > /dev/null
cmake -G Ninja -S "$HERE" -B "$OUT" \
  -DCMAKE_CXX_COMPILER=clang++-22 \
  -DRopeMLIR_DIR="$PREFIX/lib/cmake/RopeMLIR" \
  -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir > /dev/null
ninja -C "$OUT" > /dev/null
# As a user runs it: no LD_LIBRARY_PATH (libMLIR.so by its RUNPATH).
env -u LD_LIBRARY_PATH "$OUT/rope-downstream" > "$OUT/output.mlir"
FileCheck=/usr/lib/llvm-22/bin/FileCheck
"$FileCheck" "$HERE/expected.txt" --input-file "$OUT/output.mlir"
echo "downstream: find_package(RopeMLIR) project built, ran and lowered rope.apply"
