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
import types
import warnings
from typing import Any, List, Mapping, Optional, Tuple

from . import _ir
from . import kernel as _kernel

__all__ = ["RopeSpec", "from_hf_config", "rope_layers", "rope_layer_specs",
           "INTERLEAVED_MODEL_TYPES", "MODEL_TYPE_LAYOUTS",
           "UNSUPPORTED_MODEL_TYPES", "UnknownModelTypeWarning",
           "UnsupportedModelTypeError"]


# BEGIN model types (scripts/gen-hf-fixtures.py --write-table rewrites this)
# transformers 5.25.0: 246 model types.
_LAYOUTS = {
    'EvollaModel': 'half',
    'afmoe': 'half',
    'apertus': 'half',
    'apertus1p5': 'half',
    'apertus1p5_text': 'half',
    'arcee': 'half',
    'aria': 'half',
    'aria_text': 'half',
    'axk1': 'interleaved',
    'axk2': 'half',
    'bailing_hybrid': 'interleaved',
    'bamba': 'half',
    'bitnet': 'half',
    'blt_global_transformer': 'interleaved',
    'blt_local_decoder': 'interleaved',
    'blt_local_encoder': 'interleaved',
    'blt_patcher': 'interleaved',
    'chameleon': 'half',
    'codegen': 'interleaved',
    'cohere': 'interleaved',
    'cohere2': 'interleaved',
    'cohere2_moe': 'interleaved',
    'cosmos3_edge': 'half',
    'cosmos3_edge_text': 'half',
    'csm': 'half',
    'csm_depth_decoder_model': 'half',
    'cwm': 'half',
    'dbrx': 'half',
    'deepseek_ocr2': 'half',
    'deepseek_ocr2_encoder': 'half',
    'deepseek_ocr2_text': 'half',
    'deepseek_v2': 'interleaved',
    'deepseek_v3': 'interleaved',
    'deepseek_v32': 'half',
    'deepseek_v4': 'interleaved',
    'dia': 'half',
    'dia_decoder': 'half',
    'dia_encoder': 'half',
    'diffllama': 'half',
    'diffusion_gemma': 'half',
    'diffusion_gemma_text': 'half',
    'doge': 'half',
    'dory': 'half',
    'dots1': 'half',
    'dots3_note': 'half',
    'dots3_note_audio_encoder': 'half',
    'dots3_note_text': 'half',
    'embedding_gemma2': 'half',
    'embedding_gemma2_text': 'half',
    'emu3': 'half',
    'emu3_text_model': 'half',
    'ernie4_5': 'interleaved',
    'ernie4_5_moe': 'interleaved',
    'esm': 'half',
    'esmc': 'half',
    'eurobert': 'half',
    'evolla': 'half',
    'exaone4': 'half',
    'exaone_moe': 'half',
    'falcon': 'half',
    'falcon_h1': 'half',
    'flex_olmo': 'half',
    'flint': 'half',
    'gemma': 'half',
    'gemma2': 'half',
    'gemma3': 'half',
    'gemma3_text': 'half',
    'gemma3n': 'half',
    'gemma3n_text': 'half',
    'gemma4': 'half',
    'gemma4_text': 'half',
    'gemma4_unified': 'half',
    'gemma4_unified_text': 'half',
    'glm': 'interleaved',
    'glm4': 'interleaved',
    'glm4_moe': 'half',
    'glm4_moe_lite': 'interleaved',
    'glm4v': 'interleaved',
    'glm4v_moe': 'half',
    'glm4v_moe_text': 'half',
    'glm4v_text': 'interleaved',
    'glm_image': 'half',
    'glm_image_text': 'half',
    'glm_moe_dsa': 'interleaved',
    'glm_ocr': 'interleaved',
    'glm_ocr_text': 'interleaved',
    'glmasr': 'half',
    'glmasr_encoder': 'half',
    'gpt_neox': 'half',
    'gpt_neox_japanese': 'half',
    'gpt_oss': 'half',
    'gptj': 'interleaved',
    'gradium_phonon_tts': 'half',
    'granite': 'half',
    'granite4_vision': 'half',
    'granite4_vision_text': 'half',
    'granite_docling': 'half',
    'granite_docling_text': 'half',
    'granite_swa': 'half',
    'granitemoe': 'half',
    'granitemoe_swa': 'half',
    'granitemoehybrid': 'half',
    'granitemoeshared': 'half',
    'gte': 'half',
    'helium': 'interleaved',
    'higgs_audio_v2': 'half',
    'hrm_text': 'half',
    'hunyuan_v1_dense': 'half',
    'hunyuan_v1_moe': 'half',
    'hy_v3': 'half',
    'hy_v4': 'interleaved',
    'hy_v4_vl': 'interleaved',
    'hy_v4_vl_text': 'interleaved',
    'hyperclovax': 'half',
    'idefics': 'half',
    'jais2': 'half',
    'jetmoe': 'half',
    'jina_embeddings_v3': 'half',
    'kolibri1': 'half',
    'kolibri1_1': 'half',
    'kyutai_speech_to_text': 'half',
    'laguna': 'half',
    'lara_mini': 'half',
    'lasr_encoder': 'half',
    'lfm2': 'half',
    'lfm2_moe': 'half',
    'lfm3': 'half',
    'llama': 'half',
    'llama4': 'interleaved',
    'llama4_text': 'interleaved',
    'longcat_flash': 'interleaved',
    'mellum': 'half',
    'mimi': 'half',
    'mimi_decoder': 'half',
    'mimi_encoder': 'half',
    'mimo_v2_flash': 'half',
    'minicpm3': 'half',
    'minicpm5_moe': 'half',
    'minimax': 'half',
    'minimax_m2': 'half',
    'minimax_m3_vl': 'half',
    'minimax_m3_vl_text': 'half',
    'ministral': 'half',
    'ministral3': 'half',
    'mistral': 'half',
    'mistral4': 'interleaved',
    'mistral_large4': 'interleaved',
    'mistral_large4_text': 'interleaved',
    'mixtral': 'half',
    'mllama': 'half',
    'mllama_text_model': 'half',
    'modernbert': 'half',
    'modernbert-decoder': 'half',
    'molmo2': 'half',
    'molmo2_text': 'half',
    'moonshine': 'interleaved',
    'moonshine_streaming': 'interleaved',
    'moshi': 'half',
    'muse_glimmer': 'half',
    'muse_glimmer_assistant': 'half',
    'muse_glimmer_text': 'half',
    'muse_spark': 'half',
    'muse_spark_text': 'half',
    'nanochat': 'half',
    'nemotron': 'half',
    'nemotron3_5_transcribe_asr_audio': 'half',
    'nemotron3_5_transcribe_word_timestamp': 'half',
    'nemotron3_diarization_audio': 'half',
    'neomme': 'half',
    'neucodec': 'half',
    'nomic_bert': 'half',
    'olmo': 'half',
    'olmo2': 'half',
    'olmo3': 'half',
    'olmo_hybrid': 'half',
    'olmoe': 'half',
    'openai_privacy_filter': 'interleaved',
    'paddleocr_vl': 'half',
    'paddleocr_vl_text': 'half',
    'pe_audio_encoder': 'interleaved',
    'pe_audio_video_encoder': 'interleaved',
    'pe_video_encoder': 'interleaved',
    'persimmon': 'half',
    'phi': 'half',
    'phi3': 'half',
    'phi4_multimodal': 'half',
    'phimoe': 'half',
    'pocket_tts': 'half',
    'pocket_tts_audio_tokenizer': 'half',
    'pocket_tts_audio_tokenizer_decoder': 'half',
    'pocket_tts_audio_tokenizer_encoder': 'half',
    'qwen2': 'half',
    'qwen2_5_omni': 'half',
    'qwen2_5_omni_dit': 'half',
    'qwen2_5_omni_talker': 'half',
    'qwen2_5_omni_text': 'half',
    'qwen2_5_omni_thinker': 'half',
    'qwen2_5_vl': 'half',
    'qwen2_5_vl_text': 'half',
    'qwen2_moe': 'half',
    'qwen2_vl': 'half',
    'qwen2_vl_text': 'half',
    'qwen3': 'half',
    'qwen3_5': 'half',
    'qwen3_5_moe': 'half',
    'qwen3_5_moe_text': 'half',
    'qwen3_5_text': 'half',
    'qwen3_moe': 'half',
    'qwen3_next': 'half',
    'qwen3_omni_moe': 'half',
    'qwen3_omni_moe_talker_code_predictor': 'half',
    'qwen3_omni_moe_talker_text': 'half',
    'qwen3_omni_moe_text': 'half',
    'qwen3_omni_moe_thinker': 'half',
    'qwen3_vl': 'half',
    'qwen3_vl_moe': 'half',
    'qwen3_vl_moe_text': 'half',
    'qwen3_vl_text': 'half',
    'qwen4_exp': 'half',
    'qwen4_exp_text': 'half',
    'recurrent_gemma': 'half',
    'seed_oss': 'half',
    'smollm3': 'half',
    'solar_open': 'half',
    'stablelm': 'half',
    'starcoder2': 'half',
    'step3p5': 'half',
    'step3p7': 'half',
    't5_gemma_module': 'half',
    't5gemma': 'half',
    't5gemma2': 'half',
    't5gemma2_decoder': 'half',
    't5gemma2_encoder': 'half',
    't5gemma2_text': 'half',
    'timesfm2_5': 'half',
    'ultrabert': 'half',
    'unlimited_ocr': 'half',
    'unlimited_ocr_text': 'half',
    'vaultgemma': 'half',
    'voxtral_realtime': 'half',
    'voxtral_realtime_encoder': 'half',
    'voxtral_realtime_text': 'half',
    'xcodec2': 'half',
    'youtu': 'interleaved',
    'zamba2': 'half',
    'zaya': 'half',
}
_UNSUPPORTED = {
    'ernie4_5_vl_moe': '3D RoPE: the frequencies are permuted (h and w interleaved, t last) before M-RoPE assigns them to axes, so pair i does not rotate by theta_i',
    'ernie4_5_vl_moe_text': '3D RoPE: the frequencies are permuted (h and w interleaved, t last) before M-RoPE assigns them to axes, so pair i does not rotate by theta_i',
}
_INTERLEAVE_KEY = frozenset({
    'axk1',
    'deepseek_v3',
    'glm4_moe_lite',
    'mistral4',
    'youtu',
})
_NO_ROPE_LAYERS = {
    'llama4': 'no_rope_layers',
    'llama4_text': 'no_rope_layers',
    'mistral_large4': 'no_rope_layers',
    'mistral_large4_text': 'no_rope_layers',
    'smollm3': 'no_rope_layers',
}
_MROPE_INTERLEAVED = frozenset({
    'cosmos3_edge',
    'cosmos3_edge_text',
    'hy_v4_vl',
    'hy_v4_vl_text',
    'qwen3_5',
    'qwen3_5_moe',
    'qwen3_5_moe_text',
    'qwen3_5_text',
    'qwen3_omni_moe',
    'qwen3_omni_moe_talker_code_predictor',
    'qwen3_omni_moe_talker_text',
    'qwen3_omni_moe_text',
    'qwen3_omni_moe_thinker',
    'qwen3_vl',
    'qwen3_vl_moe',
    'qwen3_vl_moe_text',
    'qwen3_vl_text',
    'qwen4_exp',
    'qwen4_exp_text',
})
_ROTARY_DIM_KEY = frozenset({
    'codegen',
    'gptj',
})
_INVERSE = frozenset({
    'nanochat',
})
_ATTRIBUTE_MAP = {
    'bailing_hybrid': {'max_position_embeddings': 'model_max_length', 'num_mtp_layers': 'num_nextn_predict_layers'},
    'bamba': {'layer_types': 'layers_block_type'},
    'codegen': {'hidden_size': 'n_embd', 'max_position_embeddings': 'n_positions', 'num_attention_heads': 'n_head', 'num_hidden_layers': 'n_layer'},
    'dbrx': {'hidden_size': 'd_model', 'max_position_embeddings': 'max_seq_len', 'num_attention_heads': 'n_heads', 'num_hidden_layers': 'n_layers'},
    'deepseek_v3': {'num_mtp_layers': 'num_nextn_predict_layers'},
    'ernie4_5_moe': {'num_mtp_layers': 'num_nextn_predict_layers'},
    'falcon_h1': {'layer_types': 'layers_block_type'},
    'glm4_moe': {'num_mtp_layers': 'num_nextn_predict_layers'},
    'glm4_moe_lite': {'head_dim': 'qk_rope_head_dim'},
    'gptj': {'hidden_size': 'n_embd', 'max_position_embeddings': 'n_positions', 'num_attention_heads': 'n_head', 'num_hidden_layers': 'n_layer'},
    'granitemoehybrid': {'layers_block_type': 'layer_types'},
    'jetmoe': {'head_dim': 'kv_channels'},
    'mellum': {'num_mtp_layers': 'num_nextn_predict_layers'},
    'molmo2_text': {'layer_norm_eps': 'rms_norm_eps'},
    'moonshine': {'num_attention_heads': 'decoder_num_attention_heads', 'num_hidden_layers': 'decoder_num_hidden_layers', 'num_key_value_heads': 'decoder_num_key_value_heads'},
    'recurrent_gemma': {'layer_types': 'layers_block_type'},
    'step3p5': {'num_mtp_layers': 'num_nextn_predict_layers'},
    'voxtral_realtime_encoder': {'d_model': 'hidden_size', 'encoder_attention_heads': 'num_attention_heads', 'encoder_layerdrop': 'layerdrop', 'encoder_layers': 'num_hidden_layers', 'num_key_value_heads': 'num_attention_heads'},
    'zamba2': {'head_dim': 'attention_head_dim', 'layer_types': 'layers_block_type'},
}
# END model types

