# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The one path from IR to a checked call, shared by every entry point.

Each entry point (kernel.Kernel, fused.QKKernel, cache.AppendKernel,
mla.MLAKernel, attention.ScoresKernel / AttentionKernel, onnx.run, and
rope_mlir.jit's compiled.CompiledFunction) is a configuration, the IR
emitted for it (or, for jit, the module given) and the specs of its
arguments; this module holds the rest, once:

- `ArgSpec`: one argument of a compiled function, declared: its name (the
  one every error message says), exact element type, static sizes, whether
  the kernel writes it, which arguments it must not overlap (`apart_from`)
  and its shape rule (`like`: per dim, the other argument's dim whose size
  it must equal). Both call paths read them. The C++ fast call:
  kernel.RotationChecks.make_plan passes the compiled function's specs
  (`ArgSpec.plan_entry`) and a few rotation facts to the extension's
  make_plan (lib/Runtime/KernelCall.cpp), which reads them once and derives
  every check of a call from them: dtype, rank, static sizes, the shape
  rules, writeability and the overlaps `apart_from` forbids. The Python
  path: `ShapeRule` (a spec's rank, static sizes and `like`, compiled once)
  is how RotationChecks, fused.QKKernel, cache.AppendKernel and
  mla.apply_mla check the shapes of their arguments against each other, `check_destination` and
  `check_apart` how they check destinations; so a shape relation between
  two arguments is written once, in the spec, and its message (naming both)
  is ShapeRule's.
- `CompiledKernel`: IR compiled once, the C interface's argument types read
  from the module's own signature (ropeJitFunctionType) and checked against
  the specs, the call made by the C++ extension's `run` or through ctypes;
  with `results=True` (rope_mlir.jit's functions, which return values) the
  result struct or scalar allocated from the signature and the call made
  through the packed wrapper under ropeJitInvoke (`call`).
- `KernelCache`: the one compile cache, by configuration (or IR text).
- The value checks (integers, reals, flags, integer and float arrays,
  offsets) that the entry points' argument checks are written with, and
  `check_input`, which checks an argument against its spec alone (jit's).
"""

from __future__ import annotations

import ctypes
import dataclasses
import math
import operator
import re
import threading
from typing import Callable, Optional, Tuple

import ml_dtypes
import numpy as np

from . import _ir, _jit

# -- element types -----------------------------------------------------------

#: Float data types of rope.apply, by MLIR name.
DTYPES = {
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
}
DTYPE_NAMES = {dtype: name for name, dtype in DTYPES.items()}
#: Quantized destinations (quant=...): numpy dtype and MLIR element type.
QUANT_DTYPES = {
    "f8e4m3fn": (np.dtype(ml_dtypes.float8_e4m3fn), "f8E4M3FN"),
    "f8e5m2": (np.dtype(ml_dtypes.float8_e5m2), "f8E5M2"),
    "i8": (np.dtype(np.int8), "i8"),
}
INT_DTYPES = {"i32": np.dtype(np.int32), "i64": np.dtype(np.int64)}
I64 = np.iinfo(np.int64)
BOOLS = (bool, np.bool_)
#: Scalars a C interface takes by value, by MLIR type.
SCALAR_CTYPES = {
    "f32": ctypes.c_float,
    "f64": ctypes.c_double,
    "i1": ctypes.c_uint8,
    "i8": ctypes.c_int8,
    "i16": ctypes.c_int16,
    "i32": ctypes.c_int32,
    "i64": ctypes.c_int64,
    "index": ctypes.c_int64,
}


# -- value checks --------------------------------------------------------------
# Compiled kernels trust every size, stride and index they are given, so each
# argument is checked first. Integers and flags must have the right Python
# type: no float, bool or string is truncated or made truthy.

def integer(value, name: str) -> int:
    """An int or numpy integer (not a bool) as an int; else TypeError."""
    if value.__class__ is int:  # the common case, without the ABC checks
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, BOOLS):
        return int(value)
    raise TypeError(f"{name} must be an integer, got {value!r} "
                    f"({type(value).__name__})")


def real(value, name: str) -> float:
    """A finite real number (not a bool) as a float."""
    if value.__class__ is float and math.isfinite(value):
        return value
    if not isinstance(value, (int, float, np.integer, np.floating)) or \
            isinstance(value, BOOLS):
        raise TypeError(f"{name} must be a real number, got {value!r} "
                        f"({type(value).__name__})")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return value


def flag(value, name: str) -> bool:
    """A bool (or numpy bool); a string such as "false" is refused."""
    if value is True or value is False:
        return value
    if isinstance(value, BOOLS):
        return bool(value)
    raise TypeError(f"{name} must be a bool, got {value!r} "
                    f"({type(value).__name__})")


def shape(value, name: str) -> tuple:
    """A static shape: a sequence of non-negative ints, as a tuple."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise TypeError(f"{name} must be a sequence of integers, got "
                        f"{value!r}")
    sizes = tuple(integer(d, f"{name} entry") for d in value)
    if any(d < 0 for d in sizes):
        raise ValueError(f"{name} has a negative size: {sizes}")
    return sizes


def is_zero(offset) -> bool:
    """Whether `offset` is the integer 0 (the default: no offset)."""
    return (isinstance(offset, (int, np.integer)) and
            not isinstance(offset, BOOLS) and offset == 0)


def scalar_offset(offset, name: str = "offset") -> int:
    """A scalar offset (int, numpy integer, 0-d integer array) as an int
    that fits int64."""
    if offset.__class__ is int and -2**63 <= offset < 2**63:
        return offset
    if isinstance(offset, np.ndarray) and offset.ndim == 0:
        if offset.dtype.kind not in "iu":
            raise TypeError(f"{name} must be an integer, got a 0-d array of "
                            f"{offset.dtype}")
        offset = offset[()]
    value = integer(offset, name)
    if not I64.min <= value <= I64.max:
        raise ValueError(f"{name} = {value} does not fit int64 "
                         f"[{I64.min}, {I64.max}]")
    return value


def check_offset_sum(offset: int, sequence: int, name: str) -> None:
    """The largest position an offset gives, offset + sequence - 1, must
    fit int64 (the kernel's sum would wrap to a negative position)."""
    if sequence and offset > I64.max - (sequence - 1):
        raise ValueError(
            f"{name} = {offset} + the {sequence} sequence indices [0, "
            f"{sequence}) overflows int64 (positions must be at most "
            f"{I64.max})")


def integer_array(value, name: str, dtype: np.dtype) -> np.ndarray:
    """`value` as a C-contiguous, aligned array of the integer type `dtype`.
    Only integer arrays are accepted (no bool, float or object); values are
    converted only when each fits `dtype`, else ValueError naming the range
    (never a wrapping cast)."""
    array = value if type(value) is np.ndarray else np.asarray(value)
    if array.dtype != dtype:
        kind = array.dtype.kind
        if kind not in "iu":
            if array.size == 0 and not isinstance(value, np.ndarray):
                return np.zeros(array.shape, dtype)  # [] has no dtype
            raise TypeError(f"{name} must be an integer array, got dtype "
                            f"{array.dtype}")
        if array.size and not np.can_cast(array.dtype, dtype):
            info = np.iinfo(dtype)
            low, high = int(array.min()), int(array.max())
            if low < info.min or high > info.max:
                raise ValueError(
                    f"{name} span [{low}, {high}], outside the range of the "
                    f"kernel's {dtype} [{info.min}, {info.max}]")
        return array.astype(dtype, order="C")
    flags = array.flags
    if not (flags.c_contiguous and flags.aligned):
        array = array.copy(order="C")
    return array


def float_array(value, name: str, dtype: np.dtype) -> np.ndarray:
    """`value` as a C-contiguous, aligned array of exactly `dtype` (a
    different float type is refused, not converted)."""
    array = value if type(value) is np.ndarray else np.asarray(value)
    if array.dtype != dtype:
        raise TypeError(f"{name} has dtype {array.dtype}, expected {dtype}")
    flags = array.flags
    if not (flags.c_contiguous and flags.aligned):
        array = array.copy(order="C")
    return array


def dtype_name(dtype, argument: Optional[str] = None) -> str:
    """The MLIR name of a rope.apply float type; TypeError naming
    `argument` for any other."""
    name = DTYPE_NAMES.get(dtype) if isinstance(dtype, np.dtype) else None
    if name is not None:
        return name
    dtype = np.dtype(dtype)
    for name, candidate in DTYPES.items():
        if candidate == dtype:
            return name
    what = (f"{argument} has the unsupported data type {dtype}"
            if argument is not None else f"unsupported data type {dtype}")
    raise TypeError(f"{what}: rope.apply takes float16, bfloat16, float32 "
                    "or float64")


def scale_array(scale) -> np.ndarray:
    """A quantization scale as an array; a Python number becomes a float32
    scalar (rounded once)."""
    if isinstance(scale, np.ndarray):
        return scale
    if isinstance(scale, (int, float)) and not isinstance(scale, BOOLS):
        return np.asarray(np.float32(scale))
    return np.asarray(scale)


def quant_name(quant_dtype) -> str:
    """quant_dtype (a name or a numpy / ml_dtypes dtype) as a QUANT_DTYPES
    key."""
    if isinstance(quant_dtype, str):
        name = quant_dtype.lower().replace("float8_", "f8").replace(
            "int8", "i8")
        if name in QUANT_DTYPES:
            return name
    else:
        try:
            dtype = np.dtype(quant_dtype)
        except TypeError:
            dtype = None
        for name, (candidate, _) in QUANT_DTYPES.items():
            if dtype == candidate:
                return name
    raise ValueError(f"quant_dtype must be 'f8e4m3fn', 'f8e5m2' or 'i8' (or "
                     f"ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2, "
                     f"numpy.int8), got {quant_dtype!r}")


def int_range(values: np.ndarray) -> tuple:
    """(min, max) of a non-empty integer array: one pass in C++ (the
    extension's int_range), or numpy's min and max."""
    fast = _jit.kernel_call_module()
    found = fast.int_range(np.ndarray, values) if fast is not None else None
    if found is None:
        return int(values.min()), int(values.max())
    return found


def first_duplicate(values: np.ndarray) -> Optional[int]:
    """The smallest value >= 0 that `values` (slots, cache rows) holds
    twice, or None: one pass in C++ (the extension's first_duplicate),
    or numpy's sort."""
    fast = _jit.kernel_call_module()
    found = (fast.first_duplicate(np.ndarray, values) if fast is not None
             else NotImplemented)
    if found is not NotImplemented:
        return found
    # No extension, or not int64 C-contiguous: numpy's sort.
    valid = values[values >= 0].ravel()
    if valid.size > 1:
        ordered = np.sort(valid)
        same = ordered[1:] == ordered[:-1]
        if same.any():
            return int(ordered[1:][same][0])
    return None


# -- argument specs ------------------------------------------------------------

#: ArgSpec.apart_from: apart from every argument the kernel reads.
EVERY_INPUT = "*"


@dataclasses.dataclass(frozen=True)
class ArgSpec:
    """One parameter of a compiled function's C interface, declared.

    name: what the caller calls it, and every message about it says.
    dtype: its exact element type (None: checked by the entry point, or a
    scalar). shape: its static sizes (None entries dynamic), None when the
    entry point checks the shape (it depends on other arguments).
    scalar: passed by value, not as a memref: an int64 (an offset) or, with
    a dtype, a scalar of that type (rope_mlir.jit's f32, i1, index...).
    writeable: the kernel writes it in place (a destination, a cache).
    apart_from: the names of the arguments it must not overlap (EVERY_INPUT:
    all that the kernel reads); only destinations have them. Any two
    arguments the kernel writes must be apart too.
    effect: how messages say the kernel writes it ("writes out",
    "rotates x in place (out=x)"); None: "writes <name>".
    like: the shape rule: per dim, (name, dim) of the argument whose size
    it must equal (out: x's, dim by dim; positions: x's token dims), or
    None; () when no dim has one. A non-empty like also fixes the rank.
    Both paths read it: the C++ plan, and `ShapeRule` in Python.
    why: what the shape rule means, for messages ("one per head"); None.
    declared: the type the function's signature declares ("index",
    "tensor<?x8xf32>"), when the spec is read from it (rope_mlir.jit): the
    signature must still say it, and messages name a scalar's type by it."""

    name: str
    dtype: Optional[np.dtype] = None
    shape: Optional[Tuple[Optional[int], ...]] = None
    scalar: bool = False
    writeable: bool = False
    apart_from: Tuple[str, ...] = ()
    effect: Optional[str] = None
    like: Tuple[Optional[Tuple[str, int]], ...] = ()
    declared: Optional[str] = None
    why: Optional[str] = None

    def element(self):
        """The (dtype, itemsize) pair the C++ plan reads, or None."""
        return None if self.dtype is None else (self.dtype,
                                                self.dtype.itemsize)

    def static_shape(self):
        """The shape when every size is static (the C++ plan's), else
        None."""
        if self.shape is None or any(d is None for d in self.shape):
            return None
        return tuple(int(d) for d in self.shape)

    def plan_entry(self) -> tuple:
        """The spec as the C++ plan reads it (KernelCall.cpp, make_plan):
        (name, (dtype, itemsize) or None, shape or None, scalar, writeable,
        apart_from, like)."""
        return (self.name, self.element(),
                None if self.shape is None else tuple(self.shape),
                self.scalar, self.writeable, tuple(self.apart_from),
                tuple(self.like))

    def writes(self) -> str:
        return self.effect if self.effect is not None else \
            f"writes {self.name}"


class ShapeRule:
    """A spec's shape, as the Python checks read it: its rank and static
    sizes (`shape`) and its shape rule (`like`: per dim, the (argument, dim)
    whose size it must equal), compiled once per spec; the C++ plan reads
    the same fields. `holds(shape, shapes)` (shapes: the shapes of the
    arguments `like` names, by name, already checked) is the per-call test;
    `message` says, on the error path, what was expected and why, naming
    the argument and those its rule names. `check` raises it."""

    def __init__(self, spec: ArgSpec):
        self.spec = spec
        like = tuple(spec.like)
        self.rank = (len(spec.shape) if spec.shape is not None else
                     len(like) if like else None)
        # Static sizes where no rule says otherwise (a rule's size is the
        # other argument's, itself checked against its own spec).
        static = tuple((d, size) for d, size in enumerate(spec.shape or ())
                       if size is not None and
                       (d >= len(like) or like[d] is None))
        if static:
            dims = _getter(tuple(d for d, _ in static))
            self._static = (dims, dims(spec.shape))
        else:
            self._static = None
        groups = _rule_groups(like)
        self._groups = tuple((other, _getter(mine), _getter(theirs))
                             for other, (mine, theirs) in groups.items())
        # The per-call test, specialized for the usual rules (it is on the
        # Python path of every call): static sizes only (a gathered cache),
        # another argument's whole shape (out), or some of its dims
        # (positions, a cache) and nothing static.
        rank = self.rank
        if not groups and self._static is not None:
            dims, sizes = self._static
            self.holds = lambda shape, shapes: (
                len(shape) == rank and dims(shape) == sizes)
        elif len(groups) == 1 and self._static is None:
            (other, (mine, theirs)), = groups.items()
            if mine == theirs == list(range(rank)):
                self.holds = lambda shape, shapes: (
                    len(shape) == rank and shape == shapes[other][:rank])
            else:
                mine, theirs = self._groups[0][1:]
                self.holds = lambda shape, shapes: (
                    len(shape) == rank and
                    mine(shape) == theirs(shapes[other]))

    def holds(self, shape: tuple, shapes) -> bool:
        """Whether `shape` has the spec's rank, static sizes and the sizes
        its rule takes from `shapes` (name -> shape)."""
        if self.rank is not None and len(shape) != self.rank:
            return False
        static = self._static
        if static is not None and static[0](shape) != static[1]:
            return False
        for other, mine, theirs in self._groups:
            if mine(shape) != theirs(shapes[other]):
                return False
        return True

    def expected(self, shapes) -> tuple:
        """The sizes the spec asks for ('?': any size)."""
        spec = self.spec
        rank = self.rank or 0
        sizes = ["?" if spec.shape is None or spec.shape[d] is None
                 else spec.shape[d] for d in range(rank)]
        for d, rule in enumerate(spec.like):
            if rule is not None:
                other = shapes.get(rule[0])
                if other is not None and rule[1] < len(other):
                    sizes[d] = other[rule[1]]
        return tuple(sizes)

    def message(self, shape: tuple, shapes) -> str:
        spec = self.spec
        reasons = []
        for other, (mine, theirs) in _rule_groups(spec.like).items():
            if mine == theirs and len(mine) == self.rank and \
                    len(shapes.get(other, ())) == self.rank:
                reasons.append(f"{other}'s shape")
            elif len(mine) == 1:
                reasons.append(f"dim {mine[0]} is {other}'s dim {theirs[0]}")
            else:
                reasons.append(f"dims {tuple(mine)} are {other}'s dims "
                               f"{tuple(theirs)}")
        if spec.why:
            reasons.append(spec.why)
        expected = self.expected(shapes)
        if "?" in expected:
            reasons.append("'?' is any size")
        return (f"{spec.name} has shape {tuple(shape)}, expected "
                f"{expected}" + (f" ({'; '.join(reasons)})" if reasons
                                 else ""))

    def check(self, shape: tuple, shapes) -> None:
        """ValueError(`message`) unless the shape `holds`."""
        if not self.holds(shape, shapes):
            raise ValueError(self.message(shape, shapes))


def _getter(indices):
    """A function of a sequence giving the entries at `indices` (one: the
    entry itself, as operator.itemgetter; compared only with its own
    kind)."""
    return operator.itemgetter(*indices)


def _rule_groups(like) -> dict:
    groups = {}
    for d, rule in enumerate(like):
        if rule is not None:
            mine, theirs = groups.setdefault(rule[0], ([], []))
            mine.append(d)
            theirs.append(rule[1])
    return groups


def check_destination(spec: ArgSpec, value, shape: Optional[tuple] = None,
                      dtype: Optional[np.dtype] = None,
                      rule: Optional[ShapeRule] = None,
                      shapes=None) -> np.ndarray:
    """A destination of `spec` must be a writeable, C-contiguous, aligned
    numpy array of the spec's dtype (or `dtype`) and of exactly `shape`, or,
    given its `rule` instead, of the shape the spec's rule takes from
    `shapes`."""
    name = spec.name
    dtype = spec.dtype if dtype is None else dtype
    if not isinstance(value, np.ndarray):
        raise TypeError(f"{name} must be a numpy array, got "
                        f"{type(value).__name__}")
    if value.dtype != dtype:
        raise TypeError(f"{name} has dtype {value.dtype}, expected {dtype}")
    if rule is not None:
        if not rule.holds(value.shape, shapes):
            raise ValueError(rule.message(value.shape, shapes))
    elif value.shape != shape:
        raise ValueError(f"{name} has shape {value.shape}, expected {shape}")
    check_writeable(name, value)
    return value


def check_writeable(name: str, array: np.ndarray) -> None:
    """An array the kernel writes in place (a destination, a cache) must be
    writeable, C-contiguous and aligned."""
    flags = array.flags
    if not flags.writeable:
        raise ValueError(f"{name} is read-only (flags.writeable is False): "
                         f"it is written in place")
    if not (flags.c_contiguous and flags.aligned):
        raise ValueError(f"{name} must be C-contiguous and aligned (it is "
                         f"written in place), got strides {array.strides}")


def check_apart(spec: ArgSpec, array, reads, writes=()) -> None:
    """`array` (the argument of `spec`, which the kernel writes) must share
    no memory with the arrays of `reads` ((name, array): what the kernel
    reads while it writes it) that its apart_from names, nor with those of
    `writes` (other destinations). ValueError naming both."""
    wanted = spec.apart_from
    every = EVERY_INPUT in wanted
    for other, source in reads:
        if (every or other in wanted) and isinstance(source, np.ndarray) \
                and np.may_share_memory(array, source):
            raise ValueError(f"{spec.name} overlaps {other}: the kernel "
                             f"reads {other} while it {spec.writes()}")
    for other, source in writes:
        if isinstance(source, np.ndarray) and \
                np.may_share_memory(array, source):
            raise ValueError(f"{spec.name} overlaps {other}")


def _shown(shape) -> tuple:
    return tuple("?" if d is None else d for d in shape)


def check_input(spec: ArgSpec, value):
    """An argument of `spec` that the function only reads (rope_mlir.jit's):
    a tensor must be a numpy array (a numpy scalar for rank 0) of the spec's
    dtype, rank and static sizes, and is returned C-contiguous and aligned
    (copied when it is not); a scalar (spec.scalar) must be a bool for i1,
    an integer that fits the spec's integer type, or a real number, and is
    returned as a Python value. TypeError or ValueError naming the spec."""
    name = spec.name
    dtype = spec.dtype
    if spec.scalar:
        if isinstance(value, np.ndarray) and value.ndim == 0:
            value = value[()]
        kind = dtype.kind
        if kind == "b":
            if not isinstance(value, BOOLS):
                raise TypeError(f"{name} must be a bool, got {value!r} "
                                f"({type(value).__name__})")
            return int(bool(value))
        if isinstance(value, BOOLS) or not isinstance(
                value, (int, np.integer) if kind == "i"
                else (int, float, np.integer, np.floating)):
            what = "an integer" if kind == "i" else "a real number"
            raise TypeError(f"{name} must be {what}, got {value!r} "
                            f"({type(value).__name__})")
        if kind == "i":
            info = np.iinfo(dtype)
            if not info.min <= int(value) <= info.max:
                raise ValueError(f"{name} = {value} does not fit "
                                 f"{spec.declared or dtype} "
                                 f"[{info.min}, {info.max}]")
            return int(value)
        return float(value)
    shape = spec.shape
    if isinstance(value, np.generic) and len(shape) == 0:
        value = np.asarray(value)
    if not isinstance(value, np.ndarray):
        raise TypeError(f"{name} must be a numpy array, got "
                        f"{type(value).__name__}")
    if value.dtype != dtype:
        raise TypeError(f"{name} has dtype {value.dtype}, expected {dtype}")
    if value.ndim != len(shape):
        raise ValueError(f"{name} has rank {value.ndim} (shape "
                         f"{value.shape}), expected rank {len(shape)}")
    for size, want in zip(value.shape, shape):
        if want is not None and size != want:
            raise ValueError(f"{name} has shape {value.shape}, expected "
                             f"{_shown(shape)} ('?' is any size)")
    flags = value.flags
    if not (flags.c_contiguous and flags.aligned):
        value = np.ascontiguousarray(value)  # a copy the code reads
        if value.ctypes.data % value.itemsize:
            value = value.copy()
    return value


def host_vector_options() -> dict:
    """rope-to-llvm-cpu's vector widths for this CPU, by option name: its
    defaults are AVX2's (register tiles of 256-bit vectors, elementwise
    vectors of at most 16 lanes: two registers); with AVX-512 the register
    is twice as wide. Wider vectors than that are split and spilled by the
    code generator, which costs run time and compile time
    (docs/PERFORMANCE.md, whole-model compile time). With AVX512-BF16, bf16
    products use vdpbf16ps. rope_mlir.jit's default pipeline and the
    attention kernels (rope_mlir.attention) lower with these. Keys as
    cpu_pipeline() takes them (contraction_vector_bits=512)."""
    options = {}
    if _jit.host_has_feature("avx512f"):
        options["contraction_vector_bits"] = 512
        options["elementwise_max_lanes"] = 32
    if _jit.host_has_feature("avx512bf16"):
        # bf16 x bf16 contractions (Q·Kᵀ of bf16 attention) as vdpbf16ps
        # pair dot products: half the instructions of widened f32 FMAs.
        options["contraction_bf16_products"] = "avx512-dot"
    return options


#: A pass option's name as a Python keyword (num_threads) and a value's text
#: (2, avx512-dot, f64, 0.5): nothing that could end the option list or the
#: pipeline (spaces, braces, commas, quotes, `=`).
_OPTION_NAME = re.compile(r"[a-z][a-z0-9_]*")
_OPTION_VALUE = re.compile(r"[A-Za-z0-9_.+-]+")


def option_text(**options) -> str:
    """Pass options as pipeline text, each after a space, in the order
    given: num_threads=2 as num-threads=2, a bool as true/false, None left
    out. A value must be a bool, an int, or a str of letters, digits and
    `_.+-` (TypeError or ValueError naming the option otherwise), so that no
    value ends the option list or adds passes."""
    parts = []
    for name, value in options.items():
        if not _OPTION_NAME.fullmatch(name):
            raise ValueError(f"pass option names are lower-case Python "
                             f"identifiers (num_threads), got {name!r}")
        if value is None:
            continue
        if isinstance(value, bool):
            text = str(value).lower()
        elif isinstance(value, (int, np.integer)):
            text = str(int(value))
        elif isinstance(value, str):
            if not _OPTION_VALUE.fullmatch(value):
                raise ValueError(f"pass option {name}: a value of letters, "
                                 f"digits and _.+- expected, got {value!r}")
            text = value
        else:
            raise TypeError(f"pass option {name}: a bool, int or str "
                            f"expected, got {type(value).__name__}")
        parts.append(f" {name.replace('_', '-')}={text}")
    return "".join(parts)


def cpu_pipeline(before: str = "", **options) -> str:
    """The rope-to-llvm-cpu pipeline (with C interfaces) of a kernel:
    `options` as option_text() writes them, after the passes of `before`
    ("" or pass text ending in ", ", its braces and parentheses balanced;
    ValueError otherwise)."""
    if not isinstance(before, str):
        raise TypeError(f"before must be a str (passes, each followed by "
                        f"', '), got {type(before).__name__}")
    if before:
        depth = 0
        for char in before:
            depth += {"{": 1, "(": 1, "}": -1, ")": -1}.get(char, 0)
            if depth < 0:
                break
        if depth != 0 or not before.endswith(", ") or "\0" in before:
            raise ValueError(f"before must be passes, each followed by ', ', "
                             f"with balanced braces, got {before!r}")
    return (f"builtin.module({before}rope-to-llvm-cpu{{emit-c-interface=true"
            f"{option_text(**options)}}})")


# -- compiled functions --------------------------------------------------------

def signature_argtypes(signature: dict, name: str) -> list:
    """The ctypes argument types of the C interface (`_mlir_ciface_<name>`)
    of a function without results, from its signature
    (JitModule.function_type): scalars by value, memrefs (and tensors) by
    pointer to their descriptor."""
    interface = signature.get("c_interface")
    arguments = signature["arguments"]
    if interface is None or interface["returns_value"] or \
            signature["results"] or \
            interface["parameters"] != len(arguments):
        raise RuntimeError(f"@{name} was not lowered to a C interface of "
                           f"one parameter per argument: {signature}")
    return [SCALAR_CTYPES[entry["element"]] if entry["kind"] == "scalar"
            else ctypes.c_void_p for entry in arguments]


def result_types(signature: dict, name: str) -> tuple:
    """The C interface of a function with results (rope_mlir.jit's), from
    its signature: (argument types, the ctypes struct its results are
    written to (the first parameter: one memref result, or several results)
    or None, the ctypes type of the scalar it returns or None). ValueError
    when the pipeline lowered it to another interface."""
    results = signature["results"]
    returns_scalar = len(results) == 1 and results[0]["kind"] == "scalar"

    def field(entry):
        return (_jit._descriptor_type(len(entry["shape"]))
                if entry["kind"] == "tensor" else
                SCALAR_CTYPES[entry["element"]])
    struct = None
    if len(results) == 1 and not returns_scalar:
        struct = field(results[0])
    elif len(results) > 1:
        struct = type(f"Results_{name}", (ctypes.Structure,), {
            "_fields_": [(f"r{i}", field(r)) for i, r in enumerate(results)]})
    expected = len(signature["arguments"]) + (struct is not None)
    interface = signature.get("c_interface")
    if interface is None:
        raise ValueError(
            f"the pipeline emitted no C interface for @{name} "
            f"(_mlir_ciface_{name}): pipelines given to rope_mlir.jit "
            "must request C wrappers, e.g. "
            "rope-to-llvm-cpu{emit-c-interface=true}")
    if (interface["parameters"] != expected or
            interface["returns_value"] != returns_scalar):
        raise ValueError(
            f"the pipeline lowered @{name} to a C interface with "
            f"{interface['parameters']} parameters"
            f"{' returning a value' if interface['returns_value'] else ''}"
            f", expected {expected}"
            f"{' returning a value' if returns_scalar else ''} "
            "for its signature: pipelines given to rope_mlir.jit must "
            "bufferize function boundaries with identity layouts")
    argtypes = [SCALAR_CTYPES[entry["element"]] if entry["kind"] == "scalar"
                else ctypes.c_void_p for entry in signature["arguments"]]
    return (argtypes, struct,
            SCALAR_CTYPES[results[0]["element"]] if returns_scalar else None)


#: CompiledKernel.run(fast=LOADED): the extension loaded at compile time.
LOADED = object()


def _memref_type(text: str):
    """(sizes, element) of an identity-layout memref type's text
    ("memref<?x8xf32>": ((None, 8), "f32")), or None."""
    if not (text.startswith("memref<") and text.endswith(">")) or \
            "," in text:
        return None
    *sizes, element = text[len("memref<"):-1].split("x")
    try:
        return tuple(None if d == "?" else int(d) for d in sizes), element
    except ValueError:
        return None


def _check_specs(specs, signature: dict, name: str) -> None:
    """The specs of a compiled function's parameters must be its
    signature's: as many, by-value scalars where the signature has them,
    and each memref of the spec's element type and sizes (where the spec
    states them). RuntimeError otherwise: the IR and the checks of its
    arguments were written apart and disagree."""
    arguments = signature["arguments"]
    listed = ", ".join(s.name for s in specs)
    if len(specs) != len(arguments):
        raise RuntimeError(f"@{name}'s specs ({listed}) disagree with its "
                           f"signature: {len(arguments)} parameters")
    for spec, entry in zip(specs, arguments):
        text = entry.get("type")
        if spec.scalar != (entry["kind"] == "scalar") or \
                spec.declared not in (None, text) or (
                    spec.scalar and spec.dtype is not None and
                    _ir.DTYPES.get(entry["element"]) != spec.dtype):
            raise RuntimeError(f"@{name}'s specs ({listed}) disagree with "
                               f"its signature: {spec.name} is {text}")
        if spec.scalar:
            continue
        memref = (_memref_type(text) if entry["kind"] != "tensor" else
                  (tuple(entry["shape"]), entry["element"]))
        if memref is None or (
                spec.dtype is not None and
                _ir.DTYPES.get(memref[1]) != spec.dtype) or (
                spec.shape is not None and tuple(spec.shape) != memref[0]):
            raise RuntimeError(
                f"@{name}'s specs ({listed}) disagree with its signature: "
                f"{spec.name} is declared {spec.dtype} of sizes "
                f"{spec.shape}, the function takes {text}")


class CompiledKernel:
    """IR compiled once: its module (kept alive), the address of the C
    interface of `entry`, the argument types read from the module's own
    signature and the ctypes function. With `specs` (the ArgSpecs of the
    parameters, in order), the signature must agree with them: as many
    parameters, scalars where the specs say so.

    `module`: a module already compiled (a JitModule) that holds `entry`
    (rope_mlir.jit: one module, many functions); `ir` and `pipeline` are then
    unused. `results=True`: a function that returns values (rope_mlir.jit's,
    see `result_types`), called by `call` through its packed wrapper under
    ropeJitInvoke, so that a trap or a failed runtime check raises instead
    of ending the process."""

    def __init__(self, ir: Optional[str], pipeline: Optional[str],
                 entry: str, specs: Optional[tuple] = None, *,
                 module=None, results: bool = False):
        self.ir = ir
        self.entry = entry
        self.module = (module if module is not None else
                       _jit.compile_module(ir, pipeline))
        signature = self.module.function_type(entry)
        if results:
            self.argtypes, self.result_struct, self.restype = \
                result_types(signature, entry)
        else:
            self.argtypes = signature_argtypes(signature, entry)
        if specs is not None:
            _check_specs(specs, signature, entry)
        self.specs = specs
        self._fast = _jit.kernel_call_module()
        if results:
            self.packed = self.module.lookup_packed(entry)
            self._slots = ctypes.c_void_p * (
                len(self.argtypes) + (self.result_struct is not None) +
                (self.restype is not None))
            return
        self.address = self.module.lookup(entry)
        self.function = ctypes.CFUNCTYPE(None, *self.argtypes)(self.address)

    def call(self, arguments):
        """Calls a function with results (results=True) on `arguments` (in
        parameter order: numpy arrays, C-contiguous and aligned, and Python
        scalars, as check_input gives them) through its packed wrapper:
        returns the scalar it returns, the struct its results were written
        to (memref descriptors and scalars, in result order), or None. A
        trap raises (RuntimeError; CheckError for a failed runtime check).
        The caller has checked every argument, and owns the buffers the
        results describe."""
        keep = []
        values = []
        for argtype, a in zip(self.argtypes, arguments):
            if isinstance(a, np.ndarray):
                desc = _jit.memref_descriptor(a)
                keep.append(desc)
                values.append(ctypes.c_void_p(ctypes.addressof(desc)))
            else:
                values.append(argtype(a))
        struct = self.result_struct() if self.result_struct else None
        if struct is not None:
            values.insert(0, ctypes.c_void_p(ctypes.addressof(struct)))
        returned = self.restype() if self.restype is not None else None
        if returned is not None:
            values.append(returned)
        slots = self._slots(*[ctypes.addressof(v) for v in values])
        self.module.invoke(self.packed, slots)
        return returned.value if returned is not None else struct

    def run(self, arguments, fast=LOADED) -> None:
        """Calls the function on `arguments` (in parameter order: numpy
        arrays, C-contiguous and aligned, and ints for the scalars): their
        memref descriptors built in C++ by the extension's `run`
        (KernelCall.cpp; `fast`, the extension module, or the one loaded
        when the kernel was compiled), or as ctypes structures when it is
        absent or does not take them. The caller has checked every
        argument."""
        fast = self._fast if fast is LOADED else fast
        if fast is not None and fast.run(self.address, np.ndarray,
                                         tuple(arguments)):
            return
        keep = []
        values = []
        for a in arguments:
            if isinstance(a, np.ndarray):
                if a.size == 0:  # never read: any aligned address will do
                    a = np.empty(a.shape, a.dtype)
                desc = _jit.memref_descriptor(a)
                keep.append(desc)
                values.append(ctypes.addressof(desc))
            else:
                values.append(a)
        self.function(*values)


class KernelCache:
    """The compile cache of one kind of kernel: `build(key)` (outside the
    lock: compiling takes long) the first time a key is asked for, the same
    object every time after. `info()` counts compiles and reuses."""

    def __init__(self, build: Callable):
        self._build = build
        self._made: dict = {}
        self._lock = threading.Lock()
        self._stats = {"compiled": 0, "hits": 0}

    def get(self, key):
        with self._lock:
            found = self._made.get(key)
            if found is not None:
                self._stats["hits"] += 1
                return found
        made = self._build(key)  # compile outside the lock
        with self._lock:
            self._stats["compiled"] += 1
            return self._made.setdefault(key, made)

    def configured(self, config_type, config, kwargs):
        """The kernel of a configuration given as a `config_type` or as its
        fields (compile(config) / compile(dtype=..., ...))."""
        if config is None:
            config = config_type(**kwargs)
        elif kwargs:
            config = dataclasses.replace(config, **kwargs)
        return self.get(config)

    def hit(self) -> None:
        """Counts a reuse found by the caller's own memo."""
        with self._lock:
            self._stats["hits"] += 1

    def info(self) -> dict:
        with self._lock:
            return dict(self._stats, cached=len(self._made))


def memoized(memo: dict, key, make: Callable, cache: Optional[KernelCache]):
    """`memo[key]`, else `make()` remembered under `key` (memo holds at most
    1024: a call's normalized arguments, so that a repeated call skips its
    configuration's checks). An unhashable key is never remembered.
    A hit counts as a reuse of `cache`."""
    try:
        found = memo.get(key)
    except TypeError:
        key, found = None, None
    if found is not None:
        if cache is not None:
            cache.hit()
        return found
    made = make()
    if key is not None:
        if len(memo) >= 1024:
            memo.clear()
        memo[key] = made
    return made
