# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Argument validation of every public entry point (issue 12).

Compiled kernels trust the sizes, strides and indices they are given: a
buffer smaller than what a kernel loops over is an out-of-bounds access in
this process. So every argument is checked in Python first, and a mismatch
raises TypeError (a type), ValueError (a shape, a value, an argument the
configuration does not take) or IndexError (a position outside a cos/sin
cache), naming the argument, what it got and what was expected.

Organised by entry point: memref descriptors, KernelConfig / Kernel,
apply, scaling_attributes, from_hf_config, the attention kernels and the
ONNX runner. Calls that used to crash the process run in a subprocess, so
that a regression fails one test instead of killing the run.
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import rope_mlir
from rope_mlir import _jit, reference
from rope_mlir.attention import (AttentionConfig, AttentionKernel,
                                 ScoresConfig, ScoresKernel)

F32 = np.float32
PACKAGE_DIR = pathlib.Path(rope_mlir.__file__).resolve().parents[1]


def _random(shape, dtype=F32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _names(*parts):
    """A regex matching all of `parts` (literal text) in this order."""
    return ".*".join(re.escape(str(p)) for p in parts)


def _id(value):
    """Test ids without the spaces and regex escapes of the messages."""
    if isinstance(value, str):
        return re.sub(r"[^A-Za-z0-9.]+", "_", value).strip("_")[:48] or "_"
    return None


def _in_subprocess(code: str) -> str:
    """Runs `code` (with numpy as np and rope_mlir imported) in a fresh
    interpreter on this package, returning its stdout; a crash (a signal,
    a non-zero exit) fails the test with its output."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(PACKAGE_DIR)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH")
                              else []))
    script = "import numpy as np\nimport rope_mlir\n" + textwrap.dedent(code)
    result = subprocess.run([sys.executable, "-c", script], env=env,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, (
        f"exit status {result.returncode}\n{result.stdout}\n{result.stderr}")
    return result.stdout


# ---------------------------------------------------------------------------
# _jit.memref_descriptor
# ---------------------------------------------------------------------------

def _unaligned(shape, dtype=F32):
    """A C-contiguous array one byte off its dtype's alignment."""
    dtype = np.dtype(dtype)
    count = int(np.prod(shape))
    raw = np.zeros(count * dtype.itemsize + dtype.itemsize, np.uint8)
    start = 1 if raw.ctypes.data % dtype.itemsize == 0 else 0
    array = raw[start:start + count * dtype.itemsize].view(dtype).reshape(
        shape)
    assert array.ctypes.data % dtype.itemsize
    return array


class TestMemrefDescriptor:
    def test_not_c_contiguous(self):
        with pytest.raises(ValueError, match="C-contiguous.*strides"):
            _jit.memref_descriptor(np.zeros((4, 6), F32)[:, ::2])

    def test_fortran_order(self):
        with pytest.raises(ValueError, match="C-contiguous"):
            _jit.memref_descriptor(np.zeros((4, 6), F32, order="F"))

    @pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
    def test_unaligned(self, dtype):
        with pytest.raises(ValueError, match="aligned to its itemsize"):
            _jit.memref_descriptor(_unaligned((3, 4), dtype))

    def test_not_an_array(self):
        with pytest.raises(TypeError, match="numpy arrays, got list"):
            _jit.memref_descriptor([1.0, 2.0])

    def test_valid(self):
        array = np.zeros((2, 3), F32)
        desc = _jit.memref_descriptor(array)
        assert desc.aligned == array.ctypes.data
        assert list(desc.sizes) == [2, 3] and list(desc.strides) == [3, 1]


# ---------------------------------------------------------------------------
# KernelConfig: what a kernel is compiled from
# ---------------------------------------------------------------------------

BASE = dict(dtype="f32", rank=3, head_dim=8)


@pytest.mark.parametrize("fields,error,message", [
    (dict(rank=1), ValueError, "rank must be >= 2"),
    (dict(rank=3.0), TypeError, "rank must be an integer"),
    (dict(head_dim=0), ValueError, "head_dim must be positive"),
    (dict(rotary_dim=3), ValueError, "rotary_dim must be even"),
    (dict(rotary_dim=0), ValueError, "rotary_dim must be even, positive"),
    (dict(rotary_dim=10), ValueError, "at most the head dim (8), got 10"),
    (dict(rotary_dim=4.0), TypeError, "rotary_dim must be an integer"),
    (dict(layout="rotate_half"), ValueError, "layout must be"),
    (dict(base=True), TypeError, "base must be a real number"),
    (dict(base=float("nan")), ValueError, "base must be finite"),
    (dict(magnitude="2"), TypeError, "magnitude must be a real number"),
    (dict(inverse="false"), TypeError, "inverse must be a bool"),
    (dict(inplace=1), TypeError, "inplace must be a bool"),
    (dict(token_dims=(2,)), ValueError, "out of range [0, 2)"),
    (dict(token_dims=(-1,)), ValueError, "negative"),
    (dict(token_dims=(0, 0)), ValueError, "strictly increasing"),
    (dict(token_dims=(1, 0)), ValueError, "strictly increasing"),
    (dict(token_dims=()), ValueError, "must not be empty"),
    (dict(token_dims=(0.5,)), TypeError, "token_dims entry must be an int"),
    (dict(threads=True), ValueError, "threads must be an int"),
    (dict(threads=-1), ValueError, "threads must be an int >= 0"),
    (dict(positions="explicit", positions_dtype="i16"), TypeError,
     "positions_dtype"),
    (dict(cache="gathered", positions="none"), ValueError,
     "gathered cos/sin cache needs positions"),
    (dict(cache="pregathered", positions="explicit"), ValueError,
     "pre-gathered cos/sin cache takes no positions"),
    (dict(cache="pregathered", positions="offset"), ValueError,
     "pre-gathered cos/sin cache takes no positions"),
    (dict(rank=2, positions="row_offset"), ValueError, "two token dims"),
    (dict(static_shape=(4, 2, 6)), ValueError, "head dim 8"),
    (dict(static_shape=(4, 8)), ValueError, "rank 3"),
    (dict(static_positions_shape=(4.5,)), TypeError, "must be an integer"),
    (dict(lowering="fast"), ValueError, "lowering"),
], ids=_id)
def test_kernel_config_rejects(fields, error, message):
    with pytest.raises(error, match=re.escape(message)):
        rope_mlir.KernelConfig(**dict(BASE, **fields))


def test_kernel_config_normalizes_sequences():
    c = rope_mlir.KernelConfig(**dict(BASE, token_dims=[0],
                                      static_shape=[4, 2, 8]))
    assert c.token_dims == (0,) and c.static_shape == (4, 2, 8)
    hash(c)  # usable as the kernel cache's key


def test_pregathered_config_with_positions_is_refused():
    """With positions, the verifier reads a rank-2 cache as gathered
    [M, P/2], but the call checked it as pre-gathered [T, P/2] and skipped
    the positions' range check (positions past the rows gave NaN). The
    configuration is refused before compiling."""
    with pytest.raises(ValueError, match="pre-gathered"):
        rope_mlir.compile(dtype="f32", rank=2, head_dim=8,
                          positions="explicit", cache="pregathered")


# ---------------------------------------------------------------------------
# Kernel.__call__
# ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def explicit_kernel():
    return rope_mlir.compile(dtype="f32", rank=3, head_dim=8,
                             positions="explicit")


@pytest.fixture(scope="module")
def offset_kernel():
    return rope_mlir.compile(dtype="f32", rank=3, head_dim=8)


@pytest.fixture(scope="module")
def row_offset_kernel():
    return rope_mlir.compile(dtype="f32", rank=4, head_dim=8,
                             positions="row_offset")


@pytest.fixture(scope="module")
def gathered_kernel():
    return rope_mlir.compile(dtype="f32", rank=3, head_dim=8,
                             positions="explicit", cache="gathered")


@pytest.fixture(scope="module")
def static_kernel():
    return rope_mlir.compile(dtype="f32", rank=3, head_dim=8,
                             static_shape=(4, 2, 8))


@pytest.fixture(scope="module")
def inplace_kernel():
    return rope_mlir.compile(dtype="f32", rank=3, head_dim=8,
                             positions="explicit", inplace=True)


class TestStaticShapes:
    """Issue 12, case 1: a static-shape kernel loops over its static sizes
    whatever the arrays are."""

    def test_static_x_segfault_case(self):
        # The reported case: a (1, 8, 64) array into a kernel for
        # (4096, 8, 64) read and wrote 4095 rows past both buffers.
        out = _in_subprocess("""
            k = rope_mlir.compile(dtype="f32", rank=3, head_dim=64,
                                  static_shape=(4096, 8, 64))
            x = np.ones((1, 8, 64), np.float32)
            try:
                k(x)
            except ValueError as error:
                print("ValueError:", error)
        """)
        assert re.search(_names("x has shape (1, 8, 64)",
                                "static shape (4096, 8, 64)"), out), out

    def test_static_x(self, static_kernel):
        with pytest.raises(ValueError, match=_names(
                "x has shape (3, 2, 8)", "static shape (4, 2, 8)")):
            static_kernel(np.zeros((3, 2, 8), F32))
        got = static_kernel(_random((4, 2, 8)), offset=3)
        np.testing.assert_allclose(
            got, reference.apply(_random((4, 2, 8)), offset=3), atol=1e-5)

    def test_static_out(self, static_kernel):
        with pytest.raises(ValueError, match=_names("out has shape (3, 2, 8)",
                                                    "expected (4, 2, 8)")):
            static_kernel(np.zeros((4, 2, 8), F32),
                          out=np.zeros((3, 2, 8), F32))

    def test_static_positions(self):
        k = rope_mlir.compile(dtype="f32", rank=3, head_dim=8,
                              positions="explicit",
                              static_positions_shape=(4,))
        x = np.zeros((6, 2, 8), F32)
        with pytest.raises(ValueError, match=_names(
                "positions have shape (6,)", "static shape (4,)")):
            k(x, np.arange(6))
        k(np.zeros((4, 2, 8), F32), np.arange(4))

    def test_static_offset(self):
        k = rope_mlir.compile(dtype="f32", rank=4, head_dim=8,
                              positions="row_offset", static_offset_shape=(2,))
        with pytest.raises(ValueError, match=_names(
                "offset has shape (3,)", "static shape (2,)")):
            k(np.zeros((3, 5, 2, 8), F32), offset=np.zeros(3, np.int64))

    def test_static_cache(self):
        k = rope_mlir.compile(dtype="f32", rank=3, head_dim=8,
                              positions="explicit", cache="gathered",
                              static_cache_shape=(16, 4))
        cos = np.ones((8, 4), F32)
        with pytest.raises(ValueError, match=_names(
                "have shape (8, 4)", "static shape (16, 4)")):
            k(np.zeros((3, 2, 8), F32), np.arange(3), cos_cache=cos,
              sin_cache=cos)


class TestKernelArguments:
    def test_x(self, explicit_kernel):
        pos = np.arange(3)
        with pytest.raises(TypeError, match=_names("x has dtype float64",
                                                   "float32")):
            explicit_kernel(np.zeros((3, 2, 8)), pos)
        with pytest.raises(ValueError, match=_names("x has shape (3, 2, 6)",
                                                    "head dim 8")):
            explicit_kernel(np.zeros((3, 2, 6), F32), pos)
        with pytest.raises(ValueError, match=_names("x has shape (3, 8)",
                                                    "rank 3")):
            explicit_kernel(np.zeros((3, 8), F32), pos)

    def test_x_non_contiguous_and_unaligned_are_copied(self, explicit_kernel):
        x = _random((3, 4, 8))
        pos = np.array([1, 5, 9])
        expected = explicit_kernel(x, pos)
        np.testing.assert_array_equal(explicit_kernel(x[:, ::2], pos),
                                      expected[:, ::2])
        odd = _unaligned(x.shape)
        odd[...] = x
        np.testing.assert_array_equal(explicit_kernel(odd, pos), expected)

    def test_positions_missing(self, explicit_kernel):
        with pytest.raises(ValueError, match="explicit positions: pass "
                                             "positions"):
            explicit_kernel(np.zeros((3, 2, 8), F32))

    @pytest.mark.parametrize("positions,message", [
        (np.zeros(4, np.int64), _names("positions has shape (4,)",
                                       "expected (3,)", "x's dim 0")),
        (np.zeros((3, 1), np.int64), _names("positions has shape (3, 1)",
                                            "expected (3,)")),
    ], ids=_id)
    def test_positions_shape(self, explicit_kernel, positions, message):
        with pytest.raises(ValueError, match=message):
            explicit_kernel(np.zeros((3, 2, 8), F32), positions)

    @pytest.mark.parametrize("positions,dtype", [
        (np.array([0.0, 1.0, 2.0]), "float64"),
        (np.array([0.5, 1.0, 2.0], np.float32), "float32"),
        (np.array([True, False, True]), "bool"),
        (np.array([0, 1, 2], object), "object"),
    ], ids=_id)
    def test_positions_must_be_integers(self, explicit_kernel, positions,
                                        dtype):
        with pytest.raises(TypeError, match=_names(
                "positions must be an integer array", dtype)):
            explicit_kernel(np.zeros((3, 2, 8), F32), positions)

    def test_positions_out_of_i32_range(self):
        """Issue 12, case 6: 2**40 became 0 for an i32 kernel."""
        k = rope_mlir.compile(dtype="f32", rank=3, head_dim=8,
                              positions="explicit", positions_dtype="i32")
        x = _random((3, 2, 8))
        with pytest.raises(ValueError, match=_names(
                "positions span [0, 1099511627776]", "int32",
                "[-2147483648, 2147483647]")):
            k(x, np.array([0, 1, 2 ** 40], np.int64))
        # Values that fit convert exactly.
        np.testing.assert_array_equal(
            k(x, np.array([-7, 1, 2 ** 31 - 1], np.int64)),
            k(x, np.array([-7, 1, 2 ** 31 - 1], np.int32)))

    def test_positions_uint64_out_of_i64_range(self, explicit_kernel):
        with pytest.raises(ValueError, match=_names(
                "positions span", "9223372036854775808", "int64")):
            explicit_kernel(np.zeros((3, 2, 8), F32),
                            np.array([0, 1, 2 ** 63], np.uint64))

    def test_negative_positions_are_valid(self, explicit_kernel):
        x = _random((3, 2, 8))
        pos = np.array([-5, 0, -(2 ** 20)])
        np.testing.assert_allclose(explicit_kernel(x, pos),
                                   reference.apply(x, pos), atol=1e-5)

    def test_explicit_positions_and_offset(self, explicit_kernel):
        with pytest.raises(ValueError, match=_names("positions", "offset=5",
                                                    "both")):
            explicit_kernel(np.zeros((3, 2, 8), F32), np.arange(3), offset=5)

    def test_positions_to_an_offset_kernel(self, offset_kernel):
        with pytest.raises(ValueError, match="positions must be None"):
            offset_kernel(np.zeros((3, 2, 8), F32), np.arange(3))

    @pytest.mark.parametrize("offset,error,message", [
        (5.0, TypeError, "offset must be an integer, got 5.0"),
        (5.5, TypeError, "offset must be an integer, got 5.5"),
        (True, TypeError, "offset must be an integer, got True"),
        ("5", TypeError, "offset must be an integer"),
        (np.array(2.0), TypeError, "offset must be an integer"),
        (2 ** 70, ValueError, "does not fit int64"),
        (np.arange(3), ValueError, "scalar offset, got offset of shape (3,)"),
    ], ids=_id)
    def test_scalar_offset(self, offset_kernel, offset, error, message):
        with pytest.raises(error, match=re.escape(message)):
            offset_kernel(np.zeros((3, 2, 8), F32), offset=offset)

    def test_scalar_offset_integer_forms(self, offset_kernel):
        x = _random((3, 2, 8))
        expected = reference.apply(x, offset=-4)
        for offset in (-4, np.int32(-4), np.array(-4)):
            np.testing.assert_allclose(offset_kernel(x, offset=offset),
                                       expected, atol=1e-5)

    @pytest.mark.parametrize("offset,error,message", [
        (np.array([1.0, 2.0]), TypeError, "offset must be an integer array"),
        (np.array([1, 2, 3]), ValueError,
         _names("offset has shape (3,)", "expected (2,)", "x's dim 0",
                "per-row offset")),
        (np.array([[1, 2]]), ValueError,
         _names("offset has shape (1, 2)", "expected (2,)",
                "per-row offset")),
        (np.array([1, 2 ** 63], np.uint64), ValueError,
         _names("offset span", "int64")),
        (None, TypeError, "offset must be an integer array"),
    ], ids=_id)
    def test_row_offset(self, row_offset_kernel, offset, error, message):
        with pytest.raises(error, match=message):
            row_offset_kernel(np.zeros((2, 5, 2, 8), F32), offset=offset)

    def test_caches_to_a_kernel_without_cache(self, explicit_kernel):
        cos = np.ones((9, 4), F32)
        with pytest.raises(ValueError, match="without a cos/sin cache"):
            explicit_kernel(np.zeros((3, 2, 8), F32), np.arange(3),
                            cos_cache=cos, sin_cache=cos)


class TestKernelCache:
    @pytest.fixture()
    def x(self):
        return np.zeros((3, 2, 8), F32)

    def test_missing(self, gathered_kernel, x):
        with pytest.raises(ValueError, match="pass cos_cache and sin_cache"):
            gathered_kernel(x, np.arange(3), cos_cache=np.ones((9, 4), F32))

    def test_dtype(self, gathered_kernel, x):
        with pytest.raises(TypeError, match=_names(
                "sin_cache has dtype float64", "expected float32")):
            gathered_kernel(x, np.arange(3), cos_cache=np.ones((9, 4), F32),
                            sin_cache=np.ones((9, 4)))

    @pytest.mark.parametrize("cos_shape,sin_shape,message", [
        ((9, 4), (8, 4), ("sin_cache has shape (8, 4)", "expected (9, 4)",
                          "cos_cache's shape")),
        ((9, 3), (9, 3), ("cos_cache has shape (9, 3)", "expected ('?', 4)",
                          "rows by position")),
        ((9,), (9,), ("cos_cache has shape (9,)", "expected ('?', 4)")),
        ((1, 9, 4), (1, 9, 4), ("cos_cache has shape (1, 9, 4)",
                                "expected ('?', 4)"))])
    def test_shape(self, gathered_kernel, x, cos_shape, sin_shape, message):
        with pytest.raises(ValueError, match=_names(*message)):
            gathered_kernel(x, np.arange(3), cos_cache=np.ones(cos_shape, F32),
                            sin_cache=np.ones(sin_shape, F32))

    @pytest.mark.parametrize("positions,span", [
        ([0, 4, 9], "[0, 9]"), ([0, -1, 2], "[-1, 2]")], ids=_id)
    def test_position_outside(self, gathered_kernel, x, positions, span):
        cos = np.ones((9, 4), F32)
        with pytest.raises(IndexError, match=_names(span, "9 rows")):
            gathered_kernel(x, np.array(positions), cos_cache=cos,
                            sin_cache=cos)

    def test_zero_rows(self, gathered_kernel, x):
        """Issue 12, case 8: a 0-row cache is refused before the kernel
        runs; with no token nothing is read, and the call is accepted."""
        empty = np.ones((0, 4), F32)
        with pytest.raises(IndexError, match=_names("positions span [0, 0]",
                                                    "0 rows")):
            gathered_kernel(x, np.zeros(3, np.int64), cos_cache=empty,
                            sin_cache=empty)
        got = gathered_kernel(np.zeros((0, 2, 8), F32),
                              np.zeros(0, np.int64), cos_cache=empty,
                              sin_cache=empty)
        assert got.shape == (0, 2, 8)

    @pytest.mark.parametrize("offset,span", [(7, "[7, 9]"), (-1, "[-1, 1]")],
                             ids=_id)
    def test_scalar_offset_outside(self, x, offset, span):
        k = rope_mlir.compile(dtype="f32", rank=3, head_dim=8,
                              cache="gathered")
        cos = np.ones((9, 4), F32)
        with pytest.raises(IndexError, match=_names(span, "9 rows")):
            k(x, offset=offset, cos_cache=cos, sin_cache=cos)

    def test_row_offsets_outside(self):
        """Per-row offsets: each row's offset + [0, S) must be a row."""
        k = rope_mlir.compile(dtype="f32", rank=4, head_dim=8,
                              positions="row_offset", cache="gathered")
        cos = np.ones((8, 4), F32)
        x = np.zeros((2, 3, 2, 8), F32)
        with pytest.raises(IndexError, match=_names("[0, 8]", "8 rows")):
            k(x, offset=np.array([0, 6]), cos_cache=cos, sin_cache=cos)
        with pytest.raises(IndexError, match=_names("[-1, 4]", "8 rows")):
            k(x, offset=np.array([2, -1]), cos_cache=cos, sin_cache=cos)
        with pytest.raises(IndexError, match=_names("0 rows")):
            k(x, offset=np.array([0, 0]), cos_cache=cos[:0],
              sin_cache=cos[:0])
        k(x, offset=np.array([0, 6]), cos_cache=np.ones((9, 4), F32),
          sin_cache=np.ones((9, 4), F32))

    def test_pregathered_shape(self):
        k = rope_mlir.compile(dtype="f32", rank=3, head_dim=8,
                              positions="none", cache="pregathered")
        cos = np.ones((2, 4), F32)
        with pytest.raises(ValueError, match=_names(
                "cos_cache has shape (2, 4)", "expected (3, 4)",
                "x's dim 0", "a row per token")):
            k(np.zeros((3, 2, 8), F32), cos_cache=cos, sin_cache=cos)
        with pytest.raises(ValueError, match="offset must be 0"):
            k(np.zeros((3, 2, 8), F32), offset=2,
              cos_cache=np.ones((3, 4), F32), sin_cache=np.ones((3, 4), F32))


class TestKernelOut:
    @pytest.mark.parametrize("out,error,message", [
        (np.empty(1, F32), ValueError, _names("out has shape (1,)",
                                              "expected (3, 2, 8)")),
        (np.empty((3, 2, 8)), TypeError, _names("out has dtype float64",
                                                "expected float32")),
        ([[0.0]], TypeError, "out must be a numpy array, got list"),
        (np.empty((3, 2, 16), F32)[..., ::2], ValueError, "C-contiguous"),
    ], ids=_id)
    def test_out(self, explicit_kernel, out, error, message):
        with pytest.raises(error, match=message):
            explicit_kernel(np.zeros((3, 2, 8), F32), np.arange(3), out=out)

    def test_out_read_only(self, explicit_kernel):
        out = np.empty((3, 2, 8), F32)
        out.flags.writeable = False
        with pytest.raises(ValueError, match="out is read-only"):
            explicit_kernel(np.zeros((3, 2, 8), F32), np.arange(3), out=out)

    def test_out_overlaps_x(self, explicit_kernel):
        buffer = np.zeros((4, 2, 8), F32)
        with pytest.raises(ValueError, match="out overlaps x"):
            explicit_kernel(buffer[:3], np.arange(3), out=buffer[1:])
        with pytest.raises(ValueError, match="inplace=True"):
            explicit_kernel(buffer, np.arange(4), out=buffer)

    def test_destination_overlaps_cache_indices(self, gathered_kernel):
        """The kernel would overwrite the positions it gathers by."""
        buffer = np.zeros(3 * 2 * 8 + 3, F32)
        out = buffer[:48].reshape(3, 2, 8)
        positions = buffer[45:48].view(np.int32)  # out's last 3 floats
        k = rope_mlir.compile(dtype="f32", rank=3, head_dim=8,
                              positions="explicit", positions_dtype="i32",
                              cache="gathered")
        cos = np.ones((9, 4), F32)
        with pytest.raises(ValueError, match="overlaps"):
            k(np.zeros((3, 2, 8), F32), positions, cos_cache=cos,
              sin_cache=cos, out=out)


class TestKernelInPlace:
    def test_needs_out_x(self, inplace_kernel):
        x = np.zeros((3, 2, 8), F32)
        with pytest.raises(ValueError, match="pass out=x"):
            inplace_kernel(x, np.arange(3))
        with pytest.raises(ValueError, match="pass out=x"):
            inplace_kernel(x, np.arange(3), out=x.copy())

    def test_read_only(self, inplace_kernel):
        x = np.zeros((3, 2, 8), F32)
        x.flags.writeable = False
        with pytest.raises(ValueError, match="x is read-only"):
            inplace_kernel(x, np.arange(3), out=x)

    def test_non_contiguous(self, inplace_kernel):
        x = np.zeros((3, 2, 16), F32)[..., ::2]
        with pytest.raises(ValueError, match="C-contiguous"):
            inplace_kernel(x, np.arange(3), out=x)


# ---------------------------------------------------------------------------
# rope_mlir.apply
# ---------------------------------------------------------------------------

class TestApplyInPlace:
    """Issue 12, case 4: out=x must be writeable."""

    def test_read_only_bytes(self):
        data = _random((2, 3, 2, 8))
        x = np.frombuffer(data.tobytes(), F32).reshape(data.shape)
        assert not x.flags.writeable
        before = x.copy()
        with pytest.raises(ValueError, match="x is read-only"):
            rope_mlir.apply(x, np.ones((2, 3), np.int64), out=x)
        np.testing.assert_array_equal(x, before)

    @pytest.mark.parametrize("wrap", ["", "np.asarray"])
    def test_memory_map_read_only(self, tmp_path, wrap):
        # Rotating a read-only mapping in place wrote into it: SIGSEGV (the
        # np.memmap object itself was taken for another array, not x).
        path = tmp_path / "x.npy"
        np.save(path, _random((2, 3, 2, 8)))
        out = _in_subprocess(f"""
            x = {wrap}(np.load({str(path)!r}, mmap_mode="r"))
            try:
                rope_mlir.apply(x, np.ones((2, 3), np.int64), out=x)
            except ValueError as error:
                print("ValueError:", error)
        """)
        assert "ValueError: x is read-only" in out, out

    def test_writeable_memory_map_in_place(self, tmp_path):
        path = tmp_path / "x.npy"
        data = _random((2, 3, 2, 8))
        np.save(path, data)
        x = np.load(path, mmap_mode="r+")
        assert rope_mlir.apply(x, np.ones((2, 3), np.int64), out=x) is x
        x.flush()
        np.testing.assert_allclose(
            np.load(path), reference.apply(data, np.ones((2, 3), np.int64)),
            atol=1e-5)

    def test_writeable_in_place(self):
        x = _random((2, 3, 2, 8))
        expected = reference.apply(x, np.ones((2, 3), np.int64))
        assert rope_mlir.apply(x, np.ones((2, 3), np.int64), out=x) is x
        np.testing.assert_allclose(x, expected, atol=1e-5)


class TestApplyPositionsAndOffset:
    x = _random((2, 3, 2, 8))

    @pytest.mark.parametrize("offset", [5, np.int64(-2), np.array([1, 2]),
                                        [0, 0]])
    def test_positions_with_offset(self, offset):
        """Issue 12, case 5: the offset was silently ignored."""
        with pytest.raises(ValueError, match=_names("positions", "offset=",
                                                    "both given")):
            rope_mlir.apply(self.x, np.zeros((2, 3), np.int64), offset=offset)

    def test_positions_with_zero_offset(self):
        pos = np.ones((2, 3), np.int64)
        np.testing.assert_array_equal(
            rope_mlir.apply(self.x, pos, offset=0), rope_mlir.apply(self.x,
                                                                    pos))

    @pytest.mark.parametrize("offset,error,message", [
        (5.0, TypeError, "offset must be an integer, got 5.0"),
        (5.5, TypeError, "offset must be an integer, got 5.5"),
        (False, TypeError, "offset must be an integer, got False"),
        (np.float64(3), TypeError, "offset must be an integer"),
        (np.array([1.0, 2.0]), TypeError, "offset must be an integer array"),
        ([1.5, 2], TypeError, "offset must be an integer array"),
        (np.array([1, 2, 3]), ValueError, _names(
            "offset has shape (3,)", "expected (2,)", "per-row offset")),
        (2 ** 63, ValueError, "does not fit int64"),
    ], ids=_id)
    def test_offset(self, offset, error, message):
        with pytest.raises(error, match=message):
            rope_mlir.apply(self.x, offset=offset)

    @pytest.mark.parametrize("positions,error,message", [
        (np.zeros((2, 3)), TypeError, "positions must be integers, got "
                                      "dtype float64"),
        (np.zeros((2, 3), bool), TypeError, "positions must be integers, "
                                            "got dtype bool"),
        ([[0.5, 1, 2], [0, 1, 2]], TypeError, "positions must be integers"),
        (np.full((2, 3), 2 ** 63, np.uint64), ValueError,
         _names("positions span", "int64")),
        (np.zeros((2, 4), np.int64), ValueError,
         _names("positions has shape (2, 4)", "expected (2, 3)",
                "x's dims (0, 1)")),
    ], ids=_id)
    def test_positions(self, positions, error, message):
        with pytest.raises(error, match=message):
            rope_mlir.apply(self.x, positions)

    def test_integer_position_types(self):
        pos = np.array([[0, 7, -3], [1, 2, 100]])
        expected = reference.apply(self.x, pos)
        for dtype in (np.int8, np.int16, np.int32, np.int64, np.uint16):
            p = pos.astype(dtype) if dtype != np.uint16 else np.abs(pos)
            want = expected if dtype != np.uint16 else reference.apply(
                self.x, np.abs(pos))
            np.testing.assert_allclose(rope_mlir.apply(self.x, p), want,
                                       atol=1e-5, err_msg=str(dtype))


class TestApplyOptions:
    x = _random((2, 3, 2, 8))

    @pytest.mark.parametrize("kwargs,error,message", [
        (dict(rotary_dim=4.5), TypeError, "rotary_dim must be an integer"),
        (dict(rotary_dim=0), ValueError, "rotary_dim must be even"),
        (dict(rotary_dim=9), ValueError, "rotary_dim must be even"),
        (dict(rotary_dim=16), ValueError, "at most the head dim (8)"),
        (dict(threads=2.5), TypeError, "threads must be an integer"),
        (dict(threads=True), TypeError, "threads must be an integer"),
        (dict(threads=-2), ValueError, "threads must be an int >= 0"),
        (dict(inverse="false"), TypeError, "inverse must be a bool"),
        (dict(mrope_interleaved="false"), TypeError,
         "mrope_interleaved must be a bool"),
        (dict(base=True), TypeError, "base must be a real number"),
        (dict(base="500000"), TypeError, "base must be a real number"),
        (dict(magnitude="2"), TypeError, "magnitude must be a real number"),
        (dict(layout="neox"), ValueError, "layout must be"),
        (dict(token_dims=(0, 3)), ValueError, "out of range [0, 3)"),
        (dict(token_dims=(1, 1)), ValueError, "strictly increasing"),
        (dict(token_dims=(0.0,)), TypeError, "must be an integer"),
    ], ids=_id)
    def test_options(self, kwargs, error, message):
        with pytest.raises(error, match=re.escape(message)):
            rope_mlir.apply(self.x, **kwargs)

    def test_x(self):
        with pytest.raises(TypeError, match="int32"):
            rope_mlir.apply(np.zeros((2, 8), np.int32))
        with pytest.raises(ValueError, match=_names("rank >= 2", "(8,)")):
            rope_mlir.apply(np.zeros(8, F32))

    def test_caches(self):
        cos = np.ones((9, 4), F32)
        pos = np.zeros((2, 3), np.int64)
        with pytest.raises(TypeError, match=_names(
                "cos_cache has dtype float32", "sin_cache float64")):
            rope_mlir.apply(self.x, pos, cos_cache=cos,
                            sin_cache=cos.astype(np.float64))
        with pytest.raises(ValueError, match="both cos_cache and sin_cache"):
            rope_mlir.apply(self.x, pos, cos_cache=cos)
        with pytest.raises(TypeError, match="unsupported data type int64"):
            rope_mlir.apply(self.x, pos, cos_cache=np.ones((9, 4), int),
                            sin_cache=np.ones((9, 4), int))
        with pytest.raises(ValueError, match=_names(
                "sin_cache has shape (9, 2)", "expected (9, 4)",
                "cos_cache's shape")):
            rope_mlir.apply(self.x, pos, cos_cache=cos, sin_cache=cos[:, :2])
        empty = cos[:0]
        with pytest.raises(IndexError, match="0 rows"):
            rope_mlir.apply(self.x, pos, cos_cache=empty, sin_cache=empty)
        with pytest.raises(IndexError, match="0 rows"):
            rope_mlir.apply(self.x, offset=np.array([0, 0]), cos_cache=empty,
                            sin_cache=empty)

    def test_out(self):
        pos = np.zeros((2, 3), np.int64)
        with pytest.raises(TypeError, match="out must be a numpy array"):
            rope_mlir.apply(self.x, pos, out=self.x.tolist())
        out = np.empty_like(self.x)
        out.flags.writeable = False
        with pytest.raises(ValueError, match="out is read-only"):
            rope_mlir.apply(self.x, pos, out=out)


# ---------------------------------------------------------------------------
# scaling_attributes
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs,error,message", [
    (dict(mrope_section=[16.9, 24, 24]), TypeError,
     "mrope_section[0] must be an integer, got 16.9"),
    (dict(mrope_section=[16, True, 24]), TypeError,
     "mrope_section[1] must be an integer, got True"),
    (dict(mrope_section="16,24,24"), TypeError,
     "mrope_section must be a sequence of integers"),
    (dict(mrope_section=[16, 24, 24], mrope_interleaved="false"), TypeError,
     "mrope_interleaved must be a bool"),
    (dict(base=True), TypeError, "base must be a real number"),
    (dict(head_dim=128.0), TypeError, "head_dim must be an integer"),
    (dict(rotary_dim=64.5), TypeError, "rotary_dim must be an integer"),
], ids=_id)
def test_scaling_attributes_types(kwargs, error, message):
    kwargs = dict(dict(head_dim=128), **kwargs)
    with pytest.raises(error, match=re.escape(message)):
        rope_mlir.scaling_attributes(None, **kwargs)


