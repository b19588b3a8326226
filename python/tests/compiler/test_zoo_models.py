# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Every model of the zoo (test/Frontends/Inputs/zoo: whole transformers
models exported by their frontends, made by scripts/gen-model-zoo.py) runs
right through `rope_mlir.jit` with the default pipeline, which raises RoPE
and attention (`--rope-optimize`) before lowering: its logits are compared
with the float64 logits of the model's own code, and must be within twice
the frontend's own f32 error (torch eager, onnxruntime, JAX: the .npz's
`frontend0`), as issue 33 asks, in two measures over every result (logits,
and the decode step's new keys and values):
- the largest error, max|y - ref| / max|ref|, within twice the frontend's
  or twice FLOOR_MAX, whichever is larger: one sample's largest rounding
  error is luck of the summation order (the frontend's BLAS blocks its sums,
  ours are sequential or in register tiles), and a few ulps of the largest
  logit is as close as any f32 result gets;
- the root-mean-square error over all elements, within RMS_RATIO times
  the frontend's (no floor): a systematic loss of accuracy, such as the GELU
  constant torch-mlir once exported 2e-4 off (9326417: 113x on Gemma 2's
  decode logits), shows here, while the order of the sums gives up to 2.6x
  (a decode step's cache results: a few hundred computed elements among
  copied ones).
The raised counts are pinned by test/Frontends/zoo-raise.mlir."""

import numpy as np
import pytest

import rope_mlir
from frontend_fixture_io import load_zoo_module, zoo_manifest

MANIFEST = zoo_manifest()
CASES = [(model["name"], mode) for model in MANIFEST["models"]
         for mode in sorted(model["modes"])]
# The floor of the 2x rule on the largest error: four units in the last
# place (2^-23) of the largest value. An f32 result summed over 64..256
# channels through two layers is no closer than that in its worst element,
# however close the frontend happened to be.
FLOOR_MAX = 4 * 2.0 ** -23
RMS_RATIO = 4.0


def relative_errors(y, ref):
    """(largest, root-mean-square) of |y - ref| / max|ref|."""
    ref = np.asarray(ref, np.float64)
    error = np.abs(np.asarray(y, np.float64) - ref) / np.abs(ref).max()
    return float(error.max()), float(np.sqrt(np.mean(error ** 2)))


def assert_within_frontend_bounds(outs, refs, frontends, label):
    """Each result against float64 within the bounds above: its largest
    error within twice the frontend's (or FLOOR_MAX), its rms error within
    RMS_RATIO times the frontend's."""
    outs = outs if isinstance(outs, tuple) else (outs,)
    assert len(outs) == len(refs) == len(frontends)
    for i, (ref, frontend) in enumerate(zip(refs, frontends)):
        assert outs[i].shape == ref.shape, (i, outs[i].shape, ref.shape)
        ours_max, ours_rms = relative_errors(outs[i], ref)
        theirs_max, theirs_rms = relative_errors(frontend, ref)
        assert ours_max <= 2 * max(theirs_max, FLOOR_MAX), (
            f"{label} result {i}: largest error {ours_max:.2e} from "
            f"float64, the frontend's f32 {theirs_max:.2e}")
        assert ours_rms <= RMS_RATIO * theirs_rms, (
            f"{label} result {i}: rms error {ours_rms:.2e} from "
            f"float64, the frontend's f32 {theirs_rms:.2e}")


@pytest.mark.parametrize("name,mode", CASES,
                         ids=[f"{n}-{m}" for n, m in CASES])
def test_zoo_model_runs_right(name, mode):
    text, args, refs, frontends = load_zoo_module(MANIFEST, name, mode)
    module = rope_mlir.jit(text)
    outs = module.function("main")(*args)
    assert_within_frontend_bounds(outs, refs, frontends, f"{name} {mode}")
