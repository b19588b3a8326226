# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""rope_mlir.jit: any module of tensor functions, compiled in process and
called on numpy arrays (python/rope_mlir/compiled.py).

Each module is hand-written in the forms frontends emit (torch-mlir, JAX
through IREE) and each result is compared with numpy, in float64 where it is
numerics. Then the ownership of returned buffers (returned arguments,
constants, slices, aliasing results, dynamic shapes: no leak, no double
free, inputs never written), and every kind of bad input.
"""

from __future__ import annotations

import ctypes
import os
import pathlib
import re
import signal
import subprocess
import sys
import textwrap

import ml_dtypes
import numpy as np
import pytest

import rope_mlir
from rope_mlir import _jit, compiled, reference

PACKAGE_DIR = pathlib.Path(rope_mlir.__file__).resolve().parents[1]
F32, F64 = np.float32, np.float64


def _random(shape, dtype=F32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _close(actual, expected, rtol, atol=0.0):
    np.testing.assert_allclose(np.asarray(actual, F64), expected,
                               rtol=rtol, atol=atol)


def _run(module: str, name: str, *args, pipeline=None):
    return rope_mlir.jit(module, pipeline).function(name)(*args)


# -- shapes and results ----------------------------------------------------

ADD = """
func.func @add_static(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %e = tensor.empty() : tensor<2x3xf32>
  %r = linalg.add ins(%a, %b : tensor<2x3xf32>, tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
func.func @add_dynamic(%a: tensor<?x?xf64>, %b: tensor<?x?xf64>) -> tensor<?x?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xf64>
  %n = tensor.dim %a, %c1 : tensor<?x?xf64>
  %e = tensor.empty(%m, %n) : tensor<?x?xf64>
  %r = linalg.add ins(%a, %b : tensor<?x?xf64>, tensor<?x?xf64>) outs(%e : tensor<?x?xf64>) -> tensor<?x?xf64>
  return %r : tensor<?x?xf64>
}
func.func private @helper(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  return %a : tensor<2x3xf32>
}
"""


def test_static_and_dynamic_shapes():
    module = rope_mlir.jit(ADD)
    assert module.functions == ("add_dynamic", "add_static")  # not @helper
    a, b = _random((2, 3)), _random((2, 3), seed=1)
    out = module.function("add_static")(a, b)
    assert out.dtype == F32 and out.shape == (2, 3)
    _close(out, a.astype(F64) + b, rtol=1e-6)
    dynamic = module.function("add_dynamic")
    for shape in [(1, 1), (3, 17), (64, 5), (0, 4)]:
        a, b = _random(shape, F64, 2), _random(shape, F64, 3)
        out = dynamic(a, b)
        assert out.shape == shape and out.dtype == F64
        np.testing.assert_array_equal(out, a + b)


def test_function_is_cached_and_describes_its_signature():
    module = rope_mlir.jit(ADD)
    f = module.function("add_dynamic")
    assert module.function("add_dynamic") is f
    (a, b), (r,) = f.arguments, f.results
    assert a.shape == (None, None) and a.dtype == F64 and a.text == \
        "tensor<?x?xf64>"
    assert r.rank == 2 and r.element == "f64"
    assert "add_dynamic" in repr(f)


def test_non_contiguous_arguments_are_copied_not_misread():
    a = _random((3, 2)).T          # a transposed view, shape (2, 3)
    b = _random((2, 6))[:, ::2]    # a strided view
    assert not a.flags.c_contiguous and not b.flags.c_contiguous
    _close(_run(ADD, "add_static", a, b), a.astype(F64) + b, rtol=1e-6)


def test_calls_from_several_threads():
    import concurrent.futures
    f = rope_mlir.jit(OWNERSHIP).function("aliasing_results")

    def work(seed):
        for n in range(1, 60):
            a = _random(n, seed=seed)
            e1, e2 = f(a)
            np.testing.assert_array_equal(e1, e2)
            _close(e1, np.exp(a.astype(F64)), rtol=1e-6)
        return seed

    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        assert sorted(pool.map(work, range(8))) == list(range(8))


SEVERAL = """
func.func @reshape(%a: tensor<2x6xi32>) -> (tensor<12xi32>, tensor<2x2x3xi32>) {
  %c = tensor.collapse_shape %a [[0, 1]] : tensor<2x6xi32> into tensor<12xi32>
  %x = tensor.expand_shape %a [[0], [1, 2]] output_shape [2, 2, 3] : tensor<2x6xi32> into tensor<2x2x3xi32>
  return %c, %x : tensor<12xi32>, tensor<2x2x3xi32>
}
func.func @stats(%a: tensor<?xf64>, %scale: f64) -> (f64, tensor<?xf64>, i64) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?xf64>
  %zero = arith.constant 0.0 : f64
  %init = tensor.empty() : tensor<f64>
  %acc = linalg.fill ins(%zero : f64) outs(%init : tensor<f64>) -> tensor<f64>
  %sum = linalg.reduce ins(%a : tensor<?xf64>) outs(%acc : tensor<f64>) dimensions = [0]
    (%x: f64, %y: f64) {
      %s = arith.addf %x, %y : f64
      linalg.yield %s : f64
    }
  %total = tensor.extract %sum[] : tensor<f64>
  %e = tensor.empty(%n) : tensor<?xf64>
  %scaled = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                            iterator_types = ["parallel"]}
      ins(%a : tensor<?xf64>) outs(%e : tensor<?xf64>) {
  ^bb0(%x: f64, %o: f64):
    %m = arith.mulf %x, %scale : f64
    linalg.yield %m : f64
  } -> tensor<?xf64>
  %count = arith.index_cast %n : index to i64
  return %total, %scaled, %count : f64, tensor<?xf64>, i64
}
func.func @positive(%x: f32) -> i1 {
  %zero = arith.constant 0.0 : f32
  %c = arith.cmpf ogt, %x, %zero : f32
  return %c : i1
}
func.func @nothing(%a: tensor<4xf32>) {
  return
}
"""


def test_several_results_tensors_and_scalars():
    module = rope_mlir.jit(SEVERAL)
    a = np.arange(12, dtype=np.int32).reshape(2, 6)
    flat, expanded = module.function("reshape")(a)
    np.testing.assert_array_equal(flat, a.reshape(12))
    np.testing.assert_array_equal(expanded, a.reshape(2, 2, 3))
    x = _random(37, F64)
    total, scaled, count = module.function("stats")(x, 2.5)
    assert isinstance(total, np.float64) and isinstance(count, np.int64)
    np.testing.assert_allclose(total, x.sum(), rtol=1e-12)
    np.testing.assert_array_equal(scaled, x * 2.5)
    assert count == 37
    positive = module.function("positive")
    assert positive(np.float32(2.0)) is np.True_
    assert positive(-1) is np.False_
    assert module.function("nothing")(np.zeros(4, F32)) is None


# -- what frontends emit ---------------------------------------------------

COMPLEX = """
#map = affine_map<(d0, d1) -> (d0, d1)>
// torch-mlir's view_as_complex rotation: (x0 + i x1) * (cos + i sin).
func.func @rotate(%x0: tensor<?x8xf32>, %x1: tensor<?x8xf32>, %c: tensor<?x8xf32>, %s: tensor<?x8xf32>)
    -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x0, %c0 : tensor<?x8xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %r:2 = linalg.generic {indexing_maps = [#map, #map, #map, #map, #map, #map],
                         iterator_types = ["parallel", "parallel"]}
      ins(%x0, %x1, %c, %s : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>)
      outs(%e, %e : tensor<?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%a: f32, %b: f32, %cos: f32, %sin: f32, %o0: f32, %o1: f32):
    %z = complex.create %a, %b : complex<f32>
    %w = complex.create %cos, %sin : complex<f32>
    %p = complex.mul %z, %w : complex<f32>
    %d = complex.div %p, %w : complex<f32>
    %q = complex.add %p, %d : complex<f32>
    %m = complex.abs %q : complex<f32>
    %re = complex.re %p : complex<f32>
    %im = complex.im %p : complex<f32>
    %im2 = arith.addf %im, %m : f32
    linalg.yield %re, %im2 : f32, f32
  } -> (tensor<?x8xf32>, tensor<?x8xf32>)
  return %r#0, %r#1 : tensor<?x8xf32>, tensor<?x8xf32>
}
"""


def test_complex_arithmetic_in_a_generic():
    x0, x1 = _random((5, 8), seed=1), _random((5, 8), seed=2)
    angle = _random((5, 8), seed=3)
    c, s = np.cos(angle), np.sin(angle)
    re, im = _run(COMPLEX, "rotate", x0, x1, c, s)
    z = x0.astype(F64) + 1j * x1.astype(F64)
    w = c.astype(F64) + 1j * s.astype(F64)
    p = z * w
    _close(re, p.real, rtol=1e-5, atol=1e-6)
    _close(im, p.imag + np.abs(p + p / w), rtol=1e-5, atol=1e-5)


ASSERT = """
func.func @checked_add(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?xf32>
  %m = tensor.dim %b, %c0 : tensor<?xf32>
  %eq = arith.cmpi eq, %n, %m : index
  cf.assert %eq, "checked_add: mismatched sizes"
  %e = tensor.empty(%n) : tensor<?xf32>
  %r = linalg.add ins(%a, %b : tensor<?xf32>, tensor<?xf32>) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}
