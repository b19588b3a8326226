# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""convert-rope-to-gpu's kernels, executed on the CPU against the float64
reference at the SEMANTICS.md §5 contract.

There is no GPU here, so the launched kernel is emulated: the module is
lowered as rope-to-nvvm lowers it up to the launch (convert-rope-to-gpu,
rope-approximate-trig, bufferization, linalg to loops), every gpu.launch is
rewritten into nested scf.parallel loops over blocks and threads
(test/GPU/Inputs/emulate_launch.py; valid because the kernel has no
barriers or shared memory) and the result is JIT-compiled for the CPU. This
runs the kernel's indexing, grid-stride token loop, lane layout, position
conversion and angle arithmetic, not NVPTX code generation.

Cases (with angle=turns too where marked: random, M-RoPE, scaled, length-dependent):
test_differential's random configurations (every dtype, both pair
layouts, partial rotary, every position and cos/sin source, inverse,
magnitude, static shapes, in place), its negative-position configurations
(R(-m)), M-RoPE and scaled frequencies with signed positions; each with the
default launch (16-byte accesses, 256 threads) and with one pair per thread
in 8-thread blocks on at most 3 blocks (so the frequency and grid-stride
loops iterate). Tolerances are test_differential.check's: 2^-20 of the pair
magnitude in f32/f64, plus one ulp of the output type in f16/bf16.

Fused neighbours (issue 18), against a float64 reference written here:
QK-norm (f32/bf16, both layouts, partial and full rotary, in place) within
2^-18 of the normalized pair magnitude (+ one bf16 ulp); i8, f8E4M3FN and
f8E5M2 outputs (per-tensor scale; per-head scale after QK-norm) between the
quantizations of the float64 value -/+ the f32 computation's error, >= 95%
exactly the float64 value's quantization, some saturating.

