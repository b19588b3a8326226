# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Hugging Face config.json → RoPE specification (docs/HF_CONFIGS.md).

    import json, rope_mlir
    spec = rope_mlir.from_hf_config(json.load(open("config.json")))
    q = spec.apply(q, positions)          # [*tokens, H, head_dim]
    print(spec.attributes())              # the rope.apply attributes

This module only finds the RoPE-relevant values in a whole config (head dim,
rotary dim, base, layout, the `rope_scaling` dict with the top-level keys
Hugging Face reads beside it). What the scaling dict *means* is decided in
one place, the C++ importer `rope::buildFrequencyAttrFromHF`
(lib/Interop/HuggingFace.cpp), reached through the C API; this module
validates every config with it when the spec is built.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Mapping, Optional, Tuple

from . import _ir
from . import kernel as _kernel

__all__ = ["RopeSpec", "from_hf_config", "INTERLEAVED_MODEL_TYPES"]

#: model_type values whose RoPE pairs channels (2i, 2i+1) (ROPE.md §1):
#: GPT-J and CodeGen (`rotate_every_two`), DeepSeek-V2/V3 (complex
#: multiplication of adjacent channels; V3's config can turn it off with
#: `rope_interleave = false`).
INTERLEAVED_MODEL_TYPES = frozenset(
    {"gptj", "codegen", "deepseek_v2", "deepseek_v3"})

# Where a config keeps each value, first match wins (GPT-2-style names for
# GPT-J; DeepSeek rotates only the qk_rope_head_dim part of a head).
_HIDDEN_KEYS = ("hidden_size", "n_embd", "d_model")
_HEADS_KEYS = ("num_attention_heads", "n_head", "num_heads")
_BASE_KEYS = ("rope_theta", "rotary_emb_base")
# Top-level keys Hugging Face reads next to rope_scaling (ROPE.md §4).
_MERGED_KEYS = ("max_position_embeddings", "original_max_position_embeddings")
_MROPE_KEYS = ("mrope_section", "mrope_interleaved")


@dataclasses.dataclass(frozen=True)
class RopeSpec:
    """The RoPE of one model (one attention layer type), as rope.apply
    sees it. `scaling` is the Hugging Face rope_scaling dict with the
    top-level keys merged in and the M-RoPE keys moved to their own fields
    (None: unscaled)."""

    head_dim: int
    rotary_dim: int
    base: float = 10000.0
    layout: str = "half"
    scaling: Optional[Mapping[str, Any]] = dataclasses.field(
        default=None, hash=False)
    mrope_section: Optional[Tuple[int, int, int]] = None
    mrope_interleaved: bool = False
    #: The magnitude factor the scheme defines (YaRN, LongRoPE), else 1.
    magnitude: float = 1.0
    model_type: Optional[str] = None

    def scaling_attributes(self):
        """The C++ importer's translation (freqs, magnitude, mrope,
        rotary_dim) of this spec."""
        return _kernel.scaling_attributes(
            self.scaling, base=self.base, head_dim=self.head_dim,
            rotary_dim=self.rotary_dim, mrope_section=self.mrope_section,
            mrope_interleaved=self.mrope_interleaved)

    def attributes(self) -> str:
        """The attribute dictionary of the `rope.apply` for this spec, e.g.
        `{layout = #rope.layout<half>, rotary_dim = 128 : i64, freqs =
        #rope.yarn<...>, magnitude = ... : f64}` (attribute text printed by
        the dialect)."""
        attrs = self.scaling_attributes()
        return _ir.rope_attributes(
            layout=self.layout, rotary_dim=attrs.rotary_dim,
            freqs=attrs.freqs, mrope=attrs.mrope, magnitude=attrs.magnitude)

    def apply(self, x, positions=None, **kwargs):
        """`rope_mlir.apply` with this spec: x is [*tokens, H, head_dim]
        (or as `token_dims` says); with M-RoPE, positions are
        [3, *token dims]. Other keyword arguments (offset, inverse, out,
        token_dims, magnitude) pass through."""
        d = x.shape[-1] if hasattr(x, "shape") else None
        if d is not None and d != self.head_dim:
            raise ValueError(f"x has head dim {d}, the config's is "
                             f"{self.head_dim}")
        for key in ("layout", "rotary_dim", "base", "scaling",
                    "mrope_section", "mrope_interleaved"):
            if key in kwargs:
                raise TypeError(f"{key} comes from the config; build another "
                                "RopeSpec (dataclasses.replace) to change it")
        return _kernel.apply(
            x, positions, layout=self.layout, rotary_dim=self.rotary_dim,
            base=self.base, scaling=self.scaling,
            mrope_section=self.mrope_section,
            mrope_interleaved=self.mrope_interleaved, **kwargs)


