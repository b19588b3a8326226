# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Build, compile and run `rope.apply` kernels on numpy arrays.

A kernel is compiled once per *configuration* (dtype, rank, head dim, layout,
rotary dim, frequencies, position and cache forms, in place or not); every
other dimension is dynamic, so one kernel serves all shapes. Compiled
kernels are cached for the life of the process.

What other entry points build on (fused, cache) is named without an
underscore and kept out of __all__: `RotationChecks` (the checks of one
rotation's arguments, with the names a caller gives them), `apply_fields`
and `cached_kernel`. The compile, the call and the value checks are
_kernel_path's, shared with every entry point.
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import json
import math
import operator
from typing import NamedTuple, Optional

import numpy as np

from . import _arrays, _ir, _jit
from . import _kernel_path as _path
from ._jit import CompileError
from ._kernel_path import (BOOLS as _BOOLS, DTYPES as _DTYPES,
                           INT_DTYPES as _INT_DTYPES,
                           QUANT_DTYPES as _QUANT_DTYPES, ArgSpec,
                           EVERY_INPUT, dtype_name)
from ._kernel_path import (flag as _flag, float_array as _float_array,
                           integer as _integer,
                           integer_array as _integer_array,
                           is_zero as _is_zero, real as _real,
                           scalar_offset as _scalar_offset, shape as _shape)

__all__ = ["KernelConfig", "Kernel", "emit", "compile", "apply",
           "scaling_attributes", "CompileError", "cache_info"]

_QUANT_SCALE_FORMS = ("tensor", "head")
_POSITION_FORMS = ("explicit", "offset", "row_offset", "none")
_CACHE_FORMS = (None, "gathered", "pregathered")
_ARGUMENT_NAMES = ("x", "positions", "offset", "cos_cache", "sin_cache",
                   "out")
_NEIGHBOUR_NAMES = _ARGUMENT_NAMES + ("norm_weight", "quant_scale")


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
        if isinstance(mrope_section, (str, bytes, dict)) or \
                not hasattr(mrope_section, "__iter__"):
            raise TypeError(f"mrope_section must be a sequence of integers "
                            f"[t, h, w], got {mrope_section!r}")
        section = [_integer(n, f"mrope_section[{i}]")
                   for i, n in enumerate(mrope_section)]
        if merged.get("mrope_section") not in (None, section):
            raise ValueError(f"mrope_section={section} disagrees with the "
                             f"scaling dict's {merged['mrope_section']}")
        merged["mrope_section"] = section
    if _flag(mrope_interleaved, "mrope_interleaved"):
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
        text, _real(base, "base"), _integer(head_dim, "head_dim"),
        None if rotary_dim is None else _integer(rotary_dim, "rotary_dim"))


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
    #: How the angle position * theta is formed for f32/f16/bf16 data:
    #: "f64" (SEMANTICS.md §5) or "turns" (i64 phase steps and f32 only, for
    #: targets without fast f64; every scheme, docs/PRECISION.md).
    angle: str = "f64"
    #: f32 -> bf16 rounding of bf16 outputs: "exact" (round to nearest
    #: even as integer arithmetic, bf16 subnormal results kept: SEMANTICS.md) or
    #: "native": the CPU's own conversion where it has one (AVX512-BF16:
    #: vcvtneps2bf16, the same rounding but results below 2^-126 in
    #: magnitude flushed to zero), else "exact"'s (docs/DESIGN.md).
    bf16_rounding: str = "exact"
    #: QK-norm before the rotation (rope.apply norm(%w)): an RMSNorm over
    #: the head dim with a [D] weight of dtype `norm_dtype` and epsilon
    #: `norm_epsilon` (docs/FUSIONS.md).
    norm: bool = False
    norm_dtype: str = "f32"
    norm_epsilon: float = 1e-6
    #: Quantized output (rope.apply quant_scale(%s)): "f8e4m3fn", "f8e5m2"
    #: or "i8" destinations, scaled per "tensor" or per "head".
    quant: Optional[str] = None
    quant_scale: str = "tensor"
    #: KV-cache append (rope.apply slots(%s), docs/FUSIONS.md): the
    #: destination is a cache of x's rank with dynamic token dims, written
    #: in place at each token's slot (an integer of `slots_dtype`); the
    #: quantization, if any, is the cache's storage. Such a kernel is built
    #: by cache.compile_append (its arguments differ from Kernel's).
    slots: bool = False
    slots_dtype: str = "i64"
    #: With slots: a rope.cache_write of a second input v (V, same shape as
    #: x but for its head dims' sizes) into its own cache at the same slots,
    #: quantized like x with its own scale when `quant` is set.
    cache_write: bool = False
    #: With slots: a rope.apply without slots of a query q (its own head
    #: count) at the same positions into a plain output of x's dtype, in
    #: the same function (QK siblings), with its own norm weight when
    #: `norm` is set; never quantized.
    query: bool = False

    def __post_init__(self):
        # Everything a kernel's IR is built from is checked here, once per
        # configuration; the rope.apply verifier then checks the values.
        def normalize(field, value):
            object.__setattr__(self, field, value)

        if self.dtype not in _DTYPES:
            raise TypeError(f"unsupported dtype {self.dtype!r}: one of "
                            f"{sorted(_DTYPES)}")
        rank = _integer(self.rank, "rank")
        if rank < 2:
            raise ValueError(f"rank must be >= 2 ([tokens..., D]), got {rank}")
        head_dim = _integer(self.head_dim, "head_dim")
        if head_dim <= 0:
            raise ValueError(f"head_dim must be positive, got {head_dim}")
        normalize("rank", rank)
        normalize("head_dim", head_dim)
        if self.layout not in ("half", "interleaved"):
            raise ValueError(f"layout must be 'half' or 'interleaved', got "
                             f"{self.layout!r}")
        if self.rotary_dim is not None:
            p = _integer(self.rotary_dim, "rotary_dim")
            if p <= 0 or p % 2 or p > head_dim:
                raise ValueError(
                    f"rotary_dim must be even, positive and at most the head "
                    f"dim ({head_dim}), got {p}")
            normalize("rotary_dim", p)
        normalize("base", _real(self.base, "base"))
        normalize("magnitude", _real(self.magnitude, "magnitude"))
        normalize("inverse", _flag(self.inverse, "inverse"))
        normalize("inplace", _flag(self.inplace, "inplace"))
        if self.token_dims is not None:
            dims = _shape(self.token_dims, "token_dims")
            if not dims:
                raise ValueError("token_dims must not be empty")
            if any(d >= rank - 1 for d in dims):
                raise ValueError(
                    f"token_dims {dims} out of range [0, {rank - 1}) for rank "
                    f"{rank} (the head dim, the last, cannot be a token dim)")
            if any(a >= b for a, b in zip(dims, dims[1:])):
                raise ValueError(f"token_dims must be strictly increasing "
                                 f"(no duplicates), got {dims}")
            normalize("token_dims", dims)
        if self.positions not in _POSITION_FORMS:
            raise ValueError(f"positions form must be one of "
                             f"{_POSITION_FORMS}, got {self.positions!r}")
        if self.cache not in _CACHE_FORMS:
            raise ValueError(f"cache form must be one of {_CACHE_FORMS}, got "
                             f"{self.cache!r}")
        # A gathered cache is indexed by position; a pre-gathered one is
        # read per token, so positions would index past its rows.
        if self.cache == "gathered" and self.positions == "none":
            raise ValueError("a gathered cos/sin cache needs positions or an "
                             "offset (positions='none' reads a pre-gathered "
                             "cache)")
        if self.cache == "pregathered" and self.positions != "none":
            raise ValueError(f"a pre-gathered cos/sin cache takes no "
                             f"positions or offset, got positions="
                             f"{self.positions!r}")
        if self.positions == "row_offset" and \
                len(self.resolved_token_dims()) < 2:
            raise ValueError("a per-row offset needs two token dims (rows "
                             "and sequence)")
        if self.positions_dtype not in _INT_DTYPES:
            raise TypeError(f"positions_dtype must be 'i32' or 'i64', got "
                            f"{self.positions_dtype!r}")
        if self.cache is not None and self.cache_dtype not in _DTYPES:
            raise TypeError(f"unsupported cache dtype {self.cache_dtype!r}")
        if isinstance(self.threads, _BOOLS) or \
                not isinstance(self.threads, int) or self.threads < 0:
            raise ValueError(f"threads must be an int >= 0 (0 = all cores), "
                             f"got {self.threads!r}")
        if self.bf16_rounding not in ("exact", "native"):
            raise ValueError(f"bf16_rounding must be 'exact' or 'native', got "
                             f"{self.bf16_rounding!r}")
        if self.lowering not in ("vector", "scalar"):
            raise ValueError(f"lowering must be 'vector' or 'scalar', got "
                             f"{self.lowering!r}")
        if self.angle not in ("f64", "turns"):
            raise ValueError(f"angle must be 'f64' or 'turns', got "
                             f"{self.angle!r}")
        for field in ("freqs", "mrope"):
            if getattr(self, field) is not None:
                if not isinstance(getattr(self, field), str):
                    raise TypeError(f"{field} must be attribute text (str) "
                                    f"or None, got {getattr(self, field)!r}")
                # Parsed as one attribute of its kind and printed back: the
                # IR gets the printed form, never the caller's text (which
                # could carry more attributes after a comma).
                normalize(field, _jit.canonical_attribute(
                    getattr(self, field), field))
        if self.mrope is not None and self.positions != "explicit":
            raise ValueError("M-RoPE needs explicit positions [3, *tokens]")
        for field in ("static_shape", "static_positions_shape",
                      "static_offset_shape", "static_cache_shape"):
            if getattr(self, field) is not None:
                normalize(field, _shape(getattr(self, field), field))
        static = self.static_shape
        if static is not None and (len(static) != rank or
                                   static[-1] != head_dim):
            raise ValueError(f"static_shape {static} must have rank {rank} "
                             f"and head dim {head_dim}")
        normalize("norm", _flag(self.norm, "norm"))
        if self.norm:
            if self.norm_dtype not in _DTYPES:
                raise TypeError(f"unsupported norm_dtype {self.norm_dtype!r}: "
                                f"one of {sorted(_DTYPES)}")
            eps = _real(self.norm_epsilon, "norm_epsilon")
            if not (eps >= 0.0 and math.isfinite(eps)):
                raise ValueError(f"norm_epsilon must be a finite number >= 0, "
                                 f"got {eps!r}")
            normalize("norm_epsilon", eps)
        if self.quant is not None:
            if self.quant not in _QUANT_DTYPES:
                raise ValueError(f"quant must be one of "
                                 f"{sorted(_QUANT_DTYPES)} or None, got "
                                 f"{self.quant!r}")
            if self.dtype == "f64":
                raise TypeError("a quantized output needs f16, bf16 or f32 "
                                "input (the quantization computes in f32), "
                                "got f64")
            if self.inplace:
                raise ValueError("a quantized output cannot be written in "
                                 "place (its dtype differs from x's)")
            if self.quant_scale not in _QUANT_SCALE_FORMS:
                raise ValueError(f"quant_scale must be one of "
                                 f"{_QUANT_SCALE_FORMS}, got "
                                 f"{self.quant_scale!r}")
            if self.quant_scale == "head" and len(self.head_dims()) != 1:
                raise ValueError(f"a per-head quant_scale needs exactly one "
                                 f"head dim (neither a token dim nor the "
                                 f"channels); this configuration has "
                                 f"{len(self.head_dims())}")

        normalize("slots", _flag(self.slots, "slots"))
        normalize("cache_write", _flag(self.cache_write, "cache_write"))
        normalize("query", _flag(self.query, "query"))
        if self.slots:
            if self.slots_dtype not in _INT_DTYPES:
                raise TypeError(f"slots_dtype must be 'i32' or 'i64', got "
                                f"{self.slots_dtype!r}")
            if self.inplace:
                raise ValueError("a cache append writes the cache, not x: "
                                 "inplace must be False with slots")
            if any(getattr(self, f) is not None for f in (
                    "static_shape", "static_positions_shape",
                    "static_offset_shape", "static_cache_shape")):
                raise ValueError("a cache append kernel takes no static "
                                 "shapes")
        elif self.cache_write or self.query:
            raise ValueError("cache_write and query are members of a cache "
                             "append kernel: they need slots=True")

    def resolved_token_dims(self) -> tuple:
        if self.token_dims is not None:
            return tuple(self.token_dims)
        return (0,) if self.rank <= 2 else tuple(range(self.rank - 2))

    def head_dims(self) -> tuple:
        """The dims that are neither token dims nor the channels."""
        tokens = self.resolved_token_dims()
        return tuple(d for d in range(self.rank - 1) if d not in tokens)

    def out_dtype(self) -> np.dtype:
        """The destination's numpy dtype (x's, or the quantized one)."""
        if self.quant is not None:
            return _QUANT_DTYPES[self.quant][0]
        return _DTYPES[self.dtype]