KV-cache append (issue 18), on modules written here that materialize the
result into the cache argument (in place, as the kernel writes it):
rope.apply with slots into [B, max_len, H, D], [B, H, max_len, D] and paged
caches (f32/bf16/f16, both pair layouts, partial rotary, i32 and i64
slots), with QK-norm and an fp8 cache; rope.cache_write plain and
quantized (i8/fp8, per-tensor and per-head scales); MLA's rope channels
[512, 576) of a concatenated cache through a strided slice. Rows at valid
slots against reference.apply (check's tolerance), bit for bit for a copy,
by the quantization rule for fp8/int8; every other byte of the cache
unchanged, padding (-1), past-the-end and huge slots included.
"""

from __future__ import annotations

import ctypes
import importlib.util
import re
import sys
from unittest import mock

import ml_dtypes
import numpy as np
import pytest

import rope_mlir
from rope_mlir import _jit, reference
from rope_mlir import kernel as kernel_module

from test_differential import (DTYPES, NUM_CASES, Case, check, make_case,
                               run_case)
from test_negative_positions import FORMS, negative_case

import _paths

ROOT = _paths.ROOT
_spec = importlib.util.spec_from_file_location(
    "emulate_launch", ROOT / "test" / "GPU" / "Inputs" / "emulate_launch.py")
emulate_launch = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(emulate_launch)

BASE_LAUNCHES = {"default": "",
                 "tiny": "vectorize=false block-size=8 max-blocks=3"}
# The same launches with the angle formed without f64 (angle=turns: i64
# phase steps, f32; what rope-to-nvvm picks for chips without fast f64).
LAUNCHES = dict(BASE_LAUNCHES,
                **{f"{name}-turns": f"{options} angle=turns".strip()
                   for name, options in BASE_LAUNCHES.items()})

# rope-to-nvvm up to the launch (lib/Pipelines/Pipelines.cpp), buffers with
# identity layouts so that the kernel reads the caller's arrays.
TO_LAUNCH = (
    "builtin.module(convert-rope-to-gpu{{{options}}}, rope-approximate-trig, "
    "canonicalize, cse, func.func(convert-elementwise-to-linalg), "
    "one-shot-bufferize{{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map}}, canonicalize, "
    "cse, convert-bufferization-to-memref, "
    "func.func(convert-linalg-to-loops))")
# The emulated launch (scf.parallel) to LLVM on the CPU, as rope-to-llvm-cpu
# ends, with libm for what rope-approximate-trig leaves (f64 sin/cos).
TO_LLVM = (
    "builtin.module(convert-vector-to-scf, convert-scf-to-cf, "
    "expand-strided-metadata, lower-affine, finalize-memref-to-llvm, "
    "convert-vector-to-llvm, convert-math-to-llvm, convert-math-to-libm, "
    "convert-arith-to-llvm, convert-index-to-llvm, convert-cf-to-llvm, "
    "convert-func-to-llvm, reconcile-unrealized-casts)")


def emulated_kernel(config: rope_mlir.KernelConfig,
                    launch: str) -> kernel_module.Kernel:
    """A Kernel (same calling convention as rope_mlir.compile's) whose code
    is the GPU kernel of `config`, launched on CPU loops."""
    gpu = _jit.lower(kernel_module.emit(config),
                     TO_LAUNCH.format(options=LAUNCHES[launch]))
    emulated, launches = emulate_launch.emulate(gpu)
    # The rotation is the launched kernel, not host code.
    assert launches == 1 and "gpu." not in emulated, gpu
    assert "rope.apply" not in gpu and "scf.parallel" in emulated
    with mock.patch.object(kernel_module, "emit",
                           lambda *_args, **_kw: emulated), \
            mock.patch.object(kernel_module, "pipeline",
                              lambda _config: TO_LLVM):
        return kernel_module.Kernel(config)  # uncached


def run_emulated(case: Case, launch: str, **lowering):
    x, got, ref = run_case(
        case, make_kernel=lambda c: emulated_kernel(c, launch), **lowering)
    # Fails on an empty or untouched output, whatever the reference says.
    assert np.asarray(got).size > 0 and np.any(np.asarray(got) != 0), case
    worst = check(case, x, got, ref)
    return got, ref, worst


@pytest.mark.parametrize("launch", list(LAUNCHES))
@pytest.mark.parametrize("seed", range(3, NUM_CASES, 20))
def test_random_case_on_emulated_gpu(seed, launch):
    case = make_case(seed)
    run_emulated(case, launch, inplace=seed % 3 == 0)


NEGATIVE = [(dtype, form) for dtype in DTYPES for form in FORMS]


@pytest.mark.parametrize("launch", list(BASE_LAUNCHES))
@pytest.mark.parametrize("dtype,form", NEGATIVE,
                         ids=["-".join(c) for c in NEGATIVE])
def test_negative_positions_on_emulated_gpu(dtype, form, launch):
    case = negative_case(100 + NEGATIVE.index((dtype, form)), dtype, form)
    run_emulated(case, launch)


def _case(x, positions_form, layout="half", rotary_dim=None, magnitude=1.0,
          dtype="f32"):
    return Case(seed=0, dtype=dtype, shape=x.shape, token_dims=None,
                layout=layout, rotary_dim=rotary_dim or x.shape[-1],
                base=10000.0, magnitude=magnitude, inverse=False,
                positions=positions_form, cache=None, static=False,
                max_position=2 ** 24, negative=True)


@pytest.mark.parametrize("launch", list(LAUNCHES))
@pytest.mark.parametrize("interleaved", [False, True],
                         ids=["chunked", "interleaved"])
@pytest.mark.parametrize("pdtype", ["i32", "i64"])
def test_mrope_signed_on_emulated_gpu(pdtype, interleaved, launch):
    """M-RoPE: the kernel picks each pair's axis from a table and converts
    that position; every axis has both signs."""
    rng = np.random.default_rng(41)
    section = [6, 5, 5]
    x = rng.standard_normal((9, 2, 32)).astype(np.float32)
    sign = np.where(np.arange(27).reshape(3, 9) % 2, 1, -1)
    positions = rng.integers(1, 2 ** 24, (3, 9)) * sign
    positions[:, 1] = [-1, 2, -3]
    config = rope_mlir.KernelConfig(
        dtype="f32", rank=3, head_dim=32, positions="explicit",
        positions_dtype=pdtype,
        mrope=(f"#rope.mrope<section = {section}"
               f"{', interleaved = true' if interleaved else ''}>"))
    got = emulated_kernel(config, launch)(x, positions)
    ref = reference.apply(x, positions, mrope_section=section,
                          mrope_interleaved=interleaved)
    assert np.any(got != 0)
    check(_case(x, "explicit" + pdtype[1:]), x, got, ref)


SCALINGS = {
    "yarn": {"rope_type": "yarn", "factor": 4.0,
             "original_max_position_embeddings": 4096},
    "llama3": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
               "high_freq_factor": 4.0,
               "original_max_position_embeddings": 8192},
}


@pytest.mark.parametrize("launch", list(LAUNCHES))
@pytest.mark.parametrize("dtype", ["f32", "bf16"])
@pytest.mark.parametrize("scheme", list(SCALINGS))
def test_scaled_frequencies_on_emulated_gpu(scheme, dtype, launch):
    """Frequency tables and magnitudes of scaled schemes, at signed
    offsets per row (partial rotary for YaRN)."""
    rng = np.random.default_rng(43)
    rotary_dim = 16 if scheme == "yarn" else 64
    base = 500000.0 if scheme == "llama3" else 10000.0
    attrs = rope_mlir.scaling_attributes(SCALINGS[scheme], base=base,
                                         head_dim=64, rotary_dim=rotary_dim)
    x = rng.standard_normal((3, 5, 2, 64)).astype(DTYPES[dtype])
    offsets = np.array([-70000, -3, 12345], np.int64)
    config = rope_mlir.KernelConfig(
        dtype=dtype, rank=4, head_dim=64, rotary_dim=rotary_dim,
        positions="row_offset", freqs=attrs.freqs, magnitude=attrs.magnitude)
    got = emulated_kernel(config, launch)(x, offset=offsets)
    ref = reference.apply(x, offset=offsets, rotary_dim=rotary_dim,
                          base=base, scaling=SCALINGS[scheme],
                          magnitude=attrs.magnitude)
    assert np.any(np.asarray(got) != 0)
    check(_case(x, "row_offset", rotary_dim=rotary_dim,
                magnitude=attrs.magnitude, dtype=dtype), x, got, ref)


# Schemes whose frequencies depend on the call's length: the kernel computes
# the length from device buffers (length operand, max position, max per-row
# offset) and theta per pair with the scheme's per-element form.
DYNAMIC_SCALINGS = {
    "dynamic": {"rope_type": "dynamic", "factor": 4.0,
                "original_max_position_embeddings": 64},
    "longrope": {"rope_type": "longrope",
                 "short_factor": [1.0 + 0.1 * i for i in range(8)],
                 "long_factor": [2.0 + 0.5 * i for i in range(8)],
                 "original_max_position_embeddings": 64, "factor": 8.0},
}
# (positions form, a call no longer than the configured length, or longer)
DYNAMIC_FORMS = [("explicit", False), ("explicit", True),
                 ("row_offset", False), ("row_offset", True),
                 ("offset", True)]


@pytest.mark.parametrize("launch", list(LAUNCHES))
@pytest.mark.parametrize("form,long", DYNAMIC_FORMS,
                         ids=[f"{f}-{'long' if l else 'short'}"
                              for f, l in DYNAMIC_FORMS])
@pytest.mark.parametrize("scheme", list(DYNAMIC_SCALINGS))
def test_length_dependent_frequencies_on_emulated_gpu(scheme, form, long,
                                                      launch):
    """Dynamic NTK and LongRoPE without caches on the GPU path, against the
    float64 reference with seq_len = max position + 1 (both sides of the
    configured length)."""
    rng = np.random.default_rng(47)
    scaling = DYNAMIC_SCALINGS[scheme]
    attrs = rope_mlir.scaling_attributes(scaling, base=10000.0, head_dim=16)
    x = rng.standard_normal((3, 5, 2, 16)).astype(np.float32)
    top = 200 if long else 40  # beyond / within 64 positions
    config = rope_mlir.KernelConfig(
        dtype="f32", rank=4, head_dim=16, positions=form,
        freqs=attrs.freqs, magnitude=attrs.magnitude)
    kernel = emulated_kernel(config, launch)
    if form == "explicit":
        positions = rng.integers(0, top, (3, 5)).astype(np.int64)
        positions[1, 2] = top - 1  # the max, away from the last token
        got = kernel(x, positions)
        ref = reference.apply(x, positions, scaling=scaling,
                              magnitude=attrs.magnitude)
    elif form == "row_offset":
        offsets = np.array([3, top - 5, 0], np.int64)
        got = kernel(x, offset=offsets)
        ref = reference.apply(x, offset=offsets, scaling=scaling,
                              magnitude=attrs.magnitude)
    else:
        got = kernel(x, offset=np.int64(top - 5))
        ref = reference.apply(x, offset=top - 5, scaling=scaling,
                              magnitude=attrs.magnitude)
    assert np.any(np.asarray(got) != 0)
    check(_case(x, form, magnitude=attrs.magnitude), x, got, ref)
    # The scheme is live: the same call with the static base frequencies
    # differs beyond the configured length.
    if long:
        plain = (reference.apply(x, positions) if form == "explicit" else
                 reference.apply(x, offset=offsets if form == "row_offset"
                                 else top - 5))
        assert np.max(np.abs(plain - ref)) > 1e-3


# ---------------------------------------------------------------------------
# Fused neighbours (issue 18): QK-norm before the rotation and a quantized
# output after it, on the emulated launch, against a float64 reference
# written here (independent of rope_mlir.reference).
# ---------------------------------------------------------------------------

# The emulated launch to LLVM with fp8 rounding expanded first (arith.truncf
# to f8E4M3FN/f8E5M2 has no LLVM lowering; rope-to-nvvm runs the same pass).
TO_LLVM_F8 = TO_LLVM.replace("builtin.module(",
                             "builtin.module(rope-expand-f8, ", 1)
QUANT_TYPES = {"i8": np.int8, "f8e4m3fn": ml_dtypes.float8_e4m3fn,
               "f8e5m2": ml_dtypes.float8_e5m2}
QUANT_MAX = {"i8": 127.0, "f8e4m3fn": 448.0, "f8e5m2": 57344.0}


def _has_expand_f8() -> bool:
    try:
        _jit.lower("module {}", "builtin.module(rope-expand-f8)")
        return True
    except _jit.CompileError:
        return False


def _rms_norm64(x64, w64, eps):
    """RMSNorm over the last dim in float64: w * (x / sqrt(mean(x^2) + eps))."""
    mean = np.mean(x64 * x64, axis=-1, keepdims=True)
    return w64 * (x64 / np.sqrt(mean + eps))


def _rotate64(x64, positions, rotary_dim, layout, base=10000.0):
    """The rotation of [T, H, D] rows at positions [T] in float64 (theta_i =
    base^(-2i/P)); channels [P, D) pass through."""
    p, half = rotary_dim, rotary_dim // 2
    theta = base ** (-2.0 * np.arange(half) / p)
    angle = positions.astype(np.float64)[:, None, None] * theta
    c, s = np.cos(angle), np.sin(angle)
    y = x64.copy()
    if layout == "half":
        x1, x2 = x64[..., :half], x64[..., half:p]
        y[..., :half], y[..., half:p] = x1 * c - x2 * s, x2 * c + x1 * s
    else:
        x1, x2 = x64[..., 0:p:2], x64[..., 1:p:2]
        y[..., 0:p:2], y[..., 1:p:2] = x1 * c - x2 * s, x2 * c + x1 * s
    return y


def _magnitude(x64, rotary_dim, layout):
    """The bound of each output channel: its pair's magnitude (|x| for
    pass-through channels)."""
    p, half = rotary_dim, rotary_dim // 2
    m = np.abs(x64).copy()
    if layout == "half":
        r = np.hypot(x64[..., :half], x64[..., half:p])
        m[..., :half], m[..., half:p] = r, r
    else:
        r = np.hypot(x64[..., 0:p:2], x64[..., 1:p:2])
        m[..., 0:p:2], m[..., 1:p:2] = r, r
    return m + 1e-30


def _quantize64(v, quant):
    """The documented rule on float64 values v = y * s: i8 rounds half to
    even, clamps to [-128, 127]; fp8 clamps to +-max finite and rounds to
    nearest even (ml_dtypes, from float64: one rounding)."""
    if quant == "i8":
        return np.clip(np.round(v), -128.0, 127.0)
    limit = QUANT_MAX[quant]
    return np.clip(v, -limit, limit).astype(
        QUANT_TYPES[quant]).astype(np.float64)


def _neighbour_case(seed, dtype, layout, rotary_dim, head_dim=40, heads=3,
                    tokens=7):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((tokens, heads, head_dim)) *
         rng.uniform(0.2, 30.0, (tokens, heads, 1))).astype(DTYPES[dtype])
    positions = rng.integers(0, 5000, tokens).astype(np.int64)
    return rng, x, positions


@pytest.mark.parametrize("launch", list(BASE_LAUNCHES))
@pytest.mark.parametrize("inplace", [False, True], ids=["out", "inplace"])
@pytest.mark.parametrize("rotary_dim", [24, 40], ids=["partial", "full"])
@pytest.mark.parametrize("layout", ["half", "interleaved"])
@pytest.mark.parametrize("dtype", ["f32", "bf16"])
def test_qk_norm_on_emulated_gpu(dtype, layout, rotary_dim, inplace, launch):
    """QK-norm + rotation: every channel (pass-through ones too, also in
    place) is w * x * rsqrt(mean(x^2) + eps), rotated; partial rotary with
    12 pairs makes the tiny launch's 8 threads own 2 groups, the second
    only in 4 of them; in place, one thread owns a row."""
    rng, x, positions = _neighbour_case(
        rotary_dim + 2 * (layout == "half") + 4 * inplace +
        8 * (dtype == "bf16"), dtype, layout, rotary_dim)
    eps = 1e-5
    w = (rng.standard_normal(40) * 0.5 + 1.0).astype(DTYPES[dtype])
    config = rope_mlir.KernelConfig(
        dtype=dtype, rank=3, head_dim=40, rotary_dim=rotary_dim,
        layout=layout, positions="explicit", inplace=inplace, norm=True,
        norm_dtype=dtype, norm_epsilon=eps)
    kernel = emulated_kernel(config, launch)
    if inplace:
        target = x.copy()
        got = kernel(target, positions, out=target, norm_weight=w)
        assert got is target
    else:
        got = kernel(x, positions, norm_weight=w)
    normed = _rms_norm64(x.astype(np.float64), w.astype(np.float64), eps)
    ref = _rotate64(normed, positions, rotary_dim, layout)
    got64 = np.asarray(got).astype(np.float64)
    tol = 2.0 ** -18 * _magnitude(normed, rotary_dim, layout)
    if dtype == "bf16":  # plus one ulp of the bf16 output
        tol += 2.0 ** (np.floor(np.log2(np.abs(ref) + 1e-30)) - 7)
    err = np.abs(got64 - ref)
    assert np.all(err <= tol), (
        f"worst {np.max(err / tol):.3g} tolerances at "
        f"{np.unravel_index(np.argmax(err / tol), err.shape)}")
    # The norm is live: it changed the pass-through channels (and all).
    assert np.max(np.abs(got64[..., rotary_dim:] -
                         x[..., rotary_dim:].astype(np.float64)),
                  initial=1.0) > 1e-3


QUANT_CASES = [(quant, scale, norm) for quant in QUANT_TYPES
               for scale, norm in (("tensor", False), ("head", True))]


@pytest.mark.parametrize("launch", list(BASE_LAUNCHES))
@pytest.mark.parametrize("dtype,layout", [("f32", "half"),
                                          ("bf16", "interleaved")])
@pytest.mark.parametrize("quant,scale_form,norm", QUANT_CASES,
                         ids=["-".join(map(str, c)) for c in QUANT_CASES])
def test_quantized_output_on_emulated_gpu(quant, scale_form, norm, dtype,
                                          layout, launch):
    """Rotation (after QK-norm or not) quantized with a per-tensor or
    per-head scale: each stored value, rotated or passed through, lies
    between the quantizations of the float64 value minus and plus the f32
    computation's error (one grid step at most, and only next to a rounding
    boundary); at least 95% equal the float64 value's quantization exactly.
    Scales put 1.3x the largest value at the type's limit: some saturate."""
    if quant != "i8" and not _has_expand_f8():
        pytest.skip("rope-expand-f8 is not in this build (fp8 rounding has "
                    "no LLVM lowering without it)")
    rotary_dim = 24
    rng, x, positions = _neighbour_case(
        QUANT_CASES.index((quant, scale_form, norm)), dtype, layout,
        rotary_dim)
    eps = 1e-6
    w = (rng.standard_normal(40) * 0.5 + 1.0).astype(np.float32)
    x64 = x.astype(np.float64)
    normed = _rms_norm64(x64, w.astype(np.float64), eps) if norm else x64
    y = _rotate64(normed, positions, rotary_dim, layout)
    if scale_form == "tensor":
        scale = np.float32(1.3 * QUANT_MAX[quant] / np.max(np.abs(y)))
        s64 = np.float64(scale)
    else:
        top = np.max(np.abs(y), axis=(0, 2))
        scale = (1.3 * QUANT_MAX[quant] / top).astype(np.float32)
        s64 = scale.astype(np.float64)[None, :, None]
    config = rope_mlir.KernelConfig(
        dtype=dtype, rank=3, head_dim=40, rotary_dim=rotary_dim,
        layout=layout, positions="explicit", norm=norm, norm_dtype="f32",
        norm_epsilon=eps, quant=quant, quant_scale=scale_form)
    with mock.patch.object(sys.modules[__name__], "TO_LLVM",
                           TO_LLVM_F8 if quant != "i8" else TO_LLVM):
        kernel = emulated_kernel(config, launch)
    kwargs = {"norm_weight": w} if norm else {}
    got = kernel(x, positions, quant_scale=scale, **kwargs)
    assert got.dtype == QUANT_TYPES[quant] and got.shape == x.shape
    got64 = np.asarray(got).astype(np.float64)
    v = y * s64
    e = (2.0 ** -18 * _magnitude(normed, rotary_dim, layout) * s64 +
         np.abs(v) * 2.0 ** -22)
    low, high = _quantize64(v - e, quant), _quantize64(v + e, quant)
    outside = (got64 < low) | (got64 > high)
    assert not np.any(outside), (
        f"{np.count_nonzero(outside)} values outside, e.g. got "
        f"{got64[outside][:4]} for {v[outside][:4]}")
    exact = np.mean(got64 == _quantize64(v, quant))
    assert exact >= 0.95, exact
    # Saturation happened, and the scale is applied (the data is not all
    # rounded to zero).
    assert np.any(np.abs(got64) == np.max(np.abs(_quantize64(
        np.array([1e9, -1e9]), quant))))
    assert np.mean(got64 != 0) > 0.5


