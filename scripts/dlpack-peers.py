#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""DLPack in, same framework out, with torch and JAX (not in CI: their
wheels are large). Runs each case whose framework is installed and prints
PASS/FAIL/SKIP per case; exits 1 if any failed.

    PYTHONPATH=python /path/to/python-with-torch-and-jax scripts/dlpack-peers.py
"""

from __future__ import annotations

import sys
import traceback

import numpy as np

import rope_mlir

results = []


def case(name):
    def run(function):
        try:
            function()
        except ModuleNotFoundError as error:
            results.append(("SKIP", name, str(error)))
        except Exception:  # noqa: BLE001 - report every failure
            results.append(("FAIL", name, traceback.format_exc()))
        else:
            results.append(("PASS", name, ""))
        return function
    return run


def _x(shape=(2, 5, 3, 8), dtype=np.float32):
    return np.random.default_rng(0).standard_normal(shape).astype(dtype)


def _raises(error, text, function, *args, **kwargs):
    try:
        function(*args, **kwargs)
    except error as raised:
        assert text in str(raised), str(raised)
        return
    raise AssertionError(f"no {error.__name__} ({text})")


@case("torch: apply returns a tensor equal to the numpy path")
def _():
    import torch
    x = _x()
    pos = np.arange(5)[None].repeat(2, 0)
    got = rope_mlir.apply(torch.from_numpy(x), torch.from_numpy(pos))
    assert isinstance(got, torch.Tensor) and got.dtype == torch.float32
    assert got.numpy().tobytes() == rope_mlir.apply(x, pos).tobytes()


@case("torch: out= and out=x written in place, zero-copy")
def _():
    import torch
    x = torch.from_numpy(_x())
    expected = rope_mlir.apply(x.numpy())
    out = torch.zeros_like(x)
    assert rope_mlir.apply(x, out=out) is out
    assert out.numpy().tobytes() == expected.tobytes()
    y = x.clone()
    pointer = y.data_ptr()
    assert rope_mlir.apply(y, out=y) is y and y.data_ptr() == pointer
    assert y.numpy().tobytes() == expected.tobytes()
    kernel = rope_mlir.compile(dtype="f32", rank=4, head_dim=8)
    out = torch.empty_like(x)
    assert kernel(x, out=out) is out
    assert out.numpy().tobytes() == expected.tobytes()


@case("torch: bfloat16 in and out")
def _():
    import ml_dtypes
    import torch
    x = torch.from_numpy(_x()).to(torch.bfloat16)
    got = rope_mlir.apply(x, offset=3)
    assert isinstance(got, torch.Tensor) and got.dtype == torch.bfloat16
    numpy_x = x.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    expected = rope_mlir.apply(numpy_x, offset=3)
    assert got.view(torch.int16).numpy().tobytes() == expected.tobytes()
    out = torch.empty_like(x)
    assert rope_mlir.apply(x, offset=3, out=out) is out
    assert out.view(torch.int16).numpy().tobytes() == expected.tobytes()


@case("torch: strided view, unsupported dtype, CUDA device refused")
def _():
    import torch
    x = torch.from_numpy(_x((2, 3, 5, 8)))
    _raises(ValueError, "x is a non-contiguous view", rope_mlir.apply,
            x.transpose(1, 2))
    _raises(TypeError, "unsupported data type", rope_mlir.apply,
            x.to(torch.complex64))
    _raises(TypeError, "x has the DLPack dtype", rope_mlir.apply,
            x.to(torch.float8_e4m3fn))
    if torch.cuda.is_available():
        _raises(ValueError, "x is on the DLPack device CUDA",
                rope_mlir.apply, x.cuda())


@case("torch: jit function returns tensors")
def _():
    import torch
    f = rope_mlir.jit("""
func.func @add(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %r = linalg.add ins(%a, %b : tensor<?xf32>, tensor<?xf32>) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}""").function("add")
    a = torch.arange(6, dtype=torch.float32)
    got = f(a, a)
    assert isinstance(got, torch.Tensor) and torch.equal(got, a + a)


@case("torch: apply_qk returns tensors equal to two numpy apply calls")
def _():
    import torch
    q = torch.randn(2, 3, 8, 16)
    k = torch.randn(2, 3, 2, 16)
    rq, rk = rope_mlir.apply_qk(q, k, offset=5)
    assert isinstance(rq, torch.Tensor) and isinstance(rk, torch.Tensor)
    assert np.array_equal(rq.numpy(), rope_mlir.apply(q.numpy(), offset=5))
    assert np.array_equal(rk.numpy(), rope_mlir.apply(k.numpy(), offset=5))


@case("jax: apply returns a JAX array equal to the numpy path")
def _():
    import jax
    import jax.numpy as jnp
    x = _x()
    got = rope_mlir.apply(jnp.asarray(x), jnp.asarray(np.arange(5)[None]
                                                      .repeat(2, 0)))
    assert isinstance(got, jax.Array) and got.dtype == jnp.float32
    expected = rope_mlir.apply(x, np.arange(5)[None].repeat(2, 0))
    assert np.asarray(got).tobytes() == expected.tobytes()


@case("jax: bfloat16, and out= refused (JAX arrays are read-only)")
def _():
    import jax.numpy as jnp
    import ml_dtypes
    x = jnp.asarray(_x()).astype(jnp.bfloat16)
    got = rope_mlir.apply(x)
    assert got.dtype == jnp.bfloat16
    expected = rope_mlir.apply(np.asarray(x).astype(ml_dtypes.bfloat16))
    assert np.asarray(got).tobytes() == expected.tobytes()
    _raises(ValueError, "read-only", rope_mlir.apply, x, out=x)
    _raises(ValueError, "out is read-only", rope_mlir.apply, x,
            out=jnp.zeros_like(x))


for status, name, detail in results:
    print(f"{status}  {name}" + (f"\n{detail}" if status == "FAIL" else
                                 f"  ({detail})" if detail else ""))
failed = sum(status == "FAIL" for status, _, _ in results)
print(f"{len(results) - failed} of {len(results)} passed or skipped, "
      f"{failed} failed")
sys.exit(1 if failed else 0)
