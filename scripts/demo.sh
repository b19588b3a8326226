#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The main job: set up (deps + build), then raise, fuse, compile and run a
# whole tiny model from the zoo in process and check its logits against the
# model's float64 logits; then compile RoPE IR with rope-opt, run it on the
# CPU and check it against the float64 reference (examples/demo.py).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/setup.sh" > "${TMPDIR:-/tmp}/rope-mlir-setup.log" 2>&1 ||
  { cat "${TMPDIR:-/tmp}/rope-mlir-setup.log"; exit 1; }
exec "${PYTHON:-python3}" "$ROOT/examples/demo.py"