def _first(config: Mapping[str, Any], keys) -> Tuple[Optional[str], Any]:
    """The first of `keys` the config sets (not null): (key, value), else
    (None, None)."""
    for key in keys:
        if config.get(key) is not None:
            return key, config[key]
    return None, None


# Config values must have the JSON type their key means; nothing is
# truncated (16.9 -> 16), parsed ("10000") or made truthy ("false" -> True).
# As in the C++ importer's JSON reader, an integer may be written as an
# integral float (24.0); bools are never numbers. Errors are ValueError (an
# invalid config), naming the key.

def _number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return float(value)


def _positive_number(value: Any, name: str) -> float:
    number = _number(value, name)
    if number <= 0:
        raise ValueError(f"{name} must be positive, got {value!r}")
    return number


def _int(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not math.isfinite(value) or int(value) != value:
        raise ValueError(f"{name} must be an integer, got {value!r}")
    return int(value)


def _positive_int(value: Any, name: str) -> int:
    number = _int(value, name)
    if number <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return number


def _fraction(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not 0.0 <= float(value) <= 1.0:
        raise ValueError(f"{name} must be a number in [0, 1], got {value!r}")
    return float(value)


def _bool(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be a bool (true or false), got "
                         f"{value!r}")
    return value


def _int_list(value: Any, name: str) -> Tuple[int, ...]:
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"{name} must be a list of integers, got {value!r}")
    return tuple(_int(n, f"{name}[{i}]") for i, n in enumerate(value))


def _text_config(config: Mapping[str, Any]) -> Mapping[str, Any]:
    """Multimodal configs (Qwen3-VL, Gemma 3, Llava...) keep the language
    model's values in `text_config`."""
    text = config.get("text_config")
    if isinstance(text, Mapping) and _first(config, _HEADS_KEYS)[1] is None:
        return text
    return config


def _rope_parameters(config: Mapping[str, Any],
                     layer_type: Optional[str]) -> Optional[dict]:
    """rope_parameters (transformers v5) or rope_scaling, as a new dict."""
    params = config.get("rope_parameters")
    scaling = config.get("rope_scaling")
    if params is not None and scaling is not None and params != scaling:
        raise ValueError("config has both rope_parameters and rope_scaling; "
                         "they disagree")
    chosen = params if params is not None else scaling
    if chosen is None:
        if layer_type is not None:
            raise ValueError(f"layer_type={layer_type!r} given but the "
                             "config has no per-layer-type rope_parameters")
        return None
    if isinstance(chosen, str):
        # Some early Phi-3 configs wrote rope_scaling = "su" with the
        # factors elsewhere; that is not a dict Hugging Face can load.
        raise ValueError(f"rope_scaling must be a dict, got {chosen!r}")
    if not isinstance(chosen, Mapping):
        raise ValueError(f"rope_scaling must be a dict, got "
                         f"{type(chosen).__name__}")
    if chosen and all(isinstance(v, Mapping) for v in chosen.values()):
        # Per layer type ({"full_attention": {...}, "sliding_attention":
        # {...}}), e.g. Gemma 3 under transformers v5.
        name = layer_type or "full_attention"
        if name not in chosen:
            raise ValueError(f"rope_parameters has layer types "
                             f"{sorted(chosen)}; pass layer_type=")
        chosen = chosen[name]
    elif layer_type is not None:
        raise ValueError(f"layer_type={layer_type!r} given but the config's "
                         "rope parameters are not per layer type")
    return dict(chosen)


def from_hf_config(config: Mapping[str, Any], *, layout: Optional[str] = None,
                   layer_type: Optional[str] = None) -> RopeSpec:
    """The RoPE of a Hugging Face model from its whole config.json dict.

    head_dim: `head_dim` (`qk_rope_head_dim` for DeepSeek's MLA), else
    hidden_size // num_attention_heads. Rotary dim: int(partial_rotary_factor
    · D) (Phi, Persimmon, GLM...), int(rotary_pct · D) (GPT-NeoX), or
    `rotary_dim` (GPT-J, CodeGen), else D. Base: `rope_theta` (also inside
    rope_parameters) or `rotary_emb_base` (GPT-NeoX), else 10000. The scaling
    dict gets the top-level `max_position_embeddings` and
    `original_max_position_embeddings` (Phi-3 keeps L there). Layout:
    interleaved for INTERLEAVED_MODEL_TYPES unless `layout` says otherwise.
    Multimodal configs are read from `text_config`; per-layer-type
    rope_parameters need `layer_type` (default "full_attention").

    Raises ValueError for configs the importer rejects (unknown scaling keys,
    invalid values: the attribute verifier's message), and for a value of
    the wrong JSON type, naming the key (an integral float such as 24.0
    counts as an integer; a bool is never a number, a string never a bool).
    """
    if not isinstance(config, Mapping):
        raise ValueError(f"config must be a dict, got {type(config).__name__}")
    if layout is not None and layout not in ("half", "interleaved"):
        raise ValueError(f"layout must be 'half' or 'interleaved', got "
                         f"{layout!r}")
    if layer_type is not None and not isinstance(layer_type, str):
        raise ValueError(f"layer_type must be a string, got {layer_type!r}")
    outer_type = config.get("model_type")
    config = _text_config(config)
    model_type = config.get("model_type", outer_type)
    if model_type is not None and not isinstance(model_type, str):
        raise ValueError(f"model_type must be a string, got {model_type!r}")

    # Head dim.
    if config.get("qk_rope_head_dim") is not None:
        head_dim = _positive_int(config["qk_rope_head_dim"],
                                 "qk_rope_head_dim")
    elif config.get("head_dim") is not None:
        head_dim = _positive_int(config["head_dim"], "head_dim")
    else:
        hidden_key, hidden = _first(config, _HIDDEN_KEYS)
        heads_key, heads = _first(config, _HEADS_KEYS)
        if hidden is None or heads is None:
            raise ValueError("config needs head_dim, or hidden_size and "
                             "num_attention_heads")
        hidden = _positive_int(hidden, hidden_key)
        heads = _positive_int(heads, heads_key)
        if hidden % heads:
            raise ValueError(f"{hidden_key} {hidden} is not a multiple of "
                             f"{heads_key} {heads}")
        head_dim = hidden // heads

    scaling = _rope_parameters(config, layer_type)

    # Base.
    base = None
    bases = {}
    for key in _BASE_KEYS:
        if config.get(key) is not None:
            bases[key] = _positive_number(config[key], key)
    if scaling is not None and scaling.get("rope_theta") is not None:
        bases["rope_parameters.rope_theta"] = _positive_number(
            scaling["rope_theta"], "rope_parameters.rope_theta")
    if len(set(bases.values())) > 1:
        raise ValueError(f"config gives different RoPE bases: {bases}")
    base = next(iter(bases.values())) if bases else 10000.0

    # Rotary dim. HF's partial_rotary_factor means P = int(f·D) except for
    # "proportional", which rotates the whole head with zero frequencies.
    kind = None
    if scaling is not None:
        kind = scaling.get("rope_type", scaling.get("type"))
    partial = config.get("partial_rotary_factor")
    if partial is None and scaling is not None:
        partial = scaling.get("partial_rotary_factor")
    rotary_dim = head_dim
    if partial is not None:
        partial = _fraction(partial, "partial_rotary_factor")
        if kind == "proportional":
            scaling.setdefault("partial_rotary_factor", partial)
        else:
            rotary_dim = int(head_dim * partial)
    elif config.get("rotary_pct") is not None:
        rotary_dim = int(head_dim * _fraction(config["rotary_pct"],
                                              "rotary_pct"))
    elif config.get("rotary_dim") is not None:
        rotary_dim = _positive_int(config["rotary_dim"], "rotary_dim")

    # Scaling: split off M-RoPE, merge the top-level lengths.
    mrope_section = None
    mrope_interleaved = False
    if scaling is not None:
        if scaling.get("mrope_section") is not None:
            mrope_section = _int_list(scaling["mrope_section"],
                                      "mrope_section")
        if scaling.get("mrope_interleaved") is not None:
            mrope_interleaved = _bool(scaling["mrope_interleaved"],
                                      "mrope_interleaved")
        for key in _MROPE_KEYS:
            scaling.pop(key, None)
        if "rope_type" in scaling or "type" in scaling:
            for key in _MERGED_KEYS:
                if config.get(key) is None:
                    continue
                value = config[key]
                if scaling.get(key) not in (None, value):
                    raise ValueError(
                        f"{key} is {value} at the top level of the config "
                        f"but {scaling[key]} in rope_scaling")
                scaling[key] = value
        if not scaling:
            scaling = None

    if layout is None:
        layout = "half"
        interleave = config.get("rope_interleave", True)
        if interleave is not None:
            interleave = _bool(interleave, "rope_interleave")
        # null (unset) is falsy to Hugging Face's `if rope_interleave:`.
        if model_type in INTERLEAVED_MODEL_TYPES and interleave:
            layout = "interleaved"

    spec = RopeSpec(head_dim=head_dim, rotary_dim=rotary_dim, base=base,
                    layout=layout, scaling=scaling,
                    mrope_section=mrope_section,
                    mrope_interleaved=mrope_interleaved,
                    model_type=model_type)
    # Validate through the importer now, and record the scheme's magnitude.
    attrs = spec.scaling_attributes()
    return dataclasses.replace(spec, magnitude=attrs.magnitude)
