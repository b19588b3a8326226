// RUN: not rope-opt %s --split-input-file --rope-check-ir-safety 2>/dev/null | FileCheck %s --check-prefix=SAFE
// RUN: not rope-opt %s --split-input-file --rope-check-ir-safety 2>&1 | FileCheck %s --check-prefix=REFUSED
// RUN: not rope-opt %s --split-input-file --rope-optimize 2>&1 | FileCheck %s --check-prefix=REFUSED
// RUN: not rope-opt %s --split-input-file --rope-fuse-into-attention 2>&1 | FileCheck %s --check-prefix=REFUSED
// RUN: not rope-opt %s --split-input-file --rope-to-llvm-cpu 2>&1 | FileCheck %s --check-prefix=REFUSED
// RUN: not rope-opt %s --split-input-file --rope-to-nvvm 2>&1 | FileCheck %s --check-prefix=REFUSED

// IR that verifies is left as it is (the pass changes nothing), and the
// named pipelines go on with it (every RUN line's "not" is for the
// inputs after it).
// SAFE-LABEL: func.func @safe(
//       SAFE:   tensor.dim %{{.*}}, %{{.*}} : tensor<?xf32>
func.func @safe(%t: tensor<?xf32>) -> index {
  %c0 = arith.constant 0 : index
  %d = tensor.dim %t, %c0 : tensor<?xf32>
  return %d : index
}

// -----

// Indices that fold inside the rank, a loop that runs more than once (its
// induction variable is no constant) and an index the IR does not know are
// left alone.
// SAFE-LABEL: func.func @safe_indices(
//       SAFE:   scf.for
//       SAFE:   arith.divsi
func.func @safe_indices(%t: tensor<?x?xf32>, %n: index) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %i = arith.subi %c2, %c1 : index
  %a = tensor.dim %t, %i : tensor<?x?xf32>
  %b = tensor.dim %t, %n : tensor<?x?xf32>
  %r = scf.for %k = %c0 to %c2 step %c1 iter_args(%s = %a) -> index {
    %d = tensor.dim %t, %k : tensor<?x?xf32>
    %e = arith.addi %s, %d : index
    scf.yield %e : index
  }
  %sum = arith.addi %r, %b : index
  // A division by zero does not fold: left alone, as the canonicalizer
  // leaves it.
  %zero = arith.constant 0 : index
  %q = arith.divsi %c1, %zero : index
  %z = tensor.dim %t, %q : tensor<?x?xf32>
  %all = arith.addi %sum, %z : index
  return %all : index
}

// -----

// A negative constant dim index (MLIR 22's canonicalizer crashes on it): an
// error naming the op, from the pass and from every named pipeline, which
// run it first.
// REFUSED: error: rope-check-ir-safety: a tensor.dim of dim -1 of a rank-1 value at {{.*}}check-ir-safety.mlir":[[# @LINE + 3]]{{.*}}: a negative dim index
func.func @negative_dim(%t: tensor<?xf32>) -> index {
  %c = arith.constant -1 : index
  %d = tensor.dim %t, %c : tensor<?xf32>
  return %d : index
}

// -----

