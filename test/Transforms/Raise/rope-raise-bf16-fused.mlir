// RUN: rope-opt --rope-raise --split-input-file %s | FileCheck %s
// The same after linalg-fold-unit-extent-dims and fusion (which moves V's
// truncf and extf into P·V itself):
// RUN: rope-opt --split-input-file --linalg-fold-unit-extent-dims --linalg-fuse-elementwise-ops %s \
// RUN:   | rope-opt --split-input-file --rope-raise | FileCheck %s --check-prefix=FOLD

// A bf16 model after linalg-fuse-elementwise-ops (torch-mlir's export of HF
// Llama in torch.bfloat16; the zoo's llama_bf16 and llama_eager_bf16 under
// the metamorphic rewrites fuse, gen-fuse, ...): the fused spelling raises
// to the rope ops the unfused one gives, with the model's element types.

// The K rotation fused with repeat_kv's broadcast, K the bf16 truncation of
// an f32 projection (fusion propagated the reshape that stopped the element
// algebra at K above the truncf): the algebra reads K through the truncf
// into the f32 projection; the rotated tensor is the bf16 K, as the model
// had it, not the f32 projection.
// CHECK-LABEL: func.func @k_rotation_through_truncf_broadcast(
// CHECK: %[[K:.*]] = linalg.generic
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: %[[R:.*]] = rope.apply ins(%[[K]] : tensor<1x2x4x8xbf16>) positions(%{{.*}} : tensor<4xi64>) outs(%{{.*}} : tensor<1x2x4x8xbf16>)
// CHECK: linalg.generic {{.*}} ins(%[[R]] : tensor<1x2x4x8xbf16>) outs(%{{.*}} : tensor<1x2x2x4x8xbf16>)
// CHECK-NOT: math.

