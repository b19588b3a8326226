# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""docs/reference/ must be what the ODS definitions generate (run
scripts/update-docs.sh after changing a .td file)."""

import pytest

import _paths

ROOT = _paths.ROOT
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


# The contract lives in the tree (docs/SEMANTICS.md): every citation of it
# names a section it has, and nothing cites the steering's copy outside it.
CITING = ("lib", "include", "python", "scripts", "bench", "test", "tools",
          "docs", "examples", "README.md")
SUFFIXES = {".cpp", ".h", ".td", ".py", ".md", ".mlir", ".sh", ".cu",
            ".txt"}


def _citing_files():
    for top in CITING:
        path = ROOT / top
        files = [path] if path.is_file() else path.rglob("*")
        for f in files:
            if f.is_file() and f.suffix in SUFFIXES and \
                    "__pycache__" not in f.parts and f.name != "test_docs.py":
                yield f


def _cited_sections(text: str):
    import re
    for m in re.finditer(r"SEMANTICS\.md[^§\n]{0,3}§\s*(\d+)"
                         r"(?:\s*[–-]\s*§?\s*(\d+))?", text):
        first = int(m.group(1))
        last = int(m.group(2)) if m.group(2) else first
        yield from range(first, last + 1)


def test_semantics_citations_resolve():
    import re
    contract = (ROOT / "docs" / "SEMANTICS.md").read_text()
    sections = {int(n) for n in re.findall(r"^## §(\d+) ", contract,
                                            re.MULTILINE)}
    assert sections == set(range(1, 8)), sections
    cited, bad = 0, []
    for f in _citing_files():
        text = f.read_text(errors="replace")
        for n in _cited_sections(text):
            cited += 1
            if n not in sections:
                bad.append(f"{f.relative_to(ROOT)}: §{n}")
        if "ROPE.md" in text:
            bad.append(f"{f.relative_to(ROOT)} cites ROPE.md, which is not "
                       "in the tree (docs/SEMANTICS.md is the contract)")
    assert not bad, bad
    assert cited > 30  # the check reads the citations it is meant to


def test_semantics_citation_check_can_fail():
    # The pattern the check reads, on text that cites a missing section.
    assert list(_cited_sections("see SEMANTICS.md §9")) == [9]
    assert list(_cited_sections("per SEMANTICS.md §1–§3")) == [1, 2, 3]
