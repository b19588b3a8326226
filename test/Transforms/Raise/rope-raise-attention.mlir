// RUN: rope-opt --rope-raise --split-input-file --mlir-print-local-scope %s | FileCheck %s --enable-var-scope
// RUN: rope-opt --rope-raise=remarks=true --split-input-file -verify-diagnostics %s -o /dev/null
// RUN: rope-opt --rope-raise-attention --split-input-file --mlir-print-local-scope %s | FileCheck %s --enable-var-scope
// RUN: rope-opt --rope-raise-attention=remarks=true --split-input-file -verify-diagnostics %s -o /dev/null
// RUN: rope-opt --rope-raise-attention %S/../../Frontends/Inputs/zoo/llama_decode.mlir | FileCheck %s --check-prefix=ALONE --implicit-check-not=rope.apply

// rope-raise-attention is rope-raise's last step alone: the same on attention
// (the RUN lines above), and it leaves the rotations written out (a zoo
// model: both attentions raised, no rope.apply).
// ALONE-COUNT-2: rope.attention ins(

// Attention written out in linalg on tensors, raised to rope.attention by
// --rope-raise (lib/Transforms/Raise/RaiseAttention.cpp): our emitter's
// forms (python/rope_mlir/attention.py emit_attention: linalg.softmax, the
// softmax as linalg.softmax's own decomposition, the frontend's named ops),
// torch-mlir's spellings (batch_matmul over [B*H], the argmax max, the guard
// for fully masked rows, SDPA's sqrt(scale) on q and k, a causal mask from
// iota comparisons), GQA, [B, S, H, D], Dv != D, an i1 mask, bf16 with an f32
// softmax, Gemma 2's softcap as the score region. Then negatives: each a one-line change of a raised form that
// makes it something else, left alone with a remark (or, for a mask that is
// not provably causal, raised with the mask tensor).

// The plain form: scores, scale, an [Sq, Sk] mask added, linalg.softmax over
// the keys, P·V. One loop per dim of the op: (b, h, m, k1, k2, e).
// CHECK-LABEL: func.func @named_softmax(
// CHECK-SAME: %[[QA:[a-z0-9]+]]: tensor<1x2x4x8xf32>, %[[KA:[a-z0-9]+]]: tensor<1x2x4x8xf32>, %[[VA:[a-z0-9]+]]: tensor<1x2x4x8xf32>, %[[MA:[a-z0-9]+]]: tensor<4x4xf32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<1x2x4x8xf32>
// CHECK: %[[R:.*]] = rope.attention ins(%[[QA]], %[[KA]], %[[VA]] : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) mask(%[[MA]] : tensor<4x4xf32>) outs(%[[E]] : tensor<1x2x4x8xf32>)
// CHECK-SAME: attributes {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d2, d4)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d5)>], scale = 0.35355338454246521 : f64}
// CHECK-NOT: linalg.
// CHECK: return %[[R]]

