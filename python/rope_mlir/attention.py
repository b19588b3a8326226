# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Attention scores with rotated queries and keys, S = R(q)·R(k)ᵀ, as rope IR
(rope.apply on Q and K, then a contraction over the channels), compiled
with or without `--rope-fuse-into-attention` before `rope-to-llvm-cpu`.

Used by python/tests/compiler/test_attention_fusion.py (fused == unfused ==
float64 reference) and bench/attention_bench.py. Queries may have more heads
than keys (GQA): Q is viewed as [B, Hkv, G, S, D] ([B, S, Hkv, G, D] in the
[B, S, H, D] layout), a free reshape of [B, Hq, S, D], and the key operand's
indexing map broadcasts it over the group G.
"""

from __future__ import annotations

import dataclasses
import math
import os
from typing import Optional, Sequence

import numpy as np

from . import _ir, _kernel_path as _path
from ._kernel_path import EVERY_INPUT, ArgSpec
from ._kernel_path import (check_offset_sum as _check_offset_sum,
                           flag as _flag, float_array as _float_array,
                           integer as _integer,
                           integer_array as _integer_array, real as _real,
                           scalar_offset as _scalar_offset)

__all__ = ["ScoresConfig", "emit_scores", "ScoresKernel", "scores_reference",
           "AttentionConfig", "emit_attention", "AttentionKernel",
           "attention_reference"]


@dataclasses.dataclass(frozen=True)
class ScoresConfig:
    batch: int
    q_heads: int
    kv_heads: int
    q_len: int
    kv_len: int
    head_dim: int
    #: "bhsd" ([B, H, S, D]) or "bshd" ([B, S, H, D]).
    layout: str = "bhsd"
    rotary_dim: Optional[int] = None
    pair_layout: str = "half"
    base: float = 10000.0
    #: "offset": Q at a per-row offset + s, K at s (decode with a cache);
    #: "explicit": positions [B, Sq] and [B, Sk].
    positions: str = "offset"
    #: Rotate Q and K (False: plain Q·Kᵀ, the benchmark's floor).
    rotate: bool = True
    #: "generic" (any layout, GQA) or "batch_matmul" (bhsd, no GQA,
    #: [B·H, S, D] with MLIR 22's indexing_maps transposing K).
    form: str = "generic"

    def __post_init__(self):
        for field in ("batch", "q_heads", "kv_heads", "q_len", "kv_len",
                      "head_dim"):
            if _integer(getattr(self, field), field) <= 0:
                raise ValueError(f"{field} must be positive, got "
                                 f"{getattr(self, field)}")
        if self.rotary_dim is not None:
            p = _integer(self.rotary_dim, "rotary_dim")
            if p <= 0 or p % 2 or p > self.head_dim:
                raise ValueError(
                    f"rotary_dim must be even, positive and at most the head "
                    f"dim ({self.head_dim}), got {p}")
        if self.pair_layout not in ("half", "interleaved"):
            raise ValueError(f"pair_layout must be half or interleaved: "
                             f"{self.pair_layout!r}")
        if _real(self.base, "base") <= 0:
            raise ValueError(f"base must be positive, got {self.base}")
        if self.positions not in ("offset", "explicit"):
            raise ValueError(f"positions must be offset or explicit: "
                             f"{self.positions!r}")
        _flag(self.rotate, "rotate")
        if self.form not in ("generic", "batch_matmul"):
            raise ValueError(f"form must be generic or batch_matmul: "
                             f"{self.form!r}")
        if self.q_heads % self.kv_heads:
            raise ValueError("q_heads must be a multiple of kv_heads")
        if self.layout not in ("bhsd", "bshd"):
            raise ValueError(f"layout must be bhsd or bshd: {self.layout!r}")
        if self.form == "batch_matmul" and (self.layout != "bhsd" or
                                            self.q_heads != self.kv_heads):
            raise ValueError("batch_matmul form: bhsd without GQA")

    @property
    def group(self) -> int:
        return self.q_heads // self.kv_heads

    def q_shape(self) -> tuple:
        b, h, g, s, d = (self.batch, self.kv_heads, self.group, self.q_len,
                         self.head_dim)
        if self.form == "batch_matmul":
            return (b * h, s, d)
        return (b, h, g, s, d) if self.layout == "bhsd" else (b, s, h, g, d)

    def k_shape(self) -> tuple:
        b, h, s, d = self.batch, self.kv_heads, self.kv_len, self.head_dim
        if self.form == "batch_matmul":
            return (b * h, s, d)
        return (b, h, s, d) if self.layout == "bhsd" else (b, s, h, d)

    def q_shapes(self) -> tuple:
        """The shapes a query argument may have: q_shape(), or the usual
        [B, Hq, Sq, D] ([B, Sq, Hq, D] in bshd; [B, H, S, D] for the
        batch_matmul form), of which q_shape() is a free reshape."""
        b, h, s, d = self.batch, self.q_heads, self.q_len, self.head_dim
        if self.form == "batch_matmul" or self.layout == "bhsd":
            usual = (b, h, s, d)
        else:
            usual = (b, s, h, d)
        return (self.q_shape(), usual)

    def k_shapes(self) -> tuple:
        """The shapes a key argument may have: k_shape(), or [B, H, S, D]
        for the batch_matmul form."""
        if self.form != "batch_matmul":
            return (self.k_shape(),)
        return (self.k_shape(), (self.batch, self.kv_heads, self.kv_len,
                                 self.head_dim))

    def scores_shape(self) -> tuple:
        if self.form == "batch_matmul":
            return (self.batch * self.kv_heads, self.q_len, self.kv_len)
        return (self.batch, self.kv_heads, self.group, self.q_len, self.kv_len)


def _f32(shape) -> _ir.Type:
    return _ir.Type("f32", tuple(shape))


def _region(body, elt: str, args: Sequence[str], build) -> tuple:
    """A generic's block arguments (named `args`, of `elt`) and ops, in a
    region of `body`: build(region, *arg names) emits them."""
    region = body.region()
    names = [region.fresh(a) for a in args]
    build(region, *names)
    return [(n, elt) for n in names], region.lines


def _multiply_add(region, a, b, c):
    """c + a·b: a contraction's body."""
    p = region.assign("p", _ir.arith("mulf", [a, b], "f32"))
    r = region.assign("r", _ir.arith("addf", [c, p], "f32"))
    region.emit(_ir.linalg_yield([r], ["f32"]))