"""


def test_cf_assert_that_holds():
    a, b = _random(9), _random(9, seed=1)
    _close(_run(ASSERT, "checked_add", a, b), a.astype(F64) + b, rtol=1e-6)


def test_cf_assert_that_fails_raises_check_error_with_its_message():
    # The default pipeline lowers cf.assert to the runtime's trap
    # (runtime-traps=true): the call returns with CheckError, the process
    # and the module go on.
    m = rope_mlir.jit(ASSERT)
    with pytest.raises(rope_mlir.CheckError,
                       match="checked_add: mismatched sizes"):
        m.function("checked_add")(np.ones(3, np.float32),
                                  np.ones(4, np.float32))
    a = _random(5)
    _close(m.function("checked_add")(a, a), 2 * a.astype(F64), rtol=1e-6)


def test_cf_assert_without_runtime_traps_aborts_the_process():
    # A custom pipeline without runtime-traps gets upstream's lowering:
    # print the message and abort (no exception can unwind through it).
    result = _in_subprocess(f"""
        m = rope_mlir.jit({ASSERT!r},
                          "builtin.module(rope-to-llvm-cpu{{emit-c-interface=true}})")
        m.function("checked_add")(np.ones(3, np.float32),
                                  np.ones(4, np.float32))
        """, check=False)
    assert result.returncode == -signal.SIGABRT
    assert "checked_add: mismatched sizes" in result.stdout


RESOURCE = """
func.func @table(%i: tensor<3xi64>) -> tensor<3x2xf32> {
  %t = arith.constant dense_resource<torch_tensor_4_2_torch.float32> : tensor<4x2xf32>
  %e = tensor.empty() : tensor<3x2xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%i : tensor<3xi64>) outs(%e : tensor<3x2xf32>) {
  ^bb0(%k: i64, %o: f32):
    %row = arith.index_cast %k : i64 to index
    %col = linalg.index 1 : index
    %v = tensor.extract %t[%row, %col] : tensor<4x2xf32>
    linalg.yield %v : f32
  } -> tensor<3x2xf32>
  return %r : tensor<3x2xf32>
}
func.func @whole() -> tensor<4x2xf32> {
  %t = arith.constant dense_resource<torch_tensor_4_2_torch.float32> : tensor<4x2xf32>
  return %t : tensor<4x2xf32>
}
"""
_TABLE = np.arange(8, dtype=F32).reshape(4, 2) * 0.5 - 1.0


def _with_resource(text: str) -> str:
    # The blob: 4 bytes of alignment, then the little-endian data.
    blob = "0x04000000" + _TABLE.astype("<f4").tobytes().hex().upper()
    return text + ('{-#\n  dialect_resources: {\n    builtin: {\n'
                   f'      torch_tensor_4_2_torch.float32: "{blob}"\n'
                   '    }\n  }\n#-}\n')


def test_dense_resource_constant_gathered_by_tensor_extract():
    module = rope_mlir.jit(_with_resource(RESOURCE))
    index = np.array([3, 0, 2], dtype=np.int64)
    np.testing.assert_array_equal(module.function("table")(index),
                                  _TABLE[index])
    np.testing.assert_array_equal(module.function("whole")(), _TABLE)


POISON = """
// An out-of-bounds vector transfer pads with ub.poison; only in-bounds
// lanes reach the result.
func.func @first_four(%a: tensor<6xf32>) -> tensor<4xf32> {
  %c2 = arith.constant 2 : index
  %c0 = arith.constant 0 : index
  %p = ub.poison : f32
  %w = vector.transfer_read %a[%c2], %p : tensor<6xf32>, vector<8xf32>
  %s = vector.extract_strided_slice %w {offsets = [0], sizes = [4], strides = [1]} : vector<8xf32> to vector<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %r = vector.transfer_write %s, %e[%c0] {in_bounds = [true]} : vector<4xf32>, tensor<4xf32>
  return %r : tensor<4xf32>
}
"""


def test_ub_poison_from_the_vector_lowering():
    lowered = _jit.lower(POISON, compiled.default_pipeline())
    assert "llvm.mlir.poison : vector<8xf32>" in lowered  # it was ub.poison
    assert "ub." not in lowered
    a = _random(6)
    np.testing.assert_array_equal(_run(POISON, "first_four", a), a[2:6])


PAD = """
func.func @pad(%a: tensor<?x5xf32>) -> tensor<?x9xf32> {
  %v = arith.constant 1.5 : f32
  %p = tensor.pad %a low[1, 2] high[1, 2] {
  ^bb0(%i: index, %j: index):
    tensor.yield %v : f32
  } : tensor<?x5xf32> to tensor<?x9xf32>
  return %p : tensor<?x9xf32>
}
"""


def test_tensor_pad_dynamic():
    a = _random((3, 5))
    np.testing.assert_array_equal(_run(PAD, "pad", a),
                                  np.pad(a, ((1, 1), (2, 2)),
                                         constant_values=1.5))


SLICES = """
func.func @strided(%a: tensor<8x6xf32>) -> tensor<4x3xf32> {
  %r = tensor.extract_slice %a[0, 1] [4, 3] [2, 2] : tensor<8x6xf32> to tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}
