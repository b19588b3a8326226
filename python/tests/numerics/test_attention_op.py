# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""rope.attention and rope.online_attention, executed: modules emitted
here for random configurations are compiled by rope-to-llvm-cpu (which
decomposes attention -> online_attention -> linalg) and compared with an
independent float64 numpy reference of the ops' contract (RopeOps.td):
GQA through a group dim missing from the K/V maps, [B, H, S, D] and
[B, S, H, D] maps, Dv != D, float and i1 masks, causal and sliding-window
masks positioned by offsets or explicit query positions, a score region
(softcap, ALiBi from its index arguments), f16/bf16/f32/f64 and mixed output
types, dynamic sizes, fully masked rows (NaN). Then the tiled forms: both
ops tiled through the transform dialect (TilingInterface), including the
online step tiled along the keys (its state threaded through the loop).

Tolerances: relative to max|reference| 2e-6 where the accumulator is f32
(f32 dot products of D terms, polynomial exp), 1e-12 where it is f64, plus
one ulp of a narrower output type relative to each element.
"""

from __future__ import annotations

import dataclasses
import pathlib
from typing import Optional

import ml_dtypes
import numpy as np
import pytest

import rope_mlir
from rope_mlir import _jit

DTYPES = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32,
          "f64": np.float64}
#: One ulp relative to the value (significand bits after the point).
ULP = {"f16": 2.0 ** -10, "bf16": 2.0 ** -7, "f32": 2.0 ** -23, "f64": 0.0}
ACC_TOLERANCE = {"f32": 2e-6, "f64": 1e-12}
PIPELINE = "builtin.module({}rope-to-llvm-cpu{{emit-c-interface=true}})"


# -- The emitter ---------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Config:
    dtype: str = "f32"
    out_dtype: Optional[str] = None  # None: dtype
    layout: str = "bhsd"             # or "bshd"
    batch: int = 1
    kv_heads: int = 2
    group: int = 1                   # > 1: GQA, a group dim K/V lack
    queries: int = 4
    keys: int = 6
    head_dim: int = 8
    value_dim: int = 8
    scale: float = 0.35
    mask: Optional[str] = None       # "float" or "i1"
    mask_dims: str = "full"          # every score dim, or "qk" (m, k2)
    causal: bool = False
    window: Optional[int] = None
    query_offset: Optional[int] = None
    key_offset: Optional[int] = None
    positions: bool = False          # query_positions [B, Sq] (i32)
    region: Optional[str] = None     # "softcap" or "alibi"
    softcap: float = 3.0
    dynamic: bool = False            # Sq and Sk dynamic in the signature
    masked_rows: bool = False        # force some rows to be fully masked
    sinks: Optional[str] = None      # "head": [H(, G)], "batch_head": [B, H]

    @property
    def out(self) -> str:
        return self.out_dtype or self.dtype

    @property
    def acc(self) -> str:
        # Q, K and V decide the accumulator, not the output (the ops'
        # contract).
        return "f64" if self.dtype == "f64" else "f32"

    @property
    def loops(self) -> list[str]:
        g = ["g"] if self.group > 1 else []
        if self.layout == "bhsd":
            return ["b", "h", *g, "m", "k1", "k2", "n"]
        return ["b", "m", "h", *g, "k1", "k2", "n"]

    def extent(self, loop: str) -> int:
        return {"b": self.batch, "h": self.kv_heads, "g": self.group,
                "m": self.queries, "k1": self.head_dim, "k2": self.keys,
                "n": self.value_dim}[loop]

    def dims(self, operand: str) -> list[str]:
        """The loops indexing each operand's dims, in order."""
        g = ["g"] if self.group > 1 else []
        bhsd = self.layout == "bhsd"
        if operand == "query":
            return ["b", "h", *g, "m", "k1"] if bhsd else ["b", "m", "h", *g,
                                                           "k1"]
        if operand == "key":
            return ["b", "h", "k2", "k1"] if bhsd else ["b", "k2", "h", "k1"]
        if operand == "value":
            return ["b", "h", "k2", "n"] if bhsd else ["b", "k2", "h", "n"]
        if operand == "mask":
            if self.mask_dims == "qk":
                return ["m", "k2"]
            return self.score_dims
        if operand == "positions":
            return ["b", "m"]
        if operand == "sinks":
            heads = ["h", *g]
            return (["b"] if self.sinks == "batch_head" else []) + heads
        if operand in ("out", "acc"):
            return ["b", "h", *g, "m", "n"] if bhsd else ["b", "m", "h", *g,
                                                          "n"]
        if operand == "row":
            return [d for d in self.dims("out") if d != "n"]
        raise KeyError(operand)

    @property
    def score_dims(self) -> list[str]:
        return [d for d in self.loops if d not in ("k1", "n")]

    def shape(self, operand: str) -> tuple[int, ...]:
        return tuple(self.extent(d) for d in self.dims(operand))


