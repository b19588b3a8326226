// Attention as frontends emit it (test/Frontends/Inputs/attention, made by
// scripts/gen-attention-fixtures.py), raised by --rope-raise: RoPE to
// rope.apply, then the attention to one rope.attention whose Q and K are the
// rotations (Q viewed [B, Hkv, G, S, D] for GQA: the repeat of K and V is
// gone), with the scale, mask, causal flag and query dim each fixture's
// manifest `expect` records.

// Hugging Face Llama eager (torch-mlir): the additive mask argument
// [B, 1, S, S] (its unit head dim dropped), the 0.25 scale on the scores,
// the softmax with aten.max's argmax, batch_matmul over [B*H, S, *].
// RUN: rope-opt --rope-raise --mlir-print-local-scope %S/Inputs/attention/hf_llama_eager.mlir | FileCheck %s --check-prefix=EAGER
// EAGER-LABEL: func.func @main(
// EAGER-SAME: %[[Q:[a-z0-9]+]]: tensor<2x4x8x16xf32>, %[[K:[a-z0-9]+]]: tensor<2x2x8x16xf32>, %[[V:[a-z0-9]+]]: tensor<2x2x8x16xf32>, %[[POS:[a-z0-9]+]]: tensor<2x8xi64>, %[[MASK:[a-z0-9]+]]: tensor<2x1x8x8xf32>
// EAGER-DAG: %[[RQ:.*]] = rope.apply ins(%[[Q]] : tensor<2x4x8x16xf32>) positions(%[[POS]] : tensor<2x8xi64>)
// EAGER-DAG: %[[RK:.*]] = rope.apply ins(%[[K]] : tensor<2x2x8x16xf32>) positions(%[[POS]] : tensor<2x8xi64>)
// EAGER: %[[QG:.*]] = tensor.expand_shape %[[RQ]] {{\[}}[0], [1, 2], [3], [4]] output_shape [2, 2, 2, 8, 16]
// EAGER: %[[M:.*]] = tensor.collapse_shape %[[MASK]] {{\[}}[0], [1, 2], [3]] : tensor<2x1x8x8xf32> into tensor<2x8x8xf32>
// EAGER: %[[A:.*]] = rope.attention ins(%[[QG]], %[[RK]], %[[V]] : tensor<2x2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) mask(%[[M]] : tensor<2x8x8xf32>) outs(%{{.*}} : tensor<2x2x2x8x16xf32>)
// EAGER-SAME: attributes {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d5, d4)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d5)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d6)>], query_dim = 3 : i64, scale = 2.500000e-01 : f64}
// EAGER: tensor.collapse_shape %[[A]] {{\[}}[0, 1, 2], [3], [4]] : tensor<2x2x2x8x16xf32> into tensor<8x8x16xf32>
// EAGER-NOT: linalg.batch_matmul
// EAGER-NOT: math.exp
// EAGER: linalg.transpose

// The same without a mask.
// RUN: rope-opt --rope-raise --mlir-print-local-scope %S/Inputs/attention/hf_llama_eager_nomask.mlir | FileCheck %s --check-prefix=NOMASK
// NOMASK-LABEL: func.func @main(
// NOMASK: %[[RQ:.*]] = rope.apply ins(%arg0
// NOMASK: %[[RK:.*]] = rope.apply ins(%arg1
// NOMASK: %[[QG:.*]] = tensor.expand_shape %[[RQ]]
// NOMASK: rope.attention ins(%[[QG]], %[[RK]], %arg2 : tensor<2x2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) outs(%{{.*}} : tensor<2x2x2x8x16xf32>)
// NOMASK-SAME: attributes {indexing_maps = [{{.*}}], query_dim = 3 : i64, scale = 2.500000e-01 : f64}
// NOMASK-NOT: math.exp

// HF SDPA (torch-mlir's decomposition): 0.5 on q and on k^T (rope-raise takes
// q's as the rotation's magnitude; the scale takes it back: 0.25, magnitude
// 1), the causal mask from iota comparisons (Sq = Sk: top-left is the op's
// bottom-right), the guard for fully masked rows (none under a causal mask).
// RUN: rope-opt --rope-raise --mlir-print-local-scope %S/Inputs/attention/hf_llama_sdpa.mlir | FileCheck %s --check-prefix=SDPA
// SDPA-LABEL: func.func @main(
// SDPA-DAG: %[[RK:.*]] = rope.apply ins(%arg1 : tensor<2x2x8x16xf32>) {{.*}} {freqs = #rope.table<{{.*}}>, token_dims = array<i64: 0, 2>}
// SDPA-DAG: %[[RQ:.*]] = rope.apply ins(%arg0 : tensor<2x4x8x16xf32>) {{.*}} {freqs = #rope.table<{{.*}}>, token_dims = array<i64: 0, 2>}
// SDPA: %[[QG:.*]] = tensor.expand_shape %[[RQ]]
// SDPA: rope.attention ins(%[[QG]], %[[RK]], %arg2 : tensor<2x2x2x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) outs(%{{.*}} : tensor<2x2x2x8x16xf32>)
// SDPA-SAME: attributes {causal, indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d4)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d5, d4)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d5, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3, d6)>], query_dim = 3 : i64, scale = 2.500000e-01 : f64}
// SDPA-NOT: magnitude
// SDPA-NOT: arith.cmpi
// SDPA-NOT: arith.select

