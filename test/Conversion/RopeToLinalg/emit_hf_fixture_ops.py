#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Emits one `rope.apply` per real-model config fixture, for hf-fixtures.mlir.

Usage: emit_hf_fixture_ops.py FIXTURE_DIR > ops.mlir

Each fixture (python/tests/fixtures/hf/*.json, a model's config.json RoPE
fields) goes through `rope_mlir.from_hf_config`, whose attributes come from
the C++ importer (lib/Interop/HuggingFace.cpp). The function carries the
fixture's scaling dict as `rope.expected` (see check_frequency_tables.py), so
the checker recomputes the table from the config with the float64 reference
and not from anything the importer produced. Dynamic schemes have no folded
table and are left to the execution tests (python/tests/api/test_hf_configs.py).
"""

import json
import pathlib
import sys

import rope_mlir

# Keys the reference uses to cross-check P against D; the checker treats the
# table as a whole head (P = D), so they would contradict it.
_NOT_FREQUENCY_KEYS = ("partial_rotary_factor",)


def main() -> int:
    fixtures = sorted(pathlib.Path(sys.argv[1]).glob("*.json"))
    if not fixtures:
        print(f"error: no fixtures in {sys.argv[1]}", file=sys.stderr)
        return 1
    for path in fixtures:
        spec = rope_mlir.from_hf_config(json.loads(path.read_text()))
        scaling = dict(spec.scaling or {})
        if scaling.get("rope_type", scaling.get("type")) == "dynamic":
            continue
        for key in _NOT_FREQUENCY_KEYS:
            scaling.pop(key, None)
        scaling["rope_theta"] = spec.base
        expected = json.dumps(scaling).replace("\\", "\\\\").replace('"', '\\"')
        d = spec.head_dim
        x = f"tensor<4x2x{d}xf32>"
        if spec.mrope_section is not None:
            positions = "%p3 : tensor<3x4xi64>"
        else:
            positions = "%p : tensor<4xi64>"
        name = path.stem
        print(f'func.func @{name}(%x: {x}, %p: tensor<4xi64>, '
              f'%p3: tensor<3x4xi64>) -> {x} attributes '
              f'{{rope.expected = "{expected}"}} {{')
        print(f"  %y = rope.apply ins(%x : {x}) positions({positions}) "
              f"outs(%x : {x}) {spec.attributes()} -> {x}")
        print(f"  return %y : {x}")
        print("}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