def _tensor(cfg: Config, operand: str, element: str) -> str:
    sizes = ["?" if cfg.dynamic and d in ("m", "k2") else str(cfg.extent(d))
             for d in cfg.dims(operand)]
    return f"tensor<{'x'.join(sizes + [element])}>"


def _map(cfg: Config, operand: str) -> str:
    return (f"affine_map<({', '.join(cfg.loops)}) -> "
            f"({', '.join(cfg.dims(operand))})>")


def _float(x: float) -> str:
    return f"{x:.17e}"


def _region(cfg: Config) -> str:
    if cfg.region is None:
        return ""
    a = cfg.acc
    args = ", ".join([f"%s: {a}"] + [f"%i_{d}: index" for d in
                                      cfg.score_dims])
    lines = [f"^bb0({args}):"]
    if cfg.region == "softcap":
        lines += [f"%c = arith.constant {_float(cfg.softcap)} : {a}",
                  f"%d = arith.divf %s, %c : {a}",
                  f"%t = math.tanh %d : {a}",
                  f"%r = arith.mulf %t, %c : {a}"]
    else:
        # slope(h, g) = -(0.05 (h + 1) + 0.01 g), times (k2 - m).
        lines += ["%hi = arith.index_cast %i_h : index to i64",
                  f"%hf = arith.sitofp %hi : i64 to {a}",
                  f"%one = arith.constant 1.0 : {a}",
                  f"%h1 = arith.addf %hf, %one : {a}",
                  f"%c5 = arith.constant -5.0e-02 : {a}",
                  f"%sl0 = arith.mulf %h1, %c5 : {a}"]
        if cfg.group > 1:
            lines += ["%gi = arith.index_cast %i_g : index to i64",
                      f"%gf = arith.sitofp %gi : i64 to {a}",
                      f"%c1 = arith.constant -1.0e-02 : {a}",
                      f"%gs = arith.mulf %gf, %c1 : {a}",
                      f"%sl = arith.addf %sl0, %gs : {a}"]
        else:
            lines += [f"%sl = arith.addf %sl0, %sl0 : {a}"]
        lines += ["%dk = arith.subi %i_k2, %i_m : index",
                  "%di = arith.index_cast %dk : index to i64",
                  f"%df = arith.sitofp %di : i64 to {a}",
                  f"%bias = arith.mulf %sl, %df : {a}",
                  f"%r = arith.addf %s, %bias : {a}"]
    lines.append(f"rope.yield %r : {a}")
    return " {\n    " + "\n    ".join(lines) + "\n  }"


