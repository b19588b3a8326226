# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""rope.apply's TilingInterface, executed: the random cases of
test_differential.py, tiled with the transform dialect
(`transform.structured.tile_using_for`) before the CPU pipeline, must match
the float64 reference like the untiled op.

Tiling re-expresses positions per tile (sliced explicit positions and
pre-gathered caches, offsets shifted by the tile start, implicit positions
turned into offsets, the whole call's length for dynamic schemes), so these
cases exercise every position form, cache form, layout and dtype through
tiles that do not divide the shapes.
"""

from __future__ import annotations

import pytest

from rope_mlir import kernel as kernel_module

from test_differential import NUM_CASES, check, make_case, run_case

_SCRIPT = """module attributes {{transform.with_named_sequence}} {{
  transform.named_sequence @__transform_main(%root: !transform.any_op {{transform.readonly}}) {{
    %op = transform.structured.match ops{{["rope.apply"]}} in %root : (!transform.any_op) -> !transform.any_op
    %t, %loops:{n} = transform.structured.tile_using_for %op tile_sizes [{sizes}] : (!transform.any_op) -> (!transform.any_op{loop_types})
    transform.yield
  }}
}}
"""


def tiled_kernel_factory(tmp_path, sizes):
    """A kernel factory whose pipeline tiles every rope.apply by `sizes`
    (one per leading dim) first."""
    script = tmp_path / "tile.mlir"
    script.write_text(_SCRIPT.format(
        n=len(sizes), sizes=", ".join(map(str, sizes)),
        loop_types=", !transform.any_op" * len(sizes)))

    def make(config):
        pipeline = kernel_module.pipeline(config)
        assert pipeline.startswith("builtin.module(")
        tiled = ("builtin.module(transform-preload-library{transform-library-"
                 f"paths={script}}}, transform-interpreter, canonicalize, "
                 + pipeline[len("builtin.module("):])
        original = kernel_module.pipeline
        kernel_module.pipeline = lambda _: tiled
        try:
            return kernel_module.Kernel(config)  # uncached: a tiled build
        finally:
            kernel_module.pipeline = original
    return make


@pytest.mark.parametrize("seed", range(1, NUM_CASES, 8))
def test_tiled_random_case(seed, tmp_path):
    case = make_case(seed)
    # Tile every dim but the channels: by 2 (rows), 3 (sequence), 2 (heads).
    sizes = [2, 3, 2][: len(case.shape) - 1]
    x, got, ref = run_case(case, make_kernel=tiled_kernel_factory(
        tmp_path, sizes))
    check(case, x, got, ref)


# Dynamic schemes: each tile must use the whole call's length (max position
# + 1), not its own; M-RoPE positions are sliced with their axis kept.
_SCALED = [
    ("#rope.dynamic_ntk<factor = 4.0, max_position_embeddings = 64>",
     {"rope_type": "dynamic", "factor": 4.0, "max_position_embeddings": 64},
     None, "explicit"),
    ("#rope.dynamic_ntk<factor = 4.0, max_position_embeddings = 64>",
     {"rope_type": "dynamic", "factor": 4.0, "max_position_embeddings": 64},
     None, "offset"),
    ("#rope.longrope<short_factor = [1.0, 1.5, 2.0, 2.5], "
     "long_factor = [3.0, 5.0, 7.0, 9.0], "
     "original_max_position_embeddings = 64, attention_factor = 1.25>",
     {"rope_type": "longrope", "short_factor": [1.0, 1.5, 2.0, 2.5],
      "long_factor": [3.0, 5.0, 7.0, 9.0],
      "original_max_position_embeddings": 64, "attention_factor": 1.25},
     None, "explicit"),
    ("#rope.default<base = 10000.0>", None, (2, 1, 1), "explicit"),
]


@pytest.mark.parametrize("freqs, scaling, mrope, form", _SCALED)
def test_tiled_scaled(freqs, scaling, mrope, form, tmp_path):
    import numpy as np

    import rope_mlir
    from rope_mlir import reference

    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 10, 2, 8)).astype(np.float32)
    mag = reference.inv_frequencies(8, 10000.0, scaling, seq_len=1000)[1] \
        if scaling else 1.0
    config = rope_mlir.KernelConfig(
        dtype="f32", rank=4, head_dim=8, freqs=freqs, magnitude=mag,
        positions=form,
        mrope=(None if mrope is None else
               f"#rope.mrope<section = [{', '.join(map(str, mrope))}]>"))
    kernel = tiled_kernel_factory(tmp_path, [2, 3])(config)
    if form == "offset":
        # The last tile's positions (offset + 9) decide the length: > M.
        positions, offset = None, 100
    else:
        shape = (3, 3, 10) if mrope else (3, 10)
        # Only the last token is past the original length: every tile but
        # one would choose the short factors / unscaled base on its own.
        positions = rng.integers(0, 60, shape)
        positions[..., -1, -1] = 900
        offset = 0
    got = kernel(x, positions, offset=offset)
    ref = reference.apply(x, positions, offset=None if form != "offset"
                          else offset, scaling=scaling, mrope_section=mrope)
    assert np.abs(got - ref).max() <= 1e-6 * np.abs(ref).max()
