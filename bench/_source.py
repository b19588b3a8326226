"""The commit a benchmark report measured (shared by the bench scripts that
write docs/ regions)."""

from __future__ import annotations

import pathlib
import subprocess

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
