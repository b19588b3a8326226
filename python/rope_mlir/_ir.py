# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""MLIR text for every module the package writes.

kernel.py (rope.apply kernels), attention.py (the scores and attention
modules) and onnx.py (the ONNX importer) say *what* to build; this module
alone spells it: element, tensor and memref types, float, integer and dense
literals, the rope attributes, each op's assembly format, func.func
signatures and returns, and SSA names. An assembly-format change is one edit
here; python/tests/api/test_ir_builder.py fails when a spelling reappears in
those modules.

Op builders return the op's text without a result (`Body.assign` names the
result), possibly several lines for an op with a region.
"""

from __future__ import annotations

import dataclasses
import math
import re
import sys
from typing import Iterable, List, Optional, Sequence, Tuple, Union

import ml_dtypes
import numpy as np

# ---------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------

FLOAT_TYPES = ("f16", "bf16", "f32", "f64")
INT_TYPES = ("i1", "i8", "i16", "i32", "i64", "index")

#: The numpy dtype holding each element type's values (index as int64,
#: its storage width in dense attributes).
DTYPES = {
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
    "i1": np.dtype(np.bool_),
    "i8": np.dtype(np.int8),
    "f8E4M3FN": np.dtype(ml_dtypes.float8_e4m3fn),
    "f8E5M2": np.dtype(ml_dtypes.float8_e5m2),
    "i16": np.dtype(np.int16),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
    "index": np.dtype(np.int64),
}
_BITS = {"f16": np.uint16, "bf16": np.uint16, "f32": np.uint32,
         "f64": np.uint64}

Shape = Tuple[Optional[int], ...]


def element_type(elt: str) -> str:
    """`elt` if it is an element type this module spells, else ValueError."""
    if elt not in DTYPES:
        raise ValueError(f"unsupported element type {elt!r}: one of "
                         f"{', '.join(DTYPES)}")
    return elt


def dims(shape: Iterable[Optional[int]]) -> str:
    """`2x?x8` for (2, None, 8): None is a dynamic size."""
    out = []
    for d in shape:
        if d is None:
            out.append("?")
        elif isinstance(d, (int, np.integer)) and not isinstance(
                d, (bool, np.bool_)) and d >= 0:
            out.append(str(int(d)))
        else:
            raise ValueError(f"a dimension must be a size >= 0 or None, got "
                             f"{d!r}")
    return "x".join(out)


def _dims_and_element(shape, elt: str) -> str:
    text = dims(shape)
    return f"{text}x{element_type(elt)}" if text else element_type(elt)


def tensor(shape, elt: str) -> str:
    """`tensor<2x?xf32>` (`tensor<f32>` for rank 0)."""
    return f"tensor<{_dims_and_element(shape, elt)}>"


def memref(shape, elt: str) -> str:
    """`memref<2x?xf32>` (identity layout; `memref<f32>` for rank 0)."""
    return f"memref<{_dims_and_element(shape, elt)}>"


@dataclasses.dataclass(frozen=True)
class Type:
    """A ranked shaped type; None in `shape` is a dynamic size. Spelled as a
    tensor or as the memref a function with a C interface takes."""

    elt: str
    shape: Shape

    @property
    def rank(self) -> int:
        return len(self.shape)

    def tensor(self) -> str:
        return tensor(self.shape, self.elt)

    def memref(self) -> str:
        return memref(self.shape, self.elt)

    def with_shape(self, shape) -> "Type":
        return Type(self.elt, tuple(shape))


TypeLike = Union[Type, str]


def _type_text(t: TypeLike) -> str:
    """A Type as its tensor type; a str is a scalar element type."""
    return t.tensor() if isinstance(t, Type) else element_type(t)


# ---------------------------------------------------------------------------
# Literals and attributes
# ---------------------------------------------------------------------------

def float_literal(value, elt: str = "f64") -> str:
    """The literal MLIR parses to exactly `value` rounded to `elt`: the
    shortest decimal that round-trips (with the '.' MLIR's lexer needs:
    `1.0e-05`, not `1e-05`), or, for inf and NaN (which have no decimal
    form), the bit pattern in hex (`0x7FF0000000000000`, `0xFF800000`),
    sign and NaN payload kept. A finite value that overflows `elt` is a
    ValueError (MLIR would refuse it too)."""
    if elt not in FLOAT_TYPES:
        raise ValueError(f"{elt!r} is not a float type: one of "
                         f"{', '.join(FLOAT_TYPES)}")
    if isinstance(value, (bool, np.bool_)) or not isinstance(
            value, (int, float, np.integer, np.floating)):
        raise TypeError(f"a float literal needs a real number, got "
                        f"{value!r} ({type(value).__name__})")
    with np.errstate(over="ignore", invalid="ignore"):
        narrow = np.asarray(value).astype(DTYPES[elt])
    as_float = float(narrow)
    if not math.isfinite(as_float):
        if math.isfinite(float(value)):
            raise ValueError(f"{value!r} overflows {elt}")
        width = DTYPES[elt].itemsize * 2
        return "0x%0*X" % (width, int(narrow.view(_BITS[elt])))
    text = repr(as_float)
    if "." not in text:  # "1e-05", "5e-324", "1e+16"
        mantissa, _, exponent = text.partition("e")
        text = f"{mantissa}.0e{exponent}"
    return text


def int_literal(value) -> str:
    """An integer (not a bool) as decimal text."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(
            value, (int, np.integer)):
        raise TypeError(f"an integer literal needs an int, got {value!r} "
                        f"({type(value).__name__})")
    return str(int(value))