# trust_remote_code models (modeling code on the Hub, not in transformers;
# not run by the generator): InternLM2 and Phi-3-Vision use rotate_half.
_REMOTE_CODE_LAYOUTS = {"internlm2": "half", "phi3_v": "half"}


class UnknownModelTypeWarning(UserWarning):
    """`from_hf_config` was given a config whose `model_type` is not in
    MODEL_TYPE_LAYOUTS (or has none), and no `layout=`: the pair layout lives
    in the model's modeling code, not in config.json, so it cannot be read;
    the spec assumes "half" (Llama's rotate_half), which is wrong for
    interleaved models. Pass `layout=` to state it (and silence this)."""


class UnsupportedModelTypeError(ValueError):
    """The model type's RoPE, as transformers' modeling code computes it, is
    not one rope.apply expresses (UNSUPPORTED_MODEL_TYPES gives the reason)."""


#: The pair layout (SEMANTICS.md §1) of each Hugging Face model_type, as its
#: modeling code in transformers rotates: "half" pairs (i, i + P/2)
#: (rotate_half), "interleaved" pairs (2i, 2i+1) (GPT-J's rotate_every_two,
#: GLM and Cohere's interleaving rotate_half, complex multiplication of
#: adjacent channels in Llama 4 and DeepSeek). Generated by
#: scripts/gen-hf-fixtures.py from running each model's own code and checked
#: against its fixtures by python/tests/numerics/test_hf_fixtures.py
#: (docs/HF_CONFIGS.md lists them).
MODEL_TYPE_LAYOUTS: Mapping[str, str] = types.MappingProxyType(
    dict(_LAYOUTS, **_REMOTE_CODE_LAYOUTS))

