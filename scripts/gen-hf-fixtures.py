#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Records what Hugging Face transformers' own RoPE code does, per model type
(issue 17; not run in CI: it needs transformers and torch).

    /work/peers/bin/python scripts/gen-hf-fixtures.py          # all model types
    /work/peers/bin/python scripts/gen-hf-fixtures.py llama glm  # only these

It walks transformers' config registry (CONFIG_MAPPING_NAMES). For every model
type whose modeling module defines a `*RotaryEmbedding` class that the
language model builds from its config, it
  1. builds a small config with the model's own Config class (head dim 32,
     unless the model fixes it), keeping every RoPE default of the class;
  2. runs the model's RotaryEmbedding forward and its rotation function
     (`apply_rotary_pos_emb`, `apply_multimodal_rotary_pos_emb` or
     `apply_rotary_emb`) in float64: torch.float / Tensor.float() are
     redirected to float64 while they run, so the inverse frequencies, the
     angles and cos/sin are all computed in float64 ("HF's float64
     recomputation"), through the same code paths (dynamic and LongRoPE
     updates included);
  3. finds the pair layout and rotary dim empirically: the output must equal,
     to 1e-9, the rotation of the first P channels by pos * inv_freq (the
     module's own inv_freq, P = 2 * len(inv_freq)) with pairs (i, i + P/2)
     ("half") or (2i, 2i+1) ("interleaved"), times the module's
     attention_scaling, and the other channels must pass through; for
     M-RoPE, each frequency's position axis (t, h, w) is found the same way.
A model type whose rotation matches neither is recorded with status
"unsupported" and the reason.

Output, python/tests/fixtures/hf/models/:
  <name>.json  config (the RoPE-relevant part of config.to_dict()), layout,
               rotary_dim, inv_freq per position set, attention_scaling,
               mrope_axes, status, reason, transformers version
  arrays/<hash>.npz  x [S, 1, D] (float16 values, exact in float64),
               positions [sets, (3,) S], y [sets, S, 1, D] (float64, HF's
               output), inv_freq [sets, P/2] (float64); named by a hash of
               its content, shared by fixtures with the same RoPE
<name> is the model type, with `-<variant>` for extra RoPE schemes run on
Llama's code and `@<layer_type>` for per-layer-type RoPE (Gemma 3...).
index.json lists every model type looked at and why any was skipped.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib
import inspect
import json
import math
import pathlib
import re
import sys
import traceback
import warnings

import numpy as np
import torch
import transformers
from transformers.models.auto.configuration_auto import (
    CONFIG_MAPPING, CONFIG_MAPPING_NAMES, model_type_to_module_name)

ROOT = pathlib.Path(__file__).resolve().parents[1]
OUT = ROOT / "python" / "tests" / "fixtures" / "hf" / "models"

SEQ = 5       # tokens per position set
HEADS = 2     # heads (q only: k goes through the same code)
HEAD_DIM = 32  # unless the model's config fixes it
MATCH = 1e-9  # float64 against float64: same products, different trig order

# Small sizes for the language model; a key is set only if the config class
# has it (so a model that fixes its head dim, e.g. DeepSeek's
# qk_rope_head_dim, keeps it).
# hidden_size / num_attention_heads (64) differs from head_dim (32), so a
# head dim read from the wrong key (an attribute_map alias: JetMoE's
# kv_channels, Zamba2's attention_head_dim) shows in the fixture.
SMALL = {
    "hidden_size": 256, "num_attention_heads": 4, "num_key_value_heads": 2,
    "head_dim": HEAD_DIM, "intermediate_size": 256,
    "vocab_size": 512, "n_embd": 256, "n_head": 4, "d_model": 256,
    "rotary_dim": 16,
}

# RoPE values released configs set that the Config class does not default
# to, where the modeling code's defaults need them (GLM-4V's M-RoPE section
# [8, 12, 12] covers half of a 128 head: partial_rotary_factor 0.5).
ROPE_FIXUPS = {
    "glm4v": {"partial_rotary_factor": 0.5},
    "glm4v_text": {"partial_rotary_factor": 0.5},
    "glm4v_moe": {"partial_rotary_factor": 0.5},
    "glm4v_moe_text": {"partial_rotary_factor": 0.5},
}

# Sizes for model types whose RoPE the general ones make inexpressible:
# Moonshine's partial_rotary_factor 0.9 of 256 / 4 heads is 57 channels
# (odd: refused), of 128 / 4 it is 28, as in its released configs.
SIZE_FIXUPS = {"moonshine": {"hidden_size": 128}}

# Extra RoPE schemes, run on Llama's code (name suffix -> rope_parameters).
VARIANTS = {
    "linear": {"rope_type": "linear", "factor": 4.0},
    "dynamic": {"rope_type": "dynamic", "factor": 2.0},
    # transformers' dynamic NTK ignores original_max_position_embeddings:
    # its threshold is max_position_embeddings (4096 here).
    "dynamic_original": {"rope_type": "dynamic", "factor": 2.0,
                         "original_max_position_embeddings": 1024},
    "yarn": {"rope_type": "yarn", "factor": 4.0,
             "original_max_position_embeddings": 1024},
    "yarn_mscale": {"rope_type": "yarn", "factor": 8.0, "mscale": 0.707,
                    "mscale_all_dim": 0.707, "beta_fast": 16.0,
                    "original_max_position_embeddings": 1024},
    "llama3": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
               "high_freq_factor": 4.0,
               "original_max_position_embeddings": 1024},
    "longrope": {"rope_type": "longrope",
                 "short_factor": [1.0 + 0.05 * i for i in range(16)],
                 "long_factor": [1.0 + 1.5 * i for i in range(16)],
                 "original_max_position_embeddings": 1024},
    "proportional": {"rope_type": "proportional", "factor": 2.0,
                     "partial_rotary_factor": 0.5},
}

# Schemes run on a model type's own code as well as Llama's
# (`<model_type>-<suffix>` fixtures). (Phi-3's config class accepts only
# longrope in transformers 5.25, so dynamic NTK with Phi-3's top-level
# original_max_position_embeddings runs on Llama's code:
# llama-dynamic_original.)
def alias_variants(model_type, index):
    """Variants for a model type whose config stores max_position_embeddings
    under another name (attribute_map: DBRX's max_seq_len, Bailing-Hybrid's
    model_max_length): the schemes that read it, on its own code. LongRoPE
    factors are sized from the plain fixture's rotary dim."""
    try:
        cls = CONFIG_MAPPING[model_type]
        text = type(cls().get_text_config())
    except Exception:  # noqa: BLE001
        return {}
    if "max_position_embeddings" not in attribute_map(text):
        return {}
    # Only code that computes its frequencies by rope_type (GPT-J and
    # CodeGen build a fixed table and ignore the scheme).
    sources = "".join(pathlib.Path(m.__file__).read_text()
                      for m in module_for(model_type))
    if "ROPE_INIT_FUNCTIONS" not in sources:
        return {}
    found = re.search(r"P=(\d+)", index.get(model_type, ""))
    variants = {"dynamic": ({"rope_type": "dynamic", "factor": 2.0}, {})}
    if found:
        half = int(found.group(1)) // 2
        variants["longrope"] = ({
            "rope_type": "longrope",
            "short_factor": [1.0 + 0.05 * i for i in range(half)],
            "long_factor": [1.0 + 1.5 * i for i in range(half)],
            "original_max_position_embeddings": 1024}, {})
    return variants


