# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Hugging Face config interop (docs/HF_CONFIGS.md).

Every fixture under fixtures/hf/ holds the RoPE-relevant part of a real
model's config.json. Each goes through `from_hf_config` (which translates the
scaling dict with the C++ importer, rope::buildFrequencyAttrFromHF) and
`RopeSpec.apply` (the compiled rope.apply), and is compared with the float64
reference given the same parsed values. Position sets include positions past
the original context length, so both branches of the length-dependent
schemes (dynamic NTK, LongRoPE) run, and positions up to 2^24 (SEMANTICS.md §5).
Random configurations per scheme go through `rope_mlir.apply(scaling=...)`,
and invalid ones must fail with the importer's or the verifier's message.
"""

from __future__ import annotations

import dataclasses
import json
import warnings

import ml_dtypes
import numpy as np
import pytest

import rope_mlir
from rope_mlir import _jit, hf, kernel, reference

import _paths

FIXTURES = _paths.FIXTURES / "hf"
NAMES = sorted(p.stem for p in FIXTURES.glob("*.json"))
TOLERANCE = 1e-6  # SEMANTICS.md §5, against reference.relative_error

# What each fixture must parse to: (head_dim, rotary_dim, base, layout,
# scheme of the freqs attribute, M-RoPE section).
EXPECTED = {
    "deepseek_v2_lite": (64, 64, 10000.0, "interleaved", "yarn", None),
    "deepseek_v3": (64, 64, 10000.0, "interleaved", "yarn", None),
    "gemma3_4b_it": (256, 256, 1e6, "half", "linear", None),
    "gpt_neox_20b": (96, 24, 10000.0, "half", "default", None),
    "gptj_6b": (256, 64, 10000.0, "interleaved", "default", None),
    "internlm2_5_7b_chat": (128, 128, 1e6, "half", "dynamic_ntk", None),
    "llama2_7b": (128, 128, 10000.0, "half", "default", None),
    "llama31_8b": (128, 128, 500000.0, "half", "llama3", None),
    "llama32_1b": (64, 64, 500000.0, "half", "llama3", None),
    "mistral_7b_instruct_v02": (128, 128, 1e6, "half", "default", None),
    "phi2": (80, 32, 10000.0, "half", "default", None),
    "phi35_mini_instruct": (96, 96, 10000.0, "half", "longrope", None),
    "phi3_vision_128k_instruct": (96, 96, 10000.0, "half", "longrope", None),
    "qwen25_7b_instruct_yarn": (128, 128, 1e6, "half", "yarn", None),
    "qwen2_vl_7b_instruct": (128, 128, 1e6, "half", "default", (16, 24, 24)),
    "qwen3_vl_8b_instruct": (128, 128, 5e6, "half", "default", (24, 20, 20)),
    "vicuna_7b_v15_16k": (128, 128, 10000.0, "half", "linear", None),
}


def load(name: str) -> dict:
    return json.loads((FIXTURES / f"{name}.json").read_text())


def reference_apply(spec: rope_mlir.RopeSpec, x, positions, **kwargs):
    return reference.apply(
        np.asarray(x).astype(np.float64), positions, layout=spec.layout,
        rotary_dim=spec.rotary_dim, base=spec.base,
        scaling=spec.scaling,
        mrope_section=spec.mrope_section,
        mrope_interleaved=spec.mrope_interleaved, **kwargs)


def original_length(spec: rope_mlir.RopeSpec) -> int:
    scaling = spec.scaling or {}
    return int(scaling.get("original_max_position_embeddings") or
               scaling.get("max_position_embeddings") or 4096)


def position_sets(spec: rope_mlir.RopeSpec, seq: int, rng):
    """Token positions [seq]: from 0, all within the original context, one
    past it (the long branch of dynamic NTK / LongRoPE), and large ones."""
    length = original_length(spec)
    sets = [
        np.arange(seq),
        rng.integers(0, length, size=seq),
        np.concatenate([rng.integers(0, length, size=seq - 1), [length]]),
        rng.integers(length, 4 * length, size=seq),
        rng.integers(0, 2 ** 24, size=seq),
    ]
    return [s.astype(np.int64) for s in sets]


def with_axes(spec: rope_mlir.RopeSpec, positions, rng):
    """M-RoPE: three axes (t, h, w) with different positions."""
    if spec.mrope_section is None:
        return positions
    h = positions // 3 + rng.integers(0, 7, size=positions.shape)
    w = positions // 5 + rng.integers(0, 11, size=positions.shape)
    return np.stack([positions, h, w])


# --------------------------------------------------------------------------
# Fixtures: parsing
# --------------------------------------------------------------------------


def test_fixture_list_is_complete():
    assert len(NAMES) >= 12
    assert sorted(EXPECTED) == NAMES
    for name in NAMES:
        assert "_source" in load(name), name


@pytest.mark.parametrize("name", NAMES)
def test_fixture_parses(name):
    spec = rope_mlir.from_hf_config(load(name))
    head_dim, rotary_dim, base, layout, scheme, section = EXPECTED[name]
    assert (spec.head_dim, spec.rotary_dim, spec.base, spec.layout) == (
        head_dim, rotary_dim, base, layout)
    assert spec.mrope_section == section
    attrs = spec.scaling_attributes()
    assert attrs.freqs.startswith(f"#rope.{scheme}<"), attrs.freqs
    assert attrs.rotary_dim == rotary_dim
    assert (attrs.mrope is not None) == (section is not None)
    # The magnitude is the one the reference derives from the same dict.
    _, a = reference.inv_frequencies(
        rotary_dim, base, spec.scaling, head_dim=head_dim)
    assert spec.magnitude == pytest.approx(a, rel=1e-12)
    assert attrs.magnitude == spec.magnitude


@pytest.mark.parametrize("name", NAMES)
def test_fixture_attribute_text_parses(name):
    """The importer's attribute text is valid IR: it goes through the
    verifier on a rope.apply and (but for f64 arrays, which the dialect's
    generic parameter printer shortens to 6 digits, so the C API prints them
    itself) prints back identically."""
    spec = rope_mlir.from_hf_config(load(name))
    attrs = spec.scaling_attributes()
    config = kernel.KernelConfig(
        dtype="f32", rank=3, head_dim=spec.head_dim, layout=spec.layout,
        rotary_dim=spec.rotary_dim, magnitude=attrs.magnitude,
        positions="explicit", freqs=attrs.freqs, mrope=attrs.mrope)
    ir = _jit.lower(kernel.emit(config), "builtin.module()")
    assert f"freqs = #rope.{attrs.freqs[6:attrs.freqs.index('<')]}<" in ir
    if "short_factor" not in attrs.freqs:
        assert attrs.freqs in ir
    if attrs.mrope is not None:
        assert attrs.mrope in ir
    assert f"#rope.layout<{spec.layout}>" in spec.attributes()


def test_known_magnitudes():
    """Spot values: YaRN g(4) for Qwen2.5, DeepSeek's mscale ratio (= 1),
    Phi-3.5's sqrt(1 + ln 32 / ln 4096)."""
    qwen = rope_mlir.from_hf_config(load("qwen25_7b_instruct_yarn"))
    assert qwen.magnitude == pytest.approx(0.1 * np.log(4.0) + 1.0, rel=1e-15)
    deepseek = rope_mlir.from_hf_config(load("deepseek_v2_lite"))
    assert deepseek.magnitude == pytest.approx(1.0, rel=1e-15)
    phi = rope_mlir.from_hf_config(load("phi35_mini_instruct"))
    assert phi.magnitude == pytest.approx(
        np.sqrt(1 + np.log(32.0) / np.log(4096.0)), rel=1e-15)
    # LongRoPE's factor M / L is stated on the attribute.
    assert "factor = 3.2" in phi.scaling_attributes().freqs