func.func @strided_dynamic(%a: tensor<?x?xf32>, %n: index) -> tensor<?x3xf32> {
  %r = tensor.extract_slice %a[1, 0] [%n, 3] [3, 2] : tensor<?x?xf32> to tensor<?x3xf32>
  return %r : tensor<?x3xf32>
}
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %r = tensor.concat dim(1) %a, %b : (tensor<2x3xf32>, tensor<2x?xf32>) -> tensor<2x?xf32>
  return %r : tensor<2x?xf32>
}
// JAX's concatenation: insert_slice into an empty tensor.
func.func @halves(%a: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x8xf32>
  %lo = tensor.extract_slice %a[0, 0] [4, 4] [1, 1] : tensor<4x8xf32> to tensor<4x4xf32>
  %hi = tensor.extract_slice %a[0, 4] [4, 4] [1, 1] : tensor<4x8xf32> to tensor<4x4xf32>
  %x = tensor.insert_slice %hi into %e[0, 0] [4, 4] [1, 1] : tensor<4x4xf32> into tensor<4x8xf32>
  %y = tensor.insert_slice %lo into %x[0, 4] [4, 4] [1, 1] : tensor<4x4xf32> into tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
func.func @insert_strided(%a: tensor<2x2xi64>, %b: tensor<4x4xi64>) -> tensor<4x4xi64> {
  %r = tensor.insert_slice %a into %b[1, 0] [2, 2] [2, 3] : tensor<2x2xi64> into tensor<4x4xi64>
  return %r : tensor<4x4xi64>
}
"""


def test_slices_concat_and_insert():
    module = rope_mlir.jit(SLICES)
    a = _random((8, 6))
    np.testing.assert_array_equal(module.function("strided")(a),
                                  a[0:8:2, 1:6:2])
    b = _random((11, 7))
    np.testing.assert_array_equal(module.function("strided_dynamic")(b, 3),
                                  b[1:10:3, 0:6:2])
    c, d = _random((2, 3)), _random((2, 5), seed=1)
    np.testing.assert_array_equal(module.function("concat")(c, d),
                                  np.concatenate([c, d], 1))
    h = _random((4, 8))
    np.testing.assert_array_equal(module.function("halves")(h),
                                  np.concatenate([h[:, 4:], h[:, :4]], 1))
    small = np.array([[1, 2], [3, 4]], np.int64)
    big = np.arange(16, dtype=np.int64).reshape(4, 4)
    expected = big.copy()
    expected[1:4:2, 0:4:3] = small
    np.testing.assert_array_equal(
        module.function("insert_strided")(small, big), expected)
    np.testing.assert_array_equal(big, np.arange(16).reshape(4, 4))


LINALG = """
func.func @transpose(%a: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %e = tensor.empty() : tensor<4x2x3xf32>
  %r = linalg.transpose ins(%a : tensor<2x3x4xf32>) outs(%e : tensor<4x2x3xf32>) permutation = [2, 0, 1]
  return %r : tensor<4x2x3xf32>
}
func.func @broadcast(%a: tensor<?xf64>, %like: tensor<2x?xf64>) -> tensor<2x?xf64> {
  %c1 = arith.constant 1 : index
  %n = tensor.dim %like, %c1 : tensor<2x?xf64>
  %e = tensor.empty(%n) : tensor<2x?xf64>
  %r = linalg.broadcast ins(%a : tensor<?xf64>) outs(%e : tensor<2x?xf64>) dimensions = [0]
  return %r : tensor<2x?xf64>
}
func.func @batch_matmul(%a: tensor<?x3x4xf32>, %b: tensor<?x4x5xf32>) -> tensor<?x3x5xf32> {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %n = tensor.dim %a, %c0 : tensor<?x3x4xf32>
  %e = tensor.empty(%n) : tensor<?x3x5xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x3x5xf32>) -> tensor<?x3x5xf32>
  %r = linalg.batch_matmul ins(%a, %b : tensor<?x3x4xf32>, tensor<?x4x5xf32>) outs(%f : tensor<?x3x5xf32>) -> tensor<?x3x5xf32>
  return %r : tensor<?x3x5xf32>
}
func.func @matmul_f16(%a: tensor<3x8xf16>, %b: tensor<8x5xf16>) -> tensor<3x5xf16> {
  %z = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<3x5xf16>
  %f = linalg.fill ins(%z : f16) outs(%e : tensor<3x5xf16>) -> tensor<3x5xf16>
  %r = linalg.matmul ins(%a, %b : tensor<3x8xf16>, tensor<8x5xf16>) outs(%f : tensor<3x5xf16>) -> tensor<3x5xf16>
  return %r : tensor<3x5xf16>
}
func.func @row_sum_bf16(%a: tensor<3x?xbf16>) -> tensor<3xbf16> {
  %z = arith.constant 0.0 : bf16
  %e = tensor.empty() : tensor<3xbf16>
  %f = linalg.fill ins(%z : bf16) outs(%e : tensor<3xbf16>) -> tensor<3xbf16>
  %r = linalg.reduce ins(%a : tensor<3x?xbf16>) outs(%f : tensor<3xbf16>) dimensions = [1]
    (%x: bf16, %acc: bf16) {
      %s = arith.addf %x, %acc : bf16
      linalg.yield %s : bf16
    }
  return %r : tensor<3xbf16>
}
func.func @softmax(%a: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %c1 = arith.constant 1 : index
  %n = tensor.dim %a, %c1 : tensor<2x?xf32>
  %e = tensor.empty(%n) : tensor<2x?xf32>
  %r = linalg.softmax dimension(1) ins(%a : tensor<2x?xf32>) outs(%e : tensor<2x?xf32>) -> tensor<2x?xf32>
  return %r : tensor<2x?xf32>
}
func.func @less(%a: tensor<4x16xf32>, %b: tensor<4x16xf32>) -> tensor<4x16xi1> {
  %e = tensor.empty() : tensor<4x16xi1>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<4x16xf32>, tensor<4x16xf32>) outs(%e : tensor<4x16xi1>) {
  ^bb0(%x: f32, %y: f32, %o: i1):
    %c = arith.cmpf olt, %x, %y : f32
    linalg.yield %c : i1
  } -> tensor<4x16xi1>
  return %r : tensor<4x16xi1>
}
func.func @select(%m: tensor<?xi1>, %a: tensor<?xi32>, %b: tensor<?xi32>) -> tensor<?xi32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?xi32>
  %e = tensor.empty(%n) : tensor<?xi32>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%m, %a, %b : tensor<?xi1>, tensor<?xi32>, tensor<?xi32>) outs(%e : tensor<?xi32>) {
  ^bb0(%c: i1, %x: i32, %y: i32, %o: i32):
    %s = arith.select %c, %x, %y : i32
    linalg.yield %s : i32
  } -> tensor<?xi32>
  return %r : tensor<?xi32>
}
func.func @math(%a: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %e = tensor.empty() : tensor<4x16xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x16xf32>) outs(%e : tensor<4x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %t = math.tanh %x : f32
    %er = math.erf %t : f32
    %ab = math.absf %x : f32
    %q = math.rsqrt %ab : f32
    %p = math.powf %ab, %er : f32
    %s = arith.addf %q, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x16xf32>
  return %r : tensor<4x16xf32>
}
"""


def _erf(x):
    import math
    return np.vectorize(math.erf)(x)


def test_linalg_named_ops_and_math():
    module = rope_mlir.jit(LINALG)
    a = _random((2, 3, 4))
    np.testing.assert_array_equal(module.function("transpose")(a),
                                  a.transpose(2, 0, 1))
    v = _random(7, F64)
    np.testing.assert_array_equal(
        module.function("broadcast")(v, np.zeros((2, 7))),
        np.broadcast_to(v, (2, 7)))
    x, y = _random((6, 3, 4)), _random((6, 4, 5), seed=1)
    _close(module.function("batch_matmul")(x, y),
           x.astype(F64) @ y.astype(F64), rtol=1e-5, atol=1e-5)
    h1, h2 = _random((3, 8), np.float16), _random((8, 5), np.float16, 1)
    _close(module.function("matmul_f16")(h1, h2),
           h1.astype(F64) @ h2.astype(F64), rtol=1e-2, atol=1e-2)
    bf = _random((3, 10), ml_dtypes.bfloat16)
    out = module.function("row_sum_bf16")(bf)
    assert out.dtype == np.dtype(ml_dtypes.bfloat16)
    _close(out, bf.astype(F64).sum(1), rtol=0.05, atol=0.05)
    s = _random((2, 9))
    e = np.exp(s.astype(F64) - s.max(1, keepdims=True))
    _close(module.function("softmax")(s), e / e.sum(1, keepdims=True),
           rtol=1e-5)
    p, q = _random((4, 16)), _random((4, 16), seed=1)
    mask = module.function("less")(p, q)
    assert mask.dtype == np.bool_
    np.testing.assert_array_equal(mask, p < q)
    m = np.array([True, False, True, False, False])
    i, j = np.arange(5, dtype=np.int32), -np.arange(5, dtype=np.int32)
    np.testing.assert_array_equal(module.function("select")(m, i, j),
                                  np.where(m, i, j))
    f = _random((4, 16)).astype(F64)
    t = np.tanh(f)
    _close(module.function("math")(f.astype(F32)),
           1 / np.sqrt(np.abs(f)) + np.abs(f) ** _erf(t), rtol=1e-4)


ROPE = """
func.func @rotate(%x: tensor<?x4x64xf32>, %p: tensor<?xi64>) -> tensor<?x4x64xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x4x64xf32>
  %init = tensor.empty(%n) : tensor<?x4x64xf32>
  %y = rope.apply ins(%x : tensor<?x4x64xf32>) positions(%p : tensor<?xi64>)
         outs(%init : tensor<?x4x64xf32>) {freqs = #rope.default<base = 500000.0>}
         -> tensor<?x4x64xf32>
  return %y : tensor<?x4x64xf32>
}
// The destination is the argument itself: in place on a tensor the caller
// still holds, so it must be copied, never written.
func.func @rotate_into_argument(%x: tensor<?x4x64xf32>, %p: tensor<?xi64>) -> tensor<?x4x64xf32> {
  %y = rope.apply ins(%x : tensor<?x4x64xf32>) positions(%p : tensor<?xi64>)
         outs(%x : tensor<?x4x64xf32>) {freqs = #rope.default<base = 500000.0>}
         -> tensor<?x4x64xf32>
  return %y : tensor<?x4x64xf32>
}
"""


def test_module_with_rope_apply():
    module = rope_mlir.jit(ROPE)
    x = _random((13, 4, 64))
    positions = np.arange(13, dtype=np.int64) * 37 - 5
    expected = reference.apply(x, positions, base=500000.0)
    for name in ("rotate", "rotate_into_argument"):
        before = x.copy()
        out = module.function(name)(x, positions)
        assert reference.relative_error(out, expected) < 1e-6, name
        np.testing.assert_array_equal(x, before)  # the input is untouched


# -- ownership of returned buffers -----------------------------------------

OWNERSHIP = """
func.func @argument(%a: tensor<?xf32>) -> tensor<?xf32> {
  return %a : tensor<?xf32>
}
func.func @argument_twice(%a: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  return %a, %a : tensor<?xf32>, tensor<?xf32>
}
func.func @constant() -> tensor<3xf32> {
  %c = arith.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  return %c : tensor<3xf32>
}
func.func @slice_of_argument(%a: tensor<?x6xf32>) -> tensor<?x3xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %n = tensor.dim %a, %c0 : tensor<?x6xf32>
  %h = arith.divui %n, %c2 : index
  %r = tensor.extract_slice %a[0, 1] [%h, 3] [2, 2] : tensor<?x6xf32> to tensor<?x3xf32>
  return %r : tensor<?x3xf32>
}
// One allocation returned twice (the callee returns the same buffer).
func.func @aliasing_results(%a: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?xf32>
  %i = tensor.empty(%n) : tensor<?xf32>
  %e = linalg.exp ins(%a : tensor<?xf32>) outs(%i : tensor<?xf32>) -> tensor<?xf32>
  return %e, %e : tensor<?xf32>, tensor<?xf32>
}
// A result and a slice of it.
func.func @result_and_its_slice(%a: tensor<8xf32>) -> (tensor<8xf32>, tensor<4xf32>) {
  %i = tensor.empty() : tensor<8xf32>
  %e = linalg.exp ins(%a : tensor<8xf32>) outs(%i : tensor<8xf32>) -> tensor<8xf32>
  %s = tensor.extract_slice %e[2] [4] [1] : tensor<8xf32> to tensor<4xf32>
  return %e, %s : tensor<8xf32>, tensor<4xf32>
}
// Updated in place by its ops (outs is the argument).
func.func @in_place(%a: tensor<?xf32>) -> tensor<?xf32> {
  %e = linalg.exp ins(%a : tensor<?xf32>) outs(%a : tensor<?xf32>) -> tensor<?xf32>
  return %e : tensor<?xf32>
}
// The size of the result depends on the data.
func.func @first_n(%a: tensor<?xf32>, %n: tensor<i64>) -> tensor<?xf32> {
  %k = tensor.extract %n[] : tensor<i64>
  %m = arith.index_cast %k : i64 to index
  %r = tensor.extract_slice %a[0] [%m] [1] : tensor<?xf32> to tensor<?xf32>
  return %r : tensor<?xf32>
}
"""


def test_ownership_values():
    module = rope_mlir.jit(OWNERSHIP)
    a = _random(10)
    out = module.function("argument")(a)
    np.testing.assert_array_equal(out, a)
    # The result is the code's own buffer (adopted, not copied) or a copy:
    # never the argument's memory, and writable by its new owner.
    assert not np.shares_memory(out, a) and out.flags.writeable
    first, second = module.function("argument_twice")(a)
    np.testing.assert_array_equal(first, a)
    np.testing.assert_array_equal(second, a)
    assert not np.shares_memory(first, second)
    constant = module.function("constant")
    c = constant()
    c[:] = -1  # the caller's copy: the module's constant stays as it was
    np.testing.assert_array_equal(constant(), [1, 2, 3])
    b = _random((9, 6))
    np.testing.assert_array_equal(module.function("slice_of_argument")(b),
                                  b[0:8:2, 1:6:2])
    e1, e2 = module.function("aliasing_results")(a)
    _close(e1, np.exp(a.astype(F64)), rtol=1e-6)
    np.testing.assert_array_equal(e1, e2)
    assert not np.shares_memory(e1, e2)
    whole, part = module.function("result_and_its_slice")(a[:8])
    np.testing.assert_array_equal(part, whole[2:6])
    before = a.copy()
    _close(module.function("in_place")(a), np.exp(before.astype(F64)),
           rtol=1e-6)
    np.testing.assert_array_equal(a, before)  # arguments are read-only
    for n in (0, 3, 10):
        out = module.function("first_n")(a, np.array(n, np.int64))
        np.testing.assert_array_equal(out, a[:n])


def _in_subprocess(code: str, check: bool = True):
    """Runs `code` (numpy as np, rope_mlir imported) in a fresh interpreter
    on this package: a crash (a double free aborts in glibc) fails one test,
    not the run."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(PACKAGE_DIR)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH")
                              else []))
    program = "import numpy as np, rope_mlir\n" + textwrap.dedent(code)
    result = subprocess.run([sys.executable, "-c", program], env=env,
                            capture_output=True, text=True, timeout=600)
    if check and result.returncode != 0:
        pytest.fail(f"subprocess exited with {result.returncode}:\n"
                    f"{result.stdout}\n{result.stderr}")
    return result


