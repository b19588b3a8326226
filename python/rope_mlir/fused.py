# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Fused RoPE entry points: several tensors rotated by one compiled call.

`apply_qk(q, k, positions)` rotates a query and a key (GQA: different head
counts) at the same positions with the same frequencies. Its kernel holds
one `rope.apply` per tensor on the same operands; convert-rope-to-vector
lowers such siblings as one loop over tokens that computes (or gathers)
cos/sin once per token and rotates the heads of q, then those of k, from
registers (docs/DESIGN.md, "Sibling fusion"). The arithmetic per row is
that of `apply`, so the results are bitwise those of two `apply` calls.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

import numpy as np

from . import _arrays, _kernel_path as _path, kernel as _kernel
from .kernel import Kernel, KernelConfig, Names, RotationChecks

__all__ = ["apply_qk", "QKKernel", "compile_qk"]

_NAMES = ("q", "k", "positions", "offset", "cos_cache", "sin_cache",
          "out_q", "out_k")
_NEIGHBOUR_NAMES = _NAMES + ("q_norm_weight", "k_norm_weight", "q_scale",
                             "k_scale")


class QKKernel(Kernel):
    """A compiled pair of `rope.apply` (q then k) for one configuration:
    `kernel(q, k, positions, offset=..., cos_cache=..., sin_cache=...,
    out_q=..., out_k=...)` returns (q_rot, k_rot). Each of q and k is
    checked as `Kernel` checks x, under its own names (q, out_q,
    q_norm_weight, q_scale; k's likewise); q and k must also agree on
    everything but their head dims (rank, dtype, token dims' sizes, head
    dim D)."""

    _members = 2

    def __init__(self, config: KernelConfig):
        if config.static_shape is not None:
            raise ValueError("a q/k kernel takes no static shape (q and k "
                             "differ in their head dims)")
        self._q = RotationChecks(config, Names.member("q"))
        self._k = RotationChecks(config, Names.member("k"))
        # k's shape rule: its token dims are q's sizes (only head dims may
        # differ). The C++ plan and _checked_pair both read it.
        dims = config.resolved_token_dims()
        self._k.specs["x"] = dataclasses.replace(
            self._k.specs["x"], like=tuple(
                (self._q.names.x, d) if d in dims else None
                for d in range(config.rank)),
            why="only head dims may differ from q's")
        self._k_rule = _path.ShapeRule(self._k.specs["x"])
        super().__init__(config)  # compiles the pair (emit inputs=2)
        self._pair = self._function
        self._neighbour_count = int(config.norm) + int(
            config.quant is not None)
        self._pair_plan = (None if self._neighbours else self.make_plan(
            self._compiled.address, self._parameters(),
            (self._q.names, self._k.names)))

    def _parameters(self) -> tuple:
        """q's parameters, then k's own: k (whose shape rule ties its token
        dims to q's), its neighbours' operands and its destination (the
        positions and caches are q's)."""
        k = self._k.specs
        return tuple(self._q.specs.values()) + tuple(
            k[role] for role in ("x", "norm_weight", "quant_scale", "out")
            if role in k)

    def __call__(self, q, k, positions=None, *, offset=0, cos_cache=None,
                 sin_cache=None, out_q=None, out_k=None, q_norm_weight=None,
                 k_norm_weight=None, q_scale=None, k_scale=None):
        # The C++ plan takes exact calls (see Kernel.__call__); the rest,
        # and every error, the checks below.
        plan = self._pair_plan
        neighbours = (q_norm_weight, k_norm_weight, q_scale, k_scale)
        if any(v is not None for v in neighbours):
            return self._checked_pair(q, k, positions, offset, cos_cache,
                                      sin_cache, out_q, out_k, *neighbours)
        if plan is not None:
            if out_q is None and out_k is None and not self._inplace and \
                    q.__class__ is np.ndarray and k.__class__ is np.ndarray:
                result = plan(q, k, positions, offset, cos_cache, sin_cache,
                              _arrays.empty(q.shape, self._dtype),
                              _arrays.empty(k.shape, self._dtype))
            else:
                result = plan(q, k, positions, offset, cos_cache, sin_cache,
                              out_q, out_k)
            if result is not None:
                return result
        return self._checked_pair(q, k, positions, offset, cos_cache,
                                  sin_cache, out_q, out_k)

    def _checked_pair(self, q, k, positions, offset, cos_cache, sin_cache,
                      out_q, out_k, q_norm_weight=None, k_norm_weight=None,
                      q_scale=None, k_scale=None):
        if _arrays.any_foreign(q, k, positions, offset, cos_cache, sin_cache,
                               out_q, out_k, q_norm_weight, k_norm_weight,
                               q_scale, k_scale):
            arrays = _arrays.import_all(_NEIGHBOUR_NAMES, (
                q, k, positions, offset, cos_cache, sin_cache, out_q, out_k,
                q_norm_weight, k_norm_weight, q_scale, k_scale))
            rq, rk = self(*arrays[:3], offset=arrays[3],
                          cos_cache=arrays[4], sin_cache=arrays[5],
                          out_q=arrays[6], out_k=arrays[7],
                          q_norm_weight=arrays[8], k_norm_weight=arrays[9],
                          q_scale=arrays[10], k_scale=arrays[11])
            return (out_q if out_q is not None else _arrays.wrap(rq, q),
                    out_k if out_k is not None else _arrays.wrap(rk, k))
        c = self.config
        if c.inplace and (out_q is not q or out_k is not k):
            raise ValueError("the kernel rotates in place: pass out_q=q and "
                             "out_k=k (both, the same numpy arrays)")
        q_arr = q if isinstance(q, np.ndarray) else np.asarray(q)
        k_arr = k if isinstance(k, np.ndarray) else np.asarray(k)
        if q_arr.dtype != k_arr.dtype:
            raise TypeError(f"q has dtype {q_arr.dtype} but k {k_arr.dtype}: "
                            f"they must match")
        for name, out, other in (("out_q", out_q, k_arr),
                                 ("out_k", out_k, q_arr)):
            if out is not None and not c.inplace and \
                    np.may_share_memory(out, other):
                raise ValueError(f"{name} overlaps the other input "
                                 f"({'k' if name == 'out_q' else 'q'})")
        if out_q is not None and out_k is not None and \
                np.may_share_memory(out_q, out_k):
            raise ValueError("out_q and out_k overlap" + (
                " (q and k, rotated in place, must be apart)"
                if c.inplace else ""))
        keep = []  # (array, descriptor) pairs alive during the call
        q_args, q_result = self._q._checked_args(
            keep, q_arr, positions, offset, cos_cache, sin_cache,
            q_arr if c.inplace else out_q, q_norm_weight, q_scale)
        self._k_rule.check(k_arr.shape, {"q": q_arr.shape})  # k's like
        k_args, k_result = self._k._checked_args(
            keep, k_arr, positions, offset, cos_cache, sin_cache,
            k_arr if c.inplace else out_k, k_norm_weight, k_scale)
        # Each destination (q or k itself when rotated in place) apart from
        # the other member's operands too: the kernel reads them while it
        # writes it.
        role = "x" if c.inplace else "out"
        for member, dest, reads in (
                (self._q, q_result, (("k_norm_weight", k_norm_weight),
                                     ("k_scale", k_scale))),
                (self._k, k_result, (("q_norm_weight", q_norm_weight),
                                     ("q_scale", q_scale)))):
            _path.check_apart(member.specs[role], dest, reads)
        # k's positions/caches were checked against k; the kernel reads
        # q's (the same arrays), so only k, its neighbours' operands and
        # its destination are passed.
        tail = self._neighbour_count + (0 if c.inplace else 1)
        extra = [k_args[0]] + (k_args[len(k_args) - tail:] if tail else [])
        if q_result.size or k_result.size:  # else nothing to compute
            self._pair(*q_args, *extra)
        return q_result, k_result


