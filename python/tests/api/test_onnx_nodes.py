# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""ONNX backend conformance: the `test_rotary_embedding*` node tests.

Each test is a directory with `model.onnx` and `test_data_set_0/input_*.pb`,
`output_*.pb`, run through `rope_mlir.onnx.run` and compared with the
expected outputs. The directories come from the onnx wheel
(`onnx/backend/test/data/node`); wheels that do not ship the node data
(onnx 1.23's does not) get them generated, in the same layout, from onnx's
own case definitions (`onnx/backend/test/case/node/rotaryembedding.py`,
seeded by onnx's exporter: the same data the repository's files hold). The
`*_expanded` variants are the function-body expansion into primitive ops,
which the importer rejects by design (it imports RotaryEmbedding nodes only).
"""

from __future__ import annotations

import atexit
import importlib
import pathlib
import shutil
import tempfile

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import numpy_helper  # noqa: E402

import rope_mlir.onnx as rope_onnx  # noqa: E402

EXPECTED_COUNT = 8
PREFIX = "test_rotary_embedding"


def _wheel_dirs():
    root = pathlib.Path(onnx.__file__).parent / "backend" / "test" / "data" / \
        "node"
    if not root.is_dir():
        return []
    return sorted(d for d in root.glob(PREFIX + "*")
                  if d.is_dir() and "_expanded" not in d.name)


def _generated_dirs():
    """Writes onnx's RotaryEmbedding node cases (only them: importing every
    case module takes seconds) as backend test directories."""
    import onnx.backend.test.case.node as node_cases

    def ours():
        return [c for c in node_cases._NodeTestCases
                if c.name.startswith(PREFIX) and "_expanded" not in c.name]

    if not ours():
        previous = node_cases._TargetOpType
        node_cases._TargetOpType = "RotaryEmbedding"
        try:
            importlib.import_module(
                "onnx.backend.test.case.node.rotaryembedding")
        finally:
            node_cases._TargetOpType = previous
    cases = ours()
    root = pathlib.Path(tempfile.mkdtemp(prefix="rope_onnx_node_tests_"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    dirs = []
    for case in cases:
        path = root / case.name
        data = path / "test_data_set_0"
        data.mkdir(parents=True)
        (path / "model.onnx").write_bytes(case.model.SerializeToString())
        inputs, outputs = case.data_sets[0]
        graph = case.model.graph
        for j, array in enumerate(inputs):
            (data / f"input_{j}.pb").write_bytes(numpy_helper.from_array(
                array, graph.input[j].name).SerializeToString())
        for j, array in enumerate(outputs):
            (data / f"output_{j}.pb").write_bytes(numpy_helper.from_array(
                array, graph.output[j].name).SerializeToString())
        dirs.append(path)
    return sorted(dirs)


NODE_DIRS = _wheel_dirs() or _generated_dirs()


def _load_tensors(directory: pathlib.Path, kind: str):
    files = sorted(directory.glob(f"{kind}_*.pb"),
                   key=lambda p: int(p.stem.split("_")[1]))
    tensors = []
    for f in files:
        proto = onnx.TensorProto()
        proto.ParseFromString(f.read_bytes())
        tensors.append(numpy_helper.to_array(proto))
    return tensors


def _tolerance(dtype):
    dtype = np.dtype(dtype)
    if dtype == np.float16:
        return 1e-2, 1e-3
    if dtype.itemsize == 2:  # bfloat16
        return 2e-2, 1e-2
    return 1e-5, 1e-5


def test_found_all_node_tests():
    names = [d.name for d in NODE_DIRS]
    assert len(names) == EXPECTED_COUNT, names
    assert PREFIX in names


@pytest.mark.parametrize("directory", NODE_DIRS, ids=lambda d: d.name)
def test_node(directory):
    model = onnx.load(str(directory / "model.onnx"))
    ops = {(n.domain, n.op_type) for n in model.graph.node}
    assert ops == {("", "RotaryEmbedding")}
    for data in sorted(directory.glob("test_data_set_*")):
        inputs = _load_tensors(data, "input")
        expected = _load_tensors(data, "output")
        feeds = {vi.name: array
                 for vi, array in zip(model.graph.input, inputs)}
        actual = rope_onnx.run(model, feeds)
        assert len(actual) == len(expected)
        for got, want in zip(actual, expected):
            assert got.shape == want.shape and got.dtype == want.dtype
            rtol, atol = _tolerance(want.dtype)
            np.testing.assert_allclose(got.astype(np.float64),
                                       want.astype(np.float64),
                                       rtol=rtol, atol=atol)


@pytest.mark.parametrize("directory", NODE_DIRS, ids=lambda d: d.name)
def test_node_imports(directory):
    """The imported IR is one @main with the graph's signature and one
    rope.apply per node."""
    model = onnx.load(str(directory / "model.onnx"))
    text = rope_onnx.import_model(model)
    assert text.count("func.func @main(") == 1
    assert text.count("rope.apply") == len(model.graph.node)
    assert "tensor.empty" in text
    if len(model.graph.input[0].type.tensor_type.shape.dim) == 4:
        assert "token_dims = array<i64: 0, 2>" in text
    else:
        assert "tensor.expand_shape" in text
        assert "tensor.collapse_shape" in text


# ---------------------------------------------------------------------------
# Importer behaviour beyond the backend node tests: graphs the node tests do
# not cover (initializers, chains, several outputs, com.microsoft), and the
# errors for what the importer does not accept.
# ---------------------------------------------------------------------------

from onnx import TensorProto, helper  # noqa: E402
from onnx.reference.ops.op_rotary_embedding import (  # noqa: E402
    rotary_embedding)

F32 = TensorProto.FLOAT


def _vi(name, dims, elem=F32):
    return helper.make_tensor_value_info(name, elem, dims)


def _model(nodes, inputs, outputs, initializers=(), opset=23, ms=False):
    opsets = [helper.make_opsetid("", opset)]
    if ms:
        opsets.append(helper.make_opsetid("com.microsoft", 1))
    graph = helper.make_graph(nodes, "g", inputs, outputs,
                              initializer=list(initializers))
    return helper.make_model(graph, opset_imports=opsets, ir_version=10)


def _caches(rows, half, seed=0):
    rng = np.random.default_rng(seed)
    angle = rng.uniform(-np.pi, np.pi, (rows, half))
    return np.cos(angle).astype(np.float32), np.sin(angle).astype(np.float32)


def _basic_model(**attrs):
    node = helper.make_node("RotaryEmbedding", ["X", "cos", "sin", "pos"],
                            ["Y"], name="rope", **attrs)
    return _model([node], [_vi("X", ["B", 2, "S", 8]), _vi("cos", ["M", 4]),
                           _vi("sin", ["M", 4]),
                           _vi("pos", ["B", "S"], TensorProto.INT64)],
                  [_vi("Y", ["B", 2, "S", 8])])


def test_rejects_other_ops_by_name():
    rope = helper.make_node("RotaryEmbedding", ["X", "cos", "sin", "pos"],
                            ["T"], name="rope")
    add = helper.make_node("Add", ["T", "T"], ["Y"], name="double_it")
    model = _model([rope, add], [_vi("X", [1, 2, 3, 8]), _vi("cos", [9, 4]),
                                 _vi("sin", [9, 4]),
                                 _vi("pos", [1, 3], TensorProto.INT64)],
                   [_vi("Y", [1, 2, 3, 8])])
    with pytest.raises(rope_onnx.UnsupportedOpError,
                       match="'Add' \\(node 'double_it'\\)"):
        rope_onnx.import_model(model)
    with pytest.raises(rope_onnx.UnsupportedOpError):
        rope_onnx.run(model, {})
    assert issubclass(rope_onnx.UnsupportedOpError, ValueError)


def test_rejects_unsupported_attributes_and_versions():
    ms = helper.make_node("RotaryEmbedding", ["X", "pos", "cos", "sin"], ["Y"],
                          domain="com.microsoft", name="packed",
                          is_packed_batching=1)
    model = _model([ms], [_vi("X", [1, 3, 16]),
                          _vi("pos", [1], TensorProto.INT64),
                          _vi("cos", [9, 4]), _vi("sin", [9, 4])],
                   [_vi("Y", [1, 3, 16])], ms=True)
    with pytest.raises(rope_onnx.UnsupportedOpError,
                       match="is_packed_batching"):
        rope_onnx.import_model(model)
    old = _basic_model()
    old.opset_import[0].version = 22
    with pytest.raises(rope_onnx.UnsupportedOpError, match="opset >= 23"):
        rope_onnx.import_model(old)


def test_rejects_inconsistent_shapes():
    # 3D X needs num_heads.
    node = helper.make_node("RotaryEmbedding", ["X", "cos", "sin", "pos"],
                            ["Y"], name="r3")
    model = _model([node], [_vi("X", [1, 3, 16]), _vi("cos", [9, 4]),
                            _vi("sin", [9, 4]),
                            _vi("pos", [1, 3], TensorProto.INT64)],
                   [_vi("Y", [1, 3, 16])])
    with pytest.raises(rope_onnx.OnnxImportError, match="num_heads"):
        rope_onnx.import_model(model)
    # A cache wider than rotary_dim / 2 (onnxruntime would read it with the
    # wrong row stride) is rejected, not guessed.
    ms = helper.make_node("RotaryEmbedding", ["X", "pos", "cos", "sin"], ["Y"],
                          domain="com.microsoft", name="wide",
                          rotary_embedding_dim=4, num_heads=2)
    model = _model([ms], [_vi("X", [1, 3, 16]),
                          _vi("pos", [1, 3], TensorProto.INT64),
                          _vi("cos", [9, 4]), _vi("sin", [9, 4])],
                   [_vi("Y", [1, 3, 16])], ms=True)
    with pytest.raises(rope_onnx.OnnxImportError, match="rotary_dim / 2"):
        rope_onnx.import_model(model)


def test_signature_static_and_dynamic():
    text = rope_onnx.import_model(_basic_model())
    assert ("func.func @main(%X: tensor<?x2x?x8xf32>, %cos: tensor<?x4xf32>, "
            "%sin: tensor<?x4xf32>, %pos: tensor<?x?xi64>) -> "
            "(tensor<?x2x?x8xf32>)") in text
    assert "tensor.dim" in text and "tensor.empty(" in text
    static = rope_onnx.import_model(
        _basic_model(), input_shapes={"X": (3, 2, 5, 8), "pos": (3, 5)})
    assert "%X: tensor<3x2x5x8xf32>" in static
    assert "tensor.empty() : tensor<3x2x5x8xf32>" in static


def test_run_feed_errors():
    model = _basic_model()
    x = np.zeros((2, 2, 3, 8), np.float32)
    cos, sin = _caches(10, 4)
    pos = np.zeros((2, 3), np.int64)
    feeds = {"X": x, "cos": cos, "sin": sin, "pos": pos}
    with pytest.raises(IndexError, match="10 rows"):
        rope_onnx.run(model, dict(feeds, pos=pos + 10))
    with pytest.raises(IndexError):
        rope_onnx.run(model, dict(feeds, pos=pos - 1))
    with pytest.raises(ValueError, match="position_ids"):
        rope_onnx.run(model, dict(feeds, pos=np.zeros((2, 4), np.int64)))
    with pytest.raises(TypeError, match="float64"):
        rope_onnx.run(model, dict(feeds, X=x.astype(np.float64)))
    with pytest.raises(ValueError, match="missing feed"):
        rope_onnx.run(model, {"X": x, "cos": cos, "sin": sin})


def test_initializers_chain_and_outputs():
    """Caches as initializers (one also a graph input, i.e. overridable),
    two chained nodes of both domains, the intermediate also an output."""
    from onnx import numpy_helper
    cos, sin = _caches(32, 4, seed=1)
    first = helper.make_node("RotaryEmbedding", ["X", "cos", "sin", "pos"],
                             ["T"], name="first", num_heads=3,
                             interleaved=1)
    second = helper.make_node("RotaryEmbedding", ["T", "start", "cos", "sin"],
                              ["Y"], domain="com.microsoft", name="second",
                              scale=2.0)
    model = _model(
        [first, second],
        [_vi("X", ["B", "S", 24]), _vi("pos", ["B", "S"], TensorProto.INT64),
         _vi("start", [1], TensorProto.INT64), _vi("sin", [32, 4])],
        [_vi("Y", ["B", "S", 24]), _vi("T", None)],
        initializers=[numpy_helper.from_array(cos, "cos"),
                      numpy_helper.from_array(sin, "sin")], ms=True)
    text = rope_onnx.import_model(model)
    assert text.count("rope.apply") == 2
    assert "arith.constant dense<\"0x" in text
    assert "offset(" in text and "tensor.extract %start" in text
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 5, 24)).astype(np.float32)
    pos = rng.integers(0, 32, (2, 5))
    y, t = rope_onnx.run(model, {"X": x, "pos": pos,
                                 "start": np.array([20])})
    want_t = rotary_embedding(x, cos, sin, pos, interleaved=1, num_heads=3)
    want_y = rotary_embedding(want_t, cos, sin,
                              np.broadcast_to(20 + np.arange(5), (2, 5)),
                              num_heads=3)
    np.testing.assert_allclose(t, want_t, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(y, want_y, rtol=1e-5, atol=1e-5)
    # The initializer listed as an input can be fed.
    y2, _ = rope_onnx.run(model, {"X": x, "pos": pos, "start": np.array([20]),
                                  "sin": np.zeros_like(sin)})
    assert not np.allclose(y2, y)
    ort = pytest.importorskip("onnxruntime")
    options = ort.SessionOptions()
    options.log_severity_level = 3  # the overridable initializer is on purpose
    session = ort.InferenceSession(model.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    ort_y, ort_t = session.run(None, {"X": x, "pos": pos,
                                      "start": np.array([20])})
    np.testing.assert_allclose(y, ort_y, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(t, ort_t, rtol=1e-5, atol=1e-5)


def test_unknown_head_size_specializes_on_feeds():
    """A partial rotary 3D X with an unknown hidden size: import_model needs
    the shape (input_shapes), run() takes it from the feeds."""
    node = helper.make_node("RotaryEmbedding", ["X", "cos", "sin", "pos"],
                            ["Y"], name="r", num_heads=2,
                            rotary_embedding_dim=4)
    model = _model([node], [_vi("X", ["B", "S", "HD"]), _vi("cos", ["M", 2]),
                            _vi("sin", ["M", 2]),
                            _vi("pos", ["B", "S"], TensorProto.INT64)],
                   [_vi("Y", ["B", "S", "HD"])])
    with pytest.raises(rope_onnx.OnnxImportError, match="hidden size"):
        rope_onnx.import_model(model)
    assert "tensor<?x?x16xf32>" in rope_onnx.import_model(
        model, input_shapes={"X": (None, None, 16)})
    cos, sin = _caches(8, 2)
    x = np.random.default_rng(3).standard_normal((1, 4, 16)).astype(
        np.float32)
    pos = np.array([[0, 7, 1, 3]])
    (y,) = rope_onnx.run(model, {"X": x, "cos": cos, "sin": sin, "pos": pos})
    want = rotary_embedding(x, cos, sin, pos, num_heads=2,
                            rotary_embedding_dim=4)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(y.reshape(1, 4, 2, 8)[..., 4:],
                                  x.reshape(1, 4, 2, 8)[..., 4:])
