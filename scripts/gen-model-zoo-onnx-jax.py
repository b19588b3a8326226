#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The ONNX and JAX members of the model zoo (issue 33; the torch members: scripts/gen-model-zoo.py, whose
models, inputs, float64 references and manifest this script shares). Not run in CI; the files it writes are
committed beside the torch ones in test/Frontends/Inputs/zoo/.

Peers' environment (outside the checkout): /work/peers/bin/python as for gen-model-zoo.py, plus

    /work/peers/bin/pip install jax jaxlib onnxscript
    # versions used: jax/jaxlib 0.10.2, onnxscript 0.7.2 (torch.onnx.export(dynamo=True) needs it; the legacy
    # TorchScript exporter (dynamo=False) fails on these models: "conversion of scaled_dot_product_attention
    # not implemented if enable_gqa is True"), onnx 1.23.2, onnxruntime 1.32.0, iree-base-compiler 3.13.0
    # (iree-import-onnx, iree-opt); all recorded in the manifest entries

Command line (from the repository root; about a minute for all of them on a 2-core machine):

    nice -n 19 /work/peers/bin/python scripts/gen-model-zoo-onnx-jax.py                 # all
    nice -n 19 /work/peers/bin/python scripts/gen-model-zoo-onnx-jax.py llama_onnx      # only these
    options: --out DIR (default test/Frontends/Inputs/zoo), --modes prefill,decode, --list

