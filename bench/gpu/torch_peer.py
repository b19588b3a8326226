#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""PyTorch peer for bench/gpu: eager HF-style `rotate_half` RoPE with a
pre-gathered cos/sin (what transformers' Llama does), timed with CUDA events
on the same shapes as the harness. Prints markdown rows, or one "n/a" row
when torch or a GPU is missing."""

import sys

try:
    import torch
except ImportError:
    print("| torch eager (rotate_half) | n/a: torch not installed |")
    sys.exit(0)
if not torch.cuda.is_available():
    print("| torch eager (rotate_half) | n/a: no CUDA device for torch |")
    sys.exit(0)

B, S, H, D = (int(v) for v in (sys.argv[1] if len(sys.argv) > 1 else "4,4096,32,128").split(","))


def rotate_half(x):
    x1, x2 = x[..., : D // 2], x[..., D // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def eager(x, cos, sin):
    return x * cos + rotate_half(x) * sin


# The fused peer: Inductor turns the same expression into one Triton kernel.
try:
    compiled = torch.compile(eager, dynamic=False)
except Exception:  # no Triton / compiler on the machine
    compiled = None


def median_us(fn, reps=50):
    for _ in range(3):
        fn()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1e3)
    times.sort()
    return times[len(times) // 2]


print("| peer | dtype | shape | µs | GB/s |")
print("|---|---|---|---|---|")
for dtype in (torch.float32, torch.float16, torch.bfloat16):
    x = torch.randn(B, S, H, D, device="cuda", dtype=dtype)
    pos = torch.randint(0, 1 << 20, (B, S), device="cuda")
    inv = 1.0 / (10000.0 ** (torch.arange(0, D, 2, device="cuda", dtype=torch.float32) / D))
    ang = pos[..., None].float() * inv
    emb = torch.cat((ang, ang), dim=-1)
    cos, sin = emb.cos().to(dtype)[:, :, None, :], emb.sin().to(dtype)[:, :, None, :]
    us = median_us(lambda: eager(x, cos, sin))
    gbs = 2 * x.numel() * x.element_size() / (us * 1e3)
    print(f"| torch eager rotate_half (cos/sin precomputed, not timed) | {dtype} | {B}x{S}x{H}x{D} | {us:.1f} | {gbs:.0f} |")
    if compiled is not None:
        try:
            compiled(x, cos, sin)
            us = median_us(lambda: compiled(x, cos, sin))
            gbs = 2 * x.numel() * x.element_size() / (us * 1e3)
            print(f"| torch.compile rotate_half (Inductor/Triton, cos/sin precomputed) | {dtype} | {B}x{S}x{H}x{D} | {us:.1f} | {gbs:.0f} |")
        except Exception as e:  # a peer that fails is reported, not fatal
            print(f"| torch.compile rotate_half | {dtype} | n/a: {type(e).__name__} |")