// torch SDPA with a boolean mask (select(mask, 0, -inf) added, default scale
// 1/sqrt(16), the guard): the i1 mask; the guard kept on the mask alone
// (rows with no key kept are zero, as torch gives).
// RUN: rope-opt --rope-raise --mlir-print-local-scope %S/Inputs/attention/torch_sdpa_mask.mlir | FileCheck %s --check-prefix=BOOL
// BOOL-LABEL: func.func @main(
// BOOL: %[[M:.*]] = tensor.collapse_shape %arg3 {{\[}}[0], [1, 2], [3]] : tensor<2x1x8x8xi1> into tensor<2x8x8xi1>
// BOOL: %[[A:.*]] = rope.attention ins(%arg0, %arg1, %arg2 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) mask(%[[M]] : tensor<2x8x8xi1>)
// BOOL-SAME: attributes {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d2, d4)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d5)>], scale = 2.500000e-01 : f64}
// BOOL: %[[ROWS:.*]] = linalg.generic {{.*}} ins(%[[M]] : tensor<2x8x8xi1>) outs(%{{.*}} : tensor<2x8xi1>)
// BOOL: linalg.generic {{.*}} ins(%[[A]], %[[ROWS]] : tensor<2x4x8x16xf32>, tensor<2x8xi1>)
// BOOL-NOT: math.exp

// HF decode: one query per row at its own position, 16 cached keys rotated
// at 0..15; the mask is an argument (its equivalence to per-row positions is
// not provable from the IR), kept as the mask. Sq = 1 is the query dim.
// RUN: rope-opt --rope-raise --mlir-print-local-scope %S/Inputs/attention/hf_llama_decode.mlir | FileCheck %s --check-prefix=DECODE
// DECODE-LABEL: func.func @main(
// DECODE-DAG: %[[RQ:.*]] = rope.apply ins(%arg0 : tensor<2x4x1x16xf32>)
// DECODE-DAG: %[[RK:.*]] = rope.apply ins(%arg1 : tensor<2x2x16x16xf32>)
// DECODE: %[[QG:.*]] = tensor.expand_shape %[[RQ]] {{\[}}[0], [1, 2], [3], [4]] output_shape [2, 2, 2, 1, 16]
// DECODE: %[[M:.*]] = tensor.collapse_shape %arg4 {{\[}}[0], [1, 2], [3]] : tensor<2x1x1x16xf32> into tensor<2x1x16xf32>
// DECODE: rope.attention ins(%[[QG]], %[[RK]], %arg2 : tensor<2x2x2x1x16xf32>, tensor<2x2x16x16xf32>, tensor<2x2x16x16xf32>) mask(%[[M]] : tensor<2x1x16xf32>)
// DECODE-SAME: attributes {indexing_maps = [{{.*}}, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d5)>, {{.*}}], query_dim = 3 : i64, scale = 2.500000e-01 : f64}

// JAX einsum attention ([B, S, H, D], jnp.repeat GQA, tril + where with
// MaxText's finite -0.7 * f32 max): after inlining its jitted helpers, a
// proven causal mask (no row is fully masked, so the finite value is -inf's
// equal). The output is [B, H, Dv, S] as the einsum writes it.
// RUN: rope-opt --inline --rope-raise --mlir-print-local-scope %S/Inputs/attention/jax_attention.mlir | FileCheck %s --check-prefix=JAX
// JAX-LABEL: func.func public @main(
// JAX: %[[QG:.*]] = tensor.expand_shape %arg0 {{\[}}[0], [1], [2, 3], [4]] output_shape [2, 8, 2, 2, 16]
// JAX: rope.attention ins(%[[QG]], %arg1, %arg2 : tensor<2x8x2x2x16xf32>, tensor<2x8x2x16xf32>, tensor<2x8x2x16xf32>) outs(%{{.*}} : tensor<2x2x2x16x8xf32>)
// JAX-SAME: attributes {causal, indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d3, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d5, d1, d4)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d5, d1, d6)>, affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d6, d3)>], query_dim = 3 : i64, scale = 2.500000e-01 : f64}
// JAX-NOT: math.exp

// Without inlining, the masked scores are a call's result: not raised.
// RUN: rope-opt --rope-raise %S/Inputs/attention/jax_attention.mlir | FileCheck %s --check-prefix=JAXCALL
// JAXCALL-NOT: rope.attention

// --rope-optimize inlines first (JAX's @tril and @_where), so JAX attention
// is raised and tiled there: no scores tensor, the online steps in a key loop.
// RUN: rope-opt --rope-optimize %S/Inputs/attention/jax_attention.mlir | FileCheck %s --check-prefix=JAXOPT
// JAXOPT-LABEL: func.func public @main(
// JAXOPT-NOT: call @
// JAXOPT: scf.forall
// JAXOPT: scf.for
// JAXOPT: rope.online_attention
// JAXOPT-NOT: math.exp

// ONNX MatMul(Q, Transpose(K)) * scale + mask -> Softmax -> MatMul(V): the
// 0-d scale constant, the additive mask argument.
// RUN: rope-opt --rope-raise --mlir-print-local-scope %S/Inputs/attention/onnx_decomposed.mlir | FileCheck %s --check-prefix=ONNX
// ONNX-LABEL: func.func @main(
// ONNX: %[[M:.*]] = tensor.collapse_shape %arg3 {{\[}}[0], [1, 2], [3]] : tensor<2x1x8x8xf32> into tensor<2x8x8xf32>
// ONNX: rope.attention ins(%arg0, %arg1, %arg2 : tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) mask(%[[M]] : tensor<2x8x8xf32>)
// ONNX-SAME: attributes {indexing_maps = [{{.*}}], scale = 2.500000e-01 : f64}
// ONNX-NOT: math.exp