#: model_type values whose RoPE pairs channels (2i, 2i+1), from
#: MODEL_TYPE_LAYOUTS. Those whose code reads `rope_interleave` from the
#: config (_INTERLEAVE_KEY: DeepSeek-V3, Mistral 4, ...) are "half" when it
#: is false.
INTERLEAVED_MODEL_TYPES = frozenset(
    t for t, layout in MODEL_TYPE_LAYOUTS.items() if layout == "interleaved")

#: model_type -> why its RoPE is not expressible; from_hf_config raises
#: UnsupportedModelTypeError for these.
UNSUPPORTED_MODEL_TYPES: Mapping[str, str] = types.MappingProxyType(
    dict(_UNSUPPORTED))

# Where a config keeps each value, first match wins (GPT-2-style names for
# GPT-J; DeepSeek rotates only the qk_rope_head_dim part of a head).
_HIDDEN_KEYS = ("hidden_size", "n_embd", "d_model")
_HEADS_KEYS = ("num_attention_heads", "n_head", "num_heads", "n_heads",
               "decoder_num_attention_heads")
_BASE_KEYS = ("rope_theta", "rotary_emb_base")
# Top-level keys Hugging Face reads next to rope_scaling (SEMANTICS.md §4).
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
    #: The model's code rotates by -position · theta (NanoChat): rope.apply
    #: with `inverse = true`.
    inverse: bool = False

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
            freqs=attrs.freqs, mrope=attrs.mrope, magnitude=attrs.magnitude,
            inverse=self.inverse)

    def apply(self, x, positions=None, **kwargs):
        """`rope_mlir.apply` with this spec: x is [*tokens, H, head_dim]
        (or as `token_dims` says); with M-RoPE, positions are
        [3, *token dims]. `inverse=True` undoes the spec's rotation. Other
        keyword arguments (offset, out, token_dims, magnitude) pass
        through."""
        d = x.shape[-1] if hasattr(x, "shape") else None
        if d is not None and d != self.head_dim:
            raise ValueError(f"x has head dim {d}, the config's is "
                             f"{self.head_dim}")
        # inverse=True undoes the spec's rotation (for an inverse-rotating
        # model, NanoChat, that is the forward one).
        inverse = self.inverse != bool(kwargs.pop("inverse", False))
        for key in ("layout", "rotary_dim", "base", "scaling",
                    "mrope_section", "mrope_interleaved"):
            if key in kwargs:
                raise TypeError(f"{key} comes from the config; build another "
                                "RopeSpec (dataclasses.replace) to change it")
        return _kernel.apply(
            x, positions, layout=self.layout, rotary_dim=self.rotary_dim,
            base=self.base, scaling=self.scaling,
            mrope_section=self.mrope_section,
            mrope_interleaved=self.mrope_interleaved, inverse=inverse,
            **kwargs)


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


