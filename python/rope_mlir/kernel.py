"""Build, compile and run `rope.apply` kernels on numpy arrays.

A kernel is compiled once per *configuration* (dtype, rank, head dim, layout,
rotary dim, frequencies, position and cache forms, in place or not); every
other dimension is dynamic, so one kernel serves all shapes. Compiled
kernels are cached for the life of the process.
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import json
import threading
from typing import Optional, Sequence

import ml_dtypes
import numpy as np

from . import _jit
from ._jit import CompileError

__all__ = ["KernelConfig", "Kernel", "emit", "compile", "apply",
           "scaling_attributes", "CompileError", "cache_info"]

_DTYPES = {
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
}
_INT_DTYPES = {"i32": np.dtype(np.int32), "i64": np.dtype(np.int64)}
_POSITION_FORMS = ("explicit", "offset", "row_offset", "none")
_CACHE_FORMS = (None, "gathered", "pregathered")


def dtype_name(dtype) -> str:
    dtype = np.dtype(dtype)
    for name, candidate in _DTYPES.items():
        if candidate == dtype:
            return name
    raise TypeError(f"unsupported data type {dtype}: rope.apply takes "
                    "float16, bfloat16, float32 or float64")


def _float_literal(value: float) -> str:
    # MLIR float literals need a '.', which repr() omits for e.g. 1e-05.
    return "%.17e" % float(value)


def _scaling_is_default(scaling) -> bool:
    if scaling is None or scaling == "default":
        return True
    if isinstance(scaling, dict):
        kind = scaling.get("rope_type", scaling.get("type", "default"))
        return kind == "default"
    return False


@functools.lru_cache(maxsize=256)
def _scaling_attributes_cached(text: str, base: float, head_dim: int,
                               rotary_dim: Optional[int]):
    return _jit.scaling_attributes(json.loads(text), base, head_dim,
                                   rotary_dim)


def scaling_attributes(scaling, *, base=10000.0, head_dim,
                       rotary_dim=None, mrope_section=None,
                       mrope_interleaved=False) -> _jit.ScalingAttributes:
    """The `rope.apply` attributes for a Hugging Face rope_scaling dict (as
    in config.json, with `max_position_embeddings` inside it), translated by
    the C++ importer: the `freqs` and `mrope` attribute texts, the magnitude
    the op must state and the rotary dimension (derived from
    `partial_rotary_factor` when `rotary_dim` is None). `mrope_section` /
    `mrope_interleaved` add an M-RoPE split to the dict. Raises ValueError
    with the importer's or the attribute verifier's message."""
    if scaling is None or scaling == "default":
        merged = {}
    elif isinstance(scaling, dict):
        merged = dict(scaling)
    else:
        raise TypeError(f"scaling must be None or a Hugging Face "
                        f"rope_scaling dict, got {type(scaling).__name__}")
    if mrope_section is not None:
        section = [int(n) for n in mrope_section]
        if merged.get("mrope_section") not in (None, section):
            raise ValueError(f"mrope_section={section} disagrees with the "
                             f"scaling dict's {merged['mrope_section']}")
        merged["mrope_section"] = section
    if mrope_interleaved:
        if merged.get("mrope_interleaved") is False:
            raise ValueError("mrope_interleaved=True disagrees with the "
                             "scaling dict's mrope_interleaved = false")
        merged["mrope_interleaved"] = True
    try:
        text = json.dumps(merged, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise ValueError(f"rope_scaling is not JSON-serializable: "
                         f"{error}") from None
    return _scaling_attributes_cached(
        text, float(base), int(head_dim),
        None if rotary_dim is None else int(rotary_dim))


@dataclasses.dataclass(frozen=True)
class KernelConfig:
    """Everything that is fixed when a kernel is compiled."""

    dtype: str
    rank: int
    head_dim: int
    layout: str = "half"
    rotary_dim: Optional[int] = None
    base: float = 10000.0
    magnitude: float = 1.0
    inverse: bool = False
    token_dims: Optional[tuple] = None
    positions: str = "offset"
    positions_dtype: str = "i64"
    cache: Optional[str] = None
    cache_dtype: str = "f32"
    inplace: bool = False
    static_shape: Optional[tuple] = None
    static_positions_shape: Optional[tuple] = None
    static_offset_shape: Optional[tuple] = None
    static_cache_shape: Optional[tuple] = None
    #: The frequency attribute's text (e.g. '#rope.yarn<...>'); None means
    #: '#rope.default<base = `base`>'.
    freqs: Optional[str] = None
    #: The M-RoPE attribute's text ('#rope.mrope<section = [t, h, w]>');
    #: positions are then [3, *token dims].
    mrope: Optional[str] = None
    #: OpenMP threads for the token loop: 1 = sequential, 0 = all cores.
    threads: int = 1
    #: "vector" (convert-rope-to-vector, the fast path) or "scalar" (the
    #: linalg loops, for debugging).
    lowering: str = "vector"

    def __post_init__(self):
        if self.dtype not in _DTYPES:
            raise TypeError(f"unsupported dtype {self.dtype!r}")
        if self.layout not in ("half", "interleaved"):
            raise ValueError(f"layout must be 'half' or 'interleaved', got "
                             f"{self.layout!r}")
        if self.positions not in _POSITION_FORMS:
            raise ValueError(f"positions form must be one of {_POSITION_FORMS}")
        if self.cache not in _CACHE_FORMS:
            raise ValueError(f"cache form must be one of {_CACHE_FORMS}")
        if self.positions_dtype not in _INT_DTYPES:
            raise TypeError("positions must be int32 or int64")
        if self.cache is not None and self.cache_dtype not in _DTYPES:
            raise TypeError(f"unsupported cache dtype {self.cache_dtype!r}")
        if not isinstance(self.threads, int) or self.threads < 0:
            raise ValueError(f"threads must be an int >= 0 (0 = all cores), "
                             f"got {self.threads!r}")
        if self.lowering not in ("vector", "scalar"):
            raise ValueError(f"lowering must be 'vector' or 'scalar', got "
                             f"{self.lowering!r}")
        if self.mrope is not None and self.positions != "explicit":
            raise ValueError("M-RoPE needs explicit positions [3, *tokens]")

    def resolved_token_dims(self) -> tuple:
        if self.token_dims is not None:
            return tuple(self.token_dims)
        return (0,) if self.rank <= 2 else tuple(range(self.rank - 2))


def _memref(shape: Sequence, elt: str) -> str:
    dims = "x".join("?" if d is None else str(d) for d in shape)
    return f"memref<{dims}x{elt}>" if dims else f"memref<{elt}>"


def emit(config: KernelConfig, name: str = "rope_kernel") -> str:
    """The MLIR module (memref wrapper around one `rope.apply`) for
    `config`; the function is `@<name>` with a C interface."""
    c = config
    elt = c.dtype
    if c.static_shape is not None:
        x_shape = list(c.static_shape)
    else:
        x_shape = [None] * (c.rank - 1) + [c.head_dim]
    x_type = _memref(x_shape, elt)
    x_tensor = x_type.replace("memref", "tensor")
    token_dims = c.resolved_token_dims()
    pair_count = (c.rotary_dim if c.rotary_dim is not None else c.head_dim) // 2

    args = [f"%x: {x_type}"]
    body = [f"%xt = bufferization.to_tensor %x restrict"
            f"{' writable' if c.inplace else ''} : {x_type} to {x_tensor}"]
    operands = []
    if c.positions == "explicit":
        shape = (c.static_positions_shape if c.static_positions_shape
                 is not None else [None] * len(token_dims))
        if c.mrope is not None and c.static_positions_shape is None:
            shape = [3] + shape
        ptype = _memref(shape, c.positions_dtype)
        args.append(f"%pos: {ptype}")
        pt = ptype.replace("memref", "tensor")
        body.append(f"%pt = bufferization.to_tensor %pos restrict : {ptype} "
                    f"to {pt}")
        operands.append(f"positions(%pt : {pt})")
    elif c.positions == "offset":
        args.append("%off: i64")
        operands.append("offset(%off : i64)")
    elif c.positions == "row_offset":
        shape = (c.static_offset_shape if c.static_offset_shape is not None
                 else [None])
        otype = _memref(shape, "i64")
        args.append(f"%off: {otype}")
        ot = otype.replace("memref", "tensor")
        body.append(f"%ot = bufferization.to_tensor %off restrict : {otype} "
                    f"to {ot}")
        operands.append(f"offset(%ot : {ot})")
    if c.cache is not None:
        if c.static_cache_shape is not None:
            cshape = list(c.static_cache_shape)
        else:
            # The width (P/2) is static: the verifier checks it.
            lead = 1 if c.cache == "gathered" else len(token_dims)
            cshape = [None] * lead + [pair_count]
        ctype = _memref(cshape, c.cache_dtype)
        ct = ctype.replace("memref", "tensor")
        args += [f"%cos: {ctype}", f"%sin: {ctype}"]
        body.append(f"%ct = bufferization.to_tensor %cos restrict : {ctype} "
                    f"to {ct}")
        body.append(f"%st = bufferization.to_tensor %sin restrict : {ctype} "
                    f"to {ct}")
        operands.append(f"cache(%ct, %st : {ct}, {ct})")
    if c.inplace:
        init, dest = "%xt", "%x"
    else:
        args.append(f"%out: {x_type}")
        body.append(f"%it = bufferization.to_tensor %out restrict writable : "
                    f"{x_type} to {x_tensor}")
        init, dest = "%it", "%out"

    attrs = [f"layout = #rope.layout<{c.layout}>"]
    if c.rotary_dim is not None:
        attrs.append(f"rotary_dim = {int(c.rotary_dim)} : i64")
    if c.token_dims is not None:
        attrs.append("token_dims = array<i64: " +
                     ", ".join(str(int(d)) for d in c.token_dims) + ">")
    if c.cache is None:
        freqs = (c.freqs if c.freqs is not None else
                 f"#rope.default<base = {_float_literal(c.base)}>")
        attrs.append(f"freqs = {freqs}")
    if c.mrope is not None:
        attrs.append(f"mrope = {c.mrope}")
    if c.magnitude != 1.0:
        attrs.append(f"magnitude = {_float_literal(c.magnitude)} : f64")
    if c.inverse:
        attrs.append("inverse")
    body.append(f"%y = rope.apply ins(%xt : {x_tensor}) " + " ".join(operands)
                + f" outs({init} : {x_tensor}) {{{', '.join(attrs)}}} -> "
                f"{x_tensor}")
    body.append(f"bufferization.materialize_in_destination %y in restrict "
                f"writable {dest} : ({x_tensor}, {x_type}) -> ()")
    body.append("return")
    lines = [f"func.func @{name}({', '.join(args)}) attributes "
             "{llvm.emit_c_interface} {"]
    lines += ["  " + line for line in body]
    lines.append("}")
    return "\n".join(lines) + "\n"


def pipeline(config: KernelConfig) -> str:
    """The `rope-to-llvm-cpu` pipeline a kernel for `config` is built with."""
    return ("builtin.module(rope-to-llvm-cpu{emit-c-interface=true "
            f"vectorize={'true' if config.lowering == 'vector' else 'false'} "
            f"num-threads={int(config.threads)}}})")


class Kernel:
    """A compiled `rope.apply` for one configuration. Call it on arrays."""

    def __init__(self, config: KernelConfig):
        self.config = config
        self.ir = emit(config)
        self._module = _jit.compile_module(self.ir, pipeline(config))
        address = self._module.lookup("rope_kernel")
        argtypes = [ctypes.c_void_p]
        if config.positions in ("explicit", "row_offset"):
            argtypes.append(ctypes.c_void_p)
        elif config.positions == "offset":
            argtypes.append(ctypes.c_int64)
        if config.cache is not None:
            argtypes += [ctypes.c_void_p, ctypes.c_void_p]
        if not config.inplace:
            argtypes.append(ctypes.c_void_p)
        self._function = ctypes.CFUNCTYPE(None, *argtypes)(address)

    # -- argument checking -------------------------------------------------
    def _fail(self, message: str, shapes: dict):
        """Raises the compiler's own diagnostic for these static shapes when
        it has one, else `message`."""
        c = self.config
        try:
            static = dataclasses.replace(c, **shapes)
            _jit.lower(emit(static), "builtin.module()")
        except CompileError as error:
            raise ValueError(str(error)) from None
        except Exception:  # noqa: BLE001 - fall back to our own message
            pass
        raise ValueError(message)

    def __call__(self, x, positions=None, *, offset=0, cos_cache=None,
                 sin_cache=None, out=None):
        c = self.config
        x = np.asarray(x)
        if x.dtype != _DTYPES[c.dtype]:
            raise TypeError(f"x has dtype {x.dtype}, kernel compiled for "
                            f"{_DTYPES[c.dtype]}")
        if x.ndim != c.rank or x.shape[-1] != c.head_dim:
            raise ValueError(f"x has shape {x.shape}, kernel compiled for "
                             f"rank {c.rank} with head dim {c.head_dim}")
        token_dims = c.resolved_token_dims()
        token_sizes = tuple(x.shape[d] for d in token_dims)
        keep = []  # arrays that must stay alive during the call
        if c.inplace:
            if out is not x or not x.flags.c_contiguous:
                raise ValueError("in-place kernel needs out=x, C-contiguous")
        else:
            x = np.ascontiguousarray(x)
        args = [ctypes.addressof(self._keep(keep, x))]

        if c.positions == "explicit":
            positions = np.ascontiguousarray(positions,
                                             dtype=_INT_DTYPES[c.positions_dtype])
            expected = ((3,) + token_sizes if c.mrope is not None
                        else token_sizes)
            if positions.shape != expected:
                self._fail(f"positions have shape {positions.shape}, "
                           f"expected {expected}" +
                           (" ([3, *token dims] for M-RoPE)"
                            if c.mrope is not None else
                            " (the token dims' shape)"),
                           dict(static_shape=x.shape,
                                static_positions_shape=positions.shape))
            args.append(ctypes.addressof(self._keep(keep, positions)))
        elif c.positions == "offset":
            if np.ndim(offset) != 0:
                raise ValueError("kernel compiled for a scalar offset")
            args.append(int(offset))
        elif c.positions == "row_offset":
            offset = np.ascontiguousarray(offset, dtype=np.int64)
            if offset.shape != (token_sizes[0],):
                self._fail(f"per-row offset has shape {offset.shape}, "
                           f"expected ({token_sizes[0]},)",
                           dict(static_shape=x.shape,
                                static_offset_shape=offset.shape))
            args.append(ctypes.addressof(self._keep(keep, offset)))

        if c.cache is not None:
            if cos_cache is None or sin_cache is None:
                raise ValueError("kernel compiled with a cos/sin cache: pass "
                                 "cos_cache and sin_cache")
            cos_cache = np.ascontiguousarray(cos_cache,
                                             dtype=_DTYPES[c.cache_dtype])
            sin_cache = np.ascontiguousarray(sin_cache,
                                             dtype=_DTYPES[c.cache_dtype])
            pairs = (c.rotary_dim or c.head_dim) // 2
            if c.cache == "gathered":
                expected = (None, pairs)
                ok = (cos_cache.ndim == 2 and cos_cache.shape[1] == pairs)
            else:
                expected = token_sizes + (pairs,)
                ok = cos_cache.shape == expected
            if not ok or sin_cache.shape != cos_cache.shape:
                self._fail(f"cos/sin caches have shapes {cos_cache.shape} and "
                           f"{sin_cache.shape}, expected {expected}",
                           dict(static_shape=x.shape,
                                static_cache_shape=cos_cache.shape))
            if c.cache == "gathered":
                self._check_cache_range(positions, offset, token_sizes,
                                        cos_cache.shape[0])
            args.append(ctypes.addressof(self._keep(keep, cos_cache)))
            args.append(ctypes.addressof(self._keep(keep, sin_cache)))

        if not c.inplace:
            if out is None:
                out = np.empty_like(x)
            elif (out.shape != x.shape or out.dtype != x.dtype or
                  not out.flags.c_contiguous or not out.flags.writeable):
                raise ValueError("out must be a writable C-contiguous array "
                                 "with x's shape and dtype")
            elif np.shares_memory(out, x):
                raise ValueError("out overlaps x: pass out=x for in place")
            args.append(ctypes.addressof(self._keep(keep, out)))
        self._function(*args)
        return out if not c.inplace else x

    @staticmethod
    def _keep(keep, array):
        desc = _jit.memref_descriptor(array)
        keep.append((array, desc))
        return desc

    def _check_cache_range(self, positions, offset, token_sizes, rows):
        c = self.config
        if c.positions == "explicit":
            if positions.size == 0:
                return
            low, high = int(positions.min()), int(positions.max())
        else:
            seq = token_sizes[-1]
            offsets = np.asarray(offset, dtype=np.int64)
            if seq == 0 or offsets.size == 0:
                return
            low, high = int(offsets.min()), int(offsets.max()) + seq - 1
        if low < 0 or high >= rows:
            raise IndexError(
                f"positions span [{low}, {high}] but the cos/sin cache has "
                f"{rows} rows: a position outside [0, {rows}) has no cached "
                "angle (compiled code would produce NaN there)")


_kernels: dict = {}
_kernels_lock = threading.Lock()
_stats = {"compiled": 0, "hits": 0}


def compile(config: Optional[KernelConfig] = None, **kwargs) -> Kernel:
    """Returns the (cached) compiled kernel for a configuration, given as a
    KernelConfig or as its fields: compile(dtype="f32", rank=4,
    head_dim=128, layout="half", positions="explicit", ...)."""
    if config is None:
        config = KernelConfig(**kwargs)
    elif kwargs:
        config = dataclasses.replace(config, **kwargs)
    with _kernels_lock:
        kernel = _kernels.get(config)
        if kernel is not None:
            _stats["hits"] += 1
            return kernel
    kernel = Kernel(config)  # compile outside the lock
    with _kernels_lock:
        _stats["compiled"] += 1
        return _kernels.setdefault(config, kernel)


def cache_info() -> dict:
    """How many kernels were compiled and how many calls reused one."""
    with _kernels_lock:
        return dict(_stats, cached=len(_kernels))


def apply(x, positions=None, *, layout="half", rotary_dim=None, base=10000.0,
          scaling=None, offset=0, cos_cache=None, sin_cache=None,
          inverse=False, token_dims=None, out=None, magnitude=None,
          mrope_section=None, mrope_interleaved=False, threads=1):
    """Rotates `x` by RoPE with the compiled `rope.apply` (ROPE.md).

    x: [*tokens, H, D] by default (token dims = all but the last two, or
    [0] for rank 2); `token_dims` says otherwise, e.g. (0, 2) for
    [B, H, S, D]. positions: integers shaped like the token dims, or None
    for `offset + index along the last token dim` (offset: int, or one per
    index of the first token dim). cos_cache/sin_cache: [M, P/2] gathered by
    position, or pre-gathered (token dims + [P/2]) when positions is None,
    the offset is 0 and the cache rank is not 2. out=x rotates in place.

    scaling: a Hugging Face rope_scaling dict (ROPE.md §4; keys as in
    config.json, `max_position_embeddings` may be given inside it), turned
    into attributes by the C++ importer (see `scaling_attributes`); the
    rotary dim defaults to int(partial_rotary_factor * D) when the dict has
    that key. mrope_section [t, h, w] (or the dict's `mrope_section`) makes
    positions [3, *token dims] (M-RoPE); mrope_interleaved selects Qwen3-VL's
    frequency interleaving. threads: OpenMP threads over tokens (1: the
    calling thread only, 0: all cores). magnitude: None for the scheme's (1 unless YaRN
    or LongRoPE define one); an explicit value must equal a YaRN/LongRoPE
    scheme's, else ValueError.
    """
    scaled = (not _scaling_is_default(scaling) or mrope_section is not None
              or bool(mrope_interleaved) or
              (isinstance(scaling, dict) and
               any(k not in ("rope_type", "type") for k in scaling)))
    if cos_cache is not None or sin_cache is not None:
        if scaled:
            raise ValueError(
                "cos_cache/sin_cache and a scaling spec (or mrope_section) "
                "are exclusive: the caches already hold the frequencies; "
                "build them from the scaled frequencies instead")
    x = np.asarray(x)
    if x.ndim < 2:
        raise ValueError(f"x must have rank >= 2 ([tokens..., D]), got shape "
                         f"{x.shape}")
    freqs = mrope = None
    if scaled:
        attrs = scaling_attributes(
            scaling, base=base, head_dim=int(x.shape[-1]),
            rotary_dim=rotary_dim, mrope_section=mrope_section,
            mrope_interleaved=mrope_interleaved)
        freqs, mrope = attrs.freqs, attrs.mrope
        if attrs.rotary_dim != int(x.shape[-1]):
            rotary_dim = attrs.rotary_dim
        if magnitude is None:
            magnitude = attrs.magnitude
    if magnitude is None:
        magnitude = 1.0
    dtype = dtype_name(x.dtype)
    rank = x.ndim
    resolved_token_dims = (tuple(int(d) for d in token_dims)
                           if token_dims is not None else None)
    if (cos_cache is None) != (sin_cache is None):
        raise ValueError("pass both cos_cache and sin_cache, or neither")

    cache = None
    cache_dtype = "f32"
    if cos_cache is not None:
        cos_cache = np.asarray(cos_cache)
        sin_cache = np.asarray(sin_cache)
        cache_dtype = dtype_name(cos_cache.dtype)
        pregathered = (positions is None and np.ndim(offset) == 0 and
                       int(offset) == 0 and cos_cache.ndim != 2)
        cache = "pregathered" if pregathered else "gathered"

    if positions is not None:
        positions = np.asarray(positions)
        if not np.issubdtype(positions.dtype, np.integer):
            raise TypeError(f"positions must be integers, got "
                            f"{positions.dtype}")
        form = "explicit"
        positions_dtype = "i32" if positions.dtype == np.int32 else "i64"
    elif cache == "pregathered":
        form, positions_dtype = "none", "i64"
    else:
        form = "offset" if np.ndim(offset) == 0 else "row_offset"
        positions_dtype = "i64"

    inplace = out is not None and out is x
    config = KernelConfig(
        dtype=dtype, rank=rank, head_dim=int(x.shape[-1]), layout=layout,
        rotary_dim=None if rotary_dim is None else int(rotary_dim),
        base=float(base), magnitude=float(magnitude), inverse=bool(inverse),
        token_dims=resolved_token_dims, positions=form,
        positions_dtype=positions_dtype, cache=cache, cache_dtype=cache_dtype,
        inplace=inplace, freqs=freqs, mrope=mrope, threads=int(threads))
    try:
        kernel = compile(config)
    except CompileError as error:
        # Invalid attributes: the verifier's message, with the static shapes
        # of this call for the clearest diagnostic.
        raise ValueError(str(error)) from None
    return kernel(x, positions, offset=offset, cos_cache=cos_cache,
                  sin_cache=sin_cache, out=out)