def emit_scores(c: ScoresConfig, name: str = "scores") -> str:
    """The module: @<name>(q, k, positions or offsets, out) with a C
    interface; rope.apply on Q and K feeding one contraction."""
    body, args, s, _ = _scores_ir(c)
    st = _f32(c.scores_shape())
    out = body.fresh("out")
    args.append((out, st.memref()))
    body.emit(_ir.materialize(s, st, out))
    body.ret()
    return _ir.function(name, args, body, c_interface=True)


def _scores_ir(c: ScoresConfig):
    """The body, the arguments, the scores' SSA value and the f32 zero."""
    qt, kt, st = _f32(c.q_shape()), _f32(c.k_shape()), _f32(c.scores_shape())
    if c.form == "batch_matmul":
        q_tokens, k_tokens = (1,), (1,)
    elif c.layout == "bhsd":
        q_tokens, k_tokens = (0, 3), (0, 2)
    else:
        q_tokens, k_tokens = (0, 1), (0, 1)
    body = _ir.Body()
    q, k = body.fresh("q"), body.fresh("k")
    args = [(q, qt.memref()), (k, kt.memref())]
    q_in = body.assign("qt", _ir.to_tensor(q, qt))
    k_in = body.assign("kt", _ir.to_tensor(k, kt))
    q_pos, k_pos = {}, {}
    if c.positions == "offset" and c.form != "batch_matmul":
        ot = _ir.Type("i64", (c.batch,))
        off = body.fresh("off")
        args.append((off, ot.memref()))
        q_pos = {"offset": (body.assign("ot", _ir.to_tensor(off, ot)), ot)}
    elif c.positions == "offset":  # [B·H, S, D]: one scalar offset
        off = body.fresh("off")
        args.append((off, "i64"))
        q_pos = {"offset": (off, "i64")}
    else:
        rows = c.batch * c.kv_heads if c.form == "batch_matmul" else c.batch
        for which, seq, pos in (("qp", c.q_len, q_pos),
                                ("kp", c.kv_len, k_pos)):
            pt = _ir.Type("i64", (rows, seq))
            value = body.fresh(which)
            args.append((value, pt.memref()))
            pos["positions"] = (body.assign(f"{which}t",
                                            _ir.to_tensor(value, pt)), pt)
        if c.form == "batch_matmul":
            q_tokens, k_tokens = (0, 1), (0, 1)

    if c.rotate:
        rotated = []
        for hint, value, t, pos, tokens in (("qr", q_in, qt, q_pos, q_tokens),
                                            ("kr", k_in, kt, k_pos, k_tokens)):
            attrs = _ir.rope_attributes(
                layout=c.pair_layout, rotary_dim=c.rotary_dim,
                token_dims=tokens, freqs=_ir.default_freqs(c.base))
            init = body.assign(f"{hint}e", _ir.empty(t))
            rotated.append(body.assign(hint, _ir.rope_apply(
                value, t, init, attrs, **pos)))
        q_in, k_in = rotated
    zero = body.assign("zero", _ir.constant(0.0, "f32"))
    acc = body.assign("acc", _ir.fill(zero, "f32",
                                      body.assign("se", _ir.empty(st)), st))
    ins = [(q_in, qt), (k_in, kt)]
    if c.form == "batch_matmul":
        domain = "b m n d"
        s = body.assign("s", _ir.batch_matmul(
            [_ir.affine_map(domain, "b m d"), _ir.affine_map(domain, "b n d"),
             _ir.affine_map(domain, "b m n")], ins, (acc, st)))
    else:
        domain = "b h g m n d"
        if c.layout == "bhsd":
            qm, km = "b h g m d", "b h n d"
        else:
            qm, km = "b m h g d", "b n h d"
        s = body.assign("s", _ir.generic(
            [_ir.affine_map(domain, qm), _ir.affine_map(domain, km),
             _ir.affine_map(domain, "b h g m n")],
            ["parallel"] * 5 + ["reduction"], ins, (acc, st),
            *_region(body, "f32", ("a", "b", "c"), _multiply_add)))
    return body, args, s, zero