def model_variants(model_type, index):
    return alias_variants(model_type, index)


# Why a model type's rotation matches no rope.apply, where the generic
# message would not say (found by reading the modeling code).
REASONS = {
    "ernie4_5_vl_moe": "3D RoPE: the frequencies are permuted (h and w "
                       "interleaved, t last) before M-RoPE assigns them to "
                       "axes, so pair i does not rotate by theta_i",
    "ernie4_5_vl_moe_text": "3D RoPE: the frequencies are permuted (h and w "
                            "interleaved, t last) before M-RoPE assigns them "
                            "to axes, so pair i does not rotate by theta_i",
}

# Keys never relevant to RoPE (dropped from the recorded config).
DROP = {"id2label", "label2id", "architectures", "transformers_version",
        "auto_map", "quantization_config", "tokenizer_class", "dtype",
        "torch_dtype", "task_specific_params", "problem_type"}


@contextlib.contextmanager
def float64_torch():
    """torch.float / torch.float32 and Tensor.float() mean float64 while the
    RoPE code runs, so HF's own code computes in float64."""
    saved = (torch.float, torch.float32, torch.Tensor.float)
    default = torch.get_default_dtype()
    torch.float = torch.float64
    torch.float32 = torch.float64
    torch.Tensor.float = lambda self, *a, **k: self.double()
    torch.set_default_dtype(torch.float64)  # int / int (GPT-J's table)
    try:
        yield
    finally:
        torch.float, torch.float32, torch.Tensor.float = saved
        torch.set_default_dtype(default)


def has(config, key) -> bool:
    """hasattr, for configs that raise other errors for per-layer values
    (Gemma 4's head_dim)."""
    try:
        return hasattr(config, key)
    except Exception:  # noqa: BLE001
        return False


def safe_get(config, key, default=None):
    try:
        return getattr(config, key, default)
    except Exception:  # noqa: BLE001
        return default


def small_config(model_type: str, rope_parameters=None, keep_size=False,
                 top_level=None):
    try:
        return _small_config(model_type, rope_parameters, keep_size, True,
                             top_level)
    except Exception:  # noqa: BLE001
        return _small_config(model_type, rope_parameters, keep_size, False,
                             top_level)


def _small_config(model_type, rope_parameters, keep_size, few_layers,
                  top_level=None):
    cls = CONFIG_MAPPING[model_type]
    probe = cls()
    text = probe.get_text_config()
    overrides = {k: v for k, v in SMALL.items() if has(text, k) and
                 not isinstance(getattr(type(text), k, None), property)}
    if keep_size:
        overrides = {}
    if safe_get(text, "qk_rope_head_dim", None) is not None:
        overrides.pop("head_dim", None)  # MLA: head_dim is the RoPE part
    if safe_get(text, "head_dim", None) is None:
        overrides.pop("head_dim", None)
    if rope_parameters is not None:
        # The class's own base (Bailing-Hybrid keeps a top-level
        # rope_theta beside its parameters' one; they must agree).
        own = safe_get(text, "rope_parameters", None) or {}
        theta = own.get("rope_theta") if isinstance(own, dict) else None
        overrides["rope_parameters"] = dict(
            rope_parameters, rope_theta=theta or 10000.0)
        overrides["max_position_embeddings"] = 4096
    if few_layers and isinstance(safe_get(text, "num_hidden_layers", None),
                                 int) and \
            text.num_hidden_layers > 8 and not isinstance(
                getattr(type(text), "num_hidden_layers", None), property):
        overrides["num_hidden_layers"] = 8
        if isinstance(safe_get(text, "layer_types", None), list):
            overrides["layer_types"] = text.layer_types[:8]
    if not keep_size:
        overrides.update(SIZE_FIXUPS.get(model_type, {}))
    overrides.update(top_level or {})
    if model_type in ROPE_FIXUPS:
        overrides["rope_parameters"] = dict(
            overrides.get("rope_parameters", text.rope_parameters),
            **ROPE_FIXUPS[model_type])
    if text is probe:
        return cls(**overrides)
    # A composite config: the language model's values go to its sub-config.
    for key, value in vars(probe).items():
        if value is text:
            sub = dict(text.to_dict(), **overrides)
            return cls(**{key: sub})
    # One level deeper (Qwen2.5-Omni: thinker_config.text_config).
    for key, value in vars(probe).items():
        if not hasattr(value, "to_dict"):
            continue
        for inner, leaf in vars(value).items():
            if leaf is text:
                sub = dict(value.to_dict())
                sub[inner] = dict(text.to_dict(), **overrides)
                return cls(**{key: sub})
    raise RuntimeError("text config not found among the attributes")


def plain(value):
    """A JSON value (tuples as lists)."""
    return json.loads(json.dumps(value, default=lambda o: repr(o)))


# Keys kept in the recorded config: those whose name has one of these parts
# (every value from_hf_config reads, and what tells a layer's RoPE).
KEEP = ("rope", "rotary", "head", "hidden_size", "n_embd", "d_model",
        "position", "theta", "partial", "layer", "model_type", "interleave",
        "mrope", "text_config", "qk_", "decoder")


def relevant(name: str) -> bool:
    return any(part in name for part in KEEP)


def attribute_map(cls) -> dict:
    """The config class's aliases of RoPE-relevant names ({alias:
    canonical}): transformers stores the canonical key in config.json and
    the modeling code reads the alias (JetMoE's head_dim is kv_channels,
    DBRX's max_position_embeddings is max_seq_len)."""
    return {alias: canonical for alias, canonical in
            sorted(getattr(cls, "attribute_map", {}).items())
            if relevant(alias)}


# Dict-valued keys kept whole: the RoPE parameters, and the per-layer
# overrides (Gemma 4's head_dim on full-attention layers).
DICT_KEYS = ("rope_parameters", "rope_scaling", "per_layer_config")


