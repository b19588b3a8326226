#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Attention scores with RoPE, S = R(q)·R(k)ᵀ: the rotations fused into the
contraction's tile loops (`--rope-fuse-into-attention`) against rotating Q
and K whole first, whole attention against onnxruntime, and Hugging Face's
Llama-3-8B attention layer as torch-mlir exports it against its peers, all
measured in the same run (f32; one thread, and all cores where a column
says so).

    python3 bench/attention_bench.py               # the tables (tens of min)
    python3 bench/attention_bench.py --quick       # small shapes, few samples
    python3 bench/attention_bench.py --smoke       # tiny shapes (the pytest)
    python3 bench/attention_bench.py --write-docs  # and writes the (hf) report
        # between <!-- BEGIN attention_bench_hf --> and <!-- END
        # attention_bench_hf --> of docs/PERFORMANCE.md (section appended
        # when absent); --write-docs FILE writes FILE instead
    /work/peers/bin/python bench/attention_bench.py   # with torch,
        # transformers, torch-mlir, IREE importable: the (hf) rows
    --sections a,b,w,c,hf,bf16,hf-bf16   only these sections (default:
        all but bf16 and hf-bf16; bf16: rope.attention on Llama-3-8B's
        shapes with f32 and with bf16 Q, K, V, at the (hf) lengths, with the
        bf16 error vs float64, and on hosts with AMX a last column with
        contraction-bf16-products=amx; hf-bf16: the (hf) layer in bf16,
        below);
    --hf-prefill 512,1024 --hf-decode 4096   the (hf), (bf16) and (hf-bf16)
        lengths instead of the mode's; --markdown prints the (hf) and
        (hf-bf16) reports as markdown

(a) decode: S_q = 1 at a per-row offset, GQA (32 query heads, 8 KV heads,
    D = 128), a K cache of 1K-16K keys stored un-rotated: fused (each key
    tile rotated in the key loop; fuse-key=auto does this when the query
    dim is one tile) vs rope-then-matmul, and vs fusing Q only.
(b) prefill: S_q = S_k = 512-4096, 2 heads, D = 64: fused Q only
    (fuse-key=auto), fused Q and K (fuse-key=always: each key rotated once
    per query tile), unfused, and plain Q·Kᵀ without any rotation.
(w) whole attention softmax(scale·R(q)·R(k)ᵀ + mask)·V: fused into one loop
    nest with an online softmax (whole-attention, the default) vs the same
    IR compiled unfused (whole scores, linalg.softmax decomposed); decode as
    in (a), and causal prefill as in (b).
(c) whole attention as in (w), fused, vs onnxruntime's contrib op
    com.microsoft::GroupQueryAttention with do_rotary=1 (CPU): decode as in
    (a) (ORT gets the past keys already rotated, in float64, in a KV buffer
    it shares between past_key and present_key through IOBinding, and
    rotates the one new key; ours gets the un-rotated cache), causal
    prefill as in (b) (S = 512-4096). Both on one thread and on all cores
    (ours: the batch/head/query-tile loops are an scf.forall, run by
    OpenMP with rope-to-llvm-cpu{num-threads=N}).
Times in (a)-(c) are medians of repeated calls (warm-up excluded) of the
compiled function through ctypes; every output is checked against the
unfused one first (in (c), ORT's against ours). Ratios > 1 mean the fused
form (in (c): ours) is faster.

(hf) Hugging Face Llama-3-8B's attention layer (Hq = 32, Hkv = 8, D = 128,
    f32, rope_theta 500000, B = 1) from transformers' own code, the lines of
    LlamaAttention.forward after the q/k/v projections: LlamaRotaryEmbedding
    from position_ids, apply_rotary_pos_emb, eager_attention_forward (GQA by
    repeat_kv, scores · 1/sqrt(128) + an additive mask, softmax, · V, output
    [B, S, Hq, D]). Built by scripts/gen-attention-fixtures.py's own
    builders (loaded by file path; the fixtures hf_llama_eager and
    hf_llama_decode at this bench's shapes), exported at bench time by
    torch_mlir.fx.export_and_import to linalg on tensors (func @main):
      prefill S    q [1, 32, S, 128], k, v [1, 8, S, 128], position_ids
                   0..S-1, HF's causal eager mask [1, 1, S, S] (0 /
                   finfo(f32).min); S = 512, 1024, 2048, 4096;
      decode L     one query (S_q = 1) at the row's position L-1 against an
                   un-rotated K cache of L keys rotated inside the function
                   at positions 0..L-1 (torch.arange), V cache [1, 8, L,
                   128], HF's 4-D mask masking keys beyond the row's position
                   (none here: the row is at L-1); L = 1K, 4K, 16K.
    Columns, each on one thread ("1T") and on all cores ("<N>T" rows), each
    the library's public call on the same inputs:
      fused      rope_mlir.jit(text) (the default pipeline: rope-optimize,
                 which raises the RoPE to rope.apply and the attention to
                 rope.attention and tiles/fuses it, then rope-to-llvm-cpu;
                 all cores: rope-to-llvm-cpu{... num-threads=N}); argument
                 checks, the compiled code, the result adopted by numpy;
      un-raised  the same text through rope_mlir.jit(text, pipeline=
                 "builtin.module(rope-to-llvm-cpu{emit-c-interface=true})")
                 (num-threads=N added for all cores): lowered as exported;
      ORT GQA    onnxruntime com.microsoft::GroupQueryAttention(do_rotary=1)
                 as in (c) (decode: the L-1 past keys pre-rotated in float64
                 outside the timing, the new key rotated by ORT; prefill: all
                 S keys rotated by ORT), intra_op_num_threads = 1 or N;
      eager      the torch module (torch.set_num_threads(1 or N), no_grad);
      SDPA       the same RoPE lines, then
                 torch.nn.functional.scaled_dot_product_attention:
                 prefill through transformers' own sdpa_attention_forward
                 (is_causal=True, enable_gqa=True, no mask argument), decode
                 with the additive mask and enable_gqa=True;
      Inductor   torch.compile(eager module) (Inductor, CPU), compiled
                 separately for 1 and N threads (its C++ kernels specialize
                 on the thread count);
      IREE       iree.compiler.compile_str(text, llvm-cpu, host CPU), run by
                 iree.runtime's local-sync driver (1T) or local-task with
                 --task_topology_group_count=N; inputs uploaded once, the
                 result left as IREE's device array.
      IREE+pre   the same after our pre-pass for other compilers,
                 rope-optimize{portable=true} (upstream linalg, the exact
                 angle without f64; docs/IREE.md), compiled and run as IREE.
    A column is "n/a" when its package is missing or the call fails (the
    reason is printed); without torch, transformers and torch-mlir the (hf)
    rows are skipped with one line saying why. Times: single thread, the
    columns' samples interleaved round by round (bench/cpu_bench.py's
    measure_interleaved); all cores, one column after another with a pause
    between (spinning OpenMP workers). Every output is checked against a
    reference in the same run: numpy float64 (gen-attention-fixtures'
    attention_reference, from the fixture's `expect`) where Hq·S_q·S_k <=
    2^25 (the decode rows and prefill up to S = 1024), else torch eager's
    f32 output; max relative error max|y - r| / max|r| above 1e-2 aborts
    the run (exit status 2). Ratios X/fused > 1: fused is faster. The
    targets are printed under the tables as computed ratios.
    Limits (issue 35): before the rows, bench/_limits.py probes one thread's
    f32 FMA peak (a register-resident FMA loop of the host's vector width,
    compiled by our JIT) and its warm read bandwidth over as many bytes as
    each decode row's K and V; a table gives fused's, SDPA's and ORT's
    GFLOP/s of the causal work (prefill: the lower triangle, 4·Hq·D per
    query-key pair) over n × the peak, and GB/s of K and V (decode) over
    that read bandwidth (1T rows).

(hf-bf16) the (hf) layer in bf16, as Hugging Face models run it (issue 35
    item 5; `--sections hf-bf16`, not in the default; one thread): each
    (hf) case (prefill S = 512, 1024, 2048; decode L = 1K, 4K, 16K; --quick
    and --smoke take the (hf) lengths) with the module converted as
    transformers loads a model with dtype=torch.bfloat16 (the layer has no
    parameters; its rotary inv_freq stays f32, as from_pretrained leaves it:
    module.to(torch.bfloat16) would round it and every angle with it), Q, K,
    V (decode: the K and V cache) rounded to bf16, position_ids int64, and
    the mask built by masking_utils.eager_mask(dtype=torch.bfloat16) (0 /
    finfo(bf16).min, as transformers builds it for a bf16 model), exported
    by torch-mlir with those bf16 arguments. The rope ops rope-optimize
    raises are printed. Columns, each on the same values:
      ours bf16   rope_mlir.jit(bf16 text) (default pipeline), bf16 in/out;
      eager bf16  the torch module on the bf16 tensors (HF's
                  eager_attention_forward: bf16 matmuls, softmax in f32, P
                  rounded to bf16, bf16 output);
      SDPA bf16   the (hf) SDPA module on the bf16 tensors;
      ours f32    rope_mlir.jit of the f32 export (the (hf) fused column) on
                  the same bf16-rounded values in f32: ours f32/ours bf16 is
                  bf16's speedup, measured in the same run.
    ORT: no column where onnxruntime's CPU provider has no bf16
    com.microsoft::GroupQueryAttention or MultiHeadAttention (asked at run
    time; the reason is printed as "n/a: ORT: ..."). Every output is
    checked against the float64 reference of the same bf16-rounded inputs
    (Hq·S_q·S_k <= 2^25, else torch eager f32 on the same values); max
    relative error above 3e-2 (bf16 columns) or 1e-2 (ours f32) exits with
    status 2. Times: cpu_bench's measure_interleaved, the (hf) timing
    modes. Rates: prefill, ours' causal GFLOP/s over the probed f32 FMA peak
    and bf16 vdpbf16ps peak (bench/_limits.py); decode, GB/s of the bf16 K
    and V read (over the probed read bandwidth of as many bytes).
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import os
import pathlib
import platform
import statistics
import sys
import time
from typing import Dict, List, Optional, Tuple

# torch (and triton) before anything loads rope-mlir's library
# (FRONTENDS.md: else triton segfaults); only the (hf) section uses them.
try:
    import torch
    torch.set_num_threads(1)
    try:
        import triton  # noqa: F401
    except Exception:  # noqa: BLE001
        pass
except Exception:  # noqa: BLE001
    torch = None

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "bench"))

