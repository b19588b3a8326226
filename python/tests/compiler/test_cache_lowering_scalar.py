# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The portable (linalg) form of the KV-cache append (issue 18): rope.apply
with `slots` and rope.cache_write, compiled from IR text through
`rope-to-llvm-cpu{vectorize=false}` (convert-rope-to-linalg: the
decomposition of RopeDecompose.cpp / CacheWriteDecompose.cpp), against a
float64 reference (reference.rms_norm -> reference.apply ->
reference.quantize, then a numpy scatter by the slot rule).

- contiguous [B, max_len, H, D] (token dims (0, 1)), Hugging Face's
  [B, H, max_len, D] (token dims (0, 2)) and collapsed pages
  [num_pages * page_size, H, D] (token dim 0); f32 / bf16 / f16; half and
  interleaved; partial rotary; explicit positions; QK-norm; fp8 / i8 caches
  with per-tensor and per-head scales;
- written rows within 2^-18 of the pair magnitude (+ one ulp of f16/bf16);
  quantized rows bracketed by the quantizations of y -+ e, >= 99% exact;
- every untouched cache row bit-identical to the input cache, slots out of
  range (-1 padding, prod(sizes) and beyond) write nothing;
- rope.cache_write stores each value as is (bit-exact) or quantized.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from rope_mlir import compiled, reference

import _paths

PIPELINE = ("builtin.module(rope-to-llvm-cpu{emit-c-interface=true "
            "vectorize=false})")
DTYPES = {"f32": np.float32, "bf16": ml_dtypes.bfloat16, "f16": np.float16}
QUANT = {"f8e4m3fn": ("f8E4M3FN", ml_dtypes.float8_e4m3fn),
         "f8e5m2": ("f8E5M2", ml_dtypes.float8_e5m2), "i8": ("i8", np.int8)}


def _t(shape, element):
    return "tensor<" + "x".join(str(s) for s in shape) + \
        ("x" if shape else "") + element + ">"


def _layout_case(kind, rng):
    """(input shape, cache shape, token dims) for a cache layout."""
    h = int(rng.choice([1, 2, 4]))
    d = int(rng.choice([8, 16, 64]))
    if kind == "bshd":
        b, s, m = int(rng.integers(1, 4)), int(rng.integers(1, 5)), \
            int(rng.integers(4, 10))
        return (b, s, h, d), (b, m, h, d), (0, 1)
    if kind == "bhsd":
        b, s, m = int(rng.integers(1, 4)), int(rng.integers(1, 5)), \
            int(rng.integers(4, 10))
        return (b, h, s, d), (b, h, m, d), (0, 2)
    t, pages, page = int(rng.integers(1, 9)), int(rng.integers(2, 5)), \
        int(rng.choice([4, 16]))
    return (t, h, d), (pages * page, h, d), (0,)


def _slots(rng, token_shape, rows):
    """Distinct in-range slots with some padding (-1) and some past the
    end (rows, rows + 7)."""
    n = int(np.prod(token_shape))
    picks = rng.permutation(rows)[:n].astype(np.int64)
    picks = np.resize(picks, n)
    picks[np.arange(n) >= rows] = -1  # more tokens than rows: pad
    bad = rng.random(n)
    picks[bad < 0.15] = -1
    past = (bad >= 0.15) & (bad < 0.25)
    picks[past] = rows + np.where(bad[past] < 0.2, 7, 0)
    return picks.reshape(token_shape)


def _scatter(cache64, rows64, slots, token_dims, cache_shape):
    """Numpy scatter by the slot rule (row-major over the cache's token
    dims); returns the expected cache and the mask of written rows."""
    rank = len(cache_shape)
    tok_sizes = [cache_shape[d] for d in token_dims]
    nrows = int(np.prod(tok_sizes))
    out = cache64.copy()
    written = np.zeros(cache_shape, bool)
    for t in np.ndindex(*slots.shape):
        s = int(slots[t])
        if not 0 <= s < nrows:
            continue
        where = np.unravel_index(s, tok_sizes)
        src = [slice(None)] * rank
        dst = [slice(None)] * rank
        for i, d in enumerate(token_dims):
            src[d] = t[i]
            dst[d] = where[i]
        out[tuple(dst)] = rows64[tuple(src)]
        written[tuple(dst)] = True
    return out, written


