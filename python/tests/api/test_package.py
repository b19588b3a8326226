# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The package API: rope_mlir.apply/compile/emit/cache_info, its errors, and
the rope-import-onnx command."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

import rope_mlir
from rope_mlir import reference

import _paths

PYTHON_DIR = _paths.PYTHON

# Relative error bounds vs the float64 reference (SEMANTICS.md §5): f32/f64 within
# 2^-20; f16/bf16 rotated in f32 and rounded once: half an ulp (+ slack).
BOUNDS = {np.dtype(np.float32): 2.0 ** -20, np.dtype(np.float64): 2.0 ** -20,
          np.dtype(np.float16): 2.0 ** -11 + 1e-6,
          np.dtype(ml_dtypes.bfloat16): 2.0 ** -8 + 1e-5}


def _random(shape, dtype, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _assert_close(actual, expected):
    error = reference.relative_error(actual, expected)
    assert error <= BOUNDS[np.dtype(actual.dtype)], error


@pytest.mark.parametrize("dtype", [np.float32, np.float16, ml_dtypes.bfloat16,
                                   np.float64], ids=lambda d: np.dtype(d).name)
def test_apply_dtypes(dtype):
    x = _random((2, 5, 3, 16), dtype)
    positions = np.random.default_rng(1).integers(0, 1000, (2, 5))
    y = rope_mlir.apply(x, positions, base=500000.0)
    assert y.dtype == x.dtype and y.shape == x.shape
    _assert_close(y, reference.apply(x, positions, base=500000.0))
    # Interleaved, partial rotary, scalar offset.
    y = rope_mlir.apply(x, layout="interleaved", rotary_dim=8, offset=7)
    _assert_close(y, reference.apply(x, layout="interleaved", rotary_dim=8,
                                     offset=7))


def test_token_dims_bhsd():
    x = _random((2, 3, 6, 8), np.float32)          # [B, H, S, D]
    positions = np.arange(12).reshape(2, 6) * 3
    y = rope_mlir.apply(x, positions, token_dims=(0, 2))
    _assert_close(y, reference.apply(x, positions, token_dims=(0, 2)))
    # Same as rotating the [B, S, H, D] transpose with default token dims.
    t = rope_mlir.apply(np.ascontiguousarray(x.transpose(0, 2, 1, 3)),
                        positions)
    np.testing.assert_allclose(y, t.transpose(0, 2, 1, 3), rtol=0, atol=0)


def test_in_place():
    x = _random((3, 4, 2, 8), np.float32)
    original = x.copy()
    positions = np.arange(12).reshape(3, 4)
    result = rope_mlir.apply(x, positions, out=x)
    assert result is x
    _assert_close(x, reference.apply(original, positions))


def test_out_preallocated_is_written():
    x = _random((2, 4, 2, 8), np.float16)
    out = np.zeros_like(x)
    result = rope_mlir.apply(x, offset=3, out=out)
    assert result is out
    assert np.shares_memory(result, out)
    _assert_close(out, reference.apply(x, offset=3))


def test_compile_reuses_kernel_across_shapes():
    kernel = rope_mlir.compile(dtype="f32", rank=4, head_dim=32,
                               positions="explicit", layout="interleaved")
    assert isinstance(kernel, rope_mlir.Kernel)
    for shape in [(1, 1, 1, 32), (2, 7, 3, 32), (4, 3, 8, 32)]:
        x = _random(shape, np.float32, seed=len(shape))
        positions = np.arange(shape[0] * shape[1]).reshape(shape[:2])
        y = kernel(x, positions)
        _assert_close(y, reference.apply(x, positions, layout="interleaved"))
    # The same configuration again is the same (cached) kernel.
    assert rope_mlir.compile(dtype="f32", rank=4, head_dim=32,
                             positions="explicit",
                             layout="interleaved") is kernel


def test_apply_does_not_recompile():
    x = _random((2, 3, 2, 24), np.float32)
    rope_mlir.apply(x, offset=1, rotary_dim=12)
    before = rope_mlir.cache_info()
    y = rope_mlir.apply(_random((5, 9, 1, 24), np.float32), offset=4,
                        rotary_dim=12)
    after = rope_mlir.cache_info()
    assert after["compiled"] == before["compiled"]
    assert after["hits"] == before["hits"] + 1
    assert y.shape == (5, 9, 1, 24)


def test_emit():
    text = rope_mlir.emit(dtype="f16", rank=3, head_dim=64, rotary_dim=32,
                          positions="explicit")
    assert "rope.apply" in text
    assert "rotary_dim = 32" in text
    assert "llvm.emit_c_interface" in text


def test_caches_gathered_and_pregathered():
    x = _random((2, 4, 3, 8), np.float32)
    theta = 10000.0 ** (-np.arange(4) / 4)
    table = np.arange(20)[:, None] * theta
    cos, sin = np.cos(table).astype(np.float32), np.sin(table).astype(
        np.float32)
    positions = np.array([[0, 5, 9, 19], [3, 3, 2, 1]])
    y = rope_mlir.apply(x, positions, cos_cache=cos, sin_cache=sin)
    _assert_close(y, reference.apply(x, positions, cos_cache=cos,
                                     sin_cache=sin))
    pre_cos, pre_sin = cos[positions], sin[positions]   # [B, S, P/2]
    z = rope_mlir.apply(x, cos_cache=pre_cos, sin_cache=pre_sin)
    np.testing.assert_allclose(z, y, rtol=0, atol=1e-6)


# -- errors -----------------------------------------------------------------

def test_error_odd_rotary_dim():
    with pytest.raises(ValueError, match="rotary_dim must be even"):
        rope_mlir.apply(_random((2, 3, 2, 8), np.float32), rotary_dim=3)


def test_error_positions_shape():
    x = _random((2, 4, 3, 8), np.float32)
    with pytest.raises(ValueError, match=r"'rope.apply' op positions dim 1 "
                                         r"has size 5, expected 4"):
        rope_mlir.apply(x, np.zeros((2, 5), np.int64))


def test_error_int_dtype():
    with pytest.raises(TypeError, match="int32"):
        rope_mlir.apply(np.zeros((2, 3, 2, 8), np.int32))


def test_error_position_outside_cache():
    x = _random((1, 3, 2, 8), np.float32)
    cos = np.ones((10, 4), np.float32)
    with pytest.raises(IndexError, match="10 rows"):
        rope_mlir.apply(x, np.array([[0, 4, 10]]), cos_cache=cos,
                        sin_cache=cos)
    with pytest.raises(IndexError):
        rope_mlir.apply(x, np.array([[0, -1, 2]]), cos_cache=cos,
                        sin_cache=cos)


def test_error_scaling():
    x = _random((1, 3, 2, 8), np.float32)
    # A misspelt key is an error naming it, not a silent default.
    with pytest.raises(ValueError, match="factr"):
        rope_mlir.apply(x, scaling={"rope_type": "linear", "factr": 2.0})
    with pytest.raises(ValueError, match="cache"):
        rope_mlir.apply(x, np.zeros((1, 3), np.int64),
                        scaling={"rope_type": "linear", "factor": 2.0},
                        cos_cache=np.ones((8, 4), np.float32),
                        sin_cache=np.zeros((8, 4), np.float32))
    y = rope_mlir.apply(x, scaling={"rope_type": "linear", "factor": 2.0})
    _assert_close(y, reference.apply(
        x, scaling={"rope_type": "linear", "factor": 2.0}))
    # The default spelled out is accepted.
    y = rope_mlir.apply(x, scaling={"rope_type": "default"})
    _assert_close(y, reference.apply(x))


# -- rope-import-onnx -------------------------------------------------------

@pytest.fixture(scope="module")
def onnx_model_file(tmp_path_factory):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    node = helper.make_node("RotaryEmbedding", ["X", "cos", "sin", "pos"],
                            ["Y"], num_heads=4, rotary_embedding_dim=4,
                            interleaved=1, name="rope0")
    graph = helper.make_graph(
        [node], "cli",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT,
                                       ["B", "S", 32]),
         helper.make_tensor_value_info("cos", TensorProto.FLOAT, [64, 2]),
         helper.make_tensor_value_info("sin", TensorProto.FLOAT, [64, 2]),
         helper.make_tensor_value_info("pos", TensorProto.INT64, ["B", "S"])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT,
                                       ["B", "S", 32])])
    model = helper.make_model(graph, ir_version=10,
                              opset_imports=[helper.make_opsetid("", 23)])
    path = tmp_path_factory.mktemp("onnx") / "model.onnx"
    onnx.save(model, str(path))
    return path


