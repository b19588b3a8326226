# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""A seeded property fuzzer over the public Python entry points (apply,
apply_qk, append_kv, apply_mla, the attention scores kernel).

Every array of a case is carved out of one byte arena filled with random
canary bytes: contiguous or not (a step-2 or reversed view), read-only or
not, and sometimes deliberately placed over another argument (out as a
view of x, of the positions, of a cache, of the slots; two caches over one
another). Sizes include 0 and 1; dtypes include the wrong ones (ints,
complex, bool, a byte-swapped float). For each case the invariant is:

- either the call raises TypeError / ValueError / IndexError /
  MemoryError whose message names one of the call's arguments, and the
  arena is bit for bit what it was (nothing was written before the
  checks);
- or it returns, every output (out, the caches) matches the float64
  reference (`rope_mlir.reference`) to the dtype's tolerance, and every
  byte of the arena that is not a legitimate output (inputs, canaries
  around and between the arrays) is unchanged.

The seed and the case count are fixed (ROPE_PROPERTY_FUZZ_CASES runs more,
ROPE_PROPERTY_FUZZ_SEED another seed); a failure prints the case's seed
and description, reproducible alone with ROPE_PROPERTY_FUZZ_ONLY=<seed>;
ROPE_PROPERTY_FUZZ_REPORT=<file> writes every failure to a file."""

import os
import re
import time

import ml_dtypes
import numpy as np
import pytest

import rope_mlir
from rope_mlir import attention, reference
from rope_mlir.mla import apply_mla

CASES = int(os.environ.get("ROPE_PROPERTY_FUZZ_CASES", "1000"))
SEED = int(os.environ.get("ROPE_PROPERTY_FUZZ_SEED", "20261205"))
ONLY = os.environ.get("ROPE_PROPERTY_FUZZ_ONLY")
BF16 = np.dtype(ml_dtypes.bfloat16)
FLOATS = [np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.float16),
          BF16]
WRONG = [np.dtype(np.int32), np.dtype(np.complex64), np.dtype(np.bool_),
         np.dtype(">f4")]
TOLERANCE = {np.dtype(np.float32): 2e-5, np.dtype(np.float64): 1e-12,
             np.dtype(np.float16): 4e-3, BF16: 3e-2}
ALLOWED = (TypeError, ValueError, IndexError, MemoryError)


class Arena:
    """One byte buffer holding every array of a case, random elsewhere."""

    def __init__(self, rng, size=1 << 15):
        self.rng = rng
        self.buf = rng.integers(0, 256, size, dtype=np.uint8)
        self.top = 64
        self.regions = []  # (name, start, stop) of each carved block
        self.names = {}  # id(view) -> its region's name

    def block(self, nbytes, at=None):
        """A byte offset for `nbytes`: the next free place (after a random
        canary gap), or `at` (an overlap chosen by the case)."""
        if at is None:
            gap = int(self.rng.integers(1, 5)) * 16
            start = self.top + gap
            self.top = start + nbytes
        else:
            start = at
            self.top = max(self.top, start + nbytes)
        if self.top + 64 > self.buf.size:
            raise MemoryError("arena too small")  # not a finding: resize
        return start

    def array(self, name, dtype, shape, values=None, *, layout="c",
              readonly=False, at=None, misalign=False):
        """A view of the arena: layout "c" (C-contiguous), "step" (every
        other row of the first dim), "reversed" (the first dim reversed)."""
        dtype = np.dtype(dtype)
        shape = tuple(shape)
        base_shape = shape
        if layout == "step" and shape:
            base_shape = (shape[0] * 2,) + shape[1:]
        count = int(np.prod(base_shape)) if base_shape else 1
        nbytes = count * dtype.itemsize
        start = self.block(nbytes + (1 if misalign else 0), at)
        start += 1 if misalign else 0
        base = np.ndarray(base_shape, dtype, buffer=self.buf, offset=start)
        view = base
        if layout == "step" and shape:
            view = base[::2]
        elif layout == "reversed" and shape:
            view = base[::-1]
        if values is not None:
            view[...] = values
        if readonly:
            view.flags.writeable = False
        self.regions.append((name, start, start + nbytes))
        self.names[id(view)] = name
        return view

    def start_of(self, name):
        return next(r[1] for r in self.regions if r[0] == name)

    def mask(self, view):
        """The arena bytes `view` covers (a view of this arena)."""
        mask = np.zeros(self.buf.size, bool)
        if view.size == 0:
            return mask
        origin = view.__array_interface__["data"][0] - \
            self.buf.__array_interface__["data"][0]
        index = np.indices(view.shape).reshape(view.ndim, -1)
        offsets = origin + (np.array(view.strides, np.int64)[:, None] *
                            index).sum(0) if view.ndim else np.array([origin])
        byte = offsets[:, None] + np.arange(view.dtype.itemsize)
        mask[byte.ravel()] = True
        return mask


def _values(rng, dtype, shape):
    """Random values in [-2, 2] of `dtype` (wrong dtypes too)."""
    data = rng.uniform(-2, 2, shape)
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return data > 0
    if dtype.kind in "iu":
        return np.round(data).astype(dtype)
    return data.astype(dtype)


def _close(actual, expected, dtype, what):
    actual = np.asarray(actual, np.float64)
    expected = np.asarray(expected, np.float64)
    assert actual.shape == expected.shape, (what, actual.shape,
                                            expected.shape)
    tol = TOLERANCE.get(np.dtype(dtype), 1e-5)
    scale = max(1.0, float(np.abs(expected).max()) if expected.size else 1)
    bad = ~(np.abs(actual - expected) <= tol * scale * 4)
    bad &= ~(np.isnan(actual) & np.isnan(expected))
    assert not bad.any(), (f"{what}: {int(bad.sum())} wrong of "
                           f"{bad.size}, e.g. {actual[bad][:3]} vs "
                           f"{expected[bad][:3]}")


def _pick(rng, items, weights=None):
    if weights is not None:
        weights = np.asarray(weights, float) / sum(weights)
    return items[int(rng.choice(len(items), p=weights))]


def _size(rng):
    return int(_pick(rng, [0, 1, 2, 3], [1, 3, 4, 3]))


def _dtype(rng):
    return _pick(rng, FLOATS + WRONG, [6, 3, 3, 3, 1, 1, 1, 1])


def _layout(rng):
    return _pick(rng, ["c", "step", "reversed"], [8, 1, 1])


# -- the cases ----------------------------------------------------------------
# Each returns (description, arena, call, names, outputs, legit) where
# call() runs the entry point and returns {output name: (view or array,
# expected values, dtype)} for the outputs it wrote (computed from the
# inputs' values before the call); names are the call's argument names;
# legit: the views that may change.

def _case_apply(rng, arena):
    dtype = _dtype(rng)
    rank = int(rng.integers(2, 5))
    d = int(_pick(rng, [4, 8, 6, 3], [4, 4, 1, 1]))
    shape = tuple(_size(rng) for _ in range(rank - 1)) + (d,)
    layout = _pick(rng, ["half", "interleaved"])
    x = arena.array("x", dtype, shape, _values(rng, dtype, shape),
                    layout=_layout(rng), readonly=rng.random() < 0.1)
    tokens = shape[:1] if rank <= 2 else shape[:rank - 2]
    kwargs = dict(layout=layout)
    mode = _pick(rng, ["offset", "explicit", "row", "cache"], [3, 3, 1, 2])
    positions = None
    if mode == "offset":
        kwargs["offset"] = int(_pick(rng, [0, 3, 2**63 - 1, 2**63 - 2,
                                           -5, 2**40], [6, 6, 1, 1, 1, 1]))
    elif mode == "row" and rank == 4:
        off_dtype = _pick(rng, [np.int64, np.int32, np.float32], [6, 2, 1])
        rows = (shape[0] + int(rng.random() < 0.1),)
        kwargs["offset"] = arena.array(
            "offset", off_dtype, rows,
            rng.integers(0, 20, rows), layout=_layout(rng))
    if mode in ("explicit", "cache"):
        pdtype = _pick(rng, [np.int64, np.int32, np.uint16, np.float32],
                       [6, 2, 1, 1])
        pshape = tokens if rng.random() > 0.05 else tokens + (1,)
        positions = arena.array("positions", pdtype, pshape,
                                rng.integers(0, 12, pshape),
                                layout=_layout(rng))
    if mode == "cache":
        pairs = d // 2
        rows = int(_pick(rng, [12, 4, 0], [6, 1, 1]))
        cdtype = _pick(rng, [np.float32, np.float64, dtype], [4, 2, 1])
        angles = np.arange(rows)[:, None] * 0.3 ** np.arange(pairs)
        kwargs["cos_cache"] = arena.array("cos_cache", cdtype,
                                          (rows, pairs), np.cos(angles))
        kwargs["sin_cache"] = arena.array("sin_cache", cdtype,
                                          (rows, pairs), np.sin(angles))
    out_mode = _pick(rng, ["none", "arena", "inplace", "over", "readonly",
                           "small", "strided"], [4, 4, 2, 4, 1, 1, 1])
    out = None
    if out_mode == "inplace":
        out = x
    elif out_mode != "none":
        oshape = shape if out_mode != "small" else shape[:-1] + (d - 1,)
        over = None
        if out_mode == "over":
            victim = _pick(rng, [n for n, _, _ in arena.regions])
            start = arena.start_of(victim)
            over = start + int(rng.integers(0, 3)) * 8
        out = arena.array("out", dtype, oshape, at=over,
                          layout="step" if out_mode == "strided" else "c",
                          readonly=out_mode == "readonly")
    kwargs["out"] = out
    snap = {k: np.array(v, copy=True) for k, v in kwargs.items()
            if isinstance(v, np.ndarray)}
    x_snap = np.array(x, copy=True)
    p_snap = None if positions is None else np.array(positions, copy=True)

    def call():
        result = rope_mlir.apply(x, positions, **kwargs)
        ref_kwargs = dict(layout=layout)
        if "offset" in kwargs:
            ref_kwargs["offset"] = snap.get("offset", kwargs["offset"])
        for name in ("cos_cache", "sin_cache"):
            if name in snap:
                ref_kwargs[name] = snap[name]
        expected = reference.apply(x_snap, p_snap, **ref_kwargs)
        return {"out": (result, expected, dtype)}

    desc = (f"apply x{shape}:{dtype} {mode} positions="
            f"{None if positions is None else positions.dtype} "
            f"offset={kwargs.get('offset', 0)!r:.40} out={out_mode}")
    names = ["x", "positions", "offset", "cos_cache", "sin_cache", "out",
             "rotary_dim", "layout"]
    return desc, call, names, [out] if out is not None else []


def _case_apply_qk(rng, arena):
    dtype = _pick(rng, FLOATS + WRONG[:1], [4, 2, 2, 2, 1])
    t, hq, hk, d = _size(rng), _size(rng), _size(rng), 8
    q = arena.array("q", dtype, (t, hq, d), _values(rng, dtype, (t, hq, d)),
                    layout=_layout(rng))
    k = arena.array("k", dtype, (t, hk, d), _values(rng, dtype, (t, hk, d)),
                    layout=_layout(rng))
    positions = arena.array("positions", np.int64, (t,),
                            rng.integers(0, 16, (t,)))
    outs = {}
    inplace = rng.random() < 0.15
    for name, shape in (("out_q", q.shape), ("out_k", k.shape)):
        if inplace:
            break
        choice = _pick(rng, ["none", "arena", "over"], [3, 3, 3])
        if choice == "arena":
            outs[name] = arena.array(name, dtype, shape)
        elif choice == "over":
            victim = _pick(rng, [n for n, _, _ in arena.regions])
            outs[name] = arena.array(name, dtype, shape,
                                     at=arena.start_of(victim) +
                                     int(rng.integers(0, 3)) * 8)
    if inplace:
        outs = {"out_q": q, "out_k": k}
    q_snap, k_snap = np.array(q, copy=True), np.array(k, copy=True)
    p_snap = positions.copy()

    def call():
        rq, rk = rope_mlir.apply_qk(q, k, positions, **outs)
        return {"out_q": (rq, reference.apply(q_snap, p_snap), dtype),
                "out_k": (rk, reference.apply(k_snap, p_snap), dtype)}

    desc = (f"apply_qk q{q.shape} k{k.shape}:{dtype} outs="
            f"{sorted(outs)} inplace={inplace}")
    return desc, call, ["q", "k", "positions", "out_q", "out_k"], \
        list(outs.values())


def _case_append_kv(rng, arena):
    dtype = _pick(rng, FLOATS + WRONG[:1], [4, 2, 2, 2, 1])
    b, s, h, d = _size(rng), _size(rng), _size(rng), 8
    m = int(_pick(rng, [4, 1, 0], [6, 1, 1]))
    k = arena.array("k", dtype, (b, s, h, d),
                    _values(rng, dtype, (b, s, h, d)), layout=_layout(rng))
    v = arena.array("v", dtype, (b, s, h, d),
                    _values(rng, dtype, (b, s, h, d)))
    pos_values = np.stack([rng.permutation(max(m, s))[:s]
                           for _ in range(b)]) if b else \
        np.zeros((0, s), np.int64)
    positions = arena.array("positions", np.int64, (b, s), pos_values)
    caches = {}
    for name in ("k_cache", "v_cache"):
        choice = _pick(rng, ["arena", "over", "readonly"], [8, 2, 1])
        at = None
        if choice == "over":
            victim = _pick(rng, [n for n, _, _ in arena.regions])
            at = arena.start_of(victim) + int(rng.integers(0, 3)) * 8
        cdtype = dtype if rng.random() > 0.05 else np.float64
        caches[name] = arena.array(name, cdtype, (b, m, h, d), at=at,
                                   readonly=choice == "readonly")
    snaps = {n: np.array(a, copy=True) for n, a in
             (("k", k), ("v", v), ("positions", positions))}
    cache_snaps = {n: np.array(a, copy=True) for n, a in caches.items()}

    def call():
        rope_mlir.append_kv(k, v, caches["k_cache"], caches["v_cache"],
                            positions)
        rotated = reference.apply(snaps["k"], snaps["positions"])
        expected_k = cache_snaps["k_cache"].astype(np.float64)
        expected_v = cache_snaps["v_cache"].astype(np.float64)
        for bi in range(b):
            for si in range(s):
                p = snaps["positions"][bi, si]
                expected_k[bi, p] = rotated[bi, si]
                expected_v[bi, p] = snaps["v"][bi, si]
        return {"k_cache": (caches["k_cache"], expected_k, dtype),
                "v_cache": (caches["v_cache"], expected_v, dtype)}

    desc = f"append_kv k{k.shape}:{dtype} cache max_len {m}"
    return desc, call, ["k", "v", "k_cache", "v_cache", "positions"], \
        list(caches.values())


def _case_append_rows(rng, arena):
    """compile_append with per-row offsets: k [B, S, H, D] at offset[b] + s
    into k_cache [B, M, H, D] at the given slots."""
    kern = rope_mlir.compile_append(dtype="f32", rank=4, head_dim=8,
                                    positions="row_offset", slots=True)
    b, s, h, m = _size(rng), _size(rng), _size(rng), 4
    k = arena.array("k", np.float32, (b, s, h, 8),
                    _values(rng, np.float32, (b, s, h, 8)),
                    layout=_layout(rng))
    slot_values = (np.stack([rng.permutation(m)[:s] for _ in range(b)]) +
                   np.arange(b)[:, None] * m) if b and s <= m else \
        np.zeros((b, s), np.int64) - 1
    slots = arena.array("slots", np.int64, (b, s), slot_values)
    offset = arena.array("offset", np.int64, (b,),
                         rng.integers(0, 9, (b,)) if rng.random() > 0.05
                         else np.full(b, 2**63 - 1))
    at = None
    if rng.random() < 0.4:  # mostly over the offsets (allocated last)
        victim = _pick(rng, ["k", "slots", "offset"], [1, 1, 3])
        at = arena.start_of(victim)
    k_cache = arena.array("k_cache", np.float32, (b, m, h, 8), at=at)
    k_snap, o_snap, s_snap = k.copy(), offset.copy(), slots.copy()
    c_snap = k_cache.copy()

    def call():
        kern(k, slots, k_cache, offset=offset)
        rotated = reference.apply(k_snap, offset=o_snap)
        expected = c_snap.astype(np.float64).reshape(b * m, h, 8)
        for bi in range(b):
            for si in range(s):
                if s_snap[bi, si] >= 0:
                    expected[s_snap[bi, si]] = rotated[bi, si]
        return {"k_cache": (k_cache, expected.reshape(b, m, h, 8),
                            np.float32)}

    return (f"compile_append row offsets k{k.shape} cache_over={at}",
            call, ["k", "offset", "slots", "k_cache"], [k_cache])


def _rotate_mla(x, positions, rope):
    """x [T, H, rope] rotated interleaved at positions (float64)."""
    return reference.apply(np.asarray(x, np.float64), positions,
                           layout="interleaved", token_dims=(0,))


def _case_apply_mla(rng, arena):
    dtype = _pick(rng, FLOATS + WRONG[:1], [4, 2, 2, 2, 1])
    t, h, nope, rope, lora, rows = _size(rng), _size(rng), 4, 8, 8, 8
    q = arena.array("q", dtype, (t, h, nope + rope),
                    _values(rng, dtype, (t, h, nope + rope)),
                    layout=_layout(rng))
    c_kv = arena.array("c_kv", dtype, (t, lora),
                       _values(rng, dtype, (t, lora)), layout=_layout(rng))
    k_pe = arena.array("k_pe", dtype, (t, rope),
                       _values(rng, dtype, (t, rope)))
    positions = arena.array("positions", np.int64, (t,),
                            rng.integers(0, 16, (t,)))
    slot_values = rng.permutation(rows)[:t]
    if t and rng.random() < 0.1:
        slot_values[0] = -1
    if t > 1 and rng.random() < 0.05:
        slot_values[1] = slot_values[0]
    slots = arena.array("slots", np.int64, (t,), slot_values)
    over = rng.random() < 0.2
    cache = arena.array("kv_cache", dtype, (rows, lora + rope),
                        at=(arena.start_of(_pick(rng, ["q", "c_kv", "k_pe",
                                                       "positions",
                                                       "slots"])) + 8
                            if over else None))
    out_mode = _pick(rng, ["none", "arena", "inplace", "over"], [3, 3, 1, 4])
    out = None
    if out_mode == "inplace":
        out = q
    elif out_mode == "arena":
        out = arena.array("out", dtype, q.shape)
    elif out_mode == "over":
        victim = _pick(rng, [n for n, _, _ in arena.regions])
        out = arena.array("out", dtype, q.shape,
                          at=arena.start_of(victim) +
                          int(rng.integers(0, 3)) * 8)
    snaps = {n: np.array(a, copy=True) for n, a in (
        ("q", q), ("c_kv", c_kv), ("k_pe", k_pe), ("positions", positions),
        ("slots", slots), ("cache", cache))}

    def call():
        result = apply_mla(q, c_kv, k_pe, cache, positions, slots=slots,
                           rope_dim=rope, out=out)
        expected_q = snaps["q"].astype(np.float64)
        if t and h:
            expected_q[..., nope:] = _rotate_mla(
                snaps["q"][..., nope:], snaps["positions"], rope)
        expected_c = snaps["cache"].astype(np.float64)
        k_rot = _rotate_mla(snaps["k_pe"][:, None, :], snaps["positions"],
                            rope)[:, 0] if t else np.zeros((0, rope))
        for i in range(t):
            slot = snaps["slots"][i]
            if slot >= 0:
                expected_c[slot, :lora] = snaps["c_kv"][i]
                expected_c[slot, lora:] = k_rot[i]
        return {"out": (result, expected_q, dtype),
                "kv_cache": (cache, expected_c, dtype)}

    desc = (f"apply_mla q{q.shape}:{dtype} out={out_mode} cache_over={over}"
            f" slots={list(slot_values)}")
    return desc, call, ["q", "c_kv", "k_pe", "kv_cache", "positions",
                        "slots", "out"], [cache] + ([out] if out is not None
                                                    else [])


_SCORES = {}


def _case_scores(rng, arena):
    c = attention.ScoresConfig(batch=1, q_heads=2, kv_heads=1, q_len=2,
                               kv_len=3, head_dim=8)
    if "kernel" not in _SCORES:
        _SCORES["kernel"] = attention.ScoresKernel(c, fuse=False)
    kern = _SCORES["kernel"]
    q = arena.array("q", np.float32, c.q_shape(),
                    _values(rng, np.float32, c.q_shape()),
                    layout=_layout(rng))
    k = arena.array("k", np.float32, c.k_shape(),
                    _values(rng, np.float32, c.k_shape()))
    offsets = arena.array("offsets", np.int64, (1,),
                          [int(_pick(rng, [0, 5, 2**63 - 1], [4, 4, 1]))])
    choice = _pick(rng, ["none", "arena", "over"], [2, 2, 3])
    out = None
    if choice == "arena":
        out = arena.array("out", np.float32, c.scores_shape())
    elif choice == "over":
        victim = _pick(rng, ["q", "k", "offsets"])
        out = arena.array("out", np.float32, c.scores_shape(),
                          at=arena.start_of(victim))
    q_snap, k_snap, o_snap = q.copy(), k.copy(), offsets.copy()

    def call():
        result = kern(q, k, offsets, out=out)
        return {"out": (result, attention.scores_reference(
            c, q_snap, k_snap, o_snap), np.float32)}

    return (f"scores out={choice} offsets={offsets[0]}", call,
            ["q", "k", "offsets", "out"], [out] if out is not None else [])


ENTRIES = [(_case_apply, 5), (_case_apply_qk, 2), (_case_append_kv, 2),
           (_case_append_rows, 1), (_case_apply_mla, 2), (_case_scores, 1)]


def run_case(seed):
    """Runs one case; returns its outcome ("ok" / "raised") or raises
    AssertionError describing the broken invariant."""
    rng = np.random.default_rng(seed)
    arena = Arena(rng)
    make = _pick(rng, [e for e, _ in ENTRIES], [w for _, w in ENTRIES])
    desc, call, names, writable = make(rng, arena)
    before = arena.buf.copy()
    try:
        outputs = call()
    except ALLOWED as error:
        message = str(error)
        assert any(re.search(rf"\b{re.escape(name)}\b", message)
                   for name in names), (
            f"{desc}: {type(error).__name__} names no argument: {message}")
        changed = np.flatnonzero(arena.buf != before)
        assert changed.size == 0, (
            f"{desc}: raised {type(error).__name__} ({message}) after "
            f"writing {changed.size} arena bytes (e.g. at {changed[:4]})")
        return "raised"
    except Exception as error:  # noqa: BLE001 - the finding itself
        raise AssertionError(f"{desc}: unexpected {type(error).__name__}: "
                             f"{error}") from error
    legit = np.zeros(arena.buf.size, bool)
    for view in writable:
        if isinstance(view, np.ndarray) and view.size and \
                np.shares_memory(view, arena.buf):
            legit |= arena.mask(view)
    changed = np.flatnonzero((arena.buf != before) & ~legit)
    assert changed.size == 0, (
        f"{desc}: wrote {changed.size} bytes outside its outputs (an input "
        f"or a canary), e.g. at {changed[:4]} "
        f"({[n for n, a, b in arena.regions if a <= changed[0] < b]})")
    # Every input's bytes are unchanged, even where an accepted output
    # overlaps it (its write may have landed inside the output's bytes).
    written = {arena.names.get(id(v)) for v in writable}
    for name, start, stop in arena.regions:
        if name not in written:
            moved = np.flatnonzero(arena.buf[start:stop] !=
                                   before[start:stop])
            assert moved.size == 0, (
                f"{desc}: accepted, and changed {moved.size} bytes of the "
                f"input {name} (an output overlaps it)")
    for name, (actual, expected, dtype) in outputs.items():
        if actual is None:
            continue
        _close(actual, expected, dtype, f"{desc}: {name}")
    return "ok"


def test_property_fuzz():
    seeds = ([int(ONLY)] if ONLY else
             [SEED * 1000 + i for i in range(CASES)])
    start = time.monotonic()
    outcomes = {"ok": 0, "raised": 0}
    failures = []
    for seed in seeds:
        try:
            outcomes[run_case(seed)] += 1
        except AssertionError as error:
            failures.append(f"seed {seed}: {error}")
    elapsed = time.monotonic() - start
    print(f"property fuzz: {len(seeds)} cases in {elapsed:.1f} s, "
          f"{outcomes}, {len(failures)} failures")
    report = os.environ.get("ROPE_PROPERTY_FUZZ_REPORT")
    if report:  # every failure, one a line
        with open(report, "w") as stream:
            stream.writelines(f.replace("\n", " ") + "\n" for f in failures)
    assert not failures, (f"{len(failures)} of {len(seeds)} cases broke "
                          f"an invariant:\n" + "\n".join(failures[:20]))
    # Both kinds of outcome are exercised (a fuzzer that only ever raises,
    # or never does, tests little).
    if not ONLY:
        assert outcomes["ok"] > len(seeds) // 5
        assert outcomes["raised"] > len(seeds) // 10
