# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""docs/reference/ must be what the ODS definitions generate (run
scripts/update-docs.sh after changing a .td file)."""

import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
GENERATED = {
    "RopeOps.md": "docs/Dialects/RopeOps.md",
    "RopeAttrs.md": "docs/Dialects/RopeAttrs.md",
    "RopeConversionPasses.md": "docs/RopeConversionPasses.md",
    "RopeTransformsPasses.md": "docs/RopeTransformsPasses.md",
    "RopeCPUCodegenPasses.md": "docs/RopeCPUCodegenPasses.md",
}


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_reference_docs_are_current(name):
    generated = ROOT / "build" / GENERATED[name]
    if not generated.exists():
        pytest.fail(f"{generated} missing: build the mlir-doc target")
    committed = ROOT / "docs" / "reference" / name
    assert committed.read_text() == generated.read_text(), (
        f"docs/reference/{name} is stale: run scripts/update-docs.sh")