def test_ownership_no_leak_no_double_free():
    # Every function of OWNERSHIP, 300 times on 1 MiB arguments: the heap
    # (glibc's mallinfo2: small chunks and mmap'ed blocks) must not grow by
    # what one leaked result per call would add (300 MiB), and glibc aborts
    # on a double free of any of them.
    result = _in_subprocess(f"""
        import ctypes
        class MallInfo2(ctypes.Structure):
            _fields_ = [(n, ctypes.c_size_t) for n in (
                "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                "fsmblks", "uordblks", "fordblks", "keepcost")]
        libc = ctypes.CDLL(None)
        libc.mallinfo2.restype = MallInfo2
        def heap():
            info = libc.mallinfo2()
            return info.uordblks + info.hblkhd
        m = rope_mlir.jit({OWNERSHIP!r})
        a = np.ones(1 << 18, np.float32)       # 1 MiB
        b = np.ones((1 << 16, 6), np.float32)   # 1.5 MiB
        calls = [("argument", (a,)), ("argument_twice", (a,)),
                 ("constant", ()), ("slice_of_argument", (b,)),
                 ("aliasing_results", (a,)),
                 ("result_and_its_slice", (a[:8],)), ("in_place", (a,)),
                 ("first_n", (a, np.array(1 << 17, np.int64)))]
        fs = [(m.function(n), args) for n, args in calls]
        for f, args in fs:                      # warm up
            f(*args)
        start = heap()
        for _ in range(300):
            for f, args in fs:
                f(*args)
        grown = heap() - start
        print("grown", grown)
        assert grown < (16 << 20), grown
        print("ok")
        """)
    assert "ok" in result.stdout, result.stdout + result.stderr


