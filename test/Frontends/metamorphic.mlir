// Metamorphic tests of --rope-raise (issue 33), CI-sized: representative
// zoo models, frontend fixtures and negatives, each rewritten first the way
// a host compiler may (upstream linalg-generalize-named-ops,
// linalg-fuse-elementwise-ops, linalg-fold-unit-extent-dims,
// canonicalize/cse; the test passes rope-test-swap-commutative-operands and
// rope-test-split-generic), must raise the same rope.apply / rope.attention
// ops, in order, with the same attributes as the module as exported.
// scripts/metamorphic.py does the comparison (exit 1 on any difference) and
// runs everything (every zoo module, fixture and negative under every
// rewrite and composition); docs/DESIGN.md (Whole models, metamorphic
// tests) has its table. The FileCheck
// lines below spell a few of the raised forms out.
//
// RUN: %python %S/../../scripts/metamorphic.py --rope-opt rope-opt -j 1 --groups zoo \
// RUN:   --inputs '^(llama_prefill|llama_decode|glm4_decode|qwen2_vl_text_decode|phi_decode|deepseek_v3_prefill|cohere_prefill)$' \
// RUN:   --rewrites canon-cse,generalize,fold-unit,swap,split | FileCheck %s --check-prefix=ZOO
// RUN: %python %S/../../scripts/metamorphic.py --rope-opt rope-opt -j 1 --groups zoo \
// RUN:   --inputs '^(llama_prefill|llama_decode|mistral_decode|qwen2_decode|phi_prefill|glm4_decode|starcoder2_decode|gpt_neox_prefill|qwen2_vl_text_prefill|cohere_prefill|gptj_prefill|deepseek_v3_decode)$' \
// RUN:   --rewrites fuse | FileCheck %s --check-prefix=FUSE
// RUN: %python %S/../../scripts/metamorphic.py --rope-opt rope-opt -j 1 --groups zoo \
// RUN:   --inputs '^(stablelm_prefill|deepseek_v3_prefill)$' --rewrites gen-fuse,gen-fuse-fold-canon
// RUN: %python %S/../../scripts/metamorphic.py --rope-opt rope-opt -j 1 --groups zoo \
// RUN:   --inputs '^(llama_prefill|llama_decode|qwen2_prefill|mistral_prefill|gpt_oss_decode|cohere_prefill)$' \
// RUN:   --rewrites fold-unit-slices,gen-fuse | FileCheck %s --check-prefix=SLICES-GEN-FUSE
// QK-norm models: named ops generalized (the norm's zero fill becomes a
// generic) or the graph fused, every norm still folds into its rotation.
// RUN: %python %S/../../scripts/metamorphic.py --rope-opt rope-opt -j 1 --groups zoo,fixtures \
// RUN:   --inputs '^(qwen3_prefill|gemma3_text_decode|qwen3_moe_decode|neighbours/qwen3_qk_norm|neighbours/gemma3_qk_norm_bf16)$' \
// RUN:   --rewrites generalize,fuse | FileCheck %s --check-prefix=QK-NORM
// With unit dims folded, the norms are read through the unit reshapes the
// rewrite puts between their ops (or the whole rank-reducing slices that
// spell them); on decode steps the rotation is raised with a token dim of
// size 1 that the norm's x lacks.
// RUN: %python %S/../../scripts/metamorphic.py --rope-opt rope-opt -j 1 --groups zoo \
// RUN:   --inputs '^(qwen3_prefill|gemma3_text_prefill|qwen3_moe_prefill|qwen3_decode|gemma3_text_decode|qwen3_moe_decode)$' --rewrites fold-unit,fold-unit-slices \
// RUN:   | FileCheck %s --check-prefix=QK-NORM-FOLD
// QK-NORM-FOLD: | qwen3_decode | 4/4 2/2 | 4/4 2/2 | 4/4 2/2 |
// QK-NORM: | qwen3_prefill | 4/4 2/2 | 4/4 2/2 | 4/4 2/2 |
// QK-NORM: | neighbours/qwen3_qk_norm | 2/2 0/0 | 2/2 0/0 | 2/2 0/0 |
// Unit dims folded, then fused (and operands swapped): the rotation of Q is
// fused into Q.K^T, whose loops split the query heads into KV groups, so the
// rotated tensor is read with its heads as a set of frames.
// RUN: %python %S/../../scripts/metamorphic.py --rope-opt rope-opt -j 1 --groups zoo \
// RUN:   --inputs '^(llama_prefill|llama_decode|mistral_decode|qwen2_prefill|gemma2_decode|glm4_prefill|granite_decode|gptj_prefill|qwen2_onnx_decode|qwen2_vl_text_prefill|qwen2_vl_text_decode)$' \
// RUN:   --rewrites fold-fuse-swap | FileCheck %s --check-prefix=FOLD-FUSE
// RUN: %python %S/../../scripts/metamorphic.py --rope-opt rope-opt -j 1 --groups fixtures \
// RUN:   --inputs '^(llama_computed|llama_computed_matmul|llama_cache|gptj|jax_rotate_half|glm4_partial_interleaved|qwen2_vl_mrope|deepseek_v3_interleave|phi2_partial|meta_llama_complex|attention/hf_llama_sdpa|attention/hf_llama_decode|cache/torch_slice_scatter|cache/jax_dynamic_update_slice)$' \
// RUN:   --rewrites canon-cse,generalize,fuse,fold-unit,swap
// Decode steps generalized, fused, unit dims folded and canonicalized: the
// query's unit dim is gone and the key-only mask (keys <= t) is causal on
// the op's own unit query loop.
// RUN: %python %S/../../scripts/metamorphic.py --rope-opt rope-opt -j 1 --groups zoo \
// RUN:   --inputs '^(llama_decode|mistral_decode|qwen2_decode|glm4_decode|cohere_decode|gpt_oss_decode|qwen2_vl_text_decode)$' \
// RUN:   --rewrites gen-fuse-fold-canon | FileCheck %s --check-prefix=DECODE-FOLDED-MASK
// DECODE-FOLDED-MASK: | mistral_decode | 4/4 2/2 | 4/4 2/2 |
// A payload split in two: gathered tables whose row (the negative-index
// wrap) is computed by a generic of its own.
// RUN: %python %S/../../scripts/metamorphic.py --rope-opt rope-opt -j 1 --groups zoo,fixtures \
// RUN:   --inputs '^(gptj_prefill|gptj_decode|gptj|llama_cache|onnx_rotate_half|vllm_forward_native)$' \
// RUN:   --rewrites split,gen-split-swap | FileCheck %s --check-prefix=SPLIT
// SPLIT: | gptj_decode | 4/4 2/2 | 4/4 2/2 | 4/4 2/2 |
// SPLIT: | llama_cache | 2/2 0/0 | 2/2 0/0 | 2/2 0/0 |
// RUN: %python %S/../../scripts/metamorphic.py --rope-opt rope-opt -j 1 --groups negatives \
// RUN:   --inputs '^negative' --rewrites canon-cse,generalize,fold-unit,fold-unit-slices,swap
//
// ZOO: | llama_prefill | 4/4 2/2 | 4/4 2/2 | 4/4 2/2 | 4/4 2/2 | 4/4 2/2 | 4/4 2/2 |
// FUSE: | llama_prefill | 4/4 2/2 | 4/4 2/2 |
// SLICES-GEN-FUSE: | llama_prefill | 4/4 2/2 | 4/4 2/2 | 4/4 2/2 |
// FOLD-FUSE: | llama_prefill | 4/4 2/2 | 4/4 2/2 |
// M-RoPE's stream dim folded and fused: the row max, the row sum and the
// fully-masked-row guard also reduce a dim of size 1 next to the keys.
// FOLD-FUSE: | qwen2_vl_text_decode | 4/4 2/2 | 4/4 2/2 |
// FOLD-FUSE: | qwen2_onnx_decode | 4/4 2/2 | 4/4 2/2 |
//
// The raised forms, spelled out:
// RUN: rope-opt %S/Inputs/zoo/llama_decode.mlir --linalg-fold-unit-extent-dims --rope-raise -o %t && \
// RUN:   FileCheck %s --check-prefix=A4 < %t && FileCheck %s --check-prefix=T2 < %t && FileCheck %s --check-prefix=DECODE-FOLDED < %t
// RUN: rope-opt %S/Inputs/zoo/glm4_decode.mlir --linalg-fold-unit-extent-dims --rope-raise -o %t && \
// RUN:   FileCheck %s --check-prefix=A4 < %t && FileCheck %s --check-prefix=T2 < %t && FileCheck %s --check-prefix=INTERLEAVED < %t && FileCheck %s --check-prefix=PARTIAL8 < %t
// RUN: rope-opt %S/Inputs/zoo/qwen2_vl_text_decode.mlir --linalg-fold-unit-extent-dims --rope-raise -o %t && \
// RUN:   FileCheck %s --check-prefix=A4 < %t && FileCheck %s --check-prefix=T2 < %t && FileCheck %s --check-prefix=MROPE < %t
// RUN: rope-opt %S/Inputs/zoo/llama_prefill.mlir --linalg-fuse-elementwise-ops --rope-raise -o %t && \
// RUN:   FileCheck %s --check-prefix=A4 < %t && FileCheck %s --check-prefix=T2 < %t
// RUN: rope-opt %S/Inputs/zoo/cohere_prefill.mlir --linalg-fuse-elementwise-ops --rope-raise -o %t && \
// RUN:   FileCheck %s --check-prefix=A4 < %t && FileCheck %s --check-prefix=T2 < %t && FileCheck %s --check-prefix=INTERLEAVED < %t
// RUN: rope-opt %S/Inputs/zoo/phi_prefill.mlir --rope-test-split-generic --rope-raise -o %t && \
// RUN:   FileCheck %s --check-prefix=A4 < %t && FileCheck %s --check-prefix=T2 < %t && FileCheck %s --check-prefix=PARTIAL8 < %t
// RUN: rope-opt %S/Inputs/zoo/qwen2_vl_text_prefill.mlir --rope-test-swap-commutative-operands=permute-inputs --rope-raise -o %t && \
// RUN:   FileCheck %s --check-prefix=A4 < %t && FileCheck %s --check-prefix=T2 < %t && FileCheck %s --check-prefix=MROPE < %t
// RUN: rope-opt %S/Inputs/zoo/stablelm_prefill.mlir --linalg-generalize-named-ops --linalg-fuse-elementwise-ops --linalg-fold-unit-extent-dims --canonicalize --cse --rope-raise -o %t && \
// RUN:   FileCheck %s --check-prefix=A4 < %t && FileCheck %s --check-prefix=T2 < %t && FileCheck %s --check-prefix=PARTIAL4 < %t

// A4-COUNT-4: rope.apply ins(
// A4-NOT:     rope.apply ins(
// T2-COUNT-2: rope.attention ins(
// T2-NOT:     rope.attention ins(
// INTERLEAVED: rope.apply ins({{.*}}layout = #rope.layout<interleaved>
// PARTIAL8:    rope.apply ins({{.*}}rotary_dim = 8 : i64
// PARTIAL4:    rope.apply ins({{.*}}rotary_dim = 4 : i64
// MROPE:       rope.apply ins({{.*}}mrope = #rope.mrope<section = [2, 3, 3]>
// A decode step with its unit dims folded away: [H, D], a token dim of
// size 1 put back for the op.
// DECODE-FOLDED: rope.apply ins(%{{.*}} : tensor<4x1x16xf32>) positions(%{{.*}} : tensor<1xi64>) {{.*}} token_dims = array<i64: 1>
