# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Contractions through `rope-to-llvm-cpu`, executed: linalg.matmul,
linalg.batch_matmul (also with K transposed by indexing_maps) and a
linalg.generic contraction, static and dynamic shapes, sizes that are not
multiples of the register tile, with `vectorize-contractions` on (the
default) and off, against numpy in float64.
"""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from rope_mlir import _jit

TRANSPOSED_B = ("indexing_maps = [affine_map<(b, m, n, d) -> (b, m, d)>, "
                "affine_map<(b, m, n, d) -> (b, n, d)>, "
                "affine_map<(b, m, n, d) -> (b, m, n)>] ")

# linalg.generic contractions as einsum specs over dims b, h, g, m, n, k:
# which operand has unit stride along which dim picks the micro-kernel.
GENERIC = {
    # Q·Kᵀ over [B, H, S, D]: the reduction dim innermost in both (dot form).
    "generic": "bhmk,bhnk->bhmn",
    # GQA decode scores [B, Hkv, G, 1, D]·[B, Hkv, S, D]: two m dims.
    "gqa": "bhgmk,bhnk->bhgmn",
    # P·V: n innermost in the second input and the output (outer product).
    "pv": "bhmk,bhkn->bhmn",
    # Output transposed: m innermost in the first input and the output.
    "m_vector": "bkm,bnk->bnm",
    # No unit-stride dim to vectorize along: left to scalar loops.
    "no_unit_dim": "bmk,bkn->bnm",
    # A GQA prefill tile: K shared by the query heads g (not indexed by
    # them), so packed once for them all when the dot form is packed.
    "shared_k": "bgmk,bnk->bgmn",
    # Its P·V: V shared by the query heads g.
    "shared_v": "bgmk,bkn->bgmn",
}
LETTERS = "bhgmnk"


def emit(kind: str, a_shape, b_shape, c_shape, dynamic: bool,
         element: str = "f32") -> str:
    def t(shape):
        dims = "x".join("?" if dynamic else str(d) for d in shape)
        return f"tensor<{dims}x{element}>"

    ins = f"ins(%a, %b : {t(a_shape)}, {t(b_shape)})"
    outs = f"outs(%c : {t(c_shape)})"
    if kind == "matmul":
        op = f"linalg.matmul {ins} {outs}"
    elif kind == "batch_matmul":
        op = f"linalg.batch_matmul {ins} {outs}"
    elif kind == "batch_matmul_bt":
        op = f"linalg.batch_matmul {TRANSPOSED_B}{ins} {outs}"
    else:
        maps, iterators = generic_maps(kind)
        op = (f"linalg.generic {{indexing_maps = [{maps}], iterator_types = "
              f"[{iterators}]}} {ins} {outs} {{\n"
              f"^bb0(%x: {element}, %y: {element}, %z: {element}):\n"
              f"  %p = arith.mulf %x, %y : {element}\n"
              f"  %s = arith.addf %z, %p : {element}\n"
              "  linalg.yield %s : " + element + "\n}")
    return (f"func.func @f(%a: {t(a_shape)}, %b: {t(b_shape)}, "
            f"%c: {t(c_shape)}) -> {t(c_shape)} "
            "attributes {llvm.emit_c_interface} {\n"
            f"  %r = {op} -> {t(c_shape)}\n"
            f"  return %r : {t(c_shape)}\n}}\n")


def generic_maps(kind: str):
    """The indexing maps and iterator types of GENERIC[kind], as text."""
    spec = GENERIC[kind]
    loops = [d for d in LETTERS if d in spec]
    dims = ", ".join(loops)
    lhs, rest = spec.split(",")
    rhs, out = rest.split("->")
    maps = ", ".join(f"affine_map<({dims}) -> ({', '.join(o)})>"
                     for o in (lhs, rhs, out))
    iterators = ", ".join('"reduction"' if d == "k" else '"parallel"'
                          for d in loops)
    return maps, iterators


def spec_of(kind: str) -> str:
    return {"matmul": "mk,kn->mn", "batch_matmul": "bmk,bkn->bmn",
            "batch_matmul_bt": "bmk,bnk->bmn"}.get(kind) or GENERIC[kind]


def shapes(kind: str, b: int, m: int, n: int, k: int):
    extent = {"b": b, "h": 2, "g": 3, "m": m, "n": n, "k": k}
    lhs, rest = spec_of(kind).split(",")
    rhs, out = rest.split("->")
    return tuple(tuple(extent[d] for d in o) for o in (lhs, rhs, out))


def reference(kind: str, a, b, c):
    a, b, c = (x.astype(np.float64) for x in (a, b, c))
    return c + np.einsum(spec_of(kind), a, b)


KINDS = ("matmul", "batch_matmul", "batch_matmul_bt", *GENERIC)
SIZES = ((1, 1, 1, 1), (2, 5, 7, 3), (3, 17, 33, 19), (1, 64, 48, 40),
         (2, 1, 100, 128), (2, 9, 35, 64))
# Vectorized: every size, static and dynamic. Scalar loops
# (vectorize-contractions=false): the small static sizes suffice.
CASES = ([(kind, size, dynamic, True) for kind in KINDS for size in SIZES
          for dynamic in (False, True)] +
         [(kind, size, False, False) for kind in KINDS for size in SIZES
          if size[1] <= 17])


@pytest.mark.parametrize("kind,size,dynamic,vectorize", CASES)
def test_contraction(kind, size, dynamic, vectorize):
    run_case(kind, size, dynamic, vectorize, np.float32, "f32")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dynamic", [False, True])
def test_contraction_f64(kind, dynamic):
    run_case(kind, (2, 9, 35, 24), dynamic, True, np.float64, "f64")


# The dot form with K transposed into a buffer first (rows >= 16, static
# extents that are multiples of the lanes, 8 or 16): each vector width, the
# packing per outer index (h) or shared (g, b of 1), key blocks of the slab
# (slab-bytes) dividing the keys or not, and the plain dot form beside it
# (slab-bytes=0 changes no form; rows=2 below 16: not packed).
PACKED = [(kind, size, bits, slab)
          for kind in ("generic", "gqa", "shared_k")
          for size in ((1, 32, 64, 128), (2, 16, 48, 32), (1, 24, 80, 16))
          for bits in (256, 512)
          for slab in (16384, 4096, 0)]


@pytest.mark.parametrize("kind,size,bits,slab", PACKED)
def test_packed_contraction(kind, size, bits, slab):
    run_case(kind, size, False, True, np.float32, "f32",
             f" contraction-vector-bits={bits} contraction-slab-bytes={slab}")


def call_f(module, inputs, c_shape, dtype=np.float32, view=None):
    """Calls the module's `f` on `inputs` (the last is the accumulator,
    which the call may update in place) and returns its result, read as
    `view` (a ctypes type; the result's own type by default)."""
    # The result may be c's buffer (in place) or a fresh one: the
    # descriptor the wrapper fills in.
    result = _jit.memref_descriptor(np.empty(c_shape, dtype))
    descs = [_jit.memref_descriptor(x) for x in inputs]
    function = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * (len(inputs) + 1))(
        module.lookup("f"))
    function(ctypes.addressof(result), *(ctypes.addressof(d) for d in descs))
    if view is None:
        view = ctypes.c_float if dtype == np.float32 else ctypes.c_double
    return np.ctypeslib.as_array(
        ctypes.cast(result.aligned, ctypes.POINTER(view)),
        shape=c_shape).copy()


