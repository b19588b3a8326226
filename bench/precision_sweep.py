#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Precision sweep of `rope.apply` (computed cos/sin) against the float64 reference.

Checks SEMANTICS.md §5 for every frequency scheme of §4, every data type and both pair layouts, at positions
0 .. 2^24 chosen to include the hard cases. See docs/PRECISION.md for the contract, the method, the
metric and a measured table.

    python3 bench/precision_sweep.py --write-docs  # full sweep; rewrites the Measured region of docs/PRECISION.md
    python3 bench/precision_sweep.py               # full sweep, the report on stdout (< 3 min on a 2-core x86 CPU)
    python3 bench/precision_sweep.py --quick       # smaller sample (< 30 s); what the pytest runs

Metrics (r = float64 reference `rope_mlir.reference.apply` on the same input, y = kernel output):
  pair   max over rotated pairs of |(y1, y2) - (r1, r2)| / |(r1, r2)|  (pairs with |r| > 1e-30);
         a rotation error of delta radians gives exactly 2|sin(delta/2)| ~ |delta|, whatever the angle.
  call   max|y - r| / max|r| over the whole call (reference.relative_error).
  ulp    f16/bf16 only: distance, in steps of the output type, between y and the float64 reference
         correctly rounded to that type (rounded here by round-to-odd through f32, since ml_dtypes
         rounds f64 -> bf16 through f32 and can be off by one itself); max, fraction of exactly rounded
         outputs, fraction within 1 ulp, and "contract": y must lie in [rd(r - e|pair|), rd(r + e|pair|)]
         with e = 2^-20, i.e. y is the rounding of some value within the f32 tolerance of r (this is
         the meaning of "computed in f32 and rounded once").
Pass-through channels [P, D) must be bit-identical to the input.
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import pathlib
import platform
import subprocess
import sys
import time
from fractions import Fraction
from typing import Dict, List, Optional

import ml_dtypes
import numpy as np

import rope_mlir
from rope_mlir import reference

from _source import replace_region as write_region, source_line  # bench/ is the script's directory

TWO_24 = 1 << 24
# 2*pi to 80 digits, for the exact continued-fraction search of near-multiples of 2*pi/theta.
_TWO_PI = Fraction("6.2831853071795864769252867665590057683943387987502116419498891846156328125724179972560696")

NP_DTYPES = {
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
}
# Bounds asserted by python/tests/numerics/test_precision.py (see docs/PRECISION.md for why).
F32_PAIR_BOUND = 1e-6          # SEMANTICS.md §5
F64_PAIR_BOUND = 1e-12
F64_ANGLE_ULPS = 8             # f64: error <= 8 * 2^-53 * max(|phi|, 1) * (1 + |ln theta_i|)
SMALL_POS = 4096               # f64: positions where the absolute 1e-12 bound applies
HALF_ULP_BOUND = 1             # f16/bf16: within 1 ulp of the correctly rounded reference (non-cancelling)
CONTRACT_EPS = 2.0 ** -20      # f16/bf16 contract bracket: rounding of a value within 2^-20 |pair| of r
# An output element counts as "cancelling" when |r| < 2^-8 |pair|: its own ulp is then finer than the f32
# error the contract allows, so ulp distance there says nothing about the kernel (docs/PRECISION.md).
CANCEL_RATIO = 2.0 ** -8


# ----------------------------------------------------------------------------------------------------------
# Schemes
# ----------------------------------------------------------------------------------------------------------


def _fmt(v: float) -> str:
    return "%.17e" % float(v)


def _arr(values) -> str:
    return "[" + ", ".join(_fmt(v) for v in values) + "]"


