#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Generate the model zoo (issue 33): whole tiny causal language models built from Hugging Face transformers'
own modeling code with small random configs, exported whole through torch-mlir's fx importer to
linalg-on-tensors, with inputs, float64 logits and torch's f32 logits. Not run in CI (it needs torch,
transformers and torch-mlir); the files it writes are committed. scripts/zoo-status.py measures what the
compiler does with them.

Peers' environment (outside the checkout; see scripts/gen-frontend-fixtures.py for how it is made):

    /work/peers/bin/python   torch 2.15, transformers 5.25, torch-mlir 20261001 (versions recorded in the
                             manifest)

Command line (from the repository root; about 3 minutes for the whole zoo on a 2-core machine):

    nice -n 19 /work/peers/bin/python scripts/gen-model-zoo.py             # every model, both modes
    nice -n 19 /work/peers/bin/python scripts/gen-model-zoo.py llama qwen2 # only these (manifest merged)
    options: --out DIR (default test/Frontends/Inputs/zoo), --modes prefill,decode, --list,
             --variant (other seed, sizes and shapes; with --out DIR: a zoo for checking the raising on IR it
             was not developed against, e.g. python3 scripts/zoo-status.py --zoo DIR)

Sizes: COMMON below (hidden 64, 4 heads / 2 KV heads, head dim 16, intermediate 128, vocab 256, 2 layers, tied
embeddings: the weights are most of each file, about 0.8 MB; MoE and MLA models about 1.2 MB); 16 tokens of
prefill, a 16-token cache for decode; batch 1 except qwen2 (batch 2, row 1's positions offset by 5). Reruns
give the same files except the order of a few independent ops in gemma3_text and llama4_text (their per-layer-
type rotary tables are exported in varying order; the computation is the same).

What it writes, per model NAME and mode (prefill, decode), into test/Frontends/Inputs/zoo/:
  NAME_MODE.mlir  torch-mlir's output, text unchanged: one func @main, weights and tables as dense_resource blobs;
    prefill  @main(input_ids [B, S] i64, position_ids [B, S] i64) -> logits [B, S, V]
    decode   @main(input_ids [B, 1], position_ids [B, 1], k0, v0, k1, v1, ...) -> (logits [B, 1, V], k0', v0',
             k1', v1', ...): one step with the KV cache as arguments and results (what serving stacks run);
             k_i/v_i are layer i's cache tensors as transformers' DynamicCache holds them ([B, Hkv, P, D]; a
             sliding-window layer holds its last window - 1 tokens); the results are the cache after the step;
  NAME_MODE.npz   arg0..   the inputs of @main (the decode cache: what the model itself cached on a prefix);
                  ref0..   float64 outputs: the same modeling code, built and run in float64 (below);
                  frontend0.. torch's own outputs of the exported module (eager torch; f32, or bf16 below);
and manifest.json: per model its model type, the config given (the small dict), the export options, the expected
counts after raising (rotations: 2 per layer that applies RoPE, q and k; attentions: one per layer), file sizes,
torch f32's error vs float64 (max|y - r| / max|r| over the logits; torch_f32_err), a decode self-check (the
float64 decode step on the float64 model's own prefix cache vs the float64 prefill of prefix + token, last
position), which result
holds the logits (logits_result: Phi-3's LongRoPE update assigns its inv_freq buffer in forward, and torch-mlir
returns the assigned buffer as result 0; ref0/frontend0 then hold that buffer, so result i <-> ref i always),
ir_caveats (where the exported IR itself departs from the model), and "blocked": what could not be exported,
with the exact error.

