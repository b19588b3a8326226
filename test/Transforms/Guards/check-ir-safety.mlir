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
