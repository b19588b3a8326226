# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Hugging Face model types against transformers' own RoPE code (issue 17).

fixtures/hf/models/ holds, per model type whose modeling code in transformers
has a rotary embedding, what scripts/gen-hf-fixtures.py recorded by running
that code in float64 on a small config: the config (its RoPE-relevant part),
the pair layout and rotary dim found empirically, the module's inverse
frequencies and attention scaling, and an input/output pair per position set
(one within the original context, one past it). Each supported fixture must
give, through `from_hf_config`:
  - the recorded layout, rotary dim and head dim (and M-RoPE axis per
    frequency), with no UnknownModelTypeWarning;
  - the C++ importer's rotary dim and magnitude (through the C API) equal to
    the recorded ones, and the float64 reference's frequencies equal to HF's;
  - `spec.apply` (f64 and f32) within 1e-5 of HF's float64 output at every
    position, inside and past the original context.
Fixtures whose RoPE is not expressible must be refused.
"""

from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pytest

import rope_mlir
from rope_mlir import hf, reference

import _paths

ROOT = _paths.ROOT
MODELS = _paths.FIXTURES / "hf" / "models"
TOLERANCE = 1e-5  # of HF's float64 recomputation (issue 17)


def _entries():
    out = {}
    for path in sorted(MODELS.glob("*.json")):
        if path.name != "index.json":
            out[path.stem] = json.loads(path.read_text())
    return out


ENTRIES = _entries()
INDEX = json.loads((MODELS / "index.json").read_text())
SUPPORTED = sorted(n for n, e in ENTRIES.items() if e["status"] == "supported")
UNSUPPORTED = sorted(n for n, e in ENTRIES.items()
                     if e["status"] != "supported")


def arrays(name: str):
    """x, positions, y and inv_freq of a fixture (arrays/ is shared by
    fixtures with the same RoPE)."""
    path = MODELS / "arrays" / f"{ENTRIES[name]['arrays']}.npz"
    with np.load(path) as data:
        return {k: data[k] for k in data.files}


def spec_of(entry) -> rope_mlir.RopeSpec:
    """from_hf_config on the recorded config; a known model type must not
    warn."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", hf.UnknownModelTypeWarning)
        return rope_mlir.from_hf_config(entry["config"],
                                        layer_type=entry["layer_type"])


def hf_output(entry, y):
    """HF's output in the rope.apply channel order: DeepSeek-style
    `apply_rotary_pos_emb_interleave` writes the rotated even channels, then
    the odd ones (q and k alike, so q.k is that of the interleaved
    rotation)."""
    if entry["output_order"] != "deinterleaved":
        return y
    p = entry["rotary_dim"]
    order = np.concatenate([np.arange(0, p, 2), np.arange(1, p, 2),
                            np.arange(p, y.shape[-1])])
    out = np.empty_like(y)
    out[..., order] = y
    return out


def test_fixture_set():
    """Dozens of model types, one transformers version, every index entry
    that was recorded has its fixture."""
    version = INDEX["transformers"]
    assert {e["transformers"] for e in ENTRIES.values()} == {version}
    recorded = {n for n, why in INDEX["model_types"].items()
                if why.startswith("recorded")}
    assert recorded == {e["model_type"] for e in ENTRIES.values()
                        if not e["variant"]} | {
        n for n in ENTRIES if ENTRIES[n]["variant"]}
    assert len({e["model_type"] for e in ENTRIES.values()}) >= 100
    # The issue's list: per-layer-type RoPE, NoPE layers, M-RoPE.
    for name in ("gemma3_text@sliding_attention",
                 "gemma3_text@full_attention", "llama4_text", "smollm3",
                 "qwen2_vl", "qwen2_5_vl", "qwen3_vl", "glm4v"):
        assert name in SUPPORTED, name


@pytest.mark.parametrize("name", SUPPORTED)
def test_fixture(name):
    entry = ENTRIES[name]
    data = arrays(name)
    spec = spec_of(entry)
    p = entry["rotary_dim"]
    assert (spec.layout, spec.rotary_dim, spec.head_dim) == (
        entry["layout"], p, entry["head_dim"])
    assert spec.inverse == entry.get("inverse", False)
    # M-RoPE: the axis of each frequency.
    if entry["mrope_axes"] is None:
        assert spec.mrope_section is None
    else:
        assert spec.mrope_section is not None
        axes = reference._mrope_pair_axes(p // 2, spec.mrope_section,
                                          spec.mrope_interleaved)
        assert list(axes) == entry["mrope_axes"]
    # The C++ importer's attributes agree with the spec and with HF.
    attrs = spec.scaling_attributes()
    assert attrs.rotary_dim == p
    assert attrs.magnitude == spec.magnitude
    assert (attrs.mrope is not None) == (entry["mrope_axes"] is not None)
    text = spec.attributes()
    assert f"#rope.layout<{entry['layout']}>" in text
    assert f"rotary_dim = {p} : i64" in text
    x = data["x"].astype(np.float64)
    for k, set_name in enumerate(entry["sets"]["names"]):
        positions = data["positions"][k]
        scaling = entry["sets"]["attention_scaling"][k]
        assert spec.magnitude == pytest.approx(scaling, rel=1e-12), set_name
        seq_len = int(positions.max()) + 1
        if "inv_freq" in data:
            theta, a = reference.inv_frequencies(
                p, spec.base, spec.scaling, head_dim=spec.head_dim,
                seq_len=seq_len)
            np.testing.assert_allclose(theta, data["inv_freq"][k],
                                       rtol=1e-12, atol=0, err_msg=set_name)
            assert a == pytest.approx(scaling, rel=1e-12)
        expected = hf_output(entry, data["y"][k])
        y = spec.apply(x, positions)
        err = reference.relative_error(y, expected)
        assert err <= TOLERANCE, (set_name, positions.max(), err)
        # f32 too (x is exact in f32): within the same bound.
        y = spec.apply(x.astype(np.float32), positions)
        err = reference.relative_error(y, expected)
        assert err <= TOLERANCE, ("f32", set_name, positions.max(), err)


