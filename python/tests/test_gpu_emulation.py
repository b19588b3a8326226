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
"""

from __future__ import annotations

import importlib.util
import pathlib
from unittest import mock

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
