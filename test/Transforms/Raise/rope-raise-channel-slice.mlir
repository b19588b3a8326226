// RUN: rope-opt --rope-raise=remarks=true %s 2>&1 | FileCheck %s

// DeepSeek-V3's multi-head latent attention as a whole model exports it
// (deepseek_v3 in the zoo): q = [q_nope, q_pe] per head, and only q_pe, the
// last channels, is rotated (interleaved pairs, de-interleaved on output:
// [x0 c - x1 s, ..., x1 c + x0 s, ...]), then concatenated after q_nope.
// rope.apply rotates a prefix of its channels, so the rotated window
// [8, 12) of the 12 channels is raised alone: rope.apply of the window (its
// output de-interleaved) inserted at channel 8 into q, whose other channels
// are q's own. S = 4, H = 2, D = 12 (8 pass-through, 4 rotated); inv_freq is
// the f32 rounding of 10000^(-2i/4).

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#tok3 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#ch3 = affine_map<(d0, d1, d2) -> (d2)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#cs4 = affine_map<(d0, d1, d2, d3) -> (0, 0, d2, d3)>

// CHECK-LABEL: func.func @mla_q(
// CHECK-SAME: %[[Q:.*]]: tensor<4x24xf32>, %[[P:.*]]: tensor<1x4xi64>
// CHECK: %[[E:.*]] = tensor.expand_shape %[[Q]] {{\[\[}}0, 1], [2, 3]] output_shape [1, 4, 2, 12]
// CHECK: %[[W:.*]] = tensor.extract_slice %[[E]][0, 0, 0, 8] [1, 4, 2, 4] [1, 1, 1, 1]
// CHECK: %[[WT:.*]] = linalg.generic {{.*}} ins(%[[W]] : tensor<1x4x2x4xf32>)
// CHECK: %[[R:.*]] = rope.apply ins(%[[WT]] : tensor<1x2x4x4xf32>) positions(%{{.*}} : tensor<4xi64>) outs(%{{.*}} : tensor<1x2x4x4xf32>)
// CHECK-SAME: {freqs = #rope.default<>, layout = #rope.layout<interleaved>, token_dims = array<i64: 2>}
// CHECK: %[[D:.*]] = tensor.collapse_shape %{{.*}} : tensor<1x2x4x2x2xf32> into tensor<1x2x4x4xf32>
// CHECK: %[[X:.*]] = linalg.generic {{.*}} ins(%[[E]] : tensor<1x4x2x12xf32>)
// CHECK: %[[Y:.*]] = tensor.insert_slice %[[D]] into %[[X]][0, 0, 0, 8] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x4xf32> into tensor<1x2x4x12xf32>
// CHECK-NOT: math.cos
// CHECK: return %[[Y]]
func.func @mla_q(%q: tensor<4x24xf32>, %pos: tensor<1x4xi64>) -> tensor<1x2x4x12xf32> {
  %inv = arith.constant dense<[1.0, 0.00999999977]> : tensor<2xf32>
  %pe = tensor.expand_shape %pos [[0], [1, 2]] output_shape [1, 4, 1] : tensor<1x4xi64> into tensor<1x4x1xi64>
  %pf0 = tensor.empty() : tensor<1x4x1xf32>
  %pf = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%pe : tensor<1x4x1xi64>) outs(%pf0 : tensor<1x4x1xf32>) {
  ^bb0(%in: i64, %out: f32):
    %f = arith.sitofp %in : i64 to f32
    linalg.yield %f : f32
  } -> tensor<1x4x1xf32>
  %a0 = tensor.empty() : tensor<1x4x2xf32>
  %angle = linalg.generic {indexing_maps = [#tok3, #ch3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%pf, %inv : tensor<1x4x1xf32>, tensor<2xf32>) outs(%a0 : tensor<1x4x2xf32>) {
  ^bb0(%in: f32, %f: f32, %out: f32):
    %m = arith.mulf %in, %f : f32
    linalg.yield %m : f32
  } -> tensor<1x4x2xf32>
  %cos = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%angle : tensor<1x4x2xf32>) outs(%a0 : tensor<1x4x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %c = math.cos %in : f32
    linalg.yield %c : f32
  } -> tensor<1x4x2xf32>
  %sin = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%angle : tensor<1x4x2xf32>) outs(%a0 : tensor<1x4x2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = math.sin %in : f32
    linalg.yield %s : f32
  } -> tensor<1x4x2xf32>
  %c4 = tensor.expand_shape %cos [[0], [1, 2], [3]] output_shape [1, 1, 4, 2] : tensor<1x4x2xf32> into tensor<1x1x4x2xf32>
  %s4 = tensor.expand_shape %sin [[0], [1, 2], [3]] output_shape [1, 1, 4, 2] : tensor<1x4x2xf32> into tensor<1x1x4x2xf32>
  %qe = tensor.expand_shape %q [[0, 1], [2, 3]] output_shape [1, 4, 2, 12] : tensor<4x24xf32> into tensor<1x4x2x12xf32>
  %qt0 = tensor.empty() : tensor<1x2x4x12xf32>
  %qt = linalg.transpose ins(%qe : tensor<1x4x2x12xf32>) outs(%qt0 : tensor<1x2x4x12xf32>) permutation = [0, 2, 1, 3]
  %nope = tensor.extract_slice %qt[0, 0, 0, 0] [1, 2, 4, 8] [1, 1, 1, 1] : tensor<1x2x4x12xf32> to tensor<1x2x4x8xf32>
  %rope = tensor.extract_slice %qt[0, 0, 0, 8] [1, 2, 4, 4] [1, 1, 1, 1] : tensor<1x2x4x12xf32> to tensor<1x2x4x4xf32>
  %x1 = tensor.extract_slice %rope[0, 0, 0, 0] [1, 2, 4, 2] [1, 1, 1, 2] : tensor<1x2x4x4xf32> to tensor<1x2x4x2xf32>
  %x2 = tensor.extract_slice %rope[0, 0, 0, 1] [1, 2, 4, 2] [1, 1, 1, 2] : tensor<1x2x4x4xf32> to tensor<1x2x4x2xf32>
  %h0 = tensor.empty() : tensor<1x2x4x2xf32>
  %x1c = linalg.generic {indexing_maps = [#id4, #cs4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x1, %c4 : tensor<1x2x4x2xf32>, tensor<1x1x4x2xf32>) outs(%h0 : tensor<1x2x4x2xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4x2xf32>
  %x2s = linalg.generic {indexing_maps = [#id4, #cs4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x2, %s4 : tensor<1x2x4x2xf32>, tensor<1x1x4x2xf32>) outs(%h0 : tensor<1x2x4x2xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4x2xf32>
  %y1 = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x1c, %x2s : tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>) outs(%h0 : tensor<1x2x4x2xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.subf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4x2xf32>
  %x2c = linalg.generic {indexing_maps = [#id4, #cs4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x2, %c4 : tensor<1x2x4x2xf32>, tensor<1x1x4x2xf32>) outs(%h0 : tensor<1x2x4x2xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4x2xf32>
  %x1s = linalg.generic {indexing_maps = [#id4, #cs4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x1, %s4 : tensor<1x2x4x2xf32>, tensor<1x1x4x2xf32>) outs(%h0 : tensor<1x2x4x2xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4x2xf32>
  %y2 = linalg.generic {indexing_maps = [#id4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x2c, %x1s : tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>) outs(%h0 : tensor<1x2x4x2xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.addf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<1x2x4x2xf32>
  %rot = tensor.concat dim(3) %y1, %y2 : (tensor<1x2x4x2xf32>, tensor<1x2x4x2xf32>) -> tensor<1x2x4x4xf32>
  %y = tensor.concat dim(3) %nope, %rot : (tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x12xf32>
  return %y : tensor<1x2x4x12xf32>
}

// Negatives: each RUN line changes one thing (in the IR, not in these
// comments), and neither q nor its rotated window is raised.
//
// q_nope's slice bound one channel off: channel 0 of the result is q[1].
// RUN: sed '/^\/\//!s/%nope = tensor.extract_slice %qt\[0, 0, 0, 0\]/%nope = tensor.extract_slice %qt[0, 0, 0, 1]/' %s \
// RUN:   | rope-opt --rope-raise=remarks=true 2>&1 | FileCheck %s --check-prefix=NOPE
// NOPE: remark: rope-raise: not raised: the rotated channels are not the first 4
// NOPE-NOT: rope.apply
//
// q_pe's slice bound one channel off: the rotation reads q[7..11), which
// overlaps q_nope's channels.
// RUN: sed '/^\/\//!s/%rope = tensor.extract_slice %qt\[0, 0, 0, 8\]/%rope = tensor.extract_slice %qt[0, 0, 0, 7]/' %s \
// RUN:   | rope-opt --rope-raise=remarks=true 2>&1 | FileCheck %s --check-prefix=PE
// PE: remark: rope-raise: not raised:
// PE-NOT: rope.apply
//
// The rotated window put before q_nope (concat order swapped): its channels
// are not x's at their own index.
// RUN: sed '/^\/\//!s/%y = tensor.concat dim(3) %nope, %rot : (tensor<1x2x4x8xf32>, tensor<1x2x4x4xf32>)/%y = tensor.concat dim(3) %rot, %nope : (tensor<1x2x4x4xf32>, tensor<1x2x4x8xf32>)/' %s \
// RUN:   | rope-opt --rope-raise=remarks=true 2>&1 | FileCheck %s --check-prefix=ORDER
// ORDER: remark: rope-raise: not raised:
// ORDER-NOT: rope.apply
//
// One sign: y2 = x2 * cos - x1 * sin with y1 = x1 * cos - x2 * sin.
// RUN: sed '/^\/\//!s/%m = arith.addf %a, %b : f32/%m = arith.subf %a, %b : f32/' %s \
// RUN:   | rope-opt --rope-raise=remarks=true 2>&1 | FileCheck %s --check-prefix=SIGN
// SIGN: remark: rope-raise: not raised:
// SIGN-NOT: rope.apply
