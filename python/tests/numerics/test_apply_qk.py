# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""rope_mlir.apply_qk (issue 18): Q and K rotated together, one cos/sin per
token (convert-rope-to-vector fuses the two rope.apply of its kernel).

- float64 differential: random [B, S, H, D] / [T, H, D] shapes with Hq != Hkv
  (decode- and prefill-like), explicit i32/i64 positions, scalar and per-row
  offsets, implicit positions, gathered and pre-gathered caches, both
  layouts, partial rotary, f32/f64/bf16/f16, scaling schemes; tolerances as
  test_differential.py (2^-20 of the pair magnitude for f32/f64, one ulp
  more for f16/bf16);
- bitwise: apply_qk returns exactly what two rope_mlir.apply calls return
  (the same arithmetic per row), also in place and through DLPack;
- the kernel is fused: its IR has two rope.apply on the same operands and
  the lowered module one token loop (a check that the pass runs);
- errors name the argument: q/k dtypes, ranks, head dims, token sizes,
  positions shape, in-place on one only, overlapping outputs.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import rope_mlir
from rope_mlir import _jit, fused, kernel, reference

DTYPES = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32,
          "f64": np.float64}


def _pair_scale(x64, p, layout, magnitude):
    rot = x64[..., :p]
    if layout == "half":
        n = np.sqrt(rot[..., :p // 2] ** 2 + rot[..., p // 2:] ** 2)
        n = np.concatenate([n, n], axis=-1)
    else:
        n = np.repeat(np.sqrt(rot[..., 0::2] ** 2 + rot[..., 1::2] ** 2), 2,
                      axis=-1)
    return n * 1.5 * magnitude + 1e-30


def _check(x, got, ref, p, layout, dtype, magnitude=1.0):
    got64 = np.asarray(got).astype(np.float64)
    x64 = np.asarray(x).astype(np.float64)
    np.testing.assert_array_equal(got64[..., p:], x64[..., p:])
    scale = _pair_scale(x64, p, layout, magnitude)
    err = np.abs(got64[..., :p] - ref[..., :p])
    tol = 2.0 ** -20 * scale
    if dtype in ("f16", "bf16"):
        t = DTYPES[dtype]
        tol = tol + np.abs(np.spacing(np.abs(ref[..., :p]).astype(t)).astype(
            np.float64))
    bad = err > tol
    assert not bad.any(), f"{int(bad.sum())} values out of tolerance, worst " \
                          f"{(err / scale).max():.3g}"


def _case(seed):
    """Random arguments for apply_qk and apply (same keyword arguments)."""
    rng = np.random.default_rng(seed)
    dtype = str(rng.choice(["f32", "f32", "f64", "bf16", "f16"]))
    head_dim = int(rng.choice([8, 32, 64, 128]))
    p = head_dim if rng.random() < 0.6 else \
        int(2 * rng.integers(1, head_dim // 2 + 1))
    hkv = int(rng.choice([1, 2, 4]))
    hq = hkv * int(rng.choice([1, 2, 4, 8]))
    rank = int(rng.choice([3, 4, 4]))
    if rank == 4:
        b = int(rng.choice([1, 3, 64]))  # 64: decode rows of one token
        s = 1 if b == 64 else int(rng.choice([1, 5, 33]))
        tokens = (b, s)
    else:
        tokens = (int(rng.choice([1, 7, 40])),)
    t = DTYPES[dtype]
    q = rng.standard_normal(tokens + (hq, head_dim)).astype(t)
    k = rng.standard_normal(tokens + (hkv, head_dim)).astype(t)
    kw = dict(layout=str(rng.choice(["half", "interleaved"])), rotary_dim=p,
              base=float(rng.choice([10000.0, 500000.0])))
    form = str(rng.choice(["explicit", "offset", "row_offset", "none",
                           "gathered", "pregathered"]))
    if form == "row_offset" and rank == 3:
        form = "offset"
    positions = None
    max_pos = 1 << 20
    if form in ("explicit", "gathered"):
        positions = rng.integers(0, max_pos if form == "explicit" else 512,
                                 tokens).astype(rng.choice([np.int32,
                                                            np.int64]))
    elif form == "offset":
        kw["offset"] = int(rng.integers(0, max_pos))
    elif form == "row_offset":
        kw["offset"] = rng.integers(0, max_pos, tokens[0]).astype(np.int64)
    if form == "gathered":
        theta, _ = reference.inv_frequencies(p, kw["base"])
        cos, sin = reference.cos_sin(np.arange(512), theta)
        kw.update(cos_cache=cos.astype(np.float32),
                  sin_cache=sin.astype(np.float32))
    elif form == "pregathered":
        kw.update(cos_cache=rng.uniform(-1, 1, tokens + (p // 2,)).astype(
            np.float32), sin_cache=rng.uniform(-1, 1, tokens + (p // 2,))
            .astype(np.float32))
    elif rng.random() < 0.3:
        kw["scaling"] = {"rope_type": "linear", "factor": 4.0}
    return dtype, q, k, positions, kw


@pytest.mark.parametrize("seed", range(60))
def test_differential_and_bitwise(seed):
    dtype, q, k, positions, kw = _case(seed)
    rq, rk = rope_mlir.apply_qk(q, k, positions, **kw)
    assert rq.dtype == q.dtype and rk.dtype == k.dtype
    assert rq.shape == q.shape and rk.shape == k.shape
    ref_kw = {key: v for key, v in kw.items() if key != "scaling"}
    if "scaling" in kw:
        ref_kw["scaling"] = kw["scaling"]
    for x, got in ((q, rq), (k, rk)):
        ref = reference.apply(x, positions, **ref_kw)
        _check(x, got, ref, kw["rotary_dim"], kw["layout"], dtype)
    # Bitwise the two separate calls.
    np.testing.assert_array_equal(rq, rope_mlir.apply(q, positions, **kw))
    np.testing.assert_array_equal(rk, rope_mlir.apply(k, positions, **kw))


@pytest.mark.parametrize("seed", range(8))
def test_in_place_bitwise(seed):
    dtype, q, k, positions, kw = _case(100 + seed)
    q2, k2 = q.copy(), k.copy()
    rq, rk = rope_mlir.apply_qk(q2, k2, positions, out_q=q2, out_k=k2, **kw)
    assert rq is q2 and rk is k2
    np.testing.assert_array_equal(q2, rope_mlir.apply(q, positions, **kw))
    np.testing.assert_array_equal(k2, rope_mlir.apply(k, positions, **kw))


@pytest.mark.parametrize("extra", [
    dict(threads=2), dict(threads=0),
    dict(scaling={"rope_type": "dynamic", "factor": 2.0,
                  "max_position_embeddings": 2048}),
    dict(scaling={"rope_type": "yarn", "factor": 4.0,
                  "original_max_position_embeddings": 4096}),
    dict(mrope_section=[8, 12, 12]),
])
def test_threads_and_schemes_bitwise(extra):
    """OpenMP token loops, per-call (dynamic) frequencies, a magnitude and
    M-RoPE positions [3, *tokens]: still bitwise two apply calls."""
    rng = np.random.default_rng(5)
    q = rng.standard_normal((3, 37, 8, 64)).astype(np.float32)
    k = rng.standard_normal((3, 37, 2, 64)).astype(np.float32)
    shape = (3, 3, 37) if "mrope_section" in extra else (3, 37)
    pos = rng.integers(0, 5000, shape)
    rq, rk = rope_mlir.apply_qk(q, k, pos, **extra)
    np.testing.assert_array_equal(rq, rope_mlir.apply(q, pos, **extra))
    np.testing.assert_array_equal(rk, rope_mlir.apply(k, pos, **extra))


def test_out_arguments_and_token_dims():
    rng = np.random.default_rng(7)
    # [B, H, S, D]: heads before the sequence (the tiled form).
    q = rng.standard_normal((2, 8, 6, 64)).astype(np.float32)
    k = rng.standard_normal((2, 2, 6, 64)).astype(np.float32)
    pos = rng.integers(0, 1000, (2, 6))
    oq, ok = np.empty_like(q), np.empty_like(k)
    rq, rk = rope_mlir.apply_qk(q, k, pos, token_dims=(0, 2), out_q=oq,
                                out_k=ok)
    assert rq is oq and rk is ok
    np.testing.assert_array_equal(
        oq, rope_mlir.apply(q, pos, token_dims=(0, 2)))
    np.testing.assert_array_equal(
        ok, rope_mlir.apply(k, pos, token_dims=(0, 2)))


@pytest.mark.parametrize("layout", ["half", "interleaved"])
@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize("heads", [(8, 2), (5, 1), (32, 8)])
def test_heads_before_tokens_bitwise(layout, inplace, heads):
    """[B, H, S, D] (token dims (0, 2)): the tiled form, one cos/sin table
    per tile for both; odd head counts take the jam's remainder loop."""
    rng = np.random.default_rng(sum(heads))
    hq, hkv = heads
    q = rng.standard_normal((2, hq, 45, 64)).astype(np.float32)
    k = rng.standard_normal((2, hkv, 45, 64)).astype(np.float32)
    pos = rng.integers(0, 10000, (2, 45))
    kw = dict(token_dims=(0, 2), layout=layout, rotary_dim=48)
    qq, kk = q.copy(), k.copy()
    if inplace:
        rq, rk = rope_mlir.apply_qk(qq, kk, pos, out_q=qq, out_k=kk, **kw)
        assert rq is qq and rk is kk
    else:
        rq, rk = rope_mlir.apply_qk(qq, kk, pos, **kw)
    np.testing.assert_array_equal(rq, rope_mlir.apply(q, pos, **kw))
    np.testing.assert_array_equal(rk, rope_mlir.apply(k, pos, **kw))


def test_non_contiguous_and_lists():
    rng = np.random.default_rng(3)
    q = rng.standard_normal((5, 8, 32)).astype(np.float32)[:, ::2]
    k = rng.standard_normal((5, 2, 32)).astype(np.float32)
    pos = [3, 1, 4, 1, 5]
    rq, rk = rope_mlir.apply_qk(q, k, pos)
    np.testing.assert_array_equal(rq, rope_mlir.apply(q, pos))
    np.testing.assert_array_equal(rk, rope_mlir.apply(k, pos))


def test_kernel_is_fused():
    """The q/k kernel's IR holds two rope.apply on one positions value, and
    its lowering one token loop over both (with the run-time size check,
    inside the guard that skips the whole group when it has no heads)."""
    config = kernel.KernelConfig(dtype="f32", rank=4, head_dim=128,
                                 positions="explicit")
    ir = rope_mlir.compile_qk(config).ir
    assert ir.count("rope.apply") == 2
    lowered = _jit.lower(ir, "builtin.module(convert-rope-to-vector)")
    assert lowered.count("scf.forall (") == 3  # fused + the two unfused
    assert lowered.count("scf.if") == 2  # the size check, the empty guard
    assert lowered.count("math.cos") == 3
    # The fused loop has two shared outputs (and results).
    assert ":2 = scf.forall (" in lowered


def _arrays(hq=8, hkv=2, dtype=np.float32):
    rng = np.random.default_rng(11)
    return (rng.standard_normal((2, 4, hq, 16)).astype(dtype),
            rng.standard_normal((2, 4, hkv, 16)).astype(dtype),
            rng.integers(0, 100, (2, 4)))


def test_errors():
    q, k, pos = _arrays()
    with pytest.raises(TypeError, match="q has dtype float32 but k float64"):
        rope_mlir.apply_qk(q, k.astype(np.float64), pos)
    # k's shape rule (its spec's like): its token dims are q's.
    with pytest.raises(ValueError, match=r"k has shape \(4, 2, 16\), "
                       r"expected \(2, 4, '\?', 16\) \(dims \(0, 1\) are "
                       r"q's dims \(0, 1\)"):
        rope_mlir.apply_qk(q, k[0], pos)
    with pytest.raises(ValueError, match=r"k has shape \(2, 4, 2, 8\), "
                       r"expected \(2, 4, '\?', 16\)"):
        rope_mlir.apply_qk(q, k[..., :8], pos)
    with pytest.raises(ValueError, match=r"k has shape \(2, 3, 2, 16\), "
                       r"expected \(2, 4, '\?', 16\) \(dims \(0, 1\) are "
                       r"q's dims \(0, 1\); only head dims may differ"):
        rope_mlir.apply_qk(q, k[:, :3], pos)
    with pytest.raises(ValueError, match=r"positions has shape \(2, 3\)"):
        rope_mlir.apply_qk(q, k, pos[:, :3])
    with pytest.raises(ValueError, match="both in place"):
        rope_mlir.apply_qk(q, k, pos, out_q=q)
    with pytest.raises(ValueError, match="out_q and out_k overlap"):
        out = np.empty((2, 4, 8, 16), np.float32)
        rope_mlir.apply_qk(q, k, pos, out_q=out, out_k=out[:, :, :2])
    with pytest.raises(ValueError, match="q and k, rotated in place, must "
                       "be apart"):
        buf = np.zeros(1024 + 256 - 16, np.float32)  # k overlaps q's end
        qv = buf[:1024].reshape(2, 4, 8, 16)
        kv = buf[1024 - 16:].reshape(2, 4, 2, 16)
        rope_mlir.apply_qk(qv, kv, pos, out_q=qv, out_k=kv)
    with pytest.raises(ValueError, match="out_k overlaps the other input"):
        rope_mlir.apply_qk(q, k, pos, out_k=q[:, :, :2])
    with pytest.raises(ValueError, match="out_k has shape"):
        rope_mlir.apply_qk(q, k, pos, out_k=np.empty((2, 4, 3, 16),
                                                     np.float32))
    with pytest.raises(ValueError, match="read-only"):
        ro = np.empty_like(q)
        ro.flags.writeable = False
        rope_mlir.apply_qk(q, k, pos, out_q=ro, out_k=np.empty_like(k))
    with pytest.raises(IndexError, match="the cos/sin cache has 50 rows"):
        table = np.zeros((50, 8), np.float32)  # positions reach 99
        rope_mlir.apply_qk(q, k, pos + 50, cos_cache=table, sin_cache=table)
    with pytest.raises(ValueError, match="rotary_dim"):
        rope_mlir.apply_qk(q, k, pos, rotary_dim=3)
    with pytest.raises(ValueError, match="positions and offset"):
        rope_mlir.apply_qk(q, k, pos, offset=2)
    with pytest.raises(ValueError, match="static shape"):
        fused.QKKernel(kernel.KernelConfig(dtype="f32", rank=4, head_dim=16,
                                           static_shape=(2, 4, 8, 16)))
