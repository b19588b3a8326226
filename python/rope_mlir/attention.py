"""Attention scores with rotated queries and keys, S = R(q)·R(k)ᵀ, as rope IR
(rope.apply on Q and K, then a contraction over the channels), compiled
with or without `--rope-fuse-into-attention` before `rope-to-llvm-cpu`.

Used by python/tests/test_attention_fusion.py (fused == unfused == float64
reference) and bench/attention_bench.py. Queries may have more heads than
keys (GQA): Q is viewed as [B, Hkv, G, S, D] ([B, S, Hkv, G, D] in the
[B, S, H, D] layout), a free reshape of [B, Hq, S, D], and the key operand's
indexing map broadcasts it over the group G.
"""

from __future__ import annotations

import ctypes
import dataclasses
from typing import Optional

import numpy as np

from . import _jit
from .kernel import (_check_out, _flag, _float_array, _integer,
                     _integer_array, _real, _scalar_offset)

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


def _type(kind: str, shape, elt: str = "f32") -> str:
    return f"{kind}<{'x'.join(map(str, shape))}x{elt}>"


def emit_scores(c: ScoresConfig, name: str = "scores") -> str:
    """The module: @<name>(q, k, positions or offsets, out) with a C
    interface; rope.apply on Q and K feeding one contraction."""
    args, body = _scores_ir(c)
    ss = c.scores_shape()
    st = _type("tensor", ss)
    args.append(f"%out: {_type('memref', ss)}")
    body += [f"bufferization.materialize_in_destination %s in restrict "
             f"writable %out : ({st}, {_type('memref', ss)}) -> ()",
             "return"]
    return _function(name, args, body)


def _function(name: str, args, body) -> str:
    return (f"func.func @{name}({', '.join(args)}) attributes "
            "{llvm.emit_c_interface} {\n" +
            "\n".join("  " + line for line in body) + "\n}\n")


