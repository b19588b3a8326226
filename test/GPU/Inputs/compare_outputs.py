#!/usr/bin/env python3
"""Compares the numbers two runs printed (printMemref output), with a relative
tolerance: the emulated GPU kernel and the CPU pipeline use different sin/cos
implementations (libm vs. polynomials), so their last digits may differ.

usage: compare_outputs.py A B [RTOL]"""

import re
import sys

NUM = re.compile(r"-?(?:nan|inf|\d+(?:\.\d*)?(?:e[-+]?\d+)?)", re.I)


def numbers(path):
    with open(path) as f:
        lines = [line for line in f if not line.startswith("Unranked Memref")]
    return [float(v) for v in NUM.findall("".join(lines))]


a, b = numbers(sys.argv[1]), numbers(sys.argv[2])
rtol = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-5
if len(a) != len(b):
    sys.exit(f"different lengths: {len(a)} vs {len(b)}")
scale = max(1.0, max((abs(v) for v in a), default=0.0))
bad = [(i, x, y) for i, (x, y) in enumerate(zip(a, b)) if not (abs(x - y) <= rtol * scale or (x != x and y != y))]
if bad:
    sys.exit(f"{len(bad)} of {len(a)} differ, first: {bad[:5]}")
print(f"MATCH {len(a)} numbers")
