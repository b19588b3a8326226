#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Regenerate the attention fixtures (test/Frontends/Inputs/attention/): attention as real frontends emit it in
linalg-on-tensors IR, from the libraries' own code (transformers' Llama attention pieces, torch SDPA, JAX einsum
attention, ONNX Attention and its MatMul/Softmax decomposition), with inputs, float64 references and the
frontends' own f32 outputs. They are what the attention raising and its tests read. Not run in CI (it needs the
peers' environment); the fixtures it writes are committed.

Environment, frontends and helpers: as scripts/gen-frontend-fixtures.py (its header says how to make the peers'
environment and how each frontend's IR is obtained); this script loads that one by file path and reuses its
float64_mode, make_buffers_persistent, torch_fixture, check_dialects, iree_run and versions.

Command line (from the repository root; about a minute on a 2-core machine):

    /work/peers/bin/python scripts/gen-attention-fixtures.py              # every fixture, then the checks
    /work/peers/bin/python scripts/gen-attention-fixtures.py jax_attention   # only these (manifest merged)
    options: --out DIR (default test/Frontends/Inputs/attention), --no-iree-check, --list

What it writes, per fixture NAME, into test/Frontends/Inputs/attention/:
  NAME.mlir   the frontend's IR unchanged: one public func @main, tensors in and out;
  NAME.npz    arg0..argN   the exact inputs of @main (f32 data, i64 positions, f32 additive or i1 masks);
              ref0         the float64 output: for torch the same model code run in float64 (float64_mode: the
                           rotary embedding's inv_freq, cos/sin and the softmax's dtype=torch.float32 mean
                           float64), for JAX the same function under jax x64, for ONNX the numpy reference below;
              frontend0    the frontend's own f32 output (torch eager, jax.jit on CPU, onnxruntime);
and manifest.json: per fixture its source, frontend, func, argument shapes/dtypes and `expect`, what attention
the IR computes (see `attn_expect()`); "blocked" lists fixtures that could not be produced, with the exact error.

Shapes: B=2, Hq=4, Hkv=2 (GQA, 2 query heads per kv head), S=8, D=16 (scale 1/sqrt(16) = 0.25), unless the
form needs otherwise (decode: Sq=1 against a 16-key cache; no GQA where the form has none).

Checks (the script exits non-zero when one fails): every .mlir parses with /usr/lib/llvm-22/bin/mlir-opt, uses
only upstream dialects and has one func @main; `attention_reference()` (numpy float64, written here from the
manifest's `expect` alone: RoPE by rope_mlir.reference.apply, softmax(scale q k^T + mask) v with kv head
h // (Hq/Hkv)) equals ref0 within 1e-9 relative, so the manifest says what the IR computes; the frontend's f32
output equals ref0 within 1e-5 relative (max|y - r| / max|r|); and, unless --no-iree-check, the fixture .mlir
compiled by IREE (llvm-cpu, local-sync) reproduces the frontend output within 1e-5 relative.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import pathlib
import re
import subprocess
import sys
import tempfile
import traceback
from typing import Any, Callable, Dict, List, Optional, Sequence

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]


def _load_frontend_script():
    spec = importlib.util.spec_from_file_location("gen_frontend_fixtures",
                                                  ROOT / "scripts" / "gen-frontend-fixtures.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


ff = _load_frontend_script()
reference = ff.reference          # rope_mlir.reference, loaded by file path
Fixture = ff.Fixture

DEFAULT_OUT = ROOT / "test" / "Frontends" / "Inputs" / "attention"
B, HQ, HKV, S, D = 2, 4, 2, 8, 16
SCALE = D ** -0.5                 # 0.25, exact in f32 (and its square root 0.5)
SK_DECODE = 16                    # decode: a 16-key cache
DECODE_POS = np.array([[5], [12]], dtype=np.int64)     # per-row query position p_b (Sq = 1)
POSITIONS = ff.POSITIONS          # prefill RoPE positions [B, S]: row 0 from 0, row 1 from 5
FRONTEND_TOL = 1e-5
SELF_TOL = 1e-9
F32_MIN = float(np.finfo(np.float32).min)
MAXTEXT_MASK_VALUE = -0.7 * float(np.finfo(np.float32).max)      # MaxText's DEFAULT_MASK_VALUE
rng, randn = ff.rng, ff.randn


# -- what the IR computes -------------------------------------------------------------------------------------
def attn_expect(*, q: dict, k: dict, v: dict, layout: str, hq: int, hkv: int, d: int, sq: int, sk: int,
                mask: dict, output_layout: str, dv: Optional[int] = None, scale: float = SCALE,
                rope: Optional[dict] = None, ir: Optional[dict] = None,
                sliding_window: Optional[int] = None, softcap: Optional[float] = None, note: str = "") -> dict:
    """The attention the fixture's @main computes, one output:
    q, k, v         {"arg": i} (the func argument used as is) or {"arg": i, "rotated": true} (RoPE applied in
                    the function to arg i first, per `rope`);
    layout          of the q/k/v arguments: "bhsd" ([B, H, S, D], HF/torch) or "bshd" ([B, S, H, D], JAX);
    output_layout   of the result, the same spelling ("bshd" for HF's attn_output.transpose(1, 2));
    Hq, Hkv         query and key/value heads: query head h reads kv head h // (Hq / Hkv) (repeat_kv order);
    D, Dv, Sq, Sk   head dims of q/k and v, query and key lengths; scale the factor on q k^T (float);
    mask            {"kind": "none"} | {"kind": "causal", "masked_value": v} (bottom-right aligned: key j
                    visible to query i iff j <= i + Sk - Sq; masked scores replaced by v, "-inf" or a finite
                    number, which is then not exactly a mask: recorded) | {"kind": "tensor", "arg": i, "type":
                    "additive" (scores + arg) or "boolean" (true = attend; masked = -inf), "shape": [...],
                    "pattern": what the committed values are} | {"kind": "positions", "arg": i} (key j
                    visible iff j <= the query's position);
    sliding_window, softcap   null when absent;
    rope            null, or {"layout": "half", "base": b, "freqs": ..., "rotary_dim": P, "token_dims": [0, 2],
                    "positions": {"q": {"kind": "explicit", "arg": i} | {"kind": "implicit"} (index along S)
                    , "k": ...}} for the rotated operands (rope_mlir.reference.apply's parameters);
    ir              how the IR spells each piece (gqa, scores, scale, mask, softmax, pv, output), as the
                    recorded library versions emit it: information for the raiser, not checked here.
    """
    e = {"q": q, "k": k, "v": v, "layout": layout, "output_layout": output_layout, "B": B, "Hq": hq, "Hkv": hkv,
         "D": d, "Dv": dv if dv is not None else d, "Sq": sq, "Sk": sk, "scale": float(scale), "mask": mask,
         "sliding_window": sliding_window, "softcap": softcap, "rope": rope}
    if ir:
        e["ir"] = ir
    if note:
        e["note"] = note
    return e


# How torch-mlir (LINALG_ON_TENSORS) spells the pieces; "B*H" is the collapsed batch of the batch_matmuls.
TM_REPEAT_KV = ("repeat_kv: linalg.generic broadcast [B, Hkv, S, D] -> [B, Hkv, 2, S, D] (input map (d0, d1, d3, "
                "d4)); k: tensor.collapse_shape [[0], [1, 2], [3], [4]] to [B, Hq, S, D]; v: collapsed straight to "
                "the P.V batch_matmul operand [B*Hq, S, D] ([[0, 1, 2], [3], [4]]). Query head h reads kv head h // 2")
TM_SCORES = ("linalg.transpose k [0, 1, 3, 2] -> [B, H, D, Sk]; collapse_shape q and k^T [[0, 1], [2], [3]]; "
             "linalg.fill 0 + linalg.batch_matmul [B*H, Sq, D] x [B*H, D, Sk]; expand_shape to [B, H, Sq, Sk]")
TM_SOFTMAX = ("max: one linalg.generic reduction with two results (maximumf, init -inf; and the argmax index i64 "
              "via linalg.index/cmpf ogt/select: aten.max.dim's indices, unused); subf with the max broadcast "
              "(map (d0, d1, d2, 0)); math.exp; sum: reduction into [B, H, Sq, 1] (init 0); divf")
TM_SDPA_GUARD = ("then the fully-masked-row guard: generic extf(masked scores) to f64, cmpf oeq with -inf (f64) -> "
                 "i1; andi reduction over keys (init true) -> [B, H, Sq, 1]; select(all masked, dense<0> [B, H, Sq, "
                 "Sk], softmax)")
TM_SDPA_SCALE = ("sqrt(scale) = 0.5 twice: generic mulf 0.5 on q [B, H, Sq, D] and on k^T [B, H, D, Sk] (after the "
                 "transpose), before the batch_matmul; no scale on the scores")
TM_PV = ("collapse_shape P [[0, 1], [2], [3]] and v; linalg.fill 0 + linalg.batch_matmul [B*H, Sq, Sk] x [B*H, Sk, "
         "Dv]; expand_shape to [B, H, Sq, Dv]")


def rope_entry(rotary, base: float, positions: dict) -> dict:
    fr = ff.freqs_entry(ff.hf_inv_freq(rotary), base)
    return {"layout": "half", "base": float(base), "rotary_dim": D, "head_dim": D, "token_dims": [0, 2],
            "freqs": fr, "magnitude": 1.0, "cos_sin": "computed", "positions": positions,
            "form": "transformers LlamaRotaryEmbedding (position_ids[..., None].float() * inv_freq, cat(f, f), "
                    "cos/sin) + apply_rotary_pos_emb (q * cos + rotate_half(q) * sin)"}


def to_bhsd(x: np.ndarray, layout: str) -> np.ndarray:
    return x if layout == "bhsd" else x.transpose(0, 2, 1, 3)


def attention_reference(args: List[np.ndarray], e: dict) -> np.ndarray:
    """float64 attention from the manifest's `expect` alone (independent of the frontends' code)."""
    ops = {}
    for name in ("q", "k", "v"):
        spec = e[name]
        x = to_bhsd(args[spec["arg"]].astype(np.float64), e["layout"])
        if spec.get("rotated"):
            r = e["rope"]
            pos = r["positions"][name]
            kw = dict(layout=r["layout"], rotary_dim=r["rotary_dim"], base=r["base"], token_dims=[0, 2])
            if pos["kind"] == "explicit":
                kw["positions"] = args[pos["arg"]].astype(np.int64)
            x = reference.apply(x, **kw)          # [B, H, S, D], token dims B and S
        ops[name] = x
    q, k, v = ops["q"], ops["k"], ops["v"]
    hq, hkv = e["Hq"], e["Hkv"]
    assert q.shape[1] == hq and k.shape[1] == hkv and v.shape[1] == hkv and hq % hkv == 0
    kv_head = np.arange(hq) // (hq // hkv)
    k, v = k[:, kv_head], v[:, kv_head]
    s = np.einsum("bhqd,bhkd->bhqk", q, k) * e["scale"]
    if e.get("softcap"):
        s = e["softcap"] * np.tanh(s / e["softcap"])
    m = e["mask"]
    sq, sk = e["Sq"], e["Sk"]
    if m["kind"] == "causal":
        visible = np.arange(sk)[None, :] <= np.arange(sq)[:, None] + sk - sq
        mv = -np.inf if m["masked_value"] == "-inf" else float(m["masked_value"])
        s = np.where(visible, s, mv)
    elif m["kind"] == "tensor":
        t = args[m["arg"]]
        s = s + t.astype(np.float64) if m["type"] == "additive" else np.where(t.astype(bool), s, -np.inf)
    elif m["kind"] == "positions":
        pos = args[m["arg"]].astype(np.int64)          # [B, Sq]
        s = np.where(np.arange(sk)[None, None, None, :] <= pos[:, None, :, None], s, -np.inf)
    elif m["kind"] != "none":
        raise ValueError(f"mask kind {m['kind']}")
    if e.get("sliding_window"):
        raise NotImplementedError("sliding window")
    s = s - s.max(axis=-1, keepdims=True)
    p = np.exp(s)
    p = p / p.sum(axis=-1, keepdims=True)
    o = np.einsum("bhqk,bhkd->bhqd", p, v)
    return to_bhsd(o, e["output_layout"])


# -- torch / transformers -------------------------------------------------------------------------------------
def llama_config():
    from transformers import LlamaConfig
    return LlamaConfig(hidden_size=HQ * D, num_attention_heads=HQ, num_key_value_heads=HKV, head_dim=D,
                       max_position_embeddings=64, num_hidden_layers=1, intermediate_size=64, vocab_size=32)


def llama_attention_class(attention: Callable, cfg, mask_arg: bool):
    """The attention lines of transformers' LlamaAttention.forward after the q/k/v projections: the model's
    rotary embedding (computed from position_ids, as LlamaModel does), apply_rotary_pos_emb, and the attention
    interface called as LlamaAttention calls it. Attributes the interface reads are LlamaAttention's."""
    import torch
    ml = ff.hf("llama")

    class LlamaAttentionCore(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.rotary_emb = ml.LlamaRotaryEmbedding(cfg)
            self.config = cfg
            self.head_dim = D
            self.num_key_value_groups = cfg.num_attention_heads // cfg.num_key_value_heads
            self.scaling = self.head_dim ** -0.5
            self.attention_dropout = cfg.attention_dropout
            self.is_causal = True

        def attend(self, q, k, v, position_ids, attention_mask):
            cos, sin = self.rotary_emb(v, position_ids)
            q, k = ml.apply_rotary_pos_emb(q, k, cos, sin)
            out, _ = attention(self, q, k, v, attention_mask, dropout=0.0, scaling=self.scaling)
            return out

    if mask_arg:
        class WithMask(LlamaAttentionCore):
            def forward(self, q, k, v, position_ids, attention_mask):
                return self.attend(q, k, v, position_ids, attention_mask)
        return WithMask

    class NoMask(LlamaAttentionCore):
        def forward(self, q, k, v, position_ids):
            return self.attend(q, k, v, position_ids, None)
    return NoMask


def hf_eager_mask(q_length: int, kv_length: int, q_offset: int = 0, padding=None) -> np.ndarray:
    """The 4-D float mask transformers builds for eager attention (masking_utils.eager_mask: 0 where attended,
    finfo(f32).min elsewhere), [B, 1, q_length, kv_length]."""
    import torch
    from transformers import masking_utils
    pad = None if padding is None else torch.from_numpy(padding)
    m = masking_utils.eager_mask(batch_size=B, q_length=q_length, kv_length=kv_length, q_offset=q_offset,
                                 attention_mask=pad, dtype=torch.float32)
    return m.numpy().copy()


def fx_hf_llama(name: str, attention_kind: str, mask_arg: bool) -> Fixture:
    ml = ff.hf("llama")
    cfg = llama_config()
    if attention_kind == "eager":
        attention, src = ml.eager_attention_forward, "eager_attention_forward"
    else:
        from transformers.integrations.sdpa_attention import sdpa_attention_forward as attention
        src = "transformers.integrations.sdpa_attention.sdpa_attention_forward"
    Module = llama_attention_class(attention, cfg, mask_arg)
    g = rng(name)
    args = [randn(g, B, HQ, S, D), randn(g, B, HKV, S, D), randn(g, B, HKV, S, D), POSITIONS.copy()]
    if mask_arg:
        mask = hf_eager_mask(S, S)
        assert np.array_equal(mask, np.where(np.tril(np.ones((S, S), bool)), 0.0, F32_MIN)
                              .astype(np.float32)[None, None].repeat(B, 0))
        args.append(mask)
        mk = {"kind": "tensor", "arg": 4, "type": "additive", "shape": list(mask.shape),
              "pattern": "causal (HF masking_utils.eager_mask: 0 where key j <= query i, finfo(f32).min = "
                         f"{F32_MIN!r} elsewhere; a finite value, exp underflows to exactly 0)"}
    elif attention_kind == "eager":
        mk = {"kind": "none"}
    else:
        mk = {"kind": "causal", "masked_value": "-inf", "alignment": "top-left in torch (j <= i); Sq = Sk here"}
    rope = rope_entry(Module().rotary_emb, cfg.rope_parameters["rope_theta"],
                      {"q": ff.explicit(3), "k": ff.explicit(3)})
    rope_ir = ("q and k rotated first (rotate_half: extract_slice halves, negf, tensor.concat; cos/sin from "
               "sitofp(position_ids) * inv_freq dense_resource, concat, math.cos/sin)")
    if attention_kind == "eager":
        ir = {"rope": rope_ir, "gqa": TM_REPEAT_KV, "scores": TM_SCORES,
              "scale": "generic mulf by arith.constant 2.5e-01 on the scores [B, Hq, Sq, Sk]",
              "mask": ("generic addf scores + arg4 (map (d0, 0, d2, d3)), after the scale" if mask_arg else
                       "none"),
              "softmax": TM_SOFTMAX + "; softmax(dtype=torch.float32) on f32 data: no casts, no guard",
              "pv": TM_PV, "output": "linalg.transpose [0, 2, 1, 3] -> [B, Sq, Hq, Dv] (HF attn_output)"}
    else:
        ir = {"rope": rope_ir,
              "gqa": ("sdpa_attention_forward passes enable_gqa=True (no mask, D <= 256); torch-mlir's decomposition "
                      "spells it exactly as " + TM_REPEAT_KV),
              "scores": TM_SCORES, "scale": TM_SDPA_SCALE,
              "mask": ("is_causal: iota [S] i64 (linalg.index), kv_idx [1, S] - q_idx [S, 1] (subi), cmpi sle 0, "
                       "andi dense<true>, select(0, -inf) -> [Sq, Sk] f32 added to the scores (map (d2, d3)); "
                       "torch's is_causal is top-left aligned (j <= i), the same as bottom-right here (Sq = Sk)"),
              "softmax": TM_SOFTMAX + "; " + TM_SDPA_GUARD,
              "pv": TM_PV, "output": "linalg.transpose [0, 2, 1, 3] -> [B, Sq, Hq, Dv] (HF attn_output)"}
    e = attn_expect(q={"arg": 0, "rotated": True}, k={"arg": 1, "rotated": True}, v={"arg": 2}, layout="bhsd",
                    output_layout="bshd", hq=HQ, hkv=HKV, d=D, sq=S, sk=S, mask=mk, rope=rope, ir=ir)
    fx = ff.torch_fixture(
        name, Module, args,
        f"transformers.models.llama.modeling_llama: LlamaRotaryEmbedding + apply_rotary_pos_emb + {src} "
        "(the lines of LlamaAttention.forward after the q/k/v projections)", [e],
        config={"rope_parameters": dict(cfg.rope_parameters), "num_key_value_groups": HQ // HKV,
                "scaling": D ** -0.5, "attn_implementation": attention_kind})
    return fx


def fx_hf_llama_eager():
    return fx_hf_llama("hf_llama_eager", "eager", True)


def fx_hf_llama_eager_nomask():
    return fx_hf_llama("hf_llama_eager_nomask", "eager", False)


def fx_hf_llama_sdpa():
    return fx_hf_llama("hf_llama_sdpa", "sdpa", False)


def fx_hf_llama_decode():
    """Decode step: one query per row at position p_b against an un-rotated 16-key cache rotated in the
    function at positions 0..15 (a serving stack that caches pre-RoPE keys), HF eager attention with the 4-D
    additive mask transformers builds (keys j > p_b masked), GQA."""
    import torch
    ml = ff.hf("llama")
    cfg = llama_config()

    class LlamaDecode(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.rotary_emb = ml.LlamaRotaryEmbedding(cfg)
            self.config = cfg
            self.head_dim = D
            self.num_key_value_groups = cfg.num_attention_heads // cfg.num_key_value_heads
            self.scaling = self.head_dim ** -0.5
            self.attention_dropout = cfg.attention_dropout
            self.is_causal = True

        def forward(self, q, k_cache, v_cache, position_ids, attention_mask):
            cos_q, sin_q = self.rotary_emb(v_cache, position_ids)
            key_positions = torch.arange(k_cache.shape[2]).unsqueeze(0).expand(k_cache.shape[0], -1)
            cos_k, sin_k = self.rotary_emb(v_cache, key_positions)
            q, _ = ml.apply_rotary_pos_emb(q, q, cos_q, sin_q)
            _, k = ml.apply_rotary_pos_emb(k_cache, k_cache, cos_k, sin_k)
            out, _ = ml.eager_attention_forward(self, q, k, v_cache, attention_mask, dropout=0.0,
                                                scaling=self.scaling)
            return out

    g = rng("hf_llama_decode")
    # HF's decode mask for rows at different positions: a 2-D padding mask (keys <= p_b) and causal at the
    # largest position, as generate() builds it for left-padded rows sharing one cache position.
    padding = (np.arange(SK_DECODE)[None, :] <= DECODE_POS).astype(bool)
    mask = hf_eager_mask(1, SK_DECODE, q_offset=int(DECODE_POS.max()), padding=padding)
    assert np.array_equal(mask, np.where(padding, 0.0, F32_MIN).astype(np.float32)[:, None, None, :])
    args = [randn(g, B, HQ, 1, D), randn(g, B, HKV, SK_DECODE, D), randn(g, B, HKV, SK_DECODE, D),
            DECODE_POS.copy(), mask]
    rope = rope_entry(LlamaDecode().rotary_emb, cfg.rope_parameters["rope_theta"],
                      {"q": ff.explicit(3), "k": {"kind": "implicit", "note": "torch.arange(16) in the function"}})
    mk = {"kind": "tensor", "arg": 4, "type": "additive", "shape": list(mask.shape),
          "pattern": f"key j masked iff j > p_b (arg 3): 0 / finfo(f32).min = {F32_MIN!r} (masking_utils."
                     "eager_mask with a 2-D padding mask); equivalent to {'kind': 'positions', 'arg': 3}",
          "equivalent": {"kind": "positions", "arg": 3}}
    e = attn_expect(q={"arg": 0, "rotated": True}, k={"arg": 1, "rotated": True}, v={"arg": 2}, layout="bhsd",
                    output_layout="bshd", hq=HQ, hkv=HKV, d=D, sq=1, sk=SK_DECODE, mask=mk, rope=rope,
                    ir={"rope": "q rotated at position_ids (arg3); the cache keys at iota: linalg.generic "
                                "linalg.index 0 -> [16] i64, broadcast to [B, 16], sitofp, * inv_freq, concat, "
                                "math.cos/sin; rotate_half as in hf_llama_eager",
                        "gqa": TM_REPEAT_KV, "scores": TM_SCORES + " (Sq = 1: [B*Hq, 1, D] x [B*Hq, D, 16])",
                        "scale": "generic mulf by arith.constant 2.5e-01 on the scores",
                        "mask": "generic addf scores + arg4 [B, 1, 1, 16] (map (d0, 0, d2, d3))",
                        "softmax": TM_SOFTMAX + "; no guard", "pv": TM_PV,
                        "output": "linalg.transpose [0, 2, 1, 3] -> [B, 1, Hq, Dv]"})
    return ff.torch_fixture(
        "hf_llama_decode", LlamaDecode, args,
        "transformers.models.llama.modeling_llama: LlamaRotaryEmbedding + apply_rotary_pos_emb (query at "
        "position_ids; cached keys at arange(16)) + eager_attention_forward; mask from masking_utils.eager_mask",
        [e], config={"rope_parameters": dict(cfg.rope_parameters), "cache_length": SK_DECODE,
                     "query_positions": DECODE_POS.reshape(-1).tolist()},
        notes="apply_rotary_pos_emb is called once for q (at position_ids) and once for the cache keys (at "
              "0..15), each with the other output unused (dropped by the exporter).")


def fx_torch_sdpa_mask():
    import torch
    h = HQ

    class Sdpa(torch.nn.Module):
        def forward(self, q, k, v, attn_mask):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask)

    g = rng("torch_sdpa_mask")
    args = [randn(g, B, h, S, D), randn(g, B, h, S, D), randn(g, B, h, S, D)]
    mask = g.random((B, 1, S, S)) < 0.6
    mask[:, :, np.arange(S), np.arange(S)] = True          # every query sees at least itself
    args.append(mask)
    e = attn_expect(q={"arg": 0}, k={"arg": 1}, v={"arg": 2}, layout="bhsd", output_layout="bhsd", hq=h, hkv=h,
                    d=D, sq=S, sk=S,
                    mask={"kind": "tensor", "arg": 3, "type": "boolean", "shape": list(mask.shape),
                          "pattern": "random (p = 0.6 attend), diagonal always true"},
                    ir={"gqa": "none (Hq = Hkv = 4)", "scores": TM_SCORES, "scale": TM_SDPA_SCALE,
                        "mask": ("generic select(arg3, 0, -inf) -> [B, 1, Sq, Sk] f32 (the boolean mask made "
                                 "additive), then addf to the scores (map (d0, 0, d2, d3))"),
                        "softmax": TM_SOFTMAX + "; " + TM_SDPA_GUARD, "pv": TM_PV,
                        "output": "the expand_shape [B, H, Sq, Dv] itself"})
    return ff.torch_fixture("torch_sdpa_mask", Sdpa, args,
                            "torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=bool mask), "
                            "default scale 1/sqrt(D)", [e])


# -- JAX ------------------------------------------------------------------------------------------------------
def fx_jax_attention():
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_platforms", "cpu")

    def attention(q, k, v):
        """MaxText-style dot-product attention, [B, S, H, D]: kv heads repeated (jnp.repeat along heads), scores
        by einsum, scaled, causal mask by jnp.tril + jnp.where with MaxText's DEFAULT_MASK_VALUE, softmax,
        einsum with v."""
        groups = q.shape[2] // k.shape[2]
        k = jnp.repeat(k, groups, axis=2)
        v = jnp.repeat(v, groups, axis=2)
        scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) * (q.shape[-1] ** -0.5)
        causal = jnp.tril(jnp.ones((q.shape[1], k.shape[1]), dtype=jnp.bool_))
        scores = jnp.where(causal[None, None], scores, MAXTEXT_MASK_VALUE)
        weights = jax.nn.softmax(scores, axis=-1)
        return jnp.einsum("bhqk,bkhd->bqhd", weights, v)

    g = rng("jax_attention")
    args = [randn(g, B, S, HQ, D), randn(g, B, S, HKV, D), randn(g, B, S, HKV, D)]
    stablehlo = jax.jit(attention).lower(*args).as_text()
    outs = [np.asarray(jax.jit(attention)(*args))]
    with jax.enable_x64(True):
        a64 = [jnp.asarray(a.astype(np.float64)) for a in args]
        refs = [np.asarray(attention(*a64), dtype=np.float64)]
    assert refs[0].dtype == np.float64
    with tempfile.TemporaryDirectory() as tmp:
        src = pathlib.Path(tmp) / "in.stablehlo.mlir"
        src.write_text(stablehlo)
        text = subprocess.run([str(ff.BIN / "iree-opt"),
                               "--pass-pipeline=builtin.module(iree-stablehlo-to-iree-input)", str(src)],
                              check=True, capture_output=True, text=True).stdout
    e = attn_expect(q={"arg": 0}, k={"arg": 1}, v={"arg": 2}, layout="bshd", output_layout="bshd", hq=HQ,
                    hkv=HKV, d=D, sq=S, sk=S,
                    mask={"kind": "causal", "masked_value": float(np.float32(MAXTEXT_MASK_VALUE)),
                          "note": "finite: MaxText's DEFAULT_MASK_VALUE = -0.7 * finfo(f32).max (the IR's f32 "
                                  "constant -2.38197633E+38 here), selected "
                                  "(jnp.where), not added; not exactly a mask in general (exp underflows to 0 "
                                  "here because no row is fully masked)"},
                    ir={"note": "two private funcs besides @main (@tril, @_where: JAX's jitted helpers), called "
                                "from @main: inline them first",
                        "gqa": ("jnp.repeat: linalg.generic broadcast [B, S, Hkv, D] -> [B, S, Hkv, 2, D] (input map "
                                "(d0, d1, d2, d4)) + collapse_shape [[0], [1], [2, 3], [4]] -> [B, S, Hq, D], for k "
                                "and v. Query head h reads kv head h // 2"),
                        "scores": ("one linalg.generic contraction, 5 loops (b, h, i, j, d), d reduction: q map "
                                   "(d0, d2, d1, d4), k map (d0, d3, d1, d4), out (d0, d1, d2, d3) = [B, H, Sq, Sk], "
                                   "init linalg.fill 0; body mulf + addf(out, prod)"),
                        "scale": "generic mulf by arith.constant 2.5e-01 on the scores",
                        "mask": ("call @tril(dense<true> 8x8): iota i32 row and column generics (linalg.index 0 "
                                 "/ 1), cmpi sge row col, select(c, arg, false); broadcast to [1, 1, 8, 8]; call "
                                 "@_where(mask, scores, dense<-2.38197633E+38>): both broadcast to [B, H, Sq, Sk], "
                                 "select(mask, score, -2.38e38)"),
                        "softmax": ("max reduction (maximumf(out, in), init -inf) -> [B, H, Sq]; an identity copy "
                                    "generic; broadcast generic to [B, H, Sq, Sk]; subf; math.exp; sum reduction "
                                    "(init 0) -> [B, H, Sq]; broadcast generic; divf. No guard"),
                        "pv": ("one linalg.generic contraction, 5 loops: v map (d0, d4, d1, d2), P map (d0, d1, d3, "
                               "d4), out (d0, d1, d2, d3) = [B, H, Dv, Sq] (init fill 0)"),
                        "output": "a transpose generic, input map (d0, d2, d3, d1) -> [B, Sq, H, Dv]"})
    return Fixture("jax_attention", "jax.jit -> StableHLO -> iree-opt iree-stablehlo-to-iree-input",
                   "JAX/MaxText-style einsum attention written here (jnp.repeat GQA, einsum bqhd,bkhd->bhqk, "
                   "scale, jnp.tril/jnp.where causal mask, jax.nn.softmax, einsum bhqk,bkhd->bqhd)",
                   text, args, refs, outs, [e], notes="ref0: the same function under jax x64 (float64).",
                   config={"mask_value": MAXTEXT_MASK_VALUE})


# -- ONNX -----------------------------------------------------------------------------------------------------
def onnx_to_linalg(model, feeds: Dict[str, np.ndarray]):
    """Save, run with onnxruntime, import with iree-import-onnx and lower to linalg."""
    import onnx
    import onnxruntime as ort
    onnx.checker.check_model(model, full_check=True)
    pipeline = ("--pass-pipeline=builtin.module(torch-onnx-to-torch-backend-pipeline,"
                "torch-backend-to-linalg-on-tensors-backend-pipeline)")
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "m.onnx"
        onnx.save(model, str(path))
        sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        outs = [np.asarray(o) for o in sess.run(None, feeds)]

        def lower(importer: str, opt: str) -> subprocess.CompletedProcess:
            torch_onnx = pathlib.Path(tmp) / "m.torch_onnx.mlir"
            r = subprocess.run([str(ff.BIN / importer), str(path), "-o", str(torch_onnx)], capture_output=True,
                               text=True)
            if r.returncode == 0:
                r = subprocess.run([str(ff.BIN / opt), pipeline, str(torch_onnx)], capture_output=True, text=True)
            r.stderr = r.stderr.replace(tmp, "<tmp>").strip()       # regeneration stays byte-identical
            return r

        r = lower("iree-import-onnx", "iree-opt")
        if r.returncode != 0:
            # Say whether torch-mlir's own tools (the pass pipeline's origin) fail the same way.
            t = lower("torch-mlir-import-onnx", "torch-mlir-opt")
            same = "the same" if t.stderr.splitlines()[:1] == r.stderr.splitlines()[:1] else "differently"
            raise RuntimeError(f"iree-import-onnx + iree-opt {pipeline} failed: {r.stderr}\n[torch-mlir-import-"
                               f"onnx + torch-mlir-opt {ff.versions()['torch-mlir']} with the same pipeline fail "
                               f"{same}{'' if same == 'the same' else ': ' + t.stderr}]")
    return r.stdout, outs


ONNX_FRONTEND = ("onnx.helper graph -> iree-import-onnx -> iree-opt torch-onnx-to-torch-backend-pipeline,"
                 "torch-backend-to-linalg-on-tensors-backend-pipeline")


def fx_onnx_attention():
    from onnx import TensorProto, helper
    vi = helper.make_tensor_value_info
    node = helper.make_node("Attention", ["Q", "K", "V"], ["Y"], is_causal=1)
    graph = helper.make_graph(
        [node], "main",
        [vi("Q", TensorProto.FLOAT, [B, HQ, S, D]), vi("K", TensorProto.FLOAT, [B, HKV, S, D]),
         vi("V", TensorProto.FLOAT, [B, HKV, S, D])],
        [vi("Y", TensorProto.FLOAT, [B, HQ, S, D])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    model.ir_version = 10
    g = rng("onnx_attention")
    args = [randn(g, B, HQ, S, D), randn(g, B, HKV, S, D), randn(g, B, HKV, S, D)]
    e = attn_expect(q={"arg": 0}, k={"arg": 1}, v={"arg": 2}, layout="bhsd", output_layout="bhsd", hq=HQ,
                    hkv=HKV, d=D, sq=S, sk=S, mask={"kind": "causal", "masked_value": "-inf"},
                    ir={"gqa": "4-D inputs: heads from the shapes (q_num_heads/kv_num_heads are for 3-D inputs "
                               "only)"})
    text, outs = onnx_to_linalg(model, {"Q": args[0], "K": args[1], "V": args[2]})
    return Fixture("onnx_attention", ONNX_FRONTEND, "ONNX opset-23 Attention node (4-D q/k/v, is_causal=1, GQA by "
                   "head counts), graph built here", text, args, [attention_reference(args, e)], outs, [e],
                   notes="ref0: attention_reference (numpy float64).")


def fx_onnx_decomposed():
    from onnx import TensorProto, helper, numpy_helper
    h = HQ
    vi = helper.make_tensor_value_info
    nodes = [helper.make_node("Transpose", ["K"], ["Kt"], perm=[0, 1, 3, 2]),
             helper.make_node("MatMul", ["Q", "Kt"], ["scores"]),
             helper.make_node("Mul", ["scores", "scale"], ["scaled"]),
             helper.make_node("Add", ["scaled", "mask"], ["masked"]),
             helper.make_node("Softmax", ["masked"], ["probs"], axis=-1),
             helper.make_node("MatMul", ["probs", "V"], ["Y"])]
    graph = helper.make_graph(
        nodes, "main",
        [vi("Q", TensorProto.FLOAT, [B, h, S, D]), vi("K", TensorProto.FLOAT, [B, h, S, D]),
         vi("V", TensorProto.FLOAT, [B, h, S, D]), vi("mask", TensorProto.FLOAT, [B, 1, S, S])],
        [vi("Y", TensorProto.FLOAT, [B, h, S, D])],
        [numpy_helper.from_array(np.array(SCALE, np.float32), "scale")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    g = rng("onnx_decomposed")
    mask = np.where(np.tril(np.ones((S, S), bool)), 0.0, F32_MIN).astype(np.float32)[None, None].repeat(B, 0)
    args = [randn(g, B, h, S, D), randn(g, B, h, S, D), randn(g, B, h, S, D), mask]
    e = attn_expect(q={"arg": 0}, k={"arg": 1}, v={"arg": 2}, layout="bhsd", output_layout="bhsd", hq=h, hkv=h,
                    d=D, sq=S, sk=S,
                    mask={"kind": "tensor", "arg": 3, "type": "additive", "shape": list(mask.shape),
                          "pattern": f"causal, 0 / finfo(f32).min = {F32_MIN!r} (the HF exporters' form)"},
                    ir={"gqa": "none (Hq = Hkv = 4)", "scores": TM_SCORES,
                        "scale": "generic mulf by a 0-d tensor constant dense<2.5e-01> : tensor<f32> (map ())",
                        "mask": "generic addf scaled scores + arg3 [B, 1, Sq, Sk] (map (d0, 0, d2, d3))",
                        "softmax": TM_SOFTMAX + "; no guard", "pv": TM_PV,
                        "output": "the expand_shape [B, H, Sq, Dv] itself"})
    text, outs = onnx_to_linalg(model, dict(zip(["Q", "K", "V", "mask"], args)))
    return Fixture("onnx_decomposed", ONNX_FRONTEND, "ONNX opset-17 graph built here: MatMul(Q, Transpose(K)), "
                   "Mul(scale initializer), Add(mask input), Softmax(axis=-1), MatMul(V)", text, args,
                   [attention_reference(args, e)], outs, [e], notes="ref0: attention_reference (numpy float64).")


FIXTURES: Dict[str, Callable[[], Fixture]] = {
    "hf_llama_eager": fx_hf_llama_eager,
    "hf_llama_eager_nomask": fx_hf_llama_eager_nomask,
    "hf_llama_sdpa": fx_hf_llama_sdpa,
    "torch_sdpa_mask": fx_torch_sdpa_mask,
    "hf_llama_decode": fx_hf_llama_decode,
    "jax_attention": fx_jax_attention,
    "onnx_attention": fx_onnx_attention,
    "onnx_decomposed": fx_onnx_decomposed,
}


# -- checks and manifest --------------------------------------------------------------------------------------
def check(fx: Fixture, out_dir: pathlib.Path, iree_check: bool) -> List[str]:
    problems = []
    r = subprocess.run([ff.MLIR_OPT, str(out_dir / f"{fx.name}.mlir"), "-o", "/dev/null"], capture_output=True,
                       text=True)
    if r.returncode != 0:
        problems.append(f"mlir-opt does not parse it: {r.stderr.strip()[:500]}")
    bad = ff.check_dialects(fx.text)
    if bad:
        problems.append(f"non-upstream ops: {bad}")
    if len(re.findall(r"func\.func (?:public )?@", fx.text)) != 1 or "@main(" not in fx.text:
        problems.append("not exactly one func @main")
    fx.errors = {"expect_vs_ref": [], "frontend_vs_ref": [], "iree_vs_frontend": []}
    for i, (e, ref, y) in enumerate(zip(fx.expects, fx.refs, fx.frontend_outs)):
        err = ff.rel_err(attention_reference(fx.args, e), ref)
        fx.errors["expect_vs_ref"].append(err)
        if not err <= SELF_TOL:
            problems.append(f"attention_reference(expect) vs ref{i}: {err:.3g} > {SELF_TOL}")
        err = ff.rel_err(y, ref)
        fx.errors["frontend_vs_ref"].append(err)
        if not err <= FRONTEND_TOL:
            problems.append(f"frontend{i} vs ref{i}: {err:.3g} > {FRONTEND_TOL}")
    if iree_check:
        try:
            outs = ff.iree_run(fx.text, fx.args)
            for i, (y, f) in enumerate(zip(outs, fx.frontend_outs)):
                err = ff.rel_err(y, f)
                fx.errors["iree_vs_frontend"].append(err)
                if not err <= FRONTEND_TOL:
                    problems.append(f"IREE run of the fixture, output {i}, vs frontend{i}: {err:.3g}")
        except Exception as exc:  # noqa: BLE001
            problems.append(f"IREE run failed: {type(exc).__name__}: {str(exc)[:500]}")
    return problems


LIBS = {"torch-mlir fx": ["torch", "transformers", "torch-mlir"], "jax.jit": ["jax", "jaxlib", "iree-base-compiler"],
        "onnx.helper": ["onnx", "onnxruntime", "iree-base-compiler"]}


def manifest_entry(fx: Fixture, vers: Dict[str, str]) -> dict:
    key = next(k for k in LIBS if fx.frontend.startswith(k))
    assert len(fx.expects) == 1 and len(fx.refs) == 1
    return {
        "name": fx.name,
        "file": f"{fx.name}.mlir",
        "data": f"{fx.name}.npz",
        "source": fx.source,
        "library_versions": {k: vers[k] for k in LIBS[key]},
        "frontend": fx.frontend,
        "func": ff.func_signature(fx.text),
        "signature": signature(fx.text),
        "args": [{"name": f"arg{i}", "shape": list(a.shape), "dtype": str(a.dtype)} for i, a in enumerate(fx.args)],
        "outputs": [{"name": f"ref{i}/frontend{i}", "shape": list(r.shape), "dtype": "f32 (ref: f64)"}
                    for i, r in enumerate(fx.refs)],
        "config": fx.config,
        "expect": fx.expects[0],
        "notes": fx.notes,
        "checks": {k: [float(f"{v:.3g}") for v in vals] for k, vals in getattr(fx, "errors", {}).items()},
    }


def dump_json(obj: Any, level: int = 0) -> str:
    """Indented JSON with arrays of scalars on one line (gen-frontend-fixtures' dump_json compacts with a regex
    that also meets the brackets inside this manifest's strings, so it falls back to one scalar a line)."""
    pad, inner = " " * level, " " * (level + 1)
    if isinstance(obj, dict) and obj:
        items = [f"{inner}{json.dumps(k)}: {dump_json(v, level + 1)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(obj, list) and obj and any(isinstance(v, (dict, list)) for v in obj) and \
            not all(isinstance(v, list) and not any(isinstance(x, (dict, list)) for x in v) for v in obj):
        return "[\n" + ",\n".join(inner + dump_json(v, level + 1) for v in obj) + "\n" + pad + "]"
    return json.dumps(obj, separators=(", ", ": "))


def signature(text: str) -> str:
    m = re.search(r"func\.func (?:public )?@main\(([^)]*)\)\s*->\s*([^{]*?)\s*(?:attributes.*)?\{", text)
    if not m:
        return ""
    args = re.sub(r"\s*\{[^}]*\}", "", m.group(1))
    return f"({args}) -> {m.group(2).strip()}"


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help="fixtures to regenerate (default: all)")
    ap.add_argument("--out", type=pathlib.Path, default=DEFAULT_OUT)
    ap.add_argument("--no-iree-check", action="store_true", help="skip running the fixtures with IREE")
    ap.add_argument("--list", action="store_true")
    opts = ap.parse_args(argv)
    if opts.list:
        print("\n".join(FIXTURES))
        return 0
    names = opts.names or list(FIXTURES)
    unknown = [n for n in names if n not in FIXTURES]
    if unknown:
        ap.error(f"unknown fixtures {unknown}; --list shows them")
    import torch  # noqa: F401  (before anything else native; see docs FRONTENDS.md)
    out_dir = opts.out
    out_dir.mkdir(parents=True, exist_ok=True)
    manifest_path = out_dir / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    entries = {e["name"]: e for e in manifest.get("fixtures", [])}
    blocked = {b["name"]: b for b in manifest.get("blocked", [])}
    vers = ff.versions()
    failed = []
    for name in names:
        print(f"== {name}", flush=True)
        try:
            fx = FIXTURES[name]()
        except Exception as exc:  # noqa: BLE001  (an exporter/importer failure is recorded, not fatal)
            err = f"{type(exc).__name__}: {exc}"
            print(f"   BLOCKED: {err[:2000]}")
            blocked[name] = {"name": name, "error": err[:6000], "traceback_tail": traceback.format_exc()[-1500:]}
            entries.pop(name, None)
            for suffix in (".mlir", ".npz"):
                (out_dir / f"{name}{suffix}").unlink(missing_ok=True)
            continue
        blocked.pop(name, None)
        (out_dir / f"{name}.mlir").write_text(fx.text if fx.text.endswith("\n") else fx.text + "\n")
        arrays = {f"arg{i}": a for i, a in enumerate(fx.args)}
        arrays.update({f"ref{i}": r.astype(np.float64) for i, r in enumerate(fx.refs)})
        arrays.update({f"frontend{i}": np.asarray(f, np.float32) for i, f in enumerate(fx.frontend_outs)})
        np.savez_compressed(out_dir / f"{name}.npz", **arrays)
        problems = check(fx, out_dir, not opts.no_iree_check)
        for k, v in fx.errors.items():
            print(f"   {k}: {', '.join(f'{x:.2e}' for x in v)}")
        for p in problems:
            print(f"   FAIL: {p}")
        if problems:
            failed.append(name)
        entries[name] = manifest_entry(fx, vers)
    order = list(FIXTURES)
    manifest = {
        "generated_by": "scripts/gen-attention-fixtures.py (see its header: environment and command line)",
        "versions": vers,
        "shapes": {"B": B, "Hq": HQ, "Hkv": HKV, "S": S, "D": D, "scale": SCALE, "decode_cache": SK_DECODE,
                   "decode_positions": DECODE_POS.reshape(-1).tolist(), "rope_positions": POSITIONS.tolist(),
                   "seed": ff.SEED},
        "tolerances": {"frontend_vs_ref": FRONTEND_TOL, "expect_vs_ref": SELF_TOL, "iree_vs_frontend": FRONTEND_TOL},
        "fixtures": [entries[n] for n in order if n in entries],
        "blocked": [blocked[n] for n in order if n in blocked],
    }
    text = dump_json(manifest)
    assert json.loads(text) == manifest
    manifest_path.write_text(text + "\n")
    total = sum(p.stat().st_size for p in out_dir.iterdir() if p.is_file())
    print(f"wrote {out_dir} ({total / 1e3:.0f} KB); {len(manifest['fixtures'])} fixtures, "
          f"{len(manifest['blocked'])} blocked")
    if failed:
        print(f"checks FAILED: {failed}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