# ---------------------------------------------------------------------------
# KV-cache append (issue 18): rope.apply with slots(%s) and rope.cache_write
# on the emulated launch. The kernel writes the cache in place (the module
# below materializes the result into the cache argument itself). Rows at
# valid slots are checked against float64 (reference.apply for the rotation;
# bit for bit for a plain copy; the quantization rule for fp8/int8 caches);
# every other byte of the cache must be unchanged, also for padding (-1),
# out-of-range and huge slots.
# ---------------------------------------------------------------------------

_ELT = {"f32": "f32", "bf16": "bf16", "f16": "f16", "i8": "i8",
        "f8e4m3fn": "f8E4M3FN", "f8e5m2": "f8E5M2", "i32": "i32",
        "i64": "i64"}
# cache layout -> (token dims of the input, and of the cache)
CACHE_LAYOUTS = {"bshd": (0, 1), "bhsd": (0, 2), "paged": (0,)}


def _memref(shape, elt, dynamic=True, last_static=True):
    """Sizes dynamic (`dynamic`) but for the last one (`last_static`)."""
    dims = ["?" if dynamic and (i + 1 < len(shape) or not last_static)
            else str(n) for i, n in enumerate(shape)]
    return "memref<" + "".join(d + "x" for d in dims) + _ELT[elt] + ">"


