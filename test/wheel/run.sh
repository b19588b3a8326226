#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Builds the wheel from an existing build tree (python/setup.py: `cmake
# --build <build> --target RopeJit`, a no-op when it is built, then copies the
# stripped libRopeJit.so into rope_mlir/_lib/), installs it into a fresh venv
# outside the checkout (no system site-packages: the system python's
# editable install stays invisible; numpy, ml_dtypes and onnx come from
# PyPI, or pip's cache) and runs test/wheel/smoke.py from a temporary
# directory (issue 16).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="$(cd "${1:?usage: run.sh <rope-mlir build dir>}" && pwd)"
PYTHON="${PYTHON:-python3}"
TMP="$(mktemp -d "${TMPDIR:-/tmp}/rope-wheel.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT
pip_quiet=(-q --disable-pip-version-check)

# Built from a copy of python/: setuptools leaves its build/ in the source.
cp -r "$ROOT/python" "$TMP/src"
rm -rf "$TMP/src/build" "$TMP/src"/*.egg-info
SECONDS=0
ROPE_MLIR_BUILD_DIR="$BUILD" "$PYTHON" -m pip wheel "${pip_quiet[@]}" \
  --no-deps -w "$TMP/dist" "$TMP/src"
wheel=("$TMP"/dist/rope_mlir-*.whl)
[ "${#wheel[@]}" -eq 1 ] || { echo "wheel: FAIL: no single wheel" >&2; exit 1; }
echo "wheel: $(basename "$wheel"), $(du -m "$wheel" | cut -f1) MB, built in ${SECONDS}s"
case "$(basename "$wheel")" in
  *-py3-none-linux_x86_64.whl) ;;
  *) echo "wheel: FAIL: not a py3-none-linux_x86_64 wheel" >&2; exit 1 ;;
esac
"$PYTHON" - "$wheel" <<'PY'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
assert "rope_mlir/_lib/libRopeJit.so" in names, "no rope_mlir/_lib/libRopeJit.so"
assert "rope_mlir/_lib/_kernel_call.abi3.so" in names, "no rope_mlir/_lib/_kernel_call.abi3.so"
PY

SECONDS=0
"$PYTHON" -m venv "$TMP/venv"
"$TMP/venv/bin/python" -m pip install "${pip_quiet[@]}" --root-user-action=ignore \
  "$wheel[onnx]"
echo "wheel: venv with the wheel, numpy, ml_dtypes, onnx in ${SECONDS}s"

mkdir "$TMP/elsewhere"
cd "$TMP/elsewhere"
env -u LD_LIBRARY_PATH -u PYTHONPATH -u ROPE_MLIR_LIBRARY \
  "$TMP/venv/bin/python" "$ROOT/test/wheel/smoke.py"
"$TMP/venv/bin/rope-import-onnx" --help > /dev/null
echo "wheel: ok"
