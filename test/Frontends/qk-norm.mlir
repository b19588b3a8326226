// Qwen3's attention q/k path (transformers 5.24) through torch-mlir's fx
// importer (scripts/gen-neighbour-fixtures.py): q_proj -> view -> q_norm
// (Qwen3RMSNorm over the head dim, written one step per generic: fpowi,
// a keepdim sum, divf by 32, eps truncated from f64, rsqrt, x * r, w * .)
// -> transpose(1, 2) -> apply_rotary_pos_emb, and the same for k. rope-raise
// gathers each norm, raises the rotation of it and folds it: one rope.apply
// per output with norm(the model's weight) and eps = f32(1e-6), on x
// transposed to [B, H, S, D]. In bf16 the model rounds x * r to bf16 and
// multiplies by the weight in bf16; the op computes in f32 and rounds once.
// RUN: rope-opt --rope-raise %S/Inputs/neighbours/qwen3_qk_norm.mlir | FileCheck %s --check-prefixes=CHECK,F32
// RUN: rope-opt --rope-raise %S/Inputs/neighbours/qwen3_qk_norm_bf16.mlir | FileCheck %s --check-prefixes=CHECK,BF16
// After elementwise fusion the projection's rounding to bf16 and the norm's
// extension back to f32 are one generic, x never a bf16 tensor: the fold
// computes x by a copy of that generic yielding the bf16 value.
// RUN: rope-opt --linalg-fuse-elementwise-ops --rope-raise %S/Inputs/neighbours/qwen3_qk_norm_bf16.mlir \
// RUN:   | FileCheck %s --check-prefix=FUSED
// FUSED: %[[XB:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x8x4x32xbf16>)
// FUSED-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: bf16):
// FUSED-NEXT: %[[T:.*]] = arith.truncf %[[IN]] : f32 to bf16
// FUSED-NEXT: linalg.yield %[[T]] : bf16
// FUSED: %[[XT:.*]] = linalg.transpose ins(%[[XB]] : tensor<2x8x4x32xbf16>)
// FUSED: rope.apply ins(%[[XT]] : tensor<2x4x8x32xbf16>) positions(%{{.*}}) norm(%{{.*}} : tensor<32xbf16>)
// FUSED: rope.apply ins(%{{.*}} : tensor<2x2x8x32xbf16>) positions(%{{.*}}) norm(%{{.*}} : tensor<32xbf16>)
// FUSED-NOT: math.rsqrt

// CHECK-LABEL: func.func @main(
// F32-SAME: %[[H:.*]]: tensor<2x8x64xf32>, %[[POS:.*]]: tensor<2x8xi64>
// BF16-SAME: %[[H:.*]]: tensor<2x8x64xbf16>, %[[POS:.*]]: tensor<2x8xi64>
// CHECK-NOT: math.rsqrt
// CHECK: %[[Q:.*]] = tensor.expand_shape %{{.*}} output_shape [2, 8, 4, 32]
// CHECK-NOT: math.rsqrt
// CHECK: %[[QT:.*]] = linalg.transpose ins(%[[Q]] : tensor<2x8x4x32x{{.*}}>) outs(%{{.*}} : tensor<2x4x8x32x{{.*}}>) permutation = [0, 2, 1, 3]
// F32: %[[RQ:.*]] = rope.apply ins(%[[QT]] : tensor<2x4x8x32xf32>) positions(%[[POS]] : tensor<2x8xi64>) norm(%[[WQ:.*]] : tensor<32xf32>) outs(%{{.*}} : tensor<2x4x8x32xf32>)
// BF16: %[[RQ:.*]] = rope.apply ins(%[[QT]] : tensor<2x4x8x32xbf16>) positions(%[[POS]] : tensor<2x8xi64>) norm(%[[WQ:.*]] : tensor<32xbf16>) outs(%{{.*}} : tensor<2x4x8x32xbf16>)
// CHECK-SAME: norm_epsilon = 9.9999999747524271E-7 : f64, token_dims = array<i64: 0, 2>
// CHECK: %[[KT:.*]] = linalg.transpose ins(%{{.*}} : tensor<2x8x2x32x{{.*}}>) outs(%{{.*}} : tensor<2x2x8x32x{{.*}}>) permutation = [0, 2, 1, 3]
// CHECK: %[[RK:.*]] = rope.apply ins(%[[KT]] : tensor<2x2x8x32x{{.*}}>) positions(%[[POS]] : tensor<2x8xi64>) norm(%[[WK:.*]] : tensor<32x{{.*}}>) outs(
// CHECK-SAME: norm_epsilon = 9.9999999747524271E-7 : f64, token_dims = array<i64: 0, 2>
// CHECK-NOT: math.rsqrt
// CHECK-NOT: math.cos
// CHECK: return %[[RQ]], %[[RK]]

// Gemma-3 (bf16): the transpose first, then Gemma3RMSNorm on [B, H, S, D]
// (x.float() * rsqrt(...) * (1 + w.float()) in f32, cast to bf16). The norm
// reads x through the transpose, so x is transposed for the op; its weight is
// the frontend's own [32] f32 tensor 1 + w (a linalg.generic adding 1).
// RUN: rope-opt --rope-raise %S/Inputs/neighbours/gemma3_qk_norm_bf16.mlir | FileCheck %s --check-prefix=GEMMA
// GEMMA-LABEL: func.func @main(
// GEMMA-SAME: %[[H:.*]]: tensor<2x8x64xbf16>, %[[POS:.*]]: tensor<2x8xi64>
// GEMMA-NOT: math.rsqrt
// GEMMA: %[[WQ:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<32xf32>) outs(%{{.*}} : tensor<32xf32>)
// GEMMA-NEXT: ^bb0
// GEMMA-NEXT: arith.addf %{{.*}}, %{{.*}} : f32
// GEMMA: %[[QT:.*]] = linalg.transpose ins(%{{.*}} : tensor<2x8x4x32xbf16>) outs(%{{.*}} : tensor<2x4x8x32xbf16>) permutation = [0, 2, 1, 3]
// GEMMA: %[[RQ:.*]] = rope.apply ins(%[[QT]] : tensor<2x4x8x32xbf16>) positions(%[[POS]] : tensor<2x8xi64>) norm(%[[WQ]] : tensor<32xf32>) outs(%{{.*}} : tensor<2x4x8x32xbf16>)
// GEMMA-SAME: norm_epsilon = 9.9999999747524271E-7 : f64, token_dims = array<i64: 0, 2>
// GEMMA: %[[RK:.*]] = rope.apply ins(%{{.*}} : tensor<2x2x8x32xbf16>) positions(%[[POS]] : tensor<2x8xi64>) norm(%{{.*}} : tensor<32xf32>)
// GEMMA-NOT: math.rsqrt
// GEMMA-NOT: math.cos
// GEMMA: return %[[RQ]], %[[RK]]