def _cache_module(op, x, slots, cache, *, positions=None, norm=None,
                  scale=None, attrs="", slice_channels=None, cos_sin=None):
    """`@f(x, [positions], [norm weight], [scale], slots, cache)`: the op on
    tensors of the arguments, its result materialized into the cache
    argument. slice_channels=(lo, hi): the op writes channels [lo, hi) of
    the cache (tensor.extract_slice / insert_slice around it)."""
    args, body = [], []

    def arg(name, array, elt, writable=False, dynamic=True):
        # Rows of D channels keep D static (the op needs it); positions and
        # slots are dynamic throughout.
        m = _memref(array.shape, elt, dynamic, last_static=elt not in (
            "i32", "i64"))
        t = m.replace("memref", "tensor")
        args.append(f"%{name}m: {m}")
        body.append(f"%{name} = bufferization.to_tensor %{name}m restrict"
                    f"{' writable' if writable else ''} : {m} to {t}")
        return t

    xt = arg("x", x[0], x[1])
    operands = f"ins(%x : {xt})"
    if positions is not None:
        operands += f" positions(%p : {arg('p', positions, 'i64')})"
    if cos_sin is not None:
        ct_ = arg("cs", cos_sin[0], "f32")
        arg("sn", cos_sin[1], "f32")
        operands += f" cache(%cs, %sn : {ct_}, {ct_})"
    if norm is not None:
        operands += f" norm(%w : {arg('w', norm[0], norm[1], dynamic=False)})"
    # rope.apply: quant_scale, then slots; rope.cache_write the other way.
    quant = "" if scale is None else (
        f" quant_scale(%s : {arg('s', scale, 'f32', dynamic=False)})")
    slot_operand = f" slots(%sl : {arg('sl', slots[0], slots[1])})"
    operands += (quant + slot_operand if op == "apply" else
                 slot_operand + quant)
    ct = arg("c", cache[0], cache[1], writable=True)
    cm = ct.replace("tensor", "memref")
    dest, dt = "%c", ct
    if slice_channels is not None:
        lo, hi = slice_channels
        rank = cache[0].ndim
        sizes = [f"%d{i}" for i in range(rank - 1)] + [str(hi - lo)]
        for i in range(rank - 1):
            body.append(f"%i{i} = arith.constant {i} : index")
            body.append(f"%d{i} = tensor.dim %c, %i{i} : {ct}")
        dt = "tensor<" + "?x" * (rank - 1) + f"{hi - lo}x" + \
            _ELT[cache[1]] + ">"
        where = (f"[{', '.join(['0'] * (rank - 1) + [str(lo)])}] "
                 f"[{', '.join(sizes)}] [{', '.join(['1'] * rank)}]")
        body.append(f"%part = tensor.extract_slice %c{where} : {ct} to {dt}")
        dest = "%part"
    body.append(f"%r = rope.{op} {operands} outs({dest} : {dt}) {attrs} -> "
                f"{dt}")
    result = "%r"
    if slice_channels is not None:
        body.append(f"%whole = tensor.insert_slice %r into %c{where} : "
                    f"{dt} into {ct}")
        result = "%whole"
    body.append(f"bufferization.materialize_in_destination {result} in "
                f"restrict writable %cm : ({ct}, {cm}) -> ()")
    body.append("return")
    return ("func.func @f(" + ", ".join(args) +
            ") attributes {llvm.emit_c_interface} {\n  " +
            "\n  ".join(body) + "\n}\n")


