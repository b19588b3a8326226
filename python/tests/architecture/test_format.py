# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""All C++ is clang-format clean (LLVM style, .clang-format)."""

import shutil
import subprocess

import pytest

import _paths

ROOT = _paths.ROOT


def cxx_files():
    files = []
    for folder in ("include", "lib", "tools", "test/downstream"):
        files += sorted((ROOT / folder).rglob("*.cpp"))
        files += sorted((ROOT / folder).rglob("*.h"))
    return files


@pytest.mark.skipif(shutil.which("clang-format") is None,
                    reason="clang-format not installed")
def test_cxx_is_clang_formatted():
    files = cxx_files()
    assert files, "no C++ files found"
    result = subprocess.run(
        ["clang-format", "--dry-run", "-Werror", "--style=file",
         *map(str, files)], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-4000:]