def run_case(kind, size, dynamic, vectorize, dtype, element, options=""):
    a_shape, b_shape, c_shape = shapes(kind, *size)
    module = _jit.compile_module(
        emit(kind, a_shape, b_shape, c_shape, dynamic, element),
        "builtin.module(rope-to-llvm-cpu{emit-c-interface=true "
        f"vectorize-contractions={str(vectorize).lower()}{options}}})")
    rng = np.random.default_rng(sum(size) + len(kind))
    a, b, c = (rng.standard_normal(s).astype(dtype)
               for s in (a_shape, b_shape, c_shape))
    want = reference(kind, a, b, c)  # before the call: c may be updated
    got = call_f(module, (a, b, c), c_shape, dtype)
    k = size[3]
    eps = np.finfo(dtype).eps
    assert np.abs(got - want).max() <= 8 * eps * k * max(
        1.0, np.abs(want).max())


def emit_payload(kind: str, a_shape, b_shape, c_shape, dynamic: bool,
                 inputs: str, body: str) -> str:
    """A linalg.generic contraction of `kind` with f32 output, `inputs`
    element type and the payload `body` (block args %x, %y, %z; yields
    %s)."""
    def t(shape, element):
        dims = "x".join("?" if dynamic else str(d) for d in shape)
        return f"tensor<{dims}x{element}>"
    maps, iterators = generic_maps(kind)
    a, b, c = t(a_shape, inputs), t(b_shape, inputs), t(c_shape, "f32")
    return (f"func.func @f(%a: {a}, %b: {b}, %c: {c}) -> {c} "
            "attributes {llvm.emit_c_interface} {\n"
            f"  %r = linalg.generic {{indexing_maps = [{maps}], "
            f"iterator_types = [{iterators}]}} ins(%a, %b : {a}, {b}) "
            f"outs(%c : {c}) {{\n"
            f"  ^bb0(%x: {inputs}, %y: {inputs}, %z: f32):\n{body}"
            "    linalg.yield %s : f32\n  } -> " + c + "\n"
            f"  return %r : {c}\n}}\n")