def _scores_ir(c: ScoresConfig):
    """The arguments and body lines up to the scores %s."""
    qs, ks, ss = c.q_shape(), c.k_shape(), c.scores_shape()
    if c.form == "batch_matmul":
        q_tokens, k_tokens = (1,), (1,)
    elif c.layout == "bhsd":
        q_tokens, k_tokens = (0, 3), (0, 2)
    else:
        q_tokens, k_tokens = (0, 1), (0, 1)
    args = [f"%q: {_type('memref', qs)}", f"%k: {_type('memref', ks)}"]
    body = [f"%qt = bufferization.to_tensor %q restrict : "
            f"{_type('memref', qs)} to {_type('tensor', qs)}",
            f"%kt = bufferization.to_tensor %k restrict : "
            f"{_type('memref', ks)} to {_type('tensor', ks)}"]
    q_pos = k_pos = ""
    if c.positions == "offset" and c.form != "batch_matmul":
        ot = _type("memref", (c.batch,), "i64")
        args.append(f"%off: {ot}")
        body.append(f"%ot = bufferization.to_tensor %off restrict : {ot} to "
                    f"{_type('tensor', (c.batch,), 'i64')}")
        q_pos = f"offset(%ot : {_type('tensor', (c.batch,), 'i64')}) "
    elif c.positions == "offset":  # [B·H, S, D]: one scalar offset
        args.append("%off: i64")
        q_pos = "offset(%off : i64) "
    else:
        for which, seq in (("qp", c.q_len), ("kp", c.kv_len)):
            rows = (c.batch * c.kv_heads if c.form == "batch_matmul"
                    else c.batch)
            pt = _type("memref", (rows, seq), "i64")
            args.append(f"%{which}: {pt}")
            body.append(f"%{which}t = bufferization.to_tensor %{which} "
                        f"restrict : {pt} to {pt.replace('memref', 'tensor')}")
        rows = c.batch * c.kv_heads if c.form == "batch_matmul" else c.batch
        q_pos = f"positions(%qpt : {_type('tensor', (rows, c.q_len), 'i64')}) "
        k_pos = f"positions(%kpt : {_type('tensor', (rows, c.kv_len), 'i64')}) "
        if c.form == "batch_matmul":
            q_tokens, k_tokens = (0, 1), (0, 1)

    attrs = f"layout = #rope.layout<{c.pair_layout}>, "
    if c.rotary_dim is not None:
        attrs += f"rotary_dim = {c.rotary_dim} : i64, "
    attrs += f"freqs = #rope.default<base = {float(c.base)!r}>"
    q, k = "%qt", "%kt"
    if c.rotate:
        for name_, shape, pos, tokens in (("qr", qs, q_pos, q_tokens),
                                          ("kr", ks, k_pos, k_tokens)):
            t = _type("tensor", shape)
            dims = ", ".join(map(str, tokens))
            body.append(f"%{name_}e = tensor.empty() : {t}")
            body.append(f"%{name_} = rope.apply ins(%{name_[0]}t : {t}) {pos}"
                        f"outs(%{name_}e : {t}) {{{attrs}, token_dims = "
                        f"array<i64: {dims}>}} -> {t}")
        q, k = "%qr", "%kr"
    st = _type("tensor", ss)
    body += [f"%zero = arith.constant 0.0 : f32",
             f"%se = tensor.empty() : {st}",
             f"%acc = linalg.fill ins(%zero : f32) outs(%se : {st}) -> {st}"]
    ins = f"ins({q}, {k} : {_type('tensor', qs)}, {_type('tensor', ks)})"
    if c.form == "batch_matmul":
        body.append(
            "%s = linalg.batch_matmul indexing_maps = ["
            "affine_map<(b, m, n, d) -> (b, m, d)>, "
            "affine_map<(b, m, n, d) -> (b, n, d)>, "
            "affine_map<(b, m, n, d) -> (b, m, n)>] "
            f"{ins} outs(%acc : {st}) -> {st}")
    else:
        dims = "(b, h, g, m, n, d)"
        if c.layout == "bhsd":
            qm, km = "(b, h, g, m, d)", "(b, h, n, d)"
        else:
            qm, km = "(b, m, h, g, d)", "(b, n, h, d)"
        body += [
            "%s = linalg.generic {indexing_maps = ["
            f"affine_map<{dims} -> {qm}>, affine_map<{dims} -> {km}>, "
            f"affine_map<{dims} -> (b, h, g, m, n)>], iterator_types = "
            '["parallel", "parallel", "parallel", "parallel", "parallel", '
            f'"reduction"]}} {ins} outs(%acc : {st}) {{',
            "^bb0(%a: f32, %b: f32, %c: f32):",
            "  %p = arith.mulf %a, %b : f32",
            "  %r = arith.addf %c, %p : f32",
            "  linalg.yield %r : f32",
            f"}} -> {st}"]
    return args, body


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
    args, body = _scores_ir(c)
    st = _type("tensor", c.scores_shape())
    ident = "affine_map<(b, h, g, m, n) -> (b, h, g, m, n)>"
    parallel5 = '["parallel", "parallel", "parallel", "parallel", "parallel"]'
    s = "%s"
    if c.scale is not None:
        body += [f"%scale = arith.constant {float(c.scale)!r} : f32",
                 f"%scaled_e = tensor.empty() : {st}",
                 f"%scaled = linalg.generic {{indexing_maps = [{ident}, "
                 f"{ident}], iterator_types = {parallel5}}} ins({s} : {st}) "
                 f"outs(%scaled_e : {st}) {{",
                 "^bb0(%x: f32, %o: f32):",
                 "  %y = arith.mulf %x, %scale : f32",
                 "  linalg.yield %y : f32",
                 f"}} -> {st}"]
        s = "%scaled"
    if c.mask:
        mt = _type("memref", (c.q_len, c.kv_len))
        args.append(f"%mask: {mt}")
        tt = mt.replace("memref", "tensor")
        body += [f"%maskt = bufferization.to_tensor %mask restrict : {mt} to "
                 f"{tt}",
                 f"%masked_e = tensor.empty() : {st}",
                 f"%masked = linalg.generic {{indexing_maps = [{ident}, "
                 "affine_map<(b, h, g, m, n) -> (m, n)>, "
                 f"{ident}], iterator_types = {parallel5}}} "
                 f"ins({s}, %maskt : {st}, {tt}) outs(%masked_e : {st}) {{",
                 "^bb0(%x: f32, %a: f32, %o: f32):",
                 "  %y = arith.addf %x, %a : f32",
                 "  linalg.yield %y : f32",
                 f"}} -> {st}"]
        s = "%masked"
    vm, om = _type("memref", c.v_shape()), _type("memref", c.out_shape())
    vt, ot = vm.replace("memref", "tensor"), om.replace("memref", "tensor")
    args += [f"%v: {vm}", f"%out: {om}"]
    if c.layout == "bhsd":
        v_map, o_map = "(b, h, n, e)", "(b, h, g, m, e)"
    else:
        v_map, o_map = "(b, n, h, e)", "(b, m, h, g, e)"
    dims = "(b, h, g, m, n, e)"
    body += [f"%vt = bufferization.to_tensor %v restrict : {vm} to {vt}",
             f"%pe = tensor.empty() : {st}"]
    body += _softmax(c, s, "%p", "%pe")
    body += [f"%oe = tensor.empty() : {ot}",
             f"%oacc = linalg.fill ins(%zero : f32) outs(%oe : {ot}) -> {ot}",
             "%o = linalg.generic {indexing_maps = ["
             f"affine_map<{dims} -> (b, h, g, m, n)>, "
             f"affine_map<{dims} -> {v_map}>, affine_map<{dims} -> {o_map}>],"
             ' iterator_types = ["parallel", "parallel", "parallel", '
             '"parallel", "reduction", "parallel"]} '
             f"ins(%p, %vt : {st}, {vt}) outs(%oacc : {ot}) {{",
             "^bb0(%a: f32, %b: f32, %c: f32):",
             "  %x = arith.mulf %a, %b : f32",
             "  %y = arith.addf %c, %x : f32",
             "  linalg.yield %y : f32",
             f"}} -> {ot}",
             f"bufferization.materialize_in_destination %o in restrict "
             f"writable %out : ({ot}, {om}) -> ()",
             "return"]
    return _function(name, args, body)


