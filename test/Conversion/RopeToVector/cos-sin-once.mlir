// RUN: rope-opt %s --convert-rope-to-vector --canonicalize --cse -split-input-file | FileCheck %s --enable-var-scope
// RUN: rope-opt %s --convert-rope-to-vector --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --canonicalize --cse --canonicalize -split-input-file | FileCheck %s --check-prefix=BUF --enable-var-scope

// cos/sin once per (token, frequency) whatever the dim order (issue 18), on
// the large shapes of bench/layout_bench.py: 4096 tokens of 32 heads of
// D = 128. The trig (or the cache row gather) sits in a loop over tokens
// only, and no loop over heads contains any of it: per token before the
// heads loop where a token's heads are contiguous ([B, S, H, D], vLLM's flat
// [T, H·D] seen as [T, H, D]), per tile of tokens into a table before the
// heads loop where they are S·D apart ([B, H, S, D]), whose heads then loop
// outside the tile's tokens (one contiguous block per head).

// Hugging Face's [B, H, S, D], computed cos/sin: tiles of 256 tokens.

// CHECK-LABEL: func.func @bhsd_computed(
//       CHECK:   scf.forall (%[[S0:.*]]) = (0) to (4096) step (256)
//       CHECK:     %[[N:.*]] = arith.minsi
//       CHECK:     %[[TABLE:.*]] = scf.for %{{.*}} = %{{.*}} to %[[N]] step %{{.*}} iter_args(%{{.*}}) -> (tensor<2x256x64xf32>) {
//       CHECK:       math.cos %{{.*}} : vector<64xf32>
//       CHECK:       math.sin %{{.*}} : vector<64xf32>
//       CHECK:       scf.yield
//       CHECK:     scf.for %[[H:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}}) -> (tensor<1x32x?x128xf32>) {
//   CHECK-NOT:       math.{{cos|sin}}
//       CHECK:       scf.for %[[K:.*]] = %{{.*}} to %[[N]] step %{{.*}} iter_args(%{{.*}}) -> (tensor<1x32x?x128xf32>) {
//   CHECK-NOT:         math.{{cos|sin}}
//       CHECK:         vector.transfer_read %{{.*}}[%{{.*}}, %[[H]], %[[K]], %{{.*}}]
//       CHECK:         vector.transfer_read %[[TABLE]][%{{.*}}, %[[K]], %{{.*}}]
//   CHECK-NOT:   math.{{cos|sin}}
//       CHECK:   return
func.func @bhsd_computed(%x: tensor<1x32x4096x128xf32>, %p: tensor<1x4096xi64>, %init: tensor<1x32x4096x128xf32>) -> tensor<1x32x4096x128xf32> {
  %y = rope.apply ins(%x : tensor<1x32x4096x128xf32>) positions(%p : tensor<1x4096xi64>) outs(%init : tensor<1x32x4096x128xf32>) {token_dims = array<i64: 0, 2>} -> tensor<1x32x4096x128xf32>
  return %y : tensor<1x32x4096x128xf32>
}

// -----

// [B, H, S, D], interleaved pairs, cos/sin cache rows gathered at a per-row
// offset: each row read once per token, in the table loop.

