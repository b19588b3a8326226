// RUN: rope-opt %s --rope-raise --split-input-file | FileCheck %s
//
// Python's negative-index wrap of the gathered row (GPT-J's table),
// select(p < 0, p + 64, p), spelled with the comparison and the addition
// the other way round, and as select(p >= 0, p, p + 64):
// RUN: sed -e 's/arith.cmpi slt, %%in, %%c0_i64/arith.cmpi sgt, %%c0_i64, %%in/' \
// RUN:     -e 's/arith.addi %%in, %%c64_i64/arith.addi %%c64_i64, %%in/' %S/../../Frontends/Inputs/gptj.mlir \
// RUN:   | rope-opt --rope-raise | FileCheck %s --check-prefix=WRAP
// RUN: sed -e 's/arith.cmpi slt, %%in, %%c0_i64/arith.cmpi sge, %%in, %%c0_i64/' \
// RUN:     -e 's/arith.select %%15, %%16, %%in/arith.select %%15, %%in, %%16/' %S/../../Frontends/Inputs/gptj.mlir \
// RUN:   | rope-opt --rope-raise | FileCheck %s --check-prefix=WRAP
// A wrap into the wrong row count is not the wrap:
// RUN: sed -e 's/arith.cmpi slt, %%in, %%c0_i64/arith.cmpi sgt, %%c0_i64, %%in/' \
// RUN:     -e 's/arith.addi %%in, %%c64_i64/arith.addi %%c0_i64, %%in/' %S/../../Frontends/Inputs/gptj.mlir \
// RUN:   | rope-opt --rope-raise | FileCheck %s --check-prefix=NOWRAP
// The payload split in two (rope-test-split-generic): the wrap computed per
// element by a generic of its own, which the gather reads as its row. The
// row is chased into that producer; a wrong row count or a row that is not
// the wrap (p + 64 for every p) is still refused there.
// RUN: rope-opt %S/../../Frontends/Inputs/gptj.mlir --rope-test-split-generic \
// RUN:   | rope-opt --rope-raise | FileCheck %s --check-prefix=WRAP
// RUN: sed -e 's/arith.cmpi slt, %%in, %%c0_i64/arith.cmpi sgt, %%c0_i64, %%in/' \
// RUN:     -e 's/arith.addi %%in, %%c64_i64/arith.addi %%c0_i64, %%in/' %S/../../Frontends/Inputs/gptj.mlir \
// RUN:   | rope-opt --rope-test-split-generic | rope-opt --rope-raise | FileCheck %s --check-prefix=NOWRAP
// RUN: sed -e 's/arith.select %%15, %%16, %%in/arith.select %%15, %%16, %%16/' %S/../../Frontends/Inputs/gptj.mlir \
// RUN:   | rope-opt --rope-test-split-generic | rope-opt --rope-raise | FileCheck %s --check-prefix=NOWRAP
// WRAP-COUNT-2: rope.apply ins({{.*}}layout = #rope.layout<interleaved>, rotary_dim = 16
// NOWRAP-NOT: rope.apply
//
// linalg-fuse-elementwise-ops moves a frequency table computed from an
// iota (JAX: 1 / 10000^(2i/d)) and the keys' in-graph arange (decode with a
// cache) into the angle's generic: the table and the integer arange become
// tensors again, as the frontend had them.
// Unit dims folded, then fused: q's rotation is fused into Q·Kᵀ, whose
// loops split q's 4 heads into 2 KV heads x 2 group members; q is read with
// its head dim as a set of two frames, and the raised rotation reads it
// split back into them.
// RUN: rope-opt %S/../../Frontends/Inputs/zoo/llama_prefill.mlir --linalg-fold-unit-extent-dims \
// RUN:   --linalg-fuse-elementwise-ops --rope-raise | FileCheck %s --check-prefix=FRAMESET
// FRAMESET: %[[HEADS:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0], [1], [2, 3], [4]] output_shape [1, 16, 2, 2, 16] : tensor<1x16x4x16xf32> into tensor<1x16x2x2x16xf32>
// FRAMESET: %[[Q:.*]] = linalg.generic {{.*}} ins(%[[HEADS]] : tensor<1x16x2x2x16xf32>) outs(%{{.*}} : tensor<1x2x2x16x16xf32>)
// FRAMESET: rope.apply ins(%[[Q]] : tensor<1x2x2x16x16xf32>)
//
// A QK-norm on a decode step with its unit dims folded: the rotation is
// raised with a token dim of size 1 ([H, 1, D]) that the norm's x, the
// projection [1, H * D], lacks; the fold splits x's heads back out with an
// expand_shape and reads that through a copy that drops x's unit dim and
// adds the token dim.
// RUN: rope-opt %S/../../Frontends/Inputs/zoo/qwen3_decode.mlir --linalg-fold-unit-extent-dims --rope-raise \
// RUN:   | FileCheck %s --check-prefix=NORM-DECODE-FOLDED
// NORM-DECODE-FOLDED: %[[XS:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [1, 2, 16] : tensor<1x32xf32> into tensor<1x2x16xf32>
// NORM-DECODE-FOLDED: %[[X:.*]] = linalg.generic {{.*}} ins(%[[XS]] : tensor<1x2x16xf32>) outs(%{{.*}} : tensor<2x1x16xf32>)
// NORM-DECODE-FOLDED-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// NORM-DECODE-FOLDED-NEXT: linalg.yield %[[IN]] : f32
// NORM-DECODE-FOLDED: rope.apply ins(%[[X]] : tensor<2x1x16xf32>) positions(%{{.*}} : tensor<1xi64>) norm(%{{.*}} : tensor<16xf32>)
// NORM-DECODE-FOLDED-COUNT-3: rope.apply ins({{.*}} norm(%{{.*}} : tensor<16xf32>)
//
// The same QK-norm with the unit dims folded and then fused: q's rotation
// reads the frame set (heads split into KV groups), through which the
// norm's x is the projection read at a linear head index; every norm folds.
// RUN: rope-opt %S/../../Frontends/Inputs/zoo/qwen3_prefill.mlir --linalg-fold-unit-extent-dims \
// RUN:   --linalg-fuse-elementwise-ops --rope-raise | FileCheck %s --check-prefix=NORM-FRAMESET
// NORM-FRAMESET: rope.apply ins({{.*}} : tensor<1x2x16x16xf32>) positions({{.*}}) norm(%{{.*}} : tensor<16xf32>)
// NORM-FRAMESET: %[[XS:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2, 3]] output_shape [16, 2, 2, 16] : tensor<16x64xf32> into tensor<16x2x2x16xf32>
// NORM-FRAMESET: %[[X:.*]] = linalg.generic {{.*}} ins(%[[XS]] : tensor<16x2x2x16xf32>) outs(%{{.*}} : tensor<1x2x2x16x16xf32>)
// NORM-FRAMESET: rope.apply ins(%[[X]] : tensor<1x2x2x16x16xf32>) positions({{.*}}) norm(%{{.*}} : tensor<16xf32>)
//
// A decode step after generalize, fold-unit and canonicalize: the copy
// between q's [H, D] view and its [1, H, 1, D] view is folded away, leaving
// two expand_shapes of the flat projection (x and the halves rotate_half
// slices); rope-raise makes the wider one an expand of the other, so both
// read one tensor, and raises every rotation.
// RUN: rope-opt %S/../../Frontends/Inputs/zoo/olmo2_decode.mlir --linalg-generalize-named-ops \
// RUN:   --linalg-fold-unit-extent-dims --canonicalize --rope-raise | FileCheck %s --check-prefix=SHARED-VIEWS
// SHARED-VIEWS-COUNT-4: rope.apply ins(%{{.*}} : tensor<{{[24]}}x1x16xf32>) positions(%{{.*}} : tensor<1xi64>)
// SHARED-VIEWS-NOT: rope.apply
//
// Cohere's interleaved rotation after fold-unit and fusion ends in
// view_as_real's [..., D/2, 2], which its consumers keep apart: raised with
// the last two dims as its channels (interleaved). Q·Kᵀ then contracts the
// channels as two dims (8 × 2), read as one channel loop of the attention:
// Q and K are the rotations viewed back as [..., 16].
// RUN: rope-opt %S/../../Frontends/Inputs/zoo/cohere_prefill.mlir --linalg-fold-unit-extent-dims \
// RUN:   --linalg-fuse-elementwise-ops --rope-raise | FileCheck %s --check-prefix=PAIRED
// RUN: rope-opt %S/../../Frontends/Inputs/zoo/cohere_prefill.mlir --linalg-fold-unit-extent-dims \
// RUN:   --linalg-fuse-elementwise-ops --rope-raise --canonicalize | FileCheck %s --check-prefix=PAIRED-CANON
// PAIRED: %[[KR:.*]] = rope.apply ins(%{{.*}} : tensor<1x2x1x16x16xf32>) positions(%{{.*}}) outs(%{{.*}}) {{{.*}}layout = #rope.layout<interleaved>
// PAIRED: %[[QR:.*]] = rope.apply ins(%{{.*}} : tensor<1x2x2x1x16x16xf32>)
// PAIRED: %[[QE:.*]] = tensor.expand_shape %[[QR]] {{.*}} into tensor<1x1x2x2x1x1x16x8x2xf32>
// PAIRED-NEXT: %[[Q:.*]] = tensor.collapse_shape %[[QE]] {{.*}} into tensor<1x2x2x1x16x16xf32>
// PAIRED-NEXT: %[[KE:.*]] = tensor.expand_shape %[[KR]] {{.*}} into tensor<1x1x2x1x16x8x2xf32>
// PAIRED-NEXT: %[[K:.*]] = tensor.collapse_shape %[[KE]] {{.*}} into tensor<1x2x16x16xf32>
// PAIRED: rope.attention ins(%[[Q]], %[[K]], %{{.*}} : tensor<1x2x2x1x16x16xf32>, tensor<1x2x16x16xf32>, tensor<1x16x2x16xf32>) {{.*}}causal
// PAIRED-CANON-COUNT-2: rope.attention ins(%{{[0-9]+}}, %{{.*}} : tensor<1x2x2x1x16x16xf32>, tensor<1x2x16x16xf32>,
//
// RUN: rope-opt %S/../../Frontends/Inputs/jax_rotate_half.mlir --linalg-fuse-elementwise-ops --rope-raise \
// RUN:   | FileCheck %s --check-prefix=IOTA-FREQ
// IOTA-FREQ-COUNT-2: rope.apply ins(%arg{{[01]}} : tensor<2x8x{{[24]}}x32xf32>) positions(%arg2 : tensor<2x8xi32>) {{.*}}inv_freq = [1.000000e+00, 0.56234133243560791,
// RUN: rope-opt %S/../../Frontends/Inputs/attention/hf_llama_decode.mlir --linalg-fuse-elementwise-ops --rope-raise \
// RUN:   | FileCheck %s --check-prefix=IOTA-POS
// IOTA-POS: rope.apply ins(%arg1 : tensor<2x2x16x16xf32>) outs(
// IOTA-POS: rope.apply ins(%arg0 : tensor<2x4x1x16xf32>) positions(
//
// torch.polar's angle multiply fused into the generic that makes the
// complex numbers (Llama 4): the angle becomes a table of its own again.
// RUN: rope-opt %S/../../Frontends/Inputs/zoo/llama4_text_decode.mlir --linalg-fuse-elementwise-ops --rope-raise \
// RUN:   | FileCheck %s --check-prefix=POLAR-ANGLE
// POLAR-ANGLE-COUNT-2: rope.apply ins({{.*}}layout = #rope.layout<interleaved>
// POLAR-ANGLE-NOT: rope.apply ins(
//
// linalg-fold-unit-extent-dims with rank-reducing slices on dynamic shapes:
// cos/sin are sliced with sizes that are dims of the positions the tables
// were sized from, not of the tables themselves; the sizes are proven equal
// (ValueBoundsConstraintSet), so the slice reads the tables whole.
// RUN: rope-opt %S/../../Frontends/Inputs/llama_dynamic.mlir --linalg-fold-unit-extent-dims=use-rank-reducing-slices --rope-raise \
// RUN:   | FileCheck %s --check-prefix=DYN-SLICES
// DYN-SLICES-COUNT-2: rope.apply ins(%arg{{[01]}} : tensor<?x{{[24]}}x?x32xf32>) positions(
// DYN-SLICES-NOT: rope.apply ins(
//
// The same rewrite writes a [B=1, H, S=1, D] decode step back into its
// unit dims with a rank-expanding insert_slice: a frame dim of size 1 the
// inserted tensor lacks is read at index 0 (gpt-oss decode).
// RUN: rope-opt %S/../../Frontends/Inputs/zoo/gpt_oss_decode.mlir --linalg-fold-unit-extent-dims=use-rank-reducing-slices --rope-raise \
// RUN:   | FileCheck %s --check-prefix=EXPAND-INSERT
// EXPAND-INSERT-COUNT-4: rope.apply ins(
// EXPAND-INSERT-NOT: rope.apply ins(
//
// The same rewrite around attention: the unit batch dim dropped from the
// scores by a rank-reducing extract_slice, written back by an insert_slice
// covering the whole [1, H, S, S] tensor, the softmax's row max and sum
// accumulated into slices of fills. Each slice covers its whole tensor and
// drops unit dims only: read as the reshape it is, every attention is
// raised as it is from the frontend's spelling (Llama prefill; gpt-oss
// decode with its sinks and sliding window).
// RUN: rope-opt %S/../../Frontends/Inputs/zoo/llama_prefill.mlir --linalg-fold-unit-extent-dims=use-rank-reducing-slices --rope-raise \
// RUN:   | FileCheck %s --check-prefix=SLICES-ATTN
// SLICES-ATTN-COUNT-2: rope.attention ins({{.*}} attributes {causal, indexing_maps = [{{.*}}], query_dim = 2 : i64, scale = 2.500000e-01 : f64} -> tensor<2x2x16x16xf32>
// SLICES-ATTN-NOT: rope.attention
// RUN: rope-opt %S/../../Frontends/Inputs/zoo/gpt_oss_decode.mlir --linalg-fold-unit-extent-dims=use-rank-reducing-slices --rope-raise \
// RUN:   | FileCheck %s --check-prefix=SLICES-SINKS
// SLICES-SINKS: rope.attention ins({{.*}}) sinks({{.*}} attributes {causal, indexing_maps = [{{.*}}], query_dim = 2 : i64, scale = {{.*}}, window = 8 : i64}
// SLICES-SINKS: rope.attention ins({{.*}}) sinks({{.*}} attributes {causal, indexing_maps = [{{.*}}], query_dim = 2 : i64, scale = {{[^,]*}} : f64}
// SLICES-SINKS-NOT: rope.attention
//
// Only slices covering their whole tensor are read as reshapes: P·V reading
// the probabilities of batch 0 written into zeros of both batches is not
// attention (control: the same module unmodified is raised).
// RUN: rope-opt %S/../../Frontends/Inputs/attention/hf_llama_eager_nomask.mlir --linalg-fold-unit-extent-dims=use-rank-reducing-slices \
// RUN:   | rope-opt --rope-raise | FileCheck %s --check-prefix=SLICES-WHOLE
// SLICES-WHOLE: rope.attention ins(
// RUN: rope-opt %S/../../Frontends/Inputs/attention/hf_llama_eager_nomask.mlir --linalg-fold-unit-extent-dims=use-rank-reducing-slices \
// RUN:   | sed 's|^\(    \)%collapsed_21 = tensor.collapse_shape %37 |\1%xhalf = tensor.extract_slice %37[0, 0, 0, 0] [1, 4, 8, 8] [1, 1, 1, 1] : tensor<2x4x8x8xf32> to tensor<4x8x8xf32>\n\1%xzero = linalg.fill ins(%cst : f32) outs(%9 : tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>\n\1%xins = tensor.insert_slice %xhalf into %xzero[0, 0, 0, 0] [1, 4, 8, 8] [1, 1, 1, 1] : tensor<4x8x8xf32> into tensor<2x4x8x8xf32>\n\1%collapsed_21 = tensor.collapse_shape %xins |' \
// RUN:   | rope-opt --rope-raise=remarks=true 2>&1 | FileCheck %s --check-prefix=SLICES-PART
// SLICES-PART: remark: rope-raise: attention not raised: neither operand of the contraction is a softmax
// SLICES-PART: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0, 0] [1, 4, 8, 8] [1, 1, 1, 1] : tensor<4x8x8xf32> into tensor<2x4x8x8xf32>
// SLICES-PART-NOT: rope.attention
//
// Named ops generalized, then elementwise fusion: K's rotation fused into
// the generic that transposes (and GQA-broadcasts) K for Q.K^T, writing
// [B, Hkv, D, S]; Q's into the contraction. Each fused rotation is
// materialized as a generic of its own in the layout of the projection it
// reads ([B, H, S, D]), not in the fused op's loop order, and raised.
// RUN: rope-opt %S/../../Frontends/Inputs/attention/hf_llama_eager_nomask.mlir --linalg-generalize-named-ops --linalg-fuse-elementwise-ops --rope-raise \
// RUN:   | FileCheck %s --check-prefix=FUSED-KT
// FUSED-KT-COUNT-2: rope.apply ins(%arg{{[01]}} : tensor<2x{{[24]}}x8x16xf32>)
// FUSED-KT: rope.attention ins(
// FUSED-KT-NOT: rope.apply