@dataclasses.dataclass(frozen=True)
class AttentionConfig(ScoresConfig):
    """Whole attention softmax(scale·R(q)·R(k)ᵀ + mask)·V (generic form):
    V is [B, Hkv, Sk, Dv] ([B, Sk, Hkv, Dv] in bshd), the output
    [B, Hkv, G, Sq, Dv] ([B, Sq, Hkv, G, Dv]), a free reshape of
    [B, Hq, Sq, Dv] ([B, Sq, Hq, Dv])."""
    #: Multiply the scores by this constant first (None: no scale op).
    scale: Optional[float] = None
    #: Add an [Sq, Sk] mask argument (broadcast over batch and heads).
    mask: bool = False
    value_dim: Optional[int] = None
    #: How the softmax is written: "named" (linalg.softmax), "decomposed"
    #: (what linalg.softmax's own decomposition produces: generic
    #: reductions, exp(x - max) in one generic) or "frontend" (linalg.reduce,
    #: linalg.broadcast, linalg.sub/exp/div, as torch-mlir or StableHLO
    #: lower it). rope-fuse-into-attention raises the last two back.
    softmax: str = "named"

    def __post_init__(self):
        super().__post_init__()
        if self.scale is not None:
            _real(self.scale, "scale")
        _flag(self.mask, "mask")
        if self.value_dim is not None and \
                _integer(self.value_dim, "value_dim") <= 0:
            raise ValueError(f"value_dim must be positive, got "
                             f"{self.value_dim}")
        if self.form != "generic":
            raise ValueError("whole attention: generic form only")
        if self.softmax not in ("named", "decomposed", "frontend"):
            raise ValueError(f"softmax must be named, decomposed or "
                             f"frontend: {self.softmax!r}")

    @property
    def dv(self) -> int:
        return self.value_dim or self.head_dim

    def v_shape(self) -> tuple:
        b, h, s, e = self.batch, self.kv_heads, self.kv_len, self.dv
        return (b, h, s, e) if self.layout == "bhsd" else (b, s, h, e)

    def v_shapes(self) -> tuple:
        return (self.v_shape(),)

    def out_shape(self) -> tuple:
        b, h, g, s, e = (self.batch, self.kv_heads, self.group, self.q_len,
                         self.dv)
        return (b, h, g, s, e) if self.layout == "bhsd" else (b, s, h, g, e)