def emit(config: KernelConfig, name: str = "rope_kernel",
         inputs: int = 1) -> str:
    """The MLIR module (memref wrapper around one `rope.apply`) for
    `config`; the function is `@<name>` with a C interface.

    inputs=2 (fused.apply_qk): a second input `k` (and its destination)
    follows the arguments of the first, rotated by a second `rope.apply`
    on the same positions, offset and caches (convert-rope-to-vector
    lowers the two as one token loop); the dynamic head dims let q and k
    have different head counts."""
    c = config
    if c.slots:
        if inputs != 1:
            raise ValueError("a cache append kernel has one input form "
                             "(its members are fields of the config)")
        return _emit_append(c, name)
    if inputs not in (1, 2) or (inputs == 2 and c.static_shape is not None):
        raise ValueError("inputs must be 1, or 2 without a static shape")
    if c.static_shape is not None:
        x_shape = tuple(c.static_shape)
    else:
        x_shape = (None,) * (c.rank - 1) + (c.head_dim,)
    xt = _ir.Type(c.dtype, x_shape)
    token_dims = c.resolved_token_dims()
    pair_count = (c.rotary_dim if c.rotary_dim is not None else c.head_dim) // 2

    body = _ir.Body()
    x = body.fresh("x")
    args = [(x, xt.memref())]
    x_tensor = body.assign("xt", _ir.to_tensor(x, xt, writable=c.inplace))
    operands = {}
    if c.positions == "explicit":
        shape = (tuple(c.static_positions_shape) if c.static_positions_shape
                 is not None else (None,) * len(token_dims))
        if c.mrope is not None and c.static_positions_shape is None:
            shape = (3,) + shape
        pt = _ir.Type(c.positions_dtype, shape)
        pos = body.fresh("pos")
        args.append((pos, pt.memref()))
        operands["positions"] = (body.assign("pt", _ir.to_tensor(pos, pt)),
                                 pt)
    elif c.positions == "offset":
        off = body.fresh("off")
        args.append((off, "i64"))
        operands["offset"] = (off, "i64")
    elif c.positions == "row_offset":
        shape = (tuple(c.static_offset_shape)
                 if c.static_offset_shape is not None else (None,))
        ot = _ir.Type("i64", shape)
        off = body.fresh("off")
        args.append((off, ot.memref()))
        operands["offset"] = (body.assign("ot", _ir.to_tensor(off, ot)), ot)
    if c.cache is not None:
        if c.static_cache_shape is not None:
            cshape = tuple(c.static_cache_shape)
        else:
            # The width (P/2) is static: the verifier checks it.
            lead = 1 if c.cache == "gathered" else len(token_dims)
            cshape = (None,) * lead + (pair_count,)
        ct = _ir.Type(c.cache_dtype, cshape)
        cos, sin = body.fresh("cos"), body.fresh("sin")
        args += [(cos, ct.memref()), (sin, ct.memref())]
        operands["cache"] = (body.assign("ct", _ir.to_tensor(cos, ct)),
                             body.assign("st", _ir.to_tensor(sin, ct)), ct)
    attrs = _ir.rope_attributes(
        layout=c.layout, rotary_dim=c.rotary_dim, token_dims=c.token_dims,
        freqs=(None if c.cache is not None else
               c.freqs if c.freqs is not None else
               _ir.default_freqs(c.base)),
        mrope=c.mrope, magnitude=c.magnitude, inverse=c.inverse,
        norm_epsilon=c.norm_epsilon if c.norm else None)
    # The destination: x's type, or the quantized one.
    yt = (_ir.Type(_QUANT_DTYPES[c.quant][1], x_shape) if c.quant is not None
          else xt)
    inits = []
    for i in range(inputs):
        if i:
            x = body.fresh("k")
            args.append((x, xt.memref()))
            x_tensor = body.assign("kt", _ir.to_tensor(x, xt,
                                                       writable=c.inplace))
        # Each member's own neighbours' operands (Q and K have their own
        # norm weight and scale).
        neighbours = {}
        if c.norm:
            wt = _ir.Type(c.norm_dtype, (c.head_dim,))
            w = body.fresh("w")
            args.append((w, wt.memref()))
            neighbours["norm"] = (body.assign("wt", _ir.to_tensor(w, wt)), wt)
        if c.quant is not None:
            st = _ir.Type("f32", () if c.quant_scale == "tensor" else (None,))
            s = body.fresh("s")
            args.append((s, st.memref()))
            neighbours["quant_scale"] = (
                body.assign("sc", _ir.to_tensor(s, st)), st)
        if c.inplace:
            init, dest = x_tensor, x
        else:
            dest = body.fresh("out")
            args.append((dest, yt.memref()))
            init = body.assign("it", _ir.to_tensor(dest, yt, writable=True))
        inits.append((x_tensor, init, dest, neighbours))
    for x_tensor, init, dest, neighbours in inits:
        y = body.assign("y", _ir.rope_apply(x_tensor, xt, init, attrs,
                                            result=yt, **operands,
                                            **neighbours))
        body.emit(_ir.materialize(y, yt, dest))
    body.ret()
    return _ir.function(name, args, body, c_interface=True)


