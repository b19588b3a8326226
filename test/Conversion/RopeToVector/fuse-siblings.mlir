// RUN: rope-opt %s --convert-rope-to-vector=tile-tokens=32 --canonicalize --cse -split-input-file | FileCheck %s --enable-var-scope

// Sibling fusion (issue 18): rope.apply ops on the same positions, offset,
// caches and attributes whose token dims have equal sizes (Q with Hq heads,
// K with Hkv) become one token loop that computes cos/sin once per token and
// rotates the heads of each, each into its own shared output.

// CHECK-LABEL: func.func @qk_positions(
//  CHECK-SAME:     %[[Q:[^:]*]]: tensor<2x16x32x128xf32>, %[[K:[^:]*]]: tensor<2x16x8x128xf32>, %[[P:[^:]*]]: tensor<2x16xi64>, %[[QI:[^:]*]]: tensor<2x16x32x128xf32>, %[[KI:[^:]*]]: tensor<2x16x8x128xf32>)
//       CHECK:   %[[R:.*]]:2 = scf.forall (%[[B:.*]], %[[S:.*]]) in (2, 16) shared_outs(%[[QO:.*]] = %[[QI]], %[[KO:.*]] = %[[KI]]) -> (tensor<2x16x32x128xf32>, tensor<2x16x8x128xf32>) {
//       CHECK:     tensor.extract %[[P]][%[[B]], %[[S]]]
//       CHECK:     %[[C:.*]] = math.cos %{{.*}} : vector<64xf32>
//       CHECK:     %[[SN:.*]] = math.sin %{{.*}} : vector<64xf32>
//   CHECK-NOT:     math.{{cos|sin}}
//       CHECK:     %[[QD:.*]] = tensor.extract_slice %[[QO]][%[[B]], %[[S]], 0, 0] [1, 1, 32, 128]
//       CHECK:     %[[QS:.*]] = tensor.extract_slice %[[Q]][%[[B]], %[[S]], 0, 0] [1, 1, 32, 128]
//       CHECK:     %[[QR:.*]] = scf.for %[[H:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[QD]]) -> (tensor<32x128xf32>) {
//   CHECK-NOT:       math.{{cos|sin}}
//       CHECK:       vector.transfer_read %[[QS]][%[[H]], %{{.*}}]
//       CHECK:       scf.yield
//       CHECK:     %[[KD:.*]] = tensor.extract_slice %[[KO]][%[[B]], %[[S]], 0, 0] [1, 1, 8, 128]
//       CHECK:     %[[KS:.*]] = tensor.extract_slice %[[K]][%[[B]], %[[S]], 0, 0] [1, 1, 8, 128]
//       CHECK:     %[[KR:.*]] = scf.for %[[H2:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[KD]]) -> (tensor<8x128xf32>) {
//   CHECK-NOT:       math.{{cos|sin}}
//       CHECK:       vector.transfer_read %[[KS]][%[[H2]], %{{.*}}]
//       CHECK:       scf.yield
//       CHECK:     scf.forall.in_parallel {
//       CHECK:       tensor.parallel_insert_slice %[[QR]] into %[[QO]][%[[B]], %[[S]], 0, 0] [1, 1, 32, 128]
//       CHECK:       tensor.parallel_insert_slice %[[KR]] into %[[KO]][%[[B]], %[[S]], 0, 0] [1, 1, 8, 128]
//   CHECK-NOT:   scf.forall (
//   CHECK-NOT:   math.{{cos|sin}}
//       CHECK:   return %[[R]]#0, %[[R]]#1
func.func @qk_positions(%q: tensor<2x16x32x128xf32>, %k: tensor<2x16x8x128xf32>, %p: tensor<2x16xi64>, %qi: tensor<2x16x32x128xf32>, %ki: tensor<2x16x8x128xf32>) -> (tensor<2x16x32x128xf32>, tensor<2x16x8x128xf32>) {
  %yq = rope.apply ins(%q : tensor<2x16x32x128xf32>) positions(%p : tensor<2x16xi64>) outs(%qi : tensor<2x16x32x128xf32>) {freqs = #rope.default<base = 500000.0>} -> tensor<2x16x32x128xf32>
  %yk = rope.apply ins(%k : tensor<2x16x8x128xf32>) positions(%p : tensor<2x16xi64>) outs(%ki : tensor<2x16x8x128xf32>) {freqs = #rope.default<base = 500000.0>} -> tensor<2x16x8x128xf32>
  return %yq, %yk : tensor<2x16x32x128xf32>, tensor<2x16x8x128xf32>
}

// -----

// Interleaved pairs, a gathered cos/sin cache at a per-row offset, in place,
// with an unrelated op between the siblings: the cache row is read once per
// token.

// CHECK-LABEL: func.func @qk_cache_in_place(
//  CHECK-SAME:     %[[Q:[^:]*]]: tensor<4x1x32x64xbf16>, %[[K:[^:]*]]: tensor<4x1x8x64xbf16>, %{{[^:]*}}: tensor<4xi64>, %[[COS:[^:]*]]: tensor<?x32xf32>, %[[SIN:[^:]*]]: tensor<?x32xf32>
//       CHECK:   scf.forall (%{{.*}}) in (4) shared_outs(%{{.*}} = %[[Q]], %{{.*}} = %[[K]]) -> (tensor<4x1x32x64xbf16>, tensor<4x1x8x64xbf16>) {
//       CHECK:     vector.transfer_read %[[COS]]
//       CHECK:     vector.transfer_read %[[SIN]]
//   CHECK-NOT:     %[[COS]]
//       CHECK:     scf.for {{.*}} -> (tensor<32x64xbf16>)
//       CHECK:     scf.for {{.*}} -> (tensor<8x64xbf16>)
//   CHECK-NOT:   scf.forall (
//       CHECK:   return
func.func @qk_cache_in_place(%q: tensor<4x1x32x64xbf16>, %k: tensor<4x1x8x64xbf16>, %o: tensor<4xi64>, %cos: tensor<?x32xf32>, %sin: tensor<?x32xf32>) -> (tensor<4x1x32x64xbf16>, tensor<4x1x8x64xbf16>, tensor<4xi64>) {
  %yq = rope.apply ins(%q : tensor<4x1x32x64xbf16>) offset(%o : tensor<4xi64>) cache(%cos, %sin : tensor<?x32xf32>, tensor<?x32xf32>) outs(%q : tensor<4x1x32x64xbf16>) {layout = #rope.layout<interleaved>} -> tensor<4x1x32x64xbf16>
  %o2 = arith.addi %o, %o : tensor<4xi64>
  %yk = rope.apply ins(%k : tensor<4x1x8x64xbf16>) offset(%o : tensor<4xi64>) cache(%cos, %sin : tensor<?x32xf32>, tensor<?x32xf32>) outs(%k : tensor<4x1x8x64xbf16>) {layout = #rope.layout<interleaved>} -> tensor<4x1x8x64xbf16>
  return %yq, %yk, %o2 : tensor<4x1x32x64xbf16>, tensor<4x1x8x64xbf16>, tensor<4xi64>
}

// -----

// Dynamic token sizes (what rope_mlir.apply_qk compiles): equal only at run
// time, so an scf.if compares them; the fused loop when they are equal, each
// op alone otherwise. Dynamic head counts: the whole group is skipped when
// neither op has a head (EmptyGuard.h), the destinations returned as they are.

// CHECK-LABEL: func.func @qk_dynamic(
//  CHECK-SAME:     %[[Q:[^:]*]]: tensor<?x?x?x128xf32>, %[[K:[^:]*]]: tensor<?x?x?x128xf32>, %{{[^:]*}}: i64, %[[QI:[^:]*]]: tensor<?x?x?x128xf32>, %[[KI:[^:]*]]: tensor<?x?x?x128xf32>
//       CHECK:   %[[QH:.*]] = tensor.dim %[[Q]], %c2
//       CHECK:   %[[QW:.*]] = arith.cmpi ne, %[[QH]], %c0
//       CHECK:   %[[KH:.*]] = tensor.dim %[[K]], %c2
//       CHECK:   %[[KW:.*]] = arith.cmpi ne, %[[KH]], %c0
//       CHECK:   %[[WORK:.*]] = arith.ori %[[QW]], %[[KW]]
//       CHECK:   %[[G:.*]]:2 = scf.if %[[WORK]]
//   CHECK-DAG:   %[[QB:.*]] = tensor.dim %[[Q]], %c0
//   CHECK-DAG:   %[[KB:.*]] = tensor.dim %[[K]], %c0
//   CHECK-DAG:   %[[QS:.*]] = tensor.dim %[[Q]], %c1
//   CHECK-DAG:   %[[KS:.*]] = tensor.dim %[[K]], %c1
//   CHECK-DAG:   %[[EB:.*]] = arith.cmpi eq, %[[QB]], %[[KB]]
//   CHECK-DAG:   %[[ES:.*]] = arith.cmpi eq, %[[QS]], %[[KS]]
//       CHECK:   %[[EQ:.*]] = arith.andi
//       CHECK:   %[[R:.*]]:2 = scf.if %[[EQ]] -> (tensor<?x?x?x128xf32>, tensor<?x?x?x128xf32>) {
//       CHECK:     scf.forall {{.*}} shared_outs(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<?x?x?x128xf32>, tensor<?x?x?x128xf32>)
//   CHECK-NOT:     scf.forall (
//       CHECK:   } else {
//       CHECK:     scf.forall {{.*}} shared_outs(%{{.*}} = %{{.*}}) -> (tensor<?x?x?x128xf32>)
//       CHECK:     scf.forall {{.*}} shared_outs(%{{.*}} = %{{.*}}) -> (tensor<?x?x?x128xf32>)
//       CHECK:     scf.yield %[[R]]#0, %[[R]]#1
//       CHECK:   } else {
//       CHECK:     scf.yield %[[QI]], %[[KI]]
//       CHECK:   return %[[G]]#0, %[[G]]#1
func.func @qk_dynamic(%q: tensor<?x?x?x128xf32>, %k: tensor<?x?x?x128xf32>, %o: i64, %qi: tensor<?x?x?x128xf32>, %ki: tensor<?x?x?x128xf32>) -> (tensor<?x?x?x128xf32>, tensor<?x?x?x128xf32>) {
  %yq = rope.apply ins(%q : tensor<?x?x?x128xf32>) offset(%o : i64) outs(%qi : tensor<?x?x?x128xf32>) -> tensor<?x?x?x128xf32>
  %yk = rope.apply ins(%k : tensor<?x?x?x128xf32>) offset(%o : i64) outs(%ki : tensor<?x?x?x128xf32>) -> tensor<?x?x?x128xf32>
  return %yq, %yk : tensor<?x?x?x128xf32>, tensor<?x?x?x128xf32>
}

// -----

// Not siblings: each op keeps its own token loop (two scf.forall, cos/sin in
// each). Different positions.

// CHECK-LABEL: func.func @different_positions(
//       CHECK:   scf.forall {{.*}} -> (tensor<2x16x32x128xf32>)
//       CHECK:   scf.forall {{.*}} -> (tensor<2x16x8x128xf32>)
func.func @different_positions(%q: tensor<2x16x32x128xf32>, %k: tensor<2x16x8x128xf32>, %p: tensor<2x16xi64>, %p2: tensor<2x16xi64>, %qi: tensor<2x16x32x128xf32>, %ki: tensor<2x16x8x128xf32>) -> (tensor<2x16x32x128xf32>, tensor<2x16x8x128xf32>) {
  %yq = rope.apply ins(%q : tensor<2x16x32x128xf32>) positions(%p : tensor<2x16xi64>) outs(%qi : tensor<2x16x32x128xf32>) -> tensor<2x16x32x128xf32>
  %yk = rope.apply ins(%k : tensor<2x16x8x128xf32>) positions(%p2 : tensor<2x16xi64>) outs(%ki : tensor<2x16x8x128xf32>) -> tensor<2x16x8x128xf32>
  return %yq, %yk : tensor<2x16x32x128xf32>, tensor<2x16x8x128xf32>
}

// -----

// Different frequencies.

// CHECK-LABEL: func.func @different_freqs(
//       CHECK:   scf.forall {{.*}} -> (tensor<2x16x32x128xf32>)
//       CHECK:   scf.forall {{.*}} -> (tensor<2x16x8x128xf32>)
func.func @different_freqs(%q: tensor<2x16x32x128xf32>, %k: tensor<2x16x8x128xf32>, %p: tensor<2x16xi64>, %qi: tensor<2x16x32x128xf32>, %ki: tensor<2x16x8x128xf32>) -> (tensor<2x16x32x128xf32>, tensor<2x16x8x128xf32>) {
  %yq = rope.apply ins(%q : tensor<2x16x32x128xf32>) positions(%p : tensor<2x16xi64>) outs(%qi : tensor<2x16x32x128xf32>) {freqs = #rope.default<base = 500000.0>} -> tensor<2x16x32x128xf32>
  %yk = rope.apply ins(%k : tensor<2x16x8x128xf32>) positions(%p : tensor<2x16xi64>) outs(%ki : tensor<2x16x8x128xf32>) -> tensor<2x16x8x128xf32>
  return %yq, %yk : tensor<2x16x32x128xf32>, tensor<2x16x8x128xf32>
}

// -----

// Different (static) token sizes, with an implicit position (the index).

// CHECK-LABEL: func.func @different_token_sizes(
//       CHECK:   scf.forall {{.*}} -> (tensor<2x16x32x128xf32>)
//       CHECK:   scf.forall {{.*}} -> (tensor<2x8x8x128xf32>)
func.func @different_token_sizes(%q: tensor<2x16x32x128xf32>, %k: tensor<2x8x8x128xf32>, %qi: tensor<2x16x32x128xf32>, %ki: tensor<2x8x8x128xf32>) -> (tensor<2x16x32x128xf32>, tensor<2x8x8x128xf32>) {
  %yq = rope.apply ins(%q : tensor<2x16x32x128xf32>) outs(%qi : tensor<2x16x32x128xf32>) -> tensor<2x16x32x128xf32>
  %yk = rope.apply ins(%k : tensor<2x8x8x128xf32>) outs(%ki : tensor<2x8x8x128xf32>) -> tensor<2x8x8x128xf32>
  return %yq, %yk : tensor<2x16x32x128xf32>, tensor<2x8x8x128xf32>
}

// -----

// Different layouts.

// CHECK-LABEL: func.func @different_layout(
//       CHECK:   scf.forall {{.*}} -> (tensor<2x16x32x128xf32>)
//       CHECK:   scf.forall {{.*}} -> (tensor<2x16x8x128xf32>)
func.func @different_layout(%q: tensor<2x16x32x128xf32>, %k: tensor<2x16x8x128xf32>, %p: tensor<2x16xi64>, %qi: tensor<2x16x32x128xf32>, %ki: tensor<2x16x8x128xf32>) -> (tensor<2x16x32x128xf32>, tensor<2x16x8x128xf32>) {
  %yq = rope.apply ins(%q : tensor<2x16x32x128xf32>) positions(%p : tensor<2x16xi64>) outs(%qi : tensor<2x16x32x128xf32>) -> tensor<2x16x32x128xf32>
  %yk = rope.apply ins(%k : tensor<2x16x8x128xf32>) positions(%p : tensor<2x16xi64>) outs(%ki : tensor<2x16x8x128xf32>) {layout = #rope.layout<interleaved>} -> tensor<2x16x8x128xf32>
  return %yq, %yk : tensor<2x16x32x128xf32>, tensor<2x16x8x128xf32>
}

// -----

// Different head dims D (128 and 64).

// CHECK-LABEL: func.func @different_head_dim(
//       CHECK:   scf.forall {{.*}} -> (tensor<2x16x32x128xf32>)
//       CHECK:   scf.forall {{.*}} -> (tensor<2x16x8x64xf32>)
func.func @different_head_dim(%q: tensor<2x16x32x128xf32>, %k: tensor<2x16x8x64xf32>, %p: tensor<2x16xi64>, %qi: tensor<2x16x32x128xf32>, %ki: tensor<2x16x8x64xf32>) -> (tensor<2x16x32x128xf32>, tensor<2x16x8x64xf32>) {
  %yq = rope.apply ins(%q : tensor<2x16x32x128xf32>) positions(%p : tensor<2x16xi64>) outs(%qi : tensor<2x16x32x128xf32>) {rotary_dim = 64 : i64} -> tensor<2x16x32x128xf32>
  %yk = rope.apply ins(%k : tensor<2x16x8x64xf32>) positions(%p : tensor<2x16xi64>) outs(%ki : tensor<2x16x8x64xf32>) {rotary_dim = 64 : i64} -> tensor<2x16x8x64xf32>
  return %yq, %yk : tensor<2x16x32x128xf32>, tensor<2x16x8x64xf32>
}

// -----

// K's input is computed after Q's rope.apply: the fused loop, at Q's place,
// could not read it.

// CHECK-LABEL: func.func @operand_after_first(
//       CHECK:   scf.forall {{.*}} -> (tensor<2x16x32x128xf32>)
//       CHECK:   arith.negf
//       CHECK:   scf.forall {{.*}} -> (tensor<2x16x8x128xf32>)
func.func @operand_after_first(%q: tensor<2x16x32x128xf32>, %k: tensor<2x16x8x128xf32>, %p: tensor<2x16xi64>, %qi: tensor<2x16x32x128xf32>, %ki: tensor<2x16x8x128xf32>) -> (tensor<2x16x32x128xf32>, tensor<2x16x8x128xf32>) {
  %yq = rope.apply ins(%q : tensor<2x16x32x128xf32>) positions(%p : tensor<2x16xi64>) outs(%qi : tensor<2x16x32x128xf32>) -> tensor<2x16x32x128xf32>
  %kn = arith.negf %k : tensor<2x16x8x128xf32>
  %yk = rope.apply ins(%kn : tensor<2x16x8x128xf32>) positions(%p : tensor<2x16xi64>) outs(%ki : tensor<2x16x8x128xf32>) -> tensor<2x16x8x128xf32>
  return %yq, %yk : tensor<2x16x32x128xf32>, tensor<2x16x8x128xf32>
}

// -----

// Heads before the sequence ([B, H, S, D]) take the tiled form: one cos/sin
// table per tile of tokens for both, then the heads loops of each (Q's 32
// heads and K's 8, two at a time) over the tile's tokens.

// CHECK-LABEL: func.func @bhsd_tiled(
//  CHECK-SAME:     %[[Q:[^:]*]]: tensor<1x32x64x128xf32>, %[[K:[^:]*]]: tensor<1x8x64x128xf32>, %{{[^:]*}}: tensor<1x64xi64>, %[[QI:[^:]*]]: tensor<1x32x64x128xf32>, %[[KI:[^:]*]]: tensor<1x8x64x128xf32>)
//       CHECK:   %[[R:.*]]:2 = scf.forall (%[[S0:.*]]) = (0) to (64) step (32) shared_outs(%[[QO:.*]] = %[[QI]], %[[KO:.*]] = %[[KI]]) -> (tensor<1x32x64x128xf32>, tensor<1x8x64x128xf32>) {
//       CHECK:     %[[TABLE:.*]] = scf.for {{.*}} -> (tensor<2x32x64xf32>) {
//       CHECK:       math.cos %{{.*}} : vector<64xf32>
//       CHECK:       math.sin %{{.*}} : vector<64xf32>
//       CHECK:       scf.yield
//   CHECK-NOT:     math.{{cos|sin}}
//       CHECK:     %[[QS:.*]] = tensor.extract_slice %[[Q]][0, 0, %[[S0]], 0] [1, 32, %{{.*}}, 128]
//       CHECK:     %[[QR:.*]] = scf.for {{.*}} -> (tensor<1x32x?x128xf32>) {
//       CHECK:       vector.transfer_read %[[QS]]
//       CHECK:       vector.transfer_read %[[TABLE]]
//       CHECK:     %[[KS:.*]] = tensor.extract_slice %[[K]][0, 0, %[[S0]], 0] [1, 8, %{{.*}}, 128]
//       CHECK:     %[[KR:.*]] = scf.for {{.*}} -> (tensor<1x8x?x128xf32>) {
//       CHECK:       vector.transfer_read %[[KS]]
//       CHECK:       vector.transfer_read %[[TABLE]]
//       CHECK:     scf.forall.in_parallel {
//       CHECK:       tensor.parallel_insert_slice %[[QR]] into %[[QO]]
//       CHECK:       tensor.parallel_insert_slice %[[KR]] into %[[KO]]
//   CHECK-NOT:   scf.forall (
//   CHECK-NOT:   math.{{cos|sin}}
//       CHECK:   return %[[R]]#0, %[[R]]#1
func.func @bhsd_tiled(%q: tensor<1x32x64x128xf32>, %k: tensor<1x8x64x128xf32>, %p: tensor<1x64xi64>, %qi: tensor<1x32x64x128xf32>, %ki: tensor<1x8x64x128xf32>) -> (tensor<1x32x64x128xf32>, tensor<1x8x64x128xf32>) {
  %yq = rope.apply ins(%q : tensor<1x32x64x128xf32>) positions(%p : tensor<1x64xi64>) outs(%qi : tensor<1x32x64x128xf32>) {token_dims = array<i64: 0, 2>} -> tensor<1x32x64x128xf32>
  %yk = rope.apply ins(%k : tensor<1x8x64x128xf32>) positions(%p : tensor<1x64xi64>) outs(%ki : tensor<1x8x64x128xf32>) {token_dims = array<i64: 0, 2>} -> tensor<1x8x64x128xf32>
  return %yq, %yk : tensor<1x32x64x128xf32>, tensor<1x8x64x128xf32>
}