def emit_attention(c: AttentionConfig, name: str = "attention") -> str:
    """@<name>(q, k, positions or offsets, [mask], v, out): the scores of
    emit_scores, then the scale, the mask, the softmax over the keys (as
    c.softmax says) and the contraction with V."""
    body, args, s, zero = _scores_ir(c)
    st = _f32(c.scores_shape())
    ident = _ir.affine_map("b h g m n", "b h g m n")
    parallel5 = ["parallel"] * 5
    if c.scale is not None:
        scale = body.assign("scale", _ir.constant(float(c.scale), "f32"))

        def multiply(region, x, o):
            y = region.assign("y", _ir.arith("mulf", [x, scale], "f32"))
            region.emit(_ir.linalg_yield([y], ["f32"]))
        init = body.assign("scaled_e", _ir.empty(st))
        s = body.assign("scaled", _ir.generic(
            [ident, ident], parallel5, [(s, st)], (init, st),
            *_region(body, "f32", ("x", "o"), multiply)))
    if c.mask:
        mt = _f32((c.q_len, c.kv_len))
        mask = body.fresh("mask")
        args.append((mask, mt.memref()))
        mask_in = body.assign("maskt", _ir.to_tensor(mask, mt))

        def add(region, x, a, o):
            y = region.assign("y", _ir.arith("addf", [x, a], "f32"))
            region.emit(_ir.linalg_yield([y], ["f32"]))
        init = body.assign("masked_e", _ir.empty(st))
        s = body.assign("masked", _ir.generic(
            [ident, _ir.affine_map("b h g m n", "m n"), ident], parallel5,
            [(s, st), (mask_in, mt)], (init, st),
            *_region(body, "f32", ("x", "a", "o"), add)))
    vt, ot = _f32(c.v_shape()), _f32(c.out_shape())
    v, out = body.fresh("v"), body.fresh("out")
    args += [(v, vt.memref()), (out, ot.memref())]
    if c.layout == "bhsd":
        v_map, o_map = "b h n e", "b h g m e"
    else:
        v_map, o_map = "b n h e", "b m h g e"
    domain = "b h g m n e"
    v_in = body.assign("vt", _ir.to_tensor(v, vt))
    p = _softmax(c, body, s, body.assign("pe", _ir.empty(st)))
    acc = body.assign("oacc", _ir.fill(zero, "f32",
                                       body.assign("oe", _ir.empty(ot)), ot))
    o = body.assign("o", _ir.generic(
        [_ir.affine_map(domain, "b h g m n"), _ir.affine_map(domain, v_map),
         _ir.affine_map(domain, o_map)],
        ["parallel"] * 4 + ["reduction", "parallel"],
        [(p, st), (v_in, vt)], (acc, ot),
        *_region(body, "f32", ("a", "b", "c"), _multiply_add)))
    body.emit(_ir.materialize(o, ot, out))
    body.ret()
    return _ir.function(name, args, body, c_interface=True)