from rope_mlir import reference  # noqa: E402
from rope_mlir.attention import (AttentionConfig, AttentionKernel,  # noqa
                                 ScoresConfig, ScoresKernel)

QUERY_TILE, KEY_TILE = 32, 64


def median_ms(fn, samples: int, min_time: float = 0.2) -> float:
    fn()  # warm-up
    times = []
    start = time.perf_counter()
    while len(times) < samples or (time.perf_counter() - start < min_time
                                   and len(times) < 200):
        t0 = time.perf_counter_ns()
        fn()
        times.append(time.perf_counter_ns() - t0)
    return statistics.median(times) / 1e6


def measure(config: ScoresConfig, variants: dict, samples: int, rng):
    q = rng.standard_normal(config.q_shape()).astype(np.float32)
    k = rng.standard_normal(config.k_shape()).astype(np.float32)
    offsets = rng.integers(0, 1 << 16, config.batch)
    out = np.empty(config.scores_shape(), np.float32)
    results, reference = {}, None
    for name, (cfg, fuse, options) in variants.items():
        kernel = ScoresKernel(cfg, fuse, query_tile=QUERY_TILE,
                              key_tile=KEY_TILE, **options)
        got = kernel(q, k, offsets).copy()
        if cfg.rotate:
            if reference is None:
                reference = got
            elif np.abs(got - reference).max() > 1e-5 * np.abs(
                    reference).max():
                sys.exit(f"{name}: output differs from the unfused one")
        results[name] = median_ms(lambda: kernel(q, k, offsets, out=out),
                                  samples)
    return results


def attention_inputs(config: AttentionConfig, rng):
    """Random q, k, v, and the keyword arguments: a causal mask (aligned
    bottom-right, -inf where masked) when the config has one."""
    q = rng.standard_normal(config.q_shape()).astype(np.float32)
    k = rng.standard_normal(config.k_shape()).astype(np.float32)
    v = rng.standard_normal(config.v_shape()).astype(np.float32)
    extra = {}
    if config.mask:
        m = np.arange(config.q_len)[:, None] + (config.kv_len - config.q_len)
        extra["mask"] = np.where(np.arange(config.kv_len)[None, :] <= m, 0.0,
                                 -np.inf).astype(np.float32)
    return q, k, v, extra


def measure_attention(config: AttentionConfig, samples: int, rng,
                      fuse_key: str = "auto"):
    q, k, v, extra = attention_inputs(config, rng)
    offsets = rng.integers(0, 1 << 16, config.batch)
    out = np.empty(config.out_shape(), np.float32)
    kernels = {"fused": AttentionKernel(config, True, query_tile=QUERY_TILE,
                                        key_tile=KEY_TILE, fuse_key=fuse_key),
               "unfused": AttentionKernel(config, False)}
    got = {name: kernel(q, k, v, offsets, **extra).copy()
           for name, kernel in kernels.items()}
    if np.abs(got["fused"] - got["unfused"]).max() > 1e-5 * max(
            np.abs(got["unfused"]).max(), 1.0):
        sys.exit("whole attention: fused output differs from the unfused one")
    return {name: median_ms(lambda: kernel(q, k, v, offsets, out=out,
                                           **extra), samples)
            for name, kernel in kernels.items()}


