# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Reading the committed frontend fixtures (test/Frontends/Inputs and its
attention/ folder, written by scripts/gen-frontend-fixtures.py and
scripts/gen-attention-fixtures.py): one place for the .npz naming
(arg0.., ref0.., frontend0..) and the error measure the tests share."""

from __future__ import annotations

import pathlib
import re

import numpy as np


def numbered_arrays(npz, prefix: str) -> list:
    """npz[prefix0], npz[prefix1], ... in numeric order."""
    keys = sorted((k for k in npz.files if re.fullmatch(prefix + r"\d+", k)),
                  key=lambda k: int(k[len(prefix):]))
    return [npz[k] for k in keys]


def load_fixture(inputs: pathlib.Path, fixtures: dict, name: str):
    """(manifest entry, IR text, inputs, float64 references, the frontend's
    own outputs) of fixture `name`."""
    fixture = fixtures[name]
    text = (inputs / fixture["file"]).read_text()
    data = np.load(inputs / fixture["data"])
    return (fixture, text, numbered_arrays(data, "arg"),
            numbered_arrays(data, "ref"), numbered_arrays(data, "frontend"))


def relative_error(actual, expected) -> float:
    """max|actual − expected| / max|expected|, in float64."""
    scale = float(np.max(np.abs(expected)))
    return float(np.max(np.abs(np.asarray(actual, np.float64) - expected))) / scale
