# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Attention as frontends emit it (test/Frontends/Inputs/attention), raised
to rope.attention by --rope-raise (lib/Transforms/Raise/RaiseAttention.cpp)
and run raised.

For every fixture:
- raising gives one rope.attention, nothing of the written-out softmax left,
  with the scale, mask kind, causal flag, GQA query dim and rotated Q/K the
  manifest's `expect` records;
- the module raised and lowered by rope_mlir.jit's default pipeline
  (rope-optimize, then rope-to-llvm-cpu) equals the generator's float64
  reference within 2e-6 relative (max|y - r| / max|r|), as the un-raised
  module does (test_attention_fixtures.py).
JAX's module calls its jitted helpers (@tril, @_where): it is raised only
after inlining, so it runs through `inline` first (rope-optimize inlines
first too).
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

import rope_mlir
from rope_mlir import _jit
from frontend_fixture_io import load_fixture, relative_error

import _paths

INPUTS = (_paths.ROOT / "test" / "Frontends"
          / "Inputs" / "attention")
MANIFEST = json.loads((INPUTS / "manifest.json").read_text())
FIXTURES = {f["name"]: f for f in MANIFEST["fixtures"]}
RAISE = "builtin.module(inline, rope-raise)"
UNRAISED = "builtin.module(rope-to-llvm-cpu{emit-c-interface=true})"
INLINED = ("builtin.module(inline, rope-optimize, "
           "rope-to-llvm-cpu{emit-c-interface=true})")

# The smallest rope.attention: whether rope-to-llvm-cpu can lower it.
def _load(name):
    return load_fixture(INPUTS, FIXTURES, name)[:4]


_relative_error = relative_error


def _pipeline(text):
    """The default pipeline, with `inline` first for modules with calls."""
    return INLINED if "call @" in text else None


def _run(text, pipeline, func, args):
    outs = rope_mlir.jit(text, pipeline=pipeline).function(func)(*args)
    return outs if isinstance(outs, tuple) else (outs,)


def _attention_op(raised: str) -> str:
    ops = [line for line in raised.splitlines() if "rope.attention" in line]
    assert len(ops) == 1, raised
    return ops[0]


def _defs(raised: str) -> dict:
    """SSA name -> the line defining it."""
    defs = {}
    for line in raised.splitlines():
        m = re.match(r"\s*(%[\w.]+)(?::\d+)? = ", line)
        if m:
            defs[m.group(1)] = line
    return defs


def _producer_is_rope(name: str, defs: dict) -> bool:
    """Whether `name` is a rope.apply, or a reshape of one (GQA's view)."""
    line = defs.get(name, "")
    if "tensor.expand_shape" in line:
        line = defs.get(re.search(r"expand_shape (%[\w.]+)", line).group(1), "")
    return "rope.apply" in line


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_raised_attributes_match_the_fixture(name):
    fixture, text, args, _ = _load(name)
    raised = _jit.lower(text, RAISE)
    e = fixture["expect"]
    op = _attention_op(raised)
    for gone in ("math.exp", "linalg.softmax", "linalg.batch_matmul"):
        assert gone not in raised, (name, gone)
    scale = float(re.search(r"scale = ([0-9.e+-]+) : f64", op).group(1))
    assert scale == pytest.approx(e["scale"], rel=1e-6), op
    kind = e["mask"]["kind"]
    assert ("causal" in op) == (kind == "causal"), op
    mask = re.search(r"mask\((%[\w.]+) : tensor<([0-9x]+)x(\w+)>\)", op)
    assert bool(mask) == (kind == "tensor"), op
    if mask:
        # The mask argument, its unit head dim dropped; i1 for a boolean one.
        want = "i1" if e["mask"]["type"] == "boolean" else "f32"
        assert mask.group(3) == want, op
        shape = [s for s in e["mask"]["shape"] if s != 1]
        assert [int(s) for s in mask.group(2).split("x") if s != "1"] == shape
    # GQA: Q viewed [.., Hkv, G, ..], the group a loop the query_dim names.
    assert ("query_dim" in op) == (e["Hq"] != e["Hkv"]), op
    q, k, v = re.search(r"ins\((%[\w.]+), (%[\w.]+), (%[\w.]+) :", op).groups()
    defs = _defs(raised)
    assert _producer_is_rope(q, defs) == bool(e["q"].get("rotated")), op
    assert _producer_is_rope(k, defs) == bool(e["k"].get("rotated")), op
    assert v == f"%arg{e['v']['arg']}", op
    # A scale on a rotated Q went into the scale, not the rotation.
    assert "magnitude" not in raised


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_raised_fixture_runs_right(name):
    fixture, text, args, refs = _load(name)
    outs = _run(text, _pipeline(text), fixture["func"], args)
    assert len(outs) == len(refs)
    for out, ref in zip(outs, refs):
        assert out.shape == ref.shape and out.dtype == np.float32
        error = _relative_error(out, ref)
        assert error <= 2e-6, (name, error)


