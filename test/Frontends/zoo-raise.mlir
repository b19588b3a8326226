// The model zoo (test/Frontends/Inputs/zoo, scripts/gen-model-zoo.py: tiny
// Hugging Face causal LMs exported whole by torch-mlir, prefill and decode
// with the KV cache as arguments): what --rope-raise makes of each module.
// Every rotation (q and k of each layer) and every attention is raised,
// except where a line below says what is missing; the prefixes count the
// raised ops (A<n>: n rope.apply and no more; T<n>: n rope.attention) and
// check the attributes that tell the models apart (interleaved pairs,
// partial rotation, M-RoPE sections). scripts/zoo-status.py reports the
// same per module with the remarks, jit compile time and logits error.
//
// RUN: rope-opt %S/Inputs/zoo/llama_prefill.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/llama_prefill.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/llama_decode.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/llama_decode.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/llama_eager_prefill.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/llama_eager_prefill.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/llama_eager_decode.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/llama_eager_decode.mlir --rope-raise | FileCheck %s --check-prefix=T2
// The bf16 members (llama, llama_eager run in torch.bfloat16: bf16 weights, activations, KV cache and logits): the
// rotations raised on bf16 q and k (BF16ROT); eager attention's Q.K^T and P.V are torch-mlir's bf16 matmuls (a
// batch_matmul into f32, then truncf), raised on the bf16 q, k and v (BF16ATT).
// llama_bf16 (SDPA): torch's SDPA computes bf16 in f32: q, k and v widened by extf generics, the bf16 mask added
// to the f32 scores as addf(scores, extf(mask)) inside one generic; both widenings are exact and the raise reads the
// bf16 tensors (BF16ATT).
// RUN: rope-opt %S/Inputs/zoo/llama_bf16_prefill.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/llama_bf16_prefill.mlir --rope-raise | FileCheck %s --check-prefix=BF16ROT
// RUN: rope-opt %S/Inputs/zoo/llama_bf16_prefill.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/llama_bf16_prefill.mlir --rope-raise | FileCheck %s --check-prefix=BF16ATT
// RUN: rope-opt %S/Inputs/zoo/llama_bf16_decode.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/llama_bf16_decode.mlir --rope-raise | FileCheck %s --check-prefix=BF16ROT
// RUN: rope-opt %S/Inputs/zoo/llama_bf16_decode.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/llama_bf16_decode.mlir --rope-raise | FileCheck %s --check-prefix=BF16ATT
// RUN: rope-opt %S/Inputs/zoo/llama_eager_bf16_prefill.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/llama_eager_bf16_prefill.mlir --rope-raise | FileCheck %s --check-prefix=BF16ROT
// RUN: rope-opt %S/Inputs/zoo/llama_eager_bf16_prefill.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/llama_eager_bf16_prefill.mlir --rope-raise | FileCheck %s --check-prefix=BF16ATT
// RUN: rope-opt %S/Inputs/zoo/llama_eager_bf16_decode.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/llama_eager_bf16_decode.mlir --rope-raise | FileCheck %s --check-prefix=BF16ROT
// RUN: rope-opt %S/Inputs/zoo/llama_eager_bf16_decode.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/llama_eager_bf16_decode.mlir --rope-raise | FileCheck %s --check-prefix=BF16ATT
// RUN: rope-opt %S/Inputs/zoo/mistral_prefill.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/mistral_prefill.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/mistral_decode.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/mistral_decode.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/qwen2_prefill.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/qwen2_prefill.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/qwen2_decode.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/qwen2_decode.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/qwen3_prefill.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/qwen3_prefill.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/qwen3_decode.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/qwen3_decode.mlir --rope-raise | FileCheck %s --check-prefix=T2
// phi3 prefill: LongRoPE picks its table at run time from max(position_ids) + 1 > 32: #rope.longrope with that length (LONGROPE).
// RUN: rope-opt %S/Inputs/zoo/phi3_prefill.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/phi3_prefill.mlir --rope-raise | FileCheck %s --check-prefix=LONGROPE
// RUN: rope-opt %S/Inputs/zoo/phi3_prefill.mlir --rope-raise | FileCheck %s --check-prefix=T2
// phi3 decode: LongRoPE picks its table at run time from max(position_ids) + 1 > 32: #rope.longrope with that length (LONGROPE).
// RUN: rope-opt %S/Inputs/zoo/phi3_decode.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/phi3_decode.mlir --rope-raise | FileCheck %s --check-prefix=LONGROPE
// RUN: rope-opt %S/Inputs/zoo/phi3_decode.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/phi_prefill.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/phi_prefill.mlir --rope-raise | FileCheck %s --check-prefixes=PARTIAL8
// RUN: rope-opt %S/Inputs/zoo/phi_prefill.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/phi_decode.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/phi_decode.mlir --rope-raise | FileCheck %s --check-prefixes=PARTIAL8
// RUN: rope-opt %S/Inputs/zoo/phi_decode.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/gemma2_prefill.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/gemma2_prefill.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/gemma2_decode.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/gemma2_decode.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/gemma3_text_prefill.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/gemma3_text_prefill.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/gemma3_text_decode.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/gemma3_text_decode.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/glm4_prefill.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/glm4_prefill.mlir --rope-raise | FileCheck %s --check-prefixes=INTERLEAVED,PARTIAL8
// RUN: rope-opt %S/Inputs/zoo/glm4_prefill.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/glm4_decode.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/glm4_decode.mlir --rope-raise | FileCheck %s --check-prefixes=INTERLEAVED,PARTIAL8
// RUN: rope-opt %S/Inputs/zoo/glm4_decode.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/cohere_prefill.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/cohere_prefill.mlir --rope-raise | FileCheck %s --check-prefixes=INTERLEAVED
// RUN: rope-opt %S/Inputs/zoo/cohere_prefill.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/cohere_decode.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/cohere_decode.mlir --rope-raise | FileCheck %s --check-prefixes=INTERLEAVED
// RUN: rope-opt %S/Inputs/zoo/cohere_decode.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/olmo2_prefill.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/olmo2_prefill.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/olmo2_decode.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/olmo2_decode.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/granite_prefill.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/granite_prefill.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/granite_decode.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/granite_decode.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/starcoder2_prefill.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/starcoder2_prefill.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/starcoder2_decode.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/starcoder2_decode.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/stablelm_prefill.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/stablelm_prefill.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/stablelm_decode.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/stablelm_decode.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/gpt_neox_prefill.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/gpt_neox_prefill.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/gpt_neox_decode.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/gpt_neox_decode.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/qwen3_moe_prefill.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/qwen3_moe_prefill.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/qwen3_moe_decode.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/qwen3_moe_decode.mlir --rope-raise | FileCheck %s --check-prefix=T2
// gpt_oss prefill: 4 of 4 rotations, 2 of 2 attentions with their sinks (checked by the SINKS prefix; the sink column concatenated to the scores and sliced off after the softmax).
// RUN: rope-opt %S/Inputs/zoo/gpt_oss_prefill.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/gpt_oss_prefill.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/gpt_oss_prefill.mlir --rope-raise | FileCheck %s --check-prefix=SINKS
// gpt_oss decode: 4 of 4 rotations, 2 of 2 attentions with their sinks (checked by the SINKS prefix; the sink column concatenated to the scores and sliced off after the softmax).
// RUN: rope-opt %S/Inputs/zoo/gpt_oss_decode.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/gpt_oss_decode.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/gpt_oss_decode.mlir --rope-raise | FileCheck %s --check-prefix=SINKS
// llama4_text prefill: 2 of 2 rotations (torch.polar's cos/sin, q/k viewed as complex by a gathering generic: interleaved), 2 of 2 attentions (the chunked layer's mask, same chunk and causal, as a mask tensor).
// RUN: rope-opt %S/Inputs/zoo/llama4_text_prefill.mlir --rope-raise | FileCheck %s --check-prefix=A2
// RUN: rope-opt %S/Inputs/zoo/llama4_text_prefill.mlir --rope-raise | FileCheck %s --check-prefixes=INTERLEAVED
// RUN: rope-opt %S/Inputs/zoo/llama4_text_prefill.mlir --rope-raise | FileCheck %s --check-prefix=T2
// llama4_text decode: 2 of 2 rotations (torch.polar's cos/sin, q/k viewed as complex by a gathering generic: interleaved), 2 of 2 attentions (the chunked layer's mask, same chunk and causal, as a mask tensor).
// RUN: rope-opt %S/Inputs/zoo/llama4_text_decode.mlir --rope-raise | FileCheck %s --check-prefix=A2
// RUN: rope-opt %S/Inputs/zoo/llama4_text_decode.mlir --rope-raise | FileCheck %s --check-prefixes=INTERLEAVED
// RUN: rope-opt %S/Inputs/zoo/llama4_text_decode.mlir --rope-raise | FileCheck %s --check-prefix=T2
// deepseek_v3 prefill: MLA's q rotates its last 8 of 24 channels (q_pe after q_nope): the window is raised alone and inserted into q (MLAQ).
// RUN: rope-opt %S/Inputs/zoo/deepseek_v3_prefill.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/deepseek_v3_prefill.mlir --rope-raise | FileCheck %s --check-prefix=MLAQ
// RUN: rope-opt %S/Inputs/zoo/deepseek_v3_prefill.mlir --rope-raise | FileCheck %s --check-prefixes=INTERLEAVED
// RUN: rope-opt %S/Inputs/zoo/deepseek_v3_prefill.mlir --rope-raise | FileCheck %s --check-prefix=T2
// deepseek_v3 decode: MLA's q rotates its last 8 of 24 channels (q_pe after q_nope): the window is raised alone and inserted into q (MLAQ).
// RUN: rope-opt %S/Inputs/zoo/deepseek_v3_decode.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/deepseek_v3_decode.mlir --rope-raise | FileCheck %s --check-prefix=MLAQ
// RUN: rope-opt %S/Inputs/zoo/deepseek_v3_decode.mlir --rope-raise | FileCheck %s --check-prefixes=INTERLEAVED
// RUN: rope-opt %S/Inputs/zoo/deepseek_v3_decode.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/qwen2_vl_text_prefill.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/qwen2_vl_text_prefill.mlir --rope-raise | FileCheck %s --check-prefixes=MROPE
// RUN: rope-opt %S/Inputs/zoo/qwen2_vl_text_prefill.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/qwen2_vl_text_decode.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/qwen2_vl_text_decode.mlir --rope-raise | FileCheck %s --check-prefixes=MROPE
// RUN: rope-opt %S/Inputs/zoo/qwen2_vl_text_decode.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/gptj_prefill.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/gptj_prefill.mlir --rope-raise | FileCheck %s --check-prefixes=INTERLEAVED,PARTIAL8
// RUN: rope-opt %S/Inputs/zoo/gptj_prefill.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/gptj_decode.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/gptj_decode.mlir --rope-raise | FileCheck %s --check-prefixes=INTERLEAVED,PARTIAL8
// RUN: rope-opt %S/Inputs/zoo/gptj_decode.mlir --rope-raise | FileCheck %s --check-prefix=T2
// The ONNX members (torch.onnx.export -> iree-import-onnx): 2 of 2 attentions each (the causal mask a folded constant, raised as causal; decode's zero mask; torch's where(isnan(p), 0, p) as the fully-masked-row guard).
// RUN: rope-opt %S/Inputs/zoo/llama_onnx_prefill.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/llama_onnx_decode.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/qwen2_onnx_prefill.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/qwen2_onnx_decode.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/phi3_onnx_prefill.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/phi3_onnx_decode.mlir --rope-raise | FileCheck %s --check-prefix=T2
// llama_jax (MaxText-style Llama through StableHLO): the angle is positions / timescale, timescale = 10000^(2i/D) computed from an iota: #rope.default (prefix TIMESCALE).
// RUN: rope-opt %S/Inputs/zoo/llama_jax_prefill.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/llama_jax_prefill.mlir --rope-raise | FileCheck %s --check-prefix=TIMESCALE
// RUN: rope-opt %S/Inputs/zoo/llama_jax_decode.mlir --rope-raise | FileCheck %s --check-prefix=A4
// RUN: rope-opt %S/Inputs/zoo/llama_jax_decode.mlir --rope-raise | FileCheck %s --check-prefix=TIMESCALE
// llama_jax attention: MaxText normalizes after P·V ((Σ exp(x − max)·V) / Σ exp(x − max)) and masks with a finite value kept where a float mask >= half of it: 2 of 2, causal.
// RUN: rope-opt %S/Inputs/zoo/llama_jax_prefill.mlir --rope-raise | FileCheck %s --check-prefix=T2
// RUN: rope-opt %S/Inputs/zoo/llama_jax_decode.mlir --rope-raise | FileCheck %s --check-prefix=T2
// QK-norm (Qwen3, Gemma-3, Qwen3-MoE): every rotation folds its per-head
// RMSNorm, q's too (q reaches its rotation through a copy that drops the
// batch dim, which the norm fold reads through).
// RUN: rope-opt %S/Inputs/zoo/qwen3_prefill.mlir --rope-raise | FileCheck %s --check-prefix=NORM4
// RUN: rope-opt %S/Inputs/zoo/qwen3_decode.mlir --rope-raise | FileCheck %s --check-prefix=NORM4
// RUN: rope-opt %S/Inputs/zoo/gemma3_text_prefill.mlir --rope-raise | FileCheck %s --check-prefix=NORM4
// RUN: rope-opt %S/Inputs/zoo/qwen3_moe_decode.mlir --rope-raise | FileCheck %s --check-prefix=NORM4

