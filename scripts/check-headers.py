#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Checks the licence header of every source file of rope-mlir; --fix repairs
what it can.

    python3 scripts/check-headers.py            # list the problems, exit 1 if any
    python3 scripts/check-headers.py --fix      # rewrite the headers, then check
    python3 scripts/check-headers.py --fix FILE...  # only these files

The project is under the Apache License v2.0 with LLVM Exceptions (LICENSE),
and its files say so the way upstream LLVM's do.

C++, CUDA and TableGen (.cpp, .h, .cu, .td) start with an 80-column banner
naming the file, then the licence block and a separator:

    //===- RopeOps.h - Rope operations ------------------------------*- C++ -*-===//
    //
    // Part of the rope-mlir project, under the Apache License v2.0 with LLVM
    // Exceptions.
    // See LICENSE for license information.
    // SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
    //
    //===----------------------------------------------------------------------===//

(upstream's "Part of the LLVM Project, ... with LLVM Exceptions." line is
exactly 80 columns; with our longer name it would be 85, and clang-format
reflows it, so it is two lines here). Headers (.h) carry `-*- C++ -*-` (Emacs
would take a .h for C), TableGen files `-*- tablegen -*-`; in a .cpp/.cu the
mode is optional. Every line that starts with `//===` is 80 columns (code
points, as clang-format counts them). The C header (include/rope/Runtime/
RopeJit.h) has upstream's `/*===` box for llvm-c headers: the same checks,
every box line 80 columns; --fix leaves it to a person.

Python, shell, CMake, TOML and libFuzzer dictionaries carry
`# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception` as their first
line after a shebang (`#!`), an Emacs mode or coding line (`# -*- ... -*-`)
or a configure-time header (`@LIT_SITE_CFG_IN_HEADER@`). Linker export lists
(*.exports) start with the same identifier in a `/* */` comment.

Exempt (not checked): lit tests (*.mlir: RUN lines come first, and upstream
does not license its tests either), generated files and fixtures
(docs/reference/, test/Frontends/Inputs/, *.onnx, *.npz, *.json), and files
that are not source (Markdown, *.txt data such as requirements.txt and
test/downstream/expected.txt, .gitignore, .clang-format, LICENSE itself).