BF16_PRODUCT = ("    %xe = arith.extf %x : bf16 to f32\n"
                "    %ye = arith.extf %y : bf16 to f32\n"
                "    %p = arith.mulf %ye, %xe : f32\n"
                "    %s = arith.addf %p, %z : f32\n")
NEGATED_PRODUCT = ("    %n = arith.negf %x : f32\n"
                   "    %p = arith.mulf %n, %y : f32\n"
                   "    %s = arith.addf %z, %p : f32\n")


def bf16_bits(x: np.ndarray) -> np.ndarray:
    """float32 -> bf16 bit patterns (truncated: exact values below)."""
    return (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)


def bf16_values(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


def run_payload(kind, size, dynamic, payload, options=""):
    a_shape, b_shape, c_shape = shapes(kind, *size)
    inputs = "bf16" if payload == "bf16" else "f32"
    body = BF16_PRODUCT if payload == "bf16" else NEGATED_PRODUCT
    module = _jit.compile_module(
        emit_payload(kind, a_shape, b_shape, c_shape, dynamic, inputs, body),
        "builtin.module(rope-to-llvm-cpu{emit-c-interface=true"
        f"{options}}})")
    rng = np.random.default_rng(sum(size) + len(kind))
    a, b, c = (rng.standard_normal(s).astype(np.float32)
               for s in (a_shape, b_shape, c_shape))
    if payload == "bf16":
        a, b = bf16_bits(a), bf16_bits(b)
        want = c.astype(np.float64) + np.einsum(
            spec_of(kind), bf16_values(a).astype(np.float64),
            bf16_values(b).astype(np.float64))
    else:
        want = c.astype(np.float64) - np.einsum(
            spec_of(kind), a.astype(np.float64), b.astype(np.float64))
    got = call_f(module, (a, b, c), c_shape)
    eps = np.finfo(np.float32).eps
    assert np.abs(got - want).max() <= 8 * eps * size[3] * max(
        1.0, np.abs(want).max())


# bf16 inputs widened to an f32 accumulator (attention's Q·Kᵀ and P·V on
# bf16 Q, K, V): every micro-kernel form, packed or not, static and
# dynamic. A payload with a unary op on an operand (-a·b) must not be taken
# for acc + a·b (isaContractionOpInterface accepts it): it is left to the
# scalar loops, which compute what it says.
PAYLOADS = [(kind, size, dynamic, payload, bits)
            for kind in ("generic", "pv", "shared_k", "m_vector")
            for size in ((1, 32, 64, 128), (2, 5, 7, 3), (1, 24, 80, 16))
            for dynamic in (False, True)
            for payload in ("bf16", "negated")
            for bits in (256, 512)]


@pytest.mark.parametrize("kind,size,dynamic,payload,bits", PAYLOADS)
def test_payload(kind, size, dynamic, payload, bits):
    run_payload(kind, size, dynamic, payload,
                f" contraction-vector-bits={bits}")


# bf16 × bf16 products in pairs (`contraction-bf16-products=avx512-dot`,
# AVX512-BF16's vdpbf16ps): the dot form (decode's Q·Kᵀ, a reduction of
# whole 8-element pairs of vectors at least) and the packed outer product
# (K packed as pairs of the reduction, whole 2·lanes blocks); the other
# forms (P·V's plain outer product, reductions the pairs do not divide)
# keep the widened FMAs. `pairs`: whether this case must use vdpbf16ps.
PAIRS = [("generic", (1, 32, 64, 128), 512, True),   # packed, 16 lanes
         ("shared_k", (2, 16, 48, 32), 512, True),   # packed, shared
         ("gqa", (1, 32, 64, 64), 256, True),        # packed, 8 lanes
         ("gqa", (2, 1, 100, 128), 512, True),       # dot form (decode)
         ("generic", (2, 3, 20, 24), 512, True),     # dot form, 4 lanes
         ("generic", (1, 5, 33, 40), 256, True),     # dot form, 4 lanes
         ("generic", (1, 24, 80, 16), 512, False),   # packed, short pairs
         ("generic", (2, 5, 7, 3), 512, False),      # odd reduction
         ("pv", (1, 32, 64, 128), 512, False),       # plain outer product
         ("m_vector", (1, 24, 80, 16), 512, False)]


def pair_options(bits: int) -> str:
    return (f" contraction-vector-bits={bits}"
            " contraction-bf16-products=avx512-dot")


@pytest.mark.parametrize("kind,size,bits,pairs", PAIRS)
def test_bf16_pairs_chosen(kind, size, bits, pairs):
    """The lowered module calls vdpbf16ps exactly where the pairs apply
    (any host: only the IR is built), and never without the option."""
    a_shape, b_shape, c_shape = shapes(kind, *size)
    text = emit_payload(kind, a_shape, b_shape, c_shape, False, "bf16",
                        BF16_PRODUCT)
    lowered = _jit.lower(text, "builtin.module(rope-to-llvm-cpu{"
                         f"emit-c-interface=true{pair_options(bits)}}})")
    assert ("llvm.x86.avx512bf16.dpbf16ps" in lowered) == pairs
    widened = _jit.lower(text, "builtin.module(rope-to-llvm-cpu{"
                         f"emit-c-interface=true contraction-vector-bits="
                         f"{bits}}})")
    assert "dpbf16ps" not in widened


@pytest.mark.skipif(not _jit.host_has_feature("avx512bf16"),
                    reason="vdpbf16ps needs AVX512-BF16 on this host")
@pytest.mark.parametrize("kind,size,bits,pairs", PAIRS)
@pytest.mark.parametrize("dynamic", [False, True])
def test_bf16_pairs(kind, size, bits, pairs, dynamic):
    run_payload(kind, size, dynamic, "bf16", pair_options(bits))


# bf16 × bf16 products on AMX tiles (`contraction-bf16-products=amx`):
# the packed outer product (prefill's Q·Kᵀ) where whole 16×16 tiles fit,
# rows left over as vdpbf16ps pairs; every other form as avx512-dot.
# `tiles`: whether this case must use tdpbf16ps.
AMX = [("generic", (1, 32, 64, 128), 512, True),    # two row tiles
       ("shared_k", (2, 16, 48, 32), 512, True),    # packed once, shared
       ("gqa", (1, 40, 64, 64), 512, True),         # 2 tiles + 8 rows left
       ("gqa", (1, 32, 64, 64), 256, True),         # 8-lane pairs beside
       ("generic", (1, 24, 80, 16), 512, False),    # reduction < 32
       ("generic", (1, 32, 40, 64), 512, False),    # not packed: 40 % 16
       ("gqa", (2, 1, 100, 128), 512, False),       # dot form (decode)
       ("pv", (1, 32, 64, 128), 512, False)]        # plain outer product


def amx_options(bits: int, emulate: bool) -> str:
    return (f" contraction-vector-bits={bits} contraction-bf16-products=amx"
            + (" emulate-bf16-products=true" if emulate else ""))


@pytest.mark.parametrize("kind,size,bits,tiles", AMX)
def test_amx_chosen(kind, size, bits, tiles):
    """The lowered module calls tdpbf16ps exactly where the tiles apply
    (any host: only the IR is built), and not once emulated."""
    a_shape, b_shape, c_shape = shapes(kind, *size)
    text = emit_payload(kind, a_shape, b_shape, c_shape, False, "bf16",
                        BF16_PRODUCT)
    lowered = _jit.lower(text, "builtin.module(rope-to-llvm-cpu{"
                         f"emit-c-interface=true{amx_options(bits, False)}}})")
    assert ("llvm.x86.tdpbf16ps" in lowered) == tiles
    emulated = _jit.lower(text, "builtin.module(rope-to-llvm-cpu{"
                          f"emit-c-interface=true{amx_options(bits, True)}}})")
    assert "tdpbf16ps" not in emulated and "dpbf16ps" not in emulated


@pytest.mark.parametrize("kind,size,bits,tiles", AMX)
@pytest.mark.parametrize("dynamic", [False, True])
def test_amx_emulated(kind, size, bits, tiles, dynamic):
    """The AMX tiling, packing and leftover rows, run on any CPU with the
    tiles and pairs rewritten into plain vector ops
    (rope-emulate-bf16-products), against float64."""
    run_payload(kind, size, dynamic, "bf16", amx_options(bits, True))


def run_pairs_bits(kind, size, options):
    """The f32 output bits of the bf16 `kind` contraction under `options`."""
    a_shape, b_shape, c_shape = shapes(kind, *size)
    module = _jit.compile_module(
        emit_payload(kind, a_shape, b_shape, c_shape, False, "bf16",
                     BF16_PRODUCT),
        f"builtin.module(rope-to-llvm-cpu{{emit-c-interface=true{options}}})")
    rng = np.random.default_rng(7)
    a, b = (bf16_bits(rng.standard_normal(s).astype(np.float32))
            for s in (a_shape, b_shape))
    c = rng.standard_normal(c_shape).astype(np.float32)
    return call_f(module, (a, b, c), c_shape, view=ctypes.c_uint32)


@pytest.mark.skipif(not _jit.host_has_feature("avx512bf16"),
                    reason="vdpbf16ps needs AVX512-BF16 on this host")
@pytest.mark.parametrize("kind,size,bits,pairs", PAIRS[:6])
def test_emulated_pairs_bitwise(kind, size, bits, pairs):
    """The emulation adds a pair's two products in vdpbf16ps' order: the
    same bits as the instruction (no subnormals in these inputs)."""
    native = run_pairs_bits(kind, size, pair_options(bits))
    emulated = run_pairs_bits(
        kind, size, pair_options(bits) + " emulate-bf16-products=true")
    assert np.array_equal(native, emulated)


@pytest.mark.skipif(not (_jit.host_has_feature("amx-bf16") and
                         _jit.host_has_feature("avx512bf16")),
                    reason="tdpbf16ps needs AMX-BF16 on this host")
@pytest.mark.parametrize("kind,size,bits,tiles", AMX)
def test_amx_native(kind, size, bits, tiles):
    """On a host with AMX: the tiles themselves, against float64."""
    run_payload(kind, size, False, "bf16", amx_options(bits, False))


# P·V on AMX tiles: f32 P (split into three bf16 parts that sum to it
# exactly) times bf16 V (packed as interleaved pairs of rows), whole 16×16
# tiles, rows left over as widened FMAs. `tiles`: whether tdpbf16ps is used.
AMX_PV = [("pv", (1, 32, 64, 128), True),        # two row tiles
          ("shared_v", (1, 40, 32, 64), True),   # V shared, 8 rows left
          ("pv", (2, 16, 48, 32), True),         # one tile per head
          ("pv", (1, 32, 40, 64), False),        # reduction 40: not 32s
          ("pv", (1, 32, 64, 40), False),        # columns 40: not 16s
          ("pv", (1, 8, 64, 64), False)]         # too few rows to pack

MIXED_PRODUCT = ("    %ye = arith.extf %y : bf16 to f32\n"
                 "    %p = arith.mulf %x, %ye : f32\n"
                 "    %s = arith.addf %z, %p : f32\n")


def emit_mixed(kind: str, a_shape, b_shape, c_shape, dynamic: bool) -> str:
    """`kind`'s contraction of an f32 first input (P) and a bf16 second
    (V) into f32."""
    def t(shape, element):
        dims = "x".join("?" if dynamic else str(d) for d in shape)
        return f"tensor<{dims}x{element}>"
    maps, iterators = generic_maps(kind)
    a, b, c = t(a_shape, "f32"), t(b_shape, "bf16"), t(c_shape, "f32")
    return (f"func.func @f(%a: {a}, %b: {b}, %c: {c}) -> {c} "
            "attributes {llvm.emit_c_interface} {\n"
            f"  %r = linalg.generic {{indexing_maps = [{maps}], "
            f"iterator_types = [{iterators}]}} ins(%a, %b : {a}, {b}) "
            f"outs(%c : {c}) {{\n"
            f"  ^bb0(%x: f32, %y: bf16, %z: f32):\n{MIXED_PRODUCT}"
            "    linalg.yield %s : f32\n  } -> " + c + "\n"
            f"  return %r : {c}\n}}\n")


def run_mixed(kind, size, dynamic, options, p):
    a_shape, b_shape, c_shape = shapes(kind, *size)
    module = _jit.compile_module(
        emit_mixed(kind, a_shape, b_shape, c_shape, dynamic),
        f"builtin.module(rope-to-llvm-cpu{{emit-c-interface=true{options}}})")
    rng = np.random.default_rng(sum(size))
    v = bf16_bits(rng.standard_normal(b_shape).astype(np.float32))
    c = rng.standard_normal(c_shape).astype(np.float32)
    c_before = c.astype(np.float64)  # the call may update c in place
    got = call_f(module, (p, v, c), c_shape)
    return (got, p.astype(np.float64), bf16_values(v).astype(np.float64),
            c_before)


def probabilities_and_magnitudes(shape, seed):
    """P-like values in [0, 1] in one half, and values of every magnitude
    (1e-30 to 1e30, both signs, all 24 significand bits used) in the
    other: the split into bf16 parts must be exact for all of them."""
    rng = np.random.default_rng(seed)
    p = rng.random(shape)
    wide = rng.standard_normal(shape) * 10.0 ** rng.integers(-30, 31, shape)
    mask = rng.random(shape) < 0.5
    return np.where(mask, p, wide).astype(np.float32)


@pytest.mark.parametrize("kind,size,tiles", AMX_PV)
@pytest.mark.parametrize("dynamic", [False, True])
def test_amx_pv_emulated(kind, size, tiles, dynamic):
    """P·V's split tiles, run emulated on any CPU, against float64: within
    f32 accumulation error of Σ|p|·|v| (each part's product is exact)."""
    a_shape, b_shape, c_shape = shapes(kind, *size)
    p = probabilities_and_magnitudes(a_shape, sum(size))
    got, p64, v64, c = run_mixed(kind, size, dynamic,
                                 amx_options(512, True), p)
    spec = spec_of(kind)
    want = c + np.einsum(spec, p64, v64)
    scale = np.abs(c) + np.einsum(spec, np.abs(p64), np.abs(v64))
    eps = np.finfo(np.float32).eps
    assert (np.abs(got - want) <= 4 * eps * size[3] * scale).all()
    lowered = _jit.lower(
        emit_mixed(kind, a_shape, b_shape, c_shape, dynamic),
        f"builtin.module(rope-to-llvm-cpu{{{amx_options(512, False)}}})")
    assert ("llvm.x86.tdpbf16ps" in lowered) == (tiles and not dynamic)


def test_amx_pv_non_finite():
    """An infinite or NaN P is its own high part: the outputs it reaches
    are the infinities and NaN the widened FMAs give."""
    kind, size = "pv", (1, 32, 64, 128)
    a_shape = shapes(kind, *size)[0]
    p = np.random.default_rng(3).random(a_shape).astype(np.float32)
    p[0, 0, 3, 5], p[0, 1, 17, 40], p[0, 0, 20, 63] = np.inf, -np.inf, np.nan
    tiles = run_mixed(kind, size, False, amx_options(512, True), p)[0]
    fma = run_mixed(kind, size, False, " contraction-vector-bits=512", p)[0]
    assert np.array_equal(np.isnan(tiles), np.isnan(fma))
    assert np.array_equal(np.isposinf(tiles), np.isposinf(fma))
    assert np.array_equal(np.isneginf(tiles), np.isneginf(fma))
    assert np.isinf(tiles).any() and np.isnan(tiles).any()
    finite = np.isfinite(fma)
    assert np.allclose(tiles[finite], fma[finite], rtol=1e-5, atol=1e-5)


@pytest.mark.skipif(not (_jit.host_has_feature("amx-bf16") and
                         _jit.host_has_feature("avx512bf16")),
                    reason="tdpbf16ps needs AMX-BF16 on this host")
@pytest.mark.parametrize("kind,size,tiles", AMX_PV)
def test_amx_pv_native(kind, size, tiles):
    """On a host with AMX: P·V's split tiles themselves, against float64
    (P in [0, 1] only: tdpbf16ps reads parts below 2^-126 as zero)."""
    a_shape, b_shape, c_shape = shapes(kind, *size)
    p = np.random.default_rng(5).random(a_shape).astype(np.float32)
    got, p64, v64, c = run_mixed(kind, size, False, amx_options(512, False),
                                 p)
    spec = spec_of(kind)
    want = c + np.einsum(spec, p64, v64)
    scale = np.abs(c) + np.einsum(spec, np.abs(p64), np.abs(v64))
    eps = np.finfo(np.float32).eps
    assert (np.abs(got - want) <= 4 * eps * size[3] * scale + 2.0 ** -100
            ).all()


ATTENTION = """
#q = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, g, m, k1)>
#k = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, k2, k1)>
#v = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, k2, n)>
#o = affine_map<(b, h, g, m, k1, k2, n) -> (b, h, g, m, n)>
func.func @main(%q: {q}, %k: {kv}, %v: {kv}) -> {q} {{
  %o = tensor.empty() : {q}
  %r = rope.attention ins(%q, %k, %v : {q}, {kv}, {kv}) outs(%o : {q})
         attributes {{indexing_maps = [#q, #k, #v, #o], scale = 0.125 : f64,
                      causal, query_dim = 3}} -> {q}
  return %r : {q}
}}
"""


@pytest.mark.parametrize("tokens", [64, 96])
def test_amx_attention_emulated(tokens):
    """bf16 causal GQA prefill (2 KV heads × 4, D 64) through the whole
    pipeline with both contractions on (emulated) AMX tiles: against
    float64 within the bf16 output's rounding. At 64 tokens every key tile
    is whole: Q·Kᵀ (2 steps of 32) and P·V (3 parts × 2 steps) are tiles."""
    import ml_dtypes
    import rope_mlir
    q_type = f"tensor<1x2x4x{tokens}x64xbf16>"
    kv_type = f"tensor<1x2x{tokens}x64xbf16>"
    text = ATTENTION.format(q=q_type, kv=kv_type)
    lower = ("rope-to-llvm-cpu{emit-c-interface=true runtime-traps=true"
             " contraction-vector-bits=512")
    pipeline = ("builtin.module(rope-optimize, "
                f"{lower}{amx_options(512, True)}}})")
    if tokens == 64:
        lowered = _jit.lower(text, "builtin.module(rope-optimize, "
                             f"{lower}{amx_options(512, False)}}})")
        assert lowered.count("llvm.x86.tdpbf16ps") == 2 + 6
    rng = np.random.default_rng(tokens)
    q = rng.standard_normal((1, 2, 4, tokens, 64)).astype(ml_dtypes.bfloat16)
    k, v = (rng.standard_normal((1, 2, tokens, 64)).astype(ml_dtypes.bfloat16)
            for _ in range(2))
    got = np.asarray(rope_mlir.jit(text, pipeline).function("main")(q, k, v),
                     np.float64)
    q64, k64, v64 = (np.asarray(x, np.float64) for x in (q, k, v))
    scores = np.einsum("bhgmd,bhnd->bhgmn", q64, k64) * 0.125
    scores += np.triu(np.full((tokens, tokens), -np.inf), 1)
    p = np.exp(scores - scores.max(-1, keepdims=True))
    want = np.einsum("bhgmn,bhnd->bhgmd", p / p.sum(-1, keepdims=True), v64)
    # Half a bf16 ulp of each output, plus f32 accumulation.
    assert (np.abs(got - want) <= 2.0 ** -8 * np.abs(want) + 1e-5).all()
