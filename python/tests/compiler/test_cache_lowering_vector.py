# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The vector lowering of the KV-cache append (issue 18): `rope.apply` with
`slots(%s)` and `rope.cache_write`, compiled from IR text through
rope_mlir.jit with the CPU pipeline (rope-to-llvm-cpu, vectorize=true; one
thread and OpenMP), against numpy float64.

Each case builds one function: K rotated (with QK-norm and a quantized
cache in some cases) and appended to its cache at `slots`, V appended to its
cache by rope.cache_write at the same slots, and in some cases Q rotated
without slots at the same positions (the sibling group the vector lowering
fuses into K's token loop: the decode step). Caches: contiguous
[B, max_len, H, D] (token dims (0, 1)), Hugging Face's [B, H, max_len, D]
(token dims (0, 2)) and collapsed pages [num_pages * page_size, H, D]; some
slots are -1 (vLLM's padding) or past the cache's end and must write nothing.

- written rows: the float64 reference (reference.rms_norm -> apply ->
  quantize) within 2^-18 of the pair magnitude (+ one ulp of f16/bf16), or
  for quantized caches the exactness rule of test_neighbours.py (inside the
  bracket of quantize(y -+ e), at least 99% exactly equal); V rows bit-exact
  (a copy) or, quantized, exactly reference.quantize of the f32 product
  v * s (the documented rule);
- every other cache row: the initial bytes, bit for bit.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import rope_mlir
from rope_mlir import reference

DTYPES = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32}
QUANT = {"f8e4m3fn": ("f8E4M3FN", ml_dtypes.float8_e4m3fn),
         "i8": ("i8", np.int8)}


def _pipeline(threads):
    return ("builtin.module(rope-to-llvm-cpu{emit-c-interface=true "
            "bufferize-function-boundaries=true vectorize=true "
            f"num-threads={threads}}})")


def _ttype(shape, element):
    return "tensor<" + "".join(f"{n}x" for n in shape) + element + ">"


def _case(seed):
    rng = np.random.default_rng(1000 + seed)
    kind = ["bshd", "bhsd", "paged"][seed % 3]
    dtype = ["f32", "bf16", "f16"][(seed // 3) % 3]
    quant = [None, None, "f8e4m3fn", "i8"][seed % 4]
    norm = seed % 5 in (1, 3)
    with_q = seed % 2 == 0
    head_dim = int(rng.choice([32, 64, 128]))
    p = head_dim if rng.random() < 0.6 else \
        int(2 * rng.integers(1, head_dim // 2 + 1))
    layout = str(rng.choice(["half", "interleaved"]))
    hkv = int(rng.choice([1, 2, 4]))
    hq = hkv * int(rng.choice([1, 4]))
    b = int(rng.choice([1, 3]))
    s = int(rng.choice([1, 5]))
    max_len = int(rng.choice([8, 16]))
    if kind == "bshd":
        token_dims = (0, 1)
        shape = lambda h, n: (b, n, h, head_dim)  # noqa: E731
        tokens, cache_tokens = (b, s), (b, max_len)
        head_axis = 2
    elif kind == "bhsd":
        token_dims = (0, 2)
        shape = lambda h, n: (b, h, n, head_dim)  # noqa: E731
        tokens, cache_tokens = (b, s), (b, max_len)
        head_axis = 1
    else:
        token_dims = (0,)
        t = b * s
        shape = lambda h, n: (n, h, head_dim)  # noqa: E731
        tokens, cache_tokens = (t,), (int(rng.choice([2, 4])) * 8,)
        head_axis = 1
    n_tokens = int(np.prod(tokens))
    n_slots = int(np.prod(cache_tokens))
    slots = rng.permutation(n_slots)[:n_tokens].astype(np.int64)
    # Padding and slots past the end: written nowhere.
    for i in rng.choice(n_tokens, size=n_tokens // 3, replace=False):
        slots[i] = int(rng.choice([-1, n_slots, n_slots + 7, -n_slots]))
    slot_type = str(rng.choice(["i32", "i64"]))
    slots = slots.astype(np.int32 if slot_type == "i32" else np.int64)
    slots = slots.reshape(tokens)
    positions = rng.integers(0, 4096, size=tokens).astype(np.int64)
    t = DTYPES[dtype]
    k_shape = shape(hkv, s if kind != "paged" else n_tokens)
    cache_shape = list(k_shape)
    for d, n in zip(token_dims, cache_tokens):
        cache_shape[d] = n
    cache_shape = tuple(cache_shape)
    k = (rng.standard_normal(k_shape) * 2).astype(t)
    v = (rng.standard_normal(k_shape) * 2).astype(t)
    q = (rng.standard_normal(shape(hq, s if kind != "paged" else n_tokens))
         ).astype(t) if with_q else None
    case = dict(kind=kind, dtype=dtype, quant=quant, layout=layout, p=p,
                token_dims=token_dims, head_axis=head_axis, hkv=hkv,
                k=k, v=v, q=q, slots=slots, slot_type=slot_type,
                positions=positions, base=float(rng.choice([1e4, 5e5])))
    storage = QUANT[quant][1] if quant else t
    # Initial caches: random bytes (NaNs included) that must survive.
    nbytes = int(np.prod(cache_shape)) * np.dtype(storage).itemsize
    case["k_cache"] = np.frombuffer(rng.bytes(nbytes), storage).reshape(
        cache_shape).copy()
    case["v_cache"] = np.frombuffer(rng.bytes(nbytes), storage).reshape(
        cache_shape).copy()
    if norm:
        case["k_norm"] = (rng.standard_normal(head_dim) * 0.5 + 1.0).astype(t)
        case["q_norm"] = (rng.standard_normal(head_dim) * 0.5 + 1.0).astype(t)
        case["eps"] = 1e-6
    if quant:
        limit = reference.QUANT_LIMITS[quant]
        per_head = rng.random() < 0.5
        top = 3.0 if norm else 8.0
        n = hkv if per_head else None
        case["k_scale"] = np.asarray(
            limit / top * rng.uniform(0.5, 1.5, size=n), np.float32)
        case["v_scale"] = np.asarray(
            limit / 8.0 * rng.uniform(0.5, 1.5, size=n), np.float32)
    return case


def _module(c):
    dtype = c["dtype"]
    head_dim = c["k"].shape[-1]
    quant = c["quant"]
    storage = QUANT[quant][0] if quant else dtype
    kt = _ttype(c["k"].shape, dtype)
    ct = _ttype(c["k_cache"].shape, storage)
    st = _ttype(c["slots"].shape, c["slot_type"])
    pt = _ttype(c["positions"].shape, "i64")
    wt = _ttype((head_dim,), dtype)
    attrs = [f"rotary_dim = {c['p']} : i64",
             f"freqs = #rope.default<base = {c['base']!r}>"]
    if c["layout"] == "interleaved":
        attrs.append("layout = #rope.layout<interleaved>")
    if c["token_dims"] != (0,) and c["token_dims"] != (0, 1):
        attrs.append("token_dims = array<i64: "
                     + ", ".join(map(str, c["token_dims"])) + ">")
    if "eps" in c:
        attrs.append(f"norm_epsilon = {c['eps']:.6e}")
    attr = "{" + ", ".join(attrs) + "}"
    args = [f"%k: {kt}", f"%v: {kt}", f"%pos: {pt}", f"%slots: {st}",
            f"%kc: {ct}", f"%vc: {ct}"]
    k_extra = v_extra = ""
    if "eps" in c:
        args.append(f"%kw: {wt}")
        k_extra += f" norm(%kw : {wt})"
    if quant:
        kst = _ttype(c["k_scale"].shape, "f32")
        args += [f"%ks: {kst}", f"%vs: {kst}"]
        k_extra += f" quant_scale(%ks : {kst})"
        v_extra = f" quant_scale(%vs : {kst})"
    results = [ct, ct]
    body = []
    if c["q"] is not None:
        qt = _ttype(c["q"].shape, dtype)
        args += [f"%q: {qt}", f"%qo: {qt}"]
        q_extra = ""
        if "eps" in c:
            args.append(f"%qw: {wt}")
            q_extra = f" norm(%qw : {wt})"
        body.append(
            f"%rq = rope.apply ins(%q : {qt}) positions(%pos : {pt})"
            f"{q_extra} outs(%qo : {qt}) {attr} -> {qt}")
        results.append(qt)
    body.append(
        f"%rk = rope.apply ins(%k : {kt}) positions(%pos : {pt}){k_extra} "
        f"slots(%slots : {st}) outs(%kc : {ct}) {attr} -> {ct}")
    td = ""
    if c["token_dims"] != (0,) and c["token_dims"] != (0, 1):
        td = " {token_dims = array<i64: " + ", ".join(
            map(str, c["token_dims"])) + ">}"
    body.append(
        f"%rv = rope.cache_write ins(%v : {kt}) slots(%slots : {st}){v_extra} "
        f"outs(%vc : {ct}){td} -> {ct}")
    names = ["%rk", "%rv"] + (["%rq"] if c["q"] is not None else [])
    body.append(f"return {', '.join(names)} : {', '.join(results)}")
    text = (f"func.func @append({', '.join(args)}) -> ({', '.join(results)}) "
            "{\n  " + "\n  ".join(body) + "\n}\n")
    call = [c["k"], c["v"], c["positions"], c["slots"], c["k_cache"],
            c["v_cache"]]
    if "eps" in c:
        call.append(c["k_norm"])
    if quant:
        call += [c["k_scale"], c["v_scale"]]
    if c["q"] is not None:
        call += [c["q"], np.zeros_like(c["q"])]
        if "eps" in c:
            call.append(c["q_norm"])
    return text, call


def _rotated(c, x, weight):
    x64 = np.asarray(x).astype(np.float64)
    if weight is not None:
        x64 = reference.rms_norm(x64, weight, c["eps"])
    return x64, reference.apply(x64, c["positions"], layout=c["layout"],
                                rotary_dim=c["p"], base=c["base"],
                                token_dims=c["token_dims"])


def _pair_magnitude(x64, p, layout):
    rot = x64[..., :p]
    if layout == "half":
        n = np.sqrt(rot[..., :p // 2] ** 2 + rot[..., p // 2:] ** 2)
        n = np.concatenate([n, n], axis=-1)
    else:
        n = np.repeat(np.sqrt(rot[..., 0::2] ** 2 + rot[..., 1::2] ** 2), 2,
                      axis=-1)
    return np.concatenate([n, np.abs(x64[..., p:])], axis=-1) + 1e-30


def _rows(array, token_dims):
    """[tokens, heads..., D]: the token dims first, flattened row-major."""
    moved = np.moveaxis(array, token_dims, range(len(token_dims)))
    n = int(np.prod(moved.shape[:len(token_dims)]))
    return moved.reshape((n,) + moved.shape[len(token_dims):])


def _check_float(got, y, x64, c, dtype):
    e = 2.0 ** -18 * _pair_magnitude(x64, c["p"], c["layout"])
    tol = e
    if dtype != np.float32:
        tol = tol + np.abs(np.spacing(np.abs(y).astype(dtype))).astype(
            np.float64)
    err = np.abs(got.astype(np.float64) - y)
    assert not (err > tol).any(), \
        f"{int((err > tol).sum())} values out of tolerance"


def _check_quantized(got, y, x64, c, scale, head_axis):
    quant = c["quant"]
    e = 2.0 ** -18 * _pair_magnitude(x64, c["p"], c["layout"])
    axis = head_axis if np.ndim(scale) else None
    exact = reference.quantize(y, quant, scale, axis)
    lo = reference.quantize(y - e, quant, scale, axis)
    hi = reference.quantize(y + e, quant, scale, axis)
    got64 = got.astype(np.float64)
    nan = np.isnan(exact)
    assert not np.isnan(got64[~nan]).any()
    inside = (got64 >= np.minimum(lo, hi)) & (got64 <= np.maximum(lo, hi))
    assert inside[~nan].all(), \
        f"{int((~inside & ~nan).sum())} quantized values outside the bracket"
    same = (got64 == exact)[~nan].mean() if (~nan).any() else 1.0
    assert same >= 0.99, f"only {same:.4f} exactly equal"


@pytest.mark.parametrize("threads", [1, 4])
@pytest.mark.parametrize("seed", range(18))
def test_append_against_float64(seed, threads):
    c = _case(seed)
    text, call = _module(c)
    outs = rope_mlir.jit(text, _pipeline(threads)).function("append")(*call)
    got_k, got_v = outs[0], outs[1]
    td = c["token_dims"]
    slots = c["slots"].reshape(-1).astype(np.int64)
    n_slots = _rows(c["k_cache"], td).shape[0]
    valid = (slots >= 0) & (slots < n_slots)
    targets = slots[valid]
    untouched = np.ones(n_slots, bool)
    untouched[targets] = False

    for got, initial in ((got_k, c["k_cache"]), (got_v, c["v_cache"])):
        assert got.shape == initial.shape and got.dtype == initial.dtype
        g, i = _rows(got, td), _rows(initial, td)
        assert (g[untouched].view(np.uint8) ==
                i[untouched].view(np.uint8)).all(), "an untouched row changed"

    # K: the written rows against the float64 rotation (token order).
    x64, y = _rotated(c, c["k"], c.get("k_norm"))
    x64r, yr = _rows(x64, td)[valid], _rows(y, td)[valid]
    gk = _rows(got_k, td)[targets]
    # Rows are [n, heads..., D]: the single head axis is 1.
    if c["quant"]:
        _check_quantized(gk, yr, x64r, c, c["k_scale"], 1)
    else:
        _check_float(gk, yr, x64r, c, DTYPES[c["dtype"]])

    # V: a copy, or quantized exactly: the documented rule (the product
    # v * s in f32, then reference.quantize's saturation and rounding).
    gv = _rows(got_v, td)[targets]
    v = _rows(c["v"], td)[valid]
    if c["quant"]:
        scale = c["v_scale"].reshape((1, -1, 1) if c["v_scale"].ndim else ())
        product = (v.astype(np.float32) * scale).astype(np.float64)
        want = reference.quantize(product, c["quant"], 1.0)
        got64 = gv.astype(np.float64)
        same = (got64 == want) | (np.isnan(got64) & np.isnan(want))
        assert same.all(), f"{int((~same).sum())} V values differ"
    else:
        assert (gv.view(np.uint8) == v.view(np.uint8)).all()

    if c["q"] is not None:
        x64, y = _rotated(c, c["q"], c.get("q_norm"))
        _check_float(outs[2], y, x64, c, DTYPES[c["dtype"]])


def test_cases_cover_the_matrix():
    """The seeds cover every layout x dtype, quantized and not, norm, Q."""
    cases = [_case(seed) for seed in range(18)]
    assert {(c["kind"], c["dtype"]) for c in cases} == {
        (k, d) for k in ("bshd", "bhsd", "paged") for d in DTYPES}
    assert {c["quant"] for c in cases} == {None, "f8e4m3fn", "i8"}
    assert any("eps" in c for c in cases)
    assert any(c["q"] is not None for c in cases)
    assert any(c["layout"] == "interleaved" for c in cases)
    assert any(c["p"] < c["k"].shape[-1] for c in cases)
    assert any((c["slots"] < 0).any() for c in cases)


_KERNEL = """
func.func @append(%k: memref<?x4x64xbf16>, %v: memref<?x4x64xbf16>,
                  %positions: memref<?xi64>, %slots: memref<?xi32>,
                  %k_cache: memref<?x4x64xbf16>, %v_cache: memref<?x4x64xbf16>)
    attributes {llvm.emit_c_interface} {
  %kt = bufferization.to_tensor %k restrict : memref<?x4x64xbf16> to tensor<?x4x64xbf16>
  %vt = bufferization.to_tensor %v restrict : memref<?x4x64xbf16> to tensor<?x4x64xbf16>
  %pos = bufferization.to_tensor %positions restrict : memref<?xi64> to tensor<?xi64>
  %s = bufferization.to_tensor %slots restrict : memref<?xi32> to tensor<?xi32>
  %kc = bufferization.to_tensor %k_cache restrict writable : memref<?x4x64xbf16> to tensor<?x4x64xbf16>
  %vc = bufferization.to_tensor %v_cache restrict writable : memref<?x4x64xbf16> to tensor<?x4x64xbf16>
  %rk = rope.apply ins(%kt : tensor<?x4x64xbf16>) positions(%pos : tensor<?xi64>) slots(%s : tensor<?xi32>) outs(%kc : tensor<?x4x64xbf16>) {layout = #rope.layout<interleaved>} -> tensor<?x4x64xbf16>
  %rv = rope.cache_write ins(%vt : tensor<?x4x64xbf16>) slots(%s : tensor<?xi32>) outs(%vc : tensor<?x4x64xbf16>) -> tensor<?x4x64xbf16>
  bufferization.materialize_in_destination %rk in restrict writable %k_cache : (tensor<?x4x64xbf16>, memref<?x4x64xbf16>) -> ()
  bufferization.materialize_in_destination %rv in restrict writable %v_cache : (tensor<?x4x64xbf16>, memref<?x4x64xbf16>) -> ()
  return
}
"""


@pytest.mark.parametrize("threads", [1, 4])
def test_kernel_form_writes_the_caches_in_place(threads):
    """The kernel form (memref arguments, the caches restrict writable, as
    the package's kernels are built) writes the caller's own cache arrays:
    the slot rows of K rotated and of V copied, every other byte unchanged,
    nothing returned. Paged [pages * page_size, H, D] caches, vLLM's -1
    padding and slots past the end skipped."""
    import ctypes

    from rope_mlir import _jit

    rng = np.random.default_rng(7)
    tokens, rows = 37, 128
    bf16 = ml_dtypes.bfloat16
    k = rng.standard_normal((tokens, 4, 64)).astype(bf16)
    v = rng.standard_normal((tokens, 4, 64)).astype(bf16)
    positions = rng.integers(0, 8192, tokens).astype(np.int64)
    slots = rng.permutation(rows)[:tokens].astype(np.int32)
    slots[::5] = -1
    slots[3] = rows
    caches = [np.frombuffer(rng.bytes(rows * 4 * 64 * 2), bf16).reshape(
        rows, 4, 64).copy() for _ in range(2)]
    before = [c.copy() for c in caches]
    module = _jit.compile_module(_KERNEL, _pipeline(threads).replace(
        " bufferize-function-boundaries=true", ""))
    function = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * 6)(
        module.lookup("append"))
    descriptors = [_jit.memref_descriptor(a)
                   for a in (k, v, positions, slots, *caches)]
    function(*[ctypes.addressof(d) for d in descriptors])

    valid = (slots >= 0) & (slots < rows)
    targets = slots[valid]
    untouched = np.ones(rows, bool)
    untouched[targets] = False
    for cache, initial in zip(caches, before):
        assert (cache[untouched].view(np.uint16) ==
                initial[untouched].view(np.uint16)).all()
    assert (caches[1][targets].view(np.uint16) ==
            v[valid].view(np.uint16)).all()
    c = dict(layout="interleaved", p=64, positions=positions, base=10000.0,
             token_dims=(0,))
    x64, y = _rotated(c, k, None)
    _check_float(caches[0][targets], y[valid], x64[valid], c, bf16)