def recorded_config(config, text=None) -> dict:
    """The RoPE-relevant part of the config dict: no sub-configs of other
    modalities (the language model's is kept, also one level down:
    Qwen2.5-Omni's thinker_config.text_config), only keys named like RoPE
    values (KEEP) or stored for such a name (attribute_map)."""
    text = config.get_text_config() if text is None else text
    aliased = set(attribute_map(type(config)).values())
    out = {}
    for key, value in config.to_dict().items():
        if key in DROP or value is None:
            continue
        if isinstance(value, dict) and key not in DICT_KEYS:
            sub = safe_get(config, key)
            if sub is None or text is config:
                continue
            if sub is text:
                sub_aliased = set(attribute_map(type(sub)).values())
                out[key] = {k: v for k, v in value.items()
                            if k not in DROP and v is not None and
                            (relevant(k) or k in sub_aliased) and
                            (not isinstance(v, dict) or k in DICT_KEYS)}
            elif hasattr(sub, "to_dict") and any(
                    v is text for v in vars(sub).values()):
                out[key] = recorded_config(sub, text)
            continue
        if not relevant(key) and key not in aliased:
            continue
        if isinstance(value, list) and len(value) > 64:
            continue
        out[key] = value
    return plain(out)


def rotary_classes(module):
    found = []
    for name, obj in vars(module).items():
        if inspect.isclass(obj) and name.endswith("RotaryEmbedding") and \
                issubclass(obj, torch.nn.Module):
            # Vision towers' 2D/axial RoPE is out of scope; a Text class is
            # the language model's even if the model's name has a vision
            # word (GlmImageText..., Granite4VisionText...).
            lowered = name.lower()
            if "Text" not in name and any(
                    w in lowered for w in ("vision", "visual", "image",
                                           "patch", "2d", "vit")):
                continue
            found.append(obj)
    # The language model's first (Text...) if there are several.
    found.sort(key=lambda c: (0 if "Text" in c.__name__ else 1, c.__name__))
    return found


def rotation_functions(module, text):
    names = ["apply_multimodal_rotary_pos_emb", "apply_rotary_pos_emb",
             "apply_rotary_emb"]
    # DeepSeek-style attention picks the interleaving variant when the
    # config's rope_interleave is set.
    if getattr(text, "rope_interleave", False):
        names.insert(0, "apply_rotary_pos_emb_interleave")
    else:
        # The only one some MLA models have (GLM-MoE-DSA, LongCat-Flash).
        names.append("apply_rotary_pos_emb_interleave")
    return [(n, getattr(module, n)) for n in names
            if callable(getattr(module, n, None))]


def layer_config(text, layer_type):
    """The config a layer type's layers read: the global one with the
    layer's `per_layer_config` overrides (Gemma 4's full-attention layers
    have head_dim 512); reading a per-layer value from the global config
    raises in transformers."""
    if layer_type is not None and safe_get(text, "is_heterogeneous", False):
        try:
            return text.per_layer_config[layer_type]
        except ValueError:  # layer types named otherwise (DeepSeek-V4)
            pass
    return text


def rope_parameters_of(config, layer_type):
    params = getattr(config, "rope_parameters", None) or {}
    if layer_type is not None:
        params = params.get(layer_type, {})
    return params


def original_length(config, layer_type) -> int:
    params = rope_parameters_of(config, layer_type)
    value = params.get("original_max_position_embeddings") or getattr(
        config, "original_max_position_embeddings", None) or getattr(
        config, "max_position_embeddings", None) or 4096
    return int(value)