def emit(cfg: Config, online: bool = False) -> str:
    """A func.func @f running one rope.attention (or, with `online`, one
    rope.online_attention on state arguments) on its arguments."""
    dt, a = cfg.dtype, cfg.acc
    q, k, v = (_tensor(cfg, n, dt) for n in ("query", "key", "value"))
    args = [f"%q: {q}", f"%k: {k}", f"%v: {v}"]
    maps = [_map(cfg, "query"), _map(cfg, "key"), _map(cfg, "value")]
    extra = ""
    if cfg.mask:
        mask_type = _tensor(cfg, "mask", "i1" if cfg.mask == "i1" else dt)
        args.append(f"%mask: {mask_type}")
        maps.append(_map(cfg, "mask"))
        extra += f" mask(%mask : {mask_type})"
    if cfg.positions:
        pos_type = _tensor(cfg, "positions", "i32")
        args.append(f"%pos: {pos_type}")
        maps.append(_map(cfg, "positions"))
        extra += f" query_positions(%pos : {pos_type})"
    if cfg.query_offset is not None:
        args.append("%qoff: index")
        extra += " query_offset(%qoff)"
    if cfg.key_offset is not None:
        args.append("%koff: index")
        extra += " key_offset(%koff)"
    if cfg.sinks and not online:
        sink_type = _tensor(cfg, "sinks", dt)
        args.append(f"%sinks: {sink_type}")
        maps.append(_map(cfg, "sinks"))
        extra += f" sinks(%sinks : {sink_type})"
    maps.append(_map(cfg, "acc" if online else "out"))
    attrs = [f"indexing_maps = [{', '.join(maps)}]",
             f"scale = {_float(cfg.scale)} : f64"]
    if cfg.causal:
        attrs.append("causal")
    if cfg.window is not None:
        attrs.append(f"window = {cfg.window} : i64")
    if cfg.group > 1:
        attrs.append(f"query_dim = {cfg.loops.index('m')} : i64")
    attributes = "{" + ", ".join(attrs) + "}"
    region = _region(cfg)
    if online:
        acc_t, row_t = _tensor(cfg, "acc", a), _tensor(cfg, "row", a)
        args += [f"%acc: {acc_t}", f"%max: {row_t}", f"%sum: {row_t}"]
        body = (
            f"  %res:3 = rope.online_attention ins(%q, %k, %v : {q}, {k}, {v})"
            f"{extra} outs(%acc, %max, %sum : {acc_t}, {row_t}, {row_t}) "
            f"attributes {attributes}{region} -> {acc_t}, {row_t}, {row_t}\n"
            f"  return %res#0, %res#1, %res#2 : {acc_t}, {row_t}, {row_t}")
        results = f"{acc_t}, {row_t}, {row_t}"
    else:
        o = _tensor(cfg, "out", cfg.out)
        dynamic = []
        body = ""
        if cfg.dynamic:
            body = (f"  %mdim = arith.constant "
                    f"{cfg.dims('query').index('m')} : index\n"
                    f"  %sq = tensor.dim %q, %mdim : {q}\n")
            dynamic = ["%sq"]
        body += (
            f"  %init = tensor.empty({', '.join(dynamic)}) : {o}\n"
            f"  %o = rope.attention ins(%q, %k, %v : {q}, {k}, {v}){extra} "
            f"outs(%init : {o}) attributes {attributes}{region} -> {o}\n"
            f"  return %o : {o}")
        results = o
    return (f"func.func @f({', '.join(args)}) -> ({results}) {{\n{body}\n}}\n")


# -- The float64 reference -----------------------------------------------------

def _canonical(cfg: Config, operand: str, x: np.ndarray) -> np.ndarray:
    """`x` as float64 with its dims in the order (b, h, g, m|k2, k1|n|k2),
    a missing g as size 1."""
    x = np.asarray(x).astype(np.float64) if x.dtype != np.bool_ else x
    dims = cfg.dims(operand)
    if "g" not in dims and operand in ("query", "out", "acc", "row", "mask"):
        if "h" in dims:
            at = dims.index("h") + 1
            x = np.expand_dims(x, at)
            dims = dims[:at] + ["g"] + dims[at:]
    order = [d for d in ("b", "h", "g", "m", "k2", "k1", "n") if d in dims]
    return np.transpose(x, [dims.index(d) for d in order])


def _from_canonical(cfg: Config, operand: str, x: np.ndarray) -> np.ndarray:
    dims = cfg.dims(operand)
    full = dims if "g" in dims else (
        dims[:dims.index("h") + 1] + ["g"] + dims[dims.index("h") + 1:])
    order = [d for d in ("b", "h", "g", "m", "k2", "k1", "n") if d in full]
    x = np.transpose(x, [order.index(d) for d in full])
    if "g" not in dims:
        x = np.squeeze(x, full.index("g"))
    return x


def reference_scores(cfg: Config, q, k, mask=None, pos=None, qoff=None,
                     koff=None) -> np.ndarray:
    """Masked scores [B, H, G, Sq, Sk] in float64 (steps 1-3 of the op)."""
    q = _canonical(cfg, "query", q)          # b h g m k1
    k = _canonical(cfg, "key", k)            # b h k2 k1
    s = cfg.scale * np.einsum("bhgmd,bhjd->bhgmj", q, k)
    B, H, G, Sq, Sk = s.shape
    i = np.arange(Sq)[:, None]
    j = np.arange(Sk)[None, :]
    if cfg.region == "softcap":
        s = cfg.softcap * np.tanh(s / cfg.softcap)
    elif cfg.region == "alibi":
        h = np.arange(H)[:, None, None, None]
        g = np.arange(G)[None, :, None, None]
        slope = -0.05 * (h + 1)
        slope = slope - 0.01 * g if cfg.group > 1 else 2 * slope
        s = s + slope * (j - i)
    if cfg.mask:
        if cfg.mask_dims == "qk":
            m = np.asarray(mask)
            m = m.astype(np.float64) if m.dtype != np.bool_ else m
        else:
            m = _canonical(cfg, "mask", mask)    # b h g m k2
        if cfg.mask == "i1":
            s = np.where(m, s, -np.inf)
        else:
            s = s + m
    if cfg.causal:
        if cfg.positions:
            qpos = np.asarray(pos, np.int64)[:, None, None, :, None]
        else:
            base = cfg.keys - cfg.queries if qoff is None else qoff
            qpos = base + i
        kpos = (koff or 0) + j
        keep = kpos <= qpos
        if cfg.window is not None:
            keep = keep & (kpos > qpos - cfg.window)
        s = np.where(keep, s, -np.inf)
    return s


