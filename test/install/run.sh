#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Installs rope-mlir from the build tree into a fresh prefix and runs what was
# installed from there, with LD_LIBRARY_PATH unset (issue 16): rope-opt
# --help lists the rope passes, rope-opt lowers a rope.apply, the stock
# mlir-opt loads the installed RopePlugin.so and lowers it too. Then moves the
# prefix elsewhere and runs them again: the RUNPATH is $ORIGIN/../lib (the
# prefix's own libraries) and the LLVM the build used, nothing of the build
# tree. libRopeJit.so must stay self-contained: no libMLIR.so/libLLVM.so.
set -euo pipefail
BUILD="$(cd "${1:?usage: run.sh <rope-mlir build dir>}" && pwd)"
LLVM=/usr/lib/llvm-22
TMP="$(mktemp -d "${TMPDIR:-/tmp}/rope-install.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
fail() { echo "install: FAIL: $*" >&2; exit 1; }
# What a user without our environment gets.
run() { env -u LD_LIBRARY_PATH "$@"; }

cat > "$TMP/apply.mlir" <<'MLIR'
func.func @apply(%x: tensor<2x8x4x64xf32>, %p: tensor<2x8xi64>, %init: tensor<2x8x4x64xf32>) -> tensor<2x8x4x64xf32> {
  %y = rope.apply ins(%x : tensor<2x8x4x64xf32>) positions(%p : tensor<2x8xi64>) outs(%init : tensor<2x8x4x64xf32>)
         {layout = #rope.layout<interleaved>, freqs = #rope.default<base = 500000.0>} -> tensor<2x8x4x64xf32>
  return %y : tensor<2x8x4x64xf32>
}
MLIR

# $1: an output file of a lowering; it must hold linalg.generic, no rope.apply.
lowered() {
  grep -q 'linalg.generic' "$1" || fail "$2: no linalg.generic in the output"
  ! grep -q 'rope.apply' "$1" || fail "$2: rope.apply left in the output"
}

# Runs the installed tools of prefix $1.
check_prefix() {
  local prefix="$1" where="$2"
  run "$prefix/bin/rope-opt" --help > "$TMP/help.txt" \
    || fail "$where: rope-opt --help does not start"
  for pass in convert-rope-to-linalg rope-raise rope-optimize rope-to-llvm-cpu; do
    grep -q -- "--$pass" "$TMP/help.txt" || fail "$where: rope-opt --help lacks --$pass"
  done
  run "$prefix/bin/rope-opt" "$TMP/apply.mlir" --convert-rope-to-linalg \
    > "$TMP/opt.mlir" || fail "$where: rope-opt --convert-rope-to-linalg failed"
  lowered "$TMP/opt.mlir" "$where: rope-opt"
  run "$LLVM/bin/mlir-opt" "$TMP/apply.mlir" \
    --load-dialect-plugin="$prefix/lib/RopePlugin.so" \
    --load-pass-plugin="$prefix/lib/RopePlugin.so" \
    --pass-pipeline="builtin.module(convert-rope-to-linalg)" \
    > "$TMP/plugin.mlir" || fail "$where: mlir-opt with the installed plugin failed"
  lowered "$TMP/plugin.mlir" "$where: mlir-opt + RopePlugin.so"
}

PREFIX="$TMP/prefix"
cmake --install "$BUILD" --prefix "$PREFIX" > /dev/null

check_prefix "$PREFIX" "installed"
for file in bin/rope-opt lib/RopePlugin.so; do
  [ -f "$PREFIX/$file" ] || fail "$file is not installed"
  runpath="$(readelf -d "$PREFIX/$file" | grep -E '\((RUNPATH|RPATH)\)' || true)"
  echo "$file:$runpath"
  case "$runpath" in
    *'[$ORIGIN/../lib:'* | *'[$ORIGIN/../lib]'*) ;;
    *) fail "$file: the RUNPATH does not start with \$ORIGIN/../lib" ;;
  esac
  case "$runpath" in
    *"$LLVM/lib"*) ;;
    *) fail "$file: the RUNPATH lacks $LLVM/lib" ;;
  esac
  case "$runpath" in
    *"$BUILD"*) fail "$file: the RUNPATH names the build tree" ;;
  esac
done
jit_libs="$(run ldd "$PREFIX/lib/libRopeJit.so")"
if grep -E 'libMLIR|libLLVM|not found' <<< "$jit_libs"; then
  fail "lib/libRopeJit.so needs libraries it must not (above)"
fi

# Relocatable: the same files one level deeper under another name.
mkdir "$TMP/elsewhere"
mv "$PREFIX" "$TMP/elsewhere/moved"
check_prefix "$TMP/elsewhere/moved" "moved"
echo "install: rope-opt, RopePlugin.so and libRopeJit.so run from the prefix and from a moved copy"
