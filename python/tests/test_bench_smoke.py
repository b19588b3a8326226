"""bench/cpu_bench.py runs end to end (--quick --smoke: one tiny shape, a few repetitions), every peer
agrees with the float64 reference, and the table is printed. No timing assertions: the numbers of a
smoke run mean nothing."""

import importlib.util
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_cpu_bench_smoke():
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "cpu_bench.py"), "--quick", "--smoke"],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    out = result.stdout
    assert "# rope.apply CPU benchmark (smoke)" in out
    assert "single thread" in out
    header = next((line for line in out.splitlines() if line.startswith("shape ")), None)
    assert header is not None, out
    for column in ("ours µs", "copy µs", "of copy", "×ORT23", "×ORTms", "×numpy", "×C++", "comp/cache"):
        assert column in header
    assert "correctness: max relative error" in out and "all within tolerance" in out


def test_cpu_bench_smoke_markdown():
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "cpu_bench.py"), "--quick", "--smoke", "--markdown",
         "--dtypes", "f32", "--threads", "1"],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-4000:]
    assert "| shape | dtype | layout | cos/sin |" in result.stdout


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
