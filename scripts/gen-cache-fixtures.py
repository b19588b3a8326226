#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Regenerate the KV-cache append frontend fixtures of `--rope-raise` (test/Frontends/Inputs/cache/): a
rotated K written into a cache at a runtime position, as the frontends emit it in linalg-on-tensors IR. Not
run in CI (it needs jax, IREE, torch, torch-mlir); the fixtures it writes are committed.

Environment (docs: ../shared/FRONTENDS.md): the peers' venv, e.g.

    /work/peers/bin/python scripts/gen-cache-fixtures.py          # from the repository root, ~20 s
    options: --out DIR (default test/Frontends/Inputs/cache)

Fixtures (NAME.mlir: the frontend's IR unchanged; NAME.npz: arg0.. the inputs of @main, ref0 the float64
result computed in numpy from the same formulas, frontend0 the frontend's own f32 result):
  jax_dynamic_update_slice   JAX rotate_half RoPE on k [B, S, Hkv, D] (inv_freq computed in the graph,
                             positions int32 [B, S]) then `lax.dynamic_update_slice(cache, k_rot, (0, idx, 0,
                             0))` into a contiguous [B, max_len, Hkv, D] cache, idx an int32 scalar: jax.jit ->
                             StableHLO -> `iree-opt iree-stablehlo-to-iree-input`. The update becomes
                             tensor.insert_slice at offsets (0, clamp(idx, 0, max_len - S), 0, 0) (maxsi/minsi:
                             dynamic_update_slice's clamping, kept as is by the raise).
  torch_slice_scatter        HF-style rotate_half RoPE on k [B, Hkv, S, D] then `torch.slice_scatter(cache,
                             k_rot, dim=2, start=s, end=s + S)` into an HF [B, Hkv, max_len, D] cache, s =
                             start.item() with torch._check bounds (the functional form of `cache[:, :, s:s+S] =
                             k_rot`): torch-mlir fx LINALG_ON_TENSORS. The update becomes tensor.insert_slice at
                             (0, 0, s, 0).
Not a fixture: HF StaticCache's `index_copy_(2, cache_position, k)` through torch-mlir is a `tm_tensor.scatter`
(unique_indices(true), 4-column i64 indices of every element [B*H*S*D, 4], built from iota generics), which
MLIR 22 cannot parse ("Dialect `tm_tensor' not found"); the script prints its first lines when --show-index-copy
is given. Raising it would need the tm_tensor dialect (or torch-mlir lowering it to linalg first).

Checks (exit non-zero when one fails): each .mlir parses with /usr/lib/llvm-22/bin/mlir-opt; the frontend's
f32 output equals the float64 reference within 1e-5 relative.
"""

from __future__ import annotations

import argparse
import pathlib
import subprocess
import sys
import tempfile

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "test" / "Frontends" / "Inputs" / "cache"
MLIR_OPT = "/usr/lib/llvm-22/bin/mlir-opt"
BIN = pathlib.Path(sys.executable).parent  # iree-opt lives next to the peers' python
SEED = 20261202
B, S, HKV, D, MAX_LEN, BASE = 2, 3, 2, 32, 16, 10000.0
START = 5


def rope64(k, positions, axis_tokens):
    """Float64 rotate_half RoPE of k with positions [B, S] broadcast over the head axis."""
    inv = 1.0 / (BASE ** (np.arange(0, D, 2, dtype=np.float64) / D))
    f = positions.astype(np.float64)[..., None] * inv            # [B, S, D/2]
    emb = np.concatenate([f, f], -1)
    emb = emb[:, :, None, :] if axis_tokens == 1 else emb[:, None, :, :]
    k64 = k.astype(np.float64)
    k1, k2 = np.split(k64, 2, axis=-1)
    return k64 * np.cos(emb) + np.concatenate([-k2, k1], -1) * np.sin(emb)


def jax_fixture(g):
    import jax
    import jax.numpy as jnp
    from jax import lax
    jax.config.update("jax_platforms", "cpu")

    def rotate_half(x):
        x1, x2 = jnp.split(x, 2, axis=-1)
        return jnp.concatenate([-x2, x1], axis=-1)

    def append(k, positions, cache, idx):
        inv = 1.0 / (BASE ** (jnp.arange(0, D, 2, dtype=k.dtype) / D))
        fr = positions[..., None].astype(k.dtype) * inv
        emb = jnp.concatenate([fr, fr], -1)[:, :, None, :]
        k_rot = k * jnp.cos(emb) + rotate_half(k) * jnp.sin(emb)
        return lax.dynamic_update_slice(cache, k_rot, (0, idx, 0, 0))

    k = g.standard_normal((B, S, HKV, D)).astype(np.float32)
    positions = (np.arange(S)[None, :] + np.array([[START], [START + 2]])).astype(np.int32)
    cache = g.standard_normal((B, MAX_LEN, HKV, D)).astype(np.float32)
    idx = np.array(START, np.int32)
    args = [k, positions, cache, idx]
    stablehlo = jax.jit(append).lower(*args).as_text()
    out = np.asarray(jax.jit(append)(*args))
    with tempfile.TemporaryDirectory() as tmp:
        src = pathlib.Path(tmp) / "in.stablehlo.mlir"
        src.write_text(stablehlo)
        text = subprocess.run([str(BIN / "iree-opt"),
                               "--pass-pipeline=builtin.module(iree-stablehlo-to-iree-input)", str(src)],
                              check=True, capture_output=True, text=True).stdout
    ref = cache.astype(np.float64)
    ref[:, START:START + S] = rope64(k, positions, axis_tokens=1)
    return text, args, ref, out


def torch_module(D_=D):
    import torch

    def rotate_half(x):
        return torch.cat((-x[..., D_ // 2:], x[..., :D_ // 2]), dim=-1)

    class Append(torch.nn.Module):
        def __init__(self):
            super().__init__()
            inv = 1.0 / (BASE ** (torch.arange(0, D_, 2, dtype=torch.float32) / D_))
            self.register_buffer("inv_freq", inv, persistent=True)

        def forward(self, k, position_ids, cache, start):
            freqs = (self.inv_freq[None, :, None] * position_ids[:, None, :].float()).transpose(1, 2)
            emb = torch.cat((freqs, freqs), dim=-1)
            cos, sin = emb.cos()[:, None], emb.sin()[:, None]
            k_rot = k * cos + rotate_half(k) * sin
            s = start.item()
            torch._check(s >= 0)
            torch._check(s + k_rot.shape[2] <= cache.shape[2])
            return torch.slice_scatter(cache, k_rot, dim=2, start=s, end=s + k_rot.shape[2])

    return Append


def torch_fixture(g):
    import torch
    from torch_mlir import fx
    from torch_mlir.compiler_utils import OutputType
    k = g.standard_normal((B, HKV, S, D)).astype(np.float32)
    positions = (np.arange(S)[None, :] + np.array([[START], [START + 2]])).astype(np.int64)
    cache = g.standard_normal((B, HKV, MAX_LEN, D)).astype(np.float32)
    start = np.array(START, np.int64)
    args = [k, positions, cache, start]
    m = torch_module()().eval()
    targs = [torch.from_numpy(a.copy()) for a in args]
    with torch.no_grad():
        out = m(*targs).numpy().copy()
    mod = fx.export_and_import(m, *targs, output_type=OutputType.LINALG_ON_TENSORS, func_name="main")
    ref = cache.astype(np.float64)
    ref[:, :, START:START + S] = rope64(k, positions, axis_tokens=2)
    return str(mod), args, ref, out


def show_index_copy():
    import torch
    from torch_mlir import fx
    from torch_mlir.compiler_utils import OutputType

    class IndexCopy(torch.nn.Module):
        def forward(self, k, cache, cache_position):
            return cache.index_copy(2, cache_position, k)

    args = [torch.randn(B, HKV, S, D), torch.randn(B, HKV, MAX_LEN, D), torch.arange(S) + START]
    text = str(fx.export_and_import(IndexCopy(), *args, output_type=OutputType.LINALG_ON_TENSORS,
                                    func_name="main"))
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if "tm_tensor.scatter" in line)
    print("\n".join(lines[max(0, at - 4):at + 4]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=str(DEFAULT_OUT))
    parser.add_argument("--show-index-copy", action="store_true")
    args = parser.parse_args()
    import torch  # noqa: F401  (before anything loads rope-mlir's library: ../shared/FRONTENDS.md)
    if args.show_index_copy:
        show_index_copy()
        return 0
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    failures = 0
    g = np.random.default_rng(SEED)
    for name, make in (("jax_dynamic_update_slice", jax_fixture), ("torch_slice_scatter", torch_fixture)):
        text, inputs, ref, frontend = make(g)
        (out / f"{name}.mlir").write_text(text)
        np.savez_compressed(out / f"{name}.npz", **{f"arg{i}": a for i, a in enumerate(inputs)}, ref0=ref,
                            frontend0=frontend)
        parsed = subprocess.run([MLIR_OPT, str(out / f"{name}.mlir"), "-o", "/dev/null"], capture_output=True,
                                text=True)
        err = float(np.max(np.abs(frontend - ref)) / np.max(np.abs(ref)))
        ok = parsed.returncode == 0 and err <= 1e-5
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {name}: parses: {parsed.returncode == 0}, frontend vs float64 "
              f"{err:.2e}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
