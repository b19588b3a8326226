# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""DLPack in, same framework out (python/rope_mlir/_arrays.py).

Every argument goes through an object that exposes only `__dlpack__` and
`__dlpack_device__` (delegating to a numpy array), so no numpy-specific path
is taken: results equal the numpy path bitwise, inputs are shared (zero
copy), out= and out=x are written through to the producer's buffer, and a
non-CPU device, a strided view and an unsupported dtype are refused naming
the argument. torch and JAX (and bfloat16 through them) are exercised by
scripts/dlpack-peers.py where they are installed.
"""

from __future__ import annotations

import numpy as np
import pytest

import rope_mlir
from rope_mlir import _arrays


class Producer:
    """A DLPack producer that is not a numpy array."""

    def __init__(self, array, device=(1, 0)):
        self.array = array
        self.device = device

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.device


def _x(shape=(2, 5, 3, 8), dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def test_import_is_zero_copy_and_keeps_identity():
    x = _x()
    p = Producer(x)
    view = _arrays.to_numpy(p, "x")
    assert np.shares_memory(view, x) and view.flags.writeable
    a, b, c = _arrays.import_all(("x", "y", "out"), (p, 3, p))
    assert a is c and b == 3 and np.shares_memory(a, x)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_apply_equals_the_numpy_path_bitwise(dtype):
    x = _x(dtype=dtype)
    positions = np.arange(5)[None].repeat(2, 0)
    expected = rope_mlir.apply(x, positions, base=500000.0)
    got = rope_mlir.apply(Producer(x), Producer(positions), base=500000.0)
    # An unknown producer gets a numpy array back.
    assert type(got) is np.ndarray
    assert got.tobytes() == expected.tobytes()
    got = rope_mlir.apply(Producer(x), offset=Producer(np.array(4)))
    assert got.tobytes() == rope_mlir.apply(x, offset=4).tobytes()


def test_out_and_in_place_write_through():
    x = _x()
    expected = rope_mlir.apply(x)
    dest = np.zeros_like(x)
    out = Producer(dest)
    assert rope_mlir.apply(Producer(x), out=out) is out
    assert dest.tobytes() == expected.tobytes()
    inplace = x.copy()
    p = Producer(inplace)
    assert rope_mlir.apply(p, out=p) is p
    assert inplace.tobytes() == expected.tobytes()


def test_kernel_call_with_caches():
    x = _x()
    positions = np.array([[0, 2, 4, 6, 8]] * 2)
    cos = np.cos(np.arange(10)[:, None] * np.ones(4)).astype(np.float32)
    sin = np.sin(np.arange(10)[:, None] * np.ones(4)).astype(np.float32)
    expected = rope_mlir.apply(x, positions, cos_cache=cos, sin_cache=sin)
    kernel = rope_mlir.compile(dtype="f32", rank=4, head_dim=8,
                               positions="explicit", cache="gathered")
    dest = np.empty_like(x)
    out = Producer(dest)
    got = kernel(Producer(x), Producer(positions), cos_cache=Producer(cos),
                 sin_cache=Producer(sin), out=out)
    assert got is out and dest.tobytes() == expected.tobytes()


def test_non_cpu_device_is_refused_naming_the_argument():
    x = _x()
    with pytest.raises(ValueError, match=r"^x is on the DLPack device CUDA"):
        rope_mlir.apply(Producer(x, device=(2, 0)))
    kernel = rope_mlir.compile(dtype="f32", rank=4, head_dim=8)
    with pytest.raises(ValueError, match=r"^out is on the DLPack device"):
        kernel(x, out=Producer(np.empty_like(x), device=(2, 1)))


def test_strided_view_is_refused_saying_a_copy_is_needed():
    view = _x((2, 3, 5, 8)).transpose(0, 2, 1, 3)
    with pytest.raises(ValueError, match="x is a non-contiguous view.*copy"):
        rope_mlir.apply(Producer(view))
    # A numpy array itself is still copied, as before.
    assert rope_mlir.apply(view).shape == view.shape


def test_unsupported_dtype():
    with pytest.raises(TypeError, match="unsupported data type complex64"):
        rope_mlir.apply(Producer(_x().astype(np.complex64)))
    kernel = rope_mlir.compile(dtype="f32", rank=4, head_dim=8)
    with pytest.raises(TypeError, match="x has dtype float64"):
        kernel(Producer(_x(dtype=np.float64)))

    class Broken(Producer):
        def __dlpack__(self, **kwargs):
            raise BufferError("no export")
    with pytest.raises(TypeError, match="positions .* cannot be exported"):
        kernel(_x(), Broken(np.arange(5)))


JIT = """
func.func @scale(%a: tensor<?xf32>, %s: f32) -> (tensor<?xf32>, f32) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%a : tensor<?xf32>) outs(%e : tensor<?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %y = arith.mulf %x, %s : f32
    linalg.yield %y : f32
  } -> tensor<?xf32>
  return %r, %s : tensor<?xf32>, f32
}
"""


def test_jit_functions_take_dlpack_arguments():
    f = rope_mlir.jit(JIT).function("scale")
    a = np.arange(7, dtype=np.float32)
    result, scale = f(Producer(a), Producer(np.array(2.5, np.float32)))
    assert type(result) is np.ndarray
    np.testing.assert_array_equal(result, a * 2.5)
    assert scale == 2.5
    with pytest.raises(ValueError, match=r"^@scale argument 0 .* device"):
        f(Producer(a, device=(2, 0)), 1.0)


def test_read_only_or_undersized_out_is_refused():
    """Bad out= through DLPack never reaches the kernel: a read-only export
    (a read-only numpy buffer exports a read-only versioned capsule) and an
    out of the wrong shape are refused naming `out`, and x is untouched."""
    x = _x()
    before = x.copy()
    frozen = np.zeros_like(x)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match=r"out"):
        rope_mlir.apply(Producer(x), out=Producer(frozen))
    assert not frozen.any()
    small = np.zeros(x.shape[:-1] + (4,), x.dtype)
    with pytest.raises(ValueError, match=r"out"):
        rope_mlir.apply(Producer(x), out=Producer(small))
    assert not small.any()
    assert x.tobytes() == before.tobytes()
    with pytest.raises(ValueError):
        _arrays.to_numpy(Producer(x, device=(2, 0)), "x")
