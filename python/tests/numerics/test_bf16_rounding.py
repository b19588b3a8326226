# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""KernelConfig.bf16_rounding: "exact" (the default: round to nearest even as
integer arithmetic, bf16 subnormal results kept, SEMANTICS.md) against "native"
(rope-to-llvm-cpu's bf16-truncation=target where the host has AVX512-BF16:
one vcvtneps2bf16 per vector, which flushes results below 2^-126 to zero).

On random inputs in the normal range both give the float64 rotation rounded
once to bf16, bit for bit the same. The one place they differ is a result
below 2^-126: "exact" keeps it, "native" on an AVX512-BF16 host returns +-0
(on any other host "native" is "exact"'s arithmetic and keeps it too); both
outcomes are asserted for the host the test runs on.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from rope_mlir import _jit, reference
from rope_mlir.kernel import Kernel, KernelConfig

BF16 = ml_dtypes.bfloat16
HOST_HAS_BF16 = _jit.host_has_feature("avx512bf16")


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.uint16)


def test_truncation_option_follows_the_host():
    assert _jit.bf16_truncation("exact") == "bits"
    assert _jit.bf16_truncation() == "bits"
    assert _jit.bf16_truncation("native") == (
        "target" if HOST_HAS_BF16 else "bits")
    with pytest.raises(ValueError, match="bf16_rounding must be"):
        _jit.bf16_truncation("fast")


def test_host_feature_query():
    assert _jit.host_has_feature("no-such-feature") is False
    # Every x86-64 host the JIT runs on has SSE2; other targets do not name it.
    import platform
    if platform.machine() in ("x86_64", "AMD64"):
        assert _jit.host_has_feature("sse2") is True
    with pytest.raises(TypeError, match="LLVM target feature"):
        _jit.host_has_feature(None)
    with pytest.raises(TypeError, match="LLVM target feature"):
        _jit.host_has_feature("avx\0")


@pytest.mark.parametrize("value", ["fast", "", None, 1])
def test_bad_rounding_is_refused(value):
    with pytest.raises(ValueError, match="bf16_rounding must be 'exact' or "
                                         "'native'"):
        KernelConfig(dtype="bf16", rank=3, head_dim=64, bf16_rounding=value)


@pytest.mark.parametrize("layout", ["half", "interleaved"])
@pytest.mark.parametrize("shape,rotary_dim", [
    ((7, 3, 64), None), ((33, 5, 128), None), ((2, 9, 4, 128), 64),
    ((40, 2, 256), None)])
def test_native_equals_exact_in_the_normal_range(layout, shape, rotary_dim):
    rng = np.random.default_rng(hash((layout, shape)) % 2**32)
    x = rng.standard_normal(shape).astype(BF16)
    token_shape = shape[:-2]
    positions = rng.integers(0, 1 << 16, size=token_shape, dtype=np.int64)
    out = {}
    for rounding in ("exact", "native"):
        kernel = Kernel(KernelConfig(
            dtype="bf16", rank=len(shape), head_dim=shape[-1], layout=layout,
            rotary_dim=rotary_dim, positions="explicit", base=500000.0,
            bf16_rounding=rounding))
        out[rounding] = kernel(x, positions)
    np.testing.assert_array_equal(_bits(out["native"]), _bits(out["exact"]))
    want = reference.apply(x, positions, layout=layout, rotary_dim=rotary_dim,
                           base=500000.0)
    got = out["native"].astype(np.float64)
    # One bf16 rounding of a result within SEMANTICS.md's f32 error.
    scale = np.maximum(np.abs(want), np.finfo(np.float32).tiny)
    assert np.all(np.abs(got - want) <= 2.0 ** -8 * scale + 1e-6 *
                  np.abs(x.astype(np.float64)).max())


@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_subnormal_results(layout):
    # At position 0 the rotation is the identity (cos 1, sin 0), so y = x:
    # bf16 subnormal inputs come back unchanged from "exact"; "native" on an
    # AVX512-BF16 host flushes them to zero of the same sign.
    tiny = np.array([2.0 ** -127, -2.0 ** -130, 2.0 ** -133, 3 * 2.0 ** -128],
                    dtype=np.float32).astype(BF16)
    x = np.tile(tiny, (2, 1, 16))  # [tokens 2, heads 1, D 64]
    x[1] = np.float32(1.5)         # a normal row for contrast
    positions = np.zeros(2, dtype=np.int64)
    results = {}
    for rounding in ("exact", "native"):
        kernel = Kernel(KernelConfig(
            dtype="bf16", rank=3, head_dim=64, layout=layout,
            positions="explicit", bf16_rounding=rounding))
        results[rounding] = kernel(x, positions)
    np.testing.assert_array_equal(_bits(results["exact"]), _bits(x))
    native = results["native"]
    np.testing.assert_array_equal(_bits(native[1]), _bits(x[1]))
    if HOST_HAS_BF16:
        flushed = _bits(x[0]) & 0x8000  # the sign bit alone: +-0
        np.testing.assert_array_equal(_bits(native[0]), flushed)
    else:
        np.testing.assert_array_equal(_bits(native[0]), _bits(x[0]))
