#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Mutation check of the position arithmetic: can the tests tell a signed
# position conversion from an unsigned one? Not run in CI (one incremental
# rebuild of libRopeJit.so per mutant: minutes each on a small machine).
#
# Each mutant turns one signed conversion of a position in lib/ into the
# unsigned one (sitofp -> uitofp, extsi -> extui): the same code on positions
# >= 0, an O(1) error on negative ones (R(-m), SEMANTICS.md §1). The tests named
# with each mutant must fail on it. Everything happens in a git worktree of
# HEAD with its own build directory, so the checkout and its build are left
# alone; the mutants are applied and reverted one at a time.
#
# Not listed (equivalent mutants, no test can fail on them): the sitofp of the
# frequency index i >= 0 and of max(length, M) >= M > 0 in RopeFrequencies.cpp,
# and the index_casts of clamped cache rows (>= 0; index -> i64 is also a
# no-op when index is 64 bits wide).
#
# usage: scripts/mutation-check.sh [NAME...]        (default: every mutant)
# env:   MUTATION_WORKTREE  the worktree (default /tmp/rope-mutation-check)
#        MUTATION_LOGS      build and test logs (default /tmp/rope-mutation-logs)
#        JOBS               ninja jobs (default 2)
#        KEEP_WORKTREE=1    keep the worktree and its build for a rerun
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORKTREE="${MUTATION_WORKTREE:-/tmp/rope-mutation-check}"
BUILD="$WORKTREE/build"
LOGS="${MUTATION_LOGS:-/tmp/rope-mutation-logs}"
mkdir -p "$LOGS"
LLVM=/usr/lib/llvm-22
PYTHON="${PYTHON:-python3}"
NEG=python/tests/numerics/test_negative_positions.py
GPU=python/tests/numerics/test_gpu_emulation.py

# name | file | sed expression (must change exactly one line) | pytest args
MUTANTS=(
  "linalg-sitofp|lib/Dialect/Rope/IR/RopeDecompose.cpp|s/arith::SIToFPOp::create(nb, nloc, nb.getF64Type(), pos)/arith::UIToFPOp::create(nb, nloc, nb.getF64Type(), pos)/|$NEG -k scalar"
  "vector-sitofp|lib/Conversion/RopeToVector/RopeToVector.cpp|s/arith::SIToFPOp::create(nb, nloc, nb.getF64Type(), pos))/arith::UIToFPOp::create(nb, nloc, nb.getF64Type(), pos))/|$NEG -k vector or threads2 or inplace"
  "vector-mrope-sitofp|lib/Conversion/RopeToVector/RopeToVector.cpp|s/Value f = arith::SIToFPOp::create/Value f = arith::UIToFPOp::create/|$NEG -k mrope and vector"
  "gpu-sitofp|lib/Conversion/RopeToGPU/RopeToGPU.cpp|s/arith::SIToFPOp::create(kb, loc, kb.getF64Type(),/arith::UIToFPOp::create(kb, loc, kb.getF64Type(),/|$GPU -k negative or mrope or scaled"
  "toi64-extsi|lib/Dialect/Rope/IR/RopeArith.cpp|s/return arith::ExtSIOp::create(b, loc, i64, value)/return arith::ExtUIOp::create(b, loc, i64, value)/|$NEG $GPU -k explicit32 or i32"
  "tiling-extsi|lib/Dialect/Rope/IR/RopeTiling.cpp|s/rowsI64 = arith::ExtSIOp::create/rowsI64 = arith::ExtUIOp::create/|$NEG -k i32_row and tiled"
)

log() { printf '== %s\n' "$*"; }