# Where composite configs keep the language model's: multimodal ones
# (Qwen3-VL, Gemma 3, Llava...) in `text_config`, encoder-decoder ones in
# `decoder_config` (Dia) or `decoder` (T5Gemma), omni ones in
# `thinker_config.text_config` (Qwen2.5-Omni, Qwen3-Omni), retrieval ones
# in `vlm_config.text_config` (ColPali, ColQwen2, ColModernVBERT).
# scripts/gen-hf-fixtures.py's TEXT_KEYS must say the same.
_TEXT_KEYS = ("text_config", "decoder_config", "decoder", "thinker_config",
              "vlm_config")

# rope_parameters keys that are not the rotary embedding's: Ministral 3 and
# Mistral 4 scale the queries by position with llama_4_scaling_beta in the
# attention, after RoPE.
_NOT_ROPE_KEYS = ("llama_4_scaling_beta",)


def _text_config(config: Mapping[str, Any]) -> Mapping[str, Any]:
    """The language model's part of a composite config (_TEXT_KEYS)."""
    if _first(config, _HEADS_KEYS)[1] is not None:
        return config
    for key in _TEXT_KEYS:
        text = config.get(key)
        if isinstance(text, Mapping):
            return _text_config(text)
    return config


def _with_aliases(config: Mapping[str, Any],
                  model_type: Optional[str]) -> Mapping[str, Any]:
    """The config with each name the modeling code reads (an
    `attribute_map` alias of the model's config class, _ATTRIBUTE_MAP: its
    head_dim is JetMoE's kv_channels, its max_position_embeddings DBRX's
    max_seq_len) holding the value config.json stores under the canonical
    name, as transformers' config object resolves it."""
    aliases = _ATTRIBUTE_MAP.get(model_type) if isinstance(
        model_type, str) else None
    if not aliases:
        return config
    view = dict(config)
    for alias, canonical in aliases.items():
        if config.get(canonical) is None:
            continue
        if config.get(alias) is not None and config[alias] != \
                config[canonical]:
            raise ValueError(
                f"{alias} is {config[alias]!r} but {canonical} (which "
                f"{model_type}'s config class reads as {alias}) is "
                f"{config[canonical]!r}")
        view[alias] = config[canonical]
    return view


