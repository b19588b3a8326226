// RUN: rope-opt %s --convert-rope-to-linalg -split-input-file | FileCheck %s --enable-var-scope

// An empty input costs nothing (EmptyGuard.h): a dynamic head count guards
// the lowered op with one scf.if outside its loops, whose else branch is
// the destination; a statically empty input folds to the destination;
// dynamic token dims alone add nothing (the token loops are outermost).

// [T, H, D] = [?, ?, 8]: 2^40 tokens and no head would loop over the tokens.
// CHECK-LABEL: func.func @dynamic_heads(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<?x?x8xf32>, %{{[^:]*}}: i64, %[[INIT:[^:]*]]: tensor<?x?x8xf32>
//       CHECK:   %[[C1:.*]] = arith.constant 1 : index
//       CHECK:   %[[H:.*]] = tensor.dim %[[X]], %[[C1]]
//       CHECK:   %[[C0:.*]] = arith.constant 0 : index
//       CHECK:   %[[WORK:.*]] = arith.cmpi ne, %[[H]], %[[C0]] : index
//       CHECK:   %[[R:.*]] = scf.if %[[WORK]] -> (tensor<?x?x8xf32>) {
//       CHECK:     linalg.generic
//       CHECK:   } else {
//  CHECK-NEXT:     scf.yield %[[INIT]] : tensor<?x?x8xf32>
//  CHECK-NEXT:   }
//  CHECK-NEXT:   return %[[R]]
func.func @dynamic_heads(%x: tensor<?x?x8xf32>, %o: i64, %init: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  %y = rope.apply ins(%x : tensor<?x?x8xf32>) offset(%o : i64) outs(%init : tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}

// -----

// [B, H, S, D] with token_dims [0, 2]: the heads are dim 1.
// CHECK-LABEL: func.func @bhsd(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<?x?x?x8xf32>
//       CHECK:   %[[C1:.*]] = arith.constant 1 : index
//       CHECK:   %[[H:.*]] = tensor.dim %[[X]], %[[C1]]
//       CHECK:   arith.cmpi ne, %[[H]]
//   CHECK-NOT:   arith.cmpi ne
//       CHECK:   scf.if
func.func @bhsd(%x: tensor<?x?x?x8xf32>, %p: tensor<?x?xi64>) -> tensor<?x?x?x8xf32> {
  %y = rope.apply ins(%x : tensor<?x?x?x8xf32>) positions(%p : tensor<?x?xi64>) outs(%x : tensor<?x?x?x8xf32>)
         {token_dims = array<i64: 0, 2>} -> tensor<?x?x?x8xf32>
  return %y : tensor<?x?x?x8xf32>
}

// -----

// Only the token count is dynamic: no guard (a zero token count runs no
// iteration of the token loop already).
// CHECK-LABEL: func.func @dynamic_tokens(
//   CHECK-NOT:   scf.if
//   CHECK-NOT:   arith.cmpi ne
//       CHECK:   linalg.generic
func.func @dynamic_tokens(%x: tensor<?x4x8xf32>, %p: tensor<?xi64>) -> tensor<?x4x8xf32> {
  %y = rope.apply ins(%x : tensor<?x4x8xf32>) positions(%p : tensor<?xi64>) outs(%x : tensor<?x4x8xf32>) -> tensor<?x4x8xf32>
  return %y : tensor<?x4x8xf32>
}

// -----

// A static zero: the destination, nothing lowered.
// CHECK-LABEL: func.func @static_zero(
//  CHECK-SAME:     %{{[^:]*}}: tensor<?x0x8xf32>, %[[INIT:[^:]*]]: tensor<?x0x8xf32>
//   CHECK-NOT:   linalg.generic
//       CHECK:   return %[[INIT]]
func.func @static_zero(%x: tensor<?x0x8xf32>, %init: tensor<?x0x8xf32>) -> tensor<?x0x8xf32> {
  %y = rope.apply ins(%x : tensor<?x0x8xf32>) outs(%init : tensor<?x0x8xf32>) -> tensor<?x0x8xf32>
  return %y : tensor<?x0x8xf32>
}

// -----

// A cache append: no head, the cache unchanged.
// CHECK-LABEL: func.func @cache_write(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<?x?x8xf32>, %{{[^:]*}}: tensor<?xi64>, %[[CACHE:[^:]*]]: tensor<64x?x8xf32>
//       CHECK:   %[[H:.*]] = tensor.dim %[[X]], %{{.*}}
//       CHECK:   %[[WORK:.*]] = arith.cmpi ne, %[[H]]
//       CHECK:   %[[R:.*]] = scf.if %[[WORK]]
//       CHECK:     scf.yield %[[CACHE]] : tensor<64x?x8xf32>
//  CHECK-NEXT:   }
//  CHECK-NEXT:   return %[[R]]
func.func @cache_write(%x: tensor<?x?x8xf32>, %s: tensor<?xi64>, %cache: tensor<64x?x8xf32>) -> tensor<64x?x8xf32> {
  %y = rope.cache_write ins(%x : tensor<?x?x8xf32>) slots(%s : tensor<?xi64>) outs(%cache : tensor<64x?x8xf32>) -> tensor<64x?x8xf32>
  return %y : tensor<64x?x8xf32>
}