def _emit_append(c: KernelConfig, name: str) -> str:
    """The cache append kernel (config.slots): its C interface takes, in
    order, k, the positions or offset, cos and sin (with a cos/sin cache),
    k's norm weight and quantization scale (as configured), the slots, the
    K cache; then with cache_write v, its scale and the V cache; then with
    query q, its norm weight and q's output. K is rotated straight into its
    cache (rope.apply slots), V copied (rope.cache_write), q rotated by a
    rope.apply without slots on the same operands (the QK siblings)."""
    x_shape = (None,) * (c.rank - 1) + (c.head_dim,)
    xt = _ir.Type(c.dtype, x_shape)
    cache_elt = (_QUANT_DTYPES[c.quant][1] if c.quant is not None
                 else c.dtype)
    cache_t = _ir.Type(cache_elt, x_shape)
    token_dims = c.resolved_token_dims()
    pair_count = (c.rotary_dim if c.rotary_dim is not None
                  else c.head_dim) // 2
    body = _ir.Body()
    args = []

    def argument(hint, t, writable=False):
        value = body.fresh(hint)
        args.append((value, t.memref()))
        return value, body.assign(hint + "t", _ir.to_tensor(
            value, t, writable=writable))

    k, k_tensor = argument("k", xt)
    operands = {}
    if c.positions == "explicit":
        shape = (None,) * len(token_dims)
        if c.mrope is not None:
            shape = (3,) + shape
        pt = _ir.Type(c.positions_dtype, shape)
        operands["positions"] = (argument("pos", pt)[1], pt)
    elif c.positions == "offset":
        off = body.fresh("off")
        args.append((off, "i64"))
        operands["offset"] = (off, "i64")
    elif c.positions == "row_offset":
        ot = _ir.Type("i64", (None,))
        operands["offset"] = (argument("off", ot)[1], ot)
    if c.cache is not None:
        lead = 1 if c.cache == "gathered" else len(token_dims)
        ct = _ir.Type(c.cache_dtype, (None,) * lead + (pair_count,))
        operands["cache"] = (argument("cos", ct)[1], argument("sin", ct)[1],
                             ct)
    wt = _ir.Type(c.norm_dtype, (c.head_dim,))
    st = _ir.Type("f32", () if c.quant_scale == "tensor" else (None,))
    k_neighbours = {}
    if c.norm:
        k_neighbours["norm"] = (argument("kw", wt)[1], wt)
    if c.quant is not None:
        k_neighbours["quant_scale"] = (argument("ks", st)[1], st)
    slot_t = _ir.Type(c.slots_dtype, (None,) * len(token_dims))
    slots = (argument("slots", slot_t)[1], slot_t)
    kc, kc_tensor = argument("kcache", cache_t, writable=True)
    if c.cache_write:
        _, v_tensor = argument("v", xt)
        v_scale = (argument("vs", st)[1], st) if c.quant is not None \
            else None
        vc, vc_tensor = argument("vcache", cache_t, writable=True)
    if c.query:
        _, q_tensor = argument("q", xt)
        q_norm = {"norm": (argument("qw", wt)[1], wt)} if c.norm else {}
        qo, qo_tensor = argument("qout", xt, writable=True)
    attrs = _ir.rope_attributes(
        layout=c.layout, rotary_dim=c.rotary_dim, token_dims=c.token_dims,
        freqs=(None if c.cache is not None else
               c.freqs if c.freqs is not None else
               _ir.default_freqs(c.base)),
        mrope=c.mrope, magnitude=c.magnitude, inverse=c.inverse,
        norm_epsilon=c.norm_epsilon if c.norm else None)
    if c.query:  # first, as apply_qk orders the siblings
        y = body.assign("qy", _ir.rope_apply(q_tensor, xt, qo_tensor, attrs,
                                             **operands, **q_norm))
        body.emit(_ir.materialize(y, xt, qo))
    y = body.assign("ky", _ir.rope_apply(k_tensor, xt, kc_tensor, attrs,
                                         result=cache_t, slots=slots,
                                         **operands, **k_neighbours))
    body.emit(_ir.materialize(y, cache_t, kc))
    if c.cache_write:
        y = body.assign("vy", _ir.cache_write(
            v_tensor, xt, slots, vc_tensor, cache_t, quant_scale=v_scale,
            token_dims=c.token_dims))
        body.emit(_ir.materialize(y, cache_t, vc))
    body.ret()
    return _ir.function(name, args, body, c_interface=True)


