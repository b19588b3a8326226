// RUN: rope-opt %s --rope-rotate-keys-in-scores --split-input-file | FileCheck %s
// The same with the sum-of-products register tiles, run for its numbers by
// python/tests/compiler/test_rotate_keys_in_scores.py.

// A decode step's key tile of two KV heads rotated by rope.apply: the step is
// decomposed, the keys' rotation leaves, and the scores rotate the key halves
// by the table of (1, 0) rotated with the same offset and frequencies.
#q = affine_map<(h, g, m, k1, k2, n) -> (h, g, m, k1)>
#k = affine_map<(h, g, m, k1, k2, n) -> (h, k2, k1)>
#v = affine_map<(h, g, m, k1, k2, n) -> (h, k2, n)>
#o = affine_map<(h, g, m, k1, k2, n) -> (m, h, g, n)>
// CHECK-LABEL: func.func @decode_step
//  CHECK-SAME: (%[[Q:[^:]*]]: tensor<2x4x1x8xf32>, %[[K:[^:]*]]: tensor<2x16x8xf32>
//       CHECK:   %[[ONES:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x16x4xf32>)
//       CHECK:   %[[ZEROS:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x16x8xf32>)
//       CHECK:   %[[UNIT:.*]] = tensor.insert_slice %[[ONES]] into %[[ZEROS]][0, 0, 0] [1, 16, 4]
//       CHECK:   %[[T:.*]] = rope.apply ins(%[[UNIT]] : tensor<1x16x8xf32>) offset(%[[OFF:.*]] : i64) outs(%{{.*}} : tensor<1x16x8xf32>) {freqs = #rope.default<base = 5.000000e+05>, token_dims = array<i64: 1>}
//   CHECK-NOT:   rope.apply
//   CHECK-DAG:   %[[COS0:.*]] = tensor.extract_slice %[[T]][0, 0, 0] [1, 16, 4] [1, 1, 1] : tensor<1x16x8xf32> to tensor<1x16x4xf32>
//   CHECK-DAG:   %[[SIN0:.*]] = tensor.extract_slice %[[T]][0, 0, 4] [1, 16, 4] [1, 1, 1] : tensor<1x16x8xf32> to tensor<1x16x4xf32>
//   CHECK-DAG:   %[[COS:.*]] = tensor.collapse_shape %[[COS0]] {{\[\[}}0, 1], [2]] : tensor<1x16x4xf32> into tensor<16x4xf32>
//   CHECK-DAG:   %[[SIN:.*]] = tensor.collapse_shape %[[SIN0]] {{\[\[}}0, 1], [2]] : tensor<1x16x4xf32> into tensor<16x4xf32>
//   CHECK-DAG:   %[[Q0:.*]] = tensor.extract_slice %[[Q]][0, 0, 0, 0] [2, 4, 1, 4]
//   CHECK-DAG:   %[[Q1:.*]] = tensor.extract_slice %[[Q]][0, 0, 0, 4] [2, 4, 1, 4]
//   CHECK-DAG:   %[[K0:.*]] = tensor.extract_slice %[[K]][0, 0, 0] [2, 16, 4]
//   CHECK-DAG:   %[[K1:.*]] = tensor.extract_slice %[[K]][0, 0, 4] [2, 16, 4]
//       CHECK:   linalg.generic {{.*}} ins(%[[Q0]], %[[Q1]], %[[K0]], %[[K1]], %[[COS]], %[[SIN]] :
//       CHECK:   ^bb0(%[[q0:.*]]: f32, %[[q1:.*]]: f32, %[[k0:.*]]: f32, %[[k1:.*]]: f32, %[[c:.*]]: f32, %[[s:.*]]: f32, %[[acc:.*]]: f32):
//       CHECK:     %[[NS:.*]] = arith.negf %[[s]]
//       CHECK:     %[[K0C:.*]] = arith.mulf %[[k0]], %[[c]]
//       CHECK:     %[[Y0:.*]] = math.fma %[[k1]], %[[NS]], %[[K0C]]
//       CHECK:     %[[K1C:.*]] = arith.mulf %[[k1]], %[[c]]
//       CHECK:     %[[Y1:.*]] = math.fma %[[k0]], %[[s]], %[[K1C]]
//       CHECK:     %[[P0:.*]] = arith.mulf %[[q0]], %[[Y0]]
//       CHECK:     %[[S0:.*]] = arith.addf %[[P0]], %[[acc]]
//       CHECK:     %[[P1:.*]] = arith.mulf %[[q1]], %[[Y1]]
//       CHECK:     %[[S1:.*]] = arith.addf %[[P1]], %[[S0]]
//       CHECK:     linalg.yield %[[S1]]
//   CHECK-NOT:   rope.online_attention
func.func @decode_step(%q: tensor<2x4x1x8xf32>, %k: tensor<2x16x8xf32>, %v: tensor<2x16x8xf32>, %mask: tensor<1x16xf32>, %off: i64, %acc: tensor<1x2x4x8xf32>, %max: tensor<1x2x4xf32>, %sum: tensor<1x2x4xf32>) -> tensor<1x2x4x8xf32> {
  %e = tensor.empty() : tensor<2x16x8xf32>
  %kr = rope.apply ins(%k : tensor<2x16x8xf32>) offset(%off : i64) outs(%e : tensor<2x16x8xf32>) {freqs = #rope.default<base = 500000.0>, token_dims = array<i64: 1>} -> tensor<2x16x8xf32>
  %a, %m, %s = rope.online_attention ins(%q, %kr, %v : tensor<2x4x1x8xf32>, tensor<2x16x8xf32>, tensor<2x16x8xf32>) mask(%mask : tensor<1x16xf32>) outs(%acc, %max, %sum : tensor<1x2x4x8xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) attributes {indexing_maps = [#q, #k, #v, affine_map<(h, g, m, k1, k2, n) -> (m, k2)>, #o], query_dim = 2 : i64, scale = 0.35355339059327379 : f64} -> tensor<1x2x4x8xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>
  return %a : tensor<1x2x4x8xf32>
}

// -----

// Inside the key loop: (1, 0) has static sizes, so it is filled once at the
// function's entry, not once per key tile; the table itself is per tile.
#q = affine_map<(h, g, m, k1, k2, n) -> (h, g, m, k1)>
#k = affine_map<(h, g, m, k1, k2, n) -> (h, k2, k1)>
#v = affine_map<(h, g, m, k1, k2, n) -> (h, k2, n)>
#o = affine_map<(h, g, m, k1, k2, n) -> (m, h, g, n)>
// CHECK-LABEL: func.func @key_loop
//       CHECK:   linalg.fill {{.*}} -> tensor<1x16x4xf32>
//       CHECK:   linalg.fill {{.*}} -> tensor<1x16x8xf32>
//       CHECK:   %[[UNIT:.*]] = tensor.insert_slice
//       CHECK:   scf.for
//   CHECK-NOT:     linalg.fill {{.*}} -> tensor<1x16x8xf32>
//       CHECK:     rope.apply ins(%[[UNIT]] : tensor<1x16x8xf32>)
func.func @key_loop(%q: tensor<2x4x1x8xf32>, %k: tensor<2x64x8xf32>, %v: tensor<2x64x8xf32>, %acc: tensor<1x2x4x8xf32>, %max: tensor<1x2x4xf32>, %sum: tensor<1x2x4xf32>) -> tensor<1x2x4x8xf32> {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %r:3 = scf.for %j = %c0 to %c64 step %c16 iter_args(%a0 = %acc, %m0 = %max, %s0 = %sum) -> (tensor<1x2x4x8xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) {
    %kt = tensor.extract_slice %k[0, %j, 0] [2, 16, 8] [1, 1, 1] : tensor<2x64x8xf32> to tensor<2x16x8xf32>
    %vt = tensor.extract_slice %v[0, %j, 0] [2, 16, 8] [1, 1, 1] : tensor<2x64x8xf32> to tensor<2x16x8xf32>
    %off = arith.index_cast %j : index to i64
    %e = tensor.empty() : tensor<2x16x8xf32>
    %kr = rope.apply ins(%kt : tensor<2x16x8xf32>) offset(%off : i64) outs(%e : tensor<2x16x8xf32>) {token_dims = array<i64: 1>} -> tensor<2x16x8xf32>
    %a, %m, %s = rope.online_attention ins(%q, %kr, %vt : tensor<2x4x1x8xf32>, tensor<2x16x8xf32>, tensor<2x16x8xf32>) outs(%a0, %m0, %s0 : tensor<1x2x4x8xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) attributes {indexing_maps = [#q, #k, #v, #o], query_dim = 2 : i64, scale = 0.5 : f64} -> tensor<1x2x4x8xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>
    scf.yield %a, %m, %s : tensor<1x2x4x8xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>
  }
  return %r#0 : tensor<1x2x4x8xf32>
}

// -----

// The runtime checks of `checked` read the rotation's sizes: they read the
// keys' instead (the same), and the rotation still moves into the scores.
#q = affine_map<(h, g, m, k1, k2, n) -> (h, g, m, k1)>
#k = affine_map<(h, g, m, k1, k2, n) -> (h, k2, k1)>
#v = affine_map<(h, g, m, k1, k2, n) -> (h, k2, n)>
#o = affine_map<(h, g, m, k1, k2, n) -> (m, h, g, n)>
// CHECK-LABEL: func.func @sizes_read_by_checks
//  CHECK-SAME: %[[K:[^:]*]]: tensor<2x?x8xf32>
//       CHECK:   %[[N:.*]] = tensor.dim %[[K]], %{{.*}} : tensor<2x?x8xf32>
//       CHECK:   rope.apply ins(%{{.*}} : tensor<1x?x8xf32>)
//   CHECK-NOT:   rope.apply
//       CHECK:   linalg.generic {{.*}} ins({{.*}} : tensor<2x4x1x4xf32>, tensor<2x4x1x4xf32>, tensor<2x?x4xf32>, tensor<2x?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>)
//       CHECK:   return %{{.*}}, %[[N]]
func.func @sizes_read_by_checks(%q: tensor<2x4x1x8xf32>, %k: tensor<2x?x8xf32>, %v: tensor<2x?x8xf32>, %off: i64, %acc: tensor<1x2x4x8xf32>, %max: tensor<1x2x4xf32>, %sum: tensor<1x2x4xf32>) -> (tensor<1x2x4x8xf32>, index) {
  %c1 = arith.constant 1 : index
  %n = tensor.dim %k, %c1 : tensor<2x?x8xf32>
  %e = tensor.empty(%n) : tensor<2x?x8xf32>
  %kr = rope.apply ins(%k : tensor<2x?x8xf32>) offset(%off : i64) outs(%e : tensor<2x?x8xf32>) {token_dims = array<i64: 1>} -> tensor<2x?x8xf32>
  %nr = tensor.dim %kr, %c1 : tensor<2x?x8xf32>
  %a, %m, %s = rope.online_attention ins(%q, %kr, %v : tensor<2x4x1x8xf32>, tensor<2x?x8xf32>, tensor<2x?x8xf32>) outs(%acc, %max, %sum : tensor<1x2x4x8xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) attributes {indexing_maps = [#q, #k, #v, #o], query_dim = 2 : i64, scale = 0.5 : f64} -> tensor<1x2x4x8xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>
  return %a, %nr : tensor<1x2x4x8xf32>, index
}

// -----

// Left alone: interleaved pairs (a channel's partner is not D/2 away), one
// head row per token (the table would be as large as the rotated keys), bf16
// keys, too many queries, and keys whose rotation is also read elsewhere.
#q = affine_map<(h, g, m, k1, k2, n) -> (h, g, m, k1)>
#k = affine_map<(h, g, m, k1, k2, n) -> (h, k2, k1)>
#v = affine_map<(h, g, m, k1, k2, n) -> (h, k2, n)>
#o = affine_map<(h, g, m, k1, k2, n) -> (m, h, g, n)>
// CHECK-LABEL: func.func @interleaved
//       CHECK:   rope.apply ins(%{{.*}} : tensor<2x16x8xf32>)
//       CHECK:   rope.online_attention
func.func @interleaved(%q: tensor<2x4x1x8xf32>, %k: tensor<2x16x8xf32>, %v: tensor<2x16x8xf32>, %off: i64, %acc: tensor<1x2x4x8xf32>, %max: tensor<1x2x4xf32>, %sum: tensor<1x2x4xf32>) -> tensor<1x2x4x8xf32> {
  %e = tensor.empty() : tensor<2x16x8xf32>
  %kr = rope.apply ins(%k : tensor<2x16x8xf32>) offset(%off : i64) outs(%e : tensor<2x16x8xf32>) {layout = #rope.layout<interleaved>, token_dims = array<i64: 1>} -> tensor<2x16x8xf32>
  %a, %m, %s = rope.online_attention ins(%q, %kr, %v : tensor<2x4x1x8xf32>, tensor<2x16x8xf32>, tensor<2x16x8xf32>) outs(%acc, %max, %sum : tensor<1x2x4x8xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) attributes {indexing_maps = [#q, #k, #v, #o], query_dim = 2 : i64, scale = 0.5 : f64} -> tensor<1x2x4x8xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>
  return %a : tensor<1x2x4x8xf32>
}

// CHECK-LABEL: func.func @one_head
//       CHECK:   rope.apply ins(%{{.*}} : tensor<1x16x8xf32>)
//       CHECK:   rope.online_attention
func.func @one_head(%q: tensor<1x4x1x8xf32>, %k: tensor<1x16x8xf32>, %v: tensor<1x16x8xf32>, %off: i64, %acc: tensor<1x1x4x8xf32>, %max: tensor<1x1x4xf32>, %sum: tensor<1x1x4xf32>) -> tensor<1x1x4x8xf32> {
  %e = tensor.empty() : tensor<1x16x8xf32>
  %kr = rope.apply ins(%k : tensor<1x16x8xf32>) offset(%off : i64) outs(%e : tensor<1x16x8xf32>) {token_dims = array<i64: 1>} -> tensor<1x16x8xf32>
  %a, %m, %s = rope.online_attention ins(%q, %kr, %v : tensor<1x4x1x8xf32>, tensor<1x16x8xf32>, tensor<1x16x8xf32>) outs(%acc, %max, %sum : tensor<1x1x4x8xf32>, tensor<1x1x4xf32>, tensor<1x1x4xf32>) attributes {indexing_maps = [#q, #k, #v, #o], query_dim = 2 : i64, scale = 0.5 : f64} -> tensor<1x1x4x8xf32>, tensor<1x1x4xf32>, tensor<1x1x4xf32>
  return %a : tensor<1x1x4x8xf32>
}

// CHECK-LABEL: func.func @bf16_keys
//       CHECK:   rope.apply ins(%{{.*}} : tensor<2x16x8xbf16>)
//       CHECK:   rope.online_attention
func.func @bf16_keys(%q: tensor<2x4x1x8xbf16>, %k: tensor<2x16x8xbf16>, %v: tensor<2x16x8xbf16>, %off: i64, %acc: tensor<1x2x4x8xf32>, %max: tensor<1x2x4xf32>, %sum: tensor<1x2x4xf32>) -> tensor<1x2x4x8xf32> {
  %e = tensor.empty() : tensor<2x16x8xbf16>
  %kr = rope.apply ins(%k : tensor<2x16x8xbf16>) offset(%off : i64) outs(%e : tensor<2x16x8xbf16>) {token_dims = array<i64: 1>} -> tensor<2x16x8xbf16>
  %a, %m, %s = rope.online_attention ins(%q, %kr, %v : tensor<2x4x1x8xbf16>, tensor<2x16x8xbf16>, tensor<2x16x8xbf16>) outs(%acc, %max, %sum : tensor<1x2x4x8xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) attributes {indexing_maps = [#q, #k, #v, #o], query_dim = 2 : i64, scale = 0.5 : f64} -> tensor<1x2x4x8xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>
  return %a : tensor<1x2x4x8xf32>
}

// More than 16 query rows per key (4 heads × 8 tokens): each register row
// tile would rotate the keys again; the step is decomposed, the keys stay
// rotated by rope.apply.
// CHECK-LABEL: func.func @many_queries
//       CHECK:   %[[KR:.*]] = rope.apply ins(%{{.*}} : tensor<2x16x8xf32>)
//       CHECK:   linalg.generic {{.*}} ins(%{{.*}}, %[[KR]] : tensor<2x4x8x8xf32>, tensor<2x16x8xf32>)
func.func @many_queries(%q: tensor<2x4x8x8xf32>, %k: tensor<2x16x8xf32>, %v: tensor<2x16x8xf32>, %off: i64, %acc: tensor<8x2x4x8xf32>, %max: tensor<8x2x4xf32>, %sum: tensor<8x2x4xf32>) -> tensor<8x2x4x8xf32> {
  %e = tensor.empty() : tensor<2x16x8xf32>
  %kr = rope.apply ins(%k : tensor<2x16x8xf32>) offset(%off : i64) outs(%e : tensor<2x16x8xf32>) {token_dims = array<i64: 1>} -> tensor<2x16x8xf32>
  %a, %m, %s = rope.online_attention ins(%q, %kr, %v : tensor<2x4x8x8xf32>, tensor<2x16x8xf32>, tensor<2x16x8xf32>) outs(%acc, %max, %sum : tensor<8x2x4x8xf32>, tensor<8x2x4xf32>, tensor<8x2x4xf32>) attributes {indexing_maps = [#q, #k, #v, #o], query_dim = 2 : i64, scale = 0.5 : f64} -> tensor<8x2x4x8xf32>, tensor<8x2x4xf32>, tensor<8x2x4xf32>
  return %a : tensor<8x2x4x8xf32>
}

// CHECK-LABEL: func.func @rotation_read_twice
//       CHECK:   %[[KR:.*]] = rope.apply ins(%{{.*}} : tensor<2x16x8xf32>)
//       CHECK:   rope.online_attention ins(%{{.*}}, %[[KR]], %{{.*}} :
func.func @rotation_read_twice(%q: tensor<2x4x1x8xf32>, %k: tensor<2x16x8xf32>, %v: tensor<2x16x8xf32>, %off: i64, %acc: tensor<1x2x4x8xf32>, %max: tensor<1x2x4xf32>, %sum: tensor<1x2x4xf32>) -> (tensor<1x2x4x8xf32>, tensor<2x16x8xf32>) {
  %e = tensor.empty() : tensor<2x16x8xf32>
  %kr = rope.apply ins(%k : tensor<2x16x8xf32>) offset(%off : i64) outs(%e : tensor<2x16x8xf32>) {token_dims = array<i64: 1>} -> tensor<2x16x8xf32>
  %a, %m, %s = rope.online_attention ins(%q, %kr, %v : tensor<2x4x1x8xf32>, tensor<2x16x8xf32>, tensor<2x16x8xf32>) outs(%acc, %max, %sum : tensor<1x2x4x8xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) attributes {indexing_maps = [#q, #k, #v, #o], query_dim = 2 : i64, scale = 0.5 : f64} -> tensor<1x2x4x8xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>
  return %a, %kr : tensor<1x2x4x8xf32>, tensor<2x16x8xf32>
}
