# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""rope-fuse-into-attention, executed: attention scores R(q)·R(k)ᵀ compiled
with the rotations fused into the contraction's tile loops must equal the
unfused build and the float64 reference (rope_mlir.reference), on random
shapes: both tensor layouts ([B, H, S, D] and [B, S, H, D]), partial rotary,
both pair layouts, GQA, decode (S_q = 1) at per-row offsets, explicit
positions, the batch_matmul form, tiles that do not divide the shapes, and
every fuse-key policy. Also RoPE in linear attention (below).
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

from rope_mlir import _jit, attention, reference
from rope_mlir.attention import (AttentionConfig, AttentionKernel,
                                 ScoresConfig, ScoresKernel)

TOLERANCE = 2e-6  # relative to the largest score; f32 dot products of D terms


# -- What fusion produces, checked on the IR ---------------------------------
# Every check below names what the unfused IR lacks; test_checks_reject_*
# (at the end) runs them on IR built without rope-fuse-into-attention (and
# with the other fuse-key policy) and expects each to complain.

class Ir:
    """Printed MLIR, read by indentation (the printer nests regions two
    spaces deeper): each line's enclosing region ops, each value's
    defining line."""

    def __init__(self, text: str):
        self.lines = text.splitlines()
        self.parents, self.defs = [], {}
        stack = []  # (indent, line) of the ops whose region is open
        for i, line in enumerate(self.lines):
            stripped = line.strip()
            indent = len(line) - len(stripped)
            if not stripped.startswith("^"):  # a block label closes nothing
                while stack and indent <= stack[-1][0]:
                    stack.pop()
            self.parents.append([j for _, j in stack])
            m = re.match(r"(%[\w.$-]+)(?::\d+)? = ", stripped)
            if m:
                self.defs[m.group(1)] = i
            if stripped.endswith("{"):
                stack.append((indent, i))

    def loops(self, i: int) -> list:
        """The scf.for / scf.forall ops around line i, outermost first."""
        return [j for j in self.parents[i]
                if re.search(r"(^|= )scf\.for(all)? ", self.lines[j].strip())]

    def origin(self, value: str):
        """(root, sliced): the value `value` is a (chain of)
        tensor.extract_slice of, and whether there was one. A root that is
        a function argument's bufferization.to_tensor is the argument."""
        sliced = False
        while value in self.defs:
            line = self.lines[self.defs[value]]
            m = re.search(r"= tensor\.extract_slice (%[\w.$-]+)\[", line)
            if m:
                value, sliced = m.group(1), True
                continue
            m = re.search(r"= bufferization\.to_tensor (%arg\d+) ", line)
            if m:
                value = m.group(1)
            break
        return value, sliced

    def users(self, value: str) -> list:
        """The lines using `value`, and (transitively) those using a
        tensor.extract_slice of it: a dynamic tile is re-sliced whole before
        the loop that reads it."""
        found = []
        for i, line in enumerate(self.lines):
            if i == self.defs.get(value) or not re.search(
                    re.escape(value) + r"(?![\w.$-])", line):
                continue
            found.append(i)
            m = re.match(r"\s*(%[\w.$-]+) = tensor\.extract_slice " +
                         re.escape(value) + r"\[", line)
            if m:
                found += self.users(m.group(1))
        return found

    def rotations_of(self, argument: str) -> list:
        """(line, result) of each rope.apply whose input comes from the
        function argument `argument` (whole or sliced)."""
        found = []
        for i, line in enumerate(self.lines):
            m = re.search(r"(%[\w.$-]+) = rope\.apply ins\((%[\w.$-]+) ", line)
            if m and self.origin(m.group(2))[0] == argument:
                found.append((i, m.group(1)))
        return found


def key_is_fused(q_len: int, options: dict) -> bool:
    """rope-fuse-into-attention's fuse-key policy (auto: only when one query
    tile covers the queries, else every key would be rotated per tile)."""
    policy = options.get("fuse_key", "auto")
    if policy == "auto":
        return q_len <= options.get("query_tile", 32)
    return policy == "always"