# --------------------------------------------------------------------------
# Fixtures: numerics against the reference
# --------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_fixture_matches_reference_f32(name):
    spec = rope_mlir.from_hf_config(load(name))
    rng = np.random.default_rng(sum(map(ord, name)))
    seq, heads = 7, 2
    x = rng.standard_normal((seq, heads, spec.head_dim)).astype(np.float32)
    for positions in position_sets(spec, seq, rng):
        positions = with_axes(spec, positions, rng)
        y = spec.apply(x, positions)
        ref = reference_apply(spec, x, positions)
        err = reference.relative_error(y, ref)
        assert err < TOLERANCE, (name, positions.max(), err)
        # The inverse rotation too (keys re-rotated from a cache).
        y = spec.apply(x, positions, inverse=True)
        ref = reference_apply(spec, x, positions, inverse=True)
        assert reference.relative_error(y, ref) < TOLERANCE


@pytest.mark.parametrize("name", ["llama31_8b", "phi35_mini_instruct",
                                  "qwen2_vl_7b_instruct",
                                  "deepseek_v2_lite"])
@pytest.mark.parametrize("dtype,tolerance", [
    (np.float16, 2 ** -10), (ml_dtypes.bfloat16, 2 ** -7)])
def test_fixture_matches_reference_half(name, dtype, tolerance):
    """f16/bf16 outputs are computed in f32 and rounded once (SEMANTICS.md §5):
    within one unit in the last place of the output type."""
    spec = rope_mlir.from_hf_config(load(name))
    rng = np.random.default_rng(7)
    x = rng.standard_normal((5, 3, spec.head_dim)).astype(dtype)
    for positions in position_sets(spec, 5, rng):
        positions = with_axes(spec, positions, rng)
        y = spec.apply(x, positions)
        assert y.dtype == x.dtype
        ref = reference_apply(spec, x, positions)
        assert reference.relative_error(y, ref) < tolerance