def position_sets(length: int, mrope: bool):
    short = np.array([0, 1, 7, length // 3, length - 1], np.int64)
    long = np.array([3, length - 1, length, 2 * length + 5, 4 * length + 1],
                    np.int64)
    sets = {}
    for name, t in (("short", short), ("long", long)):
        if mrope:
            h = t // 3 + np.array([0, 2, 1, 3, 5])
            w = t // 5 + np.array([1, 0, 4, 2, 6])
            sets[name] = np.stack([t, h, w])
        else:
            sets[name] = t
    return sets


def call_rotation(fn, q, out, extra):
    """fn's output for q [S, H, W], whichever head-major or token-major
    form it takes: [1, S, H, W] or [1, H, S, W] (the output must keep the
    shape; H = 2 makes the wrong one fail or change it)."""
    names = list(inspect.signature(fn).parameters)
    if names[:3] == ["tensor", "sin", "cos"]:  # GPT-J, CodeGen
        sin, cos = out
        forms = [lambda t: fn(t, sin, cos)]
    elif names[:3] == ["x", "cos", "sin"]:  # one tensor (Gemma 3n)
        cos, sin = out
        forms = [lambda t: fn(t, cos, sin)]
    elif not isinstance(out, (tuple, list)):  # complex freqs_cis
        forms = [lambda t: fn(t, t.clone(), out)[0]]
    else:
        cos, sin = out
        forms = [lambda t: fn(t, t.clone(), cos, sin, **extra)[0]]
    errors = []
    for form in forms:
        for token_major in (False, True):
            t = q[None] if token_major else q.transpose(0, 1)[None]
            try:
                y = form(t)
            except Exception as error:  # noqa: BLE001
                errors.append(f"{type(error).__name__}: {error}")
                continue
            if tuple(y.shape) != tuple(t.shape):
                errors.append(f"shape {tuple(y.shape)}")
                continue
            return y[0] if token_major else y[0].transpose(0, 1)
    raise RuntimeError("; ".join(errors))


def run_hf(rope_cls, config, fn, x, positions, layer_type):
    """HF's output for x [S, H, D] at positions ([S] or [3, S]), in float64,
    with a fresh RotaryEmbedding (its dynamic state starts clean)."""
    with float64_torch():
        rope = rope_cls(config).double()
        pos = torch.from_numpy(positions)[..., None, :]  # [(3,) 1, S]
        hidden = torch.zeros(1, x.shape[0], 8, dtype=torch.float64)
        kwargs = {}
        if layer_type is not None:
            kwargs["layer_type"] = layer_type
        out = rope(hidden, pos, **kwargs)
        # Attention code that rotates part of a head (GPT-NeoX, Phi,
        # Persimmon...) passes the leading cos-width channels to the
        # rotation and concatenates the rest unchanged; functions that split
        # themselves (GLM) see the same channels.
        if isinstance(out, (tuple, list)):
            width = out[0].shape[-1]
            if list(inspect.signature(fn).parameters)[:1] == ["tensor"]:
                width *= 2  # GPT-J's sin/cos hold P/2 entries
        else:
            width = out.shape[-1] * 2
        extra = {}
        if "mrope_section" in inspect.signature(fn).parameters:
            extra["mrope_section"] = rope_parameters_of(
                config, layer_type)["mrope_section"]
        # cos may hold P entries (cat(freqs, freqs)) or P/2 (GPT-OSS).
        for tries, width in enumerate((width, 2 * width)):
            q = torch.from_numpy(x[..., :width].copy())
            try:
                y = call_rotation(fn, q, out, extra)
                break
            except RuntimeError:
                if tries or 2 * width > x.shape[-1]:
                    raise
        y = torch.cat([y, torch.from_numpy(x[..., width:].copy())], -1)
        inv_freq = getattr(rope, "inv_freq" if layer_type is None
                           else f"{layer_type}_inv_freq", None)
        scaling = getattr(rope, "attention_scaling", 1.0)
        if isinstance(scaling, dict):
            scaling = scaling[layer_type]
        if inv_freq is None:
            # A sin/cos table (GPT-J): the angle at position 1.
            one = rope(hidden[:, :1], torch.ones(1, 1, dtype=torch.long))
            sin, cos = (one if list(inspect.signature(fn).parameters)[:1]
                        == ["tensor"] else one[::-1])
            inv_freq = torch.atan2(sin[0, 0], cos[0, 0])
            if inv_freq.shape[-1] == width:
                inv_freq = inv_freq[: width // 2]
    return (y.detach().numpy().astype(np.float64),
            inv_freq.detach().numpy().astype(np.float64), float(scaling))


def rotate(x, angles, magnitude, layout, p):
    """x [S, H, D], angles [S, P/2] -> rotated copy (SEMANTICS.md §1)."""
    y = x.copy()
    if layout == "half":
        i1 = np.arange(p // 2)
        i2 = i1 + p // 2
    else:
        i1 = np.arange(0, p, 2)
        i2 = i1 + 1
    c = magnitude * np.cos(angles)[:, None, :]
    s = magnitude * np.sin(angles)[:, None, :]
    x1, x2 = x[..., i1], x[..., i2]
    y[..., i1] = x1 * c - x2 * s
    y[..., i2] = x2 * c + x1 * s
    return y


def detect(x, positions, inv_freq, magnitude, y):
    """(layout, rotary_dim, axes per frequency or None, error) of the
    rotation that reproduces y, or (None, ...) if none does."""
    p = 2 * len(inv_freq)
    if p > x.shape[-1]:
        return None, p, None, math.inf, None
    axes_pos = positions if positions.ndim == 2 else positions[None]
    best = (None, p, None, math.inf, None)
    # "interleaved>half": pairs (2i, 2i+1) rotated, written back as
    # (i, i + P/2) (DeepSeek's apply_rotary_pos_emb_interleave: q and k are
    # permuted alike, so q.k is that of the interleaved rotation).
    order = np.concatenate([np.arange(0, p, 2), np.arange(1, p, 2),
                            np.arange(p, x.shape[-1])])
    # "-half", "-interleaved": rotation by -pos * theta (the inverse).
    for layout in ("half", "interleaved", "interleaved>half", "-half",
                   "-interleaved"):
        target = y
        if layout == "interleaved>half":
            target = np.empty_like(y)
            target[..., order] = y
        sign = -1.0 if layout.startswith("-") else 1.0
        best = min(best, match(x, axes_pos, sign * inv_freq, magnitude,
                               layout.strip("-").split(">")[0], p, target,
                               positions.ndim == 2) + (layout,),
                   key=lambda r: r[3])
    if best[3] > MATCH:
        return None, p, best[2], best[3], best[4]
    return best


def match(x, axes_pos, inv_freq, magnitude, layout, p, y, mrope):
    if True:
        # Per frequency, the axis whose angle reproduces the pair.
        choice = np.zeros(p // 2, np.int64)
        per_axis = []
        for a in range(axes_pos.shape[0]):
            angles = axes_pos[a][:, None] * inv_freq[None, :]
            cand = rotate(x, angles, magnitude, layout, p)
            per_axis.append(cand)
        if layout == "half":
            pairs = [(i, i + p // 2) for i in range(p // 2)]
        else:
            pairs = [(2 * i, 2 * i + 1) for i in range(p // 2)]
        cand = x.copy()
        for i, (c1, c2) in enumerate(pairs):
            errs = [max(np.abs(c[..., c1] - y[..., c1]).max(),
                        np.abs(c[..., c2] - y[..., c2]).max())
                    for c in per_axis]
            choice[i] = int(np.argmin(errs))
            cand[..., [c1, c2]] = per_axis[choice[i]][..., [c1, c2]]
        err = float(np.abs(cand - y).max() / max(1.0, np.abs(y).max()))
        return (layout, p, choice.tolist() if mrope else None, err)


def record(name, model_type, config, rope_cls, fn_name, fn, layer_type,
           variant=None, extra=None):
    text = config.get_text_config()
    view = layer_config(text, layer_type)
    params = rope_parameters_of(text, layer_type)
    mrope = "mrope_section" in params or fn_name == \
        "apply_multimodal_rotary_pos_emb"
    length = original_length(view, layer_type)
    head_dim = None
    rng = np.random.default_rng(0)
    entry = {
        "model_type": model_type, "transformers": transformers.__version__,
        "rotary_class": rope_cls.__name__, "rotation": fn_name,
        "layer_type": layer_type, "variant": variant,
        "config": recorded_config(config),
        "original_length": length, "sets": {},
        # Keyed by the language model's model_type, which from_hf_config
        # reads the aliases under.
        "attribute_map": {text.model_type: attribute_map(type(text))},
    }
    entry.update(extra or {})
    layouts = set()
    # The head dim the rotation sees: the config's, else the module's width.
    head_dim = infer_head_dim(text, view, rope_cls, layer_type)
    x = rng.standard_normal((SEQ, HEADS, head_dim)).astype(np.float16)
    xs, ys, invs = [], [], []
    for set_name, positions in position_sets(length, mrope).items():
        try:
            y, inv_freq, scaling = run_hf(rope_cls, text, fn,
                                          x.astype(np.float64), positions,
                                          layer_type)
        except IndexError:
            # A sin/cos table of `length` rows (GPT-J): positions past it
            # are out of the model's range.
            entry["table_length"] = length
            positions = np.minimum(positions, length - 1 - np.arange(
                positions.shape[-1])[::-1])
            y, inv_freq, scaling = run_hf(rope_cls, text, fn,
                                          x.astype(np.float64), positions,
                                          layer_type)
        layout, p, axes, err, order = detect(x.astype(np.float64), positions,
                                             inv_freq, scaling, y)
        layouts.add((layout, p, None if axes is None else tuple(axes),
                     order))
        entry["sets"][set_name] = {"attention_scaling": scaling,
                                   "error": err}
        xs.append(positions)
        ys.append(y)
        invs.append(inv_freq)
    # Stored: the first head (the second only makes the head axis
    # unambiguous in the call).
    arrays = {"x": x[:, :1], "positions": np.stack(xs).astype(np.int64),
              "y": np.stack(ys)[:, :, :1]}
    if all(i.shape == invs[0].shape for i in invs):
        arrays["inv_freq"] = np.stack(invs)
    entry["sets"] = {"names": list(entry["sets"]),
                     "attention_scaling": [v["attention_scaling"]
                                           for v in entry["sets"].values()],
                     "error": [v["error"] for v in entry["sets"].values()]}
    entry["head_dim"] = head_dim
    partial = params.get("partial_rotary_factor",
                         safe_get(view, "partial_rotary_factor", None))
    if len(layouts) == 1 and next(iter(layouts))[0] is not None and \
            partial and int(partial * head_dim) % 2:
        # HF rotates 2 * ceil(P/2) channels with theta_i = b^(-2i/P), P odd.
        entry["status"] = "refused"
        entry["reason"] = (
            f"int(partial_rotary_factor * head_dim) = "
            f"{int(partial * head_dim)} is odd: HF rotates "
            f"{2 * len(inv_freq)} channels with frequencies "
            f"b^(-2i/{int(partial * head_dim)}), which no rope.apply "
            "frequency attribute states; from_hf_config refuses the config "
            "(its rotary dim must be even)")
        entry["refusal"] = "rotary_dim must be a positive even integer"
        entry["layout"] = next(iter(layouts))[0]
        entry["rotary_dim"] = None
        entry["mrope_axes"] = None
        entry["output_order"] = None
    elif len(layouts) == 1 and next(iter(layouts))[3].startswith("-") and \
            next(iter(layouts))[2] is None:
        # Rotation by -position * theta (NanoChat's rotate_half with flipped
        # signs): rope.apply's inverse rotation (`inverse = true`).
        layout, p, _, _ = next(iter(layouts))
        entry["status"] = "supported"
        entry["layout"] = layout
        entry["inverse"] = True
        entry["rotary_dim"] = p
        entry["mrope_axes"] = None
        entry["output_order"] = "same"
    elif len(layouts) != 1 or None in {l for l, _, _, _ in layouts}:
        entry["status"] = "unsupported"
        entry["reason"] = REASONS.get(model_type) or (
            "the rotation matches neither pair layout applied with the "
            f"module's inv_freq and attention_scaling (best relative error "
            f"{max(entry['sets']['error']):.2e})")
        entry["layout"] = None
        entry["rotary_dim"] = None
        entry["mrope_axes"] = None
        entry["output_order"] = None
    elif axes_style(text, layer_type, layouts) == "unknown":
        entry["status"] = "unsupported"
        entry["reason"] = ("M-RoPE assigns frequencies to axes neither in "
                           "chunks nor interleaved by 3 (SEMANTICS.md §2)")
        entry["layout"] = entry["rotary_dim"] = entry["mrope_axes"] = None
        entry["output_order"] = None
    else:
        entry["mrope_style"] = axes_style(text, layer_type, layouts)
        layout, p, axes, order = layouts.pop()
        entry["status"] = "supported"
        entry["layout"] = layout
        # "deinterleaved": the output holds the rotated even channels, then
        # the odd ones (the same permutation for q and k).
        entry["output_order"] = ("deinterleaved" if order ==
                                 "interleaved>half" else "same")
        entry["rotary_dim"] = p
        entry["mrope_axes"] = None if axes is None else list(axes)
    # Arrays are stored once per content (models with the same RoPE give
    # the same output: x is the same everywhere).
    digest = hashlib.sha256()
    for key in sorted(arrays):
        digest.update(key.encode())
        digest.update(str(arrays[key].dtype).encode())
        digest.update(np.ascontiguousarray(arrays[key]).tobytes())
    entry["arrays"] = digest.hexdigest()[:16]
    (OUT / "arrays").mkdir(parents=True, exist_ok=True)
    path = OUT / "arrays" / f"{entry['arrays']}.npz"
    if not path.exists():
        np.savez_compressed(path, **arrays)
    # One line per top-level key (compact, and diffs stay readable).
    (OUT / f"{name}.json").write_text(
        "{\n" + ",\n".join(f" {json.dumps(k)}: {json.dumps(v)}"
                            for k, v in entry.items()) + "\n}\n")
    return entry


def axes_style(text, layer_type, layouts):
    """"chunked" or "interleaved" M-RoPE (SEMANTICS.md §2), as the recorded axis
    per frequency shows for the config's section; None without M-RoPE."""
    axes = next(iter(layouts))[2]
    if axes is None:
        return None
    section = rope_parameters_of(text, layer_type).get("mrope_section")
    if section is None or sum(section) != len(axes):
        return "unknown"
    t, h, w = section
    chunked = [0] * t + [1] * h + [2] * w
    interleaved = [1 if j % 3 == 1 and j < 3 * h else
                   2 if j % 3 == 2 and j < 3 * w else 0
                   for j in range(len(axes))]
    if list(axes) == chunked:
        return "chunked"
    if list(axes) == interleaved:
        return "interleaved"
    return "unknown"


def infer_head_dim(text, view, rope_cls, layer_type):
    """The head dim the attention rotates: view (the layer type's config)
    holds the values, text builds the module."""
    with float64_torch():
        rope = rope_cls(text)
        hidden = torch.zeros(1, 2, 8, dtype=torch.float64)
        kwargs = {} if layer_type is None else {"layer_type": layer_type}
        pos = torch.arange(2)[None]
        params = getattr(text, "rope_parameters", None) or {}
        if layer_type is not None:
            params = params.get(layer_type, {})
        if "mrope_section" in params:
            pos = pos[None].expand(3, 1, 2)
        out = rope(hidden, pos, **kwargs)
    width = (out[0].shape[-1] if isinstance(out, (tuple, list))
             else out.shape[-1] * 2)
    for key in ("qk_rope_head_dim", "head_dim"):
        value = safe_get(view, key, None)
        if isinstance(value, int) and value >= width:
            return value
    hidden = safe_get(view, "hidden_size", None)
    heads = safe_get(view, "num_attention_heads", None)
    if hidden and heads and hidden // heads >= width:
        return hidden // heads
    return width


def add_code_defaults(text, rope_cls):
    """An M-RoPE section the modeling code defaults to (Qwen2-VL's
    [16, 24, 24]) is written into the config, as released configs have it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rope = rope_cls(text)
    section = getattr(rope, "mrope_section", None)
    params = getattr(text, "rope_parameters", None)
    if section is None or not isinstance(params, dict):
        return
    # Sized for the model's head dim: scaled to the small one (Qwen2-VL's
    # [16, 24, 24] of 64 frequencies becomes [4, 6, 6] of 16).
    half = len(rope.inv_freq)
    section = [int(n) for n in section]
    if sum(section) != half:
        scaled = [n * half / sum(section) for n in section]
        if any(n != int(n) for n in scaled):
            raise RuntimeError(f"M-RoPE section {section} does not scale "
                               f"to {half} frequencies")
        section = [int(n) for n in scaled]
    params["mrope_section"] = section


def layer_types_of(config, rope_cls):
    text = config.get_text_config()
    params = getattr(text, "rope_parameters", None)
    forward = inspect.signature(rope_cls.forward).parameters
    if "layer_type" in forward and isinstance(params, dict) and params and \
            all(isinstance(v, dict) for v in params.values()):
        # The layer types the config's layers use (the module builds only
        # those).
        used = set(getattr(text, "layer_types", None) or ()) & set(params)
        return sorted(used or params)  # DeepSeek-V4 names them otherwise
    return [None]


def module_for(model_type):
    name = model_type_to_module_name(model_type)
    package = pathlib.Path(transformers.__file__).parent / "models" / name
    modules = []
    for path in sorted(package.glob("modeling_*.py")):
        modules.append(importlib.import_module(
            f"transformers.models.{name}.{path.stem}"))
    return modules


def build(model_type, index, variant=None):
    """Records model_type with small sizes, else with the config class's own
    (an M-RoPE section that does not scale down, a size rule). variant:
    (suffix, rope_parameters, top-level overrides), recorded as
    `<model_type>-<suffix>`."""
    key = model_type if variant is None else f"{model_type}-{variant[0]}"
    build_sized(model_type, index, False, variant)
    if index[key].startswith("skipped") and \
            "no RotaryEmbedding" not in index[key]:
        first = index[key]
        build_sized(model_type, index, True, variant)
        if index[key].startswith("skipped"):
            index[key] = first


def build_sized(model_type, index, keep_size, variant=None):
    key = model_type if variant is None else f"{model_type}-{variant[0]}"
    try:
        modules = module_for(model_type)
    except Exception as error:  # noqa: BLE001
        index[key] = f"skipped: modeling module fails to import: " \
                     f"{type(error).__name__}"
        return
    candidates = [(m, c) for m in modules for c in rotary_classes(m)]
    if not candidates:
        index[key] = "skipped: no RotaryEmbedding class"
        return
    try:
        sources = "".join(pathlib.Path(m.__file__).read_text()
                          for m in modules)
        config = small_config(model_type, None if variant is None else
                              variant[1], keep_size,
                              None if variant is None else variant[2])
    except Exception as error:  # noqa: BLE001
        index[key] = f"skipped: config fails: {error}"[:200]
        return
    text = config.get_text_config()
    errors = []
    for module, rope_cls in candidates:
        fns = rotation_functions(module, text)
        if not fns:
            errors.append(f"{rope_cls.__name__}: no rotation function")
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rope_cls(text)
        except Exception as error:  # noqa: BLE001
            errors.append(f"{rope_cls.__name__}({type(text).__name__}): "
                          f"{type(error).__name__}: {error}"[:200])
            continue
        for fn_name, fn in fns:
            try:
                add_code_defaults(text, rope_cls)
                results = []
                for layer_type in layer_types_of(config, rope_cls):
                    name = key if layer_type is None else \
                        f"{key}@{layer_type}"
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        results.append(record(
                            name, model_type, config, rope_cls, fn_name, fn,
                            layer_type,
                            variant=None if variant is None else variant[0],
                            extra={
                                "reads_rope_interleave":
                                    "config.rope_interleave" in sources,
                                "reads_rotary_dim":
                                    "config.rotary_dim" in sources,
                                "rope_layers": rope_layer_flags(modules,
                                                                text)}))
                index[key] = "recorded: " + ", ".join(
                    f"{r['status']} {r['layout']} P={r['rotary_dim']}"
                    for r in results)
                return
            except Exception as error:  # noqa: BLE001
                for stale in OUT.glob(f"{key}@*"):
                    stale.unlink()
                errors.append(f"{rope_cls.__name__}+{fn_name}: "
                              f"{type(error).__name__}: {error}"[:300])
    index[key] = "skipped: " + " | ".join(errors)


def build_variants(index):
    from transformers.models.llama import modeling_llama
    for suffix, params in VARIANTS.items():
        name = f"llama-{suffix}"
        try:
            config = small_config("llama", params)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = record(name, "llama", config,
                           modeling_llama.LlamaRotaryEmbedding,
                           "apply_rotary_pos_emb",
                           modeling_llama.apply_rotary_pos_emb, None,
                           variant=suffix)
            index[name] = f"recorded: {r['status']} {r['layout']} " \
                          f"P={r['rotary_dim']}"
        except Exception as error:  # noqa: BLE001
            index[name] = f"skipped: {type(error).__name__}: {error}"[:300]
            traceback.print_exc()


def rope_layer_flags(modules, text):
    """Per layer, whether the attention applies RoPE, from the attention
    modules themselves (their `use_rope`), for configs with no_rope_layers
    (Llama 4, SmolLM3); None for others."""
    if getattr(text, "no_rope_layers", None) is None:
        return None
    for module in modules:
        for name, cls in vars(module).items():
            if not (inspect.isclass(cls) and name.endswith("Attention") and
                    issubclass(cls, torch.nn.Module)):
                continue
            try:
                flags = []
                for i in range(text.num_hidden_layers):
                    flags.append(bool(cls(text, i).use_rope))
                return flags
            except Exception:  # noqa: BLE001
                continue
    return None


def write_table():
    """Rewrites the model-type table in python/rope_mlir/hf.py from the
    fixtures."""
    layouts, unsupported, interleave_key, no_rope = {}, {}, set(), {}
    mrope_interleaved, rotary_dim_key, inverse = set(), set(), set()
    aliases = {}
    for path in sorted(OUT.glob("*.json")):
        if path.name == "index.json":
            continue
        entry = json.loads(path.read_text())
        if entry.get("variant"):
            continue
        mt = entry["model_type"]
        names = [mt]
        outer = entry["config"].get("model_type")
        text = entry["config"].get("text_config", {}).get("model_type")
        names += [n for n in (outer, text) if n and n != mt]
        for name in names:
            if entry["status"] == "refused":
                # Refused for this config only (an odd rotary dim): the
                # model type's layout stands.
                layouts.setdefault(name, entry["layout"])
            elif entry["status"] == "supported":
                layout = entry["layout"]
                if entry.get("reads_rope_interleave"):
                    interleave_key.add(name)
                    layout = "interleaved"
                if layouts.get(name, layout) != layout:
                    unsupported[name] = "layer types differ in pair layout"
                layouts[name] = layout
            else:
                unsupported[name] = entry["reason"]
            if entry.get("rope_layers") is not None:
                no_rope[name] = "no_rope_layers"
            if entry.get("mrope_style") == "interleaved":
                mrope_interleaved.add(name)
            if entry.get("reads_rotary_dim"):
                rotary_dim_key.add(name)
            if entry.get("inverse"):
                inverse.add(name)
        for text_type, mapping in entry.get("attribute_map", {}).items():
            if mapping:
                aliases[text_type] = mapping
    for name in unsupported:
        layouts.pop(name, None)

    def lines(name, mapping):
        out = [f"{name} = {{"]
        for key, value in sorted(mapping.items()):
            out.append(f"    {key!r}: {value!r},")
        return out + ["}"]
    block = ["# BEGIN model types (scripts/gen-hf-fixtures.py --write-table "
             "rewrites this)",
             f"# transformers {transformers.__version__}: "
             f"{len(layouts)} model types."]
    block += lines("_LAYOUTS", layouts)
    block += lines("_UNSUPPORTED", unsupported)
    block += ["_INTERLEAVE_KEY = frozenset({"]
    block += [f"    {n!r}," for n in sorted(interleave_key)] + ["})"]
    block += lines("_NO_ROPE_LAYERS", no_rope)
    block += ["_MROPE_INTERLEAVED = frozenset({"]
    block += [f"    {n!r}," for n in sorted(mrope_interleaved)] + ["})"]
    block += ["_ROTARY_DIM_KEY = frozenset({"]
    block += [f"    {n!r}," for n in sorted(rotary_dim_key)] + ["})"]
    block += ["_INVERSE = frozenset({"]
    block += [f"    {n!r}," for n in sorted(inverse)] + ["})"]
    block += lines("_ATTRIBUTE_MAP", aliases)
    block += ["# END model types"]
    write_docs()
    # Arrays no fixture names any more (a model type re-recorded).
    used = {json.loads(p.read_text()).get("arrays")
            for p in OUT.glob("*.json") if p.name != "index.json"}
    for path in (OUT / "arrays").glob("*.npz"):
        if path.stem not in used:
            path.unlink()
    hf = ROOT / "python" / "rope_mlir" / "hf.py"
    text = hf.read_text()
    start = text.index("# BEGIN model types")
    end = text.index("# END model types") + len("# END model types")
    hf.write_text(text[:start] + "\n".join(block) + text[end:])


def write_docs():
    """The model-type table of docs/HF_CONFIGS.md, from the fixtures."""
    rows = {}
    for path in sorted(OUT.glob("*.json")):
        if path.name == "index.json":
            continue
        entry = json.loads(path.read_text())
        if entry.get("variant"):
            continue
        config = entry["config"]
        text = config
        for key, value in config.items():
            if isinstance(value, dict) and "model_type" in value:
                text = value
        params = text.get("rope_parameters") or {}
        if entry["layer_type"]:
            params = params.get(entry["layer_type"], {})
        scheme = params.get("rope_type", params.get("type", "default"))
        notes = []
        if entry["layer_type"]:
            notes.append(f"layer type `{entry['layer_type']}`")
        if entry.get("mrope_style"):
            notes.append(f"M-RoPE {entry['mrope_style']} "
                         f"{params.get('mrope_section')}")
        if entry.get("rope_layers"):
            notes.append("NoPE layers (`no_rope_layers`)")
        if entry.get("output_order") == "deinterleaved":
            notes.append("output written de-interleaved (q and k alike)")
        if entry.get("reads_rope_interleave"):
            notes.append("`rope_interleave: false` gives half")
        if entry.get("inverse"):
            notes.append("inverse rotation (`-position · θ`)")
        for mapping in entry.get("attribute_map", {}).values():
            if mapping:
                notes.append("reads " + ", ".join(
                    f"`{a}` as `{c}`" for a, c in mapping.items()))
        per_layer = text.get("per_layer_config")
        if per_layer and entry["layer_type"]:
            types = text.get("layer_types") or []
            over = {k for i, o in per_layer.items()
                    if int(i) < len(types) and
                    types[int(i)] == entry["layer_type"] for k in o}
            if over:
                notes.append("`per_layer_config` sets " + ", ".join(
                    f"`{k}`" for k in sorted(over)))
        if text is not config and text.get("model_type"):
            notes.append(f"text model `{text['model_type']}`")
        if entry["status"] != "supported":
            notes.append(f"**{entry['status']}**: {entry['reason']}")
        p = entry["rotary_dim"]
        dims = f"{p} of {entry['head_dim']}" if p else "—"
        layout = entry["layout"] or "—"
        row = (f"| `{entry['model_type']}` | {layout} | {dims} | {scheme} | "
               f"{'; '.join(notes)} |")
        rows.setdefault(entry["model_type"], []).append(row)
    refused = sum(1 for r in rows.values()
                  if all("**unsupported**" in x or "**refused**" in x
                         for x in r))
    lines = ["<!-- BEGIN model types (scripts/gen-hf-fixtures.py "
             "--write-table) -->",
             f"{len(rows)} model types recorded from transformers "
             f"{transformers.__version__}: {len(rows) - refused} supported, "
             f"{refused} refused (P of D: rotary dim of head dim in the "
             "fixture's small config):", "",
             "| model_type | layout | P of D | scheme | notes |",
             "|---|---|---|---|---|"]
    for name in sorted(rows):
        lines += rows[name]
    index = json.loads((OUT / "index.json").read_text())["model_types"]
    skipped = {k: v for k, v in index.items() if v.startswith("skipped")}
    lines += ["", f"Not recorded ({len(skipped)}: model types whose module "
              "has a `*RotaryEmbedding` class the generator could not run "
              "on their config; most are vision or audio sub-configs, "
              "whose encoders' RoPE is not the language model's; "
              "`index.json` has the reasons): " +
              ", ".join(f"`{k}`" for k in sorted(skipped)) + "."]
    lines.append("<!-- END model types -->")
    docs = ROOT / "docs" / "HF_CONFIGS.md"
    text = docs.read_text()
    start = text.index("<!-- BEGIN model types")
    end = text.index("<!-- END model types -->") + len(
        "<!-- END model types -->")
    docs.write_text(text[:start] + "\n".join(lines) + text[end:])


# Where from_hf_config finds the language model in a composite config, as
# python/rope_mlir/hf.py's _TEXT_KEYS (test_hf_fixtures checks they agree).
TEXT_KEYS = ("text_config", "decoder_config", "decoder", "thinker_config",
             "vlm_config")

# Rotary model types the table does not hold, each with why (the check
# below fails on any other): 2D/axial vision RoPE is out of scope
# (docs/HF_CONFIGS.md), and these language models' code the generator
# cannot run on a config yet.
NOT_IN_TABLE = {
    "beam": "its RotaryEmbedding needs a layer type the config does not "
            "name (forward(x, position_ids, layer_type))",
    "ergo": "its RotaryEmbedding needs a layer type the config does not "
            "name (forward(x, position_ids, layer_type))",
    "cohere_compass": "its default config names no full_attention rope "
                      "parameters the RotaryEmbedding reads",
    "cohere_compass_text": "its default config names no full_attention "
                           "rope parameters the RotaryEmbedding reads",
    "hunyuan_vl": "its RotaryEmbedding needs an M-RoPE section the default "
                  "config does not have",
    "hunyuan_vl_text": "its RotaryEmbedding needs an M-RoPE section the "
                       "default config does not have",
    "gemma4_assistant": "its default config does not build",
    # Vision towers whose config has rope_parameters and
    # max_position_embeddings: 2D/axial RoPE, out of scope.
    "gemma4_vision": "vision tower: 2D RoPE (out of scope)",
    "mlcd": "vision tower: 2D RoPE (out of scope)",
    "muse_glimmer_vision": "vision tower: axial RoPE (out of scope)",
    "muse_spark_vision": "vision tower: axial RoPE (out of scope)",
    "step3p5_vision": "vision tower: 2D RoPE (out of scope)",
    "gemma4_unified_assistant": "drafts with the gemma4_unified_text "
                                "config it names; not a config.json "
                                "of its own",
}


def language_model(config: dict) -> dict:
    """The language model's part of a config dict, as from_hf_config
    finds it."""
    if any(config.get(k) is not None for k in (
            "num_attention_heads", "n_head", "num_heads", "n_heads")):
        return config
    for key in TEXT_KEYS:
        if isinstance(config.get(key), dict):
            return language_model(config[key])
    return config


def table_types() -> set:
    """The model types rope_mlir/hf.py's table knows (its generated block,
    read without importing the package)."""
    text = (ROOT / "python" / "rope_mlir" / "hf.py").read_text()
    block = text[text.index("# BEGIN model types"):
                 text.index("# END model types")]
    names = {}
    exec(compile(block, "hf.py", "exec"), names)  # our own generated table
    return set(names["_LAYOUTS"]) | set(names["_UNSUPPORTED"])


def unknown_rotary_types(index) -> dict:
    """Model types of the installed transformers that rotate a language
    model's queries (their modeling module has a text RotaryEmbedding, and
    their config has rope_parameters and max_position_embeddings: not a
    vision or audio tower's 2D/axial RoPE), or wrap one, that the table
    does not know and NOT_IN_TABLE does not explain: {type: why}."""
    known = table_types()
    unknown = {}
    for model_type in sorted(CONFIG_MAPPING_NAMES):
        if model_type in known or model_type in NOT_IN_TABLE:
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                config = CONFIG_MAPPING[model_type]()
                text = language_model(config.to_dict())
                lm = config.get_text_config()
        except Exception:  # noqa: BLE001
            continue  # no default config (or no one text config)
        text_type = text.get("model_type", model_type)
        if text_type in known:
            continue
        why = index.get(model_type)
        rotary = why is not None and \
            safe_get(lm, "rope_parameters", None) is not None and \
            safe_get(lm, "max_position_embeddings", None) is not None
        if rotary or (text_type != model_type and
                      index.get(text_type) is not None):
            unknown[model_type] = why or f"wraps {text_type}"
    return unknown


def check_known(index) -> int:
    """Fails (1) when the installed transformers has a rotary model type
    the table does not know: a new release is one regeneration away."""
    unknown = unknown_rotary_types(index)
    for model_type, why in unknown.items():
        print(f"UNKNOWN rotary model type {model_type}: {why[:160]}",
              file=sys.stderr)
    if unknown:
        print(f"{len(unknown)} rotary model types of transformers "
              f"{transformers.__version__} are not in the table: record "
              "them, or say why in NOT_IN_TABLE", file=sys.stderr)
        return 1
    print(f"every rotary model type of transformers "
          f"{transformers.__version__} is in the table or NOT_IN_TABLE")
    return 0


def read_index():
    data = json.loads((OUT / "index.json").read_text())
    index = dict(data["model_types"])
    index.update((k, "skipped: no RotaryEmbedding class")
                 for k in data.get("no_rotary_embedding", ()))
    return {k: v for k, v in index.items()
            if v != "skipped: no RotaryEmbedding class"}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("model_types", nargs="*")
    parser.add_argument("--write-table", action="store_true",
                        help="only rewrite the table in rope_mlir/hf.py "
                             "from the fixtures, then --check")
    parser.add_argument("--check", action="store_true",
                        help="only check that every rotary model type of "
                             "the installed transformers is in the table "
                             "(exit status 1 if not)")
    args = parser.parse_args()
    if args.write_table:
        write_table()
        return check_known(read_index())
    if args.check:
        return check_known(read_index())
    torch.manual_seed(0)
    transformers.logging.set_verbosity_error()
    index_path = OUT / "index.json"
    index = {}
    if args.model_types and index_path.exists():
        data = json.loads(index_path.read_text())
        index = dict(data["model_types"])
        index.update((k, "skipped: no RotaryEmbedding class")
                     for k in data.get("no_rotary_embedding", ()))
    types = args.model_types or sorted(CONFIG_MAPPING_NAMES)
    for model_type in types:
        if model_type.startswith("llama-"):
            continue
        # The model type's fixtures and those of its variants
        # (alias_variants), not another type's ("modernbert-decoder").
        for suffix in ("", "-dynamic", "-longrope"):
            for stale in (*OUT.glob(f"{model_type}{suffix}.*"),
                          *OUT.glob(f"{model_type}{suffix}@*")):
                stale.unlink()
            if suffix:
                index.pop(f"{model_type}{suffix}", None)
        build(model_type, index)
        print(f"{model_type}: {index[model_type]}", flush=True)
        if not index[model_type].startswith("recorded"):
            continue
        for suffix, (params, top) in model_variants(model_type,
                                                    index).items():
            build(model_type, index, (suffix, params, top))
            name = f"{model_type}-{suffix}"
            print(f"{name}: {index[name]}", flush=True)
    if not args.model_types or any(t.startswith("llama-")
                                   for t in args.model_types):
        build_variants(index)
    OUT.mkdir(parents=True, exist_ok=True)
    none = sorted(k for k, v in index.items()
                  if v == "skipped: no RotaryEmbedding class")
    index_path.write_text(json.dumps(
        {"transformers": transformers.__version__, "torch": torch.__version__,
         "model_types": {k: v[:120] for k, v in sorted(index.items())
                         if k not in none},
         "no_rotary_embedding": none}, indent=1) + "\n")


if __name__ == "__main__":
    sys.exit(main())