def rope_fusion_problems(text: str, key_fused: bool) -> dict:
    """What is wrong with `text` as the fused scores/attention IR of
    @scores/@attention(%q = %arg0, %k = %arg1, ...): {"query": [...],
    "key": [...]}, empty lists when the rotations are where fusion puts
    them. Query: one rotation, of a slice of Q, inside the query loop(s),
    feeding a contraction in a deeper (key) loop. Key, fused: one rotation,
    of a slice of K, inside a key loop that does not enclose Q's rotation,
    feeding a contraction in that same loop (so no whole rotated K exists);
    not fused: one whole rotation outside any loop, sliced per key tile."""
    ir = Ir(text)
    problems = {"query": [], "key": []}
    queries, keys = ir.rotations_of("%arg0"), ir.rotations_of("%arg1")
    if key_fused and len(keys) == 2:
        # peel-key-tiles: the key loop's partial last tile, peeled after the
        # loop, rotates its own slice of K, in the loops around the key loop
        # or in a one-trip loop of its own beside it (the attention kernels'
        # pipeline peels it).
        keys.sort(key=lambda found: -len(ir.loops(found[0])))
        (main, _), (tail, _) = keys
        tail_input = re.search(r"rope\.apply ins\((%[\w.$-]+) ",
                               ir.lines[tail]).group(1)
        around = ir.loops(main)[:-1]
        if ir.loops(tail) != around and ir.loops(tail)[:-1] != around or \
                not ir.origin(tail_input)[1]:
            problems["key"].append("a second rotation of the keys that is "
                                   "not a peeled last key tile")
        keys = keys[:1]
    for who, found in (("query", queries), ("key", keys)):
        if len(found) != 1:
            problems[who].append(f"{len(found)} rotations of the {who}s")
    if problems["query"] or problems["key"]:
        return problems
    (qi, qr), (ki, kr) = queries[0], keys[0]
    q_loops, k_loops = ir.loops(qi), ir.loops(ki)
    input_of = lambda i: re.search(r"rope\.apply ins\((%[\w.$-]+) ",
                                   ir.lines[i]).group(1)

    if not ir.origin(input_of(qi))[1]:
        problems["query"].append("Q is rotated whole, not a tile of it")
    if not q_loops:
        problems["query"].append("Q's rotation is outside the loops")
    if not any(len(ir.loops(u)) > len(q_loops) and
               ir.loops(u)[:len(q_loops)] == q_loops for u in ir.users(qr)):
        problems["query"].append("Q's rotated tile is not used in a loop "
                                 "nested in the query loop")

    if key_fused:
        if not ir.origin(input_of(ki))[1]:
            problems["key"].append("K is rotated whole, not a tile of it")
        if not k_loops or k_loops[-1] in q_loops:
            problems["key"].append("K's rotation is not in a key loop")
        elif not any(ir.loops(u)[-1:] == k_loops[-1:]
                     for u in ir.users(kr)):
            problems["key"].append("K's rotated tile is not used in its "
                                   "key loop")
    else:
        if ir.origin(input_of(ki))[1] or k_loops:
            problems["key"].append("K's rotation is tiled (fuse-key "
                                   "policy says whole)")
        elif not all(ir.loops(u) for u in ir.users(kr)):
            problems["key"].append("the whole rotated K is used outside "
                                   "the key loop")
    return problems