def test_results_are_freed_once_per_buffer(monkeypatch):
    # The rule itself, on the descriptors the code returns: one free per
    # distinct malloc'ed buffer; none for arguments' memory.
    freed = []
    monkeypatch.setattr(compiled, "_libc", _Recorder(freed))
    module = rope_mlir.jit(OWNERSHIP)
    a = _random(10)
    module.function("aliasing_results")(a)
    assert len(freed) == 1                      # two results, one buffer
    freed.clear()
    module.function("argument_twice")(a)
    assert len(freed) == 2 and freed[0] != freed[1]   # two clones
    freed.clear()
    module.function("result_and_its_slice")(a[:8])
    assert len(freed) == 2
    # A contiguous result the caller owns is adopted by the returned array
    # (no copy): freed when the array is collected, not before.
    freed.clear()
    out = module.function("in_place")(a)
    assert freed == []
    view = out[2:5]
    del out
    assert freed == []                          # a view keeps it alive
    del view
    assert len(freed) == 1
    # A pipeline without deallocation returns the argument's own buffer
    # (and leaks): it must not be freed.
    freed.clear()
    plain = ("builtin.module(one-shot-bufferize{bufferize-function-boundaries "
             "function-boundary-type-conversion=identity-layout-map}, "
             "convert-linalg-to-loops, expand-strided-metadata, "
             "finalize-memref-to-llvm, func.func(llvm-request-c-wrappers), "
             "convert-func-to-llvm, convert-arith-to-llvm, "
             "reconcile-unrealized-casts)")
    out = rope_mlir.jit(OWNERSHIP.split("func.func @argument_twice")[0],
                        plain).function("argument")(a)
    np.testing.assert_array_equal(out, a)
    assert freed == []


