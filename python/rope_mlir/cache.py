# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""KV-cache append: K rotated straight into its cache, V copied beside it.

    q_rot = rope_mlir.append_kv(k, v, k_cache, v_cache, positions, q=q,
                                cache_layout="paged", block_table=table)

One compiled function per configuration (docs/FUSIONS.md): `rope.apply
... slots(%s)` writes each rotated key row at its slot of the K cache (no
rotated temporary), `rope.cache_write` writes the value rows at the same
slots of the V cache, and, when `q` is given, a `rope.apply` without slots
rotates q at the same positions in the same function (the QK siblings of
apply_qk, the decode step of vLLM's fused_qk_rope + reshape_and_cache).
The caches are numpy arrays written in place; nothing else in them changes.

Slots are computed here, in numpy, and checked before any code runs:

- "bshd": k [B, S, Hkv, D] into a cache [B, max_len, Hkv, D]; token
  (b, s) goes to row b, sequence index positions[b, s] (slot
  b * max_len + pos).
- "bhsd": Hugging Face's k [B, Hkv, S, D] into [B, Hkv, max_len, D]
  (token dims (0, 2)), the same slots.
- "paged": pages [num_pages, page_size, Hkv, D] (vLLM / FlashInfer) seen as
  [num_pages * page_size, Hkv, D]; k is [T, Hkv, D] with `batch_indices`
  [T] (each token's row of the block table; none: all row 0) or
  [B, S, Hkv, D]; slot = block_table[b, pos // page_size] * page_size +
  pos % page_size.
- `slots=` (any layout): vLLM's slot_mapping, shaped like k's token dims,
  a linear index over the cache's token dims (row-major); -1 is padding
  (that token is written nowhere).

Errors (before any code runs, nothing written): IndexError for a position
outside the cache (naming positions), a block id outside the pages or a
position past the block table's columns (naming block_table), a slot
outside the cache other than -1 (naming slots), a batch index outside the
block table (naming batch_indices); ValueError for two tokens with one
slot, a read-only, non-contiguous or overlapping cache, a shape that does
not fit; TypeError for a dtype that does not match (the caches hold k's
dtype, or the quantized type, whose k_scale / v_scale must be given).
The compiled code itself never writes outside a cache whatever the slots
(a slot out of range writes nothing: CacheSlots.h).
"""

from __future__ import annotations

import ctypes
import dataclasses
import math
from typing import Optional

import numpy as np

from . import _arrays, _jit, _kernel_path as _path, kernel as _kernel
from ._kernel_path import EVERY_INPUT, ArgSpec
from .kernel import KernelConfig, Names, RotationChecks

__all__ = ["append_kv", "compile_append", "AppendKernel", "CACHE_LAYOUTS"]

CACHE_LAYOUTS = ("bshd", "bhsd", "paged")
_I64 = np.dtype(np.int64)
_NAMES = ("k", "v", "k_cache", "v_cache", "positions", "block_table",
          "batch_indices", "slots", "q", "cos_cache", "sin_cache",
          "k_norm_weight", "q_norm_weight", "k_scale", "v_scale", "out_q")


# -- arguments by reference -----------------------------------------------------
#
# A call's memref descriptors are built in C++ on the stack (KernelCall.cpp,
# run()) rather than as ctypes structures: while the arguments are checked,
# each array a descriptor would be made for is appended to the call's `keep`
# list and stands in the argument list as the address of a token (one
# preallocated, never written ctypes byte per position in `keep`); before
# the call, each token address is replaced by its array. Without the
# extension, or for an array it does not take, the descriptors are made by
# _jit.memref_descriptor as before.
_TOKENS = tuple(ctypes.c_byte() for _ in range(64))
_TOKEN_INDEX = {ctypes.addressof(t): i for i, t in enumerate(_TOKENS)}


def _defer(keep, array):
    """RotationChecks._keep's replacement in an append: keep `array` (it
    outlives the call) and return the token of its position."""
    index = len(keep)
    keep.append(array)
    if index < len(_TOKENS):
        return _TOKENS[index]
    desc = _jit.memref_descriptor(array)  # beyond the tokens: a real one
    keep.append(desc)  # (kept alive; never a token's position)
    return desc


def _resolve(args, keep, skip: int = -1) -> list:
    """The call's arguments with each token address replaced by its array
    (args[skip], a scalar offset, is a value whatever it equals)."""
    index = _TOKEN_INDEX
    return [keep[index[a]] if i != skip and a in index else a
            for i, a in enumerate(args)]


def _checker(config: KernelConfig, member: str,
             **changes) -> RotationChecks:
    """The checks of one member's rotation (k, v or q: the plain rotation
    `config` describes, with `changes`), its arguments under the member's
    names, described by reference (_defer)."""
    plain = dataclasses.replace(config, slots=False, cache_write=False,
                                query=False, **changes)
    return RotationChecks(plain, Names.member(member), describe=_defer)


def _check_cache(cache, rule: _path.ShapeRule, dtype: np.dtype, shapes,
                 what: str) -> np.ndarray:
    """A cache must be a writeable, C-contiguous, aligned numpy array of
    `dtype` of the shape its spec's `rule` takes from `shapes` (its rows':
    their rank, head dims and D; its token dims any size)."""
    name = rule.spec.name
    if not isinstance(cache, np.ndarray):
        raise TypeError(f"{name} must be a numpy array (it is written in "
                        f"place), got {type(cache).__name__}")
    if cache.dtype != dtype:
        raise TypeError(f"{name} has dtype {cache.dtype}, expected {dtype} "
                        f"({what})")
    rule.check(cache.shape, shapes)
    _path.check_writeable(name, cache)
    return cache


def _like(name: str, rank: int, dims, token: bool) -> tuple:
    """A shape rule: per dim, `name`'s same dim, for the token dims `dims`
    (token=True) or for every other dim (token=False)."""
    return tuple((name, d) if (d in dims) == token else None
                 for d in range(rank))


class AppendKernel:
    """A compiled cache append (KernelConfig with slots=True; members
    cache_write and query as configured). `kernel(k, slots, k_cache,
    positions=..., offset=..., cos_cache=..., sin_cache=...,
    k_norm_weight=..., k_scale=..., v=..., v_scale=..., v_cache=...,
    q=..., q_norm_weight=..., out_q=...)` writes the caches in place and
    returns q's rotation (or None). Arguments are checked as Kernel checks
    them (k and q as x); the slots must be integers shaped like k's token
    dims (any value: one outside the cache writes nothing), the caches
    writeable, contiguous, apart from every input and from each other.
    `append_kv` computes and checks the slots."""

    def __init__(self, config: KernelConfig):
        if not config.slots:
            raise ValueError("an append kernel needs a configuration with "
                             "slots=True")
        self.config = config
        c = config
        self._k = _checker(config, "k")
        self._q = _checker(config, "q", quant=None) if c.query else None
        self._v = _checker(config, "v", norm=False)
        self._slots_dtype = _path.INT_DTYPES[c.slots_dtype]
        self._cache_dtype = config.out_dtype()
        self._specs = self._arg_specs()
        # The shape rules (like) of the specs, as the checks read them.
        self._rules = {name: _path.ShapeRule(self._specs[name]) for name in (
            "slots", "k_cache", "v", "v_cache", "q") if name in self._specs}
        self._compiled = _path.CompiledKernel(
            _kernel.emit(config), _kernel.pipeline(config), "rope_kernel",
            tuple(self._specs.values()))
        self.ir = self._compiled.ir
        self._module = self._compiled.module
        self._function = self._compiled.function
        self._address = self._compiled.address
        self._offset_index = 1 if c.positions == "offset" else -1
        self._fast = _jit.kernel_call_module()

    def _arg_specs(self) -> dict:
        """The ArgSpecs of the compiled function's parameters, by name, in
        order (_emit_append's): k's rotation's (its neighbours named k_*),
        the slots and the K cache; v, v_scale and the V cache; q, its
        norm weight and out_q."""
        c = self.config
        rank, dims = c.rank, c.resolved_token_dims()
        cache = dict(dtype=self._cache_dtype, writeable=True,
                     apart_from=(EVERY_INPUT,),
                     why="only the token dims may differ")
        # The rows' token dims are k's; a cache has its rows' other dims.
        tokens_of_k = dict(like=_like("k", rank, dims, True),
                           why="only head dims may differ from k's")
        specs = {s.name: s for role, s in self._k.specs.items()
                 if role != "out"}
        specs["slots"] = ArgSpec("slots", self._slots_dtype,
                                 (None,) * len(dims),
                                 like=tuple(("k", d) for d in dims),
                                 why="one slot per token of k")
        specs["k_cache"] = ArgSpec("k_cache", like=_like("k", rank, dims,
                                                         False), **cache)
        if c.cache_write:
            v = self._v.specs
            specs["v"] = dataclasses.replace(v["x"], **tokens_of_k)
            if "quant_scale" in v:
                specs["v_scale"] = v["quant_scale"]
            specs["v_cache"] = ArgSpec("v_cache", like=_like("v", rank, dims,
                                                             False), **cache)
        if c.query:
            q = self._q.specs
            specs["q"] = dataclasses.replace(q["x"], **tokens_of_k)
            for role in ("norm_weight", "out"):
                if role in q:
                    specs[q[role].name] = q[role]
        return specs

    def __call__(self, k, slots, k_cache, *, positions=None, offset=0,
                 cos_cache=None, sin_cache=None, k_norm_weight=None,
                 k_scale=None, v=None, v_scale=None, v_cache=None, q=None,
                 q_norm_weight=None, out_q=None):
        c = self.config
        keep = []
        # k's checks are apply()'s, without a destination: it is the cache.
        args, _ = self._k._checked_args(
            keep, k, positions, offset, cos_cache, sin_cache,
            _kernel.NO_DESTINATION, k_norm_weight, k_scale)
        k = np.asarray(k)
        rules = self._rules
        shapes = {"k": k.shape}  # what the shape rules (like) read
        slots = _path.integer_array(slots, "slots", self._slots_dtype)
        rules["slots"].check(slots.shape, shapes)
        what = (f"the quantized type {c.quant}" if c.quant is not None
                else "k's dtype")
        inputs = [("k", k), ("slots", slots), ("positions", positions),
                  ("offset", offset if isinstance(offset, np.ndarray)
                   and offset.ndim else None),
                  ("cos_cache", cos_cache), ("sin_cache", sin_cache),
                  ("k_norm_weight", k_norm_weight), ("k_scale", k_scale),
                  ("v", v), ("v_scale", v_scale), ("q", q),
                  ("q_norm_weight", q_norm_weight)]
        inputs = [(n, a) for n, a in inputs if isinstance(a, np.ndarray)]
        _check_cache(k_cache, rules["k_cache"], self._cache_dtype, shapes,
                     what)
        args.append(ctypes.addressof(self._keep(keep, slots)))
        args.append(ctypes.addressof(self._keep(keep, k_cache)))
        outputs = [("k_cache", k_cache)]
        if c.cache_write:
            if v is None or v_cache is None:
                raise ValueError("the kernel was compiled with a V cache: "
                                 "pass v and v_cache")
            v = _path.float_array(v, "v", self._k._dtype)
            rules["v"].check(v.shape, shapes)
            shapes["v"] = v.shape
            _check_cache(v_cache, rules["v_cache"], self._cache_dtype, shapes,
                         what)
            args.append(ctypes.addressof(self._keep(keep, v)))
            if c.quant is not None:
                if v_scale is None:
                    raise ValueError(f"the kernel was compiled with a "
                                     f"quantized cache ({c.quant}): pass "
                                     f"v_scale")
                args += self._v._neighbour_args(keep, v, None, v_scale)
            elif v_scale is not None:
                raise ValueError("the kernel was compiled without a "
                                 "quantized cache: v_scale must be None")
            args.append(ctypes.addressof(self._keep(keep, v_cache)))
            outputs.append(("v_cache", v_cache))
        elif v is not None or v_cache is not None or v_scale is not None:
            raise ValueError("the kernel was compiled without a V cache: v, "
                             "v_cache and v_scale must be None")
        result = None
        if c.query:
            if q is None:
                raise ValueError("the kernel was compiled with a query: "
                                 "pass q")
            rules["q"].check(np.shape(q), shapes)
            q_args, result = self._q._checked_args(
                keep, q, positions, offset, cos_cache, sin_cache, out_q,
                q_norm_weight, None)
            # q's positions / offset / caches are k's (the kernel reads
            # them once): only q, its norm weight and its output.
            args.append(q_args[0])
            args += q_args[len(q_args) - 1 - int(c.norm):]
            outputs.append(("out_q", result))
        elif q is not None or out_q is not None or q_norm_weight is not None:
            raise ValueError("the kernel was compiled without a query: q, "
                             "out_q and q_norm_weight must be None")
        for i, (name, out) in enumerate(outputs):
            _path.check_apart(self._specs[name], out, inputs, outputs[:i])
        if not (k.size or (v is not None and np.size(v)) or
                (q is not None and np.size(q))):
            return result  # no row to write or rotate (every dim 0 ok)
        self._compiled.run(_resolve(args, keep, self._offset_index),
                           self._fast)
        return result

    _keep = staticmethod(_defer)


# append_kv's kernels by the tuple of their configuration's fields.
_append_kernels: dict = {}
_cache = _path.KernelCache(AppendKernel)


def compile_append(config: Optional[KernelConfig] = None,
                   **kwargs) -> AppendKernel:
    """The (cached) compiled cache append of a configuration (slots=True),
    given as a KernelConfig or as its fields."""
    return _cache.configured(KernelConfig, config, kwargs)


# -- slots --------------------------------------------------------------------

def _int64(value, name: str) -> np.ndarray:
    array = _path.integer_array(value, name, _I64)
    return array


_range = _path.int_range


def _refuse_duplicates(slots: np.ndarray, name: str) -> None:
    slot = _path.first_duplicate(slots)
    if slot is not None:
        raise ValueError(
            f"two tokens have the same cache slot {slot} ({name}): the "
            f"value left there would be unspecified; give each token "
            f"its own slot")


def _contiguous_slots(positions, batch: int, max_len: int) -> np.ndarray:
    """b * max_len + positions[b, s] for positions [B, S]."""
    if positions.size:
        low, high = _range(positions)
        if low < 0 or high >= max_len:
            raise IndexError(
                f"positions span [{low}, {high}] but the cache holds "
                f"{max_len} positions per row: positions must be in "
                f"[0, {max_len})")
    rows = np.arange(batch, dtype=np.int64)[:, None] * max_len
    return rows + positions


def _paged_slots(positions, rows, block_table, page_size: int,
                 num_pages: int) -> np.ndarray:
    """block_table[row, pos // page_size] * page_size + pos % page_size."""
    if positions.size:
        low, high = _range(positions)
        if low < 0:
            raise IndexError(f"positions span [{low}, {high}]: a position "
                             f"must be >= 0")
        columns = block_table.shape[1]
        if high // page_size >= columns:
            raise IndexError(
                f"block_table has {columns} columns ({columns * page_size} "
                f"positions of {page_size}-token pages) but positions reach "
                f"{high} (column {high // page_size})")
    blocks = block_table[rows, positions // page_size]
    if blocks.size:
        low, high = _range(blocks)
        if low < 0 or high >= num_pages:
            raise IndexError(
                f"block_table gives block ids in [{low}, {high}] for these "
                f"tokens but the cache has {num_pages} pages: block ids must "
                f"be in [0, {num_pages})")
    return blocks * page_size + positions % page_size


#: append_kv's rotation fields (_apply_fields) by _rotation_key.
_rotation_fields: dict = {}


def _typed(value):
    """`value` with its type, so that True and 1 (or 1 and 1.0) differ."""
    return (type(value), value)


def _rotation_key(x, positions, layout, rotary_dim, base, inverse,
                  token_dims, magnitude, threads):
    """A hashable key of the rotation arguments _apply_fields reads (for
    numpy rows `x` and numpy int64 positions, no scaling, no cos/sin
    cache), or None."""
    if not isinstance(positions, np.ndarray) or positions.dtype != _I64:
        return None
    try:
        key = (x.dtype, x.ndim, x.shape[-1] if x.ndim else None,
               _typed(layout), _typed(rotary_dim), _typed(base),
               _typed(inverse), _typed(token_dims), _typed(magnitude),
               _typed(threads))
        hash(key)
    except TypeError:
        return None
    return key


def append_kv(k, v, k_cache, v_cache, positions, *, cache_layout="bshd",
              block_table=None, batch_indices=None, slots=None, q=None,
              out_q=None, layout="half", rotary_dim=None, base=10000.0,
              scaling=None, cos_cache=None, sin_cache=None, inverse=False,
              magnitude=None, mrope_section=None, mrope_interleaved=False,
              k_norm_weight=None, q_norm_weight=None, norm_eps=1e-6,
              quant_dtype=None, k_scale=None, v_scale=None,
              lowering="vector", threads=1):
    """Rotates k by RoPE at `positions` and writes it into `k_cache`, and
    v (unrotated) into `v_cache`, at each token's slot, in place, by one
    compiled call (module docstring: layouts, slots, errors). Returns q
    rotated at the same positions when `q` is given (into out_q if passed),
    else None.

    k, v: the new rows, [B, S, Hkv, D] ("bshd"), [B, Hkv, S, D] ("bhsd"),
    [T, Hkv, D] or [B, S, Hkv, D] ("paged"); v may be None (with v_cache
    None: K only). positions: integers shaped like k's token dims ([B, S],
    or [T]), the rotation's positions and, without `slots`, the cache
    positions. block_table: [B, max_blocks] page ids ("paged");
    batch_indices: [T], the block-table row of each flat token.

    Rotation: `apply`'s arguments (layout, rotary_dim, base, scaling,
    cos_cache/sin_cache gathered by position, inverse, magnitude, M-RoPE).
    Fused neighbours as `apply_qk`'s: k_norm_weight (and q_norm_weight
    with q: both) with norm_eps, QK-norm before the rotation;
    quant_dtype ("f8e4m3fn", "f8e5m2", "i8"; default: the caches' dtype
    when it is one of those) with k_scale and v_scale (a float32 scalar or
    one per KV head): the caches hold sat(value * scale) (docs/FUSIONS.md);
    q is never quantized. lowering: "vector" (default) or "scalar" (the
    portable linalg form); threads as `apply`.
    """
    if _arrays.any_foreign(k, v, k_cache, v_cache, positions, block_table,
                           batch_indices, slots, q, cos_cache, sin_cache,
                           k_norm_weight, q_norm_weight, k_scale, v_scale,
                           out_q):
        arrays = _arrays.import_all(_NAMES, (
            k, v, k_cache, v_cache, positions, block_table, batch_indices,
            slots, q, cos_cache, sin_cache, k_norm_weight, q_norm_weight,
            k_scale, v_scale, out_q))
        result = append_kv(
            *arrays[:5], cache_layout=cache_layout, block_table=arrays[5],
            batch_indices=arrays[6], slots=arrays[7], q=arrays[8],
            out_q=arrays[15], layout=layout, rotary_dim=rotary_dim,
            base=base, scaling=scaling, cos_cache=arrays[9],
            sin_cache=arrays[10], inverse=inverse, magnitude=magnitude,
            mrope_section=mrope_section, mrope_interleaved=mrope_interleaved,
            k_norm_weight=arrays[11], q_norm_weight=arrays[12],
            norm_eps=norm_eps, quant_dtype=quant_dtype, k_scale=arrays[13],
            v_scale=arrays[14], lowering=lowering, threads=threads)
        if out_q is not None:
            return out_q
        return None if result is None else _arrays.wrap(result, q)
    if cache_layout not in CACHE_LAYOUTS:
        raise ValueError(f"cache_layout must be one of {CACHE_LAYOUTS}, got "
                         f"{cache_layout!r}")
    if lowering not in ("vector", "scalar"):
        raise ValueError(f"lowering must be 'vector' or 'scalar', got "
                         f"{lowering!r}")
    if not isinstance(k, np.ndarray):
        k = np.asarray(k)
    if (v is None) != (v_cache is None):
        raise ValueError("pass v and v_cache together (or neither: K only)")
    if v is not None and not isinstance(v, np.ndarray):
        v = np.asarray(v)
    if positions is None:
        raise ValueError("positions are required (the rotation's and the "
                         "cache's)")
    if mrope_section is not None or mrope_interleaved or (
            isinstance(scaling, dict) and "mrope_section" in scaling):
        raise ValueError("append_kv does not take M-RoPE (positions "
                         "[3, tokens] say no cache position): rotate with "
                         "apply and append with rope.cache_write")
    positions = _int64(positions, "positions")
    for name, cache in (("k_cache", k_cache), ("v_cache", v_cache)):
        if cache is not None and not isinstance(cache, np.ndarray):
            raise TypeError(f"{name} must be a numpy array (it is written "
                            f"in place), got {type(cache).__name__}")
    if not isinstance(k_cache, np.ndarray):
        raise TypeError(f"k_cache must be a numpy array (it is written in "
                        f"place), got {type(k_cache).__name__}")

    # The quantization: stated, or the caches' storage type.
    if quant_dtype is None:
        for name, (dtype, _) in _path.QUANT_DTYPES.items():
            if k_cache.dtype == dtype:
                quant_dtype = name
                break
    if quant_dtype is not None:
        quant = _path.quant_name(quant_dtype)
        qdtype = _path.QUANT_DTYPES[quant][0]
        for name, cache, scale, sname in (
                ("k_cache", k_cache, k_scale, "k_scale"),
                ("v_cache", v_cache, v_scale, "v_scale")):
            if cache is None:
                if scale is not None:
                    raise ValueError(f"{sname} given without {name}")
                continue
            if cache.dtype != qdtype:
                raise TypeError(f"{name} has dtype {cache.dtype}, expected "
                                f"{qdtype} (quant_dtype {quant})")
            if scale is None:
                raise ValueError(f"{name} holds {quant} values: pass {sname} "
                                 f"(the quantization multiplier)")
        k_scale = _path.scale_array(k_scale)
        if v_scale is not None:
            v_scale = _path.scale_array(v_scale)
            if v_scale.ndim != k_scale.ndim:
                raise ValueError(f"k_scale and v_scale must both be scalars "
                                 f"(per tensor) or both one per head, got "
                                 f"shapes {k_scale.shape} and "
                                 f"{v_scale.shape}")
        if k_scale.ndim > 1:
            raise ValueError(f"k_scale must be a scalar (per tensor) or one "
                             f"per head, got shape {k_scale.shape}")
    elif k_scale is not None or v_scale is not None:
        raise ValueError("k_scale / v_scale given for a cache of "
                         f"{k_cache.dtype}: they quantize an fp8/int8 cache "
                         "(quant_dtype)")

    # The kernel's view of the rows and caches, and the token dims.
    q_shape = None
    k_view, v_view, q_view = k, v, q
    kc_view, vc_view = k_cache, v_cache
    if cache_layout == "bshd":
        token_dims, cache_tokens = None, (0, 1)
        rank = 4
    elif cache_layout == "bhsd":
        token_dims, cache_tokens = (0, 2), (0, 2)
        rank = 4
    else:
        token_dims, cache_tokens = None, (0,)
        rank = None
    if rank is not None and k.ndim != rank:
        raise ValueError(f"k has shape {k.shape}: cache_layout "
                         f"{cache_layout!r} takes k of rank 4 "
                         + ("[B, S, Hkv, D]" if cache_layout == "bshd"
                            else "[B, Hkv, S, D]"))
    if cache_layout == "paged":
        if k.ndim not in (3, 4):
            raise ValueError(f"k has shape {k.shape}: paged appends take "
                             f"[T, Hkv, D] or [B, S, Hkv, D]")
        for name, cache in (("k_cache", k_cache), ("v_cache", v_cache)):
            if cache is not None and cache.ndim != 4:
                raise ValueError(f"{name} has shape {cache.shape}: paged "
                                 f"caches are [num_pages, page_size, Hkv, D]")
        num_pages, page_size = k_cache.shape[:2]
        if page_size == 0 and slots is None:
            raise ValueError(f"k_cache has shape {k_cache.shape}: its "
                             f"page_size (dim 1) is 0, so no position has a "
                             f"page; pages must hold at least one token")
        if v_cache is not None and v_cache.shape[:2] != k_cache.shape[:2]:
            raise ValueError(f"k_cache has shape {k_cache.shape} and v_cache "
                             f"{v_cache.shape}: the same pages")
        if k.ndim == 4:
            batch, seq = k.shape[:2]
            if batch_indices is not None:
                raise ValueError("batch_indices is for flat [T, Hkv, D] "
                                 "tokens; k [B, S, Hkv, D] has its rows")
            if positions.shape != (batch, seq):
                raise ValueError(f"positions have shape {positions.shape}, "
                                 f"expected {(batch, seq)} (k's [B, S])")
            rows = np.repeat(np.arange(batch, dtype=np.int64), seq)
            k_view = k.reshape((batch * seq,) + k.shape[2:])
            if v is not None:
                if v.ndim != 4 or v.shape[:2] != (batch, seq):
                    raise ValueError(f"v has shape {v.shape}, k {k.shape}: "
                                     f"the same [B, S]")
                v_view = v.reshape((batch * seq,) + v.shape[2:])
            if q is not None:
                q = np.asarray(q)
                if q.ndim != 4 or q.shape[:2] != (batch, seq):
                    raise ValueError(f"q has shape {q.shape}, k {k.shape}: "
                                     f"the same [B, S]")
                q_shape = q.shape
                q_view = q.reshape((batch * seq,) + q.shape[2:])
            flat_positions = positions.reshape(-1)
        else:
            flat_positions = positions
            if positions.shape != k.shape[:1]:
                raise ValueError(f"positions have shape {positions.shape}, "
                                 f"expected {k.shape[:1]} (k's tokens)")
            if batch_indices is None:
                rows = np.zeros(k.shape[0], np.int64)
            else:
                rows = _int64(batch_indices, "batch_indices")
                if rows.shape != k.shape[:1]:
                    raise ValueError(f"batch_indices have shape "
                                     f"{rows.shape}, expected {k.shape[:1]} "
                                     f"(one per token)")
        if slots is None:
            if block_table is None:
                raise ValueError("a paged append needs block_table (or "
                                 "slots=)")
            block_table = _int64(block_table, "block_table")
            if block_table.ndim != 2:
                raise ValueError(f"block_table has shape "
                                 f"{block_table.shape}, expected [B, "
                                 f"max_blocks]")
            if rows.size:
                low, high = _range(rows)
                if low < 0 or high >= block_table.shape[0]:
                    raise IndexError(
                        f"batch_indices span [{low}, {high}] but block_table "
                        f"has {block_table.shape[0]} rows")
            flat_slots = _paged_slots(flat_positions, rows, block_table,
                                      page_size, num_pages)
        elif block_table is not None or batch_indices is not None:
            raise ValueError("slots= replaces block_table / batch_indices: "
                             "pass one or the other")
        else:
            flat_slots = None
        for name, cache in (("k_cache", k_cache), ("v_cache", v_cache)):
            if cache is not None and not cache.flags.c_contiguous:
                raise ValueError(f"{name} must be C-contiguous and aligned "
                                 f"(it is written in place), got strides "
                                 f"{cache.strides}")
        kc_view = k_cache.reshape((num_pages * page_size,) + k_cache.shape[2:])
        if v_cache is not None:
            vc_view = v_cache.reshape((num_pages * page_size,) +
                                      v_cache.shape[2:])
        kernel_positions = flat_positions
    else:
        if block_table is not None or batch_indices is not None:
            raise ValueError(f"block_table / batch_indices are for paged "
                             f"caches, not cache_layout {cache_layout!r}")
        seq_dim = 1 if cache_layout == "bshd" else 2
        batch, seq = k.shape[0], k.shape[seq_dim]
        if positions.shape != (batch, seq):
            raise ValueError(f"positions have shape {positions.shape}, "
                             f"expected {(batch, seq)} (k's [B, S])")
        if k_cache.ndim != 4 or k_cache.shape[0] != batch:
            raise ValueError(f"k_cache has shape {k_cache.shape}: the "
                             f"{cache_layout!r} cache has k's batch {batch}")
        max_len = k_cache.shape[seq_dim]
        if v_cache is not None and (v_cache.ndim != 4 or
                                    v_cache.shape[seq_dim] != max_len or
                                    v_cache.shape[0] != batch):
            raise ValueError(f"v_cache has shape {v_cache.shape}, k_cache "
                             f"{k_cache.shape}: the same rows and max_len")
        flat_slots = (None if slots is not None else
                      _contiguous_slots(positions, batch, max_len))
        kernel_positions = positions
    if slots is not None:
        slots = _int64(slots, "slots")
        if cache_layout == "paged" and k.ndim == 4 and \
                slots.shape == k.shape[:2]:
            slots = slots.reshape(-1)
        shape = tuple(k_view.shape[d] for d in
                      (token_dims or range(k_view.ndim - 2)))
        if slots.shape != shape:
            raise ValueError(f"slots have shape {slots.shape}, expected "
                             f"{shape} (k's token dims)")
        total = math.prod(kc_view.shape[d] for d in cache_tokens)
        low, high = _range(slots) if slots.size else (0, 0)
        if low < -1 or high >= total:
            bad = (slots < -1) | (slots >= total)
            raise IndexError(
                f"slots hold {int(slots[bad].ravel()[0])}, outside the "
                f"cache's {total} slots [0, {total}) (-1 marks padding)")
        _refuse_duplicates(slots, "slots")
        flat_slots = slots
    else:
        _refuse_duplicates(flat_slots, "positions" if block_table is None
                           else "positions / block_table")
    if q_view is not None and not isinstance(q_view, np.ndarray):
        q_view = np.asarray(q_view)
    if q is None and (q_norm_weight is not None or out_q is not None):
        raise ValueError("q_norm_weight / out_q given without q")
    if q is not None and (q_norm_weight is None) != (k_norm_weight is None):
        raise ValueError("pass q_norm_weight and k_norm_weight together (or "
                         "neither)")
    if out_q is not None and q_shape is not None:
        if not isinstance(out_q, np.ndarray) or out_q.shape != q_shape:
            raise ValueError(f"out_q must be a numpy array of q's shape "
                             f"{q_shape}")
        out_q_view = out_q.reshape(q_view.shape)
        if not np.shares_memory(out_q_view, out_q):
            raise ValueError("out_q must be C-contiguous")
    else:
        out_q_view = out_q

    # The rotation's fields, memoized on the exact values and types of the
    # rotation arguments for numpy rows without scaling or cos/sin caches
    # (a decode step repeats them); anything else, or anything unhashable,
    # is checked by _apply_fields every time.
    key = None
    if scaling is None and cos_cache is None and sin_cache is None and \
            isinstance(k_view, np.ndarray):
        key = _rotation_key(k_view, kernel_positions, layout, rotary_dim,
                            base, inverse, token_dims, magnitude, threads)
    fields = _rotation_fields.get(key) if key is not None else None
    if fields is not None:
        fields = dict(fields)
    else:
        fields, k_view, kernel_positions, _, cos_cache, sin_cache = \
            _kernel.apply_fields(
                k_view, kernel_positions, layout=layout,
                rotary_dim=rotary_dim, base=base, scaling=scaling,
                offset=0, cos_cache=cos_cache, sin_cache=sin_cache,
                inverse=inverse, token_dims=token_dims, inplace=False,
                magnitude=magnitude, mrope_section=mrope_section,
                mrope_interleaved=mrope_interleaved, threads=threads,
                x_name="k")  # k's checks, as x's
        if key is not None:
            if len(_rotation_fields) >= 1024:
                _rotation_fields.clear()
            _rotation_fields[key] = dict(fields)
    if k_norm_weight is not None:
        if not isinstance(k_norm_weight, np.ndarray):
            k_norm_weight = np.asarray(k_norm_weight)
        if q_norm_weight is not None and \
                not isinstance(q_norm_weight, np.ndarray):
            q_norm_weight = np.asarray(q_norm_weight)
        if q_norm_weight is not None and \
                q_norm_weight.dtype != k_norm_weight.dtype:
            raise TypeError(f"q_norm_weight has dtype {q_norm_weight.dtype} "
                            f"but k_norm_weight {k_norm_weight.dtype}: they "
                            f"must match")
        fields.update(norm=True,
                      norm_dtype=_path.dtype_name(k_norm_weight.dtype),
                      norm_epsilon=_path.real(norm_eps, "norm_eps"))
    if quant_dtype is not None:
        fields.update(quant=quant,
                      quant_scale="head" if k_scale.ndim else "tensor")
    fields.update(lowering=lowering, slots=True, slots_dtype="i64",
                  cache_write=v is not None, query=q is not None)
    kernel = _kernel.cached_kernel(_append_kernels, fields, compile_append)
    result = kernel(k_view, flat_slots, kc_view, positions=kernel_positions,
                    cos_cache=cos_cache, sin_cache=sin_cache,
                    k_norm_weight=k_norm_weight, k_scale=k_scale, v=v_view,
                    v_scale=v_scale, v_cache=vc_view, q=q_view,
                    q_norm_weight=q_norm_weight, out_q=out_q_view)
    if result is not None and q_shape is not None:
        return out_q if out_q is not None else result.reshape(q_shape)
    return result
