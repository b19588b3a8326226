// RUN: rope-opt %s --rope-test-swap-commutative-operands | FileCheck %s --check-prefix=SWAP
// RUN: rope-opt %s --rope-test-swap-commutative-operands=permute-inputs | FileCheck %s --check-prefix=PERMUTE
// RUN: rope-opt %s --rope-test-split-generic | FileCheck %s --check-prefix=SPLIT
// RUN: rope-opt %s --rope-test-split-generic --linalg-fuse-elementwise-ops --canonicalize | FileCheck %s --check-prefix=REFUSE

// The test-only rewrites of scripts/metamorphic.py (test/lib/Transforms/
// TestMetamorphicRewrites.cpp): spellings of the same computation that
// --rope-raise must raise alike.

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// Commutative payload ops get their operands swapped, comparisons their
// predicate mirrored; linalg.add its inputs. permute-inputs reverses the
// generic's inputs, maps and block arguments with them.
// SWAP-LABEL: func.func @payload(
//       SWAP:   linalg.generic {indexing_maps = [#map, #map1, #map, #map]
//  SWAP-SAME:     ins(%arg0, %arg1, %arg2 :
//       SWAP:   ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %[[N:.*]]: i64, %{{.*}}: f32):
//       SWAP:     %[[C:.*]] = arith.constant 2.0
//       SWAP:     %[[S:.*]] = arith.subf %[[X]], %[[Y]]
//       SWAP:     %[[M:.*]] = arith.mulf %[[C]], %[[S]]
//       SWAP:     arith.cmpf ogt, %[[Y]], %[[M]]
//       SWAP:     %[[J:.*]] = arith.index_cast
//       SWAP:     %[[Q:.*]] = arith.cmpi sge, %[[N]], %[[J]]
//       SWAP:     %[[MX:.*]] = arith.maxnumf %[[X]], %[[M]]
//       SWAP:     arith.select %[[Q]], %[[MX]], %[[Y]]
//       SWAP:   linalg.add ins(%{{.*}}, %arg0 :
//
// PERMUTE-LABEL: func.func @payload(
//       PERMUTE:   linalg.generic {indexing_maps = [#map, #map1, #map, #map]
//  PERMUTE-SAME:     ins(%arg2, %arg1, %arg0 : tensor<4x8xi64>, tensor<4xf32>, tensor<4x8xf32>)
//       PERMUTE:   ^bb0(%[[N:.*]]: i64, %[[Y:.*]]: f32, %[[X:.*]]: f32, %{{.*}}: f32):
//       PERMUTE:     arith.subf %[[X]], %[[Y]]
//       PERMUTE:     arith.cmpi sge, %[[N]],

// The split: the first half (constant, subf, mulf, cmpf) in one generic
// that yields what the second half reads (the product); the second reads
// the inputs and the product, recomputes the constant and the index.
// SPLIT-LABEL: func.func @payload(
//       SPLIT:   %[[E:.*]] = tensor.empty() : tensor<4x8xf32>
//       SPLIT:   %[[E2:.*]] = tensor.empty() : tensor<4x8xf32>
//       SPLIT:   %[[P:.*]] = linalg.generic {{.*}} ins(%arg0, %arg1, %arg2 : {{.*}}) outs(%[[E2]] : tensor<4x8xf32>)
//       SPLIT:     arith.subf
//       SPLIT:     %[[M:.*]] = arith.mulf
//       SPLIT:     linalg.yield %[[M]] : f32
//       SPLIT:   %[[R:.*]] = linalg.generic {indexing_maps = [#map, #map1, #map, #map, #map], {{.*}} ins(%arg0, %arg1, %arg2, %[[P]] : {{.*}}) outs(%[[E]] : tensor<4x8xf32>)
//       SPLIT:   ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %[[N:.*]]: i64, %[[PM:.*]]: f32, %{{.*}}: f32):
//       SPLIT:     linalg.index 1
//       SPLIT:     arith.cmpi sle
//       SPLIT:     arith.maxnumf %[[PM]], %[[X]]
//       SPLIT:     arith.select
//       SPLIT:   linalg.add ins(%arg0, %[[R]] :
//
// Fused again, the two are one generic.
// REFUSE-LABEL: func.func @payload(
//       REFUSE:   linalg.generic
//       REFUSE:     arith.subf
//       REFUSE:     arith.maxnumf
//   REFUSE-NOT:   linalg.generic
func.func @payload(%a: tensor<4x8xf32>, %b: tensor<4xf32>, %i: tensor<4x8xi64>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #row, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b, %i : tensor<4x8xf32>, tensor<4xf32>, tensor<4x8xi64>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %n: i64, %o: f32):
    %c = arith.constant 2.0 : f32
    %s = arith.subf %x, %y : f32
    %m = arith.mulf %s, %c : f32
    %k = arith.cmpf olt, %m, %y : f32
    %j = linalg.index 1 : index
    %j64 = arith.index_cast %j : index to i64
    %q = arith.cmpi sle, %j64, %n : i64
    %mx = arith.maxnumf %m, %x : f32
    %t = arith.select %q, %mx, %y : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  %add = linalg.add ins(%a, %r : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %r, %add : tensor<4x8xf32>, tensor<4x8xf32>
}

// Not split: one payload op; a reduction; a payload whose first half reads
// the destination.
// SPLIT-LABEL: func.func @not_split(
// REFUSE-LABEL: func.func @not_split(
// SPLIT-COUNT-3: linalg.generic
//     SPLIT-NOT: linalg.generic
func.func @not_split(%a: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %one = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %n = arith.negf %x : f32
    linalg.yield %n : f32
  } -> tensor<4x8xf32>
  %z = tensor.empty() : tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<4x8xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %n = arith.negf %x : f32
    %s = arith.addf %n, %o : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %acc = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xf32>) outs(%one : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %o : f32
    %n = arith.negf %s : f32
    linalg.yield %n : f32
  } -> tensor<4x8xf32>
  return %one, %sum, %acc : tensor<4x8xf32>, tensor<4xf32>, tensor<4x8xf32>
}