def _softmax(c: AttentionConfig, s: str, p: str, dest: str) -> list:
    """Body lines computing %p = softmax of the scores `s` over the keys
    (dim 4), written as c.softmax says, into `dest`."""
    st = _type("tensor", c.scores_shape())
    if c.softmax == "named":
        return [f"{p} = linalg.softmax dimension(4) ins({s} : {st}) "
                f"outs({dest} : {st}) -> {st}"]
    rt = _type("tensor", c.scores_shape()[:4])
    lines = [f"%rows = tensor.empty() : {rt}",
             "%sm_zero = arith.constant 0.0 : f32",
             f"%sum0 = linalg.fill ins(%sm_zero : f32) outs(%rows : {rt}) "
             f"-> {rt}"]
    if c.softmax == "frontend":
        def bcast(name, row):
            return (f"{name} = linalg.broadcast ins({row} : {rt}) "
                    f"outs({dest} : {st}) dimensions = [4]")
        return lines + [
            "%sm_ninf = arith.constant 0xFF800000 : f32",
            f"%max0 = linalg.fill ins(%sm_ninf : f32) outs(%rows : {rt}) "
            f"-> {rt}",
            f"%max = linalg.reduce {{ arith.maximumf }} ins({s} : {st}) "
            f"outs(%max0 : {rt}) dimensions = [4]",
            bcast("%max_b", "%max"),
            f"%shifted = linalg.sub ins({s}, %max_b : {st}, {st}) "
            f"outs({dest} : {st}) -> {st}",
            f"%exp = linalg.exp ins(%shifted : {st}) outs({dest} : {st}) "
            f"-> {st}",
            f"%sum = linalg.reduce {{ arith.addf }} ins(%exp : {st}) "
            f"outs(%sum0 : {rt}) dimensions = [4]",
            bcast("%sum_b", "%sum"),
            f"{p} = linalg.div ins(%exp, %sum_b : {st}, {st}) "
            f"outs({dest} : {st}) -> {st}"]
    ident = "affine_map<(b, h, g, m, n) -> (b, h, g, m, n)>"
    row = "affine_map<(b, h, g, m, n) -> (b, h, g, m)>"
    parallel = '["parallel", "parallel", "parallel", "parallel", "parallel"]'
    reduction = ('["parallel", "parallel", "parallel", "parallel", '
                 '"reduction"]')

    def reduce(name, src, init, combiner):
        return [f"{name} = linalg.generic {{indexing_maps = [{ident}, {row}],"
                f" iterator_types = {reduction}}} ins({src} : {st}) "
                f"outs({init} : {rt}) {{",
                "^bb0(%sm_in: f32, %sm_acc: f32):",
                f"  %sm_r = {combiner} %sm_in, %sm_acc : f32",
                "  linalg.yield %sm_r : f32",
                f"}} -> {rt}"]

    def rowwise(name, src, r, ops):
        return [f"{name} = linalg.generic {{indexing_maps = [{ident}, {row}, "
                f"{ident}], iterator_types = {parallel}}} ins({src}, {r} : "
                f"{st}, {rt}) outs({dest} : {st}) {{",
                "^bb0(%sm_in: f32, %sm_row: f32, %sm_out: f32):", *ops,
                f"}} -> {st}"]

    # Upstream's decomposition starts the maxnumf reduction from NaN.
    return (lines +
            ["%sm_nan = arith.constant 0xFFC00000 : f32",
             f"%max0 = linalg.fill ins(%sm_nan : f32) outs(%rows : {rt}) "
             f"-> {rt}"] +
            reduce("%max", s, "%max0", "arith.maxnumf") +
            rowwise("%exp", s, "%max",
                    ["  %sm_d = arith.subf %sm_in, %sm_row : f32",
                     "  %sm_e = math.exp %sm_d : f32",
                     "  linalg.yield %sm_e : f32"]) +
            reduce("%sum", "%exp", "%sum0", "arith.addf") +
            rowwise(p, "%exp", "%sum",
                    ["  %sm_p = arith.divf %sm_in, %sm_row : f32",
                     "  linalg.yield %sm_p : f32"]))