The bf16 members (spec dtype="bfloat16": llama_bf16, llama_eager_bf16, the configs of llama and llama_eager): the
model runs in torch.bfloat16 as from_pretrained(dtype=torch.bfloat16) holds it: parameters bf16 (the f32 namesake's
weights, same seed, rounded), buffers as the modeling code makes them (inv_freq float32); activations, the decode
cache (args 2..) and every result are bf16 (@main takes and returns tensor<...xbf16>). numpy has no bfloat16: the
.npz stores bf16 arrays as their float32 values (exact) and the manifest says which are bf16 (args[i].dtype,
outputs[i].dtype "bfloat16"; the mode's frontend_dtype "bfloat16"); python/tests/frontend_fixture_io.py's
load_zoo_module turns the bf16 args into ml_dtypes.bfloat16 arrays for rope_mlir.jit. The float64 reference is the
same modeling code in float64 with the bf16-rounded parameters (the model's own weights), frontend0.. torch's bf16
outputs, and the manifest records torch bf16's error as torch_bf16_err (where the f32 members have torch_f32_err).

How the models are run and exported (the documented patches; the modeling code itself runs unchanged):
  * transformers.masking_utils.find_packed_sequence_indices returns None. Under tracing it returns a
    cumsum over position-id jumps (packed sequences), which torch-mlir lowers to tm_tensor.scan, which MLIR 22
    cannot parse; eager transformers returns None for these inputs (one sequence per row), so the exported
    function computes what eager mode does.
  * The activation "gelu_pytorch_tanh" (Gemma 2/3, StarCoder2) is built as transformers' own written-out
    GELUTanh(use_gelu_tanh_python=True): the same function, which torch-mlir exports exactly, where its
    lowering of the fused aten.gelu(approximate='tanh') rounds sqrt(2/pi) to 7.977240e-01 (0.7978846): the IR
    then computes another function, 1e-5..5e-5 off the model's logits whatever compiles it (IREE llvm-cpu too).
  * Every non-persistent buffer (inv_freq, rotary caches) is re-registered persistent before export, else
    torch-mlir fails with "Could not find state mapping for buffer".
  * Decode: a thin wrapper module (ModelDecode) builds a DynamicCache(config=...) from the argument tensors
    (cache.update per layer), sets each sliding-window layer's cumulative_length to the true prefix length
    (update() counts only the tokens it was given, which for a full window is window - 1), calls the model with
    that cache and returns the logits and every layer's keys and values after the step.
  * float64 references: the model is built a second time with the same config inside float64_mode() (from
    gen-frontend-fixtures.py: torch.float, torch.float32 and Tensor.float mean float64, the default dtype is
    float64, so inv_freq and every hard-coded .float() cast are float64), the f32 parameters copied in, and run
    inside float64_mode() on the same inputs.
  * attn_implementation is set per model (sdpa unless the model needs eager: soft-capping, sinks, ...).
  * MoE models run their experts with transformers' "batched_mm" experts implementation
    (config._experts_implementation): every token gathers its top-k experts' weights and multiplies them with
    bmm, static shapes throughout. The default, "grouped_mm", calls torch._grouped_mm, which has no float64
    kernel ("Expected mat_a to be Float32, BFloat16 or Float16 matrix, got Double"), and "eager" loops over
    the experts a batch hits (data-dependent). The routers' torch.topk is decomposed (topk_by_argmax) into k
    rounds of amax/argmax/mask, and their aten.scatter (Llama 4, DeepSeek-V3 routers) into selects
    (scatter_by_select): torch-mlir lowers them to tm_tensor.sort / tm_tensor.scatter, which MLIR 22 cannot
    parse.
  * Graphs with complex tensors (Llama 4's freqs_cis) get two rewrites of the exported graph
    (complex_rewrites): torch-mlir cannot lower `complex * 1.0` nor the dtype check of a complex tensor.

Size budget: any .mlir over 1.5 MB is refused (recorded in "blocked"), and a model whose files would take the
folder over 48 MB is refused too (about 41 MB for the torch members, of which 1.8 MB the bf16 ones (their weights
half the bytes: ~430 KB a .mlir), and 6.7 MB for the ONNX and JAX members that scripts/gen-model-zoo-onnx-jax.py
writes into the same folder and manifest; this script keeps their entries; 47.7 MB in all).
Every written .mlir parses with /usr/lib/llvm-22/bin/mlir-opt and with build/bin/rope-opt (else it is
recorded as blocked and not written).
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import json
import pathlib
import subprocess
import sys
import tempfile
import time
import traceback
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "test" / "Frontends" / "Inputs" / "zoo"
MLIR_OPT = "/usr/lib/llvm-22/bin/mlir-opt"
ROPE_OPT = ROOT / "build" / "bin" / "rope-opt"
MAX_MLIR_BYTES = 1_500_000
MAX_ZOO_BYTES = 48_000_000     # 40 MB torch members + 8 MB ONNX/JAX ones (scripts/gen-model-zoo-onnx-jax.py)
SEED = 33


def _load(name: str, file: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / file)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


ff = _load("gen_frontend_fixtures", "gen-frontend-fixtures.py")     # float64_mode, buffers, rel_err, versions
af = _load("gen_attention_fixtures", "gen-attention-fixtures.py")   # dump_json

# -- the zoo -----------------------------------------------------------------------------------------------------
# Shared tiny sizes; each entry overrides what its model needs. head_dim 16, 4 heads / 2 KV heads.
COMMON = dict(hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=16, intermediate_size=128,
              vocab_size=256, num_hidden_layers=2, max_position_embeddings=128, pad_token_id=0, bos_token_id=1,
              eos_token_id=2, tie_word_embeddings=True)


def spec(model_type: str, attn: str = "sdpa", batch: int = 1, offsets: Sequence[int] = (0,), seq: int = 16,
         past: int = 16, drop: Sequence[str] = (), lm: Optional[str] = None, notes: str = "",
         experts: Optional[str] = None, dtype: str = "float32", **config) -> dict:
    """dtype: the parameters' dtype the model runs in ("float32", or "bfloat16": see bf16_parameters)."""
    cfg = {k: v for k, v in COMMON.items() if k not in drop}
    cfg.update(config)
    return {"model_type": model_type, "attn": attn, "batch": batch, "offsets": list(offsets), "seq": seq,
            "past": past, "config": cfg, "lm": lm, "notes": notes,
            "experts": experts, "dtype": dtype}


def longrope_factors(n: int, lo: float, hi: float) -> List[float]:
    return [round(lo + (hi - lo) * i / max(n - 1, 1), 4) for i in range(n)]


MODELS: Dict[str, dict] = {
    "llama": spec("llama", rope_parameters={"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0,
                                            "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                            "original_max_position_embeddings": 32},
                  notes="SDPA; llama3 rope scaling"),
    "llama_eager": spec("llama", attn="eager", notes="eager attention; default RoPE"),
    # bf16 members (issue 35): the configs of llama / llama_eager run in torch.bfloat16 (their f32 weights
    # rounded to bf16; bf16 activations, KV cache and logits, as a bf16 checkpoint is served).
    "llama_bf16": spec("llama", dtype="bfloat16",
                       rope_parameters={"rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0,
                                        "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                        "original_max_position_embeddings": 32},
                       notes="llama in bfloat16: SDPA; llama3 rope scaling"),
    "llama_eager_bf16": spec("llama", attn="eager", dtype="bfloat16",
                             notes="llama_eager in bfloat16: eager attention; default RoPE"),
    "mistral": spec("mistral", sliding_window=8, notes="sliding window 8 < 16 tokens (prefill) and < the cache"),
    "qwen2": spec("qwen2", batch=2, offsets=(0, 5),
                  notes="q/k/v bias; batch 2, row 1's positions start at 5 (prefill) / P + 5 (decode)"),
    "qwen3": spec("qwen3", notes="QK-norm (RMSNorm on q and k per head before RoPE)"),
    "phi3": spec("phi3", drop=("head_dim",), original_max_position_embeddings=32,
                 rope_parameters={"rope_type": "longrope", "rope_theta": 10000.0,
                                  "short_factor": longrope_factors(8, 1.0, 1.5),
                                  "long_factor": longrope_factors(8, 1.0, 4.0),
                                  "original_max_position_embeddings": 32},
                 notes="LongRoPE (sequence <= original_max_position_embeddings: short factors); fused qkv_proj"),
    "phi": spec("phi", drop=("head_dim",), partial_rotary_factor=0.5,
                notes="partial rotary (8 of 16 channels); LayerNorm, parallel attention/MLP"),
    "gemma2": spec("gemma2", attn="eager", sliding_window=8, query_pre_attn_scalar=16,
                   notes="eager (attention logit soft-capping); sliding/full layers; final logit soft-capping"),
    "gemma3_text": spec("gemma3_text", sliding_window=8, layer_types=["sliding_attention", "full_attention"],
                        query_pre_attn_scalar=16,
                        rope_parameters={"sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                                         "full_attention": {"rope_type": "linear", "rope_theta": 1000000.0,
                                                            "factor": 8.0}},
                        notes="local (theta 1e4, window 8) and global (theta 1e6, linear x8) layers; QK-norm"),
    "glm4": spec("glm4", partial_rotary_factor=0.5, notes="interleaved pairs, partial rotary (8 of 16)"),
    "cohere": spec("cohere", notes="interleaved pairs; LayerNorm; logit_scale"),
    "olmo2": spec("olmo2", notes="QK-norm over all heads (before the head reshape)"),
    "granite": spec("granite", embedding_multiplier=2.0, attention_multiplier=0.2, residual_multiplier=0.5,
                    logits_scaling=4.0, notes="granite multipliers (attention scale 0.2)"),
    "starcoder2": spec("starcoder2", sliding_window=8, use_bias=True, notes="bias everywhere; sliding window 8"),
    "stablelm": spec("stablelm", drop=("head_dim",), partial_rotary_factor=0.25,
                     notes="partial rotary (4 of 16 channels); LayerNorm"),
    "gpt_neox": spec("gpt_neox", drop=("head_dim", "num_key_value_heads"), rotary_pct=0.25,
                     notes="partial rotary (4 of 16); fused qkv; MHA (no GQA in GPT-NeoX)"),
    "qwen3_moe": spec("qwen3_moe", experts="batched_mm", num_experts=4, num_experts_per_tok=2, moe_intermediate_size=64,
                      notes="MoE (4 experts, top 2) in every layer; QK-norm"),
    "gpt_oss": spec("gpt_oss", attn="eager", experts="batched_mm", intermediate_size=64, num_local_experts=4, num_experts_per_tok=2, sliding_window=8,
                    layer_types=["sliding_attention", "full_attention"],
                    rope_parameters={"rope_type": "yarn", "rope_theta": 150000.0, "factor": 4.0,
                                     "original_max_position_embeddings": 32, "beta_fast": 32.0,
                                     "beta_slow": 1.0, "truncate": False},
                    notes="eager (attention sinks); YaRN; sliding/full layers; MoE (4 experts, top 2); expert "
                          "intermediate 64 (at 128 the .mlir is 2.0 MB, over the 1.5 MB budget)"),
    "llama4_text": spec("llama4_text", lm="Llama4ForCausalLM", intermediate_size_mlp=128, num_local_experts=2,
                        num_experts_per_tok=1, interleave_moe_layer_step=2, no_rope_layers=[1, 0],
                        attention_chunk_size=8, use_qk_norm=True,
                        notes="layer 0 RoPE with chunked attention (chunk 8), layer 1 no RoPE (global, "
                              "temperature tuning); MoE every 2nd layer"),
    "deepseek_v3": spec("deepseek_v3", experts="batched_mm", drop=("head_dim",), kv_lora_rank=32, q_lora_rank=32, qk_rope_head_dim=8,
                        qk_nope_head_dim=16, v_head_dim=16, num_key_value_heads=4, n_routed_experts=4,
                        num_experts_per_tok=2, n_group=1, topk_group=1, first_k_dense_replace=1,
                        moe_intermediate_size=64, n_shared_experts=1,
                        rope_parameters={"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0,
                                         "original_max_position_embeddings": 32, "beta_fast": 32.0,
                                         "beta_slow": 1.0, "mscale": 1.0, "mscale_all_dim": 1.0},
                        notes="MLA (q/kv LoRA, rope head dim 8); YaRN; layer 1 MoE (4 routed + 1 shared)"),
    "qwen2_vl_text": spec("qwen2_vl_text", lm="qwen2_vl",
                          rope_parameters={"rope_type": "default", "rope_theta": 1000000.0,
                                           "mrope_section": [2, 3, 3]},
                          notes="M-RoPE (sections t/h/w 2, 3, 3 of 8 frequencies); position_ids [3, B, S] (text "
                                "only: the three rows equal, as for text tokens); Qwen2VLTextModel + a Linear "
                                "lm_head tied to the embedding"),
    "gptj": spec("gptj", drop=("hidden_size", "num_attention_heads", "num_key_value_heads", "head_dim",
                               "intermediate_size", "max_position_embeddings", "num_hidden_layers"),
                 n_embd=64, n_head=4, n_layer=2, n_positions=128, rotary_dim=8, n_inner=128,
                 notes="interleaved partial (8 of 16); MHA"),
}


# -- building and running ----------------------------------------------------------------------------------------
def patch_transformers() -> List[str]:
    from transformers import activations, masking_utils
    masking_utils.find_packed_sequence_indices = lambda position_ids: None
    # transformers' own written-out spelling of the same function (GELUTanh(use_gelu_tanh_python=True)); the
    # fused aten.gelu(approximate='tanh') is lowered by torch-mlir with sqrt(2/pi) = 7.977240e-01 instead of
    # 0.7978846, so the IR would compute another function (1e-5..5e-5 off the model's logits).
    activations.ACT2FN["gelu_pytorch_tanh"] = (activations.GELUTanh, {"use_gelu_tanh_python": True})
    return ["transformers.masking_utils.find_packed_sequence_indices -> None (else tm_tensor.scan)",
            "non-persistent buffers re-registered persistent",
            "gelu_pytorch_tanh -> transformers' GELUTanh(use_gelu_tanh_python=True) (torch-mlir's aten.gelu "
            "tanh lowering has sqrt(2/pi) as 7.977240e-01)"]


def make_config(s: dict):
    from transformers import AutoConfig
    cfg_dict = copy.deepcopy(s["config"])
    mt = "qwen2_vl_text" if s["lm"] == "qwen2_vl" else s["model_type"]
    cfg = AutoConfig.for_model(mt, **cfg_dict)
    cfg._attn_implementation = s["attn"]
    if s["experts"]:
        cfg._experts_implementation = s["experts"]
    return cfg


def build_lm(s: dict, cfg):
    """The causal LM: AutoModelForCausalLM, or for Qwen2-VL its text model with a Linear lm_head."""
    import torch
    from transformers import AutoModelForCausalLM
    if s["lm"] == "qwen2_vl":
        from transformers.models.qwen2_vl import modeling_qwen2_vl as mq

        class Qwen2VLTextLM(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.config = cfg
                self.model = mq.Qwen2VLTextModel(cfg)
                self.lm_head = torch.nn.Linear(cfg.hidden_size, cfg.vocab_size, bias=False)
                self.lm_head.weight = self.model.embed_tokens.weight      # tied, as COMMON asks

            def forward(self, input_ids, position_ids, past_key_values=None, use_cache=False):
                out = self.model(input_ids=input_ids, position_ids=position_ids, past_key_values=past_key_values,
                                 use_cache=use_cache)
                return type("Out", (), {"logits": self.lm_head(out.last_hidden_state),
                                        "past_key_values": out.past_key_values})()
        return Qwen2VLTextLM()
    if s["lm"] == "Llama4ForCausalLM":
        from transformers import Llama4ForCausalLM
        return Llama4ForCausalLM(cfg)
    return AutoModelForCausalLM.from_config(cfg)


def bf16_parameters(m) -> None:
    """The parameters to torch.bfloat16 in place, buffers left as the modeling code made them: how
    from_pretrained(dtype=torch.bfloat16) (and from_config(cfg, dtype=torch.bfloat16)) holds a bf16 model,
    whose rotary inv_freq, computed in float32 by the modeling code, stays float32 (model.to(torch.bfloat16)
    would round it to bf16 too). Tied parameters stay one tensor."""
    import torch
    for p in m.parameters():
        p.data = p.data.to(torch.bfloat16)


def torch_dtype(s: dict):
    import torch
    return {"float32": torch.float32, "bfloat16": torch.bfloat16}[s["dtype"]]


def build_pair(s: dict):
    """(the model in its dtype, float64 model with the same parameters), both eval, buffers persistent. A bf16
    model is built in f32 with the same seed as its f32 namesake, then its parameters rounded to bf16; the
    float64 model gets the rounded values (the reference computes with the model's own weights)."""
    import torch
    torch.manual_seed(SEED)
    cfg = make_config(s)
    m = build_lm(s, cfg).float().eval()
    if s["dtype"] == "bfloat16":
        bf16_parameters(m)
    with ff.float64_mode():
        cfg64 = make_config(s)
        m64 = build_lm(s, cfg64).double().eval()
    ff.make_buffers_persistent(m64)
    params = dict(m.named_parameters())
    with torch.no_grad():
        for name, p in m64.named_parameters():
            p.copy_(params[name].double())
    return cfg, m, m64


def layer_count(cfg) -> int:
    return int(getattr(cfg, "num_hidden_layers", None) or getattr(cfg, "n_layer"))


def expected_counts(name: str, cfg) -> dict:
    n = layer_count(cfg)
    rope_layers = list(range(n))
    no_rope = getattr(cfg, "no_rope_layers", None)
    if name.startswith("llama4") and no_rope:
        rope_layers = [i for i in range(n) if no_rope[i]]
    return {"rotations": 2 * len(rope_layers), "attentions": n, "rope_layers": rope_layers,
            "note": "rotations: q and k of every layer that applies RoPE; attentions: one per layer"}


class Prefill:
    @staticmethod
    def module(lm):
        import torch

        class ModelPrefill(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lm = lm

            def forward(self, input_ids, position_ids):
                return self.lm(input_ids=input_ids, position_ids=position_ids, use_cache=False).logits
        return ModelPrefill()


def decode_module(lm, past_len: int):
    import torch
    from transformers import DynamicCache

    class ModelDecode(torch.nn.Module):
        """One decode step with the KV cache as tensors: (ids, positions, k0, v0, k1, v1, ...) ->
        (logits, k0', v0', ...)."""

        def __init__(self):
            super().__init__()
            self.lm = lm

        def forward(self, input_ids, position_ids, *kv):
            cache = DynamicCache(config=self.lm.config)
            for i in range(len(kv) // 2):
                cache.update(kv[2 * i], kv[2 * i + 1], i)
                layer = cache.layers[i]
                if hasattr(layer, "cumulative_length"):
                    layer.cumulative_length = past_len
            out = self.lm(input_ids=input_ids, position_ids=position_ids, past_key_values=cache, use_cache=True)
            res = [out.logits]
            for layer in cache.layers:
                res += [layer.keys, layer.values]
            return tuple(res)
    return ModelDecode()


def positions_for(s: dict, start: int, length: int, mrope: bool):
    import torch
    rows = [torch.arange(start + o, start + o + length, dtype=torch.int64) for o in s["offsets"]]
    pos = torch.stack(rows)
    if mrope:
        pos = pos[None].expand(3, -1, -1).contiguous()
    return pos


def cache_tensors(lm, ids, pos, past_len: int) -> List[Any]:
    """What the model itself caches on a prefix, as flat [k0, v0, k1, v1, ...]."""
    import torch
    with torch.no_grad():
        out = lm(input_ids=ids, position_ids=pos, use_cache=True)
    cache = out.past_key_values
    flat = []
    for layer in cache.layers:
        flat += [layer.keys.detach().clone(), layer.values.detach().clone()]
    return flat


def complex_rewrites(prog) -> List[str]:
    """Two rewrites of the exported graph around complex tensors (Llama 4's freqs_cis), which torch-mlir cannot
    lower otherwise; both leave the computation unchanged:
      * aten._assert_tensor_metadata on a complex tensor is removed (a check with no result; torch-mlir fails
        "Failed to canonicalize the _assert_tensor_metadata op since the dtype does not match");
      * aten.mul.Tensor(complex, 1.0) is replaced by its complex operand (the rotary module's
        `freqs_cis * attention_scaling` with attention_scaling 1.0; torch-mlir: "Only integer/float dtype
        supported").
    Returns what was done (empty for graphs without complex tensors)."""
    import torch
    g = prog.graph_module.graph
    done: List[str] = []

    def is_complex(node) -> bool:
        v = getattr(node, "meta", {}).get("val")
        return isinstance(v, torch.Tensor) and v.is_complex()

    for n in list(g.nodes):
        if n.op != "call_function" or not n.args or not hasattr(n.args[0], "meta") or not is_complex(n.args[0]):
            continue
        if n.target == torch.ops.aten._assert_tensor_metadata.default and not n.users:
            g.erase_node(n)
            done.append("removed aten._assert_tensor_metadata of a complex tensor")
        elif n.target == torch.ops.aten.mul.Tensor and isinstance(n.args[1], (int, float)) and n.args[1] == 1:
            n.replace_all_uses_with(n.args[0])
            g.erase_node(n)
            done.append("removed aten.mul.Tensor(complex, 1.0)")
    if done:
        g.lint()
        prog.graph_module.recompile()
    return sorted(set(done))


def topk_by_argmax(x, k, dim=-1, largest=True, sorted=True):
    """aten.topk as k rounds of (amax, argmax, mask the winner with -inf): the same values and indices as
    torch.topk for distinct values (ties: argmax's first index). torch-mlir lowers topk to tm_tensor.sort,
    which MLIR 22 cannot parse; amax, argmax, iota, compare and select lower to plain linalg."""
    import torch
    assert largest, "only largest=True is used by the MoE routers"
    dim = dim % x.dim()
    iota_shape = [1] * x.dim()
    iota_shape[dim] = x.shape[dim]
    iota = torch.arange(x.shape[dim], device=x.device).reshape(iota_shape)
    values, indices = [], []
    for _ in range(k):
        idx = torch.argmax(x, dim=dim, keepdim=True)
        values.append(torch.amax(x, dim=dim, keepdim=True))
        indices.append(idx)
        x = torch.where(iota == idx, torch.full_like(x, float("-inf")), x)
    return torch.cat(values, dim=dim), torch.cat(indices, dim=dim)


def scatter_by_select(x, dim, index, src):
    """aten.scatter (src tensor or scalar value) as one select per index column: out = where(iota == index[..., j],
    src[..., j], out) along `dim`. torch-mlir lowers scatter to tm_tensor.scatter, which MLIR 22 cannot parse.
    Used for the MoE routers' scatter of k winners (index has k columns along dim)."""
    import torch
    dim = dim % x.dim()
    iota_shape = [1] * x.dim()
    iota_shape[dim] = x.shape[dim]
    iota = torch.arange(x.shape[dim], device=x.device).reshape(iota_shape)
    out = x
    for j in range(index.shape[dim]):
        idx = index.narrow(dim, j, 1)
        val = src.narrow(dim, j, 1) if isinstance(src, torch.Tensor) else torch.full_like(x, src)
        out = torch.where(iota == idx, val, out)
    return out


def export(module, args):
    """(text, graph rewrites applied, buffers the forward assigns): torch.export, complex_rewrites, then torch-mlir's fx importer."""
    import torch
    from torch_mlir import fx
    from torch_mlir.compiler_utils import OutputType
    prog = torch.export.export(module, tuple(args))
    rewrites = complex_rewrites(prog)
    aten = torch.ops.aten
    decomps = {aten.topk.default: (topk_by_argmax, "aten.topk decomposed into k rounds of amax/argmax/mask "
                                                   "(topk_by_argmax; else tm_tensor.sort)"),
               aten.scatter.src: (scatter_by_select, "aten.scatter.src decomposed into selects (scatter_by_select; "
                                                     "else tm_tensor.scatter)"),
               aten.scatter.value: (scatter_by_select, "aten.scatter.value decomposed into selects "
                                                       "(scatter_by_select; else tm_tensor.scatter)")}
    for _ in range(2):      # functionalization may turn scatter_ into scatter only in the first round
        targets = {n.target for n in prog.graph_module.graph.nodes}
        used = {op: d for op, d in decomps.items() if op in targets}
        if not used:
            break
        prog = prog.run_decompositions({op: fn for op, (fn, _) in used.items()})
        rewrites += [why for _, why in used.values()]
    # torch-mlir's importer runs its decompositions first; a buffer assignment in the forward (Phi-3's LongRoPE
    # update) becomes a BUFFER_MUTATION result only then, ahead of the user outputs.
    from torch.export.graph_signature import OutputKind
    from torch_mlir.extras.fx_decomp_util import get_decomposition_table
    decomposed = prog.run_decompositions(get_decomposition_table())
    mutated = [o.target for o in decomposed.graph_signature.output_specs if o.kind == OutputKind.BUFFER_MUTATION]
    mod = fx.export_and_import(prog, output_type=OutputType.LINALG_ON_TENSORS, func_name="main")
    text = str(mod)
    return (text if text.endswith("\n") else text + "\n"), rewrites, mutated


def to64(args):
    return [a.double() if a.is_floating_point() else a for a in args]


def to_numpy(t):
    """A tensor as a numpy array; bf16 (which numpy lacks) as its float32 values (exact)."""
    import torch
    t = t.detach()
    return (t.float() if t.dtype == torch.bfloat16 else t).numpy().copy()


def dtype_name(t) -> str:
    return str(t.dtype).replace("torch.", "")


def run_mode(name: str, s: dict, mode: str) -> dict:
    """Builds, runs (f32, float64), exports one model in one mode. Returns text, arrays and facts."""
    import torch
    cfg, m, m64 = build_pair(s)
    mrope = s["lm"] == "qwen2_vl"
    g = torch.Generator().manual_seed(SEED + sum(map(ord, name + mode)))
    B, S, P = s["batch"], s["seq"], s["past"]
    V = cfg.vocab_size
    facts: Dict[str, Any] = {}
    if mode == "prefill":
        ids = torch.randint(3, V, (B, S), generator=g)
        pos = positions_for(s, 0, S, mrope)
        args = [ids, pos]
        mod, mod64 = Prefill.module(m), Prefill.module(m64)
    else:
        prefix = torch.randint(3, V, (B, P), generator=g)
        tok = torch.randint(3, V, (B, 1), generator=g)
        ppos = positions_for(s, 0, P, mrope)
        pos = positions_for(s, P, 1, mrope)
        kv = cache_tensors(m, prefix, ppos, P)
        args = [tok, pos] + kv
        mod, mod64 = decode_module(m, P), decode_module(m64, P)
        # Self-check in float64: decode on the float64 model's own prefix cache vs prefill of prefix + token.
        with ff.float64_mode(), torch.no_grad():
            kv64 = cache_tensors(m64, prefix, ppos, P)
            step = decode_module(m64, P)(tok, pos, *kv64)[0]
            allpos = torch.cat([ppos, pos], dim=-1)
            full = m64(input_ids=torch.cat([prefix, tok], dim=1), position_ids=allpos, use_cache=False).logits
        facts["decode_vs_prefill_f64"] = ff.rel_err(step[:, -1].numpy(), full[:, -1].numpy())
        facts["cache_shapes"] = [list(t.shape) for t in kv]
    with torch.no_grad():
        touts = list(ff.as_tuple(mod(*args)))
    facts["arg_dtypes"] = [dtype_name(a) for a in args]
    facts["output_dtypes"] = [dtype_name(o) for o in touts]
    outs = [to_numpy(o) for o in touts]
    with ff.float64_mode(), torch.no_grad():
        refs = [o.detach().numpy().astype(np.float64) for o in ff.as_tuple(mod64(*to64(args)))]
    ff.make_buffers_persistent(mod)       # the LongRoPE update re-registers inv_freq non-persistent when it runs
    t0 = time.time()
    text, facts["graph_rewrites"], mutated = export(mod, args)
    facts["export_s"] = round(time.time() - t0, 1)
    # Buffers the forward assigns (Phi-3's LongRoPE update re-assigns inv_freq) are results of the exported
    # function ahead of the model's outputs: their values after the call lead outs/refs, so result i <-> ref i.
    facts["leading_results"] = [f"buffer {fqn} (assigned by the forward)" for fqn in mutated]
    facts["output_dtypes"] = [dtype_name(mod.get_buffer(fqn)) for fqn in mutated] + facts["output_dtypes"]
    outs = [to_numpy(mod.get_buffer(fqn)) for fqn in mutated] + outs
    refs = [mod64.get_buffer(fqn).detach().numpy().astype(np.float64) for fqn in mutated] + refs
    facts["logits_result"] = len(mutated)
    facts["torch_err"] = ff.rel_err(outs[len(mutated)], refs[len(mutated)])
    facts["torch_err_outputs"] = [ff.rel_err(o, r) for o, r in zip(outs, refs)]
    return {"cfg": cfg, "text": text, "args": [to_numpy(a) for a in args], "refs": refs, "outs": outs,
            "facts": facts}


def ir_caveats(text: str) -> List[str]:
    """What in the exported IR itself departs from the model (found by comparing compilers on it)."""
    out = []
    if "7.977240e-01" in text:
        out.append("torch-mlir lowers aten.gelu(approximate='tanh') with sqrt(2/pi) as 7.977240e-01 (exactly "
                   "0.7978846, 2e-4 relative): the IR's logits differ from torch's and from the float64 reference "
                   "by 1e-5..5e-5 whatever compiles it (IREE llvm-cpu gives the same error on starcoder2 and "
                   "gemma3_text decode); gelu_new written out in torch (phi, gptj) has the exact constant")
    return out


def parse_check(text: str) -> Optional[str]:
    with tempfile.NamedTemporaryFile("w", suffix=".mlir") as f:
        f.write(text)
        f.flush()
        for tool in (MLIR_OPT, str(ROPE_OPT)):
            r = subprocess.run(["nice", "-n", "19", tool, f.name, "-o", "/dev/null"], capture_output=True, text=True)
            if r.returncode != 0:
                return f"{pathlib.Path(tool).name} does not parse it: {r.stderr.strip()[:1500]}"
    if "tm_tensor" in text:
        return "contains tm_tensor ops"
    return None


def plain(v):
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    return str(v)


def make_variant() -> None:
    """Other sizes, seed and shapes for every model (main's --variant)."""
    global SEED, MAX_MLIR_BYTES, MAX_ZOO_BYTES
    SEED = 7
    MAX_MLIR_BYTES, MAX_ZOO_BYTES = 10_000_000, 400_000_000
    for name, s in MODELS.items():
        c = s["config"]
        listed_layers = any(k in c for k in ("layer_types", "no_rope_layers"))
        for key, value in dict(hidden_size=128, num_attention_heads=4, head_dim=32, intermediate_size=96).items():
            if key in c:
                c[key] = value
        if "num_key_value_heads" in c and name != "deepseek_v3":
            c["num_key_value_heads"] = 1
        if not listed_layers:
            c["num_hidden_layers"] = 3
        if name == "phi3":
            c["rope_parameters"]["short_factor"] = longrope_factors(16, 1.0, 1.3)
            c["rope_parameters"]["long_factor"] = longrope_factors(16, 1.0, 3.0)
        if name == "qwen2_vl_text":
            c["rope_parameters"]["mrope_section"] = [4, 6, 6]
        s["seq"], s["past"] = 12, 20
        if name == "qwen2":
            s["offsets"] = [0, 3]


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help="models to (re)generate (default: all)")
    ap.add_argument("--out", type=pathlib.Path, default=DEFAULT_OUT)
    ap.add_argument("--modes", default="prefill,decode")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--variant", action="store_true",
                    help="a zoo the raising was not developed against (issue 33): seed 7, head dim 32 (hidden "
                         "128), one KV head, intermediate 96, 3 layers (2 where the layer types are listed), 12 "
                         "tokens, a 20-token cache; write it with --out elsewhere, never over the committed zoo")
    opts = ap.parse_args(argv)
    if opts.list:
        print("\n".join(MODELS))
        return 0
    if opts.variant:
        if opts.out.resolve() == DEFAULT_OUT.resolve():
            ap.error("--variant writes a zoo for checking, not the committed one: give --out DIR")
        make_variant()
    names = opts.names or list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        ap.error(f"unknown models {unknown}; --list shows them")
    modes = opts.modes.split(",")
    import torch  # noqa: F401  (before anything else native; docs: FRONTENDS.md)
    import warnings
    warnings.filterwarnings("ignore")
    patches = patch_transformers()
    out_dir = opts.out
    out_dir.mkdir(parents=True, exist_ok=True)
    manifest_path = out_dir / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    entries = {e["name"]: e for e in manifest.get("models", [])}
    blocked = {(b["name"], b["mode"]): b for b in manifest.get("blocked", [])}
    vers = {k: v for k, v in ff.versions().items() if k in ("python", "torch", "transformers", "torch-mlir",
                                                               "numpy")}
    for name in names:
        s = MODELS[name]
        entry = entries.get(name, {"name": name})
        entry.update({"model_type": s["model_type"], "notes": s["notes"], "config": plain(s["config"])})
        if s["dtype"] != "float32":
            entry["dtype"] = s["dtype"]
        entry.setdefault("modes", {})
        for mode in modes:
            stem = f"{name}_{mode}"
            print(f"== {stem}", flush=True)
            for suffix in (".mlir", ".npz"):
                (out_dir / f"{stem}{suffix}").unlink(missing_ok=True)
            entry["modes"].pop(mode, None)
            try:
                r = run_mode(name, s, mode)
                problem = parse_check(r["text"])
                if problem:
                    raise RuntimeError(problem)
                size = len(r["text"].encode())
                if size > MAX_MLIR_BYTES:
                    raise RuntimeError(f"size budget: {stem}.mlir would be {size} bytes > {MAX_MLIR_BYTES}")
                current = sum(p.stat().st_size for p in out_dir.iterdir() if p.is_file()
                              and p.name != "manifest.json")
                if current + size > MAX_ZOO_BYTES:
                    raise RuntimeError(f"size budget: the zoo would be {current + size} bytes > {MAX_ZOO_BYTES}")
            except Exception as exc:  # noqa: BLE001  (recorded, not fatal)
                err = f"{type(exc).__name__}: {exc}"
                print(f"   BLOCKED: {err[:1500]}", flush=True)
                blocked[(name, mode)] = {"name": name, "mode": mode, "error": err[:6000],
                                         "traceback_tail": traceback.format_exc()[-1500:]}
                continue
            blocked.pop((name, mode), None)
            (out_dir / f"{stem}.mlir").write_text(r["text"])
            arrays = {f"arg{i}": a for i, a in enumerate(r["args"])}
            arrays.update({f"ref{i}": x.astype(np.float64) for i, x in enumerate(r["refs"])})
            arrays.update({f"frontend{i}": np.asarray(x, np.float32) for i, x in enumerate(r["outs"])})
            np.savez_compressed(out_dir / f"{stem}.npz", **arrays)
            cfg = r["cfg"]
            entry["expected"] = expected_counts(name, cfg)
            f = r["facts"]
            short = {"float32": "f32", "bfloat16": "bf16"}[s["dtype"]]
            entry["modes"][mode] = {
                "file": f"{stem}.mlir", "data": f"{stem}.npz",
                "mlir_bytes": (out_dir / f"{stem}.mlir").stat().st_size,
                "npz_bytes": (out_dir / f"{stem}.npz").stat().st_size,
                "signature": af.signature(r["text"]),
                "args": [{"name": f"arg{i}", "shape": list(a.shape), "dtype": d}
                         for i, (a, d) in enumerate(zip(r["args"], f["arg_dtypes"]))],
                "outputs": [{"name": f"ref{i}/frontend{i}", "shape": list(x.shape), "dtype": d}
                            for i, (x, d) in enumerate(zip(r["refs"], f["output_dtypes"]))],
                "export_options": {"importer": "torch_mlir.fx.export_and_import",
                                   "output_type": "LINALG_ON_TENSORS", "func_name": "main",
                                   "dynamic_shapes": None, "attn_implementation": s["attn"],
                                   "experts_implementation": s["experts"],
                                   "batch": s["batch"], "position_offsets": s["offsets"],
                                   "tokens": s["seq"] if mode == "prefill" else 1,
                                   "past": None if mode == "prefill" else s["past"],
                                   "wrapper": "ModelPrefill" if mode == "prefill" else "ModelDecode (DynamicCache)",
                                   "patches": patches + f["graph_rewrites"]},
                "logits_result": f["logits_result"],
                "leading_results": f["leading_results"],
                # torch's own error vs float64, named by the dtype torch ran in (torch_f32_err, torch_bf16_err).
                f"torch_{short}_err": float(f"{f['torch_err']:.3g}"),
                f"torch_{short}_err_outputs": [float(f"{x:.3g}") for x in f["torch_err_outputs"]],
                "export_s": f["export_s"],
                "ir_caveats": ir_caveats(r["text"]),
            }
            if s["dtype"] != "float32":
                entry["modes"][mode]["frontend_dtype"] = s["dtype"]
            if mode == "decode":
                entry["modes"][mode]["cache_shapes"] = f["cache_shapes"]
                entry["modes"][mode]["decode_vs_prefill_f64"] = float(f"{f['decode_vs_prefill_f64']:.3g}")
            print(f"   {entry['modes'][mode]['mlir_bytes'] / 1e3:.0f} KB, torch {short} err {f['torch_err']:.2e}"
                  + (f", decode vs prefill (f64) {f['decode_vs_prefill_f64']:.1e}" if mode == "decode" else ""),
                  flush=True)
        entries[name] = entry
    order = list(MODELS)
    total = sum(p.stat().st_size for p in out_dir.iterdir() if p.is_file() and p.name != "manifest.json")
    manifest = {
        "generated_by": "scripts/gen-model-zoo.py (see its header: environment, command line, patches)",
        "versions": vers,
        "common_config": COMMON,
        "seed": SEED,
        "budget": {"max_mlir_bytes": MAX_MLIR_BYTES, "max_zoo_bytes": MAX_ZOO_BYTES, "zoo_bytes": total},
        "error_measure": "max|y - ref| / max|ref| over the logits (ref: float64 run of the same modeling code)",
        "models": [entries[n] for n in order if n in entries and entries[n].get("modes")]
        + [e for n, e in entries.items() if n not in MODELS and e.get("modes")],   # ONNX/JAX members, kept
        "blocked": [blocked[k] for k in sorted(blocked, key=lambda k: (order.index(k[0]) if k[0] in order else 99,
                                                                       k[1]))],
    }
    text = af.dump_json(manifest)
    assert json.loads(text) == manifest
    manifest_path.write_text(text + "\n")
    print(f"wrote {out_dir} ({total / 1e6:.1f} MB); {len(manifest['models'])} models, "
          f"{len(manifest['blocked'])} blocked (model, mode)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