def pipeline(config: KernelConfig) -> str:
    """The `rope-to-llvm-cpu` pipeline a kernel for `config` is built with:
    bf16-truncation where it is not the default (`bits`), angle where it is
    not f64."""
    truncation = _jit.bf16_truncation(config.bf16_rounding)
    return _path.cpu_pipeline(
        vectorize=config.lowering == "vector",
        num_threads=int(config.threads),
        bf16_truncation=None if truncation == "bits" else truncation,
        angle=None if config.angle == "f64" else config.angle)


class Names(NamedTuple):
    """What a rotation's arguments are called where it is one member of a
    bigger call (fused.QKKernel's q and k, cache.AppendKernel's k, v and
    q): every message of RotationChecks says these names."""

    x: str = "x"
    out: str = "out"
    norm_weight: str = "norm_weight"
    quant_scale: str = "quant_scale"

    @classmethod
    def member(cls, name: str) -> "Names":
        """q's (or k's, v's) names: q, out_q, q_norm_weight, q_scale."""
        return cls(name, f"out_{name}", f"{name}_norm_weight",
                   f"{name}_scale")


def arg_specs(config: KernelConfig, names: Names = Names()) -> dict:
    """The ArgSpecs of a rotation's arguments, by role (x, positions,
    offset, cos_cache, sin_cache, norm_weight, quant_scale, out), those the
    configuration takes, in the order of the kernel's parameters. What the
    Python checks (RotationChecks, through _kernel_path.ShapeRule) and the
    C++ plan (RotationChecks.make_plan) read. The shape rules (`like`) tie
    each token dim to x's."""
    c = config
    dims = c.resolved_token_dims()
    x_dims = tuple((names.x, d) for d in dims)  # x's token dims
    x_shape = (tuple(c.static_shape) if c.static_shape is not None else
               (None,) * (c.rank - 1) + (c.head_dim,))
    x_dtype = _DTYPES[c.dtype]
    specs = {}
    if c.inplace:
        specs["x"] = ArgSpec(names.x, x_dtype, x_shape, writeable=True,
                             apart_from=(EVERY_INPUT,),
                             effect=f"rotates {names.x} in place "
                                    f"({names.out}={names.x})")
    else:
        specs["x"] = ArgSpec(names.x, x_dtype, x_shape)
    if c.positions == "explicit":
        shape = (tuple(c.static_positions_shape)
                 if c.static_positions_shape is not None else
                 ((3,) if c.mrope is not None else ()) + (None,) * len(dims))
        specs["positions"] = ArgSpec(
            "positions", _INT_DTYPES[c.positions_dtype], shape,
            like=((None,) if c.mrope is not None else ()) + x_dims,
            why=("[3, *token dims] for M-RoPE" if c.mrope is not None
                 else "one per token"))
    elif c.positions == "offset":
        specs["offset"] = ArgSpec("offset", scalar=True)
    elif c.positions == "row_offset":
        shape = (tuple(c.static_offset_shape)
                 if c.static_offset_shape is not None else (None,))
        specs["offset"] = ArgSpec("offset", _INT_DTYPES["i64"], shape,
                                  like=x_dims[:1],
                                  why="a per-row offset: one per index of "
                                      "the first token dim")
    if c.cache is not None:
        pairs = (c.rotary_dim or c.head_dim) // 2
        if c.static_cache_shape is not None:
            shape = tuple(c.static_cache_shape)
        else:
            lead = 1 if c.cache == "gathered" else len(dims)
            shape = (None,) * lead + (pairs,)
        # Pregathered: a row per token. sin_cache: cos_cache's shape.
        like = x_dims + (None,) if c.cache == "pregathered" else ()
        specs["cos_cache"] = ArgSpec(
            "cos_cache", _DTYPES[c.cache_dtype], shape, like=like,
            why=f"{'a row per token' if like else 'rows by position'}, "
                f"rotary_dim / 2 = {pairs} columns")
        specs["sin_cache"] = ArgSpec(
            "sin_cache", _DTYPES[c.cache_dtype], shape,
            like=tuple(("cos_cache", d) for d in range(len(shape))))
    if c.norm:
        specs["norm_weight"] = ArgSpec(names.norm_weight,
                                       _DTYPES[c.norm_dtype], (c.head_dim,))
    if c.quant is not None:
        per_head = c.quant_scale != "tensor"
        specs["quant_scale"] = ArgSpec(
            names.quant_scale, np.dtype(np.float32),
            (None,) if per_head else (),
            like=((names.x, c.head_dims()[0]),) if per_head else (),
            why="one per head" if per_head else "a scalar (per tensor)")
    if not c.inplace:
        specs["out"] = ArgSpec(names.out, c.out_dtype(), x_shape,
                               writeable=True, apart_from=(EVERY_INPUT,),
                               like=tuple((names.x, d)
                                          for d in range(c.rank)))
    return specs


