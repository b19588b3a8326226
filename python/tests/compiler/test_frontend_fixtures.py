# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""RoPE as real frontends emit it, raised by --rope-raise and run.

Each fixture of test/Frontends/Inputs (made by scripts/gen-frontend-fixtures.py
from the models' own code through torch-mlir, JAX -> StableHLO -> linalg and
ONNX -> linalg) is checked three ways:
- raising gives one rope.apply per rotated output, with the layout, rotary
  dim, magnitude and M-RoPE sections the manifest records from the model's
  configuration;
- the raised module (rope_mlir.jit's default pipeline: rope-optimize, then
  rope-to-llvm-cpu) and the un-raised one (rope-to-llvm-cpu alone) both equal
  the float64 reference the generator computed with the model's code in
  float64;
- the raised module computes the angle in f64: at large positions it stays
  at f32 rounding while the frontend's f32 angle does not.
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

INPUTS = _paths.ROOT / "test" / "Frontends" / "Inputs"
MANIFEST = json.loads((INPUTS / "manifest.json").read_text())
FIXTURES = {f["name"]: f for f in MANIFEST["fixtures"]}
UNRAISED = "builtin.module(rope-to-llvm-cpu{emit-c-interface=true})"


def _load(name):
    return load_fixture(INPUTS, FIXTURES, name)


_relative_error = relative_error


def _run(text, pipeline, func, args):
    outs = rope_mlir.jit(text, pipeline=pipeline).function(func)(*args)
    return outs if isinstance(outs, tuple) else (outs,)


def _apply_ops(raised: str):
    """The rope.apply ops of raised IR, each as (input arg number or None,
    the op's text)."""
    ops = []
    for line in raised.splitlines():
        if "rope.apply" not in line:
            continue
        m = re.search(r"ins\(%arg(\d+)", line)
        ops.append((int(m.group(1)) if m else None, line))
    return ops


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_raised_attributes_match_the_model(name):
    fixture, text, *_ = _load(name)
    raised = _jit.lower(text, "builtin.module(rope-raise)")
    ops = _apply_ops(raised)
    expect = fixture["expect"]
    assert len(ops) == sum(e["rope_apply"] for e in expect), raised
    assert "math.cos" not in raised and "math.sin" not in raised
    by_input = {arg: line for arg, line in ops}
    for e in expect:
        line = by_input.get(e["input_arg"])
        if line is None:
            # vLLM's q/k are viewed [T, H*D] -> [T, H, D] before rotating.
            line = ops[expect.index(e)][1]
        assert ("#rope.layout<interleaved>" in line) == (
            e["layout"] == "interleaved"), line
        if e["rotary_dim"] < e["head_dim"]:
            assert f"rotary_dim = {e['rotary_dim']} : i64" in line, line
        else:
            assert "rotary_dim" not in line, line
        magnitude = re.search(r"magnitude = ([0-9.e+-]+)", line)
        if abs(e["magnitude"] - 1.0) > 1e-12:
            assert magnitude and abs(float(magnitude.group(1)) -
                                     e["magnitude"]) < 1e-6, line
        else:
            assert magnitude is None, line
        if e.get("mrope"):
            section = ", ".join(str(s) for s in e["mrope"]["section"])
            assert f"section = [{section}]" in line, line
        if e["cos_sin"] == "computed":
            assert "freqs = #rope." in line and "cache(" not in line, line
        else:
            assert "cache(" in line, line
        if e["positions"]["kind"] == "offset":
            assert "offset(" in line, line
    if any(e.get("output_order") == "deinterleaved" for e in expect):
        assert "linalg.transpose" in raised


@pytest.mark.parametrize("name", sorted(FIXTURES))
@pytest.mark.parametrize("raise_first", [True, False],
                         ids=["raised", "unraised"])
def test_fixture_runs_right(name, raise_first):
    fixture, text, args, refs, fronts = _load(name)
    outs = _run(text, None if raise_first else UNRAISED, fixture["func"], args)
    assert len(outs) == len(refs)
    for out, ref, front in zip(outs, refs, fronts):
        assert out.shape == ref.shape and out.dtype == front.dtype
        error = _relative_error(out, ref)
        # f32 data: a few f32 roundings of the largest value.
        assert error <= (1e-6 if raise_first else 2e-6), (name, error)


def test_raising_changes_only_the_angle_accuracy():
    """The Llama module at positions up to 2**20. Raising keeps the IR's own
    f32 inv_freq table (SEMANTICS.md §7: its values widened exactly) and computes
    position * theta and cos/sin in f64, so the raised module stays at f32
    rounding of the float64 rotation by that table; the frontend's f32 angle
    (f32(position) * f32(inv_freq), rounded) drifts far from it."""
    fixture, text, args, refs, _ = _load("llama_computed")
    q, k, positions = args
    far = positions + (1 << 20) - 16
    raised_ir = _jit.lower(text, "builtin.module(rope-raise)")
    table = re.search(r"inv_freq = \[([^\]]*)\]", raised_ir)
    assert table, raised_ir
    theta = np.array([float(v) for v in table.group(1).split(",")])
    # The entries are the fixture's f32 table, widened exactly.
    assert np.array_equal(theta, theta.astype(np.float32).astype(np.float64))
    raised = _run(text, None, "main", [q, k, far])
    unraised = _run(text, UNRAISED, "main", [q, k, far])
    d = q.shape[-1]
    angle = far.astype(np.float64)[..., None] * theta
    emb = np.concatenate([angle, angle], -1)[:, None]
    cos, sin = np.cos(emb), np.sin(emb)

    def rotate(x):
        x = x.astype(np.float64)
        half = np.concatenate([-x[..., d // 2:], x[..., :d // 2]], -1)
        return x * cos + half * sin

    for got_raised, got_unraised, x in zip(raised, unraised, (q, k)):
        expected = rotate(x)
        raised_error = _relative_error(got_raised, expected)
        unraised_error = _relative_error(got_unraised, expected)
        assert raised_error < 2e-6, raised_error
        assert unraised_error > 10 * raised_error, (raised_error,
                                                     unraised_error)