ONNX members (NAME_onnx: llama, qwen2, phi3): the torch zoo's model NAME, built by gen-model-zoo.py's own
build_pair (same config, seed, weights) and wrapped as there (ModelPrefill / ModelDecode with the KV cache as
arguments and results), run on the same inputs (the seed is the torch member's, so the float64 references are
the same numbers as NAME_MODE.npz's), then
  1. torch.onnx.export(module, args, dynamo=True, opset 20 (torch's default), input names input_ids,
     position_ids, past_key_i/past_value_i; output names logits, present_key_i/present_value_i);
  2. the ONNX graph renamed "main" (onnx.ModelProto.graph.name; torch names it main_graph), so the imported
     function is @main as in every zoo member (scripts/zoo-status.py calls "main");
  3. `iree-import-onnx model.onnx -o m.torch_onnx.mlir` and
     `iree-opt --pass-pipeline='builtin.module(torch-onnx-to-torch-backend-pipeline,
      torch-backend-to-linalg-on-tensors-backend-pipeline)'`: plain func/linalg/tensor/arith/math, weights as
     inline dense<"0x..."> constants (MLIR 22 parses it as is: text unchanged after step 3).
  .npz: arg0.. the inputs, ref0.. float64 (the model's own code in float64, as in the torch zoo), frontend0..
  onnxruntime's f32 outputs of the exported .onnx (CPU provider, graph optimizations off, so ORT computes the
  graph that was imported, not a fused rewrite of it).
  SDPA: opset 20 has no Attention op, so torch's exporter decomposes scaled_dot_product_attention into
  MatMul/Softmax with IsNaN/Where guards (what the IR shows).

JAX member (llama_jax, prefill and decode): a Llama written here in jax.numpy in the MaxText style (layers.py /
attentions.py / embeddings.py of MaxText, transcribed to plain functions): embedding by jnp.take, RMSNorm
(x * rsqrt(mean(x^2) + eps) * scale), RoPE as MaxText's RotaryEmbedding (half split: timescale =
theta ** (2*arange(D/2)/D), angle = position / timescale, [a*cos - b*sin, b*cos + a*sin] concatenated; theta
10000), q scaled by 1/sqrt(head_dim) after the rotation, GQA as MaxText's einsums over [B, T, Hkv, G, D]
("btkgd,bskd->bkgts"), causal mask from broadcasted_iota compares as a bias of DEFAULT_MASK_VALUE
(-0.7 * f32 max) applied by jnp.where(mask >= DEFAULT_MASK_VALUE * 0.5, logits, DEFAULT_MASK_VALUE),
MaxText's compute_local_attention (max, exp(x - max), sum; P·V on the unnormalised exps, then divided by the
sum), SwiGLU MLP (silu(x @ wi_0) * (x @ wi_1) @ wo), final RMSNorm, logits = x @ embedding^T (tied, MaxText's
Embed.attend). Widths as the zoo's common_config (hidden 64, 4 heads / 2 KV heads, head dim 16, MLP 128,
vocab 256, 2 layers); weights drawn with numpy (seeded) and closed over, so they are constants in the IR;
inputs int32 [1, 16] (ids, positions). Decode: one token with the KV cache as arguments ([B, P, Hkv, D], JAX
layout, P = 16) and results ([B, P + 1, Hkv, D]: the cache concatenated with the new keys/values; MaxText
updates a preallocated cache in place, which needs a cache index; the concatenated form is the torch zoo's).
  1. jax.jit(f).lower(*args).as_text() (StableHLO);
  2. `iree-opt --pass-pipeline='builtin.module(func.func(chlo-legalize-to-stablehlo),
     iree-stablehlo-to-iree-input)'`: the RMSNorm's jnp.square / lax.square is chlo.square in JAX 0.10, which
     iree-stablehlo-to-iree-input alone refuses ("failed to legalize operation 'chlo.square' that was
     explicitly marked illegal"; iree-compile's input pipeline legalizes CHLO first, as here). No util.func
     (that comes only from iree-compile's input pipeline); the dialects of every op are checked, so no IREE op
     is kept;
  3. `mlir-opt --inline --symbol-dce` (upstream MLIR 22): JAX emits jnp.take, jnp.where and jax.nn.silu as
     private functions (@_take, @_where, @silu) called from @main; inlined, @main is one function as in the
     other zoo members (the causal mask's select would otherwise sit behind a call).
  .npz: ref0.. from an independent numpy float64 implementation of the same model (written separately below,
  not by running the JAX code in float64), frontend0.. jax.jit's f32 outputs on CPU.

Manifest (shared with gen-model-zoo.py): one entry per NAME with "frontend" ("onnx" / "jax"), "source" (the
torch member or the JAX function), the config, expected counts (2 rotations and 1 attention per layer), and per
mode the same fields as the torch entries (f32 error under "torch_f32_err" for the scripts that read it, and
"frontend_f32_err" naming what it is: onnxruntime's / jax's f32 error vs float64). Size: each .mlir <= 1.5 MB
and the zoo under gen-model-zoo.py's MAX_ZOO_BYTES (48 MB since these members: 8 more files of ~0.8 MB).
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
import time
import traceback
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
BIN = pathlib.Path(sys.executable).parent          # iree-opt, iree-import-onnx live next to the peers' python


def _load(name: str, file: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / file)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


z = _load("gen_model_zoo", "gen-model-zoo.py")
ff, af = z.ff, z.af

ONNX_MODELS = {"llama_onnx": "llama", "qwen2_onnx": "qwen2", "phi3_onnx": "phi3"}
JAX_MODELS = ["llama_jax"]
ALL = list(ONNX_MODELS) + JAX_MODELS


def run(cmd: List[str]) -> str:
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{pathlib.Path(cmd[0]).name} failed: {r.stderr.strip()[-3000:]}")
    return r.stdout


def check_plain(text: str) -> None:
    bad = ff.check_dialects(text)
    if bad:
        raise RuntimeError(f"non-upstream ops in the IR: {bad}")


# -- ONNX --------------------------------------------------------------------------------------------------------
def torch_inputs(base: str, s: dict, mode: str, m, m64):
    """The torch zoo's inputs for model `base` in `mode` (gen-model-zoo.run_mode's seed and construction), the
    f32 and float64 modules, and the float64 outputs."""
    import torch
    g = torch.Generator().manual_seed(z.SEED + sum(map(ord, base + mode)))
    B, S, P = s["batch"], s["seq"], s["past"]
    V = m.config.vocab_size
    facts: Dict[str, Any] = {}
    if mode == "prefill":
        ids = torch.randint(3, V, (B, S), generator=g)
        pos = z.positions_for(s, 0, S, False)
        args = [ids, pos]
        mod, mod64 = z.Prefill.module(m), z.Prefill.module(m64)
        names = ["input_ids", "position_ids"]
    else:
        prefix = torch.randint(3, V, (B, P), generator=g)
        tok = torch.randint(3, V, (B, 1), generator=g)
        ppos = z.positions_for(s, 0, P, False)
        pos = z.positions_for(s, P, 1, False)
        kv = z.cache_tensors(m, prefix, ppos, P)
        args = [tok, pos] + kv
        mod, mod64 = z.decode_module(m, P), z.decode_module(m64, P)
        names = ["input_ids", "position_ids"] + [f"past_{kind}_{i}" for i in range(len(kv) // 2)
                                                 for kind in ("key", "value")]
        facts["cache_shapes"] = [list(t.shape) for t in kv]
    with torch.no_grad():
        outs = [o.detach().numpy().copy() for o in ff.as_tuple(mod(*args))]
    with ff.float64_mode(), torch.no_grad():
        refs = [o.detach().numpy().astype(np.float64) for o in ff.as_tuple(mod64(*z.to64(args)))]
    return args, names, mod, refs, outs, facts


def run_onnx(name: str, mode: str) -> dict:
    import onnx
    import onnxruntime as ort
    import torch
    base = ONNX_MODELS[name]
    s = z.MODELS[base]
    cfg, m, m64 = z.build_pair(s)
    args, in_names, mod, refs, torch_outs, facts = torch_inputs(base, s, mode, m, m64)
    n_layers = z.layer_count(cfg)
    out_names = ["logits"] + ([f"present_{kind}_{i}" for i in range(n_layers) for kind in ("key", "value")]
                              if mode == "decode" else [])
    ff.make_buffers_persistent(mod)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        onnx_path = tmp / "model.onnx"
        t0 = time.time()
        torch.onnx.export(mod, tuple(args), str(onnx_path), dynamo=True, input_names=in_names,
                          output_names=out_names)
        facts["export_s"] = round(time.time() - t0, 1)
        model = onnx.load(str(onnx_path))
        graph_outs = [o.name for o in model.graph.output]
        graph_ins = [i.name for i in model.graph.input]
        if graph_ins != in_names:
            raise RuntimeError(f"ONNX inputs {graph_ins} != {in_names}")
        facts["opset"] = {o.domain or "ai.onnx": o.version for o in model.opset_import}
        facts["onnx_ops"] = dict(sorted(__import__("collections").Counter(n.op_type for n in model.graph.node)
                                        .items()))
        model.graph.name = "main"
        onnx.save(model, str(onnx_path), save_as_external_data=False)
        so = ort.SessionOptions()
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        so.intra_op_num_threads = 1
        sess = ort.InferenceSession(str(onnx_path), so, providers=["CPUExecutionProvider"])
        feeds = {n: a.numpy() for n, a in zip(in_names, args)}
        ort_outs = sess.run(graph_outs, feeds)
        # Outputs the exporter added ahead of the user outputs (buffers the forward assigns) would shift the
        # results; the graph's outputs must be exactly the named ones.
        if graph_outs != out_names:
            raise RuntimeError(f"ONNX outputs {graph_outs} != {out_names}")
        torch_onnx = tmp / "m.torch_onnx.mlir"
        run([str(BIN / "iree-import-onnx"), str(onnx_path), "-o", str(torch_onnx)])
        text = run([str(BIN / "iree-opt"), "--pass-pipeline=builtin.module(torch-onnx-to-torch-backend-pipeline,"
                    "torch-backend-to-linalg-on-tensors-backend-pipeline)", str(torch_onnx)])
    check_plain(text)
    facts["torch_eager_f32_err"] = ff.rel_err(torch_outs[0], refs[0])
    facts["ort_vs_torch_f32"] = ff.rel_err(ort_outs[0], torch_outs[0])
    export = {"exporter": "torch.onnx.export(dynamo=True)", "opset": facts.pop("opset"),
              "input_names": in_names, "output_names": out_names,
              "importer": "iree-import-onnx; iree-opt torch-onnx-to-torch-backend-pipeline,"
                          "torch-backend-to-linalg-on-tensors-backend-pipeline",
              "graph_name": "main (renamed from torch's main_graph)",
              "onnxruntime": "CPUExecutionProvider, ORT_DISABLE_ALL, 1 thread",
              "attn_implementation": s["attn"], "batch": s["batch"], "position_offsets": s["offsets"],
              "tokens": s["seq"] if mode == "prefill" else 1, "past": None if mode == "prefill" else s["past"],
              "wrapper": "ModelPrefill" if mode == "prefill" else "ModelDecode (DynamicCache)",
              "patches": ["transformers.masking_utils.find_packed_sequence_indices -> None (as the torch zoo)",
                          "non-persistent buffers re-registered persistent (as the torch zoo)"]}
    return {"cfg": cfg, "text": text, "args": [a.numpy().copy() for a in args], "refs": refs,
            "outs": [np.asarray(o) for o in ort_outs], "facts": facts, "export": export,
            "source": f"transformers {s['model_type']} (the torch zoo's `{base}`: same config, weights, inputs)",
            "config": z.plain(s["config"]), "notes": s["notes"], "model_type": s["model_type"]}


# -- JAX: a MaxText-style Llama ------------------------------------------------------------------------------------
JAX_CFG = dict(hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=16, intermediate_size=128,
               vocab_size=256, num_hidden_layers=2, rope_theta=10000.0, rms_norm_eps=1e-6,
               tie_word_embeddings=True)
JAX_SEQ, JAX_PAST = 16, 16
DEFAULT_MASK_VALUE = -0.7 * float(np.finfo(np.float32).max)      # MaxText's


def jax_weights() -> dict:
    c = JAX_CFG
    Hd, N, K, D, I, V = (c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"],
                         c["intermediate_size"], c["vocab_size"])
    g = np.random.default_rng(z.SEED)

    def w(*shape, scale):
        return (g.standard_normal(shape) * scale).astype(np.float32)
    layers = [dict(pre_norm=(1 + w(Hd, scale=0.1)), wq=w(Hd, N, D, scale=Hd ** -0.5),
                   wk=w(Hd, K, D, scale=Hd ** -0.5), wv=w(Hd, K, D, scale=Hd ** -0.5),
                   wo=w(N, D, Hd, scale=(N * D) ** -0.5), post_norm=(1 + w(Hd, scale=0.1)),
                   wi_0=w(Hd, I, scale=Hd ** -0.5), wi_1=w(Hd, I, scale=Hd ** -0.5), wo_mlp=w(I, Hd, scale=I ** -0.5))
              for _ in range(c["num_hidden_layers"])]
    return {"embedding": w(V, Hd, scale=1.0), "layers": layers, "final_norm": 1 + w(Hd, scale=0.1)}


def jax_llama(W: dict):
    """(prefill, decode) in jax.numpy, MaxText style; W's arrays are closed over (IR constants)."""
    import jax
    import jax.numpy as jnp
    c = JAX_CFG
    N, K, D = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]

    def rms_norm(x, scale):
        y = x * jax.lax.rsqrt(jnp.mean(jnp.square(x), axis=-1, keepdims=True) + c["rms_norm_eps"])
        return y * scale

    def rotary(inputs, position):                                  # MaxText RotaryEmbedding.__call__
        half = D // 2
        fraction = 2 * jnp.arange(0, half) / D
        timescale = 1.0 * (c["rope_theta"] / 1.0) ** fraction
        position = position[:, :, jnp.newaxis, jnp.newaxis]
        sinusoid_inp = position / timescale
        sin = jnp.sin(sinusoid_inp).astype(inputs.dtype)
        cos = jnp.cos(sinusoid_inp).astype(inputs.dtype)
        first_half, second_half = jnp.split(inputs, 2, axis=-1)
        first_part = first_half * cos - second_half * sin
        second_part = second_half * cos + first_half * sin
        return jnp.concatenate((first_part, second_part), axis=-1)

    def causal_bias(q_pos, k_pos):                                   # [T] and [S] positions -> [1, 1, 1, T, S]
        mask = k_pos[None, :] <= q_pos[:, None]
        return jnp.where(mask[None, None, None], 0.0, DEFAULT_MASK_VALUE)

    def attention_op(query, key, value, bias):                        # MaxText AttentionOp.apply_attention_dot
        B, T = query.shape[:2]
        query = jnp.reshape(query, (B, T, K, N // K, D))
        attn_weights = jnp.einsum("btkgd,bskd->bkgts", query, key)
        attn_weights = jnp.where(bias >= DEFAULT_MASK_VALUE * 0.5, attn_weights, DEFAULT_MASK_VALUE)
        local_max = jnp.max(attn_weights, axis=-1, keepdims=True)
        local_exps = jnp.exp(attn_weights - local_max)
        local_sum = jnp.sum(local_exps, axis=-1, keepdims=True)
        local_out = jnp.einsum("bkgts,bskd->btkgd", local_exps, value)
        local_sum = jnp.moveaxis(local_sum, -2, 1)                   # [B, T, K, G, 1]
        out = local_out / local_sum
        return jnp.reshape(out, (B, T, N, D))

    def attention(x, position, lw, cache):
        q = jnp.einsum("btd,dnh->btnh", x, lw["wq"])
        k = jnp.einsum("btd,dnh->btnh", x, lw["wk"])
        v = jnp.einsum("btd,dnh->btnh", x, lw["wv"])
        q = rotary(q, position)
        k = rotary(k, position)
        q = q / jnp.sqrt(D).astype(q.dtype)
        if cache is not None:
            k = jnp.concatenate([cache[0], k], axis=1)
            v = jnp.concatenate([cache[1], v], axis=1)
        T, S = q.shape[1], k.shape[1]
        bias = causal_bias(jax.lax.broadcasted_iota(jnp.int32, (T,), 0) + (S - T),
                           jax.lax.broadcasted_iota(jnp.int32, (S,), 0))
        out = attention_op(q, k, v, bias)
        return jnp.einsum("btnh,nhd->btd", out, lw["wo"]), (k, v)

    def mlp(x, lw):
        return jnp.einsum("bti,id->btd", jax.nn.silu(x @ lw["wi_0"]) * (x @ lw["wi_1"]), lw["wo_mlp"])

    def decoder(ids, position, caches):
        x = jnp.take(W["embedding"], ids, axis=0)
        new = []
        for i, lw in enumerate(W["layers"]):
            a, kv = attention(rms_norm(x, lw["pre_norm"]), position, lw, None if caches is None else caches[i])
            new.append(kv)
            x = x + a
            x = x + mlp(rms_norm(x, lw["post_norm"]), lw)
        x = rms_norm(x, W["final_norm"])
        return jnp.einsum("btd,vd->btv", x, W["embedding"]), new

    def prefill(ids, position):
        return decoder(ids, position, None)[0]

    def decode(ids, position, *kv):
        logits, new = decoder(ids, position, [(kv[2 * i], kv[2 * i + 1]) for i in range(len(kv) // 2)])
        return (logits,) + tuple(t for pair in new for t in pair)
    return prefill, decode


def numpy_llama(W: dict, ids, position, kv=None):
    """The same model in numpy float64, written independently of the JAX code (standard formulas: RoPE as
    rotate_half with inv_freq = theta^(-2i/D), softmax with -inf masking, repeat_kv for GQA)."""
    c = JAX_CFG
    N, K, D = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
    f = {k: v for k, v in W.items()}

    def d(a):
        return np.asarray(a, np.float64)

    def norm(x, s):
        return x / np.sqrt((x ** 2).mean(-1, keepdims=True) + c["rms_norm_eps"]) * d(s)

    inv_freq = c["rope_theta"] ** (-np.arange(0, D, 2, dtype=np.float64) / D)          # [D/2]

    def rope(x, pos):                                                  # x [B, T, H, D], pos [B, T]
        ang = pos.astype(np.float64)[:, :, None] * inv_freq              # [B, T, D/2]
        ang = np.concatenate([ang, ang], -1)[:, :, None, :]
        rot = np.concatenate([-x[..., D // 2:], x[..., :D // 2]], -1)
        return x * np.cos(ang) + rot * np.sin(ang)

    x = d(f["embedding"])[ids]
    B, T = ids.shape
    new = []
    for i, lw in enumerate(f["layers"]):
        h = norm(x, lw["pre_norm"])
        q = np.einsum("btd,dnh->btnh", h, d(lw["wq"]))
        k = np.einsum("btd,dnh->btnh", h, d(lw["wk"]))
        v = np.einsum("btd,dnh->btnh", h, d(lw["wv"]))
        q, k = rope(q, position), rope(k, position)
        if kv is not None:
            k = np.concatenate([d(kv[2 * i]), k], 1)
            v = np.concatenate([d(kv[2 * i + 1]), v], 1)
        new += [k, v]
        S = k.shape[1]
        kr, vr = np.repeat(k, N // K, axis=2), np.repeat(v, N // K, axis=2)     # head n uses KV head n // G
        sc = np.einsum("bthd,bshd->bhts", q, kr) / np.sqrt(D)
        allowed = np.arange(S)[None, :] <= (np.arange(T)[:, None] + S - T)
        sc = np.where(allowed, sc, -np.inf)
        p = np.exp(sc - sc.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        o = np.einsum("bhts,bshd->bthd", p, vr)
        x = x + np.einsum("btnh,nhd->btd", o, d(lw["wo"]))
        h = norm(x, lw["post_norm"])
        gate = h @ d(lw["wi_0"])
        x = x + ((gate / (1 + np.exp(-gate))) * (h @ d(lw["wi_1"]))) @ d(lw["wo_mlp"])
    x = norm(x, f["final_norm"])
    return [x @ d(f["embedding"]).T] + new


def run_jax(name: str, mode: str) -> dict:
    import jax
    jax.config.update("jax_platforms", "cpu")
    W = jax_weights()
    prefill, decode = jax_llama(W)
    c = JAX_CFG
    g = np.random.default_rng(z.SEED + sum(map(ord, name + mode)))
    V, K, D = c["vocab_size"], c["num_key_value_heads"], c["head_dim"]
    facts: Dict[str, Any] = {}
    if mode == "prefill":
        ids = g.integers(3, V, (1, JAX_SEQ)).astype(np.int32)
        pos = np.arange(JAX_SEQ, dtype=np.int32)[None]
        args, fn = [ids, pos], prefill
    else:
        # The cache: what the f32 JAX model itself computes on a prefix (its prefill keys/values, rotated).
        prefix = g.integers(3, V, (1, JAX_PAST)).astype(np.int32)
        tok = g.integers(3, V, (1, 1)).astype(np.int32)
        ppos = np.arange(JAX_PAST, dtype=np.int32)[None]
        zero = [np.zeros((1, 0, K, D), np.float32)] * (2 * c["num_hidden_layers"])
        kv = [np.asarray(t) for t in jax.jit(decode)(prefix, ppos, *zero)[1:]]
        args, fn = [tok, np.array([[JAX_PAST]], np.int32)] + kv, decode
        facts["cache_shapes"] = [list(t.shape) for t in kv]
        # Self-check (float64 numpy): decode on the float64 model's own prefix cache vs the full sequence.
        kv64 = numpy_llama(W, prefix, ppos)[1:]
        step = numpy_llama(W, tok, args[1], kv64)[0]
        full = numpy_llama(W, np.concatenate([prefix, tok], 1), np.arange(JAX_PAST + 1)[None])[0]
        facts["decode_vs_prefill_f64"] = ff.rel_err(step[:, -1], full[:, -1])
    t0 = time.time()
    stablehlo = jax.jit(fn).lower(*args).as_text()
    facts["export_s"] = round(time.time() - t0, 1)
    outs = [np.asarray(o) for o in ff.as_tuple(jax.jit(fn)(*args))]
    refs = numpy_llama(W, args[0], args[1], args[2:] if mode == "decode" else None)
    refs = refs[:1] if mode == "prefill" else refs
    with tempfile.TemporaryDirectory() as tmp:
        src = pathlib.Path(tmp) / "in.stablehlo.mlir"
        src.write_text(stablehlo)
        lin = pathlib.Path(tmp) / "linalg.mlir"
        lin.write_text(run([str(BIN / "iree-opt"), "--pass-pipeline=builtin.module(func.func("
                            "chlo-legalize-to-stablehlo),iree-stablehlo-to-iree-input)", str(src)]))
        text = run([z.MLIR_OPT, "--inline", "--symbol-dce", str(lin)])
    check_plain(text)
    if re.search(r"\bfunc\.call\b", text) or len(re.findall(r"func\.func", text)) != 1:
        raise RuntimeError("after --inline the module still has calls or more than one function")
    export = {"exporter": "jax.jit(f).lower(*args).as_text() (StableHLO)",
              "importer": "iree-opt --pass-pipeline=builtin.module(func.func(chlo-legalize-to-stablehlo),"
                          "iree-stablehlo-to-iree-input); "
                          "mlir-opt --inline --symbol-dce",
              "weights": "numpy (seeded), closed over: IR constants", "batch": 1, "position_offsets": [0],
              "tokens": JAX_SEQ if mode == "prefill" else 1, "past": None if mode == "prefill" else JAX_PAST,
              "cache_layout": None if mode == "prefill" else "[B, P, Hkv, D] in, [B, P + 1, Hkv, D] out",
              "position_dtype": "int32"}
    return {"cfg": None, "text": text, "args": args, "refs": refs, "outs": outs, "facts": facts,
            "export": export, "config": dict(JAX_CFG, rope="MaxText RotaryEmbedding (half split), theta 1e4"),
            "source": "scripts/gen-model-zoo-onnx-jax.py: jax_llama (MaxText-style Llama in jax.numpy); "
                      "reference numpy_llama (float64)",
            "notes": "MaxText-style Llama in jax.numpy: RMSNorm, half-split RoPE (MaxText RotaryEmbedding), "
                     "GQA einsums, iota causal mask as a DEFAULT_MASK_VALUE bias, local-softmax attention "
                     "(P·V on exps, then / sum), SwiGLU, tied embedding", "model_type": "llama (jax)"}


# -- driver --------------------------------------------------------------------------------------------------------
def versions() -> Dict[str, str]:
    v = ff.versions()
    from importlib import metadata
    for pkg in ("onnxscript",):
        try:
            v[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            v[pkg] = "absent"
    return v


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help="members to (re)generate (default: all)")
    ap.add_argument("--out", type=pathlib.Path, default=z.DEFAULT_OUT)
    ap.add_argument("--modes", default="prefill,decode")
    ap.add_argument("--list", action="store_true")
    opts = ap.parse_args(argv)
    if opts.list:
        print("\n".join(ALL))
        return 0
    names = opts.names or ALL
    unknown = [n for n in names if n not in ALL]
    if unknown:
        ap.error(f"unknown members {unknown}; --list shows them")
    import torch  # noqa: F401  (before anything else native)
    import warnings
    warnings.filterwarnings("ignore")
    z.patch_transformers()
    out_dir = opts.out
    manifest_path = out_dir / "manifest.json"
    vers = {k: x for k, x in versions().items() if k in ("python", "torch", "transformers", "onnx", "onnxruntime",
                                                         "onnxscript", "jax", "jaxlib", "iree-base-compiler",
                                                         "numpy")}
    results: Dict[str, dict] = {}
    failures: Dict[tuple, dict] = {}
    for name in names:
        entry = {"name": name}
        for mode in opts.modes.split(","):
            stem = f"{name}_{mode}"
            print(f"== {stem}", flush=True)
            for suffix in (".mlir", ".npz"):
                (out_dir / f"{stem}{suffix}").unlink(missing_ok=True)
            try:
                r = run_onnx(name, mode) if name in ONNX_MODELS else run_jax(name, mode)
                problem = z.parse_check(r["text"])
                if problem:
                    raise RuntimeError(problem)
                size = len(r["text"].encode())
                if size > z.MAX_MLIR_BYTES:
                    raise RuntimeError(f"size budget: {stem}.mlir would be {size} bytes > {z.MAX_MLIR_BYTES}")
                current = sum(p.stat().st_size for p in out_dir.iterdir() if p.is_file()
                              and p.name != "manifest.json")
                if current + size > z.MAX_ZOO_BYTES:
                    raise RuntimeError(f"size budget: the zoo would be {current + size} bytes > {z.MAX_ZOO_BYTES}")
            except Exception as exc:  # noqa: BLE001  (recorded, not fatal)
                err = f"{type(exc).__name__}: {exc}"
                print(f"   BLOCKED: {err[:1500]}", flush=True)
                failures[(name, mode)] = {"name": name, "mode": mode, "error": err[:6000],
                                          "traceback_tail": traceback.format_exc()[-1500:]}
                continue
            (out_dir / f"{stem}.mlir").write_text(r["text"])
            arrays = {f"arg{i}": a for i, a in enumerate(r["args"])}
            arrays.update({f"ref{i}": np.asarray(x, np.float64) for i, x in enumerate(r["refs"])})
            arrays.update({f"frontend{i}": np.asarray(x, np.float32) for i, x in enumerate(r["outs"])})
            np.savez_compressed(out_dir / f"{stem}.npz", **arrays)
            f = r["facts"]
            err = ff.rel_err(r["outs"][0], r["refs"][0])
            frontend = "onnx" if name in ONNX_MODELS else "jax"
            layers = r["cfg"].num_hidden_layers if r["cfg"] is not None else JAX_CFG["num_hidden_layers"]
            entry.update({"model_type": r["model_type"], "frontend": frontend, "source": r["source"],
                          "notes": r["notes"], "config": r["config"],
                          "expected": {"rotations": 2 * layers, "attentions": layers,
                                       "rope_layers": list(range(layers)),
                                       "note": "rotations: q and k of every layer that applies RoPE; "
                                               "attentions: one per layer"}})
            info = {"file": f"{stem}.mlir", "data": f"{stem}.npz",
                    "mlir_bytes": (out_dir / f"{stem}.mlir").stat().st_size,
                    "npz_bytes": (out_dir / f"{stem}.npz").stat().st_size,
                    "signature": af.signature(r["text"]),
                    "args": [{"name": f"arg{i}", "shape": list(a.shape), "dtype": str(a.dtype)}
                             for i, a in enumerate(r["args"])],
                    "outputs": [{"name": f"ref{i}/frontend{i}", "shape": list(np.shape(x))}
                                for i, x in enumerate(r["refs"])],
                    "export_options": r["export"],
                    "logits_result": 0, "leading_results": [],
                    "frontend_f32": "onnxruntime" if frontend == "onnx" else "jax.jit (CPU)",
                    "frontend_f32_err": float(f"{err:.3g}"),
                    "torch_f32_err": float(f"{err:.3g}"),
                    "torch_f32_err_outputs": [float(f"{ff.rel_err(o, x):.3g}") for o, x in zip(r["outs"], r["refs"])],
                    "export_s": f.get("export_s"), "ir_caveats": z.ir_caveats(r["text"])}
            for k in ("cache_shapes", "torch_eager_f32_err", "ort_vs_torch_f32", "onnx_ops"):
                if k in f:
                    info[k] = float(f"{f[k]:.3g}") if isinstance(f[k], float) else f[k]
            if "decode_vs_prefill_f64" in f:
                info["decode_vs_prefill_f64"] = float(f"{f['decode_vs_prefill_f64']:.3g}")
            entry.setdefault("modes", {})[mode] = info
            entry["versions"] = vers
            print(f"   {info['mlir_bytes'] / 1e3:.0f} KB, {info['frontend_f32']} f32 err {err:.2e}", flush=True)
        results[name] = entry
    # Merge into the shared manifest (read it fresh: the torch generator and other sessions write it too).
    manifest = json.loads(manifest_path.read_text())
    models = manifest.setdefault("models", [])
    index = {e["name"]: i for i, e in enumerate(models)}
    for name, entry in results.items():
        if name in index:
            old = models[index[name]]
            modes = dict(old.get("modes", {}))
            modes.update(entry.get("modes", {}))
            for mode in opts.modes.split(","):
                if (name, mode) in failures:
                    modes.pop(mode, None)
            entry["modes"] = modes
            if "frontend" not in entry:
                entry = dict(old, modes=modes)
            models[index[name]] = entry
        elif entry.get("modes"):
            models.append(entry)
    manifest["models"] = [e for e in models if e.get("modes")]
    blocked = [b for b in manifest.get("blocked", []) if (b["name"], b["mode"]) not in
               {(n, m) for n in names for m in opts.modes.split(",")}]
    manifest["blocked"] = blocked + list(failures.values())
    total = sum(p.stat().st_size for p in out_dir.iterdir() if p.is_file() and p.name != "manifest.json")
    manifest.setdefault("budget", {}).update({"max_mlir_bytes": z.MAX_MLIR_BYTES, "max_zoo_bytes": z.MAX_ZOO_BYTES,
                                              "zoo_bytes": total})
    text = af.dump_json(manifest)
    assert json.loads(text) == manifest
    manifest_path.write_text(text + "\n")
    print(f"wrote {out_dir} ({total / 1e6:.1f} MB); {len(failures)} blocked (member, mode)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