@pytest.mark.parametrize("name", UNSUPPORTED)
def test_unsupported_is_refused(name):
    """Refused by model type (UNSUPPORTED_MODEL_TYPES), or for this config
    only ("refused": e.g. an odd int(partial_rotary_factor * D))."""
    entry = ENTRIES[name]
    assert entry["reason"]
    error = (ValueError if entry["status"] == "refused"
             else hf.UnsupportedModelTypeError)
    with pytest.raises(error, match=entry.get("refusal",
                                              entry["model_type"])):
        rope_mlir.from_hf_config(entry["config"],
                                 layer_type=entry["layer_type"])


def test_table_matches_fixtures():
    """MODEL_TYPE_LAYOUTS holds exactly the recorded model types (and the
    remote-code ones), with their recorded layouts."""
    seen = {}
    for entry in ENTRIES.values():
        if entry["variant"] or entry["status"] == "unsupported":
            continue
        names = {entry["model_type"], entry["config"].get("model_type"),
                 entry["config"].get("text_config", {}).get("model_type")}
        for name in names - {None}:
            seen[name] = entry["layout"]
            assert hf.MODEL_TYPE_LAYOUTS[name] == entry["layout"], name
    extra = set(hf.MODEL_TYPE_LAYOUTS) - set(seen)
    assert extra == set(hf._REMOTE_CODE_LAYOUTS)
    assert hf.INTERLEAVED_MODEL_TYPES == {
        t for t, layout in hf.MODEL_TYPE_LAYOUTS.items()
        if layout == "interleaved"}
    unsupported = {ENTRIES[n]["model_type"] for n in UNSUPPORTED
                   if ENTRIES[n]["status"] == "unsupported"}
    assert unsupported <= set(hf.UNSUPPORTED_MODEL_TYPES)


def test_issue37_cases_are_recorded():
    """Issue 37 (transformers 5.25): each case has a supported fixture that
    test_fixture checks against HF's output: per-layer head dims (Gemma 4
    family), hy_v4's interleave, attribute_map aliases (JetMoE, Zamba2,
    DBRX and Bailing-Hybrid under dynamic NTK and LongRoPE), dynamic NTK
    with original_max_position_embeddings, NanoChat's inverse rotation, the
    types 5.25 adds. hidden_size / heads differs from head_dim in the
    fixtures' configs, so a head dim read from the wrong key fails."""
    for name in ("gemma4_text@full_attention", "gemma4@full_attention",
                 "gemma4_unified_text@full_attention",
                 "diffusion_gemma_text@full_attention",
                 "embedding_gemma2_text@full_attention", "hy_v4", "jetmoe",
                 "zamba2", "dbrx-dynamic", "dbrx-longrope",
                 "bailing_hybrid-dynamic", "bailing_hybrid-longrope",
                 "llama-dynamic_original", "nanochat", "glm_image_text",
                 "granite4_vision_text", "kolibri1_1", "minicpm5_moe"):
        assert name in SUPPORTED, name
    assert ENTRIES["gemma4_text@full_attention"]["head_dim"] == 512
    assert ENTRIES["gemma4_text@sliding_attention"]["head_dim"] == 256
    assert ENTRIES["hy_v4"]["layout"] == "interleaved"
    assert ENTRIES["nanochat"]["inverse"]
    assert ENTRIES["jetmoe"]["config"]["kv_channels"] != \
        ENTRIES["jetmoe"]["config"]["hidden_size"] // \
        ENTRIES["jetmoe"]["config"]["num_attention_heads"]


def test_per_layer_specs_of_a_fixture():
    """rope_layer_specs gives each Gemma 4 layer its type's RoPE, with the
    full-attention layers' per_layer_config head dim."""
    config = ENTRIES["gemma4_text@full_attention"]["config"]
    specs = hf.rope_layer_specs(config)
    for spec, layer_type in zip(specs, config["layer_types"]):
        name = f"gemma4_text@{layer_type}"
        assert spec.head_dim == ENTRIES[name]["head_dim"], name
        assert spec == spec_of(ENTRIES[name])


