#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Builds rope-fuzz's seed corpus from the lit suite and the Hugging Face fixtures.

Every test/**/*.mlir is split at `// -----`, full-line comments (RUN, CHECK,
expected-error) are dropped, and each piece is written once per rope-fuzz
target that the file's RUN lines name (all variants of the pass), prefixed
with that target's selector byte. Pieces of files that name no target go to
the plain lowerings and canonicalize. The targets come from the harness itself
(ROPE_FUZZ_LIST_TARGETS=1), so the two cannot drift apart. Files are named by
content hash, as libFuzzer names its corpus. Options a RUN line gives a pass
also make seeds with a `//! <options>` first line. Each Hugging Face config in
python/tests/fixtures/hf becomes a seed of the importer target, in the JSON
form rope-fuzz.cpp describes.

The frontend fixtures (test/Frontends/Inputs/**, no RUN lines) go to the
raise targets, compacted (no indentation) so that more of them fit libFuzzer's
-max_len (scripts/fuzz.sh), and once more without their dense_resource blobs
(which make most of the size of some; the raise still follows the algebra and
only fails to read the tables), together with MUTANTS structure-aware mutants
of them from test/fuzz/mutate_frontend.py (seed 1): a start for libFuzzer near
the out-of-bounds indices of issue 32.

usage: make_corpus.py ROPE_FUZZ REPO_ROOT OUT_DIR
"""

import json

import hashlib
import os
import pathlib
import re
import subprocess
import sys

DEFAULT_TARGETS = ("convert-rope-to-linalg", "convert-rope-to-vector", "canonicalize")


def targets(rope_fuzz):
    env = dict(os.environ, ROPE_FUZZ_LIST_TARGETS="1")
    out = subprocess.run([rope_fuzz], env=env, check=True, capture_output=True, text=True)
    return [line for line in out.stdout.splitlines() if line]


def pieces(path):
    text = path.read_text(errors="replace")
    for piece in re.split(r"^// -----\s*$", text, flags=re.M):
        kept = [line for line in piece.splitlines() if not line.lstrip().startswith("//")]
        body = "\n".join(kept).strip()
        if body:
            yield body + "\n"


def huggingface_seed(config):
    """The importer's arguments for a config.json, roughly as rope_mlir.hf
    derives them (a seed need only be close)."""
    config = config.get("text_config", config)
    scaling = dict(config.get("rope_scaling") or config.get("rope_parameters") or {})
    for key in ("max_position_embeddings", "original_max_position_embeddings"):
        if key in config and scaling.get("rope_type", scaling.get("type")) not in (None, "default"):
            scaling.setdefault(key, config[key])
    scaling.pop("rope_theta", None)
    head_dim = (config.get("qk_rope_head_dim") or config.get("head_dim") or
                config.get("hidden_size", 4096) // config.get("num_attention_heads", 32))
    base = config.get("rope_theta") or (config.get("rope_parameters") or {}).get("rope_theta") or 10000
    return {"rope_scaling": scaling or None, "base": base, "head_dim": head_dim, "rotary_dim": 0}


MUTANTS = 60
# libFuzzer cuts longer inputs (scripts/fuzz.sh's -max_len): whole-model
# exports (zoo/, about 1 MB) make no seed.
MAX_SEED = 16384


def compact(body):
    return "\n".join(line.strip() for line in body.splitlines() if line.strip()) + "\n"


def without_blobs(body):
    return re.sub(r"\{-#.*?#-\}", "", body, flags=re.S)


def write(out, index, body):
    data = bytes([index]) + body.encode()
    (out / hashlib.sha1(data).hexdigest()).write_bytes(data)


def main():
    rope_fuzz, root, out_dir = sys.argv[1:4]
    names = targets(rope_fuzz)
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    count = 0
    hf = names.index("huggingface-rope-scaling")
    for path in sorted((pathlib.Path(root) / "python/tests/fixtures/hf").glob("*.json")):
        write(out, hf, json.dumps(huggingface_seed(json.loads(path.read_text()))))
        count += 1
    for path in sorted((pathlib.Path(root) / "test").rglob("*.mlir")):
        if "downstream" in path.parts or "fuzz" in path.parts:
            continue
        runs = " ".join(l for l in path.read_text(errors="replace").splitlines() if "RUN:" in l)
        chosen = [i for i, t in enumerate(names)
                  if re.search(r"[-(,\s]" + re.escape(t.split("{")[0]) + r"\b", runs)]
        if "Frontends" in path.parts and "Inputs" in path.parts:
            # Frontend fixtures (no RUN lines): what raising reads.
            chosen = [i for i, t in enumerate(names)
                      if t.split("{")[0] in ("rope-raise", "rope-optimize",
                                             "rope-split-complex-constants")]
        if not chosen:
            chosen = [names.index(t) for t in DEFAULT_TARGETS]
        # Options the RUN lines give a pass: seeds with a `//!` options line.
        options = [(names.index(next(t for t in names if t.split("{")[0] == m[0])), m[1] or m[2])
                   for m in re.findall(r"--([a-z0-9-]+)=(?:\"([^\"]*)\"|([^\s\"]+))", runs)
                   if any(t.split("{")[0] == m[0] for t in names)]
        frontend = "Frontends" in path.parts and "Inputs" in path.parts
        for body in pieces(path):
            variants = [body]
            if frontend:
                variants = [compact(body)]
                if without_blobs(body) != body:
                    variants.append(compact(without_blobs(body)))
                variants = [v for v in variants if len(v) < MAX_SEED]
            for index in chosen:
                for variant in variants:
                    write(out, index, variant)
                    count += 1
            for index, option in options:
                write(out, index, f"//! {option}\n{body}")
                count += 1
    # Mutants of the frontend fixtures, for the raise targets.
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    import mutate_frontend
    raise_targets = [i for i, t in enumerate(names)
                     if t.split("{")[0] in ("rope-raise", "rope-optimize")]
    for _, _, text, _ in mutate_frontend.mutants(1, MUTANTS, pathlib.Path(root)):
        text = compact(without_blobs(text))
        if len(text) >= MAX_SEED:
            continue
        for index in raise_targets:
            write(out, index, text)
            count += 1
    print(f"make_corpus: {count} seeds in {out_dir}")


if __name__ == "__main__":
    main()
