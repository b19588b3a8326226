# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""bench/model_bench.py --smoke runs end to end (issue 33): a tiny Llama from transformers' own modeling code,
exported with its weights as function arguments, one decode step at a 32-token cache, through every contestant
(ours raised and un-raised, torch eager, torch.compile, IREE), each in its own child process pinned to one core;
every contestant's logits agree with torch eager's, the raised module holds the model's rotations and
attentions, and the report it writes is the table of those results. No timing assertions: the numbers of a smoke
run mean nothing. 2 to 5 minutes on the 2-core machine, loaded (torch.compile's cold compile is most of it).

Needs the peers' venv (/work/peers/bin/python: torch, transformers, torch-mlir, IREE; ../shared/FRONTENDS.md):
skipped, with that reason, where it is absent. Also: docs/PERFORMANCE.md's model_bench region is from a full
run, not a smoke run."""

import json
import os
import pathlib
import subprocess
import sys

import pytest

import _paths

ROOT = _paths.ROOT
sys.path.insert(0, str(ROOT / "bench"))

import model_bench  # noqa: E402

BEGIN, END = model_bench.BEGIN_MARK, model_bench.END_MARK
LABELS = ("torch eager", "torch.compile (Inductor)", "IREE llvm-cpu, local-sync", "ours, raised (rope-optimize)",
          "ours, un-raised")


@pytest.mark.skipif(not pathlib.Path(model_bench.PEERS_PYTHON).exists(),
                    reason=f"the peers' venv ({model_bench.PEERS_PYTHON}: torch, transformers, torch-mlir, IREE) "
                           "is absent")
def test_model_bench_smoke(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text(f"before\n{BEGIN}\nSTALE-REGION-TEXT\n{END}\nafter\n")
    raw = tmp_path / "raw.json"
    cpu = max(os.sched_getaffinity(0))      # the core the children are pinned to: one this test may use
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "model_bench.py"), "--smoke", "--modes", "decode",
         "--workdir", str(tmp_path / "work"), "--cpu", str(cpu), "--timeout", "400", "--write-docs", str(doc),
         "--json", str(raw)],
        cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]

    data = json.loads(raw.read_text())
    assert data["meta"]["smoke"] is True
    [res] = data["results"]
    assert (res["model"], res["mode"]) == ("llama", "decode")
    export = res["export"]
    assert "error" not in export, export
    # Weights are arguments: ids, positions, 2 layers' k and v, then every parameter; no big constants.
    assert len(export["arg_shapes"]) == 2 + 4 and export["n_weights"] >= 2 * 9 + 2
    assert export["mlir_bytes"] < 200_000
    for name in model_bench.CONTESTANTS:
        r = res[name]
        assert "error" not in r, (name, r)
        assert len(r["times_s"]) >= 3 and r["min_s"] > 0, (name, r)
        if name != "eager":
            assert r["err"] < 1e-4, (name, r["err"])
        assert r["err_f64"] < 1e-4, (name, r["err_f64"])
    # The raised module: both layers' q and k rotations raised, both attentions raised and tiled.
    ops = res["raised"]["ops"]
    assert ops["rope.apply"] == 4, ops
    assert ops["rope.attention"] + ops["rope.online_attention"] == 2, ops

    text = doc.read_text()
    assert text.startswith(f"before\n{BEGIN}\n") and text.endswith(f"\n{END}\nafter\n")
    assert "STALE-REGION-TEXT" not in text
    region = text.split(BEGIN, 1)[1].split(END, 1)[0]
    assert "(smoke mode" in region and "**llama decode**" in region
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.strip("|").split("|")]
            for line in region.splitlines() if line.startswith("| ") and not line.startswith("| contestant")}
    assert set(rows) == set(LABELS), rows
    assert rows["torch eager"][-3:-1] == ["1.00", "(reference)"]
    for label in LABELS:
        assert float(rows[label][-1]) < 1e-4, rows[label]
        if label != "torch eager":
            assert float(rows[label][-2]) < 1e-4, rows[label]
    # The summary under the tables: the same facts, computed from the same results.
    assert "**Summary** (from the tables above)" in region
    assert "- after `--rope-optimize`: every module: 4 rope.apply" in region
    assert "- raised faster than un-raised in " in region and " of 1 cases" in region
    assert "- decode agreement: logits within " in region
    assert result.stdout.strip().endswith(region.strip().splitlines()[-1])



def test_performance_doc_has_a_full_model_bench_region():
    """The committed table is from a full-width run, and names the command and the machine."""
    text = (ROOT / "docs" / "PERFORMANCE.md").read_text()
    assert text.count(BEGIN) == 1 and text.count(END) == 1
    region = text.split(BEGIN, 1)[1].split(END, 1)[0]
    assert "smoke mode" not in region
    assert "`python3 bench/model_bench.py" in region and "- machine: " in region
    assert "hidden_size 2048" in region
