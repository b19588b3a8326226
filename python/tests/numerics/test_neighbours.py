# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""rope.apply's fused neighbours (issue 18): QK-norm before the rotation and
a quantized (f8E4M3FN / f8E5M2 / i8) output after it, through
rope_mlir.apply(norm_weight=, norm_eps=, quant_dtype=, quant_scale=) on both
CPU lowerings (lowering="vector": convert-rope-to-vector; "scalar": the
linalg decomposition).

- float64 differential on random shapes, layouts, partial rotary, position
  forms, [B, S, H, D] and [B, H, S, D], per-tensor and per-head scales:
  the reference is reference.rms_norm -> reference.apply -> reference.quantize
  in float64. Float outputs within 2^-18 of the pair magnitude (+ one ulp of
  f16/bf16); quantized outputs must equal the float64 rotation quantized by
  the documented rule, except where the float64 value lies within the f32
  computation's error of a rounding boundary, where either neighbour is
  accepted (quantization is monotone: the result must lie between the
  quantizations of y - e and y + e); at least 99% must be exactly equal.
- bit-exact quantization: at position 0 the rotation is exactly the
  identity, so every fp8 grid point, midpoint, tie, subnormal, overflow,
  infinity and NaN goes through the kernel's saturating conversion and must
  equal reference.quantize bit for bit.
- errors name the argument.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import rope_mlir
from rope_mlir import kernel, reference

DTYPES = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32,
          "f64": np.float64}
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


