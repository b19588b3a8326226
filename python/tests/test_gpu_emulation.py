# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""convert-rope-to-gpu's kernels, executed on the CPU against the float64
reference at the ROPE.md §5 contract.

There is no GPU here, so the launched kernel is emulated: the module is
lowered as rope-to-nvvm lowers it up to the launch (convert-rope-to-gpu,
rope-approximate-trig, bufferization, linalg to loops), every gpu.launch is
rewritten into nested scf.parallel loops over blocks and threads
(test/GPU/Inputs/emulate_launch.py; valid because the kernel has no
barriers or shared memory) and the result is JIT-compiled for the CPU. This
runs the kernel's indexing, grid-stride token loop, lane layout, position
conversion and angle arithmetic, not NVPTX code generation.

Cases: test_differential's random configurations (every dtype, both pair
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
"""

from __future__ import annotations

import importlib.util
import pathlib
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

ROOT = pathlib.Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location(
    "emulate_launch", ROOT / "test" / "GPU" / "Inputs" / "emulate_launch.py")
emulate_launch = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(emulate_launch)

LAUNCHES = {"default": "",
            "tiny": "vectorize=false block-size=8 max-blocks=3"}

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


@pytest.mark.parametrize("launch", list(LAUNCHES))
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


@pytest.mark.parametrize("launch", list(LAUNCHES))
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


@pytest.mark.parametrize("launch", list(LAUNCHES))
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
