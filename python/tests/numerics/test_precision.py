# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""SEMANTICS.md §5 precision contract, checked by the quick precision sweep (bench/precision_sweep.py).

Every frequency scheme, both layouts, positions 0 .. 2^24 including near-multiples of 2*pi/theta_i, against
the float64 reference. Bounds and their justification: docs/PRECISION.md.
"""

import importlib.util
import sys

import numpy as np
import pytest

import _paths

ROOT = _paths.ROOT
SWEEP_PATH = ROOT / "bench" / "precision_sweep.py"


def _load_sweep():
    # The sweep imports its sibling bench/_source.py, as a script does.
    if str(SWEEP_PATH.parent) not in sys.path:
        sys.path.insert(0, str(SWEEP_PATH.parent))
    spec = importlib.util.spec_from_file_location("precision_sweep", SWEEP_PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ps = _load_sweep()
SCHEMES = [s["name"] for s in ps.schemes()]
LAYOUTS = ("half", "interleaved")


@pytest.fixture(scope="module")
def results():
    out = {}
    for r in ps.sweep(quick=True, seed=0):
        out[(r["scheme"], r["dtype"], r["layout"])] = r
    return out


def test_sample_reaches_2_24(results):
    for scheme in SCHEMES:
        r = results[(scheme, "f32", "half")]
        if scheme == "longrope_short":
            assert r["pos_max"] == 4095  # the short branch only exists while length <= L
        else:
            assert r["pos_max"] == 1 << 24


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("scheme", SCHEMES)
def test_f32_pairwise_relative_error(results, scheme, layout):
    r = results[(scheme, "f32", layout)]
    assert r["passthrough_ok"]
    assert r["pair"] < ps.F32_PAIR_BOUND, (
        f"{scheme}/{layout}: f32 pair error {r['pair']:.3e} at position {r['pair_at']}")
    assert r["call"] < ps.F32_PAIR_BOUND


@pytest.mark.parametrize("dtype", ("f16", "bf16"))
@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("scheme", SCHEMES)
def test_half_precision_rounded_once(results, scheme, layout, dtype):
    r = results[(scheme, dtype, layout)]
    assert r["passthrough_ok"]
    # Computed in f32 (error <= 2^-20 |pair|) and rounded once: every output is the rounding of such a value,
    assert r["contract_violations"] == 0
    # hence within 1 ulp of the correctly rounded reference wherever |r| >= 2^-8 |pair| (no cancellation),
    assert r["ulp_max_noncancel"] <= ps.HALF_ULP_BOUND
    # and almost always exactly the correctly rounded value.
    assert r["exact_frac"] > 0.999
    assert r["within1_frac"] > 0.9999


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("scheme", SCHEMES)
def test_f64_sanity(results, scheme, layout):
    r = results[(scheme, "f64", layout)]
    assert r["passthrough_ok"]
    assert r["pair_small"] < ps.F64_PAIR_BOUND  # positions <= 4096
    # At large |phi| f64 is limited by theta_i's last bit (ulps of the angle, see PRECISION.md).
    assert r["angle_ulps"] <= ps.F64_ANGLE_ULPS
    # Correctly rounded theta on both sides: ~6e-16 (1.2e-10 for dynamic_ntk's run-time exp, PRECISION.md).
    assert r["pair"] < 1e-9


def test_naive_f32_fails_at_2_24(results):
    """The common f32(pos) * f32(theta) approach must fail on this sample: the sweep can detect it."""
    r = results[("default", "f32", "half")]
    assert r["naive_upto_2^24"] > 1e-3
    assert r["naive_at_2^24"] > 1e-3
    assert r["naive_upto_2^20"] > 1e-3
    assert r["pair"] < ps.F32_PAIR_BOUND


def test_worst_case_positions_present():
    """Near multiples of 2*pi/theta_0 (theta_0 = 1): round(n * 2*pi) for the largest n below 2^24, and the
    continued-fraction best approximations (710 = round(113 * 2*pi), 103993, ...)."""
    theta = np.power(10000.0, -2.0 * np.arange(64) / 128)
    sample = ps.position_sample(theta, 1 << 24, True, np.random.default_rng(0))
    worst = set(sample["worst"].tolist())
    n = int((1 << 24) / (2 * np.pi))
    assert round(n * 2 * np.pi) in worst
    assert round((n + 0.5) * 2 * np.pi) in worst
    assert {710, 103993} <= worst
    # the continued-fraction search finds the k with k mod 2*pi closest to 0
    k = np.arange(1, 1 << 22, dtype=np.float64)  # the best k below 2^22 is a convergent too
    dist = np.abs(np.remainder(k + np.pi, 2 * np.pi) - np.pi)
    assert int(k[np.argmin(dist)]) in worst


def test_round_to_bf16_is_correct():
    """The reference rounding avoids ml_dtypes' double rounding through f32."""
    import ml_dtypes

    v = np.array([1 + 2.0 ** -8 + 2.0 ** -30, -(1 + 2.0 ** -8 + 2.0 ** -30), 1 + 2.0 ** -8, 1 + 3 * 2.0 ** -8])
    got = ps.round_f64_to(v, np.dtype(ml_dtypes.bfloat16)).astype(np.float64)
    assert got.tolist() == [1 + 2.0 ** -7, -(1 + 2.0 ** -7), 1.0, 1 + 2.0 ** -6]
    h = ps.round_f64_to(np.array([1 + 2.0 ** -11 + 2.0 ** -40]), np.dtype(np.float16)).astype(np.float64)
    assert h.tolist() == [1 + 2.0 ** -10]