class _Recorder:
    """Stands in for libc: records frees and performs them."""

    def __init__(self, freed):
        self._freed = freed
        self._libc = ctypes.CDLL(None)
        self._libc.free.argtypes = [ctypes.c_void_p]

    def free(self, pointer):
        self._freed.append(pointer)
        self._libc.free(pointer)


# -- pipeline --------------------------------------------------------------

def test_default_pipeline_follows_the_library():
    # Flips to rope-optimize when lib/Pipelines registers it.
    assert _jit.is_registered("rope-to-llvm-cpu")
    assert not _jit.is_registered("no-such-pipeline")
    assert not _jit.is_registered("")
    with pytest.raises(TypeError, match="name must be a str"):
        _jit.is_registered(None)
    with pytest.raises(ValueError, match="NUL"):
        _jit.is_registered("rope-optimize\0x")
    default = compiled.default_pipeline()
    assert ("rope-optimize" in default) == _jit.is_registered("rope-optimize")
    # The vector widths follow the host (AVX-512: twice AVX2's defaults),
    # and so do bf16 products (AVX512-BF16: vdpbf16ps pairs).
    widths = compiled._host_vector_options()
    assert widths == (
        (" contraction-vector-bits=512 elementwise-max-lanes=32"
         if _jit.host_has_feature("avx512f") else "") +
        (" contraction-bf16-products=avx512-dot"
         if _jit.host_has_feature("avx512bf16") else ""))
    assert default.endswith(
        "rope-to-llvm-cpu{emit-c-interface=true runtime-traps=true" + widths +
        "})")
    assert compiled.default_pipeline(checked=True).endswith(
        "rope-to-llvm-cpu{emit-c-interface=true runtime-traps=true" + widths +
        " checked=true})")
    assert rope_mlir.jit(ADD).pipeline == default