// A constant dim index past the rank: upstream's value bounds of it read the
// shape past its end, which one-shot bufferization asks when it compares two
// slices offset by it (a SEGV in ValueBoundsConstraintSet::getExpr that the
// fuzzer found at dim 2^31 - 1).
// REFUSED: error: rope-check-ir-safety: a tensor.dim of dim 2147483647 of a rank-1 value at {{.*}}check-ir-safety.mlir":[[# @LINE + 3]]{{.*}}: a dim index past the rank
func.func @dim_past_rank(%t: tensor<16xf32>) -> tensor<16xf32> {
  %c = arith.constant 2147483647 : index
  %j = tensor.dim %t, %c : tensor<16xf32>
  %s = tensor.extract_slice %t[%j][4][1] : tensor<16xf32> to tensor<4xf32>
  %r = tensor.insert_slice %s into %t[%j][4][1] : tensor<4xf32> into tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

// The index as the canonicalizer's folding makes it: arith.subi of two
// constants is -1 by the time the pattern that crashes sees it.
// REFUSED: error: rope-check-ir-safety: a tensor.dim of dim -1 of a rank-1 value at {{.*}}check-ir-safety.mlir":[[# @LINE + 5]]{{.*}}: a negative dim index
func.func @folded_negative_dim(%t: tensor<?xf32>) -> index {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cm1 = arith.subi %c0, %c1 : index
  %d = tensor.dim %t, %cm1 : tensor<?xf32>
  return %d : index
}

// -----

// The induction variable of a loop that runs once, which the canonicalizer
// replaces by its lower bound: the crash of one-shot bufferization again.
// REFUSED: error: rope-check-ir-safety: a tensor.dim of dim 2147483647 of a rank-1 value at {{.*}}check-ir-safety.mlir":[[# @LINE + 7]]{{.*}}: a dim index past the rank
func.func @single_trip_loop_dim(%t: tensor<16xf32>) -> tensor<16xf32> {
  %lb = arith.constant 2147483647 : index
  %ub = arith.constant 2147483648 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  %r = scf.for %i = %lb to %ub step %c1 iter_args(%acc = %t) -> tensor<16xf32> {
    %j = tensor.dim %acc, %i : tensor<16xf32>
    %s = tensor.extract_slice %acc[%j][4][1] : tensor<16xf32> to tensor<4xf32>
    %f = linalg.fill ins(%one : f32) outs(%s : tensor<4xf32>) -> tensor<4xf32>
    %n = tensor.insert_slice %f into %acc[%j][4][1] : tensor<4xf32> into tensor<16xf32>
    scf.yield %n : tensor<16xf32>
  }
  return %r : tensor<16xf32>
}

// -----

// What the branch taken of an scf.if on a constant yields, which the
// canonicalizer inlines.
// REFUSED: error: rope-check-ir-safety: a tensor.dim of dim 7 of a rank-1 value at {{.*}}check-ir-safety.mlir":[[# @LINE + 10]]{{.*}}: a dim index past the rank
func.func @taken_branch_dim(%t: tensor<?xf32>) -> index {
  %true = arith.constant true
  %c0 = arith.constant 0 : index
  %c7 = arith.constant 7 : index
  %i = scf.if %true -> index {
    scf.yield %c7 : index
  } else {
    scf.yield %c0 : index
  }
  %d = tensor.dim %t, %i : tensor<?xf32>
  return %d : index
}

// -----

// Folders other than arith's: affine.apply of constants, and (below)
// tensor.extract of a constant tensor.
// REFUSED: error: rope-check-ir-safety: a tensor.dim of dim -1 of a rank-2 value at {{.*}}check-ir-safety.mlir":[[# @LINE + 5]]{{.*}}: a negative dim index
#minus_one = affine_map<()[s0] -> (s0 - 1)>
func.func @folded_by_affine(%t: tensor<?x?xf32>) -> index {
  %c0 = arith.constant 0 : index
  %i = affine.apply #minus_one()[%c0]
  %d = tensor.dim %t, %i : tensor<?x?xf32>
  return %d : index
}

// -----

// REFUSED: error: rope-check-ir-safety: a tensor.dim of dim 5 of a rank-2 value at {{.*}}check-ir-safety.mlir":[[# @LINE + 5]]{{.*}}: a dim index past the rank
func.func @folded_by_extract(%t: tensor<?x?xf32>) -> index {
  %table = arith.constant dense<[0, 5]> : tensor<2xindex>
  %c1 = arith.constant 1 : index
  %i = tensor.extract %table[%c1] : tensor<2xindex>
  %d = tensor.dim %t, %i : tensor<?x?xf32>
  return %d : index
}

// -----

// The rank itself is past it too (memref.dim alike).
// REFUSED: error: rope-check-ir-safety: a memref.dim of dim 2 of a rank-2 value at {{.*}}check-ir-safety.mlir":[[# @LINE + 3]]{{.*}}: a dim index past the rank
func.func @memref_dim_at_rank(%m: memref<?x?xf32>) -> index {
  %c = arith.constant 2 : index
  %d = memref.dim %m, %c : memref<?x?xf32>
  return %d : index
}

// -----

// A cast that canonicalization would fold into the generic, whose output
// has 5 rows where the cast's source has 4 (upstream's fold builds a
// generic that does not verify).
// REFUSED: error: rope-check-ir-safety: a linalg.generic at {{.*}}check-ir-safety.mlir":[[# @LINE + 5]]{{.*}}contradicting static sizes
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @cast_fold(%q0: tensor<4x8xf32>) -> tensor<5x8xf32> {
  %q = tensor.cast %q0 : tensor<4x8xf32> to tensor<?x8xf32>
  %o = tensor.empty() : tensor<5x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%q : tensor<?x8xf32>) outs(%o : tensor<5x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  } -> tensor<5x8xf32>
  return %r : tensor<5x8xf32>
}