def schemes() -> List[dict]:
    """Each scheme: name, D, P, base, scaling dict (reference), freqs text (kernel), pos_max (inclusive)."""
    out = []

    def add(name, freqs, scaling, base, d=128, p=None, pos_max=TWO_24, note=""):
        out.append(dict(name=name, freqs=freqs, scaling=scaling, base=base, D=d, P=p if p else d,
                        pos_max=pos_max, note=note))

    add("default", "#rope.default<base = 10000.0>", None, 10000.0)
    add("default_p32", "#rope.default<base = 10000.0>", None, 10000.0, p=32,
        note="partial rotary: P=32 of D=128")
    add("linear", "#rope.linear<base = 10000.0, factor = 4.0>",
        {"rope_type": "linear", "factor": 4.0}, 10000.0)
    add("ntk", "#rope.ntk<base = 10000.0, factor = 8.0>", {"rope_type": "ntk", "factor": 8.0}, 10000.0)
    add("dynamic_ntk",
        "#rope.dynamic_ntk<base = 10000.0, factor = 2.0, max_position_embeddings = 4096>",
        {"rope_type": "dynamic", "factor": 2.0, "max_position_embeddings": 4096}, 10000.0,
        note="call length 2^24+1 >> M = 4096")
    add("yarn",
        "#rope.yarn<base = 1000000.0, factor = 4.0, original_max_position_embeddings = 32768>",
        {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}, 1e6,
        note="Qwen-style, a = g(4)")
    add("yarn_deepseek",
        "#rope.yarn<base = 10000.0, factor = 40.0, original_max_position_embeddings = 4096, "
        "beta_fast = 32.0, beta_slow = 1.0, mscale = 1.0, mscale_all_dim = 0.707>",
        {"rope_type": "yarn", "factor": 40.0, "original_max_position_embeddings": 4096,
         "beta_fast": 32.0, "beta_slow": 1.0, "mscale": 1.0, "mscale_all_dim": 0.707}, 10000.0, d=64,
        note="DeepSeek-style: D=P=64, a = g(40,1)/g(40,0.707)")
    add("llama3",
        "#rope.llama3<base = 500000.0, factor = 8.0, low_freq_factor = 1.0, high_freq_factor = 4.0, "
        "original_max_position_embeddings = 8192>",
        {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
         "original_max_position_embeddings": 8192}, 500000.0, note="Llama 3.1 values")
    half = 64
    short = np.linspace(1.0, 1.25, half)
    long_ = np.geomspace(1.0, 64.0, half)
    lr_text = ("#rope.longrope<base = 10000.0, short_factor = %s, long_factor = %s, "
               "original_max_position_embeddings = 4096, factor = 32.0>" % (_arr(short), _arr(long_)))
    lr_scaling = {"rope_type": "longrope", "short_factor": short.tolist(), "long_factor": long_.tolist(),
                  "original_max_position_embeddings": 4096, "factor": 32.0}
    add("longrope_short", lr_text, lr_scaling, 10000.0, pos_max=4095,
        note="short branch: call length <= L = 4096")
    add("longrope_long", lr_text, lr_scaling, 10000.0, note="long branch: call length 2^24+1 > L")
    add("proportional", "#rope.proportional<base = 10000.0, factor = 1.0, partial_rotary_factor = 0.25>",
        {"rope_type": "proportional", "factor": 1.0, "partial_rotary_factor": 0.25}, 10000.0,
        note="k = 16 of 64 frequencies nonzero")
    return out


def scheme_theta(sc: dict, seq_len: int):
    return reference.inv_frequencies(sc["P"], sc["base"], sc["scaling"], head_dim=sc["D"], seq_len=seq_len)


# ----------------------------------------------------------------------------------------------------------
# Positions
# ----------------------------------------------------------------------------------------------------------


def _convergent_denominators(x: Fraction, limit: int) -> List[int]:
    """Denominators q <= limit of the continued-fraction convergents of x: the k with k*x closest to an
    integer (best approximations), i.e. where k*theta is closest to a multiple of 2*pi."""
    qs = []
    q_prev, q = 1, 0  # q_{-2}, q_{-1}
    frac = x
    for _ in range(64):
        a = math.floor(frac)
        q_prev, q = q, a * q + q_prev
        if q > limit:
            break
        if q > 0:
            qs.append(q)
        rem = frac - a
        if rem == 0:
            break
        frac = 1 / rem
    return qs


