# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""bench/cpu_bench.py and bench/attention_bench.py run end to end in their smoke modes, every peer agrees
with the float64 reference, and the cpu bench's report keeps its own rules: public-API and raw columns side
by side, no verdict where the copy is no ceiling, and PASS/MISS counts that are the counts of the table's
cells. No timing assertions: the numbers of a smoke run mean nothing. Also: the measured numbers of
docs/PERFORMANCE.md's CPU part and of docs/PRECISION.md are the regions those scripts write."""

import importlib.util
import pathlib
import re
import subprocess
import sys

import pytest

import _paths

ROOT = _paths.ROOT
sys.path.insert(0, str(ROOT / "bench"))

import cpu_bench  # noqa: E402

BEGIN, END = cpu_bench.BEGIN_MARK, cpu_bench.END_MARK
COUNT_LINE = re.compile(r"^- (?P<table>.+), `(?P<column>[^`]+)` .*: (?P<p>\d+) PASS, (?P<m>\d+) MISS, "
                        r"(?P<n>\d+) no verdict$")


def _region(text):
    return text.split(BEGIN, 1)[1].split(END, 1)[0]


def _tables(region):
    """{title: (header, rows)} of the markdown tables, each introduced by a **title** line."""
    tables, title, lines = {}, None, region.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("**") and line.endswith("**") and i + 2 < len(lines) and lines[i + 2].startswith("| "):
            title = line.strip("*")
            header = [c.strip() for c in lines[i + 2].strip("|").split("|")]
            rows = []
            for row in lines[i + 4:]:
                if not row.startswith("| "):
                    break
                rows.append([c.strip() for c in row.strip("|").split("|")])
            tables[title] = (header, rows)
    return tables


def _us(cell):
    return float(cell.replace("!", "").strip())


def _verdict(cell):
    return cell.rsplit(" ", 1)[-1] if cell.endswith((" PASS", " MISS")) else None


def test_cpu_bench_smoke(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text(f"before\n{BEGIN}\nSTALE-REGION-TEXT\n{END}\nafter\n")
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "cpu_bench.py"), "--smoke", "--threads", "2",
         "--write-docs", str(doc)],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    text = doc.read_text()
    assert text.startswith(f"before\n{BEGIN}\n") and text.endswith(f"\n{END}\nafter\n")
    assert "STALE-REGION-TEXT" not in text
    region = _region(text)
    assert "(smoke mode)" in region and "correctness: max relative error" in region
    assert "all within tolerance" in region
    tables = _tables(region)
    assert {"single thread: ours", "single thread: vs peers", "2 threads: ours", "2 threads: vs peers"} <= set(tables)

    ours_keys = {}
    for title, (header, rows) in tables.items():
        if title.endswith(": ours"):
            for column in ("raw µs", "call µs", "apply µs", "copy µs", "floor µs", "of copy", "ovh µs"):
                assert column in header, (title, column)
            col = {name: i for i, name in enumerate(header)}
            for row in rows:
                ours_keys[tuple(row[:5])] = (_us(row[col["copy µs"]]) - _us(row[col["floor µs"]]), row, col)
        elif title.endswith(": vs peers"):
            for column in ("/apply", "/raw", "ORT23/call", "ORT23/raw", "ORTms/call", "ORTms/raw", "C++/raw"):
                assert any(h.endswith(column) for h in header), (title, column)
    assert ours_keys

    # The ceiling rule: no copy-based value and no verdict on rows whose copy moves bytes for < 20 µs
    # (1 µs margin for the rounding of the printed times).
    below = [key for key, (net, _, _) in ours_keys.items() if net < cpu_bench.CEILING_MIN_COPY_US - 1]
    assert below, "the smoke shapes include rows below the ceiling rule"
    for key in below:
        _, row, col = ours_keys[key]
        assert row[col["of copy"]] == "—" and row[col["in place of copy"]] == "—", row
        assert _verdict(row[col["comp/cache"]]) is None, row
        ovh = row[col["ovh µs"]]
        assert "±" not in ovh, row
        if _verdict(ovh) == "PASS":  # only the upper bound `≤ raw`, under the target
            assert ovh.startswith("≤") and float(ovh[1:].split()[0]) < cpu_bench.TARGET_DECODE_OVERHEAD_US
    for title, (header, rows) in tables.items():
        if title.endswith(": vs peers"):
            for row in rows:
                if tuple(row[:5]) in below:
                    assert not any(_verdict(c) for c in row), row
    # Never a PASS on a negative or noise-level overhead.
    for _, row, col in ours_keys.values():
        ovh = row[col["ovh µs"]]
        if "±" in ovh and _verdict(ovh):
            value, spread = (float(v) for v in ovh.split()[0].split("±"))
            assert value > spread, row

    # The printed counts are the counts of the verdicts in the table cells.
    counted = set()
    totals = [0, 0]
    for line in region.splitlines():
        match = COUNT_LINE.match(line)
        if not match:
            continue
        header, rows = tables[match["table"]]
        i = header.index(match["column"])
        cells = [row[i] for row in rows]
        assert int(match["p"]) == sum(_verdict(c) == "PASS" for c in cells), line
        assert int(match["m"]) == sum(_verdict(c) == "MISS" for c in cells), line
        counted.add((match["table"], match["column"]))
        totals[0] += int(match["p"])
        totals[1] += int(match["m"])
    for title, (header, rows) in tables.items():
        for i, column in enumerate(header):
            if any(_verdict(row[i]) for row in rows):
                assert (title, column) in counted, (title, column)
    assert f"- all tables: {totals[0]} PASS, {totals[1]} MISS," in region
    # The same report went to stdout.
    assert "single thread: vs peers" in result.stdout