def test_batched_and_offset_forms():
    """[B, S, H, D] with per-row positions, and a scalar offset (decode)."""
    spec = rope_mlir.from_hf_config(load("phi35_mini_instruct"))
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 4, 3, spec.head_dim)).astype(np.float32)
    positions = np.array([[0, 1, 2, 3], [5000, 5001, 5002, 5003]])
    y = spec.apply(x, positions)
    assert reference.relative_error(
        y, reference_apply(spec, x, positions)) < TOLERANCE
    y = spec.apply(x, offset=4094)  # crosses L = 4096 at the end of a row
    ref = reference.apply(x.astype(np.float64), offset=4094,
                          layout=spec.layout, rotary_dim=spec.rotary_dim,
                          base=spec.base, scaling=spec.scaling)
    assert reference.relative_error(y, ref) < TOLERANCE


# --------------------------------------------------------------------------
# from_hf_config: config shapes
# --------------------------------------------------------------------------


def test_rope_parameters_and_layer_types():
    """transformers v5 spelling: rope_parameters with rope_theta inside, and
    per-layer-type parameters."""
    config = {"hidden_size": 1024, "num_attention_heads": 8,
              "max_position_embeddings": 8192,
              "rope_parameters": {"rope_type": "yarn", "rope_theta": 1e6,
                                  "factor": 2.0,
                                  "original_max_position_embeddings": 4096}}
    spec = rope_mlir.from_hf_config(config)
    assert spec.base == 1e6 and spec.head_dim == 128
    assert spec.scaling["max_position_embeddings"] == 8192
    per_layer = {"hidden_size": 1024, "num_attention_heads": 8,
                 "rope_parameters": {
                     "full_attention": {"rope_type": "linear", "factor": 8.0,
                                        "rope_theta": 1e6},
                     "sliding_attention": {"rope_type": "default",
                                           "rope_theta": 1e4}}}
    assert rope_mlir.from_hf_config(per_layer).base == 1e6
    local = rope_mlir.from_hf_config(per_layer,
                                     layer_type="sliding_attention")
    assert local.base == 1e4
    with pytest.raises(ValueError, match="layer_type"):
        rope_mlir.from_hf_config(per_layer, layer_type="nope")


def test_proportional_keeps_the_whole_head():
    config = {"head_dim": 64, "num_attention_heads": 4, "hidden_size": 256,
              "partial_rotary_factor": 0.25,
              "rope_scaling": {"rope_type": "proportional"}}
    spec = rope_mlir.from_hf_config(config)
    assert spec.rotary_dim == 64
    assert "partial_rotary_factor = 2.5" in spec.scaling_attributes().freqs
    x = np.random.default_rng(0).standard_normal((6, 2, 64)).astype(
        np.float32)
    positions = np.arange(6) * 1000
    assert reference.relative_error(
        spec.apply(x, positions),
        reference_apply(spec, x, positions)) < TOLERANCE


def test_config_errors():
    good = load("llama31_8b")
    with pytest.raises(ValueError, match="different RoPE bases"):
        rope_mlir.from_hf_config(dict(good, rope_parameters=dict(
            good["rope_scaling"], rope_theta=1.0), rope_scaling=None))
    with pytest.raises(ValueError, match="head_dim"):
        rope_mlir.from_hf_config({"model_type": "llama"})
    bad = dict(good, rope_scaling=dict(good["rope_scaling"], low_freq=1.0))
    with pytest.raises(ValueError, match="unknown rope_scaling key.*low_freq"):
        rope_mlir.from_hf_config(bad)
    with pytest.raises(ValueError, match="max_position_embeddings"):
        rope_mlir.from_hf_config(dict(good, rope_scaling=dict(
            good["rope_scaling"], max_position_embeddings=1)))
    spec = rope_mlir.from_hf_config(good)
    with pytest.raises(TypeError, match="from the config"):
        spec.apply(np.zeros((1, 1, 128), np.float32), base=1.0)
    with pytest.raises(ValueError, match="head dim"):
        spec.apply(np.zeros((1, 1, 64), np.float32), np.zeros(1, np.int64))


# --------------------------------------------------------------------------
# Random configurations per scheme through apply(scaling=...)
# --------------------------------------------------------------------------