def _apply_ir(in_shape, cache_shape, token_dims, element, storage, *,
              positions, layout, rotary_dim, norm, scale_shape):
    xt = _t(in_shape, element)
    ct = _t(cache_shape, storage)
    tok_shape = [in_shape[d] for d in token_dims]
    st = _t(tok_shape, "i64")
    args = [f"%x: {xt}", f"%slots: {st}", f"%cache: {ct}"]
    ops = f"ins(%x : {xt}) "
    if positions:
        args.append(f"%pos: {st}")
        ops += f"positions(%pos : {st}) "
    if norm:
        wt = _t([in_shape[-1]], element)
        args.append(f"%w: {wt}")
        ops += f"norm(%w : {wt}) "
    if scale_shape is not None:
        qt = _t(scale_shape, "f32")
        args.append(f"%q: {qt}")
        ops += f"quant_scale(%q : {qt}) "
    ops += f"slots(%slots : {st}) outs(%cache : {ct})"
    attrs = [f"token_dims = array<i64: {', '.join(map(str, token_dims))}>",
             f"layout = #rope.layout<{layout}>",
             f"rotary_dim = {rotary_dim} : i64"]
    if norm:
        attrs.append("norm_epsilon = 1.0e-06")
    return (f"func.func @f({', '.join(args)}) -> {ct} {{\n"
            f"  %r = rope.apply {ops} {{{', '.join(attrs)}}} -> {ct}\n"
            f"  return %r : {ct}\n}}\n")


def _cache_write_ir(in_shape, cache_shape, token_dims, element, storage,
                    scale_shape):
    xt = _t(in_shape, element)
    ct = _t(cache_shape, storage)
    st = _t([in_shape[d] for d in token_dims], "i64")
    args = [f"%v: {xt}", f"%slots: {st}", f"%cache: {ct}"]
    quant = ""
    if scale_shape is not None:
        qt = _t(scale_shape, "f32")
        args.append(f"%q: {qt}")
        quant = f"quant_scale(%q : {qt}) "
    return (f"func.func @f({', '.join(args)}) -> {ct} {{\n"
            f"  %r = rope.cache_write ins(%v : {xt}) slots(%slots : {st}) "
            f"{quant}outs(%cache : {ct}) {{token_dims = array<i64: "
            f"{', '.join(map(str, token_dims))}>}} -> {ct}\n"
            f"  return %r : {ct}\n}}\n")


