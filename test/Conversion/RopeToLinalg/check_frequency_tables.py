#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Checks rope-opt's folded frequency tables against the float64 reference.

Used by frequency-tables.mlir (not a lit test itself: lit only runs *.mlir):

    rope-opt frequency-tables.mlir --convert-rope-to-linalg | python3 check_frequency_tables.py
    rope-opt frequency-tables.mlir | python3 check_frequency_tables.py

Convention: every function to check carries a string attribute
`rope.expected` holding a JSON Hugging Face style `rope_scaling` dict, e.g.

    func.func @yarn_p64(...) attributes {rope.expected = "{\"rope_type\": \"yarn\", \"rope_theta\": 1000000.0,
                                                          \"factor\": 4.0, \"original_max_position_embeddings\": 32768}"}

`rope_theta` is the base (default 10000); the rotary dimension P is taken from
the table's type (tensor<P/2 x f64>), and `head_dim` is P (the tests rotate
whole heads). The expected values are recomputed with
`rope_mlir.reference.inv_frequencies`, which shares no code with the compiler.

What is checked, per function with `rope.expected`:
- lowered IR: the `arith.constant dense<...> : tensor<Nxf64>` theta tables.
  Static schemes must have exactly one, equal to theta'. `longrope` must have
  two, in creation order: the short table (a call no longer than L) and the
  long one (a call longer than L).
- IR that still holds `rope.apply`: its `magnitude` (absent means 1) equals
  the reference magnitude `a`.