def test_guard_zeroes_fully_masked_rows():
    """torch SDPA's boolean mask with rows whose keys are all masked: torch
    (and the un-raised module) gives those rows zeros where the op alone
    would give NaN; the raised module keeps the frontend's guard."""
    fixture, text, args, refs = _load("torch_sdpa_mask")
    mask = args[3].copy()
    mask[0, 0, 2, :] = False
    mask[1, 0, 7, :] = False
    args = args[:3] + [mask]
    raised = _run(text, None, fixture["func"], args)[0]
    unraised = _run(text, UNRAISED, fixture["func"], args)[0]
    assert np.all(raised[0, :, 2, :] == 0) and np.all(raised[1, :, 7, :] == 0)
    assert not np.isnan(raised).any()
    assert _relative_error(raised, unraised.astype(np.float64)) <= 2e-6


def test_jax_needs_inlining():
    """Without inlining, JAX's masked scores are a call's result: nothing is
    raised (and the module still runs, un-raised, through the default
    pipeline)."""
    _, text, _, _ = _load("jax_attention")
    assert "rope.attention" not in _jit.lower(text, "builtin.module(rope-raise)")


SOFTCAP = """
#id = affine_map<(m, n) -> (m, n)>
func.func @softcap(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.35355339 : f32
  %cap = arith.constant 2.0 : f32
  %se = tensor.empty() : tensor<4x6xf32>
  %sacc = linalg.fill ins(%zero : f32) outs(%se : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s = linalg.matmul indexing_maps = [affine_map<(m, n, d) -> (m, d)>, affine_map<(m, n, d) -> (n, d)>, affine_map<(m, n, d) -> (m, n)>] ins(%q, %k : tensor<4x8xf32>, tensor<6x8xf32>) outs(%sacc : tensor<4x6xf32>) -> tensor<4x6xf32>
  %capped = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<4x6xf32>) outs(%se : tensor<4x6xf32>) {
  ^bb0(%x: f32, %y: f32):
    %0 = arith.mulf %x, %scale : f32
    %1 = arith.divf %0, %cap : f32
    %2 = math.tanh %1 : f32
    %3 = arith.mulf %2, %cap : f32
    linalg.yield %3 : f32
  } -> tensor<4x6xf32>
  %p = linalg.softmax dimension(1) ins(%capped : tensor<4x6xf32>) outs(%se : tensor<4x6xf32>) -> tensor<4x6xf32>
  %oe = tensor.empty() : tensor<4x8xf32>
  %oacc = linalg.fill ins(%zero : f32) outs(%oe : tensor<4x8xf32>) -> tensor<4x8xf32>
  %o = linalg.matmul ins(%p, %v : tensor<4x6xf32>, tensor<6x8xf32>) outs(%oacc : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %o : tensor<4x8xf32>
}
"""


def test_softcap_becomes_the_score_region_and_runs_right():
    """Gemma 2's softcap c * tanh(scale * s / c), one generic: raised with the
    cap as the op's score region, and run against float64."""
    raised = _jit.lower(SOFTCAP, RAISE)
    assert "math.tanh" in _attention_op(raised) or "rope.yield" in raised
    assert "linalg.softmax" not in raised
    rng = np.random.default_rng(7)
    q, k, v = ((rng.standard_normal(s) * 3).astype(np.float32)
               for s in ((4, 8), (6, 8), (6, 8)))
    out = _run(SOFTCAP, None, "softcap", [q, k, v])[0]
    s = q.astype(np.float64) @ k.astype(np.float64).T * np.float32(0.35355339)
    s = 2.0 * np.tanh(s / 2.0)
    p = np.exp(s - s.max(1, keepdims=True))
    expected = (p / p.sum(1, keepdims=True)) @ v.astype(np.float64)
    assert _relative_error(out, expected) <= 2e-6