def _run_cache_module(ir, launch, arrays, f8=False):
    """Lowers `ir` as rope-to-nvvm does up to the launch, emulates the launch
    on CPU loops, and calls @f on `arrays` (the last one, the cache, is
    written in place)."""
    gpu = _jit.lower(ir, TO_LAUNCH.format(options=LAUNCHES[launch]))
    emulated, launches = emulate_launch.emulate(gpu)
    assert launches == 1 and "gpu." not in emulated, gpu
    # In place: nothing allocated, nothing copied (but a copy of a slice onto
    # itself, insert_slice's of the slice the kernel wrote, which a later
    # canonicalization erases).
    copies = re.findall(r"memref\.copy (%\w+), (%\w+)", gpu)
    assert "rope.apply" not in gpu and "rope.cache_write" not in gpu and \
        "memref.alloc" not in gpu and all(a == b for a, b in copies), gpu
    module = _jit.compile_module(emulated, TO_LLVM_F8 if f8 else TO_LLVM)
    descs = [_jit.memref_descriptor(a) for a in arrays]
    function = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * len(descs))(
        module.lookup("f"))
    function(*[ctypes.addressof(d) for d in descs])
    return module


def _token_rows(array, token_dims):
    """[rows over the token dims (row-major), heads..., D]: a view when
    possible."""
    k = len(token_dims)
    moved = np.moveaxis(array, token_dims, range(k))
    return moved.reshape((-1,) + moved.shape[k:])


def _append_case(seed, layout, dtype, slot_dtype="i64", head_dim=40,
                 heads=2):
    """x, positions, slots and a cache filled with junk for `layout`: rows
    of B = 3 sequences (S = 4 new tokens each, at per-row offsets) or T = 7
    paged tokens on 4 pages of 8; some slots padding (-1), one past the end,
    one huge (beyond i32 for i64 slots)."""
    rng = np.random.default_rng(seed)
    np_dtype = DTYPES[dtype] if dtype in DTYPES else QUANT_TYPES[dtype]
    if layout == "paged":
        tokens, rows = 7, 32
        x_shape = (tokens, heads, head_dim)
        cache_shape = (rows, heads, head_dim)
        slots = rng.permutation(rows)[:tokens].astype(np.int64)
        positions = rng.integers(0, 5000, tokens).astype(np.int64)
    else:
        batch, seq, max_len = 3, 4, 16
        offsets = rng.integers(0, max_len - seq, batch)
        positions = (offsets[:, None] + np.arange(seq)).astype(np.int64)
        slots = (np.arange(batch)[:, None] * max_len + positions)
        if layout == "bshd":
            x_shape = (batch, seq, heads, head_dim)
            cache_shape = (batch, max_len, heads, head_dim)
        else:
            x_shape = (batch, heads, seq, head_dim)
            cache_shape = (batch, heads, max_len, head_dim)
    flat = slots.reshape(-1)
    flat[1] = -1                       # padding
    flat[3] = np.prod(cache_shape) // (heads * head_dim)  # one past the end
    flat[-1] = -(2 ** 31) if slot_dtype == "i32" else 2 ** 40 + flat[-1]
    slots = slots.astype(np.int32 if slot_dtype == "i32" else np.int64)
    x = (rng.standard_normal(x_shape) *
         rng.uniform(0.5, 4.0, x_shape[:-1] + (1,))).astype(
             DTYPES["f32" if dtype not in DTYPES else dtype])
    # Old cache contents (compared byte for byte where nothing is written).
    if np.dtype(np_dtype) == np.int8:
        cache = rng.integers(-128, 128, cache_shape).astype(np.int8)
    else:
        cache = (rng.standard_normal(cache_shape) * 3.0).astype(np_dtype)
    return rng, x, positions, slots, cache