def pipeline(fuse: bool, query_tile: int = 32, key_tile: int = 64,
             fuse_key: str = "auto", threads: int = 1,
             parallel_loops: bool = True) -> str:
    """The pass pipeline. threads: OpenMP threads (1: sequential, 0: all
    cores) for the scf.forall loops: the fused loops over batch, heads and
    query tiles (parallel_loops) and rope.apply's token loops."""
    fusion = (f"rope-fuse-into-attention{{query-tile-size={query_tile} "
              f"key-tile-size={key_tile} fuse-key={fuse_key} "
              f"parallel-loops={str(bool(parallel_loops)).lower()}}}, "
              if fuse else "")
    return (f"builtin.module({fusion}rope-to-llvm-cpu{{emit-c-interface=true "
            f"vectorize=true num-threads={threads}}})")


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
            return [_scalar_offset(offsets, "offsets")]
        array = _integer_array(offsets, "offsets", i64)
        if array.shape != (c.batch,):
            raise ValueError(f"offsets have shape {array.shape}, expected "
                             f"({c.batch},) (one per batch row)")
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


def _call(function, arrays: list, scalars: dict):
    """Calls `function` with a memref descriptor per array (an int in
    `scalars`, keyed by argument index, goes by value)."""
    descs = []
    args = []
    for i, array in enumerate(arrays):
        if i in scalars:
            args.append(scalars[i])
            continue
        descs.append(_jit.memref_descriptor(array))
        args.append(ctypes.addressof(descs[-1]))
    function(*args)


