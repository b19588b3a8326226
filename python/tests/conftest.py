# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import pathlib
import sys

_TESTS = pathlib.Path(__file__).resolve().parent

# Tests run against the working tree's package (and its build/lib library).
sys.path.insert(0, str(_TESTS.parent))

# The modules the tests share (_paths, frontend_fixture_io) import by name
# from every folder, and so does a test module another one imports
# (numerics/test_differential.py from compiler/test_tiling.py): python/tests
# and each of its group folders are on the path. Basenames are unique across
# the folders, so each test module has one name however it is reached.
sys.path.insert(0, str(_TESTS))
from _paths import GROUPS  # noqa: E402

for _group in GROUPS:
    sys.path.insert(1, str(_TESTS / _group))