def _softmax(c: AttentionConfig, body, s: str, dest: str) -> str:
    """Emits p = softmax of the scores `s` over the keys (dim 4), written
    as c.softmax says, into `dest`; returns p."""
    st = _f32(c.scores_shape())
    if c.softmax == "named":
        return body.assign("p", _ir.softmax(4, (s, st), (dest, st)))
    rt = _f32(c.scores_shape()[:4])
    rows = body.assign("rows", _ir.empty(rt))
    zero = body.assign("sm_zero", _ir.constant(0.0, "f32"))
    sum0 = body.assign("sum0", _ir.fill(zero, "f32", rows, rt))
    if c.softmax == "frontend":
        ninf = body.assign("sm_ninf", _ir.constant(-math.inf, "f32"))
        max0 = body.assign("max0", _ir.fill(ninf, "f32", rows, rt))
        row_max = body.assign("max", _ir.reduce("maximumf", (s, st),
                                                (max0, rt), [4]))
        max_b = body.assign("max_b", _ir.broadcast((row_max, rt),
                                                   (dest, st), [4]))
        shifted = body.assign("shifted", _ir.named(
            "sub", [(s, st), (max_b, st)], (dest, st)))
        exp = body.assign("exp", _ir.named("exp", [(shifted, st)],
                                           (dest, st)))
        row_sum = body.assign("sum", _ir.reduce("addf", (exp, st),
                                                (sum0, rt), [4]))
        sum_b = body.assign("sum_b", _ir.broadcast((row_sum, rt),
                                                   (dest, st), [4]))
        return body.assign("p", _ir.named("div", [(exp, st), (sum_b, st)],
                                          (dest, st)))
    ident = _ir.affine_map("b h g m n", "b h g m n")
    row = _ir.affine_map("b h g m n", "b h g m")

    def reduce(hint, src, init, combiner):
        def combine(region, x, acc):
            r = region.assign("sm_r", _ir.arith(combiner, [x, acc], "f32"))
            region.emit(_ir.linalg_yield([r], ["f32"]))
        return body.assign(hint, _ir.generic(
            [ident, row], ["parallel"] * 4 + ["reduction"], [(src, st)],
            (init, rt), *_region(body, "f32", ("sm_in", "sm_acc"), combine)))

    def rowwise(hint, src, r, build):
        return body.assign(hint, _ir.generic(
            [ident, row, ident], ["parallel"] * 5, [(src, st), (r, rt)],
            (dest, st), *_region(body, "f32", ("sm_in", "sm_row", "sm_out"),
                                 build)))

    def subtract_exp(region, x, m, o):
        d = region.assign("sm_d", _ir.arith("subf", [x, m], "f32"))
        e = region.assign("sm_e", _ir.math_op("exp", [d], "f32"))
        region.emit(_ir.linalg_yield([e], ["f32"]))

    def divide(region, x, total, o):
        q = region.assign("sm_p", _ir.arith("divf", [x, total], "f32"))
        region.emit(_ir.linalg_yield([q], ["f32"]))

    # Upstream's decomposition starts the maxnumf reduction from NaN.
    nan = body.assign("sm_nan", _ir.constant(-math.nan, "f32"))
    max0 = body.assign("max0", _ir.fill(nan, "f32", rows, rt))
    row_max = reduce("max", s, max0, "maxnumf")
    exp = rowwise("exp", s, row_max, subtract_exp)
    row_sum = reduce("sum", exp, sum0, "addf")
    return rowwise("p", exp, row_sum, divide)


