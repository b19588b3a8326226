# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Every model of the zoo (test/Frontends/Inputs/zoo: whole transformers
models exported by their frontends, made by scripts/gen-model-zoo.py) runs
right through `rope_mlir.jit` with the default pipeline, which raises RoPE
and attention (`--rope-optimize`) before lowering: its logits are compared
with the float64 logits of the model's own code, and must be within twice
the frontend's own f32 error (torch eager, onnxruntime, JAX: the .npz's
`frontend0`), as issue 33 asks. The raised counts are pinned by
test/Frontends/zoo-raise.mlir."""

import json
import pathlib

import numpy as np
import pytest

import rope_mlir

ZOO = pathlib.Path(__file__).resolve().parents[2] / "test" / "Frontends" / \
    "Inputs" / "zoo"
MANIFEST = json.loads((ZOO / "manifest.json").read_text())
CASES = [(model["name"], mode) for model in MANIFEST["models"]
         for mode in sorted(model["modes"])]
# The floor for the 2x rule: an f32 result is no closer to float64 than a
# few ulps of its largest value, however close the frontend happened to be.
FLOOR = 2.5e-7


def relative_error(y, ref) -> float:
    ref = np.asarray(ref, np.float64)
    return float(np.abs(np.asarray(y, np.float64) - ref).max() /
                 np.abs(ref).max())


@pytest.mark.parametrize("name,mode", CASES,
                         ids=[f"{n}-{m}" for n, m in CASES])
def test_zoo_model_runs_right(name, mode):
    entry = next(m for m in MANIFEST["models"] if m["name"] == name)
    info = entry["modes"][mode]
    data = np.load(ZOO / info["data"])
    args = [data[f"arg{i}"] for i in
            range(sum(k.startswith("arg") for k in data.files))]
    module = rope_mlir.jit((ZOO / info["file"]).read_text())
    outs = module.function("main")(*args)
    outs = outs if isinstance(outs, tuple) else (outs,)
    refs = sorted(k for k in data.files if k.startswith("ref"))
    assert len(outs) == len(refs)
    for i in range(len(refs)):
        ref, frontend = data[f"ref{i}"], data[f"frontend{i}"]
        assert outs[i].shape == ref.shape, (i, outs[i].shape, ref.shape)
        ours = relative_error(outs[i], ref)
        theirs = relative_error(frontend, ref)
        assert ours <= 2 * max(theirs, FLOOR), (
            f"{name} {mode} result {i}: {ours:.2e} from float64, the "
            f"frontend's f32 {theirs:.2e}")