def random_scaling(kind: str, rng, p: int) -> dict:
    length = int(rng.choice([512, 2048, 4096, 32768]))
    factor = float(rng.uniform(1.5, 40.0))
    if kind == "linear":
        return {"rope_type": "linear", "factor": factor}
    if kind == "ntk":
        return {"rope_type": "ntk", "factor": factor}
    if kind == "dynamic":
        key = ("original_max_position_embeddings" if rng.random() < 0.5
               else "max_position_embeddings")
        return {"type": "dynamic", "factor": factor, key: length}
    if kind == "yarn":
        out = {"rope_type": "yarn", "factor": factor,
               "original_max_position_embeddings": length,
               "beta_fast": float(rng.uniform(8, 64)),
               "beta_slow": float(rng.uniform(0.5, 4)),
               "truncate": bool(rng.random() < 0.5)}
        choice = rng.integers(3)
        if choice == 1:
            out["attention_factor"] = float(rng.uniform(0.5, 2))
        elif choice == 2:
            out["mscale"] = float(rng.uniform(0.5, 1.5))
            out["mscale_all_dim"] = float(rng.uniform(0.5, 1.5))
        return out
    if kind == "llama3":
        low = float(rng.uniform(0.5, 2))
        return {"rope_type": "llama3", "factor": factor,
                "low_freq_factor": low,
                "high_freq_factor": low + float(rng.uniform(0.5, 4)),
                "original_max_position_embeddings": length}
    if kind == "longrope":
        out = {"rope_type": "longrope",
               "short_factor": rng.uniform(1, 3, p // 2).tolist(),
               "long_factor": rng.uniform(1, 60, p // 2).tolist(),
               "original_max_position_embeddings": length}
        choice = rng.integers(3)
        if choice == 0:
            out["factor"] = factor
        elif choice == 1:
            out["max_position_embeddings"] = length * 32
        else:
            out["attention_factor"] = float(rng.uniform(0.5, 2))
        return out
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["linear", "ntk", "dynamic", "yarn",
                                  "llama3", "longrope"])
def test_random_configs(kind):
    rng = np.random.default_rng(sum(map(ord, kind)))
    for _ in range(4):
        d = int(rng.choice([16, 64, 96, 128]))
        p = int(rng.choice([d, d // 2])) if kind != "ntk" or d > 4 else d
        p -= p % 2
        base = float(rng.choice([1e4, 5e5, 1e6]))
        scaling = random_scaling(kind, rng, p)
        layout = str(rng.choice(["half", "interleaved"]))
        x = rng.standard_normal((6, 2, d)).astype(np.float32)
        length = scaling.get("original_max_position_embeddings",
                             scaling.get("max_position_embeddings", 4096))
        for positions in (rng.integers(0, length, 6),
                          rng.integers(0, 8 * length, 6)):
            y = rope_mlir.apply(x, positions, layout=layout, rotary_dim=p,
                                base=base, scaling=scaling)
            ref = reference.apply(x.astype(np.float64), positions,
                                  layout=layout, rotary_dim=p, base=base,
                                  scaling=scaling)
            assert reference.relative_error(y, ref) < TOLERANCE, scaling


def test_partial_rotary_factor_in_the_dict_sets_the_rotary_dim():
    x = np.random.default_rng(1).standard_normal((4, 2, 80)).astype(
        np.float32)
    scaling = {"rope_type": "linear", "factor": 2.0,
               "partial_rotary_factor": 0.4}
    positions = np.arange(4) * 77
    y = rope_mlir.apply(x, positions, scaling=scaling)
    ref = reference.apply(x.astype(np.float64), positions, scaling=scaling)
    assert reference.relative_error(y, ref) < TOLERANCE
    assert np.array_equal(y[..., 32:], x[..., 32:])


def test_mrope_through_apply():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((5, 2, 64)).astype(np.float32)
    positions = rng.integers(0, 1000, (3, 5))
    for interleaved in (False, True):
        y = rope_mlir.apply(x, positions, base=1e6,
                            mrope_section=[12, 10, 10],
                            mrope_interleaved=interleaved)
        ref = reference.apply(x.astype(np.float64), positions, base=1e6,
                              mrope_section=[12, 10, 10],
                              mrope_interleaved=interleaved)
        assert reference.relative_error(y, ref) < TOLERANCE
    with pytest.raises(ValueError, match="disagrees"):
        rope_mlir.apply(x, positions,
                        scaling={"rope_type": "default",
                                 "mrope_section": [8, 12, 12]},
                        mrope_section=[12, 8, 12])
    with pytest.raises(ValueError, match="M-RoPE section sums to 30"):
        rope_mlir.apply(x, positions, mrope_section=[10, 10, 10])


def test_explicit_magnitude():
    """An explicit magnitude equal to the scheme's is fine; for schemes that
    define none it is free."""
    rng = np.random.default_rng(2)
    x = rng.standard_normal((3, 1, 32)).astype(np.float32)
    positions = np.arange(3)
    yarn = {"rope_type": "yarn", "factor": 4.0,
            "original_max_position_embeddings": 4096}
    a = kernel.scaling_attributes(yarn, head_dim=32).magnitude
    y = rope_mlir.apply(x, positions, scaling=yarn, magnitude=a)
    ref = reference.apply(x.astype(np.float64), positions, scaling=yarn)
    assert reference.relative_error(y, ref) < TOLERANCE
    linear = {"rope_type": "linear", "factor": 2.0}
    y = rope_mlir.apply(x, positions, scaling=linear, magnitude=0.5)
    ref = reference.apply(x.astype(np.float64), positions, scaling=linear,
                          magnitude=0.5)
    assert reference.relative_error(y, ref) < TOLERANCE


# --------------------------------------------------------------------------
# Errors: the importer's or the attribute verifier's message
# --------------------------------------------------------------------------

YARN = {"rope_type": "yarn", "factor": 4.0,
        "original_max_position_embeddings": 4096}
LONGROPE = {"rope_type": "longrope", "short_factor": [1.0] * 16,
            "long_factor": [2.0] * 16,
            "original_max_position_embeddings": 4096}

ERROR_CASES = [
    (dict(YARN, beta_fats=16.0), "unknown rope_scaling key\\(s\\): beta_fats"),
    (dict(YARN, factor=0.0), "yarn: factor must be a positive finite number"),
    (dict(YARN, factor=-2.0),
     "yarn: factor must be a positive finite number"),
    ({"rope_type": "linear", "factor": -1.0},
     "linear: factor must be a positive finite number"),
    (dict(YARN, beta_fast=1.0, beta_slow=2.0),
     "yarn: beta_fast \\(1.000000e\\+00\\) must be greater than beta_slow"),
    (dict(LONGROPE, short_factor=[1.0] * 15),
     "longrope: short_factor and long_factor must have rotary_dim / 2 = 16 "
     "entries, got 15 and 16"),
    (dict(LONGROPE, long_factor=[2.0] * 15 + [0.0]),
     "longrope: long_factor entries must be a positive finite number"),
    ({"rope_type": "llama3", "low_freq_factor": 4.0, "high_freq_factor": 1.0},
     "llama3: high_freq_factor .* must be greater than low_freq_factor"),
    ({"rope_type": "dynamic", "factor": 2.0},
     "needs 'original_max_position_embeddings' \\(or "
     "'max_position_embeddings'\\)"),
    ({"rope_type": "linear"}, "rope_type 'linear' needs 'factor'"),
    ({"rope_type": "wavelet"}, "unknown rope_type 'wavelet'"),
    ({"factor": 2.0}, "needs a 'rope_type'"),
    ({"rope_type": "linear", "type": "yarn", "factor": 2.0},
     "naming different schemes"),
    ({"rope_type": "linear", "factor": "2"}, "factor must be a real number"),
    (dict(YARN, truncate=1), "truncate must be a bool"),
    (dict(YARN, original_max_position_embeddings=0),
     "original_max_position_embeddings must be positive"),
    ({"rope_type": "linear", "factor": 2.0, "rope_theta": 5.0},
     "disagrees with base"),
    ({"rope_type": "ntk", "factor": 2.0, "partial_rotary_factor": 0.5},
     "partial_rotary_factor 0.5 with head_dim 32 means rotary_dim 16, not 32"),
]


@pytest.mark.parametrize("scaling,message", ERROR_CASES)
def test_invalid_scaling(scaling, message):
    x = np.zeros((2, 1, 32), np.float32)
    with pytest.raises(ValueError, match=message):
        rope_mlir.apply(x, np.arange(2), rotary_dim=32, scaling=scaling)


def test_invalid_scaling_in_a_config():
    config = dict(load("qwen25_7b_instruct_yarn"))
    config["rope_scaling"] = dict(config["rope_scaling"], beta_fast=0.5)
    with pytest.raises(ValueError, match="yarn: beta_fast .* must be greater "
                                         "than beta_slow"):
        rope_mlir.from_hf_config(config)


def test_ntk_needs_two_pairs():
    x = np.zeros((2, 1, 2), np.float32)
    with pytest.raises(ValueError, match="undefined for rotary_dim = 2"):
        rope_mlir.apply(x, np.arange(2),
                        scaling={"rope_type": "ntk", "factor": 2.0})


def test_yarn_magnitude_mismatch():
    x = np.zeros((2, 1, 32), np.float32)
    with pytest.raises(ValueError, match="magnitude .* must equal the "
                                         "magnitude the frequency scheme "
                                         "defines"):
        rope_mlir.apply(x, np.arange(2), scaling=YARN, magnitude=1.0)
    with pytest.raises(ValueError, match="must equal the magnitude"):
        rope_mlir.apply(x, np.arange(2), scaling=dict(LONGROPE, factor=32.0),
                        magnitude=1.0)


def test_cache_and_scaling_are_exclusive():
    x = np.zeros((2, 1, 32), np.float32)
    cache = np.ones((4, 16), np.float32)
    with pytest.raises(ValueError, match="exclusive"):
        rope_mlir.apply(x, np.arange(2), cos_cache=cache, sin_cache=cache,
                        scaling=YARN)
    with pytest.raises(ValueError, match="exclusive"):
        rope_mlir.apply(x, np.arange(2), cos_cache=cache, sin_cache=cache,
                        mrope_section=[4, 6, 6])


def test_c_api_directly():
    """The C entry point: NULL/empty dicts, the rotary dim it derives, the
    M-RoPE text, and JSON it cannot read."""
    attrs = _jit.scaling_attributes(None, 500000.0, 64)
    assert attrs == _jit.ScalingAttributes(
        "#rope.default<base = 5.000000e+05>", 1.0, None, 64)
    attrs = _jit.scaling_attributes(
        {"rope_type": "default", "mrope_section": [4, 6, 6],
         "mrope_interleaved": True}, 1e4, 32)
    assert attrs.mrope == (
        "#rope.mrope<section = [4, 6, 6], interleaved = true>")
    attrs = _jit.scaling_attributes(
        {"rope_type": "linear", "factor": 2.0, "partial_rotary_factor": 0.25},
        1e4, 64)
    assert attrs.rotary_dim == 16
    with pytest.raises(ValueError, match="not JSON-serializable"):
        _jit.scaling_attributes({"factor": float("nan")}, 1e4, 64)
    spec = dataclasses.replace(rope_mlir.from_hf_config(load("phi2")))
    assert spec.attributes() == (
        "{layout = #rope.layout<half>, rotary_dim = 32 : i64, freqs = "
        "#rope.default<>}")  # base 10000 is the default, not printed


# Issue 37: transformers 5.25 configs, written out (CI has no transformers).
# Each was wrong or refused before; the numbers are checked against the
# float64 reference with the values transformers' code reads.

def _llama_like(**extra):
    return dict({"hidden_size": 2048, "num_attention_heads": 16,
                 "num_hidden_layers": 2, "max_position_embeddings": 4096,
                 "rope_parameters": {"rope_type": "default",
                                     "rope_theta": 10000.0}}, **extra)


def test_attribute_map_aliases_are_read():
    """JetMoE's head_dim is kv_channels and Zamba2's attention_head_dim
    (their config classes' attribute_map): HF rotates 128, not
    hidden_size / heads = 128... here 2048 / 32 = 64."""
    jetmoe = _llama_like(model_type="jetmoe", num_attention_heads=32,
                         kv_channels=128)
    assert rope_mlir.from_hf_config(jetmoe).head_dim == 128
    zamba2 = _llama_like(model_type="zamba2", num_attention_heads=32,
                         attention_head_dim=128)
    assert rope_mlir.from_hf_config(zamba2).head_dim == 128
    # Both names set and disagreeing: an error naming both.
    with pytest.raises(ValueError, match="head_dim.*kv_channels"):
        rope_mlir.from_hf_config(dict(jetmoe, head_dim=64))
    # An alias is read only for the model type whose class declares it.
    other = _llama_like(model_type="llama", num_attention_heads=32,
                        kv_channels=128)
    assert rope_mlir.from_hf_config(other).head_dim == 64


def test_aliased_max_position_embeddings():
    """DBRX stores max_position_embeddings as max_seq_len: dynamic NTK's
    threshold and LongRoPE's factor M / L read it."""
    dbrx = {"model_type": "dbrx", "d_model": 1024, "n_heads": 16,
            "n_layers": 2, "max_seq_len": 8192,
            "rope_parameters": {"rope_type": "dynamic", "factor": 2.0,
                                "rope_theta": 10000.0}}
    spec = rope_mlir.from_hf_config(dbrx)
    assert (spec.head_dim, spec.scaling["max_position_embeddings"]) == (
        64, 8192)
    assert "max_position_embeddings = 8192" in spec.attributes()
    longrope = dict(dbrx, rope_parameters={
        "rope_type": "longrope", "rope_theta": 10000.0,
        "short_factor": [1.0] * 32, "long_factor": [2.0] * 32,
        "original_max_position_embeddings": 2048})
    spec = rope_mlir.from_hf_config(longrope)
    assert spec.magnitude == pytest.approx(
        np.sqrt(1 + np.log(8192 / 2048) / np.log(2048)), rel=1e-15)
    # Bailing-Hybrid: model_max_length.
    bailing = {"model_type": "bailing_hybrid", "hidden_size": 1024,
               "num_attention_heads": 16, "num_hidden_layers": 2,
               "model_max_length": 16384,
               "rope_parameters": {"rope_type": "dynamic", "factor": 4.0,
                                   "rope_theta": 10000.0}}
    spec = rope_mlir.from_hf_config(bailing)
    assert spec.scaling["max_position_embeddings"] == 16384


def test_dynamic_threshold_is_max_position_embeddings():
    """transformers 5.25's dynamic NTK scales past max_position_embeddings;
    an original_max_position_embeddings in the parameters (Phi-3 copies
    its top-level one there) is not read."""
    config = _llama_like(model_type="llama", rope_parameters={
        "rope_type": "dynamic", "factor": 2.0, "rope_theta": 10000.0,
        "original_max_position_embeddings": 1024})
    spec = rope_mlir.from_hf_config(config)
    assert "max_position_embeddings = 4096" in spec.attributes()
    x = np.random.default_rng(0).standard_normal((4, 2, 128))
    positions = np.array([0, 1500, 3000, 5000])
    seq_len = 5001
    # HF: base * (s * seq_len / M - (s - 1)) ^ (P / (P - 2)), M = 4096.
    p = 128
    base = 10000.0 * (2.0 * seq_len / 4096 - 1.0) ** (p / (p - 2))
    theta = base ** (-np.arange(0, p, 2) / p)
    angles = positions[:, None] * theta[None, :]
    x1, x2 = x[..., :64], x[..., 64:]
    c, s = np.cos(angles)[:, None], np.sin(angles)[:, None]
    expected = np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], -1)
    y = spec.apply(x, positions)
    assert reference.relative_error(y, expected) < 1e-12
    np.testing.assert_allclose(
        reference.apply(x, positions, layout="half", rotary_dim=p,
                        base=10000.0, scaling=spec.scaling), expected,
        rtol=0, atol=1e-12)
    # A dict with only original_max_position_embeddings keeps it.
    only = {"rope_type": "dynamic", "factor": 2.0,
            "original_max_position_embeddings": 1024}
    attrs = kernel.scaling_attributes(only, base=10000.0, head_dim=128,
                                      rotary_dim=128)
    assert "max_position_embeddings = 1024" in attrs.freqs


def test_inverse_rotation_model_type():
    """NanoChat rotates by -position * theta: rope.apply's inverse."""
    config = _llama_like(model_type="nanochat")
    spec = rope_mlir.from_hf_config(config)
    assert spec.inverse
    assert "inverse" in spec.attributes()
    x = np.random.default_rng(1).standard_normal((3, 2, 128))
    positions = np.array([0, 7, 300])
    expected = reference.apply(x, -positions, layout="half",
                               rotary_dim=128, base=10000.0)
    assert reference.relative_error(spec.apply(x, positions),
                                    expected) < 1e-12
    # inverse=True undoes the model's rotation: the forward one here.
    np.testing.assert_allclose(
        spec.apply(x, positions, inverse=True),
        reference.apply(x, positions, layout="half", rotary_dim=128,
                        base=10000.0), rtol=0, atol=1e-12)


def test_vlm_config_holds_the_text_config():
    """ColPali, ColQwen2, ColModernVBERT keep the language model under
    vlm_config."""
    config = {"model_type": "colpali", "vlm_config": {
        "model_type": "paligemma", "text_config": {
            "model_type": "gemma", "hidden_size": 2048,
            "num_attention_heads": 8, "head_dim": 256,
            "rope_theta": 10000.0}}}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        spec = rope_mlir.from_hf_config(config)
    assert (spec.head_dim, spec.layout, spec.model_type) == (
        256, "half", "gemma")


def test_head_dim_is_floor_of_hidden_over_heads():
    """With no head_dim the modeling code reads hidden_size //
    num_attention_heads even when it does not divide (GLM-4-MoE's
    default)."""
    config = {"model_type": "glm4_moe", "hidden_size": 4100,
              "num_attention_heads": 32, "partial_rotary_factor": 0.5,
              "rope_theta": 10000.0}
    spec = rope_mlir.from_hf_config(config)
    assert (spec.head_dim, spec.rotary_dim) == (128, 64)
    # GLM-4-MoE's own default, 4096 / 96 = 42, half of it odd: refused.
    with pytest.raises(ValueError, match="rotary_dim"):
        rope_mlir.from_hf_config(dict(config, hidden_size=4096,
                                      num_attention_heads=96))
    with pytest.raises(ValueError, match="hidden_size 8 is smaller"):
        rope_mlir.from_hf_config(dict(config, hidden_size=8))


GEMMA4 = {"model_type": "gemma4_text", "hidden_size": 1536,
          "num_attention_heads": 8, "head_dim": 256, "num_hidden_layers": 4,
          "layer_types": ["sliding_attention", "sliding_attention",
                          "full_attention", "full_attention"],
          "per_layer_config": {"02": {"head_dim": 512, "sliding_window": None},
                               "03": {"head_dim": 512}},
          "rope_parameters": {
              "sliding_attention": {"rope_type": "default",
                                    "rope_theta": 10000.0},
              "full_attention": {"rope_type": "proportional",
                                 "partial_rotary_factor": 0.25,
                                 "rope_theta": 1e6}}}


def test_per_layer_head_dim():
    """Gemma 4's full-attention layers have head_dim 512
    (per_layer_config), its sliding ones the global 256."""
    specs = hf.rope_layer_specs(GEMMA4)
    assert [s.head_dim for s in specs] == [256, 256, 512, 512]
    assert [s.base for s in specs] == [1e4, 1e4, 1e6, 1e6]
    full = rope_mlir.from_hf_config(GEMMA4, layer_type="full_attention")
    assert full == specs[2]
    assert rope_mlir.from_hf_config(GEMMA4).head_dim == 512  # default type
    sliding = rope_mlir.from_hf_config(GEMMA4,
                                       layer_type="sliding_attention")
    assert sliding.head_dim == 256
    # Proportional: the whole 512 head, a quarter of it with frequencies.
    theta, _ = reference.inv_frequencies(512, 1e6, full.scaling,
                                         head_dim=512)
    assert np.count_nonzero(theta) == 64


@pytest.mark.parametrize("change,message", [
    ({"per_layer_config": {"2": {"head_dim": 512}, "3": {"head_dim": 384}}},
     "different RoPE values on the 'full_attention' layers"),
    ({"per_layer_config": {"x": {"head_dim": 512}}}, "layer indices"),
    ({"per_layer_config": [512]}, "per_layer_config must map"),
])
def test_per_layer_config_errors(change, message):
    with pytest.raises(ValueError, match=message):
        rope_mlir.from_hf_config(dict(GEMMA4, **change))
    # Without layer types, a per-layer head dim needs layer=.
    plain = {k: v for k, v in GEMMA4.items() if k != "layer_types"}
    plain["rope_parameters"] = {"rope_type": "default"}
    with pytest.raises(ValueError, match="per_layer_config sets"):
        rope_mlir.from_hf_config(plain)
    assert rope_mlir.from_hf_config(plain, layer=3).head_dim == 512
    with pytest.raises(ValueError, match="layer must be an index"):
        rope_mlir.from_hf_config(plain, layer=4)


@pytest.mark.parametrize("change,message", [
    (lambda c: [1, 2], "config must be a dict"),
    (lambda c: {k: v for k, v in c.items() if k != "num_hidden_layers"},
     "needs num_hidden_layers"),
    (lambda c: dict(c, num_hidden_layers=True), "num_hidden_layers must be"),
    (lambda c: dict(c, num_hidden_layers=0), "num_hidden_layers must be"),
    (lambda c: dict(c, layer_types=["sliding_attention"]),
     "layer_types does not name layer 1"),
    (lambda c: dict(c, per_layer_config=[1]), "per_layer_config must map"),
    (lambda c: dict(c, per_layer_config={"02": 5}),
     "per_layer_config must map"),
    (lambda c: dict(c, per_layer_config={"x": {"head_dim": 512}}),
     "per_layer_config keys must be layer indices"),
    # An override for a layer the model does not have is never silently
    # unused.
    (lambda c: dict(c, per_layer_config={"09": {"head_dim": 512}}),
     r"per_layer_config key '09' is not a layer index in \[0, 4\)"),
    (lambda c: dict(c, per_layer_config={"-1": {"head_dim": 512}}),
     "per_layer_config key '-1' is not a layer index"),
    (lambda c: dict(c, per_layer_config={"02": {"head_dim": "512"}}),
     "head_dim must be an integer"),
    (lambda c: dict(c, per_layer_config={"02": {"head_dim": -512}}),
     "head_dim must be a positive integer"),
])
def test_rope_layer_specs_bad_config(change, message):
    with pytest.raises(ValueError, match=message):
        hf.rope_layer_specs(change(GEMMA4))


def test_rope_layer_specs_bad_arguments():
    """rope_layer_specs' specs check what reaches the kernel: the layout
    argument, x's head dim and dtype, positions' dtype and shape, and out
    (read-only, undersized) before any compiled code runs."""
    with pytest.raises(ValueError, match="layout must be"):
        hf.rope_layer_specs(GEMMA4, layout="diagonal")
    full = hf.rope_layer_specs(GEMMA4)[2]
    x = np.zeros((4, 2, 512), np.float32)
    with pytest.raises(ValueError, match="head dim 256, the config's is 512"):
        full.apply(np.zeros((4, 2, 256), np.float32), np.arange(4))
    with pytest.raises(TypeError, match="unsupported data type int32"):
        full.apply(x.astype(np.int32), np.arange(4))
    with pytest.raises(TypeError, match="positions must be integers"):
        full.apply(x, np.arange(4.0))
    with pytest.raises(ValueError, match="positions has shape"):
        full.apply(x, np.arange(5))
    read_only = np.zeros_like(x)
    read_only.flags.writeable = False
    with pytest.raises(ValueError, match="out is read-only"):
        full.apply(x, np.arange(4), out=read_only)
    with pytest.raises(ValueError, match=r"out has shape \(3, 2, 512\)"):
        full.apply(x, np.arange(4), out=np.zeros((3, 2, 512), np.float32))
    # And the good call still runs: the rotation of position 0 is x.
    x[0] = 1.0
    assert np.array_equal(full.apply(x, np.arange(4))[0], x[0])