def pipeline(fuse: bool, query_tile: int = 32, key_tile: int = 64,
             fuse_key: str = "auto", threads: int = 1,
             parallel_loops: bool = True,
             decode_key_splits: Optional[int] = None) -> str:
    """The pass pipeline: rope-fuse-into-attention (with `fuse`), then
    rope-to-llvm-cpu with this CPU's vector widths
    (_kernel_path.host_vector_options(), as rope_mlir.jit's default
    pipeline). threads: OpenMP threads (1: sequential, 0: all cores) for the
    scf.forall loops: the fused loops over batch, heads and query tiles
    (parallel_loops) and rope.apply's token loops. A decode step (one query
    tile) splits its keys into at most `decode_key_splits` blocks computed
    in parallel and merged (split-K, rope-tile-attention's
    decode-key-splits); None (the default): one block per thread when there
    are several (threads, or the cores for 0) and parallel_loops, else one
    key loop. On one thread, or with blocks, its key tiles keep every KV
    head, so that K's rotation computes cos/sin once per key for all of
    them (share-key-rotation); on several threads without blocks each
    thread takes heads instead. The key loop's last,
    partial tile is peeled (peel-key-tiles: K and V packed in every other
    tile)."""
    if decode_key_splits is None:
        several = threads if threads != 0 else (os.cpu_count() or 1)
        decode_key_splits = several if parallel_loops and several > 1 else 0
    elif _integer(decode_key_splits, "decode_key_splits") < 0:
        raise ValueError(f"decode_key_splits must be >= 0, got "
                         f"{decode_key_splits}")
    # One tile of every KV head leaves a decode step's other threads the
    # keys' blocks only; without blocks they take a head each instead.
    share = threads == 1 or decode_key_splits > 1
    fusion = (f"rope-fuse-into-attention{{query-tile-size={query_tile} "
              f"key-tile-size={key_tile} fuse-key={fuse_key} "
              f"parallel-loops={str(bool(parallel_loops)).lower()} "
              f"share-key-rotation={str(share).lower()} peel-key-tiles=true "
              f"decode-key-splits={decode_key_splits}}}, "
              if fuse else "")
    return _path.cpu_pipeline(fusion, vectorize=True, num_threads=threads,
                              **_path.host_vector_options())


def _tensor(value, name: str, shapes: tuple) -> np.ndarray:
    """A float32 input of one of `shapes` (the kernel's own first), as a
    C-contiguous array of the first: the others are free reshapes of it.
    Any other shape is refused, even one with as many elements."""
    array = _float_array(value, name, np.dtype(np.float32))
    if array.shape not in shapes:
        also = "".join(f" or {s}" for s in shapes[1:] if s != shapes[0])
        raise ValueError(f"{name} has shape {array.shape}, expected "
                         f"{shapes[0]}{also}")
    return array.reshape(shapes[0])


def _positions(c: ScoresConfig, offsets, q_positions, k_positions) -> list:
    """The checked position arguments of the compiled function, in order:
    per-row offsets [B] (a scalar offset for the batch_matmul form), or the
    query and key positions [rows, Sq] and [rows, Sk] (rows = B, or B·H in
    the batch_matmul form), as int64."""
    i64 = np.dtype(np.int64)
    if c.positions == "offset":
        if q_positions is not None or k_positions is not None:
            raise ValueError("the kernel was compiled for offsets "
                             "(positions='offset'): q_positions and "
                             "k_positions must be None")
        if offsets is None:
            raise ValueError("the kernel was compiled for offsets: pass "
                             "offsets")
        if c.form == "batch_matmul":
            if isinstance(offsets, np.ndarray) and offsets.ndim:
                raise ValueError(f"the batch_matmul form takes one scalar "
                                 f"offset, got offsets of shape "
                                 f"{offsets.shape}")
            offset = _scalar_offset(offsets, "offsets")
            _check_offset_sum(offset, c.q_len, "offsets")
            return [offset]
        array = _integer_array(offsets, "offsets", i64)
        if array.shape != (c.batch,):
            raise ValueError(f"offsets have shape {array.shape}, expected "
                             f"({c.batch},) (one per batch row)")
        if array.size:
            _check_offset_sum(int(array.max()), c.q_len, "offsets")
        return [array]
    if offsets is not None:
        raise ValueError("the kernel was compiled for explicit positions: "
                         "offsets must be None (add them to the positions)")
    rows = c.batch * c.kv_heads if c.form == "batch_matmul" else c.batch
    arrays = []
    for name, value, seq in (("q_positions", q_positions, c.q_len),
                             ("k_positions", k_positions, c.kv_len)):
        if value is None:
            raise ValueError(f"the kernel was compiled for explicit "
                             f"positions: pass {name}")
        array = _integer_array(value, name, i64)
        if array.shape != (rows, seq):
            raise ValueError(f"{name} have shape {array.shape}, expected "
                             f"{(rows, seq)}")
        arrays.append(array)
    return arrays


