#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Regenerate the QK-norm frontend fixtures of `--rope-raise` (test/Frontends/Inputs/neighbours/): Qwen3's
(and Gemma-3's) attention q/k path as torch-mlir's fx importer emits it in linalg-on-tensors IR, from
transformers' own modeling code: q_proj -> view -> q_norm (Qwen3RMSNorm over the head dim) -> transpose(1, 2)
-> apply_rotary_pos_emb with the model's rotary embedding, and the same for k. Not run in CI (it needs torch,
transformers, torch-mlir); the fixtures it writes are committed.

Environment (docs: ../shared/FRONTENDS.md): the peers' venv, e.g.

    /work/peers/bin/python scripts/gen-neighbour-fixtures.py          # from the repository root, ~1 minute
    options: --out DIR (default test/Frontends/Inputs/neighbours)

What it writes into the output folder, per fixture NAME:
  NAME.mlir   the importer's IR unchanged (one public func @main(hidden [B, S, 64], position_ids [B, S]) ->
              (q [B, 4, S, 32], k [B, 2, S, 32]); weights as dense_resource blobs);
  NAME.npz    arg0, arg1      the inputs of @main (hidden in the fixture's dtype as float32 values, i64 ids);
              ref0, ref1      float64 outputs: the same module code run in float64 (torch.float meaning float64);
              frontend0, 1    torch eager outputs in the fixture's dtype, widened to float32;
              q_norm_weight, k_norm_weight, eps   the norm's parameters (float64 copies), for tests that build
                              the expected rope.apply themselves.
Fixtures: qwen3_qk_norm (float32) and qwen3_qk_norm_bf16 (bfloat16 model: HF rounds x * rsqrt(...) to bf16 and
multiplies by the bf16 weight in bf16, then rotates in bf16; rope-raise computes in f32 and rounds once), and
gemma3_qk_norm_bf16 (Gemma-3: transpose(1, 2) first, then Gemma3RMSNorm: x.float() * rsqrt(...) * (1 + w.float())
in f32, cast to bf16; the op's weight is the frontend's own [D] f32 tensor 1 + w).

Checks (exit non-zero when one fails): each .mlir parses with /usr/lib/llvm-22/bin/mlir-opt; the f32 frontend
output equals the float64 reference within 1e-5 relative (max|y - r| / max|r|), the bf16 one within 2e-2.
"""

from __future__ import annotations

import argparse
import contextlib
import pathlib
import subprocess
import sys

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "test" / "Frontends" / "Inputs" / "neighbours"
MLIR_OPT = "/usr/lib/llvm-22/bin/mlir-opt"
SEED = 20261202
B, S = 2, 8
CONFIG = dict(hidden_size=64, num_attention_heads=4, num_key_value_heads=2, head_dim=32, intermediate_size=128,
              num_hidden_layers=1, vocab_size=32, rms_norm_eps=1e-6, max_position_embeddings=256)
FIXTURES = [("qwen3_qk_norm", "qwen3", "float32"), ("qwen3_qk_norm_bf16", "qwen3", "bfloat16"),
            ("gemma3_qk_norm_bf16", "gemma3", "bfloat16")]
POSITIONS = np.arange(S, dtype=np.int64)[None, :] + np.array([[0], [5]], dtype=np.int64)


@contextlib.contextmanager
def float64_mode():
    """Run model code in float64: the modeling code hard-codes torch.float / torch.float32 / .float()."""
    import torch
    saved = (torch.float, torch.float32, torch.Tensor.float, torch.get_default_dtype())
    torch.float = torch.float64
    torch.float32 = torch.float64
    torch.Tensor.float = lambda self, *a, **k: self.double(*a, **k)
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        torch.float, torch.float32, torch.Tensor.float = saved[:3]
        torch.set_default_dtype(saved[3])


def make_buffers_persistent(module) -> None:
    for sub in module.modules():
        for name in list(sub._non_persistent_buffers_set):
            t = sub._buffers[name]
            sub._non_persistent_buffers_set.discard(name)
            sub.register_buffer(name, t, persistent=True)


def build(model: str, dtype):
    """The model's own attention submodules and rotary embedding; forward runs the lines of its attention's
    forward up to the rotation (modeling_qwen3.py / modeling_gemma3.py), without the attention itself."""
    import torch

    if model == "qwen3":
        from transformers import Qwen3Config as Config
        from transformers.models.qwen3 import modeling_qwen3 as mm
        attention, rotary = mm.Qwen3Attention, mm.Qwen3RotaryEmbedding
    else:
        from transformers import Gemma3TextConfig as Config
        from transformers.models.gemma3 import modeling_gemma3 as mm
        attention, rotary = mm.Gemma3Attention, mm.Gemma3RotaryEmbedding
    cfg = Config(**CONFIG)

    class QKPath(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.attn = attention(cfg, layer_idx=0)
            self.rotary_emb = rotary(cfg)

        def forward(self, hidden_states, position_ids):
            a = self.attn
            hidden_shape = (*hidden_states.shape[:-1], -1, a.head_dim)
            if model == "qwen3":
                # Qwen3Attention.forward: the norm on [B, S, H, D], then the transpose.
                query_states = a.q_norm(a.q_proj(hidden_states).view(hidden_shape)).transpose(1, 2)
                key_states = a.k_norm(a.k_proj(hidden_states).view(hidden_shape)).transpose(1, 2)
                cos, sin = self.rotary_emb(hidden_states, position_ids)
            else:
                # Gemma3Attention.forward: the transpose, then the norm (x * rsqrt(...) * (1 + w) in f32).
                query_states = a.q_norm(a.q_proj(hidden_states).view(hidden_shape).transpose(1, 2))
                key_states = a.k_norm(a.k_proj(hidden_states).view(hidden_shape).transpose(1, 2))
                cos, sin = self.rotary_emb(hidden_states, position_ids, cfg.layer_types[0])
            return mm.apply_rotary_pos_emb(query_states, key_states, cos, sin)

    torch.manual_seed(SEED)
    m = QKPath()
    with torch.no_grad():
        # Norm weights away from their init (ones for Qwen3, zeros for Gemma's 1 + w), so a dropped weight shows.
        for norm in (m.attn.q_norm, m.attn.k_norm):
            norm.weight.copy_((1.0 if model == "qwen3" else 0.0) + 0.25 * torch.randn(norm.weight.shape))
    return m.to(dtype).eval()


def fixture(name: str, model: str, dtype_name: str, out_dir: pathlib.Path) -> list:
    import torch
    from torch_mlir import fx
    from torch_mlir.compiler_utils import OutputType

    dtype = getattr(torch, dtype_name)
    g = np.random.default_rng([SEED, sum(map(ord, name))])
    hidden = torch.from_numpy(g.standard_normal((B, S, CONFIG["hidden_size"])).astype(np.float32)).to(dtype)
    pos = torch.from_numpy(POSITIONS.copy())
    m = build(model, dtype)
    make_buffers_persistent(m)
    with torch.no_grad():
        outs = [o.float().numpy().copy() for o in m(hidden, pos)]
    state = {k: v.double() for k, v in m.state_dict().items()}
    with float64_mode(), torch.no_grad():
        m64 = build(model, torch.float64)
        make_buffers_persistent(m64)
        # The same weights (the bf16 ones widened exactly); buffers (inv_freq) recomputed in float64.
        m64.load_state_dict({k: v for k, v in state.items() if "inv_freq" not in k}, strict=False)
        refs = [o.numpy().astype(np.float64) for o in m64(hidden.double(), pos)]
    mod = fx.export_and_import(m, hidden, pos, output_type=OutputType.LINALG_ON_TENSORS, func_name="main")
    text = str(mod)
    (out_dir / f"{name}.mlir").write_text(text if text.endswith("\n") else text + "\n")
    np.savez_compressed(
        out_dir / f"{name}.npz", arg0=hidden.float().numpy(), arg1=POSITIONS,
        ref0=refs[0], ref1=refs[1], frontend0=outs[0], frontend1=outs[1],
        q_norm_weight=m.attn.q_norm.weight.double().detach().numpy(),
        k_norm_weight=m.attn.k_norm.weight.double().detach().numpy(), eps=np.float64(CONFIG["rms_norm_eps"]))

    problems = []
    parsed = subprocess.run([MLIR_OPT, str(out_dir / f"{name}.mlir"), "-o", "/dev/null"], capture_output=True,
                            text=True)
    if parsed.returncode != 0:
        problems.append(f"mlir-opt cannot parse it: {parsed.stderr[:500]}")
    tol = 1e-5 if dtype == torch.float32 else 2e-2
    for i, (o, r) in enumerate(zip(outs, refs)):
        err = float(np.max(np.abs(o - r)) / np.max(np.abs(r)))
        print(f"   output {i}: frontend vs float64 {err:.2e} (tolerance {tol})")
        if not err < tol:
            problems.append(f"output {i}: frontend vs float64 reference {err:.2e} >= {tol}")
    return problems


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=pathlib.Path, default=DEFAULT_OUT)
    opts = ap.parse_args(argv)
    import torch  # noqa: F401  (before anything else native; see FRONTENDS.md)
    opts.out.mkdir(parents=True, exist_ok=True)
    failed = []
    for name, model, dtype in FIXTURES:
        print(f"== {name}", flush=True)
        problems = fixture(name, model, dtype, opts.out)
        for p in problems:
            print(f"   FAIL: {p}")
        if problems:
            failed.append(name)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