def attention_problems(text: str, config: AttentionConfig) -> list:
    """What is wrong with `text` as fused whole attention: no softmax or
    reduction over whole rows and no scores-sized tensor is left; the
    online-softmax steps (rope.online_attention, decomposed later by the CPU
    pipeline) are in the key loop that carries their running state
    (iter_args)."""
    ir = Ir(text)
    problems = [f"{op} is left" for op in ("linalg.softmax", "linalg.reduce",
                                           "rope.attention ")
                if op in text]
    scores = "tensor<" + "x".join(map(str, config.scores_shape())) + "xf32>"
    if scores in text:
        problems.append(f"a whole scores tensor {scores} is left")
    steps = [i for i, line in enumerate(ir.lines)
             if "rope.online_attention" in line]
    if not steps:
        problems.append("no rope.online_attention")
    for i in steps:
        if not any("iter_args(" in ir.lines[j] and
                   re.search(r"(^|= )scf\.for ", ir.lines[j].strip())
                   for j in ir.parents[i]):
            problems.append(f"online step outside an scf.for with iter_args: "
                            f"{ir.lines[i].strip()}")
    return problems


def assert_fused(text: str, key_fused: bool):
    problems = rope_fusion_problems(text, key_fused)
    assert not problems["query"] and not problems["key"], (problems, text)


def masked_key_tile_skipped(ir: Ir, key_rotation: int) -> bool:
    """Whether the key tile's rotation at line `key_rotation` sits in an
    scf.if (on the mask tile having an unmasked entry) in the key loop, so
    that a key tile the causal mask hides is neither rotated nor used."""
    loops = ir.loops(key_rotation)
    return bool(loops) and any(
        "scf.if" in ir.lines[j] and j > loops[-1]
        for j in ir.parents[key_rotation])


def forall_problems(text: str) -> list:
    """parallel-loops: the loops over batch, heads and query tiles are one
    scf.forall around Q's rotation, the key loop an scf.for inside it."""
    ir = Ir(text)
    queries, keys = ir.rotations_of("%arg0"), ir.rotations_of("%arg1")
    # A peeled last key tile's rotation (rope_fusion_problems checks where)
    # besides the key loop's.
    keys.sort(key=lambda found: -len(ir.loops(found[0])))
    if len(queries) != 1 or len(keys) not in (1, 2):
        return [f"{len(queries)} Q and {len(keys)} K rotations"]
    q_loops, k_loops = ir.loops(queries[0][0]), ir.loops(keys[0][0])
    problems = []
    if len(q_loops) != 1 or "scf.forall" not in ir.lines[q_loops[0]]:
        problems.append("Q's rotation is not in exactly one scf.forall")
    if not k_loops or k_loops[:-1] != q_loops or \
            "scf.for " not in ir.lines[k_loops[-1]]:
        problems.append("K's rotation is not in an scf.for inside it")
    return problems


def openmp_problems(text: str) -> list:
    """Lowered with num-threads=2: one outermost omp.parallel (the fused
    scf.forall) holds every other parallel region (the tiles' own token
    loops); unfused, each rotation and the contraction are separate."""
    ir = Ir(text)
    regions = [i for i, line in enumerate(ir.lines) if "omp.parallel" in line]
    outer = [i for i in regions
             if not any(j in regions for j in ir.parents[i])]
    return [] if len(outer) == 1 else [
        f"{len(outer)} outermost omp.parallel regions"]