class RotationChecks:
    """The checks of one rotation's arguments against a configuration,
    from its ArgSpecs (`arg_specs`), every message naming the arguments as
    `names` says: Kernel's, and each member's of a fused call (fused.py's
    q and k, cache.py's k, v and q), which check their members with it."""

    def __init__(self, config: KernelConfig, names: Names = Names(),
                 describe=None):
        self.config = config
        self.names = names
        self.specs = arg_specs(config, names)
        # Per-configuration facts the calls check against: element types
        # and static shapes are the specs' (which the plan reads too).
        specs = self.specs
        none = ArgSpec("")
        self._dtype = specs["x"].dtype
        self._static_shape = specs["x"].static_shape()
        self._positions_dtype = specs.get("positions", none).dtype
        self._static_positions = specs.get("positions", none).static_shape()
        self._static_offset = specs.get("offset", none).static_shape()
        self._cache_dtype = specs.get("cos_cache", none).dtype
        self._static_cache = specs.get("cos_cache", none).static_shape()
        dims = config.resolved_token_dims()
        self._token_sizes = (operator.itemgetter(*dims) if len(dims) > 1 else
                             (lambda shape, d=dims[0]: (shape[d],)))
        self._inplace = config.inplace
        self._out_dtype = (specs["out"] if "out" in specs else
                           specs["x"]).dtype
        self._neighbours = config.norm or config.quant is not None
        # The shape rules of the specs (like, static sizes), as the Python
        # checks read them: the same the C++ plan reads.
        self._rules = {role: _path.ShapeRule(spec)
                       for role, spec in specs.items() if not spec.scalar}
        self._out_rule = self._rules.get("out")
        self._positions_rule = self._rules.get("positions")
        if describe is not None:  # how an array becomes an argument
            self._keep = describe

    def make_plan(self, address: int, parameters: tuple,
                  members: tuple = (Names(),)):
        """The C++ fast call of the compiled function at `address`, or None
        (no extension, or a function it does not take: rank > 12). The plan
        derives every check from `parameters` (the function's ArgSpecs, in
        order: dtype, rank, static sizes, shape rules, writeability,
        overlaps) and the rotation facts given here: how each member's
        (`members`' Names: one, or a q/k pair's two, fused.QKKernel) call
        arguments are read, the forms of the positions and of the cache."""
        module = _jit.kernel_call_module()
        if module is None:
            return None
        c = self.config
        # The call: each member's x, the shared operands, each member's out.
        names = (tuple(n.x for n in members) +
                 ("positions", "offset", "cos_cache", "sin_cache") +
                 tuple(n.out for n in members))
        read = {spec.name for spec in parameters}
        absent = {name: None for name in names if name not in read}
        if "offset" in absent:
            absent["offset"] = 0  # explicit positions: the default offset
        for n in members:
            if n.out in absent:
                absent[n.out] = n.x  # in place: out=x
        index = {"explicit": "positions", "offset": "offset",
                 "row_offset": "offset"}.get(c.positions)
        call = dict(
            names=names,
            usage=f"a {'q/k' if len(members) > 1 else 'kernel'} plan takes "
                  f"({', '.join(names)})",
            absent=absent,
            returns=tuple(n.x if c.inplace else n.out for n in members),
            positions=_POSITION_FORMS.index(c.positions), index=index,
            sequence=(members[0].x, c.resolved_token_dims()[-1]),
            cache=_CACHE_FORMS.index(c.cache),
            rows="cos_cache" if c.cache == "gathered" else None)
        return module.make_plan(
            address, np.ndarray,
            tuple(spec.plan_entry() for spec in parameters), call)

    # -- argument checking -------------------------------------------------
    def _fail(self, message: str, shapes: dict):
        """Raises ValueError(`message`), with the compiler's own diagnostic
        for these static shapes appended when it has one."""
        c = self.config
        try:
            static = dataclasses.replace(c, **shapes)
            _jit.lower(emit(static), "builtin.module()")
        except CompileError as error:
            raise ValueError(f"{message}; the verifier says: "
                             f"{str(error).strip()}") from None
        except Exception:  # noqa: BLE001 - fall back to our own message
            pass
        raise ValueError(message)

    def _neighbour_args(self, keep, x, norm_weight, quant_scale) -> list:
        """The checked norm weight ([D], the configured dtype) and
        quantization scale (a float32 scalar, or one per head), as ctypes
        arguments; either passed to a kernel compiled without it raises."""
        c = self.config
        n = self.names
        args = []
        if c.norm:
            spec = self.specs["norm_weight"]
            if norm_weight is None:
                raise ValueError(f"the kernel was compiled with a QK-norm: "
                                 f"pass {spec.name} (shape [D])")
            w = _float_array(norm_weight, spec.name, spec.dtype)
            if w.shape != spec.shape:
                raise ValueError(f"{spec.name} has shape {w.shape}, expected "
                                 f"{spec.shape} (one weight per channel)")
            args.append(self._address_of(keep, w))
        elif norm_weight is not None:
            raise ValueError(f"the kernel was compiled without a QK-norm: "
                             f"{n.norm_weight} must be None")
        if c.quant is not None:
            spec = self.specs["quant_scale"]
            if quant_scale is None:
                raise ValueError(f"the kernel was compiled with a quantized "
                                 f"output ({c.quant}): pass {spec.name}")
            if isinstance(quant_scale, (int, float)) and \
                    not isinstance(quant_scale, _BOOLS):
                quant_scale = np.float32(quant_scale)  # rounded to f32
            s = _float_array(quant_scale, spec.name, spec.dtype)
            self._rules["quant_scale"].check(s.shape, {n.x: x.shape})
            if not np.isfinite(s).all():
                raise ValueError(f"{spec.name} must be finite (a NaN or "
                                 "infinite scale has no quantized value)")
            args.append(self._address_of(keep, s))
        elif quant_scale is not None:
            raise ValueError(f"the kernel was compiled without a quantized "
                             f"output: {n.quant_scale} must be None")
        return args

    def _checked_args(self, keep, x, positions, offset, cos_cache, sin_cache,
                      out, norm_weight=None, quant_scale=None):
        """The checks of Kernel._checked_call on numpy-convertible
        arguments: the ctypes arguments of the kernel (their descriptors
        appended to `keep`, which must outlive the call) and the array the
        call returns. Also each member's checks of a fused call (out=
        NO_DESTINATION: the inputs only)."""
        c = self.config
        n = self.names
        # The caller's arrays as passed: a destination must be apart from
        # them too, not only from the copies the kernel may read instead.
        given = tuple((name, value) for name, value in (
            (n.x, x), ("positions", positions), ("offset", offset),
            ("cos_cache", cos_cache), ("sin_cache", sin_cache))
            if isinstance(value, np.ndarray))
        if not isinstance(x, np.ndarray):  # keep subclasses: out=x is x
            x = np.asarray(x)
        if x.dtype != self._dtype:
            raise TypeError(f"{n.x} has dtype {x.dtype}, the kernel was "
                            f"compiled for {self._dtype}")
        shape = x.shape
        if len(shape) != c.rank or shape[-1] != c.head_dim:
            raise ValueError(f"{n.x} has shape {shape}, the kernel was "
                             f"compiled for rank {c.rank} with head dim "
                             f"{c.head_dim}")
        if self._static_shape is not None and shape != self._static_shape:
            raise ValueError(f"{n.x} has shape {shape}, the kernel was "
                             f"compiled for the static shape "
                             f"{self._static_shape}")
        token_sizes = self._token_sizes(shape)
        shapes = {n.x: shape}  # what the shape rules (like) read
        flags = x.flags
        if c.inplace:
            if out is not x:
                raise ValueError(f"the kernel rotates in place: pass "
                                 f"{n.out}={n.x} (the same numpy array)")
            if not flags.writeable:
                raise ValueError(f"{n.x} is read-only (flags.writeable is "
                                 f"False): it cannot be rotated in place "
                                 f"({n.out}={n.x})")
            if not (flags.c_contiguous and flags.aligned):
                raise ValueError(f"{n.x} must be C-contiguous and aligned to "
                                 f"be rotated in place ({n.out}={n.x}); got "
                                 f"strides {x.strides}")
        elif not (flags.c_contiguous and flags.aligned):
            x = x.copy(order="C")
        args = [self._address_of(keep, x)]

        form = c.positions
        indices = None  # the positions or per-row offsets, as passed
        if form == "explicit":
            if positions is None:
                raise ValueError("the kernel was compiled for explicit "
                                 "positions: pass positions")
            # (The default, a plain 0, is recognized without a call.)
            if not (offset.__class__ is int and offset == 0) and \
                    not _is_zero(offset):
                raise ValueError(f"positions and offset={offset!r} were both "
                                 "given: explicit positions take no offset "
                                 "(add it to the positions)")
            positions = _integer_array(positions, "positions",
                                       self._positions_dtype)
            rule = self._positions_rule
            if not rule.holds(positions.shape, shapes):
                self._fail(rule.message(positions.shape, shapes),
                           dict(static_shape=shape,
                                static_positions_shape=positions.shape))
            if self._static_positions is not None and \
                    positions.shape != self._static_positions:
                raise ValueError(f"positions have shape {positions.shape}, "
                                 f"the kernel was compiled for the static "
                                 f"shape {self._static_positions}")
            indices = positions
            args.append(self._address_of(keep, positions))
        else:
            if positions is not None:
                raise ValueError(f"the kernel was compiled for positions="
                                 f"{form!r}: positions must be None")
            if form == "offset":
                if isinstance(offset, np.ndarray) and offset.ndim:
                    raise ValueError(f"the kernel was compiled for a scalar "
                                     f"offset, got offset of shape "
                                     f"{offset.shape}")
                offset = _scalar_offset(offset)
                _path.check_offset_sum(offset, token_sizes[-1], "offset")
                args.append(offset)
            elif form == "row_offset":
                offset = _integer_array(offset, "offset", _INT_DTYPES["i64"])
                rule = self._rules["offset"]
                if not rule.holds(offset.shape, shapes):
                    self._fail(rule.message(offset.shape, shapes),
                               dict(static_shape=shape,
                                    static_offset_shape=offset.shape))
                if self._static_offset is not None and \
                        offset.shape != self._static_offset:
                    raise ValueError(f"offset has shape {offset.shape}, the "
                                     f"kernel was compiled for the static "
                                     f"shape {self._static_offset}")
                if offset.size:
                    _path.check_offset_sum(int(offset.max()),
                                           token_sizes[-1], "offset")
                indices = offset
                args.append(self._address_of(keep, offset))
            elif not _is_zero(offset):
                raise ValueError(f"the kernel was compiled without positions "
                                 f"or offset (positions='none'): offset must "
                                 f"be 0, got {offset!r}")

        if c.cache is not None:
            if cos_cache is None or sin_cache is None:
                raise ValueError("the kernel was compiled with a cos/sin "
                                 "cache: pass cos_cache and sin_cache")
            cos_cache = _float_array(cos_cache, "cos_cache", self._cache_dtype)
            sin_cache = _float_array(sin_cache, "sin_cache", self._cache_dtype)
            if self._static_cache is not None and \
                    cos_cache.shape != self._static_cache:
                raise ValueError(f"cos_cache/sin_cache have shape "
                                 f"{cos_cache.shape}, the kernel was compiled "
                                 f"for the static shape {self._static_cache}")
            shapes["cos_cache"] = cos_shape = cos_cache.shape
            rule = self._rules["cos_cache"]
            if not rule.holds(cos_shape, shapes):
                self._fail(rule.message(cos_shape, shapes),
                           dict(static_shape=shape,
                                static_cache_shape=cos_shape))
            rule = self._rules["sin_cache"]
            if not rule.holds(sin_cache.shape, shapes):
                self._fail(rule.message(sin_cache.shape, shapes),
                           dict(static_shape=shape,
                                static_cache_shape=sin_cache.shape))
            if c.cache == "gathered":
                self._check_cache_range(indices, offset, token_sizes,
                                        cos_cache.shape[0])
            args.append(self._address_of(keep, cos_cache))
            args.append(self._address_of(keep, sin_cache))
        elif cos_cache is not None or sin_cache is not None:
            raise ValueError("the kernel was compiled without a cos/sin "
                             "cache: cos_cache and sin_cache must be None")
        neighbours = ()
        if self._neighbours or norm_weight is not None or \
                quant_scale is not None:
            args += self._neighbour_args(keep, x, norm_weight, quant_scale)
            # out must not overlap them either (the kernel reads them while
            # it writes).
            neighbours = tuple(
                (name, array) for name, array in (
                    (n.norm_weight, norm_weight),
                    (n.quant_scale, quant_scale))
                if isinstance(array, np.ndarray))

        if out is NO_DESTINATION:
            # The caller (a fused call) passes its own destination and
            # checks it.
            return args, None
        # Every array the kernel reads while it writes its destination:
        # the positions or per-row offsets, the cos/sin caches and the
        # neighbours' operands (x itself unless rotated in place).
        read = tuple((name, array) for name, array in (
            ("positions" if form == "explicit" else "offset", indices),
            ("cos_cache", cos_cache), ("sin_cache", sin_cache))
            if isinstance(array, np.ndarray)) + neighbours
        read += tuple((name, value) for name, value in given
                      if name != n.x and not any(value is a for _, a in read))
        if not c.inplace:
            spec = self.specs["out"]
            if out is None:
                out = _arrays.empty(shape, self._out_dtype)
            else:
                if out is x:
                    raise ValueError(f"{spec.name} is {n.x} but the kernel "
                                     f"is not in place: compile with "
                                     f"inplace=True")
                _path.check_destination(spec, out, None, None,
                                        self._out_rule, shapes)
                _path.check_apart(spec, out, ((n.x, x),) + given[:1] + read)
            args.append(self._address_of(keep, out))
        else:
            _path.check_apart(self.specs["x"], x, read)
        return args, (x if c.inplace else out)

    def _address_of(self, keep, array) -> int:
        return ctypes.addressof(self._keep(keep, array))

    @staticmethod
    def _keep(keep, array):
        if array.size == 0 and array.ctypes.data % array.dtype.itemsize:
            # An empty array's address is never read (and numpy calls it
            # aligned whatever it is): describe an aligned one instead.
            array = np.empty(array.shape, array.dtype)
        desc = _jit.memref_descriptor(array)
        keep.append((array, desc))
        return desc

    def _check_cache_range(self, indices, offset, token_sizes, rows):
        """Every position a gathered cache is read at must be a row of it:
        positions (or offsets + the sequence index) in [0, rows)."""
        if 0 in token_sizes:
            return  # no token, nothing is read
        form = self.config.positions
        seq = token_sizes[-1]
        if form == "explicit":
            low, high = int(indices.min()), int(indices.max())
            what = "positions span"
        elif form == "offset":
            low, high = offset, offset + seq - 1
            what = f"offset {offset} + [0, {seq}) spans"
        else:
            low, high = int(indices.min()), int(indices.max()) + seq - 1
            what = f"per-row offsets + [0, {seq}) span"
        if low < 0 or high >= rows:
            raise IndexError(
                f"{what} [{low}, {high}] but the cos/sin cache has {rows} "
                f"rows: positions must be in [0, {rows}) (a position outside "
                "has no cached angle)")


