# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Differential test: generated RotaryEmbedding nodes run by rope_mlir.onnx
against three peers.

- `onnx.reference.ReferenceEvaluator` (the ONNX spec's numpy semantics):
  opset-23 nodes directly; a com.microsoft node through the equivalent
  opset-23 node (its offset expanded to explicit position ids);
- onnxruntime's CPU provider, which implements both domains for f32 and f16
  (no bf16 kernel: bf16 configurations skip it);
- `rope_mlir.reference` (float64, SEMANTICS.md).

Every configuration that changes the imported IR (domain, 3D/4D X, heads and
head size, rotary dim full or partial, interleaved, position form, dtype) is
one test; batch, sequence and cache lengths are dynamic in the models, so
its instances (random shapes and data, fixed seeds) share one compile.

Errors are `max|ours - peer| / max|peer|` over the output (the measure of
rope_mlir.reference.relative_error). Bounds: against float64, 2^-20 for f32
(SEMANTICS.md §5) and half an ulp plus f32 rounding for f16/bf16 (rotated in f32,
rounded once); against the f32 peers 1e-5; against f16/bf16 peers, which
round after every operation, a few ulps. The largest error seen per peer is
printed by the last test (pytest -rA or -s shows it).
"""

from __future__ import annotations

import dataclasses
import itertools

import ml_dtypes
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import rope_mlir.onnx as rope_onnx  # noqa: E402
from rope_mlir import reference  # noqa: E402

try:
    import onnxruntime
except ImportError:  # pragma: no cover - the test extra installs it
    onnxruntime = None

INSTANCES = 5
DTYPES = {"f32": (np.float32, TensorProto.FLOAT),
          "f16": (np.float16, TensorProto.FLOAT16),
          "bf16": (ml_dtypes.bfloat16, TensorProto.BFLOAT16)}
# Bounds on the relative error (see the module docstring).
VS_FLOAT64 = {"f32": 2.0 ** -20, "f16": 2.0 ** -11 + 1e-6,
              "bf16": 2.0 ** -8 + 1e-5}
VS_PEER = {"f32": 1e-5, "f16": 4e-3, "bf16": 3e-2}
ORT_DTYPES = ("f32", "f16")

MAX_ERRORS: dict = {}
CASES = {"count": 0, "configs": 0}


@dataclasses.dataclass(frozen=True)
class Config:
    index: int
    domain: str          # "" (opset 23) or "com.microsoft"
    rank: int            # 3: [B, S, H*D]; 4: [B, H, S, D]
    heads: int
    head_dim: int
    rotary: int          # the attribute: 0 = D
    interleaved: int
    positions: str       # explicit | none (opset 23) | offset | scalar (ms)
    dtype: str
    num_heads_attr: int  # the num_heads attribute as written

    @property
    def rotary_dim(self) -> int:
        return self.rotary or self.head_dim

    def __str__(self):
        dom = "ms" if self.domain else "onnx"
        return (f"{self.index:03d}-{dom}-{self.rank}d-h{self.heads}"
                f"d{self.head_dim}p{self.rotary}-"
                f"{'il' if self.interleaved else 'half'}-{self.positions}-"
                f"{self.dtype}-nh{self.num_heads_attr}")


def _configs():
    rng = np.random.default_rng(20250623)
    out = []
    head_dims = [2, 4, 8, 16, 32, 64, 128]
    combos = itertools.product(
        ["", "com.microsoft"], [3, 4], [0, 1], [False, True],
        ["explicit", "other"], ["f32", "f16"])
    extra = [("com.microsoft", r, i, p, "scalar", "f32")
             for r, i, p in itertools.product([3, 4], [0, 1], [False, True])]
    extra += [("", r, i, p, pos, "bf16")
              for r, i, p, pos in [(4, 0, False, "explicit"),
                                   (3, 1, True, "explicit"),
                                   (4, 1, True, "other"),
                                   (3, 0, False, "other")]]
    for domain, rank, interleaved, partial, form, dtype in \
            list(combos) + extra:
        d = int(rng.choice(head_dims[1:] if partial else head_dims))
        rotary = int(2 * rng.integers(1, d // 2)) if partial else 0
        if not partial and rng.random() < 0.3:
            rotary = d  # full rotation spelled out
        heads = int(rng.choice([1, 2, 3, 4]))
        if form == "other":
            form = "offset" if domain else "none"
        if domain:
            # onnxruntime needs num_heads with a rotary_embedding_dim; without
            # it a 3D X's head size is 2 * cache width.
            attr = heads if (rotary or rng.random() < 0.5) else 0
        else:
            attr = heads if rank == 3 else int(rng.choice([0, heads]))
        out.append(Config(len(out), domain, rank, heads, d, rotary,
                          interleaved, form, dtype, attr))
    return out


CONFIGS = _configs()


def _x_dims(cfg):
    if cfg.rank == 4:
        return ["B", cfg.heads, "S", cfg.head_dim]
    return ["B", "S", cfg.heads * cfg.head_dim]


def _model(cfg, as_onnx23: bool = False):
    """The config's model; with `as_onnx23` the equivalent opset-23 node
    (explicit position ids) of a com.microsoft config."""
    elem = DTYPES[cfg.dtype][1]
    half = cfg.rotary_dim // 2
    attrs = {"interleaved": cfg.interleaved}
    if cfg.rotary:
        attrs["rotary_embedding_dim"] = cfg.rotary
    if cfg.num_heads_attr or (as_onnx23 and cfg.rank == 3):
        attrs["num_heads"] = cfg.heads
    x = helper.make_tensor_value_info("X", elem, _x_dims(cfg))
    y = helper.make_tensor_value_info("Y", elem, _x_dims(cfg))
    if cfg.positions == "none":
        cache_dims = ["B", "S", half]
    else:
        cache_dims = ["M", half]
    cos = helper.make_tensor_value_info("cos_cache", elem, cache_dims)
    sin = helper.make_tensor_value_info("sin_cache", elem, cache_dims)
    pos_dims = {"explicit": ["B", "S"], "offset": [1], "scalar": []}
    if cfg.domain and not as_onnx23:
        pos = helper.make_tensor_value_info("position_ids", TensorProto.INT64,
                                            pos_dims[cfg.positions])
        node = helper.make_node(
            "RotaryEmbedding", ["X", "position_ids", "cos_cache", "sin_cache"],
            ["Y"], domain="com.microsoft", name="rope", **attrs)
        inputs = [x, pos, cos, sin]
        opsets = [helper.make_opsetid("", 23),
                  helper.make_opsetid("com.microsoft", 1)]
    else:
        inputs = [x, cos, sin]
        names = ["X", "cos_cache", "sin_cache"]
        if cfg.positions != "none":
            inputs.append(helper.make_tensor_value_info(
                "position_ids", TensorProto.INT64, ["B", "S"]))
            names.append("position_ids")
        node = helper.make_node("RotaryEmbedding", names, ["Y"], name="rope",
                                **attrs)
        opsets = [helper.make_opsetid("", 23)]
    graph = helper.make_graph([node], f"rope_{cfg.index}", inputs, [y])
    return helper.make_model(graph, opset_imports=opsets, ir_version=10)


def _instance(cfg, i):
    """Random shapes and data for instance i of a config (fixed seed)."""
    rng = np.random.default_rng(1000 * cfg.index + i)
    np_dtype = DTYPES[cfg.dtype][0]
    b, s = int(rng.integers(1, 4)), int(rng.integers(1, 8))
    half = cfg.rotary_dim // 2
    x4 = rng.standard_normal((b, s, cfg.heads, cfg.head_dim))
    if cfg.rank == 4:
        x = x4.transpose(0, 2, 1, 3)
    else:
        x = x4.reshape(b, s, cfg.heads * cfg.head_dim)
    x = np.ascontiguousarray(x).astype(np_dtype)
    base = float(rng.choice([10000.0, 500000.0]))
    theta = base ** (-2.0 * np.arange(half) / cfg.rotary_dim)
    feeds = {"X": x}
    offset = None
    if cfg.positions == "none":
        positions = rng.integers(0, 4096, (b, s))
    else:
        rows = int(rng.integers(s, s + 64))
        if cfg.positions == "explicit":
            positions = rng.integers(0, rows, (b, s))
        else:
            offset = int(rng.integers(0, rows - s + 1))
            positions = np.broadcast_to(offset + np.arange(s), (b, s))
            shape = (1,) if cfg.positions == "offset" else ()
            feeds["position_ids"] = np.full(shape, offset, np.int64)
        if cfg.positions == "explicit":
            feeds["position_ids"] = positions.astype(np.int64)
        table = np.arange(rows)[:, None] * theta
    if cfg.positions == "none":
        table = positions[..., None] * theta
    # Some instances scale the caches (a magnitude folded in, as YaRN does).
    scale = 1.0 if i % 2 == 0 else float(rng.uniform(0.5, 2.0))
    feeds["cos_cache"] = (scale * np.cos(table)).astype(np_dtype)
    feeds["sin_cache"] = (scale * np.sin(table)).astype(np_dtype)
    return feeds, positions, offset


def _float64_reference(cfg, feeds, offset):
    x = feeds["X"].astype(np.float64)
    kwargs = dict(layout="interleaved" if cfg.interleaved else "half",
                  rotary_dim=cfg.rotary_dim,
                  cos_cache=feeds["cos_cache"].astype(np.float64),
                  sin_cache=feeds["sin_cache"].astype(np.float64))
    if cfg.positions == "explicit":
        kwargs["positions"] = feeds["position_ids"]
    elif offset is not None:
        kwargs["offset"] = offset
    if cfg.rank == 4:
        return reference.apply(x, token_dims=(0, 2), **kwargs)
    b, s, _ = x.shape
    y = reference.apply(x.reshape(b, s, cfg.heads, cfg.head_dim), **kwargs)
    return y.reshape(x.shape)


def _record(peer, error, cfg, i):
    best = MAX_ERRORS.get(peer)
    if best is None or error > best[0]:
        MAX_ERRORS[peer] = (error, f"{cfg} #{i}")


def _check(peer, ours, theirs, bound, cfg, i):
    assert ours.shape == theirs.shape, (peer, ours.shape, theirs.shape)
    error = reference.relative_error(ours, theirs)
    _record(f"{peer} ({cfg.dtype})", error, cfg, i)
    assert error <= bound, (f"{cfg} instance {i}: relative error {error:.3g} "
                            f"vs {peer} exceeds {bound:.3g}")


@pytest.mark.parametrize("cfg", CONFIGS, ids=str)
def test_config(cfg):
    model = _model(cfg)
    onnx.checker.check_model(model)
    evaluator = ReferenceEvaluator(_model(cfg, as_onnx23=True))
    session = None
    if onnxruntime is not None and cfg.dtype in ORT_DTYPES:
        session = onnxruntime.InferenceSession(
            model.SerializeToString(), providers=["CPUExecutionProvider"])
    compiled_before = rope_onnx.cache_info()["compiled"]
    for i in range(INSTANCES):
        feeds, positions, offset = _instance(cfg, i)
        (ours,) = rope_onnx.run(model, feeds)
        assert ours.dtype == feeds["X"].dtype

        expected = _float64_reference(cfg, feeds, offset)
        _check("float64 reference", ours, expected, VS_FLOAT64[cfg.dtype],
               cfg, i)

        onnx23_feeds = dict(feeds)
        if cfg.domain and cfg.positions != "explicit":
            onnx23_feeds["position_ids"] = np.ascontiguousarray(
                positions, dtype=np.int64)
        (spec,) = evaluator.run(None, onnx23_feeds)
        _check("ReferenceEvaluator", ours, spec, VS_PEER[cfg.dtype], cfg, i)

        if session is not None:
            (ort,) = session.run(None, feeds)
            _check("onnxruntime", ours, ort, VS_PEER[cfg.dtype], cfg, i)
        CASES["count"] += 1
    CASES["configs"] += 1
    # Batch, sequence and cache sizes are dynamic: one compile per config.
    assert rope_onnx.cache_info()["compiled"] - compiled_before <= 1


def test_ms_offset_is_one_start_for_all_rows():
    """position_ids [1] in com.microsoft is one start offset (not rope's
    per-row offset): rows differ only by their data."""
    cfg = next(c for c in CONFIGS
               if c.domain and c.positions == "offset" and c.dtype == "f32")
    model = _model(cfg)
    feeds, positions, offset = _instance(cfg, 0)
    x = feeds["X"]
    feeds["X"] = np.ascontiguousarray(
        np.broadcast_to(x[:1], (3,) + x.shape[1:]))
    (y,) = rope_onnx.run(model, feeds)
    np.testing.assert_array_equal(y[0], y[1])
    np.testing.assert_array_equal(y[0], y[2])
    assert "tensor.extract" in rope_onnx.import_model(model)


def test_zz_report():
    """Prints the largest error seen against each peer."""
    if CASES["configs"] < len(CONFIGS):
        pytest.skip("only part of the configurations ran")
    print(f"\n{CASES['count']} cases in {len(CONFIGS)} configurations; "
          "largest relative error per peer:")
    for peer in sorted(MAX_ERRORS):
        error, where = MAX_ERRORS[peer]
        print(f"  {peer:32s} {error:.3e}  ({where})")
    assert CASES["count"] >= 300
    assert any(k.startswith("onnxruntime") for k in MAX_ERRORS)
    assert any(k.startswith("ReferenceEvaluator") for k in MAX_ERRORS)
