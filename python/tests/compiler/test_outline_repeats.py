# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""rope-outline-repeats (rope-to-llvm-cpu's outline-repeats) compiles a
model's repeated layers once and calls them per layer; it changes how much
code the passes after it and LLVM see, not what the model computes (issue
33). The 4-layer narrow Llama (test/Frontends/Inputs/layers, written by
`bench/compile_bench.py --generate 4 DIR` with the peers' venv) has two
middle layers that repeat (the first and the last read the prologue and
feed the final norm in their own ways)."""

import pathlib

import numpy as np
import pytest

import rope_mlir
from frontend_fixture_io import numbered_arrays, relative_error
from rope_mlir import compiled

import _paths

LAYERS = (_paths.ROOT / "test" / "Frontends" /
          "Inputs" / "layers")


def pipeline(repeats: bool) -> str:
    return compiled.default_pipeline().replace(
        "rope-to-llvm-cpu{",
        f"rope-to-llvm-cpu{{outline-repeats={'true' if repeats else 'false'} ",
        1)


@pytest.fixture(scope="module")
def model():
    stem = LAYERS / "llama_L4_prefill"
    data = np.load(f"{stem}.npz")
    return (pathlib.Path(f"{stem}.mlir").read_text(),
            numbered_arrays(data, "arg"), numbered_arrays(data, "ref"),
            numbered_arrays(data, "frontend"))


def run(text, args, repeats):
    outs = rope_mlir.jit(text, pipeline(repeats)).function("main")(*args)
    return outs if isinstance(outs, tuple) else (outs,)


def test_repeated_layers_are_one_function(model):
    text = model[0]
    outlined = rope_mlir._jit.lower(text, pipeline(True))
    assert outlined.count("llvm.call @main__repeat(") == 2
    assert outlined.count("llvm.func internal @main__repeat(") == 1
    inline = rope_mlir._jit.lower(text, pipeline(False))
    assert "main__repeat" not in inline
    # One layer's code, not two: a quarter of the 4-layer model's code is
    # gone (the weights, in the resource section after `{-#`, all stay).
    def code_lines(module):
        return module.split("{-#")[0].count("\n")
    assert code_lines(outlined) < 0.85 * code_lines(inline)


def test_outlined_model_is_bitwise_inline_and_right(model):
    text, args, refs, frontend = model
    outlined = run(text, args, True)
    inline = run(text, args, False)
    assert len(outlined) == len(inline) == len(refs)
    for a, b in zip(outlined, inline):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert np.array_equal(a.view(np.uint8), b.view(np.uint8))
    for ours, ref, torch_f32 in zip(outlined, refs, frontend):
        # Within 2x the frontend's own f32 error of float64 (4 ulps floor),
        # as test_zoo_models asks of every zoo model.
        bound = max(2 * relative_error(torch_f32, ref), 4 * 2.0**-24)
        assert relative_error(ours, ref) <= bound