// NORM4-COUNT-4: rope.apply ins({{.*}}) norm(
// NORM4-NOT:     rope.apply ins(
// A4-COUNT-4: rope.apply ins(
// A4-NOT:     rope.apply ins(
// A2-COUNT-2: rope.apply ins(
// A2-NOT:     rope.apply ins(
// A0-NOT:     rope.apply ins(
// T2-COUNT-2: rope.attention ins(
// T2-NOT:     rope.attention ins(
// T1-COUNT-1: rope.attention ins(
// T1-NOT:     rope.attention ins(
// T0-NOT:     rope.attention ins(
// INTERLEAVED: rope.apply ins({{.*}}layout = #rope.layout<interleaved>
// PARTIAL8:    rope.apply ins({{.*}}rotary_dim = 8 : i64
// BF16ROT-COUNT-4: rope.apply ins(%{{.*}} : tensor<{{[0-9x]+}}xbf16>) positions({{.*}} -> tensor<{{[0-9x]+}}xbf16>
// BF16ATT-COUNT-2: rope.attention ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<{{[0-9x]+}}xbf16>, tensor<{{[0-9x]+}}xbf16>, tensor<{{[0-9x]+}}xbf16>)
// MROPE:       rope.apply ins({{.*}}mrope = #rope.mrope<section = [2, 3, 3]>
// TIMESCALE-COUNT-4: rope.apply ins({{.*}}freqs = #rope.default<>
// SINKS-COUNT-2: rope.attention ins({{.*}} sinks(%{{.*}} : tensor<2x2xf32>)
// LONGROPE-COUNT-4: rope.apply ins({{.*}}) length(%{{.*}} : i64) outs({{.*}}freqs = #rope.longrope<short_factor = [1.000000e+00, 1.0714001, {{.*}}], long_factor = [1.000000e+00, 1.4285999, {{.*}}], original_max_position_embeddings = 32, attention_factor =
// MLAQ:        rope.apply ins({{.*}} : tensor<1x4x{{[0-9]+}}x8xf32>)
// MLAQ:        tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0, 16] [1, 4, {{[0-9]+}}, 8] [1, 1, 1, 1] : tensor<1x4x{{[0-9]+}}x8xf32> into tensor<1x4x{{[0-9]+}}x24xf32>