def _canonical_sinks(cfg: Config, sinks, shape) -> np.ndarray:
    """The sinks as float64 [B, H, G, Sq, 1] (broadcast over what they
    lack)."""
    t = np.asarray(sinks).astype(np.float64)
    dims = cfg.dims("sinks")
    if "g" not in dims:
        at = dims.index("h") + 1
        t = np.expand_dims(t, at)
        dims = dims[:at] + ["g"] + dims[at:]
    if "b" not in dims:
        t = t[None]
    return np.broadcast_to(t[..., None, None], shape[:-1] + (1,))


def reference(cfg: Config, q, k, v, mask=None, pos=None, qoff=None,
              koff=None, sinks=None) -> np.ndarray:
    s = reference_scores(cfg, q, k, mask, pos, qoff, koff)
    if sinks is not None:
        # Softmax over [scores, sink] (the sink column joins the max and
        # the denominator), then the sink column dropped: how gpt-oss
        # writes it, not how the op computes it.
        s = np.concatenate([s, _canonical_sinks(cfg, sinks, s.shape)], -1)
    with np.errstate(invalid="ignore"):
        p = np.exp(s - s.max(-1, keepdims=True))  # all −inf: NaN
        p = p / p.sum(-1, keepdims=True)
        if sinks is not None:
            p = p[..., :-1]
        o = np.einsum("bhgmj,bhjn->bhgmn", p, _canonical(cfg, "value", v))
    return _from_canonical(cfg, "out", o)


def reference_online(cfg: Config, q, k, v, acc, mx, sm, mask=None, pos=None,
                     qoff=None, koff=None):
    s = reference_scores(cfg, q, k, mask, pos, qoff, koff)
    acc = _canonical(cfg, "acc", acc)
    mx = _canonical(cfg, "row", mx)
    sm = _canonical(cfg, "row", sm)
    new_max = np.maximum(mx, s.max(-1))
    shift = np.where(new_max == -np.inf, 0.0, new_max)
    p = np.exp(s - shift[..., None])
    rescale = np.exp(mx - shift)
    new_acc = acc * rescale[..., None] + np.einsum(
        "bhgmj,bhjn->bhgmn", p, _canonical(cfg, "value", v))
    new_sum = sm * rescale + p.sum(-1)
    return (_from_canonical(cfg, "acc", new_acc),
            _from_canonical(cfg, "row", new_max),
            _from_canonical(cfg, "row", new_sum))


# -- Inputs, running, comparing ------------------------------------------------

def inputs(cfg: Config, seed: int) -> tuple[list, dict]:
    """The arguments in signature order, and as keywords of reference()."""
    rng = np.random.default_rng(seed)
    dt = DTYPES[cfg.dtype]
    q = rng.standard_normal(cfg.shape("query")).astype(dt)
    k = rng.standard_normal(cfg.shape("key")).astype(dt)
    v = rng.standard_normal(cfg.shape("value")).astype(dt)
    args, kw = [q, k, v], {}
    if cfg.mask:
        shape = cfg.shape("mask")
        if cfg.mask == "i1":
            mask = rng.random(shape) < 0.75
            if cfg.masked_rows:
                mask[..., 0, :] = False
        else:
            mask = rng.standard_normal(shape)
            mask[rng.random(shape) < 0.2] = -np.inf
            if cfg.masked_rows:
                mask[..., 0, :] = -np.inf
            mask = mask.astype(dt)
        args.append(mask)
        kw["mask"] = mask
    if cfg.positions:
        pos = rng.integers(-2, cfg.keys + 3, cfg.shape("positions"))
        if cfg.masked_rows:
            pos[:, 0] = -1 - (cfg.key_offset or 0)  # before every key
        pos = pos.astype(np.int32)
        args.append(pos)
        kw["pos"] = pos
    if cfg.query_offset is not None:
        args.append(cfg.query_offset)
        kw["qoff"] = cfg.query_offset
    if cfg.key_offset is not None:
        args.append(cfg.key_offset)
        kw["koff"] = cfg.key_offset
    if cfg.sinks:
        # Logits around the scores' size, one −inf (no sink) where there
        # are several.
        sinks = 2.0 * rng.standard_normal(cfg.shape("sinks"))
        if sinks.size > 1:
            sinks.flat[-1] = -np.inf
        sinks = sinks.astype(DTYPES[cfg.dtype])
        args.append(sinks)
        kw["sinks"] = sinks
    return args, kw


