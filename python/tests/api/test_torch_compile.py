# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""rope_mlir.torch (issue 34): PyTorch in one line.

`rope_mlir.torch.compile(model, example_inputs)` on zoo models built from
transformers' own modeling code (the zoo manifest's configs, random weights):
every rotation and attention raised, logits within twice torch eager's own
error of float64 (the model run in float64 by the same code); the
torch.compile backend on one. These need torch, torch-mlir and transformers
(the peers' environment: `PYTHONPATH=python ../peers/bin/python -m pytest
python/tests/api/test_torch_compile.py`) and skip without them, saying so. The
first test runs everywhere: without torch the call names the missing extra.
"""

import copy
import importlib.util
import json
import sys
import warnings

import numpy as np
import pytest

import rope_mlir

import _paths

ROOT = _paths.ROOT
MANIFEST = json.loads(
    (ROOT / "test/Frontends/Inputs/zoo/manifest.json").read_text())
MODELS = {m["name"]: m for m in MANIFEST["models"]}
PEERS = ("torch", "torch_mlir", "transformers")
MISSING = [name for name in PEERS if importlib.util.find_spec(name) is None]
needs_peers = pytest.mark.skipif(
    bool(MISSING), reason=f"needs {', '.join(MISSING)} (the peers' venv)")


def test_without_torch_the_call_names_the_extra(monkeypatch):
    import rope_mlir.torch as rt
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(ImportError, match=r"rope-mlir\[torch\]"):
        rt.compile(lambda x: x, ())


def build(name):
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM
    spec = MODELS[name]
    config = AutoConfig.for_model(spec["model_type"],
                                  **copy.deepcopy(spec["config"]))
    config._attn_implementation = \
        spec["modes"]["prefill"]["export_options"]["attn_implementation"]
    torch.manual_seed(33)
    model = AutoModelForCausalLM.from_config(config).eval()

    class Logits(torch.nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, position_ids):
            return self.inner(input_ids=input_ids, position_ids=position_ids,
                              use_cache=False).logits
    return Logits(model).eval()


def relative(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def inputs(torch, tokens=16, offset=3):
    g = torch.Generator().manual_seed(7)
    ids = torch.randint(3, 256, (1, tokens), generator=g)
    pos = torch.arange(offset, offset + tokens)[None]
    return ids, pos


@needs_peers
@pytest.mark.parametrize("name", ["llama", "qwen3", "phi3", "gemma3_text",
                                  "glm4"])
def test_compile_zoo_model_raises_and_matches_eager(name):
    import torch
    model = build(name)
    ids, pos = inputs(torch)
    with torch.no_grad():
        before = model(ids, pos)
    fast = rope_mlir.torch.compile(model, (ids, pos))
    expected = MODELS[name]["expected"]
    assert fast.raised() == {"rotations": expected["rotations"],
                             "attentions": expected["attentions"]}
    with torch.no_grad():
        eager = model(ids, pos)
        f64 = copy.deepcopy(model).double()(ids, pos)
    # The caller's model is as it was (the export leaves no fake tensor in
    # it: Phi-3's forward assigns its LongRoPE frequencies).
    assert torch.equal(eager, before)
    out = fast(ids, pos)
    assert isinstance(out, torch.Tensor) and out.shape == eager.shape
    ours, theirs = relative(out, f64), relative(eager, f64)
    assert ours <= 2 * max(theirs, 1e-7), (name, ours, theirs)
    # Other inputs of the same shapes: the same compiled model.
    ids2, pos2 = inputs(torch, offset=40)
    with torch.no_grad():
        eager2 = model(ids2, pos2)
    assert relative(fast(ids2, pos2), eager2) < 1e-5


@needs_peers
def test_compile_refuses_other_shapes_and_devices():
    import torch
    model = build("llama")
    ids, pos = inputs(torch)
    fast = rope_mlir.torch.compile(model, (ids, pos))
    with pytest.raises(ValueError, match="argument 0 is .*compiled for"):
        fast(ids[:, :8], pos[:, :8])
    with pytest.raises(TypeError, match="takes 2 tensors"):
        fast(ids)
    with pytest.raises(TypeError, match="argument 1 must be a torch.Tensor"):
        fast(ids, pos.numpy())
    with pytest.raises(TypeError, match=r"example_inputs\[1\]"):
        rope_mlir.torch.compile(model, (ids, [1, 2]))


@needs_peers
def test_compiled_model_refuses_bad_arguments():
    # Every argument is checked before anything reaches compiled code.
    import torch
    model = build("llama")
    ids, pos = inputs(torch)
    fast = rope_mlir.torch.compile(model, (ids, pos))
    with pytest.raises(ValueError, match="argument 0 is .*int32.*compiled for"):
        fast(ids.to(torch.int32), pos)
    with pytest.raises(ValueError, match="argument 1 is .*compiled for"):
        fast(ids, pos[:, :8])
    with pytest.raises(ValueError, match="argument 0 is on meta"):
        fast(torch.empty_like(ids, device="meta"), pos)
    # A strided view of the right shape is read as strided (or refused),
    # never as if it were contiguous.
    wide = torch.stack([ids, ids + 1], dim=-1).reshape(1, 2 * ids.shape[1])
    strided = wide[:, ::2]
    assert not strided.is_contiguous() and torch.equal(strided, ids)
    with torch.no_grad():
        eager = model(ids, pos)
    try:
        out = fast(strided, pos)
    except (TypeError, ValueError):
        pass
    else:
        assert relative(out, eager) < 1e-5


@needs_peers
def test_compile_refuses_bad_models_and_inputs():
    import torch
    with pytest.raises(TypeError, match="model_or_fn must be"):
        rope_mlir.torch.compile(42, (torch.zeros(2),))
    with pytest.raises(TypeError, match="example_inputs must be"):
        rope_mlir.torch.compile(lambda x: x, "not tensors")
    with pytest.raises(ValueError, match=r"example_inputs\[0\] is on meta"):
        rope_mlir.torch.compile(lambda x: x, (torch.zeros(2, device="meta"),))


@needs_peers
def test_register_backend_is_idempotent_and_falls_back_on_bad_graphs():
    import torch
    import rope_mlir.torch as rt
    assert rt.register_backend() and rt.register_backend()
    assert rt.BACKEND_NAME in torch._dynamo.list_backends(exclude_tags=())

    class Scale(torch.nn.Module):
        def forward(self, x, n):
            return x * n
    graph = torch.fx.symbolic_trace(Scale())
    # A graph input that is not a tensor: left to torch, with a warning
    # naming why, and the graph still computes right.
    with pytest.warns(rt.RopeBackendFallbackWarning, match="not a tensor"):
        run = rt._backend(graph, [torch.ones(3), 2])
    assert torch.equal(run(torch.ones(3), 2), torch.full((3,), 2.0))


@needs_peers
def test_torch_compile_backend_runs_the_graph():
    import torch
    import rope_mlir.torch as rt
    model = build("qwen3")
    ids, pos = inputs(torch)
    with torch.no_grad():
        eager = model(ids, pos)
        f64 = copy.deepcopy(model).double()(ids, pos)
    compiled = torch.compile(model, backend=rt.BACKEND_NAME, dynamic=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", rt.RopeBackendFallbackWarning)
        with torch.no_grad():
            out = compiled(ids, pos)
    assert relative(out, f64) <= 2 * max(relative(eager, f64), 1e-7)
