#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Regenerate the frontend fixtures of `--rope-raise` (test/Frontends/Inputs/): RoPE as real frontends emit it
in linalg-on-tensors IR, from the models' own modeling code, with inputs, float64 references and the
frontends' own f32 outputs. Not run in CI (it needs torch, transformers, torch-mlir, jax, IREE, onnx); the
fixtures it writes are committed.

Peers' environment (outside the checkout, about 7 GB; CPU use is enough):

    python3 -m venv /work/peers
    /work/peers/bin/pip install torch transformers torch-mlir jax jaxlib iree-base-compiler \\
        iree-base-runtime onnx onnxruntime
    # versions the committed fixtures were made with: torch 2.15, transformers 5.24, torch-mlir 20261001,
    # jax/jaxlib 0.10.2, iree-base-compiler/-runtime 3.13, onnx 1.23, onnxruntime 1.32

Command line (from the repository root; about a minute on a 2-core machine):

    /work/peers/bin/python scripts/gen-frontend-fixtures.py            # every fixture, then the checks
    /work/peers/bin/python scripts/gen-frontend-fixtures.py gptj ...   # only these (manifest entries merged)
    options: --out DIR (default test/Frontends/Inputs), --no-iree-check, --list

What it writes, per fixture NAME, into test/Frontends/Inputs/:
  NAME.mlir   the frontend's IR unchanged except as noted per frontend below: one public func @main, tensors
              in and out, tables as the frontend emitted them (torch-mlir: dense_resource blobs);
  NAME.npz    arg0..argN   the exact inputs of @main (f32 data, i64/i32 positions);
              ref0..refK   float64 outputs: the same model code run in float64 (`float64_mode()` below builds
                           the module and runs it with torch.float/torch.float32/Tensor.float meaning float64,
                           so inv_freq, caches and angles are float64 too), or numpy float64 for JAX and ONNX;
              frontend0..  the frontend's own f32 output (torch eager, jax.jit on CPU, onnxruntime);
and manifest.json: per fixture its source (model class/function, library versions), frontend, func, argument
shapes/dtypes, and per output what `--rope-raise` should produce (see `expect()`); "blocked" lists fixtures
that could not be produced, with the exact error.