Every element must agree to a relative difference of 1e-13 (an absolute one
where the reference is 0). A function with `rope.expected` but nothing to
check, or a table without `rope.expected`, is an error too, so the test
cannot pass vacuously. On success prints one summary line (FileCheck'd by
the test); on failure prints every mismatch and exits with status 1.
"""

import importlib.util
import json
import os
import re
import struct
import sys

# rope_mlir.reference from this checkout, loaded as a file: it needs only
# numpy, while importing the rope_mlir package would also load its JIT
# runtime, which this check does not use.
_REFERENCE = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "python", "rope_mlir", "reference.py"
)
_spec = importlib.util.spec_from_file_location("rope_mlir.reference", _REFERENCE)
_reference = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_reference)
inv_frequencies = _reference.inv_frequencies

RTOL = 1e-13

FUNC_RE = re.compile(r"^\s*func\.func\s+(?:private\s+)?@([\w$.]+)")
EXPECTED_RE = re.compile(r'rope\.expected\s*=\s*"((?:[^"\\]|\\.)*)"')
TABLE_RE = re.compile(r"arith\.constant\s+dense<(.*?)>\s*:\s*tensor<(\d+)xf64>")
APPLY_RE = re.compile(r"\brope\.apply\b")
MAGNITUDE_RE = re.compile(r"\bmagnitude\s*=\s*([-+0-9.eEinfa]+|0x[0-9A-Fa-f]+)\s*:\s*f64")


def unescape_mlir_string(text):
    """MLIR prints `"` as \\22 and other non-printables as \\XX."""

    def repl(m):
        esc = m.group(1)
        if len(esc) == 2:
            return chr(int(esc, 16))
        return {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}.get(esc, esc)

    return re.sub(r"\\([0-9A-Fa-f]{2}|.)", repl, text)


def parse_float(token):
    token = token.strip()
    if token.lower().startswith("0x"):
        return struct.unpack("<d", struct.pack("<Q", int(token, 16)))[0]
    return float(token)


def parse_dense(body, count):
    """The elements of `dense<body> : tensor<count x f64>`."""
    body = body.strip()
    if body.startswith('"0x'):
        # Hex blob: little-endian f64s (a splat is a single element).
        raw = bytes.fromhex(body[3:-1])
        values = list(struct.unpack("<%dd" % (len(raw) // 8), raw))
    elif body.startswith("["):
        values = [parse_float(t) for t in body.strip("[]").split(",") if t.strip()]
    else:
        values = [parse_float(body)]
    if len(values) == 1 and count != 1:
        values = values * count  # splat
    if len(values) != count:
        raise ValueError("dense<%s> has %d elements, type says %d" % (body, len(values), count))
    return values


def compare(errors, where, actual, expected):
    if len(actual) != len(expected):
        errors.append("%s: %d values, expected %d" % (where, len(actual), len(expected)))
        return
    for i, (a, e) in enumerate(zip(actual, expected)):
        e = float(e)
        diff = abs(a - e) if e == 0.0 else abs(a - e) / abs(e)
        if not (diff <= RTOL):
            errors.append(
                "%s[%d]: got %r, reference %r (relative difference %.3g > %g)" % (where, i, a, e, diff, RTOL)
            )


def reference(cfg, rotary_dim, seq_len=None):
    scaling = dict(cfg)
    base = scaling.pop("rope_theta", 10000.0)
    return inv_frequencies(rotary_dim, base, scaling, head_dim=rotary_dim, seq_len=seq_len)


def split_functions(lines):
    """[(name, expected-json-or-None, [lines])] in order."""
    funcs = []
    for line in lines:
        m = FUNC_RE.match(line)
        if m:
            e = EXPECTED_RE.search(line)
            funcs.append([m.group(1), unescape_mlir_string(e.group(1)) if e else None, []])
        if funcs:
            funcs[-1][2].append(line)
    return funcs


def main():
    errors = []
    num_tables = num_magnitudes = num_funcs = 0
    for name, expected, body in split_functions(sys.stdin.read().splitlines()):
        tables = [(int(m.group(2)), m.group(1)) for line in body for m in TABLE_RE.finditer(line)]
        applies = [line for line in body if APPLY_RE.search(line)]
        if expected is None:
            if tables:
                errors.append("@%s: a tensor<Nxf64> table but no rope.expected attribute" % name)
            continue
        num_funcs += 1
        try:
            cfg = json.loads(expected)
        except ValueError as e:
            errors.append("@%s: rope.expected is not JSON (%s): %s" % (name, e, expected))
            continue
        kind = cfg.get("rope_type", cfg.get("type", "default"))
        kind = {"su": "longrope"}.get(kind, kind)  # Phi-3's first spelling
        if not tables and not applies:
            errors.append("@%s: nothing to check (no f64 table and no rope.apply)" % name)
            continue

        if tables:
            want = 2 if kind == "longrope" else 1
            if len(tables) != want:
                errors.append("@%s: %d f64 tables, expected %d for %s" % (name, len(tables), want, kind))
                continue
            counts = {n for n, _ in tables}
            if len(counts) != 1:
                errors.append("@%s: tables of different sizes %s" % (name, sorted(counts)))
                continue
            rotary_dim = 2 * tables[0][0]
            try:
                if kind == "longrope":
                    big_l = cfg["original_max_position_embeddings"]
                    refs = [
                        ("short", reference(cfg, rotary_dim)[0]),
                        ("long", reference(cfg, rotary_dim, seq_len=big_l + 1)[0]),
                    ]
                else:
                    refs = [("theta", reference(cfg, rotary_dim)[0])]
            except ValueError as e:
                errors.append("@%s: the reference rejects %s at P = %d: %s" % (name, expected, rotary_dim, e))
                continue
            for (count, text), (label, ref) in zip(tables, refs):
                try:
                    actual = parse_dense(text, count)
                except ValueError as e:
                    errors.append("@%s: %s" % (name, e))
                    continue
                compare(errors, "@%s %s (P = %d)" % (name, label, rotary_dim), actual, ref)
                num_tables += 1

        for line in applies:
            # The rotary dimension: rotary_dim if given, else the head dim.
            m = re.search(r"rotary_dim\s*=\s*(\d+)", line)
            if m:
                rotary_dim = int(m.group(1))
            else:
                shape = re.search(r"ins\(%[^:]*:\s*tensor<([0-9x?]+)x[a-z0-9]+>", line)
                rotary_dim = int(shape.group(1).split("x")[-1])
            m = MAGNITUDE_RE.search(line)
            actual = parse_float(m.group(1)) if m else 1.0
            try:
                ref = reference(cfg, rotary_dim)[1]
            except ValueError as e:
                errors.append("@%s: the reference rejects %s at P = %d: %s" % (name, expected, rotary_dim, e))
                continue
            compare(errors, "@%s magnitude" % name, [actual], [ref])
            num_magnitudes += 1

    if errors:
        for e in errors:
            print("error: " + e, file=sys.stderr)
        print("FAILED: %d mismatches" % len(errors))
        return 1
    print("OK: %d functions, %d tables, %d magnitudes" % (num_funcs, num_tables, num_magnitudes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