def _layer_overrides(config: Mapping[str, Any], layer_type: Optional[str],
                     layer: Optional[int]) -> Mapping[str, Any]:
    """The config one layer reads: `per_layer_config` (transformers'
    heterogeneous configs: Gemma 4's full-attention layers have head_dim
    512) overrides the global values for that layer, or for every layer of
    `layer_type` (which must agree, as transformers requires)."""
    per_layer = config.get("per_layer_config")
    if per_layer is None:
        return config
    layers = config.get("num_hidden_layers")
    overrides = _per_layer_rope_values(
        per_layer, _layer_count(config) if layers is not None else None)
    if layer is not None:
        chosen = overrides.get(layer, {})
    else:
        types = config.get("layer_types")
        if layer_type is None or not isinstance(types, list):
            keys = sorted({k for v in overrides.values() for k in v})
            if keys:
                raise ValueError(
                    f"per_layer_config sets {keys} per layer; pass "
                    "layer_type= (with layer_types) or layer=")
            return config
        found = [overrides.get(i, {}) for i, t in enumerate(types)
                 if t == layer_type]
        if any(f != found[0] for f in found):
            raise ValueError(
                f"per_layer_config sets different RoPE values on the "
                f"{layer_type!r} layers; pass layer= for one layer")
        chosen = found[0] if found else {}
    merged = dict(config)
    merged.update(chosen)
    return merged


