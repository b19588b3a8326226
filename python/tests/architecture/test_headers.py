# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Every source file carries its licence header (scripts/check-headers.py):
C++/TableGen an 80-column banner naming the file and the licence block with
the SPDX line, Python/shell/CMake the SPDX line; and the checker itself tells
a broken header from a good one."""

import importlib.util
import subprocess
import sys

import pytest

import _paths

ROOT = _paths.ROOT
SCRIPT = ROOT / "scripts" / "check-headers.py"

_spec = importlib.util.spec_from_file_location("check_headers", SCRIPT)
headers = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(headers)

GOOD_H = """\
//===- RopeOps.h - Rope operations ------------------------------*- C++ -*-===//
//
// Part of the rope-mlir project, under the Apache License v2.0 with LLVM
// Exceptions.
// See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What the file is for.
//
//===----------------------------------------------------------------------===//

#ifndef X
""".split("\n")


def test_license_file():
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License v2.0 with LLVM Exceptions" in text
    assert "Copyright the rope-mlir authors" in text
    assert "---- LLVM Exceptions to the Apache 2.0 License ----" in text
    assert "END OF TERMS AND CONDITIONS" in text


def test_every_source_file_has_its_header():
    result = subprocess.run([sys.executable, str(SCRIPT)], cwd=ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr


def test_source_files_cover_every_kind():
    files = headers.source_files()
    for expected in ("include/rope/Dialect/Rope/IR/RopeOps.h",
                     "include/rope/Dialect/Rope/IR/RopeOps.td",
                     "tools/rope-opt/rope-opt.cpp", "CMakeLists.txt",
                     "scripts/test.sh", "python/rope_mlir/__init__.py",
                     "test/lit.site.cfg.py.in", ".ci/run"):
        assert expected in files
    assert not [f for f in files
                if f.endswith((".mlir", ".json", ".npz", ".onnx", ".md"))
                or f.startswith(("docs/reference/", "test/Frontends/Inputs/"))]


def test_good_header_passes():
    assert headers.check_cxx("include/rope/Dialect/Rope/IR/RopeOps.h",
                             GOOD_H) == []


@pytest.mark.parametrize("edit, problem", [
    (lambda l: [l[0].replace("RopeOps.h", "RopeAttrs.h")] + l[1:],
     "the banner names RopeAttrs.h, not RopeOps.h"),
    (lambda l: [l[0].replace("------*", "-------*")] + l[1:],
     "line 1 is 81 columns, not 80"),
    (lambda l: [l[0].replace("*- C++ -*-", "----------")] + l[1:],
     "the banner lacks `-*- C++ -*-`"),
    (lambda l: l[:5] + l[6:], "no SPDX-License-Identifier line"),
    (lambda l: l[:11] + ["//===---===//"] + l[12:],
     "line 12 is 13 columns, not 80"),
])
def test_broken_header_fails(edit, problem):
    assert problem in headers.check_cxx(
        "include/rope/Dialect/Rope/IR/RopeOps.h", edit(GOOD_H))


def test_fix_repairs_an_old_header():
    # A banner clang-format broke in two (it was over 80 columns), the old
    # one-line notice, no SPDX line.
    old = ["//===- FuseRotationTile.h - Fuse a rope.apply into loops -*- C++",
           "//-*-===//", "//", "// Part of the rope-mlir project.", "//",
           "// What the file is for.", "", "#ifndef X"]
    rel = "lib/Transforms/Attention/FuseRotationTile.h"
    assert headers.check_cxx(rel, old)
    fixed = headers.fix_cxx(rel, old)
    assert headers.check_cxx(rel, fixed) == []
    assert fixed[0] == ("//===- FuseRotationTile.h - Fuse a rope.apply into "
                        "loops --------*- C++ -*-===//")
    assert fixed[8:] == ["//", "// What the file is for.", "", "#ifndef X"]


def test_hash_files():
    spdx = "# " + headers.SPDX
    assert headers.check_hash("a.py", ["#!/usr/bin/env python3", spdx, '"""'
                                       ]) == []
    assert headers.check_hash("a.py", ['"""Doc."""'])
    assert headers.fix_hash("a.sh", ["#!/bin/sh", "echo"]) == \
        ["#!/bin/sh", spdx, "echo"]
    assert headers.fix_hash("lit.site.cfg.py.in",
                            ["@LIT_SITE_CFG_IN_HEADER@", ""]) == \
        ["@LIT_SITE_CFG_IN_HEADER@", spdx, ""]
