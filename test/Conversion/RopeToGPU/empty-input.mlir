// RUN: rope-opt %s --convert-rope-to-gpu -split-input-file | FileCheck %s --enable-var-scope
// RUN: rope-opt %s --convert-rope-to-gpu --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --canonicalize --cse -split-input-file | FileCheck %s --enable-var-scope --check-prefix=BUF

// An empty input launches nothing (EmptyGuard.h): a dynamic head count puts
// the launch under one host scf.if on the number of heads (the buffers and
// the result stay outside it, so the destination is still written in
// place); a statically empty input folds to the destination; dynamic token
// dims alone add nothing (the grid-stride token loop runs no iteration).

// [T, H, D] = [?, ?, 8]: 2^40 tokens and no head would loop over the tokens.
// CHECK-LABEL: func.func @dynamic_heads(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<?x?x8xf32>, %{{[^:]*}}: i64, %[[INIT:[^:]*]]: tensor<?x?x8xf32>
//       CHECK:   %[[OUT:.*]] = bufferization.to_buffer %[[INIT]]
//       CHECK:   %[[IN:.*]] = bufferization.to_buffer %[[X]] read_only
//       CHECK:   %[[H:.*]] = memref.dim %[[IN]], %c1 :
//       CHECK:   %[[HEADS:.*]] = arith.muli %{{.*}}, %[[H]]
//       CHECK:   %[[WORK:.*]] = arith.cmpi ne, %[[HEADS]], %{{.*}} : index
//       CHECK:   scf.if %[[WORK]] {
//       CHECK:     gpu.launch
//       CHECK:   }
//       CHECK:   %[[R:.*]] = bufferization.to_tensor %[[OUT]] restrict writable
//       CHECK:   return %[[R]]
// In place: no copy of the destination.
// BUF-LABEL: func.func @dynamic_heads(
//   BUF-NOT:   memref.copy
//   BUF-NOT:   memref.alloc
//       BUF:   scf.if
//       BUF:     gpu.launch
//   BUF-NOT:   memref.copy
//       BUF:   return
func.func @dynamic_heads(%x: tensor<?x?x8xf32>, %o: i64, %init: tensor<?x?x8xf32>) -> tensor<?x?x8xf32> {
  %y = rope.apply ins(%x : tensor<?x?x8xf32>) offset(%o : i64) outs(%init : tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  return %y : tensor<?x?x8xf32>
}

// -----

// Only the token count is dynamic: no guard.
// CHECK-LABEL: func.func @dynamic_tokens(
//   CHECK-NOT:   scf.if
//       CHECK:   gpu.launch
func.func @dynamic_tokens(%x: tensor<?x4x8xf32>, %p: tensor<?xi64>) -> tensor<?x4x8xf32> {
  %y = rope.apply ins(%x : tensor<?x4x8xf32>) positions(%p : tensor<?xi64>) outs(%x : tensor<?x4x8xf32>) -> tensor<?x4x8xf32>
  return %y : tensor<?x4x8xf32>
}

// -----

// A static zero: the destination, nothing launched.
// CHECK-LABEL: func.func @static_zero(
//  CHECK-SAME:     %{{[^:]*}}: tensor<?x0x8xf32>, %[[INIT:[^:]*]]: tensor<?x0x8xf32>
//   CHECK-NOT:   gpu.launch
//       CHECK:   return %[[INIT]]
func.func @static_zero(%x: tensor<?x0x8xf32>, %init: tensor<?x0x8xf32>) -> tensor<?x0x8xf32> {
  %y = rope.apply ins(%x : tensor<?x0x8xf32>) outs(%init : tensor<?x0x8xf32>) -> tensor<?x0x8xf32>
  return %y : tensor<?x0x8xf32>
}

// -----

// A cache append without a head: the cache unchanged, no launch.
// CHECK-LABEL: func.func @cache_write(
//  CHECK-SAME:     %[[X:[^:]*]]: tensor<?x?x8xf32>, %{{[^:]*}}: tensor<?xi64>, %[[CACHE:[^:]*]]: tensor<64x?x8xf32>
//       CHECK:   %[[OUT:.*]] = bufferization.to_buffer %[[CACHE]]
//       CHECK:   %[[WORK:.*]] = arith.cmpi ne
//       CHECK:   scf.if %[[WORK]] {
//       CHECK:     gpu.launch
//       CHECK:   %[[R:.*]] = bufferization.to_tensor %[[OUT]] restrict writable
//       CHECK:   return %[[R]]
func.func @cache_write(%x: tensor<?x?x8xf32>, %s: tensor<?xi64>, %cache: tensor<64x?x8xf32>) -> tensor<64x?x8xf32> {
  %y = rope.cache_write ins(%x : tensor<?x?x8xf32>) slots(%s : tensor<?xi64>) outs(%cache : tensor<64x?x8xf32>) -> tensor<64x?x8xf32>
  return %y : tensor<64x?x8xf32>
}