#s_q = affine_map<(b, h, m, n, d) -> (b, h, m, d)>
#s_k = affine_map<(b, h, m, n, d) -> (b, h, n, d)>
#s_o = affine_map<(b, h, m, n, d) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#row = affine_map<(b, h, m, n) -> (b, h, m)>
#mn = affine_map<(b, h, m, n) -> (m, n)>
#p = affine_map<(b, h, m, n, e) -> (b, h, m, n)>
#v = affine_map<(b, h, m, n, e) -> (b, h, n, e)>
#o = affine_map<(b, h, m, n, e) -> (b, h, m, e)>
func.func @named_softmax(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %mask: tensor<4x4xf32>) -> tensor<1x2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<1x2x4x4xf32>
  %sacc = linalg.fill ins(%zero : f32) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = linalg.generic {indexing_maps = [#s_q, #s_k, #s_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%sacc : tensor<1x2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x4xf32>
  %scale = arith.constant 0.35355339 : f32
  %scaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %0 = arith.mulf %x, %scale : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %masked = linalg.generic {indexing_maps = [#id, #mn, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled, %mask : tensor<1x2x4x4xf32>, tensor<4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %a: f32, %y: f32):
    %0 = arith.addf %x, %a : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %p = linalg.softmax dimension(3) ins(%masked : tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %oe = tensor.empty() : tensor<1x2x4x8xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) outs(%oacc : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// The same with the softmax written out (max, exp(x - max), sum, divide).
// CHECK-LABEL: func.func @written_softmax(
// CHECK: rope.attention {{.*}} mask(%{{.*}} : tensor<4x4xf32>)
// CHECK-SAME: scale = 0.35355338454246521 : f64
// CHECK-NOT: linalg.

#s_q = affine_map<(b, h, m, n, d) -> (b, h, m, d)>
#s_k = affine_map<(b, h, m, n, d) -> (b, h, n, d)>
#s_o = affine_map<(b, h, m, n, d) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#row = affine_map<(b, h, m, n) -> (b, h, m)>
#mn = affine_map<(b, h, m, n) -> (m, n)>
#p = affine_map<(b, h, m, n, e) -> (b, h, m, n)>
#v = affine_map<(b, h, m, n, e) -> (b, h, n, e)>
#o = affine_map<(b, h, m, n, e) -> (b, h, m, e)>
func.func @written_softmax(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %mask: tensor<4x4xf32>) -> tensor<1x2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<1x2x4x4xf32>
  %sacc = linalg.fill ins(%zero : f32) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = linalg.generic {indexing_maps = [#s_q, #s_k, #s_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%sacc : tensor<1x2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x4xf32>
  %scale = arith.constant 0.35355339 : f32
  %scaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %0 = arith.mulf %x, %scale : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %masked = linalg.generic {indexing_maps = [#id, #mn, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled, %mask : tensor<1x2x4x4xf32>, tensor<4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %a: f32, %y: f32):
    %0 = arith.addf %x, %a : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %re = tensor.empty() : tensor<1x2x4xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%re : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%masked : tensor<1x2x4x4xf32>) outs(%minit : tensor<1x2x4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %0 = arith.maximumf %x, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4xf32>
  %exp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%masked, %max : tensor<1x2x4x4xf32>, tensor<1x2x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %r: f32, %y: f32):
    %0 = arith.subf %x, %r : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x4xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%re : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%exp : tensor<1x2x4x4xf32>) outs(%sinit : tensor<1x2x4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %0 = arith.addf %x, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4xf32>
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%exp, %sum : tensor<1x2x4x4xf32>, tensor<1x2x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %r: f32, %y: f32):
    %0 = arith.divf %x, %r : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %oe = tensor.empty() : tensor<1x2x4x8xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) outs(%oacc : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Left alone: the divisor sums exp over a fifth loop and is read by the key
// too, s[b, h, m, n] = sum_r exp[b, h, m, n] = 4 exp[b, h, m, n], so P is
// 1/4 everywhere, not a softmax. Renaming r to the key and comparing the
// summand with the numerator alone would accept it; the row sum must be
// read without the key.
// CHECK-LABEL: func.func @sum_read_by_key(
// CHECK-NOT: rope.attention
// CHECK: return

#s_q = affine_map<(b, h, m, n, d) -> (b, h, m, d)>
#s_k = affine_map<(b, h, m, n, d) -> (b, h, n, d)>
#s_o = affine_map<(b, h, m, n, d) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#row = affine_map<(b, h, m, n) -> (b, h, m)>
#mn = affine_map<(b, h, m, n) -> (m, n)>
#p = affine_map<(b, h, m, n, e) -> (b, h, m, n)>
#v = affine_map<(b, h, m, n, e) -> (b, h, n, e)>
#o = affine_map<(b, h, m, n, e) -> (b, h, m, e)>
#rk_in = affine_map<(b, h, m, n, r) -> (b, h, m, n, r)>
#rk_out = affine_map<(b, h, m, n, r) -> (b, h, m, n)>
func.func @sum_read_by_key(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %mask: tensor<4x4xf32>) -> tensor<1x2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<1x2x4x4xf32>
  %sacc = linalg.fill ins(%zero : f32) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = linalg.generic {indexing_maps = [#s_q, #s_k, #s_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%sacc : tensor<1x2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x4xf32>
  %scale = arith.constant 0.35355339 : f32
  %scaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %0 = arith.mulf %x, %scale : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %masked = linalg.generic {indexing_maps = [#id, #mn, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled, %mask : tensor<1x2x4x4xf32>, tensor<4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %a: f32, %y: f32):
    %0 = arith.addf %x, %a : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %re = tensor.empty() : tensor<1x2x4xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%re : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%masked : tensor<1x2x4x4xf32>) outs(%minit : tensor<1x2x4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %0 = arith.maximumf %x, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4xf32>
  %exp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%masked, %max : tensor<1x2x4x4xf32>, tensor<1x2x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %r: f32, %y: f32):
    %0 = arith.subf %x, %r : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x4xf32>
  %be = tensor.empty() : tensor<1x2x4x4x4xf32>
  %bexp = linalg.broadcast ins(%exp : tensor<1x2x4x4xf32>) outs(%be : tensor<1x2x4x4x4xf32>) dimensions = [4]
  %sinit = linalg.fill ins(%zero : f32) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %sum = linalg.generic {indexing_maps = [#rk_in, #rk_out], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%bexp : tensor<1x2x4x4x4xf32>) outs(%sinit : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %0 = arith.addf %x, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %p = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%exp, %sum : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %r: f32, %y: f32):
    %0 = arith.divf %x, %r : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %oe = tensor.empty() : tensor<1x2x4x8xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  // expected-remark @+1 {{rope-raise: attention not raised: the divisor is not the sum of the numerator over the keys P·V sums}}
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) outs(%oacc : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// No mask, no scale: scale 1.
// CHECK-LABEL: func.func @bare(
// CHECK: rope.attention ins({{.*}}) outs({{.*}}) attributes {indexing_maps = [{{.*}}], scale = 1.000000e+00 : f64}

#s_q = affine_map<(b, h, m, n, d) -> (b, h, m, d)>
#s_k = affine_map<(b, h, m, n, d) -> (b, h, n, d)>
#s_o = affine_map<(b, h, m, n, d) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#row = affine_map<(b, h, m, n) -> (b, h, m)>
#mn = affine_map<(b, h, m, n) -> (m, n)>
#p = affine_map<(b, h, m, n, e) -> (b, h, m, n)>
#v = affine_map<(b, h, m, n, e) -> (b, h, n, e)>
#o = affine_map<(b, h, m, n, e) -> (b, h, m, e)>
func.func @bare(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %mask: tensor<4x4xf32>) -> tensor<1x2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<1x2x4x4xf32>
  %sacc = linalg.fill ins(%zero : f32) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = linalg.generic {indexing_maps = [#s_q, #s_k, #s_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%sacc : tensor<1x2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x4xf32>
  %p = linalg.softmax dimension(3) ins(%s : tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %oe = tensor.empty() : tensor<1x2x4x8xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) outs(%oacc : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Our emitter's whole attention (python/rope_mlir/attention.py emit_attention),
// GQA: Q [B, Hkv, G, S, D] with the group missing from K's and V's maps, the
// rotations rope.apply. Raised with the rotations still producing Q and K,
// the group a batch dim (query_dim says which loop is the queries).
// CHECK-LABEL: func.func @emitter_named_gqa(
// CHECK: %[[QR:.*]] = rope.apply ins(%{{.*}} : tensor<1x2x2x4x8xf32>)
// CHECK: %[[KR:.*]] = rope.apply ins(%{{.*}} : tensor<1x2x4x8xf32>)
// CHECK: %[[O:.*]] = rope.attention ins(%[[QR]], %[[KR]], %{{.*}} : tensor<1x2x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) mask(%{{.*}} : tensor<4x4xf32>)
// CHECK-SAME: query_dim = 3 : i64, scale = 2.500000e-01 : f64
// CHECK-NOT: linalg.
// CHECK: bufferization.materialize_in_destination %[[O]]

// AttentionConfig(batch=1, q_heads=4, kv_heads=2, q_len=4, kv_len=4, head_dim=8, scale=0.25, mask=True, softmax='named')
func.func @emitter_named_gqa(%q: memref<1x2x2x4x8xf32>, %k: memref<1x2x4x8xf32>, %off: memref<1xi64>, %mask: memref<4x4xf32>, %v: memref<1x2x4x8xf32>, %out: memref<1x2x2x4x8xf32>) attributes {llvm.emit_c_interface} {
  %qt = bufferization.to_tensor %q restrict : memref<1x2x2x4x8xf32> to tensor<1x2x2x4x8xf32>
  %kt = bufferization.to_tensor %k restrict : memref<1x2x4x8xf32> to tensor<1x2x4x8xf32>
  %ot = bufferization.to_tensor %off restrict : memref<1xi64> to tensor<1xi64>
  %qre = tensor.empty() : tensor<1x2x2x4x8xf32>
  %qr = rope.apply ins(%qt : tensor<1x2x2x4x8xf32>) offset(%ot : tensor<1xi64>) outs(%qre : tensor<1x2x2x4x8xf32>) {layout = #rope.layout<half>, freqs = #rope.default<base = 10000.0>, token_dims = array<i64: 0, 3>} -> tensor<1x2x2x4x8xf32>
  %kre = tensor.empty() : tensor<1x2x4x8xf32>
  %kr = rope.apply ins(%kt : tensor<1x2x4x8xf32>) outs(%kre : tensor<1x2x4x8xf32>) {layout = #rope.layout<half>, freqs = #rope.default<base = 10000.0>, token_dims = array<i64: 0, 2>} -> tensor<1x2x4x8xf32>
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<1x2x2x4x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%se : tensor<1x2x2x4x4xf32>) -> tensor<1x2x2x4x4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, g, m, n, d) -> (b, h, g, m, d)>, affine_map<(b, h, g, m, n, d) -> (b, h, n, d)>, affine_map<(b, h, g, m, n, d) -> (b, h, g, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%qr, %kr : tensor<1x2x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%acc : tensor<1x2x2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<1x2x2x4x4xf32>
  %scale = arith.constant 0.25 : f32
  %scaled_e = tensor.empty() : tensor<1x2x2x4x4xf32>
  %scaled = linalg.generic {indexing_maps = [affine_map<(b, h, g, m, n) -> (b, h, g, m, n)>, affine_map<(b, h, g, m, n) -> (b, h, g, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x2x2x4x4xf32>) outs(%scaled_e : tensor<1x2x2x4x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %scale : f32
    linalg.yield %y : f32
  } -> tensor<1x2x2x4x4xf32>
  %maskt = bufferization.to_tensor %mask restrict : memref<4x4xf32> to tensor<4x4xf32>
  %masked_e = tensor.empty() : tensor<1x2x2x4x4xf32>
  %masked = linalg.generic {indexing_maps = [affine_map<(b, h, g, m, n) -> (b, h, g, m, n)>, affine_map<(b, h, g, m, n) -> (m, n)>, affine_map<(b, h, g, m, n) -> (b, h, g, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%scaled, %maskt : tensor<1x2x2x4x4xf32>, tensor<4x4xf32>) outs(%masked_e : tensor<1x2x2x4x4xf32>) {
  ^bb0(%x: f32, %a: f32, %o: f32):
    %y = arith.addf %x, %a : f32
    linalg.yield %y : f32
  } -> tensor<1x2x2x4x4xf32>
  %vt = bufferization.to_tensor %v restrict : memref<1x2x4x8xf32> to tensor<1x2x4x8xf32>
  %pe = tensor.empty() : tensor<1x2x2x4x4xf32>
  %p = linalg.softmax dimension(4) ins(%masked : tensor<1x2x2x4x4xf32>) outs(%pe : tensor<1x2x2x4x4xf32>) -> tensor<1x2x2x4x4xf32>
  %oe = tensor.empty() : tensor<1x2x2x4x8xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x2x2x4x8xf32>) -> tensor<1x2x2x4x8xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, g, m, n, e) -> (b, h, g, m, n)>, affine_map<(b, h, g, m, n, e) -> (b, h, n, e)>, affine_map<(b, h, g, m, n, e) -> (b, h, g, m, e)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%p, %vt : tensor<1x2x2x4x4xf32>, tensor<1x2x4x8xf32>) outs(%oacc : tensor<1x2x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %x = arith.mulf %a, %b : f32
    %y = arith.addf %c, %x : f32
    linalg.yield %y : f32
  } -> tensor<1x2x2x4x8xf32>
  bufferization.materialize_in_destination %o in restrict writable %out : (tensor<1x2x2x4x8xf32>, memref<1x2x2x4x8xf32>) -> ()
  return
}

// -----

// The softmax as linalg.softmax's own decomposition (maxnumf from NaN).
// CHECK-LABEL: func.func @emitter_decomposed_gqa(
// CHECK: %[[QR:.*]] = rope.apply
// CHECK: %[[KR:.*]] = rope.apply
// CHECK: rope.attention ins(%[[QR]], %[[KR]], %{{.*}} : tensor<1x2x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) mask(%{{.*}} : tensor<4x4xf32>)
// CHECK-SAME: query_dim = 3 : i64, scale = 2.500000e-01 : f64
// CHECK-NOT: linalg.

// AttentionConfig(batch=1, q_heads=4, kv_heads=2, q_len=4, kv_len=4, head_dim=8, scale=0.25, mask=True, softmax='decomposed')
func.func @emitter_decomposed_gqa(%q: memref<1x2x2x4x8xf32>, %k: memref<1x2x4x8xf32>, %off: memref<1xi64>, %mask: memref<4x4xf32>, %v: memref<1x2x4x8xf32>, %out: memref<1x2x2x4x8xf32>) attributes {llvm.emit_c_interface} {
  %qt = bufferization.to_tensor %q restrict : memref<1x2x2x4x8xf32> to tensor<1x2x2x4x8xf32>
  %kt = bufferization.to_tensor %k restrict : memref<1x2x4x8xf32> to tensor<1x2x4x8xf32>
  %ot = bufferization.to_tensor %off restrict : memref<1xi64> to tensor<1xi64>
  %qre = tensor.empty() : tensor<1x2x2x4x8xf32>
  %qr = rope.apply ins(%qt : tensor<1x2x2x4x8xf32>) offset(%ot : tensor<1xi64>) outs(%qre : tensor<1x2x2x4x8xf32>) {layout = #rope.layout<half>, freqs = #rope.default<base = 10000.0>, token_dims = array<i64: 0, 3>} -> tensor<1x2x2x4x8xf32>
  %kre = tensor.empty() : tensor<1x2x4x8xf32>
  %kr = rope.apply ins(%kt : tensor<1x2x4x8xf32>) outs(%kre : tensor<1x2x4x8xf32>) {layout = #rope.layout<half>, freqs = #rope.default<base = 10000.0>, token_dims = array<i64: 0, 2>} -> tensor<1x2x4x8xf32>
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<1x2x2x4x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%se : tensor<1x2x2x4x4xf32>) -> tensor<1x2x2x4x4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, g, m, n, d) -> (b, h, g, m, d)>, affine_map<(b, h, g, m, n, d) -> (b, h, n, d)>, affine_map<(b, h, g, m, n, d) -> (b, h, g, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%qr, %kr : tensor<1x2x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%acc : tensor<1x2x2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<1x2x2x4x4xf32>
  %scale = arith.constant 0.25 : f32
  %scaled_e = tensor.empty() : tensor<1x2x2x4x4xf32>
  %scaled = linalg.generic {indexing_maps = [affine_map<(b, h, g, m, n) -> (b, h, g, m, n)>, affine_map<(b, h, g, m, n) -> (b, h, g, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x2x2x4x4xf32>) outs(%scaled_e : tensor<1x2x2x4x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %scale : f32
    linalg.yield %y : f32
  } -> tensor<1x2x2x4x4xf32>
  %maskt = bufferization.to_tensor %mask restrict : memref<4x4xf32> to tensor<4x4xf32>
  %masked_e = tensor.empty() : tensor<1x2x2x4x4xf32>
  %masked = linalg.generic {indexing_maps = [affine_map<(b, h, g, m, n) -> (b, h, g, m, n)>, affine_map<(b, h, g, m, n) -> (m, n)>, affine_map<(b, h, g, m, n) -> (b, h, g, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%scaled, %maskt : tensor<1x2x2x4x4xf32>, tensor<4x4xf32>) outs(%masked_e : tensor<1x2x2x4x4xf32>) {
  ^bb0(%x: f32, %a: f32, %o: f32):
    %y = arith.addf %x, %a : f32
    linalg.yield %y : f32
  } -> tensor<1x2x2x4x4xf32>
  %vt = bufferization.to_tensor %v restrict : memref<1x2x4x8xf32> to tensor<1x2x4x8xf32>
  %pe = tensor.empty() : tensor<1x2x2x4x4xf32>
  %rows = tensor.empty() : tensor<1x2x2x4xf32>
  %sm_zero = arith.constant 0.0 : f32
  %sum0 = linalg.fill ins(%sm_zero : f32) outs(%rows : tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
  %sm_nan = arith.constant 0xFFC00000 : f32
  %max0 = linalg.fill ins(%sm_nan : f32) outs(%rows : tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
  %max = linalg.generic {indexing_maps = [affine_map<(b, h, g, m, n) -> (b, h, g, m, n)>, affine_map<(b, h, g, m, n) -> (b, h, g, m)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%masked : tensor<1x2x2x4x4xf32>) outs(%max0 : tensor<1x2x2x4xf32>) {
  ^bb0(%sm_in: f32, %sm_acc: f32):
    %sm_r = arith.maxnumf %sm_in, %sm_acc : f32
    linalg.yield %sm_r : f32
  } -> tensor<1x2x2x4xf32>
  %exp = linalg.generic {indexing_maps = [affine_map<(b, h, g, m, n) -> (b, h, g, m, n)>, affine_map<(b, h, g, m, n) -> (b, h, g, m)>, affine_map<(b, h, g, m, n) -> (b, h, g, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%masked, %max : tensor<1x2x2x4x4xf32>, tensor<1x2x2x4xf32>) outs(%pe : tensor<1x2x2x4x4xf32>) {
  ^bb0(%sm_in: f32, %sm_row: f32, %sm_out: f32):
    %sm_d = arith.subf %sm_in, %sm_row : f32
    %sm_e = math.exp %sm_d : f32
    linalg.yield %sm_e : f32
  } -> tensor<1x2x2x4x4xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(b, h, g, m, n) -> (b, h, g, m, n)>, affine_map<(b, h, g, m, n) -> (b, h, g, m)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%exp : tensor<1x2x2x4x4xf32>) outs(%sum0 : tensor<1x2x2x4xf32>) {
  ^bb0(%sm_in: f32, %sm_acc: f32):
    %sm_r = arith.addf %sm_in, %sm_acc : f32
    linalg.yield %sm_r : f32
  } -> tensor<1x2x2x4xf32>
  %p = linalg.generic {indexing_maps = [affine_map<(b, h, g, m, n) -> (b, h, g, m, n)>, affine_map<(b, h, g, m, n) -> (b, h, g, m)>, affine_map<(b, h, g, m, n) -> (b, h, g, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%exp, %sum : tensor<1x2x2x4x4xf32>, tensor<1x2x2x4xf32>) outs(%pe : tensor<1x2x2x4x4xf32>) {
  ^bb0(%sm_in: f32, %sm_row: f32, %sm_out: f32):
    %sm_p = arith.divf %sm_in, %sm_row : f32
    linalg.yield %sm_p : f32
  } -> tensor<1x2x2x4x4xf32>
  %oe = tensor.empty() : tensor<1x2x2x4x8xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x2x2x4x8xf32>) -> tensor<1x2x2x4x8xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, g, m, n, e) -> (b, h, g, m, n)>, affine_map<(b, h, g, m, n, e) -> (b, h, n, e)>, affine_map<(b, h, g, m, n, e) -> (b, h, g, m, e)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%p, %vt : tensor<1x2x2x4x4xf32>, tensor<1x2x4x8xf32>) outs(%oacc : tensor<1x2x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %x = arith.mulf %a, %b : f32
    %y = arith.addf %c, %x : f32
    linalg.yield %y : f32
  } -> tensor<1x2x2x4x8xf32>
  bufferization.materialize_in_destination %o in restrict writable %out : (tensor<1x2x2x4x8xf32>, memref<1x2x2x4x8xf32>) -> ()
  return
}

// -----

// The frontend's named ops (linalg.reduce / broadcast / sub / exp / div), in
// [B, S, H, D] with Dv = 4 != D = 8: the queries are loop 1.
// CHECK-LABEL: func.func @emitter_frontend_bshd_dv(
// CHECK: %[[QR:.*]] = rope.apply
// CHECK: %[[KR:.*]] = rope.apply
// CHECK: rope.attention ins(%[[QR]], %[[KR]], %{{.*}} : tensor<1x4x2x2x8xf32>, tensor<1x4x2x8xf32>, tensor<1x4x2x4xf32>) mask(%{{.*}} : tensor<4x4xf32>) outs(%{{.*}} : tensor<1x4x2x2x4xf32>)
// CHECK-SAME: {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d5, d2, d4)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d5, d2, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d6)>], query_dim = 1 : i64, scale = 2.500000e-01 : f64}
// CHECK-NOT: linalg.

// AttentionConfig(batch=1, q_heads=4, kv_heads=2, q_len=4, kv_len=4, head_dim=8, scale=0.25, mask=True, softmax='frontend', layout='bshd', value_dim=4)
func.func @emitter_frontend_bshd_dv(%q: memref<1x4x2x2x8xf32>, %k: memref<1x4x2x8xf32>, %off: memref<1xi64>, %mask: memref<4x4xf32>, %v: memref<1x4x2x4xf32>, %out: memref<1x4x2x2x4xf32>) attributes {llvm.emit_c_interface} {
  %qt = bufferization.to_tensor %q restrict : memref<1x4x2x2x8xf32> to tensor<1x4x2x2x8xf32>
  %kt = bufferization.to_tensor %k restrict : memref<1x4x2x8xf32> to tensor<1x4x2x8xf32>
  %ot = bufferization.to_tensor %off restrict : memref<1xi64> to tensor<1xi64>
  %qre = tensor.empty() : tensor<1x4x2x2x8xf32>
  %qr = rope.apply ins(%qt : tensor<1x4x2x2x8xf32>) offset(%ot : tensor<1xi64>) outs(%qre : tensor<1x4x2x2x8xf32>) {layout = #rope.layout<half>, freqs = #rope.default<base = 10000.0>, token_dims = array<i64: 0, 1>} -> tensor<1x4x2x2x8xf32>
  %kre = tensor.empty() : tensor<1x4x2x8xf32>
  %kr = rope.apply ins(%kt : tensor<1x4x2x8xf32>) outs(%kre : tensor<1x4x2x8xf32>) {layout = #rope.layout<half>, freqs = #rope.default<base = 10000.0>, token_dims = array<i64: 0, 1>} -> tensor<1x4x2x8xf32>
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<1x2x2x4x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%se : tensor<1x2x2x4x4xf32>) -> tensor<1x2x2x4x4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, g, m, n, d) -> (b, m, h, g, d)>, affine_map<(b, h, g, m, n, d) -> (b, n, h, d)>, affine_map<(b, h, g, m, n, d) -> (b, h, g, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%qr, %kr : tensor<1x4x2x2x8xf32>, tensor<1x4x2x8xf32>) outs(%acc : tensor<1x2x2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<1x2x2x4x4xf32>
  %scale = arith.constant 0.25 : f32
  %scaled_e = tensor.empty() : tensor<1x2x2x4x4xf32>
  %scaled = linalg.generic {indexing_maps = [affine_map<(b, h, g, m, n) -> (b, h, g, m, n)>, affine_map<(b, h, g, m, n) -> (b, h, g, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x2x2x4x4xf32>) outs(%scaled_e : tensor<1x2x2x4x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %scale : f32
    linalg.yield %y : f32
  } -> tensor<1x2x2x4x4xf32>
  %maskt = bufferization.to_tensor %mask restrict : memref<4x4xf32> to tensor<4x4xf32>
  %masked_e = tensor.empty() : tensor<1x2x2x4x4xf32>
  %masked = linalg.generic {indexing_maps = [affine_map<(b, h, g, m, n) -> (b, h, g, m, n)>, affine_map<(b, h, g, m, n) -> (m, n)>, affine_map<(b, h, g, m, n) -> (b, h, g, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%scaled, %maskt : tensor<1x2x2x4x4xf32>, tensor<4x4xf32>) outs(%masked_e : tensor<1x2x2x4x4xf32>) {
  ^bb0(%x: f32, %a: f32, %o: f32):
    %y = arith.addf %x, %a : f32
    linalg.yield %y : f32
  } -> tensor<1x2x2x4x4xf32>
  %vt = bufferization.to_tensor %v restrict : memref<1x4x2x4xf32> to tensor<1x4x2x4xf32>
  %pe = tensor.empty() : tensor<1x2x2x4x4xf32>
  %rows = tensor.empty() : tensor<1x2x2x4xf32>
  %sm_zero = arith.constant 0.0 : f32
  %sum0 = linalg.fill ins(%sm_zero : f32) outs(%rows : tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
  %sm_ninf = arith.constant 0xFF800000 : f32
  %max0 = linalg.fill ins(%sm_ninf : f32) outs(%rows : tensor<1x2x2x4xf32>) -> tensor<1x2x2x4xf32>
  %max = linalg.reduce { arith.maximumf } ins(%masked : tensor<1x2x2x4x4xf32>) outs(%max0 : tensor<1x2x2x4xf32>) dimensions = [4]
  %max_b = linalg.broadcast ins(%max : tensor<1x2x2x4xf32>) outs(%pe : tensor<1x2x2x4x4xf32>) dimensions = [4]
  %shifted = linalg.sub ins(%masked, %max_b : tensor<1x2x2x4x4xf32>, tensor<1x2x2x4x4xf32>) outs(%pe : tensor<1x2x2x4x4xf32>) -> tensor<1x2x2x4x4xf32>
  %exp = linalg.exp ins(%shifted : tensor<1x2x2x4x4xf32>) outs(%pe : tensor<1x2x2x4x4xf32>) -> tensor<1x2x2x4x4xf32>
  %sum = linalg.reduce { arith.addf } ins(%exp : tensor<1x2x2x4x4xf32>) outs(%sum0 : tensor<1x2x2x4xf32>) dimensions = [4]
  %sum_b = linalg.broadcast ins(%sum : tensor<1x2x2x4xf32>) outs(%pe : tensor<1x2x2x4x4xf32>) dimensions = [4]
  %p = linalg.div ins(%exp, %sum_b : tensor<1x2x2x4x4xf32>, tensor<1x2x2x4x4xf32>) outs(%pe : tensor<1x2x2x4x4xf32>) -> tensor<1x2x2x4x4xf32>
  %oe = tensor.empty() : tensor<1x4x2x2x4xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x4x2x2x4xf32>) -> tensor<1x4x2x2x4xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, g, m, n, e) -> (b, h, g, m, n)>, affine_map<(b, h, g, m, n, e) -> (b, n, h, e)>, affine_map<(b, h, g, m, n, e) -> (b, m, h, g, e)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%p, %vt : tensor<1x2x2x4x4xf32>, tensor<1x4x2x4xf32>) outs(%oacc : tensor<1x4x2x2x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %x = arith.mulf %a, %b : f32
    %y = arith.addf %c, %x : f32
    linalg.yield %y : f32
  } -> tensor<1x4x2x2x4xf32>
  bufferization.materialize_in_destination %o in restrict writable %out : (tensor<1x4x2x2x4xf32>, memref<1x4x2x2x4xf32>) -> ()
  return
}

// -----

// torch-mlir's SDPA: q and k each times sqrt(scale) = 0.5 (scale 0.25), a
// causal mask from iota comparisons (key j - query i <= 0, Sq = Sk) made
// additive (0 / -inf), the softmax written out, and the guard zeroing rows
// whose scores are all -inf (none: with the causal mask every row sees key
// 0, so the guard goes).
// CHECK-LABEL: func.func @sdpa_causal_guard(
// CHECK-SAME: %[[QA:[a-z0-9]+]]: tensor<1x2x4x8xf32>, %[[KA:[a-z0-9]+]]: tensor<1x2x4x8xf32>, %[[VA:[a-z0-9]+]]: tensor<1x2x4x8xf32>
// CHECK: rope.attention ins(%[[QA]], %[[KA]], %[[VA]] : {{.*}}) outs(%{{.*}} : tensor<1x2x4x8xf32>) attributes {causal, indexing_maps = [{{.*}}], scale = 2.500000e-01 : f64}
// CHECK-NOT: linalg.
// CHECK-NOT: arith.

#s_q = affine_map<(b, h, m, n, d) -> (b, h, m, d)>
#s_k = affine_map<(b, h, m, n, d) -> (b, h, n, d)>
#s_o = affine_map<(b, h, m, n, d) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#row = affine_map<(b, h, m, n) -> (b, h, m)>
#mn = affine_map<(b, h, m, n) -> (m, n)>
#p = affine_map<(b, h, m, n, e) -> (b, h, m, n)>
#v = affine_map<(b, h, m, n, e) -> (b, h, n, e)>
#o = affine_map<(b, h, m, n, e) -> (b, h, m, e)>
#i1 = affine_map<(i) -> (i)>
#col = affine_map<(i, j) -> (j)>
#rw = affine_map<(i, j) -> (i)>
#ij = affine_map<(i, j) -> (i, j)>
func.func @sdpa_causal_guard(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %half = arith.constant 0.5 : f32
  %qe = tensor.empty() : tensor<1x2x4x8xf32>
  %qs = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%q : tensor<1x2x4x8xf32>) outs(%qe : tensor<1x2x4x8xf32>) {
  ^bb0(%x: f32, %y: f32):
    %0 = arith.mulf %x, %half : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x8xf32>
  %ks = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%k : tensor<1x2x4x8xf32>) outs(%qe : tensor<1x2x4x8xf32>) {
  ^bb0(%x: f32, %y: f32):
    %0 = arith.mulf %x, %half : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x8xf32>
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<1x2x4x4xf32>
  %sacc = linalg.fill ins(%zero : f32) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = linalg.generic {indexing_maps = [#s_q, #s_k, #s_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%qs, %ks : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%sacc : tensor<1x2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x4xf32>
  %c0_i64 = arith.constant 0 : i64
  %ie4 = tensor.empty() : tensor<4xi64>
  %iota = linalg.generic {indexing_maps = [#i1], iterator_types = ["parallel"]} outs(%ie4 : tensor<4xi64>) {
  ^bb0(%y: i64):
    %0 = linalg.index 0 : index
    %1 = arith.index_cast %0 : index to i64
    linalg.yield %1 : i64
  } -> tensor<4xi64>
  %be = tensor.empty() : tensor<4x4xi1>
  %visible = linalg.generic {indexing_maps = [#col, #rw, #ij], iterator_types = ["parallel", "parallel"]} ins(%iota, %iota : tensor<4xi64>, tensor<4xi64>) outs(%be : tensor<4x4xi1>) {
  ^bb0(%kj: i64, %qi: i64, %y: i1):
    %d = arith.subi %kj, %qi : i64
    %0 = arith.cmpi sle, %d, %c0_i64 : i64
    linalg.yield %0 : i1
  } -> tensor<4x4xi1>
  %ninf0 = arith.constant 0xFF800000 : f32
  %fe = tensor.empty() : tensor<4x4xf32>
  %bias = linalg.generic {indexing_maps = [#ij, #ij], iterator_types = ["parallel", "parallel"]} ins(%visible : tensor<4x4xi1>) outs(%fe : tensor<4x4xf32>) {
  ^bb0(%c: i1, %y: f32):
    %0 = arith.select %c, %zero, %ninf0 : f32
    linalg.yield %0 : f32
  } -> tensor<4x4xf32>
  %masked = linalg.generic {indexing_maps = [#id, #mn, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %bias : tensor<1x2x4x4xf32>, tensor<4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %a: f32, %y: f32):
    %0 = arith.addf %x, %a : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %re = tensor.empty() : tensor<1x2x4xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%re : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%masked : tensor<1x2x4x4xf32>) outs(%minit : tensor<1x2x4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %0 = arith.maximumf %x, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4xf32>
  %exp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%masked, %max : tensor<1x2x4x4xf32>, tensor<1x2x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %r: f32, %y: f32):
    %0 = arith.subf %x, %r : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x4xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%re : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%exp : tensor<1x2x4x4xf32>) outs(%sinit : tensor<1x2x4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %0 = arith.addf %x, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4xf32>
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%exp, %sum : tensor<1x2x4x4xf32>, tensor<1x2x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %r: f32, %y: f32):
    %0 = arith.divf %x, %r : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %fninf = arith.constant 0xFFF0000000000000 : f64
  %ie = tensor.empty() : tensor<1x2x4x4xi1>
  %isinf = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%masked : tensor<1x2x4x4xf32>) outs(%ie : tensor<1x2x4x4xi1>) {
  ^bb0(%x: f32, %y: i1):
    %0 = arith.extf %x : f32 to f64
    %1 = arith.cmpf oeq, %0, %fninf : f64
    linalg.yield %1 : i1
  } -> tensor<1x2x4x4xi1>
  %true = arith.constant true
  %ae = tensor.empty() : tensor<1x2x4xi1>
  %ainit = linalg.fill ins(%true : i1) outs(%ae : tensor<1x2x4xi1>) -> tensor<1x2x4xi1>
  %all = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%isinf : tensor<1x2x4x4xi1>) outs(%ainit : tensor<1x2x4xi1>) {
  ^bb0(%x: i1, %acc: i1):
    %0 = arith.andi %x, %acc : i1
    linalg.yield %0 : i1
  } -> tensor<1x2x4xi1>
  %zeros = arith.constant dense<0.0> : tensor<1x2x4x4xf32>
  %guarded = linalg.generic {indexing_maps = [#row, #id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%all, %zeros, %p : tensor<1x2x4xi1>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%c: i1, %z: f32, %x: f32, %y: f32):
    %0 = arith.select %c, %z, %x : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %oe = tensor.empty() : tensor<1x2x4x8xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%guarded, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) outs(%oacc : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Off by one: key j - query i <= 1 sees one key ahead. Not causal, so the
// computed mask stays, as the mask operand (exact).
// CHECK-LABEL: func.func @causal_off_by_one_kept_as_mask(
// CHECK: %[[BIAS:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<4x4xi1>) outs(%{{.*}} : tensor<4x4xf32>)
// CHECK: rope.attention ins({{.*}}) mask(%[[BIAS]] : tensor<4x4xf32>) outs({{.*}}) attributes {indexing_maps = [{{.*}}], scale = 2.500000e-01 : f64}

#s_q = affine_map<(b, h, m, n, d) -> (b, h, m, d)>
#s_k = affine_map<(b, h, m, n, d) -> (b, h, n, d)>
#s_o = affine_map<(b, h, m, n, d) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#row = affine_map<(b, h, m, n) -> (b, h, m)>
#mn = affine_map<(b, h, m, n) -> (m, n)>
#p = affine_map<(b, h, m, n, e) -> (b, h, m, n)>
#v = affine_map<(b, h, m, n, e) -> (b, h, n, e)>
#o = affine_map<(b, h, m, n, e) -> (b, h, m, e)>
#i1 = affine_map<(i) -> (i)>
#col = affine_map<(i, j) -> (j)>
#rw = affine_map<(i, j) -> (i)>
#ij = affine_map<(i, j) -> (i, j)>
func.func @causal_off_by_one_kept_as_mask(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %half = arith.constant 0.5 : f32
  %qe = tensor.empty() : tensor<1x2x4x8xf32>
  %qs = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%q : tensor<1x2x4x8xf32>) outs(%qe : tensor<1x2x4x8xf32>) {
  ^bb0(%x: f32, %y: f32):
    %0 = arith.mulf %x, %half : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x8xf32>
  %ks = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%k : tensor<1x2x4x8xf32>) outs(%qe : tensor<1x2x4x8xf32>) {
  ^bb0(%x: f32, %y: f32):
    %0 = arith.mulf %x, %half : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x8xf32>
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<1x2x4x4xf32>
  %sacc = linalg.fill ins(%zero : f32) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = linalg.generic {indexing_maps = [#s_q, #s_k, #s_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%qs, %ks : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%sacc : tensor<1x2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x4xf32>
  %c0_i64 = arith.constant 0 : i64
  %c1_i64 = arith.constant 1 : i64
  %ie4 = tensor.empty() : tensor<4xi64>
  %iota = linalg.generic {indexing_maps = [#i1], iterator_types = ["parallel"]} outs(%ie4 : tensor<4xi64>) {
  ^bb0(%y: i64):
    %0 = linalg.index 0 : index
    %1 = arith.index_cast %0 : index to i64
    linalg.yield %1 : i64
  } -> tensor<4xi64>
  %be = tensor.empty() : tensor<4x4xi1>
  %visible = linalg.generic {indexing_maps = [#col, #rw, #ij], iterator_types = ["parallel", "parallel"]} ins(%iota, %iota : tensor<4xi64>, tensor<4xi64>) outs(%be : tensor<4x4xi1>) {
  ^bb0(%kj: i64, %qi: i64, %y: i1):
    %d = arith.subi %kj, %qi : i64
    %0 = arith.cmpi sle, %d, %c1_i64 : i64
    linalg.yield %0 : i1
  } -> tensor<4x4xi1>
  %ninf0 = arith.constant 0xFF800000 : f32
  %fe = tensor.empty() : tensor<4x4xf32>
  %bias = linalg.generic {indexing_maps = [#ij, #ij], iterator_types = ["parallel", "parallel"]} ins(%visible : tensor<4x4xi1>) outs(%fe : tensor<4x4xf32>) {
  ^bb0(%c: i1, %y: f32):
    %0 = arith.select %c, %zero, %ninf0 : f32
    linalg.yield %0 : f32
  } -> tensor<4x4xf32>
  %masked = linalg.generic {indexing_maps = [#id, #mn, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %bias : tensor<1x2x4x4xf32>, tensor<4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %a: f32, %y: f32):
    %0 = arith.addf %x, %a : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %re = tensor.empty() : tensor<1x2x4xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%re : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%masked : tensor<1x2x4x4xf32>) outs(%minit : tensor<1x2x4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %0 = arith.maximumf %x, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4xf32>
  %exp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%masked, %max : tensor<1x2x4x4xf32>, tensor<1x2x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %r: f32, %y: f32):
    %0 = arith.subf %x, %r : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x4xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%re : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%exp : tensor<1x2x4x4xf32>) outs(%sinit : tensor<1x2x4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %0 = arith.addf %x, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4xf32>
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%exp, %sum : tensor<1x2x4x4xf32>, tensor<1x2x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %r: f32, %y: f32):
    %0 = arith.divf %x, %r : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %oe = tensor.empty() : tensor<1x2x4x8xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) outs(%oacc : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// A boolean mask [B, 1, Sq, Sk] selecting the scores or -inf (JAX's where):
// the i1 mask, its unit head dim dropped.
// CHECK-LABEL: func.func @i1_mask(
// CHECK-SAME: %[[MA:[a-z0-9]+]]: tensor<1x1x4x4xi1>
// CHECK: %[[M:.*]] = tensor.collapse_shape %[[MA]] {{\[}}[0], [1, 2], [3]] : tensor<1x1x4x4xi1> into tensor<1x4x4xi1>
// CHECK: rope.attention ins({{.*}}) mask(%[[M]] : tensor<1x4x4xi1>)
// CHECK-NOT: linalg.

#s_q = affine_map<(b, h, m, n, d) -> (b, h, m, d)>
#s_k = affine_map<(b, h, m, n, d) -> (b, h, n, d)>
#s_o = affine_map<(b, h, m, n, d) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#row = affine_map<(b, h, m, n) -> (b, h, m)>
#mn = affine_map<(b, h, m, n) -> (m, n)>
#p = affine_map<(b, h, m, n, e) -> (b, h, m, n)>
#v = affine_map<(b, h, m, n, e) -> (b, h, n, e)>
#o = affine_map<(b, h, m, n, e) -> (b, h, m, e)>
#b0mn = affine_map<(b, h, m, n) -> (b, 0, m, n)>
func.func @i1_mask(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %mask: tensor<1x1x4x4xi1>) -> tensor<1x2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<1x2x4x4xf32>
  %sacc = linalg.fill ins(%zero : f32) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = linalg.generic {indexing_maps = [#s_q, #s_k, #s_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%sacc : tensor<1x2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x4xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %masked = linalg.generic {indexing_maps = [#b0mn, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%mask, %s : tensor<1x1x4x4xi1>, tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%c: i1, %x: f32, %y: f32):
    %0 = arith.select %c, %x, %ninf : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %p = linalg.softmax dimension(3) ins(%masked : tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %oe = tensor.empty() : tensor<1x2x4x8xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) outs(%oacc : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// torch SDPA with a boolean mask: select(mask, 0, -inf) added, and the guard
// zeroing fully masked rows. Raised with the i1 mask; the guard stays, as a
// test on the mask alone (a row is zero where every key of it is masked),
// since the op gives NaN there.
// CHECK-LABEL: func.func @bool_mask_guard(
// CHECK-SAME: %[[MA:[a-z0-9]+]]: tensor<1x1x4x4xi1>
// CHECK: %[[M:.*]] = tensor.collapse_shape %[[MA]] {{\[}}[0], [1, 2], [3]] : tensor<1x1x4x4xi1> into tensor<1x4x4xi1>
// CHECK: %[[A:.*]] = rope.attention ins({{.*}}) mask(%[[M]] : tensor<1x4x4xi1>)
// CHECK: %[[ROWS:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[M]] : tensor<1x4x4xi1>) outs(%{{.*}} : tensor<1x4xi1>)
// CHECK: arith.xori
// CHECK: arith.andi
// CHECK: %[[Z:.*]] = linalg.generic {{.*}} ins(%[[A]], %[[ROWS]] : tensor<1x2x4x8xf32>, tensor<1x4xi1>)
// CHECK: arith.select
// CHECK: return %[[Z]]

#s_q = affine_map<(b, h, m, n, d) -> (b, h, m, d)>
#s_k = affine_map<(b, h, m, n, d) -> (b, h, n, d)>
#s_o = affine_map<(b, h, m, n, d) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#row = affine_map<(b, h, m, n) -> (b, h, m)>
#mn = affine_map<(b, h, m, n) -> (m, n)>
#p = affine_map<(b, h, m, n, e) -> (b, h, m, n)>
#v = affine_map<(b, h, m, n, e) -> (b, h, n, e)>
#o = affine_map<(b, h, m, n, e) -> (b, h, m, e)>
#b0mn = affine_map<(b, h, m, n) -> (b, 0, m, n)>
func.func @bool_mask_guard(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %mask: tensor<1x1x4x4xi1>) -> tensor<1x2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<1x2x4x4xf32>
  %sacc = linalg.fill ins(%zero : f32) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = linalg.generic {indexing_maps = [#s_q, #s_k, #s_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%sacc : tensor<1x2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x4xf32>
  %minf = arith.constant 0xFF800000 : f32
  %be = tensor.empty() : tensor<1x1x4x4xf32>
  %bias = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%mask : tensor<1x1x4x4xi1>) outs(%be : tensor<1x1x4x4xf32>) {
  ^bb0(%c: i1, %y: f32):
    %0 = arith.select %c, %zero, %minf : f32
    linalg.yield %0 : f32
  } -> tensor<1x1x4x4xf32>
  %masked = linalg.generic {indexing_maps = [#id, #b0mn, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %bias : tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %a: f32, %y: f32):
    %0 = arith.addf %x, %a : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %re = tensor.empty() : tensor<1x2x4xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%re : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%masked : tensor<1x2x4x4xf32>) outs(%minit : tensor<1x2x4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %0 = arith.maximumf %x, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4xf32>
  %exp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%masked, %max : tensor<1x2x4x4xf32>, tensor<1x2x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %r: f32, %y: f32):
    %0 = arith.subf %x, %r : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x4xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%re : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%exp : tensor<1x2x4x4xf32>) outs(%sinit : tensor<1x2x4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %0 = arith.addf %x, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4xf32>
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%exp, %sum : tensor<1x2x4x4xf32>, tensor<1x2x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %r: f32, %y: f32):
    %0 = arith.divf %x, %r : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %fninf = arith.constant 0xFFF0000000000000 : f64
  %ie = tensor.empty() : tensor<1x2x4x4xi1>
  %isinf = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%masked : tensor<1x2x4x4xf32>) outs(%ie : tensor<1x2x4x4xi1>) {
  ^bb0(%x: f32, %y: i1):
    %0 = arith.extf %x : f32 to f64
    %1 = arith.cmpf oeq, %0, %fninf : f64
    linalg.yield %1 : i1
  } -> tensor<1x2x4x4xi1>
  %true = arith.constant true
  %ae = tensor.empty() : tensor<1x2x4xi1>
  %ainit = linalg.fill ins(%true : i1) outs(%ae : tensor<1x2x4xi1>) -> tensor<1x2x4xi1>
  %all = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%isinf : tensor<1x2x4x4xi1>) outs(%ainit : tensor<1x2x4xi1>) {
  ^bb0(%x: i1, %acc: i1):
    %0 = arith.andi %x, %acc : i1
    linalg.yield %0 : i1
  } -> tensor<1x2x4xi1>
  %zeros = arith.constant dense<0.0> : tensor<1x2x4x4xf32>
  %guarded = linalg.generic {indexing_maps = [#row, #id, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%all, %zeros, %p : tensor<1x2x4xi1>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%c: i1, %z: f32, %x: f32, %y: f32):
    %0 = arith.select %c, %z, %x : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %oe = tensor.empty() : tensor<1x2x4x8xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%guarded, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) outs(%oacc : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Sq = 2 < Sk = 6, a mask keeping key j <= query i + 4 (= Sk - Sq): the
// op's bottom-right causal alignment, spelled j - 4 <= i with an unsigned
// compare of non-negative values.
// CHECK-LABEL: func.func @causal_bottom_right(
// CHECK: rope.attention ins({{.*}} : tensor<1x2x2x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) outs({{.*}}) attributes {causal, indexing_maps = [{{.*}}], scale = 1.000000e+00 : f64}
// CHECK-NOT: linalg.

#q = affine_map<(b, h, m, n, d) -> (b, h, m, d)>
#k = affine_map<(b, h, m, n, d) -> (b, h, n, d)>
#s = affine_map<(b, h, m, n, d) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#mn = affine_map<(b, h, m, n) -> (m, n)>
#bmn = affine_map<(b, h, m, n) -> (b, m, n)>
#p = affine_map<(b, h, m, n, e) -> (b, h, m, n)>
#v = affine_map<(b, h, m, n, e) -> (b, h, n, e)>
#o = affine_map<(b, h, m, n, e) -> (b, h, m, e)>
#i1 = affine_map<(i) -> (i)>
#col = affine_map<(i, j) -> (j)>
#rw = affine_map<(i, j) -> (i)>
#ij = affine_map<(i, j) -> (i, j)>
func.func @causal_bottom_right(%q: tensor<1x2x2x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>) -> tensor<1x2x2x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %se = tensor.empty() : tensor<1x2x2x6xf32>
  %sacc = linalg.fill ins(%zero : f32) outs(%se : tensor<1x2x2x6xf32>) -> tensor<1x2x2x6xf32>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x2x8xf32>, tensor<1x2x6x8xf32>) outs(%sacc : tensor<1x2x2x6xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x2x6xf32>
  %i6 = tensor.empty() : tensor<6xi64>
  %iota6 = linalg.generic {indexing_maps = [#i1], iterator_types = ["parallel"]} outs(%i6 : tensor<6xi64>) {
  ^bb0(%y: i64):
    %0 = linalg.index 0 : index
    %1 = arith.index_cast %0 : index to i64
    linalg.yield %1 : i64
  } -> tensor<6xi64>
  %i2 = tensor.empty() : tensor<2xi64>
  %iota2 = linalg.generic {indexing_maps = [#i1], iterator_types = ["parallel"]} outs(%i2 : tensor<2xi64>) {
  ^bb0(%y: i64):
    %0 = linalg.index 0 : index
    %1 = arith.index_cast %0 : index to i64
    linalg.yield %1 : i64
  } -> tensor<2xi64>
  %me = tensor.empty() : tensor<2x6xf32>
  %bias = linalg.generic {indexing_maps = [#col, #rw, #ij], iterator_types = ["parallel", "parallel"]} ins(%iota6, %iota2 : tensor<6xi64>, tensor<2xi64>) outs(%me : tensor<2x6xf32>) {
  ^bb0(%kj: i64, %qi: i64, %y: f32):
    %c4 = arith.constant 4 : i64
    %qi4 = arith.addi %qi, %c4 : i64
    %keep = arith.cmpi ule, %kj, %qi4 : i64
    %sel = arith.select %keep, %zero, %ninf : f32
    linalg.yield %sel : f32
  } -> tensor<2x6xf32>
  %masked = linalg.generic {indexing_maps = [#id, #mn, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %bias : tensor<1x2x2x6xf32>, tensor<2x6xf32>) outs(%se : tensor<1x2x2x6xf32>) {
  ^bb0(%x: f32, %a: f32, %y: f32):
    %0 = arith.addf %x, %a : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x2x6xf32>
  %p = linalg.softmax dimension(3) ins(%masked : tensor<1x2x2x6xf32>) outs(%se : tensor<1x2x2x6xf32>) -> tensor<1x2x2x6xf32>
  %oe = tensor.empty() : tensor<1x2x2x8xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x2x2x8xf32>) -> tensor<1x2x2x8xf32>
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%p, %v : tensor<1x2x2x6xf32>, tensor<1x2x6x8xf32>) outs(%oacc : tensor<1x2x2x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x2x8xf32>
  return %o : tensor<1x2x2x8xf32>
}

// -----

// The same mask aligned top-left (key j <= query i): not the op's causal
// (Sk != Sq), kept as the mask tensor.
// CHECK-LABEL: func.func @causal_top_left_kept_as_mask(
// CHECK: %[[BIAS:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x6xf32>)
// CHECK: rope.attention ins({{.*}}) mask(%[[BIAS]] : tensor<2x6xf32>) outs({{.*}}) attributes {indexing_maps = [{{.*}}], scale = 1.000000e+00 : f64}

#q = affine_map<(b, h, m, n, d) -> (b, h, m, d)>
#k = affine_map<(b, h, m, n, d) -> (b, h, n, d)>
#s = affine_map<(b, h, m, n, d) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#mn = affine_map<(b, h, m, n) -> (m, n)>
#bmn = affine_map<(b, h, m, n) -> (b, m, n)>
#p = affine_map<(b, h, m, n, e) -> (b, h, m, n)>
#v = affine_map<(b, h, m, n, e) -> (b, h, n, e)>
#o = affine_map<(b, h, m, n, e) -> (b, h, m, e)>
#i1 = affine_map<(i) -> (i)>
#col = affine_map<(i, j) -> (j)>
#rw = affine_map<(i, j) -> (i)>
#ij = affine_map<(i, j) -> (i, j)>
func.func @causal_top_left_kept_as_mask(%q: tensor<1x2x2x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>) -> tensor<1x2x2x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %se = tensor.empty() : tensor<1x2x2x6xf32>
  %sacc = linalg.fill ins(%zero : f32) outs(%se : tensor<1x2x2x6xf32>) -> tensor<1x2x2x6xf32>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x2x8xf32>, tensor<1x2x6x8xf32>) outs(%sacc : tensor<1x2x2x6xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x2x6xf32>
  %i6 = tensor.empty() : tensor<6xi64>
  %iota6 = linalg.generic {indexing_maps = [#i1], iterator_types = ["parallel"]} outs(%i6 : tensor<6xi64>) {
  ^bb0(%y: i64):
    %0 = linalg.index 0 : index
    %1 = arith.index_cast %0 : index to i64
    linalg.yield %1 : i64
  } -> tensor<6xi64>
  %i2 = tensor.empty() : tensor<2xi64>
  %iota2 = linalg.generic {indexing_maps = [#i1], iterator_types = ["parallel"]} outs(%i2 : tensor<2xi64>) {
  ^bb0(%y: i64):
    %0 = linalg.index 0 : index
    %1 = arith.index_cast %0 : index to i64
    linalg.yield %1 : i64
  } -> tensor<2xi64>
  %me = tensor.empty() : tensor<2x6xf32>
  %bias = linalg.generic {indexing_maps = [#col, #rw, #ij], iterator_types = ["parallel", "parallel"]} ins(%iota6, %iota2 : tensor<6xi64>, tensor<2xi64>) outs(%me : tensor<2x6xf32>) {
  ^bb0(%kj: i64, %qi: i64, %y: f32):
    %keep = arith.cmpi sle, %kj, %qi : i64
    %sel = arith.select %keep, %zero, %ninf : f32
    linalg.yield %sel : f32
  } -> tensor<2x6xf32>
  %masked = linalg.generic {indexing_maps = [#id, #mn, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %bias : tensor<1x2x2x6xf32>, tensor<2x6xf32>) outs(%se : tensor<1x2x2x6xf32>) {
  ^bb0(%x: f32, %a: f32, %y: f32):
    %0 = arith.addf %x, %a : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x2x6xf32>
  %p = linalg.softmax dimension(3) ins(%masked : tensor<1x2x2x6xf32>) outs(%se : tensor<1x2x2x6xf32>) -> tensor<1x2x2x6xf32>
  %oe = tensor.empty() : tensor<1x2x2x8xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x2x2x8xf32>) -> tensor<1x2x2x8xf32>
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%p, %v : tensor<1x2x2x6xf32>, tensor<1x2x6x8xf32>) outs(%oacc : tensor<1x2x2x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x2x8xf32>
  return %o : tensor<1x2x2x8xf32>
}

// -----

// A sliding window of 3 keys under the causal mask: j <= i + 4 and
// j > i + 4 - 3.
// CHECK-LABEL: func.func @causal_window(
// CHECK: rope.attention {{.*}} attributes {causal, indexing_maps = [{{.*}}], scale = 1.000000e+00 : f64, window = 3 : i64}

#q = affine_map<(b, h, m, n, d) -> (b, h, m, d)>
#k = affine_map<(b, h, m, n, d) -> (b, h, n, d)>
#s = affine_map<(b, h, m, n, d) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#mn = affine_map<(b, h, m, n) -> (m, n)>
#bmn = affine_map<(b, h, m, n) -> (b, m, n)>
#p = affine_map<(b, h, m, n, e) -> (b, h, m, n)>
#v = affine_map<(b, h, m, n, e) -> (b, h, n, e)>
#o = affine_map<(b, h, m, n, e) -> (b, h, m, e)>
#i1 = affine_map<(i) -> (i)>
#col = affine_map<(i, j) -> (j)>
#rw = affine_map<(i, j) -> (i)>
#ij = affine_map<(i, j) -> (i, j)>
func.func @causal_window(%q: tensor<1x2x2x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>) -> tensor<1x2x2x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %se = tensor.empty() : tensor<1x2x2x6xf32>
  %sacc = linalg.fill ins(%zero : f32) outs(%se : tensor<1x2x2x6xf32>) -> tensor<1x2x2x6xf32>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x2x8xf32>, tensor<1x2x6x8xf32>) outs(%sacc : tensor<1x2x2x6xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x2x6xf32>
  %i6 = tensor.empty() : tensor<6xi64>
  %iota6 = linalg.generic {indexing_maps = [#i1], iterator_types = ["parallel"]} outs(%i6 : tensor<6xi64>) {
  ^bb0(%y: i64):
    %0 = linalg.index 0 : index
    %1 = arith.index_cast %0 : index to i64
    linalg.yield %1 : i64
  } -> tensor<6xi64>
  %i2 = tensor.empty() : tensor<2xi64>
  %iota2 = linalg.generic {indexing_maps = [#i1], iterator_types = ["parallel"]} outs(%i2 : tensor<2xi64>) {
  ^bb0(%y: i64):
    %0 = linalg.index 0 : index
    %1 = arith.index_cast %0 : index to i64
    linalg.yield %1 : i64
  } -> tensor<2xi64>
  %me = tensor.empty() : tensor<2x6xf32>
  %bias = linalg.generic {indexing_maps = [#col, #rw, #ij], iterator_types = ["parallel", "parallel"]} ins(%iota6, %iota2 : tensor<6xi64>, tensor<2xi64>) outs(%me : tensor<2x6xf32>) {
  ^bb0(%kj: i64, %qi: i64, %y: f32):
    %c4 = arith.constant 4 : i64
    %c1 = arith.constant 1 : i64
    %d = arith.subi %kj, %qi : i64
    %causal = arith.cmpi sle, %d, %c4 : i64
    %inwindow = arith.cmpi sgt, %d, %c1 : i64
    %keep = arith.andi %causal, %inwindow : i1
    %sel = arith.select %keep, %zero, %ninf : f32
    linalg.yield %sel : f32
  } -> tensor<2x6xf32>
  %masked = linalg.generic {indexing_maps = [#id, #mn, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %bias : tensor<1x2x2x6xf32>, tensor<2x6xf32>) outs(%se : tensor<1x2x2x6xf32>) {
  ^bb0(%x: f32, %a: f32, %y: f32):
    %0 = arith.addf %x, %a : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x2x6xf32>
  %p = linalg.softmax dimension(3) ins(%masked : tensor<1x2x2x6xf32>) outs(%se : tensor<1x2x2x6xf32>) -> tensor<1x2x2x6xf32>
  %oe = tensor.empty() : tensor<1x2x2x8xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x2x2x8xf32>) -> tensor<1x2x2x8xf32>
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%p, %v : tensor<1x2x2x6xf32>, tensor<1x2x6x8xf32>) outs(%oacc : tensor<1x2x2x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x2x8xf32>
  return %o : tensor<1x2x2x8xf32>
}

// -----

// Per-row query positions (decode with a longer cache): key j is kept where
// j <= positions[b, i]. Raised as causal with query_positions.
// CHECK-LABEL: func.func @query_positions(
// CHECK-SAME: %[[POSA:[a-z0-9]+]]: tensor<1x2xi64>
// CHECK: rope.attention ins({{.*}}) query_positions(%[[POSA]] : tensor<1x2xi64>) outs({{.*}}) attributes {causal, indexing_maps = [{{.*}}, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2)>, {{.*}}], scale = 1.000000e+00 : f64}

#q = affine_map<(b, h, m, n, d) -> (b, h, m, d)>
#k = affine_map<(b, h, m, n, d) -> (b, h, n, d)>
#s = affine_map<(b, h, m, n, d) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#mn = affine_map<(b, h, m, n) -> (m, n)>
#bmn = affine_map<(b, h, m, n) -> (b, m, n)>
#p = affine_map<(b, h, m, n, e) -> (b, h, m, n)>
#v = affine_map<(b, h, m, n, e) -> (b, h, n, e)>
#o = affine_map<(b, h, m, n, e) -> (b, h, m, e)>
#i1 = affine_map<(i) -> (i)>
#col = affine_map<(i, j) -> (j)>
#rw = affine_map<(i, j) -> (i)>
#ij = affine_map<(i, j) -> (i, j)>
#pm = affine_map<(b, m, n) -> (b, m)>
#bmn3 = affine_map<(b, m, n) -> (b, m, n)>
func.func @query_positions(%q: tensor<1x2x2x8xf32>, %k: tensor<1x2x6x8xf32>, %v: tensor<1x2x6x8xf32>, %positions: tensor<1x2xi64>) -> tensor<1x2x2x8xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %se = tensor.empty() : tensor<1x2x2x6xf32>
  %sacc = linalg.fill ins(%zero : f32) outs(%se : tensor<1x2x2x6xf32>) -> tensor<1x2x2x6xf32>
  %s = linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x2x8xf32>, tensor<1x2x6x8xf32>) outs(%sacc : tensor<1x2x2x6xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x2x6xf32>
  %i6 = tensor.empty() : tensor<6xi64>
  %iota6 = linalg.generic {indexing_maps = [#i1], iterator_types = ["parallel"]} outs(%i6 : tensor<6xi64>) {
  ^bb0(%y: i64):
    %0 = linalg.index 0 : index
    %1 = arith.index_cast %0 : index to i64
    linalg.yield %1 : i64
  } -> tensor<6xi64>
  %i2 = tensor.empty() : tensor<2xi64>
  %iota2 = linalg.generic {indexing_maps = [#i1], iterator_types = ["parallel"]} outs(%i2 : tensor<2xi64>) {
  ^bb0(%y: i64):
    %0 = linalg.index 0 : index
    %1 = arith.index_cast %0 : index to i64
    linalg.yield %1 : i64
  } -> tensor<2xi64>
  %me = tensor.empty() : tensor<1x2x6xf32>
  %bias = linalg.generic {indexing_maps = [#pm, #bmn3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%positions : tensor<1x2xi64>) outs(%me : tensor<1x2x6xf32>) {
  ^bb0(%pos: i64, %y: f32):
    %j = linalg.index 2 : index
    %ji = arith.index_cast %j : index to i64
    %keep = arith.cmpi sle, %ji, %pos : i64
    %sel = arith.select %keep, %zero, %ninf : f32
    linalg.yield %sel : f32
  } -> tensor<1x2x6xf32>
  %masked = linalg.generic {indexing_maps = [#id, #bmn, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %bias : tensor<1x2x2x6xf32>, tensor<1x2x6xf32>) outs(%se : tensor<1x2x2x6xf32>) {
  ^bb0(%x: f32, %a: f32, %y: f32):
    %0 = arith.addf %x, %a : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x2x6xf32>
  %p = linalg.softmax dimension(3) ins(%masked : tensor<1x2x2x6xf32>) outs(%se : tensor<1x2x2x6xf32>) -> tensor<1x2x2x6xf32>
  %oe = tensor.empty() : tensor<1x2x2x8xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x2x2x8xf32>) -> tensor<1x2x2x8xf32>
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%p, %v : tensor<1x2x2x6xf32>, tensor<1x2x6x8xf32>) outs(%oacc : tensor<1x2x2x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x2x8xf32>
  return %o : tensor<1x2x2x8xf32>
}

// -----

// bf16 attention with an f32 softmax (HF eager's softmax(dtype=float32)):
// the scores in bf16, extf, softmax, truncf, P·V in bf16. The op computes
// scores and softmax in f32 (its accumulator type for bf16).
// CHECK-LABEL: func.func @bf16_upcast(
// CHECK: rope.attention ins({{.*}} : tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>) outs(%{{.*}} : tensor<1x2x4x8xbf16>) attributes {indexing_maps = [{{.*}}], scale = 1.250000e-01 : f64}
// CHECK-NOT: linalg.

#s_q = affine_map<(b, h, m, n, d) -> (b, h, m, d)>
#s_k = affine_map<(b, h, m, n, d) -> (b, h, n, d)>
#s_o = affine_map<(b, h, m, n, d) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#p = affine_map<(b, h, m, n, e) -> (b, h, m, n)>
#v = affine_map<(b, h, m, n, e) -> (b, h, n, e)>
#o = affine_map<(b, h, m, n, e) -> (b, h, m, e)>
func.func @bf16_upcast(%q: tensor<1x2x4x8xbf16>, %k: tensor<1x2x4x8xbf16>, %v: tensor<1x2x4x8xbf16>) -> tensor<1x2x4x8xbf16> {
  %zero = arith.constant 0.0 : bf16
  %se = tensor.empty() : tensor<1x2x4x4xbf16>
  %sacc = linalg.fill ins(%zero : bf16) outs(%se : tensor<1x2x4x4xbf16>) -> tensor<1x2x4x4xbf16>
  %s = linalg.generic {indexing_maps = [#s_q, #s_k, #s_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>) outs(%sacc : tensor<1x2x4x4xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %c: bf16):
    %0 = arith.mulf %a, %b : bf16
    %1 = arith.addf %c, %0 : bf16
    linalg.yield %1 : bf16
  } -> tensor<1x2x4x4xbf16>
  %scale = arith.constant 0.125 : bf16
  %scaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x2x4x4xbf16>) outs(%se : tensor<1x2x4x4xbf16>) {
  ^bb0(%x: bf16, %y: bf16):
    %0 = arith.mulf %x, %scale : bf16
    linalg.yield %0 : bf16
  } -> tensor<1x2x4x4xbf16>
  %fe = tensor.empty() : tensor<1x2x4x4xf32>
  %wide = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled : tensor<1x2x4x4xbf16>) outs(%fe : tensor<1x2x4x4xf32>) {
  ^bb0(%x: bf16, %y: f32):
    %0 = arith.extf %x : bf16 to f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %pf = linalg.softmax dimension(3) ins(%wide : tensor<1x2x4x4xf32>) outs(%fe : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%pf : tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xbf16>) {
  ^bb0(%x: f32, %y: bf16):
    %0 = arith.truncf %x : f32 to bf16
    linalg.yield %0 : bf16
  } -> tensor<1x2x4x4xbf16>
  %oe = tensor.empty() : tensor<1x2x4x8xbf16>
  %oacc = linalg.fill ins(%zero : bf16) outs(%oe : tensor<1x2x4x8xbf16>) -> tensor<1x2x4x8xbf16>
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%p, %v : tensor<1x2x4x4xbf16>, tensor<1x2x4x8xbf16>) outs(%oacc : tensor<1x2x4x8xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %c: bf16):
    %0 = arith.mulf %a, %b : bf16
    %1 = arith.addf %c, %0 : bf16
    linalg.yield %1 : bf16
  } -> tensor<1x2x4x8xbf16>
  return %o : tensor<1x2x4x8xbf16>
}

// -----

// bf16 attention as torch-mlir exports a bf16 model's matmuls: each
// contraction of bf16 operands accumulates into f32 and a generic truncates
// it to bf16. The scores' truncf is a rounding the op leaves out (it
// computes the scores in f32); P·V's f32 result is the op's, the truncf to
// bf16 stays after it (rope-tile-attention folds it into the output type).
// CHECK-LABEL: func.func @bf16_f32_contractions(
// CHECK-NOT: linalg.
// CHECK: %[[R:.*]] = rope.attention ins({{.*}} : tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>) outs(%{{.*}} : tensor<1x2x4x8xf32>) attributes {indexing_maps = [{{.*}}], scale = 1.250000e-01 : f64}
// CHECK: linalg.generic {{.*}} ins(%[[R]] : tensor<1x2x4x8xf32>)
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK-NEXT: linalg.yield
// CHECK-NEXT: }
// CHECK-NOT: linalg.
// CHECK: return

#s_q = affine_map<(b, h, m, n, d) -> (b, h, m, d)>
#s_k = affine_map<(b, h, m, n, d) -> (b, h, n, d)>
#s_o = affine_map<(b, h, m, n, d) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#p = affine_map<(b, h, m, n, e) -> (b, h, m, n)>
#v = affine_map<(b, h, m, n, e) -> (b, h, n, e)>
#o = affine_map<(b, h, m, n, e) -> (b, h, m, e)>
func.func @bf16_f32_contractions(%q: tensor<1x2x4x8xbf16>, %k: tensor<1x2x4x8xbf16>, %v: tensor<1x2x4x8xbf16>) -> tensor<1x2x4x8xbf16> {
  %zero = arith.constant 0.0 : f32
  %fe = tensor.empty() : tensor<1x2x4x4xf32>
  %sacc = linalg.fill ins(%zero : f32) outs(%fe : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = linalg.generic {indexing_maps = [#s_q, #s_k, #s_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>) outs(%sacc : tensor<1x2x4x4xf32>) {
  ^bb0(%a: bf16, %b: bf16, %c: f32):
    %a32 = arith.extf %a : bf16 to f32
    %b32 = arith.extf %b : bf16 to f32
    %0 = arith.mulf %a32, %b32 : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x4xf32>
  %se = tensor.empty() : tensor<1x2x4x4xbf16>
  %sb = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xbf16>) {
  ^bb0(%x: f32, %y: bf16):
    %0 = arith.truncf %x : f32 to bf16
    linalg.yield %0 : bf16
  } -> tensor<1x2x4x4xbf16>
  %scale = arith.constant 0.125 : bf16
  %scaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sb : tensor<1x2x4x4xbf16>) outs(%se : tensor<1x2x4x4xbf16>) {
  ^bb0(%x: bf16, %y: bf16):
    %0 = arith.mulf %x, %scale : bf16
    linalg.yield %0 : bf16
  } -> tensor<1x2x4x4xbf16>
  %wide = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled : tensor<1x2x4x4xbf16>) outs(%fe : tensor<1x2x4x4xf32>) {
  ^bb0(%x: bf16, %y: f32):
    %0 = arith.extf %x : bf16 to f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %pf = linalg.softmax dimension(3) ins(%wide : tensor<1x2x4x4xf32>) outs(%fe : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%pf : tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xbf16>) {
  ^bb0(%x: f32, %y: bf16):
    %0 = arith.truncf %x : f32 to bf16
    linalg.yield %0 : bf16
  } -> tensor<1x2x4x4xbf16>
  %oe = tensor.empty() : tensor<1x2x4x8xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%p, %v : tensor<1x2x4x4xbf16>, tensor<1x2x4x8xbf16>) outs(%oacc : tensor<1x2x4x8xf32>) {
  ^bb0(%a: bf16, %b: bf16, %c: f32):
    %a32 = arith.extf %a : bf16 to f32
    %b32 = arith.extf %b : bf16 to f32
    %0 = arith.mulf %a32, %b32 : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x8xf32>
  %be = tensor.empty() : tensor<1x2x4x8xbf16>
  %ob = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%o : tensor<1x2x4x8xf32>) outs(%be : tensor<1x2x4x8xbf16>) {
  ^bb0(%x: f32, %y: bf16):
    %0 = arith.truncf %x : f32 to bf16
    linalg.yield %0 : bf16
  } -> tensor<1x2x4x8xbf16>
  return %ob : tensor<1x2x4x8xbf16>
}

// -----

// torch's SDPA on bf16 computes in f32: q, k and v widened by generics of
// their own, the bf16 mask widened inside the generic that adds it. Both
// widenings are exact: the op reads the bf16 tensors and widens them itself.
// CHECK-LABEL: func.func @bf16_sdpa_widened(
// CHECK-SAME: %[[QA:[a-z0-9]+]]: tensor<1x2x4x8xbf16>, %[[KA:[a-z0-9]+]]: tensor<1x2x4x8xbf16>, %[[VA:[a-z0-9]+]]: tensor<1x2x4x8xbf16>, %[[MA:[a-z0-9]+]]: tensor<4x4xbf16>
// CHECK: rope.attention ins(%[[QA]], %[[KA]], %[[VA]] : tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>, tensor<1x2x4x8xbf16>) mask(%[[MA]] : tensor<4x4xbf16>) outs(%{{.*}} : tensor<1x2x4x8xf32>)

#s_q = affine_map<(b, h, m, n, d) -> (b, h, m, d)>
#s_k = affine_map<(b, h, m, n, d) -> (b, h, n, d)>
#s_o = affine_map<(b, h, m, n, d) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#mn = affine_map<(b, h, m, n) -> (m, n)>
#p = affine_map<(b, h, m, n, e) -> (b, h, m, n)>
#v = affine_map<(b, h, m, n, e) -> (b, h, n, e)>
#o = affine_map<(b, h, m, n, e) -> (b, h, m, e)>
func.func @bf16_sdpa_widened(%q: tensor<1x2x4x8xbf16>, %k: tensor<1x2x4x8xbf16>, %v: tensor<1x2x4x8xbf16>, %mask: tensor<4x4xbf16>) -> tensor<1x2x4x8xbf16> {
  %zero = arith.constant 0.0 : f32
  %we = tensor.empty() : tensor<1x2x4x8xf32>
  %qw = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%q : tensor<1x2x4x8xbf16>) outs(%we : tensor<1x2x4x8xf32>) {
  ^bb0(%x: bf16, %y: f32):
    %0 = arith.extf %x : bf16 to f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x8xf32>
  %kw = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%k : tensor<1x2x4x8xbf16>) outs(%we : tensor<1x2x4x8xf32>) {
  ^bb0(%x: bf16, %y: f32):
    %0 = arith.extf %x : bf16 to f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x8xf32>
  %vw = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%v : tensor<1x2x4x8xbf16>) outs(%we : tensor<1x2x4x8xf32>) {
  ^bb0(%x: bf16, %y: f32):
    %0 = arith.extf %x : bf16 to f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x8xf32>
  %fe = tensor.empty() : tensor<1x2x4x4xf32>
  %sacc = linalg.fill ins(%zero : f32) outs(%fe : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = linalg.generic {indexing_maps = [#s_q, #s_k, #s_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%qw, %kw : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%sacc : tensor<1x2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x4xf32>
  %scale = arith.constant 0.125 : f32
  %masked = linalg.generic {indexing_maps = [#id, #mn, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %mask : tensor<1x2x4x4xf32>, tensor<4x4xbf16>) outs(%fe : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %m: bf16, %y: f32):
    %0 = arith.mulf %x, %scale : f32
    %1 = arith.extf %m : bf16 to f32
    %2 = arith.addf %0, %1 : f32
    linalg.yield %2 : f32
  } -> tensor<1x2x4x4xf32>
  %pf = linalg.softmax dimension(3) ins(%masked : tensor<1x2x4x4xf32>) outs(%fe : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %oe = tensor.empty() : tensor<1x2x4x8xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%pf, %vw : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) outs(%oacc : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x8xf32>
  %be = tensor.empty() : tensor<1x2x4x8xbf16>
  %ob = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%o : tensor<1x2x4x8xf32>) outs(%be : tensor<1x2x4x8xbf16>) {
  ^bb0(%x: f32, %y: bf16):
    %0 = arith.truncf %x : f32 to bf16
    linalg.yield %0 : bf16
  } -> tensor<1x2x4x8xbf16>
  return %ob : tensor<1x2x4x8xbf16>
}

// -----

// One head, named ops: K transposed by linalg.transpose, linalg.matmul for
// both contractions, Dv = 16 != D = 8, Sq = 4 != Sk = 6. Loops (m, k1, k2, n).
// CHECK-LABEL: func.func @matmul_transpose(
// CHECK-SAME: %[[QA:[a-z0-9]+]]: tensor<4x8xf32>, %[[KA:[a-z0-9]+]]: tensor<6x8xf32>, %[[VA:[a-z0-9]+]]: tensor<6x16xf32>
// CHECK: rope.attention ins(%[[QA]], %[[KA]], %[[VA]] : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x16xf32>) outs(%{{.*}} : tensor<4x16xf32>) attributes {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1)>, affine_map<(d0, d1, d2, d3) -> (d2, d1)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3)>], scale = 5.000000e-01 : f64}
// CHECK-NOT: linalg.

func.func @matmul_transpose(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x16xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %te = tensor.empty() : tensor<8x6xf32>
  %kt = linalg.transpose ins(%k : tensor<6x8xf32>) outs(%te : tensor<8x6xf32>) permutation = [1, 0]
  %se = tensor.empty() : tensor<4x6xf32>
  %sacc = linalg.fill ins(%zero : f32) outs(%se : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.matmul ins(%q, %kt : tensor<4x8xf32>, tensor<8x6xf32>) outs(%sacc : tensor<4x6xf32>) -> tensor<4x6xf32>
  %half = arith.constant dense<0.5> : tensor<4x6xf32>
  %scaled = linalg.mul ins(%s, %half : tensor<4x6xf32>, tensor<4x6xf32>) outs(%se : tensor<4x6xf32>) -> tensor<4x6xf32>
  %p = linalg.softmax dimension(1) ins(%scaled : tensor<4x6xf32>) outs(%se : tensor<4x6xf32>) -> tensor<4x6xf32>
  %oe = tensor.empty() : tensor<4x16xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<4x16xf32>) -> tensor<4x16xf32>
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x16xf32>) outs(%oacc : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %o : tensor<4x16xf32>
}

// -----

// Gemma 2's softcap between the scale and the mask: 5 * tanh(s / 5), kept
// as the op's score region (in the accumulator type).
// CHECK-LABEL: func.func @softcap(
// CHECK: rope.attention ins({{.*}}) mask(%{{.*}} : tensor<4x4xf32>) outs(%{{.*}} : tensor<1x2x4x8xf32>) attributes {indexing_maps = [{{.*}}], scale = 0.35355338454246521 : f64} {
// CHECK-NEXT: ^bb0(%[[S:.*]]: f32, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index):
// CHECK-NEXT: %[[C:.*]] = arith.constant 5.000000e+00 : f32
// CHECK-NEXT: %[[C2:.*]] = arith.constant 5.000000e+00 : f32
// CHECK-NEXT: %[[D:.*]] = arith.divf %[[S]], %[[C]] : f32
// CHECK-NEXT: %[[T:.*]] = math.tanh %[[D]] : f32
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[T]], %[[C2]] : f32
// CHECK-NEXT: rope.yield %[[R]] : f32
// CHECK-NOT: linalg.

#s_q = affine_map<(b, h, m, n, d) -> (b, h, m, d)>
#s_k = affine_map<(b, h, m, n, d) -> (b, h, n, d)>
#s_o = affine_map<(b, h, m, n, d) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#row = affine_map<(b, h, m, n) -> (b, h, m)>
#mn = affine_map<(b, h, m, n) -> (m, n)>
#p = affine_map<(b, h, m, n, e) -> (b, h, m, n)>
#v = affine_map<(b, h, m, n, e) -> (b, h, n, e)>
#o = affine_map<(b, h, m, n, e) -> (b, h, m, e)>
func.func @softcap(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %mask: tensor<4x4xf32>) -> tensor<1x2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<1x2x4x4xf32>
  %sacc = linalg.fill ins(%zero : f32) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = linalg.generic {indexing_maps = [#s_q, #s_k, #s_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%sacc : tensor<1x2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x4xf32>
  %scale = arith.constant 0.35355339 : f32
  %cap = arith.constant 5.0 : f32
  %scaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %0 = arith.mulf %x, %scale : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %capped = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled : tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %0 = arith.divf %x, %cap : f32
    %1 = math.tanh %0 : f32
    %2 = arith.mulf %1, %cap : f32
    linalg.yield %2 : f32
  } -> tensor<1x2x4x4xf32>
  %masked = linalg.generic {indexing_maps = [#id, #mn, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%capped, %mask : tensor<1x2x4x4xf32>, tensor<4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %a: f32, %y: f32):
    %0 = arith.addf %x, %a : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %p = linalg.softmax dimension(3) ins(%masked : tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %oe = tensor.empty() : tensor<1x2x4x8xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) outs(%oacc : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Negative (one line: dimension(3) -> dimension(2)): the softmax is over the
// queries, not the keys P·V sums.
// CHECK-LABEL: func.func @softmax_over_queries(
// CHECK-NOT: rope.attention

#s_q = affine_map<(b, h, m, n, d) -> (b, h, m, d)>
#s_k = affine_map<(b, h, m, n, d) -> (b, h, n, d)>
#s_o = affine_map<(b, h, m, n, d) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#row = affine_map<(b, h, m, n) -> (b, h, m)>
#mn = affine_map<(b, h, m, n) -> (m, n)>
#p = affine_map<(b, h, m, n, e) -> (b, h, m, n)>
#v = affine_map<(b, h, m, n, e) -> (b, h, n, e)>
#o = affine_map<(b, h, m, n, e) -> (b, h, m, e)>
func.func @softmax_over_queries(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %mask: tensor<4x4xf32>) -> tensor<1x2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<1x2x4x4xf32>
  %sacc = linalg.fill ins(%zero : f32) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = linalg.generic {indexing_maps = [#s_q, #s_k, #s_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%sacc : tensor<1x2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x4xf32>
  %scale = arith.constant 0.35355339 : f32
  %scaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %0 = arith.mulf %x, %scale : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %masked = linalg.generic {indexing_maps = [#id, #mn, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled, %mask : tensor<1x2x4x4xf32>, tensor<4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %a: f32, %y: f32):
    %0 = arith.addf %x, %a : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %p = linalg.softmax dimension(2) ins(%masked : tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %oe = tensor.empty() : tensor<1x2x4x8xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  // expected-remark @+1 {{rope-raise: attention not raised: the softmax is over dim 2, not over the keys P·V sums (dim 3)}}
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) outs(%oacc : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Negative: the softcap applied after the mask (the op caps, then masks).
// CHECK-LABEL: func.func @softcap_after_mask(
// CHECK-NOT: rope.attention

#s_q = affine_map<(b, h, m, n, d) -> (b, h, m, d)>
#s_k = affine_map<(b, h, m, n, d) -> (b, h, n, d)>
#s_o = affine_map<(b, h, m, n, d) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#row = affine_map<(b, h, m, n) -> (b, h, m)>
#mn = affine_map<(b, h, m, n) -> (m, n)>
#p = affine_map<(b, h, m, n, e) -> (b, h, m, n)>
#v = affine_map<(b, h, m, n, e) -> (b, h, n, e)>
#o = affine_map<(b, h, m, n, e) -> (b, h, m, e)>
func.func @softcap_after_mask(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %mask: tensor<4x4xf32>) -> tensor<1x2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<1x2x4x4xf32>
  %sacc = linalg.fill ins(%zero : f32) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = linalg.generic {indexing_maps = [#s_q, #s_k, #s_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%sacc : tensor<1x2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x4xf32>
  %scale = arith.constant 0.35355339 : f32
  %cap = arith.constant 5.0 : f32
  %scaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %0 = arith.mulf %x, %scale : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %masked = linalg.generic {indexing_maps = [#id, #mn, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled, %mask : tensor<1x2x4x4xf32>, tensor<4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %a: f32, %y: f32):
    %0 = arith.addf %x, %a : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %capped = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%masked : tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %0 = arith.divf %x, %cap : f32
    %1 = math.tanh %0 : f32
    %2 = arith.mulf %1, %cap : f32
    linalg.yield %2 : f32
  } -> tensor<1x2x4x4xf32>
  %p = linalg.softmax dimension(3) ins(%capped : tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %oe = tensor.empty() : tensor<1x2x4x8xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  // expected-remark @+1 {{rope-raise: attention not raised: the softmax input is not (a mask over) constant times Q·Kᵀ contracted over the channels}}
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) outs(%oacc : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Negative: the mask added to the probabilities, after the softmax.
// CHECK-LABEL: func.func @mask_after_softmax(
// CHECK-NOT: rope.attention

#s_q = affine_map<(b, h, m, n, d) -> (b, h, m, d)>
#s_k = affine_map<(b, h, m, n, d) -> (b, h, n, d)>
#s_o = affine_map<(b, h, m, n, d) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#row = affine_map<(b, h, m, n) -> (b, h, m)>
#mn = affine_map<(b, h, m, n) -> (m, n)>
#p = affine_map<(b, h, m, n, e) -> (b, h, m, n)>
#v = affine_map<(b, h, m, n, e) -> (b, h, n, e)>
#o = affine_map<(b, h, m, n, e) -> (b, h, m, e)>
func.func @mask_after_softmax(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %mask: tensor<4x4xf32>) -> tensor<1x2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<1x2x4x4xf32>
  %sacc = linalg.fill ins(%zero : f32) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = linalg.generic {indexing_maps = [#s_q, #s_k, #s_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%sacc : tensor<1x2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x4xf32>
  %scale = arith.constant 0.35355339 : f32
  %scaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %0 = arith.mulf %x, %scale : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %p = linalg.softmax dimension(3) ins(%scaled : tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %masked = linalg.generic {indexing_maps = [#id, #mn, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%p, %mask : tensor<1x2x4x4xf32>, tensor<4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %a: f32, %y: f32):
    %0 = arith.addf %x, %a : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %oe = tensor.empty() : tensor<1x2x4x8xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  // expected-remark @+1 {{rope-raise: attention not raised: neither operand of the contraction is a softmax (over the dim it sums: P·V)}}
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%masked, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) outs(%oacc : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Negative: the scale applied to the probabilities, after the softmax.
// CHECK-LABEL: func.func @scale_after_softmax(
// CHECK-NOT: rope.attention

#s_q = affine_map<(b, h, m, n, d) -> (b, h, m, d)>
#s_k = affine_map<(b, h, m, n, d) -> (b, h, n, d)>
#s_o = affine_map<(b, h, m, n, d) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#row = affine_map<(b, h, m, n) -> (b, h, m)>
#mn = affine_map<(b, h, m, n) -> (m, n)>
#p = affine_map<(b, h, m, n, e) -> (b, h, m, n)>
#v = affine_map<(b, h, m, n, e) -> (b, h, n, e)>
#o = affine_map<(b, h, m, n, e) -> (b, h, m, e)>
func.func @scale_after_softmax(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %mask: tensor<4x4xf32>) -> tensor<1x2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<1x2x4x4xf32>
  %sacc = linalg.fill ins(%zero : f32) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = linalg.generic {indexing_maps = [#s_q, #s_k, #s_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%sacc : tensor<1x2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x4xf32>
  %scale = arith.constant 0.35355339 : f32
  %masked = linalg.generic {indexing_maps = [#id, #mn, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %mask : tensor<1x2x4x4xf32>, tensor<4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %a: f32, %y: f32):
    %0 = arith.addf %x, %a : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %p = linalg.softmax dimension(3) ins(%masked : tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %scaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%p : tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %0 = arith.mulf %x, %scale : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %oe = tensor.empty() : tensor<1x2x4x8xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  // expected-remark @+1 {{rope-raise: attention not raised: neither operand of the contraction is a softmax (over the dim it sums: P·V)}}
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%scaled, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) outs(%oacc : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Negative: the mask added before the scale (the op scales, then masks: the
// same only for masks of 0 and -inf).
// CHECK-LABEL: func.func @mask_before_scale(
// CHECK-NOT: rope.attention

#s_q = affine_map<(b, h, m, n, d) -> (b, h, m, d)>
#s_k = affine_map<(b, h, m, n, d) -> (b, h, n, d)>
#s_o = affine_map<(b, h, m, n, d) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#row = affine_map<(b, h, m, n) -> (b, h, m)>
#mn = affine_map<(b, h, m, n) -> (m, n)>
#p = affine_map<(b, h, m, n, e) -> (b, h, m, n)>
#v = affine_map<(b, h, m, n, e) -> (b, h, n, e)>
#o = affine_map<(b, h, m, n, e) -> (b, h, m, e)>
func.func @mask_before_scale(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %mask: tensor<4x4xf32>) -> tensor<1x2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<1x2x4x4xf32>
  %sacc = linalg.fill ins(%zero : f32) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = linalg.generic {indexing_maps = [#s_q, #s_k, #s_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%sacc : tensor<1x2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x4xf32>
  %scale = arith.constant 0.35355339 : f32
  %masked = linalg.generic {indexing_maps = [#id, #mn, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s, %mask : tensor<1x2x4x4xf32>, tensor<4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %a: f32, %y: f32):
    %0 = arith.addf %x, %a : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %scaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%masked : tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %0 = arith.mulf %x, %scale : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %p = linalg.softmax dimension(3) ins(%scaled : tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %oe = tensor.empty() : tensor<1x2x4x8xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  // expected-remark @+1 {{rope-raise: attention not raised: the scale is applied after a mask; rope.attention scales first}}
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) outs(%oacc : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Negative (one line: the row sum's map and iterators): the divisor sums
// exp(x - max) over the queries.
// CHECK-LABEL: func.func @sum_over_queries(
// CHECK-NOT: rope.attention

#s_q = affine_map<(b, h, m, n, d) -> (b, h, m, d)>
#s_k = affine_map<(b, h, m, n, d) -> (b, h, n, d)>
#s_o = affine_map<(b, h, m, n, d) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#row = affine_map<(b, h, m, n) -> (b, h, m)>
#mn = affine_map<(b, h, m, n) -> (m, n)>
#p = affine_map<(b, h, m, n, e) -> (b, h, m, n)>
#v = affine_map<(b, h, m, n, e) -> (b, h, n, e)>
#o = affine_map<(b, h, m, n, e) -> (b, h, m, e)>
#rowm = affine_map<(b, h, m, n) -> (b, h, n)>
func.func @sum_over_queries(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %mask: tensor<4x4xf32>) -> tensor<1x2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<1x2x4x4xf32>
  %sacc = linalg.fill ins(%zero : f32) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = linalg.generic {indexing_maps = [#s_q, #s_k, #s_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%sacc : tensor<1x2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x4xf32>
  %scale = arith.constant 0.35355339 : f32
  %scaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %0 = arith.mulf %x, %scale : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %masked = linalg.generic {indexing_maps = [#id, #mn, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled, %mask : tensor<1x2x4x4xf32>, tensor<4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %a: f32, %y: f32):
    %0 = arith.addf %x, %a : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %re = tensor.empty() : tensor<1x2x4xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%re : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%masked : tensor<1x2x4x4xf32>) outs(%minit : tensor<1x2x4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %0 = arith.maximumf %x, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4xf32>
  %exp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%masked, %max : tensor<1x2x4x4xf32>, tensor<1x2x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %r: f32, %y: f32):
    %0 = arith.subf %x, %r : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x4xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%re : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #rowm], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%exp : tensor<1x2x4x4xf32>) outs(%sinit : tensor<1x2x4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %0 = arith.addf %x, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4xf32>
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%exp, %sum : tensor<1x2x4x4xf32>, tensor<1x2x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %r: f32, %y: f32):
    %0 = arith.divf %x, %r : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %oe = tensor.empty() : tensor<1x2x4x8xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  // expected-remark @+1 {{rope-raise: attention not raised: the divisor is not the sum of the numerator over the keys P·V sums}}
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) outs(%oacc : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Negative (one line: the row max's map and iterators): the max subtracted
// is over the queries.
// CHECK-LABEL: func.func @max_over_queries(
// CHECK-NOT: rope.attention

#s_q = affine_map<(b, h, m, n, d) -> (b, h, m, d)>
#s_k = affine_map<(b, h, m, n, d) -> (b, h, n, d)>
#s_o = affine_map<(b, h, m, n, d) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#row = affine_map<(b, h, m, n) -> (b, h, m)>
#mn = affine_map<(b, h, m, n) -> (m, n)>
#p = affine_map<(b, h, m, n, e) -> (b, h, m, n)>
#v = affine_map<(b, h, m, n, e) -> (b, h, n, e)>
#o = affine_map<(b, h, m, n, e) -> (b, h, m, e)>
#rowm = affine_map<(b, h, m, n) -> (b, h, n)>
func.func @max_over_queries(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %mask: tensor<4x4xf32>) -> tensor<1x2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<1x2x4x4xf32>
  %sacc = linalg.fill ins(%zero : f32) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = linalg.generic {indexing_maps = [#s_q, #s_k, #s_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%sacc : tensor<1x2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x4xf32>
  %scale = arith.constant 0.35355339 : f32
  %scaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %0 = arith.mulf %x, %scale : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %masked = linalg.generic {indexing_maps = [#id, #mn, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled, %mask : tensor<1x2x4x4xf32>, tensor<4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %a: f32, %y: f32):
    %0 = arith.addf %x, %a : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %re = tensor.empty() : tensor<1x2x4xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%re : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %max = linalg.generic {indexing_maps = [#id, #rowm], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%masked : tensor<1x2x4x4xf32>) outs(%minit : tensor<1x2x4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %0 = arith.maximumf %x, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4xf32>
  %exp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%masked, %max : tensor<1x2x4x4xf32>, tensor<1x2x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %r: f32, %y: f32):
    %0 = arith.subf %x, %r : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x4xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%re : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%exp : tensor<1x2x4x4xf32>) outs(%sinit : tensor<1x2x4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %0 = arith.addf %x, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4xf32>
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%exp, %sum : tensor<1x2x4x4xf32>, tensor<1x2x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %r: f32, %y: f32):
    %0 = arith.divf %x, %r : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %oe = tensor.empty() : tensor<1x2x4x8xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  // expected-remark @+1 {{rope-raise: attention not raised: the row max is not of x over the keys P·V sums}}
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) outs(%oacc : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Negative (one line: the exp's input): exp(x' - max x) with x' the scores
// before the mask: not a softmax of either.
// CHECK-LABEL: func.func @exp_of_other_scores(
// CHECK-NOT: rope.attention

#s_q = affine_map<(b, h, m, n, d) -> (b, h, m, d)>
#s_k = affine_map<(b, h, m, n, d) -> (b, h, n, d)>
#s_o = affine_map<(b, h, m, n, d) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#row = affine_map<(b, h, m, n) -> (b, h, m)>
#mn = affine_map<(b, h, m, n) -> (m, n)>
#p = affine_map<(b, h, m, n, e) -> (b, h, m, n)>
#v = affine_map<(b, h, m, n, e) -> (b, h, n, e)>
#o = affine_map<(b, h, m, n, e) -> (b, h, m, e)>
#rowm = affine_map<(b, h, m, n) -> (b, h, n)>
func.func @exp_of_other_scores(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %mask: tensor<4x4xf32>) -> tensor<1x2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<1x2x4x4xf32>
  %sacc = linalg.fill ins(%zero : f32) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = linalg.generic {indexing_maps = [#s_q, #s_k, #s_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%sacc : tensor<1x2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x4xf32>
  %scale = arith.constant 0.35355339 : f32
  %scaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %0 = arith.mulf %x, %scale : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %masked = linalg.generic {indexing_maps = [#id, #mn, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled, %mask : tensor<1x2x4x4xf32>, tensor<4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %a: f32, %y: f32):
    %0 = arith.addf %x, %a : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %re = tensor.empty() : tensor<1x2x4xf32>
  %minit = linalg.fill ins(%ninf : f32) outs(%re : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %max = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%masked : tensor<1x2x4x4xf32>) outs(%minit : tensor<1x2x4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %0 = arith.maximumf %x, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4xf32>
  %exp = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled, %max : tensor<1x2x4x4xf32>, tensor<1x2x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %r: f32, %y: f32):
    %0 = arith.subf %x, %r : f32
    %1 = math.exp %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x4xf32>
  %sinit = linalg.fill ins(%zero : f32) outs(%re : tensor<1x2x4xf32>) -> tensor<1x2x4xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%exp : tensor<1x2x4x4xf32>) outs(%sinit : tensor<1x2x4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %0 = arith.addf %x, %acc : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4xf32>
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%exp, %sum : tensor<1x2x4x4xf32>, tensor<1x2x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %r: f32, %y: f32):
    %0 = arith.divf %x, %r : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %oe = tensor.empty() : tensor<1x2x4x8xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  // expected-remark @+1 {{rope-raise: attention not raised: the row max is not of x over the keys P·V sums}}
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) outs(%oacc : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Negative (one line: P's map in P·V): P·V contracts P's query dim, so the
// softmax (over the keys) is not over the dim P·V sums.
// CHECK-LABEL: func.func @pv_over_queries(
// CHECK-NOT: rope.attention

#s_q = affine_map<(b, h, m, n, d) -> (b, h, m, d)>
#s_k = affine_map<(b, h, m, n, d) -> (b, h, n, d)>
#s_o = affine_map<(b, h, m, n, d) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#row = affine_map<(b, h, m, n) -> (b, h, m)>
#mn = affine_map<(b, h, m, n) -> (m, n)>
#p = affine_map<(b, h, m, n, e) -> (b, h, n, m)>
#v = affine_map<(b, h, m, n, e) -> (b, h, n, e)>
#o = affine_map<(b, h, m, n, e) -> (b, h, m, e)>
func.func @pv_over_queries(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %mask: tensor<4x4xf32>) -> tensor<1x2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<1x2x4x4xf32>
  %sacc = linalg.fill ins(%zero : f32) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = linalg.generic {indexing_maps = [#s_q, #s_k, #s_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%sacc : tensor<1x2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x4xf32>
  %scale = arith.constant 0.35355339 : f32
  %scaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %0 = arith.mulf %x, %scale : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %masked = linalg.generic {indexing_maps = [#id, #mn, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled, %mask : tensor<1x2x4x4xf32>, tensor<4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %a: f32, %y: f32):
    %0 = arith.addf %x, %a : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %p = linalg.softmax dimension(3) ins(%masked : tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %oe = tensor.empty() : tensor<1x2x4x8xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  // expected-remark @+1 {{rope-raise: attention not raised: the softmax is over dim 3, not over the keys P·V sums (dim 2)}}
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) outs(%oacc : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Negative (one line: the masked value): JAX's finite -0.7 * f32 max selected
// by a boolean mask that is not provably causal. A fully masked row gets a
// uniform softmax there, NaN in the op.
// CHECK-LABEL: func.func @finite_masked_value(
// CHECK-NOT: rope.attention

#s_q = affine_map<(b, h, m, n, d) -> (b, h, m, d)>
#s_k = affine_map<(b, h, m, n, d) -> (b, h, n, d)>
#s_o = affine_map<(b, h, m, n, d) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#row = affine_map<(b, h, m, n) -> (b, h, m)>
#mn = affine_map<(b, h, m, n) -> (m, n)>
#p = affine_map<(b, h, m, n, e) -> (b, h, m, n)>
#v = affine_map<(b, h, m, n, e) -> (b, h, n, e)>
#o = affine_map<(b, h, m, n, e) -> (b, h, m, e)>
#b0mn = affine_map<(b, h, m, n) -> (b, 0, m, n)>
func.func @finite_masked_value(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %mask: tensor<1x1x4x4xi1>) -> tensor<1x2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<1x2x4x4xf32>
  %sacc = linalg.fill ins(%zero : f32) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = linalg.generic {indexing_maps = [#s_q, #s_k, #s_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%sacc : tensor<1x2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x4xf32>
  %ninf = arith.constant -2.38197633E+38 : f32
  %masked = linalg.generic {indexing_maps = [#b0mn, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%mask, %s : tensor<1x1x4x4xi1>, tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%c: i1, %x: f32, %y: f32):
    %0 = arith.select %c, %x, %ninf : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %p = linalg.softmax dimension(3) ins(%masked : tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %oe = tensor.empty() : tensor<1x2x4x8xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  // expected-remark @+1 {{rope-raise: attention not raised: the masked value is finite and the mask is not a proven causal mask: a fully masked row would differ}}
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) outs(%oacc : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Negative (one line: the masked value): masked scores set to -1, not
// removed.
// CHECK-LABEL: func.func @masked_value_not_minus_inf(
// CHECK-NOT: rope.attention

#s_q = affine_map<(b, h, m, n, d) -> (b, h, m, d)>
#s_k = affine_map<(b, h, m, n, d) -> (b, h, n, d)>
#s_o = affine_map<(b, h, m, n, d) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#row = affine_map<(b, h, m, n) -> (b, h, m)>
#mn = affine_map<(b, h, m, n) -> (m, n)>
#p = affine_map<(b, h, m, n, e) -> (b, h, m, n)>
#v = affine_map<(b, h, m, n, e) -> (b, h, n, e)>
#o = affine_map<(b, h, m, n, e) -> (b, h, m, e)>
#b0mn = affine_map<(b, h, m, n) -> (b, 0, m, n)>
func.func @masked_value_not_minus_inf(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %mask: tensor<1x1x4x4xi1>) -> tensor<1x2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<1x2x4x4xf32>
  %sacc = linalg.fill ins(%zero : f32) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = linalg.generic {indexing_maps = [#s_q, #s_k, #s_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%sacc : tensor<1x2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x4xf32>
  %ninf = arith.constant -1.0 : f32
  %masked = linalg.generic {indexing_maps = [#b0mn, #id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%mask, %s : tensor<1x1x4x4xi1>, tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%c: i1, %x: f32, %y: f32):
    %0 = arith.select %c, %x, %ninf : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %p = linalg.softmax dimension(3) ins(%masked : tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %oe = tensor.empty() : tensor<1x2x4x8xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  // expected-remark @+1 {{rope-raise: attention not raised: the scores are selected against a value that is not -inf (nor a finite value <= -2^100)}}
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) outs(%oacc : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Negative: the probabilities are also returned (output_attentions):
// raising would compute them twice.
// CHECK-LABEL: func.func @probabilities_returned(
// CHECK-NOT: rope.attention

#s_q = affine_map<(b, h, m, n, d) -> (b, h, m, d)>
#s_k = affine_map<(b, h, m, n, d) -> (b, h, n, d)>
#s_o = affine_map<(b, h, m, n, d) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#row = affine_map<(b, h, m, n) -> (b, h, m)>
#mn = affine_map<(b, h, m, n) -> (m, n)>
#p = affine_map<(b, h, m, n, e) -> (b, h, m, n)>
#v = affine_map<(b, h, m, n, e) -> (b, h, n, e)>
#o = affine_map<(b, h, m, n, e) -> (b, h, m, e)>
func.func @probabilities_returned(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %mask: tensor<4x4xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<1x2x4x4xf32>
  %sacc = linalg.fill ins(%zero : f32) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = linalg.generic {indexing_maps = [#s_q, #s_k, #s_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%sacc : tensor<1x2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x4xf32>
  %scale = arith.constant 0.35355339 : f32
  %scaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %0 = arith.mulf %x, %scale : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %masked = linalg.generic {indexing_maps = [#id, #mn, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled, %mask : tensor<1x2x4x4xf32>, tensor<4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %a: f32, %y: f32):
    %0 = arith.addf %x, %a : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %p = linalg.softmax dimension(3) ins(%masked : tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %oe = tensor.empty() : tensor<1x2x4x8xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  // expected-remark @+1 {{rope-raise: attention not raised: an intermediate (linalg.softmax) has users outside the attention (raising would compute it twice)}}
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) outs(%oacc : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x8xf32>
  return %o, %p : tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>
}

// -----

// Negative (one line: P·V's init): P·V added to ones.
// CHECK-LABEL: func.func @pv_accumulates_into_ones(
// CHECK-NOT: rope.attention

#s_q = affine_map<(b, h, m, n, d) -> (b, h, m, d)>
#s_k = affine_map<(b, h, m, n, d) -> (b, h, n, d)>
#s_o = affine_map<(b, h, m, n, d) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#row = affine_map<(b, h, m, n) -> (b, h, m)>
#mn = affine_map<(b, h, m, n) -> (m, n)>
#p = affine_map<(b, h, m, n, e) -> (b, h, m, n)>
#v = affine_map<(b, h, m, n, e) -> (b, h, n, e)>
#o = affine_map<(b, h, m, n, e) -> (b, h, m, e)>
func.func @pv_accumulates_into_ones(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %mask: tensor<4x4xf32>) -> tensor<1x2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<1x2x4x4xf32>
  %sacc = linalg.fill ins(%zero : f32) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = linalg.generic {indexing_maps = [#s_q, #s_k, #s_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%sacc : tensor<1x2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x4xf32>
  %scale = arith.constant 0.35355339 : f32
  %scaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %0 = arith.mulf %x, %scale : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %masked = linalg.generic {indexing_maps = [#id, #mn, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled, %mask : tensor<1x2x4x4xf32>, tensor<4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %a: f32, %y: f32):
    %0 = arith.addf %x, %a : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %p = linalg.softmax dimension(3) ins(%masked : tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %oe = tensor.empty() : tensor<1x2x4x8xf32>
  %one = arith.constant 1.0 : f32
  %oacc = linalg.fill ins(%one : f32) outs(%oe : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  // expected-remark @+1 {{rope-raise: attention not raised: P·V does not accumulate into zeros}}
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) outs(%oacc : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Negative (one line: the scale): a scale that is a function argument, not
// a constant.
// CHECK-LABEL: func.func @runtime_scale(
// CHECK-NOT: rope.attention

#s_q = affine_map<(b, h, m, n, d) -> (b, h, m, d)>
#s_k = affine_map<(b, h, m, n, d) -> (b, h, n, d)>
#s_o = affine_map<(b, h, m, n, d) -> (b, h, m, n)>
#id = affine_map<(b, h, m, n) -> (b, h, m, n)>
#row = affine_map<(b, h, m, n) -> (b, h, m)>
#mn = affine_map<(b, h, m, n) -> (m, n)>
#p = affine_map<(b, h, m, n, e) -> (b, h, m, n)>
#v = affine_map<(b, h, m, n, e) -> (b, h, n, e)>
#o = affine_map<(b, h, m, n, e) -> (b, h, m, e)>
func.func @runtime_scale(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %mask: tensor<4x4xf32>, %scale: f32) -> tensor<1x2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<1x2x4x4xf32>
  %sacc = linalg.fill ins(%zero : f32) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = linalg.generic {indexing_maps = [#s_q, #s_k, #s_o], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%q, %k : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%sacc : tensor<1x2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x4xf32>
  %scaled = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %y: f32):
    %0 = arith.mulf %x, %scale : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %masked = linalg.generic {indexing_maps = [#id, #mn, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%scaled, %mask : tensor<1x2x4x4xf32>, tensor<4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %a: f32, %y: f32):
    %0 = arith.addf %x, %a : f32
    linalg.yield %0 : f32
  } -> tensor<1x2x4x4xf32>
  %p = linalg.softmax dimension(3) ins(%masked : tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %oe = tensor.empty() : tensor<1x2x4x8xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  // expected-remark @+1 {{rope-raise: attention not raised: the softmax input is not (a mask over) constant times Q·Kᵀ contracted over the channels}}
  %o = linalg.generic {indexing_maps = [#p, #v, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%p, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) outs(%oacc : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %0 = arith.mulf %a, %b : f32
    %1 = arith.addf %c, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// A rotation's magnitude joins the scale whatever precedes the rotation (a
// QK-norm) and whichever scheme implies it (LongRoPE's attention_factor, set
// to 1): where the frontend put its own factors (torch-mlir's SDPA
// multiplies q and k by sqrt(scale) each; a fused producer may carry them
// into either rotation) is then no part of the raised form. Scale here:
// 0.5 * 0.5 (q) * 1.25 (k).
// CHECK-LABEL: func.func @magnitudes_join_scale(
// CHECK: %[[QR:.*]] = rope.apply ins(%{{.*}} : tensor<1x2x4x8xf32>) positions(%{{.*}}) norm(%{{.*}} : tensor<8xf32>)
// CHECK-NOT: magnitude
// CHECK-SAME: -> tensor<1x2x4x8xf32>
// CHECK: %[[KR:.*]] = rope.apply ins(%{{.*}} : tensor<1x2x4x8xf32>) positions(%{{.*}})
// CHECK-SAME: attention_factor = 1.000000e+00
// CHECK-NOT: magnitude
// CHECK-SAME: -> tensor<1x2x4x8xf32>
// CHECK: rope.attention ins(%[[QR]], %[[KR]], %{{.*}} : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>)
// CHECK-SAME: scale = 3.125000e-01 : f64
func.func @magnitudes_join_scale(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %pos: tensor<4xi64>, %w: tensor<8xf32>) -> tensor<1x2x4x8xf32> {
  %qre = tensor.empty() : tensor<1x2x4x8xf32>
  %qr = rope.apply ins(%q : tensor<1x2x4x8xf32>) positions(%pos : tensor<4xi64>) norm(%w : tensor<8xf32>) outs(%qre : tensor<1x2x4x8xf32>) {token_dims = array<i64: 2>, magnitude = 0.5, norm_epsilon = 1.0e-06} -> tensor<1x2x4x8xf32>
  %kre = tensor.empty() : tensor<1x2x4x8xf32>
  %kr = rope.apply ins(%k : tensor<1x2x4x8xf32>) positions(%pos : tensor<4xi64>) outs(%kre : tensor<1x2x4x8xf32>) {token_dims = array<i64: 2>, magnitude = 1.25, freqs = #rope.longrope<short_factor = [1.0, 1.5, 1.25, 2.0], long_factor = [2.0, 4.0, 3.0, 8.0], original_max_position_embeddings = 16, attention_factor = 1.25>} -> tensor<1x2x4x8xf32>
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<1x2x4x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>, affine_map<(b, h, m, n, d) -> (b, h, n, d)>, affine_map<(b, h, m, n, d) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%qr, %kr : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%acc : tensor<1x2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x4xf32>
  %scale = arith.constant 0.5 : f32
  %scaled = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %scale : f32
    linalg.yield %y : f32
  } -> tensor<1x2x4x4xf32>
  %pe = tensor.empty() : tensor<1x2x4x4xf32>
  %pr = linalg.softmax dimension(3) ins(%scaled : tensor<1x2x4x4xf32>) outs(%pe : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %oe = tensor.empty() : tensor<1x2x4x8xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, e) -> (b, h, m, n)>, affine_map<(b, h, m, n, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, e) -> (b, h, m, e)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%pr, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) outs(%oacc : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %x = arith.mulf %a, %b : f32
    %y = arith.addf %c, %x : f32
    linalg.yield %y : f32
  } -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// The negative: the rotated K is also returned (a cache would store it), so
// its magnitude stays on it; Q's still joins the scale (0.5 * 0.5).
// CHECK-LABEL: func.func @read_rotation_keeps_magnitude(
// CHECK: %[[QR:.*]] = rope.apply
// CHECK-NOT: magnitude
// CHECK-SAME: -> tensor<1x2x4x8xf32>
// CHECK: %[[KR:.*]] = rope.apply
// CHECK-SAME: attention_factor = 1.250000e+00
// CHECK-SAME: magnitude = 1.250000e+00
// CHECK: rope.attention ins(%[[QR]], %[[KR]], %{{.*}} : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>)
// CHECK-SAME: scale = 2.500000e-01 : f64
func.func @read_rotation_keeps_magnitude(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>, %pos: tensor<4xi64>, %w: tensor<8xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) {
  %qre = tensor.empty() : tensor<1x2x4x8xf32>
  %qr = rope.apply ins(%q : tensor<1x2x4x8xf32>) positions(%pos : tensor<4xi64>) norm(%w : tensor<8xf32>) outs(%qre : tensor<1x2x4x8xf32>) {token_dims = array<i64: 2>, magnitude = 0.5, norm_epsilon = 1.0e-06} -> tensor<1x2x4x8xf32>
  %kre = tensor.empty() : tensor<1x2x4x8xf32>
  %kr = rope.apply ins(%k : tensor<1x2x4x8xf32>) positions(%pos : tensor<4xi64>) outs(%kre : tensor<1x2x4x8xf32>) {token_dims = array<i64: 2>, magnitude = 1.25, freqs = #rope.longrope<short_factor = [1.0, 1.5, 1.25, 2.0], long_factor = [2.0, 4.0, 3.0, 8.0], original_max_position_embeddings = 16, attention_factor = 1.25>} -> tensor<1x2x4x8xf32>
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<1x2x4x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%se : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, d) -> (b, h, m, d)>, affine_map<(b, h, m, n, d) -> (b, h, n, d)>, affine_map<(b, h, m, n, d) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%qr, %kr : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) outs(%acc : tensor<1x2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<1x2x4x4xf32>
  %scale = arith.constant 0.5 : f32
  %scaled = linalg.generic {indexing_maps = [affine_map<(b, h, m, n) -> (b, h, m, n)>, affine_map<(b, h, m, n) -> (b, h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%s : tensor<1x2x4x4xf32>) outs(%se : tensor<1x2x4x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %scale : f32
    linalg.yield %y : f32
  } -> tensor<1x2x4x4xf32>
  %pe = tensor.empty() : tensor<1x2x4x4xf32>
  %pr = linalg.softmax dimension(3) ins(%scaled : tensor<1x2x4x4xf32>) outs(%pe : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %oe = tensor.empty() : tensor<1x2x4x8xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(b, h, m, n, e) -> (b, h, m, n)>, affine_map<(b, h, m, n, e) -> (b, h, n, e)>, affine_map<(b, h, m, n, e) -> (b, h, m, e)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]} ins(%pr, %v : tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>) outs(%oacc : tensor<1x2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %x = arith.mulf %a, %b : f32
    %y = arith.addf %c, %x : f32
    linalg.yield %y : f32
  } -> tensor<1x2x4x8xf32>
  return %o, %kr : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>
}

// -----

// SDPA's sqrt(scale) on q and k moved by linalg-fuse-elementwise-ops into
// the contraction's own payload (a decode step after generalize, fuse,
// fold-unit and canonicalize: q [H, D] against the cache's keys, every key
// visible): the factors are read there, scale 0.5 * 0.5.
// CHECK-LABEL: func.func @factors_in_contraction_payload(
// CHECK: rope.attention ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<2x8x1xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>)
// CHECK-SAME: causal
// CHECK-SAME: scale = 2.500000e-01 : f64
// CHECK-NOT: linalg.generic
func.func @factors_in_contraction_payload(%q: tensor<2x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x8xf32> {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %se = tensor.empty() : tensor<2x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%se : tensor<2x4xf32>) -> tensor<2x4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(h, n, d) -> (h, d)>, affine_map<(h, n, d) -> (h, n, d)>, affine_map<(h, n, d) -> (h, n)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%q, %k : tensor<2x8xf32>, tensor<2x4x8xf32>) outs(%acc : tensor<2x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %kb = arith.mulf %b, %half : f32
    %qa = arith.mulf %a, %half : f32
    %p = arith.mulf %qa, %kb : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %c3 = arith.constant 3 : i64
  %me = tensor.empty() : tensor<4xf32>
  %mask = linalg.generic {indexing_maps = [affine_map<(n) -> (n)>], iterator_types = ["parallel"]} outs(%me : tensor<4xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i64
    %le = arith.cmpi sle, %ii, %c3 : i64
    %m = arith.select %le, %zero, %ninf : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %masked = linalg.generic {indexing_maps = [affine_map<(h, n) -> (h, n)>, affine_map<(h, n) -> (n)>, affine_map<(h, n) -> (h, n)>], iterator_types = ["parallel", "parallel"]} ins(%s, %mask : tensor<2x4xf32>, tensor<4xf32>) outs(%se : tensor<2x4xf32>) {
  ^bb0(%x: f32, %a: f32, %o: f32):
    %y = arith.addf %x, %a : f32
    linalg.yield %y : f32
  } -> tensor<2x4xf32>
  %pe = tensor.empty() : tensor<2x4xf32>
  %pr = linalg.softmax dimension(1) ins(%masked : tensor<2x4xf32>) outs(%pe : tensor<2x4xf32>) -> tensor<2x4xf32>
  %oe = tensor.empty() : tensor<2x8xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<2x8xf32>) -> tensor<2x8xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(h, n, e) -> (h, n)>, affine_map<(h, n, e) -> (h, n, e)>, affine_map<(h, n, e) -> (h, e)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%pr, %v : tensor<2x4xf32>, tensor<2x4x8xf32>) outs(%oacc : tensor<2x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %x = arith.mulf %a, %b : f32
    %y = arith.addf %c, %x : f32
    linalg.yield %y : f32
  } -> tensor<2x8xf32>
  return %o : tensor<2x8xf32>
}


// -----

// SDPA's sqrt(scale) fused by linalg-fuse-elementwise-ops into the generic
// that L2-normalizes Q (Llama 4: q * r per row, then * 0.5): the factor
// joins the scale (0.5 * 0.5), and Q is a copy of that generic yielding its
// value before the factor.
// CHECK-LABEL: func.func @factor_in_query_producer(
// CHECK: %[[QN:.*]] = linalg.generic
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[R:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[XR:.*]] = arith.mulf %[[X]], %[[R]] : f32
// CHECK-NEXT: linalg.yield %[[XR]] : f32
// CHECK: rope.attention ins(%[[QN]], %{{.*}}, %{{.*}} : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>)
// CHECK-SAME: scale = 2.500000e-01 : f64
func.func @factor_in_query_producer(%q: tensor<2x4x8xf32>, %r: tensor<2x4xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %qe = tensor.empty() : tensor<2x4x8xf32>
  %qn = linalg.generic {indexing_maps = [affine_map<(h, m, d) -> (h, m, d)>, affine_map<(h, m, d) -> (h, m)>, affine_map<(h, m, d) -> (h, m, d)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%q, %r : tensor<2x4x8xf32>, tensor<2x4xf32>) outs(%qe : tensor<2x4x8xf32>) {
  ^bb0(%x: f32, %rr: f32, %o: f32):
    %xr = arith.mulf %x, %rr : f32
    %xs = arith.mulf %xr, %half : f32
    linalg.yield %xs : f32
  } -> tensor<2x4x8xf32>
  %se = tensor.empty() : tensor<2x4x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%se : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(h, m, n, d) -> (h, m, d)>, affine_map<(h, m, n, d) -> (h, n, d)>, affine_map<(h, m, n, d) -> (h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%qn, %k : tensor<2x4x8xf32>, tensor<2x4x8xf32>) outs(%acc : tensor<2x4x4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %kb = arith.mulf %b, %half : f32
    %p = arith.mulf %a, %kb : f32
    %y = arith.addf %c, %p : f32
    linalg.yield %y : f32
  } -> tensor<2x4x4xf32>
  %pe = tensor.empty() : tensor<2x4x4xf32>
  %pr = linalg.softmax dimension(2) ins(%s : tensor<2x4x4xf32>) outs(%pe : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %oe = tensor.empty() : tensor<2x4x8xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(h, m, n, e) -> (h, m, n)>, affine_map<(h, m, n, e) -> (h, n, e)>, affine_map<(h, m, n, e) -> (h, m, e)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%pr, %v : tensor<2x4x4xf32>, tensor<2x4x8xf32>) outs(%oacc : tensor<2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %x = arith.mulf %a, %b : f32
    %y = arith.addf %c, %x : f32
    linalg.yield %y : f32
  } -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// Q·Kᵀ contracting the channels as two dims (view_as_real's [D/2, 2], kept
// apart by a host compiler's fusion): one channel loop, Q and K viewed back
// as [..., 8].
// CHECK-LABEL: func.func @split_channels(
// CHECK: %[[Q:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0], [1], [2, 3]] : tensor<2x4x4x2xf32> into tensor<2x4x8xf32>
// CHECK: %[[K:.*]] = tensor.collapse_shape %arg1 {{\[\[}}0], [1], [2, 3]] : tensor<2x4x4x2xf32> into tensor<2x4x8xf32>
// CHECK: rope.attention ins(%[[Q]], %[[K]], %arg2 : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>) {{.*}}scale = 2.500000e-01
func.func @split_channels(%q: tensor<2x4x4x2xf32>, %k: tensor<2x4x4x2xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %quarter = arith.constant 0.25 : f32
  %se = tensor.empty() : tensor<2x4x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%se : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(h, m, n, a, b) -> (h, m, a, b)>, affine_map<(h, m, n, a, b) -> (h, n, a, b)>, affine_map<(h, m, n, a, b) -> (h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%q, %k : tensor<2x4x4x2xf32>, tensor<2x4x4x2xf32>) outs(%acc : tensor<2x4x4xf32>) {
  ^bb0(%x: f32, %y: f32, %c: f32):
    %xs = arith.mulf %x, %quarter : f32
    %p = arith.mulf %xs, %y : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4x4xf32>
  %pe = tensor.empty() : tensor<2x4x4xf32>
  %pr = linalg.softmax dimension(2) ins(%s : tensor<2x4x4xf32>) outs(%pe : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %oe = tensor.empty() : tensor<2x4x8xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %o = linalg.generic {indexing_maps = [affine_map<(h, m, n, e) -> (h, m, n)>, affine_map<(h, m, n, e) -> (h, n, e)>, affine_map<(h, m, n, e) -> (h, m, e)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%pr, %v : tensor<2x4x4xf32>, tensor<2x4x8xf32>) outs(%oacc : tensor<2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %x = arith.mulf %a, %b : f32
    %y = arith.addf %c, %x : f32
    linalg.yield %y : f32
  } -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}

// -----

// Negative: K stores the two channel parts in the other order ([2, 4]
// against Q's [4, 2]): one channel loop would need a transpose of K, so it
// is not raised (read as one loop, K's channels would pair wrongly).
// CHECK-LABEL: func.func @split_channels_other_order(
// CHECK-NOT: rope.attention
func.func @split_channels_other_order(%q: tensor<2x4x4x2xf32>, %k: tensor<2x4x2x4xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %se = tensor.empty() : tensor<2x4x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%se : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(h, m, n, a, b) -> (h, m, a, b)>, affine_map<(h, m, n, a, b) -> (h, n, b, a)>, affine_map<(h, m, n, a, b) -> (h, m, n)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%q, %k : tensor<2x4x4x2xf32>, tensor<2x4x2x4xf32>) outs(%acc : tensor<2x4x4xf32>) {
  ^bb0(%x: f32, %y: f32, %c: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %c, %p : f32
    linalg.yield %r : f32
  } -> tensor<2x4x4xf32>
  %pe = tensor.empty() : tensor<2x4x4xf32>
  %pr = linalg.softmax dimension(2) ins(%s : tensor<2x4x4xf32>) outs(%pe : tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  %oe = tensor.empty() : tensor<2x4x8xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  // expected-remark @+1 {{rope-raise: attention not raised: the key reads the parts of the split channel dim apart or in another order than the query}}
  %o = linalg.generic {indexing_maps = [affine_map<(h, m, n, e) -> (h, m, n)>, affine_map<(h, m, n, e) -> (h, n, e)>, affine_map<(h, m, n, e) -> (h, m, e)>], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%pr, %v : tensor<2x4x4xf32>, tensor<2x4x8xf32>) outs(%oacc : tensor<2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %x = arith.mulf %a, %b : f32
    %y = arith.addf %c, %x : f32
    linalg.yield %y : f32
  } -> tensor<2x4x8xf32>
  return %o : tensor<2x4x8xf32>
}