def _check_untouched(before, after, slots, token_dims):
    """Every cache row but those at valid slots keeps its bytes; returns the
    (token index, cache row) pairs of the valid slots."""
    rows_before = _token_rows(before, token_dims)
    rows_after = _token_rows(after, token_dims)
    n = rows_before.shape[0]
    flat = slots.reshape(-1).astype(np.int64)
    valid = [(t, int(s)) for t, s in enumerate(flat) if 0 <= s < n]
    written = np.zeros(n, bool)
    written[[s for _, s in valid]] = True
    assert len(valid) < flat.size  # the case has invalid slots
    np.testing.assert_array_equal(
        rows_after[~written].view(np.uint8), rows_before[~written].view(
            np.uint8), err_msg="a row at no valid slot changed")
    return valid


def _as_c(array):
    return np.ascontiguousarray(array)


APPEND_CASES = [(layout, dtype, rope_layout, rotary)
                for layout in CACHE_LAYOUTS
                for dtype, rope_layout, rotary in (
                    ("f32", "half", 40), ("bf16", "interleaved", 24),
                    ("f16", "half", 24))]


@pytest.mark.parametrize("launch", list(BASE_LAUNCHES))
@pytest.mark.parametrize("layout,dtype,rope_layout,rotary", APPEND_CASES,
                         ids=["-".join(map(str, c)) for c in APPEND_CASES])
def test_rope_cache_append_on_emulated_gpu(layout, dtype, rope_layout, rotary,
                                           launch):
    """rope.apply with slots: each valid token's rotated rows (pass-through
    channels copied) land at its slot's cache coordinates, within
    test_differential.check's tolerance of reference.apply; no other byte of
    the cache changes (padding, past-the-end and huge slots included)."""
    token_dims = CACHE_LAYOUTS[layout]
    slot_dtype = "i32" if dtype == "f16" else "i64"
    rng, x, positions, slots, cache = _append_case(
        APPEND_CASES.index((layout, dtype, rope_layout, rotary)), layout,
        dtype, slot_dtype)
    attrs = (f"{{layout = #rope.layout<{rope_layout}>, rotary_dim = {rotary} "
             f": i64, token_dims = array<i64: "
             f"{', '.join(map(str, token_dims))}>}}")
    ir = _cache_module("apply", (x, dtype), (slots, slot_dtype),
                       (cache, dtype), positions=positions, attrs=attrs)
    before = cache.copy()
    _run_cache_module(ir, launch, [x, positions, slots, cache])
    valid = _check_untouched(before, cache, slots, token_dims)
    ref = _token_rows(reference.apply(x, positions, layout=rope_layout,
                                      rotary_dim=rotary,
                                      token_dims=token_dims), token_dims)
    x_rows = _token_rows(x, token_dims)
    got_rows = _token_rows(cache, token_dims)
    case = _case(x_rows, "explicit", layout=rope_layout, rotary_dim=rotary,
                 dtype=dtype)
    tokens = [t for t, _ in valid]
    check(case, x_rows[tokens], got_rows[[s for _, s in valid]], ref[tokens])


CACHE_WRITE_CASES = [(layout, dtype, quant, scale_form)
                     for layout in CACHE_LAYOUTS
                     for dtype, quant, scale_form in (
                         ("bf16", None, None), ("f32", "i8", "head"),
                         ("bf16", "f8e4m3fn", "tensor"),
                         ("f16", "f8e5m2", "head"))]


@pytest.mark.parametrize("launch", list(BASE_LAUNCHES))
@pytest.mark.parametrize("layout,dtype,quant,scale_form", CACHE_WRITE_CASES,
                         ids=["-".join(map(str, c))
                              for c in CACHE_WRITE_CASES])
def test_cache_write_on_emulated_gpu(layout, dtype, quant, scale_form,
                                     launch):
    """rope.cache_write: each valid token's rows copied bit for bit, or
    quantized: between the quantizations of x * s -/+ the f32 product's
    rounding (one grid step at most, next to a boundary), >= 95% exactly
    the float64 value's; no other byte of the cache changes."""
    if quant not in (None, "i8") and not _has_expand_f8():
        pytest.skip("rope-expand-f8 is not in this build")
    token_dims = CACHE_LAYOUTS[layout]
    storage = quant or dtype
    rng, x, _, slots, cache = _append_case(
        100 + CACHE_WRITE_CASES.index((layout, dtype, quant, scale_form)),
        layout, storage, head_dim=64, heads=3)
    x = x.astype(DTYPES[dtype])
    x64 = x.astype(np.float64)
    head_axis = 1 if layout == "bhsd" else x.ndim - 2
    scale = None
    if quant is not None:
        if scale_form == "tensor":
            scale = np.array(1.3 * QUANT_MAX[quant] / np.max(np.abs(x64)),
                             np.float32)
        else:
            top = np.max(np.abs(np.moveaxis(x64, head_axis, 0)).reshape(
                x.shape[head_axis], -1), axis=1)
            scale = (1.3 * QUANT_MAX[quant] / top).astype(np.float32)
    ir = _cache_module("cache_write", (x, dtype), (slots, "i64"),
                       (cache, storage), scale=scale,
                       attrs=f"{{token_dims = array<i64: "
                             f"{', '.join(map(str, token_dims))}>}}")
    before = cache.copy()
    arrays = [x] + ([scale] if scale is not None else []) + [slots, cache]
    _run_cache_module(ir, launch, arrays, f8=quant not in (None, "i8"))
    valid = _check_untouched(before, cache, slots, token_dims)
    tokens, rows = [t for t, _ in valid], [s for _, s in valid]
    got = _token_rows(cache, token_dims)[rows]
    want = _token_rows(x, token_dims)[tokens]
    if quant is None:
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
        return
    s64 = scale.astype(np.float64)
    if scale.ndim:
        shape = [1] * x.ndim
        shape[head_axis] = -1
        s64 = s64.reshape(shape)
    v = _token_rows(x64 * s64, token_dims)[tokens]
    e = np.abs(v) * 2.0 ** -23
    got64 = got.astype(np.float64)
    low, high = _quantize64(v - e, quant), _quantize64(v + e, quant)
    outside = (got64 < low) | (got64 > high)
    assert not np.any(outside), (got64[outside][:4], v[outside][:4])
    assert np.mean(got64 == _quantize64(v, quant)) >= 0.95
    assert np.any(np.abs(got64) == np.max(np.abs(_quantize64(
        np.array([1e9, -1e9]), quant))))  # some saturate


