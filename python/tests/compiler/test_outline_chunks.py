# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""rope-outline-chunks (rope-to-llvm-cpu's outline-max-ops) changes how LLVM
sees a model, not what it computes: zoo models compiled whole
(outline-max-ops=0), in the default chunks, and in many small chunks give
bitwise the same results (issue 33)."""

import numpy as np
import pytest

import rope_mlir
from frontend_fixture_io import load_zoo_module, zoo_manifest
from rope_mlir import compiled

MANIFEST = zoo_manifest()
CASES = [("llama", "prefill"), ("llama", "decode"), ("gemma2", "prefill"),
         ("deepseek_v3", "prefill")]


def pipeline(max_ops):
    return compiled.default_pipeline().replace(
        "rope-to-llvm-cpu{", f"rope-to-llvm-cpu{{outline-max-ops={max_ops} ",
        1)


def run(text, args, max_ops):
    module = rope_mlir.jit(text, pipeline(max_ops))
    outs = module.function("main")(*args)
    return outs if isinstance(outs, tuple) else (outs,)


@pytest.mark.parametrize("name,mode", CASES,
                         ids=[f"{n}-{m}" for n, m in CASES])
def test_chunked_model_is_bitwise_unchunked(name, mode):
    text, args, _, _ = load_zoo_module(MANIFEST, name, mode)
    whole = run(text, args, 0)
    # The pipeline's default, and chunks of ~100 ops (dozens of functions).
    for max_ops in (2000, 100):
        lowered = rope_mlir._jit.lower(text, pipeline(max_ops))
        if max_ops == 100:
            assert lowered.count("__chunk") > 10, "the model was not chunked"
        chunked = run(text, args, max_ops)
        assert len(chunked) == len(whole)
        for a, b in zip(whole, chunked):
            assert a.dtype == b.dtype and a.shape == b.shape
            assert np.array_equal(a.view(np.uint8), b.view(np.uint8)), (
                f"{name} {mode} outline-max-ops={max_ops}: results differ")