def check(actual, expected, cfg: Config, out: Optional[str] = None):
    """`actual` equals `expected` within the tolerance of `cfg`, NaN exactly
    where the reference has NaN."""
    out = out or cfg.out
    actual = np.asarray(actual).astype(np.float64)
    expected = np.asarray(expected, np.float64)
    assert actual.shape == expected.shape
    nan = np.isnan(expected)
    assert np.array_equal(np.isnan(actual), nan), (
        f"NaN at {np.argwhere(np.isnan(actual) != nan)[:4].tolist()} "
        f"(expected NaN in {int(nan.sum())} places)")
    finite = ~nan
    if not finite.any():
        return
    same_inf = np.isinf(expected) & (actual == expected)
    check_at = finite & ~same_inf
    if not check_at.any():
        return
    magnitude = np.abs(expected[check_at]).max()
    ulp = 0.0 if out == cfg.acc else ULP[out]
    tolerance = (ACC_TOLERANCE[cfg.acc] * magnitude
                 + ulp * np.abs(expected[check_at]))
    error = np.abs(actual[check_at] - expected[check_at])
    worst = np.argmax(error - tolerance)
    assert (error <= tolerance).all(), (
        f"error {error[worst]:.3e} > {tolerance[worst]:.3e} "
        f"(max|ref| {magnitude:.3e})")


def run(text: str, args, schedule: Optional[str] = None, tmp_path=None):
    prefix = ""
    if schedule is not None:
        path = pathlib.Path(tmp_path) / "schedule.mlir"
        path.write_text(schedule)
        prefix = (f"transform-preload-library{{transform-library-paths="
                  f"{path}}}, transform-interpreter, canonicalize, ")
    module = rope_mlir.jit(text, pipeline=PIPELINE.format(prefix))
    return module.function("f")(*args)


def random_config(seed: int) -> Config:
    r = np.random.default_rng(1000 + seed)
    pick = lambda *xs: xs[int(r.integers(len(xs)))]  # noqa: E731
    dtype = pick("f16", "bf16", "f32", "f32", "f32", "f64")
    out = dtype if r.random() < 0.75 else pick("f16", "f32", "f64")
    causal = r.random() < 0.5
    window = int(r.integers(1, 5)) if causal and r.random() < 0.4 else None
    positions = causal and r.random() < 0.3
    queries = int(pick(1, 3, 4, 7))
    keys = int(pick(1, 5, 8, 11))
    mask = pick(None, None, "float", "i1")
    return Config(
        dtype=dtype, out_dtype=out, layout=pick("bhsd", "bshd"),
        batch=int(pick(1, 2)), kv_heads=int(pick(1, 2, 3)),
        group=int(pick(1, 1, 2, 4)), queries=queries, keys=keys,
        head_dim=int(pick(4, 8, 16, 32)), value_dim=int(pick(4, 8, 12)),
        scale=float(r.uniform(0.05, 0.8)), mask=mask,
        mask_dims=pick("full", "qk"), causal=causal, window=window,
        query_offset=(int(r.integers(-1, 6)) if causal and not positions
                      and r.random() < 0.5 else None),
        key_offset=(int(r.integers(0, 4)) if causal and r.random() < 0.4
                    else None),
        positions=positions, region=pick(None, None, "softcap", "alibi"),
        dynamic=r.random() < 0.2,
        masked_rows=mask is not None and r.random() < 0.3)


# -- Tests ---------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(44))
def test_random_configurations(seed):
    cfg = random_config(seed)
    args, kw = inputs(cfg, seed)
    check(run(emit(cfg), args), reference(cfg, *args[:3], **kw), cfg)