// CHECK-LABEL: func.func @bhsd_cache(
//  CHECK-SAME:     %{{[^:]*}}: tensor<1x32x4096x128xf32>, %{{[^:]*}}: tensor<1xi64>, %[[COS:[^:]*]]: tensor<?x64xf32>, %[[SIN:[^:]*]]: tensor<?x64xf32>
//       CHECK:   scf.forall (%[[S0:.*]]) = (0) to (4096) step
//       CHECK:     %[[N:.*]] = arith.minsi
//       CHECK:     %[[TABLE:.*]] = scf.for %{{.*}} = %{{.*}} to %[[N]] step
//       CHECK:       vector.transfer_read %[[COS]]
//       CHECK:       vector.transfer_read %[[SIN]]
//       CHECK:       scf.yield
//       CHECK:     scf.for %[[H:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}}) -> (tensor<1x32x?x128xf32>) {
//   CHECK-NOT:       %[[COS]]
//       CHECK:       scf.for %[[K:.*]] = %{{.*}} to %[[N]] step
//   CHECK-NOT:         %[[COS]]
//       CHECK:         vector.transfer_read %[[TABLE]][%{{.*}}, %[[K]], %{{.*}}]
//   CHECK-NOT:   %[[COS]]
//   CHECK-NOT:   %[[SIN]]
//       CHECK:   return
func.func @bhsd_cache(%x: tensor<1x32x4096x128xf32>, %o: tensor<1xi64>, %cos: tensor<?x64xf32>, %sin: tensor<?x64xf32>, %init: tensor<1x32x4096x128xf32>) -> tensor<1x32x4096x128xf32> {
  %y = rope.apply ins(%x : tensor<1x32x4096x128xf32>) offset(%o : tensor<1xi64>) cache(%cos, %sin : tensor<?x64xf32>, tensor<?x64xf32>) outs(%init : tensor<1x32x4096x128xf32>) {layout = #rope.layout<interleaved>, token_dims = array<i64: 0, 2>} -> tensor<1x32x4096x128xf32>
  return %y : tensor<1x32x4096x128xf32>
}

// -----

// [B, S, H, D]: one token per iteration, its 32 heads inside.

// CHECK-LABEL: func.func @bshd(
//       CHECK:   scf.forall (%{{.*}}) in (4096)
//       CHECK:     math.cos %{{.*}} : vector<64xf32>
//       CHECK:     math.sin %{{.*}} : vector<64xf32>
//       CHECK:     scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}}) -> (tensor<32x128xf32>) {
//   CHECK-NOT:   math.{{cos|sin}}
//       CHECK:   return
func.func @bshd(%x: tensor<1x4096x32x128xf32>, %p: tensor<1x4096xi64>, %init: tensor<1x4096x32x128xf32>) -> tensor<1x4096x32x128xf32> {
  %y = rope.apply ins(%x : tensor<1x4096x32x128xf32>) positions(%p : tensor<1x4096xi64>) outs(%init : tensor<1x4096x32x128xf32>) -> tensor<1x4096x32x128xf32>
  return %y : tensor<1x4096x32x128xf32>
}

// -----

// vLLM's flat [T, H·D]: rope.apply's head dim is the last dim, so the flat
// tensor is expanded to [T, H, D] around it (no copy once bufferized); then
// as [B, S, H, D].

// CHECK-LABEL: func.func @flat(
//       CHECK:   tensor.expand_shape
//       CHECK:   scf.forall (%{{.*}}) in (4096)
//       CHECK:     math.cos %{{.*}} : vector<64xf32>
//       CHECK:     math.sin %{{.*}} : vector<64xf32>
//       CHECK:     scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}}) -> (tensor<32x128xf32>) {
//   CHECK-NOT:   math.{{cos|sin}}
//       CHECK:   tensor.collapse_shape

// BUF-LABEL: func.func @flat(
//  BUF-SAME:     %[[X:[^:]*]]: memref<4096x4096xf32>, %{{[^:]*}}: i64, %[[Y:[^:]*]]: memref<4096x4096xf32>)
//   BUF-NOT:   memref.alloc
//   BUF-NOT:   memref.copy
//       BUF:   memref.expand_shape %[[X]]
//       BUF:   memref.expand_shape %[[Y]]
//   BUF-NOT:   memref.alloc
//   BUF-NOT:   memref.copy
//       BUF:   return %[[Y]]
func.func @flat(%x: tensor<4096x4096xf32>, %o: i64, %init: tensor<4096x4096xf32>) -> tensor<4096x4096xf32> {
  %xe = tensor.expand_shape %x [[0], [1, 2]] output_shape [4096, 32, 128] : tensor<4096x4096xf32> into tensor<4096x32x128xf32>
  %ie = tensor.expand_shape %init [[0], [1, 2]] output_shape [4096, 32, 128] : tensor<4096x4096xf32> into tensor<4096x32x128xf32>
  %y = rope.apply ins(%xe : tensor<4096x32x128xf32>) offset(%o : i64) outs(%ie : tensor<4096x32x128xf32>) -> tensor<4096x32x128xf32>
  %yc = tensor.collapse_shape %y [[0], [1, 2]] : tensor<4096x32x128xf32> into tensor<4096x4096xf32>
  return %yc : tensor<4096x4096xf32>
}