def float_attr(value, elt: str = "f64") -> str:
    """`1.5 : f64`."""
    return f"{float_literal(value, elt)} : {elt}"


def int_attr(value, elt: str = "i64") -> str:
    """`3 : i64`."""
    if elt not in INT_TYPES or elt == "i1":
        raise ValueError(f"{elt!r} is not an integer type for an attribute")
    return f"{int_literal(value)} : {elt}"


def i64_array(values: Iterable[int]) -> str:
    """`array<i64: 0, 2>` (a DenseI64ArrayAttr)."""
    return "array<i64: " + ", ".join(int_literal(v) for v in values) + ">"


def dense(array, t: Type) -> str:
    """`dense<...> : tensor<...>` holding `array` (converted to t.elt):
    floats and integers as the hex of their little-endian storage (exact,
    and short for large tables), i1 as nested true/false lists."""
    data = np.ascontiguousarray(array, dtype=DTYPES[element_type(t.elt)])
    if data.shape != tuple(t.shape):
        raise ValueError(f"dense: data of shape {data.shape} for "
                         f"{t.tensor()}")
    if data.size == 0:
        return f"dense<> : {t.tensor()}"
    if t.elt == "i1":
        def nested(a):
            if a.ndim == 0:
                return "true" if a else "false"
            return "[" + ", ".join(nested(r) for r in a) + "]"
        return f"dense<{nested(data)}> : {t.tensor()}"
    raw = data.tobytes() if sys.byteorder == "little" else \
        data.byteswap().tobytes()
    return f'dense<"0x{raw.hex().upper()}"> : {t.tensor()}'


def attr_dict(entries: Sequence[Tuple[str, Optional[str]]]) -> str:
    """`{name = value, flag}` from (name, value text) pairs; a None value
    is a unit attribute."""
    return "{" + ", ".join(name if value is None else f"{name} = {value}"
                           for name, value in entries) + "}"


# ---------------------------------------------------------------------------
# The rope dialect
# ---------------------------------------------------------------------------

LAYOUTS = ("half", "interleaved")