NAMED = {
    "plain": Config(),
    "gqa_bhsd": Config(group=4, queries=5, causal=True),
    "gqa_bshd": Config(layout="bshd", group=2, kv_heads=3, causal=True,
                       window=3),
    "dv_ne_d": Config(head_dim=16, value_dim=4),
    "f64_alibi": Config(dtype="f64", region="alibi", group=2),
    "f16_softcap": Config(dtype="f16", region="softcap", softcap=1.5),
    "bf16_i1_mask": Config(dtype="bf16", mask="i1"),
    "f16_in_f64_out": Config(dtype="f16", out_dtype="f64", causal=True),
    "f64_in_f16_out": Config(dtype="f64", out_dtype="f16", mask="float"),
    "decode_positions": Config(queries=1, keys=9, causal=True, window=4,
                               positions=True, key_offset=2),
    "offsets": Config(causal=True, query_offset=3, key_offset=1),
    "dynamic": Config(dynamic=True, causal=True, region="alibi"),
    # Rows whose every key is masked: 0/0.
    "masked_rows_i1": Config(mask="i1", masked_rows=True),
    "masked_rows_float": Config(mask="float", mask_dims="qk",
                                masked_rows=True),
    "masked_rows_causal": Config(causal=True, query_offset=-2),
    "masked_rows_positions": Config(causal=True, positions=True,
                                    masked_rows=True),
    # Whole tiles of the CPU kernels' own sizes (32 queries x 64 keys,
    # head_dim 128, a GQA group of 4 sharing K and V): Q·Kᵀ as the outer
    # product over K packed once per key tile (static tiles only: with a
    # tail every tile has dynamic sizes and the dot form); bf16 inputs
    # widened to the f32 accumulator inside the register tiles.
    "f32_kernel_tiles": Config(group=4, queries=96, keys=128, head_dim=128,
                               value_dim=128, causal=True, scale=0.09),
    "bf16_kernel_tiles": Config(dtype="bf16", group=4, queries=96,
                                keys=128, head_dim=128, value_dim=128,
                                causal=True, scale=0.09),
    "bf16_kernel_tiles_bshd": Config(dtype="bf16", layout="bshd", group=2,
                                     queries=64, keys=128, head_dim=64,
                                     value_dim=64, mask="float",
                                     scale=0.125),
}


@pytest.mark.parametrize("name", NAMED)
def test_named_configurations(name):
    cfg = NAMED[name]
    args, kw = inputs(cfg, 7)
    expected = reference(cfg, *args[:3], **kw)
    if name.startswith("masked_rows"):
        assert np.isnan(expected).any() and not np.isnan(expected).all()
    check(run(emit(cfg), args), expected, cfg)


def online_state(cfg: Config, seed: int):
    """A running state with some rows never seen a key (max −inf, acc and
    sum 0)."""
    rng = np.random.default_rng(seed + 1)
    dt = DTYPES[cfg.acc]
    mx = rng.standard_normal(cfg.shape("row"))
    sm = rng.uniform(0.5, 3.0, cfg.shape("row"))
    acc = rng.standard_normal(cfg.shape("acc"))
    fresh = rng.random(cfg.shape("row")) < 0.3
    mx[fresh], sm[fresh] = -np.inf, 0.0
    acc[fresh] = 0.0
    return acc.astype(dt), mx.astype(dt), sm.astype(dt)


def check_online(cfg: Config, results, args, kw, state):
    expected = reference_online(cfg, *args[:3], *state, **kw)
    for actual, want in zip(results, expected):
        check(actual, want, cfg, out=cfg.acc)


ONLINE = {
    "plain": Config(keys=10),
    "causal_gqa_bshd": Config(layout="bshd", group=2, keys=10, causal=True,
                              region="alibi", mask="float"),
    "f64_window_positions": Config(dtype="f64", keys=10, causal=True,
                                   window=3, positions=True, key_offset=1),
}

# Tile sizes per loop (name -> size); the others are whole.
TILES = {"attention_for": ("rope.attention", "tile_using_for",
                           {"b": 1, "m": 3, "n": 4}),
         "attention_forall": ("rope.attention", "tile_using_forall",
                              {"h": 1, "m": 2}),
         "online_keys": ("rope.online_attention", "tile_using_for",
                         {"k2": 3}),
         "online_queries_keys": ("rope.online_attention", "tile_using_for",
                                 {"m": 3, "k2": 4})}


def schedule(cfg: Config, op: str, how: str, tiles: dict) -> str:
    sizes = [tiles.get(d, 0) for d in cfg.loops]
    loops = sum(1 for s in sizes if s)
    if how == "tile_using_forall":
        results, loops = "!transform.any_op, !transform.any_op", 1
    else:
        results = ", ".join(["!transform.any_op"] * (loops + 1))
    handles = "%t, %l" if how == "tile_using_forall" else (
        "%t" + "".join(f", %l{i}" for i in range(loops)))
    return f"""
module attributes {{transform.with_named_sequence}} {{
  transform.named_sequence @__transform_main(%root: !transform.any_op {{transform.readonly}}) {{
    %op = transform.structured.match ops{{["{op}"]}} in %root : (!transform.any_op) -> !transform.any_op
    {handles} = transform.structured.{how} %op tile_sizes {sizes} : (!transform.any_op) -> ({results})
    transform.yield
  }}
}}
"""


