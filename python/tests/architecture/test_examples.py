# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The examples run and check themselves (they exit non-zero on a wrong
result)."""

import subprocess
import sys

import _paths

ROOT = _paths.ROOT


def test_attention_example():
    proc = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "attention.py"), "--small"],
        capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ATTENTION OK" in proc.stdout
    # The fused form is one loop nest with the rotations inside it and the
    # causal prefill's masked-tile skip.
    assert "scf.forall, rope.apply, scf.for, rope.apply" in proc.stdout
    assert "scf.if" in proc.stdout


def test_demo():
    """The README's main command's program: the whole zoo Llama raised (every
    rotation and attention), fused and run right, then the rope.apply parts."""
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / "demo.py")],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "DEMO OK" in proc.stdout
    for mode in ("prefill", "decode"):
        assert (f"llama {mode} (0.8 MB of linalg): --rope-raise makes 4 "
                "rope.apply (expected 4) and 2 rope.attention (expected 2)"
                in proc.stdout), proc.stdout