#: RotationChecks._checked_args(out=NO_DESTINATION): check the inputs only.
NO_DESTINATION = object()


class Kernel(RotationChecks):
    """A compiled `rope.apply` for one configuration. Call it on arrays.

    Every argument is checked before the compiled code runs (it trusts the
    sizes it is given): x's dtype, rank, head dim and any static shape; the
    positions' integer type, value range and shape; the offset's type and
    shape; the caches' dtype and shapes, and the gathered positions against
    the cache rows; `out`'s dtype, shape, layout, writeability and overlap.
    A mismatch raises TypeError (a type), ValueError (a shape, a value, an
    argument the configuration does not take) or IndexError (a position
    outside the cache), naming the argument, what it got and what was
    expected."""

    #: rope.apply members of the compiled function (fused.QKKernel: 2).
    _members = 1

    def __init__(self, config: KernelConfig):
        if config.slots and type(self) is Kernel:
            raise ValueError("a cache append configuration (slots=True) is "
                             "compiled by rope_mlir.compile_append")
        super().__init__(config)
        self._compiled = _path.CompiledKernel(
            emit(config, inputs=self._members), pipeline(config),
            "rope_kernel", self._parameters())
        self.ir = self._compiled.ir
        self._module = self._compiled.module
        self._function = self._compiled.function
        # The C++ plan takes plain rotations only; a kernel with neighbours
        # is called through the Python path, which checks their operands.
        self._plan = (None if self._neighbours or self._members != 1 else
                      self.make_plan(self._compiled.address,
                                     self._parameters()))

    def _parameters(self) -> tuple:
        """The ArgSpecs of the compiled function's parameters, in order."""
        return tuple(self.specs.values())

    def __call__(self, x, positions=None, *, offset=0, cos_cache=None,
                 sin_cache=None, out=None, norm_weight=None,
                 quant_scale=None):
        """Rotates x (see the class docstring for the checks). A call whose
        arguments are exactly what the kernel was compiled for (numpy
        arrays of its dtypes and shapes, C-contiguous and aligned, out=
        writeable and apart from the inputs) is checked and run in C++ by
        the plan (lib/Runtime/KernelCall.cpp); any other call, and every
        error, takes the Python path below."""
        plan = self._plan
        if plan is not None and norm_weight is None and quant_scale is None:
            if out is None and not self._inplace and \
                    x.__class__ is np.ndarray:
                result = plan(x, positions, offset, cos_cache, sin_cache,
                              _arrays.empty(x.shape, self._dtype))
            else:
                result = plan(x, positions, offset, cos_cache, sin_cache, out)
            if result is not None:
                return result
        return self._checked_call(x, positions, offset, cos_cache, sin_cache,
                                  out, norm_weight, quant_scale)

    def _checked_call(self, x, positions, offset, cos_cache, sin_cache, out,
                      norm_weight=None, quant_scale=None):
        """Every check in Python (converting what may be converted), then the
        kernel through ctypes: the path for DLPack producers, lists,
        non-contiguous inputs, the other integer types, and errors."""
        if _arrays.any_foreign(x, positions, offset, cos_cache, sin_cache,
                               out, norm_weight, quant_scale):
            return self._call_dlpack(x, positions, offset, cos_cache,
                                     sin_cache, out, norm_weight,
                                     quant_scale)
        keep = []  # (array, descriptor) pairs alive during the call
        args, result = self._checked_args(keep, x, positions, offset,
                                          cos_cache, sin_cache, out,
                                          norm_weight, quant_scale)
        if result.size:  # an empty x (any dim 0): nothing to compute
            self._function(*args)
        return result

    def _call_dlpack(self, x, positions, offset, cos_cache, sin_cache, out,
                     norm_weight=None, quant_scale=None):
        """A call with DLPack arguments: each imported zero-copy (see
        _arrays), the result returned as x's array type (out as passed)."""
        arrays = _arrays.import_all(_NEIGHBOUR_NAMES, (
            x, positions, offset, cos_cache, sin_cache, out, norm_weight,
            quant_scale))
        result = self(arrays[0], arrays[1], offset=arrays[2],
                      cos_cache=arrays[3], sin_cache=arrays[4],
                      out=arrays[5], norm_weight=arrays[6],
                      quant_scale=arrays[7])
        if out is not None:
            return out
        return _arrays.wrap(result, x)