def layout_attr(layout: str) -> str:
    """`#rope.layout<half>`."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be 'half' or 'interleaved', got "
                         f"{layout!r}")
    return f"#rope.layout<{layout}>"


def default_freqs(base: float) -> str:
    """`#rope.default<base = 10000.0>`: θ_i = base^(-2i/P)."""
    return f"#rope.default<base = {float_literal(base)}>"


def rope_attributes(*, layout: str, rotary_dim: Optional[int] = None,
                    token_dims: Optional[Sequence[int]] = None,
                    freqs: Optional[str] = None, mrope: Optional[str] = None,
                    magnitude: float = 1.0, inverse: bool = False,
                    norm_epsilon: Optional[float] = None) -> str:
    """The attribute dictionary of a `rope.apply`. `freqs` and `mrope` are
    attribute texts (as the C++ importer prints them, or default_freqs);
    freqs None: none (the op reads a cos/sin cache). The magnitude is
    stated only when it is not 1, `inverse` only when set."""
    entries = [("layout", layout_attr(layout))]
    if rotary_dim is not None:
        entries.append(("rotary_dim", int_attr(rotary_dim)))
    if token_dims is not None:
        entries.append(("token_dims", i64_array(token_dims)))
    if freqs is not None:
        entries.append(("freqs", freqs))
    if mrope is not None:
        entries.append(("mrope", mrope))
    if magnitude != 1.0:
        entries.append(("magnitude", float_attr(magnitude)))
    if inverse:
        entries.append(("inverse", None))
    if norm_epsilon is not None:
        entries.append(("norm_epsilon", float_attr(norm_epsilon)))
    return attr_dict(entries)


def rope_apply(x: str, t: Type, init: str, attributes: str, *,
               positions: Optional[Tuple[str, TypeLike]] = None,
               offset: Optional[Tuple[str, TypeLike]] = None,
               cache: Optional[Tuple[str, str, TypeLike]] = None,
               norm: Optional[Tuple[str, TypeLike]] = None,
               quant_scale: Optional[Tuple[str, TypeLike]] = None,
               slots: Optional[Tuple[str, TypeLike]] = None,
               result: Optional[Type] = None) -> str:
    """`rope.apply ins(x) [positions(..) | offset(..)] [cache(cos, sin)]
    [norm(w)] [quant_scale(s)] [slots(s)] outs(init) {attributes} ->
    result`. positions/offset/norm/quant_scale/slots: (value, type); an
    offset type given as an element type ("i64") is a scalar. cache: (cos,
    sin, type). result: the destination's type (a quantized one with
    quant_scale, the KV cache with slots), default t."""
    if positions is not None and offset is not None:
        raise ValueError("rope.apply takes positions or an offset, not both")
    tt = t.tensor()
    parts = [f"rope.apply ins({x} : {tt})"]
    if positions is not None:
        parts.append(f"positions({positions[0]} : "
                     f"{_type_text(positions[1])})")
    if offset is not None:
        parts.append(f"offset({offset[0]} : {_type_text(offset[1])})")
    if cache is not None:
        ct = _type_text(cache[2])
        parts.append(f"cache({cache[0]}, {cache[1]} : {ct}, {ct})")
    if norm is not None:
        parts.append(f"norm({norm[0]} : {_type_text(norm[1])})")
    if quant_scale is not None:
        parts.append(f"quant_scale({quant_scale[0]} : "
                     f"{_type_text(quant_scale[1])})")
    if slots is not None:
        parts.append(f"slots({slots[0]} : {_type_text(slots[1])})")
    rt = (result or t).tensor()
    parts.append(f"outs({init} : {rt}) {attributes} -> {rt}")
    return " ".join(parts)


def cache_write(x: str, t: Type, slots: Tuple[str, TypeLike], init: str,
                result: Type, *,
                quant_scale: Optional[Tuple[str, TypeLike]] = None,
                token_dims: Optional[Sequence[int]] = None) -> str:
    """`rope.cache_write ins(x) slots(s) [quant_scale(q)] outs(cache)
    [{token_dims = ..}] -> result` (the KV-cache append of V rows)."""
    parts = [f"rope.cache_write ins({x} : {t.tensor()})",
             f"slots({slots[0]} : {_type_text(slots[1])})"]
    if quant_scale is not None:
        parts.append(f"quant_scale({quant_scale[0]} : "
                     f"{_type_text(quant_scale[1])})")
    rt = result.tensor()
    parts.append(f"outs({init} : {rt})")
    if token_dims is not None:
        parts.append(attr_dict([("token_dims", i64_array(token_dims))]))
    parts.append(f"-> {rt}")
    return " ".join(parts)


# ---------------------------------------------------------------------------
# Other ops (upstream dialects)
# ---------------------------------------------------------------------------

def to_tensor(memref_value: str, t: Type, writable: bool = False) -> str:
    """`bufferization.to_tensor %m restrict [writable] : memref to tensor`
    (a C-interface argument as a tensor)."""
    return (f"bufferization.to_tensor {memref_value} restrict"
            f"{' writable' if writable else ''} : {t.memref()} to "
            f"{t.tensor()}")


def materialize(value: str, t: Type, dest: str) -> str:
    """Writes the tensor `value` into the memref argument `dest`."""
    return (f"bufferization.materialize_in_destination {value} in restrict "
            f"writable {dest} : ({t.tensor()}, {t.memref()}) -> ()")


def constant(value, elt: str) -> str:
    """`arith.constant <value> : elt` for a scalar (float or integer)."""
    if elt in FLOAT_TYPES:
        return f"arith.constant {float_literal(value, elt)} : {elt}"
    if elt == "i1":
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"an i1 constant needs a bool, got {value!r}")
        return f"arith.constant {'true' if value else 'false'}"
    return f"arith.constant {int_literal(value)} : {element_type(elt)}"


def constant_dense(array, t: Type) -> str:
    """`arith.constant dense<...> : tensor<...>`."""
    return f"arith.constant {dense(array, t)}"


def empty(t: Type, sizes: Sequence[str] = ()) -> str:
    """`tensor.empty(sizes of the dynamic dims) : tensor<...>`."""
    return f"tensor.empty({', '.join(sizes)}) : {t.tensor()}"


def tensor_dim(value: str, t: Type, index: str) -> str:
    return f"tensor.dim {value}, {index} : {t.tensor()}"


def tensor_cast(value: str, src: Type, dst: Type) -> str:
    return f"tensor.cast {value} : {src.tensor()} to {dst.tensor()}"


def tensor_extract(value: str, t: Type, indices: Sequence[str]) -> str:
    return f"tensor.extract {value}[{', '.join(indices)}] : {t.tensor()}"


def _reassociation(groups: Sequence[Sequence[int]]) -> str:
    return "[" + ", ".join("[" + ", ".join(int_literal(i) for i in g) + "]"
                           for g in groups) + "]"


def expand_shape(value: str, groups, sizes: Sequence[str], src: Type,
                 dst: Type) -> str:
    """`tensor.expand_shape` with reassociation `groups` and the result's
    sizes (SSA values or literals)."""
    return (f"tensor.expand_shape {value} {_reassociation(groups)} "
            f"output_shape [{', '.join(sizes)}] : {src.tensor()} into "
            f"{dst.tensor()}")


def collapse_shape(value: str, groups, src: Type, dst: Type) -> str:
    return (f"tensor.collapse_shape {value} {_reassociation(groups)} : "
            f"{src.tensor()} into {dst.tensor()}")


def arith(op: str, operands: Sequence[str], elt: str) -> str:
    """`arith.<op> %a, %b : elt`."""
    return f"arith.{op} {', '.join(operands)} : {element_type(elt)}"


def math_op(op: str, operands: Sequence[str], elt: str) -> str:
    """`math.<op> %a : elt`."""
    return f"math.{op} {', '.join(operands)} : {element_type(elt)}"


def affine_map(domain, results) -> str:
    """`affine_map<(b, m) -> (m, b)>`; dims given as sequences of names or
    as space-separated names ("b m")."""
    def names(d):
        return d.split() if isinstance(d, str) else list(d)
    return (f"affine_map<({', '.join(names(domain))}) -> "
            f"({', '.join(names(results))})>")


def _ins_outs(keyword: str, values: Sequence[Tuple[str, Type]]) -> str:
    return (f"{keyword}({', '.join(v for v, _ in values)} : "
            f"{', '.join(t.tensor() for _, t in values)})")


def fill(value: str, elt: str, init: str, t: Type) -> str:
    return (f"linalg.fill ins({value} : {element_type(elt)}) "
            f"outs({init} : {t.tensor()}) -> {t.tensor()}")


def generic(maps: Sequence[str], iterators: Sequence[str],
            ins: Sequence[Tuple[str, Type]], init: Tuple[str, Type],
            block_args: Sequence[Tuple[str, str]],
            ops: Sequence[str]) -> str:
    """A `linalg.generic` with one result; `block_args` (name, element
    type) and `ops` (lines, ending with linalg.yield) form its region."""
    iterator_list = ", ".join(f'"{i}"' for i in iterators)
    t = init[1].tensor()
    lines = [f"linalg.generic {{indexing_maps = [{', '.join(maps)}], "
             f"iterator_types = [{iterator_list}]}} "
             f"{_ins_outs('ins', ins)} {_ins_outs('outs', [init])} {{",
             "^bb0(" + ", ".join(f"{n}: {e}" for n, e in block_args) + "):"]
    lines += ["  " + op for op in ops]
    lines.append(f"}} -> {t}")
    return "\n".join(lines)


def linalg_yield(values: Sequence[str], elts: Sequence[str]) -> str:
    return f"linalg.yield {', '.join(values)} : {', '.join(elts)}"


def batch_matmul(maps: Sequence[str], ins: Sequence[Tuple[str, Type]],
                 init: Tuple[str, Type]) -> str:
    """`linalg.batch_matmul indexing_maps = [...]` (MLIR 22's form that can
    transpose an operand)."""
    return (f"linalg.batch_matmul indexing_maps = [{', '.join(maps)}] "
            f"{_ins_outs('ins', ins)} {_ins_outs('outs', [init])} -> "
            f"{init[1].tensor()}")


def named(op: str, ins: Sequence[Tuple[str, Type]],
          init: Tuple[str, Type]) -> str:
    """An elementwise named op: `linalg.<op> ins(..) outs(..) -> t`."""
    return (f"linalg.{op} {_ins_outs('ins', ins)} "
            f"{_ins_outs('outs', [init])} -> {init[1].tensor()}")


def softmax(dimension: int, src: Tuple[str, Type],
            init: Tuple[str, Type]) -> str:
    return (f"linalg.softmax dimension({int_literal(dimension)}) "
            f"{_ins_outs('ins', [src])} {_ins_outs('outs', [init])} -> "
            f"{init[1].tensor()}")


def reduce(combiner: str, src: Tuple[str, Type], init: Tuple[str, Type],
           dimensions: Sequence[int]) -> str:
    """`linalg.reduce { arith.<combiner> } ... dimensions = [..]`."""
    return (f"linalg.reduce {{ arith.{combiner} }} {_ins_outs('ins', [src])} "
            f"{_ins_outs('outs', [init])} dimensions = "
            f"[{', '.join(int_literal(d) for d in dimensions)}]")


def broadcast(src: Tuple[str, Type], init: Tuple[str, Type],
              dimensions: Sequence[int]) -> str:
    return (f"linalg.broadcast {_ins_outs('ins', [src])} "
            f"{_ins_outs('outs', [init])} dimensions = "
            f"[{', '.join(int_literal(d) for d in dimensions)}]")


# ---------------------------------------------------------------------------
# Functions and modules
# ---------------------------------------------------------------------------

class Body:
    """One function body: unique SSA names, its lines, cached index
    constants."""

    def __init__(self):
        self.lines: List[str] = []
        self._names: set = set()
        self._index: dict = {}

    def fresh(self, hint: str) -> str:
        """A new SSA name from `hint` (made a valid identifier; `_1`, `_2`
        appended when taken)."""
        base = re.sub(r"[^A-Za-z0-9_$.]", "_", hint) or "v"
        if not re.match(r"[A-Za-z_]", base):
            base = "v" + base
        name, n = base, 0
        while name in self._names:
            n += 1
            name = f"{base}_{n}"
        self._names.add(name)
        return "%" + name

    def region(self) -> "Body":
        """The body of a region of an op in this body: it sees this body's
        values, so its names avoid theirs (MLIR refuses a redefinition)."""
        child = Body()
        child._names = set(self._names)
        return child

    def emit(self, op: str):
        """An op without results (its text from a builder here)."""
        self.lines.extend(op.split("\n"))

    def define(self, name: str, op: str):
        """`%name = op` for a name from fresh()."""
        self.emit(f"{name} = {op}")

    def assign(self, hint: str, op: str) -> str:
        """`%name = op` with a fresh name from `hint`; returns the name."""
        name = self.fresh(hint)
        self.define(name, op)
        return name

    def index(self, value: int) -> str:
        """An `index` constant, one per value in the function."""
        if value not in self._index:
            self._index[value] = self.assign(f"c{value}",
                                             constant(value, "index"))
        return self._index[value]

    def dim(self, value: str, t: Type, i: int) -> str:
        """Dim i of `value`: its static size as a literal, or a tensor.dim."""
        if t.shape[i] is not None:
            return int_literal(t.shape[i])
        return self.assign("dim", tensor_dim(value, t, self.index(i)))

    def cast(self, value: str, src: Type, shape, hint: str) -> str:
        """`value` cast to `shape` (itself when the shape is src's)."""
        if tuple(shape) == src.shape:
            return value
        return self.assign(hint, tensor_cast(value, src,
                                             src.with_shape(shape)))

    def ret(self, values: Sequence[Tuple[str, TypeLike]] = ()):
        """`return %a, %b : t1, t2` (or `return`)."""
        if not values:
            self.emit("return")
        else:
            self.emit("return " + ", ".join(v for v, _ in values) + " : " +
                      ", ".join(_type_text(t) for _, t in values))


def function(name: str, args: Sequence[Tuple[str, str]], body: Body, *,
             results: Optional[Sequence[str]] = None,
             c_interface: bool = False) -> str:
    """`func.func @name(%a: t, ...) [-> (results)] [attributes
    {llvm.emit_c_interface}] { body }` with a final newline. `args` are
    (SSA name, type text); `results` type texts."""
    signature = f"func.func @{name}(" + ", ".join(
        f"{v}: {t}" for v, t in args) + ")"
    if results is not None:
        signature += f" -> ({', '.join(results)})"
    if c_interface:
        signature += " attributes {llvm.emit_c_interface}"
    lines = [signature + " {"] + ["  " + line for line in body.lines] + ["}"]
    return "\n".join(lines) + "\n"


def comment(text: str) -> str:
    """`// text`, one line per line of text."""
    return "".join(f"// {line}\n" for line in text.splitlines())


def module(*functions: str) -> str:
    """`module { ... }` around function texts, indented."""
    inner = "".join("  " + line + "\n" if line else "\n"
                    for text in functions for line in text.splitlines())
    return "module {\n" + inner + "}\n"
