#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Checks and times rope-mlir's GPU kernels on a machine with an NVIDIA GPU.
#
# The kernels are generated beforehand, where rope-opt is built:
#   python3 bench/gpu/prepare.py          # -> bench/gpu/artifacts/*.ptx, manifest.txt
# Then, on the GPU machine (CUDA toolkit with nvcc, a driver; no MLIR needed):
#   bash bench/gpu/run.sh [OUT_DIR] [REPS]
# It builds the driver-API harness with nvcc, loads each PTX, checks it
# against a float64 reference on random inputs, times it against a
# device-to-device copy (CUDA events, medians), runs the PyTorch peer when
# torch is importable, and writes OUT_DIR/gpu.md (default: $OUT or /tmp).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-${OUT:-/tmp}}"
reps="${2:-50}"
nvcc="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
mkdir -p "$out"
if [ ! -f "$here/artifacts/manifest.txt" ]; then
  echo "bench/gpu/artifacts/manifest.txt missing: run bench/gpu/prepare.py where rope-opt is built" >&2
  exit 1
fi
"$nvcc" -O2 -std=c++17 "$here/harness.cu" -o /tmp/rope_gpu_harness \
  -L"$(dirname "$nvcc")/../lib64/stubs" -lcuda
{
  echo "# rope-mlir GPU kernels ($(date -u +%Y-%m-%d))"
  echo
  nvidia-smi --query-gpu=name,driver_version,clocks.max.memory --format=csv,noheader 2>/dev/null || true
  echo
  status=0
  /tmp/rope_gpu_harness "$here/artifacts" "$reps" || status=$?
  echo
  echo "## Peers"
  echo
  python3 "$here/torch_peer.py" 2>&1 || echo "| torch eager | n/a: peer failed |"
  echo
  echo "FlashInfer: $(python3 -c 'import flashinfer; print(flashinfer.__version__)' 2>/dev/null || echo 'n/a (not installed)')"
  exit $status
} 2>&1 | tee "$out/gpu.md"
