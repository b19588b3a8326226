# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Import ONNX `RotaryEmbedding` graphs as `rope.apply` IR and run them.

    import rope_mlir.onnx as ro
    text = ro.import_model("model.onnx")          # MLIR: func.func @main
    outputs = ro.run("model.onnx", {"X": x, "cos_cache": c, "sin_cache": s,
                                    "position_ids": p})

Supported nodes (SEMANTICS.md §6); any other node raises UnsupportedOpError:

- `RotaryEmbedding` of the ONNX domain (opset 23): inputs `X, cos_cache,
  sin_cache, position_ids?`. 4D `X` is `[B, H, S, D]` (token dims 0 and 2);
  3D `X` is `[B, S, H*D]` and needs `num_heads` (reshaped to `[B, S, H, D]`
  around the op). With `position_ids [B, S]` the caches are `[M, P/2]`
  tables gathered by position; without, they are pre-gathered `[B, S, P/2]`.
- onnxruntime's `com.microsoft.RotaryEmbedding` (version 1): inputs `X,
  position_ids, cos_cache, sin_cache`. `position_ids` of shape `[1]` (or a
  scalar) is a start offset: `pos = offset + s` (a scalar offset: it is
  extracted with `tensor.extract`, since a rank-1 offset means one offset
  per batch row to `rope.apply`); shape `[B, S]` are explicit positions. As
  in onnxruntime, a 3D `X` without `num_heads` has head size
  `2 * cos_cache.shape[1]`, and `rotary_embedding_dim > 0` needs
  `num_heads`. `scale` is accepted and ignored: onnxruntime reads it only to
  rebuild the cos/sin caches for sequences longer than the cache, which it
  does not implement either (the caches are used as given).
  `is_packed_batching = 1` (ragged batches) is not supported.

Both: `interleaved` (0/1) is the pair layout, `rotary_embedding_dim` (0 = D)
is `rotary_dim`; the caches' width must be `rotary_dim / 2` (onnxruntime
also accepts a `[M, D/2]` cache with a partial `rotary_embedding_dim`, but
then reads it with a row stride of `rotary_dim / 2`, i.e. as a different
table: rejected here rather than guessed).

Differences from the peers, all on inputs they leave undefined:
- a position outside `[0, M)` raises IndexError in `run` (the ONNX
  reference wraps negative ids around like numpy indexing, onnxruntime
  reads out of bounds, the compiled op would produce NaN);
- position ids and pre-gathered caches must be shaped exactly like the
  token dims `[B, S]` (the ONNX reference also broadcasts `[1, S]`).
f16/bf16 data is rotated in f32 and rounded once (the peers round after
every operation), so results can differ from theirs by an ulp or two.

`run` compiles a memref entry function around the same IR (one compile per
distinct IR text, cached for the process), checks the feeds' shapes, dtypes
and positions in Python first (the compiled code trusts its dynamic sizes),
allocates the outputs as numpy arrays and has the kernels write them in
place: nothing is allocated on the compiled side that outlives the call.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import sys
from typing import Dict, List, Optional, Sequence, Tuple

import ml_dtypes
import numpy as np

from . import _ir, _jit, _kernel_path

__all__ = ["UnsupportedOpError", "OnnxImportError", "import_model", "run",
           "main"]


class OnnxImportError(ValueError):
    """The model cannot be imported (invalid or unsupported shapes/types)."""


class UnsupportedOpError(OnnxImportError):
    """The model has a node (or an attribute value) the importer does not
    support; the message names the op type and the node."""


class _NeedsStaticShape(OnnxImportError):
    """A size the IR must have static (the head dim) is unknown in the
    model's declared types; `run` retries with the feeds' shapes."""


_ONNX_ELT = {1: "f32", 10: "f16", 16: "bf16", 11: "f64", 7: "i64", 6: "i32"}
_NUMPY = {"f32": np.dtype(np.float32), "f16": np.dtype(np.float16),
          "bf16": np.dtype(ml_dtypes.bfloat16), "f64": np.dtype(np.float64),
          "i64": np.dtype(np.int64), "i32": np.dtype(np.int32)}
_FLOATS = ("f16", "bf16", "f32", "f64")
_INTS = ("i32", "i64")

_MS_DOMAIN = "com.microsoft"
_ONNX_ATTRS = {"interleaved", "rotary_embedding_dim", "num_heads"}
_MS_ATTRS = _ONNX_ATTRS | {"scale", "is_packed_batching"}


# ---------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------

Shape = Tuple[Optional[int], ...]


#: A ranked tensor type; None in `shape` is a dynamic size (a shape of None:
#: the model gives no rank).
_Type = _ir.Type


def _join(a: Shape, b: Shape, what: str) -> Shape:
    """The most static shape compatible with both, or an error."""
    if len(a) != len(b):
        raise OnnxImportError(f"{what}: rank {len(a)} vs {len(b)}")
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x is not None and y is not None and x != y:
            raise OnnxImportError(f"{what}: dim {i} is {x} vs {y}")
        out.append(x if x is not None else y)
    return tuple(out)


def _type_from_proto(type_proto, name: str) -> Optional[_Type]:
    """The value's type, None when the model gives no tensor type or rank
    (the element type is then still needed)."""
    if not type_proto.HasField("tensor_type"):
        raise OnnxImportError(f"value {name!r} is not a tensor")
    tt = type_proto.tensor_type
    elt = _ONNX_ELT.get(tt.elem_type)
    if elt is None:
        raise OnnxImportError(f"value {name!r} has unsupported element type "
                              f"{_elem_type_name(tt.elem_type)}")
    if not tt.HasField("shape"):
        return _Type(elt, None)  # type: ignore[arg-type]
    dims = []
    for d in tt.shape.dim:
        dims.append(int(d.dim_value) if d.HasField("dim_value") else None)
    return _Type(elt, tuple(dims))


def _elem_type_name(code: int) -> str:
    try:
        from onnx import TensorProto
        return TensorProto.DataType.Name(code)
    except Exception:  # noqa: BLE001
        return str(code)


# ---------------------------------------------------------------------------
# The node plan: everything a RotaryEmbedding node means, checked once for
# the declared (possibly dynamic) shapes at import and once for the concrete
# shapes of the feeds in `run`.
# ---------------------------------------------------------------------------


@dataclasses.dataclass
class _Node:
    name: str
    domain: str            # "" or "com.microsoft"
    x: str
    cos: str
    sin: str
    pos: Optional[str]
    out: str
    interleaved: bool
    rotary_attr: int       # 0 = D
    num_heads: int         # 0 = not given
    # Resolved by _resolve:
    rank: int = 0
    heads: Optional[int] = None      # H for 3D X
    head_dim: Optional[int] = None   # D
    rotary_dim: Optional[int] = None  # P
    form: str = "explicit"           # explicit | offset | none

    def where(self) -> str:
        kind = ("com.microsoft.RotaryEmbedding" if self.domain
                else "RotaryEmbedding")
        return f"{kind} node {self.name!r}"

    def error(self, message: str, cls=OnnxImportError):
        return cls(f"{self.where()}: {message}")


def _node_from_proto(proto, index: int, opsets: Dict[str, int]) -> _Node:
    from onnx import helper
    name = proto.name or f"#{index}"
    domain = proto.domain
    if domain == "ai.onnx":
        domain = ""
    if proto.op_type != "RotaryEmbedding" or domain not in ("", _MS_DOMAIN):
        op = f"{domain}.{proto.op_type}" if domain else proto.op_type
        raise UnsupportedOpError(
            f"unsupported op {op!r} (node {name!r}): rope_mlir.onnx imports "
            "only RotaryEmbedding (ONNX opset 23) and com.microsoft."
            "RotaryEmbedding nodes")
    where = ("com.microsoft.RotaryEmbedding" if domain
             else "RotaryEmbedding") + f" node {name!r}"
    if domain == "":
        version = opsets.get("", opsets.get("ai.onnx"))
        if version is None or version < 23:
            raise UnsupportedOpError(
                f"{where}: RotaryEmbedding needs ONNX opset >= 23, the model "
                f"imports opset {version}")
        try:
            import onnx.defs
            since = onnx.defs.get_schema("RotaryEmbedding", version,
                                         "").since_version
        except Exception:  # noqa: BLE001 - an opset newer than this onnx
            since = None
        if since != 23:
            raise UnsupportedOpError(
                f"{where}: only RotaryEmbedding-23 is supported; opset "
                f"{version} resolves to version {since}")
    else:
        version = opsets.get(_MS_DOMAIN, 1)
        if version != 1:
            raise UnsupportedOpError(
                f"{where}: only com.microsoft opset 1 is supported, got "
                f"{version}")

    attrs = {a.name: helper.get_attribute_value(a) for a in proto.attribute}
    allowed = _MS_ATTRS if domain else _ONNX_ATTRS
    unknown = sorted(set(attrs) - allowed)
    if unknown:
        raise UnsupportedOpError(f"{where}: unknown attribute(s) "
                                 f"{', '.join(unknown)}")
    for key in ("interleaved", "rotary_embedding_dim", "num_heads",
                "is_packed_batching"):
        if key in attrs and not isinstance(attrs[key], int):
            raise OnnxImportError(f"{where}: attribute {key} must be an int")
    interleaved = attrs.get("interleaved", 0)
    if interleaved not in (0, 1):
        raise OnnxImportError(f"{where}: interleaved must be 0 or 1, got "
                              f"{interleaved}")
    if attrs.get("is_packed_batching", 0) != 0:
        raise UnsupportedOpError(
            f"{where}: is_packed_batching = {attrs['is_packed_batching']} "
            "(ragged batches) is not supported")
    rotary = attrs.get("rotary_embedding_dim", 0)
    heads = attrs.get("num_heads", 0)
    if rotary < 0 or heads < 0:
        raise OnnxImportError(f"{where}: rotary_embedding_dim and num_heads "
                              "must be >= 0")

    inputs = list(proto.input)
    while inputs and inputs[-1] == "":
        inputs.pop()
    if len(proto.output) != 1 or not proto.output[0]:
        raise OnnxImportError(f"{where}: expected exactly one output")
    if domain == "":
        if len(inputs) not in (3, 4) or "" in inputs[:3]:
            raise OnnxImportError(f"{where}: expected inputs X, cos_cache, "
                                  "sin_cache and optionally position_ids")
        x, cos, sin = inputs[:3]
        pos = inputs[3] if len(inputs) == 4 else None
    else:
        if len(inputs) != 4 or "" in inputs:
            raise OnnxImportError(f"{where}: expected inputs X, position_ids, "
                                  "cos_cache, sin_cache")
        x, pos, cos, sin = inputs
    return _Node(name=name, domain=domain, x=x, cos=cos, sin=sin, pos=pos,
                 out=proto.output[0], interleaved=bool(interleaved),
                 rotary_attr=int(rotary), num_heads=int(heads))


def _resolve(node: _Node, x: _Type, cos: _Type, sin: _Type,
             pos: Optional[_Type]) -> Tuple[_Type, dict]:
    """Checks the node against its operands' shapes (dynamic sizes pass) and
    fills in rank, heads, head_dim, rotary_dim and
    the position form. Returns the output type and the refined operand
    shapes {"x": ..., "cache": ..., "pos": ...}."""
    if x.elt not in _FLOATS:
        raise node.error(f"X must be a float tensor, got {x.elt}", TypeError)
    if cos.elt != sin.elt:
        raise node.error(f"cos_cache ({cos.elt}) and sin_cache ({sin.elt}) "
                         "must have the same element type", TypeError)
    if cos.elt not in _FLOATS:
        raise node.error(f"the caches must be float tensors, got {cos.elt}",
                         TypeError)
    if pos is not None and pos.elt not in _INTS:
        raise node.error(f"position_ids must be int64 (or int32), got "
                         f"{pos.elt}", TypeError)
    if x.rank not in (3, 4):
        raise node.error(f"X must be 3D [B, S, H*D] or 4D [B, H, S, D], got "
                         f"shape {_fmt(x.shape)}")
    if cos.rank != sin.rank:
        raise node.error(f"cos_cache and sin_cache ranks differ "
                         f"({cos.rank} vs {sin.rank})")
    cache_shape = _join(cos.shape, sin.shape,
                        f"{node.where()}: cos_cache/sin_cache shapes")
    width = cache_shape[-1] if cache_shape else None
    ms = node.domain == _MS_DOMAIN

    if ms and node.rotary_attr > 0 and node.num_heads == 0:
        # onnxruntime's kernel refuses this too (its schema: "num_heads ...
        # Must use with rotary_embedding_dim").
        raise node.error("num_heads must be provided if rotary_embedding_dim "
                         "is specified")

    # Heads and head dim.
    node.rank = x.rank
    if x.rank == 4:
        b, heads, s, d = x.shape
        if ms and node.num_heads and heads is not None and \
                node.num_heads != heads:
            raise node.error(f"num_heads = {node.num_heads} but X [B, H, S, "
                             f"D] has H = {heads}")
        if d is None:
            if node.rotary_attr == 0 and width is not None:
                d = 2 * width
            else:
                raise node.error("the head dim (X's last dim) must be known",
                                 _NeedsStaticShape)
    else:
        b, s, hidden = x.shape
        if ms and node.num_heads == 0:
            if width is None:
                raise node.error(
                    "without num_heads the head size is 2 * cos_cache's "
                    "last dim, which must be known", _NeedsStaticShape)
            d = 2 * width
            if hidden is not None:
                if hidden % d:
                    raise node.error(f"hidden size {hidden} is not a multiple "
                                     f"of the head size {d} (2 * cache "
                                     "width)")
                heads = hidden // d
            else:
                raise node.error(
                    "without num_heads the hidden size (X's last dim) must "
                    "be known", _NeedsStaticShape)
        else:
            if node.num_heads == 0:
                raise node.error("num_heads is required for a 3D X "
                                 "[B, S, H*D]")
            heads = node.num_heads
            if hidden is None:
                if node.rotary_attr == 0 and width is not None:
                    d = 2 * width
                else:
                    raise node.error("the hidden size (X's last dim) must be "
                                     "known", _NeedsStaticShape)
            else:
                if hidden % heads:
                    raise node.error(f"hidden size {hidden} is not a multiple "
                                     f"of num_heads = {heads}")
                d = hidden // heads
    if d <= 0:
        raise node.error(f"head size must be positive, got {d}")
    node.heads = heads if x.rank == 3 else None
    node.head_dim = d
    p = node.rotary_attr or d
    if p % 2:
        raise node.error(f"rotary_dim must be even, got {p}")
    if p > d:
        raise node.error(f"rotary_embedding_dim ({p}) must not exceed the "
                         f"head size ({d})")
    node.rotary_dim = p

    # Positions and caches. Token sizes [B, S].
    tokens = (b, s)
    if pos is None:
        node.form = "none"
        if cos.rank != 3:
            raise node.error(f"without position_ids the caches must be "
                             f"pre-gathered [B, S, P/2], got shape "
                             f"{_fmt(cache_shape)}")
        refined_cache = _check_dims(node, "pre-gathered cos/sin cache",
                                    cache_shape, tokens + (p // 2,))
        refined_pos = None
    else:
        if cos.rank != 2:
            raise node.error(f"with position_ids the caches must be [M, P/2], "
                             f"got shape {_fmt(cache_shape)}")
        refined_cache = _check_dims(node, "cos/sin cache", cache_shape,
                                    (None, p // 2))
        if ms and (pos.rank == 0 or pos.rank == 1):
            node.form = "offset"
            if pos.rank == 1 and pos.shape[0] not in (None, 1):
                raise node.error(f"position_ids must be [1] (a start offset) "
                                 f"or [B, S], got shape {_fmt(pos.shape)}")
            refined_pos = pos.shape
        else:
            node.form = "explicit"
            if pos.rank != 2:
                raise node.error(f"position_ids must be [B, S], got shape "
                                 f"{_fmt(pos.shape)}")
            refined_pos = _check_dims(node, "position_ids", pos.shape, tokens)
    if x.rank == 4:
        refined_x = (b, heads, s, d)
    else:
        refined_x = (b, s, heads * d)
    return (_Type(x.elt, refined_x),
            {"x": refined_x, "cache": refined_cache, "pos": refined_pos})


def _check_dims(node: _Node, what: str, actual: Shape,
                expected: Shape) -> Shape:
    if len(actual) != len(expected):
        raise node.error(f"{what} has shape {_fmt(actual)}, expected "
                         f"{_fmt(expected)}")
    for a, e in zip(actual, expected):
        if a is not None and e is not None and a != e:
            names = {"position_ids": "(B, S) of X",
                     "pre-gathered cos/sin cache": "(B, S, rotary_dim / 2)",
                     "cos/sin cache": "(M, rotary_dim / 2)"}
            raise node.error(f"{what} has shape {_fmt(actual)}, expected "
                             f"{_fmt(expected)} "
                             f"{names.get(what, '')}".rstrip())
    return _join(actual, expected, what)


def _fmt(shape) -> str:
    if shape is None:
        return "(unknown)"
    return "(" + ", ".join("?" if d is None else str(d) for d in shape) + ")"


# ---------------------------------------------------------------------------
# The graph
# ---------------------------------------------------------------------------


@dataclasses.dataclass
class _Graph:
    inputs: List[Tuple[str, _Type]]          # function arguments, in order
    defaults: Dict[str, np.ndarray]          # initializers that are inputs
    constants: Dict[str, np.ndarray]         # other initializers
    nodes: List[_Node]
    outputs: List[Tuple[str, _Type]]         # result types (refined)
    types: Dict[str, _Type]                  # every value


def _load(model):
    import onnx
    from google.protobuf.message import DecodeError
    if isinstance(model, onnx.ModelProto):
        return model
    if isinstance(model, (bytes, bytearray)):
        what, load = "model (bytes)", lambda: onnx.load_from_string(
            bytes(model))
    elif isinstance(model, (str, os.PathLike)):
        what, load = os.fspath(model), lambda: onnx.load(os.fspath(model))
    else:
        raise TypeError(f"model must be an onnx.ModelProto or a path, got "
                        f"{type(model).__name__}")
    try:
        proto = load()
    except (DecodeError, RuntimeWarning, UnicodeDecodeError) as error:
        raise ValueError(f"{what}: not an ONNX model (protobuf cannot "
                         f"decode it: {error})") from None
    if not proto.HasField("graph"):
        raise ValueError(f"{what}: not an ONNX model (it decodes to a "
                         f"ModelProto without a graph)")
    return proto


def _analyze(model,
             input_shapes: Optional[Dict[str, Shape]] = None) -> _Graph:
    from onnx import numpy_helper
    graph = model.graph
    opsets = {o.domain: int(o.version) for o in model.opset_import}
    nodes = [_node_from_proto(n, i, opsets) for i, n in enumerate(graph.node)]

    initializers = {}
    for init in graph.initializer:
        initializers[init.name] = numpy_helper.to_array(init)
    if graph.sparse_initializer:
        raise OnnxImportError("sparse initializers are not supported")

    types: Dict[str, _Type] = {}
    inputs: List[Tuple[str, _Type]] = []
    defaults: Dict[str, np.ndarray] = {}
    for vi in graph.input:
        t = _type_from_proto(vi.type, vi.name)
        if vi.name in initializers:
            array = initializers[vi.name]
            defaults[vi.name] = array
            if t.shape is None:
                t = t.with_shape((None,) * array.ndim)
        if input_shapes and vi.name in input_shapes:
            shape = tuple(input_shapes[vi.name])
            if t.shape is not None:
                try:
                    shape = _join(shape, t.shape, f"input {vi.name!r}")
                except OnnxImportError:
                    raise OnnxImportError(
                        f"input {vi.name!r} has shape {_fmt(shape)}, the "
                        f"model declares {_fmt(t.shape)}") from None
            t = t.with_shape(shape)
        if t.shape is None:
            raise _NeedsStaticShape(f"input {vi.name!r} has no declared rank")
        types[vi.name] = t
        inputs.append((vi.name, t))
    constants = {}
    for name, array in initializers.items():
        if name in types:
            continue
        elt = _elt_of(array, name)
        types[name] = _Type(elt, tuple(int(d) for d in array.shape))
        constants[name] = array

    for node in nodes:
        operands = {}
        for role in ("x", "cos", "sin", "pos"):
            name = getattr(node, role)
            if name is None:
                operands[role] = None
                continue
            if name not in types:
                raise OnnxImportError(
                    f"{node.where()}: input {name!r} is not a graph input, an "
                    "initializer or an earlier node's output (nodes must be "
                    "topologically sorted)")
            operands[role] = types[name]
        out_type, _ = _resolve(node, operands["x"], operands["cos"],
                               operands["sin"], operands["pos"])
        if node.out in types:
            raise OnnxImportError(f"{node.where()}: output {node.out!r} is "
                                  "defined twice")
        types[node.out] = out_type

    outputs: List[Tuple[str, _Type]] = []
    for vi in graph.output:
        if vi.name not in types:
            raise OnnxImportError(f"graph output {vi.name!r} is not produced "
                                  "by any node, input or initializer")
        actual = types[vi.name]
        declared = _type_from_proto(vi.type, vi.name)
        if declared.elt != actual.elt:
            raise OnnxImportError(f"graph output {vi.name!r} is declared "
                                  f"{declared.elt}, computed {actual.elt}")
        shape = actual.shape
        if declared.shape is not None:
            try:
                shape = _join(declared.shape, actual.shape,
                              f"graph output {vi.name!r}")
            except OnnxImportError:
                raise OnnxImportError(
                    f"graph output {vi.name!r} is declared with shape "
                    f"{_fmt(declared.shape)}, computed "
                    f"{_fmt(actual.shape)}") from None
            # Keep the declared dynamic dims dynamic in the signature.
            shape = declared.shape
        outputs.append((vi.name, actual.with_shape(shape)))
    return _Graph(inputs=inputs, defaults=defaults, constants=constants,
                  nodes=nodes, outputs=outputs, types=types)


def _elt_of(array: np.ndarray, name: str) -> str:
    for elt, dtype in _NUMPY.items():
        if array.dtype == dtype:
            return elt
    raise OnnxImportError(f"initializer {name!r} has unsupported dtype "
                          f"{array.dtype}")


# ---------------------------------------------------------------------------
# IR emission
# ---------------------------------------------------------------------------


def _emit_node(em: _ir.Body, node: _Node,
               values: Dict[str, Tuple[str, _Type]],
               init: Optional[Tuple[str, _Type]]) -> Tuple[str, _Type]:
    """Emits one node; `init` is an (SSA, type) tensor to write the result
    into (run's output buffers), else a tensor.empty."""
    x, xt = values[node.x]
    cos, ct = values[node.cos]
    sin, st = values[node.sin]
    pos, pt = values[node.pos] if node.pos is not None else (None, None)
    _, refined = _resolve(node, xt, ct, st, pt)
    d, p = node.head_dim, node.rotary_dim
    stem = re.sub(r"[^A-Za-z0-9_]", "_", node.out)
    heads = [[0], [1], [2, 3]]  # [B, S, H*D] <-> [B, S, H, D]

    x = em.cast(x, xt, refined["x"], f"{stem}_x")
    xt = xt.with_shape(refined["x"])
    if node.rank == 3:
        b, s, _ = xt.shape
        t4 = _Type(xt.elt, (b, s, node.heads, d))
        batch, seq = em.dim(x, xt, 0), em.dim(x, xt, 1)
        sizes = [batch, seq, _ir.int_literal(node.heads),
                 _ir.int_literal(d)]
        dynamic = [v for v, n in ((batch, b), (seq, s)) if n is None]
        x4 = em.assign(f"{stem}_heads",
                       _ir.expand_shape(x, heads, sizes, xt, t4))
    else:
        t4, x4 = xt, x
        dynamic = [em.dim(x, xt, i) for i, n in enumerate(xt.shape)
                   if n is None]

    operands = {}
    if node.form == "explicit":
        pr = em.cast(pos, pt, refined["pos"], f"{stem}_pos")
        operands["positions"] = (pr, pt.with_shape(refined["pos"]))
    elif node.form == "offset":
        # A [1] tensor is one start offset for every row: extract the scalar
        # (a rank-1 offset operand would mean one offset per batch row).
        index = [em.index(0) for _ in range(pt.rank)]
        off = em.assign(f"{stem}_offset", _ir.tensor_extract(pos, pt, index))
        operands["offset"] = (off, pt.elt)
    cache_shape = refined["cache"]
    cr = em.cast(cos, ct, cache_shape, f"{stem}_cos")
    sr = em.cast(sin, st, cache_shape, f"{stem}_sin")
    operands["cache"] = (cr, sr, ct.with_shape(cache_shape))

    if init is None:
        empty = em.assign(f"{stem}_init", _ir.empty(t4, dynamic))
    else:
        iv, it = init
        iv = em.cast(iv, it, xt.shape, f"{stem}_dest")
        if node.rank == 3:
            empty = em.assign(f"{stem}_dest_heads",
                              _ir.expand_shape(iv, heads, sizes, xt, t4))
        else:
            empty = iv

    attrs = _ir.rope_attributes(
        layout="interleaved" if node.interleaved else "half",
        rotary_dim=p if p != d else None,
        token_dims=(0, 2) if node.rank == 4 else None)
    y4 = em.assign(f"{stem}_rot" if node.rank == 3 else stem,
                   _ir.rope_apply(x4, t4, empty, attrs, **operands))
    if node.rank == 3:
        y = em.assign(stem, _ir.collapse_shape(y4, heads, t4, xt))
        return y, xt
    return y4, t4


def _emit_function(g: _Graph, entry: bool, name: str) -> str:
    """@name on tensors (import_model), or, with `entry`, a memref function
    with a C interface taking the inputs and then the output buffers."""
    em = _ir.Body()
    values: Dict[str, Tuple[str, _Type]] = {}
    args = []
    header = []
    for input_name, t in g.inputs:
        ssa = em.fresh(input_name)
        if ssa[1:] != input_name:
            header.append(f"{ssa}: input {input_name!r}")
        if entry:
            mem = em.fresh(f"{input_name}_buffer")
            args.append((mem, t.memref()))
            em.define(ssa, _ir.to_tensor(mem, t))
        else:
            args.append((ssa, t.tensor()))
        values[input_name] = (ssa, t)
    for const_name, array in g.constants.items():
        t = g.types[const_name]
        values[const_name] = (em.assign(const_name,
                                        _ir.constant_dense(array, t)), t)

    out_buffers: Dict[str, Tuple[str, _Type]] = {}
    destinations = []
    if entry:
        for out_name, t in g.outputs:
            mem = em.fresh(f"{out_name}_out")
            args.append((mem, t.memref()))
            destinations.append((mem, t))
            if out_name not in out_buffers and any(
                    n.out == out_name for n in g.nodes):
                tv = em.assign(f"{out_name}_dest",
                               _ir.to_tensor(mem, t, writable=True))
                out_buffers[out_name] = (tv, t)

    for node in g.nodes:
        values[node.out] = _emit_node(em, node, values,
                                      out_buffers.get(node.out))

    results = []
    for out_name, t in g.outputs:
        ssa, vt = values[out_name]
        ssa = em.cast(ssa, vt, t.shape, f"{out_name}_result")
        results.append((ssa, t))
    if entry:
        for (ssa, t), (mem, _) in zip(results, destinations):
            em.emit(_ir.materialize(ssa, t, mem))
        em.ret()
        function = _ir.function(name, args, em, c_interface=True)
    else:
        em.ret(results)
        function = _ir.function(name, args, em,
                                results=[t.tensor() for _, t in results])
    header.append("results: " + ", ".join(repr(n) for n, _ in g.outputs))
    return _ir.comment("\n".join(header)) + function


def import_model(model, *, input_shapes: Optional[Dict[str, Sequence]] = None,
                 verify: bool = True) -> str:
    """The MLIR module (text) for an ONNX model of RotaryEmbedding nodes:
    one `func.func @main` on tensors whose arguments are the graph inputs and
    whose results are the graph outputs, each node a `rope.apply`.

    `model`: an onnx.ModelProto or a path. `input_shapes` overrides the
    declared shapes of inputs (None for a dynamic size). With `verify` the
    module is checked by the compiler (rope.apply's verifier). Raises
    UnsupportedOpError for a node that is not RotaryEmbedding (naming its op
    type and name), OnnxImportError for an invalid model."""
    model = _load(model)
    shapes = None
    if input_shapes:
        shapes = {k: tuple(None if d is None else int(d) for d in v)
                  for k, v in input_shapes.items()}
    g = _analyze(model, shapes)
    text = (_ir.comment(f"Imported from ONNX by rope_mlir.onnx (graph "
                        f"{model.graph.name!r}).") +
            _ir.module(_emit_function(g, False, "main")))
    if verify:
        try:
            _jit.lower(text, "builtin.module()")
        except _jit.CompileError as error:
            raise OnnxImportError(f"the imported IR does not verify: "
                                  f"{error}") from None
    return text


# ---------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------

_ENTRY = "rope_onnx_main"


#: The compiled entry modules, by IR text and the specs of their
#: parameters (the graph's IR is its own configuration).
_cache = _kernel_path.KernelCache(
    lambda key: _kernel_path.CompiledKernel(key[0], None, _ENTRY, key[1]))


def _arg_specs(g: _Graph) -> tuple:
    """The entry function's parameters: the graph inputs, then the output
    buffers (written apart from every input), each of its declared
    element type."""
    inputs = tuple(_kernel_path.ArgSpec(name, _NUMPY[t.elt])
                   for name, t in g.inputs)
    return inputs + tuple(
        _kernel_path.ArgSpec(name, _NUMPY[t.elt], writeable=True,
                             apart_from=(_kernel_path.EVERY_INPUT,))
        for name, t in g.outputs)


def cache_info() -> dict:
    """How many ONNX entry modules were compiled and how many runs reused
    one (keyed by IR text)."""
    return _cache.info()


def _check_feeds(g: _Graph, feeds: dict) -> Dict[str, np.ndarray]:
    arrays: Dict[str, np.ndarray] = {}
    names = {n for n, _ in g.inputs}
    unknown = sorted(set(feeds) - names)
    if unknown:
        raise ValueError(f"feeds name unknown input(s) {', '.join(unknown)}; "
                         f"the model's inputs are {sorted(names)}")
    for name, t in g.inputs:
        if name in feeds:
            value = feeds[name]
        elif name in g.defaults:
            value = g.defaults[name]
        else:
            raise ValueError(f"missing feed for input {name!r}")
        array = np.asarray(value)
        if array.dtype != _NUMPY[t.elt]:
            raise TypeError(f"input {name!r} has dtype {array.dtype}, the "
                            f"model declares {_NUMPY[t.elt]}")
        if array.ndim != t.rank or any(d is not None and d != a for d, a
                                       in zip(t.shape, array.shape)):
            raise ValueError(f"input {name!r} has shape {array.shape}, the "
                             f"model declares {_fmt(t.shape)}")
        if not (array.flags.c_contiguous and array.flags.aligned):
            # A copy is C-contiguous and aligned (np.ascontiguousarray
            # would also make a 0-d offset 1-d).
            array = array.copy(order="C")
        arrays[name] = array
    return arrays


def _check_runtime(g: _Graph, arrays: Dict[str, np.ndarray]) -> List[tuple]:
    """Checks every node against the concrete shapes (and positions against
    the cache rows); returns the output shapes."""
    shapes = {n: tuple(a.shape) for n, a in arrays.items()}
    for name, array in g.constants.items():
        shapes[name] = tuple(array.shape)
    values = dict(arrays)
    values.update(g.constants)
    for node in g.nodes:
        t = {}
        for role in ("x", "cos", "sin", "pos"):
            name = getattr(node, role)
            t[role] = (None if name is None else
                       g.types[name].with_shape(shapes[name]))
        probe = dataclasses.replace(node)
        out_type, _ = _resolve(probe, t["x"], t["cos"], t["sin"], t["pos"])
        if probe.head_dim != node.head_dim or probe.heads != node.heads:
            raise ValueError(f"{node.where()}: the feeds give head size "
                             f"{probe.head_dim}, the model was imported with "
                             f"{node.head_dim}")
        if node.form != "none" and node.pos in values:
            _check_positions(node, values[node.pos], t["x"].shape,
                             shapes[node.cos][0])
        shapes[node.out] = out_type.shape
    out = []
    for name, t in g.outputs:
        shape = shapes[name]
        if any(d is not None and d != a for d, a in zip(t.shape, shape)):
            raise ValueError(f"graph output {name!r} would have shape "
                             f"{shape}, the model declares {_fmt(t.shape)}")
        out.append(shape)
    return out


def _check_positions(node: _Node, pos: np.ndarray, x_shape, rows: int):
    if node.form == "explicit":
        if pos.size == 0:
            return
        low, high = int(pos.min()), int(pos.max())
    else:
        seq = x_shape[2] if node.rank == 4 else x_shape[1]
        if seq == 0 or x_shape[0] == 0:
            return
        low = int(pos.reshape(-1)[0])
        high = low + seq - 1
    if low < 0 or high >= rows:
        raise IndexError(f"{node.where()}: positions span [{low}, {high}] but "
                         f"the cos/sin cache has {rows} rows")


def run(model, feeds: dict) -> List[np.ndarray]:
    """Runs an ONNX model of RotaryEmbedding nodes on numpy feeds (by input
    name) with the compiled `rope.apply`; returns the graph outputs in
    order, as new numpy arrays.

    Sizes left dynamic by the model stay dynamic in the compiled code, so
    one compile serves every feed shape; if the IR needs a size the model
    leaves unknown (the head dim), the model is compiled for the feeds'
    shapes instead. Raises TypeError for a dtype mismatch, ValueError for
    shapes the node does not accept, IndexError for a position outside the
    cos/sin cache."""
    model = _load(model)
    try:
        g = _analyze(model)
    except _NeedsStaticShape:
        shapes = {}
        for vi in model.graph.input:
            if vi.name in feeds:
                shapes[vi.name] = tuple(np.shape(feeds[vi.name]))
        g = _analyze(model, shapes)
    arrays = _check_feeds(g, feeds)
    out_shapes = _check_runtime(g, arrays)
    ir = _ir.module(_emit_function(g, True, _ENTRY))
    outputs = [np.empty(shape, dtype=_NUMPY[t.elt])
               for shape, (_, t) in zip(out_shapes, g.outputs)]
    if outputs and not any(o.size for o in outputs):
        return outputs  # every output empty: nothing to compute
    compiled = _cache.get((ir, _arg_specs(g)))
    compiled.run([arrays[name] for name, _ in g.inputs] + outputs)
    return outputs


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------


def main(argv: Optional[Sequence[str]] = None) -> int:
    """`rope-import-onnx model.onnx [-o out.mlir]`: prints (or writes) the
    imported MLIR."""
    parser = argparse.ArgumentParser(
        prog="rope-import-onnx",
        description="Import an ONNX model of RotaryEmbedding nodes (opset 23 "
                    "or com.microsoft) as rope.apply IR: one function, @main.")
    parser.add_argument("model", help="the .onnx file")
    parser.add_argument("-o", "--output", default="-",
                        help="where to write the MLIR (default: stdout)")
    parser.add_argument("--no-verify", action="store_true",
                        help="do not run the rope verifier on the result")
    parser.add_argument("--input-shape", action="append", default=[],
                        metavar="NAME=D0,D1,...",
                        help="override an input's shape ('?' for dynamic)")
    args = parser.parse_args(argv)
    shapes = {}
    for spec in args.input_shape:
        name, _, dims = spec.partition("=")
        if not name or not dims:
            parser.error(f"bad --input-shape {spec!r}")
        shapes[name] = tuple(None if d.strip() == "?" else int(d)
                             for d in dims.split(","))
    try:
        text = import_model(args.model, input_shapes=shapes or None,
                            verify=not args.no_verify)
    except (OSError, ValueError, TypeError) as error:
        print(f"rope-import-onnx: error: {error}", file=sys.stderr)
        return 1
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