def _case(seed):
    rng = np.random.default_rng(seed)
    quant = [None, "f8e4m3fn", "f8e5m2", "i8"][seed % 4]
    norm = seed % 3 != 1 or quant is None
    dtypes = ["f32", "bf16", "f16"] + ([] if quant else ["f64"])
    dtype = dtypes[seed % len(dtypes)]
    head_dim = int(rng.choice([8, 32, 64, 128]))
    p = head_dim if rng.random() < 0.6 else \
        int(2 * rng.integers(1, head_dim // 2 + 1))
    layout = str(rng.choice(["half", "interleaved"]))
    heads = int(rng.choice([1, 3, 8]))
    bhsd = rng.random() < 0.3
    b, s = int(rng.choice([1, 2, 5])), int(rng.choice([1, 4, 33]))
    if bhsd:
        shape, token_dims, head_axis = (b, heads, s, head_dim), (0, 2), 1
    elif rng.random() < 0.5:
        shape, token_dims, head_axis = (b, s, heads, head_dim), None, 2
    else:
        shape, token_dims, head_axis = (b * s, heads, head_dim), None, 1
    t = DTYPES[dtype]
    x = (rng.standard_normal(shape) * rng.choice([0.1, 1.0, 30.0])).astype(t)
    kw = dict(layout=layout, rotary_dim=p, token_dims=token_dims,
              base=float(rng.choice([10000.0, 1000000.0])))
    tokens = tuple(shape[d] for d in (token_dims or range(len(shape) - 2)))
    if rng.random() < 0.5:
        kw["positions"] = rng.integers(0, 5000, size=tokens).astype(np.int64)
    else:
        kw["offset"] = int(rng.integers(0, 5000))
    if norm:
        kw["norm_weight"] = (rng.standard_normal(head_dim) * 0.5 + 1.0).astype(
            DTYPES[str(rng.choice(["f32", "bf16", dtype]))])
        kw["norm_eps"] = float(rng.choice([1e-6, 1e-5, 0.5]))
    if quant:
        limit = reference.QUANT_LIMITS[quant]
        # Scales that put the data's range near the type's range, with some
        # values saturating.
        top = float(np.abs(x.astype(np.float64)).max()) if not norm else 3.0
        per_head = rng.random() < 0.5
        n = shape[head_axis] if per_head else None
        base_scale = limit / top * float(rng.choice([0.5, 1.0, 2.0]))
        scale = (base_scale * rng.uniform(0.5, 1.5, size=n)
                 if per_head else base_scale)
        kw["quant_dtype"] = quant
        kw["quant_scale"] = np.asarray(scale, np.float32)
    return x, kw, head_axis


def _reference(x, kw, head_axis):
    x64 = np.asarray(x).astype(np.float64)
    if "norm_weight" in kw:
        x64 = reference.rms_norm(x64, kw["norm_weight"], kw["norm_eps"])
    y = reference.apply(x64, kw.get("positions"), offset=kw.get("offset"),
                        layout=kw["layout"], rotary_dim=kw["rotary_dim"],
                        base=kw["base"], token_dims=kw["token_dims"])
    return x64, y


def _run(x, kw, lowering):
    kernel._apply_kernels.clear()
    original = kernel.compile

    def compile_with(config=None, **kwargs):
        return original(config, lowering=lowering, **kwargs)

    kernel.compile = compile_with
    try:
        return rope_mlir.apply(x, **kw)
    finally:
        kernel.compile = original
        kernel._apply_kernels.clear()


@pytest.mark.parametrize("lowering", ["vector", "scalar"])
@pytest.mark.parametrize("seed", range(24))
def test_against_float64(seed, lowering):
    x, kw, head_axis = _case(seed)
    check_against_float64(_run(x, kw, lowering), x, kw, head_axis)


def check_against_float64(got, x, kw, head_axis):
    """`got`, rope_mlir.apply(x, **kw), against the float64 reference: the
    tolerances of the module docstring."""
    x64, y = _reference(x, kw, head_axis)
    p = kw["rotary_dim"]
    m = _pair_magnitude(x64, p, kw["layout"])
    e = 2.0 ** -18 * m
    quant = kw.get("quant_dtype")
    if quant is None:
        assert got.dtype == x.dtype
        got64 = got.astype(np.float64)
        tol = e
        if x.dtype != np.float32 and x.dtype != np.float64:
            tol = tol + np.abs(np.spacing(np.abs(y).astype(x.dtype))).astype(
                np.float64)
        err = np.abs(got64 - y)
        assert not (err > tol).any(), \
            f"{int((err > tol).sum())} values out of tolerance"
        return
    assert got.dtype == np.dtype(QUANT[quant])
    got64 = got.astype(np.float64)
    s = kw["quant_scale"]
    exact = reference.quantize(y, quant, s, head_axis)
    lo = reference.quantize(y - e, quant, s, head_axis)
    hi = reference.quantize(y + e, quant, s, head_axis)
    nan = np.isnan(exact)
    assert not np.isnan(got64[~nan]).any()
    inside = (got64 >= np.minimum(lo, hi)) & (got64 <= np.maximum(lo, hi))
    assert inside[~nan].all(), \
        f"{int((~inside & ~nan).sum())} quantized values outside the bracket"
    same = (got64 == exact)[~nan].mean() if (~nan).any() else 1.0
    assert same >= 0.99, f"only {same:.4f} exactly equal"


def _f8_probe_values(quant):
    """Every finite value of the fp8 type, the midpoints between neighbours
    (ties) and one f32 ulp either side, overflow thresholds, +-inf, NaN."""
    if quant == "i8":
        grid = np.arange(-130, 131, dtype=np.float64)
        mids = grid[:-1] + 0.5
    else:
        t = QUANT[quant]
        bits = np.arange(256, dtype=np.uint8).view(t).astype(np.float64)
        grid = np.unique(bits[np.isfinite(bits)])
        mids = (grid[:-1] + grid[1:]) / 2
    mids = mids.astype(np.float32)
    around = np.concatenate([mids, np.nextafter(mids, np.float32(np.inf)),
                             np.nextafter(mids, np.float32(-np.inf))])
    limit = np.float32(reference.QUANT_LIMITS[quant])
    extra = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, limit * 1.03,
                      -limit * 1.03, limit * 4, 1e-30, -1e-30, 3e38, -3e38],
                     np.float32)
    return np.concatenate([grid.astype(np.float32), around, extra])


