#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""rope_mlir next to the other LLVMs a Python process loads (not run in CI:
the peers are large). For each peer -- triton (what `import transformers`
model code and torch.compile load), jaxlib, IREE's compiler, llvmlite -- and
both orders (peer first, rope_mlir first), a fresh interpreter imports both,
runs a rope_mlir kernel (one thread and OpenMP) and makes the peer use its own
LLVM, then reports. Any crash or exception is a failure.

Run it with an interpreter that has the peers, e.g. the venv described in
docs/RELIABILITY.md:

    python3 -m venv ../peers
    ../peers/bin/pip install triton jax jaxlib iree-base-compiler llvmlite \\
        numpy ml_dtypes
    ../peers/bin/python scripts/check-host-llvms.py

rope_mlir is imported from this checkout (python/), libRopeJit.so from the
build (or $ROPE_MLIR_LIBRARY). Exit status 0 when every available pair
survives both orders; missing peers are listed as skipped, not passed.
"""

from __future__ import annotations

import importlib.util
import os
import pathlib
import subprocess
import sys
import textwrap

ROOT = pathlib.Path(__file__).resolve().parents[1]

ROPE = """
import numpy as np, rope_mlir
x = np.random.default_rng(0).standard_normal((4, 8, 64)).astype(np.float32)
p = np.arange(4, dtype=np.int64)
rope_mlir.apply(x, p)
rope_mlir.apply(x, p, threads=2)
"""

# Each peer: the module that tells whether it is installed, and code that
# makes it load and use its own LLVM.
PEERS = {
    "triton": ("triton", """
import triton, triton.language as tl
from triton.backends.compiler import GPUTarget  # loads libtriton's LLVM
"""),
    "jaxlib": ("jaxlib", """
import jax, jax.numpy as jnp
assert float(jax.jit(lambda a: (a * 2.0).sum())(jnp.ones(8))) == 16.0
"""),
    "iree": ("iree.compiler", """
import iree.compiler as ireec
ireec.compile_str("func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {"
                  " return %a : tensor<4xf32> }",
                  target_backends=["llvm-cpu"])
"""),
    "llvmlite": ("llvmlite", """
import llvmlite.binding as llvm
llvm.initialize_native_target(); llvm.initialize_native_asmprinter()
m = llvm.parse_assembly("define i32 @f(i32 %a) { ret i32 %a }")
m.verify()
tm = llvm.Target.from_default_triple().create_target_machine()
tm.emit_object(m)
"""),
}


def run(code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT / "python")] + ([env["PYTHONPATH"]]
                                  if env.get("PYTHONPATH") else []))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                          capture_output=True, text=True, env=env,
                          timeout=600)


def main() -> int:
    failures = 0
    for name, (module, use) in PEERS.items():
        if importlib.util.find_spec(module.split(".")[0]) is None:
            print(f"{name:9s} skipped (not installed)")
            continue
        for order, code in (("peer first", use + ROPE),
                            ("rope_mlir first", ROPE + use)):
            result = run(code + "\nprint('survived')\n")
            ok = result.returncode == 0 and "survived" in result.stdout
            failures += not ok
            status = "ok" if ok else f"FAILED (exit {result.returncode})"
            print(f"{name:9s} {order:16s} {status}")
            if not ok:
                print(textwrap.indent(result.stderr[-1500:], "    "))
    print("host LLVM check:", "all survived" if failures == 0
          else f"{failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
