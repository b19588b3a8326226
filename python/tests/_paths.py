# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Paths the tests share, the same from every folder of python/tests
(README.md there says what each folder holds)."""

import pathlib

TESTS = pathlib.Path(__file__).resolve().parent  # python/tests
PYTHON = TESTS.parent                            # python/: the package's parent
ROOT = PYTHON.parent                             # the repository root
FIXTURES = TESTS / "fixtures"                    # python/tests/fixtures

# The folders the tests are grouped in (README.md).
GROUPS = ("api", "numerics", "compiler", "architecture")
