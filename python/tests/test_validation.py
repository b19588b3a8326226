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