@pytest.mark.parametrize("launch", list(BASE_LAUNCHES))
def test_paged_norm_fp8_append_on_emulated_gpu(launch):
    """QK-norm + rotation + f8E4M3FN with a per-head scale, appended at
    slots (all three neighbours in the one kernel): the _quantized bracket of
    test_quantized_output_on_emulated_gpu at the valid slots' rows."""
    if not _has_expand_f8():
        pytest.skip("rope-expand-f8 is not in this build")
    rotary_dim, eps = 24, 1e-6
    rng, x, positions, slots, cache = _append_case(7, "paged", "f8e4m3fn",
                                                   heads=3)
    x = x.astype(ml_dtypes.bfloat16)
    w = (rng.standard_normal(40) * 0.5 + 1.0).astype(np.float32)
    normed = _rms_norm64(x.astype(np.float64), w.astype(np.float64), eps)
    y = _rotate64(normed, positions, rotary_dim, "half")
    scale = (1.3 * 448.0 / np.max(np.abs(y), axis=(0, 2))).astype(np.float32)
    ir = _cache_module(
        "apply", (x, "bf16"), (slots, "i64"), (cache, "f8e4m3fn"),
        positions=positions, norm=(w, "f32"), scale=scale,
        attrs=f"{{rotary_dim = {rotary_dim} : i64, norm_epsilon = {eps:.1e}}}")
    before = cache.copy()
    _run_cache_module(ir, launch, [x, positions, w, scale, slots, cache],
                      f8=True)
    valid = _check_untouched(before, cache, slots, (0,))
    tokens, rows = [t for t, _ in valid], [s for _, s in valid]
    s64 = scale.astype(np.float64)[None, :, None]
    v = (y * s64)[tokens]
    e = (2.0 ** -18 * _magnitude(normed, rotary_dim, "half") * s64)[tokens] \
        + np.abs(v) * 2.0 ** -22
    got64 = cache[rows].astype(np.float64)
    low, high = _quantize64(v - e, "f8e4m3fn"), _quantize64(v + e, "f8e4m3fn")
    assert not np.any((got64 < low) | (got64 > high))
    assert np.mean(got64 == _quantize64(v, "f8e4m3fn")) >= 0.95


@pytest.mark.parametrize("launch", list(BASE_LAUNCHES))
def test_mla_slice_append_on_emulated_gpu(launch):
    """MLA's concatenated cache [slots, 1, 576]: k_pe rotated (interleaved,
    64 channels) into channels [512, 576) through a strided buffer of the
    slice (no copy of the cache: _run_cache_module asserts no alloc/copy);
    channels [0, 512) and every other row keep their bytes."""
    rng = np.random.default_rng(11)
    rows, tokens = 24, 5
    k_pe = rng.standard_normal((tokens, 1, 64)).astype(ml_dtypes.bfloat16)
    positions = rng.integers(0, 4096, tokens).astype(np.int64)
    slots = rng.permutation(rows)[:tokens].astype(np.int64)
    slots[2] = -1
    cache = rng.standard_normal((rows, 1, 576)).astype(ml_dtypes.bfloat16)
    ir = _cache_module("apply", (k_pe, "bf16"), (slots, "i64"),
                       (cache, "bf16"), positions=positions,
                       attrs="{layout = #rope.layout<interleaved>}",
                       slice_channels=(512, 576))
    before = cache.copy()
    _run_cache_module(ir, launch, [k_pe, positions, slots, cache])
    valid = _check_untouched(before, cache, slots, (0,))
    tokens_, rows_ = [t for t, _ in valid], [s for _, s in valid]
    np.testing.assert_array_equal(cache[:, :, :512].view(np.uint8),
                                  before[:, :, :512].view(np.uint8))
    ref = reference.apply(k_pe, positions, layout="interleaved")
    case = _case(k_pe, "explicit", layout="interleaved", dtype="bf16")
    check(case, k_pe[tokens_], cache[rows_][:, :, 512:], ref[tokens_])


@pytest.mark.parametrize("launch", list(BASE_LAUNCHES))
@pytest.mark.parametrize("quant", [None, "f8e4m3fn"])
def test_mla_c_kv_slice_write_on_emulated_gpu(quant, launch):
    """MLA's compressed kv c_kv [T, 1, 512] written by rope.cache_write into
    channels [0, 512) of the concatenated cache (a strided slice, no copy),
    plain (bit for bit) or fp8 with a per-tensor scale (the quantization
    rule); channels [512, 576) and every other row keep their bytes."""
    if quant is not None and not _has_expand_f8():
        pytest.skip("rope-expand-f8 is not in this build")
    rng = np.random.default_rng(13)
    rows, tokens = 24, 6
    c_kv = rng.standard_normal((tokens, 1, 512)).astype(ml_dtypes.bfloat16)
    slots = rng.permutation(rows)[:tokens].astype(np.int64)
    slots[0], slots[4] = -1, rows
    storage = quant or "bf16"
    cache = (rng.standard_normal((rows, 1, 576)) * 3.0).astype(
        QUANT_TYPES[quant] if quant else ml_dtypes.bfloat16)
    scale = None if quant is None else np.array(
        1.3 * 448.0 / np.max(np.abs(c_kv.astype(np.float64))), np.float32)
    ir = _cache_module("cache_write", (c_kv, "bf16"), (slots, "i64"),
                       (cache, storage), scale=scale,
                       slice_channels=(0, 512))
    before = cache.copy()
    arrays = [c_kv] + ([scale] if scale is not None else []) + \
        [slots, cache]
    _run_cache_module(ir, launch, arrays, f8=quant is not None)
    valid = _check_untouched(before, cache, slots, (0,))
    tokens_, rows_ = [t for t, _ in valid], [s for _, s in valid]
    np.testing.assert_array_equal(cache[:, :, 512:].view(np.uint8),
                                  before[:, :, 512:].view(np.uint8))
    got = cache[rows_][:, :, :512]
    if quant is None:
        np.testing.assert_array_equal(got.view(np.uint8),
                                      c_kv[tokens_].view(np.uint8))
        return
    v = c_kv[tokens_].astype(np.float64) * np.float64(scale)
    e = np.abs(v) * 2.0 ** -23
    got64 = got.astype(np.float64)
    assert not np.any((got64 < _quantize64(v - e, quant)) |
                      (got64 > _quantize64(v + e, quant)))
    assert np.mean(got64 == _quantize64(v, quant)) >= 0.95