# apply()'s kernels by the tuple of their configuration's fields.
_apply_kernels: dict = {}
_cache = _path.KernelCache(Kernel)


def compile(config: Optional[KernelConfig] = None, **kwargs) -> Kernel:
    """Returns the (cached) compiled kernel for a configuration, given as a
    KernelConfig or as its fields: compile(dtype="f32", rank=4,
    head_dim=128, layout="half", positions="explicit", ...)."""
    return _cache.configured(KernelConfig, config, kwargs)


def cache_info() -> dict:
    """How many kernels were compiled and how many calls reused one."""
    return _cache.info()


def apply(x, positions=None, *, layout="half", rotary_dim=None, base=10000.0,
          scaling=None, offset=0, cos_cache=None, sin_cache=None,
          inverse=False, token_dims=None, out=None, magnitude=None,
          mrope_section=None, mrope_interleaved=False, threads=1,
          norm_weight=None, norm_eps=1e-6, quant_dtype=None,
          quant_scale=None):
    """Rotates `x` by RoPE with the compiled `rope.apply` (SEMANTICS.md).

    x: [*tokens, H, D] by default (token dims = all but the last two, or
    [0] for rank 2); `token_dims` says otherwise, e.g. (0, 2) for
    [B, H, S, D]. positions: integers shaped like the token dims, or None
    for `offset + index along the last token dim` (offset: int, or one per
    index of the first token dim). cos_cache/sin_cache: [M, P/2] gathered by
    position, or pre-gathered (token dims + [P/2]) when positions is None,
    the offset is 0 and the cache rank is not 2. out=x rotates in place.

    scaling: a Hugging Face rope_scaling dict (SEMANTICS.md §4; keys as in
    config.json, `max_position_embeddings` may be given inside it), turned
    into attributes by the C++ importer (see `scaling_attributes`); the
    rotary dim defaults to int(partial_rotary_factor * D) when the dict has
    that key. mrope_section [t, h, w] (or the dict's `mrope_section`) makes
    positions [3, *token dims] (M-RoPE); mrope_interleaved selects Qwen3-VL's
    frequency interleaving. threads: OpenMP threads over tokens (1: the
    calling thread only, 0: all cores). magnitude: None for the scheme's (1 unless YaRN
    or LongRoPE define one); an explicit value must equal a YaRN/LongRoPE
    scheme's, else ValueError.

    Fused neighbours (docs/FUSIONS.md), in the same pass over x:
    norm_weight: a [D] float array: QK-norm first, an RMSNorm over the head
    dim, x' = w * (x * rsqrt(mean(x^2) + norm_eps)), computed in f32 (f64
    for f64 data). quant_dtype: "f8e4m3fn", "f8e5m2" or "i8" (or the numpy
    / ml_dtypes dtype): the result is quantized, q = sat(y * quant_scale)
    rounded to nearest even (fp8: clamped to the largest finite value, NaN
    stays NaN; i8: clamped to [-128, 127], NaN -> 0); quant_scale is a
    float32 scalar (per tensor) or one per head ([H] along the one head
    dim). The multiplier convention (FlashInfer's); vLLM's dequantization
    scale is its reciprocal.
    """
    if norm_weight is not None or quant_dtype is not None or \
            quant_scale is not None:
        return _apply_with_neighbours(
            x, positions, layout=layout, rotary_dim=rotary_dim, base=base,
            scaling=scaling, offset=offset, cos_cache=cos_cache,
            sin_cache=sin_cache, inverse=inverse, token_dims=token_dims,
            out=out, magnitude=magnitude, mrope_section=mrope_section,
            mrope_interleaved=mrope_interleaved, threads=threads,
            norm_weight=norm_weight, norm_eps=norm_eps,
            quant_dtype=quant_dtype, quant_scale=quant_scale)
    if _arrays.any_foreign(x, positions, offset, cos_cache, sin_cache, out):
        # DLPack arguments: numpy views of the caller's memory (zero-copy);
        # the result comes back as x's array type, out= as passed.
        x_in, out_in = x, out
        x, positions, offset, cos_cache, sin_cache, out = \
            _arrays.import_all(_ARGUMENT_NAMES, (
                x, positions, offset, cos_cache, sin_cache, out))
        result = apply(
            x, positions, layout=layout, rotary_dim=rotary_dim, base=base,
            scaling=scaling, offset=offset, cos_cache=cos_cache,
            sin_cache=sin_cache, inverse=inverse, token_dims=token_dims,
            out=out, magnitude=magnitude, mrope_section=mrope_section,
            mrope_interleaved=mrope_interleaved, threads=threads)
        return out_in if out_in is not None else _arrays.wrap(result, x_in)
    fields, x, positions, offset, cos_cache, sin_cache = apply_fields(
        x, positions, layout=layout, rotary_dim=rotary_dim, base=base,
        scaling=scaling, offset=offset, cos_cache=cos_cache,
        sin_cache=sin_cache, inverse=inverse, token_dims=token_dims,
        inplace=out is not None and out is x, magnitude=magnitude,
        mrope_section=mrope_section, mrope_interleaved=mrope_interleaved,
        threads=threads)
    # The kernel of these (already normalized) fields, without building and
    # hashing a KernelConfig each call; only configurations that compiled
    # are remembered, so a bad one is checked (and refused) every time.
    kernel = cached_kernel(_apply_kernels, fields, compile)
    return kernel(x, positions, offset=offset, cos_cache=cos_cache,
                  sin_cache=sin_cache, out=out)


_scale_array = _path.scale_array
_quant_name = _path.quant_name