def position_sample(theta: np.ndarray, pos_max: int, quick: bool, rng: np.random.Generator) -> Dict[str, np.ndarray]:
    """Positions in [0, pos_max], by origin: special, uniform, worst (near multiples of 2*pi/theta_i)."""
    special = {0, 1, 2, 3, pos_max, max(pos_max - 1, 0)}
    for k in range(1, 25):
        for d in (-1, 0, 1):
            special.add((1 << k) + d)
    special.update({1 << 20, TWO_24 - 1, TWO_24})
    special = np.array(sorted(p for p in special if 0 <= p <= pos_max), dtype=np.int64)

    n_uniform = 1024 if quick else 8192
    uniform = rng.integers(0, pos_max + 1, size=n_uniform, dtype=np.int64)

    nonzero = np.flatnonzero(theta > 0)
    idx = sorted({int(nonzero[j]) for j in
                  np.linspace(0, len(nonzero) - 1, 6 if quick else 12).round().astype(int)} |
                 {int(nonzero[0]), int(nonzero[1]), int(nonzero[-1])})
    worst = set()
    n_large = 4 if quick else 12
    for i in idx:
        th = float(theta[i])
        period = 2.0 * math.pi / th
        n_max = int(pos_max / period)
        if n_max >= 1:
            ns = {n_max, n_max - 1, max(n_max // 2, 1)}
            ns.update(int(n) for n in rng.integers(max(n_max // 2, 1), n_max + 1, size=n_large))
            for n in ns:
                for f in (0.0, 0.25, 0.5, 0.75):
                    k = round((n + f) * period)
                    worst.update((k - 1, k, k + 1))
        # best approximations of multiples of 2*pi over all k <= pos_max (continued fractions)
        for q in _convergent_denominators(Fraction(th) / _TWO_PI, pos_max):
            worst.update((q - 1, q, q + 1))
    worst = np.array(sorted(p for p in worst if 0 <= p <= pos_max), dtype=np.int64)
    return {"special": special, "uniform": uniform, "worst": worst}


# ----------------------------------------------------------------------------------------------------------
# Rounding helpers (f16 / bf16)
# ----------------------------------------------------------------------------------------------------------


def round_f64_to(v: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Correctly rounded (nearest even) float64 -> f16/bf16: round to odd into f32 (exact truncation
    plus a sticky bit), then round to nearest even; f32 has >= 2 more bits than either target, so the
    result equals direct rounding. (ml_dtypes' own f64 -> bf16 cast double-rounds through f32.)"""
    v = np.asarray(v, dtype=np.float64)
    t = v.astype(np.float32)
    over = np.abs(t.astype(np.float64)) > np.abs(v)
    t = np.where(over, np.nextafter(t, np.float32(0)), t).astype(np.float32)
    inexact = t.astype(np.float64) != v
    t = (t.view(np.uint32) | inexact.astype(np.uint32)).view(np.float32)
    return t.astype(dtype)


def _ordinal16(a: np.ndarray) -> np.ndarray:
    bits = a.view(np.uint16).astype(np.int64)
    return np.where(bits & 0x8000, -(bits & 0x7FFF), bits)


def ulp_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Number of representable 16-bit values between a and b (+0 and -0 are the same)."""
    return np.abs(_ordinal16(a) - _ordinal16(b))


# ----------------------------------------------------------------------------------------------------------
# Metrics
# ----------------------------------------------------------------------------------------------------------


def pair_views(a: np.ndarray, p: int, layout: str):
    if layout == "half":
        return a[..., : p // 2], a[..., p // 2: p]
    return a[..., 0:p:2], a[..., 1:p:2]


def pair_error(y: np.ndarray, r: np.ndarray, p: int, layout: str) -> np.ndarray:
    """Per pair |(y1,y2) - (r1,r2)| / |(r1,r2)|, NaN where |r| <= 1e-30; shape [..., P/2]."""
    y1, y2 = pair_views(y.astype(np.float64), p, layout)
    r1, r2 = pair_views(r, p, layout)
    norm = np.hypot(r1, r2)
    err = np.hypot(y1 - r1, y2 - r2)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(norm > 1e-30, err / norm, np.nan)


def naive_f32(x32: np.ndarray, positions: np.ndarray, theta: np.ndarray, a: float, p: int, layout: str):
    """The common approach: angle = f32(pos) * f32(theta) in f32, f32 cos/sin, f32 rotation."""
    ang = positions.astype(np.float32)[:, None] * theta.astype(np.float32)[None, :]
    c = (np.cos(ang) * np.float32(a))[:, None, :]
    s = (np.sin(ang) * np.float32(a))[:, None, :]
    y = x32.copy()
    x1, x2 = pair_views(x32, p, layout)
    y1 = x1 * c - x2 * s
    y2 = x2 * c + x1 * s
    if layout == "half":
        y[..., : p // 2], y[..., p // 2: p] = y1, y2
    else:
        y[..., 0:p:2], y[..., 1:p:2] = y1, y2
    return y


def _max(a) -> float:
    a = np.asarray(a)
    return float(np.nanmax(a)) if a.size and not np.all(np.isnan(a)) else 0.0


# ----------------------------------------------------------------------------------------------------------
# Sweep
# ----------------------------------------------------------------------------------------------------------


def run_case(sc: dict, dtype: str, layout: str, positions: np.ndarray, origin: np.ndarray, heads: int,
             rng: np.random.Generator, magnitude: float, angle: str = "f64") -> dict:
    d, p = sc["D"], sc["P"]
    npdt = NP_DTYPES[dtype]
    s = positions.shape[0]
    x = rng.standard_normal((s, heads, d)).astype(np.float32).astype(npdt)
    kernel = rope_mlir.compile(dtype=dtype, rank=3, head_dim=d, layout=layout,
                               rotary_dim=None if p == d else p, positions="explicit",
                               positions_dtype="i64", freqs=sc["freqs"], magnitude=magnitude,
                               angle=angle)
    y = kernel(x, positions)
    x64 = x.astype(np.float64)
    r = reference.apply(x64, positions, layout=layout, rotary_dim=p, base=sc["base"],
                        scaling=sc["scaling"])
    res = dict(scheme=sc["name"], dtype=dtype, layout=layout, n_positions=int(s),
               n_pairs=int(s * heads * (p // 2)))
    pe = pair_error(y, r, p, layout)                       # [S, H, P/2]
    per_pos = np.nanmax(pe.reshape(s, -1), axis=1) if pe.size else np.zeros(s)
    res["pair"] = _max(per_pos)
    j = int(np.nanargmax(per_pos)) if s else 0
    res["pair_at"] = int(positions[j])
    res["pair_by_origin"] = {o: _max(per_pos[origin == o]) for o in ("special", "uniform", "worst")}
    res["call"] = reference.relative_error(y.astype(np.float64), r)
    if dtype == "f64":
        # f64 is limited by theta_i itself: two correct implementations may hold theta_i one ulp apart
        # (numpy's SIMD pow is not correctly rounded), so the angle may differ by ~|phi| 2^-53.
        theta, _ = scheme_theta(sc, int(positions.max()) + 1)
        phi = np.abs(positions.astype(np.float64)[:, None, None] * theta[None, None, :])
        # theta computed as exp(-2i/P ln b') (dynamic schemes) carries |ln theta| 2^-53 relative error.
        cond = 1.0 + np.abs(np.log(np.where(theta > 0, theta, 1.0)))
        res["angle_ulps"] = _max(pe / (2.0 ** -53 * np.maximum(phi, 1.0) * cond[None, None, :]))
        small = positions <= SMALL_POS
        res["pair_small"] = _max(per_pos[small]) if np.any(small) else 0.0
    res["passthrough_ok"] = bool(np.array_equal(y[..., p:].view(np.uint8), x[..., p:].view(np.uint8)))
    if dtype in ("f16", "bf16"):
        rd = round_f64_to(r, npdt)
        ulps = ulp_distance(y[..., :p], rd[..., :p])
        r1, r2 = pair_views(r, p, layout)
        norm = np.hypot(r1, r2)
        norm_ch = np.concatenate([norm, norm], axis=-1)    # per channel, in pair_views order
        u1, u2 = pair_views(ulps, p, layout)
        ulps_pairs = np.concatenate([u1, u2], axis=-1)
        rr = np.concatenate([r1, r2], axis=-1)
        yy = np.concatenate(pair_views(y.astype(np.float64), p, layout), axis=-1)
        cancelling = np.abs(rr) < CANCEL_RATIO * norm_ch
        res["ulp_max"] = int(ulps.max()) if ulps.size else 0
        res["ulp_max_noncancel"] = int(ulps_pairs[~cancelling].max()) if np.any(~cancelling) else 0
        res["exact_frac"] = float(np.mean(ulps == 0))
        res["within1_frac"] = float(np.mean(ulps <= 1))
        lo = round_f64_to(rr - CONTRACT_EPS * norm_ch, npdt).astype(np.float64)
        hi = round_f64_to(rr + CONTRACT_EPS * norm_ch, npdt).astype(np.float64)
        res["contract_violations"] = int(np.sum((yy < lo) | (yy > hi)))
    if dtype == "f32":
        theta, _ = scheme_theta(sc, int(positions.max()) + 1)
        yn = naive_f32(x, positions, theta, magnitude, p, layout)
        pn = pair_error(yn, r, p, layout)
        pn_pos = np.nanmax(pn.reshape(s, -1), axis=1)
        res["naive_pair"] = _max(pn_pos)
        for k in (20, 24):
            at = positions == (1 << k)
            window = (positions > (1 << (k - 1))) & (positions <= (1 << k))
            res[f"naive_at_2^{k}"] = _max(pn_pos[at]) if np.any(at) else None
            res[f"naive_upto_2^{k}"] = _max(pn_pos[window]) if np.any(window) else None
    return res


def bound_for(dtype: str) -> str:
    return {"f32": "pair<1e-6", "f64": "1e-12 / 8 au", "f16": "<=1ulp*", "bf16": "<=1ulp*"}[dtype]


def holds(res: dict) -> bool:
    if not res["passthrough_ok"]:
        return False
    if res["dtype"] == "f32":
        return res["pair"] < F32_PAIR_BOUND
    if res["dtype"] == "f64":
        return res["pair_small"] < F64_PAIR_BOUND and res["angle_ulps"] <= F64_ANGLE_ULPS
    return res["ulp_max_noncancel"] <= HALF_ULP_BOUND and res["contract_violations"] == 0


def sweep(quick: bool = False, seed: int = 0, dtypes=("f32", "f16", "bf16", "f64"),
          layouts=("half", "interleaved"), only: Optional[List[str]] = None, log=None,
          angle: str = "f64") -> List[dict]:
    rng = np.random.default_rng(seed)
    heads = 1 if quick else 2
    results = []
    for sc in schemes():
        if only and sc["name"] not in only:
            continue
        seq_len = sc["pos_max"] + 1  # every call includes pos_max, so dynamic schemes see this length
        theta, magnitude = scheme_theta(sc, seq_len)
        sample = position_sample(theta, sc["pos_max"], quick, rng)
        positions = np.concatenate([sample[k] for k in ("special", "uniform", "worst")])
        origin = np.concatenate([np.full(len(sample[k]), k, dtype=object)
                                 for k in ("special", "uniform", "worst")])
        assert positions.max() == sc["pos_max"]
        for dtype in dtypes:
            for layout in layouts:
                t0 = time.perf_counter()
                res = run_case(sc, dtype, layout, positions, origin, heads, rng, magnitude, angle)
                res["angle"] = angle
                res["magnitude"] = magnitude
                res["pos_max"] = sc["pos_max"]
                res["seconds"] = time.perf_counter() - t0
                res["ok"] = holds(res)
                results.append(res)
                if log:
                    log(res)
    return results


# ----------------------------------------------------------------------------------------------------------
# Beyond 2^24 (outside the contract): how far the f32 bound keeps holding
# ----------------------------------------------------------------------------------------------------------

BEYOND_EXPONENTS = (24, 28, 30, 31, 32, 34)


def beyond_2_24(quick: bool, rng: np.random.Generator, angle: str = "f64") -> List[dict]:
    """`default` (b = 10^4, D = P = 128), f32, half: max pair error against the float64 reference over
    random positions per octave [2^(e-1), 2^e) for e in BEYOND_EXPONENTS (2000 per octave; quick: 200).
    Both form pos·θ_i in f64 with the same θ_i, so this measures the range reduction and the f32 steps at
    large angles; the product's own rounding (2^-53 |φ|, shared) is not visible here."""
    kernel = rope_mlir.compile(dtype="f32", rank=3, head_dim=128, layout="half", positions="explicit",
                               positions_dtype="i64", freqs="#rope.default<base = 10000.0>", angle=angle)
    count = 200 if quick else 2000
    rows = []
    for e in BEYOND_EXPONENTS:
        positions = rng.integers(1 << (e - 1), 1 << e, size=count, dtype=np.int64)
        x = rng.standard_normal((count, 2, 128)).astype(np.float32)
        y = kernel(x, positions)
        r = reference.apply(x.astype(np.float64), positions, layout="half", base=10000.0)
        pe = pair_error(y, r, 128, "half")
        rows.append(dict(exponent=e, positions=count, pair=_max(pe)))
    return rows


# ----------------------------------------------------------------------------------------------------------
# Report
# ----------------------------------------------------------------------------------------------------------


def _e(v) -> str:
    return "-" if v is None else ("0" if v == 0 else "%.2e" % v)


def table(results: List[dict]) -> str:
    """One row per scheme x dtype (max over both layouts)."""
    rows = {}
    for r in results:
        rows.setdefault((r["scheme"], r["dtype"]), []).append(r)
    head = ("| scheme | dtype | positions (max) | max pair rel. err | at pos | max call err | "
            "f16/bf16: ulp max (non-canc.); f64: err pos<=4096; angle ulps | exact % | bound | holds |")
    lines = [head, "|---" * (head.count("|") - 1) + "|"]
    for (scheme, dtype), rs in rows.items():
        worst = max(rs, key=lambda r: r["pair"])
        npos = rs[0]["n_positions"]
        if dtype in ("f16", "bf16"):
            ulp = "%d (%d)" % (max(r["ulp_max"] for r in rs), max(r["ulp_max_noncancel"] for r in rs))
            exact = "%.3f" % (100 * min(r["exact_frac"] for r in rs))
        elif dtype == "f64":
            ulp = "%s; %.1f au" % (_e(max(r["pair_small"] for r in rs)), max(r["angle_ulps"] for r in rs))
            exact = "-"
        else:
            ulp, exact = "-", "-"
        lines.append("| %s | %s | %d (%d) | %s | %d | %s | %s | %s | %s | %s |" % (
            scheme, dtype, npos, rs[0]["pos_max"], _e(worst["pair"]), worst["pair_at"],
            _e(max(r["call"] for r in rs)), ulp, exact, bound_for(dtype),
            "yes" if all(r["ok"] for r in rs) else "**NO**"))
    return "\n".join(lines)


def naive_table(results: List[dict]) -> str:
    lines = ["| scheme | kernel f32 max | naive f32 max | naive at 2^20 | naive (2^19, 2^20] | "
             "naive at 2^24 | naive (2^23, 2^24] |", "|---|---|---|---|---|---|---|"]
    rows = {}
    for r in results:
        if r["dtype"] == "f32":
            rows.setdefault(r["scheme"], []).append(r)
    for scheme, rs in rows.items():
        def m(key):
            vals = [r[key] for r in rs if r.get(key) is not None]
            return max(vals) if vals else None
        lines.append("| %s | %s | %s | %s | %s | %s | %s |" % (
            scheme, _e(m("pair")), _e(m("naive_pair")), _e(m("naive_at_2^20")), _e(m("naive_upto_2^20")),
            _e(m("naive_at_2^24")), _e(m("naive_upto_2^24"))))
    return "\n".join(lines)


def origin_table(results: List[dict]) -> str:
    lines = ["| scheme | dtype | layout | special | uniform | worst (near k*2pi/theta) |", "|---|---|---|---|---|---|"]
    for r in results:
        if r["dtype"] in ("f32", "f64"):
            o = r["pair_by_origin"]
            lines.append("| %s | %s | %s | %s | %s | %s |" % (r["scheme"], r["dtype"], r["layout"],
                                                             _e(o["special"]), _e(o["uniform"]), _e(o["worst"])))
    return "\n".join(lines)


def _g(v: float) -> str:
    """Two significant digits, exponent without padding: 3.4e-7."""
    if v == 0:
        return "0"
    mant, exp = ("%.1e" % v).split("e")
    return "%se%d" % (mant, int(exp))


def _span(values, fmt=_g) -> str:
    values = [v for v in values if v is not None]
    if not values:
        return "-"
    lo, hi = fmt(min(values)), fmt(max(values))
    return lo if lo == hi else "%s–%s" % (lo, hi)


def summary(results: List[dict], beyond: List[dict]) -> List[str]:
    """The numbers docs/PRECISION.md's prose refers to, computed from the same results as the tables."""
    out = []
    f32 = [r for r in results if r["dtype"] == "f32"]
    if f32:
        per_scheme: Dict[str, float] = {}
        for r in f32:
            per_scheme[r["scheme"]] = max(per_scheme.get(r["scheme"], 0.0), r["pair"])
        worst = max(f32, key=lambda r: r["pair"])
        out.append("- f32: max pair-relative error per scheme %s (bound 1e-6); the largest, %s, is %s/%s at "
                   "position %d." % (_span(per_scheme.values()), _g(worst["pair"]), worst["scheme"],
                                     worst["layout"], worst["pair_at"]))
        out.append("- f32 by position origin, over every scheme and layout: special %s, uniform %s, worst "
                   "(near k·2π/θ_i) %s." % tuple(_span([r["pair_by_origin"][o] for r in f32])
                                                 for o in ("special", "uniform", "worst")))
    for dtype in ("f16", "bf16"):
        rs = [r for r in results if r["dtype"] == dtype]
        if rs:
            out.append("- %s: outputs not exactly rounded %s %% per scheme and layout; max ulp distance %d on "
                       "non-cancelling outputs (bound 1), %d including cancelling ones; contract violations %d." % (
                           dtype, _span([100 * (1 - r["exact_frac"]) for r in rs], lambda v: "%.3f" % v),
                           max(r["ulp_max_noncancel"] for r in rs), max(r["ulp_max"] for r in rs),
                           sum(r["contract_violations"] for r in rs)))
    f64 = [r for r in results if r["dtype"] == "f64"]
    if f64:
        static = [r["pair"] for r in f64 if r["scheme"] != "dynamic_ntk"]
        dynamic = [r["pair"] for r in f64 if r["scheme"] == "dynamic_ntk"]
        out.append("- f64: max pair-relative error %s over the schemes with θ computed at compile time%s; "
                   "at most %.1f angle ulps." % (
                       _g(max(static)) if static else "-",
                       ", %s for dynamic_ntk (θ from a run-time exp)" % _g(max(dynamic)) if dynamic else "",
                       max(r["angle_ulps"] for r in f64)))
    naive = {r["scheme"]: r for r in f32 if r["layout"] == "half"}
    if "default" in naive and f32:
        d = naive["default"]
        worst_naive = max(r["naive_pair"] for r in f32)
        out.append("- common approach (f32 angle), `default`: %s at exactly 2^20, %s at exactly 2^24; the "
                   "worst sampled position of any scheme: %s; this kernel's f32 maximum: %s." % (
                       _g(d["naive_at_2^20"]) if d["naive_at_2^20"] is not None else "-",
                       _g(d["naive_at_2^24"]) if d["naive_at_2^24"] is not None else "-",
                       _g(worst_naive), _g(max(r["pair"] for r in f32))))
        short = [r["naive_pair"] for r in f32 if r["scheme"] == "longrope_short"]
        if short:
            out.append("- common approach inside a 4096 context (`longrope_short`, positions <= 4095): %s, "
                       "%.0f× the f32 contract." % (_g(max(short)), max(short) / F32_PAIR_BOUND))
    if beyond:
        out.append("- beyond 2^24 (`default`, f32, half, vs the float64 reference): " + ", ".join(
            "[2^%d, 2^%d) %s" % (b["exponent"] - 1, b["exponent"], _g(b["pair"])) for b in beyond) + ".")
    return out


def beyond_table(beyond: List[dict]) -> str:
    lines = ["| positions | sampled | max pair rel. err vs the float64 reference |", "|---|---|---|"]
    for b in beyond:
        lines.append("| [2^%d, 2^%d) | %d | %s |" % (b["exponent"] - 1, b["exponent"], b["positions"], _e(b["pair"])))
    return "\n".join(lines)


DOC = pathlib.Path(__file__).resolve().parents[1] / "docs" / "PRECISION.md"
BEGIN_MARK = "<!-- BEGIN precision_sweep -->"
END_MARK = "<!-- END precision_sweep -->"


def _cpu_model() -> str:
    try:
        text = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
        for line in text.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return platform.processor() or "unknown CPU"


def replace_region(path: pathlib.Path, lines: List[str], angle: str = "f64"):
    if angle == "f64":
        write_region(path, lines, BEGIN_MARK, END_MARK)
    else:
        write_region(path, lines, BEGIN_MARK.replace("precision_sweep", "precision_sweep " + angle),
                     END_MARK.replace("precision_sweep", "precision_sweep " + angle))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller position sample (< 30 s)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--scheme", action="append", help="run only this scheme (repeatable)")
    ap.add_argument("--angle", choices=("f64", "turns"), default="f64",
                    help="how the kernel forms the angle (KernelConfig.angle; turns: no float wider than f32, "
                    "not dynamic_ntk); --write-docs writes a turns run into its own region")
    ap.add_argument("--by-origin", action="store_true", help="also print the f32/f64 errors by position origin "
                    "per scheme and layout (the report always has their ranges)")
    ap.add_argument("--write-docs", nargs="?", const=str(DOC), default=None, metavar="FILE",
                    help="also write the report between %s and %s in FILE (default: docs/PRECISION.md)" % (
                        BEGIN_MARK, END_MARK))
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    load_start = os.getloadavg()[0]

    def log(r):
        print("  %-15s %-4s %-11s pair %-9s call %-9s %s%.1fs" % (
            r["scheme"], r["dtype"], r["layout"], _e(r["pair"]), _e(r["call"]),
            ("ulp %d/%d exact %.3f%% viol %d  " % (r["ulp_max"], r["ulp_max_noncancel"], 100 * r["exact_frac"],
                                                   r["contract_violations"]) if "ulp_max" in r else ""),
            r["seconds"]), file=sys.stderr)

    results = sweep(quick=args.quick, seed=args.seed, only=args.scheme, log=log, angle=args.angle)
    beyond = beyond_2_24(args.quick, np.random.default_rng(args.seed + 1), args.angle) if not args.scheme or \
        "default" in args.scheme else []
    elapsed = time.perf_counter() - t0
    load_end = os.getloadavg()[0]

    command = "python3 bench/precision_sweep.py" + (" --quick" if args.quick else "") + (
        " --angle turns" if args.angle == "turns" else "") + "".join(
        " --scheme " + s for s in (args.scheme or [])) + (" --seed %d" % args.seed if args.seed else "")
    out = []
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")
    out.append("_Generated by `%s --write-docs` (%s sweep) on %s UTC. Do not edit between the BEGIN/END "
               "markers: rerun the command._" % (command, "quick" if args.quick else "full", stamp))
    out.append("")
    out.append("- machine: %s, %d logical CPUs, %s; numpy %s, ml_dtypes %s; rope_mlir %s" % (
        _cpu_model(), os.cpu_count() or 0, platform.machine(), np.__version__, ml_dtypes.__version__,
        rope_mlir.__version__))
    out.append("- %s" % source_line())
    if os.environ.get("LD_PRELOAD"):
        out.append("- environment: LD_PRELOAD=%s" % os.environ["LD_PRELOAD"])
    out.append("- run time %.0f s; 1-minute load average %.2f at the start, %.2f at the end (the errors do not "
               "depend on the load)" % (elapsed, load_start, load_end))
    out.append("")
    out.append("Max over both layouts; \"at pos\" is where the max pair error occurred. For f16/bf16 the pair/call "
               "columns are dominated by the output rounding (2^-11, 2^-8) and the ulp columns are the check.")
    out.append("")
    out.append(table(results))
    out.append("")
    out.append("\\* f16/bf16: ulp distance to the correctly rounded f64 reference; the bound applies to outputs with "
               "|r| >= 2^-8 |pair| (non-canc.), and every output must be the rounding of a value within 2^-20 |pair| "
               "of r (contract violations: %d). The first ulp number includes cancelling outputs. "
               "f64: 'au' = pair error / (2^-53 max(|phi|, 1) (1 + |ln theta_i|)); bound: < 1e-12 for positions "
               "<= 4096 and <= %d au everywhere (the reference's own theta is only good to ~1 ulp)." % (
                   sum(r.get("contract_violations", 0) for r in results), F64_ANGLE_ULPS))
    out.append("")
    out.append("**Summary** (from the same results):")
    out.append("")
    out += summary(results, beyond)
    out.append("")
    out.append("**The common approach** (angle = f32(pos) * f32(theta) in f32, f32 cos/sin) against this kernel, "
               "f32, pair-relative error, same positions and inputs:")
    out.append("")
    out.append(naive_table(results))
    if beyond:
        out.append("")
        out.append("**Beyond 2^24** (outside the contract): `default`, f32, half, random positions per octave, "
                   "against the float64 reference, which forms the same f64 product pos·θ_i (so this shows the "
                   "reduction and the f32 steps, not that product's own rounding):")
        out.append("")
        out.append(beyond_table(beyond))
    if args.by_origin:
        out.append("")
        out.append(origin_table(results))
    bad = [r for r in results if not r["ok"]]
    out.append("")
    out.append("all bounds hold" if not bad else "BOUND VIOLATED: " + ", ".join(
        "%s/%s/%s" % (r["scheme"], r["dtype"], r["layout"]) for r in bad))
    print("\n".join(out))
    if args.angle == "turns":
        out.insert(2, "- angle: `turns` (i64 phase steps, no float wider than f32 in the kernel; dynamic_ntk's "
                   "steps computed per call in fixed point)")
    if args.write_docs is not None:
        replace_region(pathlib.Path(args.write_docs), out, args.angle)
        print("wrote the report into %s" % args.write_docs, file=sys.stderr)
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main())
