# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""rope_mlir.apply_mla: DeepSeek-V2/V3 MLA's RoPE and cache append
(python/rope_mlir/mla.py) on both CPU lowerings.

- float64 differential on random shapes: q's rope channels against
  reference.apply (within 2^-18 of the pair magnitude + one ulp of
  f16/bf16), q's nope channels bit for bit; the cache rows of valid slots:
  c_kv bit for bit (unquantized) and the rotated k_pe like q's rope part;
  quantized caches by test_neighbours.py's rule (between the quantizations
  of y - e and y + e, >= 99% exactly the documented quantization);
  concatenated and separate caches, slots and block tables, interleaved
  and half, DeepSeek-V3's YaRN, q given or not, out=None / q / another array.
- every other byte of the cache unchanged (random bytes, NaN patterns too);
  padding slots (-1) write nothing.
- errors name the argument, before any code runs.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import rope_mlir
from rope_mlir import mla, reference

import _paths

DTYPES = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32}
QUANT = {"f8e4m3fn": ml_dtypes.float8_e4m3fn, "f8e5m2": ml_dtypes.float8_e5m2,
         "i8": np.int8}
#: DeepSeek-V3's rope_scaling (config.json) with max_position_embeddings.
DEEPSEEK_V3_YARN = {"type": "yarn", "factor": 40,
                    "original_max_position_embeddings": 4096,
                    "beta_fast": 32, "beta_slow": 1, "mscale": 1.0,
                    "mscale_all_dim": 1.0,
                    "max_position_embeddings": 163840}


def _pair_magnitude(x64, layout):
    if layout == "half":
        h = x64.shape[-1] // 2
        n = np.sqrt(x64[..., :h] ** 2 + x64[..., h:] ** 2)
        return np.concatenate([n, n], axis=-1) + 1e-30
    return np.repeat(np.sqrt(x64[..., 0::2] ** 2 + x64[..., 1::2] ** 2), 2,
                     axis=-1) + 1e-30


def _check_rotated(got, x, y, layout):
    """got (any float dtype) against the float64 rotation y of x."""
    got64 = got.astype(np.float64)
    tol = 2.0 ** -18 * _pair_magnitude(x.astype(np.float64), layout)
    if got.dtype != np.float32:
        tol = tol + np.abs(np.spacing(np.abs(y).astype(got.dtype))).astype(
            np.float64)
    err = np.abs(got64 - y)
    assert not (err > tol).any(), \
        f"{int((err > tol).sum())} of {err.size} values out of tolerance"


def _check_quantized(got, y, e, quant, scale):
    got64 = got.astype(np.float64)
    exact = reference.quantize(y, quant, scale)
    lo = reference.quantize(y - e, quant, scale)
    hi = reference.quantize(y + e, quant, scale)
    nan = np.isnan(exact)
    assert not np.isnan(got64[~nan]).any()
    inside = (got64 >= np.minimum(lo, hi)) & (got64 <= np.maximum(lo, hi))
    assert inside[~nan].all(), \
        f"{int((~inside & ~nan).sum())} quantized values outside the bracket"
    same = (got64 == exact)[~nan].mean() if (~nan).any() else 1.0
    assert same >= 0.99, f"only {same:.4f} exactly equal"


def _random_cache(rng, shape, dtype):
    """A cache of random bytes (any bit pattern, NaNs included)."""
    raw = rng.integers(0, 256, size=int(np.prod(shape)) * np.dtype(
        dtype).itemsize, dtype=np.uint8)
    return raw.view(dtype).reshape(shape).copy()