# angle="turns" (no float wider than f32 in the kernel: i64 phase steps): the same contract, every scheme
# (dynamic_ntk's steps computed per call in fixed point).
TURNS_SCHEMES = SCHEMES


@pytest.fixture(scope="module")
def turns_results():
    out = {}
    for r in ps.sweep(quick=True, seed=1, dtypes=("f32", "bf16"), angle="turns"):
        out[(r["scheme"], r["dtype"], r["layout"])] = r
    return out


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("scheme", TURNS_SCHEMES)
def test_turns_f32_pairwise_relative_error(turns_results, scheme, layout):
    r = turns_results[(scheme, "f32", layout)]
    assert r["angle"] == "turns" and r["passthrough_ok"]
    assert r["pair"] < ps.F32_PAIR_BOUND, (
        f"{scheme}/{layout}: f32 pair error {r['pair']:.3e} at position {r['pair_at']}")
    if scheme != "longrope_short":
        assert r["pos_max"] == 1 << 24


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("scheme", TURNS_SCHEMES)
def test_turns_bf16_rounded_once(turns_results, scheme, layout):
    r = turns_results[(scheme, "bf16", layout)]
    assert r["contract_violations"] == 0
    assert r["ulp_max_noncancel"] <= ps.HALF_ULP_BOUND


@pytest.mark.parametrize("lowering", ("vector", "scalar"))
@pytest.mark.parametrize("layout", LAYOUTS)
def test_turns_agrees_with_f64_across_lowerings(lowering, layout):
    # Both lowerings and a partial rotation, at positions to 2^24 and negative
    # ones: within the f32 contract of the float64 reference.
    import rope_mlir
    from rope_mlir import reference
    rng = np.random.default_rng(5)
    positions = np.concatenate([rng.integers(-(1 << 24), 1 << 24, 60), [0, 1, (1 << 24) - 1, 1 << 24]])
    x = rng.standard_normal((positions.size, 2, 64)).astype(np.float32)
    kernel = rope_mlir.compile(dtype="f32", rank=3, head_dim=64, rotary_dim=48, layout=layout,
                               positions="explicit", positions_dtype="i64", angle="turns", lowering=lowering)
    y = kernel(x, positions)
    r = reference.apply(x.astype(np.float64), positions, layout=layout, rotary_dim=48, base=10000.0)
    assert ps.pair_error(y, r, 48, layout).max() < ps.F32_PAIR_BOUND
    assert np.array_equal(y[..., 48:], x[..., 48:])


# dynamic_ntk's phase steps are built per call from the length in fixed point (i64 only): every branch of
# that arithmetic (a call no longer than M, one just past it where r = 1 + tiny, lengths far past it, factors
# that are not dyadic, tiny and large, every rotary width down to P = 4), against the float64 reference with
# seq_len = max position + 1, positions to 2^24.
DYNAMIC_TURNS_CASES = [
    # (base, factor, M, P, length)
    (10000.0, 2.0, 4096, 128, 4096),
    (10000.0, 2.0, 4096, 128, 4097),
    (10000.0, 2.0, 4096, 128, 4100),
    (10000.0, 1.1, 4096, 128, 6000),
    (500000.0, 8.0, 8192, 128, (1 << 24) + 1),
    (10000.0, 0.3, 100, 64, 777777),
    (10000.0, 37.5, 2048, 256, 1 << 20),
    (10000.0, 1e-6, 64, 32, 1 << 24),
    (1e6, 3.0, 16, 4, 9999999),
    (1.0, 2.0, 512, 16, 70000),
]


@pytest.mark.parametrize("lowering", ("vector", "scalar"))
@pytest.mark.parametrize("base,factor,m,p,length", DYNAMIC_TURNS_CASES)
def test_turns_dynamic_ntk_across_configs(base, factor, m, p, length, lowering):
    import rope_mlir
    from rope_mlir import reference
    rng = np.random.default_rng(length % 1000 + p)
    positions = np.concatenate([rng.integers(0, length, 40), [0, 1, length - 1]])
    x = rng.standard_normal((positions.size, 2, p)).astype(np.float32)
    mlir_float = lambda v: "%.17e" % v  # MLIR's float literals need a '.'
    freqs = (f"#rope.dynamic_ntk<base = {mlir_float(base)}, factor = {mlir_float(factor)}, "
             f"max_position_embeddings = {m}>")
    kernel = rope_mlir.compile(dtype="f32", rank=3, head_dim=p, positions="explicit", positions_dtype="i64",
                               angle="turns", lowering=lowering, freqs=freqs)
    y = kernel(x, positions)
    r = reference.apply(x.astype(np.float64), positions, base=base,
                        scaling={"rope_type": "dynamic", "factor": factor, "max_position_embeddings": m})
    err = ps.pair_error(y, r, p, "half").max()
    assert err < ps.F32_PAIR_BOUND, f"pair error {err:.3e}"


def test_turns_refuses_a_scheme_without_phase_steps():
    # dynamic_ntk with base < 1: theta_0 * w^0 is one turn or more before the scaling, no step to scale.
    import rope_mlir
    with pytest.raises(rope_mlir.CompileError, match="angle=turns has no phase steps"):
        rope_mlir.compile(dtype="f32", rank=3, head_dim=64, positions="explicit", angle="turns",
                          freqs="#rope.dynamic_ntk<base = 0.5, factor = 2.0, max_position_embeddings = 64>")
    with pytest.raises(ValueError, match="angle must be 'f64' or 'turns'"):
        rope_mlir.compile(dtype="f32", rank=3, head_dim=64, angle="f32")
