# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The wheel's smoke set (test/wheel/run.sh runs it in a fresh venv, from a
directory outside the checkout): the package and libRopeJit.so come from the
venv; apply (one thread and two) against the float64 reference, compile,
from_hf_config, the ONNX import and run of a RotaryEmbedding model."""
import pathlib
import sys

import numpy as np

import rope_mlir
from rope_mlir import _jit, reference

venv = pathlib.Path(sys.prefix).resolve()
package = pathlib.Path(rope_mlir.__file__).resolve()
library = _jit.library_path().resolve()
print("rope_mlir:", package)
print("libRopeJit.so:", library)
assert venv in package.parents, f"rope_mlir is not the venv's: {package}"
assert library.parent == package.parent / "_lib", library
# The C++ fast call comes from the wheel too, and kernels use it.
fast = _jit.kernel_call_module()
print("fast call:", fast.__file__ if fast else None)
assert fast is not None and \
    pathlib.Path(fast.__file__).resolve().parent == library.parent, fast


def close(actual, expected, what):
    error = float(np.max(np.abs(np.asarray(actual, np.float64) - expected)))
    print(f"{what}: max |error| {error:.2e}")
    assert error <= 1e-6, what


rng = np.random.default_rng(0)
x = rng.standard_normal((2, 16, 4, 64))
pos = rng.integers(0, 4096, size=(2, 16))
expected = reference.apply(x, pos, base=500000.0)
close(rope_mlir.apply(x, pos, base=500000.0), expected, "apply f64")
# The threaded path: the OpenMP runtime is loaded at the first call.
close(rope_mlir.apply(x, pos, base=500000.0, threads=2), expected,
      "apply f64 threads=2")
omp = sorted({line.split()[-1] for line in open("/proc/self/maps")
              if "libomp" in line})
print("OpenMP runtime loaded:", ", ".join(omp))
assert omp, "threads=2 loaded no OpenMP runtime"

kernel = rope_mlir.compile(rope_mlir.KernelConfig(
    dtype="f32", rank=4, head_dim=64, layout="interleaved",
    positions="explicit"))
x32 = x.astype(np.float32)
y = kernel(x32, pos)
error = reference.relative_error(
    y, reference.apply(x32, pos, layout="interleaved"))
print(f"compile(KernelConfig f32 interleaved): relative error {error:.2e}")
assert error <= 1e-5
out = np.empty_like(x32)
assert kernel._plan(x32, pos, 0, None, None, out) is out, "plan declined"
assert np.array_equal(out, y), "the fast call and the first call differ"

spec = rope_mlir.from_hf_config({
    "model_type": "llama", "hidden_size": 256, "num_attention_heads": 4,
    "rope_theta": 500000.0, "max_position_embeddings": 8192,
    "rope_scaling": {"rope_type": "llama3", "factor": 8.0,
                     "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                     "original_max_position_embeddings": 8192}})
print("from_hf_config:", spec)
close(spec.apply(x, pos), reference.apply(
    x, pos, base=500000.0, scaling={
        "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
        "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}),
    "RopeSpec.apply llama3")

try:
    from onnx import TensorProto, helper
except ImportError:
    sys.exit("onnx is not installed in the venv (pip install "
             "'rope-mlir[onnx]'): the ONNX import was not checked")
import rope_mlir.onnx as rope_onnx


def vi(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


node = helper.make_node("RotaryEmbedding", ["X", "cos", "sin", "pos"], ["Y"],
                        name="rope")
graph = helper.make_graph(
    [node], "rope", [vi("X", ["B", 2, "S", 8]), vi("cos", ["M", 4]),
                     vi("sin", ["M", 4]),
                     vi("pos", ["B", "S"], TensorProto.INT64)],
    [vi("Y", ["B", 2, "S", 8])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)],
                          ir_version=10)
text = rope_onnx.import_model(model)
assert "rope.apply" in text, text
X = rng.standard_normal((3, 2, 5, 8)).astype(np.float32)
angles = np.arange(16)[:, None] * 10000.0 ** (-np.arange(4) / 4)
cos, sin = np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)
P = rng.integers(0, 16, size=(3, 5))
(Y,) = rope_onnx.run(model, {"X": X, "cos": cos, "sin": sin, "pos": P})
c, s = cos[P][:, None], sin[P][:, None]          # [B, 1, S, 4]
x1, x2 = X[..., :4].astype(np.float64), X[..., 4:].astype(np.float64)
close(Y, np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], -1),
      "onnx RotaryEmbedding (import_model, run)")
print("wheel smoke: ok")
