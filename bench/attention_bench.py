#!/usr/bin/env python3
"""Attention scores with RoPE, S = R(q)·R(k)ᵀ: the rotations fused into the
contraction's tile loops (`--rope-fuse-into-attention`) against rotating Q
and K whole first, and whole attention against onnxruntime, all measured in
the same run (f32; one thread, and all cores where a column says so).

    python3 bench/attention_bench.py            # the tables (minutes)
    python3 bench/attention_bench.py --quick    # small shapes, few samples
    python3 bench/attention_bench.py --smoke    # tiny shapes (the pytest)

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
Times are medians of repeated calls (warm-up excluded) of the compiled
function through ctypes; every output is checked against the unfused one
first (in (c), ORT's against ours). Ratios > 1 mean the fused form (in (c):
ours) is faster.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import platform
import statistics
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
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

    print("(b) prefill, B=1, H=2, D=64 | S | fused Q ms | fused Q+K ms | "
          "unfused ms | plain QK^T ms | unfused/fused Q | unfused/fused Q+K | "
          f"plain/fused Q | fused Q {cores}T ms | unfused {cores}T ms | "
          f"unfused/fused Q {cores}T")
    for s in prefill_lens:
        c = ScoresConfig(1, 2, 2, s, s, 64, layout="bhsd")
        plain = ScoresConfig(1, 2, 2, s, s, 64, layout="bhsd", rotate=False)
        r = measure(c, {
            "fused_q": (c, True, dict(fuse_key="auto")),
            "fused_qk": (c, True, dict(fuse_key="always")),
            "unfused": (c, False, {}),
            "plain": (plain, False, {}),
            "fused_mt": (c, True, dict(fuse_key="auto", threads=cores)),
            "unfused_mt": (c, False, dict(threads=cores)),
        }, max(3, samples // 3), rng)
        line = (f"prefill | {s} | {r['fused_q']:.2f} | {r['fused_qk']:.2f} | "
                f"{r['unfused']:.2f} | {r['plain']:.2f} | "
                f"{r['unfused'] / r['fused_q']:.2f} | "
                f"{r['unfused'] / r['fused_qk']:.2f} | "
                f"{r['plain'] / r['fused_q']:.2f} | {r['fused_mt']:.2f} | "
                f"{r['unfused_mt']:.2f} | "
                f"{r['unfused_mt'] / r['fused_mt']:.2f}")
        print(line, flush=True)
        rows.append(line)

    print("(w) whole attention, fused (online softmax) vs unfused | case | "
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
