# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Tests of the float64 RoPE reference (python/rope_mlir/reference.py) against SEMANTICS.md.

Expected values here are derived independently of the module under test: scalar `math` loops for the §4
formulas, complex arithmetic (x1 + i·x2)·e^{iφ} for the §1 rotation, hand-worked numbers for a few anchors.
"""

from __future__ import annotations

import cmath
import math

import numpy as np
import pytest

from rope_mlir import reference as ref  # python/ is on the path (conftest.py)

TWO_PI = 2.0 * math.pi


# ----------------------------------------------------------------------------------------------------------
# Independent helpers
# ----------------------------------------------------------------------------------------------------------


def theta_loop(p, b):
    return np.array([math.pow(b, -2.0 * i / p) for i in range(p // 2)])


def pair_indices(layout, p):
    """(first, second) channel index lists of the P/2 pairs, spelled out element by element."""
    if layout == "half":
        return [i for i in range(p // 2)], [i + p // 2 for i in range(p // 2)]
    return [2 * i for i in range(p // 2)], [2 * i + 1 for i in range(p // 2)]


def complex_rope(x, pos_tok, theta, layout, p, a=1.0, token_dims=None, inverse=False):
    """RoPE as complex multiplication. pos_tok: integer positions shaped like the token dims; or, for
    M-RoPE, a callable pair -> positions array shaped like the token dims."""
    x = np.asarray(x, dtype=np.float64)
    rank = x.ndim
    tdims = list(range(rank - 2)) if token_dims is None and rank >= 3 else ([0] if token_dims is None else token_dims)
    nt = len(tdims)
    xm = np.moveaxis(x, tdims, list(range(nt)))  # [*tokens, *others, D]
    n_other = xm.ndim - 1 - nt
    first, second = pair_indices(layout, p)
    out = xm.copy()
    sign = -1.0 if inverse else 1.0
    for j in range(p // 2):
        pj = pos_tok(j) if callable(pos_tok) else pos_tok
        pj = np.asarray(pj, dtype=np.float64).reshape(np.shape(pj) + (1,) * n_other)
        z = xm[..., first[j]] + 1j * xm[..., second[j]]
        rot = a * np.exp(1j * sign * pj * theta[j])
        w = z * rot
        out[..., first[j]] = w.real
        out[..., second[j]] = w.imag
    return np.moveaxis(out, list(range(nt)), tdims)


def rng(seed):
    return np.random.default_rng(seed)


def close(a, b, tol=1e-12):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    scale = max(np.max(np.abs(b), initial=0.0), 1.0)
    err = np.max(np.abs(a - b), initial=0.0)
    assert err <= tol * scale, f"max abs error {err} > {tol * scale}"


# ----------------------------------------------------------------------------------------------------------
# §1 rotation: hand-computed values
# ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("layout", ["half", "interleaved"])
@pytest.mark.parametrize("base", [10000.0, 3.0, 500000.0])
def test_p2_hand_values(layout, base):
    # P = 2: θ_0 = b^0 = 1, so position 1 rotates by exactly 1 rad whatever the base.
    theta, a = ref.inv_frequencies(2, base)
    assert theta.tolist() == [1.0] and a == 1.0
    x = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [3.0, -2.0]])
    pos = np.array([0, 1, 1, 2])
    y = ref.apply(x, pos, layout=layout, base=base)
    c1, s1, c2, s2 = math.cos(1), math.sin(1), math.cos(2), math.sin(2)
    expected = [[1.0, 0.0], [c1, s1], [-s1, c1], [3 * c2 + 2 * s2, -2 * c2 + 3 * s2]]
    close(y, np.array(expected), 1e-15)


def test_p4_layouts_hand_values():
    # base 100, P = 4: θ = [1, 100^(-1/2)] = [1, 0.1]. pos = 10: angles 10 rad and 1 rad.
    x = np.array([[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]])  # D = 6, P = 4: channels 4, 5 pass through
    c0, s0, c1, s1 = math.cos(10), math.sin(10), math.cos(1), math.sin(1)
    y = ref.apply(x, [10], layout="half", rotary_dim=4, base=100.0)
    # half: pairs (0, 2) at θ0 and (1, 3) at θ1
    expected = [1 * c0 - 3 * s0, 2 * c1 - 4 * s1, 3 * c0 + 1 * s0, 4 * c1 + 2 * s1, 5.0, 6.0]
    close(y[0], np.array(expected), 1e-14)
    y = ref.apply(x, [10], layout="interleaved", rotary_dim=4, base=100.0)
    # interleaved: pairs (0, 1) at θ0 and (2, 3) at θ1
    expected = [1 * c0 - 2 * s0, 2 * c0 + 1 * s0, 3 * c1 - 4 * s1, 4 * c1 + 3 * s1, 5.0, 6.0]
    close(y[0], np.array(expected), 1e-14)


def test_cos_sin_shape_and_values():
    theta = np.array([1.0, 0.5, 0.25])
    pos = np.array([[0, 1], [2, 3]])
    c, s = ref.cos_sin(pos, theta, magnitude=2.0)
    assert c.shape == s.shape == (2, 2, 3) and c.dtype == np.float64
    assert c[1, 1, 1] == pytest.approx(2 * math.cos(1.5), abs=1e-15)
    assert s[1, 0, 2] == pytest.approx(2 * math.sin(0.5), abs=1e-15)
    # A large integer position: the product stays float64, matching Python's float math.
    c, s = ref.cos_sin(np.array([2**24 + 1], dtype=np.int64), np.array([1.0]))
    assert c[0, 0] == pytest.approx(math.cos(2**24 + 1), abs=1e-15)


# ----------------------------------------------------------------------------------------------------------
# §1 rotation: independent complex re-derivation
# ----------------------------------------------------------------------------------------------------------


CASES = [
    # (shape, rotary_dim or None, token_dims or None)
    ((7, 16), None, None),
    ((7, 16), 8, None),
    ((2, 5, 3, 12), None, None),
    ((2, 5, 3, 12), 6, None),
    ((9, 4, 10), 2, None),
    ((2, 3, 5, 8), 4, [0, 2]),  # ONNX [B, H, S, D]
    ((3, 2, 4, 2, 6), None, [0, 1, 2]),
]


@pytest.mark.parametrize("layout", ["half", "interleaved"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_against_complex(layout, case):
    shape, p_arg, tdims = CASES[case]
    r = rng(100 + case)
    x = r.standard_normal(shape)
    d = shape[-1]
    p = d if p_arg is None else p_arg
    base = float(r.choice([10000.0, 1e6, 37.5]))
    rank = len(shape)
    td = tdims if tdims is not None else (list(range(rank - 2)) if rank >= 3 else [0])
    tshape = tuple(shape[t] for t in td)
    pos = r.integers(0, 100000, size=tshape)
    y = ref.apply(x, pos, layout=layout, rotary_dim=p_arg, base=base, token_dims=tdims)
    expected = complex_rope(x, pos, theta_loop(p, base), layout, p, token_dims=td)
    close(y, expected, 1e-12)
    # pass-through channels are bit-identical
    assert np.array_equal(y[..., p:], x[..., p:])
    # magnitude and inverse
    y = ref.apply(x, pos, layout=layout, rotary_dim=p_arg, base=base, token_dims=tdims, magnitude=0.75, inverse=True)
    expected = complex_rope(x, pos, theta_loop(p, base), layout, p, a=0.75, token_dims=td, inverse=True)
    close(y, expected, 1e-12)


def test_positions_broadcast_and_default():
    r = rng(1)
    x = r.standard_normal((3, 6, 2, 8))
    pos_s = r.integers(0, 50, size=6)
    # [S] positions broadcast over [B, S]
    close(ref.apply(x, pos_s), ref.apply(x, np.broadcast_to(pos_s, (3, 6))), 0)
    # no positions: index along the last token dim
    close(ref.apply(x), ref.apply(x, np.arange(6)), 0)
    close(ref.apply(x), complex_rope(x, np.broadcast_to(np.arange(6), (3, 6)), theta_loop(8, 10000.0), "half", 8), 1e-13)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_input_dtypes(dtype):
    r = rng(2)
    x = r.standard_normal((4, 2, 16))
    if dtype == "bfloat16":
        ml_dtypes = pytest.importorskip("ml_dtypes")
        xd = x.astype(ml_dtypes.bfloat16)
    else:
        xd = x.astype(dtype)
    y = ref.apply(xd, np.arange(4) * 1000)
    assert y.dtype == np.float64
    x64 = np.array([float(v) for v in xd.reshape(-1)]).reshape(x.shape)
    close(y, complex_rope(x64, np.arange(4) * 1000, theta_loop(16, 10000.0), "half", 16), 1e-13)


# ----------------------------------------------------------------------------------------------------------
# §1 identities
# ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("layout", ["half", "interleaved"])
@pytest.mark.parametrize("scaling", [None, {"rope_type": "llama3"}, {"rope_type": "linear", "factor": 3.0}])
def test_identities(layout, scaling):
    r = rng(3)
    s, h, d, p = 11, 3, 16, 12
    x = r.standard_normal((s, h, d))
    base = 500000.0 if scaling and scaling.get("rope_type") == "llama3" else 10000.0
    kw = dict(layout=layout, rotary_dim=p, base=base, scaling=scaling)
    m = r.integers(-5000, 5000, size=s)
    n = r.integers(-5000, 5000, size=s)
    zero = np.zeros(s, dtype=np.int64)
    rm = ref.apply(x, m, **kw)
    # norm preservation (a = 1)
    close(np.linalg.norm(rm, axis=-1), np.linalg.norm(x, axis=-1), 1e-13)
    # R(0) = I
    close(ref.apply(x, zero, **kw), x, 0)
    # composition R(m) R(n) = R(m + n)
    close(ref.apply(ref.apply(x, n, **kw), m, **kw), ref.apply(x, m + n, **kw), 1e-11)
    # inverse = R(-m), and it undoes R(m)
    close(ref.apply(x, m, inverse=True, **kw), ref.apply(x, -m, **kw), 1e-13)
    close(ref.apply(rm, m, inverse=True, **kw), x, 1e-12)
    # relative position: <R(m)q, R(n)k> = <q, R(n-m)k>
    q = r.standard_normal((s, h, d))
    k = r.standard_normal((s, h, d))
    lhs = np.sum(ref.apply(q, m, **kw) * ref.apply(k, n, **kw), axis=-1)
    rhs = np.sum(q * ref.apply(k, n - m, **kw), axis=-1)
    close(lhs, rhs, 1e-11)


def test_norm_scales_with_magnitude():
    r = rng(4)
    x = r.standard_normal((5, 8))
    y = ref.apply(x, np.arange(5), magnitude=1.5)
    close(np.linalg.norm(y, axis=-1), 1.5 * np.linalg.norm(x, axis=-1), 1e-13)


def test_large_positions_stay_exact():
    # 2^24 + 1 is not representable in f32; a reference that went through f32 would fail this.
    r = rng(5)
    x = r.standard_normal((3, 2, 64))
    one = np.ones(3, dtype=np.int64)
    # float64 angle error is |φ|·2^-53: about 2^-29 at 2^24 and 2^-22 at 2^31, hence the two tolerances.
    for big, tol in (([2**24, 2**24 + 1, 2**24 + 12345], 1e-8), ([2**31, 2**31 + 7, 2**33 + 1], 1e-6)):
        big = np.array(big, dtype=np.int64)
        y = ref.apply(ref.apply(x, big), one)
        close(y, ref.apply(x, big + 1), tol)
        close(ref.apply(x, big), complex_rope(x, big, theta_loop(64, 10000.0), "half", 64), tol)
        assert relative_error_gt(ref.apply(x, big), ref.apply(x, big + 1), 1e-3)


def relative_error_gt(a, b, tol):
    return ref.relative_error(a, b) > tol


def test_long_range_decay():
    # RoFormer's argument: |Σ_i e^{i d θ_i}| decays (on average) as the distance d grows.
    theta, _ = ref.inv_frequencies(128)
    def mean_abs(ds):
        c, s = ref.cos_sin(np.array(ds), theta)
        return float(np.mean(np.hypot(c.sum(-1), s.sum(-1))))
    near, mid, far = mean_abs(range(0, 8)), mean_abs(range(64, 512)), mean_abs(range(4096, 16384))
    assert near > mid > far


# ----------------------------------------------------------------------------------------------------------
# §2 positions: offsets
# ----------------------------------------------------------------------------------------------------------


def test_offsets():
    r = rng(6)
    x = r.standard_normal((3, 5, 2, 8))
    off = np.array([0, 17, 4000])
    expected = ref.apply(x, off[:, None] + np.arange(5))
    close(ref.apply(x, offset=off), expected, 0)
    close(ref.apply(x, offset=off), complex_rope(x, off[:, None] + np.arange(5), theta_loop(8, 1e4), "half", 8), 1e-12)
    close(ref.apply(x, offset=9), ref.apply(x, np.broadcast_to(9 + np.arange(5), (3, 5))), 0)
    close(ref.apply(x, offset=[9]), ref.apply(x, offset=9), 0)
    # rank 2, single token dim: scalar offset
    x2 = r.standard_normal((4, 8))
    close(ref.apply(x2, offset=100), ref.apply(x2, 100 + np.arange(4)), 0)


# ----------------------------------------------------------------------------------------------------------
# §3 caches
# ----------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_gathered_cache_equals_computed(layout):
    r = rng(7)
    m_max, p = 64, 8
    x = r.standard_normal((2, 6, 3, 12))
    pos = r.integers(0, m_max, size=(2, 6))
    theta = theta_loop(p, 10000.0)
    cc, sc = ref.cos_sin(np.arange(m_max), theta)
    y = ref.apply(x, pos, layout=layout, cos_cache=cc, sin_cache=sc)
    close(y, ref.apply(x, pos, layout=layout, rotary_dim=p), 1e-15)
    close(y, complex_rope(x, pos, theta, layout, p), 1e-13)
    # offset form with caches
    close(ref.apply(x, offset=[3, 40], layout=layout, cos_cache=cc, sin_cache=sc),
          ref.apply(x, np.array([3, 40])[:, None] + np.arange(6), layout=layout, rotary_dim=p), 1e-15)
    # explicit magnitude multiplies the caches; inverse negates sin
    close(ref.apply(x, pos, layout=layout, cos_cache=cc, sin_cache=sc, magnitude=0.5, inverse=True),
          complex_rope(x, pos, theta, layout, p, a=0.5, inverse=True), 1e-13)


def test_cache_holding_scaled_magnitude():
    # A YaRN model imported with pre-scaled caches: a already in the caches, default magnitude 1 there.
    r = rng(8)
    scaling = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}
    x = r.standard_normal((10, 2, 16))
    pos = r.integers(0, 256, size=10)
    theta, a = ref.inv_frequencies(16, 10000.0, scaling)
    assert a > 1.0
    cc, sc = ref.cos_sin(np.arange(256), theta, magnitude=a)
    close(ref.apply(x, pos, cos_cache=cc, sin_cache=sc), ref.apply(x, pos, scaling=scaling), 1e-14)


def test_pregathered_cache():
    r = rng(9)
    b, h, s, d, p = 2, 3, 5, 10, 6
    x = r.standard_normal((b, h, s, d))  # ONNX [B, H, S, D]: token dims 0 and 2
    pos = r.integers(0, 1000, size=(b, s))
    cc, sc = ref.cos_sin(pos, theta_loop(p, 10000.0))  # [B, S, P/2]
    for layout in ("half", "interleaved"):
        y = ref.apply(x, token_dims=[0, 2], cos_cache=cc, sin_cache=sc, layout=layout)
        close(y, ref.apply(x, pos, token_dims=[0, 2], rotary_dim=p, layout=layout), 1e-15)
        close(y, complex_rope(x, pos, theta_loop(p, 1e4), layout, p, token_dims=[0, 2]), 1e-13)
    # gathered vs pre-gathered
    big_c, big_s = ref.cos_sin(np.arange(1000), theta_loop(p, 10000.0))
    close(ref.apply(x, pos, token_dims=[0, 2], cos_cache=big_c, sin_cache=big_s),
          ref.apply(x, token_dims=[0, 2], cos_cache=big_c[pos], sin_cache=big_s[pos]), 0)


@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_out_of_range_cache_position_is_nan_in_rotated_channels(layout):
    r = rng(10)
    m_max, p, d = 16, 4, 10
    x = r.standard_normal((5, 2, d))
    cc, sc = ref.cos_sin(np.arange(m_max), theta_loop(p, 10000.0))
    pos = np.array([0, m_max, 3, -1, m_max - 1])
    y = ref.apply(x, pos, layout=layout, cos_cache=cc, sin_cache=sc)
    bad = np.array([False, True, False, True, False])
    first, second = pair_indices(layout, p)
    rotated = sorted(first + second)
    assert np.all(np.isnan(y[bad][..., rotated]))
    assert np.array_equal(y[bad][..., p:], x[bad][..., p:])  # pass-through untouched
    assert np.all(np.isfinite(y[~bad]))
    close(y[~bad], complex_rope(x[~bad], pos[~bad], theta_loop(p, 1e4), layout, p), 1e-13)


# ----------------------------------------------------------------------------------------------------------
# §4 scaling schemes
# ----------------------------------------------------------------------------------------------------------


def test_linear():
    theta, a = ref.inv_frequencies(8, 10000.0, {"rope_type": "linear", "factor": 4.0})
    close(theta, np.array([1.0, 0.1, 0.01, 0.001]) / 4.0, 1e-15)
    assert a == 1.0
    # linear scaling == positions divided by s (on positions that are multiples of s)
    r = rng(11)
    x = r.standard_normal((6, 16))
    pos = 4 * r.integers(0, 1000, size=6)
    close(ref.apply(x, pos, scaling={"type": "linear", "factor": 4}), ref.apply(x, pos // 4), 1e-11)


def test_ntk_static():
    p, b, s = 16, 10000.0, 4.0
    theta, a = ref.inv_frequencies(p, b, {"rope_type": "ntk", "factor": s})
    b2 = b * s ** (16 / 14)
    close(theta, theta_loop(p, b2), 1e-14)
    assert theta[0] == 1.0 and a == 1.0


def test_dynamic_ntk():
    p, b, s, m = 64, 10000.0, 2.0, 2048
    cfg = {"rope_type": "dynamic", "factor": s, "max_position_embeddings": m}
    default = theta_loop(p, b)
    for seq_len in (None, 1, 100, m):
        theta, a = ref.inv_frequencies(p, b, cfg, seq_len=seq_len)
        close(theta, default, 1e-15)
        assert a == 1.0
    # ℓ = 4096 = 2M: b' = b (2·2 − 1)^(64/62) = b 3^(32/31)
    theta, _ = ref.inv_frequencies(p, b, cfg, seq_len=4096)
    close(theta, theta_loop(p, b * 3.0 ** (32 / 31)), 1e-14)
    theta2, _ = ref.inv_frequencies(p, b, cfg, seq_len=8192)
    assert np.all(theta2[1:] < theta[1:])  # longer context, lower frequencies
    # max_position_embeddings is the threshold (transformers 5.25, issue 37);
    # an original_max_position_embeddings beside it is not read, and is the
    # threshold only without it
    cfg2 = dict(cfg, original_max_position_embeddings=1024)
    theta3, _ = ref.inv_frequencies(p, b, cfg2, seq_len=4096)
    close(theta3, theta_loop(p, b * 3.0 ** (32 / 31)), 1e-14)
    cfg3 = {"rope_type": "dynamic", "factor": s, "original_max_position_embeddings": 1024}
    theta4, _ = ref.inv_frequencies(p, b, cfg3, seq_len=4096)
    close(theta4, theta_loop(p, b * (2 * 4096 / 1024 - 1) ** (64 / 62)), 1e-14)
    # apply uses seq_len = max(pos) + 1 over the call
    r = rng(12)
    x = r.standard_normal((3, 2, p))
    short = np.array([0, 5, 2047])
    close(ref.apply(x, short, scaling=cfg), complex_rope(x, short, default, "half", p), 1e-12)
    long_ = np.array([0, 5, 4095])
    close(ref.apply(x, long_, scaling=cfg), complex_rope(x, long_, theta_loop(p, b * 3.0 ** (32 / 31)), "half", p), 1e-12)
    # offset form: max = offset + S - 1
    close(ref.apply(x, offset=4093, scaling=cfg), complex_rope(x, 4093 + np.arange(3), theta_loop(p, b * 3.0 ** (32 / 31)), "half", p), 1e-12)


def yarn_expected(p, b, s, big_l, beta_fast=32.0, beta_slow=1.0, truncate=True):
    def cd(r):
        return p * math.log(big_l / (TWO_PI * r)) / (2 * math.log(b))
    lo, hi = cd(beta_fast), cd(beta_slow)
    if truncate:
        lo, hi = math.floor(lo), math.ceil(hi)
    lo, hi = min(max(lo, 0), p - 1), min(max(hi, 0), p - 1)
    if lo == hi:
        hi += 0.001
    out = []
    for i in range(p // 2):
        t = math.pow(b, -2.0 * i / p)
        e = 1.0 - min(max((i - lo) / (hi - lo), 0.0), 1.0)
        out.append(t / s * (1 - e) + t * e)
    return np.array(out), lo, hi


def g(s, m=1.0):
    return 1.0 if s <= 1 else 0.1 * m * math.log(s) + 1.0


def test_yarn_qwen25():
    p, b, s, big_l = 128, 1e6, 4.0, 32768
    theta, a = ref.inv_frequencies(p, b, {"rope_type": "yarn", "factor": s, "original_max_position_embeddings": big_l})
    expected, lo, hi = yarn_expected(p, b, s, big_l)
    assert (lo, hi) == (23, 40)  # hand-worked: cd(32) = 23.6, cd(1) = 39.6
    close(theta, expected, 1e-14)
    base_theta = theta_loop(p, b)
    close(theta[:24], base_theta[:24], 1e-15)  # i <= low: pure extrapolation
    close(theta[40:], base_theta[40:] / 4, 1e-15)  # i >= high: pure interpolation
    assert a == pytest.approx(1 + 0.1 * math.log(4), abs=1e-15)
    assert a == pytest.approx(1.1386294361119890, abs=1e-15)
    # through apply, the magnitude is applied
    r = rng(13)
    x = r.standard_normal((4, 2, p))
    pos = r.integers(0, 131072, size=4)
    cfg = {"type": "yarn", "factor": s, "original_max_position_embeddings": big_l}
    # angles reach ~1.3e5 rad: two float64 evaluation orders differ by ~angle * 2^-52, so 1e-12 would
    # depend on the installed numpy's sin/cos
    close(ref.apply(x, pos, base=b, scaling=cfg), complex_rope(x, pos, expected, "half", p, a=a), 1e-10)


def test_yarn_deepseek():
    p, b, s, big_l = 64, 10000.0, 40.0, 4096
    base_cfg = {"rope_type": "yarn", "factor": s, "original_max_position_embeddings": big_l,
                "beta_fast": 32, "beta_slow": 1}
    expected, lo, hi = yarn_expected(p, b, s, big_l)
    assert (lo, hi) == (10, 23)
    theta, a = ref.inv_frequencies(p, b, dict(base_cfg, mscale=0.707, mscale_all_dim=0.707))
    close(theta, expected, 1e-14)
    assert a == 1.0  # g(s, m)/g(s, m)
    _, a = ref.inv_frequencies(p, b, dict(base_cfg, mscale=1.0, mscale_all_dim=0.707))
    assert a == pytest.approx((0.1 * math.log(40) + 1) / (0.0707 * math.log(40) + 1), rel=1e-15)
    # only one of mscale / mscale_all_dim: g(s) with m = 1
    _, a = ref.inv_frequencies(p, b, dict(base_cfg, mscale=0.707))
    assert a == pytest.approx(g(40.0), rel=1e-15)
    # attention_factor overrides everything
    _, a = ref.inv_frequencies(p, b, dict(base_cfg, mscale=1.0, mscale_all_dim=0.707, attention_factor=0.3))
    assert a == 0.3
    # s <= 1: g = 1
    _, a = ref.inv_frequencies(p, b, dict(base_cfg, factor=0.5))
    assert a == 1.0


def test_yarn_untruncated_gpt_oss():
    p, b, s, big_l = 64, 150000.0, 32.0, 4096
    cfg = {"rope_type": "yarn", "factor": s, "original_max_position_embeddings": big_l, "truncate": False,
           "beta_fast": 32.0, "beta_slow": 1.0}
    theta, a = ref.inv_frequencies(p, b, cfg)
    expected, lo, hi = yarn_expected(p, b, s, big_l, truncate=False)
    assert lo != int(lo) and hi != int(hi)
    close(theta, expected, 1e-14)
    truncated, _ = ref.inv_frequencies(p, b, dict(cfg, truncate=True))
    assert not np.allclose(theta, truncated, rtol=1e-6, atol=0)
    assert a == pytest.approx(0.1 * math.log(32) + 1, rel=1e-15)


def test_yarn_low_equals_high_and_clamping():
    # L so small that cd(·) < 0: both clamp to 0, high becomes 0.001 → e_0 = 1, every other pair interpolated.
    p, b, s = 16, 10000.0, 2.0
    theta, _ = ref.inv_frequencies(p, b, {"rope_type": "yarn", "factor": s, "original_max_position_embeddings": 2})
    t = theta_loop(p, b)
    close(theta, np.concatenate([t[:1], t[1:] / s]), 1e-15)
    # cd(β_slow) < -1 (ceil is -1, not 0): high still clamps up to 0, so again only pair 0 is extrapolated.
    for cfg in ({"original_max_position_embeddings": 1},
                {"original_max_position_embeddings": 64, "beta_fast": 1000.0, "beta_slow": 100.0},
                {"original_max_position_embeddings": 64, "beta_fast": 1000.0, "beta_slow": 100.0, "truncate": False}):
        expected, lo, hi = yarn_expected(p, b, s, cfg["original_max_position_embeddings"],
                                         cfg.get("beta_fast", 32.0), cfg.get("beta_slow", 1.0),
                                         cfg.get("truncate", True))
        assert (lo, hi) == (0, 0.001)
        theta, _ = ref.inv_frequencies(p, b, dict(cfg, rope_type="yarn", factor=s))
        close(theta, np.concatenate([t[:1], t[1:] / s]), 1e-15)
    # Huge L: cd(32) > P-1, both clamp to P-1 → ramp 0 everywhere → all extrapolated (θ unchanged)
    theta, _ = ref.inv_frequencies(p, 10.0, {"rope_type": "yarn", "factor": s, "original_max_position_embeddings": 10**12})
    close(theta, theta_loop(p, 10.0), 1e-15)
    expected, lo, hi = yarn_expected(p, 10.0, s, 10**12)
    assert lo == p - 1 and hi == p - 1 + 0.001
    # beta defaults are 32 and 1
    cfg = {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 4096}
    close(ref.inv_frequencies(64, 1e4, cfg)[0], ref.inv_frequencies(64, 1e4, dict(cfg, beta_fast=32, beta_slow=1))[0], 0)
    # HF fallback: L = max_position_embeddings when no original_max_position_embeddings
    close(ref.inv_frequencies(64, 1e4, {"rope_type": "yarn", "factor": 8.0, "max_position_embeddings": 4096})[0],
          ref.inv_frequencies(64, 1e4, cfg)[0], 0)


def llama3_expected(p, b, s, lf, hf, big_l):
    out = []
    for i in range(p // 2):
        t = math.pow(b, -2.0 * i / p)
        lam = TWO_PI / t
        if lam < big_l / hf:
            out.append(t)
        elif lam > big_l / lf:
            out.append(t / s)
        else:
            mu = (big_l / lam - lf) / (hf - lf)
            out.append((1 - mu) * t / s + mu * t)
    return np.array(out)


def test_llama3():
    p, b = 128, 500000.0
    cfg = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
           "original_max_position_embeddings": 8192}
    theta, a = ref.inv_frequencies(p, b, cfg)
    assert a == 1.0
    close(theta, llama3_expected(p, b, 8.0, 1.0, 4.0, 8192), 1e-14)
    t = theta_loop(p, b)
    # Hand-worked bands: λ_i < 2048 ⇔ i <= 28 (unchanged); λ_i > 8192 ⇔ i >= 35 (/8); 29..34 smoothed.
    close(theta[:29], t[:29], 1e-15)
    close(theta[35:], t[35:] / 8, 1e-15)
    mid = theta[29:35] / t[29:35]
    assert np.all((mid > 1 / 8) & (mid < 1)) and np.all(np.diff(mid) < 0)
    # The Llama 3.1 values are the defaults
    close(ref.inv_frequencies(p, b, {"rope_type": "llama3"})[0], theta, 0)
    # another config
    cfg2 = {"rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192}
    close(ref.inv_frequencies(64, 500000.0, cfg2)[0], llama3_expected(64, 500000.0, 32.0, 1.0, 4.0, 8192), 1e-14)


def test_longrope():
    p, b, big_l, m = 96, 10000.0, 4096, 131072
    r = rng(14)
    short = 1.0 + r.random(p // 2)
    long_ = 1.0 + 40 * r.random(p // 2)
    cfg = {"rope_type": "longrope", "short_factor": list(short), "long_factor": list(long_),
           "original_max_position_embeddings": big_l, "max_position_embeddings": m}
    t = theta_loop(p, b)
    expected_a = math.sqrt(17 / 12)  # s = 131072 / 4096 = 32: sqrt(1 + ln 32 / ln 4096) = sqrt(1 + 5/12)
    for seq_len, ext in ((None, short), (1, short), (big_l, short), (big_l + 1, long_), (m, long_)):
        theta, a = ref.inv_frequencies(p, b, cfg, seq_len=seq_len)
        close(theta, t / ext, 1e-15)
        assert a == pytest.approx(expected_a, rel=1e-15)
    # explicit factor replaces M/L; attention_factor overrides
    _, a = ref.inv_frequencies(p, b, dict(cfg, factor=16.0))
    assert a == pytest.approx(math.sqrt(1 + math.log(16) / math.log(4096)), rel=1e-15)
    _, a = ref.inv_frequencies(p, b, dict(cfg, attention_factor=1.25))
    assert a == 1.25
    # s <= 1: a = 1
    _, a = ref.inv_frequencies(p, b, dict(cfg, max_position_embeddings=big_l))
    assert a == 1.0
    # through apply: the switch follows max position + 1 over the call
    x = r.standard_normal((3, 2, p))
    pos_short = np.array([0, 10, big_l - 1])
    pos_long = np.array([0, 10, big_l])
    close(ref.apply(x, pos_short, scaling=cfg), complex_rope(x, pos_short, t / short, "half", p, a=expected_a), 1e-12)
    close(ref.apply(x, pos_long, scaling=cfg), complex_rope(x, pos_long, t / long_, "half", p, a=expected_a), 1e-12)


def test_proportional():
    # D = 8, f = 0.5: k = int(0.5·8/2) = 2; θ = [1, 100^(-2/8), 0, 0] / s
    cfg = {"rope_type": "proportional", "partial_rotary_factor": 0.5, "factor": 2.0}
    theta, a = ref.inv_frequencies(8, 100.0, cfg, head_dim=8)
    close(theta, np.array([1.0, 100.0 ** -0.25, 0.0, 0.0]) / 2.0, 1e-15)
    assert a == 1.0
    # factor defaults to 1; f defaults to 1 (all D/2 frequencies, exponent over D)
    close(ref.inv_frequencies(8, 100.0, {"rope_type": "proportional", "partial_rotary_factor": 0.5})[0],
          np.array([1.0, 100.0 ** -0.25, 0.0, 0.0]), 1e-15)
    close(ref.inv_frequencies(8, 100.0, {"rope_type": "proportional"})[0], theta_loop(8, 100.0), 1e-15)
    # f·D/2 not an integer: floor (int). D = 10, f = 0.3 → k = 1
    close(ref.inv_frequencies(10, 100.0, {"rope_type": "proportional", "partial_rotary_factor": 0.3})[0],
          np.array([1.0, 0, 0, 0, 0]), 0)
    # apply: the zero-frequency pairs are identity, so half-layout channels (2, 6), (3, 7) pass through
    r = rng(15)
    x = r.standard_normal((5, 8))
    y = ref.apply(x, np.arange(5) * 7, base=100.0, scaling=cfg)
    assert np.array_equal(y[:, [2, 3, 6, 7]], x[:, [2, 3, 6, 7]])
    close(y, complex_rope(x, np.arange(5) * 7, np.array([0.5, 0.5 * 100.0 ** -0.25, 0, 0]), "half", 8), 1e-13)


def test_partial_rotary_factor_default_type():
    # Non-proportional types: P = int(f·D), frequencies over P (GLM / Phi style)
    r = rng(16)
    x = r.standard_normal((4, 16))
    cfg = {"rope_type": "default", "partial_rotary_factor": 0.5}
    y = ref.apply(x, np.arange(4), scaling=cfg)
    close(y, ref.apply(x, np.arange(4), rotary_dim=8), 0)
    theta, _ = ref.inv_frequencies(8, 10000.0, cfg, head_dim=16)
    close(theta, theta_loop(8, 10000.0), 0)
    with pytest.raises(ValueError):
        ref.inv_frequencies(12, 10000.0, cfg, head_dim=16)


def test_aliases_and_passthrough_keys():
    t = theta_loop(16, 1e6)
    close(ref.inv_frequencies(16, 1e6, None)[0], t, 0)
    close(ref.inv_frequencies(16, 1e6, {})[0], t, 0)
    close(ref.inv_frequencies(16, 1e6, {"type": "default"})[0], t, 0)
    # Qwen2-VL style {"type": "mrope", "mrope_section": [...]} is the default frequency spec
    close(ref.inv_frequencies(16, 1e6, {"type": "mrope", "mrope_section": [2, 3, 3]})[0], t, 0)
    close(ref.inv_frequencies(16, 1e6, {"rope_type": "default", "rope_theta": 1e6})[0], t, 0)


INVALID = [
    (8, {"rope_type": "bogus"}, {}),
    (8, {"rope_type": "linear", "factor": 0}, {}),
    (8, {"rope_type": "linear", "factor": -2.0}, {}),
    (8, {"rope_type": "linear", "factor": float("nan")}, {}),
    (8, {"rope_type": "linear"}, {}),
    (8, {"rope_type": "yarn", "factor": 4.0}, {}),  # no L
    (8, {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 0}, {}),
    (8, {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64, "truncate": "no"}, {}),
    (8, {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64, "betafast": 16}, {}),
    (8, {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64, "beta_slow": 0}, {}),
    (8, {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64, "attention_factor": 0}, {}),
    (2, {"rope_type": "ntk", "factor": 2.0}, {}),
    (2, {"rope_type": "dynamic", "factor": 2.0, "max_position_embeddings": 64}, {}),
    (8, {"rope_type": "dynamic", "factor": 2.0}, {}),  # no M
    (8, {"rope_type": "llama3", "low_freq_factor": 4.0, "high_freq_factor": 4.0}, {}),
    (8, {"rope_type": "longrope", "short_factor": [1, 1, 1], "long_factor": [1, 1, 1, 1],
         "original_max_position_embeddings": 64}, {}),
    (8, {"rope_type": "longrope", "short_factor": [1, 1, 1, 0], "long_factor": [1, 1, 1, 1],
         "original_max_position_embeddings": 64}, {}),
    (8, {"rope_type": "longrope", "short_factor": [1, 1, 1, 1], "original_max_position_embeddings": 64}, {}),
    (8, {"rope_type": "proportional", "partial_rotary_factor": 0.5}, {"head_dim": 16}),  # P must be D
    (8, {"rope_type": "proportional", "partial_rotary_factor": 1.5}, {}),
    (8, {"rope_type": "linear", "type": "yarn", "factor": 2.0}, {}),
    (8, {"rope_type": "default", "rope_theta": 500000.0}, {}),  # disagrees with base
    (8, {"factor": 2.0}, {}),  # no type
    (8, "linear", {}),
    (7, None, {}),  # odd P
    (0, None, {}),
    (-4, None, {}),
    (10, None, {"head_dim": 8}),  # P > D
    (8, None, {"base": 0.0}),
    (8, None, {"base": -5.0}),
]


@pytest.mark.parametrize("case", range(len(INVALID)))
def test_invalid_configs(case):
    p, scaling, kw = INVALID[case]
    with pytest.raises(ValueError):
        ref.inv_frequencies(p, kw.pop("base", 10000.0), scaling, **kw)


def test_invalid_apply_arguments():
    x = np.zeros((4, 2, 8))
    cc = np.zeros((16, 4))
    bad = [
        dict(positions=np.arange(4), offset=3),
        dict(positions=np.arange(4), cos_cache=cc),
        dict(positions=np.arange(4), cos_cache=cc, sin_cache=cc, scaling={"rope_type": "linear", "factor": 2}),
        dict(positions=np.arange(4), cos_cache=cc, sin_cache=cc, rotary_dim=4),
        dict(positions=np.arange(4), layout="neox"),
        dict(positions=np.arange(5)),
        dict(positions=np.arange(4) + 0.5),
        dict(positions=np.arange(4), rotary_dim=10),
        dict(positions=np.arange(4), rotary_dim=3),
        dict(offset=np.arange(3)),  # one token dim: per-row offsets need a second token dim
        dict(positions=np.zeros((3, 4), int), mrope_section=[1, 1, 1]),  # sum != P/2
        dict(mrope_section=[2, 1, 1]),  # M-RoPE needs positions
        dict(positions=np.zeros((2, 4), int), mrope_section=[2, 1, 1]),  # leading axis must be 3
        dict(positions=np.arange(4), mrope_interleaved=True),
        dict(positions=np.arange(4), token_dims=[2]),  # channel dim
        dict(positions=np.arange(4), token_dims=[1, 0]),
    ]
    for kw in bad:
        kw = dict(kw)
        pos = kw.pop("positions", None)
        with pytest.raises(ValueError):
            ref.apply(x, pos, **kw)
    with pytest.raises(ValueError):
        ref.apply(np.zeros(8), None)  # rank 1 needs explicit token_dims
    close(ref.apply(np.ones(8), 5, token_dims=[]), ref.apply(np.ones((1, 8)), [5])[0], 0)


# ----------------------------------------------------------------------------------------------------------
# §2 M-RoPE
# ----------------------------------------------------------------------------------------------------------


def test_mrope_chunked():
    # Qwen2-VL style, scaled down: P/2 = 8, sections [t, h, w] = [2, 3, 3] → pairs t t h h h w w w
    axes = [0, 0, 1, 1, 1, 2, 2, 2]
    p = 16
    r = rng(17)
    x = r.standard_normal((2, 5, 3, 20))
    pos3 = r.integers(0, 500, size=(3, 2, 5))
    theta = theta_loop(p, 10000.0)
    for layout in ("half", "interleaved"):
        y = ref.apply(x, pos3, rotary_dim=p, layout=layout, mrope_section=[2, 3, 3])
        close(y, complex_rope(x, lambda j: pos3[axes[j]], theta, layout, p), 1e-12)
    # positions per axis broadcast like plain positions: [3, S] over [B, S]
    pos_s = r.integers(0, 500, size=(3, 5))
    close(ref.apply(x, pos_s, rotary_dim=p, mrope_section=[2, 3, 3]),
          ref.apply(x, np.broadcast_to(pos_s[:, None, :], (3, 2, 5)), rotary_dim=p, mrope_section=[2, 3, 3]), 0)


def test_mrope_interleaved():
    # Qwen3-VL style, scaled down: P/2 = 16, sections [6, 5, 5]: j%3==1, j<15 → h; j%3==2, j<15 → w; else t
    axes = [0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2, 0]
    p = 32
    r = rng(18)
    x = r.standard_normal((7, 2, 32))
    pos3 = r.integers(0, 10000, size=(3, 7))
    theta = theta_loop(p, 5e6)
    for layout in ("half", "interleaved"):
        y = ref.apply(x, pos3, base=5e6, layout=layout, mrope_section=[6, 5, 5], mrope_interleaved=True)
        close(y, complex_rope(x, lambda j: pos3[axes[j]], theta, layout, p), 1e-12)
    # Uneven sections: [4, 2, 2] with P/2 = 8: h at j=1,4; w at j=2,5; t at 0,3,6,7
    axes2 = [0, 1, 2, 0, 1, 2, 0, 0]
    y = ref.apply(x[..., :16], pos3, base=5e6, mrope_section=[4, 2, 2], mrope_interleaved=True)
    close(y, complex_rope(x[..., :16], lambda j: pos3[axes2[j]], theta_loop(16, 5e6), "half", 16), 1e-12)


@pytest.mark.parametrize("interleaved", [False, True])
def test_mrope_axis_isolation_and_text_tokens(interleaved):
    r = rng(19)
    p, sec = 16, [2, 3, 3]
    x = r.standard_normal((6, 16))
    pos = r.integers(0, 1000, size=6)
    kw = dict(mrope_section=sec, mrope_interleaved=interleaved)
    # text tokens (t = h = w) behave as plain RoPE
    close(ref.apply(x, np.stack([pos, pos, pos]), **kw), ref.apply(x, pos), 1e-15)
    # changing only the h axis moves only the h pairs
    # interleaved, P/2 = 8: h where j%3==1 and j<9 (1, 4, 7), w where j%3==2 and j<9 (2, 5), t at 0, 3, 6
    axes = ([0, 1, 2, 0, 1, 2, 0, 1] if interleaved else [0, 0, 1, 1, 1, 2, 2, 2])
    base = np.stack([pos, pos, pos])
    moved = base.copy()
    moved[1] += 37
    y0, y1 = ref.apply(x, base, **kw), ref.apply(x, moved, **kw)
    first, second = pair_indices("half", p)
    for j in range(p // 2):
        same = np.array_equal(y0[:, [first[j], second[j]]], y1[:, [first[j], second[j]]])
        assert same == (axes[j] != 1), j


def test_mrope_with_gathered_cache():
    r = rng(20)
    p, m_max = 16, 300
    x = r.standard_normal((5, 2, 16))
    pos3 = r.integers(0, m_max, size=(3, 5))
    cc, sc = ref.cos_sin(np.arange(m_max), theta_loop(p, 10000.0))
    for inter in (False, True):
        kw = dict(mrope_section=[2, 3, 3], mrope_interleaved=inter)
        close(ref.apply(x, pos3, cos_cache=cc, sin_cache=sc, **kw), ref.apply(x, pos3, **kw), 1e-15)
    # an out-of-range w position poisons only the w pairs
    pos3[2, 0] = m_max
    y = ref.apply(x, pos3, cos_cache=cc, sin_cache=sc, mrope_section=[2, 3, 3])
    first, second = pair_indices("half", p)
    w_channels = [first[j] for j in (5, 6, 7)] + [second[j] for j in (5, 6, 7)]
    assert np.all(np.isnan(y[0][..., w_channels]))
    assert np.sum(np.isnan(y)) == 2 * len(w_channels)


# ----------------------------------------------------------------------------------------------------------
# relative_error
# ----------------------------------------------------------------------------------------------------------


def test_relative_error():
    a = np.array([1.0, -4.0, 2.0])
    assert ref.relative_error(a, a) == 0.0
    assert ref.relative_error(a + np.array([0.0, 0.0, 0.004]), a) == pytest.approx(0.001, rel=1e-12)
    assert ref.relative_error(np.float32(1.5) * np.ones(2, np.float32), 1.5 * np.ones(2)) == 0.0
    both_nan = np.array([np.nan, 1.0])
    assert ref.relative_error(both_nan, both_nan) == 0.0
    assert ref.relative_error(np.array([np.nan, 1.0]), np.array([0.0, 1.0])) == math.inf
    assert ref.relative_error(np.array([1e-40]), np.array([0.0])) == pytest.approx(1e-10)
    with pytest.raises(ValueError):
        ref.relative_error(np.zeros(3), np.zeros((3, 1)))
