# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Attention as real frontends emit it (test/Frontends/Inputs/attention,
made by scripts/gen-attention-fixtures.py from transformers' Llama attention,
torch SDPA, JAX einsum attention and an ONNX MatMul/Softmax graph), run
un-raised through rope_mlir.jit against the generator's float64 references.

The fixtures are what the attention raising reads; these tests pin what they
compute today without it:
- the manifest agrees with the .npz and the .mlir (argument shapes and
  dtypes, the func signature, the `expect` dims);
- every fixture lowered as it is (rope-to-llvm-cpu alone: no rope-optimize,
  so no raising) equals the float64 reference ref0 within 2e-6 relative
  (max|y - r| / max|r|: a few f32 roundings of the largest value);
- a numpy float64 attention written here from the manifest's `expect` alone
  equals ref0, so `expect` says what the IR computes.
"""

from __future__ import annotations

import importlib.util
import json
import re

import numpy as np
import pytest

import rope_mlir
from frontend_fixture_io import load_fixture, relative_error

import _paths

ROOT = _paths.ROOT
INPUTS = ROOT / "test" / "Frontends" / "Inputs" / "attention"
MANIFEST = json.loads((INPUTS / "manifest.json").read_text())
FIXTURES = {f["name"]: f for f in MANIFEST["fixtures"]}
UNRAISED = "builtin.module(rope-to-llvm-cpu{emit-c-interface=true})"
MLIR_TYPES = {"float32": "f32", "int64": "i64", "int32": "i32", "bool": "i1"}


def _reference_module():
    # rope_mlir.reference is plain numpy; loaded by path like the generator.
    spec = importlib.util.spec_from_file_location(
        "rope_reference_attention",
        ROOT / "python" / "rope_mlir" / "reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


reference = _reference_module()


def _load(name):
    return load_fixture(INPUTS, FIXTURES, name)


_relative_error = relative_error


def _bhsd(x, layout):
    return x if layout == "bhsd" else x.transpose(0, 2, 1, 3)


def _attention(args, e):
    """softmax(scale q k^T + mask) v in float64 from `expect` alone: kv head
    h // (Hq / Hkv), RoPE by rope_mlir.reference where q/k are rotated."""
    ops = {}
    for name in ("q", "k", "v"):
        x = _bhsd(args[e[name]["arg"]].astype(np.float64), e["layout"])
        if e[name].get("rotated"):
            rope = e["rope"]
            pos = rope["positions"][name]
            kw = {}
            if pos["kind"] == "explicit":
                kw["positions"] = args[pos["arg"]].astype(np.int64)
            x = reference.apply(x, layout=rope["layout"], rotary_dim=rope["rotary_dim"],
                                base=rope["base"], token_dims=[0, 2], **kw)
        ops[name] = x
    heads = np.arange(e["Hq"]) // (e["Hq"] // e["Hkv"])
    q, k, v = ops["q"], ops["k"][:, heads], ops["v"][:, heads]
    s = np.einsum("bhqd,bhkd->bhqk", q, k) * e["scale"]
    mask, sq, sk = e["mask"], e["Sq"], e["Sk"]
    if mask["kind"] == "causal":
        visible = np.arange(sk)[None, :] <= np.arange(sq)[:, None] + sk - sq
        s = np.where(visible, s, -np.inf)
    elif mask["kind"] == "tensor":
        t = args[mask["arg"]]
        s = s + t if mask["type"] == "additive" else np.where(t, s, -np.inf)
    elif mask["kind"] == "positions":
        pos = args[mask["arg"]].astype(np.int64)
        s = np.where(np.arange(sk) <= pos[:, None, :, None], s, -np.inf)
    else:
        assert mask["kind"] == "none", mask
    assert not e["sliding_window"] and not e["softcap"]
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return _bhsd(np.einsum("bhqk,bhkd->bhqd", p, v), e["output_layout"])


def test_manifest_lists_every_fixture_file():
    on_disk = {p.stem for p in INPUTS.glob("*.mlir")}
    assert on_disk == set(FIXTURES), on_disk ^ set(FIXTURES)
    assert {p.stem for p in INPUTS.glob("*.npz")} == on_disk
    blocked = {b["name"] for b in MANIFEST["blocked"]}
    assert not blocked & on_disk
    assert all(b["error"] for b in MANIFEST["blocked"])


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_manifest_matches_the_data(name):
    fixture, text, args, refs, fronts = _load(name)
    assert len(args) == len(fixture["args"])
    for arg, entry in zip(args, fixture["args"]):
        assert list(arg.shape) == entry["shape"] and str(arg.dtype) == entry["dtype"]
    assert len(refs) == len(fronts) == len(fixture["outputs"]) == 1
    for ref, front, entry in zip(refs, fronts, fixture["outputs"]):
        assert list(ref.shape) == entry["shape"] == list(front.shape)
        assert ref.dtype == np.float64 and front.dtype == np.float32
    # One public @main whose argument types are the npz's.
    assert fixture["func"] == "main"
    assert len(re.findall(r"func\.func (?:public )?@", text)) == 1
    signature = re.search(r"func\.func (?:public )?@main\(([^)]*)\)", text).group(1)
    types = re.findall(r"tensor<([^>]*)>", signature)
    assert types == ["x".join(map(str, a.shape)) + "x" + MLIR_TYPES[str(a.dtype)]
                     for a in args]
    # The expect dims are the arguments' and the output's.
    e = fixture["expect"]
    q, k, v = (_bhsd(args[e[n]["arg"]], e["layout"]).shape for n in "qkv")
    assert q == (e["B"], e["Hq"], e["Sq"], e["D"])
    assert k == (e["B"], e["Hkv"], e["Sk"], e["D"])
    assert v == (e["B"], e["Hkv"], e["Sk"], e["Dv"])
    assert _bhsd(refs[0], e["output_layout"]).shape == (e["B"], e["Hq"], e["Sq"], e["Dv"])
    assert e["Hq"] % e["Hkv"] == 0


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_expect_says_what_the_reference_is(name):
    fixture, _, args, refs, _ = _load(name)
    assert _relative_error(_attention(args, fixture["expect"]), refs[0]) < 1e-12


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_unraised_fixture_runs_right(name):
    fixture, text, args, refs, fronts = _load(name)
    out = rope_mlir.jit(text, pipeline=UNRAISED).function(fixture["func"])(*args)
    outs = out if isinstance(out, tuple) else (out,)
    assert len(outs) == len(refs)
    for out, ref, front in zip(outs, refs, fronts):
        assert out.shape == ref.shape and out.dtype == front.dtype
        error = _relative_error(out, ref)
        assert error <= 2e-6, (name, error)