def random_case(seed: int):
    rng = np.random.default_rng(seed)
    kv_heads = int(rng.integers(1, 3))
    group = int(rng.choice([1, 1, 2, 4]))
    head_dim = int(rng.choice([8, 16, 32, 64]))
    rotary = int(rng.choice([head_dim, head_dim // 2, head_dim // 4]))
    rotary -= rotary % 2
    decode = rng.random() < 0.3
    config = ScoresConfig(
        batch=int(rng.integers(1, 3)), q_heads=kv_heads * group,
        kv_heads=kv_heads, q_len=1 if decode else int(rng.integers(1, 70)),
        kv_len=int(rng.integers(1, 200)), head_dim=head_dim,
        layout=str(rng.choice(["bhsd", "bshd"])),
        rotary_dim=None if rotary == head_dim else max(rotary, 2),
        pair_layout=str(rng.choice(["half", "interleaved"])),
        base=float(rng.choice([10000.0, 500000.0])),
        positions="offset" if decode or rng.random() < 0.6 else "explicit")
    options = dict(query_tile=int(rng.choice([1, 7, 16, 32])),
                   key_tile=int(rng.choice([5, 16, 64])),
                   fuse_key=str(rng.choice(["auto", "always", "never"])))
    return rng, config, options


def inputs(rng, c: ScoresConfig):
    q = rng.standard_normal(c.q_shape()).astype(np.float32)
    k = rng.standard_normal(c.k_shape()).astype(np.float32)
    if c.positions == "offset":
        rows = c.batch if c.form != "batch_matmul" else None
        offsets = (rng.integers(0, 100000, rows) if rows
                   else int(rng.integers(0, 100000)))
        return q, k, dict(offsets=offsets)
    rows = c.batch * c.kv_heads if c.form == "batch_matmul" else c.batch
    return q, k, dict(q_positions=rng.integers(0, 100000, (rows, c.q_len)),
                      k_positions=rng.integers(0, 100000, (rows, c.kv_len)))


def fusion_only(ir: str, options: dict, fuse: bool = True) -> str:
    """`ir` after the kernel's pipeline up to rope-to-llvm-cpu: the fusion
    pass with `options`, or (fuse=False) nothing."""
    full = attention.pipeline(fuse, **options)
    return _jit.lower(ir, full.split("rope-to-llvm-cpu")[0].rstrip(", ") +
                      ")")


def check(config, options, rng):
    q, k, positions = inputs(rng, config)
    ref = attention.scores_reference(config, q, k, **positions)
    fused = ScoresKernel(config, True, **options)
    unfused = ScoresKernel(config, False)
    # The pass did fuse: Q's rotation is a tile in the query loop, K's a
    # tile in the key loop when the fuse-key policy says so.
    assert_fused(fusion_only(fused.ir, options), key_is_fused(config.q_len,
                                                              options))
    got = fused(q, k, **positions)
    base = unfused(q, k, **positions)
    scale = max(np.abs(ref).max(), 1.0)
    assert np.abs(got - ref).max() <= TOLERANCE * scale, (config, options)
    assert np.abs(got - base).max() <= TOLERANCE * scale, (config, options)
    return fused


@pytest.mark.parametrize("seed", range(24))
def test_fused_scores_random(seed):
    rng, config, options = random_case(seed)
    check(config, options, rng)


@pytest.mark.parametrize("layout", ["bhsd", "bshd"])
def test_decode_gqa_fuses_both(layout):
    """Decode: one query tile, so fuse-key=auto rotates each key tile in the
    key loop; nothing whole-size is rotated."""
    config = ScoresConfig(batch=2, q_heads=8, kv_heads=2, q_len=1,
                          kv_len=300, head_dim=64, layout=layout,
                          rotary_dim=32)
    rng = np.random.default_rng(3)
    fused = check(config, dict(query_tile=32, key_tile=64), rng)
    ir = _jit.lower(fused.ir, "builtin.module(rope-fuse-into-attention, "
                    "canonicalize)")
    assert_fused(ir, key_fused=True)


def test_batch_matmul_form():
    rng = np.random.default_rng(5)
    for positions in ("offset", "explicit"):
        config = ScoresConfig(batch=2, q_heads=3, kv_heads=3, q_len=45,
                              kv_len=70, head_dim=32, form="batch_matmul",
                              positions=positions)
        check(config, dict(query_tile=16, key_tile=32, fuse_key="always"),
              rng)


def test_linear_attention_numerator():
    """RoPE in linear attention (RoFormer §3.3): with a non-negative feature
    map φ, the numerator is Σ_n φ(q_m)ᵀ R(n−m) φ(k_n) v_n, computed as
    R(φ(q_m))·R(φ(k_n))ᵀ — the rotation applied to the features, so it is
    the same scores contraction and fuses the same way; the denominator
    Σ_n φ(q_m)ᵀ φ(k_n) stays unrotated (rotating it could make it vanish).
    Checked against the explicit relative-position form."""
    rng = np.random.default_rng(11)
    config = ScoresConfig(batch=1, q_heads=2, kv_heads=2, q_len=40,
                          kv_len=40, head_dim=16, layout="bhsd")
    q = rng.standard_normal(config.q_shape())
    k = rng.standard_normal(config.k_shape())
    v = rng.standard_normal((1, 2, 40, 16))
    phi = lambda x: np.where(x > 0, x + 1.0, np.exp(x))  # elu + 1
    fq, fk = phi(q).astype(np.float32), phi(k).astype(np.float32)
    offsets = np.zeros(1, np.int64)
    fused = ScoresKernel(config, True, query_tile=16, key_tile=16,
                         fuse_key="always")
    rotated = fused(fq, fk, offsets)[:, :, 0]          # [B, H, Sq, Sk]
    causal = np.tril(np.ones((40, 40)))
    numerator = np.einsum("bhmn,bhnd->bhmd", rotated * causal, v)
    plain = np.einsum("bhmd,bhnd->bhmn", fq[:, :, 0].astype(np.float64),
                      fk.astype(np.float64))
    denominator = (plain * causal).sum(-1, keepdims=True)
    out = numerator / denominator

    # Reference: φ(q_m)ᵀ R(n − m) φ(k_n), one relative rotation per pair.
    fq64, fk64 = fq[:, :, 0].astype(np.float64), fk.astype(np.float64)
    expected_scores = np.empty((1, 2, 40, 40))
    for m in range(40):
        for n in range(40):
            rk = reference.apply(fk64[:, :, n:n + 1], np.array([n - m]),
                                 token_dims=(2,))
            expected_scores[:, :, m, n] = np.einsum(
                "bhd,bhd->bh", fq64[:, :, m], rk[:, :, 0])
    expected = np.einsum("bhmn,bhnd->bhmd", expected_scores * causal,
                         v) / denominator
    assert np.abs(out - expected).max() <= 1e-5 * np.abs(expected).max()


# Whole attention: softmax(scale·R(q)·R(k)ᵀ + mask)·V with an online softmax
# over the key tiles (whole-attention, on by default).

ATTENTION_TOLERANCE = 1e-5  # relative to the largest output


def attention_inputs(rng, c: AttentionConfig):
    q, k, positions = inputs(rng, c)
    v = rng.standard_normal(c.v_shape()).astype(np.float32)
    if c.mask:
        # Causal, aligned bottom-right (the queries are the last Sq tokens);
        # -inf where masked.
        m = np.arange(c.q_len)[:, None] + (c.kv_len - c.q_len)
        positions["mask"] = np.where(np.arange(c.kv_len)[None, :] <= m, 0.0,
                                     -np.inf).astype(np.float32)
    return q, k, v, positions


def check_attention(config, options, rng):
    q, k, v, extra = attention_inputs(rng, config)
    ref = attention.attention_reference(config, q, k, v, **extra)
    fused = AttentionKernel(config, True, **options)
    unfused = AttentionKernel(config, False)
    # The pass did rewrite the whole chain: no softmax, no scores tensor,
    # the exponentials in the key loop; the rotations are tiles.
    lowered = fusion_only(fused.ir, options)
    assert not attention_problems(lowered, config), lowered
    assert_fused(lowered, key_is_fused(config.q_len, options))
    got = fused(q, k, v, **extra)
    base = unfused(q, k, v, **extra)
    scale = max(np.abs(ref).max(), 1.0)
    assert np.abs(got - ref).max() <= ATTENTION_TOLERANCE * scale, (config,
                                                                     options)
    assert np.abs(got - base).max() <= ATTENTION_TOLERANCE * scale, (config,
                                                                      options)
    return fused


def random_attention_case(seed: int):
    rng, c, options = random_case(1000 + seed)
    causal = c.q_len <= c.kv_len and rng.random() < 0.5
    config = AttentionConfig(
        **{f.name: getattr(c, f.name)
           for f in dataclasses.fields(ScoresConfig)},
        scale=(None if rng.random() < 0.25
               else float(1 / np.sqrt(c.head_dim))),
        mask=bool(causal),
        value_dim=int(rng.choice([c.head_dim, 8, 24])))
    return rng, config, options


@pytest.mark.parametrize("seed", range(24))
def test_whole_attention_random(seed):
    rng, config, options = random_attention_case(seed)
    check_attention(config, options, rng)


@pytest.mark.parametrize("layout", ["bhsd", "bshd"])
def test_whole_attention_prefill_causal_gqa(layout):
    config = AttentionConfig(batch=2, q_heads=4, kv_heads=2, q_len=50,
                             kv_len=70, head_dim=32, layout=layout,
                             rotary_dim=16, scale=32 ** -0.5, mask=True)
    fused = check_attention(config, dict(query_tile=16, key_tile=32,
                                         fuse_key="always"),
                            np.random.default_rng(7))
    # Key tiles that the causal mask hides from a whole query tile (keys
    # 64-69 for queries 0-15) are skipped by an scf.if on the mask slice;
    # the comparison above runs through that path.
    ir = Ir(fusion_only(fused.ir, dict(query_tile=16, key_tile=32,
                                       fuse_key="always")))
    assert any(masked_key_tile_skipped(ir, i)
               for i, _ in ir.rotations_of("%arg1")), "\n".join(ir.lines)


@pytest.mark.parametrize("layout", ["bhsd", "bshd"])
def test_whole_attention_decode_offsets(layout):
    """Decode: S_q = 1 at per-row offsets; each key tile rotated in the key
    loop, so neither the scores nor the rotated keys are ever whole."""
    config = AttentionConfig(batch=2, q_heads=8, kv_heads=2, q_len=1,
                             kv_len=300, head_dim=64, layout=layout,
                             scale=0.125)
    fused = check_attention(config, dict(query_tile=32, key_tile=64),
                            np.random.default_rng(9))
    ir = _jit.lower(fused.ir, "builtin.module(rope-fuse-into-attention, "
                    "canonicalize)")
    assert_fused(ir, key_fused=True)
    assert not attention_problems(ir, config), ir


@pytest.mark.parametrize("softmax", ["decomposed", "frontend"])
@pytest.mark.parametrize("layout", ["bhsd", "bshd"])
def test_whole_attention_decomposed_softmax(softmax, layout):
    """The softmax written out in linalg ops (as linalg.softmax's own
    decomposition writes it, or as a frontend lowers it): the pass raises it
    to linalg.softmax and fuses the whole chain the same way; the unfused
    build runs the written-out ops as they are."""
    config = AttentionConfig(batch=2, q_heads=4, kv_heads=2, q_len=37,
                             kv_len=70, head_dim=32, layout=layout,
                             rotary_dim=16, scale=32 ** -0.5, mask=True,
                             softmax=softmax)
    fused = check_attention(config, dict(query_tile=16, key_tile=32,
                                         fuse_key="always"),
                            np.random.default_rng(13))
    ir = _jit.lower(fused.ir, "builtin.module(rope-fuse-into-attention)")
    assert "linalg.reduce" not in ir and "maxnumf" not in ir.split(
        "scf.for", 1)[0], ir


@pytest.mark.parametrize("layout", ["bhsd", "bshd"])
@pytest.mark.parametrize("whole", [True, False], ids=["attention", "scores"])
def test_fused_on_threads(whole, layout):
    """parallel-loops (the default): the loops over batch, heads and query
    tiles are one scf.forall, which rope-to-llvm-cpu{num-threads=2} runs on
    OpenMP threads (the key loop, carrying the online softmax, stays
    sequential). Every tile computes what it computes sequentially: the
    result is bitwise the scf.for build's (parallel_loops=False)."""
    c = ScoresConfig(batch=2, q_heads=4, kv_heads=2, q_len=50, kv_len=70,
                     head_dim=32, layout=layout, rotary_dim=16)
    options = dict(query_tile=16, key_tile=32, fuse_key="always")
    rng = np.random.default_rng(17)
    if whole:
        c = AttentionConfig(**{f.name: getattr(c, f.name)
                               for f in dataclasses.fields(ScoresConfig)},
                            scale=32 ** -0.5, mask=True)
        kernel = AttentionKernel
        q, k, v, extra = attention_inputs(rng, c)
        args = (q, k, v)
        ref = attention.attention_reference(c, q, k, v, **extra)
        tolerance = ATTENTION_TOLERANCE
    else:
        kernel = ScoresKernel
        q, k, extra = inputs(rng, c)
        args = (q, k)
        ref = attention.scores_reference(c, q, k, **extra)
        tolerance = TOLERANCE
    threaded = kernel(c, True, threads=2, **options)
    fused = fusion_only(threaded.ir, dict(threads=2, **options))
    assert not forall_problems(fused), fused
    assert_fused(fused, key_fused=True)
    llvm = _jit.lower(threaded.ir, attention.pipeline(True, threads=2,
                                                      **options))
    assert not openmp_problems(llvm), llvm
    sequential = kernel(c, True, parallel_loops=False, **options)
    got = threaded(*args, **extra)
    assert np.array_equal(got, sequential(*args, **extra))
    scale = max(np.abs(ref).max(), 1.0)
    assert np.abs(got - ref).max() <= tolerance * scale


# -- The structural checks reject what fusion does not produce ---------------
# Each check above, run on the same IR built without rope-fuse-into-attention
# (and, for K, with the other fuse-key policy), must complain: a check that
# also holds unfused would prove nothing.

def _structure_cases():
    cases = []
    for seed in range(24):
        _, config, options = random_case(seed)
        cases.append((f"scores-random-{seed}", config, options))
        _, config, options = random_attention_case(seed)
        cases.append((f"attention-random-{seed}", config, options))
    for layout in ("bhsd", "bshd"):
        cases.append((f"scores-decode-gqa-{layout}", ScoresConfig(
            batch=2, q_heads=8, kv_heads=2, q_len=1, kv_len=300, head_dim=64,
            layout=layout, rotary_dim=32), dict(query_tile=32, key_tile=64)))
        cases.append((f"attention-decode-{layout}", AttentionConfig(
            batch=2, q_heads=8, kv_heads=2, q_len=1, kv_len=300, head_dim=64,
            layout=layout, scale=0.125), dict(query_tile=32, key_tile=64)))
        for softmax in ("named", "decomposed", "frontend"):
            cases.append((f"attention-causal-{softmax}-{layout}",
                          AttentionConfig(
                              batch=2, q_heads=4, kv_heads=2, q_len=37,
                              kv_len=70, head_dim=32, layout=layout,
                              rotary_dim=16, scale=32 ** -0.5, mask=True,
                              softmax=softmax),
                          dict(query_tile=16, key_tile=32, fuse_key="always")))
    for positions in ("offset", "explicit"):
        cases.append((f"scores-batch-matmul-{positions}", ScoresConfig(
            batch=2, q_heads=3, kv_heads=3, q_len=45, kv_len=70, head_dim=32,
            form="batch_matmul", positions=positions),
            dict(query_tile=16, key_tile=32, fuse_key="always")))
    return cases


STRUCTURE_CASES = _structure_cases()


def _emit(config) -> str:
    if isinstance(config, AttentionConfig):
        return attention.emit_attention(config)
    return attention.emit_scores(config)


@pytest.mark.parametrize("name,config,options", STRUCTURE_CASES,
                         ids=[c[0] for c in STRUCTURE_CASES])
def test_checks_reject_unfused_ir(name, config, options):
    ir = _emit(config)
    key_fused = key_is_fused(config.q_len, options)
    unfused = fusion_only(ir, options, fuse=False)
    problems = rope_fusion_problems(unfused, key_fused)
    # Every query check fires: whole Q, outside loops, not used deeper.
    assert len(problems["query"]) == 3, problems
    # Fused K expected: whole K, not in a key loop (either one rejects).
    assert len(problems["key"]) == (2 if key_fused else 1), problems
    if isinstance(config, AttentionConfig):
        found = attention_problems(unfused, config)
        assert any("scores tensor" in p for p in found), found
        assert any("rope.online_attention" in p for p in found), found
    # The other fuse-key policy: Q is fused either way, the K check tells.
    flipped = dict(options, fuse_key="never" if key_fused else "always")
    problems = rope_fusion_problems(fusion_only(ir, flipped), key_fused)
    assert not problems["query"], problems
    assert len(problems["key"]) == (2 if key_fused else 1), problems


def test_peeled_tile_check_rejects_a_second_whole_rotation():
    # The fused IR holds a key loop's rotation and a peeled last tile's;
    # the check's allowance for that second rotation must not take a whole
    # K rotated outside the loops, added beside the fused ones.
    config = AttentionConfig(batch=2, q_heads=4, kv_heads=2, q_len=1,
                             kv_len=300, head_dim=64, scale=0.125)
    options = dict(query_tile=32, key_tile=64)
    fused = fusion_only(_emit(config), options)
    ir = Ir(fused)
    keys = ir.rotations_of("%arg1")
    assert len(keys) == 2, fused  # the key loop's and the peeled tile's
    assert not rope_fusion_problems(fused, True)["key"]
    # Replace the peeled tile's rotation input by the whole K: a rotation
    # of K that is no tile of it.
    tail = min(keys, key=lambda found: len(ir.loops(found[0])))[0]
    line = ir.lines[tail]
    source = re.search(r"rope\.apply ins\((%[\w.$-]+) ", line).group(1)
    whole = [i for i, text in enumerate(ir.lines)
             if re.search(r"= bufferization\.to_tensor %arg1 ", text)]
    assert whole, fused
    whole_k = re.match(r"\s*(%[\w.$-]+) =", ir.lines[whole[0]]).group(1)
    broken = fused.replace(line, line.replace(f"ins({source} ",
                                              f"ins({whole_k} "))
    problems = rope_fusion_problems(broken, True)["key"]
    assert problems == ["a second rotation of the keys that is not a "
                        "peeled last key tile"], problems


def test_mask_skip_check_rejects_unfused_and_unmasked_ir():
    options = dict(query_tile=16, key_tile=32, fuse_key="always")
    config = AttentionConfig(batch=2, q_heads=4, kv_heads=2, q_len=50,
                             kv_len=70, head_dim=32, rotary_dim=16,
                             scale=32 ** -0.5, mask=True)
    unfused = Ir(fusion_only(_emit(config), options, fuse=False))
    assert not any(masked_key_tile_skipped(unfused, i)
                   for i, _ in unfused.rotations_of("%arg1"))
    # Fused without a mask: nothing to skip, no scf.if.
    unmasked = Ir(fusion_only(_emit(dataclasses.replace(config, mask=False)),
                              options))
    assert not any(masked_key_tile_skipped(unmasked, i)
                   for i, _ in unmasked.rotations_of("%arg1"))


@pytest.mark.parametrize("whole", [True, False], ids=["attention", "scores"])
def test_thread_checks_reject_unfused_and_sequential_ir(whole):
    c = ScoresConfig(batch=2, q_heads=4, kv_heads=2, q_len=50, kv_len=70,
                     head_dim=32, rotary_dim=16)
    if whole:
        c = AttentionConfig(**{f.name: getattr(c, f.name)
                               for f in dataclasses.fields(ScoresConfig)},
                            scale=32 ** -0.5, mask=True)
    options = dict(query_tile=16, key_tile=32, fuse_key="always", threads=2)
    ir = _emit(c)
    assert forall_problems(fusion_only(ir, options, fuse=False))
    assert forall_problems(fusion_only(ir, dict(options,
                                                parallel_loops=False)))
    assert openmp_problems(_jit.lower(ir, attention.pipeline(False,
                                                             **options)))