# The keys from_hf_config reads (and their attribute_map canonical names):
# a per_layer_config entry setting one changes the layer's RoPE; others
# (sliding_window, kv_lora_rank...) do not.
_READ_KEYS = frozenset(
    ("head_dim", "qk_rope_head_dim", "partial_rotary_factor", "rotary_pct",
     "rotary_dim", "rope_parameters", "rope_scaling", "rope_interleave") +
    _HIDDEN_KEYS + _HEADS_KEYS + _BASE_KEYS + _MERGED_KEYS +
    tuple(c for m in _ATTRIBUTE_MAP.values() for c in m.values()))


def _per_layer_rope_values(per_layer: Any,
                           layers: Optional[int] = None) -> dict:
    """per_layer_config as {layer index: {key: value}}, RoPE keys only
    (transformers writes the indices as strings, zero-padded: "05"). An
    index outside [0, layers) (num_hidden_layers, where the config has it)
    names no layer: an error, not an override silently unused."""
    if not isinstance(per_layer, Mapping) or not all(
            isinstance(v, Mapping) for v in per_layer.values()):
        raise ValueError("per_layer_config must map layer indices to dicts, "
                         f"got {per_layer!r}")
    out = {}
    for key, values in per_layer.items():
        try:
            index = _int(int(key) if isinstance(key, str) else key,
                         "per_layer_config key")
        except (TypeError, ValueError):
            raise ValueError(f"per_layer_config keys must be layer indices, "
                             f"got {key!r}") from None
        if index < 0 or (layers is not None and index >= layers):
            raise ValueError(
                f"per_layer_config key {key!r} is not a layer index in "
                f"[0, {layers if layers is not None else 'num_hidden_layers'})")
        out[index] = {k: v for k, v in values.items() if k in _READ_KEYS}
    return out


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
        chosen = dict(chosen[name])
        # The layer type's own rope_theta is the one the code reads (a
        # top-level rope_theta may be another layer type's, DeepSeek-V4).
        chosen.setdefault("_per_layer_type", True)
    elif layer_type is not None:
        raise ValueError(f"layer_type={layer_type!r} given but the config's "
                         "rope parameters are not per layer type")
    return dict(chosen)


