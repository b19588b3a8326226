# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Float64 reference implementation of the RoPE semantics contract (docs: docs/SEMANTICS.md).

This is the project's single source of truth for RoPE numerics (STYLE.md §9): every test that checks a
lowering, an importer or a benchmark result against "the right answer" gets it from here. It is plain
Python + numpy, written directly from SEMANTICS.md and shares no code with the compiler.

Public API:

- ``inv_frequencies(rotary_dim, base, scaling, *, head_dim, seq_len) -> (theta[P/2], magnitude)``
  the frequencies θ_i of SEMANTICS.md §1 after a §4 scaling scheme, and the magnitude factor ``a``;
- ``cos_sin(positions, theta, magnitude) -> (cos, sin)`` of shape ``positions.shape + [P/2]``;
- ``apply(x, positions, ...)`` the rotation of §1 with the position forms of §2 and cos/sin sources of §3;
- ``relative_error(actual, reference)`` the error measure used against the §5 tolerances.

Why float64 is enough for the angle: positions are integers below 2^53, so they convert to float64 exactly,
and the product ``pos * θ_i`` is correctly rounded, a relative error of at most 2^-53. At ``pos = 2^24`` and
``θ_0 = 1`` that is an absolute angle error below 2^-29 rad, far under the 2^-20 tolerance of SEMANTICS.md §5; numpy's
float64 ``cos``/``sin`` reduce large arguments accurately, so no extended-precision argument reduction is needed.
"""

from __future__ import annotations

import math
import operator
from typing import Any, Mapping, Optional, Sequence, Tuple

import numpy as np

__all__ = [
    "SCALING_TYPES",
    "inv_frequencies",
    "cos_sin",
    "apply",
    "relative_error",
    "rms_norm",
    "quantize",
]

#: The ``rope_type`` values of SEMANTICS.md §4 (Hugging Face spelling; "ntk" is the static NTK-aware base change).
SCALING_TYPES = (
    "default",
    "linear",
    "ntk",
    "dynamic",
    "yarn",
    "llama3",
    "longrope",
    "proportional",
)

# Qwen2-VL's config.json says {"type": "mrope", "mrope_section": [...]}; Hugging Face treats it as "default"
# (the section split is an apply-time matter, see ``apply(mrope_section=...)``).
# Phi-3's first long-context configs spell LongRoPE "su".
_TYPE_ALIASES = {"mrope": "default", "su": "longrope"}

_FLOAT_KEYS = (
    "factor",
    "attention_factor",
    "beta_fast",
    "beta_slow",
    "mscale",
    "mscale_all_dim",
    "low_freq_factor",
    "high_freq_factor",
    "partial_rotary_factor",
    "rope_theta",
)
_INT_KEYS = ("original_max_position_embeddings", "max_position_embeddings")
_ARRAY_KEYS = ("short_factor", "long_factor")
_OTHER_KEYS = ("rope_type", "type", "truncate")
# Keys found in real rope_scaling dicts that do not affect θ or a: accepted and ignored.
_IGNORED_KEYS = ("mrope_section", "mrope_interleaved", "finetuned")
_KNOWN_KEYS = frozenset(_FLOAT_KEYS + _INT_KEYS + _ARRAY_KEYS + _OTHER_KEYS + _IGNORED_KEYS)

# SEMANTICS.md §4 lists the Llama 3.1 values as the llama3 defaults; the base stays an explicit argument.
_LLAMA3_DEFAULTS = {
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 8192,
}


# --------------------------------------------------------------------------------------------------------------
# Argument checking
# --------------------------------------------------------------------------------------------------------------


def _as_int(value: Any, name: str) -> int:
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        pass
    if isinstance(value, (float, np.floating)) and math.isfinite(value) and float(value).is_integer():
        return int(value)
    raise ValueError(f"{name} must be an integer, got {value!r}")


def _as_float(value: Any, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or value is None:
        raise ValueError(f"{name} must be a real number, got {value!r}")
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a real number, got {value!r}") from None
    if not math.isfinite(out):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return out


def _check_rotary_dim(rotary_dim: Any, head_dim: Optional[int]) -> int:
    p = _as_int(rotary_dim, "rotary_dim")
    if p <= 0 or p % 2:
        raise ValueError(f"rotary_dim must be a positive even integer, got {p}")
    if head_dim is not None and p > head_dim:
        raise ValueError(f"rotary_dim {p} exceeds head_dim {head_dim}")
    return p


def _scaling_type(cfg: Mapping[str, Any]) -> str:
    rope_type = cfg.get("rope_type")
    legacy = cfg.get("type")
    if rope_type is not None and legacy is not None and rope_type != legacy:
        raise ValueError(f"scaling has both rope_type={rope_type!r} and type={legacy!r}")
    name = rope_type if rope_type is not None else legacy
    if name is None:
        # HF would reject a rope_scaling without a type; an empty dict is the same as no scaling.
        if any(k not in _IGNORED_KEYS for k in cfg):
            raise ValueError("scaling needs a 'rope_type' (or legacy 'type') key")
        return "default"
    if not isinstance(name, str):
        raise ValueError(f"rope_type must be a string, got {name!r}")
    name = _TYPE_ALIASES.get(name, name)
    if name not in SCALING_TYPES:
        raise ValueError(f"unknown rope_type {name!r}; expected one of {', '.join(SCALING_TYPES)}")
    return name


class _Config:
    """A validated view of a Hugging Face ``rope_scaling`` dict."""

    def __init__(self, scaling: Optional[Mapping[str, Any]]):
        if scaling is None:
            scaling = {}
        if not isinstance(scaling, Mapping):
            raise ValueError(f"scaling must be None or a dict, got {type(scaling).__name__}")
        unknown = sorted(str(k) for k in scaling if k not in _KNOWN_KEYS)
        if unknown:
            # A misspelt key would otherwise silently fall back to a default (e.g. beta_fast = 32).
            raise ValueError(f"unknown rope_scaling key(s): {', '.join(unknown)}")
        self.type = _scaling_type(scaling)
        self.values: dict = {}
        for key in _FLOAT_KEYS:
            if scaling.get(key) is not None:
                self.values[key] = _as_float(scaling[key], key)
        for key in _INT_KEYS:
            if scaling.get(key) is not None:
                v = _as_int(scaling[key], key)
                if v <= 0:
                    raise ValueError(f"{key} must be positive, got {v}")
                self.values[key] = v
        for key in _ARRAY_KEYS:
            if scaling.get(key) is not None:
                self.values[key] = scaling[key]
        if scaling.get("truncate") is not None:
            t = scaling["truncate"]
            if not isinstance(t, (bool, np.bool_)):
                raise ValueError(f"truncate must be a bool, got {t!r}")
            self.values["truncate"] = bool(t)
        factor = self.values.get("factor")
        if factor is not None and factor <= 0:
            raise ValueError(f"factor must be > 0, got {factor}")
        af = self.values.get("attention_factor")
        if af is not None and af <= 0:
            raise ValueError(f"attention_factor must be > 0, got {af}")

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)

    def require(self, key: str) -> Any:
        if key not in self.values:
            raise ValueError(f"rope_type {self.type!r} needs {key!r}")
        return self.values[key]

    def original_max(self) -> int:
        """L: original_max_position_embeddings, else max_position_embeddings (the HF fallback)."""
        for key in _INT_KEYS:
            if key in self.values:
                return self.values[key]
        raise ValueError(
            f"rope_type {self.type!r} needs 'original_max_position_embeddings' "
            "(or 'max_position_embeddings')"
        )


def _default_theta(p: int, base: float) -> np.ndarray:
    """θ_i = b^(-2i/P), i in [0, P/2)."""
    # math.pow (the C library's pow) per element: numpy's vectorised power is not correctly rounded on every
    # machine (one ulp off for some i with AVX-512), which shows as ~2e-9 at position 2^24 in float64.
    return np.array([math.pow(base, -2.0 * i / p) for i in range(p // 2)], dtype=np.float64)


def _yarn_mscale(s: float, m: float = 1.0) -> float:
    """g(s, m) of SEMANTICS.md §4."""
    if s <= 1.0:
        return 1.0
    return 0.1 * m * math.log(s) + 1.0


# --------------------------------------------------------------------------------------------------------------
# Frequencies
# --------------------------------------------------------------------------------------------------------------


def inv_frequencies(
    rotary_dim: int,
    base: float = 10000.0,
    scaling: Optional[Mapping[str, Any]] = None,
    *,
    head_dim: Optional[int] = None,
    seq_len: Optional[int] = None,
) -> Tuple[np.ndarray, float]:
    """Return ``(theta, magnitude)``: the P/2 frequencies θ'_i (float64) and the magnitude factor ``a``.

    ``scaling`` is None or a Hugging Face ``rope_scaling`` dict (``rope_type`` or legacy ``type``; keys as in
    HF; ``max_position_embeddings`` may be given inside it). ``head_dim`` (D) is needed by "proportional"
    (whose frequencies use D, so it requires ``rotary_dim == head_dim``) and checks ``P <= D`` and
    ``partial_rotary_factor`` consistency otherwise. ``seq_len`` is the runtime length (max position + 1 over
    the call) used by "dynamic" and "longrope"; None means "not longer than the configured length".

    Raises ValueError for invalid configurations.
    """
    d = None if head_dim is None else _as_int(head_dim, "head_dim")
    if d is not None and d <= 0:
        raise ValueError(f"head_dim must be positive, got {d}")
    p = _check_rotary_dim(rotary_dim, d)
    b = _as_float(base, "base")
    if b <= 0:
        raise ValueError(f"base must be > 0, got {b}")
    if seq_len is not None:
        seq_len = _as_int(seq_len, "seq_len")
    cfg = _Config(scaling)
    kind = cfg.type

    rope_theta = cfg.get("rope_theta")
    if rope_theta is not None and rope_theta != b:
        # New-style HF rope_parameters carry the base; silently preferring either value would hide a mistake.
        raise ValueError(f"scaling['rope_theta'] = {rope_theta} disagrees with base = {b}; pass base explicitly")

    prf = cfg.get("partial_rotary_factor")
    if prf is not None:
        if not 0.0 <= prf <= 1.0:
            raise ValueError(f"partial_rotary_factor must be in [0, 1], got {prf}")
        if kind != "proportional" and d is not None and int(d * prf) != p:
            raise ValueError(
                f"partial_rotary_factor {prf} with head_dim {d} means rotary_dim {int(d * prf)}, not {p}"
            )

    if kind == "default":
        return _default_theta(p, b), 1.0

    if kind == "linear":
        s = cfg.require("factor")
        return _default_theta(p, b) / s, 1.0

    if kind == "proportional":
        dd = p if d is None else d
        if p != dd:
            raise ValueError(
                f"proportional RoPE rotates the whole head (zero frequencies are identity pairs): "
                f"rotary_dim {p} must equal head_dim {dd}"
            )
        f = 1.0 if prf is None else prf
        s = cfg.get("factor", 1.0)
        k = int(f * dd / 2)
        i = np.arange(dd // 2, dtype=np.float64)
        theta = np.where(i < k, _default_theta(dd, b), 0.0)
        return theta / s, 1.0

    if kind in ("ntk", "dynamic"):
        if p == 2:
            raise ValueError(f"rope_type {kind!r} is undefined for rotary_dim 2 (exponent P/(P-2))")
        s = cfg.require("factor")
        exponent = p / (p - 2)
        if kind == "ntk":
            new_base = b * s**exponent
        else:
            # HF's threshold is max_position_embeddings (an
            # original_max_position_embeddings beside it is not read).
            m = cfg.get("max_position_embeddings") or cfg.original_max()
            ell = m if seq_len is None else max(seq_len, m)
            new_base = b * ((s * ell / m) - (s - 1.0)) ** exponent
        return _default_theta(p, new_base), 1.0

    if kind == "yarn":
        s = cfg.require("factor")
        big_l = cfg.original_max()
        beta_fast = cfg.get("beta_fast", 32.0)
        beta_slow = cfg.get("beta_slow", 1.0)
        if beta_fast <= 0 or beta_slow <= 0:
            raise ValueError(f"yarn needs beta_fast, beta_slow > 0, got {beta_fast}, {beta_slow}")
        if b <= 1.0:
            raise ValueError(f"yarn needs base > 1 (it divides by ln b), got {b}")

        def correction_dim(r: float) -> float:
            return p * math.log(big_l / (2.0 * math.pi * r)) / (2.0 * math.log(b))

        low = correction_dim(beta_fast)
        high = correction_dim(beta_slow)
        if cfg.get("truncate", True):
            low, high = math.floor(low), math.ceil(high)
        low = min(max(low, 0), p - 1)
        high = min(max(high, 0), p - 1)
        if low == high:
            high += 0.001
        i = np.arange(p // 2, dtype=np.float64)
        ramp = np.clip((i - low) / (high - low), 0.0, 1.0)
        extrapolation = 1.0 - ramp
        theta = _default_theta(p, b)
        theta = (theta / s) * (1.0 - extrapolation) + theta * extrapolation
        attention_factor = cfg.get("attention_factor")
        if attention_factor is not None:
            a = attention_factor
        elif cfg.get("mscale") is not None and cfg.get("mscale_all_dim") is not None:
            denominator = _yarn_mscale(s, cfg.get("mscale_all_dim"))
            if denominator == 0:
                raise ValueError("yarn magnitude g(s, mscale_all_dim) is zero")
            a = _yarn_mscale(s, cfg.get("mscale")) / denominator
        else:
            a = _yarn_mscale(s)
        return theta, float(a)

    if kind == "llama3":
        s = cfg.get("factor", _LLAMA3_DEFAULTS["factor"])
        lf = cfg.get("low_freq_factor", _LLAMA3_DEFAULTS["low_freq_factor"])
        hf = cfg.get("high_freq_factor", _LLAMA3_DEFAULTS["high_freq_factor"])
        big_l = cfg.get("original_max_position_embeddings", _LLAMA3_DEFAULTS["original_max_position_embeddings"])
        if lf <= 0 or hf <= lf:
            raise ValueError(f"llama3 needs 0 < low_freq_factor < high_freq_factor, got {lf}, {hf}")
        theta = _default_theta(p, b)
        wavelength = 2.0 * math.pi / theta
        wl_low = big_l / lf
        wl_high = big_l / hf
        mu = (big_l / wavelength - lf) / (hf - lf)
        smoothed = (1.0 - mu) * theta / s + mu * theta
        out = np.where(wavelength < wl_high, theta, np.where(wavelength > wl_low, theta / s, smoothed))
        return out, 1.0

    if kind == "longrope":
        big_l = cfg.original_max()
        factors = {}
        for key in _ARRAY_KEYS:
            raw = cfg.require(key)
            try:
                arr = np.asarray(raw, dtype=np.float64)
            except (TypeError, ValueError):
                raise ValueError(f"{key} must be a list of numbers") from None
            if arr.shape != (p // 2,):
                raise ValueError(f"{key} must have rotary_dim/2 = {p // 2} entries, got shape {arr.shape}")
            if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
                raise ValueError(f"{key} entries must be finite and > 0")
            factors[key] = arr
        ext = factors["long_factor"] if seq_len is not None and seq_len > big_l else factors["short_factor"]
        theta = _default_theta(p, b) / ext
        attention_factor = cfg.get("attention_factor")
        if attention_factor is not None:
            return theta, float(attention_factor)
        s = cfg.get("factor")
        if s is None:
            m = cfg.get("max_position_embeddings")
            # With no factor and no M the config claims no extension: s = 1, a = 1.
            s = 1.0 if m is None else m / big_l
        if s <= 1.0:
            return theta, 1.0
        if big_l <= 1:
            raise ValueError("longrope magnitude needs original_max_position_embeddings > 1 (it divides by ln L)")
        return theta, math.sqrt(1.0 + math.log(s) / math.log(big_l))

    raise AssertionError(kind)  # _scaling_type admits only SCALING_TYPES


# --------------------------------------------------------------------------------------------------------------
# cos / sin
# --------------------------------------------------------------------------------------------------------------


def cos_sin(positions: Any, theta: Any, magnitude: float = 1.0) -> Tuple[np.ndarray, np.ndarray]:
    """Return ``(a·cos(pos·θ), a·sin(pos·θ))`` as float64 arrays of shape ``positions.shape + [P/2]``.

    The angle is one correctly rounded float64 product (see the module docstring for why that suffices);
    integer positions are exact up to 2^53.
    """
    pos = np.asarray(positions)
    if pos.dtype.kind not in "iuf":
        raise ValueError(f"positions must be integer or real, got dtype {pos.dtype}")
    th = np.asarray(theta, dtype=np.float64)
    if th.ndim != 1:
        raise ValueError(f"theta must be 1-D, got shape {th.shape}")
    a = _as_float(magnitude, "magnitude")
    angle = pos.astype(np.float64)[..., None] * th
    return a * np.cos(angle), a * np.sin(angle)


# --------------------------------------------------------------------------------------------------------------
# apply
# --------------------------------------------------------------------------------------------------------------


def _as_float64(x: Any) -> np.ndarray:
    arr = np.asarray(x)
    if arr.dtype.kind in "cbOSU":
        raise ValueError(f"x must be a real floating array, got dtype {arr.dtype}")
    # f16/f32 and ml_dtypes' bfloat16 (numpy kind 'V') all widen to float64 exactly.
    return arr.astype(np.float64)


def _as_positions(value: Any, name: str) -> np.ndarray:
    arr = np.asarray(value)
    if arr.dtype.kind in "iu":
        return arr.astype(np.int64)
    if arr.dtype.kind == "f":
        if not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr)):
            raise ValueError(f"{name} must hold integers")
        return arr.astype(np.int64)
    raise ValueError(f"{name} must be an integer array, got dtype {arr.dtype}")


def _token_dims(rank: int, token_dims: Optional[Sequence[int]]) -> Tuple[int, ...]:
    if token_dims is None:
        if rank >= 3:
            return tuple(range(rank - 2))
        if rank == 2:
            return (0,)
        raise ValueError(f"x of rank {rank} needs explicit token_dims (e.g. [] for a single vector)")
    dims = []
    for t in token_dims:
        t = _as_int(t, "token_dims entry")
        if not -rank <= t < rank:
            raise ValueError(f"token dim {t} out of range for rank {rank}")
        t %= rank
        if t == rank - 1:
            raise ValueError("the last (channel) dim cannot be a token dim")
        dims.append(t)
    if any(a >= b for a, b in zip(dims, dims[1:])):
        raise ValueError(f"token_dims must be strictly increasing, got {list(token_dims)}")
    return tuple(dims)


def _mrope_pair_axes(half: int, section: Sequence[int], interleaved: bool) -> np.ndarray:
    """For each frequency pair j, the position axis (0 = t, 1 = h, 2 = w) it takes its position from."""
    sec = [_as_int(v, "mrope_section entry") for v in section]
    if len(sec) != 3 or any(v < 0 for v in sec):
        raise ValueError(f"mrope_section must be three non-negative integers [t, h, w], got {list(section)}")
    if sum(sec) != half:
        raise ValueError(f"mrope_section {sec} must sum to rotary_dim/2 = {half}")
    j = np.arange(half)
    if interleaved:
        axes = np.zeros(half, dtype=np.int64)
        axes[(j % 3 == 1) & (j < 3 * sec[1])] = 1
        axes[(j % 3 == 2) & (j < 3 * sec[2])] = 2
        return axes
    return np.repeat(np.arange(3), sec)


def _default_rotary_dim(d: int, scaling: Optional[Mapping[str, Any]]) -> int:
    # HF's partial_rotary_factor means P = int(f·D) for every type except "proportional", which keeps P = D
    # and expresses the partial rotation as zero frequencies.
    if isinstance(scaling, Mapping) and scaling.get("partial_rotary_factor") is not None:
        kind = scaling.get("rope_type", scaling.get("type"))
        if kind != "proportional":
            return int(d * _as_float(scaling["partial_rotary_factor"], "partial_rotary_factor"))
    return d


def apply(
    x: Any,
    positions: Any = None,
    *,
    layout: str = "half",
    rotary_dim: Optional[int] = None,
    base: float = 10000.0,
    scaling: Optional[Mapping[str, Any]] = None,
    offset: Any = None,
    cos_cache: Any = None,
    sin_cache: Any = None,
    inverse: bool = False,
    token_dims: Optional[Sequence[int]] = None,
    magnitude: Optional[float] = None,
    mrope_section: Optional[Sequence[int]] = None,
    mrope_interleaved: bool = False,
) -> np.ndarray:
    """Rotate ``x`` (any real float array, last dim D) per SEMANTICS.md §1–§3 and return float64.

    Token dims: ``token_dims`` if given (strictly increasing, not the last dim), else all dims but the last
    two (rank >= 3, e.g. [B, S] of [B, S, H, D], [T] of [T, H, D]) or [0] for rank 2. Other dims (heads)
    share their token's position.

    Positions, one of:
      - ``positions``: integers broadcastable to the token dims' shape; with ``mrope_section`` an extra
        leading axis of size 3 (t, h, w);
      - ``offset``: a scalar (or shape [1]), or one per index of the first token dim (needs >= 2 token
        dims); pos = offset + index along the last token dim;
      - neither: pos = index along the last token dim (pos = 0 when there are no token dims).

    cos/sin source, one of:
      - computed from ``rotary_dim`` (default D, or int(f·D) for a non-proportional ``partial_rotary_factor``
        in ``scaling``), ``base`` and ``scaling``; dynamic and longrope get seq_len = max(pos) + 1;
      - ``cos_cache``/``sin_cache`` [M, P/2] gathered by position when positions or an offset are given; a
        position outside [0, M) yields NaN in that pair's two channels (with M-RoPE, per pair, through the
        axis the pair reads), the compiler's documented out-of-range behaviour;
      - pre-gathered caches broadcastable to token shape + [P/2] when neither positions nor offset is given.

    ``magnitude``: explicit factor ``a`` if given, else the scheme's (from ``inv_frequencies``), or 1 with
    caches (an explicit magnitude multiplies the caches). ``inverse`` negates sin. Layout "half" pairs
    (i, i + P/2), "interleaved" pairs (2i, 2i + 1); channels [P, D) pass through.
    """
    xf = _as_float64(x)
    if xf.ndim == 0:
        raise ValueError("x must have at least one dim (the channel dim)")
    d = xf.shape[-1]
    if layout not in ("half", "interleaved"):
        raise ValueError(f"layout must be 'half' or 'interleaved', got {layout!r}")
    tdims = _token_dims(xf.ndim, token_dims)
    tshape = tuple(xf.shape[t] for t in tdims)

    have_cache = cos_cache is not None or sin_cache is not None
    if have_cache and (cos_cache is None or sin_cache is None):
        raise ValueError("cos_cache and sin_cache must be given together")
    if have_cache and scaling is not None:
        raise ValueError("caches and a scaling spec are exclusive (the caches already hold the frequencies)")
    if positions is not None and offset is not None:
        raise ValueError("give positions or offset, not both")
    mrope = mrope_section is not None
    if mrope_interleaved and not mrope:
        raise ValueError("mrope_interleaved needs mrope_section")
    if mrope and positions is None:
        raise ValueError("M-RoPE needs positions of shape [3, *token_dims]")

    if have_cache:
        cc = _as_float64(cos_cache)
        sc = _as_float64(sin_cache)
        if cc.shape != sc.shape:
            raise ValueError(f"cos_cache shape {cc.shape} != sin_cache shape {sc.shape}")
        if cc.ndim == 0:
            raise ValueError("caches must have a trailing P/2 dim")
        p = 2 * cc.shape[-1]
        if rotary_dim is not None and _as_int(rotary_dim, "rotary_dim") != p:
            raise ValueError(f"rotary_dim {rotary_dim} != 2 * cache width {p}")
    else:
        p = _default_rotary_dim(d, scaling) if rotary_dim is None else rotary_dim
    p = _check_rotary_dim(p, d)
    half = p // 2

    # Positions as [n_axes, *tshape] (n_axes = 3 for M-RoPE), or None for pre-gathered caches.
    pos: Optional[np.ndarray]
    if positions is not None:
        raw = _as_positions(positions, "positions")
        if mrope and (raw.ndim == 0 or raw.shape[0] != 3):
            raise ValueError(f"M-RoPE positions need a leading axis of size 3 (t, h, w), got shape {raw.shape}")
        try:
            if mrope:
                # Each axis' positions broadcast to the token dims on their own (right-aligned, like numpy).
                per_axis = raw.shape[1:]
                if len(per_axis) > len(tshape):
                    raise ValueError
                pos = np.broadcast_to(raw.reshape((3,) + (1,) * (len(tshape) - len(per_axis)) + per_axis),
                                      (3,) + tshape)
            else:
                pos = np.broadcast_to(raw, tshape)[None]
        except ValueError:
            raise ValueError(f"positions of shape {raw.shape} do not broadcast to token dims {tshape}") from None
    elif offset is not None:
        off = _as_positions(offset, "offset")
        if off.ndim == 0 or off.shape == (1,):
            off = off.reshape(())
            if tshape:
                idx = np.arange(tshape[-1], dtype=np.int64)
                pos = np.broadcast_to(off + idx, tshape)[None]
            else:
                pos = off.reshape(1)
        elif off.ndim == 1 and len(tshape) >= 2 and off.shape[0] == tshape[0]:
            idx = np.arange(tshape[-1], dtype=np.int64)
            grid = off.reshape((-1,) + (1,) * (len(tshape) - 1)) + idx
            pos = np.broadcast_to(grid, tshape)[None]
        else:
            raise ValueError(
                f"offset must be a scalar or have one entry per index of the first of >= 2 token dims "
                f"{tshape}, got shape {off.shape}"
            )
    elif have_cache:
        pos = None
    else:
        if tshape:
            pos = np.broadcast_to(np.arange(tshape[-1], dtype=np.int64), tshape)[None]
        else:
            pos = np.zeros((1,), dtype=np.int64)

    if mrope:
        pair_axes = _mrope_pair_axes(half, mrope_section, bool(mrope_interleaved))
    else:
        pair_axes = np.zeros(half, dtype=np.int64)

    def select(per_axis: np.ndarray) -> np.ndarray:
        # per_axis: [n_axes, *tshape, half] -> [*tshape, half], pair j from axis pair_axes[j].
        if per_axis.shape[0] == 1:
            return per_axis[0]
        return np.take_along_axis(per_axis, pair_axes.reshape((1,) + (1,) * len(tshape) + (half,)), axis=0)[0]

    if have_cache and pos is not None:
        if cc.ndim != 2:
            raise ValueError(f"with positions, caches must be [M, P/2], got shape {cc.shape}")
        m = cc.shape[0]
        valid = (pos >= 0) & (pos < m)
        idx = np.clip(pos, 0, max(m - 1, 0))
        if m == 0:
            cos_axes = np.full(pos.shape + (half,), np.nan)
            sin_axes = np.full(pos.shape + (half,), np.nan)
        else:
            cos_axes = np.where(valid[..., None], cc[idx], np.nan)
            sin_axes = np.where(valid[..., None], sc[idx], np.nan)
        cos, sin = select(cos_axes), select(sin_axes)
        a = 1.0 if magnitude is None else _as_float(magnitude, "magnitude")
    elif have_cache:
        try:
            cos = np.broadcast_to(cc, tshape + (half,))
            sin = np.broadcast_to(sc, tshape + (half,))
        except ValueError:
            raise ValueError(
                f"pre-gathered caches of shape {cc.shape} do not broadcast to token dims + [P/2] = "
                f"{tshape + (half,)}"
            ) from None
        a = 1.0 if magnitude is None else _as_float(magnitude, "magnitude")
    else:
        seq_len = int(pos.max()) + 1 if pos.size else None
        theta, scheme_a = inv_frequencies(p, base, scaling, head_dim=d, seq_len=seq_len)
        cos_axes, sin_axes = cos_sin(pos, theta)
        cos, sin = select(cos_axes), select(sin_axes)
        a = scheme_a if magnitude is None else _as_float(magnitude, "magnitude")

    cos = a * cos
    sin = -a * sin if inverse else a * sin

    # Lay the [*tshape, half] factors out along x's dims: token dims keep their extent, others broadcast.
    tset = set(tdims)
    target = tuple(xf.shape[k] if k in tset else 1 for k in range(xf.ndim - 1)) + (half,)
    cos = cos.reshape(target)
    sin = sin.reshape(target)

    if layout == "half":
        first, second = slice(0, half), slice(half, p)
    else:
        first, second = slice(0, p, 2), slice(1, p, 2)
    x1 = xf[..., first]
    x2 = xf[..., second]
    out = xf.copy()
    out[..., first] = x1 * cos - x2 * sin
    out[..., second] = x2 * cos + x1 * sin
    return out


# --------------------------------------------------------------------------------------------------------------
# Error measure
# --------------------------------------------------------------------------------------------------------------


def relative_error(actual: Any, reference: Any) -> float:
    """``max|actual - reference| / max(max|reference|, 1e-30)`` over the whole array.

    Normalising by the array's largest reference magnitude (not per element) is deliberate: a rotated
    channel can be near zero by cancellation (x1·c − x2·s), where a per-element ratio would blow up while the
    absolute error is as small as the inputs allow. SEMANTICS.md §5's 1e-6 is read against this measure.
    Elements that are NaN in both arrays count as equal (the out-of-range cache behaviour); a NaN in only
    one of them makes the error infinite. Shapes must match exactly (no silent broadcasting).
    """
    act = _as_float64(actual)
    ref = _as_float64(reference)
    if act.shape != ref.shape:
        raise ValueError(f"shape mismatch: actual {act.shape} vs reference {ref.shape}")
    nan_a, nan_r = np.isnan(act), np.isnan(ref)
    if np.any(nan_a != nan_r):
        return math.inf
    keep = ~nan_r
    if not np.any(keep):
        return 0.0
    act, ref = act[keep], ref[keep]
    with np.errstate(invalid="ignore"):
        diff = np.where(act == ref, 0.0, np.abs(act - ref))  # equal infinities count as exact
    if np.any(np.isnan(diff)):
        return math.inf
    scale = max(float(np.max(np.abs(ref[np.isfinite(ref)]), initial=0.0)), 1e-30)
    return float(np.max(diff)) / scale


# ---------------------------------------------------------------------------
# Fused neighbours (docs/FUSIONS.md), independent float64 forms
# ---------------------------------------------------------------------------

def rms_norm(x: Any, weight: Any, eps: float) -> np.ndarray:
    """QK-norm in float64: ``w * (x / sqrt(mean(x^2 over the last dim) + eps))``."""
    xf = _as_float64(x)
    if xf.ndim == 0:
        raise ValueError("x must have at least one dim (the channel dim)")
    w = _as_float64(weight)
    if w.shape != (xf.shape[-1],):
        raise ValueError(f"weight shape {w.shape} != ({xf.shape[-1]},)")
    eps = _as_float(eps, "eps")
    if not (eps >= 0.0 and np.isfinite(eps)):
        raise ValueError(f"eps must be a finite number >= 0, got {eps!r}")
    mean = np.mean(xf * xf, axis=-1, keepdims=True)
    return w * (xf / np.sqrt(mean + eps))


#: The largest finite value of each quantized type, and its bit width.
QUANT_LIMITS = {"f8e4m3fn": 448.0, "f8e5m2": 57344.0, "i8": 127.0}


def quantize(y: Any, quant: str, scale: Any, head_axis: Optional[int] = None) -> np.ndarray:
    """The documented quantization of float64 values ``y``: ``v = y * scale`` (``scale`` a scalar, or one
    per index of ``head_axis``), then for fp8 clamped to +-max finite and rounded to nearest even (NaN stays
    NaN), for i8 rounded half to even, clamped to [-128, 127], NaN -> 0. Returns the quantized values as
    float64 (exactly representable in the target type)."""
    import ml_dtypes  # a dependency of the package

    if quant not in QUANT_LIMITS:
        raise ValueError(f"quant must be one of {sorted(QUANT_LIMITS)}, got {quant!r}")
    yf = _as_float64(y)
    s = _as_float64(scale)
    if s.ndim > 1:
        raise ValueError(f"scale must be a scalar or one per head, got shape {s.shape}")
    if s.ndim == 1:
        if head_axis is None:
            raise ValueError("a per-head scale needs head_axis")
        head_axis = _as_int(head_axis, "head_axis")
        if not -yf.ndim <= head_axis < yf.ndim or s.shape[0] != yf.shape[head_axis]:
            raise ValueError(f"scale has {s.shape[0]} entries, y has shape {yf.shape} (head_axis {head_axis})")
        shape = [1] * yf.ndim
        shape[head_axis] = s.shape[0]
        s = s.reshape(shape)
    v = yf * s
    if quant == "i8":
        r = np.clip(np.round(v), -128.0, 127.0)  # np.round: half to even
        return np.where(np.isnan(r), 0.0, r)
    limit = QUANT_LIMITS[quant]
    dtype = {"f8e4m3fn": ml_dtypes.float8_e4m3fn, "f8e5m2": ml_dtypes.float8_e5m2}[quant]
    clamped = np.clip(v, -limit, limit)  # NaN stays NaN
    # ml_dtypes rounds float64 -> fp8 to nearest even, once.
    return clamped.astype(dtype).astype(np.float64)
