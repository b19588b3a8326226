# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""What the bench scripts that write docs/ regions share: the commit a report
measured, and the writing of a report between its markers."""

from __future__ import annotations

import pathlib
import subprocess
from typing import List

ROOT = pathlib.Path(__file__).resolve().parents[1]


def source_line() -> str:
    """The commit measured, and whether the working tree differed from it (the
    package and the compiler are loaded from the working tree and its
    build)."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                              capture_output=True, text=True,
                              timeout=10).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", "lib",
             "include", "python/rope_mlir", "tools", "bench"], cwd=ROOT,
            capture_output=True, text=True, timeout=10).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        return "source: unknown (no git)"
    if not head:
        return "source: unknown (no git)"
    return f"source: commit {head}" + (
        f", with uncommitted changes to {len(dirty)} files of lib/, include/, "
        "python/rope_mlir/, tools/ or bench/" if dirty else "")


def replace_region(path: pathlib.Path, lines: List[str], begin: str,
                   end: str) -> None:
    """Replaces the text between the `begin` and `end` markers of `path` (one
    of each, in that order) by `lines`."""
    text = path.read_text()
    if text.count(begin) != 1 or text.count(end) != 1 or \
            text.index(begin) > text.index(end):
        raise SystemExit(f"{path}: needs exactly one {begin} ... {end} region")
    head, rest = text.split(begin)
    _, tail = rest.split(end)
    path.write_text(head + begin + "\n" + "\n".join(lines).rstrip() + "\n" +
                    end + tail)