def test_generator_reads_the_same_text_keys():
    """The generator's unknown-model-type check descends composite configs
    as from_hf_config does."""
    script = (ROOT / "scripts" / "gen-hf-fixtures.py").read_text()
    match = re.search(r"^TEXT_KEYS = (\([^)]*\))", script, re.M)
    assert match and eval(match.group(1)) == hf._TEXT_KEYS


def test_issue_models_are_interleaved():
    """The ones issue 17 found silently wrong: transformers rotates
    interleaved pairs for GLM, GLM-4, Cohere, Helium and Ernie 4.5."""
    for name in ("glm", "glm4", "cohere", "cohere2", "helium", "ernie4_5",
                 "ernie4_5_moe", "gptj", "codegen", "deepseek_v2",
                 "deepseek_v3", "llama4_text"):
        assert ENTRIES[name]["layout"] == "interleaved", name
        assert spec_of(ENTRIES[name]).layout == "interleaved", name
    for name in ("llama", "mistral", "qwen2", "qwen3", "gemma2", "phi3",
                 "gpt_neox"):
        assert spec_of(ENTRIES[name]).layout == "half", name


def test_nope_layers():
    """Llama 4 and SmolLM3 skip RoPE on some layers: rope_layers says which,
    as the attention modules themselves do."""
    for name in ("llama4_text", "smollm3"):
        entry = ENTRIES[name]
        assert entry["rope_layers"] is not None and \
            not all(entry["rope_layers"])
        assert hf.rope_layers(entry["config"]) == entry["rope_layers"]
    assert all(hf.rope_layers(ENTRIES["llama"]["config"]))


def test_unknown_model_type_warns():
    config = {"model_type": "not_a_model", "hidden_size": 256,
              "num_attention_heads": 4}
    with pytest.warns(hf.UnknownModelTypeWarning,
                      match="'not_a_model'.*layout='half'"):
        spec = rope_mlir.from_hf_config(config)
    assert spec.layout == "half"
    with pytest.warns(hf.UnknownModelTypeWarning, match="no model_type"):
        rope_mlir.from_hf_config({"hidden_size": 256,
                                  "num_attention_heads": 4})
    # Stating the layout is not guessing: no warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        spec = rope_mlir.from_hf_config(config, layout="interleaved")
    assert spec.layout == "interleaved"


def test_layout_override_and_rope_interleave():
    glm = ENTRIES["glm"]["config"]
    assert rope_mlir.from_hf_config(glm, layout="half").layout == "half"
    deepseek = dict(ENTRIES["deepseek_v3"]["config"], rope_interleave=False)
    assert rope_mlir.from_hf_config(deepseek).layout == "half"


def test_docs_list_every_model_type():
    """docs/HF_CONFIGS.md has a row per recorded model type, and the README
    states the supported count and the transformers version."""
    docs = (ROOT / "docs" / "HF_CONFIGS.md").read_text()
    types = {e["model_type"] for e in ENTRIES.values() if not e["variant"]}
    for name in types:
        assert f"| `{name}` |" in docs, name
    supported = {ENTRIES[n]["model_type"] for n in SUPPORTED
                 if not ENTRIES[n]["variant"]} - {
        ENTRIES[n]["model_type"] for n in UNSUPPORTED}
    readme = (ROOT / "README.md").read_text()
    match = re.search(r"the (\d+) Hugging Face model types \(transformers "
                      r"([\d.]+)\)", " ".join(readme.split()))
    assert match, "README lost the model-type count"
    assert int(match.group(1)) == len(supported)
    assert INDEX["transformers"].startswith(match.group(2))


@pytest.mark.parametrize("config,error,text", [
    ([1, 2], ValueError, "config must be a dict"),
    ({"model_type": "llama"}, ValueError, "num_hidden_layers"),
    ({"model_type": "llama", "num_hidden_layers": 0}, ValueError,
     "num_hidden_layers"),
    ({"model_type": "llama", "num_hidden_layers": 2.5}, ValueError,
     "num_hidden_layers"),
    ({"model_type": "llama", "num_hidden_layers": True}, ValueError,
     "num_hidden_layers"),
    ({"model_type": "smollm3", "num_hidden_layers": 4,
      "no_rope_layers": [1, 0]}, ValueError, "no_rope_layers has 2 entries"),
    ({"model_type": "smollm3", "num_hidden_layers": 2,
      "no_rope_layers": "10"}, ValueError, "no_rope_layers"),
    ({"model_type": "llama4", "num_hidden_layers": 2,
      "no_rope_layers": [1, 0.5]}, ValueError, "no_rope_layers"),
])
def test_rope_layers_refuses_bad_configs(config, error, text):
    with pytest.raises(error, match=text):
        hf.rope_layers(config)
