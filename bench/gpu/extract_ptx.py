#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Prints the PTX (or writes the cubin) held by the gpu.binary ops of an MLIR
file produced by `rope-opt --rope-to-nvvm`.

usage: extract_ptx.py IN.mlir [-o OUT] [--name KERNEL_MODULE]

The object's bytes are an MLIR string literal: printable characters as they
are, others as \\XX hex escapes (and \\\\, \\").
"""

import argparse
import re
import sys

# The object's bytes are its last string literal, the one closing `>]`.
OBJECT = re.compile(r'gpu\.binary\s+@(\w+).*?"((?:[^"\\]|\\.)*)"\s*>\s*\]', re.S)


def unescape(text):
    out = bytearray()
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\":
            nxt = text[i + 1]
            if nxt in '\\"':
                out.append(ord(nxt))
                i += 2
            elif nxt == "n":
                out.append(10)
                i += 2
            elif nxt == "t":
                out.append(9)
                i += 2
            else:
                out.append(int(text[i + 1 : i + 3], 16))
                i += 3
        else:
            out.extend(c.encode())
            i += 1
    return bytes(out)


def binaries(mlir_text):
    return {m.group(1): unescape(m.group(2)) for m in OBJECT.finditer(mlir_text)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("input")
    parser.add_argument("-o", "--output", default="-")
    parser.add_argument("--name", help="the gpu.binary symbol (default: the only one)")
    args = parser.parse_args()
    text = sys.stdin.read() if args.input == "-" else open(args.input).read()
    found = binaries(text)
    if not found:
        sys.exit("no gpu.binary found")
    if args.name:
        data = found[args.name]
    elif len(found) == 1:
        data = next(iter(found.values()))
    else:
        sys.exit("several gpu.binary ops: pass --name (%s)" % ", ".join(found))
    if args.output == "-":
        sys.stdout.buffer.write(data)
    else:
        with open(args.output, "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