The set of files is what git tracks plus untracked files git does not
ignore, so a new file is checked before it is committed.
python/tests/architecture/test_headers.py runs this check in the test suite.
"""

from __future__ import annotations

import argparse
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]

WIDTH = 80
SPDX = "SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception"
SEPARATOR = "//===" + "-" * (WIDTH - 10) + "===//"
LICENSE_BLOCK = [
    "//",
    "// Part of the rope-mlir project, under the Apache License v2.0 with LLVM",
    "// Exceptions.",
    "// See LICENSE for license information.",
    "// " + SPDX,
    "//",
]
# Comment lines of older headers that --fix replaces by LICENSE_BLOCK.
OLD_LICENSE_LINE = re.compile(
    r"^//( Part of the rope-mlir project.*| Exceptions\.| See LICENSE.*|"
    r" SPDX-License-Identifier:.*)?$")

CXX_SUFFIXES = {".cpp": None, ".cu": None, ".h": "C++", ".td": "tablegen"}
HASH_SUFFIXES = {".py", ".sh", ".cmake", ".toml", ".dict"}
HASH_NAMES = {"CMakeLists.txt"}
EXEMPT_DIRS = ("docs/reference/", "test/Frontends/Inputs/")

BANNER = re.compile(
    r"^//===-{1,2} (?P<name>\S+) - (?P<desc>.*?) -+"
    r"(?:\*- (?P<mode>\S+) -\*-)?===//$")
C_BANNER = re.compile(
    r"^/\*===-{1,2} (?P<name>\S+) - (?P<desc>.*?) -+"
    r"\*- (?P<mode>\S+) -\*-===\*\\$")
# A banner clang-format broke in two because it was over 80 columns:
# "//===- X.h - ... -*- C++" + "//-*-===//".
BROKEN_TAIL = re.compile(r"^//(-\*-)?=*//$|^//-\*-=*//$")
PREAMBLE = re.compile(r"^(#!|# -\*-.*-\*-|# .*coding[:=]|@[A-Z_]+@$)")


def kind(rel: str) -> str | None:
    """"cxx", "hash", "exports", or None for a file that is not checked."""
    if rel.startswith(EXEMPT_DIRS):
        return None
    path = pathlib.PurePosixPath(rel)
    suffix = path.suffix
    if suffix == ".in":  # configured files: lit.site.cfg.py.in, *.cmake.in
        suffix = pathlib.PurePosixPath(path.stem).suffix
    if suffix in CXX_SUFFIXES:
        return "cxx"
    if suffix in HASH_SUFFIXES or path.name in HASH_NAMES:
        return "hash"
    if suffix == ".exports":
        return "exports"
    if not suffix and (ROOT / rel).is_file():
        with open(ROOT / rel, "rb") as f:  # an extensionless script
            if f.read(2) == b"#!":
                return "hash"
    return None


def source_files() -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return sorted(rel for rel in set(out.split())
                  if (ROOT / rel).is_file() and kind(rel))


def make_banner(name: str, desc: str, mode: str | None) -> str | None:
    """The 80-column banner, or None when the description is too long."""
    head = f"//===- {name} - {desc} "
    tail = f"*- {mode} -*-===//" if mode else "===//"
    dashes = WIDTH - len(head) - len(tail)
    return head + "-" * dashes + tail if dashes >= 1 else None


def required_mode(rel: str) -> str | None:
    return CXX_SUFFIXES[pathlib.PurePosixPath(rel).suffix]


def check_cxx(rel: str, lines: list[str]) -> list[str]:
    name = pathlib.PurePosixPath(rel).name
    first = lines[0] if lines else ""
    if first.startswith("/*===") and rel.endswith(".h"):
        return check_c_box(rel, lines)
    problems = []
    m = BANNER.match(first)
    if not m:
        problems.append("line 1 is not a `//===- File - Description ---===//`"
                        " banner")
    else:
        if m["name"] != name:
            problems.append(f"the banner names {m['name']}, not {name}")
        mode = required_mode(rel)
        if mode and m["mode"] != mode:
            problems.append(f"the banner lacks `-*- {mode} -*-`")
        elif not mode and m["mode"] not in (None, "C++", "CUDA"):
            problems.append(f"the banner's mode is {m['mode']}")
    if lines[1:1 + len(LICENSE_BLOCK)] != LICENSE_BLOCK or \
            lines[1 + len(LICENSE_BLOCK):2 + len(LICENSE_BLOCK)] != [SEPARATOR]:
        if not any(SPDX in line for line in lines[:12]):
            problems.append("no SPDX-License-Identifier line")
        else:
            problems.append("lines 2-8 are not the licence block")
    for number, line in enumerate(lines, 1):
        if line.startswith("//===") and len(line) != WIDTH:
            problems.append(f"line {number} is {len(line)} columns, not "
                            f"{WIDTH}")
    return problems


def check_c_box(rel: str, lines: list[str]) -> list[str]:
    """upstream's llvm-c banner: /*===- ... -*- C -*-===*\\, |* ... *| lines,
    \\*===---===*/."""
    name = pathlib.PurePosixPath(rel).name
    problems = []
    m = C_BANNER.match(lines[0])
    if not m:
        problems.append("line 1 is not a `/*===- File - Description "
                        "---*- C -*-===*\\` banner")
    elif m["name"] != name:
        problems.append(f"the banner names {m['name']}, not {name}")
    end = next((i for i, line in enumerate(lines) if line.startswith("\\*===")),
               None)
    if end is None:
        return problems + ["the banner box has no closing `\\*===...===*/`"]
    for number, line in enumerate(lines[:end + 1], 1):
        if len(line) != WIDTH:
            problems.append(f"line {number} is {len(line)} columns, not "
                            f"{WIDTH}")
        elif number > 1 and number <= end and \
                not (line.startswith("|*") and line.endswith("*|")):
            problems.append(f"line {number} is not a `|* ... *|` box line")
    if not any(line.startswith("|* " + SPDX) for line in lines[:end]):
        problems.append("no SPDX-License-Identifier line")
    return problems


def preamble_length(lines: list[str]) -> int:
    n = 0
    while n < len(lines) and PREAMBLE.match(lines[n]):
        n += 1
    return n


def check_hash(rel: str, lines: list[str]) -> list[str]:
    n = preamble_length(lines)
    if lines[n:n + 1] != ["# " + SPDX]:
        return [f"line {n + 1} is not `# {SPDX}`"]
    return []


def check_exports(rel: str, lines: list[str]) -> list[str]:
    if lines[:1] != [f"/* {SPDX} */"]:
        return [f"line 1 is not `/* {SPDX} */`"]
    return []


CHECKS = {"cxx": check_cxx, "hash": check_hash, "exports": check_exports}


def fix_cxx(rel: str, lines: list[str]) -> list[str]:
    if lines and lines[0].startswith("/*==="):
        return lines  # the C box: by hand
    first, rest = lines[0], lines[1:]
    if rest and BROKEN_TAIL.match(rest[0]) and not BANNER.match(first):
        first = first + " " + rest[0][2:]
        rest = rest[1:]
    m = re.match(r"^//===-+ (\S+) - (.*)$", first)
    if not m:
        return lines
    desc = m[2]
    mode = None
    mm = re.search(r"\s*-*\*- (\S+) -\*-[=/-]*$", desc)
    if mm:
        mode, desc = mm[1], desc[:mm.start()]
    desc = re.sub(r"[\s=/-]*$", "", desc)
    mode = required_mode(rel) or mode
    banner = make_banner(pathlib.PurePosixPath(rel).name, desc, mode)
    if banner is None:
        return lines  # the description must be shortened by hand
    # Drop the old licence lines and the separator after them.
    i = 0
    while i < len(rest) and OLD_LICENSE_LINE.match(rest[i]):
        i += 1
    if i < len(rest) and rest[i] == SEPARATOR:
        i += 1
    rest = rest[i:]
    header = [banner, *LICENSE_BLOCK, SEPARATOR]
    if rest and rest[0].startswith("// "):
        header.append("//")  # a description follows: `//` then its text
    return header + rest


def fix_hash(rel: str, lines: list[str]) -> list[str]:
    n = preamble_length(lines)
    lines = lines[:n] + [line for line in lines[n:n + 1] if SPDX not in line] \
        + lines[n + 1:]
    return lines[:n] + ["# " + SPDX] + lines[n:]


def fix_exports(rel: str, lines: list[str]) -> list[str]:
    return [f"/* {SPDX} */"] + [line for line in lines[:1] if SPDX not in line] \
        + lines[1:]


FIXES = {"cxx": fix_cxx, "hash": fix_hash, "exports": fix_exports}


def read(rel: str) -> tuple[list[str], str]:
    text = (ROOT / rel).read_text(encoding="utf-8")
    return text.split("\n"), text


def check(rel: str) -> list[str]:
    lines, _ = read(rel)
    return CHECKS[kind(rel)](rel, lines)


def fix(rel: str) -> bool:
    lines, text = read(rel)
    k = kind(rel)
    if not CHECKS[k](rel, lines):
        return False
    new = "\n".join(FIXES[k](rel, lines))
    if new != text:
        (ROOT / rel).write_text(new, encoding="utf-8")
        return True
    return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fix", action="store_true",
                        help="rewrite the headers that are wrong")
    parser.add_argument("files", nargs="*",
                        help="files relative to the repository root "
                             "(default: every source file)")
    args = parser.parse_args(argv)
    if args.files:
        files = []
        for f in args.files:
            rel = (pathlib.Path.cwd() / f).resolve().relative_to(ROOT)
            rel = rel.as_posix()
            if kind(rel):
                files.append(rel)
    else:
        files = source_files()
    if args.fix:
        for rel in files:
            if fix(rel):
                print(f"fixed {rel}")
    failed = 0
    for rel in files:
        for problem in check(rel):
            print(f"{rel}: {problem}")
            failed += 1
    if failed:
        print(f"{failed} problem(s); `python3 scripts/check-headers.py --fix` "
              "repairs most (a description too long for 80 columns, and the C "
              "header's box, are by hand)", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