def _pair_magnitude(x64, p, layout):
    rot = x64[..., :p]
    if layout == "half":
        n = np.sqrt(rot[..., :p // 2] ** 2 + rot[..., p // 2:] ** 2)
        n = np.concatenate([n, n], axis=-1)
    else:
        n = np.repeat(np.sqrt(rot[..., 0::2] ** 2 + rot[..., 1::2] ** 2), 2,
                      axis=-1)
    return np.concatenate([n, np.abs(x64[..., p:])], axis=-1) + 1e-30


def _check_rows(got, expected64, written, cache, quant, e, scale_full):
    """Untouched rows bit-identical; written rows within tolerance (float)
    or bracketed and >= 99% exact (quantized)."""
    untouched = ~written
    assert np.array_equal(got.view(np.uint8).reshape(got.shape + (-1,))[
        untouched], cache.view(np.uint8).reshape(cache.shape + (-1,))[
        untouched]), "an untouched cache row changed"
    if not written.any():
        return
    got64 = got.astype(np.float64)[written]
    y = expected64[written]
    e = e[written]
    if quant is None:
        tol = e
        if got.dtype != np.float32:
            tol = tol + np.abs(np.spacing(np.abs(y).astype(got.dtype))
                               ).astype(np.float64)
        err = np.abs(got64 - y)
        assert not (err > tol).any(), \
            f"{int((err > tol).sum())} values out of tolerance"
        return
    s = scale_full[written]
    exact = reference.quantize(y * s, quant, 1.0)
    lo = reference.quantize((y - e) * s, quant, 1.0)
    hi = reference.quantize((y + e) * s, quant, 1.0)
    inside = (got64 >= np.minimum(lo, hi)) & (got64 <= np.maximum(lo, hi))
    assert inside.all(), f"{int((~inside).sum())} outside the bracket"
    assert (got64 == exact).mean() >= 0.99


def _case(seed):
    rng = np.random.default_rng(seed)
    kind = ["bshd", "bhsd", "paged"][seed % 3]
    quant = [None, None, "f8e4m3fn", "i8", "f8e5m2"][seed % 5]
    dtype = ["f32", "bf16", "f16"][(seed // 3) % 3]
    in_shape, cache_shape, token_dims = _layout_case(kind, rng)
    head_axis = [d for d in range(len(in_shape) - 1)
                 if d not in token_dims][0]
    return rng, kind, quant, dtype, in_shape, cache_shape, token_dims, \
        head_axis


def _scale(rng, quant, in_shape, head_axis):
    if quant is None:
        return None, None
    limit = reference.QUANT_LIMITS[quant]
    if rng.random() < 0.5:
        q = np.array(rng.uniform(0.5, 2.0) * limit / 4, np.float32)
    else:
        q = (rng.uniform(0.5, 2.0, in_shape[head_axis]) * limit / 4
             ).astype(np.float32)
    return q, list(q.shape)


def _broadcast_scale(q, shape, head_axis):
    if q.ndim == 0:
        return np.full(shape, float(q))
    b = [1] * len(shape)
    b[head_axis] = q.shape[0]
    return np.broadcast_to(q.astype(np.float64).reshape(b), shape)


@pytest.mark.parametrize("seed", range(18))
def test_apply_with_slots_against_float64(seed):
    rng, kind, quant, dtype, in_shape, cache_shape, token_dims, head_axis = \
        _case(seed)
    element = "bf16" if dtype == "bf16" else dtype
    d = in_shape[-1]
    p = d if rng.random() < 0.6 else int(2 * rng.integers(1, d // 2 + 1))
    layout = str(rng.choice(["half", "interleaved"]))
    norm = bool(rng.random() < 0.4)
    q, scale_shape = _scale(rng, quant, in_shape, head_axis)
    storage = QUANT[quant][0] if quant else element
    store_dtype = QUANT[quant][1] if quant else DTYPES[dtype]
    src = _apply_ir(in_shape, cache_shape, token_dims, element, storage,
                    positions=True, layout=layout, rotary_dim=p, norm=norm,
                    scale_shape=scale_shape)
    fn = compiled.jit(src, PIPELINE).function("f")

    x = rng.standard_normal(in_shape).astype(DTYPES[dtype])
    tok_shape = tuple(in_shape[dd] for dd in token_dims)
    rows = int(np.prod([cache_shape[dd] for dd in token_dims]))
    slots = _slots(rng, tok_shape, rows)
    pos = rng.integers(0, 4096, tok_shape).astype(np.int64)
    cache = (rng.standard_normal(cache_shape) * 3).astype(np.float32).astype(
        store_dtype)
    call = [x, slots, cache, pos]
    x64 = x.astype(np.float64)
    if norm:
        w = rng.uniform(0.5, 1.5, d).astype(DTYPES[dtype])
        call.append(w)
        x64 = reference.rms_norm(x64, w.astype(np.float64), 1e-6)
    if q is not None:
        call.append(q)
    got = fn(*call)
    assert got.dtype == np.dtype(store_dtype)
    y = reference.apply(x64, pos, layout=layout, rotary_dim=p,
                        token_dims=token_dims)
    e = 2.0 ** -18 * _pair_magnitude(x64, p, layout) * (4 if norm else 1)
    expected, written = _scatter(cache.astype(np.float64), y, slots,
                                 token_dims, cache_shape)
    e_cache, _ = _scatter(np.zeros(cache_shape), e, slots, token_dims,
                          cache_shape)
    scale_full = None
    if q is not None:
        scale_full = _broadcast_scale(q, cache_shape, head_axis)
    _check_rows(got, expected, written, cache, quant, e_cache, scale_full)


@pytest.mark.parametrize("seed", range(12))
def test_cache_write_against_float64(seed):
    rng, kind, quant, dtype, in_shape, cache_shape, token_dims, head_axis = \
        _case(seed)
    element = "bf16" if dtype == "bf16" else dtype
    q, scale_shape = _scale(rng, quant, in_shape, head_axis)
    storage = QUANT[quant][0] if quant else element
    store_dtype = QUANT[quant][1] if quant else DTYPES[dtype]
    fn = compiled.jit(_cache_write_ir(in_shape, cache_shape, token_dims,
                                      element, storage, scale_shape),
                      PIPELINE).function("f")
    v = rng.standard_normal(in_shape).astype(DTYPES[dtype])
    tok_shape = tuple(in_shape[dd] for dd in token_dims)
    rows = int(np.prod([cache_shape[dd] for dd in token_dims]))
    slots = _slots(rng, tok_shape, rows)
    cache = rng.standard_normal(cache_shape).astype(np.float32).astype(
        store_dtype)
    got = fn(*([v, slots, cache] + ([q] if q is not None else [])))
    expected, written = _scatter(cache.astype(np.float64),
                                 v.astype(np.float64), slots, token_dims,
                                 cache_shape)
    if quant is None:
        # Stored as is: bit-exact, written rows included.
        exp = cache.copy()
        exp[written] = expected[written].astype(store_dtype)
        assert np.array_equal(got.view(np.uint8), exp.view(np.uint8))
        return
    scale_full = _broadcast_scale(q, cache_shape, head_axis)
    # The product v * s in f32 is the only rounding before quantization.
    _check_rows(got, expected, written, cache, quant,
                np.abs(expected) * 2.0 ** -23, scale_full)


def test_all_slots_out_of_range_write_nothing():
    """-1 padding, prod(sizes), and a huge i64: the cache is unchanged."""
    src = _cache_write_ir((4, 2, 8), (6, 2, 8), (0,), "f32", "f32", None)
    fn = compiled.jit(src, PIPELINE).function("f")
    cache = np.arange(6 * 2 * 8, dtype=np.float32).reshape(6, 2, 8)
    slots = np.array([-1, 6, 2 ** 40, -(2 ** 40)], np.int64)
    got = fn(np.ones((4, 2, 8), np.float32), slots, cache)
    assert np.array_equal(got, cache)


# -- rope-raise: an insert_slice of a rotation into a cache ----------------

_RAISE_CASES = {
    # HF [B, H, S, D] into [B, H, max_len, D] at %p (token dims (0, 2)).
    "bhsd": ((2, 4, 3, 16), (2, 4, 11, 16), (0, 2), "[0, 0, %p, 0]"),
    # Contiguous [B, S, H, D] into [B, max_len, H, D] at %p.
    "bshd": ((3, 2, 2, 32), (3, 9, 2, 32), (0, 1), "[0, %p, 0, 0]"),
    # Flat tokens [T, H, D] into rows [N, H, D] at %p.
    "flat": ((5, 3, 8), (40, 3, 8), (0,), "[%p, 0, 0]"),
}


@pytest.mark.parametrize("layout", ["half", "interleaved"])
@pytest.mark.parametrize("case", sorted(_RAISE_CASES))
def test_raised_append_equals_the_insert(case, layout):
    """The IR a frontend writes (rope.apply into a temporary, then
    tensor.insert_slice into the cache at a runtime offset) compiled as is
    and after rope-raise (one rope.apply with slots into the cache): the
    same bits, and the rows at the offset are the float64 rotation."""
    in_shape, cache_shape, token_dims, offsets = _RAISE_CASES[case]
    xt, ct = _t(in_shape, "f32"), _t(cache_shape, "f32")
    pt = _t([in_shape[d] for d in token_dims], "i64")
    ones = ", ".join("1" for _ in in_shape)
    src = (f"func.func @f(%x: {xt}, %pos: {pt}, %cache: {ct}, %p: index) -> "
           f"{ct} {{\n"
           f"  %e = tensor.empty() : {xt}\n"
           f"  %r = rope.apply ins(%x : {xt}) positions(%pos : {pt}) "
           f"outs(%e : {xt}) {{token_dims = array<i64: "
           f"{', '.join(map(str, token_dims))}>, layout = "
           f"#rope.layout<{layout}>}} -> {xt}\n"
           f"  %c = tensor.insert_slice %r into %cache{offsets} "
           f"[{', '.join(map(str, in_shape))}] [{ones}] : {xt} into {ct}\n"
           f"  return %c : {ct}\n}}\n")
    raised_ir = compiled._jit.lower(src, "builtin.module(rope-raise)")
    assert "slots(" in raised_ir and "tensor.insert_slice" not in raised_ir
    as_is = compiled.jit(src, PIPELINE).function("f")
    raised = compiled.jit(src, PIPELINE.replace(
        "builtin.module(", "builtin.module(rope-raise, ")).function("f")
    rng = np.random.default_rng(len(case))
    x = rng.standard_normal(in_shape).astype(np.float32)
    pos = rng.integers(0, 2048, [in_shape[d] for d in token_dims])
    cache = rng.standard_normal(cache_shape).astype(np.float32)
    last = token_dims[-1]
    for p in (0, cache_shape[last] - in_shape[last]):
        got = raised(x, pos, cache, p)
        assert np.array_equal(got.view(np.uint32),
                              as_is(x, pos, cache, p).view(np.uint32))
        y = reference.apply(x, pos, layout=layout, token_dims=token_dims)
        window = [slice(None)] * len(in_shape)
        window[last] = slice(p, p + in_shape[last])
        expected = cache.astype(np.float64)
        expected[tuple(window)] = y
        rest = np.ones(cache_shape, bool)
        rest[tuple(window)] = False
        assert np.array_equal(got[rest], cache[rest])
        assert np.abs(got - expected).max() <= 2.0 ** -18 * (
            np.abs(y).max() + 1)


# -- frontend fixtures (scripts/gen-cache-fixtures.py) ---------------------

_FIXTURES = _paths.ROOT / "test" / \
    "Frontends" / "Inputs" / "cache"


@pytest.mark.parametrize("name", ["jax_dynamic_update_slice",
                                  "torch_slice_scatter"])
def test_frontend_fixture(name):
    """The frontend's IR (rotation, then the rotated k written into the
    cache at a runtime position) compiled after rope-raise: raised to one
    rope.apply with slots, and equal to the float64 result of the same
    formulas (frontend's own f32 output within the same tolerance); other
    start positions (the first, the last that fits) against the reference
    rotation written at that window."""
    src = (_FIXTURES / f"{name}.mlir").read_text()
    raised_ir = compiled._jit.lower(src, "builtin.module(rope-raise)")
    assert "slots(" in raised_ir
    assert "tensor.insert_slice" not in raised_ir
    data = np.load(_FIXTURES / f"{name}.npz")
    args = [data[f"arg{i}"] for i in range(4)]
    fn = compiled.jit(src, PIPELINE.replace(
        "builtin.module(", "builtin.module(rope-raise, ")).function("main")
    ref = data["ref0"]
    got = fn(*args)
    scale = np.abs(ref).max()
    assert np.abs(got - ref).max() / scale <= 1e-5
    assert np.abs(data["frontend0"] - ref).max() / scale <= 1e-5
    k, positions, cache, _ = args
    token_axis = 1 if name.startswith("jax") else 2
    s, max_len = k.shape[token_axis], cache.shape[token_axis]
    rot = reference.apply(k, positions, token_dims=(0, token_axis))
    for start in (0, max_len - s):
        got = fn(k, positions, cache, np.array(start, args[3].dtype))
        expected = cache.astype(np.float64)
        window = [slice(None)] * 4
        window[token_axis] = slice(start, start + s)
        expected[tuple(window)] = rot
        rest = np.ones(cache.shape, bool)
        rest[tuple(window)] = False
        assert np.array_equal(got[rest], cache[rest])
        assert np.abs(got - expected).max() / scale <= 1e-5