_F32 = np.dtype(np.float32)
_I64 = np.dtype(np.int64)


def arg_specs(c: ScoresConfig) -> tuple:
    """The ArgSpecs of the compiled function's parameters, in order:
    q, k, the offsets (a scalar for the batch_matmul form) or q_positions
    and k_positions, then (whole attention) the mask and v, and out,
    written apart from every input."""
    specs = [ArgSpec("q", _F32, c.q_shape()), ArgSpec("k", _F32, c.k_shape())]
    if c.positions == "offset":
        specs.append(ArgSpec("offsets", scalar=True)
                     if c.form == "batch_matmul" else
                     ArgSpec("offsets", _I64, (c.batch,)))
    else:
        rows = c.batch * c.kv_heads if c.form == "batch_matmul" else c.batch
        specs += [ArgSpec("q_positions", _I64, (rows, c.q_len)),
                  ArgSpec("k_positions", _I64, (rows, c.kv_len))]
    if isinstance(c, AttentionConfig):
        if c.mask:
            specs.append(ArgSpec("mask", _F32, (c.q_len, c.kv_len)))
        specs.append(ArgSpec("v", _F32, c.v_shape()))
        out_shape = c.out_shape()
    else:
        out_shape = c.scores_shape()
    specs.append(ArgSpec("out", _F32, out_shape, writeable=True,
                         apart_from=(EVERY_INPUT,)))
    return tuple(specs)


class _Compiled:
    """What ScoresKernel and AttentionKernel share: the compiled function
    of config + IR + specs, and its call with a checked destination."""

    def _compile(self, config, ir: str, entry: str, fuse: bool, options):
        self.config = config
        self._specs = arg_specs(config)
        self._compiled = _path.CompiledKernel(
            ir, pipeline(fuse, **options), entry, self._specs)
        self.ir = self._compiled.ir
        self._module = self._compiled.module
        self._function = self._compiled.function

    def _run(self, arrays: list, out):
        """Calls the function on the checked inputs `arrays` (in order) and
        `out` (None: a new array), checked against its spec first."""
        spec = self._specs[-1]
        if out is None:
            out = np.empty(spec.shape, spec.dtype)
        else:
            _path.check_destination(spec, out, spec.shape)
            _path.check_apart(spec, out, [
                (s.name, a) for s, a in zip(self._specs, arrays)])
        self._compiled.run(arrays + [out])
        return out


class ScoresKernel(_Compiled):
    """The compiled scores function. Call with q, k (float32 of
    q_shapes()/k_shapes(): q_shape() or the usual [B, Hq, Sq, D]) and the
    offsets ([B] integers; one integer for the batch_matmul form) or the
    positions ([B, Sq] and [B, Sk] integers). `out`, when given, must be a
    writeable C-contiguous float32 array of scores_shape() that overlaps no
    input. Every argument is checked before the compiled code runs (a
    mismatch raises TypeError or ValueError naming it). `options`: those
    of pipeline() (tiles, fuse_key, threads, parallel_loops,
    decode_key_splits)."""

    def __init__(self, config: ScoresConfig, fuse: bool, **options):
        self._compile(config, emit_scores(config), "scores", fuse, options)

    def __call__(self, q, k, offsets=None, *, q_positions=None,
                 k_positions=None, out=None):
        c = self.config
        arrays = [_tensor(q, "q", c.q_shapes()), _tensor(k, "k", c.k_shapes())]
        arrays += _positions(c, offsets, q_positions, k_positions)
        return self._run(arrays, out)