def from_hf_config(config: Mapping[str, Any], *, layout: Optional[str] = None,
                   layer_type: Optional[str] = None,
                   layer: Optional[int] = None) -> RopeSpec:
    """The RoPE of a Hugging Face model from its whole config.json dict.

    head_dim: `head_dim` (`qk_rope_head_dim` for DeepSeek's MLA), else
    hidden_size // num_attention_heads. Rotary dim: int(partial_rotary_factor
    · D) (Phi, Persimmon, GLM...), int(rotary_pct · D) (GPT-NeoX), or
    `rotary_dim` (GPT-J, CodeGen), else D; with `qk_rope_head_dim` (MLA),
    D. Base: `rope_theta` (also inside rope_parameters) or `rotary_emb_base`
    (GPT-NeoX), else 10000. The scaling dict gets the top-level
    `max_position_embeddings` and `original_max_position_embeddings` (Phi-3
    keeps L there). Layout: MODEL_TYPE_LAYOUTS[model_type], what the model's
    code in transformers rotates, unless `layout` says otherwise; an unknown
    model type warns (UnknownModelTypeWarning) and assumes "half"; one in
    UNSUPPORTED_MODEL_TYPES raises UnsupportedModelTypeError. Multimodal and
    encoder-decoder configs are read from `text_config`, `decoder_config`,
    `decoder` or `vlm_config`; per-layer-type rope_parameters need
    `layer_type` (default "full_attention"). `layer` (an index) is one
    decoder layer: its layer type, and its `per_layer_config` overrides
    (Gemma 4's head_dim); with `layer_type`, the overrides of that type's
    layers. Names the config class aliases (`attribute_map`) are read where
    config.json stores them (_ATTRIBUTE_MAP).

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
    if layer is not None:
        layers = _layer_count(_with_aliases(config, model_type))
        if isinstance(layer, bool) or not isinstance(layer, int) or \
                not 0 <= layer < layers:
            raise ValueError(f"layer must be an index in [0, {layers}), "
                             f"got {layer!r}")
        if layer_type is None and _per_layer_type(config):
            layer_type = _layer_type_of(config, layer)
    # The layer's own values first: they replace the stored (canonical)
    # names, which the aliases then read. Per-layer-type parameters default
    # to the full-attention layers' (as _rope_parameters does).
    overrides_type = layer_type
    if overrides_type is None and layer is None and _per_layer_type(config):
        overrides_type = "full_attention"
    config = _with_aliases(_layer_overrides(config, overrides_type, layer),
                           model_type)
    for name in (outer_type, model_type):
        if isinstance(name, str) and name in UNSUPPORTED_MODEL_TYPES:
            raise UnsupportedModelTypeError(
                f"model_type {name!r}: {UNSUPPORTED_MODEL_TYPES[name]}")

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
        # What the modeling code reads: `hidden_size // num_attention_heads`
        # even when it does not divide (GLM-4-MoE's default 4096 / 96 is
        # 42; its projections are num_heads · head_dim wide).
        head_dim = hidden // heads
        if head_dim == 0:
            raise ValueError(f"{hidden_key} {hidden} is smaller than "
                             f"{heads_key} {heads}: no head dim")

    scaling = _rope_parameters(config, layer_type)
    per_layer_type = bool(scaling and scaling.pop("_per_layer_type", False))
    if scaling is not None:
        for key in _NOT_ROPE_KEYS:
            scaling.pop(key, None)

    # Base.
    base = None
    bases = {}
    for key in _BASE_KEYS:
        if per_layer_type and scaling.get("rope_theta") is not None:
            break
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
    known = model_type in MODEL_TYPE_LAYOUTS
    if config.get("qk_rope_head_dim") is not None:
        # MLA: the RoPE part is qk_rope_head_dim channels, all rotated; a
        # partial_rotary_factor is relative to the whole head (Mistral 4,
        # DeepSeek-V4: head_dim · f = qk_rope_head_dim).
        if partial is not None:
            _fraction(partial, "partial_rotary_factor")
            if scaling is not None:
                scaling.pop("partial_rotary_factor", None)
    elif partial is not None:
        partial = _fraction(partial, "partial_rotary_factor")
        if kind == "proportional":
            scaling.setdefault("partial_rotary_factor", partial)
        else:
            rotary_dim = int(head_dim * partial)
    elif config.get("rotary_pct") is not None:
        rotary_dim = int(head_dim * _fraction(config["rotary_pct"],
                                              "rotary_pct"))
    elif config.get("rotary_dim") is not None:
        value = _positive_int(config["rotary_dim"], "rotary_dim")
        # Only GPT-J and CodeGen's code reads it (MiniMax configs have one
        # their code does not use).
        if not known or model_type in _ROTARY_DIM_KEY:
            rotary_dim = value

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
        elif mrope_section is not None and model_type in _MROPE_INTERLEAVED:
            # Qwen3-VL's code interleaves; its config need not say so.
            mrope_interleaved = True
        if mrope_interleaved and mrope_section is not None and \
                len(mrope_section) == 3 and sum(mrope_section) == \
                rotary_dim // 2:
            mrope_section = _interleaved_section(mrope_section,
                                                 rotary_dim // 2)
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
        layout = _layout_of(config, model_type)

    spec = RopeSpec(head_dim=head_dim, rotary_dim=rotary_dim, base=base,
                    layout=layout, scaling=scaling,
                    mrope_section=mrope_section,
                    mrope_interleaved=mrope_interleaved,
                    model_type=model_type, inverse=model_type in _INVERSE)
    # Validate through the importer now, and record the scheme's magnitude.
    attrs = spec.scaling_attributes()
    return dataclasses.replace(spec, magnitude=attrs.magnitude)


def _interleaved_section(section: Tuple[int, ...],
                         pairs: int) -> Tuple[int, ...]:
    """The pair counts interleaved M-RoPE gives each axis (SEMANTICS.md §2): pair
    j is h's if j % 3 == 1 and j < 3h, w's if j % 3 == 2 and j < 3w, else
    t's. A section whose h (or w) runs past the last pair (Qwen4-exp's [44,
    44, 40] of 128 pairs is [45, 43, 40]) is restated as those counts, which
    select the same axis for every pair, as rope.apply's verifier requires."""
    _, h, w = section
    h_pairs = sum(1 for j in range(pairs) if j % 3 == 1 and j < 3 * h)
    w_pairs = sum(1 for j in range(pairs) if j % 3 == 2 and j < 3 * w)
    return (pairs - h_pairs - w_pairs, h_pairs, w_pairs)


