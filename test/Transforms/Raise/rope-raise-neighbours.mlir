// RUN: rope-opt --rope-raise --split-input-file %s | FileCheck %s

// rope-raise folds the neighbours of a rope.apply (RaiseNeighbours.cpp): an
// RMSNorm over the head dim that produces its input into norm(%w) with
// norm_epsilon, and a quantization of its only result into quant_scale(%s)
// with an f8E4M3FN / f8E5M2 / i8 destination. Each negative changes one
// thing of a positive case and checks that nothing is folded.

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#ch = affine_map<(d0, d1, d2) -> (d2)>

// One generic for the sum of squares (x * x), one for the rest (w on the
// right); D = 8, eps an f32 constant.
// CHECK-LABEL: func.func @fused_f32(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x2x8xf32>, %[[W:[^:]*]]: tensor<8xf32>, %[[P:[^:]*]]: tensor<4xi64>
// CHECK-NOT: linalg.generic
// CHECK: %[[Y:.*]] = rope.apply ins(%[[X]] : tensor<4x2x8xf32>) positions(%[[P]] : tensor<4xi64>) norm(%[[W]] : tensor<8xf32>) outs(%{{.*}} : tensor<4x2x8xf32>) {norm_epsilon = 9.9999999747524271E-7 : f64}
// CHECK-NEXT: return %[[Y]]
func.func @fused_f32(%x: tensor<4x2x8xf32>, %w: tensor<8xf32>, %p: tensor<4xi64>) -> tensor<4x2x8xf32> {
  %zero = arith.constant 0.0 : f32
  %c8 = arith.constant 8.0 : f32
  %eps = arith.constant 1.0e-06 : f32
  %e = tensor.empty() : tensor<4x2x8xf32>
  %e1 = tensor.empty() : tensor<4x2x1xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x2x1xf32>) -> tensor<4x2x1xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<4x2x8xf32>) outs(%z : tensor<4x2x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<4x2x1xf32>
  %n = linalg.generic {indexing_maps = [#id, #row, #ch, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %sum, %w : tensor<4x2x8xf32>, tensor<4x2x1xf32>, tensor<8xf32>) outs(%e : tensor<4x2x8xf32>) {
  ^bb0(%xi: f32, %s: f32, %wi: f32, %o: f32):
    %m = arith.divf %s, %c8 : f32
    %a = arith.addf %m, %eps : f32
    %r = math.rsqrt %a : f32
    %xn = arith.mulf %xi, %r : f32
    %y = arith.mulf %xn, %wi : f32
    linalg.yield %y : f32
  } -> tensor<4x2x8xf32>
  %y = rope.apply ins(%n : tensor<4x2x8xf32>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xf32>) -> tensor<4x2x8xf32>
  return %y : tensor<4x2x8xf32>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#ch = affine_map<(d0, d1, d2) -> (d2)>

// Qwen3 in bf16: x.float(), the mean as sum * 0.125 (1/D exact for D = 8),
// eps first, r * x, rounded to bf16 and multiplied by the bf16 weight in bf16
// (the intermediate rounding is looked through: computed in f32, rounded once).
// CHECK-LABEL: func.func @qwen3_bf16(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x2x8xbf16>, %[[W:[^:]*]]: tensor<8xbf16>
// CHECK: rope.apply ins(%[[X]] : tensor<4x2x8xbf16>) positions(%{{.*}}) norm(%[[W]] : tensor<8xbf16>) outs(%{{.*}} : tensor<4x2x8xbf16>) {norm_epsilon = 9.9999999747524271E-7 : f64}
// CHECK-NOT: math.rsqrt
func.func @qwen3_bf16(%x: tensor<4x2x8xbf16>, %w: tensor<8xbf16>, %p: tensor<4xi64>) -> tensor<4x2x8xbf16> {
  %zero = arith.constant 0.0 : f32
  %c0125 = arith.constant 0.125 : f32
  %eps = arith.constant 1.0e-06 : f32
  %e = tensor.empty() : tensor<4x2x8xbf16>
  %e1 = tensor.empty() : tensor<4x2x1xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x2x1xf32>) -> tensor<4x2x1xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<4x2x8xbf16>) outs(%z : tensor<4x2x1xf32>) {
  ^bb0(%in: bf16, %acc: f32):
    %xf = arith.extf %in : bf16 to f32
    %sq = arith.mulf %xf, %xf : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<4x2x1xf32>
  %n = linalg.generic {indexing_maps = [#id, #row, #ch, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %sum, %w : tensor<4x2x8xbf16>, tensor<4x2x1xf32>, tensor<8xbf16>) outs(%e : tensor<4x2x8xbf16>) {
  ^bb0(%xi: bf16, %s: f32, %wi: bf16, %o: bf16):
    %xf = arith.extf %xi : bf16 to f32
    %m = arith.mulf %c0125, %s : f32
    %a = arith.addf %eps, %m : f32
    %r = math.rsqrt %a : f32
    %xn = arith.mulf %r, %xf : f32
    %xb = arith.truncf %xn : f32 to bf16
    %y = arith.mulf %wi, %xb : bf16
    linalg.yield %y : bf16
  } -> tensor<4x2x8xbf16>
  %y = rope.apply ins(%n : tensor<4x2x8xbf16>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xbf16>) -> tensor<4x2x8xbf16>
  return %y : tensor<4x2x8xbf16>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#ch = affine_map<(d0, d1, d2) -> (d2)>

// Gemma-3: (1 + w.float()) in f32: the weight operand is computed ([D], f32).
// CHECK-LABEL: func.func @gemma3_one_plus_w(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x2x8xbf16>, %[[W:[^:]*]]: tensor<8xbf16>
// CHECK: %[[W1:.*]] = linalg.generic {{.*}} ins(%[[W]] : tensor<8xbf16>) outs(%{{.*}} : tensor<8xf32>)
// CHECK: arith.extf
// CHECK: arith.addf %{{.*}}, %{{.*}} : f32
// CHECK: rope.apply ins(%[[X]] : tensor<4x2x8xbf16>) positions(%{{.*}}) norm(%[[W1]] : tensor<8xf32>) outs(%{{.*}} : tensor<4x2x8xbf16>) {norm_epsilon = 9.9999999747524271E-7 : f64}
// CHECK-NOT: math.rsqrt
func.func @gemma3_one_plus_w(%x: tensor<4x2x8xbf16>, %w: tensor<8xbf16>, %p: tensor<4xi64>) -> tensor<4x2x8xbf16> {
  %zero = arith.constant 0.0 : f32
  %c8 = arith.constant 8.0 : f32
  %eps = arith.constant 1.0e-06 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x2x8xbf16>
  %e1 = tensor.empty() : tensor<4x2x1xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x2x1xf32>) -> tensor<4x2x1xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<4x2x8xbf16>) outs(%z : tensor<4x2x1xf32>) {
  ^bb0(%in: bf16, %acc: f32):
    %xf = arith.extf %in : bf16 to f32
    %sq = arith.mulf %xf, %xf : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<4x2x1xf32>
  %n = linalg.generic {indexing_maps = [#id, #row, #ch, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %sum, %w : tensor<4x2x8xbf16>, tensor<4x2x1xf32>, tensor<8xbf16>) outs(%e : tensor<4x2x8xbf16>) {
  ^bb0(%xi: bf16, %s: f32, %wi: bf16, %o: bf16):
    %xf = arith.extf %xi : bf16 to f32
    %m = arith.divf %s, %c8 : f32
    %a = arith.addf %m, %eps : f32
    %r = math.rsqrt %a : f32
    %xn = arith.mulf %xf, %r : f32
    %wf = arith.extf %wi : bf16 to f32
    %w1 = arith.addf %one, %wf : f32
    %y32 = arith.mulf %xn, %w1 : f32
    %y = arith.truncf %y32 : f32 to bf16
    linalg.yield %y : bf16
  } -> tensor<4x2x8xbf16>
  %y = rope.apply ins(%n : tensor<4x2x8xbf16>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xbf16>) -> tensor<4x2x8xbf16>
  return %y : tensor<4x2x8xbf16>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#ch = affine_map<(d0, d1, d2) -> (d2)>

// eps added after the rsqrt: rsqrt(mean) + eps is not the norm.
// CHECK-LABEL: func.func @eps_after_rsqrt(
// CHECK: math.rsqrt
// CHECK: rope.apply ins(%{{.*}} : tensor<4x2x8xf32>) positions(%{{.*}} : tensor<4xi64>) outs(
func.func @eps_after_rsqrt(%x: tensor<4x2x8xf32>, %w: tensor<8xf32>, %p: tensor<4xi64>) -> tensor<4x2x8xf32> {
  %zero = arith.constant 0.0 : f32
  %c8 = arith.constant 8.0 : f32
  %eps = arith.constant 1.0e-06 : f32
  %e = tensor.empty() : tensor<4x2x8xf32>
  %e1 = tensor.empty() : tensor<4x2x1xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x2x1xf32>) -> tensor<4x2x1xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<4x2x8xf32>) outs(%z : tensor<4x2x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<4x2x1xf32>
  %n = linalg.generic {indexing_maps = [#id, #row, #ch, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %sum, %w : tensor<4x2x8xf32>, tensor<4x2x1xf32>, tensor<8xf32>) outs(%e : tensor<4x2x8xf32>) {
  ^bb0(%xi: f32, %s: f32, %wi: f32, %o: f32):
    %m = arith.divf %s, %c8 : f32
    %a = math.rsqrt %m : f32
    %r = arith.addf %a, %eps : f32
    %xn = arith.mulf %xi, %r : f32
    %y = arith.mulf %xn, %wi : f32
    linalg.yield %y : f32
  } -> tensor<4x2x8xf32>
  %y = rope.apply ins(%n : tensor<4x2x8xf32>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xf32>) -> tensor<4x2x8xf32>
  return %y : tensor<4x2x8xf32>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#ch = affine_map<(d0, d1, d2) -> (d2)>

// eps added to the sum before the division: (sum + eps) / D.
// CHECK-LABEL: func.func @eps_inside_sum(
// CHECK: math.rsqrt
// CHECK: rope.apply ins(%{{.*}} : tensor<4x2x8xf32>) positions(%{{.*}} : tensor<4xi64>) outs(
func.func @eps_inside_sum(%x: tensor<4x2x8xf32>, %w: tensor<8xf32>, %p: tensor<4xi64>) -> tensor<4x2x8xf32> {
  %zero = arith.constant 0.0 : f32
  %c8 = arith.constant 8.0 : f32
  %eps = arith.constant 1.0e-06 : f32
  %e = tensor.empty() : tensor<4x2x8xf32>
  %e1 = tensor.empty() : tensor<4x2x1xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x2x1xf32>) -> tensor<4x2x1xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<4x2x8xf32>) outs(%z : tensor<4x2x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<4x2x1xf32>
  %n = linalg.generic {indexing_maps = [#id, #row, #ch, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %sum, %w : tensor<4x2x8xf32>, tensor<4x2x1xf32>, tensor<8xf32>) outs(%e : tensor<4x2x8xf32>) {
  ^bb0(%xi: f32, %s: f32, %wi: f32, %o: f32):
    %m = arith.addf %s, %eps : f32
    %a = arith.divf %m, %c8 : f32
    %r = math.rsqrt %a : f32
    %xn = arith.mulf %xi, %r : f32
    %y = arith.mulf %xn, %wi : f32
    linalg.yield %y : f32
  } -> tensor<4x2x8xf32>
  %y = rope.apply ins(%n : tensor<4x2x8xf32>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xf32>) -> tensor<4x2x8xf32>
  return %y : tensor<4x2x8xf32>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#ch = affine_map<(d0, d1, d2) -> (d2)>

// The mean divides by 4, not D = 8.
// CHECK-LABEL: func.func @mean_of_wrong_count(
// CHECK: math.rsqrt
// CHECK: rope.apply ins(%{{.*}} : tensor<4x2x8xf32>) positions(%{{.*}} : tensor<4xi64>) outs(
func.func @mean_of_wrong_count(%x: tensor<4x2x8xf32>, %w: tensor<8xf32>, %p: tensor<4xi64>) -> tensor<4x2x8xf32> {
  %zero = arith.constant 0.0 : f32
  %c8 = arith.constant 8.0 : f32
  %c4 = arith.constant 4.0 : f32
  %eps = arith.constant 1.0e-06 : f32
  %e = tensor.empty() : tensor<4x2x8xf32>
  %e1 = tensor.empty() : tensor<4x2x1xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x2x1xf32>) -> tensor<4x2x1xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<4x2x8xf32>) outs(%z : tensor<4x2x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<4x2x1xf32>
  %n = linalg.generic {indexing_maps = [#id, #row, #ch, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %sum, %w : tensor<4x2x8xf32>, tensor<4x2x1xf32>, tensor<8xf32>) outs(%e : tensor<4x2x8xf32>) {
  ^bb0(%xi: f32, %s: f32, %wi: f32, %o: f32):
    %m = arith.divf %s, %c4 : f32
    %a = arith.addf %m, %eps : f32
    %r = math.rsqrt %a : f32
    %xn = arith.mulf %xi, %r : f32
    %y = arith.mulf %xn, %wi : f32
    linalg.yield %y : f32
  } -> tensor<4x2x8xf32>
  %y = rope.apply ins(%n : tensor<4x2x8xf32>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xf32>) -> tensor<4x2x8xf32>
  return %y : tensor<4x2x8xf32>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#ch = affine_map<(d0, d1, d2) -> (d2)>

// The sum runs over the head dim (d1), not the channels: the reduction is
// not over the head dim.
// CHECK-LABEL: func.func @sum_over_heads(
// CHECK: math.rsqrt
// CHECK: rope.apply ins(%{{.*}} : tensor<4x2x8xf32>) positions(%{{.*}} : tensor<4xi64>) outs(
func.func @sum_over_heads(%x: tensor<4x2x8xf32>, %w: tensor<8xf32>, %p: tensor<4xi64>) -> tensor<4x2x8xf32> {
  %zero = arith.constant 0.0 : f32
  %c8 = arith.constant 8.0 : f32
  %eps = arith.constant 1.0e-06 : f32
  %e = tensor.empty() : tensor<4x2x8xf32>
  %e1 = tensor.empty() : tensor<4x1x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x1x8xf32>) -> tensor<4x1x8xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2, d1)>, affine_map<(d0, d1, d2) -> (d0, 0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<4x2x8xf32>) outs(%z : tensor<4x1x8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<4x1x8xf32>
  %n = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1, d2) -> (d0, 0, d2)>, #ch, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %sum, %w : tensor<4x2x8xf32>, tensor<4x1x8xf32>, tensor<8xf32>) outs(%e : tensor<4x2x8xf32>) {
  ^bb0(%xi: f32, %s: f32, %wi: f32, %o: f32):
    %m = arith.divf %s, %c8 : f32
    %a = arith.addf %m, %eps : f32
    %r = math.rsqrt %a : f32
    %xn = arith.mulf %xi, %r : f32
    %y = arith.mulf %xn, %wi : f32
    linalg.yield %y : f32
  } -> tensor<4x2x8xf32>
  %y = rope.apply ins(%n : tensor<4x2x8xf32>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xf32>) -> tensor<4x2x8xf32>
  return %y : tensor<4x2x8xf32>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#ch = affine_map<(d0, d1, d2) -> (d2)>

// The sum starts from 1, not 0.
// CHECK-LABEL: func.func @sum_from_one(
// CHECK: math.rsqrt
// CHECK: rope.apply ins(%{{.*}} : tensor<4x2x8xf32>) positions(%{{.*}} : tensor<4xi64>) outs(
func.func @sum_from_one(%x: tensor<4x2x8xf32>, %w: tensor<8xf32>, %p: tensor<4xi64>) -> tensor<4x2x8xf32> {
  %zero = arith.constant 1.0 : f32
  %c8 = arith.constant 8.0 : f32
  %eps = arith.constant 1.0e-06 : f32
  %e = tensor.empty() : tensor<4x2x8xf32>
  %e1 = tensor.empty() : tensor<4x2x1xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x2x1xf32>) -> tensor<4x2x1xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<4x2x8xf32>) outs(%z : tensor<4x2x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<4x2x1xf32>
  %n = linalg.generic {indexing_maps = [#id, #row, #ch, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %sum, %w : tensor<4x2x8xf32>, tensor<4x2x1xf32>, tensor<8xf32>) outs(%e : tensor<4x2x8xf32>) {
  ^bb0(%xi: f32, %s: f32, %wi: f32, %o: f32):
    %m = arith.divf %s, %c8 : f32
    %a = arith.addf %m, %eps : f32
    %r = math.rsqrt %a : f32
    %xn = arith.mulf %xi, %r : f32
    %y = arith.mulf %xn, %wi : f32
    linalg.yield %y : f32
  } -> tensor<4x2x8xf32>
  %y = rope.apply ins(%n : tensor<4x2x8xf32>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xf32>) -> tensor<4x2x8xf32>
  return %y : tensor<4x2x8xf32>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#ch = affine_map<(d0, d1, d2) -> (d2)>

// The sum of squares is of another tensor than the one normalized.
// CHECK-LABEL: func.func @square_of_other_tensor(
// CHECK: math.rsqrt
// CHECK: rope.apply ins(%{{.*}} : tensor<4x2x8xf32>) positions(%{{.*}} : tensor<4xi64>) outs(
func.func @square_of_other_tensor(%x: tensor<4x2x8xf32>, %w: tensor<8xf32>, %p: tensor<4xi64>, %x2: tensor<4x2x8xf32>) -> tensor<4x2x8xf32> {
  %zero = arith.constant 0.0 : f32
  %c8 = arith.constant 8.0 : f32
  %eps = arith.constant 1.0e-06 : f32
  %e = tensor.empty() : tensor<4x2x8xf32>
  %e1 = tensor.empty() : tensor<4x2x1xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x2x1xf32>) -> tensor<4x2x1xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x2 : tensor<4x2x8xf32>) outs(%z : tensor<4x2x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<4x2x1xf32>
  %n = linalg.generic {indexing_maps = [#id, #row, #ch, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %sum, %w : tensor<4x2x8xf32>, tensor<4x2x1xf32>, tensor<8xf32>) outs(%e : tensor<4x2x8xf32>) {
  ^bb0(%xi: f32, %s: f32, %wi: f32, %o: f32):
    %m = arith.divf %s, %c8 : f32
    %a = arith.addf %m, %eps : f32
    %r = math.rsqrt %a : f32
    %xn = arith.mulf %xi, %r : f32
    %y = arith.mulf %xn, %wi : f32
    linalg.yield %y : f32
  } -> tensor<4x2x8xf32>
  %y = rope.apply ins(%n : tensor<4x2x8xf32>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xf32>) -> tensor<4x2x8xf32>
  return %y : tensor<4x2x8xf32>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#ch = affine_map<(d0, d1, d2) -> (d2)>

// The weight is read by the head dim, not the channel.
// CHECK-LABEL: func.func @weight_by_head(
// CHECK: math.rsqrt
// CHECK: rope.apply ins(%{{.*}} : tensor<4x2x8xf32>) positions(%{{.*}} : tensor<4xi64>) outs(
func.func @weight_by_head(%x: tensor<4x2x8xf32>, %w: tensor<2xf32>, %p: tensor<4xi64>) -> tensor<4x2x8xf32> {
  %zero = arith.constant 0.0 : f32
  %c8 = arith.constant 8.0 : f32
  %eps = arith.constant 1.0e-06 : f32
  %e = tensor.empty() : tensor<4x2x8xf32>
  %e1 = tensor.empty() : tensor<4x2x1xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x2x1xf32>) -> tensor<4x2x1xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<4x2x8xf32>) outs(%z : tensor<4x2x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<4x2x1xf32>
  %n = linalg.generic {indexing_maps = [#id, #row, affine_map<(d0, d1, d2) -> (d1)>, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %sum, %w : tensor<4x2x8xf32>, tensor<4x2x1xf32>, tensor<2xf32>) outs(%e : tensor<4x2x8xf32>) {
  ^bb0(%xi: f32, %s: f32, %wi: f32, %o: f32):
    %m = arith.divf %s, %c8 : f32
    %a = arith.addf %m, %eps : f32
    %r = math.rsqrt %a : f32
    %xn = arith.mulf %xi, %r : f32
    %y = arith.mulf %xn, %wi : f32
    linalg.yield %y : f32
  } -> tensor<4x2x8xf32>
  %y = rope.apply ins(%n : tensor<4x2x8xf32>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xf32>) -> tensor<4x2x8xf32>
  return %y : tensor<4x2x8xf32>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#ch = affine_map<(d0, d1, d2) -> (d2)>

// 1 / sqrt(...) instead of rsqrt: another rounding; not folded.
// CHECK-LABEL: func.func @sqrt_divide(
// CHECK: math.sqrt
// CHECK: rope.apply ins(%{{.*}} : tensor<4x2x8xf32>) positions(%{{.*}} : tensor<4xi64>) outs(
func.func @sqrt_divide(%x: tensor<4x2x8xf32>, %w: tensor<8xf32>, %p: tensor<4xi64>) -> tensor<4x2x8xf32> {
  %zero = arith.constant 0.0 : f32
  %c8 = arith.constant 8.0 : f32
  %eps = arith.constant 1.0e-06 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<4x2x8xf32>
  %e1 = tensor.empty() : tensor<4x2x1xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x2x1xf32>) -> tensor<4x2x1xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<4x2x8xf32>) outs(%z : tensor<4x2x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<4x2x1xf32>
  %n = linalg.generic {indexing_maps = [#id, #row, #ch, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %sum, %w : tensor<4x2x8xf32>, tensor<4x2x1xf32>, tensor<8xf32>) outs(%e : tensor<4x2x8xf32>) {
  ^bb0(%xi: f32, %s: f32, %wi: f32, %o: f32):
    %m = arith.divf %s, %c8 : f32
    %a = arith.addf %m, %eps : f32
    %q = math.sqrt %a : f32
    %r = arith.divf %one, %q : f32
    %xn = arith.mulf %xi, %r : f32
    %y = arith.mulf %xn, %wi : f32
    linalg.yield %y : f32
  } -> tensor<4x2x8xf32>
  %y = rope.apply ins(%n : tensor<4x2x8xf32>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xf32>) -> tensor<4x2x8xf32>
  return %y : tensor<4x2x8xf32>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#ch = affine_map<(d0, d1, d2) -> (d2)>

// The normalized value is x + x, not x.
// CHECK-LABEL: func.func @x_used_twice_differently(
// CHECK: math.rsqrt
// CHECK: rope.apply ins(%{{.*}} : tensor<4x2x8xf32>) positions(%{{.*}} : tensor<4xi64>) outs(
func.func @x_used_twice_differently(%x: tensor<4x2x8xf32>, %w: tensor<8xf32>, %p: tensor<4xi64>) -> tensor<4x2x8xf32> {
  %zero = arith.constant 0.0 : f32
  %c8 = arith.constant 8.0 : f32
  %eps = arith.constant 1.0e-06 : f32
  %e = tensor.empty() : tensor<4x2x8xf32>
  %e1 = tensor.empty() : tensor<4x2x1xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x2x1xf32>) -> tensor<4x2x1xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<4x2x8xf32>) outs(%z : tensor<4x2x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<4x2x1xf32>
  %n = linalg.generic {indexing_maps = [#id, #row, #ch, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %sum, %w : tensor<4x2x8xf32>, tensor<4x2x1xf32>, tensor<8xf32>) outs(%e : tensor<4x2x8xf32>) {
  ^bb0(%xi: f32, %s: f32, %wi: f32, %o: f32):
    %m = arith.divf %s, %c8 : f32
    %a = arith.addf %m, %eps : f32
    %r = math.rsqrt %a : f32
    %x2 = arith.addf %xi, %xi : f32
    %xn = arith.mulf %x2, %r : f32
    %y = arith.mulf %xn, %wi : f32
    linalg.yield %y : f32
  } -> tensor<4x2x8xf32>
  %y = rope.apply ins(%n : tensor<4x2x8xf32>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xf32>) -> tensor<4x2x8xf32>
  return %y : tensor<4x2x8xf32>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#ch = affine_map<(d0, d1, d2) -> (d2)>

// D = 12 (not a power of two): the mean as sum / 12 folds.
// CHECK-LABEL: func.func @head_dim_12_divides(
// CHECK: rope.apply ins(%{{.*}} : tensor<4x2x12xf32>) positions(%{{.*}}) norm(%{{.*}} : tensor<12xf32>)
func.func @head_dim_12_divides(%x: tensor<4x2x12xf32>, %w: tensor<12xf32>, %p: tensor<4xi64>) -> tensor<4x2x12xf32> {
  %zero = arith.constant 0.0 : f32
  %c12 = arith.constant 12.0 : f32
  %eps = arith.constant 1.0e-06 : f32
  %e = tensor.empty() : tensor<4x2x12xf32>
  %e1 = tensor.empty() : tensor<4x2x1xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x2x1xf32>) -> tensor<4x2x1xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<4x2x12xf32>) outs(%z : tensor<4x2x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<4x2x1xf32>
  %n = linalg.generic {indexing_maps = [#id, #row, #ch, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %sum, %w : tensor<4x2x12xf32>, tensor<4x2x1xf32>, tensor<12xf32>) outs(%e : tensor<4x2x12xf32>) {
  ^bb0(%xi: f32, %s: f32, %wi: f32, %o: f32):
    %m = arith.divf %s, %c12 : f32
    %a = arith.addf %m, %eps : f32
    %r = math.rsqrt %a : f32
    %xn = arith.mulf %xi, %r : f32
    %y = arith.mulf %xn, %wi : f32
    linalg.yield %y : f32
  } -> tensor<4x2x12xf32>
  %y = rope.apply ins(%n : tensor<4x2x12xf32>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x12xf32>) -> tensor<4x2x12xf32>
  return %y : tensor<4x2x12xf32>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#ch = affine_map<(d0, d1, d2) -> (d2)>

// D = 12 with the mean as sum * f32(1/12): one rounding more than sum / 12
// (1/12 is not exact in f32), so not folded.
// CHECK-LABEL: func.func @head_dim_12_times_reciprocal(
// CHECK: math.rsqrt
// CHECK: rope.apply ins(%{{.*}} : tensor<4x2x12xf32>) positions(%{{.*}} : tensor<4xi64>) outs(
func.func @head_dim_12_times_reciprocal(%x: tensor<4x2x12xf32>, %w: tensor<12xf32>, %p: tensor<4xi64>) -> tensor<4x2x12xf32> {
  %zero = arith.constant 0.0 : f32
  %inv12 = arith.constant 0.0833333358 : f32
  %eps = arith.constant 1.0e-06 : f32
  %e = tensor.empty() : tensor<4x2x12xf32>
  %e1 = tensor.empty() : tensor<4x2x1xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x2x1xf32>) -> tensor<4x2x1xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<4x2x12xf32>) outs(%z : tensor<4x2x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<4x2x1xf32>
  %n = linalg.generic {indexing_maps = [#id, #row, #ch, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %sum, %w : tensor<4x2x12xf32>, tensor<4x2x1xf32>, tensor<12xf32>) outs(%e : tensor<4x2x12xf32>) {
  ^bb0(%xi: f32, %s: f32, %wi: f32, %o: f32):
    %m = arith.mulf %s, %inv12 : f32
    %a = arith.addf %m, %eps : f32
    %r = math.rsqrt %a : f32
    %xn = arith.mulf %xi, %r : f32
    %y = arith.mulf %xn, %wi : f32
    linalg.yield %y : f32
  } -> tensor<4x2x12xf32>
  %y = rope.apply ins(%n : tensor<4x2x12xf32>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x12xf32>) -> tensor<4x2x12xf32>
  return %y : tensor<4x2x12xf32>
}

// -----

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, 0)>
#ch4 = affine_map<(d0, d1, d2, d3) -> (d3)>

// Qwen3's path as torch-mlir emits it, one step per generic: q_norm on
// [B, S, H, D] (fpowi, a keepdim sum, divf, eps truncated from f64 in the
// payload, rsqrt, x * r, w * (x * r)), then .transpose(1, 2) to [B, H, S, D]
// and the rotation there: x is transposed instead, and the op normalizes.
// CHECK-LABEL: func.func @torch_mlir_steps_transposed(
// CHECK-SAME: %[[X:[^:]*]]: tensor<1x4x2x8xf32>, %[[W:[^:]*]]: tensor<8xf32>, %[[P:[^:]*]]: tensor<1x4xi64>
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[X]] : tensor<1x4x2x8xf32>) outs(%{{.*}} : tensor<1x2x4x8xf32>) permutation = [0, 2, 1, 3]
// CHECK: %[[Y:.*]] = rope.apply ins(%[[T]] : tensor<1x2x4x8xf32>) positions(%[[P]] : tensor<1x4xi64>) norm(%[[W]] : tensor<8xf32>) outs(%{{.*}} : tensor<1x2x4x8xf32>) {norm_epsilon = 9.9999999747524271E-7 : f64, token_dims = array<i64: 0, 2>}
// CHECK-NOT: linalg.generic
// CHECK: return %[[Y]]
func.func @torch_mlir_steps_transposed(%x: tensor<1x4x2x8xf32>, %w: tensor<8xf32>, %p: tensor<1x4xi64>) -> tensor<1x2x4x8xf32> {
  %c2 = arith.constant 2 : i64
  %zero = arith.constant 0.0 : f32
  %d = arith.constant 8.0 : f32
  %eps64 = arith.constant 1.0e-6 : f64
  %e = tensor.empty() : tensor<1x4x2x8xf32>
  %sq = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x : tensor<1x4x2x8xf32>) outs(%e : tensor<1x4x2x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = math.fpowi %in, %c2 : f32, i64
    linalg.yield %r : f32
  } -> tensor<1x4x2x8xf32>
  %e1 = tensor.empty() : tensor<1x4x2x1xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e1 : tensor<1x4x2x1xf32>) -> tensor<1x4x2x1xf32>
  %sum = linalg.generic {indexing_maps = [#id4, #row4], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%sq : tensor<1x4x2x8xf32>) outs(%z : tensor<1x4x2x1xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = arith.addf %in, %o : f32
    linalg.yield %r : f32
  } -> tensor<1x4x2x1xf32>
  %mean = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%sum : tensor<1x4x2x1xf32>) outs(%e1 : tensor<1x4x2x1xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = arith.divf %in, %d : f32
    linalg.yield %r : f32
  } -> tensor<1x4x2x1xf32>
  %shift = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%mean : tensor<1x4x2x1xf32>) outs(%e1 : tensor<1x4x2x1xf32>) {
  ^bb0(%in: f32, %o: f32):
    %eps = arith.truncf %eps64 : f64 to f32
    %r = arith.addf %in, %eps : f32
    linalg.yield %r : f32
  } -> tensor<1x4x2x1xf32>
  %rs = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%shift : tensor<1x4x2x1xf32>) outs(%e1 : tensor<1x4x2x1xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = math.rsqrt %in : f32
    linalg.yield %r : f32
  } -> tensor<1x4x2x1xf32>
  %n = linalg.generic {indexing_maps = [#id4, #row4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%x, %rs : tensor<1x4x2x8xf32>, tensor<1x4x2x1xf32>) outs(%e : tensor<1x4x2x8xf32>) {
  ^bb0(%in: f32, %f: f32, %o: f32):
    %r = arith.mulf %in, %f : f32
    linalg.yield %r : f32
  } -> tensor<1x4x2x8xf32>
  %wn = linalg.generic {indexing_maps = [#ch4, #id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%w, %n : tensor<8xf32>, tensor<1x4x2x8xf32>) outs(%e : tensor<1x4x2x8xf32>) {
  ^bb0(%wi: f32, %in: f32, %o: f32):
    %r = arith.mulf %wi, %in : f32
    linalg.yield %r : f32
  } -> tensor<1x4x2x8xf32>
  %et = tensor.empty() : tensor<1x2x4x8xf32>
  %t = linalg.transpose ins(%wn : tensor<1x4x2x8xf32>) outs(%et : tensor<1x2x4x8xf32>) permutation = [0, 2, 1, 3]
  %y = rope.apply ins(%t : tensor<1x2x4x8xf32>) positions(%p : tensor<1x4xi64>) outs(%et : tensor<1x2x4x8xf32>) {token_dims = array<i64: 0, 2>} -> tensor<1x2x4x8xf32>
  return %y : tensor<1x2x4x8xf32>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#ch = affine_map<(d0, d1, d2) -> (d2)>

// The normalized tensor has a second user: folding would compute the norm
// twice; not folded.
// CHECK-LABEL: func.func @normalized_second_user(
// CHECK: math.rsqrt
// CHECK: rope.apply ins(%{{.*}} : tensor<4x2x8xf32>) positions(%{{.*}} : tensor<4xi64>) outs(
func.func @normalized_second_user(%x: tensor<4x2x8xf32>, %w: tensor<8xf32>, %p: tensor<4xi64>) -> (tensor<4x2x8xf32>, tensor<4x2x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %c8 = arith.constant 8.0 : f32
  %eps = arith.constant 1.0e-06 : f32
  %e = tensor.empty() : tensor<4x2x8xf32>
  %e1 = tensor.empty() : tensor<4x2x1xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x2x1xf32>) -> tensor<4x2x1xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<4x2x8xf32>) outs(%z : tensor<4x2x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<4x2x1xf32>
  %n = linalg.generic {indexing_maps = [#id, #row, #ch, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %sum, %w : tensor<4x2x8xf32>, tensor<4x2x1xf32>, tensor<8xf32>) outs(%e : tensor<4x2x8xf32>) {
  ^bb0(%xi: f32, %s: f32, %wi: f32, %o: f32):
    %m = arith.divf %s, %c8 : f32
    %a = arith.addf %m, %eps : f32
    %r = math.rsqrt %a : f32
    %xn = arith.mulf %xi, %r : f32
    %y = arith.mulf %xn, %wi : f32
    linalg.yield %y : f32
  } -> tensor<4x2x8xf32>
  %y = rope.apply ins(%n : tensor<4x2x8xf32>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xf32>) -> tensor<4x2x8xf32>
  return %y, %n : tensor<4x2x8xf32>, tensor<4x2x8xf32>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#ch = affine_map<(d0, d1, d2) -> (d2)>

// Both neighbours on one op: Qwen3's K in bf16, normalized, rotated and
// quantized to fp8 with one scale per KV head, one pass.
// CHECK-LABEL: func.func @norm_and_quant(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x2x8xbf16>, %[[W:[^:]*]]: tensor<8xbf16>, %[[P:[^:]*]]: tensor<4xi64>, %[[S:[^:]*]]: tensor<2xf32>
// CHECK: %[[Y:.*]] = rope.apply ins(%[[X]] : tensor<4x2x8xbf16>) positions(%[[P]] : tensor<4xi64>) norm(%[[W]] : tensor<8xbf16>) quant_scale(%[[S]] : tensor<2xf32>) outs(%{{.*}} : tensor<4x2x8xf8E4M3FN>) {norm_epsilon = 9.9999999747524271E-7 : f64} -> tensor<4x2x8xf8E4M3FN>
// CHECK-NOT: linalg.generic
// CHECK: return %[[Y]]
func.func @norm_and_quant(%x: tensor<4x2x8xbf16>, %w: tensor<8xbf16>, %p: tensor<4xi64>, %s: tensor<2xf32>) -> tensor<4x2x8xf8E4M3FN> {
  %zero = arith.constant 0.0 : f32
  %c8 = arith.constant 8.0 : f32
  %eps = arith.constant 1.0e-06 : f32
  %lo = arith.constant -448.0 : f32
  %hi = arith.constant 448.0 : f32
  %e = tensor.empty() : tensor<4x2x8xbf16>
  %e1 = tensor.empty() : tensor<4x2x1xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x2x1xf32>) -> tensor<4x2x1xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : tensor<4x2x8xbf16>) outs(%z : tensor<4x2x1xf32>) {
  ^bb0(%in: bf16, %acc: f32):
    %xf = arith.extf %in : bf16 to f32
    %sq = arith.mulf %xf, %xf : f32
    %t = arith.addf %sq, %acc : f32
    linalg.yield %t : f32
  } -> tensor<4x2x1xf32>
  %n = linalg.generic {indexing_maps = [#id, #row, #ch, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %sum, %w : tensor<4x2x8xbf16>, tensor<4x2x1xf32>, tensor<8xbf16>) outs(%e : tensor<4x2x8xbf16>) {
  ^bb0(%xi: bf16, %sm: f32, %wi: bf16, %o: bf16):
    %xf = arith.extf %xi : bf16 to f32
    %m = arith.divf %sm, %c8 : f32
    %a = arith.addf %m, %eps : f32
    %r = math.rsqrt %a : f32
    %xn = arith.mulf %xf, %r : f32
    %xb = arith.truncf %xn : f32 to bf16
    %y = arith.mulf %wi, %xb : bf16
    linalg.yield %y : bf16
  } -> tensor<4x2x8xbf16>
  %y = rope.apply ins(%n : tensor<4x2x8xbf16>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xbf16>) -> tensor<4x2x8xbf16>
  %eq = tensor.empty() : tensor<4x2x8xf8E4M3FN>
  %q = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1, d2) -> (d1)>, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y, %s : tensor<4x2x8xbf16>, tensor<2xf32>) outs(%eq : tensor<4x2x8xf8E4M3FN>) {
  ^bb0(%in: bf16, %si: f32, %o: f8E4M3FN):
    %f = arith.extf %in : bf16 to f32
    %v = arith.mulf %f, %si : f32
    %c1 = arith.minimumf %v, %hi : f32
    %c2 = arith.maximumf %c1, %lo : f32
    %t = arith.truncf %c2 : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<4x2x8xf8E4M3FN>
  return %q : tensor<4x2x8xf8E4M3FN>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// fp8 E4M3 with a constant scale in one generic: y.float() * 2, clamped with
// maximumf/minimumf to +-448, truncf.
// CHECK-LABEL: func.func @fp8_constant_scale(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x2x8xbf16>, %[[P:[^:]*]]: tensor<4xi64>
// CHECK-DAG: %[[S:.*]] = arith.constant dense<2.000000e+00> : tensor<f32>
// CHECK-DAG: %[[E:.*]] = tensor.empty() : tensor<4x2x8xf8E4M3FN>
// CHECK: %[[Q:.*]] = rope.apply ins(%[[X]] : tensor<4x2x8xbf16>) positions(%[[P]] : tensor<4xi64>) quant_scale(%[[S]] : tensor<f32>) outs(%[[E]] : tensor<4x2x8xf8E4M3FN>) -> tensor<4x2x8xf8E4M3FN>
// CHECK-NOT: linalg.generic
// CHECK: return %[[Q]]
func.func @fp8_constant_scale(%x: tensor<4x2x8xbf16>, %p: tensor<4xi64>) -> tensor<4x2x8xf8E4M3FN> {
  %lo = arith.constant -448.0 : f32
  %hi = arith.constant 448.0 : f32
  %sc = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<4x2x8xbf16>
  %y = rope.apply ins(%x : tensor<4x2x8xbf16>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xbf16>) -> tensor<4x2x8xbf16>
  %eq = tensor.empty() : tensor<4x2x8xf8E4M3FN>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y : tensor<4x2x8xbf16>) outs(%eq : tensor<4x2x8xf8E4M3FN>) {
  ^bb0(%in: bf16, %o: f8E4M3FN):
    %f = arith.extf %in : bf16 to f32
    %v = arith.mulf %f, %sc : f32
    %c1 = arith.maximumf %v, %lo : f32
    %c2 = arith.minimumf %c1, %hi : f32
    %t = arith.truncf %c2 : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<4x2x8xf8E4M3FN>
  return %q : tensor<4x2x8xf8E4M3FN>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// fp8 E5M2 spread over four generics (as torch-mlir splits it), a rank-0
// scale operand on the left.
// CHECK-LABEL: func.func @fp8_e5m2_tensor_scale_steps(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x2x8xbf16>, %[[P:[^:]*]]: tensor<4xi64>, %[[S:[^:]*]]: tensor<f32>
// CHECK: %[[Q:.*]] = rope.apply ins(%[[X]] : tensor<4x2x8xbf16>) positions(%[[P]] : tensor<4xi64>) quant_scale(%[[S]] : tensor<f32>) outs(%{{.*}} : tensor<4x2x8xf8E5M2>)
// CHECK-NOT: linalg.generic
// CHECK: return %[[Q]]
func.func @fp8_e5m2_tensor_scale_steps(%x: tensor<4x2x8xbf16>, %p: tensor<4xi64>, %s: tensor<f32>) -> tensor<4x2x8xf8E5M2> {
  %lo = arith.constant -57344.0 : f32
  %hi = arith.constant 57344.0 : f32
  %e = tensor.empty() : tensor<4x2x8xbf16>
  %y = rope.apply ins(%x : tensor<4x2x8xbf16>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xbf16>) -> tensor<4x2x8xbf16>
  %ef = tensor.empty() : tensor<4x2x8xf32>
  %f = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y : tensor<4x2x8xbf16>) outs(%ef : tensor<4x2x8xf32>) {
  ^bb0(%in: bf16, %o: f32):
    %r = arith.extf %in : bf16 to f32
    linalg.yield %r : f32
  } -> tensor<4x2x8xf32>
  %v = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> ()>, #id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s, %f : tensor<f32>, tensor<4x2x8xf32>) outs(%ef : tensor<4x2x8xf32>) {
  ^bb0(%si: f32, %in: f32, %o: f32):
    %r = arith.mulf %si, %in : f32
    linalg.yield %r : f32
  } -> tensor<4x2x8xf32>
  // Ordered predicates choosing the bound: NaN is kept, as the op keeps it.
  %c = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%v : tensor<4x2x8xf32>) outs(%ef : tensor<4x2x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    %b1 = arith.cmpf ogt, %in, %hi : f32
    %r1 = arith.select %b1, %hi, %in : f32
    %b2 = arith.cmpf ogt, %lo, %r1 : f32
    %r2 = arith.select %b2, %lo, %r1 : f32
    linalg.yield %r2 : f32
  } -> tensor<4x2x8xf32>
  %eq = tensor.empty() : tensor<4x2x8xf8E5M2>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%c : tensor<4x2x8xf32>) outs(%eq : tensor<4x2x8xf8E5M2>) {
  ^bb0(%in: f32, %o: f8E5M2):
    %r = arith.truncf %in : f32 to f8E5M2
    linalg.yield %r : f8E5M2
  } -> tensor<4x2x8xf8E5M2>
  return %q : tensor<4x2x8xf8E5M2>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// int8 with one scale per head (read by d1): roundeven, then the clamp.
// CHECK-LABEL: func.func @i8_per_head(
// CHECK-SAME: %[[S:[^:]*]]: tensor<2xf32>
// CHECK: rope.apply ins(%{{.*}} : tensor<4x2x8xbf16>) positions(%{{.*}} : tensor<4xi64>) quant_scale(%[[S]] : tensor<2xf32>) outs(%{{.*}} : tensor<4x2x8xi8>)
// CHECK-NOT: linalg.generic
func.func @i8_per_head(%x: tensor<4x2x8xbf16>, %p: tensor<4xi64>, %s: tensor<2xf32>) -> tensor<4x2x8xi8> {
  %lo = arith.constant -128.0 : f32
  %hi = arith.constant 127.0 : f32
  %sc = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<4x2x8xbf16>
  %y = rope.apply ins(%x : tensor<4x2x8xbf16>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xbf16>) -> tensor<4x2x8xbf16>
  %eq = tensor.empty() : tensor<4x2x8xi8>
  %q = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1, d2) -> (d1)>, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y, %s : tensor<4x2x8xbf16>, tensor<2xf32>) outs(%eq : tensor<4x2x8xi8>) {
  ^bb0(%in: bf16, %si: f32, %o: i8):
    %f = arith.extf %in : bf16 to f32
    %v = arith.mulf %f, %si : f32
    %r = math.roundeven %v : f32
    %c1 = arith.minimumf %r, %hi : f32
    %c2 = arith.maximumf %c1, %lo : f32
    %t = arith.fptosi %c2 : f32 to i8
    linalg.yield %t : i8
  } -> tensor<4x2x8xi8>
  return %q : tensor<4x2x8xi8>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// The per-head scale shaped [1, 2, 1] (read at (0, d1, 0)): collapsed to [2].
// CHECK-LABEL: func.func @i8_per_head_unit_dims(
// CHECK-SAME: %[[S:[^:]*]]: tensor<1x2x1xf32>
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[S]] {{\[}}[0, 1, 2]] : tensor<1x2x1xf32> into tensor<2xf32>
// CHECK: rope.apply {{.*}} quant_scale(%[[C]] : tensor<2xf32>) outs(%{{.*}} : tensor<4x2x8xi8>)
func.func @i8_per_head_unit_dims(%x: tensor<4x2x8xbf16>, %p: tensor<4xi64>, %s: tensor<1x2x1xf32>) -> tensor<4x2x8xi8> {
  %lo = arith.constant -128.0 : f32
  %hi = arith.constant 127.0 : f32
  %sc = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<4x2x8xbf16>
  %y = rope.apply ins(%x : tensor<4x2x8xbf16>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xbf16>) -> tensor<4x2x8xbf16>
  %eq = tensor.empty() : tensor<4x2x8xi8>
  %q = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1, d2) -> (0, d1, 0)>, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y, %s : tensor<4x2x8xbf16>, tensor<1x2x1xf32>) outs(%eq : tensor<4x2x8xi8>) {
  ^bb0(%in: bf16, %si: f32, %o: i8):
    %f = arith.extf %in : bf16 to f32
    %v = arith.mulf %f, %si : f32
    %r = math.roundeven %v : f32
    %c1 = arith.minimumf %r, %hi : f32
    %c2 = arith.maximumf %c1, %lo : f32
    %t = arith.fptosi %c2 : f32 to i8
    linalg.yield %t : i8
  } -> tensor<4x2x8xi8>
  return %q : tensor<4x2x8xi8>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// y / 0.5 is y * 2 exactly: scale 2; the clamp before the rounding.
// CHECK-LABEL: func.func @i8_divide_by_power_of_two(
// CHECK: %[[S:.*]] = arith.constant dense<2.000000e+00> : tensor<f32>
// CHECK: rope.apply {{.*}} quant_scale(%[[S]] : tensor<f32>) outs(%{{.*}} : tensor<4x2x8xi8>)
// CHECK-NOT: linalg.generic
func.func @i8_divide_by_power_of_two(%x: tensor<4x2x8xbf16>, %p: tensor<4xi64>) -> tensor<4x2x8xi8> {
  %lo = arith.constant -128.0 : f32
  %hi = arith.constant 127.0 : f32
  %sc = arith.constant 0.5 : f32
  %e = tensor.empty() : tensor<4x2x8xbf16>
  %y = rope.apply ins(%x : tensor<4x2x8xbf16>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xbf16>) -> tensor<4x2x8xbf16>
  %eq = tensor.empty() : tensor<4x2x8xi8>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y : tensor<4x2x8xbf16>) outs(%eq : tensor<4x2x8xi8>) {
  ^bb0(%in: bf16, %o: i8):
    %f = arith.extf %in : bf16 to f32
    %v = arith.divf %f, %sc : f32
    %c1 = arith.minimumf %v, %hi : f32
    %c2 = arith.maximumf %lo, %c1 : f32
    %r = math.roundeven %c2 : f32
    %t = arith.fptosi %r : f32 to i8
    linalg.yield %t : i8
  } -> tensor<4x2x8xi8>
  return %q : tensor<4x2x8xi8>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// y / 3 is not y * f32(1/3): not folded.
// CHECK-LABEL: func.func @i8_divide_by_three(
// CHECK: rope.apply ins(%{{.*}} : tensor<4x2x8xbf16>) positions(%{{.*}} : tensor<4xi64>) outs(%{{.*}} : tensor<4x2x8xbf16>)
// CHECK: linalg.generic
func.func @i8_divide_by_three(%x: tensor<4x2x8xbf16>, %p: tensor<4xi64>) -> tensor<4x2x8xi8> {
  %lo = arith.constant -128.0 : f32
  %hi = arith.constant 127.0 : f32
  %sc = arith.constant 3.0 : f32
  %e = tensor.empty() : tensor<4x2x8xbf16>
  %y = rope.apply ins(%x : tensor<4x2x8xbf16>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xbf16>) -> tensor<4x2x8xbf16>
  %eq = tensor.empty() : tensor<4x2x8xi8>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y : tensor<4x2x8xbf16>) outs(%eq : tensor<4x2x8xi8>) {
  ^bb0(%in: bf16, %o: i8):
    %f = arith.extf %in : bf16 to f32
    %v = arith.divf %f, %sc : f32
    %c1 = arith.minimumf %v, %hi : f32
    %c2 = arith.maximumf %lo, %c1 : f32
    %r = math.roundeven %c2 : f32
    %t = arith.fptosi %r : f32 to i8
    linalg.yield %t : i8
  } -> tensor<4x2x8xi8>
  return %q : tensor<4x2x8xi8>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// math.round rounds ties away from zero, the op to even: not folded.
// CHECK-LABEL: func.func @i8_round_half_away(
// CHECK: rope.apply ins(%{{.*}} : tensor<4x2x8xbf16>) positions(%{{.*}} : tensor<4xi64>) outs(%{{.*}} : tensor<4x2x8xbf16>)
// CHECK: linalg.generic
func.func @i8_round_half_away(%x: tensor<4x2x8xbf16>, %p: tensor<4xi64>) -> tensor<4x2x8xi8> {
  %lo = arith.constant -128.0 : f32
  %hi = arith.constant 127.0 : f32
  %sc = arith.constant 0.5 : f32
  %e = tensor.empty() : tensor<4x2x8xbf16>
  %y = rope.apply ins(%x : tensor<4x2x8xbf16>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xbf16>) -> tensor<4x2x8xbf16>
  %eq = tensor.empty() : tensor<4x2x8xi8>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y : tensor<4x2x8xbf16>) outs(%eq : tensor<4x2x8xi8>) {
  ^bb0(%in: bf16, %o: i8):
    %f = arith.extf %in : bf16 to f32
    %v = arith.divf %f, %sc : f32
    %c1 = arith.minimumf %v, %hi : f32
    %c2 = arith.maximumf %lo, %c1 : f32
    %r = math.round %c2 : f32
    %t = arith.fptosi %r : f32 to i8
    linalg.yield %t : i8
  } -> tensor<4x2x8xi8>
  return %q : tensor<4x2x8xi8>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// fptosi alone truncates toward zero: not folded.
// CHECK-LABEL: func.func @i8_no_rounding(
// CHECK: rope.apply ins(%{{.*}} : tensor<4x2x8xbf16>) positions(%{{.*}} : tensor<4xi64>) outs(%{{.*}} : tensor<4x2x8xbf16>)
// CHECK: linalg.generic
func.func @i8_no_rounding(%x: tensor<4x2x8xbf16>, %p: tensor<4xi64>) -> tensor<4x2x8xi8> {
  %lo = arith.constant -128.0 : f32
  %hi = arith.constant 127.0 : f32
  %sc = arith.constant 0.5 : f32
  %e = tensor.empty() : tensor<4x2x8xbf16>
  %y = rope.apply ins(%x : tensor<4x2x8xbf16>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xbf16>) -> tensor<4x2x8xbf16>
  %eq = tensor.empty() : tensor<4x2x8xi8>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y : tensor<4x2x8xbf16>) outs(%eq : tensor<4x2x8xi8>) {
  ^bb0(%in: bf16, %o: i8):
    %f = arith.extf %in : bf16 to f32
    %v = arith.divf %f, %sc : f32
    %c1 = arith.minimumf %v, %hi : f32
    %c2 = arith.maximumf %lo, %c1 : f32
        %t = arith.fptosi %c2 : f32 to i8
    linalg.yield %t : i8
  } -> tensor<4x2x8xi8>
  return %q : tensor<4x2x8xi8>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// A clamp to [-127, 127] (symmetric int8) is not the op's [-128, 127].
// CHECK-LABEL: func.func @i8_bounds(
// CHECK: rope.apply ins(%{{.*}} : tensor<4x2x8xbf16>) positions(%{{.*}} : tensor<4xi64>) outs(%{{.*}} : tensor<4x2x8xbf16>)
// CHECK: linalg.generic
func.func @i8_bounds(%x: tensor<4x2x8xbf16>, %p: tensor<4xi64>) -> tensor<4x2x8xi8> {
  %lo = arith.constant -127.0 : f32
  %hi = arith.constant 127.0 : f32
  %sc = arith.constant 0.5 : f32
  %e = tensor.empty() : tensor<4x2x8xbf16>
  %y = rope.apply ins(%x : tensor<4x2x8xbf16>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xbf16>) -> tensor<4x2x8xbf16>
  %eq = tensor.empty() : tensor<4x2x8xi8>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y : tensor<4x2x8xbf16>) outs(%eq : tensor<4x2x8xi8>) {
  ^bb0(%in: bf16, %o: i8):
    %f = arith.extf %in : bf16 to f32
    %v = arith.divf %f, %sc : f32
    %c1 = arith.minimumf %v, %hi : f32
    %c2 = arith.maximumf %lo, %c1 : f32
    %r = math.roundeven %c2 : f32
    %t = arith.fptosi %r : f32 to i8
    linalg.yield %t : i8
  } -> tensor<4x2x8xi8>
  return %q : tensor<4x2x8xi8>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// A clamp to +-400 is not E4M3's +-448.
// CHECK-LABEL: func.func @fp8_bounds(
// CHECK: rope.apply ins(%{{.*}} : tensor<4x2x8xbf16>) positions(%{{.*}} : tensor<4xi64>) outs(%{{.*}} : tensor<4x2x8xbf16>)
// CHECK: linalg.generic
func.func @fp8_bounds(%x: tensor<4x2x8xbf16>, %p: tensor<4xi64>) -> tensor<4x2x8xf8E4M3FN> {
  %lo = arith.constant -400.0 : f32
  %hi = arith.constant 400.0 : f32
  %sc = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<4x2x8xbf16>
  %y = rope.apply ins(%x : tensor<4x2x8xbf16>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xbf16>) -> tensor<4x2x8xbf16>
  %eq = tensor.empty() : tensor<4x2x8xf8E4M3FN>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y : tensor<4x2x8xbf16>) outs(%eq : tensor<4x2x8xf8E4M3FN>) {
  ^bb0(%in: bf16, %o: f8E4M3FN):
    %f = arith.extf %in : bf16 to f32
    %v = arith.mulf %f, %sc : f32
    %c1 = arith.maximumf %v, %lo : f32
    %c2 = arith.minimumf %c1, %hi : f32
    %t = arith.truncf %c2 : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<4x2x8xf8E4M3FN>
  return %q : tensor<4x2x8xf8E4M3FN>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// E5M2's bounds on an E4M3 destination.
// CHECK-LABEL: func.func @fp8_e4m3_with_e5m2_bounds(
// CHECK: rope.apply ins(%{{.*}} : tensor<4x2x8xbf16>) positions(%{{.*}} : tensor<4xi64>) outs(%{{.*}} : tensor<4x2x8xbf16>)
// CHECK: linalg.generic
func.func @fp8_e4m3_with_e5m2_bounds(%x: tensor<4x2x8xbf16>, %p: tensor<4xi64>) -> tensor<4x2x8xf8E4M3FN> {
  %lo = arith.constant -57344.0 : f32
  %hi = arith.constant 57344.0 : f32
  %sc = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<4x2x8xbf16>
  %y = rope.apply ins(%x : tensor<4x2x8xbf16>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xbf16>) -> tensor<4x2x8xbf16>
  %eq = tensor.empty() : tensor<4x2x8xf8E4M3FN>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y : tensor<4x2x8xbf16>) outs(%eq : tensor<4x2x8xf8E4M3FN>) {
  ^bb0(%in: bf16, %o: f8E4M3FN):
    %f = arith.extf %in : bf16 to f32
    %v = arith.mulf %f, %sc : f32
    %c1 = arith.maximumf %v, %lo : f32
    %c2 = arith.minimumf %c1, %hi : f32
    %t = arith.truncf %c2 : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<4x2x8xf8E4M3FN>
  return %q : tensor<4x2x8xf8E4M3FN>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// No clamp: truncf alone overflows to NaN where the op saturates.
// CHECK-LABEL: func.func @fp8_no_clamp(
// CHECK: rope.apply ins(%{{.*}} : tensor<4x2x8xbf16>) positions(%{{.*}} : tensor<4xi64>) outs(%{{.*}} : tensor<4x2x8xbf16>)
// CHECK: linalg.generic
func.func @fp8_no_clamp(%x: tensor<4x2x8xbf16>, %p: tensor<4xi64>) -> tensor<4x2x8xf8E4M3FN> {
  %lo = arith.constant -448.0 : f32
  %hi = arith.constant 448.0 : f32
  %sc = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<4x2x8xbf16>
  %y = rope.apply ins(%x : tensor<4x2x8xbf16>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xbf16>) -> tensor<4x2x8xbf16>
  %eq = tensor.empty() : tensor<4x2x8xf8E4M3FN>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y : tensor<4x2x8xbf16>) outs(%eq : tensor<4x2x8xf8E4M3FN>) {
  ^bb0(%in: bf16, %o: f8E4M3FN):
    %f = arith.extf %in : bf16 to f32
    %v = arith.mulf %f, %sc : f32
    %t = arith.truncf %v : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<4x2x8xf8E4M3FN>
  return %q : tensor<4x2x8xf8E4M3FN>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// A truncf that rounds toward zero.
// CHECK-LABEL: func.func @fp8_round_toward_zero(
// CHECK: rope.apply ins(%{{.*}} : tensor<4x2x8xbf16>) positions(%{{.*}} : tensor<4xi64>) outs(%{{.*}} : tensor<4x2x8xbf16>)
// CHECK: linalg.generic
func.func @fp8_round_toward_zero(%x: tensor<4x2x8xbf16>, %p: tensor<4xi64>) -> tensor<4x2x8xf8E4M3FN> {
  %lo = arith.constant -448.0 : f32
  %hi = arith.constant 448.0 : f32
  %sc = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<4x2x8xbf16>
  %y = rope.apply ins(%x : tensor<4x2x8xbf16>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xbf16>) -> tensor<4x2x8xbf16>
  %eq = tensor.empty() : tensor<4x2x8xf8E4M3FN>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y : tensor<4x2x8xbf16>) outs(%eq : tensor<4x2x8xf8E4M3FN>) {
  ^bb0(%in: bf16, %o: f8E4M3FN):
    %f = arith.extf %in : bf16 to f32
    %v = arith.mulf %f, %sc : f32
    %c1 = arith.maximumf %v, %lo : f32
    %c2 = arith.minimumf %c1, %hi : f32
    %t = arith.truncf %c2 toward_zero : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<4x2x8xf8E4M3FN>
  return %q : tensor<4x2x8xf8E4M3FN>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// torch-mlir's clamp: select(cmpf ult, lo, v) sends NaN to the lower bound;
// the op keeps NaN. Not folded.
// CHECK-LABEL: func.func @fp8_torch_mlir_clamp(
// CHECK: rope.apply ins(%{{.*}} : tensor<4x2x8xbf16>) positions(%{{.*}} : tensor<4xi64>) outs(%{{.*}} : tensor<4x2x8xbf16>)
// CHECK: linalg.generic
func.func @fp8_torch_mlir_clamp(%x: tensor<4x2x8xbf16>, %p: tensor<4xi64>) -> tensor<4x2x8xf8E4M3FN> {
  %lo = arith.constant -448.0 : f32
  %hi = arith.constant 448.0 : f32
  %sc = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<4x2x8xbf16>
  %y = rope.apply ins(%x : tensor<4x2x8xbf16>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xbf16>) -> tensor<4x2x8xbf16>
  %eq = tensor.empty() : tensor<4x2x8xf8E4M3FN>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y : tensor<4x2x8xbf16>) outs(%eq : tensor<4x2x8xf8E4M3FN>) {
  ^bb0(%in: bf16, %o: f8E4M3FN):
    %f = arith.extf %in : bf16 to f32
    %v = arith.mulf %f, %sc : f32
    %b1 = arith.cmpf ult, %v, %lo : f32
    %c1 = arith.select %b1, %lo, %v : f32
    %b2 = arith.cmpf ugt, %c1, %hi : f32
    %c2 = arith.select %b2, %hi, %c1 : f32
    %t = arith.truncf %c2 : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<4x2x8xf8E4M3FN>
  return %q : tensor<4x2x8xf8E4M3FN>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// maxnumf/minnumf send NaN to a bound: not folded.
// CHECK-LABEL: func.func @fp8_maxnumf_clamp(
// CHECK: rope.apply ins(%{{.*}} : tensor<4x2x8xbf16>) positions(%{{.*}} : tensor<4xi64>) outs(%{{.*}} : tensor<4x2x8xbf16>)
// CHECK: linalg.generic
func.func @fp8_maxnumf_clamp(%x: tensor<4x2x8xbf16>, %p: tensor<4xi64>) -> tensor<4x2x8xf8E4M3FN> {
  %lo = arith.constant -448.0 : f32
  %hi = arith.constant 448.0 : f32
  %sc = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<4x2x8xbf16>
  %y = rope.apply ins(%x : tensor<4x2x8xbf16>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xbf16>) -> tensor<4x2x8xbf16>
  %eq = tensor.empty() : tensor<4x2x8xf8E4M3FN>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y : tensor<4x2x8xbf16>) outs(%eq : tensor<4x2x8xf8E4M3FN>) {
  ^bb0(%in: bf16, %o: f8E4M3FN):
    %f = arith.extf %in : bf16 to f32
    %v = arith.mulf %f, %sc : f32
    %c1 = arith.maxnumf %v, %lo : f32
    %c2 = arith.minnumf %c1, %hi : f32
    %t = arith.truncf %c2 : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<4x2x8xf8E4M3FN>
  return %q : tensor<4x2x8xf8E4M3FN>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// y * s in bf16 (no y.float()): the op multiplies in f32; not folded.
// CHECK-LABEL: func.func @fp8_product_in_bf16(
// CHECK: rope.apply ins(%{{.*}} : tensor<4x2x8xbf16>) positions(%{{.*}} : tensor<4xi64>) outs(%{{.*}} : tensor<4x2x8xbf16>)
// CHECK: linalg.generic
func.func @fp8_product_in_bf16(%x: tensor<4x2x8xbf16>, %p: tensor<4xi64>) -> tensor<4x2x8xf8E4M3FN> {
  %lo = arith.constant -448.0 : f32
  %hi = arith.constant 448.0 : f32
  %sc = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<4x2x8xbf16>
  %y = rope.apply ins(%x : tensor<4x2x8xbf16>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xbf16>) -> tensor<4x2x8xbf16>
  %eq = tensor.empty() : tensor<4x2x8xf8E4M3FN>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y : tensor<4x2x8xbf16>) outs(%eq : tensor<4x2x8xf8E4M3FN>) {
  ^bb0(%in: bf16, %o: f8E4M3FN):
    %sb = arith.truncf %sc : f32 to bf16
    %vb = arith.mulf %in, %sb : bf16
    %v = arith.extf %vb : bf16 to f32
    %c1 = arith.maximumf %v, %lo : f32
    %c2 = arith.minimumf %c1, %hi : f32
    %t = arith.truncf %c2 : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<4x2x8xf8E4M3FN>
  return %q : tensor<4x2x8xf8E4M3FN>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// y has a second user: the unquantized result is still needed.
// CHECK-LABEL: func.func @fp8_second_user(
// CHECK: rope.apply ins(%{{.*}} : tensor<4x2x8xbf16>) positions(%{{.*}} : tensor<4xi64>) outs(%{{.*}} : tensor<4x2x8xbf16>)
// CHECK: linalg.generic
func.func @fp8_second_user(%x: tensor<4x2x8xbf16>, %p: tensor<4xi64>) -> (tensor<4x2x8xf8E4M3FN>, tensor<4x2x8xbf16>) {
  %lo = arith.constant -448.0 : f32
  %hi = arith.constant 448.0 : f32
  %sc = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<4x2x8xbf16>
  %y = rope.apply ins(%x : tensor<4x2x8xbf16>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xbf16>) -> tensor<4x2x8xbf16>
  %eq = tensor.empty() : tensor<4x2x8xf8E4M3FN>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y : tensor<4x2x8xbf16>) outs(%eq : tensor<4x2x8xf8E4M3FN>) {
  ^bb0(%in: bf16, %o: f8E4M3FN):
    %f = arith.extf %in : bf16 to f32
    %v = arith.mulf %f, %sc : f32
    %c1 = arith.maximumf %v, %lo : f32
    %c2 = arith.minimumf %c1, %hi : f32
    %t = arith.truncf %c2 : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<4x2x8xf8E4M3FN>
  return %q, %y : tensor<4x2x8xf8E4M3FN>, tensor<4x2x8xbf16>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// A scale read by the token dim (d0) is neither per tensor nor per head.
// CHECK-LABEL: func.func @i8_scale_by_token(
// CHECK: rope.apply ins(%{{.*}} : tensor<4x2x8xbf16>) positions(%{{.*}} : tensor<4xi64>) outs(%{{.*}} : tensor<4x2x8xbf16>)
// CHECK: linalg.generic
func.func @i8_scale_by_token(%x: tensor<4x2x8xbf16>, %p: tensor<4xi64>, %s: tensor<4xf32>) -> tensor<4x2x8xi8> {
  %lo = arith.constant -128.0 : f32
  %hi = arith.constant 127.0 : f32
  %sc = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<4x2x8xbf16>
  %y = rope.apply ins(%x : tensor<4x2x8xbf16>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xbf16>) -> tensor<4x2x8xbf16>
  %eq = tensor.empty() : tensor<4x2x8xi8>
  %q = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1, d2) -> (d0)>, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y, %s : tensor<4x2x8xbf16>, tensor<4xf32>) outs(%eq : tensor<4x2x8xi8>) {
  ^bb0(%in: bf16, %si: f32, %o: i8):
    %f = arith.extf %in : bf16 to f32
    %v = arith.mulf %f, %si : f32
    %r = math.roundeven %v : f32
    %c1 = arith.minimumf %r, %hi : f32
    %c2 = arith.maximumf %c1, %lo : f32
    %t = arith.fptosi %c2 : f32 to i8
    linalg.yield %t : i8
  } -> tensor<4x2x8xi8>
  return %q : tensor<4x2x8xi8>
}

// -----

#tok = affine_map<(d0, d1) -> (d0)>
#ch = affine_map<(d0, d1) -> (d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>

// The whole path written out, one step per op (as torch-mlir emits it): the
// norm's products are elementwise, so the rotation raise would read x, w and
// the rsqrt as three data tensors; rope-raise first gathers the norm into one
// generic (isolateNorms), raises the rotation of it, then folds it.
// CHECK-LABEL: func.func @written_out_norm_then_rotation(
// CHECK-SAME: %[[X:[^:]*]]: tensor<8x8xf32>, %[[W:[^:]*]]: tensor<8xf32>, %[[P:[^:]*]]: tensor<8xi64>
// CHECK-NOT: linalg.generic
// CHECK: %[[Y:.*]] = rope.apply ins(%[[X]] : tensor<8x8xf32>) positions(%[[P]] : tensor<8xi64>) norm(%[[W]] : tensor<8xf32>) outs(%{{.*}} : tensor<8x8xf32>) {freqs = #rope.default<>, norm_epsilon = 9.9999999747524271E-7 : f64}
// CHECK-NOT: linalg.generic
// CHECK: return %[[Y]]
func.func @written_out_norm_then_rotation(%x: tensor<8x8xf32>, %w: tensor<8xf32>, %p: tensor<8xi64>) -> tensor<8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %d = arith.constant 8.0 : f32
  %eps = arith.constant 1.0e-6 : f32
  %e8 = tensor.empty() : tensor<8x8xf32>
  %e1 = tensor.empty() : tensor<8x1xf32>
  %sq = linalg.mul ins(%x, %x : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e8 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x1xf32>) -> tensor<8x1xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%sq : tensor<8x8xf32>) outs(%z : tensor<8x1xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = arith.addf %in, %o : f32
    linalg.yield %r : f32
  } -> tensor<8x1xf32>
  %rs = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%sum : tensor<8x1xf32>) outs(%e1 : tensor<8x1xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.divf %in, %d : f32
    %a = arith.addf %m, %eps : f32
    %r = math.rsqrt %a : f32
    linalg.yield %r : f32
  } -> tensor<8x1xf32>
  %n = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %rs : tensor<8x8xf32>, tensor<8x1xf32>) outs(%e8 : tensor<8x8xf32>) {
  ^bb0(%in: f32, %f: f32, %o: f32):
    %r = arith.mulf %in, %f : f32
    linalg.yield %r : f32
  } -> tensor<8x8xf32>
  %xn = linalg.generic {indexing_maps = [#ch, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%w, %n : tensor<8xf32>, tensor<8x8xf32>) outs(%e8 : tensor<8x8xf32>) {
  ^bb0(%wi: f32, %in: f32, %o: f32):
    %r = arith.mulf %wi, %in : f32
    linalg.yield %r : f32
  } -> tensor<8x8xf32>
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
  %x1 = tensor.extract_slice %xn[0, 0] [8, 4] [1, 1] : tensor<8x8xf32> to tensor<8x4xf32>
  %x2 = tensor.extract_slice %xn[0, 4] [8, 4] [1, 1] : tensor<8x8xf32> to tensor<8x4xf32>
  %neg = linalg.negf ins(%x2 : tensor<8x4xf32>) outs(%e4 : tensor<8x4xf32>) -> tensor<8x4xf32>
  %rot = tensor.concat dim(1) %neg, %x1 : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x8xf32>
  %rs2 = linalg.mul ins(%sin, %rot : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e8 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %xc = linalg.mul ins(%cos, %xn : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e8 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %y = linalg.add ins(%rs2, %xc : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e8 : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}

// -----

#ch = affine_map<(d0, d1) -> (d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0, 0)>

// A norm that no rotation reads: gathered for the rotation raise, then put
// back as it was (every step, in order; nothing fused).
// CHECK-LABEL: func.func @norm_without_rotation(
// CHECK: linalg.mul
// CHECK-NEXT: linalg.fill
// CHECK-NEXT: linalg.generic
// CHECK: arith.addf
// CHECK: linalg.generic
// CHECK: math.rsqrt
// CHECK: %[[N:.*]] = linalg.generic
// CHECK-NOT: math.rsqrt
// CHECK: linalg.yield
// CHECK: %[[WN:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[N]] : tensor<8xf32>, tensor<8x8xf32>)
// CHECK-NOT: linalg.generic
// CHECK: return %[[WN]]
func.func @norm_without_rotation(%x: tensor<8x8xf32>, %w: tensor<8xf32>) -> tensor<8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %d = arith.constant 8.0 : f32
  %eps = arith.constant 1.0e-6 : f32
  %e8 = tensor.empty() : tensor<8x8xf32>
  %e1 = tensor.empty() : tensor<8x1xf32>
  %sq = linalg.mul ins(%x, %x : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e8 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x1xf32>) -> tensor<8x1xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%sq : tensor<8x8xf32>) outs(%z : tensor<8x1xf32>) {
  ^bb0(%in: f32, %o: f32):
    %r = arith.addf %in, %o : f32
    linalg.yield %r : f32
  } -> tensor<8x1xf32>
  %rs = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%sum : tensor<8x1xf32>) outs(%e1 : tensor<8x1xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.divf %in, %d : f32
    %a = arith.addf %m, %eps : f32
    %r = math.rsqrt %a : f32
    linalg.yield %r : f32
  } -> tensor<8x1xf32>
  %n = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %rs : tensor<8x8xf32>, tensor<8x1xf32>) outs(%e8 : tensor<8x8xf32>) {
  ^bb0(%in: f32, %f: f32, %o: f32):
    %r = arith.mulf %in, %f : f32
    linalg.yield %r : f32
  } -> tensor<8x8xf32>
  %xn = linalg.generic {indexing_maps = [#ch, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%w, %n : tensor<8xf32>, tensor<8x8xf32>) outs(%e8 : tensor<8x8xf32>) {
  ^bb0(%wi: f32, %in: f32, %o: f32):
    %r = arith.mulf %wi, %in : f32
    linalg.yield %r : f32
  } -> tensor<8x8xf32>
  return %xn : tensor<8x8xf32>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// torch-mlir's clamp (select(cmpf ult, lo, v), select(cmpf ugt, hi, v)) with
// fastmath<nnan> on the comparisons: NaN is poison, so the NaN the clamp
// would send to -448 is no difference; folded.
// CHECK-LABEL: func.func @fp8_torch_mlir_clamp_nnan(
// CHECK: rope.apply {{.*}} quant_scale(%{{.*}} : tensor<f32>) outs(%{{.*}} : tensor<4x2x8xf8E4M3FN>)
// CHECK-NOT: linalg.generic
func.func @fp8_torch_mlir_clamp_nnan(%x: tensor<4x2x8xbf16>, %p: tensor<4xi64>) -> tensor<4x2x8xf8E4M3FN> {
  %lo = arith.constant -448.0 : f32
  %hi = arith.constant 448.0 : f32
  %sc = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<4x2x8xbf16>
  %y = rope.apply ins(%x : tensor<4x2x8xbf16>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xbf16>) -> tensor<4x2x8xbf16>
  %eq = tensor.empty() : tensor<4x2x8xf8E4M3FN>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y : tensor<4x2x8xbf16>) outs(%eq : tensor<4x2x8xf8E4M3FN>) {
  ^bb0(%in: bf16, %o: f8E4M3FN):
    %f = arith.extf %in : bf16 to f32
    %v = arith.mulf %f, %sc : f32
    %b1 = arith.cmpf ult, %v, %lo fastmath<nnan> : f32
    %c1 = arith.select %b1, %lo, %v : f32
    %b2 = arith.cmpf ugt, %c1, %hi fastmath<nnan> : f32
    %c2 = arith.select %b2, %hi, %c1 : f32
    %t = arith.truncf %c2 : f32 to f8E4M3FN
    linalg.yield %t : f8E4M3FN
  } -> tensor<4x2x8xf8E4M3FN>
  return %q : tensor<4x2x8xf8E4M3FN>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>

// maxnumf/minnumf with fastmath<nnan>: folded (i8, y / 0.25 -> scale 4).
// CHECK-LABEL: func.func @i8_numf_nnan(
// CHECK: %[[S:.*]] = arith.constant dense<4.000000e+00> : tensor<f32>
// CHECK: rope.apply {{.*}} quant_scale(%[[S]] : tensor<f32>) outs(%{{.*}} : tensor<4x2x8xi8>)
// CHECK-NOT: linalg.generic
func.func @i8_numf_nnan(%x: tensor<4x2x8xbf16>, %p: tensor<4xi64>) -> tensor<4x2x8xi8> {
  %lo = arith.constant -128.0 : f32
  %hi = arith.constant 127.0 : f32
  %sc = arith.constant 0.25 : f32
  %e = tensor.empty() : tensor<4x2x8xbf16>
  %y = rope.apply ins(%x : tensor<4x2x8xbf16>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xbf16>) -> tensor<4x2x8xbf16>
  %eq = tensor.empty() : tensor<4x2x8xi8>
  %q = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%y : tensor<4x2x8xbf16>) outs(%eq : tensor<4x2x8xi8>) {
  ^bb0(%in: bf16, %o: i8):
    %f = arith.extf %in : bf16 to f32
    %v = arith.divf %f, %sc : f32
    %r = math.roundeven %v : f32
    %c1 = arith.maxnumf %r, %lo fastmath<nnan> : f32
    %c2 = arith.minnumf %c1, %hi fastmath<nnan> : f32
    %t = arith.fptosi %c2 : f32 to i8
    linalg.yield %t : i8
  } -> tensor<4x2x8xi8>
  return %q : tensor<4x2x8xi8>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#red = affine_map<(d0, d1, d2) -> (d0, d1)>
#ch = affine_map<(d0, d1, d2) -> (d2)>

// linalg-fold-unit-extent-dims{use-rank-reducing-slices}: x is read through
// extract_slices that take all of a [1, 4, 2, 8] tensor and drop its unit
// dim, the sum starts from a slice of a zero fill, and the norm is written
// back into [1, 4, 2, 8] by an insert_slice over all of it. Each is read as
// the reshape it is: the norm folds.
// CHECK-LABEL: func.func @whole_unit_slices(
// CHECK-SAME: %[[X:[^:]*]]: tensor<1x4x2x8xf32>, %[[W:[^:]*]]: tensor<8xf32>
// CHECK: rope.apply ins(%{{.*}} : tensor<4x2x8xf32>) positions(%{{.*}}) norm(%[[W]] : tensor<8xf32>)
// CHECK-NOT: math.rsqrt
func.func @whole_unit_slices(%x: tensor<1x4x2x8xf32>, %w: tensor<8xf32>, %p: tensor<4xi64>) -> tensor<4x2x8xf32> {
  %zero = arith.constant 0.0 : f32
  %c8 = arith.constant 8.0 : f32
  %eps = arith.constant 1.0e-06 : f32
  %xa = tensor.extract_slice %x[0, 0, 0, 0] [1, 4, 2, 8] [1, 1, 1, 1] : tensor<1x4x2x8xf32> to tensor<4x2x8xf32>
  %xb = tensor.extract_slice %x[0, 0, 0, 0] [1, 4, 2, 8] [1, 1, 1, 1] : tensor<1x4x2x8xf32> to tensor<4x2x8xf32>
  %e = tensor.empty() : tensor<4x2x8xf32>
  %e1 = tensor.empty() : tensor<4x2x1xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x2x1xf32>) -> tensor<4x2x1xf32>
  %zs = tensor.extract_slice %z[0, 0, 0] [4, 2, 1] [1, 1, 1] : tensor<4x2x1xf32> to tensor<4x2xf32>
  %sum = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["parallel", "parallel", "reduction"]} ins(%xa : tensor<4x2x8xf32>) outs(%zs : tensor<4x2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<4x2xf32>
  %n = linalg.generic {indexing_maps = [#id, #red, #ch, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%xb, %sum, %w : tensor<4x2x8xf32>, tensor<4x2xf32>, tensor<8xf32>) outs(%e : tensor<4x2x8xf32>) {
  ^bb0(%xi: f32, %s: f32, %wi: f32, %o: f32):
    %m = arith.divf %s, %c8 : f32
    %a = arith.addf %m, %eps : f32
    %r = math.rsqrt %a : f32
    %xn = arith.mulf %xi, %r : f32
    %y = arith.mulf %xn, %wi : f32
    linalg.yield %y : f32
  } -> tensor<4x2x8xf32>
  %e4 = tensor.empty() : tensor<1x4x2x8xf32>
  %back = tensor.insert_slice %n into %e4[0, 0, 0, 0] [1, 4, 2, 8] [1, 1, 1, 1] : tensor<4x2x8xf32> into tensor<1x4x2x8xf32>
  %nr = tensor.extract_slice %back[0, 0, 0, 0] [1, 4, 2, 8] [1, 1, 1, 1] : tensor<1x4x2x8xf32> to tensor<4x2x8xf32>
  %y = rope.apply ins(%nr : tensor<4x2x8xf32>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xf32>) -> tensor<4x2x8xf32>
  return %y : tensor<4x2x8xf32>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#red = affine_map<(d0, d1, d2) -> (d0, d1)>
#ch = affine_map<(d0, d1, d2) -> (d2)>

// Negative: the sum of squares is over one half of a [4, 2, 16] tensor and
// x is the other half (slices that do not cover their source are not
// reshapes): not the norm of x, nothing is folded.
// CHECK-LABEL: func.func @partial_slices(
// CHECK: math.rsqrt
// CHECK: rope.apply
// CHECK-NOT: norm(
func.func @partial_slices(%x: tensor<4x2x16xf32>, %w: tensor<8xf32>, %p: tensor<4xi64>) -> tensor<4x2x8xf32> {
  %zero = arith.constant 0.0 : f32
  %c8 = arith.constant 8.0 : f32
  %eps = arith.constant 1.0e-06 : f32
  %xa = tensor.extract_slice %x[0, 0, 0] [4, 2, 8] [1, 1, 1] : tensor<4x2x16xf32> to tensor<4x2x8xf32>
  %xb = tensor.extract_slice %x[0, 0, 8] [4, 2, 8] [1, 1, 1] : tensor<4x2x16xf32> to tensor<4x2x8xf32>
  %e = tensor.empty() : tensor<4x2x8xf32>
  %e1 = tensor.empty() : tensor<4x2xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %sum = linalg.generic {indexing_maps = [#id, #red], iterator_types = ["parallel", "parallel", "reduction"]} ins(%xa : tensor<4x2x8xf32>) outs(%z : tensor<4x2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<4x2xf32>
  %n = linalg.generic {indexing_maps = [#id, #red, #ch, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%xb, %sum, %w : tensor<4x2x8xf32>, tensor<4x2xf32>, tensor<8xf32>) outs(%e : tensor<4x2x8xf32>) {
  ^bb0(%xi: f32, %s: f32, %wi: f32, %o: f32):
    %m = arith.divf %s, %c8 : f32
    %a = arith.addf %m, %eps : f32
    %r = math.rsqrt %a : f32
    %xn = arith.mulf %xi, %r : f32
    %y = arith.mulf %xn, %wi : f32
    linalg.yield %y : f32
  } -> tensor<4x2x8xf32>
  %y = rope.apply ins(%n : tensor<4x2x8xf32>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xf32>) -> tensor<4x2x8xf32>
  return %y : tensor<4x2x8xf32>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#ch = affine_map<(d0, d1, d2) -> (d2)>

// x read through an expand_shape that splits the projection's channels into
// heads ([4, 16] -> [4, 2, 8]; after linalg-fold-unit-extent-dims and
// fusion the rotation may read a view that splits them further): x is the
// projection read at (s, h * 8 + c), and the fold splits it back.
// CHECK-LABEL: func.func @split_heads(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x16xf32>, %[[W:[^:]*]]: tensor<8xf32>
// CHECK: %[[XS:.*]] = tensor.expand_shape %[[X]] {{\[\[}}0], [1, 2]] output_shape [4, 2, 8] : tensor<4x16xf32> into tensor<4x2x8xf32>
// CHECK: rope.apply ins(%[[XS]] : tensor<4x2x8xf32>) positions(%{{.*}}) norm(%[[W]] : tensor<8xf32>)
// CHECK-NOT: math.rsqrt
func.func @split_heads(%x: tensor<4x16xf32>, %w: tensor<8xf32>, %p: tensor<4xi64>) -> tensor<4x2x8xf32> {
  %zero = arith.constant 0.0 : f32
  %c8 = arith.constant 8.0 : f32
  %eps = arith.constant 1.0e-06 : f32
  %xs = tensor.expand_shape %x [[0], [1, 2]] output_shape [4, 2, 8] : tensor<4x16xf32> into tensor<4x2x8xf32>
  %e = tensor.empty() : tensor<4x2x8xf32>
  %e1 = tensor.empty() : tensor<4x2x1xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x2x1xf32>) -> tensor<4x2x1xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%xs : tensor<4x2x8xf32>) outs(%z : tensor<4x2x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<4x2x1xf32>
  %n = linalg.generic {indexing_maps = [#id, #row, #ch, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%xs, %sum, %w : tensor<4x2x8xf32>, tensor<4x2x1xf32>, tensor<8xf32>) outs(%e : tensor<4x2x8xf32>) {
  ^bb0(%xi: f32, %s: f32, %wi: f32, %o: f32):
    %m = arith.divf %s, %c8 : f32
    %a = arith.addf %m, %eps : f32
    %r = math.rsqrt %a : f32
    %xn = arith.mulf %xi, %r : f32
    %y = arith.mulf %xn, %wi : f32
    linalg.yield %y : f32
  } -> tensor<4x2x8xf32>
  %y = rope.apply ins(%n : tensor<4x2x8xf32>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xf32>) -> tensor<4x2x8xf32>
  return %y : tensor<4x2x8xf32>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#row = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#ch = affine_map<(d0, d1, d2) -> (d2)>
#overlap = affine_map<(d0, d1, d2) -> (d0, d1 * 4 + d2)>

// The negative: the heads overlap (head h reads channels 4h .. 4h + 7 of
// x: a linear index, but not one that reads x once per element), so x is
// not read whole as the op's input. The expression reader does not open the
// copy (its index is not a dim), so the norm is of the copy %xs, which is
// read whole: the fold is of %xs, never of %x read through the overlap.
// CHECK-LABEL: func.func @overlapping_heads(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x16xf32>, %[[W:[^:]*]]: tensor<8xf32>
// CHECK: %[[XS:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<4x16xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: linalg.yield
// CHECK-NEXT: }
// CHECK-NEXT: rope.apply ins(%[[XS]] : tensor<4x2x8xf32>) positions(%{{.*}}) norm(%[[W]] : tensor<8xf32>)
// CHECK-NOT: math.rsqrt
func.func @overlapping_heads(%x: tensor<4x16xf32>, %w: tensor<8xf32>, %p: tensor<4xi64>) -> tensor<4x2x8xf32> {
  %zero = arith.constant 0.0 : f32
  %c8 = arith.constant 8.0 : f32
  %eps = arith.constant 1.0e-06 : f32
  %e = tensor.empty() : tensor<4x2x8xf32>
  %xs = linalg.generic {indexing_maps = [#overlap, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : tensor<4x16xf32>) outs(%e : tensor<4x2x8xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  } -> tensor<4x2x8xf32>
  %e1 = tensor.empty() : tensor<4x2x1xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x2x1xf32>) -> tensor<4x2x1xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "parallel", "reduction"]} ins(%xs : tensor<4x2x8xf32>) outs(%z : tensor<4x2x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<4x2x1xf32>
  %n = linalg.generic {indexing_maps = [#id, #row, #ch, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%xs, %sum, %w : tensor<4x2x8xf32>, tensor<4x2x1xf32>, tensor<8xf32>) outs(%e : tensor<4x2x8xf32>) {
  ^bb0(%xi: f32, %s: f32, %wi: f32, %o: f32):
    %m = arith.divf %s, %c8 : f32
    %a = arith.addf %m, %eps : f32
    %r = math.rsqrt %a : f32
    %xn = arith.mulf %xi, %r : f32
    %y = arith.mulf %xn, %wi : f32
    linalg.yield %y : f32
  } -> tensor<4x2x8xf32>
  %y = rope.apply ins(%n : tensor<4x2x8xf32>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xf32>) -> tensor<4x2x8xf32>
  return %y : tensor<4x2x8xf32>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#x4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#rows4 = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
#red = affine_map<(d0, d1, d2) -> (d0, d1)>
#ch = affine_map<(d0, d1, d2) -> (d2)>

// The sum of squares reduces a unit dim next to the channels (x read as
// [4, 2, 1, 8]; linalg-fold-unit-extent-dims and fusion leave such
// reductions): a sum over exactly the head dim all the same (the
// expression reader's reduced atom, units aside). The element reader this
// fold had before took one reduction loop only.
// CHECK-LABEL: func.func @sum_with_unit_reduction(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x2x8xf32>, %[[W:[^:]*]]: tensor<8xf32>, %[[P:[^:]*]]: tensor<4xi64>
// CHECK: rope.apply ins(%[[X]] : tensor<4x2x8xf32>) positions(%[[P]] : tensor<4xi64>) norm(%[[W]] : tensor<8xf32>) outs(%{{.*}} : tensor<4x2x8xf32>) {norm_epsilon = 9.9999999747524271E-7 : f64}
// CHECK-NOT: math.rsqrt
func.func @sum_with_unit_reduction(%x: tensor<4x2x8xf32>, %w: tensor<8xf32>, %p: tensor<4xi64>) -> tensor<4x2x8xf32> {
  %zero = arith.constant 0.0 : f32
  %c8 = arith.constant 8.0 : f32
  %eps = arith.constant 1.0e-06 : f32
  %e = tensor.empty() : tensor<4x2x8xf32>
  %e1 = tensor.empty() : tensor<4x2xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %x4 = tensor.expand_shape %x [[0], [1], [2, 3]] output_shape [4, 2, 1, 8] : tensor<4x2x8xf32> into tensor<4x2x1x8xf32>
  %sum = linalg.generic {indexing_maps = [#x4, #rows4], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%x4 : tensor<4x2x1x8xf32>) outs(%z : tensor<4x2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<4x2xf32>
  %n = linalg.generic {indexing_maps = [#id, #red, #ch, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %sum, %w : tensor<4x2x8xf32>, tensor<4x2xf32>, tensor<8xf32>) outs(%e : tensor<4x2x8xf32>) {
  ^bb0(%xi: f32, %s: f32, %wi: f32, %o: f32):
    %m = arith.divf %s, %c8 : f32
    %a = arith.addf %m, %eps : f32
    %r = math.rsqrt %a : f32
    %xn = arith.mulf %xi, %r : f32
    %y = arith.mulf %xn, %wi : f32
    linalg.yield %y : f32
  } -> tensor<4x2x8xf32>
  %y = rope.apply ins(%n : tensor<4x2x8xf32>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xf32>) -> tensor<4x2x8xf32>
  return %y : tensor<4x2x8xf32>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#x3 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#rows3 = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
#red = affine_map<(d0, d1, d2) -> (d0, d1)>
#ch = affine_map<(d0, d1, d2) -> (d2)>

// Negative: as @sum_with_unit_reduction, but the other reduced dim has
// size 2 (x read as [4, 2, 2, 4]: the sum is over half rows twice, of 8
// squares, but over two dims, not one): the reduced atom is not one, so it
// is not a sum over exactly the head dim; nothing is folded.
// CHECK-LABEL: func.func @sum_over_two_dims(
// CHECK: math.rsqrt
// CHECK: rope.apply ins(%{{.*}} : tensor<4x2x8xf32>) positions(%{{.*}} : tensor<4xi64>) outs(
func.func @sum_over_two_dims(%x: tensor<4x2x8xf32>, %w: tensor<8xf32>, %p: tensor<4xi64>) -> tensor<4x2x8xf32> {
  %zero = arith.constant 0.0 : f32
  %c8 = arith.constant 8.0 : f32
  %eps = arith.constant 1.0e-06 : f32
  %e = tensor.empty() : tensor<4x2x8xf32>
  %e1 = tensor.empty() : tensor<4x2xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4x2xf32>) -> tensor<4x2xf32>
  %x4 = tensor.expand_shape %x [[0], [1], [2, 3]] output_shape [4, 2, 2, 4] : tensor<4x2x8xf32> into tensor<4x2x2x4xf32>
  %sum = linalg.generic {indexing_maps = [#x3, #rows3], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%x4 : tensor<4x2x2x4xf32>) outs(%z : tensor<4x2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<4x2xf32>
  %n = linalg.generic {indexing_maps = [#id, #red, #ch, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %sum, %w : tensor<4x2x8xf32>, tensor<4x2xf32>, tensor<8xf32>) outs(%e : tensor<4x2x8xf32>) {
  ^bb0(%xi: f32, %s: f32, %wi: f32, %o: f32):
    %m = arith.divf %s, %c8 : f32
    %a = arith.addf %m, %eps : f32
    %r = math.rsqrt %a : f32
    %xn = arith.mulf %xi, %r : f32
    %y = arith.mulf %xn, %wi : f32
    linalg.yield %y : f32
  } -> tensor<4x2x8xf32>
  %y = rope.apply ins(%n : tensor<4x2x8xf32>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xf32>) -> tensor<4x2x8xf32>
  return %y : tensor<4x2x8xf32>
}

// -----

#id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#t4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#out = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#ch = affine_map<(d0, d1, d2) -> (d2)>

// Negative: the "sum" is read by the channel as well as the row, and its
// summand is x at the channel, broadcast along the reduced dim: s[.., c] =
// 8 * x[.., c]^2, not the row's sum of squares. Renaming the reduced dim to
// the channel leaves its summand x[.., c]^2 all the same, so the sum must be
// read by the row only; nothing is folded.
// CHECK-LABEL: func.func @sum_read_by_channel(
// CHECK: math.rsqrt
// CHECK: rope.apply ins(%{{.*}} : tensor<4x2x8xf32>) positions(%{{.*}} : tensor<4xi64>) outs(
func.func @sum_read_by_channel(%x: tensor<4x2x8xf32>, %w: tensor<8xf32>, %p: tensor<4xi64>) -> tensor<4x2x8xf32> {
  %zero = arith.constant 0.0 : f32
  %c8 = arith.constant 8.0 : f32
  %eps = arith.constant 1.0e-06 : f32
  %e = tensor.empty() : tensor<4x2x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x2x8xf32>) -> tensor<4x2x8xf32>
  %eb = tensor.empty() : tensor<4x2x8x8xf32>
  %t = linalg.broadcast ins(%x : tensor<4x2x8xf32>) outs(%eb : tensor<4x2x8x8xf32>) dimensions = [3]
  %sum = linalg.generic {indexing_maps = [#t4, #out], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%t : tensor<4x2x8x8xf32>) outs(%z : tensor<4x2x8xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<4x2x8xf32>
  %n = linalg.generic {indexing_maps = [#id, #id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %sum, %w : tensor<4x2x8xf32>, tensor<4x2x8xf32>, tensor<8xf32>) outs(%e : tensor<4x2x8xf32>) {
  ^bb0(%xi: f32, %s: f32, %wi: f32, %o: f32):
    %m = arith.divf %s, %c8 : f32
    %a = arith.addf %m, %eps : f32
    %r = math.rsqrt %a : f32
    %xn = arith.mulf %xi, %r : f32
    %y = arith.mulf %xn, %wi : f32
    linalg.yield %y : f32
  } -> tensor<4x2x8xf32>
  %y = rope.apply ins(%n : tensor<4x2x8xf32>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xf32>) -> tensor<4x2x8xf32>
  return %y : tensor<4x2x8xf32>
}

// -----

#ru_id = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#ru_xc = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#ru_r = affine_map<(d0, d1, d2, d3) -> (d3)>
#ru_out = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#ru_ch = affine_map<(d0, d1, d2) -> (d2)>

// Left alone, and no crash: the "sum" reduces over a loop only %w indexes,
// which its payload does not read, and is read by the channel: s[.., c] =
// 8 x[.., c]^2. The rotation raise splits x * x out of that payload and
// rebuilds the op; it keeps %w, the one operand giving the reduction loop
// its range (dropped, the op did not verify and the raise crashed reading
// it).
// CHECK-LABEL: func.func @reduction_over_unused_input(
// CHECK-SAME: %[[X:[^:]*]]: tensor<4x2x8xf32>, %[[W:[^:]*]]: tensor<8xf32>
// CHECK: %[[SQ:.*]] = linalg.generic {{.*}} ins(%[[X]] : tensor<4x2x8xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[W]], %[[SQ]] : tensor<8xf32>, tensor<4x2x8xf32>)
// CHECK: math.rsqrt
// CHECK: rope.apply ins(%{{.*}} : tensor<4x2x8xf32>) positions(%{{.*}} : tensor<4xi64>) outs(
func.func @reduction_over_unused_input(%x: tensor<4x2x8xf32>, %w: tensor<8xf32>, %p: tensor<4xi64>) -> tensor<4x2x8xf32> {
  %zero = arith.constant 0.0 : f32
  %c8 = arith.constant 8.0 : f32
  %eps = arith.constant 1.0e-06 : f32
  %e = tensor.empty() : tensor<4x2x8xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x2x8xf32>) -> tensor<4x2x8xf32>
  %sum = linalg.generic {indexing_maps = [#ru_xc, #ru_r, #ru_out], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %w : tensor<4x2x8xf32>, tensor<8xf32>) outs(%z : tensor<4x2x8xf32>) {
  ^bb0(%in: f32, %unused: f32, %acc: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<4x2x8xf32>
  %n = linalg.generic {indexing_maps = [#ru_id, #ru_id, #ru_ch, #ru_id], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %sum, %w : tensor<4x2x8xf32>, tensor<4x2x8xf32>, tensor<8xf32>) outs(%e : tensor<4x2x8xf32>) {
  ^bb0(%xi: f32, %s: f32, %wi: f32, %o: f32):
    %m = arith.divf %s, %c8 : f32
    %a = arith.addf %m, %eps : f32
    %r = math.rsqrt %a : f32
    %xn = arith.mulf %xi, %r : f32
    %y = arith.mulf %xn, %wi : f32
    linalg.yield %y : f32
  } -> tensor<4x2x8xf32>
  %y = rope.apply ins(%n : tensor<4x2x8xf32>) positions(%p : tensor<4xi64>) outs(%e : tensor<4x2x8xf32>) -> tensor<4x2x8xf32>
  return %y : tensor<4x2x8xf32>
}