Frontends:
  torch   torch_mlir.fx.export_and_import(..., output_type=OutputType.LINALG_ON_TENSORS, func_name="main"),
          after re-registering every non-persistent buffer as persistent (else "Could not find state mapping
          for buffer"). Text unchanged.
  jax     jax.jit(f).lower(...).as_text() (StableHLO), then
          `iree-opt --pass-pipeline='builtin.module(iree-stablehlo-to-iree-input)'`. For this function that
          pass already yields plain func/linalg/tensor/arith/math (no util.func: that comes only from
          iree-compile's input pipeline); the script still checks the dialects of every op and fails on any
          IREE dialect (util/flow/hal/iree_*), so nothing is stripped silently. `module @jit_rope` keeps JAX's
          module name; `func.func public @main` is JAX's spelling.
  onnx    a graph built here with onnx.helper (graph name "main", so the imported func is @main), saved, then
          `iree-import-onnx` and `iree-opt --pass-pipeline='builtin.module(torch-onnx-to-torch-backend-
          pipeline,torch-backend-to-linalg-on-tensors-backend-pipeline)'`. Text unchanged.

Checks (the script exits non-zero when one fails): every .mlir parses with /usr/lib/llvm-22/bin/mlir-opt and
uses only upstream dialects; each frontend output equals the float64 reference within 1e-5 relative
(max|y - r| / max|r|); the float64 reference equals `rope_mlir.reference.apply` (the project's independent
float64 RoPE, loaded by file path) called with the manifest's expectations, within 1e-9 — so the manifest
says what the IR computes; and, unless --no-iree-check, the fixture .mlir itself compiled by IREE (llvm-cpu,
local-sync) reproduces the frontend output within 1e-5 relative.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import math
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import traceback
from typing import Any, Callable, Dict, List, Optional, Sequence

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "test" / "Frontends" / "Inputs"
MLIR_OPT = "/usr/lib/llvm-22/bin/mlir-opt"
BIN = pathlib.Path(sys.executable).parent          # iree-opt, iree-import-onnx live next to the peers' python

SEED = 20240607
B, H, HKV, S = 2, 4, 2, 8
# Per-batch positions (explicit position ids): row 0 starts at 0, row 1 at 5 (a KV-cache continuation).
POSITIONS = np.arange(S, dtype=np.int64)[None, :] + np.array([[0], [5]], dtype=np.int64)

FRONTEND_TOL = 1e-5      # frontend f32 output vs float64 reference (relative to max|ref|)
SELF_TOL = 1e-9          # float64 model code vs rope_mlir.reference with the manifest's parameters
ALLOWED_DIALECTS = {"cf", "func", "linalg", "tensor", "arith", "math", "complex", "builtin"}


def _load_reference():
    """rope_mlir.reference by file path: plain numpy, without the package's compiled library."""
    spec = importlib.util.spec_from_file_location("rope_reference", ROOT / "python" / "rope_mlir" / "reference.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


reference = _load_reference()


def rng(name: str) -> np.random.Generator:
    return np.random.default_rng([SEED, sum(map(ord, name))])


def randn(g: np.random.Generator, *shape) -> np.ndarray:
    return g.standard_normal(shape).astype(np.float32)


# -- what a fixture is --------------------------------------------------------------------------------------
class Fixture:
    def __init__(self, name: str, frontend: str, source: str, text: str, args: List[np.ndarray],
                 refs: List[np.ndarray], frontend_outs: List[np.ndarray], expects: List[dict],
                 notes: str = "", config: Optional[dict] = None):
        self.name, self.frontend, self.source, self.text = name, frontend, source, text
        self.args, self.refs, self.frontend_outs = args, refs, frontend_outs
        self.expects, self.notes, self.config = expects, notes, config


def expect(*, input_arg: int, layout: str, head_dim: int, rotary_dim: int, token_dims: Sequence[int],
           positions: dict, cos_sin: str, freqs: dict, magnitude: float = 1.0,
           mrope: Optional[dict] = None, view: Optional[Sequence[int]] = None,
           output_order: str = "same", cache: Optional[dict] = None, note: str = "") -> dict:
    """What `--rope-raise` should produce for one output (SEMANTICS.md §7):
    rope_apply   number of rope.apply ops that compute this output (1 each: q and k are separate ops);
    input_arg    which func argument is the rotated tensor;
    view         the shape the op sees when the frontend flattens heads (vLLM: [T, H*D] seen as [T, H, D]);
    layout       half | interleaved (the channel pairing, from slice bounds/strides/concat order);
    output_order same, or "deinterleaved": output channels are [y1 of every pair..., y2 of every pair...]
                 though the input pairs are interleaved (DeepSeek-V3): rope.apply{interleaved} followed by a
                 de-interleaving permutation of the channels, equivalently rope.apply{half} of the
                 de-interleaved input;
    rotary_dim   P (channels [P, D) pass through); head_dim D;
    token_dims   the dims positions index, in the op's view of the tensor;
    positions    {"kind": "explicit", "arg": i} | {"kind": "offset", "value": o} | {"kind": "implicit"};
    cos_sin      "computed" (angles from a frequency table and positions in the graph) | "gathered-cache"
                 (cos/sin tables gathered by position; `cache` says their shape in the IR and how the raiser
                 can see the [M, P/2] halves);
    freqs        {"kind": "default", "base": b} when every table entry equals b^(-2i/P) rounded to f32, else
                 {"kind": "table", "values": [...]} (the f32 table widened exactly), plus "scheme" (the HF
                 rope_parameters the table came from) for information; with caches the frequencies behind
                 the cache (the cache form is what the raiser should use);
    magnitude    the constant multiplying cos and sin, at the precision the IR holds it (1.0: none);
    mrope        {"section": [t, h, w], "interleaved": false} for M-RoPE (positions [3, *token_dims]).
    """
    e = {"rope_apply": 1, "input_arg": input_arg, "layout": layout, "output_order": output_order,
         "head_dim": head_dim, "rotary_dim": rotary_dim, "token_dims": list(token_dims),
         "positions": positions, "cos_sin": cos_sin, "freqs": freqs, "magnitude": magnitude,
         "mrope": mrope}
    if view is not None:
        e["view"] = list(view)
    if cache is not None:
        e["cache"] = cache
    if note:
        e["note"] = note
    return e


def freqs_entry(table_f32: np.ndarray, base: float, scheme: Optional[dict] = None) -> dict:
    """default<base> only if the f32 table equals base^(-2i/P) (float64, rounded once to f32) exactly."""
    table_f32 = np.asarray(table_f32, dtype=np.float32).reshape(-1)
    p = 2 * table_f32.size
    exact = (base ** (-np.arange(0, p, 2, dtype=np.float64) / p)).astype(np.float32)
    if scheme is None and np.array_equal(exact, table_f32):
        return {"kind": "default", "base": float(base)}
    out = {"kind": "table", "values": [float(v) for v in table_f32]}
    if scheme is None:
        ulps = np.abs(table_f32.view(np.int32).astype(np.int64) - exact.view(np.int32).astype(np.int64))
        out["differs_from_default"] = {"base": float(base), "entries": int(np.count_nonzero(ulps)),
                                       "max_ulps": int(ulps.max())}
    else:
        out["scheme"] = scheme
    return out


# -- torch helpers -------------------------------------------------------------------------------------------
@contextlib.contextmanager
def float64_mode():
    """Run model code in float64: the modeling code hard-codes torch.float / torch.float32 / .float()."""
    import torch
    saved = (torch.float, torch.float32, torch.Tensor.float, torch.get_default_dtype())
    torch.float = torch.float64
    torch.float32 = torch.float64
    torch.Tensor.float = lambda self, *a, **k: self.double(*a, **k)
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        torch.float, torch.float32, torch.Tensor.float = saved[:3]
        torch.set_default_dtype(saved[3])


def make_buffers_persistent(module) -> None:
    for sub in module.modules():
        for name in list(sub._non_persistent_buffers_set):
            t = sub._buffers[name]
            sub._non_persistent_buffers_set.discard(name)
            sub.register_buffer(name, t, persistent=True)


def as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def torch_fixture(name: str, build: Callable[[], Any], args: List[np.ndarray], source: str,
                  expects: List[dict], notes: str = "", config: Optional[dict] = None,
                  dynamic_shapes: Optional[Callable[[], Any]] = None) -> Fixture:
    """build() makes the torch module; it is called twice: normally (f32, exported and run for the frontend
    output) and under float64_mode() (the reference, with float64 inputs)."""
    import torch
    from torch_mlir import fx
    from torch_mlir.compiler_utils import OutputType

    targs = [torch.from_numpy(a.copy()) for a in args]
    m = build().eval()
    make_buffers_persistent(m)
    with torch.no_grad():
        outs = [o.detach().numpy().copy() for o in as_tuple(m(*targs))]
    with float64_mode(), torch.no_grad():
        m64 = build().eval()
        a64 = [t.double() if t.is_floating_point() else t for t in targs]
        refs = [o.detach().numpy().astype(np.float64) for o in as_tuple(m64(*a64))]
    extra = {"dynamic_shapes": dynamic_shapes()} if dynamic_shapes else {}
    mod = fx.export_and_import(m, *targs, output_type=OutputType.LINALG_ON_TENSORS, func_name="main",
                               **extra)
    return Fixture(name, "torch-mlir fx (LINALG_ON_TENSORS)", source, str(mod), args, refs, outs, expects,
                   notes, config)


def hf_rope(make_rotary: Callable[[], Any], apply: Callable[..., Any]):
    """A torch module class running a model's own rotary embedding (`make_rotary()`, called when the module
    is built, so float64_mode() applies) and apply function on (q, k, position_ids)."""
    import torch

    class Rope(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.rotary_emb = make_rotary()

        def forward(self, q, k, position_ids):
            cos, sin = self.rotary_emb(q, position_ids)
            return apply(q, k, cos, sin)

    return Rope


def hf(module_name: str):
    return importlib.import_module(f"transformers.models.{module_name}.modeling_{module_name}")


def explicit(arg: int) -> dict:
    return {"kind": "explicit", "arg": arg}


def hf_inv_freq(rotary) -> np.ndarray:
    return rotary.inv_freq.detach().numpy().astype(np.float32)


# -- 1. llama_computed -----------------------------------------------------------------------------------
def fx_llama_computed():
    import torch
    from transformers import LlamaConfig
    ml = hf("llama")
    D = 32
    cfg = LlamaConfig(hidden_size=H * D, num_attention_heads=H, num_key_value_heads=HKV, head_dim=D,
                      max_position_embeddings=64, num_hidden_layers=1, intermediate_size=64, vocab_size=32)

    Rope = hf_rope(lambda: ml.LlamaRotaryEmbedding(cfg), ml.apply_rotary_pos_emb)

    g = rng("llama_computed")
    args = [randn(g, B, H, S, D), randn(g, B, HKV, S, D), POSITIONS.copy()]
    fr = freqs_entry(hf_inv_freq(Rope().rotary_emb), cfg.rope_parameters["rope_theta"])
    ex = [expect(input_arg=i, layout="half", head_dim=D, rotary_dim=D, token_dims=[0, 2], positions=explicit(2),
                 cos_sin="computed", freqs=fr) for i in (0, 1)]
    return torch_fixture(
        "llama_computed", Rope, args,
        "transformers.models.llama.modeling_llama.LlamaRotaryEmbedding + apply_rotary_pos_emb", ex,
        notes="transformers 5.24's LlamaRotaryEmbedding.forward is position_ids[..., None].float() * inv_freq "
              "(a broadcast multiply), not the batch_matmul of transformers <= 4.5x: that formulation is the "
              "llama_computed_matmul fixture.",
        config=dict(cfg.rope_parameters))


# -- 1a. llama_dynamic: llama_computed exported with dynamic batch and sequence ------------------------
def fx_llama_dynamic():
    import torch
    from transformers import LlamaConfig
    ml = hf("llama")
    D = 32
    cfg = LlamaConfig(hidden_size=H * D, num_attention_heads=H, num_key_value_heads=HKV, head_dim=D,
                      max_position_embeddings=64, num_hidden_layers=1, intermediate_size=64, vocab_size=32)

    Rope = hf_rope(lambda: ml.LlamaRotaryEmbedding(cfg), ml.apply_rotary_pos_emb)

    def dynamic_shapes():
        b = torch.export.Dim("b", min=2, max=64)
        s = torch.export.Dim("s", min=2, max=4096)
        return {"q": {0: b, 2: s}, "k": {0: b, 2: s}, "position_ids": {0: b, 1: s}}

    g = rng("llama_dynamic")
    args = [randn(g, B, H, S, D), randn(g, B, HKV, S, D), POSITIONS.copy()]
    fr = freqs_entry(hf_inv_freq(Rope().rotary_emb), cfg.rope_parameters["rope_theta"])
    ex = [expect(input_arg=i, layout="half", head_dim=D, rotary_dim=D, token_dims=[0, 2], positions=explicit(2),
                 cos_sin="computed", freqs=fr) for i in (0, 1)]
    return torch_fixture(
        "llama_dynamic", Rope, args,
        "transformers.models.llama.modeling_llama.LlamaRotaryEmbedding + apply_rotary_pos_emb, exported with "
        "dynamic batch and sequence (torch.export.Dim)", ex,
        notes="tensor<?x4x?x32xf32>: torch-mlir adds cf.assert checks of the dynamic sizes and slices with "
              "tensor.dim sizes.",
        config=dict(cfg.rope_parameters), dynamic_shapes=dynamic_shapes)


# -- 1b. llama_computed_matmul (HF 4.4x-4.5x formulation) ------------------------------------------------
def fx_llama_computed_matmul():
    import torch
    ml = hf("llama")
    D, base = 32, 10000.0

    class LlamaRotaryEmbedding4x(torch.nn.Module):
        """transformers 4.4x-4.5x LlamaRotaryEmbedding.forward (default rope type), written out: inv_freq
        expanded to [B, D/2, 1] @ position_ids [B, 1, S] (batch_matmul), transposed, cat, cos/sin."""

        def __init__(self):
            super().__init__()
            inv_freq = 1.0 / (base ** (torch.arange(0, D, 2, dtype=torch.int64).float() / D))
            self.register_buffer("inv_freq", inv_freq, persistent=False)
            self.attention_scaling = 1.0

        def forward(self, x, position_ids):
            inv_freq_expanded = self.inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
            position_ids_expanded = position_ids[:, None, :].float()
            freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)
            emb = torch.cat((freqs, freqs), dim=-1)
            cos = emb.cos() * self.attention_scaling
            sin = emb.sin() * self.attention_scaling
            return cos.to(dtype=x.dtype), sin.to(dtype=x.dtype)

    Rope = hf_rope(lambda: LlamaRotaryEmbedding4x(), ml.apply_rotary_pos_emb)

    g = rng("llama_computed_matmul")
    args = [randn(g, B, H, S, D), randn(g, B, HKV, S, D), POSITIONS.copy()]
    fr = freqs_entry(hf_inv_freq(Rope().rotary_emb), base)
    ex = [expect(input_arg=i, layout="half", head_dim=D, rotary_dim=D, token_dims=[0, 2], positions=explicit(2),
                 cos_sin="computed", freqs=fr) for i in (0, 1)]
    return torch_fixture(
        "llama_computed_matmul", Rope, args,
        "LlamaRotaryEmbedding.forward of transformers 4.4x-4.5x (written out here) + transformers 5.24 "
        "llama apply_rotary_pos_emb", ex, config={"rope_type": "default", "rope_theta": base})


# -- 2. llama_cache ----------------------------------------------------------------------------------------
def fx_llama_cache():
    import torch
    ml = hf("llama")
    D, base, M = 32, 10000.0, 64

    class LlamaRotaryEmbeddingCached(torch.nn.Module):
        """transformers <= 4.37 LlamaRotaryEmbedding (and many ports): cos/sin caches [M, D] =
        cat(freqs, freqs).cos()/.sin() built at init, gathered by position_ids in apply_rotary_pos_emb."""

        def __init__(self):
            super().__init__()
            inv_freq = 1.0 / (base ** (torch.arange(0, D, 2).float() / D))
            self.register_buffer("inv_freq", inv_freq, persistent=False)
            t = torch.arange(M, dtype=inv_freq.dtype)
            freqs = torch.outer(t, inv_freq)
            emb = torch.cat((freqs, freqs), dim=-1)
            self.register_buffer("cos_cached", emb.cos(), persistent=False)
            self.register_buffer("sin_cached", emb.sin(), persistent=False)

        def forward(self, x, seq_len=None):
            return self.cos_cached[:seq_len].to(dtype=x.dtype), self.sin_cached[:seq_len].to(dtype=x.dtype)

    def apply_rotary_pos_emb_gather(q, k, cos, sin, position_ids, unsqueeze_dim=1):
        cos = cos[position_ids].unsqueeze(unsqueeze_dim)
        sin = sin[position_ids].unsqueeze(unsqueeze_dim)
        q_embed = (q * cos) + (ml.rotate_half(q) * sin)
        k_embed = (k * cos) + (ml.rotate_half(k) * sin)
        return q_embed, k_embed

    class Rope(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.rotary_emb = LlamaRotaryEmbeddingCached()

        def forward(self, q, k, position_ids):
            cos, sin = self.rotary_emb(q, seq_len=M)
            return apply_rotary_pos_emb_gather(q, k, cos, sin, position_ids)

    g = rng("llama_cache")
    args = [randn(g, B, H, S, D), randn(g, B, HKV, S, D), POSITIONS.copy()]
    fr = freqs_entry(hf_inv_freq(Rope().rotary_emb), base)
    cache = {"shape": [M, D], "form": "cat(freqs, freqs).cos()/.sin() constants [M, D]; the raiser must see "
             "the two halves equal to use [M, D/2]", "rows": M}
    ex = [expect(input_arg=i, layout="half", head_dim=D, rotary_dim=D, token_dims=[0, 2], positions=explicit(2),
                 cos_sin="gathered-cache", freqs=fr, cache=cache) for i in (0, 1)]
    return torch_fixture(
        "llama_cache", Rope, args,
        "LlamaRotaryEmbedding with cos_cached/sin_cached (transformers <= 4.37 formulation, written out here) "
        "+ cos[position_ids] gather + transformers 5.24 llama rotate_half", ex,
        config={"rope_type": "default", "rope_theta": base, "max_position_embeddings": M})


# -- 3. qwen2_yarn ------------------------------------------------------------------------------------------
def fx_qwen2_yarn():
    import torch
    from transformers import Qwen2Config
    mq = hf("qwen2")
    D = 32
    rp = {"rope_type": "yarn", "rope_theta": 10000.0, "factor": 4.0, "original_max_position_embeddings": 32}
    cfg = Qwen2Config(hidden_size=H * D, num_attention_heads=H, num_key_value_heads=HKV, head_dim=D,
                      max_position_embeddings=128, num_hidden_layers=1, intermediate_size=64, vocab_size=32,
                      rope_parameters=dict(rp))

    Rope = hf_rope(lambda: mq.Qwen2RotaryEmbedding(config=cfg), mq.apply_rotary_pos_emb)

    g = rng("qwen2_yarn")
    args = [randn(g, B, H, S, D), randn(g, B, HKV, S, D), POSITIONS.copy()]
    r = Rope().rotary_emb
    scheme = dict(cfg.rope_parameters)
    scheme.setdefault("max_position_embeddings", cfg.max_position_embeddings)
    fr = freqs_entry(hf_inv_freq(r), rp["rope_theta"], scheme=scheme)
    a = float(np.float32(r.attention_scaling))
    ex = [expect(input_arg=i, layout="half", head_dim=D, rotary_dim=D, token_dims=[0, 2], positions=explicit(2),
                 cos_sin="computed", freqs=fr, magnitude=a,
                 note=f"magnitude: attention_scaling {r.attention_scaling!r} (0.1 ln 4 + 1) as the f32 "
                      "constant the IR multiplies cos and sin by") for i in (0, 1)]
    return torch_fixture("qwen2_yarn", Rope, args,
                         "transformers.models.qwen2.modeling_qwen2.Qwen2RotaryEmbedding (rope_type yarn) + "
                         "apply_rotary_pos_emb", ex, config=scheme)


# -- 4. glm4_partial_interleaved ------------------------------------------------------------------------
def fx_glm4():
    import torch
    from transformers import Glm4Config
    mg = hf("glm4")
    D = 32
    cfg = Glm4Config(pad_token_id=None, eos_token_id=None, bos_token_id=None, hidden_size=H * D, num_attention_heads=H, num_key_value_heads=HKV, head_dim=D,
                     max_position_embeddings=64, num_hidden_layers=1, intermediate_size=64, vocab_size=32)
    P = int(D * cfg.rope_parameters.get("partial_rotary_factor", 1.0))

    Rope = hf_rope(lambda: mg.Glm4RotaryEmbedding(config=cfg), mg.apply_rotary_pos_emb)

    g = rng("glm4_partial_interleaved")
    args = [randn(g, B, H, S, D), randn(g, B, HKV, S, D), POSITIONS.copy()]
    fr = freqs_entry(hf_inv_freq(Rope().rotary_emb), cfg.rope_parameters["rope_theta"])
    ex = [expect(input_arg=i, layout="interleaved", head_dim=D, rotary_dim=P, token_dims=[0, 2],
                 positions=explicit(2), cos_sin="computed", freqs=fr) for i in (0, 1)]
    return torch_fixture("glm4_partial_interleaved", Rope, args,
                         "transformers.models.glm4.modeling_glm4.Glm4RotaryEmbedding + apply_rotary_pos_emb "
                         "(cos[..., :P/2].repeat_interleave(2), stack((-x2, x1), -1).flatten(-2))", ex,
                         config=dict(cfg.rope_parameters))


# -- 5. gptj ------------------------------------------------------------------------------------------------
def fx_gptj():
    import torch
    from transformers import GPTJConfig
    mj = hf("gptj")
    D, P, M = 64, 16, 64
    cfg = GPTJConfig(bos_token_id=None, eos_token_id=None, n_embd=H * D, n_head=H, rotary_dim=P, n_positions=M, n_layer=1, vocab_size=32)

    class Rope(torch.nn.Module):
        """GPTJRotaryEmbedding + the rotary lines of GPTJAttention.forward (query/key [B, S, H, D])."""

        def __init__(self):
            super().__init__()
            self.rotary_emb = mj.GPTJRotaryEmbedding(cfg)
            self.rotary_dim = cfg.rotary_dim

        def forward(self, query, key, position_ids):
            sin, cos = self.rotary_emb(query, position_ids)
            k_rot = key[:, :, :, : self.rotary_dim]
            k_pass = key[:, :, :, self.rotary_dim:]
            q_rot = query[:, :, :, : self.rotary_dim]
            q_pass = query[:, :, :, self.rotary_dim:]
            k_rot = mj.apply_rotary_pos_emb(k_rot, sin, cos)
            q_rot = mj.apply_rotary_pos_emb(q_rot, sin, cos)
            key = torch.cat([k_rot, k_pass], dim=-1)
            query = torch.cat([q_rot, q_pass], dim=-1)
            return query, key

    g = rng("gptj")
    args = [randn(g, B, S, H, D), randn(g, B, S, H, D), POSITIONS.copy()]
    # create_sinusoidal_positions: inv_freq = 1 / 10000 ** (arange(0, P, 2, int64) / P) (int64 / int -> f32)
    inv = (1.0 / (10000 ** (torch.arange(0, P, 2, dtype=torch.int64) / P))).numpy()
    fr = freqs_entry(inv, 10000.0)
    cache = {"shape": [M, P], "form": "embed_positions = cat(sin(t*inv_freq), cos(t*inv_freq)) [M, P]: "
             "sin in columns [0, P/2), cos in [P/2, P); gathered, split, repeat_interleave(2)", "rows": M}
    ex = [expect(input_arg=i, layout="interleaved", head_dim=D, rotary_dim=P, token_dims=[0, 1],
                 positions=explicit(2), cos_sin="gathered-cache", freqs=fr, cache=cache) for i in (0, 1)]
    return torch_fixture("gptj", Rope, args,
                         "transformers.models.gptj.modeling_gptj.GPTJRotaryEmbedding + apply_rotary_pos_emb "
                         "(rotate_every_two) + GPTJAttention's rotary_dim slicing", ex,
                         config={"rotary_dim": P, "n_positions": M, "base": 10000.0})


# -- 6. gpt_oss ---------------------------------------------------------------------------------------------
def fx_gpt_oss():
    import torch
    from transformers import GptOssConfig
    mo = hf("gpt_oss")
    D = 32
    cfg = GptOssConfig(hidden_size=H * D, num_attention_heads=H, num_key_value_heads=HKV, head_dim=D,
                       num_hidden_layers=1, intermediate_size=64, vocab_size=32, num_local_experts=2,
                       num_experts_per_tok=1)

    Rope = hf_rope(lambda: mo.GptOssRotaryEmbedding(config=cfg), mo.apply_rotary_pos_emb)

    g = rng("gpt_oss")
    args = [randn(g, B, H, S, D), randn(g, B, HKV, S, D), POSITIONS.copy()]
    r = Rope().rotary_emb
    scheme = dict(cfg.rope_parameters)
    scheme.setdefault("max_position_embeddings", cfg.max_position_embeddings)
    fr = freqs_entry(hf_inv_freq(r), scheme["rope_theta"], scheme=scheme)
    a = float(np.float32(r.attention_scaling))
    ex = [expect(input_arg=i, layout="half", head_dim=D, rotary_dim=D, token_dims=[0, 2], positions=explicit(2),
                 cos_sin="computed", freqs=fr, magnitude=a,
                 note=f"half layout written as cat(x1*c - x2*s, x2*c + x1*s) (no negf); cos/sin [.., D/2] not "
                      f"duplicated; magnitude {r.attention_scaling!r} = 0.1 ln 32 + 1 as an f32 constant")
          for i in (0, 1)]
    return torch_fixture("gpt_oss", Rope, args,
                         "transformers.models.gpt_oss.modeling_gpt_oss.GptOssRotaryEmbedding (default config: "
                         "yarn, factor 32, truncate false) + apply_rotary_pos_emb/_apply_rotary_emb", ex,
                         config=scheme)


# -- 7. phi2_partial ----------------------------------------------------------------------------------------
def fx_phi2():
    import torch
    from transformers import PhiConfig
    mp = hf("phi")
    D = 40
    cfg = PhiConfig(hidden_size=H * D, num_attention_heads=H, num_key_value_heads=HKV,
                    max_position_embeddings=64, num_hidden_layers=1, intermediate_size=64, vocab_size=32,
                    partial_rotary_factor=0.4)
    P = int(D * cfg.rope_parameters["partial_rotary_factor"])

    class Rope(torch.nn.Module):
        """PhiRotaryEmbedding + the partial-rotary lines of PhiAttention.forward."""

        def __init__(self):
            super().__init__()
            self.rotary_emb = mp.PhiRotaryEmbedding(config=cfg)
            self.rotary_ndims = P

        def forward(self, query_states, key_states, position_ids):
            cos, sin = self.rotary_emb(query_states, position_ids)
            query_rot, query_pass = (query_states[..., : self.rotary_ndims], query_states[..., self.rotary_ndims:])
            key_rot, key_pass = (key_states[..., : self.rotary_ndims], key_states[..., self.rotary_ndims:])
            query_rot, key_rot = mp.apply_rotary_pos_emb(query_rot, key_rot, cos, sin)
            query_states = torch.cat((query_rot, query_pass), dim=-1)
            key_states = torch.cat((key_rot, key_pass), dim=-1)
            return query_states, key_states

    g = rng("phi2_partial")
    args = [randn(g, B, H, S, D), randn(g, B, HKV, S, D), POSITIONS.copy()]
    fr = freqs_entry(hf_inv_freq(Rope().rotary_emb), cfg.rope_parameters["rope_theta"])
    ex = [expect(input_arg=i, layout="half", head_dim=D, rotary_dim=P, token_dims=[0, 2], positions=explicit(2),
                 cos_sin="computed", freqs=fr) for i in (0, 1)]
    return torch_fixture("phi2_partial", Rope, args,
                         "transformers.models.phi.modeling_phi.PhiRotaryEmbedding + apply_rotary_pos_emb + "
                         "PhiAttention's rotary_ndims slicing (partial_rotary_factor 0.4, as Phi-2)", ex,
                         config=dict(cfg.rope_parameters))


# -- 8. deepseek_v3_interleave --------------------------------------------------------------------------
def fx_deepseek_v3():
    import torch
    from transformers import DeepseekV3Config
    md = hf("deepseek_v3")
    Dr = 32
    cfg = DeepseekV3Config(hidden_size=128, num_attention_heads=H, num_key_value_heads=H, qk_rope_head_dim=Dr,
                           qk_nope_head_dim=32, v_head_dim=32, kv_lora_rank=32, q_lora_rank=32,
                           max_position_embeddings=64, num_hidden_layers=1, intermediate_size=64,
                           moe_intermediate_size=32, n_routed_experts=4, num_experts_per_tok=2, vocab_size=32)

    class Rope(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.rotary_emb = md.DeepseekV3RotaryEmbedding(config=cfg)

        def forward(self, q_rot, k_rot, position_ids):
            cos, sin = self.rotary_emb(q_rot, position_ids)
            return md.apply_rotary_pos_emb_interleave(q_rot, k_rot, cos, sin)

    g = rng("deepseek_v3_interleave")
    # MLA: q_rot [B, H, S, qk_rope_head_dim], k_rot one shared head [B, 1, S, qk_rope_head_dim]
    args = [randn(g, B, H, S, Dr), randn(g, B, 1, S, Dr), POSITIONS.copy()]
    fr = freqs_entry(hf_inv_freq(Rope().rotary_emb), cfg.rope_parameters["rope_theta"])
    ex = [expect(input_arg=i, layout="interleaved", output_order="deinterleaved", head_dim=Dr, rotary_dim=Dr,
                 token_dims=[0, 2], positions=explicit(2), cos_sin="computed", freqs=fr,
                 note="pairs (2i, 2i+1) of the input; output channels [y1_0..y1_{P/2-1}, y2_0..y2_{P/2-1}]")
          for i in (0, 1)]
    return torch_fixture("deepseek_v3_interleave", Rope, args,
                         "transformers.models.deepseek_v3.modeling_deepseek_v3.DeepseekV3RotaryEmbedding + "
                         "apply_rotary_pos_emb_interleave", ex, config=dict(cfg.rope_parameters))


# -- 9. qwen2_vl_mrope --------------------------------------------------------------------------------------
def mrope_positions() -> np.ndarray:
    """[3, B, S] (t, h, w): row 0 text then a 2x3 image grid; row 1 an image grid at its start then text."""
    t = np.zeros((3, B, S), np.int64)
    # batch 0: 2 text tokens (t=h=w=0,1), a 2x3 grid at t=2 (h 2..3, w 2..4), then text continues at 5
    t[:, 0, :2] = np.arange(2)
    for j in range(6):
        t[0, 0, 2 + j], t[1, 0, 2 + j], t[2, 0, 2 + j] = 2, 2 + j // 3, 2 + j % 3
    # batch 1: a 2x2 grid (t=0, h 0..1, w 0..1) then 4 text tokens at 2..5
    for j in range(4):
        t[0, 1, j], t[1, 1, j], t[2, 1, j] = 0, j // 2, j % 2
    t[:, 1, 4:] = np.arange(2, 6)
    return t


def fx_qwen2_vl():
    import torch
    from transformers.models.qwen2_vl.configuration_qwen2_vl import Qwen2VLTextConfig
    mv = hf("qwen2_vl")
    D = 32
    section = [4, 6, 6]
    cfg = Qwen2VLTextConfig(bos_token_id=None, eos_token_id=None, hidden_size=H * D, num_attention_heads=H, num_key_value_heads=HKV,
                            max_position_embeddings=64, num_hidden_layers=1, intermediate_size=64,
                            vocab_size=32, rope_parameters={"rope_type": "mrope", "mrope_section": section,
                                                            "rope_theta": 10000.0})

    Rope = hf_rope(lambda: mv.Qwen2VLRotaryEmbedding(config=cfg), mv.apply_rotary_pos_emb)

    g = rng("qwen2_vl_mrope")
    args = [randn(g, B, H, S, D), randn(g, B, HKV, S, D), mrope_positions()]
    r = Rope().rotary_emb
    assert list(r.mrope_section) == section
    fr = freqs_entry(hf_inv_freq(r), cfg.rope_parameters["rope_theta"])
    ex = [expect(input_arg=i, layout="half", head_dim=D, rotary_dim=D, token_dims=[0, 2], positions=explicit(2),
                 cos_sin="computed", freqs=fr, mrope={"section": section, "interleaved": False},
                 note="positions arg [3, B, S]; cos/sin split by mrope_section, chunk i from axis i % 3, "
                      "concatenated, then cat(x, x)") for i in (0, 1)]
    return torch_fixture("qwen2_vl_mrope", Rope, args,
                         "transformers.models.qwen2_vl.modeling_qwen2_vl.Qwen2VLRotaryEmbedding (text M-RoPE, "
                         "recomposition_frequencies) + apply_rotary_pos_emb", ex, config=dict(cfg.rope_parameters))


# -- 10. meta_llama_complex ---------------------------------------------------------------------------------
def fx_meta_llama_complex():
    import torch
    D, M, start_pos, base = 32, 64, 3, 10000.0

    def precompute_freqs_cis(dim: int, end: int, theta: float = 10000.0):
        # Meta's reference formulation: frequencies in f32, outer product with t, unit phasors via torch.polar.
        freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
        t = torch.arange(end, device=freqs.device, dtype=torch.float32)
        freqs = torch.outer(t, freqs)
        return torch.polar(torch.ones_like(freqs), freqs)

    def reshape_for_broadcast(freqs_cis, x):
        shape = [d if i == 1 or i == x.ndim - 1 else 1 for i, d in enumerate(x.shape)]
        return freqs_cis.view(*shape)

    def apply_rotary_emb(xq, xk, freqs_cis):
        xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
        xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
        freqs_cis = reshape_for_broadcast(freqs_cis, xq_)
        xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
        xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
        return xq_out.type_as(xq), xk_out.type_as(xk)

    class Rope(torch.nn.Module):
        """Transformer.forward's freqs_cis[start_pos : start_pos + seqlen] + Attention's apply_rotary_emb
        (xq, xk [B, S, H, D]); start_pos is a Python int there, so it is a constant in the graph."""

        def __init__(self):
            super().__init__()
            self.register_buffer("freqs_cis", precompute_freqs_cis(D, M, base), persistent=False)

        def forward(self, xq, xk):
            seqlen = xq.shape[1]
            freqs_cis = self.freqs_cis[start_pos: start_pos + seqlen]
            return apply_rotary_emb(xq, xk, freqs_cis)

    g = rng("meta_llama_complex")
    args = [randn(g, B, S, H, D), randn(g, B, S, HKV, D)]
    inv = (1.0 / (base ** (torch.arange(0, D, 2)[: (D // 2)].float() / D))).numpy()
    fr = freqs_entry(inv, base)
    cache = {"shape": [M, D // 2], "element": "complex<f32>",
             "form": "freqs_cis = polar(1, outer(t, inv_freq)) constant [M, D/2] complex; sliced at the "
                     "constant start_pos; cos = re, sin = im", "rows": M}
    ex = [expect(input_arg=i, layout="interleaved", head_dim=D, rotary_dim=D, token_dims=[0, 1],
                 positions={"kind": "offset", "value": start_pos}, cos_sin="gathered-cache", freqs=fr,
                 cache=cache, note="view_as_complex pairs (2i, 2i+1); complex.mul by the sliced table")
          for i in (0, 1)]
    return torch_fixture("meta_llama_complex", Rope, args,
                         "Meta's reference Llama precompute_freqs_cis / reshape_for_broadcast / apply_rotary_emb "
                         "(same math, written out here), start_pos = 3", ex,
                         config={"rope_theta": base, "max_seq_len": M, "start_pos": start_pos})


# -- 13. vllm_forward_native --------------------------------------------------------------------------------
def fx_vllm():
    import torch
    D, M, base = 32, 64, 10000.0
    T = B * S

    class RotaryEmbedding(torch.nn.Module):
        """vLLM's RotaryEmbedding (neox style) forward_native, written out from its description: a
        cos_sin_cache [M, P] = cat(cos, sin) gathered with index_select, chunked, half-split rotation written
        as x1*cos - x2*sin / x2*cos + x1*sin (subf, no negf), flat [T, H*D] q/k."""

        def __init__(self, head_size, rotary_dim, max_position, base):
            super().__init__()
            self.head_size, self.rotary_dim = head_size, rotary_dim
            inv_freq = 1.0 / (base ** (torch.arange(0, rotary_dim, 2, dtype=torch.float) / rotary_dim))
            t = torch.arange(max_position, dtype=torch.float)
            freqs = torch.einsum("i,j -> ij", t, inv_freq)
            self.register_buffer("cos_sin_cache", torch.cat((freqs.cos(), freqs.sin()), dim=-1), persistent=False)

        @staticmethod
        def _rotate(x, cos, sin):
            cos = cos.unsqueeze(-2).to(x.dtype)
            sin = sin.unsqueeze(-2).to(x.dtype)
            x1, x2 = torch.chunk(x, 2, dim=-1)
            o1 = x1 * cos - x2 * sin
            o2 = x2 * cos + x1 * sin
            return torch.cat((o1, o2), dim=-1)

        def forward(self, positions, query, key):
            positions = positions.flatten()
            num_tokens = positions.shape[0]
            cos_sin = self.cos_sin_cache.index_select(0, positions)
            cos, sin = cos_sin.chunk(2, dim=-1)
            outs = []
            for x in (query, key):
                shape = x.shape
                x = x.view(num_tokens, -1, self.head_size)
                x_rot, x_pass = x[..., : self.rotary_dim], x[..., self.rotary_dim:]
                x_rot = self._rotate(x_rot, cos, sin)
                outs.append(torch.cat((x_rot, x_pass), dim=-1).reshape(shape))
            return tuple(outs)

    g = rng("vllm_forward_native")
    pos = POSITIONS.reshape(-1).copy()
    args = [pos, randn(g, T, H * D), randn(g, T, HKV * D)]
    inv = (1.0 / (base ** (torch.arange(0, D, 2, dtype=torch.float) / D))).numpy()
    fr = freqs_entry(inv, base)
    cache = {"shape": [M, D], "form": "cos_sin_cache = cat(cos(freqs), sin(freqs)) [M, P]: cos in columns "
             "[0, P/2), sin in [P/2, P) (exactly the [M, P/2] cache form after chunk)", "rows": M}
    ex = [expect(input_arg=1 + i, view=[T, h, D], layout="half", head_dim=D, rotary_dim=D, token_dims=[0],
                 positions=explicit(0), cos_sin="gathered-cache", freqs=fr, cache=cache)
          for i, h in ((0, H), (1, HKV))]
    return torch_fixture("vllm_forward_native", lambda: RotaryEmbedding(D, D, M, base), args,
                         "vLLM RotaryEmbedding.forward_native (neox style; written out here from its "
                         "description)", ex, config={"rope_theta": base, "max_position": M, "is_neox_style": True})


# -- 11. jax_rotate_half ------------------------------------------------------------------------------------
def fx_jax():
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_platforms", "cpu")
    D, base = 32, 10000.0

    def rotate_half(x):
        x1, x2 = jnp.split(x, 2, axis=-1)
        return jnp.concatenate([-x2, x1], axis=-1)

    def inv_frequencies(dtype):
        return 1.0 / (base ** (jnp.arange(0, D, 2, dtype=dtype) / D))

    def rope(q, k, positions):
        # [B, S, H, D] (JAX convention); inv_freq computed in the graph (powf), positions int32 [B, S]
        inv_freq = inv_frequencies(q.dtype)
        freqs = positions[..., None].astype(q.dtype) * inv_freq                 # [B, S, D/2]
        emb = jnp.concatenate([freqs, freqs], axis=-1)[:, :, None, :]           # [B, S, 1, D]
        cos, sin = jnp.cos(emb), jnp.sin(emb)
        return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin

    g = rng("jax_rotate_half")
    args = [randn(g, B, S, H, D), randn(g, B, S, HKV, D), POSITIONS.astype(np.int32)]
    stablehlo = jax.jit(rope).lower(*args).as_text()
    outs = [np.asarray(o) for o in jax.jit(rope)(*args)]
    with tempfile.TemporaryDirectory() as tmp:
        src = pathlib.Path(tmp) / "in.stablehlo.mlir"
        src.write_text(stablehlo)
        text = subprocess.run([str(BIN / "iree-opt"),
                               "--pass-pipeline=builtin.module(iree-stablehlo-to-iree-input)", str(src)],
                              check=True, capture_output=True, text=True).stdout
    # float64 reference: the same function in numpy float64
    inv64 = 1.0 / (base ** (np.arange(0, D, 2, dtype=np.float64) / D))
    refs = []
    for x in args[:2]:
        f = args[2][..., None].astype(np.float64) * inv64
        emb = np.concatenate([f, f], -1)[:, :, None, :]
        x64 = x.astype(np.float64)
        x1, x2 = np.split(x64, 2, axis=-1)
        refs.append(x64 * np.cos(emb) + np.concatenate([-x2, x1], -1) * np.sin(emb))
    table = np.asarray(jax.jit(lambda: inv_frequencies(jnp.float32))())
    fr = freqs_entry(table, base)
    fr["computed_in_graph"] = ("1 / powf(10000, 2*iota/32) in f32; values as XLA-CPU evaluates them; a "
                               "constant-folding raiser evaluates the same f32 expression")
    ex = [expect(input_arg=i, layout="half", head_dim=D, rotary_dim=D, token_dims=[0, 1], positions=explicit(2),
                 cos_sin="computed", freqs=fr) for i in (0, 1)]
    return Fixture("jax_rotate_half", "jax.jit -> StableHLO -> iree-opt iree-stablehlo-to-iree-input",
                   "JAX rotate_half RoPE written here (HF Flax/MaxText style: inv_freq = 1/base**(arange/D) in "
                   "the graph, positions int32)", text, args, refs, outs, ex,
                   config={"rope_theta": base})


# -- 12. onnx_rotate_half -----------------------------------------------------------------------------------
def fx_onnx():
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper
    D, M, base = 32, 64, 10000.0
    P, half = D, D // 2
    inv64 = 1.0 / (base ** (np.arange(0, P, 2, dtype=np.float64) / P))
    ang = np.arange(M, dtype=np.float64)[:, None] * inv64[None, :]
    cos_cache, sin_cache = np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)
    i64 = lambda name, v: numpy_helper.from_array(np.array(v, np.int64), name)  # noqa: E731
    inits = [numpy_helper.from_array(cos_cache, "cos_cache"), numpy_helper.from_array(sin_cache, "sin_cache"),
             i64("zero", [0]), i64("half", [half]), i64("rot", [P]), i64("last", [-1]), i64("one", [1])]
    nodes = [helper.make_node("Gather", ["cos_cache", "position_ids"], ["cos_g"], axis=0),
             helper.make_node("Gather", ["sin_cache", "position_ids"], ["sin_g"], axis=0),
             helper.make_node("Concat", ["cos_g", "cos_g"], ["cos_d"], axis=-1),
             helper.make_node("Concat", ["sin_g", "sin_g"], ["sin_d"], axis=-1),
             helper.make_node("Unsqueeze", ["cos_d", "one"], ["cos"]),
             helper.make_node("Unsqueeze", ["sin_d", "one"], ["sin"])]
    for x in ("q", "k"):
        nodes += [helper.make_node("Slice", [x, "zero", "half", "last"], [x + "1"]),
                  helper.make_node("Slice", [x, "half", "rot", "last"], [x + "2"]),
                  helper.make_node("Neg", [x + "2"], [x + "2n"]),
                  helper.make_node("Concat", [x + "2n", x + "1"], [x + "_rot"], axis=-1),
                  helper.make_node("Mul", [x, "cos"], [x + "_c"]),
                  helper.make_node("Mul", [x + "_rot", "sin"], [x + "_s"]),
                  helper.make_node("Add", [x + "_c", x + "_s"], [x + "_embed"])]
    vi = helper.make_tensor_value_info
    graph = helper.make_graph(
        nodes, "main",
        [vi("q", TensorProto.FLOAT, [B, H, S, D]), vi("k", TensorProto.FLOAT, [B, HKV, S, D]),
         vi("position_ids", TensorProto.INT64, [B, S])],
        [vi("q_embed", TensorProto.FLOAT, [B, H, S, D]), vi("k_embed", TensorProto.FLOAT, [B, HKV, S, D])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)

    g = rng("onnx_rotate_half")
    args = [randn(g, B, H, S, D), randn(g, B, HKV, S, D), POSITIONS.copy()]
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "rope.onnx"
        onnx.save(model, str(path))
        sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        outs = sess.run(None, {"q": args[0], "k": args[1], "position_ids": args[2]})
        torch_onnx = pathlib.Path(tmp) / "rope.torch_onnx.mlir"
        subprocess.run([str(BIN / "iree-import-onnx"), str(path), "-o", str(torch_onnx)], check=True,
                       capture_output=True, text=True)
        text = subprocess.run(
            [str(BIN / "iree-opt"), "--pass-pipeline=builtin.module(torch-onnx-to-torch-backend-pipeline,"
             "torch-backend-to-linalg-on-tensors-backend-pipeline)", str(torch_onnx)],
            check=True, capture_output=True, text=True).stdout
    # float64 reference: the graph's arithmetic in numpy float64, with the caches' exact (float64) values
    refs = []
    for x in args[:2]:
        c = np.cos(ang)[args[2]][:, None]                     # Gather + Unsqueeze: [B, 1, S, P/2]
        s_ = np.sin(ang)[args[2]][:, None]
        c, s_ = np.concatenate([c, c], -1), np.concatenate([s_, s_], -1)
        x64 = x.astype(np.float64)
        refs.append(x64 * c + np.concatenate([-x64[..., half:P], x64[..., :half]], -1) * s_)
    fr = freqs_entry(inv64.astype(np.float32), base)
    cache = {"shape": [M, half], "form": "cos_cache/sin_cache initializers [M, P/2] (exact cos/sin rounded to "
             "f32), Gather by position_ids, Concat(c, c) along the last axis", "rows": M}
    ex = [expect(input_arg=i, layout="half", head_dim=D, rotary_dim=D, token_dims=[0, 2], positions=explicit(2),
                 cos_sin="gathered-cache", freqs=fr, cache=cache) for i in (0, 1)]
    return Fixture("onnx_rotate_half", "onnx.helper graph -> iree-import-onnx -> iree-opt "
                   "torch-onnx-to-torch-backend-pipeline,torch-backend-to-linalg-on-tensors-backend-pipeline",
                   "ONNX opset 17 graph built here: Gather(cos/sin cache initializers, position_ids), "
                   "Concat, Unsqueeze, Slice, Neg, Concat, Mul, Add", text, args, refs,
                   [np.asarray(o) for o in outs], ex, config={"rope_theta": base, "cache_rows": M})


FIXTURES: Dict[str, Callable[[], Fixture]] = {
    "llama_computed": fx_llama_computed,
    "llama_computed_matmul": fx_llama_computed_matmul,
    "llama_dynamic": fx_llama_dynamic,
    "llama_cache": fx_llama_cache,
    "qwen2_yarn": fx_qwen2_yarn,
    "glm4_partial_interleaved": fx_glm4,
    "gptj": fx_gptj,
    "gpt_oss": fx_gpt_oss,
    "phi2_partial": fx_phi2,
    "deepseek_v3_interleave": fx_deepseek_v3,
    "qwen2_vl_mrope": fx_qwen2_vl,
    "meta_llama_complex": fx_meta_llama_complex,
    "jax_rotate_half": fx_jax,
    "onnx_rotate_half": fx_onnx,
    "vllm_forward_native": fx_vllm,
}


# -- checks --------------------------------------------------------------------------------------------------
def rel_err(actual, ref) -> float:
    ref = np.asarray(ref, np.float64)
    return float(np.max(np.abs(np.asarray(actual, np.float64) - ref)) / max(np.max(np.abs(ref)), 1e-300))


def reference_from_expect(fx: Fixture, e: dict) -> np.ndarray:
    """rope_mlir.reference.apply with the manifest's parameters (an independent statement of the output)."""
    x = fx.args[e["input_arg"]].astype(np.float64)
    shape = x.shape
    if "view" in e:
        x = x.reshape(e["view"])
    kw: Dict[str, Any] = dict(rotary_dim=e["rotary_dim"], token_dims=e["token_dims"], layout=e["layout"])
    pos = e["positions"]
    if pos["kind"] == "explicit":
        kw["positions"] = fx.args[pos["arg"]].astype(np.int64)
    elif pos["kind"] == "offset":
        kw["offset"] = pos["value"]
    fr = e["freqs"]
    if fr["kind"] == "default":
        kw["base"] = fr["base"]
    elif "scheme" not in fr:      # an f32 table a few ulps off base^(-2i/P): the reference uses the exact one
        kw["base"] = fr["differs_from_default"]["base"]
    else:
        scheme = dict(fr["scheme"])
        kw["base"] = scheme.pop("rope_theta")
        kw["scaling"] = scheme
    if e["mrope"]:
        kw["mrope_section"] = e["mrope"]["section"]
        kw["mrope_interleaved"] = e["mrope"]["interleaved"]
    y = reference.apply(x, **kw)
    if e["output_order"] == "deinterleaved":
        p = e["rotary_dim"]
        rot = y[..., :p]
        y = np.concatenate([rot[..., 0::2], rot[..., 1::2], y[..., p:]], axis=-1)
    return y.reshape(shape)


def magnitude_of(e: dict) -> Optional[float]:
    """The scheme's own magnitude, to compare with the f32 constant the manifest records."""
    fr = e["freqs"]
    if fr["kind"] != "table" or "scheme" not in fr:
        return None
    scheme = dict(fr["scheme"])
    base = scheme.pop("rope_theta")
    _, a = reference.inv_frequencies(e["rotary_dim"], base, scheme, head_dim=e["head_dim"])
    return a


def check_dialects(text: str) -> List[str]:
    bad = set()
    body = text.split("{-#")[0]          # not the dialect_resources blobs
    for m in re.finditer(r"^\s*(?:%[\w#:, %]+=\s*)?\"?([a-z_][\w]*)\.([a-z_][\w.]*)", body, re.M):
        if m.group(1) not in ALLOWED_DIALECTS:
            bad.add(m.group(1) + "." + m.group(2))
    if "util.func" in text or "tm_tensor" in text:
        bad.add("util.func/tm_tensor")
    return sorted(bad)


def iree_run(text: str, args: List[np.ndarray]) -> List[np.ndarray]:
    import iree.compiler as ireec
    import iree.runtime as ireert
    vmfb = ireec.compile_str(text, target_backends=["llvm-cpu"], extra_args=["--iree-llvmcpu-target-cpu=host"])
    module = ireert.load_vm_flatbuffer(vmfb, driver="local-sync")
    res = module.main(*args)
    return [np.asarray(r.to_host() if hasattr(r, "to_host") else r) for r in as_tuple(res)]


def check(fx: Fixture, out_dir: pathlib.Path, iree_check: bool) -> List[str]:
    problems = []
    path = out_dir / f"{fx.name}.mlir"
    r = subprocess.run([MLIR_OPT, str(path), "-o", os.devnull], capture_output=True, text=True)
    if r.returncode != 0:
        problems.append(f"mlir-opt does not parse it: {r.stderr.strip()[:500]}")
    bad = check_dialects(fx.text)
    if bad:
        problems.append(f"non-upstream ops: {bad}")
    if len(re.findall(r"func\.func (?:public )?@", fx.text)) != 1 or "@main(" not in fx.text:
        problems.append("not exactly one func @main")
    fx.errors = {"frontend_vs_ref": [], "ref_vs_rope_reference": [], "iree_vs_frontend": []}
    for i, (y, ref) in enumerate(zip(fx.frontend_outs, fx.refs)):
        err = rel_err(y, ref)
        fx.errors["frontend_vs_ref"].append(err)
        if not err <= FRONTEND_TOL:
            problems.append(f"frontend{i} vs ref{i}: {err:.3g} > {FRONTEND_TOL}")
    for i, e in enumerate(fx.expects):
        err = rel_err(reference_from_expect(fx, e), fx.refs[i])
        fx.errors["ref_vs_rope_reference"].append(err)
        if not err <= SELF_TOL:
            problems.append(f"ref{i} vs rope_mlir.reference with the manifest's parameters: {err:.3g}")
        a = magnitude_of(e)
        if a is not None and float(np.float32(a)) != e["magnitude"]:
            problems.append(f"magnitude {e['magnitude']} is not the scheme's {a} rounded to f32")
    if iree_check:
        try:
            outs = iree_run(fx.text, fx.args)
            for i, (y, f) in enumerate(zip(outs, fx.frontend_outs)):
                err = rel_err(y, f)
                fx.errors["iree_vs_frontend"].append(err)
                if not err <= FRONTEND_TOL:
                    problems.append(f"IREE run of the fixture, output {i}, vs frontend{i}: {err:.3g}")
        except Exception as exc:  # noqa: BLE001
            problems.append(f"IREE run failed: {type(exc).__name__}: {str(exc)[:500]}")
    return problems


# -- manifest -----------------------------------------------------------------------------------------------
def versions() -> Dict[str, str]:
    from importlib import metadata
    out = {"python": sys.version.split()[0]}
    for pkg in ("torch", "transformers", "torch-mlir", "jax", "jaxlib", "iree-base-compiler", "iree-base-runtime",
                "onnx", "onnxruntime", "numpy"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = "absent"
    return out


def func_signature(text: str):
    m = re.search(r"func\.func (?:public )?@(\w+)\(([^)]*)\)", text)
    return m.group(1) if m else None


def manifest_entry(fx: Fixture, vers: Dict[str, str]) -> dict:
    libs = {"torch-mlir fx": ["torch", "transformers", "torch-mlir"], "jax.jit": ["jax", "jaxlib",
            "iree-base-compiler"], "onnx.helper": ["onnx", "onnxruntime", "iree-base-compiler"]}
    key = next(k for k in libs if fx.frontend.startswith(k))
    return {
        "name": fx.name,
        "file": f"{fx.name}.mlir",
        "data": f"{fx.name}.npz",
        "source": fx.source,
        "library_versions": {k: vers[k] for k in libs[key]},
        "frontend": fx.frontend,
        "func": func_signature(fx.text),
        "args": [{"name": f"arg{i}", "shape": list(a.shape), "dtype": str(a.dtype)} for i, a in enumerate(fx.args)],
        "outputs": [{"name": f"ref{i}/frontend{i}", "shape": list(r.shape), "dtype": "f32 (ref: f64)"}
                    for i, r in enumerate(fx.refs)],
        "config": fx.config,
        "expect": fx.expects,
        "notes": fx.notes,
        "checks": {k: [float(f"{v:.3g}") for v in vals] for k, vals in getattr(fx, "errors", {}).items()},
    }


def dump_json(obj) -> str:
    """Indented JSON with arrays of scalars on one line."""
    text = json.dumps(obj, indent=1)
    compact = re.sub(r"\[\s*([^\[\]{}]*?)\s*\]",
                     lambda m: "[" + ", ".join(x.strip() for x in m.group(1).split(",")) + "]"
                     if m.group(1).strip() else "[]", text)
    return compact if json.loads(compact) == json.loads(text) else text


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
    vers = versions()
    failed = []
    for name in names:
        print(f"== {name}", flush=True)
        try:
            fx = FIXTURES[name]()
        except Exception as exc:  # noqa: BLE001  (an exporter failure is recorded, not fatal)
            err = f"{type(exc).__name__}: {exc}"
            print(f"   BLOCKED: {err[:2000]}")
            blocked[name] = {"name": name, "error": err[:4000], "traceback_tail": traceback.format_exc()[-2000:]}
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
        "generated_by": "scripts/gen-frontend-fixtures.py (see its header: environment and command line)",
        "versions": vers,
        "shapes": {"B": B, "H": H, "Hkv": HKV, "S": S, "positions": POSITIONS.tolist(), "seed": SEED},
        "tolerances": {"frontend_vs_ref": FRONTEND_TOL, "ref_vs_rope_reference": SELF_TOL},
        "fixtures": [entries[n] for n in order if n in entries],
        "blocked": [blocked[n] for n in order if n in blocked],
    }
    manifest_path.write_text(dump_json(manifest) + "\n")
    total = sum(p.stat().st_size for p in out_dir.iterdir() if p.is_file())
    print(f"wrote {out_dir} ({total / 1e6:.2f} MB); {len(manifest['fixtures'])} fixtures, "
          f"{len(manifest['blocked'])} blocked")
    if failed:
        print(f"checks FAILED: {failed}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