class ScoresKernel:
    """The compiled scores function. Call with q, k (float32 of
    q_shapes()/k_shapes(): q_shape() or the usual [B, Hq, Sq, D]) and the
    offsets ([B] integers; one integer for the batch_matmul form) or the
    positions ([B, Sq] and [B, Sk] integers). `out`, when given, must be a
    writeable C-contiguous float32 array of scores_shape() that overlaps no
    input. Every argument is checked before the compiled code runs (a
    mismatch raises TypeError or ValueError naming it). `options`: those
    of pipeline() (tiles, fuse_key, threads, parallel_loops)."""

    def __init__(self, config: ScoresConfig, fuse: bool, **options):
        self.config = config
        self.ir = emit_scores(config)
        self._module = _jit.compile_module(self.ir, pipeline(fuse, **options))
        scalar = config.positions == "offset" and config.form == "batch_matmul"
        argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                    ctypes.c_int64 if scalar else ctypes.c_void_p]
        if config.positions == "explicit":
            argtypes.append(ctypes.c_void_p)
        argtypes.append(ctypes.c_void_p)
        self._function = ctypes.CFUNCTYPE(None, *argtypes)(
            self._module.lookup("scores"))

    def __call__(self, q, k, offsets=None, *, q_positions=None,
                 k_positions=None, out=None):
        c = self.config
        arrays = [_tensor(q, "q", c.q_shapes()), _tensor(k, "k", c.k_shapes())]
        arrays += _positions(c, offsets, q_positions, k_positions)
        names = ["q", "k"] + (["offsets"] if c.positions == "offset" else
                              ["q_positions", "k_positions"])
        scalars = {2: arrays[2]} if isinstance(arrays[2], int) else {}
        if out is None:
            out = np.empty(c.scores_shape(), np.float32)
        else:
            _check_out(out, "out", c.scores_shape(), np.dtype(np.float32),
                       [(n, a) for i, (n, a) in enumerate(zip(names, arrays))
                        if i not in scalars])
        _call(self._function, arrays + [out], scalars)
        return out


class AttentionKernel:
    """The compiled whole attention. Call with q, k, v (float32 of
    q_shapes()/k_shapes()/v_shape()), the offsets or positions (as
    ScoresKernel), and the [Sq, Sk] float32 mask when the config has one
    (refused when it has none). `out`, when given, must be a writeable
    C-contiguous float32 array of out_shape() that overlaps no input. Every
    argument is checked before the compiled code runs. `options`: those of
    pipeline() (tiles, fuse_key, threads, parallel_loops)."""

    def __init__(self, config: AttentionConfig, fuse: bool, **options):
        self.config = config
        self.ir = emit_attention(config)
        self._module = _jit.compile_module(self.ir, pipeline(fuse, **options))
        n = 5 + (config.positions == "explicit") + bool(config.mask)
        self._function = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * n)(
            self._module.lookup("attention"))

    def __call__(self, q, k, v, offsets=None, *, q_positions=None,
                 k_positions=None, mask=None, out=None):
        c = self.config
        arrays = [_tensor(q, "q", c.q_shapes()), _tensor(k, "k", c.k_shapes())]
        names = ["q", "k"]
        arrays += _positions(c, offsets, q_positions, k_positions)
        names += (["offsets"] if c.positions == "offset" else
                  ["q_positions", "k_positions"])
        if c.mask:
            if mask is None:
                raise ValueError(f"the kernel was compiled with a mask: pass "
                                 f"mask ({c.q_len}, {c.kv_len}) float32")
            mask = _float_array(mask, "mask", np.dtype(np.float32))
            if mask.shape != (c.q_len, c.kv_len):
                raise ValueError(f"mask has shape {mask.shape}, expected "
                                 f"({c.q_len}, {c.kv_len}) ([Sq, Sk])")
            arrays.append(mask)
            names.append("mask")
        elif mask is not None:
            raise ValueError("the kernel was compiled without a mask "
                             "(AttentionConfig.mask=False): mask must be None")
        arrays.append(_tensor(v, "v", c.v_shapes()))
        names.append("v")
        if out is None:
            out = np.empty(c.out_shape(), np.float32)
        else:
            _check_out(out, "out", c.out_shape(), np.dtype(np.float32),
                       list(zip(names, arrays)))
        _call(self._function, arrays + [out], {})
        return out


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
