# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""DeepSeek-V2/V3 multi-head latent attention (MLA): RoPE and the cache
append of one decoder layer, as a composition of the existing ops.

    q_out = rope_mlir.apply_mla(q, c_kv, k_pe, kv_cache, positions,
                                block_table=block_table)

MLA rotates only the last `rope_dim` (qk_rope_head_dim, 64) channels of each
query head (q is `[T, H, nope + rope_dim]`: 128 | 64 in DeepSeek-V3) and one
shared key head `k_pe` `[T, rope_dim]`; the compressed latent `c_kv`
`[T, kv_lora_rank]` (512) is stored beside it unrotated. vLLM's
`concat_and_cache_mla` keeps both in one cache row `[kv_lora_rank +
rope_dim]` (576): c_kv in `[0, 512)`, the rotated k_pe in `[512, 576)`.

No op is MLA-specific. The compiled function (docs/FUSIONS.md, "MLA") is:
- q: `tensor.extract_slice` of q's rope channels `[T, H, rope_dim]`, a
  `rope.apply` with that slice as input and destination, `tensor.insert_slice`
  back: the nope channels are not read or written, and bufferization keeps
  the whole update in q's own buffer;
- k_pe: `rope.apply ins(k_pe as [T, 1, rope_dim]) slots(%s)` whose
  destination is the cache's channels `[kv_lora_rank, kv_lora_rank +
  rope_dim)` (an `extract_slice` of the cache viewed `[rows, 1, width]`),
  inserted back;
- c_kv: `rope.cache_write ins(c_kv as [T, 1, kv_lora_rank]) slots(%s)` into
  the channels `[0, kv_lora_rank)`, inserted back;
all in one function, on the same positions and slots, the cache written in
place (no copy of the cache or of q).

Slots are vLLM's `slot_mapping`: a token's row of the cache viewed as
`[rows, width]` (`block_table[b, pos // page_size] * page_size + pos %
page_size` for a paged cache `[num_blocks, page_size, width]`). Every slot,
position and block id is checked before any code runs; the compiled code
itself never writes outside the cache (a slot out of range writes nothing).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Optional

import numpy as np

from . import _arrays, _ir, _jit, _kernel_path as _path
from . import kernel as _kernel
from ._kernel_path import (DTYPES as _DTYPES, EVERY_INPUT,
                           QUANT_DTYPES as _QUANT_DTYPES, ArgSpec)
from ._kernel_path import (float_array as _float_array, integer as _integer,
                           integer_array as _integer_array, real as _real)

__all__ = ["apply_mla", "MLAConfig", "MLAKernel", "compile_mla", "emit_mla"]

_NAMES = ("q", "c_kv", "k_pe", "kv_cache", "positions", "slots",
          "block_table", "batch_indices", "kv_scale", "out")


@dataclasses.dataclass(frozen=True)
class MLAConfig:
    """Everything fixed when an MLA kernel is compiled; token and head
    counts and the number of cache rows are dynamic."""

    #: q, c_kv and k_pe's element type: "f16", "bf16", "f32" (or "f64"
    #: without quantization).
    dtype: str
    #: kv_lora_rank (DeepSeek: 512) and qk_rope_head_dim (64).
    kv_lora_rank: int = 512
    rope_dim: int = 64
    #: q's nope channels (qk_nope_head_dim, 128); None: no q (the call only
    #: appends to the cache).
    nope_dim: Optional[int] = 128
    #: "concat": one cache [rows, kv_lora_rank + rope_dim] (vLLM);
    #: "separate": a c_kv cache [rows, kv_lora_rank] and a k_pe cache
    #: [rows, rope_dim].
    cache_form: str = "concat"
    #: Quantized cache: "f8e4m3fn", "f8e5m2" or "i8", with one f32 scale
    #: (a multiplier) for the whole cache; None: the cache has `dtype`.
    quant: Optional[str] = None
    layout: str = "interleaved"
    #: The `freqs` attribute text (None: #rope.default<base = `base`>).
    freqs: Optional[str] = None
    base: float = 10000.0
    magnitude: float = 1.0
    positions_dtype: str = "i64"
    #: "vector" (convert-rope-to-vector) or "scalar" (linalg loops).
    lowering: str = "vector"
    threads: int = 1
    #: Rows of q's rope slice prefetched ahead (rope-to-llvm-cpu's
    #: prefetch-rows, vector lowering): they are 64 of every 192 channels,
    #: which the hardware prefetchers do not follow. 0: none.
    prefetch_rows: int = 16

    def __post_init__(self):
        def normalize(field, value):
            object.__setattr__(self, field, value)

        if self.dtype not in _DTYPES:
            raise TypeError(f"unsupported dtype {self.dtype!r}: one of "
                            f"{sorted(_DTYPES)}")
        for field in ("kv_lora_rank", "rope_dim"):
            value = _integer(getattr(self, field), field)
            if value <= 0:
                raise ValueError(f"{field} must be positive, got {value}")
            normalize(field, value)
        if self.rope_dim % 2:
            raise ValueError(f"rope_dim must be even (channel pairs), got "
                             f"{self.rope_dim}")
        if self.nope_dim is not None:
            nope = _integer(self.nope_dim, "nope_dim")
            if nope < 0:
                raise ValueError(f"nope_dim must be >= 0, got {nope}")
            normalize("nope_dim", nope)
        if self.cache_form not in ("concat", "separate"):
            raise ValueError(f"cache_form must be 'concat' or 'separate', "
                             f"got {self.cache_form!r}")
        if self.quant is not None:
            if self.quant not in _QUANT_DTYPES:
                raise ValueError(f"quant must be one of "
                                 f"{sorted(_QUANT_DTYPES)} or None, got "
                                 f"{self.quant!r}")
            if self.dtype == "f64":
                raise TypeError("a quantized cache needs f16, bf16 or f32 "
                                "inputs, got f64")
        if self.layout not in _ir.LAYOUTS:
            raise ValueError(f"layout must be 'half' or 'interleaved', got "
                             f"{self.layout!r}")
        if self.freqs is not None:
            if not isinstance(self.freqs, str):
                raise TypeError(f"freqs must be attribute text or None, got "
                                f"{self.freqs!r}")
            # Parsed and printed back, never pasted (KernelConfig's).
            normalize("freqs", _jit.canonical_attribute(self.freqs,
                                                        "freqs"))
        normalize("base", _real(self.base, "base"))
        normalize("magnitude", _real(self.magnitude, "magnitude"))
        if self.positions_dtype not in ("i32", "i64"):
            raise TypeError(f"positions_dtype must be 'i32' or 'i64', got "
                            f"{self.positions_dtype!r}")
        if self.lowering not in ("vector", "scalar"):
            raise ValueError(f"lowering must be 'vector' or 'scalar', got "
                             f"{self.lowering!r}")
        if isinstance(self.threads, (bool, np.bool_)) or \
                not isinstance(self.threads, int) or self.threads < 0:
            raise ValueError(f"threads must be an int >= 0 (0 = all cores), "
                             f"got {self.threads!r}")
        if isinstance(self.prefetch_rows, (bool, np.bool_)) or \
                not isinstance(self.prefetch_rows, (int, np.integer)) or \
                self.prefetch_rows < 0:
            raise ValueError(f"prefetch_rows must be an int >= 0 (0 = no "
                             f"prefetch), got {self.prefetch_rows!r}")
        normalize("prefetch_rows", int(self.prefetch_rows))

    @property
    def width(self) -> int:
        """A concatenated cache row: kv_lora_rank + rope_dim channels."""
        return self.kv_lora_rank + self.rope_dim

    def cache_element(self) -> str:
        """The cache's MLIR element type."""
        return _QUANT_DTYPES[self.quant][1] if self.quant else self.dtype


# -- IR -----------------------------------------------------------------------
# tensor.extract_slice / insert_slice are spelled here (only MLA uses them).

def _extract_slice(value: str, src: _ir.Type, offsets, sizes,
                   dst: _ir.Type) -> str:
    ones = ", ".join("1" for _ in offsets)
    return (f"tensor.extract_slice {value}[{', '.join(offsets)}] "
            f"[{', '.join(sizes)}] [{ones}] : {src.tensor()} to "
            f"{dst.tensor()}")


def _insert_slice(value: str, src: _ir.Type, dest: str, dst: _ir.Type,
                  offsets, sizes) -> str:
    ones = ", ".join("1" for _ in offsets)
    return (f"tensor.insert_slice {value} into {dest}[{', '.join(offsets)}] "
            f"[{', '.join(sizes)}] [{ones}] : {src.tensor()} into "
            f"{dst.tensor()}")


def emit_mla(config: MLAConfig, name: str = "mla_kernel") -> str:
    """The MLIR function (memref arguments, C interface) for `config`.

    Arguments in order: q `[T, H, nope + rope]` (rotated in place) when
    config.nope_dim is not None; c_kv `[T, 1, kv_lora_rank]`; k_pe
    `[T, 1, rope_dim]`; the cache `[rows, 1, width]` (concat) or the c_kv
    cache `[rows, 1, kv_lora_rank]` and the k_pe cache `[rows, 1,
    rope_dim]` (separate), written in place; positions `[T]`; slots
    `[T]` (i64); the f32 scale (a `memref<f32>`) with a quantized cache."""
    c = config
    r, p = c.kv_lora_rank, c.rope_dim
    body = _ir.Body()
    args = []
    attrs = _ir.rope_attributes(
        layout=c.layout,
        freqs=c.freqs if c.freqs is not None else _ir.default_freqs(c.base),
        magnitude=c.magnitude)
    pt = _ir.Type(c.positions_dtype, (None,))
    st = _ir.Type("i64", (None,))

    def argument(hint, t, writable=False):
        value = body.fresh(hint)
        args.append((value, t.memref()))
        return value, body.assign(hint + "_t", _ir.to_tensor(value, t,
                                                             writable))

    q = None
    if c.nope_dim is not None:
        qt = _ir.Type(c.dtype, (None, None, c.nope_dim + p))
        q = argument("q", qt, writable=True)
    ckt = _ir.Type(c.dtype, (None, 1, r))
    kpt = _ir.Type(c.dtype, (None, 1, p))
    ckv = argument("c_kv", ckt)
    kpe = argument("k_pe", kpt)
    elt = c.cache_element()
    if c.cache_form == "concat":
        cat = _ir.Type(elt, (None, 1, c.width))
        cache = argument("cache", cat, writable=True)
    else:
        cct = _ir.Type(elt, (None, 1, r))
        kct = _ir.Type(elt, (None, 1, p))
        ckv_cache = argument("ckv_cache", cct, writable=True)
        kpe_cache = argument("kpe_cache", kct, writable=True)
    pos = argument("positions", pt)
    slots = argument("slots", st)
    scale = None
    if c.quant is not None:
        sct = _ir.Type("f32", ())
        scale = (argument("scale", sct)[1], sct)

    quant = {} if scale is None else {"quant_scale": scale}
    # k_pe's destination: the cache's channels [r, r + p) (concat) or the
    # k_pe cache. Taken first, so that every operand of k_pe's rope.apply
    # is defined before q's: convert-rope-to-vector then lowers the two as
    # siblings, one token loop with cos/sin once per token.
    if c.cache_form == "concat":
        rows = body.dim(cache[1], cat, 0)
        kdest_t = _ir.Type(elt, (None, 1, p))
        k_off, k_sizes = ["0", "0", str(r)], [rows, "1", str(p)]
        kdest = body.assign("k_part", _extract_slice(cache[1], cat, k_off,
                                                     k_sizes, kdest_t))
    else:
        kdest_t, kdest = kct, kpe_cache[1]
    if q is not None:
        # q's rope channels, rotated in place: the slice is the rotation's
        # input and its destination.
        rt = _ir.Type(c.dtype, (None, None, p))
        t = body.dim(q[1], qt, 0)
        h = body.dim(q[1], qt, 1)
        offsets, sizes = ["0", "0", str(c.nope_dim)], [t, h, str(p)]
        part = body.assign("q_rope", _extract_slice(q[1], qt, offsets, sizes,
                                                    rt))
        rotated = body.assign("q_rot", _ir.rope_apply(
            part, rt, part, attrs, positions=(pos[1], pt)))
    krot = body.assign("k_rot", _ir.rope_apply(
        kpe[1], kpt, kdest, attrs, positions=(pos[1], pt),
        slots=(slots[1], st), result=kdest_t, **quant))
    if q is not None:
        whole = body.assign("q_out", _insert_slice(rotated, rt, q[1], qt,
                                                   offsets, sizes))
        body.emit(_ir.materialize(whole, qt, q[0]))

    if c.cache_form == "concat":
        with_k = body.assign("cache_k", _insert_slice(
            krot, kdest_t, cache[1], cat, k_off, k_sizes))
        # c_kv into the channels [0, r).
        vpart_t = _ir.Type(elt, (None, 1, r))
        v_off, v_sizes = ["0", "0", "0"], [rows, "1", str(r)]
        vpart = body.assign("v_part", _extract_slice(with_k, cat, v_off,
                                                     v_sizes, vpart_t))
        written = body.assign("v_written", _ir.cache_write(
            ckv[1], ckt, (slots[1], st), vpart, vpart_t, **quant))
        whole = body.assign("cache_out", _insert_slice(
            written, vpart_t, with_k, cat, v_off, v_sizes))
        body.emit(_ir.materialize(whole, cat, cache[0]))
    else:
        body.emit(_ir.materialize(krot, kct, kpe_cache[0]))
        written = body.assign("v_written", _ir.cache_write(
            ckv[1], ckt, (slots[1], st), ckv_cache[1], cct, **quant))
        body.emit(_ir.materialize(written, cct, ckv_cache[0]))
    body.ret()
    return _ir.function(name, args, body, c_interface=True)


def pipeline(config: MLAConfig) -> str:
    """The rope-to-llvm-cpu pipeline an MLA kernel is compiled with."""
    return _path.cpu_pipeline(vectorize=config.lowering == "vector",
                              prefetch_rows=config.prefetch_rows,
                              num_threads=int(config.threads))


# -- the compiled kernel ------------------------------------------------------

def arg_specs(config: MLAConfig) -> tuple:
    """The ArgSpecs of the compiled function's parameters, in emit_mla's
    order; apply_mla checks its arguments against the same names and
    overlap rules (_IN_PLACE, _OUT, _CACHE)."""
    c = config
    dtype = _DTYPES[c.dtype]
    r, p = c.kv_lora_rank, c.rope_dim
    cache = dict(dtype=_QUANT_DTYPES[c.quant][0] if c.quant else dtype,
                 writeable=True, apart_from=(EVERY_INPUT,))
    specs = []
    if c.nope_dim is not None:
        specs.append(dataclasses.replace(
            _IN_PLACE, dtype=dtype, shape=(None, None, c.nope_dim + p)))
    specs += [ArgSpec("c_kv", dtype, (None, 1, r)),
              ArgSpec("k_pe", dtype, (None, 1, p))]
    if c.cache_form == "concat":
        specs.append(ArgSpec("kv_cache", shape=(None, 1, c.width), **cache))
    else:
        specs += [ArgSpec("kv_cache[0]", shape=(None, 1, r), **cache),
                  ArgSpec("kv_cache[1]", shape=(None, 1, p), **cache)]
    specs += [dataclasses.replace(_POSITIONS, dtype=np.dtype(
                  np.int32 if c.positions_dtype == "i32" else np.int64)),
              _SLOTS]
    if c.quant is not None:
        specs.append(ArgSpec("kv_scale", np.dtype(np.float32), ()))
    return tuple(specs)


#: The positions and slots: one per token (c_kv's rows), the shape rule
#: apply_mla checks them by (_ROW_RULES) and the kernel's specs state.
_POSITIONS = ArgSpec("positions", shape=(None,), like=(("c_kv", 0),),
                     why="one per token")
_SLOTS = ArgSpec("slots", np.dtype(np.int64), (None,), like=(("c_kv", 0),),
                 why="one per token")
_ROW_RULES = {spec.name: _path.ShapeRule(spec)
              for spec in (_POSITIONS, _SLOTS)}

#: q rotated in place (out=q), out (another destination), and the caches:
#: each written while the kernel reads every input.
_IN_PLACE = ArgSpec("q", writeable=True, apart_from=(EVERY_INPUT,),
                    effect="rotates q in place (out=q)")
_OUT = ArgSpec("out", writeable=True, apart_from=(EVERY_INPUT,),
               like=tuple(("q", d) for d in range(3)))


_OUT_RULE = _path.ShapeRule(_OUT)


def _cache_spec(name: str) -> ArgSpec:
    return ArgSpec(name, writeable=True, apart_from=(EVERY_INPUT,))


class MLAKernel:
    """A compiled MLA kernel: `kernel(q, c_kv, k_pe, caches, positions,
    slots, scale)` on arrays already checked and shaped as `emit_mla`
    describes (apply_mla does that; this class trusts its arguments)."""

    def __init__(self, config: MLAConfig):
        self.config = config
        self._compiled = _path.CompiledKernel(
            emit_mla(config), pipeline(config), "mla_kernel",
            arg_specs(config))
        self.ir = self._compiled.ir
        self._module = self._compiled.module
        self._function = self._compiled.function
        self._address = self._compiled.address
        self._fast = _jit.kernel_call_module()

    def __call__(self, arrays):
        """Runs the kernel on `arrays` (in argument order, numpy,
        C-contiguous and aligned): their memref descriptors built in C++
        (the extension's run, KernelCall.cpp), or through ctypes when it
        is absent or does not take them."""
        self._compiled.run(arrays, self._fast)


_cache = _path.KernelCache(MLAKernel)


def compile_mla(config: Optional[MLAConfig] = None, **kwargs) -> MLAKernel:
    """The (cached) compiled kernel for a configuration."""
    return _cache.configured(MLAConfig, config, kwargs)


# -- checks -------------------------------------------------------------------

def _array(value, name: str) -> np.ndarray:
    if not isinstance(value, np.ndarray):
        raise TypeError(f"{name} must be a numpy array, got "
                        f"{type(value).__name__}")
    return value


def _dtype_name(array: np.ndarray, name: str) -> str:
    for key, dtype in _DTYPES.items():
        if array.dtype == dtype:
            return key
    raise TypeError(f"{name} has dtype {array.dtype}: MLA takes float16, "
                    "bfloat16, float32 or float64")


def _rows(value, name: str, tokens: int, width: int) -> np.ndarray:
    """c_kv / k_pe: [T, width] or [T, 1, width] (vLLM's k_pe), as
    [T, 1, width]."""
    a = _array(value, name)
    if a.shape not in ((tokens, width), (tokens, 1, width)):
        raise ValueError(f"{name} has shape {a.shape}, expected ({tokens}, "
                         f"{width}) or ({tokens}, 1, {width})")
    a = a.reshape(tokens, 1, width)
    if not (a.flags.c_contiguous and a.flags.aligned):
        a = np.ascontiguousarray(a).copy()
    return a


def _cache_rows(cache: np.ndarray, name: str, width: int,
                page_size: Optional[int]) -> Optional[int]:
    """Checks a cache's shape, [rows, width] or [num_blocks, page_size,
    width]; returns its page size (None for rank 2)."""
    if cache.ndim not in (2, 3) or cache.shape[-1] != width:
        raise ValueError(f"{name} has shape {cache.shape}, expected "
                         f"(rows, {width}) or (num_blocks, page_size, "
                         f"{width})")
    return cache.shape[1] if cache.ndim == 3 else None


def _slots_from_table(positions, block_table, batch_indices, num_blocks,
                      page_size, tokens) -> np.ndarray:
    table = _integer_array(block_table, "block_table", np.dtype(np.int64))
    if table.ndim != 2:
        raise ValueError(f"block_table has shape {table.shape}, expected "
                         "(batch, max_blocks)")
    if batch_indices is None:
        if table.shape[0] != tokens:
            raise ValueError(
                f"block_table has {table.shape[0]} rows for {tokens} "
                "tokens: pass batch_indices (each token's row of the block "
                "table) unless there is one token per row (decode)")
        rows = np.arange(tokens, dtype=np.int64)
    else:
        rows = _integer_array(batch_indices, "batch_indices",
                              np.dtype(np.int64))
        if rows.shape != (tokens,):
            raise ValueError(f"batch_indices has shape {rows.shape}, "
                             f"expected ({tokens},)")
        low, high = _range(rows) if tokens else (0, 0)
        if low < 0 or high >= table.shape[0]:
            raise IndexError(
                f"batch_indices span [{low}, {high}] "
                f"but block_table has {table.shape[0]} rows")
    if not tokens:
        return np.zeros(0, np.int64)
    pos = positions.astype(np.int64)
    low, high = _range(pos)
    if low < 0:
        raise IndexError(f"positions must be >= 0 with a block table, got "
                         f"{low}")
    column = pos // page_size
    if high // page_size >= table.shape[1]:
        raise IndexError(
            f"position {high} needs column "
            f"{high // page_size} of block_table, which has "
            f"{table.shape[1]} columns (page_size {page_size})")
    pages = table[rows, column]
    low, high = _range(pages)
    if low < 0 or high >= num_blocks:
        bad = int(pages[(pages < 0) | (pages >= num_blocks)][0])
        raise IndexError(f"block_table gives block {bad} for a token, but "
                         f"the cache has {num_blocks} blocks")
    return pages * page_size + pos % page_size


def _check_slots(slots, tokens: int, rows: int, rows_of) -> np.ndarray:
    s = _integer_array(slots, "slots", np.dtype(np.int64))
    _ROW_RULES["slots"].check(s.shape, rows_of)
    low, high = _range(s) if tokens else (0, 0)
    if low < -1 or high >= rows:
        raise IndexError(f"slots span [{low}, {high}] but "
                         f"the cache has {rows} rows (-1 marks a padding "
                         "token, which is skipped)")
    return s


_range = _path.int_range


def _check_unique(s: np.ndarray, name: str = "slots"):
    row = _path.first_duplicate(s)
    if row is not None:
        raise ValueError(f"two tokens write cache row {row} ({name}): each "
                         "slot must be written at most once per call")


#: apply_mla's compiled kernels by _call_key.
_calls: dict = {}


def _typed(value):
    """`value` with its type, so that True and 1 (or 1 and 1.0) differ."""
    return (type(value), value)


def _call_key(scaling, base, magnitude, *rest):
    """A hashable key of apply_mla's configuration arguments, or None."""
    try:
        items = None if scaling is None else tuple(
            (k, _typed(v)) for k, v in sorted(scaling.items()))
        key = (items, _typed(base), _typed(magnitude)) + tuple(
            _typed(v) for v in rest)
        hash(key)
    except (TypeError, AttributeError):
        return None
    return key


def _compile_call(scaling, base, magnitude, dtype, lora, rope_dim, nope,
                  form, quant, layout, positions_dtype, lowering, threads):
    if scaling is None:
        freqs, scheme_magnitude = None, 1.0
        if not isinstance(base, (int, float, np.integer, np.floating)) or \
                isinstance(base, (bool, np.bool_)):
            raise TypeError(f"base must be a real number, got {base!r}")
    else:
        attrs = _kernel.scaling_attributes(scaling, base=base,
                                           head_dim=rope_dim,
                                           rotary_dim=rope_dim)
        freqs, scheme_magnitude = attrs.freqs, attrs.magnitude
    if magnitude is None:
        magnitude = scheme_magnitude
    else:
        magnitude = _real(magnitude, "magnitude")
        if scaling is not None and not math.isclose(
                magnitude, scheme_magnitude, rel_tol=1e-12):
            raise ValueError(f"magnitude {magnitude} differs from the "
                             f"scaling scheme's {scheme_magnitude}")
    return compile_mla(MLAConfig(
        dtype=dtype, kv_lora_rank=lora, rope_dim=rope_dim, nope_dim=nope,
        cache_form=form, quant=quant, layout=layout, freqs=freqs,
        base=base, magnitude=magnitude,
        positions_dtype="i32" if positions_dtype == np.int32 else "i64",
        lowering=lowering, threads=threads))


# -- the entry point ----------------------------------------------------------

def apply_mla(q, c_kv, k_pe, kv_cache, positions, *, slots=None,
              block_table=None, batch_indices=None, rope_dim=64,
              layout="interleaved", base=10000.0, scaling=None,
              magnitude=None, kv_scale=None, out=None, lowering="vector",
              threads=1):
    """MLA's RoPE and cache append in one compiled call (module doc).

    q: `[T, H, nope + rope_dim]` (f16/bf16/f32/f64), or None (only append);
    its last `rope_dim` channels are rotated, the others copied bit for bit.
    c_kv: `[T, kv_lora_rank]`; k_pe: `[T, rope_dim]` or `[T, 1, rope_dim]`,
    both of q's dtype. kv_cache: one array `[rows, kv_lora_rank + rope_dim]`
    or paged `[num_blocks, page_size, kv_lora_rank + rope_dim]` (vLLM's
    concat_and_cache_mla layout), or a pair `(ckv_cache, kpe_cache)` of
    arrays with the same leading dims and last dims kv_lora_rank and
    rope_dim; written in place (writeable, C-contiguous). Its dtype is q's,
    or float8_e4m3fn / float8_e5m2 / int8 with `kv_scale` (a float32
    multiplier, `sat(x * kv_scale)`; vLLM's scale is its reciprocal).
    positions: `[T]` integers, the rotation angle of q and k_pe.

    Where each token goes, one of: `slots` `[T]` (vLLM's slot_mapping: the
    row of the cache viewed `[rows, width]`; -1 skips the token), or
    `block_table` `[B, max_blocks]` with a paged cache (slot = block_table[b,
    pos // page_size] * page_size + pos % page_size, b = batch_indices[t],
    by default t when there is one token per row).

    Rotation: `layout` ("interleaved" = DeepSeek's pairs (2i, 2i + 1),
    vLLM's is_neox_style=False; "half" for is_neox_style=True), `base` and
    `scaling` (a Hugging Face rope_scaling dict, e.g. DeepSeek-V3's YaRN;
    rope_mlir.from_hf_config(config) gives both), `magnitude` (None: the
    scheme's).

    out: None returns a new array (q's copy, rotated); `out=q` rotates q in
    place; another array of q's shape and dtype receives the result.
    Returns the rotated q (None when q is None).

    Raises TypeError (a dtype or type), ValueError (a shape, an overlap, a
    read-only cache, two tokens with one slot) or IndexError (a slot, a
    position or a block id outside the cache or the block table) naming
    the argument, before any code runs."""
    foreign = (q, c_kv, k_pe, positions, slots, block_table, batch_indices,
               kv_scale, out)
    caches = kv_cache if isinstance(kv_cache, tuple) else (kv_cache,)
    if _arrays.any_foreign(*foreign, *caches):
        raise TypeError("apply_mla takes numpy arrays (the caches are "
                        "written in place; convert DLPack tensors with "
                        "np.from_dlpack)")
    rope_dim = _integer(rope_dim, "rope_dim")
    if rope_dim <= 0 or rope_dim % 2:
        raise ValueError(f"rope_dim must be even and positive, got "
                         f"{rope_dim}")
    c_kv = c_kv_in = _array(c_kv, "c_kv")
    k_pe_in = k_pe
    if c_kv.ndim not in (2, 3) or (c_kv.ndim == 3 and c_kv.shape[1] != 1):
        raise ValueError(f"c_kv has shape {c_kv.shape}, expected (T, "
                         "kv_lora_rank) or (T, 1, kv_lora_rank)")
    tokens, lora = c_kv.shape[0], c_kv.shape[-1]
    dtype = _dtype_name(c_kv, "c_kv")
    c_kv = _rows(c_kv, "c_kv", tokens, lora)
    k_pe = _rows(k_pe, "k_pe", tokens, rope_dim)
    if k_pe.dtype != c_kv.dtype:
        raise TypeError(f"k_pe has dtype {k_pe.dtype}, c_kv {c_kv.dtype}: "
                        "they must agree")
    nope = None
    if q is not None:
        q = _array(q, "q")
        if q.ndim != 3 or q.shape[0] != tokens or q.shape[2] < rope_dim:
            raise ValueError(f"q has shape {q.shape}, expected ({tokens}, H, "
                             f"nope + {rope_dim})")
        if q.dtype != c_kv.dtype:
            raise TypeError(f"q has dtype {q.dtype}, c_kv {c_kv.dtype}: "
                            "they must agree")
        nope = q.shape[2] - rope_dim
    elif out is not None:
        raise ValueError("out is given but q is None")

    # The caches.
    if isinstance(kv_cache, tuple):
        if len(kv_cache) != 2:
            raise ValueError("kv_cache must be one array or a pair "
                             "(ckv_cache, kpe_cache)")
        form = "separate"
        ckv_cache = _array(kv_cache[0], "kv_cache[0]")
        kpe_cache = _array(kv_cache[1], "kv_cache[1]")
        page = _cache_rows(ckv_cache, "kv_cache[0]", lora, None)
        _cache_rows(kpe_cache, "kv_cache[1]", rope_dim, None)
        if ckv_cache.shape[:-1] != kpe_cache.shape[:-1]:
            raise ValueError(f"kv_cache[0] has shape {ckv_cache.shape} and "
                             f"kv_cache[1] {kpe_cache.shape}: their leading "
                             "dims must agree")
        if kpe_cache.dtype != ckv_cache.dtype:
            raise TypeError(f"kv_cache[1] has dtype {kpe_cache.dtype}, "
                            f"kv_cache[0] {ckv_cache.dtype}: they must agree")
        cache_arrays = [("kv_cache[0]", ckv_cache),
                        ("kv_cache[1]", kpe_cache)]
    else:
        form = "concat"
        cache = _array(kv_cache, "kv_cache")
        page = _cache_rows(cache, "kv_cache", lora + rope_dim, None)
        cache_arrays = [("kv_cache", cache)]
    first = cache_arrays[0][1]
    rows = math.prod(first.shape[:-1])  # Python ints: no numpy reduction
    quant = None
    if first.dtype != c_kv.dtype:
        quant = next((k for k, (d, _) in _QUANT_DTYPES.items()
                      if d == first.dtype), None)
        if quant is None:
            raise TypeError(f"{cache_arrays[0][0]} has dtype {first.dtype}: "
                            f"expected {c_kv.dtype} (c_kv's) or a quantized "
                            "float8_e4m3fn, float8_e5m2 or int8")
        if kv_scale is None:
            raise ValueError(f"{cache_arrays[0][0]} is quantized "
                             f"({first.dtype}): pass kv_scale")
        if dtype == "f64":
            raise TypeError("a quantized cache needs float16, bfloat16 or "
                            "float32 inputs, got float64")
    elif kv_scale is not None:
        raise ValueError(f"kv_scale is given but the cache holds "
                         f"{first.dtype} (not quantized)")
    for name, array in cache_arrays:
        _path.check_writeable(name, array)
    scale = None
    if quant is not None:
        if isinstance(kv_scale, (int, float)) and \
                not isinstance(kv_scale, (bool, np.bool_)):
            kv_scale = np.float32(kv_scale)
        scale = _float_array(kv_scale, "kv_scale", np.dtype(np.float32))
        if scale.shape != ():
            raise ValueError(f"kv_scale has shape {scale.shape}, expected a "
                             "scalar (one scale for the whole cache)")
        if not np.isfinite(scale):
            raise ValueError("kv_scale must be finite")
        scale = np.ascontiguousarray(scale)

    # Positions and slots.
    if isinstance(positions, np.ndarray) and positions.dtype == np.int32:
        pos = _integer_array(positions, "positions", np.dtype(np.int32))
    else:
        pos = _integer_array(positions, "positions", np.dtype(np.int64))
    rows_of = {"c_kv": c_kv.shape}  # what the shape rules (like) read
    _ROW_RULES["positions"].check(pos.shape, rows_of)
    if (slots is None) == (block_table is None):
        raise ValueError("pass exactly one of slots (vLLM's slot_mapping) "
                         "and block_table")
    if slots is not None:
        if batch_indices is not None:
            raise ValueError("batch_indices goes with block_table, not "
                             "slots")
        s = _check_slots(slots, tokens, rows, rows_of)
    else:
        if page is None:
            raise ValueError(
                f"block_table needs a paged cache (num_blocks, page_size, "
                f"width); {cache_arrays[0][0]} has shape {first.shape}")
        if page == 0:
            raise ValueError(
                f"{cache_arrays[0][0]} has shape {first.shape}: its "
                f"page_size (dim 1) is 0, so no position has a page; pages "
                f"must hold at least one token")
        s = _slots_from_table(pos, block_table, batch_indices,
                              first.shape[0], page, tokens)
    _check_unique(s, "slots" if slots is not None else
                  "positions / block_table")
    s = np.ascontiguousarray(s, dtype=np.int64)

    # Overlaps: the caches and q's destination are written while the
    # inputs are read.
    # Every check comes before any write: out (or q in place) must be
    # apart from every input and cache, as the caches from every input;
    # out receives q's copy only then.
    inputs = [("c_kv", c_kv), ("k_pe", k_pe), ("positions", pos),
              ("slots", s)] + ([("kv_scale", scale)] if scale is not None
                               else [])
    # The caller's own arrays too, where they were converted or copied.
    for name, value in (("c_kv", c_kv_in), ("k_pe", k_pe_in),
                        ("positions", positions), ("slots", slots),
                        ("block_table", block_table),
                        ("batch_indices", batch_indices),
                        ("kv_scale", kv_scale)):
        if isinstance(value, np.ndarray) and \
                not any(value is a for _, a in inputs):
            inputs.append((name, value))
    result = None
    if q is not None:
        if out is None:
            result = q.copy(order="C")
        elif out is q:
            _path.check_writeable("q", q)
            result = q
        else:
            _path.check_destination(_OUT, out, None, q.dtype, _OUT_RULE,
                                    {"q": q.shape})
            _path.check_apart(_OUT, out, [("q", q)] + inputs + cache_arrays)
            result = out
        if out is q:
            _path.check_apart(_IN_PLACE, q, inputs)
    if result is not None:
        inputs.append(("q" if result is q else "out", result))
    for name, array in cache_arrays:
        _path.check_apart(_cache_spec(name), array, inputs)
    (first_name, first_cache), *others = cache_arrays
    _path.check_apart(_cache_spec(first_name), first_cache, (), others)
    if result is not None and out is not None and out is not q:
        out[...] = q  # the kernel rotates out's copy of q in place
    if tokens == 0:
        return result  # no token: nothing to rotate or append

    # Rotation attributes and the compiled kernel, memoized on the exact
    # values and types passed (a repeated decode call skips the scaling
    # import and the configuration's checks; anything unhashable, such as
    # a list in the scaling dict, takes the checked path every time).
    key = _call_key(scaling, base, magnitude, dtype, lora, rope_dim, nope,
                    form, quant, layout, pos.dtype, lowering, threads)
    compiled = _calls.get(key) if key is not None else None
    if compiled is None:
        compiled = _compile_call(scaling, base, magnitude, dtype, lora,
                                 rope_dim, nope, form, quant, layout,
                                 pos.dtype, lowering, threads)
        if key is not None:
            _calls[key] = compiled

    arrays = []
    if result is not None:
        arrays.append(result)
    arrays += [c_kv, k_pe]
    arrays += [a.reshape(rows, 1, a.shape[-1]) for _, a in cache_arrays]
    arrays += [pos, s]
    if scale is not None:
        arrays.append(scale)
    compiled(arrays)
    return result
