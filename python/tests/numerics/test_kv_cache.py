# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""KV-cache append (issue 18): rope_mlir.append_kv, K rotated into its cache
by rope.apply slots(%s), V beside it by rope.cache_write, q rotated in the
same function, on both CPU lowerings.

- float64 differential over random cases: the three cache layouts (bshd,
  bhsd, paged with flat tokens + batch_indices or [B, S] tokens, raw vLLM
  slot mappings with -1 padding), f32 / bf16 / f16, partial rotary, half /
  interleaved, QK-norm, fp8 / i8 caches per tensor or per head, with and
  without q. The expected cache is the original one with the float64
  reference (reference.rms_norm -> reference.apply -> reference.quantize;
  V: reference.quantize or the value itself) scattered at the slots
  computed here independently (np.unravel_index). Written float rows within
  2^-18 of the pair magnitude (+ one ulp of f16/bf16), V rows bit-exact;
  quantized rows by test_neighbours' rule (inside the bracket of y -+ e,
  >= 99% exactly equal); every other row of both caches unchanged bit for
  bit (NaN-filled caches, so a stray write of a finite value shows).
- every error names its argument, and nothing is written when one is
  raised.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import rope_mlir
from rope_mlir import cache as cache_mod, kernel, reference

import _paths

DTYPES = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32}
QUANT = {"f8e4m3fn": ml_dtypes.float8_e4m3fn, "f8e5m2": ml_dtypes.float8_e5m2,
         "i8": np.int8}