def test_performance_doc_quotes_only_the_generated_tables():
    """docs/PERFORMANCE.md's CPU part: the numbers are in the region cpu_bench.py writes (from a full run);
    the prose around it states the method and quotes no measured time, rate or ratio (the rule parameters
    it names are the script's constants)."""
    text = (ROOT / "docs" / "PERFORMANCE.md").read_text()
    assert text.count(BEGIN) == 1 and text.count(END) == 1
    assert "(full mode)" in _region(text)
    cpu_part = text.split("\n## GPU", 1)[0]
    prose = cpu_part.split(BEGIN, 1)[0] + cpu_part.split(END, 1)[1]
    for parameter in (cpu_bench.CEILING_MIN_COPY_US, cpu_bench.TARGET_DECODE_OVERHEAD_US):
        assert f"{parameter:g} µs" in prose
        prose = prose.replace(f"{parameter:g} µs", "")
    measured = re.compile(r"\d(?:[.,]\d+)?\s*(?:×|µs|GB/s|ms\b|%)|\d\.\d+\s*[–-]\s*\d")
    assert not measured.findall(prose), measured.findall(prose)


def test_precision_sweep_writes_its_region(tmp_path):
    """precision_sweep.py --write-docs replaces only its region; docs/PRECISION.md holds a full sweep."""
    sweep = ROOT / "bench" / "precision_sweep.py"
    begin, end = "<!-- BEGIN precision_sweep -->", "<!-- END precision_sweep -->"
    doc = tmp_path / "doc.md"
    doc.write_text(f"before\n{begin}\nSTALE-REGION-TEXT\n{end}\nafter\n")
    result = subprocess.run([sys.executable, str(sweep), "--quick", "--scheme", "default", "--write-docs", str(doc)],
                            cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    text = doc.read_text()
    assert text.startswith(f"before\n{begin}\n") and text.endswith(f"\n{end}\nafter\n")
    assert "STALE-REGION-TEXT" not in text
    region = text.split(begin, 1)[1].split(end, 1)[0]
    for part in ("(quick sweep)", "| default | f32 |", "**Summary**", "- f32: max pair-relative error",
                 "**Beyond 2^24**", "all bounds hold"):
        assert part in region, part
    committed = (ROOT / "docs" / "PRECISION.md").read_text()
    assert committed.count(begin) == 1 and committed.count(end) == 1
    assert "(full sweep)" in committed.split(begin, 1)[1].split(end, 1)[0]


def test_attention_bench_bf16_smoke():
    """The (bf16) section runs rope.attention with f32 and with bf16 inputs
    and states the bf16 output's error against float64: within the bf16
    output's own rounding (softmax outputs are averages of V, |out| < 4
    here, so half an ulp is at most 2^-7)."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "attention_bench.py"),
         "--smoke", "--sections", "bf16"],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    rows = [line for line in result.stdout.splitlines()
            if line.startswith(("| prefill", "| decode"))]
    assert [row.split("|")[1].strip() for row in rows] == [
        "prefill S=16", "decode L=32"], result.stdout
    for row in rows:
        error = float(row.split("|")[7])
        assert 0 <= error <= 2.0 ** -7, row
    # Decode rows state each rate as a fraction of the read bandwidth probed
    # over the same bytes (issue 35's decode target): rate / fraction is a
    # plausible bandwidth, not a placeholder.
    decode = next(row for row in rows if row.startswith("| decode"))
    for cell in decode.split("|")[5:7]:
        match = re.fullmatch(r"\s*([0-9.]+) GB/s \(([0-9.]+)\)\s*", cell)
        assert match, decode
        rate, fraction = float(match.group(1)), float(match.group(2))
        assert rate > 0 and fraction > 0 and 0.1 < rate / fraction < 10000, decode


@pytest.mark.parametrize("element", ["f32", "bf16"])
def test_decode_ab_compares_option_sets_on_equal_bits(element):
    """bench/decode_ab.py times one decode step under each option set and
    refuses sets whose outputs differ in any bit: prefetching (a codegen
    choice) must not change the result. No timing assertions."""
    script = ROOT / "bench" / "decode_ab.py"
    flags = ["--bf16"] if element == "bf16" else []
    result = subprocess.run(
        [sys.executable, str(script), "40", *flags, "--rounds", "2",
         "--options", "contraction-prefetch-rows=0",
         "--options", "contraction-prefetch-rows=4"],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"decode L=40 {element}"), result.stdout
    timed = [line for line in lines[1:] if "GB/s" in line]
    assert [line.split()[-1] for line in timed] == [
        "contraction-prefetch-rows=0", "contraction-prefetch-rows=4"]
    # Option sets whose results differ are refused: 256-bit register tiles
    # add Q·Kᵀ's products in another order than 512-bit ones.
    differ = subprocess.run(
        [sys.executable, str(script), "40", "--rounds", "1",
         "--options", "contraction-vector-bits=512",
         "--options", "contraction-vector-bits=256"],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert differ.returncode == 1, differ.stdout + differ.stderr
    assert "FAIL: contraction-vector-bits=256 gives other bits" in differ.stdout
    # With --tolerance they are compared within it (a reordered sum), and a
    # tolerance below their difference still refuses them.
    for tolerance, code in (("1e-5", 0), ("1e-12", 1)):
        near = subprocess.run(
            [sys.executable, str(script), "40", "--rounds", "1",
             "--tolerance", tolerance,
             "--options", "contraction-vector-bits=512",
             "--options", "contraction-vector-bits=256"],
            cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert near.returncode == code, near.stdout + near.stderr
        assert ("contraction-vector-bits=256: within" in near.stdout
                if code == 0 else "FAIL: contraction-vector-bits=256 differs"
                in near.stdout), near.stdout
    # A cache of keys before RoPE, two query tokens: the keys rotated inside
    # Q·Kᵀ or stored rotated give the same output within the tolerance.
    rotated = subprocess.run(
        [sys.executable, str(script), "40", "--keys-before-rope",
         "--queries", "2", "--rounds", "1", "--tolerance", "1e-5",
         "--options", "rotate-keys-in-scores=false",
         "--options", "rotate-keys-in-scores=true"],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert rotated.returncode == 0, rotated.stdout + rotated.stderr
    assert "(keys before RoPE) f32, 2 queries/head" in rotated.stdout
    assert "rotate-keys-in-scores=true: within" in rotated.stdout
    # A misspelt option is an error that names it.
    bad = subprocess.run(
        [sys.executable, str(script), "40", "--rounds", "1",
         "--options", "contraction-prefetch-rows=0",
         "--options", "contraction-prefetch-rowz=4"],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert bad.returncode != 0
    assert "contraction-prefetch-rowz" in bad.stdout + bad.stderr


def test_attention_kernel_ab_compares_the_pipelines():
    """bench/attention_kernel_ab.py compiles the attention kernel under its
    pipeline and the one before 5986b50, checks their outputs against each
    other and prints one table row per case. No timing assertions."""
    script = ROOT / "bench" / "attention_kernel_ab.py"
    result = subprocess.run([sys.executable, str(script), "--quick"],
                            cwd=ROOT, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    rows = [line for line in result.stdout.splitlines()
            if line.startswith("| decode") or line.startswith("| prefill")]
    assert [row.split("|")[1].strip() for row in rows] == [
        "decode L=1024", "prefill S=128"], result.stdout
    for row in rows:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        assert cells[2].endswith(" ms") and cells[3].endswith(" ms"), row
        assert float(cells[5]) <= 1e-5, row


PEERS_PYTHON = pathlib.Path("/work/peers/bin/python")


@pytest.mark.skipif(not PEERS_PYTHON.exists(),
                    reason=f"the peers' venv ({PEERS_PYTHON}) is absent")
def test_decode_ab_hf_module_smoke():
    """--hf exports the (hf) decode module (a cache of keys before RoPE), in
    f32 or as the bf16 model, and times it under each option set on equal
    bits: the key rotation's prefetch (prefetch-rows) must not change the
    result."""
    for element, flags in (("f32", []), ("bf16", ["--bf16"])):
        result = subprocess.run(
            [str(PEERS_PYTHON), str(ROOT / "bench" / "decode_ab.py"), "40",
             "--hf", *flags, "--rounds", "2", "--options", "prefetch-rows=0",
             "--options", "prefetch-rows=16"],
            cwd=ROOT, capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, (result.stdout[-2000:] +
                                        result.stderr[-4000:])
        lines = result.stdout.splitlines()
        assert lines[0].startswith(f"decode L=40 (hf module) {element}"), \
            result.stdout
        timed = [line.split()[-1] for line in lines[1:] if "GB/s" in line]
        assert timed == ["prefetch-rows=0", "prefetch-rows=16"], result.stdout


@pytest.mark.skipif(not PEERS_PYTHON.exists(),
                    reason=f"the peers' venv ({PEERS_PYTHON}: torch, transformers, torch-mlir) is absent")
def test_attention_bench_hf_bf16_smoke():
    """The (hf-bf16) section (issue 35 item 5) runs HF's Llama-3-8B attention layer in bf16 as HF models run it,
    at the lengths --hf-prefill/--hf-decode give: the bf16 export raises (two rope.apply and the attention),
    every column has a time, and the error table holds one row per case against float64 of the same
    bf16-rounded inputs, with ours bf16 within 2^-7 of max|r| (HF's own bf16 eager is near 1e-2; the
    bench's own exit bound, WRONG_BF16, is looser), each other bf16 column within that exit bound, and ours
    f32 within f32's rounding. ORT's column is n/a with a reason (no bf16 CPU kernel) or present."""
    import attention_bench

    result = subprocess.run(
        [str(PEERS_PYTHON), str(ROOT / "bench" / "attention_bench.py"), "--smoke", "--sections", "hf-bf16",
         "--hf-prefill", "16", "--hf-decode", "40", "--markdown"],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    out = result.stdout
    if "(hf-bf16) skipped:" in out:
        pytest.skip(out.split("(hf-bf16) skipped:", 1)[1].splitlines()[0])
    columns = attention_bench.HF_BF16_COLUMNS
    assert columns == ["ours bf16", "eager bf16", "SDPA bf16", "ours f32"]
    labels = ["prefill S=16", "decode L=40"]

    def table(header):
        lines = out.splitlines()
        start = lines.index("| " + " | ".join(header) + " |")
        rows = []
        for line in lines[start + 2:]:
            if not line.startswith("| "):
                break
            rows.append([c.strip() for c in line.strip("|").split("|")])
        return rows

    raising = next(line for line in out.splitlines() if line.startswith("- raising"))
    for label in labels:
        counts = raising.split(f"{label}: ", 1)[1].split(";")[0]
        assert counts.startswith("2 rope.apply, "), raising
        assert "1 rope.attention" in counts or "1 rope.online_attention" in counts, raising
    times = table(["case"] + columns)
    assert [row[0] for row in times] == labels, out
    for row in times:
        assert all(cell.endswith(("µs", "ms")) for cell in row[1:]), row
    errors = table(["case", "reference"] + columns)
    assert [row[0] for row in errors] == labels, out
    for row in errors:
        assert row[1] == "float64", row
        ours, eager, sdpa, f32 = (float(cell) for cell in row[2:])
        assert 0 <= ours <= 2.0 ** -7, row
        assert 0 <= eager <= attention_bench.WRONG_BF16 and 0 <= sdpa <= attention_bench.WRONG_BF16, row
        assert 0 <= f32 <= 1e-5, row
    rates = table(["case", "work", "ours bf16", "ours f32"])
    assert [row[0] for row in rates] == labels, out
    assert "GFLOP/s" in rates[0][2] and "bf16 dot peak" in rates[0][2], rates[0]
    assert "GB/s" in rates[1][2], rates[1]
    assert "- n/a: ORT: " in out, out


def test_attention_bench_smoke():
    """bench/attention_bench.py runs end to end, its fused outputs agree
    with the unfused ones and, in (c), onnxruntime's GroupQueryAttention
    with ours (it exits otherwise)."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "attention_bench.py"), "--smoke"],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    assert "decode | 100 |" in result.stdout
    assert "prefill | 40 |" in result.stdout
    if None in map(importlib.util.find_spec, ("onnx", "onnxruntime")):
        assert "(c) skipped: onnxruntime/onnx not installed" in result.stdout
    else:
        assert "vs ORT GQA decode Hq=32 Hkv=8 D=128 | S_k=100 |" in \
            result.stdout
        assert "vs ORT GQA prefill causal H=2 D=64 | S=40 |" in \
            result.stdout


def _written_region(tmp_path, script: str, args, begin: str, end: str) -> str:
    """Runs bench/`script` with `args` and `--write-docs` into a file whose region between `begin` and `end`
    holds stale text; asserts it exited 0 and replaced that text; returns the region."""
    doc = tmp_path / "doc.md"
    doc.write_text(f"x\n{begin}\nSTALE\n{end}\ny\n")
    result = subprocess.run([sys.executable, str(ROOT / "bench" / script), *args, "--write-docs", str(doc)],
                            cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    region = doc.read_text().split(begin, 1)[1].split(end, 1)[0]
    assert "STALE" not in region
    return region


def test_neighbours_bench_smoke(tmp_path):
    """bench/neighbours_bench.py checks every output against float64 before it times anything, and writes
    one table row per (shape, form) with a verdict on both targets, warm and cold (_fused_report.measure)."""
    import neighbours_bench

    forms = "norm+rope,rope+i8,qk norm+rope+fp8"
    region = _written_region(tmp_path, "neighbours_bench.py",
                             ["--shapes", "decode", "--forms", forms, "--samples", "3"],
                             neighbours_bench.BEGIN_MARK, neighbours_bench.END_MARK)
    rows = [line for line in region.splitlines() if line.startswith("| decode |")]
    assert [row.split("|")[2].strip() for row in rows] == forms.split(",")
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        # Warm: unfused/fused, of copy; cold: fused µs, unfused/fused, of copy.
        verdicts = cells[-5:-3] + cells[-2:]
        assert all(cell.endswith((" PASS", " MISS")) for cell in verdicts), row
        assert float(cells[-3]) > 0, row
    assert "`cold` columns" in region


def test_layout_bench_smoke(tmp_path):
    """bench/layout_bench.py checks every row's output (both placements: numpy's arrays and 64-byte-aligned
    copies) against float64 before timing it, and writes one row per (layout, positions form, dtype, pair
    layout) with both placements' columns. A wrong output makes it exit non-zero."""
    import layout_bench

    region = _written_region(tmp_path, "layout_bench.py", ["--smoke", "--dtypes", "f32,bf16"],
                             layout_bench.BEGIN_MARK, layout_bench.END_MARK)
    assert "(smoke mode" in region
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in region.splitlines()
            if line.startswith(("| BSHD", "| BHSD", "| flat"))]
    expected = {(layout, form, dtype, pair) for layout in layout_bench.LAYOUTS for form in layout_bench.FORMS
                for dtype in ("f32", "bf16") for pair in ("half", "interleaved")
                if not (form == "row_offset" and layout == "flat")}
    assert {tuple(row[:4]) for row in rows} == expected and len(rows) == len(expected)
    for row in rows:
        assert len(row) == 15, row
        assert all(float(cell) > 0 for cell in row[4:]), row
    assert "`cold` columns" in region


def test_layout_bench_llc_smoke(tmp_path):
    """bench/layout_bench.py --llc (issue 35, item 6) checks ours (raw and Kernel.__call__), onnxruntime's
    RotaryEmbedding (against the float64 reference and against ours) and both copies before timing, and
    writes one row per (layout, positions form, dtype) with warm and cold columns; ORT's cells are n/a
    for bf16 only (ORT's CPU kernels have none) or where onnxruntime is not installed. The sequence length
    comes from the last-level cache size: half of it holds x and out."""
    import layout_bench

    region = _written_region(tmp_path, "layout_bench.py", ["--llc", "--smoke", "--variant", "vb64=vector-bytes=64"],
                             layout_bench.LLC_BEGIN_MARK, layout_bench.LLC_END_MARK)
    assert "(smoke mode" in region
    header = next(line for line in region.splitlines() if line.startswith("| layout | positions | dtype | B×S |"))
    columns = [c.strip() for c in header.strip("|").split("|")]
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in region.splitlines()
            if line.startswith(("| BSHD", "| BHSD")) and len(line.split("|")) == len(columns) + 2]
    expected = {(layout, form, dtype) for layout in ("BSHD", "BHSD") for form in ("positions", "cache")
                for dtype in layout_bench.LLC_DTYPES}
    assert {tuple(row[:3]) for row in rows} == expected and len(rows) == len(expected)
    ort = [i for i, c in enumerate(columns) if c.startswith("ORT")]
    try:
        import onnxruntime  # noqa: F401
        has_ort = True
    except ImportError:
        has_ort = False
    for row in rows:
        assert row[3].startswith("1×"), row
        assert all(float(cell) > 0 for i, cell in enumerate(row[4:], 4) if i not in ort), row
        for i in ort:
            assert (row[i] == "n/a") == (row[2] == "bf16" or not has_ort), (columns[i], row)
    variants = [line for line in region.splitlines() if "| vb64 | vector-bytes=64 |" in line]
    assert len(variants) == len(expected)
    assert layout_bench.llc_seq(4, 32 << 20, 0.5) == 512 and layout_bench.llc_seq(2, 32 << 20, 0.5) == 1024
    assert layout_bench.llc_seq(4, 480 << 20, 0.5) == 4096


def test_cold_measurement_flushes_before_every_call():
    """cpu_bench.measure_cold: one warm-up call per fn, then per round every fn once, each right after a
    flush, in an order that rotates; the flusher reads a buffer of the size asked for."""
    import cpu_bench

    events = []
    fns = {name: (lambda name=name: events.append(name)) for name in ("a", "b", "c")}
    stats = cpu_bench.measure_cold(fns, 4, lambda: events.append("flush"))
    assert events[:3] == ["a", "b", "c"]
    rounds = events[3:]
    assert rounds[0::2] == ["flush"] * 12
    assert rounds[1::2] == ["a", "b", "c", "b", "c", "a", "c", "a", "b", "a", "b", "c"]
    assert set(stats) == {"a", "b", "c"} and all(s.best > 0 for s in stats.values())
    flusher = cpu_bench.CacheFlusher(1 << 20)
    assert flusher.nbytes == 1 << 20 and flusher._buffer.nbytes == 1 << 20
    flusher()
    assert cpu_bench.last_level_cache_bytes() >= 0


def test_limit_probes_compute_what_they_claim():
    """bench/_limits.py's probes (issue 35): the FMA loop's accumulators hold
    a·m + c iterated (so none of its FMAs is folded away), the read sums
    every element once, and both give a positive rate. No rate bound: the
    numbers of a loaded CI machine mean nothing."""
    import numpy as np
    import _limits
    lanes = _limits.native_lanes()
    assert lanes in (8, 16)
    fma = _limits._compiled("fma", lanes)
    m, iterations = np.float32(0.75), 7
    expected = 0.0
    for start in (1.0, 2.0):
        a = np.float32(start)
        for _ in range(iterations):
            a = np.float32(a * m + np.float32(0.5))
        expected += float(a) * lanes * (_limits.ACCUMULATORS // 2)
    assert abs(float(fma(iterations, m)) - expected) <= 1e-5 * expected
    read = _limits._compiled("read", lanes)
    x = np.arange(lanes * _limits.READ_ACCUMULATORS * 3, dtype=np.float32)
    assert float(read(x)) == float(x.sum())
    assert _limits.fma_peak(repeats=1, iterations=10000) > 0
    assert _limits.read_bandwidth(1 << 16, repeats=1) > 0


def test_attention_targets_needs_follow_the_probes():
    """The (hf) limits table's last column (issue 35): what a target asks of
    the fused column, from the probes and the peers' medians, checked on
    made-up numbers worked out by hand."""
    import types
    import attention_bench as ab
    limits = {"peak": 100.0, "read": {1024: 50.0}}
    timing = lambda seconds: types.SimpleNamespace(median=seconds)
    prefill = types.SimpleNamespace(kind="prefill", length=512)
    flops = 4.0 * ab.HF_HEADS * ab.HF_DIM * 512 * 513 / 2
    # SDPA at 0.4 of the peak and ORT at 0.6: 1.5x them needs 0.6 and 0.9.
    stats = {1: {"SDPA": timing(flops / 40e9), "ORT GQA": timing(flops / 60e9)},
             2: {"SDPA": timing(flops / 100e9)}}
    assert ab.target_bound(prefill, 1, stats, limits) == \
        "needs 1.5× SDPA 0.60, 1.5× ORT 0.90"
    assert ab.target_bound(prefill, 2, stats, limits) == "needs 1.5× SDPA 0.75"
    decode = types.SimpleNamespace(kind="decode", length=1024)
    memory = 2.0 * 1024 * ab.HF_KV_HEADS * ab.HF_DIM * 4 / 50e9
    compute = (4.0 * ab.HF_HEADS * ab.HF_DIM + 3.0 * ab.HF_KV_HEADS *
               ab.HF_DIM) * 1024 / 100e9
    assert compute > memory  # this made-up machine: the FMAs bound decode
    assert ab.target_bound(decode, 1, {1: {}}, limits) == (
        f"≤ {memory / compute:.2f} overlapped, "
        f"{memory / (memory + compute):.2f} serial")
    assert ab.target_bound(decode, 2, {2: {}}, limits) == "—"
    limits["read"][1024] = 5.0  # a slow memory: the bandwidth bounds it
    assert ab.target_bound(decode, 1, {1: {}}, limits).startswith(
        "≤ 1.00 overlapped")


def test_attention_bench_thread_pipelines():
    """The (hf) section's pipelines: one thread is rope_mlir.jit's default;
    N threads split a decode step's keys per thread (decode-key-splits=N,
    keys shared by every KV head as on one thread); the un-raised column
    has no rope-optimize to split with."""
    import attention_bench as ab
    assert ab.jit_pipeline(True, 1) is None
    raised = ab.jit_pipeline(True, 2)
    assert "num-threads=2" in raised and "decode-key-splits=2" in raised
    assert "share-key-rotation=true" in raised
    unraised = ab.jit_pipeline(False, 2)
    assert "num-threads=2" in unraised and "rope-optimize" not in unraised
    assert "num-threads" not in ab.jit_pipeline(False, 1)


def test_bf16_pair_probe_computes_what_it_claims():
    """The vdpbf16ps probe (AVX512-BF16 hosts): each accumulator lane adds
    both bf16 products m·c of its pair per iteration (m = 0.75 and c = 0.5
    are exact in bf16), so none of its instructions is folded away; None on
    a host without the instruction."""
    import numpy as np
    import _limits
    if not _limits.has_bf16_pairs():
        assert _limits.bf16_dot_peak(repeats=1, iterations=10) is None
        return
    lanes = _limits.native_lanes()
    probe = _limits._compiled("bf16_dot", lanes)
    iterations = 7
    expected = sum((start + 2 * 0.75 * 0.5 * iterations) * lanes *
                   (_limits.ACCUMULATORS // 2) for start in (1.0, 2.0))
    assert float(probe(iterations, np.float32(0.75))) == expected
    assert _limits.bf16_dot_peak(repeats=1, iterations=10000) > 0


def test_odd_lengths_smoke():
    """bench/odd_lengths.py times causal prefill at lengths that are not
    multiples of the tiles, each output checked against float64 first, and
    states each time per S² against the first length's."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "odd_lengths.py"), "64", "45",
         "--calls", "1"],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    rows = [line.split("|")[1:-1] for line in result.stdout.splitlines()
            if line.startswith("| 64") or line.startswith("| 45")]
    assert [row[0].strip() for row in rows] == ["64", "45"], result.stdout
    assert rows[0][2].strip() == "1.00" and rows[0][4].strip() == "1.00"
    for row in rows:
        assert all(float(cell) > 0 for cell in row[1:]), row