def test_scaling_attributes_mrope_ints():
    attrs = rope_mlir.scaling_attributes(None, head_dim=128,
                                         mrope_section=(np.int64(16), 24, 24))
    assert "16, 24, 24" in attrs.mrope


# ---------------------------------------------------------------------------
# from_hf_config (issue 12, case 7)
# ---------------------------------------------------------------------------

QWEN_VL = {"model_type": "qwen2_vl", "hidden_size": 1536,
           "num_attention_heads": 12, "rope_theta": 1000000.0,
           "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}}
LLAMA = {"model_type": "llama", "hidden_size": 4096,
         "num_attention_heads": 32, "rope_theta": 500000.0}
DEEPSEEK = {"model_type": "deepseek_v3", "hidden_size": 7168,
            "num_attention_heads": 128, "qk_rope_head_dim": 64}


def _with(config, key, value):
    """config with `key` (a.b for a nested dict) set to `value`."""
    config = {k: dict(v) if isinstance(v, dict) else v
              for k, v in config.items()}
    outer, _, inner = key.partition(".")
    if inner:
        config[outer][inner] = value
    else:
        config[outer] = value
    return config


@pytest.mark.parametrize("config,key,value,message", [
    (QWEN_VL, "rope_scaling.mrope_interleaved", "false",
     "mrope_interleaved must be a bool"),
    (QWEN_VL, "rope_scaling.mrope_interleaved", 0,
     "mrope_interleaved must be a bool"),
    (QWEN_VL, "rope_scaling.mrope_section", [16.9, 24, 24],
     "mrope_section[0] must be an integer, got 16.9"),
    (QWEN_VL, "rope_scaling.mrope_section", [16, False, 24],
     "mrope_section[1] must be an integer, got False"),
    (QWEN_VL, "rope_scaling.mrope_section", "16,24,24",
     "mrope_section must be a list of integers"),
    (LLAMA, "rope_theta", True, "rope_theta must be a finite number, got "
                                "True"),
    (LLAMA, "rope_theta", "500000", "rope_theta must be a finite number"),
    (LLAMA, "rope_theta", -1.0, "rope_theta must be positive"),
    (LLAMA, "rope_theta", float("inf"), "rope_theta must be a finite number"),
    (LLAMA, "rope_parameters", {"rope_type": "default", "rope_theta": False},
     "rope_parameters.rope_theta must be a finite number"),
    (LLAMA, "rotary_emb_base", [10000], "rotary_emb_base must be a finite "
                                        "number"),
    (LLAMA, "head_dim", 128.5, "head_dim must be an integer, got 128.5"),
    (LLAMA, "head_dim", True, "head_dim must be an integer, got True"),
    (LLAMA, "head_dim", "128", "head_dim must be an integer"),
    (LLAMA, "head_dim", -128, "head_dim must be a positive integer"),
    (LLAMA, "hidden_size", 4096.5, "hidden_size must be an integer"),
    (LLAMA, "num_attention_heads", False,
     "num_attention_heads must be an integer"),
    ({"model_type": "gpt2", "n_embd": 768, "n_head": "12"}, "n_head", "12",
     "n_head must be an integer"),
    (LLAMA, "rotary_dim", 64.5, "rotary_dim must be an integer"),
    (LLAMA, "partial_rotary_factor", "0.5",
     "partial_rotary_factor must be a number in [0, 1]"),
    (LLAMA, "partial_rotary_factor", True,
     "partial_rotary_factor must be a number in [0, 1]"),
    (LLAMA, "rotary_pct", 1.5, "rotary_pct must be a number in [0, 1]"),
    (DEEPSEEK, "rope_interleave", "false", "rope_interleave must be a bool"),
    (DEEPSEEK, "qk_rope_head_dim", 64.25, "qk_rope_head_dim must be an "
                                          "integer"),
    (LLAMA, "model_type", 7, "model_type must be a string"),
    (_with(LLAMA, "rope_scaling", {"rope_type": "linear", "factor": 2.0}),
     "max_position_embeddings", True,
     "max_position_embeddings must be an integer"),
    (_with(LLAMA, "rope_scaling", {"rope_type": "linear", "factor": 2.0}),
     "rope_scaling.factor", True, "factor must be a real number"),
], ids=_id)
def test_hf_config_value_types(config, key, value, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        rope_mlir.from_hf_config(_with(config, key, value))


def test_hf_config_accepted_forms():
    # An integral float is the integer (as the C++ importer's JSON reader
    # reads it); a real JSON bool is a bool.
    spec = rope_mlir.from_hf_config(
        _with(_with(QWEN_VL, "rope_scaling.mrope_section", [16.0, 24, 24.0]),
              "head_dim", 128.0))
    assert spec.mrope_section == (16, 24, 24)
    assert type(spec.head_dim) is int and spec.head_dim == 128
    spec = rope_mlir.from_hf_config(
        _with(QWEN_VL, "rope_scaling.mrope_interleaved", False))
    assert spec.mrope_interleaved is False
    assert rope_mlir.from_hf_config(
        _with(LLAMA, "rope_theta", 500000)).base == 500000.0
    assert rope_mlir.from_hf_config(DEEPSEEK).layout == "interleaved"
    assert rope_mlir.from_hf_config(
        _with(DEEPSEEK, "rope_interleave", False)).layout == "half"


def test_hf_config_arguments():
    with pytest.raises(ValueError, match="layout must be"):
        rope_mlir.from_hf_config(LLAMA, layout="neox")
    with pytest.raises(ValueError, match="layer_type must be a string"):
        rope_mlir.from_hf_config(LLAMA, layer_type=1)


# ---------------------------------------------------------------------------
# ScoresKernel / AttentionKernel (issue 12, case 2)
# ---------------------------------------------------------------------------

SCORES = ScoresConfig(batch=2, q_heads=4, kv_heads=2, q_len=3, kv_len=5,
                      head_dim=8)
ATTENTION = AttentionConfig(batch=2, q_heads=4, kv_heads=2, q_len=3,
                            kv_len=5, head_dim=8, scale=0.3, mask=True)
NOMASK = AttentionConfig(batch=2, q_heads=4, kv_heads=2, q_len=3, kv_len=5,
                         head_dim=8, positions="explicit")


@pytest.fixture(scope="module")
def scores_kernel():
    return ScoresKernel(SCORES, False)


@pytest.fixture(scope="module")
def attention_kernel():
    return AttentionKernel(ATTENTION, False)


@pytest.fixture(scope="module")
def nomask_kernel():
    return AttentionKernel(NOMASK, False)


def _qkv(c, seed=0):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal(c.q_shape()).astype(F32)
    k = rng.standard_normal(c.k_shape()).astype(F32)
    v = (rng.standard_normal(c.v_shape()).astype(F32)
         if isinstance(c, AttentionConfig) else None)
    return q, k, v


def _mask(c):
    m = np.arange(c.q_len)[:, None] + (c.kv_len - c.q_len)
    return np.where(np.arange(c.kv_len)[None, :] <= m, 0.0,
                    -np.inf).astype(F32)


class TestScoresKernel:
    q, k, _ = _qkv(SCORES)
    offsets = np.array([3, 9])

    def test_valid_shapes(self, scores_kernel):
        expected = scores_kernel(self.q, self.k, self.offsets)
        np.testing.assert_allclose(
            expected, rope_mlir.attention.scores_reference(
                SCORES, self.q, self.k, self.offsets), atol=1e-4)
        # [B, Hq, Sq, D] is the documented free reshape of q_shape().
        usual = self.q.reshape(2, 4, 3, 8)
        np.testing.assert_array_equal(scores_kernel(usual, self.k,
                                                    self.offsets), expected)
        # int32 offsets are widened exactly.
        np.testing.assert_array_equal(
            scores_kernel(self.q, self.k, self.offsets.astype(np.int32)),
            expected)

    @pytest.mark.parametrize("which,shape", [
        ("q", (2, 2, 2, 3, 7)),     # wrong size (was numpy's reshape error)
        ("q", (2, 3, 4, 8)),        # same size, bshd order into bhsd
        ("q", (192,)),              # same size, flat
        ("k", (2, 5, 2, 8)),        # same size, bshd order into bhsd
        ("k", (2, 2, 6, 8)),
    ])
    def test_q_k_shape(self, scores_kernel, which, shape):
        args = dict(q=self.q, k=self.k)
        args[which] = np.zeros(shape, F32)
        expected = SCORES.q_shape() if which == "q" else SCORES.k_shape()
        with pytest.raises(ValueError, match=_names(
                f"{which} has shape {shape}", f"expected {expected}")):
            scores_kernel(args["q"], args["k"], self.offsets)

    def test_q_dtype(self, scores_kernel):
        with pytest.raises(TypeError, match=_names("q has dtype float64",
                                                   "expected float32")):
            scores_kernel(self.q.astype(np.float64), self.k, self.offsets)

    @pytest.mark.parametrize("offsets,error,message", [
        (None, ValueError, "pass offsets"),
        (np.array([3]), ValueError, _names("offsets have shape (1,)",
                                           "expected (2,)")),
        (3, ValueError, _names("offsets have shape ()", "expected (2,)")),
        (np.array([3, 4, 5]), ValueError, _names("offsets have shape (3,)")),
        (np.array([3.0, 9.0]), TypeError, "offsets must be an integer array"),
        (np.array([True, False]), TypeError, "offsets must be an integer "
                                             "array"),
        (np.array([0, 2 ** 64 - 1], np.uint64), ValueError, "offsets span"),
    ], ids=_id)
    def test_offsets(self, scores_kernel, offsets, error, message):
        with pytest.raises(error, match=message):
            scores_kernel(self.q, self.k, offsets)

    def test_positions_to_an_offset_kernel(self, scores_kernel):
        with pytest.raises(ValueError, match="q_positions and k_positions "
                                             "must be None"):
            scores_kernel(self.q, self.k, self.offsets,
                          q_positions=np.zeros((2, 3), np.int64))

    @pytest.mark.parametrize("out,error,message", [
        (np.empty(1, F32), ValueError, _names("out has shape (1,)",
                                              "expected (2, 2, 2, 3, 5)")),
        (np.empty((2, 2, 2, 3, 5)), TypeError, "out has dtype float64"),
        (np.empty((2, 4, 3, 5), F32), ValueError,
         _names("out has shape (2, 4, 3, 5)")),
        (np.empty((2, 2, 2, 3, 10), F32)[..., ::2], ValueError,
         "C-contiguous"),
        ("out", TypeError, "out must be a numpy array"),
    ], ids=_id)
    def test_out(self, scores_kernel, out, error, message):
        with pytest.raises(error, match=message):
            scores_kernel(self.q, self.k, self.offsets, out=out)

    def test_out_read_only_or_overlapping(self, scores_kernel):
        out = np.empty(SCORES.scores_shape(), F32)
        out.flags.writeable = False
        with pytest.raises(ValueError, match="out is read-only"):
            scores_kernel(self.q, self.k, self.offsets, out=out)
        buffer = np.zeros(max(self.q.size, out.size), F32)
        with pytest.raises(ValueError, match="out overlaps q"):
            scores_kernel(buffer[:self.q.size].reshape(self.q.shape), self.k,
                          self.offsets,
                          out=buffer[:out.size].reshape(out.shape))

    def test_out_too_small_segfault_case(self):
        """out=np.empty(1) was written Sq·Sk·B·H floats past its end."""
        out = _in_subprocess("""
            from rope_mlir.attention import ScoresConfig, ScoresKernel
            c = ScoresConfig(batch=4, q_heads=16, kv_heads=16, q_len=256,
                             kv_len=256, head_dim=64)
            k = ScoresKernel(c, False)
            q = np.zeros(c.q_shape(), np.float32)
            kk = np.zeros(c.k_shape(), np.float32)
            try:
                k(q, kk, np.zeros(4, np.int64), out=np.empty(1, np.float32))
            except ValueError as error:
                print("ValueError:", error)
        """)
        assert "ValueError: out has shape (1,)" in out, out


class TestScoresKernelForms:
    def test_explicit(self):
        c = ScoresConfig(batch=1, q_heads=2, kv_heads=2, q_len=3, kv_len=4,
                         head_dim=8, layout="bshd", positions="explicit")
        kernel = ScoresKernel(c, False)
        q, k, _ = _qkv(c)
        qp, kp = np.array([[1, 2, 3]]), np.array([[0, 1, 2, 3]])
        got = kernel(q, k, q_positions=qp, k_positions=kp)
        np.testing.assert_allclose(got, rope_mlir.attention.scores_reference(
            c, q, k, q_positions=qp, k_positions=kp), atol=1e-4)
        for kwargs, error, message in [
                (dict(q_positions=qp), ValueError, "pass k_positions"),
                (dict(q_positions=qp, k_positions=kp[:, :3]), ValueError,
                 _names("k_positions have shape (1, 3)", "expected (1, 4)")),
                (dict(q_positions=qp.T, k_positions=kp), ValueError,
                 _names("q_positions have shape (3, 1)", "expected (1, 3)")),
                (dict(q_positions=qp * 1.0, k_positions=kp), TypeError,
                 "q_positions must be an integer array"),
        ]:
            with pytest.raises(error, match=message):
                kernel(q, k, **kwargs)
        with pytest.raises(ValueError, match="offsets must be None"):
            kernel(q, k, np.array([2]), q_positions=qp, k_positions=kp)

    def test_batch_matmul_scalar_offset(self):
        c = ScoresConfig(batch=2, q_heads=2, kv_heads=2, q_len=3, kv_len=4,
                         head_dim=8, form="batch_matmul")
        kernel = ScoresKernel(c, False)
        q, k, _ = _qkv(c)
        got = kernel(q, k, 5)
        np.testing.assert_array_equal(got, kernel(q.reshape(2, 2, 3, 8),
                                                  k.reshape(2, 2, 4, 8),
                                                  np.int64(5)))
        with pytest.raises(TypeError, match="offsets must be an integer, "
                                            "got 5.0"):
            kernel(q, k, 5.0)
        with pytest.raises(ValueError, match="one scalar offset"):
            kernel(q, k, np.array([5, 5]))


class TestAttentionKernel:
    q, k, v = _qkv(ATTENTION)
    offsets = np.array([2, 0])
    mask = _mask(ATTENTION)

    def test_valid(self, attention_kernel):
        got = attention_kernel(self.q, self.k, self.v, self.offsets,
                               mask=self.mask)
        np.testing.assert_allclose(got, rope_mlir.attention.attention_reference(
            ATTENTION, self.q, self.k, self.v, self.offsets, mask=self.mask),
            atol=1e-5)
        out = np.empty(ATTENTION.out_shape(), F32)
        assert attention_kernel(self.q.reshape(2, 4, 3, 8), self.k, self.v,
                                self.offsets, mask=self.mask, out=out) is out
        np.testing.assert_array_equal(out, got)

    def test_mask_missing_segfault_case(self):
        """A missing mask= read Sq·Sk floats from a 1-element array."""
        out = _in_subprocess("""
            from rope_mlir.attention import AttentionConfig, AttentionKernel
            c = AttentionConfig(batch=1, q_heads=2, kv_heads=2, q_len=512,
                                kv_len=2048, head_dim=32, mask=True)
            k = AttentionKernel(c, False)
            q = np.zeros(c.q_shape(), np.float32)
            kk = np.zeros(c.k_shape(), np.float32)
            v = np.zeros(c.v_shape(), np.float32)
            try:
                k(q, kk, v, np.zeros(1, np.int64))
            except ValueError as error:
                print("ValueError:", error)
        """)
        assert "ValueError: the kernel was compiled with a mask: pass mask " \
               "(512, 2048)" in out, out

    @pytest.mark.parametrize("mask,error,message", [
        (None, ValueError, "pass mask (3, 5) float32"),
        (np.zeros((5, 3), F32), ValueError,
         "mask has shape (5, 3), expected (3, 5)"),
        (np.zeros(1, F32), ValueError, "mask has shape (1,), expected (3, 5)"),
        (np.zeros((3, 5)), TypeError, "mask has dtype float64, expected "
                                      "float32"),
    ], ids=_id)
    def test_mask(self, attention_kernel, mask, error, message):
        with pytest.raises(error, match=re.escape(message)):
            attention_kernel(self.q, self.k, self.v, self.offsets, mask=mask)

    def test_mask_refused_without_config_mask(self, nomask_kernel):
        q, k, v = _qkv(NOMASK)
        qp, kp = np.zeros((2, 3), np.int64), np.zeros((2, 5), np.int64)
        nomask_kernel(q, k, v, q_positions=qp, k_positions=kp)
        with pytest.raises(ValueError, match="without a mask"):
            nomask_kernel(q, k, v, q_positions=qp, k_positions=kp,
                          mask=np.zeros((3, 5), F32))
        with pytest.raises(ValueError, match=_names(
                "q_positions have shape (1, 3)", "expected (2, 3)")):
            nomask_kernel(q, k, v, q_positions=qp[:1], k_positions=kp)
        with pytest.raises(ValueError, match="offsets must be None"):
            nomask_kernel(q, k, v, np.zeros(2, np.int64), q_positions=qp,
                          k_positions=kp)

    @pytest.mark.parametrize("v_shape", [(2, 2, 5, 7), (2, 5, 2, 8), (80,)])
    def test_v_shape(self, attention_kernel, v_shape):
        with pytest.raises(ValueError, match=_names(
                f"v has shape {v_shape}", "expected (2, 2, 5, 8)")):
            attention_kernel(self.q, self.k, np.zeros(v_shape, F32),
                             self.offsets, mask=self.mask)

    @pytest.mark.parametrize("offsets,error,message", [
        (np.array([2]), ValueError, "offsets have shape (1,), expected (2,)"),
        (np.array([2.0, 0.0]), TypeError, "offsets must be an integer array"),
        (None, ValueError, "pass offsets"),
    ], ids=_id)
    def test_offsets(self, attention_kernel, offsets, error, message):
        with pytest.raises(error, match=re.escape(message)):
            attention_kernel(self.q, self.k, self.v, offsets, mask=self.mask)

    @pytest.mark.parametrize("out,error,message", [
        (np.empty(1, F32), ValueError, _names("out has shape (1,)",
                                              "expected (2, 2, 2, 3, 8)")),
        (np.empty((2, 2, 2, 3, 8), np.float16), TypeError,
         "out has dtype float16"),
    ], ids=_id)
    def test_out(self, attention_kernel, out, error, message):
        with pytest.raises(error, match=message):
            attention_kernel(self.q, self.k, self.v, self.offsets,
                             mask=self.mask, out=out)

    def test_out_overlaps_inputs(self, attention_kernel):
        out = np.empty(ATTENTION.out_shape(), F32)
        for name in ("v", "mask"):
            args = dict(v=self.v, mask=self.mask)
            args[name] = out.reshape(-1)[:args[name].size].reshape(
                args[name].shape)
            with pytest.raises(ValueError, match=f"out overlaps {name}"):
                attention_kernel(self.q, self.k, args["v"], self.offsets,
                                 mask=args["mask"], out=out)


@pytest.mark.parametrize("fields,error,message", [
    (dict(kv_heads=0), ValueError, "kv_heads must be positive"),
    (dict(batch=2.0), TypeError, "batch must be an integer"),
    (dict(rotary_dim=5), ValueError, "rotary_dim must be even"),
    (dict(pair_layout="neox"), ValueError, "pair_layout"),
    (dict(positions="implicit"), ValueError, "positions must be offset or "
                                             "explicit"),
    (dict(form="matmul"), ValueError, "form must be"),
    (dict(rotate="yes"), TypeError, "rotate must be a bool"),
    (dict(base=True), TypeError, "base must be a real number"),
    (dict(scale="0.1"), TypeError, "scale must be a real number"),
    (dict(mask=1), TypeError, "mask must be a bool"),
    (dict(value_dim=0), ValueError, "value_dim must be positive"),
], ids=_id)
def test_attention_config_rejects(fields, error, message):
    base = dict(batch=1, q_heads=2, kv_heads=2, q_len=3, kv_len=4,
                head_dim=8)
    with pytest.raises(error, match=re.escape(message)):
        AttentionConfig(**dict(base, **fields))


# ---------------------------------------------------------------------------
# rope_mlir.onnx.run
# ---------------------------------------------------------------------------

class TestOnnxRun:
    @pytest.fixture(scope="class")
    @classmethod
    def model(cls):
        pytest.importorskip("onnx")
        from onnx import TensorProto, helper
        node = helper.make_node("RotaryEmbedding", ["X", "cos", "sin", "pos"],
                                ["Y"], name="rope")
        vi = helper.make_tensor_value_info
        graph = helper.make_graph(
            [node], "g",
            [vi("X", TensorProto.FLOAT, ["B", 2, "S", 8]),
             vi("cos", TensorProto.FLOAT, ["M", 4]),
             vi("sin", TensorProto.FLOAT, ["M", 4]),
             vi("pos", TensorProto.INT64, ["B", "S"])],
            [vi("Y", TensorProto.FLOAT, ["B", 2, "S", 8])])
        return helper.make_model(graph, ir_version=10, opset_imports=[
            helper.make_opsetid("", 23)])

    @pytest.fixture(scope="class")
    @classmethod
    def ms_model(cls):
        pytest.importorskip("onnx")
        from onnx import TensorProto, helper
        node = helper.make_node("RotaryEmbedding", ["X", "pos", "cos", "sin"],
                                ["Y"], domain="com.microsoft", name="ms",
                                num_heads=2)
        vi = helper.make_tensor_value_info
        graph = helper.make_graph(
            [node], "g",
            [vi("X", TensorProto.FLOAT, ["B", "S", 16]),
             vi("pos", TensorProto.INT64, []),
             vi("cos", TensorProto.FLOAT, ["M", 4]),
             vi("sin", TensorProto.FLOAT, ["M", 4])],
            [vi("Y", TensorProto.FLOAT, ["B", "S", 16])])
        return helper.make_model(graph, ir_version=10, opset_imports=[
            helper.make_opsetid("", 23), helper.make_opsetid(
                "com.microsoft", 1)])

    @pytest.fixture(scope="class")
    @classmethod
    def feeds(cls):
        angle = np.random.default_rng(1).uniform(-3, 3, (10, 4))
        return {"X": _random((2, 2, 3, 8)),
                "cos": np.cos(angle).astype(F32),
                "sin": np.sin(angle).astype(F32),
                "pos": np.array([[0, 1, 2], [7, 8, 9]])}

    def _run(self, model, feeds, **changes):
        import rope_mlir.onnx as rope_onnx
        return rope_onnx.run(model, dict(feeds, **changes))

    @pytest.mark.parametrize("changes,error,message", [
        (dict(pos=np.array([[0, 1, 2], [7, 8, 10]])), IndexError,
         _names("positions span [0, 10]", "10 rows")),
        (dict(pos=np.array([[0, -1, 2], [7, 8, 9]])), IndexError,
         _names("positions span [-1, 9]", "10 rows")),
        (dict(cos=np.ones((0, 4), F32), sin=np.ones((0, 4), F32)),
         IndexError, "0 rows"),
        (dict(pos=np.zeros((2, 3), np.int32)), TypeError,
         _names("'pos' has dtype int32", "int64")),
        (dict(pos=np.zeros((2, 3))), TypeError, "'pos' has dtype float64"),
        (dict(pos=np.zeros((2, 3), bool)), TypeError, "'pos' has dtype bool"),
        (dict(X=np.zeros((2, 2, 3, 8))), TypeError, "'X' has dtype float64"),
        (dict(X=np.zeros((2, 3, 3, 8), F32)), ValueError,
         _names("'X' has shape (2, 3, 3, 8)", "(?, 2, ?, 8)")),
        (dict(pos=np.zeros((2, 4), np.int64)), ValueError,
         _names("position_ids has shape (2, 4)", "expected (2, 3)")),
        (dict(sin=np.ones((9, 4), F32)), ValueError, "cos_cache/sin_cache"),
        (dict(extra=np.zeros(1)), ValueError,
         _names("unknown input(s) extra")),
    ], ids=_id)
    def test_feed_errors(self, model, feeds, changes, error, message):
        with pytest.raises(error, match=message):
            self._run(model, feeds, **changes)

    def test_missing_feed(self, model, feeds):
        import rope_mlir.onnx as rope_onnx
        with pytest.raises(ValueError, match="missing feed for input 'pos'"):
            rope_onnx.run(model, {k: v for k, v in feeds.items()
                                  if k != "pos"})

    def test_odd_layouts_are_copied(self, model, feeds):
        (expected,) = self._run(model, feeds)
        x = _unaligned(feeds["X"].shape)
        x[...] = feeds["X"]
        wide = np.zeros((2, 2, 3, 16), F32)
        wide[..., ::2] = feeds["X"]
        read_only = feeds["X"].copy()
        read_only.flags.writeable = False
        for variant in (x, wide[..., ::2], read_only):
            (got,) = self._run(model, feeds, X=variant)
            np.testing.assert_array_equal(got, expected)
        assert got.flags.writeable and got.flags.c_contiguous

    def test_scalar_offset(self, ms_model, feeds):
        x = _random((2, 3, 16))
        cos, sin = feeds["cos"], feeds["sin"]
        (got,) = self._run(ms_model, {}, X=x, pos=np.array(4), cos=cos,
                           sin=sin)
        rotated = reference.apply(x.reshape(2, 3, 2, 8), offset=4,
                                  cos_cache=cos, sin_cache=sin)
        np.testing.assert_allclose(got, rotated.reshape(2, 3, 16), atol=1e-5)
        with pytest.raises(IndexError, match=_names("[8, 10]", "10 rows")):
            self._run(ms_model, {}, X=x, pos=np.array(8), cos=cos, sin=sin)
        with pytest.raises(TypeError, match="'pos' has dtype float64"):
            self._run(ms_model, {}, X=x, pos=np.array(4.0), cos=cos, sin=sin)
        with pytest.raises(TypeError, match="'pos' has dtype float64"):
            self._run(ms_model, {}, X=x, pos=4.0, cos=cos, sin=sin)