selected=("$@")
wanted() {
  [ ${#selected[@]} -eq 0 ] && return 0
  local n
  for n in "${selected[@]}"; do [ "$n" = "$1" ] && return 0; done
  return 1
}

# The worktree at HEAD (reused, and moved to HEAD, when kept from a run).
head="$(git -C "$ROOT" rev-parse HEAD)"
if [ -d "$WORKTREE" ]; then
  git -C "$WORKTREE" checkout -q --force --detach "$head" || exit 1
else
  git -C "$ROOT" worktree add -q --detach "$WORKTREE" "$head" || exit 1
fi
cleanup() {
  if [ "${KEEP_WORKTREE:-0}" != 1 ]; then
    git -C "$ROOT" worktree remove --force "$WORKTREE"
  else
    git -C "$WORKTREE" checkout -q --force -- lib
  fi
}
trap cleanup EXIT

if [ ! -f "$BUILD/build.ninja" ]; then
  log "configuring $BUILD"
  cmake -G Ninja -S "$WORKTREE" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DMLIR_DIR="$LLVM/lib/cmake/mlir" \
    -DLLVM_EXTERNAL_LIT="$LLVM/bin/lit" > "$LOGS/cmake.log" 2>&1 ||
    { cat "$LOGS/cmake.log"; exit 1; }
fi
build() {
  nice -n 10 ninja -C "$BUILD" -j "${JOBS:-2}" RopeJit > "$LOGS/ninja.log" 2>&1 ||
    { tail -n 30 "$LOGS/ninja.log"; return 1; }
}
run_tests() {  # log pytest-args...
  local log="$1"
  shift
  (cd "$WORKTREE" && ROPE_MLIR_LIBRARY="$BUILD/lib/libRopeJit.so" \
    "$PYTHON" -m pytest -q -p no:cacheprovider -rf "$@") > "$log" 2>&1
}
split_tests() {  # "files... -k expr" -> args array
  local spec="$1"
  args=()
  local files="${spec%% -k *}"
  read -r -a args <<< "$files"
  if [ "$files" != "$spec" ]; then args+=(-k "${spec#* -k }"); fi
}

log "building the unmutated library (HEAD $head)"
build || { echo "baseline build failed"; exit 1; }
log "baseline: the tests pass unmutated"
run_tests "$LOGS/pytest-baseline.log" "$NEG" "$GPU" ||
  { tail -n 30 "$LOGS/pytest-baseline.log"; echo "baseline tests fail"; exit 1; }

caught=0 survived=0 broken=0
summary=()
for entry in "${MUTANTS[@]}"; do
  IFS='|' read -r name file expr tests <<< "$entry"
  wanted "$name" || continue
  log "mutant $name: $file: $expr"
  sed -i -e "$expr" "$WORKTREE/$file"
  changed="$(git -C "$WORKTREE" diff --numstat -- "$file" | cut -f1,2)"
  if [ "$changed" != "$(printf '1\t1')" ]; then
    echo "the expression changed '${changed:-nothing}' (lines added, removed), not one line"
    summary+=("$name: NOT APPLIED")
    broken=$((broken + 1))
    git -C "$WORKTREE" checkout -q -- "$file"
    continue
  fi
  git -C "$WORKTREE" diff -U0 -- "$file" | grep '^[-+] '
  if ! build; then
    summary+=("$name: BUILD FAILED")
    broken=$((broken + 1))
  else
    split_tests "$tests"
    log="$LOGS/pytest-$name.log"
    run_tests "$log" "${args[@]}"
    rc=$?
    failed="$(grep -c '^FAILED' "$log")"
    if [ $rc -eq 0 ]; then
      summary+=("$name: SURVIVED ($tests)")
      survived=$((survived + 1))
    elif [ $rc -ne 1 ] || [ "$failed" -eq 0 ] ||
        grep -qE '^E +(OSError|ImportError|ModuleNotFoundError|rope_mlir\._jit\.CompileError)' "$log"; then
      # Not a wrong result: the library did not load or compile.
      summary+=("$name: TESTS BROKEN (pytest exit $rc, see $log)")
      broken=$((broken + 1))
    else
      summary+=("$name: caught by $failed tests of '$tests', e.g. $(grep -m1 '^FAILED' "$log" | cut -c8-200)")
      caught=$((caught + 1))
    fi
  fi
  git -C "$WORKTREE" checkout -q -- "$file"
done
if [ "${KEEP_WORKTREE:-0}" = 1 ]; then
  log "rebuilding the unmutated library"
  build
fi

log "summary"
printf '%s\n' "${summary[@]}"
echo "mutants: $caught caught, $survived survived, $broken not run"
[ $survived -eq 0 ] && [ $broken -eq 0 ]
