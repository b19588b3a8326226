# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Each rope library names every MLIR library it calls.

The libraries name them with mlir_target_link_libraries (lib/CMakeLists.txt),
which in this build links libMLIR.so instead, so a missing name would never
fail a link here; it would in a static build and for a downstream project
linking the static archives. This test reads the names from the CMakeLists,
closes them over the dependencies Debian's MLIRTargets.cmake records, adds
the rope libraries named in LINK_LIBS (and theirs), and requires every MLIR
function a library's archive calls (by `nm`) to be defined in that closure.
"""

import concurrent.futures
import pathlib
import re
import shutil
import subprocess

import pytest

import _paths

ROOT = _paths.ROOT
BUILD_LIB = ROOT / "build" / "lib"
LLVM_LIB = pathlib.Path("/usr/lib/llvm-22/lib")
MLIR_TARGETS = LLVM_LIB / "cmake" / "mlir" / "MLIRTargets.cmake"

LIBRARY = re.compile(r"\badd_mlir_(?:dialect_|conversion_)?library\(\s*(\w+)")
LINK_LIBS = re.compile(r"\bLINK_LIBS\s+(?:PUBLIC|PRIVATE)?([^)]*)\)")
MLIR_LINKS = re.compile(
    r"\bmlir_target_link_libraries\(\s*(\w+)\s+(?:PUBLIC|PRIVATE)([^)]*)\)")


def declared_libraries():
    """{rope library: (rope libraries in LINK_LIBS, MLIR libraries named)}."""
    libraries = {}
    for top in ("lib", "test/lib"):
        for cmake in (ROOT / top).rglob("CMakeLists.txt"):
            text = re.sub(r"#.*", "", cmake.read_text())
            for call in LIBRARY.finditer(text):
                body = text[call.end():text.find(")", call.end()) + 1]
                rope = [n for block in LINK_LIBS.findall(body)
                        for n in block.split()]
                libraries[call.group(1)] = (rope, [])
            for call in MLIR_LINKS.finditer(text):
                libraries[call.group(1)][1].extend(call.group(2).split())
    return libraries


def mlir_dependencies():
    """{MLIR library: the libraries MLIRTargets.cmake says it links}."""
    text = MLIR_TARGETS.read_text()
    return {m.group(1): m.group(2).split(";") for m in re.finditer(
        r'set_target_properties\((\w+) PROPERTIES\s+'
        r'INTERFACE_LINK_LIBRARIES "([^"]*)"', text)}


def symbols(archive):
    """(strong definitions, all definitions, undefined) of an archive."""
    out = subprocess.run(["nm", "-g", str(archive)], capture_output=True,
                         text=True, check=True).stdout
    strong, defined, undefined = set(), set(), set()
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 2 and fields[0] == "U":
            undefined.add(fields[1])
        elif len(fields) == 3:
            defined.add(fields[2])
            if fields[1] in "TDBR":
                strong.add(fields[2])
    return strong, defined, undefined - defined


@pytest.mark.skipif(shutil.which("nm") is None, reason="nm not installed")
def test_every_mlir_function_called_is_in_a_named_library():
    declared = declared_libraries()
    archives = {name: BUILD_LIB / f"lib{name}.a" for name in declared}
    missing = [str(a) for a in archives.values() if not a.exists()]
    if missing:
        pytest.skip(f"not built: {missing}")
    mlir_archives = {p.name[3:-2]: p for p in LLVM_LIB.glob("libMLIR*.a")}
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        mlir = dict(zip(mlir_archives,
                        pool.map(symbols, mlir_archives.values())))
        rope = dict(zip(archives, pool.map(symbols, archives.values())))
    provider = {}  # strong definition -> MLIR libraries
    for name, (strong, _, _) in mlir.items():
        for symbol in strong:
            provider.setdefault(symbol, set()).add(name)
    rope_provider = {}  # ... and rope libraries (LINK_LIBS)
    for name, (strong, _, _) in rope.items():
        for symbol in strong:
            rope_provider.setdefault(symbol, set()).add(name)
    weak = set().union(*(d for _, d, _ in mlir.values())) - set(provider)
    dependencies = mlir_dependencies()

    def closure(names, graph):
        seen, todo = set(), list(names)
        while todo:
            name = todo.pop()
            if name not in seen:
                seen.add(name)
                todo += graph.get(name, [])
        return seen

    rope_graph = {name: rope_deps for name, (rope_deps, _) in declared.items()}
    found = []
    for name in sorted(declared):
        ropes = closure([name], rope_graph)
        reachable = ropes | closure(
            [m for r in ropes for m in declared[r][1]], dependencies)
        own = set().union(*(rope[r][1] for r in ropes))
        unnamed = {}
        for symbol in rope[name][2] - own - weak:
            libs = provider.get(symbol) or rope_provider.get(symbol)
            if libs and not libs & reachable:
                unnamed.setdefault(min(libs), symbol)
        found += [f"{name} uses {symbol} ({lib}), which it does not name"
                  for lib, symbol in sorted(unnamed.items())]
    assert not found, "\n  ".join(["libraries used but not named (LINK_LIBS, "
                                   "mlir_target_link_libraries):"] + found)
