# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Zoo models rewritten the way a host compiler may rewrite them before
rope-mlir sees them (upstream linalg passes: unit dims folded into
rank-reducing slices, elementwise fusion, named ops generalized, and
generalized then fused: RoPE computed inside the transpose of K and inside
the Q.K^T contraction; unit dims folded then fused: the rotated query heads
reshaped into KV groups inside Q.K^T) still
raise every rotation and attention, and still run right.

scripts/metamorphic.py compares the raised ops' attributes on every zoo
module under every rewrite; this test runs a few of the rewritten modules,
so that an attention raised through a rewrite's spelling (the slices of
`use-rank-reducing-slices`, read as the reshapes they are) is also shown
to compute what the model computes: the logits against the model's own
float64 ones, within the bounds of test_zoo_models."""

import pytest

import rope_mlir
from rope_mlir import _jit
from frontend_fixture_io import load_zoo_module, zoo_manifest
from test_zoo_models import assert_within_frontend_bounds

import _paths

MANIFEST = zoo_manifest()
MODELS = {model["name"]: model for model in MANIFEST["models"]}

REWRITES = {
    "fold-unit-slices": "linalg-fold-unit-extent-dims{use-rank-reducing-slices}",
    "fuse": "linalg-fuse-elementwise-ops",
    "generalize": "linalg-generalize-named-ops",
    "gen-fuse": "linalg-generalize-named-ops,linalg-fuse-elementwise-ops",
    "fold-fuse": "linalg-fold-unit-extent-dims,linalg-fuse-elementwise-ops",
    "fold-unit": "linalg-fold-unit-extent-dims",
    "generalize-norm": "linalg-generalize-named-ops",
    "gen-fuse-fold-canon": "linalg-generalize-named-ops,"
                           "linalg-fuse-elementwise-ops,"
                           "linalg-fold-unit-extent-dims,canonicalize,cse",
}
CASES = [(name, mode, rewrite)
         for name in ("llama", "qwen2", "gpt_oss")
         for mode in ("prefill", "decode")
         for rewrite in ("fold-unit-slices", "fuse")] + [
    ("phi3", "prefill", "generalize"), ("llama", "prefill", "gen-fuse"),
    ("qwen2", "prefill", "gen-fuse"), ("mistral", "prefill", "gen-fuse"),
    # The query heads of a KV group flattened back into one dim around the
    # rotation fused into Q.K^T (read as a set of frames).
    ("llama", "prefill", "fold-fuse"), ("llama", "decode", "fold-fuse"),
    ("qwen2", "decode", "fold-fuse"), ("gpt_oss", "prefill", "fold-fuse"),
    # The row max, row sum and fully-masked-row guard reduce a unit dim next
    # to the keys (M-RoPE's stream dim folded and fused).
    ("qwen2_vl_text", "prefill", "fold-fuse"),
    ("qwen2_vl_text", "decode", "fold-fuse"),
    # QK-norm folded into the rotation after the unit dims are folded (the
    # norm read through unit reshapes) and after named ops are generalized.
    ("qwen3", "prefill", "fold-unit"), ("gemma3_text", "prefill", "fold-unit"),
    ("qwen3", "decode", "generalize-norm"),
    # Decode steps: the rotation is raised with a token dim of size 1 the
    # folded norm lacks.
    ("qwen3", "decode", "fold-unit"), ("gemma3_text", "decode", "fold-unit"),
    # The unit reshapes spelled as whole rank-reducing slices (and the sum
    # started from a slice of a zero fill).
    ("qwen3", "prefill", "fold-unit-slices"),
    ("gemma3_text", "decode", "fold-unit-slices"),
    # A decode step's key-only mask (keys <= t) with the query's unit dim
    # folded away: causal on the op's own unit query loop.
    ("llama_jax", "decode", "fold-unit"),
    # SDPA's sqrt(scale) fused into either rotation: the magnitude joins the
    # attention's scale after a QK-norm and from LongRoPE's attention_factor.
    ("qwen3", "prefill", "gen-fuse"), ("phi3", "prefill", "gen-fuse"),
    # The QK-norm's x read through the heads split into KV groups (q's
    # rotation fused into Q.K^T after the unit dims are folded).
    ("qwen3", "prefill", "fold-fuse"), ("gemma3_text", "decode", "fold-fuse"),
    # SDPA's sqrt(scale) fused into the decode step's Q.K^T payload itself.
    ("gpt_neox", "decode", "gen-fuse-fold-canon"),
    ("deepseek_v3", "decode", "gen-fuse-fold-canon"),
    # q's two views of one projection (canonicalize folded the copy between
    # them) read as one tensor.
    ("olmo2", "decode", "gen-fuse-fold-canon"),
    ("phi3", "decode", "gen-fuse-fold-canon"),
    # JAX's timescale base^(2i/d) fused into the decode step's angle generic
    # (no token loop left to split it out by).
    ("llama_jax", "decode", "fold-fuse"),
    ("llama_jax", "decode", "gen-fuse-fold-canon"),
    # LongRoPE's two tables selected in the decode step's angle payload,
    # with the position (the same loops at one token).
    ("phi3_onnx", "decode", "fold-fuse"),
    # Llama 4's L2-normalized q and k times SDPA's sqrt(scale) in one
    # generic: Q and K are copies of it without the factor.
    ("llama4_text", "prefill", "gen-fuse"),
    ("llama4_text", "decode", "gen-fuse"),
    # Llama 4's rotation duplicated per consumer by the fold: raised once.
    ("llama4_text", "prefill", "fold-unit"),
    ("llama4_text", "decode", "fold-unit"),
    # The rotation ends in view_as_real's [..., D/2, 2], which the folded and
    # fused consumers keep apart (Llama 4's complex rotation, Cohere's
    # interleaved one): raised with the last two dims as its channels and
    # expanded back; Q.K^T then contracts the channels as two dims, read as
    # one channel loop of the attention.
    ("llama4_text", "prefill", "fold-fuse"), ("llama4_text", "decode", "fold-fuse"),
    ("cohere", "prefill", "fold-fuse"), ("cohere", "decode", "fold-fuse")]


def rewritten(text, rewrite):
    return _jit.lower(text, f"builtin.module(func.func({REWRITES[rewrite]}))")


def expected_counts(name):
    expected = MODELS[name]["expected"]
    return expected["rotations"], expected["attentions"]


@pytest.mark.parametrize("name,mode,rewrite", CASES,
                         ids=[f"{n}-{m}-{r}" for n, m, r in CASES])
def test_rewritten_zoo_model_raises_and_runs_right(name, mode, rewrite):
    text, args, refs, frontends = load_zoo_module(MANIFEST, name, mode)
    text = rewritten(text, rewrite)
    assert "rope.attention" not in text and "rope.apply" not in text

    raised = _jit.lower(text, "builtin.module(rope-raise)")
    rotations, attentions = expected_counts(name)
    if name in ("qwen3", "gemma3_text"):
        assert raised.count(") norm(") == rotations, (name, mode, rewrite)
    assert raised.count("rope.apply ins(") == rotations, (name, mode, rewrite)
    assert raised.count("rope.attention ins(") == attentions, (
        name, mode, rewrite)

    outs = rope_mlir.jit(text).function("main")(*args)
    assert_within_frontend_bounds(outs, refs, frontends,
                                  f"{name} {mode} {rewrite}")



def lit_case(path, name):
    """The function `name` of a lit test split at `// -----`."""
    for chunk in path.read_text().split("// -----"):
        if f"func.func @{name}(" in chunk:
            return chunk
    raise KeyError(name)


def test_rank1_key_rotation_raises_and_runs_right():
    # The MQA variant zoo's decode-step key after fold-unit: a rank-1
    # rotation reading x through a whole collapse and through slices
    # (test/Transforms/Raise/rope-raise-metamorphic.mlir). Raised, it must still
    # compute the frontend's rotate_half against float64.
    import numpy as np
    root = _paths.ROOT
    text = lit_case(root / "test/Transforms/Raise/rope-raise-metamorphic.mlir",
                    "rank1_key_read_two_ways")
    raised = _jit.lower(text, "builtin.module(rope-raise)")
    assert raised.count("rope.apply ins(") == 1
    assert "math.cos" not in raised
    # The table is base 10000's frequencies rounded to f32: raised as
    # #rope.default, whose angle is pos * 10000^(-2i/32) in float64.
    assert "#rope.default" in raised
    inv = 10000.0 ** (-np.arange(0, 32, 2) / 32.0)
    fn = rope_mlir.jit(text).function("rank1_key_read_two_ways")
    rng = np.random.default_rng(33)
    for pos in (0, 1, 17, 1000, 4095):
        x = rng.standard_normal((1, 1, 1, 32)).astype(np.float32)
        y = np.asarray(fn(x, np.array([[pos]], dtype=np.int64)))
        angle = np.concatenate([pos * inv, pos * inv])
        xs = x.reshape(32).astype(np.float64)
        rot = np.concatenate([-xs[16:], xs[:16]])
        ref = xs * np.cos(angle) + rot * np.sin(angle)
        err = np.max(np.abs(y.reshape(32) - ref)) / np.max(np.abs(ref))
        assert err < 1e-6, (pos, err)