def _apply_with_neighbours(x, positions, *, norm_weight, norm_eps,
                           quant_dtype, quant_scale, out, **kwargs):
    """apply() with a QK-norm and/or a quantized output: the plain
    arguments normalized as apply() does, then a kernel compiled with the
    neighbours, called through the checked path."""
    if _arrays.any_foreign(x, positions, kwargs["offset"],
                           kwargs["cos_cache"], kwargs["sin_cache"], out,
                           norm_weight, quant_scale):
        x_in, out_in = x, out
        (x, positions, kwargs["offset"], kwargs["cos_cache"],
         kwargs["sin_cache"], out, norm_weight, quant_scale) = \
            _arrays.import_all(_NEIGHBOUR_NAMES, (
                x, positions, kwargs["offset"], kwargs["cos_cache"],
                kwargs["sin_cache"], out, norm_weight, quant_scale))
        result = _apply_with_neighbours(
            x, positions, norm_weight=norm_weight, norm_eps=norm_eps,
            quant_dtype=quant_dtype, quant_scale=quant_scale, out=out,
            **kwargs)
        return out_in if out_in is not None else _arrays.wrap(result, x_in)
    if (quant_dtype is None) != (quant_scale is None):
        raise ValueError("pass quant_dtype and quant_scale together (a "
                         "quantized output needs both), got "
                         + ("quant_dtype only" if quant_scale is None
                            else "quant_scale only"))
    fields, x, positions, offset, cos_cache, sin_cache = apply_fields(
        x, positions, inplace=out is not None and out is x, **kwargs)
    if norm_weight is not None:
        if not isinstance(norm_weight, np.ndarray):
            norm_weight = np.asarray(norm_weight)
        fields.update(norm=True, norm_dtype=dtype_name(norm_weight.dtype),
                      norm_epsilon=_real(norm_eps, "norm_eps"))
    if quant_dtype is not None:
        quant_scale = _scale_array(quant_scale)
        if quant_scale.ndim > 1:
            raise ValueError(f"quant_scale must be a scalar (per tensor) or "
                             f"one per head, got shape {quant_scale.shape}")
        fields.update(quant=_quant_name(quant_dtype),
                      quant_scale="head" if quant_scale.ndim else "tensor")
    kernel = cached_kernel(_apply_kernels, fields, compile)
    return kernel(x, positions, offset=offset, cos_cache=cos_cache,
                  sin_cache=sin_cache, out=out, norm_weight=norm_weight,
                  quant_scale=quant_scale)


def cached_kernel(kernels: dict, fields: dict, compile_config):
    """The kernel of `fields` in `kernels` (keyed by the tuple of the
    values), compiled by `compile_config(KernelConfig(**fields))` when
    absent; a configuration the verifier refuses raises ValueError (and
    is not remembered: it is checked, and refused, every time)."""
    def make():
        try:
            return compile_config(KernelConfig(**fields))
        except CompileError as error:
            # Invalid attributes: the verifier's message, with the static
            # shapes of this call for the clearest diagnostic.
            raise ValueError(str(error)) from None
    return _path.memoized(kernels, tuple(fields.values()), make, _cache)


def apply_fields(x, positions, *, layout, rotary_dim, base, scaling, offset,
                 cos_cache, sin_cache, inverse, token_dims, inplace,
                 magnitude, mrope_section, mrope_interleaved, threads,
                 x_name="x"):
    """apply()'s arguments (numpy or convertible) checked and normalized:
    the KernelConfig fields of the kernel that rotates `x` (dict), and x,
    positions, offset, cos_cache, sin_cache as the kernel takes them.
    Messages call x `x_name` (fused and cache: q or k)."""
    mrope_interleaved = _flag(mrope_interleaved, "mrope_interleaved")
    inverse = _flag(inverse, "inverse")
    threads = _integer(threads, "threads")
    base = _real(base, "base")
    if rotary_dim is not None:
        rotary_dim = _integer(rotary_dim, "rotary_dim")
    if magnitude is not None:
        magnitude = _real(magnitude, "magnitude")
    if token_dims is not None:
        token_dims = _shape(token_dims, "token_dims")
    # The offset: an integer, or integers one per row (never a float).
    if isinstance(offset, np.ndarray) and offset.ndim == 0 or \
            not isinstance(offset, (np.ndarray, list, tuple)):
        offset = _scalar_offset(offset)
        row_offset = False
    else:
        offset = _integer_array(offset, "offset", _INT_DTYPES["i64"])
        row_offset = True
    if positions is not None and (row_offset or offset != 0):
        raise ValueError(f"positions and offset={offset!r} were both given: "
                         "explicit positions take no offset (add it to the "
                         "positions)")

    scaled = (not _scaling_is_default(scaling) or mrope_section is not None
              or mrope_interleaved or
              (isinstance(scaling, dict) and
               any(k not in ("rope_type", "type") for k in scaling)))
    if cos_cache is not None or sin_cache is not None:
        if scaled:
            raise ValueError(
                "cos_cache/sin_cache and a scaling spec (or mrope_section) "
                "are exclusive: the caches already hold the frequencies; "
                "build them from the scaled frequencies instead")
    if not isinstance(x, np.ndarray):  # keep subclasses: out=x is x
        x = np.asarray(x)
    if x.ndim < 2:
        raise ValueError(f"{x_name} must have rank >= 2 ([tokens..., D]), got "
                         f"shape {x.shape}")
    dtype = dtype_name(x.dtype, x_name)
    head_dim = int(x.shape[-1])
    freqs = mrope = None
    if scaled:
        attrs = scaling_attributes(
            scaling, base=base, head_dim=head_dim,
            rotary_dim=rotary_dim, mrope_section=mrope_section,
            mrope_interleaved=mrope_interleaved)
        freqs, mrope = attrs.freqs, attrs.mrope
        if attrs.rotary_dim != head_dim:
            rotary_dim = attrs.rotary_dim
        if magnitude is None:
            magnitude = attrs.magnitude
    if magnitude is None:
        magnitude = 1.0
    if (cos_cache is None) != (sin_cache is None):
        raise ValueError("pass both cos_cache and sin_cache, or neither")

    cache = None
    cache_dtype = "f32"
    if cos_cache is not None:
        if type(cos_cache) is not np.ndarray:
            cos_cache = np.asarray(cos_cache)
        if type(sin_cache) is not np.ndarray:
            sin_cache = np.asarray(sin_cache)
        cache_dtype = dtype_name(cos_cache.dtype, "cos_cache")
        if sin_cache.dtype != cos_cache.dtype:
            raise TypeError(f"cos_cache has dtype {cos_cache.dtype} but "
                            f"sin_cache {sin_cache.dtype}: they must match")
        pregathered = (positions is None and not row_offset and offset == 0
                       and cos_cache.ndim != 2)
        cache = "pregathered" if pregathered else "gathered"

    if positions is not None:
        if type(positions) is not np.ndarray:
            positions = np.asarray(positions)
        if positions.dtype.kind not in "iu":
            raise TypeError(f"positions must be integers, got dtype "
                            f"{positions.dtype}")
        form = "explicit"
        positions_dtype = "i32" if positions.dtype == np.int32 else "i64"
    elif cache == "pregathered":
        form, positions_dtype = "none", "i64"
    else:
        form = "row_offset" if row_offset else "offset"
        positions_dtype = "i64"

    fields = dict(
        dtype=dtype, rank=x.ndim, head_dim=head_dim, layout=layout,
        rotary_dim=rotary_dim, base=base, magnitude=magnitude,
        inverse=inverse, token_dims=token_dims, positions=form,
        positions_dtype=positions_dtype, cache=cache, cache_dtype=cache_dtype,
        inplace=inplace, freqs=freqs, mrope=mrope, threads=threads)
    return fields, x, positions, offset, cos_cache, sin_cache
