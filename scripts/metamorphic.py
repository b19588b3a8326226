#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Metamorphic check of --rope-raise (issue 33): the same module, rewritten the way a host compiler may rewrite
it first, must raise the same rotations and attentions with the same attributes.

    python3 scripts/metamorphic.py                    # zoo, fixtures and negatives under every rewrite
    python3 scripts/metamorphic.py --groups zoo --rewrites fuse,fold-unit --inputs 'llama|qwen2' -j 2
    options: --rope-opt PATH (default build/bin/rope-opt), --groups zoo,fixtures,negatives,units,
             --rewrites NAME,... (default: all; --list shows them), --inputs REGEX (on the input's name),
             -j N (parallel rope-opt runs, default 2), --markdown FILE (the tables too), --verbose (each
             mismatch's two op lists), --timeout S (per rope-opt run, default 300)

Inputs (--groups):
  zoo        test/Frontends/Inputs/zoo/*.mlir: whole tiny transformers (scripts/gen-model-zoo.py); the expected
             counts come from its manifest.json (rotations: q and k of every RoPE layer; one attention per layer);
  fixtures   the frontend fixtures: test/Frontends/Inputs/{,attention/,cache/,neighbours/}*.mlir;
  negatives  the mutated fixtures of test/Frontends/negative.mlir and test/Transforms/Raise/rope-raise-layout-negative.mlir
             (each RUN line's `sed`/`perl` edit, applied here) and those files themselves: what is not a rotation
             (one sign, slice bound, frequency, position stream changed) must stay not raised after every rewrite;
  units      the lit tests test/Transforms/Raise/rope-raise*.mlir themselves (split at `// -----`); off by default.

For each input, `rope-opt IN --rope-raise` is the reference; for each rewrite, `rope-opt IN <rewrite> --rope-raise`
must give the same list of rope.apply and rope.attention ops, in order, each with the same signature: the op, its
attributes except those that name dims of the (rewritten) types (token_dims, indexing_maps, query_dim), the operand
clauses it has (positions, offset, cache, mask, ...), the element types and the element count of each input. A rewrite
that only moves ops around may reorder the list: that is reported as `order` and not counted as a mismatch.

Prints one table per group: an input per row, a rewrite per column, each cell `rotations/expected
attentions/expected` (expected: the manifest's counts for the zoo, the reference raise's otherwise), marked `!` when
the raise differs from the reference; then a summary (per rewrite: rotations and attentions raised of expected, inputs
that differ). Exits 1 when any rewritten input raises differently from its reference, 2 on a rope-opt failure.
The CI-sized version is test/Frontends/metamorphic-*.mlir (lit); this script covers everything (a few minutes).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import pathlib
import re
import shlex
import subprocess
import sys
import tempfile
from typing import Dict, List, Optional, Tuple

ROOT = pathlib.Path(__file__).resolve().parents[1]
FRONTENDS = ROOT / "test" / "Frontends"
ZOO = FRONTENDS / "Inputs" / "zoo"

# name -> passes run before --rope-raise. Upstream rewrites a host compiler may run, the test-only ones of
# test/lib/Transforms (the spellings upstream has no pass for), and compositions.
REWRITES: Dict[str, List[str]] = {
    "canon-cse": ["--canonicalize", "--cse"],
    "generalize": ["--linalg-generalize-named-ops"],
    "fuse": ["--linalg-fuse-elementwise-ops"],
    "fold-unit": ["--linalg-fold-unit-extent-dims"],
    "fold-unit-slices": ["--linalg-fold-unit-extent-dims=use-rank-reducing-slices"],
    "swap": ["--rope-test-swap-commutative-operands=permute-inputs"],
    "split": ["--rope-test-split-generic"],
    "gen-split-swap": ["--linalg-generalize-named-ops", "--rope-test-split-generic",
                       "--rope-test-swap-commutative-operands=permute-inputs"],
    "gen-fuse": ["--linalg-generalize-named-ops", "--linalg-fuse-elementwise-ops"],
    "gen-fuse-fold-canon": ["--linalg-generalize-named-ops", "--linalg-fuse-elementwise-ops",
                            "--linalg-fold-unit-extent-dims", "--canonicalize", "--cse"],
    "fold-fuse-swap": ["--linalg-fold-unit-extent-dims", "--linalg-fuse-elementwise-ops",
                       "--rope-test-swap-commutative-operands=permute-inputs"],
}

# Attributes that name dims of the op's types: a rewrite that drops unit dims changes them.
SHAPE_ATTRS = {"token_dims", "indexing_maps", "query_dim"}
OP_RE = re.compile(r"=\s*(rope\.(?:apply|attention))\b(?!_)(.*)$")


class Input:
    def __init__(self, group: str, name: str, path: pathlib.Path, text: Optional[str] = None,
                 split: bool = False, expected: Optional[Tuple[int, int]] = None):
        self.group, self.name, self.path, self.text, self.split = group, name, path, text, split
        self.expected = expected


def split_top(s: str, sep: str = ",") -> List[str]:
    """`s` split at `sep` outside brackets and strings."""
    out, depth, cur, quoted = [], 0, "", False
    for ch in s:
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch in "<[{(":
            depth += 1
        elif not quoted and ch in ">]})":
            depth -= 1
        if ch == sep and depth == 0 and not quoted:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def last_braces(s: str) -> Tuple[str, int]:
    """The last top-level `{...}` of `s` (the attribute dictionary) and where it starts."""
    end = s.rfind("}")
    if end < 0:
        return "", -1
    depth = 0
    for i in range(end, -1, -1):
        if s[i] == "}":
            depth += 1
        elif s[i] == "{":
            depth -= 1
            if depth == 0:
                return s[i + 1:end], i
    return "", -1


def numel(type_text: str) -> str:
    m = re.match(r"tensor<([^>]*)>", type_text.strip())
    if not m:
        return type_text.strip()
    dims = m.group(1).split("x")
    elem, n = dims[-1], 1
    for d in dims[:-1]:
        if d == "?":
            return f"?x{elem}"
        n *= int(d)
    return f"{n}x{elem}"


def signature(op: str, rest: str) -> str:
    """What must not change: the op, its non-shape attributes, operand clauses, input element counts."""
    attrs, start = last_braces(rest.split(" -> ")[0] if " -> " in rest else rest)
    head = rest[:start] if start >= 0 else rest
    kept = []
    for a in split_top(attrs):
        key = a.split("=", 1)[0].strip()
        if key not in SHAPE_ATTRS:
            kept.append(a)
    clauses = []
    for m in re.finditer(r"\b([a-z_]+)\s*\(([^()]*(?:\([^()]*\)[^()]*)*)\)", head):
        word, inner = m.group(1), m.group(2)
        if word == "outs":
            continue
        types = inner.split(":", 1)[1] if ":" in inner else ""
        clauses.append(f"{word}(" + ",".join(numel(t) for t in split_top(types)) + ")")
    return f"{op} " + " ".join(clauses) + " {" + ", ".join(sorted(kept)) + "}"


def raised(text: str) -> List[str]:
    out = []
    for line in text.splitlines():
        m = OP_RE.search(line)
        if m:
            out.append(signature(m.group(1), m.group(2)))
    return out


def run_rope_opt(tool: str, inp: Input, passes: List[str], timeout: float) -> Tuple[Optional[List[str]], str]:
    args = [tool, *passes, "--rope-raise"]
    if inp.split:
        args.append("--split-input-file")
    try:
        if inp.text is not None:
            r = subprocess.run(args + ["-"], input=inp.text, capture_output=True, text=True, timeout=timeout)
        else:
            r = subprocess.run(args + [str(inp.path)], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "timeout"
    if r.returncode != 0:
        err = r.stderr.strip().splitlines()
        return None, err[-1] if err else f"exit {r.returncode}"
    return raised(r.stdout), ""


def lit_runs(path: pathlib.Path) -> List[str]:
    """The RUN commands of a lit test, continuation lines joined."""
    cmds, cur = [], ""
    for line in path.read_text().splitlines():
        m = re.match(r"\s*//\s*RUN:(.*)$", line)
        if not m:
            continue
        part = m.group(1).rstrip()
        if part.endswith("\\"):
            cur += part[:-1] + " "
            continue
        cmds.append((cur + part).strip())
        cur = ""
    return cmds


def negatives(path: pathlib.Path) -> List[Input]:
    """The mutations of a negative lit test (the `sed`/`perl` before its first pipe), applied; and the file."""
    out = []
    seen = set()
    split_self = False
    for i, cmd in enumerate(lit_runs(path)):
        cmd = (cmd.replace("%%", "\0").replace("%S", str(path.parent)).replace("%s", str(path))
               .replace("\0", "%"))
        first = cmd.split(" | ")[0]
        if f"{path}" in cmd and "rope-opt" in first and "--split-input-file" in cmd:
            split_self = True
        if not re.match(r"(sed|perl)\b", first) or first in seen:
            continue
        seen.add(first)
        r = subprocess.run(["bash", "-c", first], capture_output=True, text=True, cwd=ROOT)
        if r.returncode != 0 or not r.stdout:
            print(f"warning: {path.name} RUN {i}: the mutation failed: {r.stderr.strip()}", file=sys.stderr)
            continue
        # A name: the FileCheck prefix the RUN line checks.
        prefix = re.search(r"--check-prefix(?:es)?=([A-Za-z0-9_,-]+)", cmd)
        name = f"{path.stem}:{prefix.group(1) if prefix else i}"
        out.append(Input("negatives", name, path, text=r.stdout, split="--split-input-file" in cmd))
    out.append(Input("negatives", path.stem, path, split=split_self or "// -----" in path.read_text()))
    return out


def collect(groups: List[str], pattern: Optional[str]) -> List[Input]:
    inputs: List[Input] = []
    if "zoo" in groups:
        manifest = json.loads((ZOO / "manifest.json").read_text())
        for model in manifest["models"]:
            exp = model["expected"]
            for mode, info in model["modes"].items():
                inputs.append(Input("zoo", f"{model['name']}_{mode}", ZOO / info["file"],
                                    expected=(exp["rotations"], exp["attentions"])))
    if "fixtures" in groups:
        for sub in ["", "attention", "cache", "neighbours"]:
            for p in sorted((FRONTENDS / "Inputs" / sub).glob("*.mlir")):
                inputs.append(Input("fixtures", (f"{sub}/" if sub else "") + p.stem, p))
        fx = ROOT / "python" / "tests" / "fixtures"
        for p in sorted(fx.rglob("*.mlir")) if fx.exists() else []:
            inputs.append(Input("fixtures", "py/" + p.stem, p))
    if "negatives" in groups:
        inputs += negatives(FRONTENDS / "negative.mlir")
        inputs += negatives(ROOT / "test" / "Transforms" / "Raise" / "rope-raise-layout-negative.mlir")
    if "units" in groups:
        for p in sorted((ROOT / "test" / "Transforms" / "Raise").glob("rope-raise*.mlir")):
            if "negative" in p.name:
                continue
            inputs.append(Input("units", p.stem, p, split="// -----" in p.read_text()))
    if pattern:
        inputs = [i for i in inputs if re.search(pattern, i.name)]
    return inputs


def counts(sig: List[str]) -> Tuple[int, int]:
    return (sum(s.startswith("rope.apply") for s in sig), sum(s.startswith("rope.attention") for s in sig))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rope-opt", default=str(ROOT / "build" / "bin" / "rope-opt"))
    ap.add_argument("--groups", default="zoo,fixtures,negatives")
    ap.add_argument("--rewrites", default=",".join(REWRITES))
    ap.add_argument("--inputs", default=None)
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--markdown", default=None)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    if a.list:
        for k, v in REWRITES.items():
            print(f"{k:22} {' '.join(v)}")
        return 0
    rewrites = [r for r in a.rewrites.split(",") if r]
    for r in rewrites:
        if r not in REWRITES:
            ap.error(f"unknown rewrite {r} (--list)")
    inputs = collect(a.groups.split(","), a.inputs)
    jobs = [(i, None) for i in inputs] + [(i, r) for i in inputs for r in rewrites]
    results: Dict[Tuple[int, Optional[str]], Tuple[Optional[List[str]], str]] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.j)) as ex:
        futs = {ex.submit(run_rope_opt, a.rope_opt, inp, REWRITES[r] if r else [], a.timeout): (id(inp), r)
                for inp, r in jobs}
        for f in concurrent.futures.as_completed(futs):
            results[futs[f]] = f.result()

    lines: List[str] = []
    status = 0
    details: List[str] = []
    summary: Dict[str, Dict[str, List[int]]] = {}
    for group in ["zoo", "fixtures", "negatives", "units"]:
        members = [i for i in inputs if i.group == group]
        if not members:
            continue
        lines.append(f"\n### {group}: rotations/expected attentions/expected (! differs from the reference raise)\n")
        lines.append("| input | reference | " + " | ".join(rewrites) + " |")
        lines.append("|---" * (len(rewrites) + 2) + "|")
        tot = summary.setdefault(group, {})
        for inp in members:
            ref, err = results[(id(inp), None)]
            if ref is None:
                lines.append(f"| {inp.name} | ERROR: {err} |" + " |" * len(rewrites))
                status = max(status, 2)
                continue
            exp = inp.expected or counts(ref)
            rc = counts(ref)
            row = [inp.name, f"{rc[0]}/{exp[0]} {rc[1]}/{exp[1]}"]
            t = tot.setdefault("reference", [0, 0, 0, 0, 0])
            t[0] += rc[0]; t[1] += exp[0]; t[2] += rc[1]; t[3] += exp[1]
            for r in rewrites:
                sig, err = results[(id(inp), r)]
                t = tot.setdefault(r, [0, 0, 0, 0, 0])
                t[1] += exp[0]; t[3] += exp[1]
                if sig is None:
                    row.append("ERR")
                    status = max(status, 2)
                    t[4] += 1
                    details.append(f"{inp.name} / {r}: rope-opt failed: {err}")
                    continue
                c = counts(sig)
                t[0] += c[0]; t[2] += c[1]
                mark = ""
                if sig != ref:
                    if sorted(sig) == sorted(ref):
                        mark = " order"
                    else:
                        mark = " !"
                        t[4] += 1
                        status = max(status, 1)
                        d = f"{inp.name} / {r}: {c[0]} rotations, {c[1]} attentions; reference {rc[0]}, {rc[1]}"
                        if a.verbose:
                            d += "\n    reference:\n      " + "\n      ".join(ref or ["(none)"])
                            d += "\n    rewritten:\n      " + "\n      ".join(sig or ["(none)"])
                        details.append(d)
                row.append(f"{c[0]}/{exp[0]} {c[1]}/{exp[1]}{mark}")
            lines.append("| " + " | ".join(row) + " |")
    lines.append("\n### summary: rotations raised/expected, attentions raised/expected, inputs differing\n")
    lines.append("| group | " + " | ".join(["reference"] + rewrites) + " |")
    lines.append("|---" * (len(rewrites) + 2) + "|")
    for group, tot in summary.items():
        cells = []
        for r in ["reference"] + rewrites:
            t = tot.get(r, [0, 0, 0, 0, 0])
            cells.append(f"{t[0]}/{t[1]} {t[2]}/{t[3]}" + (f" ({t[4]}!)" if r != "reference" else ""))
        lines.append(f"| {group} | " + " | ".join(cells) + " |")
    text = "\n".join(lines)
    print(text)
    if details:
        print("\nmismatches:\n" + "\n".join(details))
    if a.markdown:
        pathlib.Path(a.markdown).write_text(text + "\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