// Spellings that a host compiler's rewrites produce from frontend IR
// (scripts/metamorphic.py runs the whole zoo through them): each raises
// like the frontend's own spelling.

// linalg-fold-unit-extent-dims on a decode step ([B=1, H, S=1, D]): the
// rotated tensor is [H, D] with no token dim left, and the position is a
// rank-0 tensor (a collapse of [1, 1] with no reassociation group) read
// through a broadcasting map. The op reads the input with a token dim of
// size 1 inserted before the channels and is collapsed back.
// CHECK-LABEL: func.func @decode_folded(
//  CHECK-SAME:     %[[Q:[a-z0-9]+]]: tensor<4x16xf32>, %[[POS:[a-z0-9]+]]: tensor<1x1xi64>
//       CHECK:   %[[P:.*]] = tensor.collapse_shape %[[POS]] {{\[\[}}0, 1]] : tensor<1x1xi64> into tensor<1xi64>
//       CHECK:   %[[X:.*]] = tensor.expand_shape %[[Q]] {{\[\[}}0], [1, 2]] output_shape [4, 1, 16] : tensor<4x16xf32> into tensor<4x1x16xf32>
//       CHECK:   %[[R:.*]] = rope.apply ins(%[[X]] : tensor<4x1x16xf32>) positions(%[[P]] : tensor<1xi64>)
//  CHECK-SAME:     token_dims = array<i64: 1>
//       CHECK:   %[[C:.*]] = tensor.collapse_shape %[[R]] {{\[\[}}0], [1, 2]] : tensor<4x1x16xf32> into tensor<4x16xf32>
//       CHECK:   return %[[C]]
#scalar = affine_map<(d0) -> ()>
#vec = affine_map<(d0) -> (d0)>
#hd = affine_map<(d0, d1) -> (d0, d1)>
#d = affine_map<(d0, d1) -> (d1)>
func.func @decode_folded(%q: tensor<4x16xf32>, %pos: tensor<1x1xi64>) -> tensor<4x16xf32> {
  %inv = arith.constant dense<[1.0, 0.316227764, 0.100000001, 0.0316227749, 0.00999999977, 0.00316227763, 0.00100000005, 3.16227757E-4]> : tensor<8xf32>
  %p = tensor.collapse_shape %pos [] : tensor<1x1xi64> into tensor<i64>
  %e0 = tensor.empty() : tensor<f32>
  %pf = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%p : tensor<i64>) outs(%e0 : tensor<f32>) {
  ^bb0(%in: i64, %out: f32):
    %f = arith.sitofp %in : i64 to f32
    linalg.yield %f : f32
  } -> tensor<f32>
  %e8 = tensor.empty() : tensor<8xf32>
  %ang = linalg.generic {indexing_maps = [#scalar, #vec, #vec], iterator_types = ["parallel"]}
      ins(%pf, %inv : tensor<f32>, tensor<8xf32>) outs(%e8 : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  %cat = tensor.concat dim(0) %ang, %ang : (tensor<8xf32>, tensor<8xf32>) -> tensor<16xf32>
  %e16 = tensor.empty() : tensor<16xf32>
  %cos = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]}
      ins(%cat : tensor<16xf32>) outs(%e16 : tensor<16xf32>) {
  ^bb0(%a: f32, %out: f32):
    %c = math.cos %a : f32
    linalg.yield %c : f32
  } -> tensor<16xf32>
  %sin = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]}
      ins(%cat : tensor<16xf32>) outs(%e16 : tensor<16xf32>) {
  ^bb0(%a: f32, %out: f32):
    %s = math.sin %a : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %x1 = tensor.extract_slice %q[0, 0] [4, 8] [1, 1] : tensor<4x16xf32> to tensor<4x8xf32>
  %x2 = tensor.extract_slice %q[0, 8] [4, 8] [1, 1] : tensor<4x16xf32> to tensor<4x8xf32>
  %e48 = tensor.empty() : tensor<4x8xf32>
  %n = linalg.generic {indexing_maps = [#hd, #hd], iterator_types = ["parallel", "parallel"]}
      ins(%x2 : tensor<4x8xf32>) outs(%e48 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %v = arith.negf %a : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %rh = tensor.concat dim(1) %n, %x1 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  %e = tensor.empty() : tensor<4x16xf32>
  %qc = linalg.generic {indexing_maps = [#hd, #d, #hd], iterator_types = ["parallel", "parallel"]}
      ins(%q, %cos : tensor<4x16xf32>, tensor<16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %v = arith.mulf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<4x16xf32>
  %rs = linalg.generic {indexing_maps = [#hd, #d, #hd], iterator_types = ["parallel", "parallel"]}
      ins(%rh, %sin : tensor<4x16xf32>, tensor<16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %v = arith.mulf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<4x16xf32>
  %r = linalg.generic {indexing_maps = [#hd, #hd, #hd], iterator_types = ["parallel", "parallel"]}
      ins(%qc, %rs : tensor<4x16xf32>, tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %v = arith.addf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}

// -----

// linalg-fuse-elementwise-ops: the rotation of k, its cos and sin, all
// fused into the generic that broadcasts k over a repeat dim (GQA's
// repeat_kv). The rotated k is no tensor of its own: the raise first
// computes each payload value of fewer loops than its user by a generic of
// its own (the rotation over [B, S, D], cos/sin over [S, D]), then raises.
// CHECK-LABEL: func.func @fused_into_broadcast(
//  CHECK-SAME:     %[[K:[a-z0-9]+]]: tensor<2x4x8xf32>, %[[POS:[a-z0-9]+]]: tensor<4xi64>
//       CHECK:   %[[R:.*]] = rope.apply ins(%[[K]] : tensor<2x4x8xf32>) positions(%[[POS]] : tensor<4xi64>)
//  CHECK-SAME:     freqs = #rope.default<>, token_dims = array<i64: 1>
//       CHECK:   %[[B:.*]] = linalg.generic {{.*}} ins(%[[R]] : tensor<2x4x8xf32>) outs(%{{.*}} : tensor<2x3x4x8xf32>)
//  CHECK-NEXT:   ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
//  CHECK-NEXT:     linalg.yield %[[IN]] : f32
//       CHECK:   return %[[B]]
#map = affine_map<(d0, d1) -> (d0)>
#map1 = affine_map<(d0, d1) -> (d1)>
#map2 = affine_map<(d0, d1) -> (d0, d1)>
#map3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#map4 = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
#map5 = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#map6 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @fused_into_broadcast(%arg0: tensor<2x4x8xf32>, %arg1: tensor<4xi64>) -> tensor<2x3x4x8xf32> {
  %cst = arith.constant dense<[1.000000e+00, 1.000000e-01, 0.00999999977, 1.000000e-03]> : tensor<4xf32>
  %0 = tensor.empty() : tensor<4x4xf32>
  %1 = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel"]} ins(%arg1, %cst : tensor<4xi64>, tensor<4xf32>) outs(%0 : tensor<4x4xf32>) {
  ^bb0(%in: i64, %in_2: f32, %out: f32):
    %6 = arith.sitofp %in : i64 to f32
    %7 = arith.mulf %6, %in_2 : f32
    linalg.yield %7 : f32
  } -> tensor<4x4xf32>
  %concat = tensor.concat dim(1) %1, %1 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x8xf32>
  %extracted_slice = tensor.extract_slice %arg0[0, 0, 0] [2, 4, 4] [1, 1, 1] : tensor<2x4x8xf32> to tensor<2x4x4xf32>
  %extracted_slice_0 = tensor.extract_slice %arg0[0, 0, 4] [2, 4, 4] [1, 1, 1] : tensor<2x4x8xf32> to tensor<2x4x4xf32>
  %2 = tensor.empty() : tensor<2x4x4xf32>
  %3 = linalg.generic {indexing_maps = [#map3, #map3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%extracted_slice_0 : tensor<2x4x4xf32>) outs(%2 : tensor<2x4x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %6 = arith.negf %in : f32
    linalg.yield %6 : f32
  } -> tensor<2x4x4xf32>
  %concat_1 = tensor.concat dim(2) %3, %extracted_slice : (tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x4x8xf32>
  %4 = tensor.empty() : tensor<2x3x4x8xf32>
  %5 = linalg.generic {indexing_maps = [#map4, #map5, #map4, #map6], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%arg0, %concat, %concat_1 : tensor<2x4x8xf32>, tensor<4x8xf32>, tensor<2x4x8xf32>) outs(%4 : tensor<2x3x4x8xf32>) {
  ^bb0(%in: f32, %in_2: f32, %in_3: f32, %out: f32):
    %6 = math.sin %in_2 : f32
    %7 = arith.mulf %in_3, %6 : f32
    %8 = math.cos %in_2 : f32
    %9 = arith.mulf %in, %8 : f32
    %10 = arith.addf %9, %7 : f32
    linalg.yield %10 : f32
  } -> tensor<2x3x4x8xf32>
  return %5 : tensor<2x3x4x8xf32>
}

// -----

// A bias added to the projection in the same loops as the rotation (what
// linalg-fuse-elementwise-ops leaves when it folds the reshape between them
// away, Qwen2's q/k bias): two data tensors reach the rotation, mm and the
// bias. The rotated tensor is the one value every path from the rotation to
// them passes through: the sum, read as a leaf.
// CHECK-LABEL: func.func @biased_input(
//       CHECK:   %[[X:.*]] = linalg.generic {{.*}} ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<8xf32>)
//       CHECK:     arith.addf
//       CHECK:   %[[R:.*]] = rope.apply ins(%[[X]] : tensor<4x8xf32>) positions(%arg2 : tensor<4xi64>)
//  CHECK-SAME:     freqs = #rope.default<>
//       CHECK:   return %[[R]]
#sd = affine_map<(d0, d1) -> (d0, d1)>
#s = affine_map<(d0, d1) -> (d0)>
#d = affine_map<(d0, d1) -> (d1)>
func.func @biased_input(%mm: tensor<4x8xf32>, %bias: tensor<8xf32>, %pos: tensor<4xi64>) -> tensor<4x8xf32> {
  %inv = arith.constant dense<[1.0, 0.100000001, 0.00999999977, 0.00100000005]> : tensor<4xf32>
  %e4 = tensor.empty() : tensor<4x4xf32>
  %ang = linalg.generic {indexing_maps = [#s, #d, #sd], iterator_types = ["parallel", "parallel"]}
      ins(%pos, %inv : tensor<4xi64>, tensor<4xf32>) outs(%e4 : tensor<4x4xf32>) {
  ^bb0(%p: i64, %f: f32, %out: f32):
    %pf = arith.sitofp %p : i64 to f32
    %m = arith.mulf %pf, %f : f32
    linalg.yield %m : f32
  } -> tensor<4x4xf32>
  %cat = tensor.concat dim(1) %ang, %ang : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %x = linalg.generic {indexing_maps = [#sd, #d, #sd], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %bias : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %v = arith.addf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %x1 = tensor.extract_slice %x[0, 0] [4, 4] [1, 1] : tensor<4x8xf32> to tensor<4x4xf32>
  %x2 = tensor.extract_slice %x[0, 4] [4, 4] [1, 1] : tensor<4x8xf32> to tensor<4x4xf32>
  %eh = tensor.empty() : tensor<4x4xf32>
  %n = linalg.generic {indexing_maps = [#sd, #sd], iterator_types = ["parallel", "parallel"]}
      ins(%x2 : tensor<4x4xf32>) outs(%eh : tensor<4x4xf32>) {
  ^bb0(%a: f32, %out: f32):
    %v = arith.negf %a : f32
    linalg.yield %v : f32
  } -> tensor<4x4xf32>
  %rh = tensor.concat dim(1) %n, %x1 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x8xf32>
  %cos = linalg.generic {indexing_maps = [#sd, #sd], iterator_types = ["parallel", "parallel"]}
      ins(%cat : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%t: f32, %out: f32):
    %c = math.cos %t : f32
    linalg.yield %c : f32
  } -> tensor<4x8xf32>
  %sin = linalg.generic {indexing_maps = [#sd, #sd], iterator_types = ["parallel", "parallel"]}
      ins(%cat : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%t: f32, %out: f32):
    %s = math.sin %t : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#sd, #sd, #sd, #sd, #sd], iterator_types = ["parallel", "parallel"]}
      ins(%x, %cos, %rh, %sin : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %h: f32, %s: f32, %out: f32):
    %p = arith.mulf %a, %c : f32
    %q = arith.mulf %h, %s : f32
    %v = arith.addf %p, %q : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// cos and sin computed inside the payload that multiplies by them, over
// the same loops (no head dim to broadcast over): each becomes a table
// generic of its own, which CosSinSources reads.
// CHECK-LABEL: func.func @trig_in_payload(
//       CHECK:   %[[R:.*]] = rope.apply ins(%arg0 : tensor<4x8xf32>) positions(%arg1 : tensor<4xi64>)
//  CHECK-SAME:     freqs = #rope.default<>
//       CHECK:   return %[[R]]
#sd = affine_map<(d0, d1) -> (d0, d1)>
#s = affine_map<(d0, d1) -> (d0)>
#d = affine_map<(d0, d1) -> (d1)>
func.func @trig_in_payload(%mm: tensor<4x8xf32>, %pos: tensor<4xi64>) -> tensor<4x8xf32> {
  %inv = arith.constant dense<[1.0, 0.100000001, 0.00999999977, 0.00100000005]> : tensor<4xf32>
  %e4 = tensor.empty() : tensor<4x4xf32>
  %ang = linalg.generic {indexing_maps = [#s, #d, #sd], iterator_types = ["parallel", "parallel"]}
      ins(%pos, %inv : tensor<4xi64>, tensor<4xf32>) outs(%e4 : tensor<4x4xf32>) {
  ^bb0(%p: i64, %f: f32, %out: f32):
    %pf = arith.sitofp %p : i64 to f32
    %m = arith.mulf %pf, %f : f32
    linalg.yield %m : f32
  } -> tensor<4x4xf32>
  %cat = tensor.concat dim(1) %ang, %ang : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %x1 = tensor.extract_slice %mm[0, 0] [4, 4] [1, 1] : tensor<4x8xf32> to tensor<4x4xf32>
  %x2 = tensor.extract_slice %mm[0, 4] [4, 4] [1, 1] : tensor<4x8xf32> to tensor<4x4xf32>
  %eh = tensor.empty() : tensor<4x4xf32>
  %n = linalg.generic {indexing_maps = [#sd, #sd], iterator_types = ["parallel", "parallel"]}
      ins(%x2 : tensor<4x4xf32>) outs(%eh : tensor<4x4xf32>) {
  ^bb0(%a: f32, %out: f32):
    %v = arith.negf %a : f32
    linalg.yield %v : f32
  } -> tensor<4x4xf32>
  %rh = tensor.concat dim(1) %n, %x1 : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#sd, #sd, #sd, #sd], iterator_types = ["parallel", "parallel"]}
      ins(%mm, %cat, %rh : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %t: f32, %h: f32, %out: f32):
    %c = math.cos %t : f32
    %s = math.sin %t : f32
    %p = arith.mulf %a, %c : f32
    %q = arith.mulf %h, %s : f32
    %v = arith.addf %p, %q : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  return %r : tensor<4x8xf32>
}

// -----

// The same with one KV head (MQA): linalg-fold-unit-extent-dims drops every
// dim of k's decode step but the channels, [1, 1, 1, D] -> [D]. The op reads
// the input with a token dim of size 1 inserted ([1, D]) and is collapsed
// back.
// CHECK-LABEL: func.func @decode_folded_one_head(
//  CHECK-SAME:     %[[K:[a-z0-9]+]]: tensor<16xf32>, %[[POS:[a-z0-9]+]]: tensor<1x1xi64>
//       CHECK:   %[[P:.*]] = tensor.collapse_shape %[[POS]] {{\[\[}}0, 1]] : tensor<1x1xi64> into tensor<1xi64>
//       CHECK:   %[[X:.*]] = tensor.expand_shape %[[K]] {{\[\[}}0, 1]] output_shape [1, 16] : tensor<16xf32> into tensor<1x16xf32>
//       CHECK:   %[[R:.*]] = rope.apply ins(%[[X]] : tensor<1x16xf32>) positions(%[[P]] : tensor<1xi64>)
//       CHECK:   %[[C:.*]] = tensor.collapse_shape %[[R]] {{\[\[}}0, 1]] : tensor<1x16xf32> into tensor<16xf32>
//       CHECK:   return %[[C]]
#scalar1 = affine_map<(d0) -> ()>
#vec1 = affine_map<(d0) -> (d0)>
func.func @decode_folded_one_head(%k: tensor<16xf32>, %pos: tensor<1x1xi64>) -> tensor<16xf32> {
  %inv = arith.constant dense<[1.0, 0.316227764, 0.100000001, 0.0316227749, 0.00999999977, 0.00316227763, 0.00100000005, 3.16227757E-4]> : tensor<8xf32>
  %p = tensor.collapse_shape %pos [] : tensor<1x1xi64> into tensor<i64>
  %e0 = tensor.empty() : tensor<f32>
  %pf = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []}
      ins(%p : tensor<i64>) outs(%e0 : tensor<f32>) {
  ^bb0(%in: i64, %out: f32):
    %f = arith.sitofp %in : i64 to f32
    linalg.yield %f : f32
  } -> tensor<f32>
  %e8 = tensor.empty() : tensor<8xf32>
  %ang = linalg.generic {indexing_maps = [#scalar1, #vec1, #vec1], iterator_types = ["parallel"]}
      ins(%pf, %inv : tensor<f32>, tensor<8xf32>) outs(%e8 : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  %cat = tensor.concat dim(0) %ang, %ang : (tensor<8xf32>, tensor<8xf32>) -> tensor<16xf32>
  %e16 = tensor.empty() : tensor<16xf32>
  %cos = linalg.generic {indexing_maps = [#vec1, #vec1], iterator_types = ["parallel"]}
      ins(%cat : tensor<16xf32>) outs(%e16 : tensor<16xf32>) {
  ^bb0(%a: f32, %out: f32):
    %c = math.cos %a : f32
    linalg.yield %c : f32
  } -> tensor<16xf32>
  %sin = linalg.generic {indexing_maps = [#vec1, #vec1], iterator_types = ["parallel"]}
      ins(%cat : tensor<16xf32>) outs(%e16 : tensor<16xf32>) {
  ^bb0(%a: f32, %out: f32):
    %s = math.sin %a : f32
    linalg.yield %s : f32
  } -> tensor<16xf32>
  %x1 = tensor.extract_slice %k[0] [8] [1] : tensor<16xf32> to tensor<8xf32>
  %x2 = tensor.extract_slice %k[8] [8] [1] : tensor<16xf32> to tensor<8xf32>
  %n = linalg.generic {indexing_maps = [#vec1, #vec1], iterator_types = ["parallel"]}
      ins(%x2 : tensor<8xf32>) outs(%e8 : tensor<8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %v = arith.negf %a : f32
    linalg.yield %v : f32
  } -> tensor<8xf32>
  %rh = tensor.concat dim(0) %n, %x1 : (tensor<8xf32>, tensor<8xf32>) -> tensor<16xf32>
  %r = linalg.generic {indexing_maps = [#vec1, #vec1, #vec1, #vec1, #vec1], iterator_types = ["parallel"]}
      ins(%k, %cos, %rh, %sin : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) outs(%e16 : tensor<16xf32>) {
  ^bb0(%a: f32, %c: f32, %b: f32, %s: f32, %out: f32):
    %ac = arith.mulf %a, %c : f32
    %bs = arith.mulf %b, %s : f32
    %v = arith.addf %ac, %bs : f32
    linalg.yield %v : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

// Views of one tensor (shareReshapeSources): the expand that differs from
// [4, 16] in unit dims only becomes an expand of it; one that splits the
// channels otherwise ([8, 8]) stays an expand of the source.
// CHECK-LABEL: func.func @shared_views(
// CHECK-SAME: %[[X:[^:]*]]: tensor<64xf32>
// CHECK: %[[HD:.*]] = tensor.expand_shape %[[X]] {{\[\[}}0, 1]] output_shape [4, 16] : tensor<64xf32> into tensor<4x16xf32>
// CHECK: tensor.expand_shape %[[HD]] {{\[\[}}0, 1], [2, 3]] output_shape [1, 4, 1, 16] : tensor<4x16xf32> into tensor<1x4x1x16xf32>
// CHECK: tensor.expand_shape %[[X]] {{\[\[}}0, 1]] output_shape [8, 8] : tensor<64xf32> into tensor<8x8xf32>
func.func @shared_views(%x: tensor<64xf32>) -> (tensor<4x16xf32>, tensor<1x4x1x16xf32>, tensor<8x8xf32>) {
  %a = tensor.expand_shape %x [[0, 1]] output_shape [4, 16] : tensor<64xf32> into tensor<4x16xf32>
  %b = tensor.expand_shape %x [[0, 1, 2, 3]] output_shape [1, 4, 1, 16] : tensor<64xf32> into tensor<1x4x1x16xf32>
  %c = tensor.expand_shape %x [[0, 1]] output_shape [8, 8] : tensor<64xf32> into tensor<8x8xf32>
  return %a, %b, %c : tensor<4x16xf32>, tensor<1x4x1x16xf32>, tensor<8x8xf32>
}

// -----

// A decode step's angle after linalg-fold-unit-extent-dims and fusion (JAX):
// the timescale base^(2i/d) computed in the angle's own generic from
// linalg.index, which has no loop the timescale lacks (so no operand to
// split it into); evaluated per channel: #rope.default.
// CHECK-LABEL: func.func @timescale_in_angle(
// CHECK: rope.apply ins(%{{.*}} : tensor<1x1x4x16xf32>) positions(%{{.*}} : tensor<1xi32>) outs(%{{.*}}) {freqs = #rope.default<>, token_dims = array<i64: 1>}
#id2 = affine_map<(h, c) -> (h, c)>
#ch = affine_map<(h, c) -> (c)>
#scalar = affine_map<(c) -> ()>
#vec = affine_map<(c) -> (c)>
func.func @timescale_in_angle(%x: tensor<1x1x4x16xf32>, %pos2: tensor<1x1xi32>) -> tensor<1x1x4x16xf32> {
  %pos = tensor.collapse_shape %pos2 [] : tensor<1x1xi32> into tensor<i32>
  %c2 = arith.constant 2 : i32
  %d = arith.constant 1.600000e+01 : f32
  %base = arith.constant 1.000000e+04 : f32
  %e8 = tensor.empty() : tensor<8xf32>
  %angle = linalg.generic {indexing_maps = [#scalar, #vec], iterator_types = ["parallel"]} ins(%pos : tensor<i32>) outs(%e8 : tensor<8xf32>) {
  ^bb0(%p: i32, %out: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i32
    %i2 = arith.muli %ii, %c2 : i32
    %fi = arith.sitofp %i2 : i32 to f32
    %ex = arith.divf %fi, %d : f32
    %ts = math.powf %base, %ex : f32
    %pf = arith.sitofp %p : i32 to f32
    %a = arith.divf %pf, %ts : f32
    linalg.yield %a : f32
  } -> tensor<8xf32>
  %sin = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]} ins(%angle : tensor<8xf32>) outs(%e8 : tensor<8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %s = math.sin %a : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %cos = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]} ins(%angle : tensor<8xf32>) outs(%e8 : tensor<8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %c = math.cos %a : f32
    linalg.yield %c : f32
  } -> tensor<8xf32>
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [1, 1, 4, 8] [1, 1, 1, 1] : tensor<1x1x4x16xf32> to tensor<4x8xf32>
  %x2 = tensor.extract_slice %x[0, 0, 0, 8] [1, 1, 4, 8] [1, 1, 1, 1] : tensor<1x1x4x16xf32> to tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %lo = linalg.generic {indexing_maps = [#id2, #ch, #id2, #ch, #id2], iterator_types = ["parallel", "parallel"]} ins(%x1, %cos, %x2, %sin : tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %b: f32, %s: f32, %out: f32):
    %bs = arith.mulf %b, %s : f32
    %ac = arith.mulf %a, %c : f32
    %v = arith.subf %ac, %bs : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %hi = linalg.generic {indexing_maps = [#id2, #ch, #id2, #ch, #id2], iterator_types = ["parallel", "parallel"]} ins(%x2, %cos, %x1, %sin : tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %b: f32, %s: f32, %out: f32):
    %bs = arith.mulf %b, %s : f32
    %ac = arith.mulf %a, %c : f32
    %v = arith.addf %ac, %bs : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %e16 = tensor.empty() : tensor<1x1x4x16xf32>
  %r0 = tensor.insert_slice %lo into %e16[0, 0, 0, 0] [1, 1, 4, 8] [1, 1, 1, 1] : tensor<4x8xf32> into tensor<1x1x4x16xf32>
  %r = tensor.insert_slice %hi into %r0[0, 0, 0, 8] [1, 1, 4, 8] [1, 1, 1, 1] : tensor<4x8xf32> into tensor<1x1x4x16xf32>
  return %r : tensor<1x1x4x16xf32>
}

// -----

// The negative: the timescale's base is read from an input (not a
// constant): not a frequency table, not raised.
// CHECK-LABEL: func.func @timescale_from_input(
// CHECK-NOT: rope.apply
// CHECK: return
#id2 = affine_map<(h, c) -> (h, c)>
#ch = affine_map<(h, c) -> (c)>
#scalar = affine_map<(c) -> ()>
#vec = affine_map<(c) -> (c)>
func.func @timescale_from_input(%x: tensor<1x1x4x16xf32>, %pos2: tensor<1x1xi32>, %base_in: tensor<f32>) -> tensor<1x1x4x16xf32> {
  %pos = tensor.collapse_shape %pos2 [] : tensor<1x1xi32> into tensor<i32>
  %c2 = arith.constant 2 : i32
  %d = arith.constant 1.600000e+01 : f32
  %base = arith.constant 1.000000e+04 : f32
  %e8 = tensor.empty() : tensor<8xf32>
  %angle = linalg.generic {indexing_maps = [#scalar, #scalar, #vec], iterator_types = ["parallel"]} ins(%pos, %base_in : tensor<i32>, tensor<f32>) outs(%e8 : tensor<8xf32>) {
  ^bb0(%p: i32, %bv: f32, %out: f32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i32
    %i2 = arith.muli %ii, %c2 : i32
    %fi = arith.sitofp %i2 : i32 to f32
    %ex = arith.divf %fi, %d : f32
    %ts = math.powf %bv, %ex : f32
    %pf = arith.sitofp %p : i32 to f32
    %a = arith.divf %pf, %ts : f32
    linalg.yield %a : f32
  } -> tensor<8xf32>
  %sin = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]} ins(%angle : tensor<8xf32>) outs(%e8 : tensor<8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %s = math.sin %a : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %cos = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]} ins(%angle : tensor<8xf32>) outs(%e8 : tensor<8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %c = math.cos %a : f32
    linalg.yield %c : f32
  } -> tensor<8xf32>
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [1, 1, 4, 8] [1, 1, 1, 1] : tensor<1x1x4x16xf32> to tensor<4x8xf32>
  %x2 = tensor.extract_slice %x[0, 0, 0, 8] [1, 1, 4, 8] [1, 1, 1, 1] : tensor<1x1x4x16xf32> to tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %lo = linalg.generic {indexing_maps = [#id2, #ch, #id2, #ch, #id2], iterator_types = ["parallel", "parallel"]} ins(%x1, %cos, %x2, %sin : tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %b: f32, %s: f32, %out: f32):
    %bs = arith.mulf %b, %s : f32
    %ac = arith.mulf %a, %c : f32
    %v = arith.subf %ac, %bs : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %hi = linalg.generic {indexing_maps = [#id2, #ch, #id2, #ch, #id2], iterator_types = ["parallel", "parallel"]} ins(%x2, %cos, %x1, %sin : tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %b: f32, %s: f32, %out: f32):
    %bs = arith.mulf %b, %s : f32
    %ac = arith.mulf %a, %c : f32
    %v = arith.addf %ac, %bs : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %e16 = tensor.empty() : tensor<1x1x4x16xf32>
  %r0 = tensor.insert_slice %lo into %e16[0, 0, 0, 0] [1, 1, 4, 8] [1, 1, 1, 1] : tensor<4x8xf32> into tensor<1x1x4x16xf32>
  %r = tensor.insert_slice %hi into %r0[0, 0, 0, 8] [1, 1, 4, 8] [1, 1, 1, 1] : tensor<4x8xf32> into tensor<1x1x4x16xf32>
  return %r : tensor<1x1x4x16xf32>
}

// -----

// The position and LongRoPE's choice between two constant inverse-frequency
// tables (long when position + 1 > 32) in one payload (fusion at one token:
// the same loops): the tables are read per channel in the payload, the
// choice a switch on the length.
// CHECK-LABEL: func.func @table_in_angle(
// CHECK: rope.apply ins(%{{.*}} : tensor<1x1x4x16xf32>) positions(%{{.*}} : tensor<1xi32>) length(%{{.*}} : i32) outs(%{{.*}}) {freqs = #rope.longrope<
// CHECK-SAME: original_max_position_embeddings = 32
#id2 = affine_map<(h, c) -> (h, c)>
#ch = affine_map<(h, c) -> (c)>
#scalar = affine_map<(c) -> ()>
#vec = affine_map<(c) -> (c)>
func.func @table_in_angle(%x: tensor<1x1x4x16xf32>, %pos2: tensor<1x1xi32>) -> tensor<1x1x4x16xf32> {
  %pos = tensor.collapse_shape %pos2 [] : tensor<1x1xi32> into tensor<i32>
  %c1 = arith.constant 1 : i32
  %c32 = arith.constant 32 : i32
  %short = arith.constant dense<[1.0, 0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125]> : tensor<8xf32>
  %long = arith.constant dense<[0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625]> : tensor<8xf32>
  %e8 = tensor.empty() : tensor<8xf32>
  %angle = linalg.generic {indexing_maps = [#scalar, #vec, #vec, #vec], iterator_types = ["parallel"]} ins(%pos, %short, %long : tensor<i32>, tensor<8xf32>, tensor<8xf32>) outs(%e8 : tensor<8xf32>) {
  ^bb0(%p: i32, %s: f32, %l: f32, %out: f32):
    %len = arith.addi %p, %c1 : i32
    %far = arith.cmpi sgt, %len, %c32 : i32
    %t = arith.select %far, %l, %s : f32
    %pf = arith.sitofp %p : i32 to f32
    %a = arith.mulf %pf, %t : f32
    linalg.yield %a : f32
  } -> tensor<8xf32>
  %sin = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]} ins(%angle : tensor<8xf32>) outs(%e8 : tensor<8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %s = math.sin %a : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %cos = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]} ins(%angle : tensor<8xf32>) outs(%e8 : tensor<8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %c = math.cos %a : f32
    linalg.yield %c : f32
  } -> tensor<8xf32>
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [1, 1, 4, 8] [1, 1, 1, 1] : tensor<1x1x4x16xf32> to tensor<4x8xf32>
  %x2 = tensor.extract_slice %x[0, 0, 0, 8] [1, 1, 4, 8] [1, 1, 1, 1] : tensor<1x1x4x16xf32> to tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %lo = linalg.generic {indexing_maps = [#id2, #ch, #id2, #ch, #id2], iterator_types = ["parallel", "parallel"]} ins(%x1, %cos, %x2, %sin : tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %b: f32, %s: f32, %out: f32):
    %bs = arith.mulf %b, %s : f32
    %ac = arith.mulf %a, %c : f32
    %v = arith.subf %ac, %bs : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %hi = linalg.generic {indexing_maps = [#id2, #ch, #id2, #ch, #id2], iterator_types = ["parallel", "parallel"]} ins(%x2, %cos, %x1, %sin : tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %b: f32, %s: f32, %out: f32):
    %bs = arith.mulf %b, %s : f32
    %ac = arith.mulf %a, %c : f32
    %v = arith.addf %ac, %bs : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %e16 = tensor.empty() : tensor<1x1x4x16xf32>
  %r0 = tensor.insert_slice %lo into %e16[0, 0, 0, 0] [1, 1, 4, 8] [1, 1, 1, 1] : tensor<4x8xf32> into tensor<1x1x4x16xf32>
  %r = tensor.insert_slice %hi into %r0[0, 0, 0, 8] [1, 1, 4, 8] [1, 1, 1, 1] : tensor<4x8xf32> into tensor<1x1x4x16xf32>
  return %r : tensor<1x1x4x16xf32>
}

// -----

// The negative: the table is a function argument, not a constant.
// CHECK-LABEL: func.func @table_from_input_in_angle(
// CHECK-NOT: rope.apply
// CHECK: return
#id2 = affine_map<(h, c) -> (h, c)>
#ch = affine_map<(h, c) -> (c)>
#scalar = affine_map<(c) -> ()>
#vec = affine_map<(c) -> (c)>
func.func @table_from_input_in_angle(%x: tensor<1x1x4x16xf32>, %pos2: tensor<1x1xi32>, %tbl: tensor<8xf32>) -> tensor<1x1x4x16xf32> {
  %pos = tensor.collapse_shape %pos2 [] : tensor<1x1xi32> into tensor<i32>
  %e8 = tensor.empty() : tensor<8xf32>
  %angle = linalg.generic {indexing_maps = [#scalar, #vec, #vec], iterator_types = ["parallel"]} ins(%pos, %tbl : tensor<i32>, tensor<8xf32>) outs(%e8 : tensor<8xf32>) {
  ^bb0(%p: i32, %t: f32, %out: f32):
    %pf = arith.sitofp %p : i32 to f32
    %a = arith.mulf %pf, %t : f32
    linalg.yield %a : f32
  } -> tensor<8xf32>
  %sin = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]} ins(%angle : tensor<8xf32>) outs(%e8 : tensor<8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %s = math.sin %a : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %cos = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]} ins(%angle : tensor<8xf32>) outs(%e8 : tensor<8xf32>) {
  ^bb0(%a: f32, %out: f32):
    %c = math.cos %a : f32
    linalg.yield %c : f32
  } -> tensor<8xf32>
  %x1 = tensor.extract_slice %x[0, 0, 0, 0] [1, 1, 4, 8] [1, 1, 1, 1] : tensor<1x1x4x16xf32> to tensor<4x8xf32>
  %x2 = tensor.extract_slice %x[0, 0, 0, 8] [1, 1, 4, 8] [1, 1, 1, 1] : tensor<1x1x4x16xf32> to tensor<4x8xf32>
  %e = tensor.empty() : tensor<4x8xf32>
  %lo = linalg.generic {indexing_maps = [#id2, #ch, #id2, #ch, #id2], iterator_types = ["parallel", "parallel"]} ins(%x1, %cos, %x2, %sin : tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %b: f32, %s: f32, %out: f32):
    %bs = arith.mulf %b, %s : f32
    %ac = arith.mulf %a, %c : f32
    %v = arith.subf %ac, %bs : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %hi = linalg.generic {indexing_maps = [#id2, #ch, #id2, #ch, #id2], iterator_types = ["parallel", "parallel"]} ins(%x2, %cos, %x1, %sin : tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %c: f32, %b: f32, %s: f32, %out: f32):
    %bs = arith.mulf %b, %s : f32
    %ac = arith.mulf %a, %c : f32
    %v = arith.addf %ac, %bs : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %e16 = tensor.empty() : tensor<1x1x4x16xf32>
  %r0 = tensor.insert_slice %lo into %e16[0, 0, 0, 0] [1, 1, 4, 8] [1, 1, 1, 1] : tensor<4x8xf32> into tensor<1x1x4x16xf32>
  %r = tensor.insert_slice %hi into %r0[0, 0, 0, 8] [1, 1, 4, 8] [1, 1, 1, 1] : tensor<4x8xf32> into tensor<1x1x4x16xf32>
  return %r : tensor<1x1x4x16xf32>
}

// -----

// One rotation computed twice (linalg-fold-unit-extent-dims duplicates a
// producer per consumer, through reshapes of its own; each copy is raised):
// the copy reading the same values through an equivalent reshape is merged
// into the first. One reading other positions is not.
// CHECK-LABEL: func.func @duplicate_rotations(
// CHECK-SAME: %[[X:[^:]*]]: tensor<1x4x2x16xf32>, %[[P:[^:]*]]: tensor<4xi64>, %[[P2:[^:]*]]: tensor<4xi64>
// CHECK: %[[A:.*]] = rope.apply ins(%{{.*}} : tensor<4x2x16xf32>) positions(%[[P]] : tensor<4xi64>)
// CHECK-NOT: rope.apply ins({{.*}}) positions(%[[P]]
// CHECK: %[[C:.*]] = rope.apply ins(%{{.*}} : tensor<4x2x16xf32>) positions(%[[P2]] : tensor<4xi64>)
// CHECK: return %[[A]], %[[A]], %[[C]]
func.func @duplicate_rotations(%x: tensor<1x4x2x16xf32>, %p: tensor<4xi64>, %p2: tensor<4xi64>) -> (tensor<4x2x16xf32>, tensor<4x2x16xf32>, tensor<4x2x16xf32>) {
  %x1 = tensor.collapse_shape %x [[0, 1], [2], [3]] : tensor<1x4x2x16xf32> into tensor<4x2x16xf32>
  %e1 = tensor.empty() : tensor<4x2x16xf32>
  %a = rope.apply ins(%x1 : tensor<4x2x16xf32>) positions(%p : tensor<4xi64>) outs(%e1 : tensor<4x2x16xf32>) {token_dims = array<i64: 0>} -> tensor<4x2x16xf32>
  %x2 = tensor.collapse_shape %x [[0, 1], [2], [3]] : tensor<1x4x2x16xf32> into tensor<4x2x16xf32>
  %e2 = tensor.empty() : tensor<4x2x16xf32>
  %b = rope.apply ins(%x2 : tensor<4x2x16xf32>) positions(%p : tensor<4xi64>) outs(%e2 : tensor<4x2x16xf32>) {token_dims = array<i64: 0>} -> tensor<4x2x16xf32>
  %e3 = tensor.empty() : tensor<4x2x16xf32>
  %c = rope.apply ins(%x2 : tensor<4x2x16xf32>) positions(%p2 : tensor<4xi64>) outs(%e3 : tensor<4x2x16xf32>) {token_dims = array<i64: 0>} -> tensor<4x2x16xf32>
  return %a, %b, %c : tensor<4x2x16xf32>, tensor<4x2x16xf32>, tensor<4x2x16xf32>
}

// -----

// A decode step's key with one KV head after fold-unit (the MQA variant
// zoo's OLMo-2): every dim but the channels is 1, so the rotation is rank 1.
// x is read whole through a collapse of all four dims (four channel axes,
// three of size 1) and through the partner's slices (unit dims and one
// channel axis): one tensor read one way, so one x.
// CHECK-LABEL: func.func @rank1_key_read_two_ways(
// CHECK: rope.apply ins(%{{.*}} : tensor<1x32xf32>) positions(%{{.*}} : tensor<1xi64>)
// CHECK-NOT: math.cos
#v1 = affine_map<(d0) -> (d0)>
#v0 = affine_map<(d0) -> ()>
func.func @rank1_key_read_two_ways(%x: tensor<1x1x1x32xf32>, %pos: tensor<1x1xi64>) -> tensor<32xf32> {
  %inv = arith.constant dense<[1.0, 0.562341332, 0.316227764, 0.177827939, 0.100000001, 0.0562341325, 0.0316227749, 0.0177827943, 0.00999999977, 0.00562341325, 0.00316227763, 0.00177827943, 0.00100000005, 5.62341302E-4, 3.16227757E-4, 1.77827947E-4]> : tensor<16xf32>
  %p0 = tensor.collapse_shape %pos [] : tensor<1x1xi64> into tensor<i64>
  %pe = tensor.empty() : tensor<f32>
  %pf = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%p0 : tensor<i64>) outs(%pe : tensor<f32>) {
  ^bb0(%in: i64, %out: f32):
    %f = arith.sitofp %in : i64 to f32
    linalg.yield %f : f32
  } -> tensor<f32>
  %fe = tensor.empty() : tensor<16xf32>
  %freqs = linalg.generic {indexing_maps = [#v0, #v1, #v1], iterator_types = ["parallel"]} ins(%pf, %inv : tensor<f32>, tensor<16xf32>) outs(%fe : tensor<16xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<16xf32>
  %fx = tensor.expand_shape %freqs [[0, 1, 2]] output_shape [1, 1, 16] : tensor<16xf32> into tensor<1x1x16xf32>
  %emb3 = tensor.concat dim(2) %fx, %fx : (tensor<1x1x16xf32>, tensor<1x1x16xf32>) -> tensor<1x1x32xf32>
  %emb = tensor.collapse_shape %emb3 [[0, 1, 2]] : tensor<1x1x32xf32> into tensor<32xf32>
  %te = tensor.empty() : tensor<32xf32>
  %cos = linalg.generic {indexing_maps = [#v1, #v1], iterator_types = ["parallel"]} ins(%emb : tensor<32xf32>) outs(%te : tensor<32xf32>) {
  ^bb0(%a: f32, %out: f32):
    %c = math.cos %a : f32
    linalg.yield %c : f32
  } -> tensor<32xf32>
  %sin = linalg.generic {indexing_maps = [#v1, #v1], iterator_types = ["parallel"]} ins(%emb : tensor<32xf32>) outs(%te : tensor<32xf32>) {
  ^bb0(%a: f32, %out: f32):
    %s = math.sin %a : f32
    linalg.yield %s : f32
  } -> tensor<32xf32>
  %xw = tensor.collapse_shape %x [[0, 1, 2, 3]] : tensor<1x1x1x32xf32> into tensor<32xf32>
  %xc = linalg.generic {indexing_maps = [#v1, #v1, #v1], iterator_types = ["parallel"]} ins(%xw, %cos : tensor<32xf32>, tensor<32xf32>) outs(%te : tensor<32xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<32xf32>
  %lo = tensor.extract_slice %x[0, 0, 0, 0] [1, 1, 1, 16] [1, 1, 1, 1] : tensor<1x1x1x32xf32> to tensor<16xf32>
  %hi = tensor.extract_slice %x[0, 0, 0, 16] [1, 1, 1, 16] [1, 1, 1, 1] : tensor<1x1x1x32xf32> to tensor<16xf32>
  %he = tensor.empty() : tensor<16xf32>
  %neg = linalg.generic {indexing_maps = [#v1, #v1], iterator_types = ["parallel"]} ins(%hi : tensor<16xf32>) outs(%he : tensor<16xf32>) {
  ^bb0(%a: f32, %out: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<16xf32>
  %nx = tensor.expand_shape %neg [[0, 1, 2, 3]] output_shape [1, 1, 1, 16] : tensor<16xf32> into tensor<1x1x1x16xf32>
  %lx = tensor.expand_shape %lo [[0, 1, 2, 3]] output_shape [1, 1, 1, 16] : tensor<16xf32> into tensor<1x1x1x16xf32>
  %rot4 = tensor.concat dim(3) %nx, %lx : (tensor<1x1x1x16xf32>, tensor<1x1x1x16xf32>) -> tensor<1x1x1x32xf32>
  %rot = tensor.collapse_shape %rot4 [[0, 1, 2, 3]] : tensor<1x1x1x32xf32> into tensor<32xf32>
  %rs = linalg.generic {indexing_maps = [#v1, #v1, #v1], iterator_types = ["parallel"]} ins(%rot, %sin : tensor<32xf32>, tensor<32xf32>) outs(%te : tensor<32xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<32xf32>
  %y = linalg.generic {indexing_maps = [#v1, #v1, #v1], iterator_types = ["parallel"]} ins(%xc, %rs : tensor<32xf32>, tensor<32xf32>) outs(%te : tensor<32xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<32xf32>
  return %y : tensor<32xf32>
}
