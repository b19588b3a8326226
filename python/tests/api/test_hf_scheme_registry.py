# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Each frequency scheme owns its Hugging Face name (issue 15).

A frequency attribute declares in RopeAttrs.td the `rope_type` values that
select it (`hfRopeTypes`) and the `rope_scaling` keys it reads (`hfKeys`),
and implements `buildFromHF`; the importer (lib/Interop/HuggingFace.cpp)
finds schemes through those declarations. So adding a scheme is one
attribute and its tests: these tests fail when an attribute declares no
name, when a declared name does not select its attribute, and when a scheme
name or a scheme's own key is spelled in the importer again (a central list
creeping back).
"""

from __future__ import annotations

import re

import pytest

import rope_mlir

import _paths

ROOT = _paths.ROOT
ATTRS_TD = ROOT / "include" / "rope" / "Dialect" / "Rope" / "IR" / "RopeAttrs.td"
IMPORTER = ROOT / "lib" / "Interop" / "HuggingFace.cpp"

# Frequency attributes Hugging Face has no name for (the mnemonic, and why).
UNNAMED = {"table": "explicit tables come from frontend IR (--rope-raise)"}

# The smallest dict each scheme accepts besides its rope_type (head_dim 32).
# A new scheme adds its line here.
MINIMAL_KEYS = {
    "default": {},
    "linear": {"factor": 2.0},
    "ntk": {"factor": 2.0},
    "dynamic_ntk": {"factor": 2.0, "max_position_embeddings": 4096},
    "yarn": {"factor": 4.0, "original_max_position_embeddings": 4096},
    "llama3": {},
    "longrope": {"short_factor": [1.0] * 16, "long_factor": [2.0] * 16,
                 "original_max_position_embeddings": 4096},
    "proportional": {},
}

# Keys the importer reads itself (config-level rules), so it may spell them.
IMPORTER_KEYS = {"partial_rotary_factor", "rope_theta",
                 "original_max_position_embeddings",
                 "max_position_embeddings", "mrope_section",
                 "mrope_interleaved"}


def frequency_attributes(text: str) -> dict[str, str]:
    """mnemonic -> body of every `def ... : Rope_FrequencyAttr<...>`."""
    out = {}
    pattern = re.compile(
        r'^def (\w+)\s*:\s*Rope_FrequencyAttr<"\w+",\s*"(\w+)"(.*?)^}$',
        re.S | re.M)
    for match in pattern.finditer(text):
        out[match.group(2)] = match.group(3)
    return out


def declared_list(body: str, field: str):
    """The items of `let <field> = [...];`, or None when not set."""
    match = re.search(r"let %s\s*=\s*\[(.*?)\];" % field, body, re.S)
    if match is None:
        return None
    return match.group(1)


def rope_types(body: str):
    items = declared_list(body, "hfRopeTypes")
    return None if items is None else re.findall(r'"(\w+)"', items)


def keys(body: str) -> list[tuple[str, str]]:
    items = declared_list(body, "hfKeys") or ""
    return re.findall(r'Rope_HF(\w+)Key<"(\w+)">', items)


ATTRIBUTES = frequency_attributes(ATTRS_TD.read_text())
NAMED = {m: rope_types(b) for m, b in ATTRIBUTES.items() if rope_types(b)}


def test_the_td_parses():
    assert len(ATTRIBUTES) >= 9, sorted(ATTRIBUTES)
    assert "yarn" in ATTRIBUTES and "table" in ATTRIBUTES


@pytest.mark.parametrize("mnemonic", sorted(ATTRIBUTES))
def test_every_frequency_attribute_declares_its_hf_name(mnemonic):
    """Explicitly: a name list, or `[]` for a scheme Hugging Face does not
    name (listed in UNNAMED with the reason)."""
    names = rope_types(ATTRIBUTES[mnemonic])
    assert names is not None, (
        f"#rope.{mnemonic} does not set hfRopeTypes in RopeAttrs.td")
    if mnemonic in UNNAMED:
        assert names == [], mnemonic
    else:
        assert names, f"#rope.{mnemonic} has hfRopeTypes = []"


def test_names_are_unique_and_keys_have_one_type():
    seen: dict[str, str] = {}
    for mnemonic, names in NAMED.items():
        for name in names:
            assert name not in seen, (name, seen.get(name), mnemonic)
            seen[name] = mnemonic
    kinds: dict[str, str] = {}
    for mnemonic, body in ATTRIBUTES.items():
        for kind, key in keys(body):
            assert kinds.setdefault(key, kind) == kind, (mnemonic, key)


def test_every_named_scheme_has_a_minimal_dict():
    assert sorted(MINIMAL_KEYS) == sorted(NAMED)


@pytest.mark.parametrize("name,mnemonic", sorted(
    (name, mnemonic) for mnemonic, names in NAMED.items() for name in names))
def test_rope_type_selects_its_attribute(name, mnemonic):
    for spelling in ("rope_type", "type"):
        attrs = rope_mlir.scaling_attributes(
            dict(MINIMAL_KEYS[mnemonic], **{spelling: name}), head_dim=32)
        assert attrs.freqs.startswith(f"#rope.{mnemonic}<"), (
            name, attrs.freqs)


def test_unknown_rope_type_lists_every_declared_name():
    with pytest.raises(ValueError, match="unknown rope_type 'wavelet'") as info:
        rope_mlir.scaling_attributes({"rope_type": "wavelet"}, head_dim=32)
    message = str(info.value)
    for names in NAMED.values():
        for name in names:
            assert re.search(r"\b%s\b" % name, message), (name, message)


def scheme_spellings_in_importer(text: str) -> list[str]:
    """Scheme names, mnemonics and scheme-only keys spelled as string
    literals in the importer."""
    words = set(NAMED) | {n for names in NAMED.values() for n in names}
    words |= {key for body in ATTRIBUTES.values()
              for _, key in keys(body)} - IMPORTER_KEYS
    return sorted(w for w in words if f'"{w}"' in text)


def test_importer_names_no_scheme():
    """No scheme name or scheme key in HuggingFace.cpp: no enum,
    StringSwitch or switch over schemes to keep in sync."""
    text = IMPORTER.read_text()
    assert scheme_spellings_in_importer(text) == []
    assert "StringSwitch" not in text


def test_the_importer_check_catches_a_name():
    """The check above is not vacuous: a StringSwitch case put back trips it."""
    text = IMPORTER.read_text() + '\n// .Case("llama3", Scheme::Llama3)\n'
    assert "llama3" in scheme_spellings_in_importer(text)