class AttentionKernel(_Compiled):
    """The compiled whole attention. Call with q, k, v (float32 of
    q_shapes()/k_shapes()/v_shape()), the offsets or positions (as
    ScoresKernel), and the [Sq, Sk] float32 mask when the config has one
    (refused when it has none). `out`, when given, must be a writeable
    C-contiguous float32 array of out_shape() that overlaps no input. Every
    argument is checked before the compiled code runs. `options`: those of
    pipeline() (tiles, fuse_key, threads, parallel_loops,
    decode_key_splits: a decode step on several threads splits its keys
    among them by default)."""

    def __init__(self, config: AttentionConfig, fuse: bool, **options):
        self._compile(config, emit_attention(config), "attention", fuse,
                      options)

    def __call__(self, q, k, v, offsets=None, *, q_positions=None,
                 k_positions=None, mask=None, out=None):
        c = self.config
        arrays = [_tensor(q, "q", c.q_shapes()), _tensor(k, "k", c.k_shapes())]
        arrays += _positions(c, offsets, q_positions, k_positions)
        if c.mask:
            if mask is None:
                raise ValueError(f"the kernel was compiled with a mask: pass "
                                 f"mask ({c.q_len}, {c.kv_len}) float32")
            mask = _float_array(mask, "mask", np.dtype(np.float32))
            if mask.shape != (c.q_len, c.kv_len):
                raise ValueError(f"mask has shape {mask.shape}, expected "
                                 f"({c.q_len}, {c.kv_len}) ([Sq, Sk])")
            arrays.append(mask)
        elif mask is not None:
            raise ValueError("the kernel was compiled without a mask "
                             "(AttentionConfig.mask=False): mask must be None")
        arrays.append(_tensor(v, "v", c.v_shapes()))
        return self._run(arrays, out)


def attention_reference(c: AttentionConfig, q, k, v, offsets=None, *,
                        q_positions=None, k_positions=None,
                        mask=None) -> np.ndarray:
    """float64 softmax(scale·R(q)·R(k)ᵀ + mask)·V, in out_shape()."""
    s = scores_reference(c, q, k, offsets, q_positions=q_positions,
                         k_positions=k_positions)
    if c.scale is not None:
        s = s * c.scale
    if c.mask:
        s = s + np.asarray(mask, np.float64)
    s = s - s.max(axis=-1, keepdims=True)
    p = np.exp(s)
    p /= p.sum(axis=-1, keepdims=True)
    v = np.asarray(v, np.float64).reshape(c.v_shape())
    if c.layout == "bhsd":
        return np.einsum("bhgmn,bhne->bhgme", p, v)
    return np.einsum("bhgmn,bnhe->bmhge", p, v)


def scores_reference(c: ScoresConfig, q, k, offsets=None, *,
                     q_positions=None, k_positions=None) -> np.ndarray:
    """float64 R(q)·R(k)ᵀ from rope_mlir.reference, in scores_shape()."""
    from . import reference

    q = np.asarray(q, np.float64).reshape(c.q_shape())
    k = np.asarray(k, np.float64).reshape(c.k_shape())
    if c.form == "batch_matmul":
        q_tokens, k_tokens = (1,), (1,)
        if c.positions == "explicit":
            q_tokens, k_tokens = (0, 1), (0, 1)
    elif c.layout == "bhsd":
        q_tokens, k_tokens = (0, 3), (0, 2)
    else:
        q_tokens, k_tokens = (0, 1), (0, 1)
    if c.rotate:
        kw = dict(layout=c.pair_layout, rotary_dim=c.rotary_dim, base=c.base)
        if c.positions == "explicit":
            qr = reference.apply(q, q_positions, token_dims=q_tokens, **kw)
            kr = reference.apply(k, k_positions, token_dims=k_tokens, **kw)
        else:
            qr = reference.apply(q, offset=offsets, token_dims=q_tokens, **kw)
            kr = reference.apply(k, token_dims=k_tokens, **kw)
    else:
        qr, kr = q, k
    if c.form == "batch_matmul":
        return np.einsum("bmd,bnd->bmn", qr, kr)
    if c.layout == "bhsd":
        return np.einsum("bhgmd,bhnd->bhgmn", qr, kr)
    return np.einsum("bmhgd,bnhd->bhgmn", qr, kr)