def test_default_pipeline_is_single_threaded():
    lowered = _jit.lower(ROPE, compiled.default_pipeline())
    assert "omp." not in lowered and "__kmpc" not in lowered


def test_explicit_pipeline():
    module = rope_mlir.jit(
        ADD, "builtin.module(rope-to-llvm-cpu{emit-c-interface=true "
             "vectorize-contractions=false})")
    a = _random((2, 3))
    np.testing.assert_array_equal(module.function("add_static")(a, a), a + a)


# -- bad input -------------------------------------------------------------

@pytest.mark.parametrize("text, message", [
    ("func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %b : "
     "tensor<4xf32>\n}", r'rope-input":2:10\): use of undeclared SSA value'),
    ("func.func @f(%a: tensor<4xf32>) -> tensor<4xf64> {\n  return %a : "
     "tensor<4xf32>\n}", r"type of return operand 0"),
    ("func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
     "  %r = tosa.abs %a : (tensor<4xf32>) -> tensor<4xf32>\n"
     "  return %r : tensor<4xf32>\n}", r'rope-input":2:8\): op was not bufferized'),
])
def test_compile_errors_carry_the_diagnostics(text, message):
    with pytest.raises(rope_mlir.CompileError, match=message):
        rope_mlir.jit(text)


def test_bad_pipeline_and_arguments_of_jit():
    with pytest.raises(rope_mlir.CompileError, match="invalid pass pipeline"):
        rope_mlir.jit(ADD, "builtin.module(no-such-pass)")
    with pytest.raises(TypeError, match="module_text must be a str"):
        rope_mlir.jit(b"module {}")
    with pytest.raises(TypeError, match="pipeline must be a str"):
        rope_mlir.jit(ADD, 3)
    with pytest.raises(ValueError, match="opt_level"):
        rope_mlir.jit(ADD, opt_level=4)


def test_unknown_function_lists_the_available_ones():
    module = rope_mlir.jit(ADD)
    with pytest.raises(KeyError, match=r"no public function @helper.*"
                       r"@add_dynamic, @add_static"):
        module.function("helper")  # private: not callable
    with pytest.raises(rope_mlir.FunctionNotFoundError, match="@nope"):
        module.function("nope")


UNSUPPORTED = """
func.func @memref_arg(%a: memref<4xf32>) {
  return
}
func.func @unranked(%a: tensor<*xf32>) -> tensor<*xf32> {
  return %a : tensor<*xf32>
}
func.func @half_scalar(%a: f16) -> f16 {
  return %a : f16
}
func.func @complex_tensor(%a: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  return %a : tensor<4xcomplex<f32>>
}
func.func @fine(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
"""


@pytest.mark.parametrize("name, message", [
    ("memref_arg", r"argument 0 has type memref<4xf32> \(only ranked "
                   r"tensors and scalars"),
    ("unranked", r"argument 0 has type tensor<\*xf32>"),
    ("half_scalar", r"argument 0 has type f16 \(f16 scalars are not"),
    ("complex_tensor", r"tensors of complex<f32> are not supported"),
])
def test_unsupported_signatures(name, message):
    module = rope_mlir.jit(UNSUPPORTED)
    with pytest.raises(TypeError, match=message):
        module.function(name)
    module.function("fine")  # the rest of the module is usable


def test_pipeline_without_c_interface():
    module = rope_mlir.jit(ADD, "builtin.module(rope-to-llvm-cpu)")
    with pytest.raises(ValueError, match="no C interface for @add_static"):
        module.function("add_static")


@pytest.mark.parametrize("args, error, message", [
    ((), TypeError, r"@add_static takes 2 arguments \(tensor<2x3xf32>, "
                    r"tensor<2x3xf32>\), got 0"),
    (("a", "b"), TypeError, r"argument 0 \(tensor<2x3xf32>\) must be a numpy "
                            r"array, got str"),
    (([[1.0] * 3] * 2, "b"), TypeError, r"must be a numpy array, got list"),
    ((np.zeros((2, 3)), np.zeros((2, 3), F32)), TypeError,
     r"argument 0 \(tensor<2x3xf32>\) has dtype float64, expected float32"),
    ((np.zeros((2, 3), F32), np.zeros((2, 3), ">f4")), TypeError,
     r"argument 1 .* has dtype >f4, expected float32"),
    ((np.zeros((2, 3), F32), np.zeros((6,), F32)), ValueError,
     r"argument 1 \(tensor<2x3xf32>\) has rank 1 \(shape \(6,\)\), "
     r"expected rank 2"),
    ((np.zeros((3, 2), F32), np.zeros((2, 3), F32)), ValueError,
     r"argument 0 \(tensor<2x3xf32>\) has shape \(3, 2\), expected \(2, 3\)"),
])
def test_bad_arguments_static(args, error, message):
    f = rope_mlir.jit(ADD).function("add_static")
    with pytest.raises(error, match=message):
        f(*args)