#tok = affine_map<(s, c) -> (s)>
#ch = affine_map<(s, c) -> (c)>
#id2 = affine_map<(s, c) -> (s, c)>
#id4 = affine_map<(b, h, s, d) -> (b, h, s, d)>
#x5 = affine_map<(b, h, g, s, d) -> (b, h, s, d)>
#t5 = affine_map<(b, h, g, s, d) -> (s, d)>
#id5 = affine_map<(b, h, g, s, d) -> (b, h, g, s, d)>
func.func @k_rotation_through_truncf_broadcast(%kp: tensor<1x2x4x8xf32>, %p: tensor<4xi64>) -> tensor<1x2x2x4x8xbf16> {
  %inv = arith.constant dense<[1.0, 0.1, 0.01, 0.001]> : tensor<4xf32>
  %e44 = tensor.empty() : tensor<4x4xf32>
  %ang = linalg.generic {indexing_maps = [#tok, #ch, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%p, %inv : tensor<4xi64>, tensor<4xf32>) outs(%e44 : tensor<4x4xf32>) {
  ^bb0(%pi: i64, %f: f32, %o: f32):
    %pf = arith.sitofp %pi : i64 to f32
    %a = arith.mulf %pf, %f : f32
    linalg.yield %a : f32
  } -> tensor<4x4xf32>
  %emb = tensor.concat dim(1) %ang, %ang : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x8xf32>
  %e48 = tensor.empty() : tensor<4x8xbf16>
  %cos = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%emb : tensor<4x8xf32>) outs(%e48 : tensor<4x8xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %c = math.cos %a : f32
    %t = arith.truncf %c : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x8xbf16>
  %sin = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%emb : tensor<4x8xf32>) outs(%e48 : tensor<4x8xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %s = math.sin %a : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x8xbf16>
  %ek = tensor.empty() : tensor<1x2x4x8xbf16>
  %k = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%kp : tensor<1x2x4x8xf32>) outs(%ek : tensor<1x2x4x8xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %t = arith.truncf %a : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<1x2x4x8xbf16>
  %k1 = tensor.extract_slice %k[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x8xbf16> to tensor<1x2x4x4xbf16>
  %k2 = tensor.extract_slice %k[0, 0, 0, 4] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x8xbf16> to tensor<1x2x4x4xbf16>
  %eh = tensor.empty() : tensor<1x2x4x4xbf16>
  %n = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%k2 : tensor<1x2x4x4xbf16>) outs(%eh : tensor<1x2x4x4xbf16>) {
  ^bb0(%a: bf16, %o: bf16):
    %m = arith.negf %a : bf16
    linalg.yield %m : bf16
  } -> tensor<1x2x4x4xbf16>
  %rot = tensor.concat dim(3) %n, %k1 : (tensor<1x2x4x4xbf16>, tensor<1x2x4x4xbf16>) -> tensor<1x2x4x8xbf16>
  %ey = tensor.empty() : tensor<1x2x2x4x8xbf16>
  %y = linalg.generic {indexing_maps = [#x5, #t5, #x5, #t5, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%k, %cos, %rot, %sin : tensor<1x2x4x8xbf16>, tensor<4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<4x8xbf16>) outs(%ey : tensor<1x2x2x4x8xbf16>) {
  ^bb0(%x: bf16, %c: bf16, %r: bf16, %s: bf16, %o: bf16):
    %0 = arith.mulf %r, %s : bf16
    %1 = arith.mulf %x, %c : bf16
    %2 = arith.addf %1, %0 : bf16
    linalg.yield %2 : bf16
  } -> tensor<1x2x2x4x8xbf16>
  return %y : tensor<1x2x2x4x8xbf16>
}

// -----

// HF eager attention in bf16, fused: the Q rotation in bf16 inside the Q·Kᵀ
// contraction, widened there to its f32 accumulator; P·V reads the bf16
// probabilities as divf → truncf → extf in its payload. The rotation and the
// probabilities are the bf16 tensors the model had, read widened: Q, K and
// V are bf16 (not an f32 Q rotated from a copy of the widening).
// CHECK-LABEL: func.func @q_rotation_widened_in_scores(
// CHECK-SAME: %[[Q:[^:]*]]: tensor<1x2x4x8xbf16>, %[[K:[^:]*]]: tensor<1x2x4x8xbf16>, %[[V:[^:]*]]: tensor<1x2x4x8xbf16>
// CHECK: %[[R:.*]] = rope.apply ins(%[[Q]] : tensor<1x2x4x8xbf16>) positions(%{{.*}} : tensor<4xi64>) outs(%{{.*}} : tensor<1x2x4x8xbf16>)
// CHECK: rope.attention ins(%[[R]], %[[K]], %[[V]] : tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>) outs(%{{.*}} : tensor<1x2x4x8xf32>)
// CHECK-NOT: math.

#tok = affine_map<(s, c) -> (s)>
#ch = affine_map<(s, c) -> (c)>
#id2 = affine_map<(s, c) -> (s, c)>
#id4 = affine_map<(b, h, s, d) -> (b, h, s, d)>
#row4 = affine_map<(b, h, s, d) -> (b, h, s, 0)>
#q5 = affine_map<(b, h, m, n, d) -> (b, h, m, d)>
#t5 = affine_map<(b, h, m, n, d) -> (m, d)>
#k5 = affine_map<(b, h, m, n, d) -> (b, h, n, d)>
#s5 = affine_map<(b, h, m, n, d) -> (b, h, m, n)>
#rs5 = affine_map<(b, h, m, n, d) -> (b, h, m, 0)>
#v5 = affine_map<(b, h, m, e, n) -> (b, h, n, e)>
#p5 = affine_map<(b, h, m, e, n) -> (b, h, m, n)>
#l5 = affine_map<(b, h, m, e, n) -> (b, h, m, 0)>
#o5 = affine_map<(b, h, m, e, n) -> (b, h, m, e)>
func.func @q_rotation_widened_in_scores(%q: tensor<1x2x4x8xbf16>, %k: tensor<1x2x4x8xbf16>, %v: tensor<1x2x4x8xbf16>, %p: tensor<4xi64>) -> tensor<1x2x4x8xf32> {
  %inv = arith.constant dense<[1.0, 0.1, 0.01, 0.001]> : tensor<4xf32>
  %e44 = tensor.empty() : tensor<4x4xf32>
  %ang = linalg.generic {indexing_maps = [#tok, #ch, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%p, %inv : tensor<4xi64>, tensor<4xf32>) outs(%e44 : tensor<4x4xf32>) {
  ^bb0(%pi: i64, %f: f32, %o: f32):
    %pf = arith.sitofp %pi : i64 to f32
    %a = arith.mulf %pf, %f : f32
    linalg.yield %a : f32
  } -> tensor<4x4xf32>
  %emb = tensor.concat dim(1) %ang, %ang : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x8xf32>
  %e48 = tensor.empty() : tensor<4x8xbf16>
  %cos = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%emb : tensor<4x8xf32>) outs(%e48 : tensor<4x8xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %c = math.cos %a : f32
    %t = arith.truncf %c : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x8xbf16>
  %sin = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%emb : tensor<4x8xf32>) outs(%e48 : tensor<4x8xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %s = math.sin %a : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x8xbf16>
  %q1 = tensor.extract_slice %q[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x8xbf16> to tensor<1x2x4x4xbf16>
  %q2 = tensor.extract_slice %q[0, 0, 0, 4] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x8xbf16> to tensor<1x2x4x4xbf16>
  %eh = tensor.empty() : tensor<1x2x4x4xbf16>
  %n = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%q2 : tensor<1x2x4x4xbf16>) outs(%eh : tensor<1x2x4x4xbf16>) {
  ^bb0(%a: bf16, %o: bf16):
    %m = arith.negf %a : bf16
    linalg.yield %m : bf16
  } -> tensor<1x2x4x4xbf16>
  %rot = tensor.concat dim(3) %n, %q1 : (tensor<1x2x4x4xbf16>, tensor<1x2x4x4xbf16>) -> tensor<1x2x4x8xbf16>
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %scale = arith.constant 3.535160e-01 : bf16
  %es = tensor.empty() : tensor<1x2x4x4xf32>
  %sacc = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = linalg.generic {indexing_maps = [#q5, #t5, #q5, #t5, #k5, #s5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %cos, %rot, %sin, %k : tensor<1x2x4x8xbf16>, tensor<4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<4x8xbf16>, tensor<1x2x4x8xbf16>) outs(%sacc : tensor<1x2x4x4xf32>) {
  ^bb0(%x: bf16, %c: bf16, %r: bf16, %si: bf16, %kk: bf16, %acc: f32):
    %0 = arith.mulf %r, %si : bf16
    %1 = arith.mulf %x, %c : bf16
    %2 = arith.addf %1, %0 : bf16
    %3 = arith.extf %2 : bf16 to f32
    %4 = arith.extf %kk : bf16 to f32
    %5 = arith.mulf %3, %4 : f32
    %6 = arith.addf %acc, %5 : f32
    linalg.yield %6 : f32
  } -> tensor<1x2x4x4xf32>
  %sc = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<1x2x4x4xf32>) outs(%es : tensor<1x2x4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %0 = arith.truncf %a : f32 to bf16
    %1 = arith.mulf %0, %scale : bf16
    %2 = arith.extf %1 : bf16 to f32
    linalg.yield %2 : f32
  } -> tensor<1x2x4x4xf32>
  %er = tensor.empty() : tensor<1x2x4x1xf32>
  %macc = linalg.fill ins(%ninf : f32) outs(%er : tensor<1x2x4x1xf32>) -> tensor<1x2x4x1xf32>
  %mx = linalg.generic {indexing_maps = [#id4, #row4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%sc : tensor<1x2x4x4xf32>) outs(%macc : tensor<1x2x4x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %0 = arith.maximumf %a, %o : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x1xf32>
  %ex = linalg.generic {indexing_maps = [#id4, #row4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%sc, %mx : tensor<1x2x4x4xf32>, tensor<1x2x4x1xf32>) outs(%es : tensor<1x2x4x4xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %0 = arith.subf %a, %m : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x4xf32>
  %lacc = linalg.fill ins(%zero : f32) outs(%er : tensor<1x2x4x1xf32>) -> tensor<1x2x4x1xf32>
  %l = linalg.generic {indexing_maps = [#id4, #row4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ex : tensor<1x2x4x4xf32>) outs(%lacc : tensor<1x2x4x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %0 = arith.addf %a, %o : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x1xf32>
  %eo = tensor.empty() : tensor<1x2x4x8xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %o = linalg.generic {indexing_maps = [#p5, #l5, #v5, #o5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%ex, %l, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x1xf32>, tensor<1x2x4x8xbf16>) outs(%oacc : tensor<1x2x4x8xf32>) {
  ^bb0(%e: f32, %sum: f32, %vv: bf16, %acc: f32):
    %0 = arith.divf %e, %sum : f32
    %1 = arith.truncf %0 : f32 to bf16
    %2 = arith.extf %1 : bf16 to f32
    %3 = arith.extf %vv : bf16 to f32
    %4 = arith.mulf %2, %3 : f32
    %5 = arith.addf %acc, %4 : f32
    linalg.yield %5 : f32
  } -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// torch SDPA on bf16, fused: the Q rotation in bf16 inside the Q·Kᵀ
// contraction, widened and times √scale there (K widened and times √scale
// in a generic of its own). The rotation is the bf16 tensor, the widening
// and the factor stay in the contraction: one bf16 rotation, read by a bf16
// attention whose scale is both factors.
// CHECK-LABEL: func.func @q_rotation_widened_scaled_in_scores(
// CHECK-SAME: %[[Q:[^:]*]]: tensor<1x2x4x8xbf16>, %[[K:[^:]*]]: tensor<1x2x4x8xbf16>, %[[V:[^:]*]]: tensor<1x2x4x8xbf16>
// CHECK: %[[R:.*]] = rope.apply ins(%[[Q]] : tensor<1x2x4x8xbf16>) positions(%{{.*}} : tensor<4xi64>) outs(%{{.*}} : tensor<1x2x4x8xbf16>)
// CHECK-NOT: magnitude
// CHECK: rope.attention ins(%[[R]], %[[K]], %[[V]] : tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>) outs(%{{.*}} : tensor<1x2x4x8xf32>) attributes {indexing_maps = [{{.*}}], scale = 0.35355
// CHECK-NOT: math.

#tok = affine_map<(s, c) -> (s)>
#ch = affine_map<(s, c) -> (c)>
#id2 = affine_map<(s, c) -> (s, c)>
#id4 = affine_map<(b, h, s, d) -> (b, h, s, d)>
#row4 = affine_map<(b, h, s, d) -> (b, h, s, 0)>
#q5 = affine_map<(b, h, m, n, d) -> (b, h, m, d)>
#t5 = affine_map<(b, h, m, n, d) -> (m, d)>
#k5 = affine_map<(b, h, m, n, d) -> (b, h, n, d)>
#s5 = affine_map<(b, h, m, n, d) -> (b, h, m, n)>
#v5 = affine_map<(b, h, m, e, n) -> (b, h, n, e)>
#p5 = affine_map<(b, h, m, e, n) -> (b, h, m, n)>
#l5 = affine_map<(b, h, m, e, n) -> (b, h, m, 0)>
#o5 = affine_map<(b, h, m, e, n) -> (b, h, m, e)>
func.func @q_rotation_widened_scaled_in_scores(%q: tensor<1x2x4x8xbf16>, %k: tensor<1x2x4x8xbf16>, %v: tensor<1x2x4x8xbf16>, %p: tensor<4xi64>) -> tensor<1x2x4x8xf32> {
  %inv = arith.constant dense<[1.0, 0.1, 0.01, 0.001]> : tensor<4xf32>
  %e44 = tensor.empty() : tensor<4x4xf32>
  %ang = linalg.generic {indexing_maps = [#tok, #ch, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%p, %inv : tensor<4xi64>, tensor<4xf32>) outs(%e44 : tensor<4x4xf32>) {
  ^bb0(%pi: i64, %f: f32, %o: f32):
    %pf = arith.sitofp %pi : i64 to f32
    %a = arith.mulf %pf, %f : f32
    linalg.yield %a : f32
  } -> tensor<4x4xf32>
  %emb = tensor.concat dim(1) %ang, %ang : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x8xf32>
  %e48 = tensor.empty() : tensor<4x8xbf16>
  %cos = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%emb : tensor<4x8xf32>) outs(%e48 : tensor<4x8xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %c = math.cos %a : f32
    %t = arith.truncf %c : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x8xbf16>
  %sin = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%emb : tensor<4x8xf32>) outs(%e48 : tensor<4x8xbf16>) {
  ^bb0(%a: f32, %o: bf16):
    %s = math.sin %a : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %t : bf16
  } -> tensor<4x8xbf16>
  %q1 = tensor.extract_slice %q[0, 0, 0, 0] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x8xbf16> to tensor<1x2x4x4xbf16>
  %q2 = tensor.extract_slice %q[0, 0, 0, 4] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x8xbf16> to tensor<1x2x4x4xbf16>
  %eh = tensor.empty() : tensor<1x2x4x4xbf16>
  %n = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%q2 : tensor<1x2x4x4xbf16>) outs(%eh : tensor<1x2x4x4xbf16>) {
  ^bb0(%a: bf16, %o: bf16):
    %m = arith.negf %a : bf16
    linalg.yield %m : bf16
  } -> tensor<1x2x4x4xbf16>
  %rot = tensor.concat dim(3) %n, %q1 : (tensor<1x2x4x4xbf16>, tensor<1x2x4x4xbf16>) -> tensor<1x2x4x8xbf16>
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %c4 = arith.constant 0.594603539 : f32
  %e4f = tensor.empty() : tensor<1x2x4x8xf32>
  %kc = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%k : tensor<1x2x4x8xbf16>) outs(%e4f : tensor<1x2x4x8xf32>) {
  ^bb0(%a: bf16, %o: f32):
    %0 = arith.extf %a : bf16 to f32
    %1 = arith.mulf %0, %c4 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x8xf32>
  %es = tensor.empty() : tensor<1x2x4x4xf32>
  %sacc = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = linalg.generic {indexing_maps = [#q5, #t5, #q5, #t5, #k5, #s5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %cos, %rot, %sin, %kc : tensor<1x2x4x8xbf16>, tensor<4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<4x8xbf16>, tensor<1x2x4x8xf32>) outs(%sacc : tensor<1x2x4x4xf32>) {
  ^bb0(%x: bf16, %c: bf16, %r: bf16, %si: bf16, %kk: f32, %acc: f32):
    %0 = arith.mulf %r, %si : bf16
    %1 = arith.mulf %x, %c : bf16
    %2 = arith.addf %1, %0 : bf16
    %3 = arith.extf %2 : bf16 to f32
    %4 = arith.mulf %3, %c4 : f32
    %5 = arith.mulf %4, %kk : f32
    %6 = arith.addf %acc, %5 : f32
    linalg.yield %6 : f32
  } -> tensor<1x2x4x4xf32>
  %er = tensor.empty() : tensor<1x2x4x1xf32>
  %macc = linalg.fill ins(%ninf : f32) outs(%er : tensor<1x2x4x1xf32>) -> tensor<1x2x4x1xf32>
  %mx = linalg.generic {indexing_maps = [#id4, #row4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%s : tensor<1x2x4x4xf32>) outs(%macc : tensor<1x2x4x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %0 = arith.maximumf %a, %o : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x1xf32>
  %ex = linalg.generic {indexing_maps = [#id4, #row4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s, %mx : tensor<1x2x4x4xf32>, tensor<1x2x4x1xf32>) outs(%es : tensor<1x2x4x4xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %0 = arith.subf %a, %m : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x4xf32>
  %lacc = linalg.fill ins(%zero : f32) outs(%er : tensor<1x2x4x1xf32>) -> tensor<1x2x4x1xf32>
  %l = linalg.generic {indexing_maps = [#id4, #row4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ex : tensor<1x2x4x4xf32>) outs(%lacc : tensor<1x2x4x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %0 = arith.addf %a, %o : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x1xf32>
  %eo = tensor.empty() : tensor<1x2x4x8xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %o = linalg.generic {indexing_maps = [#p5, #l5, #v5, #o5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%ex, %l, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x1xf32>, tensor<1x2x4x8xbf16>) outs(%oacc : tensor<1x2x4x8xf32>) {
  ^bb0(%e: f32, %sum: f32, %vv: bf16, %acc: f32):
    %0 = arith.divf %e, %sum : f32
    %1 = arith.extf %vv : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %acc, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// GQA in bf16 after generalize + fuse: V truncated from its f32 projection,
// transposed, repeated over the query heads of its group and widened for
// SDPA's f32, all in one copy (K's repeat is a widened copy of a bf16
// tensor). V is the bf16 truncation, read once per KV head: the op repeats
// it, as it does K.
// CHECK-LABEL: func.func @v_narrowing_broadcast(
// CHECK-SAME: %[[Q:[^:]*]]: tensor<1x2x4x8xbf16>, %[[K:[^:]*]]: tensor<1x1x4x8xbf16>, %[[VP:[^:]*]]: tensor<1x4x1x8xf32>
// CHECK: %[[VN:.*]] = linalg.generic {{.*}} ins(%[[VP]] : tensor<1x4x1x8xf32>) outs(%{{.*}} : tensor<1x4x1x8xbf16>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK-DAG: %[[KC:.*]] = tensor.collapse_shape %[[K]] {{.*}} into tensor<1x4x8xbf16>
// CHECK-DAG: %[[VC:.*]] = tensor.collapse_shape %[[VN]] {{.*}} into tensor<1x4x8xbf16>
// CHECK: rope.attention ins(%[[Q]], %[[KC]], %[[VC]] : tensor<1x2x4x8xbf16>, tensor<1x4x8xbf16>, tensor<1x4x8xbf16>)
// FOLD-LABEL: func.func @v_narrowing_broadcast(
// FOLD: linalg.generic {{.*}} ins(%{{.*}} : tensor<1x4x1x8xf32>) outs(%{{.*}} : tensor<1x4x1x8xbf16>)
// FOLD: arith.truncf %{{.*}} : f32 to bf16
// FOLD: rope.attention ins({{.*}} : tensor<1x2x4x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16>)

#id4 = affine_map<(b, h, s, d) -> (b, h, s, d)>
#row4 = affine_map<(b, h, s, d) -> (b, h, s, 0)>
#kb = affine_map<(b, h, g, n, d) -> (b, h, n, d)>
#vb = affine_map<(b, h, g, n, d) -> (b, n, h, d)>
#id5 = affine_map<(b, h, g, n, d) -> (b, h, g, n, d)>
#q5 = affine_map<(b, h, m, n, d) -> (b, h, m, d)>
#k5 = affine_map<(b, h, m, n, d) -> (b, h, n, d)>
#s5 = affine_map<(b, h, m, n, d) -> (b, h, m, n)>
#v5 = affine_map<(b, h, m, e, n) -> (b, h, n, e)>
#p5 = affine_map<(b, h, m, e, n) -> (b, h, m, n)>
#l5 = affine_map<(b, h, m, e, n) -> (b, h, m, 0)>
#o5 = affine_map<(b, h, m, e, n) -> (b, h, m, e)>
func.func @v_narrowing_broadcast(%q: tensor<1x2x4x8xbf16>, %k: tensor<1x1x4x8xbf16>, %vp: tensor<1x4x1x8xf32>) -> tensor<1x2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %scale = arith.constant 0.353553385 : f32
  %eb = tensor.empty() : tensor<1x1x2x4x8xf32>
  %kr = linalg.generic {indexing_maps = [#kb, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%k : tensor<1x1x4x8xbf16>) outs(%eb : tensor<1x1x2x4x8xf32>) {
  ^bb0(%a: bf16, %o: f32):
    %0 = arith.extf %a : bf16 to f32
    linalg.yield %0 : f32
  } -> tensor<1x1x2x4x8xf32>
  %vr = linalg.generic {indexing_maps = [#vb, #id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%vp : tensor<1x4x1x8xf32>) outs(%eb : tensor<1x1x2x4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %0 = arith.truncf %a : f32 to bf16
    %1 = arith.extf %0 : bf16 to f32
    linalg.yield %1 : f32
  } -> tensor<1x1x2x4x8xf32>
  %kc = tensor.collapse_shape %kr [[0], [1, 2], [3], [4]] : tensor<1x1x2x4x8xf32> into tensor<1x2x4x8xf32>
  %vc = tensor.collapse_shape %vr [[0], [1, 2], [3], [4]] : tensor<1x1x2x4x8xf32> into tensor<1x2x4x8xf32>
  %es = tensor.empty() : tensor<1x2x4x4xf32>
  %sacc = linalg.fill ins(%zero : f32) outs(%es : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = linalg.generic {indexing_maps = [#q5, #k5, #s5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %kc : tensor<1x2x4x8xbf16>, tensor<1x2x4x8xf32>) outs(%sacc : tensor<1x2x4x4xf32>) {
  ^bb0(%x: bf16, %kk: f32, %acc: f32):
    %0 = arith.extf %x : bf16 to f32
    %1 = arith.mulf %0, %kk : f32
    %2 = arith.addf %acc, %1 : f32
    linalg.yield %2 : f32
  } -> tensor<1x2x4x4xf32>
  %sc = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%s : tensor<1x2x4x4xf32>) outs(%es : tensor<1x2x4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %0 = arith.mulf %a, %scale : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %er = tensor.empty() : tensor<1x2x4x1xf32>
  %macc = linalg.fill ins(%ninf : f32) outs(%er : tensor<1x2x4x1xf32>) -> tensor<1x2x4x1xf32>
  %mx = linalg.generic {indexing_maps = [#id4, #row4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%sc : tensor<1x2x4x4xf32>) outs(%macc : tensor<1x2x4x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %0 = arith.maximumf %a, %o : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x1xf32>
  %ex = linalg.generic {indexing_maps = [#id4, #row4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%sc, %mx : tensor<1x2x4x4xf32>, tensor<1x2x4x1xf32>) outs(%es : tensor<1x2x4x4xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %0 = arith.subf %a, %m : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x4xf32>
  %lacc = linalg.fill ins(%zero : f32) outs(%er : tensor<1x2x4x1xf32>) -> tensor<1x2x4x1xf32>
  %l = linalg.generic {indexing_maps = [#id4, #row4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ex : tensor<1x2x4x4xf32>) outs(%lacc : tensor<1x2x4x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %0 = arith.addf %a, %o : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x1xf32>
  %eo = tensor.empty() : tensor<1x2x4x8xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%eo : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %o = linalg.generic {indexing_maps = [#p5, #l5, #v5, #o5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
      ins(%ex, %l, %vc : tensor<1x2x4x4xf32>, tensor<1x2x4x1xf32>, tensor<1x2x4x8xf32>) outs(%oacc : tensor<1x2x4x8xf32>) {
  ^bb0(%e: f32, %sum: f32, %vv: f32, %acc: f32):
    %0 = arith.divf %e, %sum : f32
    %1 = arith.mulf %0, %vv : f32
    %2 = arith.addf %acc, %1 : f32
    linalg.yield %2 : f32
  } -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}