def _case(seed):
    rng = np.random.default_rng(1000 + seed)
    dtype = ["bf16", "f32", "f16"][seed % 3]
    quant = [None, None, "f8e4m3fn", "f8e5m2", "i8"][seed % 5]
    lora = int(rng.choice([512, 32, 8]))
    rope_dim = int(rng.choice([64, 16, 2]))
    nope = int(rng.choice([128, 0, 24]))
    heads = int(rng.choice([1, 3, 16]))
    tokens = int(rng.choice([1, 5, 33]))
    layout = "interleaved" if rng.random() < 0.7 else "half"
    form = "concat" if rng.random() < 0.6 else "separate"
    paged = rng.random() < 0.5
    yarn = rng.random() < 0.3
    with_q = rng.random() < 0.8
    out_mode = str(rng.choice(["none", "q", "other"])) if with_q else "none"
    t = DTYPES[dtype]
    scale_mag = float(rng.choice([0.1, 1.0, 10.0]))
    q = (rng.standard_normal((tokens, heads, nope + rope_dim)) *
         scale_mag).astype(t) if with_q else None
    c_kv = (rng.standard_normal((tokens, lora)) * scale_mag).astype(t)
    k_pe = (rng.standard_normal((tokens, rope_dim)) * scale_mag).astype(t)
    if rng.random() < 0.3:
        k_pe = k_pe.reshape(tokens, 1, rope_dim)  # vLLM's k_pe shape
    cdtype = QUANT[quant] if quant else t
    kw = dict(rope_dim=rope_dim, layout=layout)
    if yarn:
        kw["scaling"] = DEEPSEEK_V3_YARN
    else:
        kw["base"] = float(rng.choice([10000.0, 1000000.0]))
    if quant:
        limit = reference.QUANT_LIMITS[quant]
        kw["kv_scale"] = np.float32(limit / (3.0 * scale_mag) *
                                    rng.choice([0.5, 1.0, 2.0]))
    positions = rng.integers(0, 5000, size=tokens)
    if rng.random() < 0.3:
        positions = positions.astype(np.int32)
    if paged:
        page = int(rng.choice([16, 64]))
        batch = tokens if rng.random() < 0.5 else 3
        cols = 5000 // page + 1
        blocks = batch * cols + 7
        table = rng.permutation(blocks)[:batch * cols].reshape(batch, cols)
        kw["block_table"] = table
        rows_shape = (blocks, page)
        if batch != tokens:
            b = rng.integers(0, batch, size=tokens)
            kw["batch_indices"] = b
        else:
            b = np.arange(tokens)
        # Distinct slots: distinct (row, position) pairs.
        positions = positions.copy()
        for i in range(tokens):
            while any(b[j] == b[i] and positions[j] == positions[i]
                      for j in range(i)):
                positions[i] = (positions[i] + 1) % 5000
        slots = (table[b, positions // page] * page + positions % page)
    else:
        rows = int(rng.choice([tokens + 3, 200]))
        rows_shape = (rows,)
        slots = rng.permutation(rows)[:tokens].astype(np.int64)
        if tokens > 1 and rng.random() < 0.5:
            slots[rng.integers(0, tokens)] = -1  # a padding token
        kw["slots"] = slots if rng.random() < 0.7 else slots.astype(np.int32)
    if form == "concat":
        cache = _random_cache(rng, rows_shape + (lora + rope_dim,), cdtype)
    else:
        cache = (_random_cache(rng, rows_shape + (lora,), cdtype),
                 _random_cache(rng, rows_shape + (rope_dim,), cdtype))
    return dict(q=q, c_kv=c_kv, k_pe=k_pe, cache=cache, positions=positions,
                kw=kw, slots=np.asarray(slots, np.int64), quant=quant,
                out_mode=out_mode, layout=layout, lora=lora,
                rope_dim=rope_dim, nope=nope)


def _rotation_kw(kw):
    return {k: kw[k] for k in ("layout", "base", "scaling") if k in kw}


def _run_and_check(case, lowering):
    q, c_kv, k_pe = case["q"], case["c_kv"], case["k_pe"]
    cache, kw = case["cache"], dict(case["kw"], lowering=lowering)
    positions, slots = case["positions"], case["slots"]
    lora, rope_dim, quant = case["lora"], case["rope_dim"], case["quant"]
    caches = cache if isinstance(cache, tuple) else (cache,)
    before = [c.copy() for c in caches]
    q_before = None if q is None else q.copy()
    out = None
    if case["out_mode"] == "q":
        out = q
    elif case["out_mode"] == "other":
        out = np.full_like(q, 7)
    got = mla.apply_mla(q, c_kv, k_pe, cache, positions, out=out, **kw)

    rot = _rotation_kw(kw)
    if q is not None:
        if case["out_mode"] == "none":
            np.testing.assert_array_equal(q.view(np.uint8),
                                          q_before.view(np.uint8))
        else:
            assert got is out
        nope = case["nope"]
        # The nope channels are copied bit for bit.
        np.testing.assert_array_equal(got[..., :nope].view(np.uint8),
                                      q_before[..., :nope].view(np.uint8))
        y = reference.apply(q_before[..., nope:].astype(np.float64),
                            positions, **rot)
        _check_rotated(got[..., nope:], q_before[..., nope:], y,
                       case["layout"])
    else:
        assert got is None

    # Cache rows as [rows, width] views.
    flat = [c.reshape(-1, c.shape[-1]) for c in caches]
    flat_before = [c.reshape(-1, c.shape[-1]) for c in before]
    if len(flat) == 1:
        ckv_rows = lambda f: f[:, :lora]  # noqa: E731
        kpe_rows = lambda f: f[:, lora:]  # noqa: E731
        ckv_got, kpe_got = ckv_rows(flat[0]), kpe_rows(flat[0])
    else:
        ckv_got, kpe_got = flat
    valid = slots >= 0
    written = np.zeros(flat[0].shape[0], bool)
    written[slots[valid]] = True
    # Untouched rows: every byte unchanged.
    for now, then in zip(flat, flat_before):
        np.testing.assert_array_equal(now[~written].view(np.uint8),
                                      then[~written].view(np.uint8))
    s = slots[valid]
    k64 = k_pe.reshape(-1, rope_dim).astype(np.float64)
    k_rot = reference.apply(k64[:, None, :], positions, **rot)[:, 0, :]
    c64 = c_kv.astype(np.float64)
    if quant is None:
        np.testing.assert_array_equal(ckv_got[s].view(np.uint8),
                                      c_kv[valid].view(np.uint8))
        _check_rotated(kpe_got[s], k64[valid], k_rot[valid], case["layout"])
    else:
        scale = kw["kv_scale"]
        e_k = 2.0 ** -18 * _pair_magnitude(k64[valid], case["layout"])
        _check_quantized(kpe_got[s], k_rot[valid], e_k, quant, scale)
        # c_kv is not rotated: x * s has one f32 rounding.
        e_c = 2.0 ** -23 * np.abs(c64[valid])
        _check_quantized(ckv_got[s], c64[valid], e_c, quant, scale)


@pytest.mark.parametrize("lowering", ["vector", "scalar"])
@pytest.mark.parametrize("seed", range(20))
def test_against_float64(seed, lowering):
    _run_and_check(_case(seed), lowering)


@pytest.mark.parametrize("lowering", ["vector", "scalar"])
@pytest.mark.parametrize("quant", [None, "f8e4m3fn"])
def test_deepseek_v3_decode(quant, lowering):
    """DeepSeek-V3's shapes: 64 decode tokens, 128 heads, q 128 | 64,
    c_kv 512, a paged 576-wide cache (64-row pages), YaRN, bf16."""
    rng = np.random.default_rng(3)
    b, h, page = 64, 128, 64
    q = rng.standard_normal((b, h, 192)).astype(ml_dtypes.bfloat16)
    c_kv = rng.standard_normal((b, 512)).astype(ml_dtypes.bfloat16)
    k_pe = rng.standard_normal((b, 1, 64)).astype(ml_dtypes.bfloat16)
    positions = rng.integers(0, 4096, size=b)
    table = rng.permutation(b * 64).reshape(b, 64)
    cdtype = QUANT[quant] if quant else ml_dtypes.bfloat16
    cache = _random_cache(rng, (b * 64, page, 576), cdtype)
    kw = dict(block_table=table, scaling=DEEPSEEK_V3_YARN,
              layout="interleaved", rope_dim=64)
    if quant:
        kw["kv_scale"] = np.float32(100.0)
    slots = table[np.arange(b), positions // page] * page + positions % page
    _run_and_check(dict(q=q, c_kv=c_kv, k_pe=k_pe, cache=cache,
                        positions=positions, kw=kw, slots=slots,
                        quant=quant, out_mode="q", layout="interleaved",
                        lora=512, rope_dim=64, nope=128), lowering)


@pytest.mark.parametrize("lowering", ["vector", "scalar"])
def test_padding_slots_write_nothing(lowering):
    rng = np.random.default_rng(5)
    c_kv = rng.standard_normal((6, 16)).astype(np.float32)
    k_pe = rng.standard_normal((6, 8)).astype(np.float32)
    cache = _random_cache(rng, (10, 24), np.float32)
    before = cache.copy()
    slots = np.array([-1, 4, -1, -1, 0, -1])
    mla.apply_mla(None, c_kv, k_pe, cache, np.arange(6), slots=slots,
                        rope_dim=8, lowering=lowering)
    changed = np.nonzero((cache.view(np.uint32) !=
                          before.view(np.uint32)).any(-1))[0]
    assert set(changed) <= {0, 4}
    np.testing.assert_array_equal(cache[4, :16], c_kv[1])
    np.testing.assert_array_equal(cache[0, :16], c_kv[4])


def test_matches_apply_on_the_slice():
    """The fused q rotation equals rope_mlir.apply on q's rope channels,
    bit for bit (same op, same arithmetic)."""
    rng = np.random.default_rng(9)
    q = rng.standard_normal((7, 4, 192)).astype(np.float32)
    positions = rng.integers(0, 9000, size=7)
    cache = np.zeros((16, 576), np.float32)
    got = mla.apply_mla(
        q, np.zeros((7, 512), np.float32), np.zeros((7, 64), np.float32),
        cache, positions, slots=np.arange(7), scaling=DEEPSEEK_V3_YARN)
    want = rope_mlir.apply(np.ascontiguousarray(q[..., 128:]), positions,
                           layout="interleaved", scaling=DEEPSEEK_V3_YARN)
    np.testing.assert_array_equal(got[..., 128:], want)


FIXTURES = _paths.FIXTURES


def test_transformers_deepseek_v3_rotation():
    """Against transformers' own DeepSeek-V3 code (apply_rotary_pos_emb_
    interleave, recorded by scripts/gen-hf-fixtures.py in float64): it
    rotates the pairs (2i, 2i + 1) and writes the rotated even channels,
    then the odd ones (fixture output_order "deinterleaved"), for q and k
    alike, so q.k is unchanged. apply_mla writes each pair back in place
    (vLLM's is_neox_style=False): HF's output is ours[..., perm] with perm
    = (0, 2, ..., 62, 1, 3, ..., 63)."""
    import json
    meta = json.loads((FIXTURES / "hf" / "models" /
                       "deepseek_v3.json").read_text())
    assert meta["layout"] == "interleaved"
    assert meta["output_order"] == "deinterleaved"
    arrays = np.load(FIXTURES / "hf" / "models" / "arrays" /
                     f"{meta['arrays']}.npz")
    x, y = arrays["x"].astype(np.float32), arrays["y"]
    s, d = x.shape[0], x.shape[-1]
    perm = np.concatenate([np.arange(0, d, 2), np.arange(1, d, 2)])
    for positions, want in zip(arrays["positions"], y):
        q = np.concatenate([np.full((s, 1, 128), 5.0, np.float32), x], -1)
        cache = np.zeros((s, 512 + d), np.float32)
        got = mla.apply_mla(q, np.zeros((s, 512), np.float32), x, cache,
                            positions, slots=np.arange(s), rope_dim=d)
        np.testing.assert_allclose(got[..., 128:][..., perm], want,
                                   rtol=0, atol=2e-6)
        np.testing.assert_allclose(cache[:, 512:][:, perm], want[:, 0],
                                   rtol=0, atol=2e-6)
        assert (got[..., :128] == 5.0).all()


def test_deepseek_v3_config_json():
    """The real DeepSeek-V3 config.json through from_hf_config: its YaRN
    (factor 40) and interleaved layout, qk_rope_head_dim 64."""
    import json
    config = json.loads((FIXTURES / "hf" / "deepseek_v3.json").read_text())
    spec = rope_mlir.from_hf_config(config)
    assert (spec.head_dim, spec.layout) == (64, "interleaved")
    rng = np.random.default_rng(11)
    q = rng.standard_normal((9, 4, 192)).astype(np.float32)
    k_pe = rng.standard_normal((9, 64)).astype(np.float32)
    positions = rng.integers(0, 160000, size=9)
    cache = np.zeros((16, 576), np.float32)
    got = mla.apply_mla(q, np.zeros((9, 512), np.float32), k_pe, cache,
                        positions, slots=np.arange(9) + 7,
                        layout=spec.layout, base=spec.base,
                        scaling=spec.scaling)
    y = reference.apply(q[..., 128:].astype(np.float64), positions,
                        layout="interleaved", base=spec.base,
                        scaling=spec.scaling)
    _check_rotated(got[..., 128:], q[..., 128:], y, "interleaved")
    k = reference.apply(k_pe[:, None].astype(np.float64), positions,
                        layout="interleaved", base=spec.base,
                        scaling=spec.scaling)[:, 0]
    _check_rotated(cache[7:, 512:], k_pe, k, "interleaved")
    assert rope_mlir.apply_mla is mla.apply_mla


def test_ir_is_one_function_of_the_existing_ops():
    import re
    text = mla.emit_mla(mla.MLAConfig(dtype="bf16"))
    assert text.count("func.func") == 1
    assert text.count("rope.apply") == 2 and "rope.cache_write" in text
    assert re.search(r"tensor.extract_slice %q_t\[0, 0, 128\] \[%\w+, %\w+, "
                     r"64\] \[1, 1, 1\]", text)
    assert re.search(r"tensor.extract_slice %cache_t\[0, 0, 512\] \[%\w+, 1, "
                     r"64\]", text)
    assert text.count("slots(") == 2
    # k_pe's rope.apply right after q's, every operand defined before q's:
    # the vector lowering's sibling rule (one cos/sin per token).
    lines = [line.strip() for line in text.splitlines()]
    q_at = next(i for i, line in enumerate(lines) if "%q_rot = " in line)
    assert lines[q_at + 1].startswith("%k_rot = rope.apply")
    assert lines.index(next(line for line in lines if "%k_part = " in line)) \
        < q_at


# -- errors ------------------------------------------------------------------

def _args():
    q = np.ones((4, 2, 24), np.float32)
    c_kv = np.ones((4, 16), np.float32)
    k_pe = np.ones((4, 8), np.float32)
    cache = np.zeros((32, 24), np.float32)
    return q, c_kv, k_pe, cache, np.arange(4)


def _call(**over):
    q, c_kv, k_pe, cache, positions = _args()
    args = dict(q=q, c_kv=c_kv, k_pe=k_pe, kv_cache=cache,
                positions=positions)
    kw = dict(slots=np.arange(4), rope_dim=8)
    for key, value in over.items():
        (args if key in args else kw)[key] = value
    kw = {k: v for k, v in kw.items() if v is not _DROP}
    return mla.apply_mla(args["q"], args["c_kv"], args["k_pe"],
                               args["kv_cache"], args["positions"], **kw)


_DROP = object()
_PAGED = np.zeros((4, 8, 24), np.float32)


@pytest.mark.parametrize("over, error, match", [
    (dict(q=np.ones((4, 2, 24), np.float64)), TypeError, "q has dtype"),
    (dict(q=np.ones((5, 2, 24), np.float32)), ValueError, "q has shape"),
    (dict(q=np.ones((4, 24), np.float32)), ValueError, "q has shape"),
    (dict(c_kv=[[1.0]]), TypeError, "c_kv must be a numpy array"),
    (dict(c_kv=np.ones((4, 16), np.int32)), TypeError, "c_kv has dtype"),
    (dict(k_pe=np.ones((4, 6), np.float32)), ValueError, "k_pe has shape"),
    (dict(k_pe=np.ones((4, 8), np.float16)), TypeError, "k_pe has dtype"),
    (dict(kv_cache=np.zeros((32, 23), np.float32)), ValueError,
     "kv_cache has shape"),
    (dict(kv_cache=np.zeros((32, 24), np.float16)), TypeError,
     "kv_cache has dtype"),
    (dict(kv_cache=np.zeros((32, 24), ml_dtypes.float8_e4m3fn)), ValueError,
     "pass kv_scale"),
    (dict(kv_scale=1.0), ValueError, "kv_scale is given"),
    (dict(kv_cache=np.zeros((32, 24), np.int8), kv_scale=np.ones(2, np.float32)),
     ValueError, "kv_scale has shape"),
    (dict(kv_cache=np.zeros((32, 24), np.int8), kv_scale=float("inf")),
     ValueError, "kv_scale must be finite"),
    (dict(kv_cache=np.zeros((32, 48), np.float32)[:, ::2]), ValueError,
     "kv_cache must be C-contiguous"),
    (dict(kv_cache=(np.zeros((32, 16), np.float32),
                    np.zeros((31, 8), np.float32))), ValueError,
     "leading dims must agree"),
    (dict(kv_cache=(np.zeros((32, 16), np.float32),)), ValueError,
     "a pair"),
    (dict(positions=np.arange(5)), ValueError, "positions has shape"),
    (dict(positions=np.arange(4.0)), TypeError, "positions must be an integer"),
    (dict(slots=np.arange(3)), ValueError, "slots has shape"),
    (dict(slots=np.array([0, 1, 2, 32])), IndexError, "slots span"),
    (dict(slots=np.array([0, 1, -2, 3])), IndexError, "slots span"),
    (dict(slots=np.array([0, 1, 1, 3])), ValueError, "two tokens write"),
    (dict(slots=_DROP), ValueError, "exactly one of slots"),
    (dict(block_table=np.zeros((4, 1), np.int64)), ValueError,
     "exactly one of slots"),
    (dict(slots=_DROP, block_table=np.zeros((4, 1), np.int64)), ValueError,
     "block_table needs a paged cache"),
    (dict(slots=_DROP, kv_cache=_PAGED, block_table=np.zeros((3, 1), int)),
     ValueError, "pass batch_indices"),
    (dict(slots=_DROP, kv_cache=_PAGED,
          block_table=np.arange(4).reshape(4, 1), positions=np.array(
              [0, 1, 8, 2])), IndexError, "columns"),
    (dict(slots=_DROP, kv_cache=_PAGED,
          block_table=np.array([[0], [1], [2], [4]])), IndexError,
     "block 4"),
    (dict(slots=_DROP, kv_cache=_PAGED,
          block_table=np.arange(4).reshape(4, 1), positions=np.array(
              [0, -1, 2, 3])), IndexError, "positions must be >= 0"),
    (dict(slots=_DROP, kv_cache=_PAGED, block_table=np.zeros((2, 1), int),
          batch_indices=np.array([0, 1, 2, 0])), IndexError,
     "batch_indices span"),
    (dict(slots=_DROP, kv_cache=_PAGED, block_table=np.zeros((1, 1), int),
          batch_indices=np.zeros(4, int), positions=np.array([0, 1, 2, 1])),
     ValueError, "two tokens write"),
    (dict(out=np.ones((4, 2, 24), np.float16)), TypeError, "out has dtype"),
    (dict(rope_dim=7), ValueError, "rope_dim must be even"),
    (dict(layout="neox"), ValueError, "layout must be"),
    (dict(lowering="gpu"), ValueError, "lowering must be"),
    (dict(magnitude=2.0, scaling=DEEPSEEK_V3_YARN), ValueError,
     "differs from the scaling"),
])
def test_errors_name_the_argument(over, error, match):
    with pytest.raises(error, match=match):
        _call(**over)


def test_read_only_cache_and_overlaps():
    q, c_kv, k_pe, cache, positions = _args()
    cache.flags.writeable = False
    with pytest.raises(ValueError, match="kv_cache is read-only"):
        mla.apply_mla(q, c_kv, k_pe, cache, positions,
                            slots=np.arange(4), rope_dim=8)
    q, c_kv, k_pe, cache, positions = _args()
    # k_pe read from the cache's own memory (a contiguous view).
    inside = cache.reshape(-1)[:32].reshape(4, 8)
    with pytest.raises(ValueError, match="kv_cache overlaps k_pe"):
        mla.apply_mla(q, c_kv, inside, cache, positions,
                            slots=np.arange(4), rope_dim=8)
    with pytest.raises(ValueError, match="out overlaps q"):
        mla.apply_mla(q, c_kv, k_pe, cache, positions,
                            slots=np.arange(4), rope_dim=8, out=q[:])


def test_errors_leave_the_cache_alone():
    """A refused call writes nothing (the checks come first)."""
    q, c_kv, k_pe, cache, positions = _args()
    cache[:] = 3.0
    with pytest.raises(ValueError):
        mla.apply_mla(q, c_kv, k_pe, cache, positions,
                            slots=np.array([0, 1, 1, 2]), rope_dim=8)
    assert (cache == 3.0).all()


def test_mla_bench_smoke(tmp_path):
    """bench/mla_bench.py checks the fused call, the unfused sequence and
    numpy against float64 before it times anything, and writes one row per
    (shape, dtype) into the region of the file --write-docs names."""
    import subprocess
    import sys

    root = _paths.ROOT
    doc = tmp_path / "doc.md"
    doc.write_text("x\n<!-- BEGIN mla_bench -->\nSTALE\n"
                   "<!-- END mla_bench -->\ny\n")
    result = subprocess.run(
        [sys.executable, str(root / "bench" / "mla_bench.py"), "--shapes",
         "decode", "--dtypes", "f32", "--samples", "3", "--write-docs",
         str(doc)], cwd=root, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    region = doc.read_text().split("<!-- BEGIN mla_bench -->", 1)[1]
    assert "STALE" not in region
    rows = [line for line in region.splitlines()
            if line.startswith("| decode | f32 |")]
    assert len(rows) == 1
    cells = [c.strip() for c in rows[0].strip("|").split("|")]
    assert all(float(c) > 0 for c in cells[2:])
    # Both peers, the contiguous copy and the access pattern's own
    # (slices), warm and cold.
    header = [line for line in region.splitlines()
              if line.startswith("| shape |")][0]
    names = [c.strip() for c in header.strip("|").split("|")]
    assert len(names) == len(cells)
    for column in ("copy µs", "slices µs", "of copy", "of slices",
                   "cold: of copy", "cold: of slices"):
        assert column in names, column


@pytest.mark.parametrize("lowering", ["vector", "scalar"])
def test_threads_write_what_one_thread_writes(lowering):
    """OpenMP over tokens (threads=3) writes q and the cache bit for bit as
    one thread does (each token owns its slot's row)."""
    rng = np.random.default_rng(21)
    q = rng.standard_normal((37, 8, 192)).astype(ml_dtypes.bfloat16)
    c_kv = rng.standard_normal((37, 512)).astype(ml_dtypes.bfloat16)
    k_pe = rng.standard_normal((37, 64)).astype(ml_dtypes.bfloat16)
    positions = rng.integers(0, 4096, size=37)
    slots = rng.permutation(100)[:37]
    slots[5] = -1
    results = []
    for threads in (1, 3):
        cache = _random_cache(np.random.default_rng(0), (100, 576),
                              ml_dtypes.bfloat16)
        got = mla.apply_mla(q, c_kv, k_pe, cache, positions, slots=slots,
                            scaling=DEEPSEEK_V3_YARN, threads=threads,
                            lowering=lowering)
        results.append((got.view(np.uint16), cache.view(np.uint16)))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])


def test_memoized_calls_still_check_their_arguments():
    """apply_mla memoizes kernels on the exact values and types of its
    configuration arguments: a bool base after an int one, or a YaRN dict
    with a bool where a number was, is checked (and refused) again."""
    q, c_kv, k_pe, cache, positions = _args()
    kw = dict(slots=np.arange(4), rope_dim=8)
    mla.apply_mla(q, c_kv, k_pe, cache, positions, base=1, **kw)
    with pytest.raises(TypeError, match="base must be a real number"):
        mla.apply_mla(q, c_kv, k_pe, cache, positions, base=True, **kw)
    yarn = dict(DEEPSEEK_V3_YARN)
    mla.apply_mla(q, c_kv, k_pe, cache, positions, scaling=yarn, **kw)
    yarn["beta_slow"] = True
    with pytest.raises(ValueError):
        mla.apply_mla(q, c_kv, k_pe, cache, positions, scaling=yarn, **kw)
    with pytest.raises(ValueError, match="magnitude"):
        mla.apply_mla(q, c_kv, k_pe, cache, positions, magnitude=2.0,
                      scaling=DEEPSEEK_V3_YARN, **kw)


@pytest.mark.parametrize("lowering", ["vector", "scalar"])
def test_float64(lowering):
    """f64 data (unquantized cache): computed in f64, within 1e-14 of the
    float64 reference; c_kv bit for bit; untouched rows stay zero."""
    rng = np.random.default_rng(13)
    q = rng.standard_normal((5, 3, 96))
    c_kv = rng.standard_normal((5, 32))
    k_pe = rng.standard_normal((5, 64))
    cache = np.zeros((9, 96))
    positions = rng.integers(0, 5000, 5)
    slots = np.array([3, 0, 8, -1, 5])
    got = mla.apply_mla(q, c_kv, k_pe, cache, positions, slots=slots,
                        lowering=lowering)
    y = reference.apply(q[..., 32:], positions, layout="interleaved")
    k = reference.apply(k_pe[:, None], positions, layout="interleaved")[:, 0]
    valid = slots >= 0
    assert np.abs(got[..., 32:] - y).max() < 1e-14
    assert np.abs(cache[slots[valid], 32:] - k[valid]).max() < 1e-14
    np.testing.assert_array_equal(cache[slots[valid], :32], c_kv[valid])
    assert (cache[[1, 2, 4, 6, 7]] == 0).all()


@pytest.mark.parametrize("dtype", ["bf16", "f32"])
def test_prefetch_rows_change_no_bit(dtype):
    """rope-prefetch-strided-rows (MLAConfig.prefetch_rows) only adds
    prefetches of q's rope rows ahead, clamped to q's buffer: whatever the
    distance (none, 1, 16, far past the last row), and whether there are
    fewer rows than the distance, q and the cache come out bit for bit the
    same."""
    np_dtype = ml_dtypes.bfloat16 if dtype == "bf16" else np.float32
    for tokens, heads in ((1, 1), (3, 5), (37, 8), (5, 128)):
        rng = np.random.default_rng(tokens * 1000 + heads)
        q0 = rng.standard_normal((tokens, heads, 192)).astype(np_dtype)
        c_kv = rng.standard_normal((tokens, 1, 512)).astype(np_dtype)
        k_pe = rng.standard_normal((tokens, 1, 64)).astype(np_dtype)
        positions = rng.integers(0, 4096, size=tokens).astype(np.int64)
        slots = rng.permutation(tokens + 3)[:tokens].astype(np.int64)
        results = []
        for rows in (0, 1, 16, 1000):
            kernel = mla.compile_mla(dtype=dtype, prefetch_rows=rows)
            assert f"prefetch-rows={rows} " in mla.pipeline(kernel.config)
            q = q0.copy()
            cache = np.zeros((tokens + 3, 1, 576), np_dtype)
            kernel([q, c_kv, k_pe, cache, positions, slots])
            results.append((q.view(np.uint8).copy(),
                            cache.view(np.uint8).copy()))
        assert not np.array_equal(results[0][0], q0.view(np.uint8))
        for q_bits, cache_bits in results[1:]:
            np.testing.assert_array_equal(q_bits, results[0][0])
            np.testing.assert_array_equal(cache_bits, results[0][1])


@pytest.mark.parametrize("bad", [-1, True, 1.5, "16", None])
def test_prefetch_rows_must_be_a_count(bad):
    with pytest.raises(ValueError, match="prefetch_rows must be an int >= 0"):
        mla.MLAConfig(dtype="bf16", prefetch_rows=bad)