@pytest.mark.parametrize("name", ONLINE)
def test_online_attention(name):
    cfg = ONLINE[name]
    args, kw = inputs(cfg, 3)
    state = online_state(cfg, 3)
    check_online(cfg, run(emit(cfg, online=True), [*args, *state]), args, kw,
                 state)


@pytest.mark.parametrize("tiling", TILES)
@pytest.mark.parametrize("name", ["causal_gqa_bshd", "f64_window_positions",
                                  "plain"])
def test_tiled(tiling, name, tmp_path):
    """Tiles keep positions and the region's indices absolute; key tiles of
    the online step thread acc/max/sum through the loop."""
    op, how, tiles = TILES[tiling]
    cfg = ONLINE[name]
    args, kw = inputs(cfg, 5)
    script = schedule(cfg, op, how, tiles)
    if op == "rope.attention":
        result = run(emit(cfg), args, script, tmp_path)
        check(result, reference(cfg, *args[:3], **kw), cfg)
    else:
        state = online_state(cfg, 5)
        result = run(emit(cfg, online=True), [*args, *state], script,
                     tmp_path)
        check_online(cfg, result, args, kw, state)


def test_tiled_ir_is_tiled(tmp_path):
    """The tiled modules above really loop: the schedule leaves an scf.for
    over key tiles around the online step (checked on rope-opt's output)."""
    import subprocess
    cfg = ONLINE["causal_gqa_bshd"]
    path = tmp_path / "schedule.mlir"
    path.write_text(schedule(cfg, "rope.online_attention", "tile_using_for",
                             {"k2": 3}))
    opt = pathlib.Path(rope_mlir.__file__).resolve().parents[2] / "build" / \
        "bin" / "rope-opt"
    if not opt.exists():
        pytest.skip("rope-opt not built")
    out = subprocess.run(
        [str(opt), "-", "--pass-pipeline=builtin.module(transform-preload-"
         f"library{{transform-library-paths={path}}}, transform-interpreter,"
         " canonicalize)"], input=emit(cfg, online=True), text=True,
        capture_output=True, check=True).stdout
    assert "scf.for" in out and "key_offset(" in out, out


# -- Attention sinks -----------------------------------------------------------

SINKS = {
    "plain": Config(sinks="head", keys=7),
    "gqa_causal": Config(sinks="head", group=4, queries=5, keys=9,
                         causal=True),
    "gqa_bshd_window": Config(sinks="batch_head", layout="bshd", batch=2,
                              group=2, kv_heads=3, queries=6, keys=10,
                              causal=True, window=3),
    # Decode: one query per row at its own position in a longer cache.
    "decode_positions": Config(sinks="head", group=2, queries=1, keys=13,
                               causal=True, positions=True, batch=2),
    "f64_softcap_mask": Config(sinks="batch_head", dtype="f64", batch=2,
                               region="softcap", mask="float", keys=8),
    "bf16_f32_out": Config(sinks="head", dtype="bf16", out_dtype="f32",
                           causal=True, keys=6),
    "dynamic": Config(sinks="head", dynamic=True, causal=True, keys=9),
    # Rows with every key masked: the sink takes all the weight (0, not NaN)
    # unless the row's sink is -inf.
    "masked_rows": Config(sinks="head", kv_heads=3, mask="i1",
                          masked_rows=True),
    "masked_rows_causal": Config(sinks="head", causal=True, queries=6,
                                 keys=4, query_offset=-2),
}


@pytest.mark.parametrize("name", SINKS)
def test_sinks(name):
    """rope.attention with sinks against softmax over [scores, sink] with
    the sink column dropped, in float64."""
    cfg = SINKS[name]
    for seed in (11, 12):
        args, kw = inputs(cfg, seed)
        expected = reference(cfg, *args[:3], **kw)
        if name.startswith("masked_rows"):
            # Some rows are fully masked: 0 with a finite sink, NaN with a
            # sink of -inf; both occur.
            assert np.isnan(expected).any() and not np.isnan(expected).all()
        check(run(emit(cfg), args), expected, cfg)


@pytest.mark.parametrize("tiles", ["q2_k3", "q1_k1", "k4"])
@pytest.mark.parametrize("name", ["gqa_causal", "gqa_bshd_window",
                                  "decode_positions", "masked_rows_causal"])