# apply_qk's kernels by the tuple of their configuration's fields.
_qk_kernels: dict = {}
_cache = _path.KernelCache(QKKernel)


def compile_qk(config: Optional[KernelConfig] = None, **kwargs) -> QKKernel:
    """The (cached) compiled q/k kernel of a configuration, given as a
    KernelConfig or as its fields (see `rope_mlir.compile`)."""
    return _cache.configured(KernelConfig, config, kwargs)


def apply_qk(q, k, positions=None, *, layout="half", rotary_dim=None,
             base=10000.0, scaling=None, offset=0, cos_cache=None,
             sin_cache=None, inverse=False, token_dims=None, out_q=None,
             out_k=None, magnitude=None, mrope_section=None,
             mrope_interleaved=False, threads=1, q_norm_weight=None,
             k_norm_weight=None, norm_eps=1e-6, quant_dtype=None,
             q_scale=None, k_scale=None):
    """Rotates q and k at the same positions: (q_rot, k_rot), bitwise what
    `apply(q, ...)` and `apply(k, ...)` return, computed by one kernel that
    evaluates cos/sin once per token for both (see the module docstring).

    q, k: [*tokens, H, D] (or as `token_dims` says) with the same token
    sizes and head dim D; their head counts may differ (GQA: Hq, Hkv).
    Every other argument is `apply`'s; out_q=q and out_k=k (both) rotate in
    place.

    Fused neighbours (docs/FUSIONS.md), as `apply`'s norm_weight /
    quant_dtype / quant_scale, one of each per tensor: q_norm_weight and
    k_norm_weight (both or neither: Qwen3's q_norm and k_norm) with
    norm_eps; quant_dtype with q_scale and k_scale (both).
    """
    if _arrays.any_foreign(q, k, positions, offset, cos_cache, sin_cache,
                           out_q, out_k, q_norm_weight, k_norm_weight,
                           q_scale, k_scale):
        arrays = _arrays.import_all(_NEIGHBOUR_NAMES, (
            q, k, positions, offset, cos_cache, sin_cache, out_q, out_k,
            q_norm_weight, k_norm_weight, q_scale, k_scale))
        rq, rk = apply_qk(
            *arrays[:3], layout=layout, rotary_dim=rotary_dim, base=base,
            scaling=scaling, offset=arrays[3], cos_cache=arrays[4],
            sin_cache=arrays[5], inverse=inverse, token_dims=token_dims,
            out_q=arrays[6], out_k=arrays[7], magnitude=magnitude,
            mrope_section=mrope_section, mrope_interleaved=mrope_interleaved,
            threads=threads, q_norm_weight=arrays[8],
            k_norm_weight=arrays[9], norm_eps=norm_eps,
            quant_dtype=quant_dtype, q_scale=arrays[10], k_scale=arrays[11])
        return (out_q if out_q is not None else _arrays.wrap(rq, q),
                out_k if out_k is not None else _arrays.wrap(rk, k))
    q_inplace = out_q is not None and out_q is q
    k_inplace = out_k is not None and out_k is k
    if q_inplace != k_inplace:
        raise ValueError("rotate both in place (out_q=q and out_k=k) or "
                         "neither")
    fields, q, positions, offset, cos_cache, sin_cache = \
        _kernel.apply_fields(
            q, positions, layout=layout, rotary_dim=rotary_dim, base=base,
            scaling=scaling, offset=offset, cos_cache=cos_cache,
            sin_cache=sin_cache, inverse=inverse, token_dims=token_dims,
            inplace=q_inplace, magnitude=magnitude,
            mrope_section=mrope_section,
            mrope_interleaved=mrope_interleaved, threads=threads,
            x_name="q")  # q's checks, as apply's x's
    if q_inplace:
        out_q = q
    if (q_norm_weight is None) != (k_norm_weight is None):
        raise ValueError("pass q_norm_weight and k_norm_weight together (or "
                         "neither)")
    if q_norm_weight is not None:
        if not isinstance(q_norm_weight, np.ndarray):
            q_norm_weight = np.asarray(q_norm_weight)
        fields.update(norm=True,
                      norm_dtype=_path.dtype_name(q_norm_weight.dtype),
                      norm_epsilon=_path.real(norm_eps, "norm_eps"))
    if quant_dtype is not None or q_scale is not None or k_scale is not None:
        if quant_dtype is None or q_scale is None or k_scale is None:
            raise ValueError("a quantized output needs quant_dtype, q_scale "
                             "and k_scale together")
        q_scale, k_scale = (_path.scale_array(s) for s in (q_scale,
                                                              k_scale))
        if q_scale.ndim != k_scale.ndim or q_scale.ndim > 1:
            raise ValueError(f"q_scale and k_scale must both be scalars (per "
                             f"tensor) or both one per head, got shapes "
                             f"{q_scale.shape} and {k_scale.shape}")
        fields.update(quant=_path.quant_name(quant_dtype),
                      quant_scale="head" if q_scale.ndim else "tensor")
    kernel = _kernel.cached_kernel(_qk_kernels, fields, compile_qk)
    return kernel(q, k, positions, offset=offset, cos_cache=cos_cache,
                  sin_cache=sin_cache, out_q=out_q, out_k=out_k,
                  q_norm_weight=q_norm_weight, k_norm_weight=k_norm_weight,
                  q_scale=q_scale, k_scale=k_scale)
