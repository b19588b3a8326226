# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Reading the committed frontend fixtures (test/Frontends/Inputs and its
attention/ folder, written by scripts/gen-frontend-fixtures.py and
scripts/gen-attention-fixtures.py) and the model zoo (test/Frontends/Inputs/zoo,
scripts/gen-model-zoo*.py): one place for the .npz naming
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


ZOO = pathlib.Path(__file__).resolve().parents[2] / "test" / "Frontends" / \
    "Inputs" / "zoo"


def zoo_manifest() -> dict:
    import json
    return json.loads((ZOO / "manifest.json").read_text())


def zoo_frontend_dtype(manifest: dict, name: str, mode: str) -> str:
    """The dtype the frontend ran the model in: "float32", or "bfloat16"
    for the bf16 members (manifest: frontend_dtype)."""
    entry = next(m for m in manifest["models"] if m["name"] == name)
    return entry["modes"][mode].get("frontend_dtype", "float32")


def load_zoo_module(manifest: dict, name: str, mode: str):
    """(IR text, inputs, float64 references, the frontend's own outputs) of
    zoo model `name` in `mode` (prefill, decode). numpy has no bfloat16:
    the bf16 members' .npz holds bf16 arrays as their float32 values
    (exact), with the dtype in the manifest (args[i].dtype,
    outputs[i].dtype); the inputs come back as @main takes them (a bf16 KV
    cache as ml_dtypes.bfloat16), the frontend's outputs as those float32
    values."""
    import ml_dtypes
    entry = next(m for m in manifest["models"] if m["name"] == name)
    info = entry["modes"][mode]
    data = np.load(ZOO / info["data"])
    args = numbered_arrays(data, "arg")
    dtypes = [a.get("dtype") for a in info.get("args", [])]
    args = [a.astype(ml_dtypes.bfloat16)
            if i < len(dtypes) and dtypes[i] == "bfloat16" else a
            for i, a in enumerate(args)]
    return ((ZOO / info["file"]).read_text(), args,
            numbered_arrays(data, "ref"), numbered_arrays(data, "frontend"))


def relative_error(actual, expected) -> float:
    """max|actual − expected| / max|expected|, in float64."""
    scale = float(np.max(np.abs(expected)))
    return float(np.max(np.abs(np.asarray(actual, np.float64) - expected))) / scale