def test_sinks_tiled(name, tiles):
    """Through rope-tile-attention (queries tiled, the online step tiled
    along the keys, masked key tiles skipped): the sink is counted once per
    row however the keys are tiled."""
    q, k = {"q2_k3": (2, 3), "q1_k1": (1, 1), "k4": (0, 4)}[tiles]
    cfg = SINKS[name]
    args, kw = inputs(cfg, 21)
    pipeline = PIPELINE.format(
        f"func.func(rope-tile-attention{{query-tile-size={q} "
        f"key-tile-size={k}}}), canonicalize, ")
    module = rope_mlir.jit(emit(cfg), pipeline=pipeline)
    check(module.function("f")(*args), reference(cfg, *args[:3], **kw), cfg)


def test_sinks_change_the_result():
    """The sinks are not ignored: with the sink operand dropped the same
    inputs give a different output (the check above would catch an op that
    lost them)."""
    cfg = SINKS["gqa_causal"]
    args, kw = inputs(cfg, 5)
    with_sinks = run(emit(cfg), args)
    plain = dataclasses.replace(cfg, sinks=None)
    without = run(emit(plain), args[:-1])
    assert np.abs(np.asarray(with_sinks) - np.asarray(without)).max() > 1e-3
    check(without, reference(plain, *args[:3]), plain)


# -- Key tiles masked by finfo.min (not -inf) ---------------------------------
# Frontends mask with torch.finfo(dtype).min, not -inf. rope-tile-attention
# skips a key tile whose mask is <= -2^126 everywhere when every row of the
# query tile has a key above that (SkipMaskedKeyTiles.cpp states why that is
# exact). The proof here: the same module run on the same inputs with the
# masked entries at -2^125 instead (above the threshold: nothing skipped) gives
# the same bits, and both match float64. A row masked everywhere is a softmax
# over its masked keys (uniform), not a NaN: the query tile holding it skips
# nothing.

FINFO_CASES = {
    # name: (dtype, mask_dims, queries, keys, a row fully masked)
    "f32_causal": ("f32", "qk", 12, 16, False),
    "f32_full_dims": ("f32", "full", 9, 13, False),
    "bf16_causal": ("bf16", "qk", 12, 16, False),
    "f64_causal": ("f64", "qk", 8, 12, False),
    "f32_masked_row": ("f32", "qk", 12, 16, True),
}


def _finfo_mask(cfg: Config, rng, fill: float, masked_row: bool):
    """HF's causal mask (bottom-right aligned) with random finite biases on
    visible keys; masked entries `fill`."""
    shape = cfg.shape("mask")
    visible = (np.arange(cfg.keys)[None, :]
               <= np.arange(cfg.queries)[:, None] + cfg.keys - cfg.queries)
    visible = np.broadcast_to(visible, shape)
    bias = 0.5 * rng.standard_normal(shape)
    mask = np.where(visible, bias, fill)
    if masked_row:
        mask[..., 5, :] = fill
    return mask.astype(DTYPES[cfg.dtype])


@pytest.mark.parametrize("name", list(FINFO_CASES))
def test_finfo_min_masked_tiles_skipped_exactly(name):
    dtype, dims, queries, keys, masked_row = FINFO_CASES[name]
    cfg = Config(dtype=dtype, mask="float", mask_dims=dims, queries=queries,
                 keys=keys, kv_heads=2, batch=1)
    args, _ = inputs(cfg, 31)
    rng = np.random.default_rng(3)
    finfo_min = float(np.finfo(np.float32).min) if dtype != "f64" else float(
        np.finfo(np.float64).min)
    masked = _finfo_mask(cfg, rng, finfo_min, masked_row)
    above = _finfo_mask(cfg, np.random.default_rng(3), -2.0 ** 125,
                        masked_row)
    pipeline = PIPELINE.format(
        "func.func(rope-tile-attention{query-tile-size=4 key-tile-size=4}), "
        "canonicalize, ")
    text = emit(cfg)
    # The threshold test is there: the tiles' max mask against -2^126.
    tiled = _jit.lower(text, "builtin.module(func.func(rope-tile-attention{"
                       "query-tile-size=4 key-tile-size=4}), canonicalize)")
    assert "arith.cmpf ugt" in tiled and "-8.507059" in tiled, tiled
    module = rope_mlir.jit(text, pipeline=pipeline)
    fn = module.function("f")
    got = np.asarray(fn(*args[:3], masked))
    unskipped = np.asarray(fn(*args[:3], above))
    assert np.array_equal(got.view(np.uint8), unskipped.view(np.uint8))
    check(got, reference(cfg, *args[:3], mask=masked), cfg)
    if masked_row:
        assert np.isfinite(got).all()
