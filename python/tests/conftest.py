# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import pathlib
import sys

# Tests run against the working tree's package (and its build/lib library).
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