@pytest.mark.parametrize("lowering", ["vector", "scalar"])
@pytest.mark.parametrize("quant", ["f8e4m3fn", "f8e5m2", "i8"])
@pytest.mark.parametrize("channels", ["rotated", "pass-through"])
def test_quantization_bit_exact(quant, lowering, channels):
    """Rotated channels: at position 0 (cos = 1, sin = 0) a finite value
    passes the rotation exactly (its partner's term is +-0), so the stored
    value is the conversion of x * s alone; only the sign of a zero may
    change (x1 * 1 + x2 * -0), and inf/NaN would poison their partner
    (inf * 0), so those go through the pass-through channels, which are
    stored through the same conversion, bit for bit including -0."""
    values = _f8_probe_values(quant)
    if channels == "rotated":
        values = values[np.isfinite(values)]
    d = 64
    n = -(-values.size // d)
    padded = np.zeros(n * d, np.float32)
    padded[:values.size] = values
    x = padded.reshape(n, 1, d)
    if channels == "pass-through":
        # Channels 0 and 1 rotate (zeros), the probe values pass through.
        x = np.concatenate([np.zeros((n, 1, 2), np.float32), x], axis=-1)
        d += 2
    positions = np.zeros(n, np.int64)  # the identity rotation, exactly
    got = _run(x, dict(positions=positions, quant_dtype=quant,
                       quant_scale=1.0,
                       rotary_dim=2 if channels == "pass-through" else None),
               lowering)
    want = reference.quantize(x.astype(np.float64), quant, 1.0)
    if quant == "i8":
        np.testing.assert_array_equal(got.astype(np.float64), want)
        return
    got_bits = got.view(np.uint8)
    want_bits = want.astype(QUANT[quant]).view(np.uint8)
    if channels == "rotated":  # +0 and -0 are one value here
        zero = got.astype(np.float64) == 0
        got_bits = np.where(zero, 0, got_bits)
        want_bits = np.where(want == 0, 0, want_bits)
    np.testing.assert_array_equal(got_bits, want_bits)


def test_norm_then_identity_rotation_matches_hf_form():
    """At position 0 the op is the QK-norm alone: HF's Qwen3RMSNorm in
    float64 (weight * (x * rsqrt(mean(x^2) + eps)))."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((9, 4, 128)).astype(np.float32)
    w = rng.standard_normal(128).astype(np.float32)
    got = rope_mlir.apply(x, np.zeros(9, np.int64), norm_weight=w,
                          norm_eps=1e-6)
    x64 = x.astype(np.float64)
    want = w * (x64 / np.sqrt((x64 ** 2).mean(-1, keepdims=True) + 1e-6))
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)


def test_per_head_scale_selects_the_head():
    x = np.ones((3, 4, 8), np.float32)
    s = np.array([1, 2, 3, 4], np.float32)
    got = rope_mlir.apply(x, np.zeros(3, np.int64), quant_dtype="i8",
                          quant_scale=s)
    np.testing.assert_array_equal(got, np.broadcast_to(
        s.astype(np.int8)[None, :, None], x.shape))


# -- errors ------------------------------------------------------------------

def _x():
    return np.ones((4, 2, 16), np.float32), np.zeros(4, np.int64)


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(norm_weight=np.ones(8, np.float32)), ValueError, "norm_weight has shape"),
    (dict(norm_weight=np.ones(16, np.int32)), TypeError, "unsupported data type"),
    (dict(norm_weight=np.ones(16, np.float32), norm_eps=-1.0), ValueError,
     "norm_epsilon must be a finite number"),
    (dict(norm_weight=np.ones(16, np.float32), norm_eps=float("nan")),
     ValueError, "norm_eps must be finite"),
    (dict(quant_dtype="f8e4m3fn"), ValueError, "quant_dtype and quant_scale together"),
    (dict(quant_scale=1.0), ValueError, "quant_dtype and quant_scale together"),
    (dict(quant_dtype="fp4", quant_scale=1.0), ValueError, "quant_dtype must be"),
    (dict(quant_dtype="i8", quant_scale=np.ones(3, np.float32)), ValueError,
     r"quant_scale has shape \(3,\), expected \(2,\)"),
    (dict(quant_dtype="i8", quant_scale=np.ones((2, 2), np.float32)),
     ValueError, "quant_scale must be a scalar"),
    (dict(quant_dtype="i8", quant_scale=np.ones(2, np.float64)), TypeError,
     "quant_scale has dtype float64"),
    (dict(quant_dtype="i8", quant_scale=float("nan")), ValueError,
     "quant_scale must be finite"),
    (dict(quant_dtype="i8", quant_scale=1.0, out=np.empty((4, 2, 16), np.float32)),
     TypeError, "out has dtype float32, expected int8"),
    (dict(quant_dtype="i8", quant_scale=1.0,
          out=np.empty((4, 2, 16), np.int8)[::-1]), ValueError,
     "out must be C-contiguous"),
])
def test_errors_name_the_argument(kwargs, error, match):
    x, pos = _x()
    with pytest.raises(error, match=match):
        rope_mlir.apply(x, pos, **kwargs)


def test_quantized_read_only_out():
    x, pos = _x()
    out = np.empty(x.shape, np.int8)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="out is read-only"):
        rope_mlir.apply(x, pos, quant_dtype="i8", quant_scale=1.0, out=out)


def test_quantized_in_place_refused():
    x, pos = _x()
    with pytest.raises(ValueError, match="cannot be written in place"):
        rope_mlir.apply(x, pos, quant_dtype="i8", quant_scale=1.0, out=x)


def test_quantized_f64_refused():
    x, pos = _x()
    with pytest.raises(TypeError, match="needs f16, bf16 or f32 input"):
        rope_mlir.apply(x.astype(np.float64), pos, quant_dtype="i8",
                        quant_scale=1.0)


def test_kernel_without_neighbours_refuses_their_operands():
    x, pos = _x()
    k = kernel.compile(dtype="f32", rank=3, head_dim=16, positions="explicit")
    with pytest.raises(ValueError, match="compiled without a QK-norm"):
        k(x, pos, norm_weight=np.ones(16, np.float32))
    with pytest.raises(ValueError, match="compiled without a quantized"):
        k(x, pos, quant_scale=1.0)


def test_kernel_with_neighbours_needs_their_operands():
    x, pos = _x()
    k = kernel.compile(dtype="f32", rank=3, head_dim=16, positions="explicit",
                       norm=True, quant="i8")
    with pytest.raises(ValueError, match="pass norm_weight"):
        k(x, pos, quant_scale=1.0)
    with pytest.raises(ValueError, match="pass quant_scale"):
        k(x, pos, norm_weight=np.ones(16, np.float32))


def test_out_overlapping_the_norm_weight_refused():
    x, pos = _x()
    buf = np.zeros(4 * 2 * 16 + 16, np.float32)
    w, out = buf[:16], buf[:4 * 2 * 16].reshape(4, 2, 16)
    w[:] = 1
    with pytest.raises(ValueError, match="out overlaps norm_weight"):
        rope_mlir.apply(x, pos, norm_weight=w, out=out)


# -- the float64 reference's own argument checks -------------------------------

@pytest.mark.parametrize("call, match", [
    (lambda: reference.rms_norm(np.ones((2, 8)), np.ones(4), 1e-6), r"weight shape \(4,\)"),
    (lambda: reference.rms_norm(np.float64(1.0), np.ones(1), 1e-6), "at least one dim"),
    (lambda: reference.rms_norm(np.ones((2, 8)), np.ones(8), -1.0), "eps must be a finite number"),
    (lambda: reference.rms_norm(np.ones((2, 8)), np.ones(8), float("inf")), "eps must be finite"),
    (lambda: reference.quantize(np.ones((2, 4, 8)), "fp4", 1.0), "quant must be one of"),
    (lambda: reference.quantize(np.ones((2, 4, 8)), "i8", np.ones(4)), "needs head_axis"),
    (lambda: reference.quantize(np.ones((2, 4, 8)), "i8", np.ones(3), head_axis=1), "scale has 3 entries"),
    (lambda: reference.quantize(np.ones((2, 4, 8)), "i8", np.ones(4), head_axis=5), "scale has 4 entries"),
    (lambda: reference.quantize(np.ones((2, 4, 8)), "i8", np.ones((4, 1))), "scalar or one per head"),
])
def test_reference_refuses_bad_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call()