def test_bad_arguments_dynamic_and_scalar():
    module = rope_mlir.jit(SEVERAL + PAD.replace("@pad", "@pad2"))
    pad = module.function("pad2")
    with pytest.raises(ValueError, match=r"has shape \(3, 4\), expected "
                       r"\('\?', 5\)"):
        pad(np.zeros((3, 4), F32))
    with pytest.raises(ValueError, match="has rank 1"):
        pad(np.zeros(5, F32))
    stats = module.function("stats")
    x = np.zeros(3)
    with pytest.raises(TypeError, match=r"argument 1 \(f64\) must be a real "
                       r"number, got True"):
        stats(x, True)
    with pytest.raises(TypeError, match=r"argument 1 \(f64\) must be a real "
                       r"number, got '1'"):
        stats(x, "1")
    positive = module.function("positive")
    with pytest.raises(TypeError, match="must be a real number"):
        positive(np.zeros(1, F32))
    strided = rope_mlir.jit(SLICES).function("strided_dynamic")
    with pytest.raises(TypeError, match=r"argument 1 \(index\) must be an "
                       r"integer, got 2.0"):
        strided(np.zeros((8, 8), F32), 2.0)
    with pytest.raises(ValueError, match=r"argument 1 \(index\) = 9223372036"
                       r"854775808 does not fit index"):
        strided(np.zeros((8, 8), F32), 1 << 63)
    with pytest.raises(TypeError, match="function name must be a str"):
        module.function(1)


def test_rejected_arguments_run_nothing():
    # A rejected call must not reach the code: the in-place function would
    # otherwise have computed into a copy and returned; nothing is returned
    # and the argument is untouched.
    f = rope_mlir.jit(OWNERSHIP).function("in_place")
    a = np.zeros((2, 2), F32)
    with pytest.raises(ValueError, match="rank 2"):
        f(a)
    np.testing.assert_array_equal(a, 0)


def test_c_api_of_signatures_checks_its_arguments():
    lib = _jit._library()
    error = ctypes.c_void_p()

    def message():
        return _jit._take_string(lib, error.value)

    assert not lib.ropeJitFunctionType(None, b"f", ctypes.byref(error))
    assert message() == "module is NULL"
    module = _jit.compile_module(ADD, compiled.default_pipeline())
    assert not lib.ropeJitFunctionType(module._handle, None,
                                       ctypes.byref(error))
    assert message() == "name is NULL"
    assert not lib.ropeJitFunctionType(module._handle, b"f", None)
    assert not lib.ropeJitFunctionNames(None, ctypes.byref(error))
    assert message() == "module is NULL"
    assert lib.ropeJitIsRegistered(None) == 0
    assert not lib.ropeJitCompileWithFlags(ADD.encode(), None, 0, 6,
                                           ctypes.byref(error))
    assert message() == "unknown flags 6"
    assert not lib.ropeJitCompileWithFlags(None, None, 0, 1,
                                           ctypes.byref(error))
    assert message() == "source is NULL"
    # The signature as recorded before lowering, and the C interface.
    signature = module.function_type("add_dynamic")
    assert signature["arguments"][0] == {
        "type": "tensor<?x?xf64>", "kind": "tensor", "element": "f64",
        "shape": [None, None]}
    assert signature["c_interface"] == {"parameters": 3,
                                        "returns_value": False}
    assert module.function_names() == ["add_dynamic", "add_static"]


# -- the frontend fixtures -------------------------------------------------

FIXTURES = PACKAGE_DIR.parent / "test" / "Frontends" / "Inputs"
PLAIN = "builtin.module(rope-to-llvm-cpu{emit-c-interface=true})"


@pytest.mark.parametrize("pipeline", [None, PLAIN], ids=["default", "plain"])
@pytest.mark.parametrize("name", sorted(
    p.stem for p in FIXTURES.glob("*.mlir")
    if p.with_suffix(".npz").exists()) or ["none"])
def test_frontend_fixtures(name, pipeline):
    # The modules torch-mlir, JAX and ONNX emitted (test/Frontends/Inputs),
    # raised by rope-optimize (default) or lowered as they are (plain),
    # against their float64 references (arg<i> in, ref<i> out).
    if name == "none":
        pytest.skip(f"no fixtures in {FIXTURES}")
    data = np.load(FIXTURES / f"{name}.npz")

    def numbered(prefix):
        keys = [k for k in data if re.fullmatch(prefix + r"\d+", k)]
        return [data[k] for k in sorted(keys, key=lambda k: int(k[3:]))]

    outputs = rope_mlir.jit((FIXTURES / f"{name}.mlir").read_text(),
                            pipeline).function("main")(*numbered("arg"))
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    references = numbered("ref")
    assert len(outputs) == len(references)
    for out, ref in zip(outputs, references):
        assert out.shape == ref.shape
        assert reference.relative_error(out, ref) < 1e-5


def test_perf_dump_only_when_asked(tmp_path):
    """ROPE_MLIR_PERF=1 names the compiled functions for Linux perf (a
    jit-<pid>.dump under $JITDUMPDIR for `perf inject --jit`); without it
    nothing is written."""
    import os
    import subprocess
    import sys
    code = ("import numpy as np, rope_mlir\n"
            "m = rope_mlir.jit('func.func @f(%x: tensor<4xf32>) -> "
            "tensor<4xf32> { return %x : tensor<4xf32> }')\n"
            "assert (m.function('f')(np.ones(4, np.float32)) == 1).all()\n")
    for asked in (False, True):
        out = tmp_path / ("asked" if asked else "not")
        out.mkdir()
        env = dict(os.environ, JITDUMPDIR=str(out))
        env.pop("ROPE_MLIR_PERF", None)
        if asked:
            env["ROPE_MLIR_PERF"] = "1"
        subprocess.run([sys.executable, "-c", code], env=env, check=True)
        dumps = list(out.rglob("jit-*.dump"))
        assert bool(dumps) == asked, dumps
