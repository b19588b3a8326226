# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The layers of the C++ libraries, checked against one table: the one at the
top of docs/DESIGN.md (layer, libraries, folders, may use).

A layer may use the layers its row names and, through them, everything below
(the transitive closure), and its own headers. Checked here:
- every `#include "rope/..."` (C++ and TableGen) and every quoted include
  found beside the including file: the header's layer is one the file's
  layer may use;
- every rope library a CMakeLists links (LINK_LIBS, target_link_libraries):
  same rule, by the Library column;
- the table matches the tree: every C++/TableGen file under include/rope,
  lib, tools and test/lib lies in a folder of the table, every rope library
  CMake defines is in the table and vice versa, and the table has no cycle.

A new folder or library fails here until the table says where it sits.
"""

import re

import pytest

import _paths

ROOT = _paths.ROOT
DESIGN = ROOT / "docs" / "DESIGN.md"
SOURCES = ("include/rope", "lib", "tools", "test/lib")
SUFFIXES = {".h", ".cpp", ".td"}


def expand(pattern):
    """`{include/rope,lib}/Dialect` -> [include/rope/Dialect, lib/Dialect]."""
    match = re.search(r"\{([^}]*)\}", pattern)
    if not match:
        return [pattern]
    return [p for alt in match.group(1).split(",")
            for p in expand(pattern[:match.start()] + alt
                            + pattern[match.end():])]


def read_table(text=None):
    """The layer table: {layer: (libraries, folders, may_use)}."""
    text = DESIGN.read_text() if text is None else text
    section = text.split("\n## Layers\n", 1)
    assert len(section) == 2, "docs/DESIGN.md has no '## Layers' section"
    rows = [line for line in section[1].split("\n## ", 1)[0].splitlines()
            if line.startswith("|")]
    header = [c.strip().lower() for c in rows[0].strip("|").split("|")]
    assert header == ["layer", "libraries", "folders", "may use"], header
    table = {}
    for row in rows[2:]:
        cells = [c.strip() for c in row.strip("|").split("|")]
        layer = cells[0].strip("`")
        names = lambda cell: [n.strip("` ")
                              for n in re.split(r",(?![^{]*\})", cell)
                              if n.strip("` —-")]
        folders = [f for cell in names(cells[2]) for f in expand(cell)]
        table[layer] = (names(cells[1]), folders, names(cells[3]))
    return table


def allowed_layers(table):
    """{layer: the layers it may use}, closed transitively; fails on a cycle."""
    closure = {}

    def visit(layer, path):
        assert layer in table, f"'{layer}' (used by {path[-1]}) is no layer"
        assert layer not in path, f"layer cycle: {' -> '.join(path + [layer])}"
        if layer not in closure:
            uses = set()
            for used in table[layer][2]:
                uses |= {used} | visit(used, path + [layer])
            closure[layer] = uses
        return closure[layer]

    for layer in table:
        visit(layer, [])
    return closure


def layer_of(path, table):
    """The layer whose folder is the longest prefix of `path` (root-relative)."""
    best = None
    for layer, (_, folders, _) in table.items():
        for folder in folders:
            if path == folder or path.startswith(folder.rstrip("/") + "/"):
                if best is None or len(folder) > len(best[1]):
                    best = (layer, folder)
    return best[0] if best else None


INCLUDE = re.compile(r'^\s*#?\s*include\s+"([^"]+)"', re.M)


def include_edges(root=ROOT):
    """(file, included path), root-relative, for every rope header included."""
    for top in SOURCES:
        for path in sorted((root / top).rglob("*")):
            if path.suffix not in SUFFIXES:
                continue
            rel = path.relative_to(root).as_posix()
            for name in INCLUDE.findall(path.read_text()):
                beside = path.parent / name
                if name.startswith("rope/"):
                    yield rel, "include/" + name
                elif beside.exists():
                    yield rel, beside.resolve().relative_to(root).as_posix()


def violations(table, edges):
    allowed = allowed_layers(table)
    found = []
    for source, header in edges:
        src, dst = layer_of(source, table), layer_of(header, table)
        if src is None or dst is None:
            continue  # test_every_file_has_a_layer says so
        if dst != src and dst not in allowed[src]:
            found.append(f"{source} ({src}) includes {header} ({dst})")
    return found


def test_table_has_no_cycle_and_names_only_layers():
    allowed_layers(read_table())


def test_every_file_has_a_layer():
    table = read_table()
    stray = [path.relative_to(ROOT).as_posix()
             for top in SOURCES for path in sorted((ROOT / top).rglob("*"))
             if path.suffix in SUFFIXES
             and layer_of(path.relative_to(ROOT).as_posix(), table) is None]
    assert not stray, (
        "files in no folder of the layer table (docs/DESIGN.md, '## Layers'):"
        "\n  " + "\n  ".join(stray))


def test_includes_follow_the_layers():
    found = violations(read_table(), include_edges())
    assert not found, (
        "includes the layer table (docs/DESIGN.md) does not allow:\n  "
        + "\n  ".join(found))


def test_a_wrong_include_is_caught():
    """The check itself: a dialect file including a pipeline header, the
    CPU codegen including the dialect, a conversion including a pipeline."""
    table = read_table()
    bad = [("lib/Dialect/Rope/IR/RopeOps.cpp",
            "include/rope/Pipelines/Pipelines.h"),
           ("lib/Codegen/CPU/VectorizeContractions.cpp",
            "include/rope/Dialect/Rope/IR/RopeOps.h"),
           ("lib/Conversion/RopeToGPU/RopeToGPU.cpp",
            "include/rope/Pipelines/Pipelines.h")]
    assert len(violations(table, bad)) == len(bad)


TARGET = re.compile(
    r"\b(add_mlir_(?:dialect_|conversion_)?library|add_llvm_library|"
    r"add_llvm_executable|add_library|add_executable)\(\s*([\w-]+)")
LINKS = re.compile(r"\b(?:mlir_)?target_link_libraries\(\s*([\w-]+)([^)]*)\)")
LINK_LIBS = re.compile(r"\bLINK_LIBS\s+(?:PUBLIC|PRIVATE)?([^)]*)\)")


def is_rope_library(name):
    return name.startswith(("MLIRRope", "Rope")) or name.startswith("rope-")


def cmake_targets(root=ROOT):
    """{target: (CMakeLists path, [rope libraries it links])}."""
    targets = {}
    for top in SOURCES:
        for cmake in sorted((root / top).rglob("CMakeLists.txt")):
            text = re.sub(r"#.*", "", cmake.read_text())
            rel = cmake.parent.relative_to(root).as_posix()
            for call in TARGET.finditer(text):
                name = call.group(2)
                if not is_rope_library(name):
                    continue
                body = text[call.end():text.find(")", call.end()) + 1]
                links = []
                for block in LINK_LIBS.findall(body):
                    links += block.split()
                targets[name] = (rel, links)
            for call in LINKS.finditer(text):
                if call.group(1) in targets:
                    targets[call.group(1)][1].extend(call.group(2).split())
    for name, (_, links) in targets.items():
        links[:] = [link for link in links if is_rope_library(link)
                    and link != name]
    return targets


def test_cmake_libraries_are_the_table_and_link_down():
    table = read_table()
    allowed = allowed_layers(table)
    library_layer = {lib: layer for layer, (libs, _, _) in table.items()
                     for lib in libs}
    targets = cmake_targets()
    missing = sorted(set(targets) - set(library_layer))
    assert not missing, f"CMake targets not in the layer table: {missing}"
    gone = sorted(set(library_layer) - set(targets))
    assert not gone, f"layer table libraries CMake does not define: {gone}"
    found = []
    for name, (folder, links) in sorted(targets.items()):
        layer = library_layer[name]
        if layer_of(folder + "/CMakeLists.txt", table) != layer:
            found.append(f"{name} ({layer}) is defined in {folder}")
        for link in links:
            if link not in library_layer:
                found.append(f"{name} links {link}, which is in no layer")
            elif library_layer[link] not in allowed[layer] | {layer}:
                found.append(f"{name} ({layer}) links {link} "
                             f"({library_layer[link]})")
    assert not found, "\n  ".join(["links the layer table forbids:"] + found)