def _check_ir(text):
    assert "func.func @main(" in text
    assert "rope.apply" in text
    assert "tensor<?x?x32xf32>" in text
    assert "rotary_dim = 4 : i64" in text
    assert "#rope.layout<interleaved>" in text
    # Verifies with the compiler.
    from rope_mlir import _jit
    _jit.lower(text, "builtin.module()")


def test_cli_main(onnx_model_file, tmp_path, capsys):
    import rope_mlir.onnx as rope_onnx
    out = tmp_path / "out.mlir"
    assert rope_onnx.main([str(onnx_model_file), "-o", str(out)]) == 0
    _check_ir(out.read_text())
    assert rope_onnx.main([str(onnx_model_file)]) == 0
    _check_ir(capsys.readouterr().out)
    assert rope_onnx.main([str(tmp_path / "missing.onnx")]) == 1
    assert "error" in capsys.readouterr().err


def _env():
    """This tree's package first (an installed copy may be another
    checkout's)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(PYTHON_DIR)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH")
                             else []))
    return env


def test_cli_module_subprocess(onnx_model_file, tmp_path):
    env = _env()
    out = tmp_path / "m.mlir"
    subprocess.run([sys.executable, "-m", "rope_mlir.onnx",
                    str(onnx_model_file), "-o", str(out)],
                   check=True, env=env, timeout=120)
    _check_ir(out.read_text())


@pytest.mark.skipif(shutil.which("rope-import-onnx") is None,
                    reason="the package's console script is not installed")
def test_cli_console_script(onnx_model_file):
    result = subprocess.run(["rope-import-onnx", str(onnx_model_file)],
                            capture_output=True, text=True, timeout=120,
                            env=_env())
    assert result.returncode == 0, result.stderr
    _check_ir(result.stdout)


def test_cli_rejects_other_ops(tmp_path, capsys):
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    import rope_mlir.onnx as rope_onnx
    graph = helper.make_graph(
        [helper.make_node("Relu", ["X"], ["Y"], name="act")], "relu",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 8])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 8])])
    path = tmp_path / "relu.onnx"
    onnx.save(helper.make_model(graph), str(path))
    assert rope_onnx.main([str(path)]) == 1
    err = capsys.readouterr().err
    assert "Relu" in err and "act" in err
