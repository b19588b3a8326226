#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Regenerates docs/reference/ from the ODS definitions (ops, attributes,
# passes). python/tests/architecture/test_docs.py fails when they are stale.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${ROPE_BUILD_DIR:-$ROOT/build}"
ninja -C "$BUILD" mlir-doc
cp "$BUILD/docs/Dialects/RopeOps.md" "$BUILD/docs/Dialects/RopeAttrs.md" \
   "$BUILD/docs/RopeConversionPasses.md" "$BUILD/docs/RopeTransformsPasses.md" \
   "$BUILD/docs/RopeCPUCodegenPasses.md" \
   "$ROOT/docs/reference/"
echo "docs/reference updated"