@pytest.mark.parametrize("launch", list(BASE_LAUNCHES))
@pytest.mark.parametrize("form", ["implicit", "gathered"])
def test_append_positions_at_token_index_on_emulated_gpu(form, launch):
    """Paged append whose slots are unrelated to the token order: with no
    positions the position is the token's index in the input (not its
    slot); with a gathered cos/sin cache the rows are gathered at the
    token's position. Against reference.apply (f32, check's tolerance)."""
    rng, x, positions, slots, cache = _append_case(21, "paged", "f32",
                                                   head_dim=32, heads=3)
    kwargs, args = {}, [x]
    if form == "gathered":
        table = np.arange(64, dtype=np.float64)[:, None] * \
            10000.0 ** (-np.arange(16) / 16.0)
        cos, sin = np.cos(table).astype(np.float32), \
            np.sin(table).astype(np.float32)
        positions = rng.integers(0, 64, x.shape[0]).astype(np.int64)
        kwargs = {"positions": positions, "cos_sin": (cos, sin)}
        args += [positions, cos, sin]
    ir = _cache_module("apply", (x, "f32"), (slots, "i64"), (cache, "f32"),
                       **kwargs)
    before = cache.copy()
    _run_cache_module(ir, launch, args + [slots, cache])
    valid = _check_untouched(before, cache, slots, (0,))
    tokens, rows = [t for t, _ in valid], [s for _, s in valid]
    assert any(t != s for t, s in valid)
    ref = (reference.apply(x, positions, cos_cache=cos, sin_cache=sin)
           if form == "gathered" else reference.apply(x))
    case = _case(x, "explicit")
    check(case, x[tokens], cache[rows], ref[tokens])
    if form == "implicit":
        # The test tells the two apart: the slots as positions would not
        # pass the check.
        wrong = reference.apply(x, np.asarray(slots).clip(0, 2 ** 20))
        assert np.max(np.abs(wrong[tokens] - ref[tokens])) > 1e-2


_PAGED_MLA_VIEW = """
func.func @f(%km: memref<?x1x64xbf16>, %pm: memref<?xi64>,
             %sm: memref<?xi64>, %cm: memref<?x16x576xbf16>)
    attributes {llvm.emit_c_interface} {
  %k = bufferization.to_tensor %km restrict : memref<?x1x64xbf16> to tensor<?x1x64xbf16>
  %p = bufferization.to_tensor %pm restrict : memref<?xi64> to tensor<?xi64>
  %s = bufferization.to_tensor %sm restrict : memref<?xi64> to tensor<?xi64>
  %pages = bufferization.to_tensor %cm restrict writable : memref<?x16x576xbf16> to tensor<?x16x576xbf16>
  %rows = tensor.collapse_shape %pages [[0, 1], [2]] : tensor<?x16x576xbf16> into tensor<?x576xbf16>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %rows, %c0 : tensor<?x576xbf16>
  %np = tensor.dim %pages, %c0 : tensor<?x16x576xbf16>
  %pe = tensor.extract_slice %rows[0, 512] [%n, 64] [1, 1] : tensor<?x576xbf16> to tensor<?x64xbf16>
  %pe3 = tensor.expand_shape %pe [[0], [1, 2]] output_shape [%n, 1, 64] : tensor<?x64xbf16> into tensor<?x1x64xbf16>
  %r = rope.apply ins(%k : tensor<?x1x64xbf16>) positions(%p : tensor<?xi64>) slots(%s : tensor<?xi64>) outs(%pe3 : tensor<?x1x64xbf16>) {layout = #rope.layout<interleaved>} -> tensor<?x1x64xbf16>
  %r2 = tensor.collapse_shape %r [[0], [1, 2]] : tensor<?x1x64xbf16> into tensor<?x64xbf16>
  %rows2 = tensor.insert_slice %r2 into %rows[0, 512] [%n, 64] [1, 1] : tensor<?x64xbf16> into tensor<?x576xbf16>
  %out = tensor.expand_shape %rows2 [[0, 1], [2]] output_shape [%np, 16, 576] : tensor<?x576xbf16> into tensor<?x16x576xbf16>
  bufferization.materialize_in_destination %out in restrict writable %cm : (tensor<?x16x576xbf16>, memref<?x16x576xbf16>) -> ()
  return
}
"""


@pytest.mark.parametrize("launch", list(BASE_LAUNCHES))
def test_paged_mla_view_on_emulated_gpu(launch):
    """Paged MLA cache [pages, 16, 576]: collapsed to rows, the rope
    channels sliced and viewed [N, 1, 64]: the kernel writes the pages in
    place (no alloc, no copy) at slot = page * 16 + offset; the c_kv
    channels and every other row keep their bytes."""
    rng = np.random.default_rng(17)
    pages, tokens = 3, 6
    k_pe = rng.standard_normal((tokens, 1, 64)).astype(ml_dtypes.bfloat16)
    positions = rng.integers(0, 4096, tokens).astype(np.int64)
    slots = rng.permutation(pages * 16)[:tokens].astype(np.int64)
    slots[1] = -1
    cache = rng.standard_normal((pages, 16, 576)).astype(ml_dtypes.bfloat16)
    before = cache.copy()
    _run_cache_module(_PAGED_MLA_VIEW, launch,
                      [k_pe, positions, slots, cache])
    rows, rows_before = cache.reshape(-1, 1, 576), before.reshape(-1, 1, 576)
    valid = _check_untouched(rows_before, rows, slots, (0,))
    np.testing.assert_array_equal(rows[:, :, :512].view(np.uint8),
                                  rows_before[:, :, :512].view(np.uint8))
    tokens_, rows_ = [t for t, _ in valid], [s for _, s in valid]
    ref = reference.apply(k_pe, positions, layout="interleaved")
    case = _case(k_pe, "explicit", layout="interleaved", dtype="bf16")
    check(case, k_pe[tokens_], rows[rows_][:, :, 512:], ref[tokens_])