def gqa_session(c: AttentionConfig, threads: int):
    """onnxruntime CPU session of one com.microsoft::GroupQueryAttention
    node (do_rotary=1, c's heads, scale and pair layout), or the reason
    there is none."""
    try:
        import onnxruntime as ort
        from onnx import TensorProto, helper
    except ImportError as error:
        return f"onnxruntime/onnx not installed ({error})"
    f, hkv, d = TensorProto.FLOAT, c.kv_heads, c.head_dim
    names = [("query", f, ["B", "S", c.q_heads * d]),
             ("key", f, ["B", "S", hkv * d]),
             ("value", f, ["B", "S", hkv * d]),
             ("past_key", f, ["B", hkv, "P", d]),
             ("past_value", f, ["B", hkv, "P", d]),
             ("seqlens_k", TensorProto.INT32, ["B"]),
             ("total_sequence_length", TensorProto.INT32, []),
             ("cos_cache", f, ["M", (c.rotary_dim or d) // 2]),
             ("sin_cache", f, ["M", (c.rotary_dim or d) // 2])]
    outputs = [helper.make_tensor_value_info(n, f, None)
               for n in ("output", "present_key", "present_value")]
    node = helper.make_node(
        "GroupQueryAttention", [n[0] for n in names],
        [o.name for o in outputs], domain="com.microsoft",
        num_heads=c.q_heads, kv_num_heads=hkv, do_rotary=1,
        rotary_interleaved=int(c.pair_layout == "interleaved"),
        scale=float(c.scale))
    model = helper.make_model(
        helper.make_graph([node], "gqa",
                          [helper.make_tensor_value_info(*n) for n in names],
                          outputs),
        opset_imports=[helper.make_opsetid("", 17),
                       helper.make_opsetid("com.microsoft", 1)])
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    try:
        return ort.InferenceSession(model.SerializeToString(), options,
                                    providers=["CPUExecutionProvider"])
    except Exception as error:  # noqa: BLE001 (onnxruntime's own types)
        return f"no com.microsoft::GroupQueryAttention ({error})"


def gqa_call(session, c: AttentionConfig, q, k, v):
    """(run, output): the ORT call on our inputs (bhsd, Q at kv_len -
    q_len), inputs and outputs bound once. Past keys are rotated in float64
    here; with a past (decode), past_key/present_key are one [B, Hkv, S_k,
    D] buffer (ORT's shared-buffer mode, as onnxruntime-genai runs it) that
    ORT completes with the new rotated keys in place; without one
    (prefill), past_key is empty and present_key a separate buffer."""
    import onnxruntime as ort

    b, hkv, d, total = c.batch, c.kv_heads, c.head_dim, c.kv_len
    past = total - c.q_len

    def tokens(x):  # [B, heads, S, D] -> [B, S, heads * D]
        x = x.reshape(b, -1, x.shape[-2], x.shape[-1]).transpose(0, 2, 1, 3)
        return np.ascontiguousarray(x.reshape(b, x.shape[1], -1))

    theta, _ = reference.inv_frequencies(c.rotary_dim or d, c.base)
    cos, sin = reference.cos_sin(np.arange(total), theta)
    inputs = {"query": tokens(q), "key": tokens(k[:, :, past:]),
              "value": tokens(v[:, :, past:]),
              "seqlens_k": np.full(b, total - 1, np.int32),
              "total_sequence_length": np.array(total, np.int32),
              "cos_cache": cos.astype(np.float32),
              "sin_cache": sin.astype(np.float32)}
    rotated = np.zeros(c.k_shape(), np.float32)
    rotated[:, :, :past] = reference.apply(
        k[:, :, :past], layout=c.pair_layout, rotary_dim=c.rotary_dim,
        base=c.base, token_dims=(0, 2))
    values = v.copy()
    values[:, :, past:] = 0
    binding = session.io_binding()
    for name, array in inputs.items():
        binding.bind_cpu_input(name, array)
    out = ort.OrtValue.ortvalue_from_numpy(
        np.empty((b, c.q_len, c.q_heads * c.dv), np.float32))
    binding.bind_ortvalue_output("output", out)
    for name, array in (("key", rotated), ("value", values)):
        if past:
            buffer = ort.OrtValue.ortvalue_from_numpy(array)
            binding.bind_ortvalue_input(f"past_{name}", buffer)
        else:
            binding.bind_cpu_input(f"past_{name}", np.empty(
                (b, hkv, 0, d), np.float32))
            buffer = ort.OrtValue.ortvalue_from_numpy(array)
        binding.bind_ortvalue_output(f"present_{name}", buffer)
    keep = (inputs, rotated, values)  # the bound memory

    def run(keep=keep):
        session.run_with_iobinding(binding)
    return run, out


def measure_vs_ort(config: AttentionConfig, samples: int, rng,
                   threads: list):
    """ours (fused) and ORT GroupQueryAttention on each thread count, in ms
    ({("ours", n): .., ("ort", n): ..}), after checking that the outputs
    agree; or the reason ORT did not run."""
    q, k, v, extra = attention_inputs(config, rng)
    offsets = np.full(config.batch, config.kv_len - config.q_len)
    out = np.empty(config.out_shape(), np.float32)
    results = {}
    for n in threads:
        # The query-tile loops are an scf.forall: OpenMP on n threads.
        kernel = AttentionKernel(config, True, query_tile=QUERY_TILE,
                                 key_tile=KEY_TILE, fuse_key="auto",
                                 threads=n)
        ours = kernel(q, k, v, offsets, **extra).copy()
        results[("ours", n)] = median_ms(
            lambda: kernel(q, k, v, offsets, out=out, **extra), samples)
        # [B, Hkv, G, S, Dv] -> ORT's [B, S, H·Dv]
        ours_tokens = np.moveaxis(ours, 3, 1).reshape(config.batch,
                                                      config.q_len, -1)
        session = gqa_session(config, n)
        if isinstance(session, str):
            return session
        run, got = gqa_call(session, config, q, k, v)
        run()
        if np.abs(got.numpy() - ours_tokens).max() > 1e-5 * max(
                np.abs(ours).max(), 1.0):
            sys.exit("whole attention: onnxruntime GroupQueryAttention's "
                     "output differs from ours")
        results[("ort", n)] = median_ms(run, samples)
    return results


# -- (hf) Hugging Face Llama-3-8B attention, exported by torch-mlir ----------
DOC = ROOT / "docs" / "PERFORMANCE.md"
HF_BEGIN = "<!-- BEGIN attention_bench_hf -->"
HF_END = "<!-- END attention_bench_hf -->"
HF_HEADS, HF_KV_HEADS, HF_DIM = 32, 8, 128
HF_THETA = 500000.0            # Llama-3-8B's rope_theta
UNRAISED = "builtin.module(rope-to-llvm-cpu{emit-c-interface=true})"
HF_COLUMNS = ["fused", "un-raised", "ORT GQA", "eager", "SDPA", "Inductor",
              "IREE", "IREE+pre"]
F64_REFERENCE_MAX = 1 << 25    # Hq·S_q·S_k up to which the reference is f64
WRONG = 1e-2                   # max relative error of a wrong output
HF_LENGTHS = {"full": ([512, 1024, 2048, 4096], [1024, 4096, 16384]),
              "quick": ([256], [1024]),
              "smoke": ([16], [32])}


def progress(message: str):
    print(message, file=sys.stderr, flush=True)


class _Captured(Exception):
    """Raised by the stand-in for the generator's torch_fixture."""


def hf_missing() -> Optional[str]:
    """Why the (hf) rows cannot run here, or None."""
    if torch is None:
        return "torch not importable"
    for name in ("transformers", "torch_mlir"):
        if importlib.util.find_spec(name) is None:
            return f"{name} not importable"
    return None


def load_generator():
    """scripts/gen-attention-fixtures.py, loaded by file path as a module of
    this bench's own: its builders read the module's shape globals (B, HQ,
    HKV, D, S, POSITIONS, SK_DECODE, DECODE_POS) when called, which HfCase
    sets; its llama_config() is wrapped to give Llama-3-8B's rope_theta."""
    spec = importlib.util.spec_from_file_location(
        "gen_attention_fixtures_for_bench",
        ROOT / "scripts" / "gen-attention-fixtures.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    fixture_config = gen.llama_config

    def llama3_config():
        cfg = fixture_config()
        cfg.rope_parameters["rope_theta"] = HF_THETA
        return cfg
    gen.llama_config = llama3_config
    return gen


class HfCase:
    """One (hf) shape: the generator's fixture function (hf_llama_eager for
    prefill, hf_llama_decode for decode) run at this shape up to the point
    where it hands the module class and the inputs to torch_fixture, which
    is replaced by a stand-in that keeps them (so the float64 run and the
    export of the generator are skipped; the export is done here)."""

    def __init__(self, gen, kind: str, length: int):
        self.kind, self.length = kind, length
        self.label = f"{kind} {'S' if kind == 'prefill' else 'L'}={length}"
        gen.B, gen.HQ, gen.HKV, gen.D = 1, HF_HEADS, HF_KV_HEADS, HF_DIM
        if kind == "prefill":
            gen.S = length
            gen.POSITIONS = np.arange(length, dtype=np.int64)[None, :]

            def build():
                return gen.fx_hf_llama("hf_llama_eager", "eager", True)
        else:
            gen.SK_DECODE = length
            gen.DECODE_POS = np.array([[length - 1]], np.int64)
            build = gen.fx_hf_llama_decode
        captured = {}

        def capture(name, module_class, args, source, expects, notes="",
                    config=None, dynamic_shapes=None):
            captured.update(module_class=module_class, args=args,
                            source=source, expect=expects[0])
            raise _Captured
        saved, gen.ff.torch_fixture = gen.ff.torch_fixture, capture
        try:
            build()
        except _Captured:
            pass
        finally:
            gen.ff.torch_fixture = saved
        if not captured:
            raise RuntimeError(
                "scripts/gen-attention-fixtures.py no longer hands its "
                "module class and inputs to ff.torch_fixture: update HfCase")
        self.gen, self.source = gen, captured["source"]
        self.args: List[np.ndarray] = captured["args"]
        self.torch_args = [torch.from_numpy(a) for a in self.args]
        self.module = captured["module_class"]().eval()
        gen.ff.make_buffers_persistent(self.module)
        # attn_expect's default scale is the fixtures' 1/sqrt(16).
        self.expect = dict(captured["expect"],
                           scale=float(self.module.scaling))
        e = self.expect
        assert (e["B"], e["Hq"], e["Hkv"], e["D"], e["rope"]["base"]) == (
            1, HF_HEADS, HF_KV_HEADS, HF_DIM, HF_THETA), e
        self.out_shape = (1, e["Sq"], HF_HEADS, HF_DIM)
        self.ort_config = AttentionConfig(
            1, HF_HEADS, HF_KV_HEADS, e["Sq"], e["Sk"], HF_DIM, layout="bhsd",
            scale=e["scale"], mask=kind == "prefill", base=HF_THETA)
        self.sdpa, self.sdpa_args = self._sdpa(captured["module_class"])

    def _sdpa(self, decode_class):
        """The SDPA module and its arguments: prefill, the generator's
        llama_attention_class with transformers' sdpa_attention_forward and
        no mask (is_causal, enable_gqa); decode, the decode module's lines
        with torch's SDPA in place of eager_attention_forward."""
        gen = self.gen
        if self.kind == "prefill":
            from transformers.integrations.sdpa_attention import \
                sdpa_attention_forward
            module = gen.llama_attention_class(
                sdpa_attention_forward, gen.llama_config(), False)().eval()
            return module, self.torch_args[:4]
        ml = gen.ff.hf("llama")

        class DecodeSdpa(decode_class):
            def forward(self, q, k_cache, v_cache, position_ids,
                        attention_mask):
                cos_q, sin_q = self.rotary_emb(v_cache, position_ids)
                key_positions = torch.arange(k_cache.shape[2]).unsqueeze(
                    0).expand(k_cache.shape[0], -1)
                cos_k, sin_k = self.rotary_emb(v_cache, key_positions)
                q, _ = ml.apply_rotary_pos_emb(q, q, cos_q, sin_q)
                _, k = ml.apply_rotary_pos_emb(k_cache, k_cache, cos_k, sin_k)
                out = torch.nn.functional.scaled_dot_product_attention(
                    q, k, v_cache, attn_mask=attention_mask,
                    scale=self.scaling, enable_gqa=True)
                return out.transpose(1, 2).contiguous()
        return DecodeSdpa().eval(), self.torch_args

    def export(self) -> str:
        from torch_mlir import fx
        from torch_mlir.compiler_utils import OutputType
        return str(fx.export_and_import(
            self.module, *self.torch_args,
            output_type=OutputType.LINALG_ON_TENSORS, func_name="main"))

    def float64_reference(self) -> Optional[np.ndarray]:
        """The generator's attention_reference (numpy float64, from the
        fixture's expect: RoPE by rope_mlir.reference at exact powers of
        rope_theta) where Hq·S_q·S_k <= F64_REFERENCE_MAX, else None."""
        e = self.expect
        if HF_HEADS * e["Sq"] * e["Sk"] > F64_REFERENCE_MAX:
            return None
        return self.gen.attention_reference(self.args, e)


def raised_ops(text: str) -> str:
    """What rope-optimize makes of the module: its rope op counts."""
    import re
    from rope_mlir import _jit
    try:
        if not _jit.is_registered("rope-optimize"):
            return "NOT raised (this build registers no rope-optimize)"
        low = _jit.lower(text, "builtin.module(rope-optimize)")
    except Exception as error:  # noqa: BLE001
        return f"cannot tell ({first_line(error)})"
    counts = {op: len(re.findall(rf"\brope\.{op}\b", low)) for op in
              ("apply", "attention", "online_attention")}
    return ", ".join(f"{n} rope.{op}" for op, n in counts.items())


def first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}"[:200]


def jit_pipeline(raised: bool, threads: int) -> Optional[str]:
    """None (rope_mlir.jit's default) for fused on one thread; else the
    default or the un-raised pipeline with num-threads."""
    if raised and threads == 1:
        return None
    if raised:
        from rope_mlir.compiled import default_pipeline
        base = default_pipeline()
    else:
        base = UNRAISED
    if threads == 1:
        return base
    # The option goes inside rope-to-llvm-cpu's braces, whatever follows it
    # there (the default pipeline has more options after this one).
    threaded = base.replace("emit-c-interface=true",
                            f"emit-c-interface=true num-threads={threads}", 1)
    assert threaded != base, base
    if not raised:
        return threaded
    # Decode's keys split into a block per thread (split-K), each block's
    # key tiles holding every KV head as on one thread (cos/sin once per
    # key); prefill has its query tiles to share out.
    split = threaded.replace("peel-key-tiles=true}",
                             f"peel-key-tiles=true decode-key-splits={threads}}}",
                             1)
    assert split != threaded, threaded
    return split


class Column:
    def __init__(self, name: str):
        self.name = name
        self.fn = None
        self.output: Optional[np.ndarray] = None
        self.na: Optional[str] = None


def hf_jit(name: str, text: str, args, pipeline: Optional[str]) -> Column:
    c = Column(name)
    try:
        import rope_mlir
        program = (rope_mlir.jit(text) if pipeline is None else
                   rope_mlir.jit(text, pipeline=pipeline))
        f = program.function("main")
        c.output = np.asarray(f(*args))
        c.fn = lambda f=f, keep=program: f(*args)
    except Exception as error:  # noqa: BLE001
        c.na = first_line(error)
    return c


def hf_ort(case: HfCase, threads: int) -> Column:
    c = Column("ORT GQA")
    session = gqa_session(case.ort_config, threads)
    if isinstance(session, str):
        c.na = session
        return c
    try:
        run, out = gqa_call(session, case.ort_config, *case.args[:3])
        run()
        c.output = np.array(out.numpy()).reshape(case.out_shape)
        c.fn = lambda run=run, keep=session: run()
    except Exception as error:  # noqa: BLE001
        c.na = first_line(error)
    return c


def hf_torch(name: str, module, args, threads: int,
             compiled: bool = False) -> Column:
    c = Column(name)
    try:
        torch.set_num_threads(threads)
        fn = module
        if compiled:
            torch._dynamo.reset()
            fn = torch.compile(module, backend="inductor")
        with torch.no_grad():
            # .float(): a bf16 result (the hf-bf16 section's) exactly; an
            # f32 one as it is.
            c.output = fn(*args).float().numpy().copy()

        def run(fn=fn):
            with torch.no_grad():
                return fn(*args)
        c.fn = run
    except Exception as error:  # noqa: BLE001
        c.na = first_line(error)
    return c


def iree_compile(text: str):
    """The IREE module (llvm-cpu, host CPU) of the text, or why none."""
    try:
        import iree.compiler as ireec
        import iree.runtime  # noqa: F401
    except ImportError as error:
        return f"iree not importable ({first_line(error)})"
    try:
        return ireec.compile_str(text, target_backends=["llvm-cpu"],
                                 extra_args=["--iree-llvmcpu-target-cpu=host"])
    except Exception as error:  # noqa: BLE001
        return first_line(error)


def portable_text(text: str) -> str:
    """The module after our pre-pass for other compilers
    (`rope-optimize{portable=true}`: upstream dialects only), or why none."""
    try:
        from rope_mlir import _jit
        return _jit.lower(text, "builtin.module(rope-optimize{portable=true})")
    except Exception as error:  # noqa: BLE001
        return error


def hf_iree(vmfb, args, threads: int, name: str = "IREE") -> Column:
    c = Column(name)
    if isinstance(vmfb, str):
        c.na = vmfb
        return c
    try:
        import iree.runtime as ireert
        if threads == 1:
            config = ireert.Config("local-sync")
        else:
            ireert.flags.parse_flags(f"--task_topology_group_count={threads}")
            config = ireert.Config("local-task")
        ctx = ireert.SystemContext(config=config)
        vm = ireert.VmModule.copy_buffer(ctx.instance, vmfb)
        ctx.add_vm_module(vm)
        main = getattr(ctx.modules, vm.name).main
        device_args = [ireert.asdevicearray(config.device, a) for a in args]
        out = main(*device_args)
        out = out[0] if isinstance(out, (tuple, list)) else out
        c.output = np.asarray(out.to_host()).copy()
        c.fn = lambda main=main, keep=(ctx, device_args): main(*device_args)
    except Exception as error:  # noqa: BLE001
        c.na = first_line(error)
    return c


def rel_err(y, ref) -> float:
    ref = np.asarray(ref, np.float64)
    return float(np.max(np.abs(np.asarray(y, np.float64) - ref)) /
                 np.max(np.abs(ref)))


def hf_timing(mode: str):
    from cpu_bench import Timing
    return {"smoke": Timing(samples=3, min_seconds=0.002, max_seconds=0.2,
                            quiesce=0.0),
            "quick": Timing(samples=5, min_seconds=0.05, max_seconds=1.0,
                            quiesce=0.25),
            "full": Timing(samples=11, min_seconds=0.5, max_seconds=5.0,
                           quiesce=0.25)}[mode]


def run_hf_case(case: HfCase, threads_list: List[int], timing, started,
                notes: Dict[str, str]):
    """{threads: {column: Stat}}, {threads: {column: error}}, the reference's
    name and the raising line of one case; exits (status 2) on a wrong
    output."""
    from cpu_bench import measure as measure_one, measure_interleaved
    def stamp():
        return f"[{time.perf_counter() - started:6.1f} s] {case.label}"
    progress(f"{stamp()}: exporting")
    text = case.export()
    raising = raised_ops(text)
    reference_output = case.float64_reference()
    reference_name = "float64" if reference_output is not None else \
        "torch eager f32"
    progress(f"{stamp()}: compiling IREE")
    vmfb = iree_compile(text)
    portable = portable_text(text)
    vmfb_pre = iree_compile(portable) if isinstance(portable, str) else \
        f"rope-optimize{{portable=true}} failed: {first_line(portable)}"
    stats, errors = {}, {}
    for n in threads_list:
        progress(f"{stamp()}: {n}T: compiling and running each column once")
        columns = [hf_jit("fused", text, case.args, jit_pipeline(True, n)),
                   hf_jit("un-raised", text, case.args,
                          jit_pipeline(False, n)),
                   hf_ort(case, n),
                   hf_torch("eager", case.module, case.torch_args, n),
                   hf_torch("SDPA", case.sdpa, case.sdpa_args, n),
                   hf_torch("Inductor", case.module, case.torch_args, n,
                            compiled=True),
                   hf_iree(vmfb, case.args, n),
                   hf_iree(vmfb_pre, case.args, n, "IREE+pre")]
        by_name = {c.name: c for c in columns}
        if reference_output is None:
            for name in ("eager", "SDPA"):
                if by_name[name].output is not None:
                    reference_output = by_name[name].output
                    reference_name = f"torch {name} f32 ({n}T)"
                    break
        errors[n] = {}
        for c in columns:
            if c.na:
                notes.setdefault(c.name, c.na)
                continue
            if reference_output is None:
                continue
            err = rel_err(c.output.reshape(case.out_shape), reference_output)
            errors[n][c.name] = err
            if not err <= WRONG:
                print(f"(hf) {case.label} {n}T: {c.name}'s output is wrong: "
                      f"max relative error {err:.3g} vs {reference_name} "
                      f"> {WRONG:g}")
                sys.exit(2)
            c.output = None
        fns = {c.name: c.fn for c in columns if c.fn is not None}
        progress(f"{stamp()}: {n}T: timing {', '.join(fns)}")
        torch.set_num_threads(n)
        if n == 1:
            stats[n] = measure_interleaved(fns, timing)
        else:
            stats[n] = {}
            for name, fn in fns.items():
                stats[n][name] = measure_one(fn, timing)
                time.sleep(timing.quiesce)
        torch.set_num_threads(1)
        del columns, by_name, fns
    return stats, errors, reference_name, raising


def hf_versions() -> str:
    from importlib import metadata
    out = []
    for pkg in ("torch", "transformers", "torch-mlir", "onnxruntime",
                "iree-base-compiler", "iree-base-runtime", "numpy"):
        try:
            out.append(f"{pkg} {metadata.version(pkg)}")
        except metadata.PackageNotFoundError:
            out.append(f"{pkg} not installed")
    return ", ".join(out) + f", python {platform.python_version()}"


def target_line(label: str, values, bound: float) -> str:
    """One target: its computed ratios, the minimum, and how many rows are
    below the bound."""
    values = [(name, r) for name, r in values if r is not None]
    if not values:
        return f"{label}: no row of this run qualifies (with both columns)"
    below = sum(r < bound for _, r in values)
    return (f"{label}: " + ", ".join(f"{name} {r:.2f}" for name, r in values)
            + f"; min {min(r for _, r in values):.2f}; {below} of "
            f"{len(values)} rows below {bound:g}")


#: The columns whose rates the limits table shows.
LIMIT_COLUMNS = ["fused", "SDPA", "ORT GQA"]


def case_work(case) -> Tuple[str, float]:
    """What a case must do: ("flop", causal FLOPs) for prefill (Q·Kᵀ and P·V
    over the lower triangle, 2·D each per query-key pair), ("byte", the K
    and V bytes read) for decode."""
    if case.kind == "prefill":
        pairs = case.length * (case.length + 1) / 2
        return "flop", 4.0 * HF_HEADS * HF_DIM * pairs
    return "byte", 2.0 * case.length * HF_KV_HEADS * HF_DIM * 4


def decode_flops(length: int) -> float:
    """The f32 FLOPs of the (hf) decode step at L=`length`: Q·Kᵀ and P·V
    (2·D each per query head and key) and the rotation of every cached key
    (x·cos + rotate_half(x)·sin: a multiply and an FMA, 3 per element)."""
    return (4.0 * HF_HEADS * HF_DIM * length +
            3.0 * HF_KV_HEADS * HF_DIM * length)


def target_bound(case, n: int, stats: dict, limits: dict) -> str:
    """What issue 35's targets ask of the fused column on this row, from the
    probes and the peers of this run. Prefill: the fraction of the FMA peak
    that 1.5x SDPA and 1.5x ORT GQA need (1.5 x theirs). Decode (1T): the
    largest fraction of the read bandwidth a step could reach at the FMA
    peak, its loads hidden behind its FMAs (bytes/bandwidth over the larger
    of that and FLOPs/peak), and with the two one after the other."""
    kind, work = case_work(case)
    if kind == "flop":
        needs = []
        for peer, short in (("SDPA", "SDPA"), ("ORT GQA", "ORT")):
            if peer in stats[n]:
                peer_fraction = (work / stats[n][peer].median / 1e9 /
                                 (n * limits["peak"]))
                needs.append(f"1.5× {short} {1.5 * peer_fraction:.2f}")
        return "needs " + ", ".join(needs) if needs else "n/a"
    if n != 1 or case.length not in limits["read"]:
        return "—"
    memory = work / (limits["read"][case.length] * 1e9)
    compute = decode_flops(case.length) / (limits["peak"] * 1e9)
    return (f"≤ {memory / max(memory, compute):.2f} overlapped, "
            f"{memory / (memory + compute):.2f} serial")


def probe_limits(decode: List[int]) -> dict:
    """One thread's f32 FMA peak and warm read bandwidth over each decode
    case's K and V, measured now."""
    from _limits import cpu_name, fma_peak, native_lanes, read_bandwidth
    return {"cpu": cpu_name(), "lanes": native_lanes(), "peak": fma_peak(),
            "read": {L: read_bandwidth(int(2 * L * HF_KV_HEADS * HF_DIM * 4))
                     for L in decode}}


def limits_lines(limits: dict, markdown: bool) -> List[str]:
    bullet = "- " if markdown else "  "
    reads = ", ".join(f"{gb:.1f} GB/s over the K and V of L={L} "
                      f"({2 * L * HF_KV_HEADS * HF_DIM * 4 / 2**20:.0f} MiB)"
                      for L, gb in sorted(limits["read"].items()))
    return [bullet + f"{limits['cpu']}: f32 FMA peak of one thread "
            f"{limits['peak']:.1f} GFLOP/s ({limits['lanes']}-lane FMAs, "
            "register-resident); warm read bandwidth of one thread: " +
            (reads or "not probed (no decode rows)"),
            bullet + "prefill: GFLOP/s of the causal work (the lower "
            "triangle, whatever a column computes) over n × the one-thread "
            "peak; decode: GB/s of K and V read over the one-thread read "
            "bandwidth of the same bytes (1T rows only: the probe is one "
            "thread)",
            bullet + "targets' needs: prefill, the fraction of the peak "
            "that 1.5× SDPA and 1.5× ORT GQA ask of ours (1.5 × theirs; "
            "above about 0.9 the FMA peak bounds the target, the online "
            "softmax being work besides the contractions); decode, the "
            "largest fraction of the read bandwidth the step's f32 work "
            "allows at the FMA peak (Q·Kᵀ and P·V, 4·D FLOPs per query head "
            "and key, and the rotation of every cached key, 3 per element): "
            "with its loads hidden behind its FMAs (`overlapped`) and with "
            "the two one after the other (`serial`); below 0.8 overlapped, "
            "the FMA peak bounds the target"]


def limit_rows(results, limits: dict) -> List[List[str]]:
    rows = []
    for case, stats, errors, reference_name in results:
        kind, work = case_work(case)
        for n in sorted(stats):
            cells = [case.label, f"{n}T",
                     f"{work / 1e9:.1f} GFLOP" if kind == "flop"
                     else f"{work / 1e6:.1f} MB"]
            for c in LIMIT_COLUMNS:
                if c not in stats[n]:
                    cells.append("n/a")
                    continue
                rate = work / stats[n][c].median / 1e9
                if kind == "flop":
                    cells.append(f"{rate:.0f} GFLOP/s "
                                 f"({rate / (n * limits['peak']):.2f})")
                elif n == 1 and case.length in limits["read"]:
                    cells.append(f"{rate:.1f} GB/s "
                                 f"({rate / limits['read'][case.length]:.2f})")
                else:
                    cells.append(f"{rate:.1f} GB/s")
            cells.append(target_bound(case, n, stats, limits))
            rows.append(cells)
    return rows


def hf_report(results, notes, meta, mode: str, command: str,
              markdown: bool, limits: Optional[dict] = None) -> List[str]:
    from frontend_bench import fmt_time, render
    rows, ratio_rows, error_rows = [], [], []
    ratios = {}
    for case, stats, errors, reference_name in results:
        for n in sorted(stats):
            t = {c: (stats[n][c].median if c in stats[n] else None)
                 for c in HF_COLUMNS}
            key = f"{case.label} {n}T"
            rows.append([case.label, f"{n}T"] +
                        [fmt_time(t[c]) for c in HF_COLUMNS])
            r = {c: (t[c] / t["fused"] if t[c] is not None and t["fused"]
                     is not None else None) for c in HF_COLUMNS[1:]}
            ratios[key] = (case, n, r)
            ratio_rows.append([case.label, f"{n}T"] + [
                "n/a" if r[c] is None else f"{r[c]:.2f}"
                for c in HF_COLUMNS[1:]])
            error_rows.append([case.label, f"{n}T", reference_name] + [
                f"{errors[n][c]:.2g}" if c in errors[n] else "n/a"
                for c in HF_COLUMNS])
    title = (lambda s: f"**{s}**") if markdown else (lambda s: s)
    report = []
    if markdown:
        now = datetime.datetime.now(datetime.timezone.utc)
        # The options that chose the rows, so that the command reruns them.
        chosen = " ".join(a for a in sys.argv[1:]
                          if not a.startswith("--write-docs"))
        if chosen:
            command = f"{command} {chosen}"
        report += [f"_Generated by `{command} --write-docs` ({mode} mode) on "
                   f"{now:%Y-%m-%d %H:%M} UTC. Do not edit between the "
                   "BEGIN/END markers: rerun the command._", ""]
        report += [f"- {m}" for m in meta]
    else:
        report += [f"# (hf) HF Llama-3-8B attention layer from torch-mlir "
                   f"({mode}), {datetime.date.today().isoformat()}"] + meta
    report += ["", title("Time per call (median)"), ""]
    report += render(["case", "threads"] + HF_COLUMNS, rows, markdown)
    report += ["", title("X/fused (> 1: fused is faster)"), ""]
    report += render(["case", "threads"] + [f"{c}/fused" for c in
                                            HF_COLUMNS[1:]],
                     ratio_rows, markdown)
    report += ["", title("Max relative error max\\|y − r\\| / max\\|r\\| "
                         "against the reference r" if markdown else
                         "max relative error max|y - r| / max|r| against the "
                         "reference r"), ""]
    report += render(["case", "threads", "reference"] + HF_COLUMNS,
                     error_rows, markdown)

    if limits:
        report += ["", title("Fractions of the machine's limits, probed in "
                             "this run (bench/_limits.py)"), ""]
        report += limits_lines(limits, markdown)
        report += [""]
        report += render(["case", "threads", "work"] +
                         [f"{c}: rate (fraction)" for c in LIMIT_COLUMNS]
                         + ["targets' needs"],
                         limit_rows(results, limits), markdown)

    def of(column, keep=lambda case, n: True):
        return [(key, r[column]) for key, (case, n, r) in ratios.items()
                if keep(case, n)]
    bullet = "- " if markdown else "  "
    report += ["", title("Targets (computed ratios, X/fused)"), ""]
    report += [bullet + target_line("ORT GQA/fused >= 1.2, every row",
                                    of("ORT GQA"), 1.2),
               bullet + target_line("Inductor/fused >= 2", of("Inductor"), 2),
               bullet + target_line("IREE/fused >= 2", of("IREE"), 2),
               bullet + target_line(
                   "decode with >= 4096 keys: un-raised/fused >= 2",
                   of("un-raised", lambda case, n: case.kind == "decode" and
                      case.length >= 4096), 2),
               bullet + target_line(
                   "prefill: un-raised/fused >= 1 (never slower)",
                   of("un-raised", lambda case, n: case.kind == "prefill"),
                   1)]
    if notes:
        report.append("")
        for c in HF_COLUMNS:
            if c in notes:
                report.append(f"{bullet}n/a: {c}: {notes[c]}")
    return report


def run_hf(mode: str, prefill: List[int], decode: List[int], cores: int,
           markdown: bool, write_docs: Optional[str]) -> int:
    missing = hf_missing()
    if missing:
        print(f"(hf) skipped: the HF Llama attention rows need torch, "
              f"transformers and torch-mlir ({missing})")
        if write_docs is not None:
            raise SystemExit("--write-docs: the (hf) section did not run")
        return 0
    from _source import source_line
    from cpu_bench import machine_line
    started = time.perf_counter()
    load_start = os.getloadavg()[0]
    timing = hf_timing(mode)
    threads_list = sorted({1, cores})
    gen = load_generator()
    progress("probing the machine's limits (bench/_limits.py)")
    limits = probe_limits(decode)
    notes: Dict[str, str] = {}
    results, raising = [], []
    for kind, lengths in (("prefill", prefill), ("decode", decode)):
        for length in lengths:
            case = HfCase(gen, kind, length)
            stats, errors, reference_name, raised = run_hf_case(
                case, threads_list, timing, started, notes)
            results.append((case, stats, errors, reference_name))
            raising.append(f"{case.label}: {raised}")
    elapsed = time.perf_counter() - started
    import transformers
    from importlib import metadata
    command = ("python3 bench/attention_bench.py" +
               {"full": "", "quick": " --quick", "smoke": " --smoke"}[mode])
    meta = [
        f"machine: {machine_line()}",
        source_line(),
        f"software: {hf_versions()}",
        f"module: exported at bench time by torch-mlir "
        f"{metadata.version('torch-mlir')} (fx.export_and_import, "
        f"LINALG_ON_TENSORS) from transformers {transformers.__version__}'s "
        "Llama attention, built by scripts/gen-attention-fixtures.py's "
        "fx_hf_llama (eager, mask argument) and fx_hf_llama_decode at the "
        f"shapes here: B=1, Hq={HF_HEADS}, Hkv={HF_KV_HEADS}, D={HF_DIM}, "
        f"rope_theta {HF_THETA:g}, scale 1/sqrt({HF_DIM}); decode's row at "
        "position L-1",
        f"raising (rope ops after rope-optimize): {'; '.join(raising)}",
        f"load: 1-minute load average {load_start:.2f} at the start, "
        f"{os.getloadavg()[0]:.2f} at the end" +
        ("; WARNING: other processes were running, the numbers are noisy"
         if load_start > 0.5 else ""),
        f"timing: 1T, median of up to {timing.samples} samples per column, "
        "the columns interleaved round by round; "
        f"{cores}T, each column on its own with a {timing.quiesce:g} s pause "
        "after it; warm-up and compilation excluded; total (hf) run time "
        f"{elapsed:.0f} s",
    ]
    markdown = markdown or write_docs is not None
    report = hf_report(results, notes, meta, mode, command, markdown, limits)
    print("\n".join(report), flush=True)
    if write_docs is not None:
        write_hf_region(pathlib.Path(write_docs), report)
        progress(f"wrote the (hf) report into {write_docs}")
    return 0


def write_hf_region(path: pathlib.Path, lines: List[str]):
    from _source import replace_region
    text = path.read_text()
    if HF_BEGIN not in text and HF_END not in text:
        path.write_text(
            text.rstrip() + "\n\n## Attention from frontend IR: Hugging Face "
            "Llama-3-8B attention layer\n\n`bench/attention_bench.py` "
            "section (hf) (its header says what each column is). The region "
            "below is written by `/work/peers/bin/python "
            "bench/attention_bench.py --write-docs` (the peers' venv: torch, "
            "transformers, torch-mlir, onnxruntime, IREE).\n\n" + HF_BEGIN +
            "\n" + HF_END + "\n")
    replace_region(path, lines, HF_BEGIN, HF_END)


# -- (hf-bf16) the (hf) layer in bf16, as Hugging Face models run it ---------
HF_BF16_COLUMNS = ["ours bf16", "eager bf16", "SDPA bf16", "ours f32"]
#: The bf16 columns (their outputs are bf16; the error bound is WRONG_BF16).
HF_BF16_OUTPUTS = HF_BF16_COLUMNS[:3]
# A misplaced rotation, mask or scale errs by O(1); HF's own bf16 eager layer
# (scores, P and the output each rounded to bf16) by about 1e-2 at most here.
WRONG_BF16 = 3e-2
HF_BF16_LENGTHS = {"full": ([512, 1024, 2048], [1024, 4096, 16384]),
                   "quick": HF_LENGTHS["quick"], "smoke": HF_LENGTHS["smoke"]}


def torch_bf16(a: np.ndarray):
    """A torch bfloat16 tensor of an ml_dtypes.bfloat16 array (same bits)."""
    return torch.from_numpy(np.ascontiguousarray(a).view(np.uint16)).view(
        torch.bfloat16)


def as_bf16_model(module):
    """module converted as transformers loads a model in bf16
    (from_pretrained(dtype=torch.bfloat16)): floating parameters bf16, the
    rotary embedding's inv_freq buffers left f32 (they are made with
    dtype=torch.float whatever the default dtype; module.to(torch.bfloat16)
    would round them to bf16 and every angle with them). The attention
    lines have no parameters, so this leaves the module as it was; it is
    here to say so, and to fail if that changes."""
    kept = {name: b.detach().clone() for name, b in module.named_buffers()
            if name.endswith("inv_freq")}
    module.to(torch.bfloat16)
    for name, value in kept.items():
        owner, _, leaf = name.rpartition(".")
        setattr(module.get_submodule(owner) if owner else module, leaf, value)
    assert not list(module.parameters()), "the layer grew parameters"
    assert all(b.dtype == torch.float32 for b in module.buffers()), \
        [(n, b.dtype) for n, b in module.named_buffers()]
    return module


class HfBf16Case:
    """One (hf-bf16) shape: the (hf) case (HfCase) with its module converted
    as HF loads a bf16 model (as_bf16_model) and its float inputs rounded to
    bf16: Q, K, V (decode: the K and V cache) bf16, position_ids int64, and
    the additive mask built as transformers builds it for a bf16 model
    (masking_utils.eager_mask(dtype=torch.bfloat16): 0 / finfo(bf16).min;
    the f32 mask cast to bf16 would turn finfo(f32).min into -inf). The f32
    module gets the same bf16-rounded values in f32 (and HF's f32 mask), so
    that one reference serves all the columns."""

    def __init__(self, gen, kind: str, length: int):
        import ml_dtypes
        from transformers import masking_utils
        case = HfCase(gen, kind, length)
        self.case, self.kind, self.length = case, kind, length
        self.label, self.out_shape = case.label, case.out_shape
        self.module = as_bf16_model(case.module)
        self.sdpa = as_bf16_model(case.sdpa)
        e = case.expect
        mask_arg = e["mask"]["arg"]
        sq, sk = e["Sq"], e["Sk"]
        mask = masking_utils.eager_mask(
            batch_size=1, q_length=sq, kv_length=sk, q_offset=sk - sq,
            dtype=torch.bfloat16)
        f32_mask = case.args[mask_arg]
        assert mask.shape == f32_mask.shape and np.array_equal(
            mask.float().numpy() == 0, f32_mask == 0), "HF's bf16 mask differs"
        bf16 = ml_dtypes.bfloat16
        self.args, self.f32_args = [], []
        for i, a in enumerate(case.args):
            if i == mask_arg:
                self.args.append(
                    mask.contiguous().view(torch.int16).numpy().view(bf16))
                self.f32_args.append(f32_mask)
            elif a.dtype == np.float32:
                self.args.append(a.astype(bf16))
                self.f32_args.append(self.args[-1].astype(np.float32))
            else:
                self.args.append(a)
                self.f32_args.append(a)
        self.torch_args = [torch_bf16(a) if a.dtype == bf16 else
                           torch.from_numpy(a) for a in self.args]
        self.torch_f32_args = [torch.from_numpy(a) for a in self.f32_args]
        self.sdpa_args = self.torch_args[:len(case.sdpa_args)]
        self.expect = e

    def export(self, bf16: bool) -> str:
        from torch_mlir import fx
        from torch_mlir.compiler_utils import OutputType
        return str(fx.export_and_import(
            self.module, *(self.torch_args if bf16 else self.torch_f32_args),
            output_type=OutputType.LINALG_ON_TENSORS, func_name="main"))

    def reference(self) -> Tuple[np.ndarray, str]:
        """The float64 reference of the bf16-rounded inputs (the generator's
        attention_reference) where Hq·S_q·S_k <= F64_REFERENCE_MAX, else
        torch eager f32 on the same values (its own error, about 1e-6, is
        far below bf16's)."""
        e = self.expect
        if HF_HEADS * e["Sq"] * e["Sk"] <= F64_REFERENCE_MAX:
            return (self.case.gen.attention_reference(self.args, e),
                    "float64")
        with torch.no_grad():
            out = self.module(*self.torch_f32_args).numpy().copy()
        return out, "torch eager f32, same values"


def ort_bf16_na() -> str:
    """Why there is no ORT column in (hf-bf16): whether this onnxruntime's
    CPU provider has a bf16 com.microsoft::GroupQueryAttention or
    MultiHeadAttention, asked by building a session of each."""
    try:
        import onnxruntime as ort
        from onnx import TensorProto, helper
    except ImportError as error:
        return f"onnxruntime/onnx not installed ({error})"
    b = TensorProto.BFLOAT16
    hd, kvd = HF_HEADS * HF_DIM, HF_KV_HEADS * HF_DIM
    ops = {"GroupQueryAttention": (
        [("query", b, ["B", "S", hd]), ("key", b, ["B", "S", kvd]),
         ("value", b, ["B", "S", kvd]),
         ("past_key", b, ["B", HF_KV_HEADS, "P", HF_DIM]),
         ("past_value", b, ["B", HF_KV_HEADS, "P", HF_DIM]),
         ("seqlens_k", TensorProto.INT32, ["B"]),
         ("total_sequence_length", TensorProto.INT32, []),
         ("cos_cache", b, ["M", HF_DIM // 2]),
         ("sin_cache", b, ["M", HF_DIM // 2])],
        ["output", "present_key", "present_value"],
        dict(num_heads=HF_HEADS, kv_num_heads=HF_KV_HEADS, do_rotary=1)),
        "MultiHeadAttention": (
        [("query", b, ["B", "S", hd]), ("key", b, ["B", "S", hd]),
         ("value", b, ["B", "S", hd])], ["output"],
        dict(num_heads=HF_HEADS))}
    failed = []
    for op, (inputs, outputs, attributes) in ops.items():
        node = helper.make_node(op, [i[0] for i in inputs], outputs,
                                domain="com.microsoft", **attributes)
        model = helper.make_model(
            helper.make_graph(
                [node], op, [helper.make_tensor_value_info(*i)
                             for i in inputs],
                [helper.make_tensor_value_info(o, b, None)
                 for o in outputs]),
            opset_imports=[helper.make_opsetid("", 17),
                           helper.make_opsetid("com.microsoft", 1)])
        try:
            ort.InferenceSession(model.SerializeToString(),
                                 providers=["CPUExecutionProvider"])
        except Exception as error:  # noqa: BLE001
            why = first_line(error)
            failed.append(f"{op} (" + ("NOT_IMPLEMENTED: no kernel for "
                                       "these types" if "NOT_IMPLEMENTED" in
                                       why else why[:120]) + ")")
            continue
        return (f"onnxruntime {ort.__version__}'s CPU provider accepts a "
                f"bf16 {op}, which this section does not run yet")
    return (f"onnxruntime {ort.__version__}'s CPU provider has no bf16 "
            "kernel for com.microsoft::" + " or ".join(failed))


def run_hf_bf16_case(case: HfBf16Case, timing, started,
                     notes: Dict[str, str]):
    """{column: Stat}, {column: error}, the reference's name and the raising
    line of one case (one thread); exits (status 2) on a wrong output."""
    from cpu_bench import measure_interleaved

    def stamp():
        return f"[{time.perf_counter() - started:6.1f} s] {case.label} bf16"
    progress(f"{stamp()}: exporting (bf16 and f32)")
    text, text_f32 = case.export(True), case.export(False)
    raising = raised_ops(text)
    reference_output, reference_name = case.reference()
    progress(f"{stamp()}: compiling and running each column once")
    torch.set_num_threads(1)
    columns = [hf_jit("ours bf16", text, case.args, None),
               hf_torch("eager bf16", case.module, case.torch_args, 1),
               hf_torch("SDPA bf16", case.sdpa, case.sdpa_args, 1),
               hf_jit("ours f32", text_f32, case.f32_args, None)]
    errors = {}
    for c in columns:
        if c.na:
            notes.setdefault(c.name, c.na)
            continue
        if c.name == "ours bf16" and str(c.output.dtype) != "bfloat16":
            notes.setdefault(c.name, f"output {c.output.dtype}, not bf16")
        bound = WRONG_BF16 if c.name in HF_BF16_OUTPUTS else WRONG
        err = rel_err(c.output.reshape(case.out_shape), reference_output)
        errors[c.name] = err
        if not err <= bound:
            print(f"(hf-bf16) {case.label}: {c.name}'s output is wrong: max "
                  f"relative error {err:.3g} vs {reference_name} > "
                  f"{bound:g}", flush=True)
            sys.exit(2)
        c.output = None
    fns = {c.name: c.fn for c in columns if c.fn is not None}
    progress(f"{stamp()}: timing {', '.join(fns)}")
    stats = measure_interleaved(fns, timing)
    return stats, errors, reference_name, raising


def hf_bf16_rates(case: HfBf16Case, stats, limits: dict) -> List[str]:
    """The work, then ours' rates: prefill, causal GFLOP/s (bf16: over the
    f32 FMA peak and the vdpbf16ps peak; f32: over the f32 FMA peak);
    decode, GB/s of the K and V read (bf16: 2 bytes an element, over the
    probed read bandwidth of as many bytes; f32: 4 bytes)."""
    def cell(column, fn):
        return fn(stats[column].median) if column in stats else "n/a"
    if case.kind == "prefill":
        flops = 4.0 * HF_HEADS * HF_DIM * case.length * (case.length + 1) / 2
        pair = limits["bf16_peak"]

        def bf16(t):
            rate = flops / t / 1e9
            return (f"{rate:.0f} GFLOP/s ({rate / limits['peak']:.2f} f32 "
                    "FMA peak, " + (f"{rate / pair:.2f} bf16 dot peak)"
                                    if pair else "no bf16 dot peak)"))
        return [f"{flops / 1e9:.3g} GFLOP", cell("ours bf16", bf16),
                cell("ours f32", lambda t: f"{flops / t / 1e9:.0f} GFLOP/s "
                     f"({flops / t / 1e9 / limits['peak']:.2f} f32 FMA "
                     "peak)")]
    elements = 2.0 * case.length * HF_KV_HEADS * HF_DIM
    read = limits["read"].get(case.length)
    return [f"{elements * 2 / 1e6:.3g} MB bf16",
            cell("ours bf16", lambda t: f"{elements * 2 / t / 1e9:.1f} GB/s"
                 + (f" ({elements * 2 / t / 1e9 / read:.2f} of the read "
                    "bandwidth)" if read else "")),
            cell("ours f32", lambda t: f"{elements * 4 / t / 1e9:.1f} GB/s "
                 "(f32 K, V)")]


def run_hf_bf16(mode: str, prefill: List[int], decode: List[int],
                markdown: bool) -> int:
    """(hf-bf16): the (hf) layer in bf16 as HF models run it, one thread."""
    missing = hf_missing()
    if missing is None and importlib.util.find_spec("ml_dtypes") is None:
        missing = "ml_dtypes not importable"
    if missing:
        print(f"(hf-bf16) skipped: the HF Llama attention rows need torch, "
              f"transformers, torch-mlir and ml_dtypes ({missing})")
        return 0
    from _limits import bf16_dot_peak, cpu_name, fma_peak, read_bandwidth
    from _source import source_line
    from cpu_bench import machine_line
    from frontend_bench import fmt_time, render
    started = time.perf_counter()
    load_start = os.getloadavg()[0]
    timing = hf_timing(mode)
    gen = load_generator()
    progress("probing the machine's limits (bench/_limits.py)")
    limits = {"peak": fma_peak(), "bf16_peak": bf16_dot_peak(),
              "read": {L: read_bandwidth(int(2 * L * HF_KV_HEADS * HF_DIM * 2))
                       for L in decode}}
    notes: Dict[str, str] = {"ORT": ort_bf16_na()}
    results, raising = [], []
    for kind, lengths in (("prefill", prefill), ("decode", decode)):
        for length in lengths:
            case = HfBf16Case(gen, kind, length)
            stats, errors, reference_name, raised = run_hf_bf16_case(
                case, timing, started, notes)
            # The label, not the case: its arrays go with it.
            results.append((case.label, stats, errors, reference_name,
                            hf_bf16_rates(case, stats, limits)))
            raising.append(f"{case.label}: {raised}")
            del case
    elapsed = time.perf_counter() - started

    def t(stats, c):
        return stats[c].median if c in stats else None
    time_rows, ratio_rows, error_rows, rate_rows = [], [], [], []
    for label, stats, errors, reference_name, rates in results:
        ours = t(stats, "ours bf16")
        time_rows.append([label] + [fmt_time(t(stats, c))
                                    for c in HF_BF16_COLUMNS])
        ratio_rows.append([label] + [
            "n/a" if ours is None or t(stats, c) is None else
            f"{t(stats, c) / ours:.2f}" for c in HF_BF16_COLUMNS[1:]])
        error_rows.append([label, reference_name] + [
            f"{errors[c]:.2g}" if c in errors else "n/a"
            for c in HF_BF16_COLUMNS])
        rate_rows.append([label] + rates)
    title = (lambda s: f"**{s}**") if markdown else (lambda s: s)
    bullet = "- " if markdown else "  "
    pair = limits["bf16_peak"]
    report = [f"# (hf-bf16) HF Llama-3-8B attention layer in bf16, as HF "
              f"models run it ({mode}), {datetime.date.today().isoformat()}"]
    report += [bullet + m for m in [
        f"machine: {machine_line()}", source_line(),
        f"software: {hf_versions()}",
        "module: the (hf) section's layer (B=1, Hq=32, Hkv=8, D=128, "
        "rope_theta 500000) as transformers runs a model loaded with "
        "dtype=torch.bfloat16: Q, K, V (decode: the K and V cache) bf16, "
        "position_ids int64, the mask from masking_utils.eager_mask(dtype="
        "bfloat16) (0 / finfo(bf16).min), rotary inv_freq f32 (as "
        "from_pretrained leaves it); exported by torch-mlir "
        "fx.export_and_import (LINALG_ON_TENSORS) with bf16 arguments",
        "columns (one thread): ours bf16 = rope_mlir.jit(bf16 text) (default "
        "pipeline), bf16 arguments and result; eager bf16 = the torch module "
        "on the bf16 tensors (HF's eager_attention_forward: bf16 matmuls, "
        "softmax in f32, P rounded to bf16); SDPA bf16 = the (hf) SDPA "
        "module on the bf16 tensors; ours f32 = rope_mlir.jit of the f32 "
        "export on the same values in f32 (ours bf16/f32 in one run)",
        f"raising (rope ops after rope-optimize, bf16 text): "
        f"{'; '.join(raising)}",
        f"load: 1-minute load average {load_start:.2f} at the start, "
        f"{os.getloadavg()[0]:.2f} at the end" +
        ("; WARNING: other processes were running, the numbers are noisy"
         if load_start > 0.5 else ""),
        f"timing: 1T, median of up to {timing.samples} samples per column, "
        "the columns interleaved round by round (cpu_bench's "
        "measure_interleaved); warm-up and compilation excluded; total "
        f"(hf-bf16) run time {elapsed:.0f} s"]]
    report += ["", title("Time per call (median, one thread)"), ""]
    report += render(["case"] + HF_BF16_COLUMNS, time_rows, markdown)
    report += ["", title("X/ours bf16 (> 1: ours bf16 is faster; ours f32/"
                         "ours bf16: bf16's speedup)"), ""]
    report += render(["case"] + [f"{c}/ours bf16" for c in
                                 HF_BF16_COLUMNS[1:]], ratio_rows, markdown)
    report += ["", title(
        "Max relative error max\\|y − r\\| / max\\|r\\| against the "
        "reference r of the same bf16-rounded inputs" if markdown else
        "max relative error max|y - r| / max|r| against the reference r of "
        "the same bf16-rounded inputs"), ""]
    report += render(["case", "reference"] + HF_BF16_COLUMNS, error_rows,
                     markdown)
    report += ["", bullet + f"bounds: a bf16 column above {WRONG_BF16:g}, "
               f"ours f32 above {WRONG:g}, exits with status 2"]
    report += ["", title("Ours' rates against the machine's limits, probed "
                         "in this run (bench/_limits.py)"), ""]
    report += [bullet + f"{cpu_name()}: f32 FMA peak of one thread "
               f"{limits['peak']:.1f} GFLOP/s; bf16 vdpbf16ps peak " +
               (f"{pair:.1f} GFLOP/s" if pair else "n/a (no AVX512-BF16)") +
               "; warm read bandwidth of one thread over the bf16 K and V "
               "of each decode row: " + (", ".join(
                   f"L={L} {gb:.1f} GB/s" for L, gb in
                   sorted(limits["read"].items())) or "no decode rows"),
               bullet + "prefill: GFLOP/s of the causal work (the lower "
               "triangle, 4·Hq·D per query-key pair); decode: GB/s of the "
               "K and V read"]
    report += [""] + render(["case", "work", "ours bf16", "ours f32"],
                            rate_rows, markdown)
    report += [""] + [bullet + f"n/a: {name}: {why}"
                      for name, why in notes.items()]
    print("\n".join(report), flush=True)
    return 0


BF16_MODULE = """
#q = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, g, m, k1)>
#k = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, g, m, n)>
func.func @main(%q: {q}, %k: {kv}, %v: {kv}) -> {q} {{
  %o = tensor.empty() : {q}
  %r = rope.attention ins(%q, %k, %v : {q}, {kv}, {kv}) outs(%o : {q})
         attributes {{indexing_maps = [#q, #k, #v, #o], scale = {scale} : f64,
                      {causal}query_dim = 3}} -> {q}
  return %r : {q}
}}
"""


def bf16_attention_rows(prefill: List[int], decode: List[int], samples: int,
                        rng) -> List[str]:
    """(bf16) rope.attention on Llama-3-8B's shapes (Hq 32, Hkv 8, D 128,
    [B, Hkv, G, S, D]) with Q, K, V in f32 and in bf16 (f32 accumulation
    and softmax), one thread, the default pipeline; prefill causal, decode
    one query over the whole cache. Rows: markdown table lines."""
    import ml_dtypes
    import rope_mlir
    from _limits import bf16_dot_peak, fma_peak, read_bandwidth
    peak = fma_peak()
    # With AVX512-BF16, Q·Kᵀ's bf16 products run in pairs (vdpbf16ps),
    # whose probed peak is printed beside the f32 one; P·V stays f32 FMAs
    # (P is f32), so neither peak alone bounds the bf16 rows.
    pair_peak = bf16_dot_peak()
    print(f"f32 FMA peak {peak:.0f} GFLOP/s; bf16 vdpbf16ps peak " +
          (f"{pair_peak:.0f} GFLOP/s" if pair_peak else "n/a (no "
           "AVX512-BF16)"), flush=True)
    # AMX tiles for both contractions (opt-in, contraction-bf16-products=
    # amx) where the host has them: the last column, beside the default.
    from rope_mlir import _jit
    from rope_mlir.compiled import default_pipeline
    amx = (_jit.host_has_feature("amx-bf16") and
           _jit.host_has_feature("avx512bf16"))
    amx_pipeline = default_pipeline().replace(
        "contraction-bf16-products=avx512-dot",
        "contraction-bf16-products=amx")
    lines = ["| case | f32 ms | bf16 ms | f32/bf16 | f32 rate | bf16 rate | "
             "bf16 max error vs float64 (output bf16) | bf16 AMX ms "
             "(f32/AMX) |",
             "|---|---|---|---|---|---|---|---|"]
    cases = ([("prefill", s, s) for s in prefill] +
             [("decode", 1, length) for length in decode])
    for kind, sq, sk in cases:
        times, outputs = {}, {}
        q32 = rng.standard_normal((1, HF_KV_HEADS, HF_HEADS // HF_KV_HEADS,
                                   sq, HF_DIM)).astype(np.float32)
        k32, v32 = (rng.standard_normal((1, HF_KV_HEADS, sk, HF_DIM))
                    .astype(np.float32) for _ in range(2))
        for name, dtype, element in (("f32", np.float32, "f32"),
                                     ("bf16", ml_dtypes.bfloat16, "bf16")):
            text = BF16_MODULE.format(
                q=f"tensor<1x{HF_KV_HEADS}x{HF_HEADS // HF_KV_HEADS}x{sq}x"
                  f"{HF_DIM}x{element}>",
                kv=f"tensor<1x{HF_KV_HEADS}x{sk}x{HF_DIM}x{element}>",
                scale=HF_DIM ** -0.5,
                causal="causal, " if kind == "prefill" else "")
            f = rope_mlir.jit(text).function("main")
            args = [x.astype(dtype) for x in (q32, k32, v32)]
            outputs[name] = (args, np.asarray(f(*args)))
            times[name] = median_ms(lambda f=f, args=args: f(*args),
                                    samples)
        amx_cell = "n/a (no AMX)"
        if amx:
            f = rope_mlir.jit(text, amx_pipeline).function("main")
            args, bf16_out = outputs["bf16"]
            tiles_out = np.asarray(f(*args), np.float64)
            # Both round the same f32 attention to bf16: at most an ulp
            # apart (|out| < 8 here).
            if np.abs(tiles_out - np.asarray(bf16_out, np.float64)).max() > \
                    2.0 ** -4:
                raise SystemExit(f"AMX output differs from the bf16 output "
                                 f"({kind} {sk})")
            amx_ms = median_ms(lambda f=f, args=args: f(*args), samples)
            amx_cell = f"{amx_ms:.2f} ({times['f32'] / amx_ms:.2f})"
        flops = 4.0 * HF_HEADS * HF_DIM * (sq * (sk + 1) / 2
                                           if kind == "prefill" else sk)
        error = "n/a"
        if HF_HEADS * sq * sk <= F64_REFERENCE_MAX:
            args, got = outputs["bf16"]
            q, k, v = (np.asarray(a, np.float64) for a in args)
            scores = np.einsum("bhgmd,bhnd->bhgmn", q, k) * HF_DIM ** -0.5
            if kind == "prefill":
                scores += np.triu(np.full((sq, sk), -np.inf), 1)
            p = np.exp(scores - scores.max(-1, keepdims=True))
            want = np.einsum("bhgmn,bhnd->bhgmd", p / p.sum(-1, keepdims=True),
                             v)
            error = f"{np.abs(np.asarray(got, np.float64) - want).max():.1e}"
        def rate(ms: float, element_bytes: int) -> str:
            # Prefill: causal GFLOP/s and its fraction of the probed f32 FMA
            # peak; decode: K and V bytes read per second.
            if kind == "prefill":
                gflops = flops / ms / 1e6
                return f"{gflops:.0f} GFLOP/s ({gflops / peak:.2f})"
            kv = 2 * HF_KV_HEADS * sk * HF_DIM * element_bytes
            gbs = kv / ms / 1e6
            # Decode: the fraction of one thread's warm read bandwidth over
            # the same bytes, probed now (issue 35's decode target).
            return f"{gbs:.1f} GB/s ({gbs / read_bandwidth(kv):.2f})"
        label = f"{kind} {'S' if kind == 'prefill' else 'L'}={sk}"
        lines.append(
            f"| {label} | {times['f32']:.2f} | {times['bf16']:.2f} | "
            f"{times['f32'] / times['bf16']:.2f} | {rate(times['f32'], 4)} | "
            f"{rate(times['bf16'], 2)} | {error} | {amx_cell} |")
        print(lines[-1], flush=True)
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="small shapes, few samples")
    parser.add_argument("--smoke", action="store_true",
                        help="tiny shapes (python/tests/compiler/test_bench_smoke.py)")
    parser.add_argument("--sections", default="a,b,w,c,hf",
                        help="comma-separated subset of a,b,w,c,hf,bf16,"
                        "hf-bf16 (bf16, hf-bf16: not in the default; "
                        "hf-bf16: the (hf) layer in bf16 as HF models run "
                        "it, vs torch eager and SDPA in bf16 and ours in "
                        "f32, one thread)")
    parser.add_argument("--hf-prefill", metavar="S,...",
                        help="(hf), (bf16), (hf-bf16) prefill lengths "
                        "instead of the mode's")
    parser.add_argument("--hf-decode", metavar="L,...",
                        help="(hf), (bf16), (hf-bf16) decode cache lengths "
                        "instead of the mode's")
    parser.add_argument("--markdown", action="store_true",
                        help="print the (hf) and (hf-bf16) reports as "
                        "markdown")
    parser.add_argument("--write-docs", nargs="?", const=str(DOC),
                        default=None, metavar="FILE",
                        help=f"also write the (hf) report between {HF_BEGIN} "
                        f"and {HF_END} of FILE (default "
                        f"{DOC.relative_to(ROOT)}; the section is appended "
                        "when absent)")
    args = parser.parse_args()
    sections = set(args.sections.split(",")) - {""}
    unknown = sections - {"a", "b", "w", "c", "hf", "bf16", "hf-bf16"}
    if unknown:
        parser.error(f"unknown sections {sorted(unknown)}")
    if args.write_docs is not None and "hf" not in sections:
        parser.error("--write-docs writes the (hf) report: keep hf in "
                     "--sections")
    mode = "smoke" if args.smoke else "quick" if args.quick else "full"
    hf_lengths, hf_bf16_lengths = [], []
    for given, default, bf16_default in zip(
            (args.hf_prefill, args.hf_decode), HF_LENGTHS[mode],
            HF_BF16_LENGTHS[mode]):
        try:
            hf_lengths.append(default if given is None else
                              [int(x) for x in given.split(",") if x])
        except ValueError:
            parser.error(f"--hf-prefill/--hf-decode: integers, got {given!r}")
        hf_bf16_lengths.append(bf16_default if given is None else
                               hf_lengths[-1])
    rng = np.random.default_rng(0)
    samples = 3 if args.quick or args.smoke else 9

    decode_lens = [1024, 4096] if args.quick else [1024, 4096, 16384]
    prefill_lens = [256, 512] if args.quick else [512, 1024, 2048, 4096]
    if args.smoke:
        decode_lens, prefill_lens = [100], [40]
    rows = []

    cores = os.cpu_count() or 1
    print(f"# attention_bench: {platform.machine()}, f32, query tile "
          f"{QUERY_TILE}, key tile {KEY_TILE}; one thread unless a column "
          f"says {cores}T (all cores, OpenMP)")
    if "bf16" in sections:
        from _limits import cpu_name
        print(f"(bf16) rope.attention, Llama-3-8B shapes, f32 vs bf16 "
              f"inputs, one thread ({cpu_name()}; rates against the f32 FMA "
              f"peak probed in this run)")
        prefill, decode = hf_lengths
        bf16_attention_rows(prefill, decode, samples, rng)
    if "a" in sections:
        header = ("(a) decode, B=1, Hq=32, Hkv=8, D=128 | S_k | fused ms | "
                  "Q-only ms | unfused ms | unfused/fused | Q-only/fused | "
                  f"fused {cores}T ms | unfused {cores}T ms | "
                  f"unfused/fused {cores}T")
        print(header)
        for kv in decode_lens:
            c = ScoresConfig(1, 32, 8, 1, kv, 128, layout="bhsd")
            r = measure(c, {
                "fused": (c, True, dict(fuse_key="auto")),
                "qonly": (c, True, dict(fuse_key="never")),
                "unfused": (c, False, {}),
                "fused_mt": (c, True, dict(fuse_key="auto", threads=cores)),
                "unfused_mt": (c, False, dict(threads=cores)),
            }, samples, rng)
            line = (f"decode | {kv} | {r['fused']:.3f} | {r['qonly']:.3f} | "
                    f"{r['unfused']:.3f} | {r['unfused'] / r['fused']:.2f} | "
                    f"{r['qonly'] / r['fused']:.2f} | {r['fused_mt']:.3f} | "
                    f"{r['unfused_mt']:.3f} | "
                    f"{r['unfused_mt'] / r['fused_mt']:.2f}")
            print(line, flush=True)
            rows.append(line)

    if "b" in sections:
        print("(b) prefill, B=1, H=2, D=64 | S | fused Q ms | fused Q+K ms | "
              "unfused ms | plain QK^T ms | unfused/fused Q | "
              "unfused/fused Q+K | "
              f"plain/fused Q | fused Q {cores}T ms | unfused {cores}T ms | "
              f"unfused/fused Q {cores}T")
        for s in prefill_lens:
            c = ScoresConfig(1, 2, 2, s, s, 64, layout="bhsd")
            plain = ScoresConfig(1, 2, 2, s, s, 64, layout="bhsd",
                                 rotate=False)
            r = measure(c, {
                "fused_q": (c, True, dict(fuse_key="auto")),
                "fused_qk": (c, True, dict(fuse_key="always")),
                "unfused": (c, False, {}),
                "plain": (plain, False, {}),
                "fused_mt": (c, True, dict(fuse_key="auto", threads=cores)),
                "unfused_mt": (c, False, dict(threads=cores)),
            }, max(3, samples // 3), rng)
            line = (f"prefill | {s} | {r['fused_q']:.2f} | "
                    f"{r['fused_qk']:.2f} | "
                    f"{r['unfused']:.2f} | {r['plain']:.2f} | "
                    f"{r['unfused'] / r['fused_q']:.2f} | "
                    f"{r['unfused'] / r['fused_qk']:.2f} | "
                    f"{r['plain'] / r['fused_q']:.2f} | {r['fused_mt']:.2f} | "
                    f"{r['unfused_mt']:.2f} | "
                    f"{r['unfused_mt'] / r['fused_mt']:.2f}")
            print(line, flush=True)
            rows.append(line)

    if "w" in sections:
        print("(w) whole attention, fused (online softmax) vs unfused | "
              "case | "
              "fused ms | unfused ms | unfused/fused")
        for kv in decode_lens:
            c = AttentionConfig(1, 32, 8, 1, kv, 128, layout="bhsd",
                                scale=128 ** -0.5)
            r = measure_attention(c, samples, rng)
            line = (f"attention decode Hq=32 Hkv=8 D=128 | S_k={kv} | "
                    f"{r['fused']:.3f} | {r['unfused']:.3f} | "
                    f"{r['unfused'] / r['fused']:.2f}")
            print(line, flush=True)
            rows.append(line)
        for s in prefill_lens[:3]:
            c = AttentionConfig(1, 2, 2, s, s, 64, layout="bhsd",
                                scale=64 ** -0.5, mask=True)
            r = measure_attention(c, max(3, samples // 3), rng)
            line = (f"attention prefill causal H=2 D=64 | S={s} | "
                    f"{r['fused']:.2f} | {r['unfused']:.2f} | "
                    f"{r['unfused'] / r['fused']:.2f}")
            print(line, flush=True)
            rows.append(line)

    if "c" in sections:
        threads = sorted({1, cores})
        print(f"(c) whole attention vs onnxruntime GroupQueryAttention("
              f"do_rotary=1), both on 1 and {cores} threads | case | " +
              " | ".join(f"ours {n}T ms | ORT {n}T ms | ORT/ours {n}T"
                         for n in threads))
        cases = [(f"decode Hq=32 Hkv=8 D=128 | S_k={kv}",
                  AttentionConfig(1, 32, 8, 1, kv, 128, layout="bhsd",
                                  scale=128 ** -0.5), samples)
                 for kv in decode_lens]
        cases += [(f"prefill causal H=2 D=64 | S={s}",
                   AttentionConfig(1, 2, 2, s, s, 64, layout="bhsd",
                                   scale=64 ** -0.5, mask=True),
                   max(3, samples // 3)) for s in prefill_lens]
        for name, c, n in cases:
            r = measure_vs_ort(c, n, rng, threads)
            if isinstance(r, str):
                print(f"(c) skipped: {r}")
                break
            line = (f"vs ORT GQA {name} | " + " | ".join(
                f"{r[('ours', t)]:.3f} | {r[('ort', t)]:.3f} | "
                f"{r[('ort', t)] / r[('ours', t)]:.2f}" for t in threads))
            print(line, flush=True)
            rows.append(line)
    status = 0
    if "hf" in sections:
        status = run_hf(mode, *hf_lengths, cores, args.markdown,
                        args.write_docs)
    if "hf-bf16" in sections:
        status = run_hf_bf16(mode, *hf_bf16_lengths, args.markdown) or status
    return status


if __name__ == "__main__":
    sys.exit(main())