def _layout_of(config: Mapping[str, Any], model_type: Optional[str]) -> str:
    """The model type's layout (MODEL_TYPE_LAYOUTS), with DeepSeek-style
    `rope_interleave`; an unknown model type warns and assumes "half"."""
    if model_type not in MODEL_TYPE_LAYOUTS:
        what = ("has no model_type" if model_type is None else
                f"has model_type {model_type!r}, which rope_mlir does not "
                "know")
        warnings.warn(
            f"the config {what}: the RoPE pair layout is defined by the "
            "model's code, not its config, so from_hf_config assumes "
            "layout='half' (rotate_half); pass layout='half' or "
            "layout='interleaved' to state it (docs/HF_CONFIGS.md)",
            UnknownModelTypeWarning, stacklevel=3)
        return "half"
    layout = MODEL_TYPE_LAYOUTS[model_type]
    if model_type in _INTERLEAVE_KEY:
        interleave = config.get("rope_interleave", True)
        if interleave is not None:
            interleave = _bool(interleave, "rope_interleave")
        # null (unset) is falsy to Hugging Face's `if rope_interleave:`.
        layout = "interleaved" if interleave else "half"
    return layout


def rope_layers(config: Mapping[str, Any]) -> List[bool]:
    """Per decoder layer, whether the modeling code applies RoPE there:
    False for the NoPE layers of Llama 4 and SmolLM3 (their
    `no_rope_layers[i]` is 0; 1 means RoPE), True everywhere else. The
    list has num_hidden_layers entries. Which RoPE a layer with RoPE uses is
    `from_hf_config(config, layer_type=config["layer_types"][i])` when the
    rope parameters are per layer type."""
    if not isinstance(config, Mapping):
        raise ValueError(f"config must be a dict, got {type(config).__name__}")
    outer_type = config.get("model_type")
    config = _text_config(config)
    model_type = config.get("model_type", outer_type)
    config = _with_aliases(config, model_type)
    layers = _layer_count(config)
    key = _NO_ROPE_LAYERS.get(model_type)
    if key is None or config.get(key) is None:
        return [True] * layers
    flags = _int_list(config[key], key)
    if len(flags) < layers:
        raise ValueError(f"{key} has {len(flags)} entries, the config has "
                         f"{layers} layers")
    return [bool(f) for f in flags[:layers]]


def rope_layer_specs(config: Mapping[str, Any], *,
                     layout: Optional[str] = None) -> List[Optional[RopeSpec]]:
    """Per decoder layer, the RoPE its attention applies: None for a NoPE
    layer (rope_layers), else `from_hf_config(config, layer=i)`, which
    reads the layer's type (per-layer-type rope_parameters: Gemma 3's
    thetas) and its `per_layer_config` overrides (Gemma 4's head_dim 512
    on full-attention layers)."""
    flags = rope_layers(config)
    return [from_hf_config(config, layout=layout, layer=i) if rope else None
            for i, rope in enumerate(flags)]


def _layer_count(config: Mapping[str, Any]) -> int:
    layers = config.get("num_hidden_layers")
    if layers is None:
        raise ValueError("config needs num_hidden_layers")
    return _positive_int(layers, "num_hidden_layers")


def _per_layer_type(config: Mapping[str, Any]) -> bool:
    """Whether the rope parameters are per layer type ({"full_attention":
    {...}, ...})."""
    params = config.get("rope_parameters", config.get("rope_scaling"))
    return isinstance(params, Mapping) and bool(params) and all(
        isinstance(v, Mapping) for v in params.values())


def _layer_type_of(config: Mapping[str, Any], layer: int) -> str:
    types = config.get("layer_types")
    if not isinstance(types, list) or len(types) <= layer or \
            not isinstance(types[layer], str):
        raise ValueError(f"the rope parameters are per layer type but "
                         f"layer_types does not name layer {layer}")
    return types[layer]