def _pair_magnitude(x64, p, layout):
    rot = x64[..., :p]
    if layout == "half":
        n = np.sqrt(rot[..., :p // 2] ** 2 + rot[..., p // 2:] ** 2)
        n = np.concatenate([n, n], axis=-1)
    else:
        n = np.repeat(np.sqrt(rot[..., 0::2] ** 2 + rot[..., 1::2] ** 2), 2,
                      axis=-1)
    return np.concatenate([n, np.abs(x64[..., p:])], axis=-1) + 1e-30


def _fill(shape, dtype):
    """A cache full of a marker: NaN for floats (a stray finite write shows),
    a fixed pattern for i8."""
    if np.dtype(dtype) == np.int8:
        return np.full(shape, 77, np.int8)
    return np.full(shape, np.nan, np.float32).astype(dtype)


def _case(seed, kv_heads=None):
    """Case `seed`; `kv_heads` replaces its random KV head count."""
    rng = np.random.default_rng(1000 + seed)
    form = ["bshd", "bhsd", "paged-flat", "paged-bs", "slots"][seed % 5]
    quant = [None, None, "f8e4m3fn", "f8e5m2", "i8"][(seed // 5) % 5]
    dtype = ["f32", "bf16", "f16"][seed % 3]
    d = int(rng.choice([16, 64, 128]))
    p = d if rng.random() < 0.6 else int(2 * rng.integers(1, d // 2 + 1))
    layout = str(rng.choice(["half", "interleaved"]))
    hkv = int(rng.choice([1, 2, 4]))
    hkv = hkv if kv_heads is None else kv_heads
    hq = hkv * int(rng.choice([1, 4]))
    with_q = rng.random() < 0.5
    norm = rng.random() < 0.4
    t = DTYPES[dtype]
    kw = dict(layout=layout, rotary_dim=p,
              base=float(rng.choice([10000.0, 500000.0])))
    b, s = int(rng.choice([1, 3, 4])), int(rng.choice([1, 2, 5]))
    if form in ("bshd", "bhsd"):
        max_len = s + int(rng.integers(0, 9))
        # Distinct positions per row (one token per slot).
        positions = np.stack([rng.choice(max_len, s, replace=False)
                              for _ in range(b)]).astype(np.int64)
        if form == "bshd":
            kshape, cshape = (b, s, hkv, d), (b, max_len, hkv, d)
            qshape, head_axis = (b, s, hq, d), 2
        else:
            kshape, cshape = (b, hkv, s, d), (b, hkv, max_len, d)
            qshape, head_axis = (b, hq, s, d), 1
            kw["cache_layout"] = "bhsd"
        kw.setdefault("cache_layout", "bshd")
        slots = np.arange(b)[:, None] * max_len + positions
        ctokens = (b, max_len)
        token_dims = (0, 1) if form == "bshd" else (0, 2)
    else:
        page_size = int(rng.choice([1, 4, 16]))
        blocks = int(rng.integers(1, 4))
        num_pages = b * blocks + int(rng.integers(0, 3))
        table = rng.permutation(num_pages)[:b * blocks].reshape(b, blocks)
        cshape = (num_pages, page_size, hkv, d)
        ctokens = (num_pages * page_size,)
        kw["cache_layout"] = "paged"
        limit = blocks * page_size
        pos_rows = [rng.choice(limit, min(s, limit), replace=False)
                    for _ in range(b)]
        s = min(s, limit)
        positions = np.stack(pos_rows).astype(np.int64)  # [b, s]
        rows = np.repeat(np.arange(b), s)
        slots = (table[rows, positions.reshape(-1) // page_size] * page_size
                 + positions.reshape(-1) % page_size)
        if form == "paged-bs":
            kshape, qshape, head_axis = (b, s, hkv, d), (b, s, hq, d), 2
            kw["block_table"] = table
            token_dims = (0, 1)
            slots = slots.reshape(b, s)
        else:
            kshape, qshape, head_axis = (b * s, hkv, d), (b * s, hq, d), 1
            positions = positions.reshape(-1)
            token_dims = (0,)
            if form == "paged-flat":
                kw["block_table"] = table
                kw["batch_indices"] = rows
            else:  # raw vLLM slot mapping with padding tokens
                slots = slots.copy()
                slots[rng.random(slots.shape) < 0.3] = -1
                kw["slots"] = slots
    k = (rng.standard_normal(kshape) * rng.choice([0.5, 3.0])).astype(t)
    v = rng.standard_normal(kshape).astype(t)
    cdtype = QUANT[quant] if quant else t
    k_cache, v_cache = _fill(cshape, cdtype), _fill(cshape, cdtype)
    if with_q:
        kw["q"] = rng.standard_normal(qshape).astype(t)
    if norm:
        wdt = DTYPES[str(rng.choice(["f32", dtype]))]
        kw["k_norm_weight"] = (rng.standard_normal(d) * 0.5 + 1).astype(wdt)
        if with_q:
            kw["q_norm_weight"] = (rng.standard_normal(d) * 0.5 + 1).astype(
                wdt)
        kw["norm_eps"] = 1e-6
    if quant:
        limit_q = reference.QUANT_LIMITS[quant]
        top = 3.0 if norm else float(np.abs(k.astype(np.float64)).max())
        per_head = rng.random() < 0.5
        n = hkv if per_head else None
        for name, peak in (("k_scale", top), ("v_scale",
                                              float(np.abs(v.astype(
                                                  np.float64)).max()))):
            scale = limit_q / peak * float(rng.choice([0.5, 1.0, 2.0]))
            scale = (scale * rng.uniform(0.5, 1.5, size=n) if per_head
                     else scale)
            kw[name] = np.asarray(scale, np.float32)
        if rng.random() < 0.5:
            kw["quant_dtype"] = quant  # else taken from the caches
    return dict(k=k, v=v, k_cache=k_cache, v_cache=v_cache,
                positions=positions, kw=kw, slots=slots, quant=quant,
                head_axis=head_axis, token_dims=token_dims, ctokens=ctokens)


def _to_rows(array, token_dims):
    """array with its token dims first, flattened: [tokens, rest]."""
    nt = len(token_dims)
    moved = np.moveaxis(array, token_dims, range(nt))
    return moved.reshape((-1,) + moved.shape[nt:])


def _cache_rows(cache, case):
    """The cache as [slots, rows...] (a copy)."""
    if case["kw"]["cache_layout"] == "paged":
        return cache.reshape((-1,) + cache.shape[2:]).copy()
    dims = (0, 1) if case["kw"]["cache_layout"] == "bshd" else (0, 2)
    return _to_rows(cache, dims).copy()


def _expected_k(case):
    kw = case["kw"]
    k64 = case["k"].astype(np.float64)
    if "k_norm_weight" in kw:
        k64 = reference.rms_norm(k64, kw["k_norm_weight"], kw["norm_eps"])
    dims = case["token_dims"]
    y = reference.apply(k64, case["positions"], layout=kw["layout"],
                        rotary_dim=kw["rotary_dim"], base=kw["base"],
                        token_dims=dims)
    return k64, y


def _check_rows(got, want, e, quant, scale, head_axis_in_row, dtype, what):
    if quant is None:
        tol = e
        if np.dtype(dtype) != np.float32:
            tol = tol + np.abs(np.spacing(np.abs(want).astype(dtype))).astype(
                np.float64)
        err = np.abs(got.astype(np.float64) - want)
        assert not (err > tol).any(), \
            f"{what}: {int((err > tol).sum())} values out of tolerance"
        return
    got64 = got.astype(np.float64)
    exact = reference.quantize(want, quant, scale, head_axis_in_row)
    lo = reference.quantize(want - e, quant, scale, head_axis_in_row)
    hi = reference.quantize(want + e, quant, scale, head_axis_in_row)
    nan = np.isnan(exact)
    assert not np.isnan(got64[~nan]).any(), f"{what}: NaN written"
    inside = (got64 >= np.minimum(lo, hi)) & (got64 <= np.maximum(lo, hi))
    assert inside[~nan].all(), \
        f"{what}: {int((~inside & ~nan).sum())} values outside the bracket"
    same = (got64 == exact)[~nan].mean() if (~nan).any() else 1.0
    assert same >= 0.99, f"{what}: only {same:.4f} exactly equal"


def _verify(case, k_before, v_before, k_after, v_after, q_got):
    kw, quant = case["kw"], case["quant"]
    dims = case["token_dims"]
    k64, y = _expected_k(case)
    p = kw["rotary_dim"]
    e = 2.0 ** -18 * _pair_magnitude(k64, p, kw["layout"])
    # Token order of _to_rows: the token dims, row-major, as the slots.
    slots = case["slots"].reshape(-1)
    valid = slots >= 0
    y_rows, e_rows = _to_rows(y, dims)[valid], _to_rows(e, dims)[valid]
    v64 = case["v"].astype(np.float64)
    v_rows = _to_rows(v64, dims)[valid]
    written = np.zeros(int(np.prod(case["ctokens"])), bool)
    written[slots[valid]] = True
    # Rows are [n, Hkv, D]: the head axis is 1.
    head_axis = 1
    dtype = case["k"].dtype
    for name, before, after, want, err, scale in (
            ("k_cache", k_before, k_after, y_rows, e_rows,
             kw.get("k_scale")),
            ("v_cache", v_before, v_after, v_rows,
             2.0 ** -23 * np.abs(v_rows), kw.get("v_scale"))):
        rows_before = _cache_rows(before, case)
        rows_after = _cache_rows(after, case)
        # Untouched slots: bit for bit.
        np.testing.assert_array_equal(
            rows_after[~written].view(np.uint8),
            rows_before[~written].view(np.uint8), err_msg=name)
        got = rows_after[slots[valid]]
        if name == "v_cache" and quant is None:
            np.testing.assert_array_equal(
                got.view(np.uint8),
                _to_rows(case["v"], dims)[valid].view(np.uint8),
                err_msg=name)
            continue
        s = None if scale is None else np.asarray(scale, np.float64)
        _check_rows(got, want, err, quant, s,
                    head_axis if s is not None and s.ndim else None,
                    dtype, name)
    if "q" in kw:
        q64 = kw["q"].astype(np.float64)
        if "q_norm_weight" in kw:
            q64 = reference.rms_norm(q64, kw["q_norm_weight"], kw["norm_eps"])
        want = reference.apply(q64, case["positions"], layout=kw["layout"],
                               rotary_dim=p, base=kw["base"],
                               token_dims=dims)
        assert q_got.shape == kw["q"].shape and q_got.dtype == dtype
        _check_rows(q_got, want, 2.0 ** -18 * _pair_magnitude(
            q64, p, kw["layout"]), None, None, None, dtype, "q")
    else:
        assert q_got is None


@pytest.mark.parametrize("lowering", ["vector", "scalar"])
@pytest.mark.parametrize("seed", range(40))
def test_against_float64(seed, lowering):
    case = _case(seed)
    k_before, v_before = case["k_cache"].copy(), case["v_cache"].copy()
    q_got = rope_mlir.append_kv(case["k"], case["v"], case["k_cache"],
                                case["v_cache"], case["positions"],
                                lowering=lowering, **case["kw"])
    _verify(case, k_before, v_before, case["k_cache"], case["v_cache"],
            q_got)


def test_cases_cover_the_forms():
    """The random cases above cover every layout x quant x q/no-q x norm
    (so a change to _case cannot silently drop one)."""
    seen = set()
    for seed in range(40):
        c = _case(seed)
        seen.add((c["kw"]["cache_layout"], "slots" in c["kw"]))
        seen.add(("quant", c["quant"]))
        seen.add(("q", "q" in c["kw"]))
        seen.add(("norm", "k_norm_weight" in c["kw"]))
        seen.add(("dtype", c["k"].dtype.name))
    for want in [("bshd", False), ("bhsd", False), ("paged", False),
                 ("paged", True), ("quant", None), ("quant", "f8e4m3fn"),
                 ("quant", "f8e5m2"), ("quant", "i8"), ("q", True),
                 ("q", False), ("norm", True), ("norm", False),
                 ("dtype", "float32"), ("dtype", "bfloat16"),
                 ("dtype", "float16")]:
        assert want in seen, want


@pytest.mark.parametrize("lowering", ["vector", "scalar"])
def test_decode_step_is_apply_qk_bitwise(lowering):
    """A Llama-like decode step (64 rows, one token each, 4K-slot paged
    cache): q and the cached k are bitwise what apply_qk returns, v bitwise
    copied, the rest of the caches untouched."""
    rng = np.random.default_rng(3)
    b, hq, hkv, d, page = 64, 32, 8, 128, 16
    pages = 4096 // page
    table = rng.permutation(pages).reshape(b, -1)
    pos = rng.integers(0, table.shape[1] * page, size=b).astype(np.int64)
    q = rng.standard_normal((b, hq, d)).astype(np.float32)
    k = rng.standard_normal((b, hkv, d)).astype(np.float32)
    v = rng.standard_normal((b, hkv, d)).astype(np.float32)
    kc = np.full((pages, page, hkv, d), np.nan, np.float32)
    vc = kc.copy()
    q_rot = rope_mlir.append_kv(k, v, kc, vc, pos, q=q, cache_layout="paged",
                                block_table=table,
                                batch_indices=np.arange(b),
                                base=500000.0, lowering=lowering)
    want_q, want_k = rope_mlir.apply_qk(q, k, pos, base=500000.0)
    slot = table[np.arange(b), pos // page] * page + pos % page
    flat_k, flat_v = kc.reshape(-1, hkv, d), vc.reshape(-1, hkv, d)
    if lowering == "vector":
        np.testing.assert_array_equal(q_rot, want_q)
        np.testing.assert_array_equal(flat_k[slot], want_k)
    else:
        np.testing.assert_allclose(q_rot, want_q, rtol=0, atol=1e-5)
        np.testing.assert_allclose(flat_k[slot], want_k, rtol=0, atol=1e-5)
    np.testing.assert_array_equal(flat_v[slot], v)
    rest = np.ones(flat_k.shape[0], bool)
    rest[slot] = False
    assert np.isnan(flat_k[rest]).all() and np.isnan(flat_v[rest]).all()


def test_k_only_and_out_q():
    rng = np.random.default_rng(5)
    k = rng.standard_normal((2, 3, 2, 16)).astype(np.float32)
    q = rng.standard_normal((2, 3, 4, 16)).astype(np.float32)
    kc = np.zeros((2, 8, 2, 16), np.float32)
    pos = np.array([[0, 1, 2], [5, 6, 7]])
    out = np.empty_like(q)
    got = rope_mlir.append_kv(k, None, kc, None, pos, q=q, out_q=out)
    assert got is out
    np.testing.assert_allclose(out, rope_mlir.apply(q, pos), atol=1e-6)
    np.testing.assert_allclose(kc[0, :3], rope_mlir.apply(k, pos)[0],
                               atol=1e-6)
    assert not kc[0, 3:].any() and not kc[1, :5].any()


def test_padding_slots_write_nothing():
    k = np.ones((4, 1, 8), np.float32)
    kc = np.zeros((6, 1, 1, 8), np.float32)
    vc = np.zeros_like(kc)
    rope_mlir.append_kv(k, k * 2, kc, vc, np.zeros(4, np.int64),
                        cache_layout="paged", slots=[-1, 3, -1, 0])
    assert kc[[0, 3]].all() and not kc[[1, 2, 4, 5]].any()
    np.testing.assert_array_equal(vc[[0, 3]], 2)
    assert not vc[[1, 2, 4, 5]].any()


# -- errors: each names its argument, and nothing is written -------------------

def _small(**changes):
    k = np.ones((2, 1, 2, 8), np.float32)
    args = dict(k=k, v=k.copy(), k_cache=np.zeros((2, 4, 2, 8), np.float32),
                v_cache=np.zeros((2, 4, 2, 8), np.float32),
                positions=np.array([[1], [3]]))
    args.update(changes)
    return args


def _paged(**changes):
    k = np.ones((3, 2, 8), np.float32)
    args = dict(k=k, v=k.copy(), k_cache=np.zeros((4, 2, 2, 8), np.float32),
                v_cache=np.zeros((4, 2, 2, 8), np.float32),
                positions=np.array([0, 1, 2]), cache_layout="paged",
                block_table=np.array([[2, 0], [1, 3]]),
                batch_indices=np.array([0, 0, 1]))
    args.update(changes)
    return args


def _ro(shape, dtype=np.float32):
    a = np.zeros(shape, dtype)
    a.flags.writeable = False
    return a


ERRORS = [
    (_small(positions=np.array([[1], [4]])), IndexError,
     r"positions span \[1, 4\].*\[0, 4\)"),
    (_small(positions=np.array([[-1], [0]])), IndexError, "positions span"),
    (_small(positions=np.array([[1.0], [2.0]])), TypeError,
     "positions must be an integer array"),
    (_small(positions=np.array([1, 2])), ValueError,
     r"positions have shape \(2,\)"),
    (_paged(block_table=np.array([[2, 4], [1, 3]]),
            positions=np.array([0, 2, 2])), IndexError,
     r"block_table gives block ids in \[2, 4\].*4 pages"),
    (_paged(block_table=np.array([[-1, 0], [1, 3]])), IndexError,
     "block_table gives block ids"),
    (_paged(positions=np.array([0, 4, 2])), IndexError,
     "block_table has 2 columns"),
    (_paged(batch_indices=np.array([0, 0, 2])), IndexError,
     r"batch_indices span \[0, 2\]"),
    (_paged(block_table=None), ValueError, "needs block_table"),
    (_paged(positions=np.array([0, 0, 2])), ValueError,
     "same cache slot 4"),
    (_paged(block_table=None, batch_indices=None,
            slots=np.array([0, 3, 3])), ValueError, "same cache slot 3"),
    (_paged(block_table=None, batch_indices=None,
            slots=np.array([0, 8, 1])), IndexError,
     r"slots hold 8.*\[0, 8\)"),
    (_paged(block_table=None, batch_indices=None,
            slots=np.array([0, -2, 1])), IndexError, "slots hold -2"),
    (_paged(slots=np.array([0, 1, 2])), ValueError,
     "slots= replaces block_table"),
    (_small(k_cache=_ro((2, 4, 2, 8))), ValueError, "k_cache is read-only"),
    (_small(v_cache=np.zeros((2, 2, 4, 8), np.float32).transpose(0, 2, 1, 3)),
     ValueError, "v_cache must be C-contiguous"),
    (_small(v_cache=np.zeros((2, 4, 2, 8), np.float16)), TypeError,
     "v_cache has dtype float16, expected float32"),
    (_small(k_cache=np.zeros((2, 4, 3, 8), np.float32)), ValueError,
     r"k_cache has shape \(2, 4, 3, 8\)"),
    (_small(k_cache=np.zeros((3, 4, 2, 8), np.float32)), ValueError,
     "k_cache has shape"),
    (_small(k_cache=np.zeros((2, 4, 2, 8), ml_dtypes.float8_e4m3fn),
            v_cache=np.zeros((2, 4, 2, 8), ml_dtypes.float8_e4m3fn)),
     ValueError, "k_cache holds f8e4m3fn values: pass k_scale"),
    (_small(k_cache=np.zeros((2, 4, 2, 8), ml_dtypes.float8_e4m3fn),
            v_cache=np.zeros((2, 4, 2, 8), ml_dtypes.float8_e4m3fn),
            k_scale=1.0), ValueError, "v_cache holds f8e4m3fn values: pass "
     "v_scale"),
    (_small(k_cache=np.zeros((2, 4, 2, 8), np.int8),
            v_cache=np.zeros((2, 4, 2, 8), np.int8), k_scale=1.0,
            v_scale=1.0, quant_dtype="f8e5m2"), TypeError,
     "k_cache has dtype int8, expected float8_e5m2"),
    (_small(k_scale=1.0), ValueError, "k_scale / v_scale given for a cache"),
    (_small(k_cache=np.zeros((2, 4, 2, 8), np.int8),
            v_cache=np.zeros((2, 4, 2, 8), np.int8), k_scale=1.0,
            v_scale=np.ones(2, np.float32)), ValueError,
     "k_scale and v_scale must both be scalars"),
    (_small(k_cache=np.zeros((2, 4, 2, 8), np.int8),
            v_cache=np.zeros((2, 4, 2, 8), np.int8),
            k_scale=np.ones(3, np.float32), v_scale=np.ones(3, np.float32)),
     ValueError, r"k_scale has shape \(3,\), expected \(2,\)"),
    (_small(v_cache=None), ValueError, "pass v and v_cache together"),
    (_small(cache_layout="bsdh"), ValueError, "cache_layout must be one of"),
    (_small(lowering="fast"), ValueError, "lowering must be"),
    (_small(q=np.ones((2, 1, 4, 8), np.float32),
            k_norm_weight=np.ones(8, np.float32)), ValueError,
     "q_norm_weight and k_norm_weight together"),
    (_small(q=np.ones((2, 2, 4, 8), np.float32)), ValueError,
     r"q has shape \(2, 2, 4, 8\), expected \(2, 1, '\?', 8\) \(dims "
     r"\(0, 1\) are k's dims \(0, 1\); only head dims may differ"),
    (_small(q=np.ones((2, 1, 4, 8), np.float16)), TypeError,
     "q has dtype float16"),
    (_small(k_norm_weight=np.ones(4, np.float32)), ValueError,
     r"k_norm_weight has shape \(4,\)"),
    (_small(positions=np.array([[1], [3]]), block_table=np.zeros((2, 1))),
     ValueError, "block_table / batch_indices are for paged caches"),
    (_small(mrope_section=[2, 1, 1]), ValueError, "does not take M-RoPE"),
    (_small(cos_cache=np.ones((3, 4), np.float32),
            sin_cache=np.ones((3, 4), np.float32)), IndexError,
     "cos/sin cache has 3 rows"),
]


@pytest.mark.parametrize("args, error, match", ERRORS,
                         ids=[str(i) for i in range(len(ERRORS))])
def test_errors_name_the_argument_and_write_nothing(args, error, match):
    caches = {n: args[n].copy() for n in ("k_cache", "v_cache")
              if isinstance(args.get(n), np.ndarray)}
    with pytest.raises(error, match=match):
        rope_mlir.append_kv(**args)
    for name, before in caches.items():
        np.testing.assert_array_equal(args[name].view(np.uint8),
                                      before.view(np.uint8))


def test_caches_overlapping_refused():
    buf = np.zeros((2, 4, 2, 8), np.float32)
    with pytest.raises(ValueError, match="v_cache overlaps k_cache"):
        rope_mlir.append_kv(**_small(k_cache=buf, v_cache=buf))
    k = np.ones((2, 1, 2, 8), np.float32)
    with pytest.raises(ValueError, match="k_cache overlaps v"):
        rope_mlir.append_kv(**_small(v=buf.reshape(-1)[:32].reshape(
            2, 1, 2, 8), k=k, k_cache=buf))


def test_kernel_config_checks():
    with pytest.raises(ValueError, match="need slots=True"):
        kernel.KernelConfig(dtype="f32", rank=3, head_dim=8, query=True)
    with pytest.raises(ValueError, match="inplace must be False"):
        kernel.KernelConfig(dtype="f32", rank=3, head_dim=8, slots=True,
                            inplace=True)
    with pytest.raises(TypeError, match="slots_dtype"):
        kernel.KernelConfig(dtype="f32", rank=3, head_dim=8, slots=True,
                            slots_dtype="i16")
    with pytest.raises(ValueError, match="compiled by rope_mlir.compile_"
                                         "append"):
        kernel.Kernel(kernel.KernelConfig(dtype="f32", rank=3, head_dim=8,
                                          slots=True))


@pytest.mark.parametrize("fields", [
    dict(),
    dict(cache_write=True),
    dict(cache_write=True, query=True, norm=True, quant="f8e4m3fn",
         quant_scale="head"),
    dict(token_dims=(0, 2), rank=4, cache_write=True, quant="i8"),
    dict(cache="gathered", query=True, positions_dtype="i32",
         slots_dtype="i32"),
])
def test_emitted_ir_verifies(fields):
    """The append module's IR: K by rope.apply with slots into its cache
    (the function's own writable argument), V by rope.cache_write, q by a
    rope.apply without slots; the verifier accepts each form."""
    config = dict(dtype="bf16", rank=3, head_dim=64, positions="explicit",
                  slots=True)
    config.update(fields)
    text = rope_mlir.emit(**config)
    from rope_mlir import _jit
    _jit.lower(text, "builtin.module()")
    assert text.count("slots(") == 1 + int(config.get("cache_write", False))
    assert ("rope.cache_write" in text) == config.get("cache_write", False)
    assert text.count("rope.apply") == 1 + int(config.get("query", False))
    assert "%kcachet = bufferization.to_tensor %kcache restrict writable" \
        in text


class _Producer:
    """A DLPack producer that is not a numpy array (as test_dlpack's)."""

    def __init__(self, array, device=(1, 0)):
        self.array = array
        self.device = device

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.device


def test_dlpack_caches_written_in_place():
    """DLPack arguments are imported zero-copy: the caches the producer
    owns are written through; a cache on another device is refused by
    name, before anything is written."""
    rng = np.random.default_rng(31)
    k = rng.standard_normal((2, 1, 2, 8)).astype(np.float32)
    q = rng.standard_normal((2, 1, 4, 8)).astype(np.float32)
    kc, vc = np.zeros((2, 4, 2, 8), np.float32), np.zeros((2, 4, 2, 8),
                                                          np.float32)
    pos = np.array([[1], [2]])
    got = rope_mlir.append_kv(_Producer(k), _Producer(k * 3), _Producer(kc),
                              _Producer(vc), _Producer(pos), q=_Producer(q))
    np.testing.assert_array_equal(vc[[0, 1], [1, 2]], (k * 3)[:, 0])
    np.testing.assert_allclose(kc[[0, 1], [1, 2]],
                               rope_mlir.apply(k, pos)[:, 0], atol=1e-6)
    np.testing.assert_allclose(got, rope_mlir.apply(q, pos), atol=1e-6)
    before = vc.copy()
    with pytest.raises(ValueError, match="v_cache is on the DLPack device "
                                         "CUDA"):
        rope_mlir.append_kv(k, k, kc, _Producer(vc, device=(2, 0)), pos)
    np.testing.assert_array_equal(vc, before)


def test_kv_cache_bench_smoke(tmp_path):
    """bench/kv_cache_bench.py checks every form's caches and q against
    float64 before it times anything, and writes one table row per (shape,
    form) with a verdict on both targets."""
    import subprocess
    import sys
    root = _paths.ROOT
    sys.path.insert(0, str(root / "bench"))
    import kv_cache_bench

    doc = tmp_path / "doc.md"
    doc.write_text(f"x\n{kv_cache_bench.BEGIN_MARK}\nSTALE\n"
                   f"{kv_cache_bench.END_MARK}\ny\n")
    forms = "bhsd,paged+q"
    result = subprocess.run(
        [sys.executable, str(root / "bench" / "kv_cache_bench.py"),
         "--shapes", "decode", "--forms", forms, "--dtypes", "bf16",
         "--samples", "3", "--write-docs", str(doc)],
        cwd=root, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-2000:] + \
        result.stderr[-4000:]
    region = doc.read_text().split(kv_cache_bench.BEGIN_MARK, 1)[1].split(
        kv_cache_bench.END_MARK, 1)[0]
    assert "STALE" not in region
    rows = [line for line in region.splitlines()
            if line.startswith("| decode |")]
    assert [row.split("|")[2].strip() for row in rows] == forms.split(",")
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert cells[-2].endswith((" PASS", " MISS")) and \
            cells[-1].endswith((" PASS", " MISS")), row


@pytest.mark.parametrize("lowering", ["vector", "scalar"])
@pytest.mark.parametrize("quant", [None, "f8e4m3fn"])
def test_kernel_slot_out_of_range_writes_nothing(lowering, quant):
    """The compiled append itself (no Python range check: AppendKernel
    takes any slot) writes nothing for a slot outside the cache, whatever
    its value: the cache lies inside a larger buffer whose guard rows
    before and after must keep their bytes."""
    t = np.float32
    store = np.dtype(QUANT[quant]) if quant else np.dtype(t)
    rng = np.random.default_rng(11)
    n_slots, h, d = 6, 2, 16
    guard = 5
    buf = _fill((guard + n_slots + guard, h, d), store)
    kc = buf[guard:guard + n_slots]
    vbuf = _fill((guard + n_slots + guard, h, d), store)
    vc = vbuf[guard:guard + n_slots]
    before_k, before_v = buf.copy(), vbuf.copy()
    slots = np.array([-1, n_slots, -2**40, 2**40, 2**63 - 1, -2**63, 3],
                     np.int64)
    k = rng.standard_normal((slots.size, h, d)).astype(t)
    v = rng.standard_normal((slots.size, h, d)).astype(t)
    fields = dict(dtype="f32", rank=3, head_dim=d, positions="explicit",
                  slots=True, cache_write=True, lowering=lowering)
    extra = {}
    if quant:
        fields.update(quant=quant)
        extra = dict(k_scale=np.float32(4.0), v_scale=np.float32(4.0))
    append = rope_mlir.compile_append(**fields)
    append(k, slots, kc, positions=np.zeros(slots.size, np.int64), v=v,
           v_cache=vc, **extra)
    changed_k = (buf.view(np.uint8) != before_k.view(np.uint8)).reshape(
        buf.shape[0], -1).any(axis=1)
    changed_v = (vbuf.view(np.uint8) != before_v.view(np.uint8)).reshape(
        vbuf.shape[0], -1).any(axis=1)
    assert changed_k.nonzero()[0].tolist() == [guard + 3]
    assert changed_v.nonzero()[0].tolist() == [guard + 3]
    if quant is None:
        np.testing.assert_array_equal(vc[3], v[-1])
        np.testing.assert_array_equal(kc[3], k[-1])  # position 0: identity


@pytest.mark.parametrize("lowering", ["vector", "scalar"])
def test_threads_agree_with_one_thread(lowering):
    """OpenMP over tokens (threads=2) writes the same caches and q as the
    sequential kernel, bit for bit."""
    rng = np.random.default_rng(12)
    k = rng.standard_normal((40, 2, 32)).astype(np.float32)
    v = rng.standard_normal((40, 2, 32)).astype(np.float32)
    q = rng.standard_normal((40, 8, 32)).astype(np.float32)
    pos = rng.permutation(64)[:40].astype(np.int64)
    results = []
    for threads in (1, 2):
        kc = np.zeros((8, 8, 2, 32), np.float32)
        vc = np.zeros_like(kc)
        qr = rope_mlir.append_kv(k, v, kc, vc, pos, q=q,
                                 cache_layout="paged",
                                 block_table=np.arange(8)[::-1][None],
                                 threads=threads, lowering=lowering)
        results.append((kc, vc, qr))
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
    assert results[0][0].any()


@pytest.mark.parametrize("layout", ["bshd", "paged"])
def test_no_tokens_writes_nothing(layout):
    if layout == "bshd":
        k = np.ones((2, 0, 2, 8), np.float32)
        kc = np.full((2, 4, 2, 8), 5.0, np.float32)
        extra, pos = {}, np.zeros((2, 0), np.int64)
    else:
        k = np.ones((0, 2, 8), np.float32)
        kc = np.full((3, 2, 2, 8), 5.0, np.float32)
        extra = dict(cache_layout="paged", block_table=np.zeros((1, 1), np.int64))
        pos = np.zeros(0, np.int64)
    vc = kc.copy()
    assert rope_mlir.append_kv(k, k, kc, vc, pos, **extra) is None
    assert (kc == 5).all() and (vc == 5).all()


@pytest.mark.parametrize("lowering", ["vector", "scalar"])
@pytest.mark.parametrize("rotation", ["yarn", "cos_sin_cache", "inverse"])
def test_rotation_arguments_as_apply(rotation, lowering):
    """The rotation arguments mean what they mean for apply: a YaRN
    scaling dict (with its magnitude), a gathered cos/sin cache, inverse;
    the cached k rows and q against reference.apply with the same
    arguments in float64."""
    rng = np.random.default_rng(21)
    b, s, hkv, hq, d = 2, 3, 2, 4, 64
    k = rng.standard_normal((b, s, hkv, d)).astype(np.float32)
    q = rng.standard_normal((b, s, hq, d)).astype(np.float32)
    pos = np.stack([rng.choice(40, s, replace=False) for _ in range(b)])
    kw = {}
    if rotation == "yarn":
        kw["scaling"] = {"rope_type": "yarn", "factor": 4.0,
                         "original_max_position_embeddings": 32}
        kw["base"] = 10000.0
    elif rotation == "cos_sin_cache":
        angles = np.arange(40)[:, None] * (
            1.0 / 500.0 ** (np.arange(0, d, 2) / d))[None]
        kw["cos_cache"] = np.cos(angles).astype(np.float32)
        kw["sin_cache"] = np.sin(angles).astype(np.float32)
    else:
        kw["inverse"] = True
    kc = np.zeros((b, 40, hkv, d), np.float32)
    vc = np.zeros_like(kc)
    q_rot = rope_mlir.append_kv(k, k, kc, vc, pos, q=q, lowering=lowering,
                                **kw)
    for x, got in ((k, kc[np.arange(b)[:, None], pos]), (q, q_rot)):
        want = reference.apply(x.astype(np.float64), pos, **kw)
        np.testing.assert_allclose(got, want, rtol=0, atol=2e-5 *
                                   np.abs(want).max())
    np.testing.assert_array_equal(vc[np.arange(b)[:, None], pos], k)
