// RUN: rope-opt --rope-raise=remarks=true --split-input-file %s 2>&1 | FileCheck %s

// Hand-written spellings of one rotation (T = 8 tokens, D = 8 channels):
// named ops, operands in either order, the sign on either term, an inv_freq
// table that is exactly the f32 rounding of 10000^(-2i/8) (-> #rope.default),
// implicit positions from an arange constant, dynamic token dims.

#tok = affine_map<(d0, d1) -> (d0)>
#ch = affine_map<(d0, d1) -> (d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @named_ops_default_base(
// CHECK-SAME: %[[X:.*]]: tensor<8x8xf32>, %[[P:.*]]: tensor<8xi64>
// CHECK: %[[R:.*]] = rope.apply ins(%[[X]] : tensor<8x8xf32>) positions(%[[P]] : tensor<8xi64>) outs(%{{.*}} : tensor<8x8xf32>) {freqs = #rope.default<>} -> tensor<8x8xf32>
// CHECK-NEXT: return %[[R]]
func.func @named_ops_default_base(%x: tensor<8x8xf32>, %p: tensor<8xi64>) -> tensor<8x8xf32> {
  %inv = arith.constant dense<[1.0, 0.1, 0.01, 0.001]> : tensor<4xf32>
  %e4 = tensor.empty() : tensor<8x4xf32>
  %ang = linalg.generic {indexing_maps = [#tok, #ch, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %inv : tensor<8xi64>, tensor<4xf32>) outs(%e4 : tensor<8x4xf32>) {
  ^bb0(%pi: i64, %f: f32, %o: f32):
    %pf = arith.sitofp %pi : i64 to f32
    %a = arith.mulf %pf, %f : f32
    linalg.yield %a : f32
  } -> tensor<8x4xf32>
  %emb = tensor.concat dim(1) %ang, %ang : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x8xf32>
  %e8 = tensor.empty() : tensor<8x8xf32>
  %cos = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%emb : tensor<8x8xf32>) outs(%e8 : tensor<8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = math.cos %a : f32
    linalg.yield %c : f32
  } -> tensor<8x8xf32>
  %sin = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%emb : tensor<8x8xf32>) outs(%e8 : tensor<8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = math.sin %a : f32
    linalg.yield %s : f32
  } -> tensor<8x8xf32>
  %x1 = tensor.extract_slice %x[0, 0] [8, 4] [1, 1] : tensor<8x8xf32> to tensor<8x4xf32>
  %x2 = tensor.extract_slice %x[0, 4] [8, 4] [1, 1] : tensor<8x8xf32> to tensor<8x4xf32>
  %n = linalg.negf ins(%x2 : tensor<8x4xf32>) outs(%e4 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %rot = tensor.concat dim(1) %n, %x1 : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x8xf32>
  // Operands in the other order: sin * rot + cos * x.
  %rs = linalg.mul ins(%sin, %rot : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e8 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %xc = linalg.mul ins(%cos, %x : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e8 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %y = linalg.add ins(%rs, %xc : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e8 : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

#tok = affine_map<(d0, d1) -> (d0)>
#ch = affine_map<(d0, d1) -> (d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>

// The sign on the other term: x*cos - cat(x2, -x1)*sin; positions an arange
// constant (implicit); one table entry off by one f32 ulp -> #rope.table.
// CHECK-LABEL: func.func @sign_on_other_term_implicit(
// CHECK: rope.apply ins(%arg0 : tensor<8x8xf32>) outs(%{{.*}} : tensor<8x8xf32>) {freqs = #rope.table<inv_freq = [1.000000e+00, 0.10000000894069672, 0.0099999997764825821, 0.0010000000474974513]>}
// CHECK-NOT: math.
func.func @sign_on_other_term_implicit(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %p = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7]> : tensor<8xi64>
  %inv = arith.constant dense<[1.0, 0.100000009, 0.01, 0.001]> : tensor<4xf32>
  %e4 = tensor.empty() : tensor<8x4xf32>
  %ang = linalg.generic {indexing_maps = [#tok, #ch, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %inv : tensor<8xi64>, tensor<4xf32>) outs(%e4 : tensor<8x4xf32>) {
  ^bb0(%pi: i64, %f: f32, %o: f32):
    %pf = arith.sitofp %pi : i64 to f32
    %a = arith.mulf %pf, %f : f32
    linalg.yield %a : f32
  } -> tensor<8x4xf32>
  %emb = tensor.concat dim(1) %ang, %ang : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x8xf32>
  %e8 = tensor.empty() : tensor<8x8xf32>
  %cos = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%emb : tensor<8x8xf32>) outs(%e8 : tensor<8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = math.cos %a : f32
    linalg.yield %c : f32
  } -> tensor<8x8xf32>
  %sin = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%emb : tensor<8x8xf32>) outs(%e8 : tensor<8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = math.sin %a : f32
    linalg.yield %s : f32
  } -> tensor<8x8xf32>
  %x1 = tensor.extract_slice %x[0, 0] [8, 4] [1, 1] : tensor<8x8xf32> to tensor<8x4xf32>
  %x2 = tensor.extract_slice %x[0, 4] [8, 4] [1, 1] : tensor<8x8xf32> to tensor<8x4xf32>
  %n = linalg.negf ins(%x1 : tensor<8x4xf32>) outs(%e4 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %rot = tensor.concat dim(1) %x2, %n : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x8xf32>
  %xc = linalg.mul ins(%x, %cos : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e8 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %rs = linalg.mul ins(%rot, %sin : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e8 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %y = linalg.sub ins(%xc, %rs : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e8 : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

// Dynamic batch and sequence ([B, S, H, D] with B, S dynamic, as torch-mlir
// exports with dynamic shapes): slices of the channel dim keep the dynamic
// sizes as tensor.dim values.
#p3 = affine_map<(d0, d1, d2) -> (d0, d1)>
#f3 = affine_map<(d0, d1, d2) -> (d2)>
#i3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#i4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#b4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>

// CHECK-LABEL: func.func @dynamic_tokens(
// CHECK-SAME: %[[X:.*]]: tensor<?x?x2x8xf32>, %[[P:.*]]: tensor<?x?xi64>
// CHECK: rope.apply ins(%[[X]] : tensor<?x?x2x8xf32>) positions(%[[P]] : tensor<?x?xi64>) outs(%{{.*}} : tensor<?x?x2x8xf32>) {freqs = #rope.default<>}
func.func @dynamic_tokens(%x: tensor<?x?x2x8xf32>, %p: tensor<?x?xi64>) -> tensor<?x?x2x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %x, %c0 : tensor<?x?x2x8xf32>
  %s = tensor.dim %x, %c1 : tensor<?x?x2x8xf32>
  %inv = arith.constant dense<[1.0, 0.1, 0.01, 0.001]> : tensor<4xf32>
  %e3 = tensor.empty(%b, %s) : tensor<?x?x4xf32>
  %ang = linalg.generic {indexing_maps = [#p3, #f3, #i3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%p, %inv : tensor<?x?xi64>, tensor<4xf32>) outs(%e3 : tensor<?x?x4xf32>) {
  ^bb0(%pi: i64, %f: f32, %o: f32):
    %pf = arith.sitofp %pi : i64 to f32
    %a = arith.mulf %pf, %f : f32
    linalg.yield %a : f32
  } -> tensor<?x?x4xf32>
  %emb = tensor.concat dim(2) %ang, %ang : (tensor<?x?x4xf32>, tensor<?x?x4xf32>) -> tensor<?x?x8xf32>
  %e8 = tensor.empty(%b, %s) : tensor<?x?x8xf32>
  %cos = linalg.generic {indexing_maps = [#i3, #i3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%emb : tensor<?x?x8xf32>) outs(%e8 : tensor<?x?x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c = math.cos %a : f32
    linalg.yield %c : f32
  } -> tensor<?x?x8xf32>
  %sin = linalg.generic {indexing_maps = [#i3, #i3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%emb : tensor<?x?x8xf32>) outs(%e8 : tensor<?x?x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %sv = math.sin %a : f32
    linalg.yield %sv : f32
  } -> tensor<?x?x8xf32>
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [%b, %s, 2, 4] [1, 1, 1, 1] : tensor<?x?x2x8xf32> to tensor<?x?x2x4xf32>
  %x2 = tensor.extract_slice %x[0, 0, 0, 4] [%b, %s, 2, 4] [1, 1, 1, 1] : tensor<?x?x2x8xf32> to tensor<?x?x2x4xf32>
  %e4 = tensor.empty(%b, %s) : tensor<?x?x2x4xf32>
  %n = linalg.negf ins(%x2 : tensor<?x?x2x4xf32>) outs(%e4 : tensor<?x?x2x4xf32>) -> tensor<?x?x2x4xf32>
  %rot = tensor.concat dim(3) %n, %x1 : (tensor<?x?x2x4xf32>, tensor<?x?x2x4xf32>) -> tensor<?x?x2x8xf32>
  %ey = tensor.empty(%b, %s) : tensor<?x?x2x8xf32>
  %y = linalg.generic {indexing_maps = [#i4, #b4, #i4, #b4, #i4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %cos, %rot, %sin : tensor<?x?x2x8xf32>, tensor<?x?x8xf32>, tensor<?x?x2x8xf32>, tensor<?x?x8xf32>) outs(%ey : tensor<?x?x2x8xf32>) {
  ^bb0(%xv: f32, %cv: f32, %rv: f32, %sv: f32, %o: f32):
    %a = arith.mulf %xv, %cv : f32
    %b2 = arith.mulf %rv, %sv : f32
    %r = arith.addf %a, %b2 : f32
    linalg.yield %r : f32
  } -> tensor<?x?x2x8xf32>
  return %y : tensor<?x?x2x8xf32>
}
