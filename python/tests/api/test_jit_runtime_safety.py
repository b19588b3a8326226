# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""What `rope_mlir.jit` code does with sizes, names and indices a careless or
hostile caller chooses (issue 32, items 2, 10, 14 and the checked mode):
an exception, never a crash of the Python process or an access outside a
buffer. Each case runs in a subprocess where a failure would otherwise kill
the interpreter."""

import math
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import rope_mlir

import _paths

FILL = """
func.func @fill(%n: index) -> tensor<?xf32> {
  %c = arith.constant 1.0 : f32
  %e = tensor.empty(%n) : tensor<?xf32>
  %r = linalg.fill ins(%c : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}
"""


def _run_isolated(code: str) -> subprocess.CompletedProcess:
    """Runs `code` in a fresh interpreter: a crash there is a failed
    assertion here, not a dead test process. Under the sanitizer stage
    (scripts/test-sanitizers.sh), ASan says "failed to allocate" for the
    allocation this file fails on purpose, even when it returns NULL as
    asked (allocator_may_return_null=1); that warning goes to the child's
    stderr, not to the reports directory, where any file fails the stage."""
    env = dict(os.environ)
    if "ASAN_OPTIONS" in env:
        env["ASAN_OPTIONS"] = re.sub(r"log_path=[^:]*", "log_path=stderr",
                                     env["ASAN_OPTIONS"])
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=600,
                          env=env)


@pytest.fixture(scope="module")
def fill():
    return rope_mlir.jit(FILL).function("fill")


def test_fill_runs(fill):
    np.testing.assert_array_equal(fill(5), np.ones(5, np.float32))
    assert fill(0).shape == (0,)


def test_failed_allocation_is_memory_error():
    # 2^40 f32 = 4 TiB: malloc returns NULL, which the code used to store
    # through (SIGSEGV).
    result = _run_isolated(f"""
        import rope_mlir
        f = rope_mlir.jit({FILL!r}).function("fill")
        try:
            f(2**40)
        except MemoryError as error:
            print("MemoryError:", error)
        print(f(3))
    """)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "MemoryError: out of memory" in result.stdout
    assert "bytes" in result.stdout
    # The module still works after the failed call.
    assert "[1. 1. 1.]" in result.stdout


@pytest.mark.parametrize("n", [2**62 + 1, 2**63 - 1, -5])
def test_overflowing_or_negative_size_is_memory_error(fill, n):
    # 2^62 + 1 f32 is 2^64 + 4 bytes: wrapped, a 4-byte block the fill
    # would write 2^62 elements into.
    with pytest.raises(MemoryError, match="byte count overflows int64"):
        fill(n)


def test_static_size_overflow_refused_at_compile_time():
    huge = "tensor<4611686018427387904xf32>"
    text = f"""
    func.func @g() -> {huge} {{
      %c = arith.constant 1.0 : f32
      %e = tensor.empty() : {huge}
      %r = linalg.fill ins(%c : f32) outs(%e : {huge}) -> {huge}
      return %r : {huge}
    }}"""
    with pytest.raises(rope_mlir.CompileError,
                       match="memref<4611686018427387904xf32>', whose "
                             "byte size overflows int64"):
        rope_mlir.jit(text)


SHADOWS = """
func.func @logf(%x: f32) -> f32 {
  %c = arith.constant 42.0 : f32
  return %c : f32
}
func.func @erff(%x: f32) -> f32 {
  %c = arith.constant 7.0 : f32
  return %c : f32
}
func.func private @tanhf(%x: f32) -> f32 {
  %c = arith.constant 9.0 : f32
  return %c : f32
}
func.func @malloc(%x: i64) -> i64 {
  return %x : i64
}
func.func @f(%t: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {
      indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
      iterator_types = ["parallel"]}
      ins(%t : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %l = math.log %a : f32
    %q = math.erf %l : f32
    %h = math.tanh %q : f32
    linalg.yield %h : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}
"""


def test_module_functions_do_not_shadow_the_c_library():
    # The lowering calls libm's logf/erff/tanhf and malloc by name; the
    # module's own functions of those names must not be what they reach.
    module = rope_mlir.jit(SHADOWS)
    x = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    expected = [math.tanh(math.erf(math.log(v))) for v in x]
    np.testing.assert_allclose(module.function("f")(x), expected, rtol=1e-6)
    # ... and the module's functions are still called by their own names.
    assert module.function("logf")(3.0) == 42.0
    assert module.function("erff")(1.0) == 7.0
    assert module.function("malloc")(5) == 5
    assert "logf" in module.functions


def test_nul_in_module_text_refused():
    with pytest.raises(ValueError, match="NUL"):
        rope_mlir.jit(FILL + "\0 func.func @g() { return }")


def test_nul_in_function_name_refused(fill):
    module = rope_mlir.jit(FILL)
    with pytest.raises(ValueError, match="NUL"):
        module.function("fill\0x")


def test_nul_in_pipeline_refused():
    with pytest.raises(ValueError, match="NUL"):
        rope_mlir.jit(FILL, "builtin.module(rope-to-llvm-cpu)\0garbage")


CHECKED = """
func.func @get(%t: tensor<?xf32>, %i: index) -> f32 {
  %v = tensor.extract %t[%i] : tensor<?xf32>
  return %v : f32
}
func.func @add(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> {
  %r = linalg.add ins(%a, %b : tensor<?xf32>, tensor<?xf32>)
                  outs(%a : tensor<?xf32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}
func.func @slice(%t: tensor<?xf32>, %o: index, %n: index) -> tensor<?xf32> {
  %s = tensor.extract_slice %t[%o] [%n] [1] : tensor<?xf32> to tensor<?xf32>
  return %s : tensor<?xf32>
}
"""


@pytest.fixture(scope="module")
def checked():
    return rope_mlir.jit(CHECKED, checked=True)


def test_checked_mode_runs_valid_calls(checked):
    x = np.arange(6, dtype=np.float32)
    assert checked.function("get")(x, 5) == 5.0
    np.testing.assert_array_equal(checked.function("add")(x, x), 2 * x)
    np.testing.assert_array_equal(checked.function("slice")(x, 2, 3),
                                  x[2:5])


def test_checked_mode_out_of_range_index(checked):
    x = np.arange(6, dtype=np.float32)
    for index in (6, 2**40, -1):
        with pytest.raises(rope_mlir.CheckError,
                           match="(?s)tensor.extract.*out-of-bounds.*"
                                 "Location: loc\\(\"rope-input\":3:"):
            checked.function("get")(x, index)


def test_checked_mode_mismatched_sizes(checked):
    with pytest.raises(rope_mlir.CheckError, match="(?s)linalg.add.*"
                       "incompatible"):
        checked.function("add")(np.ones(4, np.float32),
                                np.ones(3, np.float32))


def test_checked_mode_slice_out_of_bounds(checked):
    with pytest.raises(rope_mlir.CheckError, match="extract_slice"):
        checked.function("slice")(np.ones(4, np.float32), 2, 5)


def test_unchecked_code_has_no_checks():
    # The same module without checked: the check is what raised above (the
    # call reads whatever lies past the buffer, so only a valid call here).
    lowered = rope_mlir._jit.lower(
        CHECKED, rope_mlir.compiled.default_pipeline(checked=False))
    assert "ropeRuntimeTrap" not in lowered.split("@get")[1].split(
        "llvm.func")[0]
    lowered = rope_mlir._jit.lower(
        CHECKED, rope_mlir.compiled.default_pipeline(checked=True))
    assert "ropeRuntimeTrap" in lowered.split("@get")[1].split(
        "llvm.func")[0]


def test_checked_needs_the_default_pipeline():
    with pytest.raises(ValueError, match="default pipeline"):
        rope_mlir.jit(CHECKED, "builtin.module(rope-to-llvm-cpu)",
                      checked=True)
    with pytest.raises(TypeError, match="checked must be a bool"):
        rope_mlir.jit(CHECKED, checked="yes")


ROTATE = """
func.func @rot(%x: tensor<?x4x8xf32>, %p: tensor<?xi64>,
               %cos: tensor<?x4xf32>, %sin: tensor<?x4xf32>)
    -> tensor<?x4x8xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x4x8xf32>
  %e = tensor.empty(%n) : tensor<?x4x8xf32>
  %y = rope.apply ins(%x : tensor<?x4x8xf32>) positions(%p : tensor<?xi64>)
         cache(%cos, %sin : tensor<?x4xf32>, tensor<?x4xf32>)
         outs(%e : tensor<?x4x8xf32>) -> tensor<?x4x8xf32>
  return %y : tensor<?x4x8xf32>
}
"""


def test_checked_rope_apply_positions_and_cache():
    # rope.apply's own runtime verification (RuntimeVerifiableOpInterface):
    # positions shorter than the tokens, or a position past the cache, read
    # outside a caller's buffer when unchecked.
    f = rope_mlir.jit(ROTATE, checked=True).function("rot")
    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 4, 8)).astype(np.float32)
    cos = rng.standard_normal((16, 4)).astype(np.float32)
    sin = rng.standard_normal((16, 4)).astype(np.float32)
    unchecked = rope_mlir.jit(ROTATE).function("rot")
    positions = np.array([3, 0, 15, 7, 7])
    np.testing.assert_array_equal(f(x, positions, cos, sin),
                                  unchecked(x, positions, cos, sin))
    with pytest.raises(rope_mlir.CheckError,
                       match="(?s)rope.apply.*positions dim 0 must equal x "
                             "dim 0.*Location: loc\\(\"rope-input\":8:"):
        f(x, np.arange(3), cos, sin)
    for bad in (16, -1, 2**62):
        with pytest.raises(rope_mlir.CheckError, match="cos/sin cache"):
            f(x, np.array([0, 1, bad, 3, 4]), cos, sin)


def test_checked_bench_smoke():
    # bench/checked_bench.py compiles every case both ways, checks that the
    # two agree bit for bit before timing, and reports a row per case.
    root = _paths.ROOT
    result = subprocess.run(
        [sys.executable, str(root / "bench/checked_bench.py"), "--quick",
         "--samples", "1"], capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-2000:]
    rows = [line for line in result.stdout.splitlines()
            if line.startswith("| rope ") or line.startswith("| fixture ")]
    assert len(rows) >= 20, result.stdout
    assert not [r for r in rows if "failed" in r], result.stdout


# -- helpers this change made public: each refuses bad input ---------------

def test_no_nul_refuses_nul_and_names_the_argument():
    rope_mlir._jit.no_nul("builtin.module()", "pipeline")  # fine: no error
    with pytest.raises(ValueError, match="pipeline must not contain NUL "
                                         "characters \\(at offset 3\\)"):
        rope_mlir._jit.no_nul("abc\0def", "pipeline")


@pytest.mark.parametrize("text, kind, error, match", [
    ("#rope.default<base = 10000.0>, token_dims = array<i64: 1>", "freqs",
     ValueError, "freqs: .*text after the attribute"),
    ("#rope.layout<interleaved>", "freqs", ValueError,
     "freqs: .*not a frequency attribute"),
    ("#rope.default<base = 10000.0>", "layout", ValueError,
     "layout: .*not a layout attribute"),
    ("#rope.default<base = 10000.0>", "mrope", ValueError,
     "mrope: .*not a M-RoPE attribute"),
    ("#rope.default<base = ", "freqs", ValueError, "freqs: .*not an attribute"),
    ("#rope.default<base = 1.0>\0junk", "freqs", ValueError, "NUL"),
    ("", "freqs", ValueError, "freqs: "),
    (b"#rope.default<>", "freqs", TypeError, "freqs must be a str"),
    (None, "layout", TypeError, "layout must be a str"),
    ("#rope.default<>", "scheme", ValueError, "kind must be 'freqs'"),
])
def test_canonical_attribute_refuses(text, kind, error, match):
    with pytest.raises(error, match=match):
        rope_mlir._jit.canonical_attribute(text, kind)


def test_canonical_attribute_prints_back():
    assert rope_mlir._jit.canonical_attribute(
        "#rope.layout<interleaved>", "layout") == "#rope.layout<interleaved>"
    printed = rope_mlir._jit.canonical_attribute(
        "  #rope.default<base = 500000.0>  ", "freqs")
    assert printed == "#rope.default<base = 5.000000e+05>"


@pytest.mark.parametrize("checked", ["yes", 1, None, np.ones(1)])
def test_default_pipeline_refuses_a_non_bool(checked):
    with pytest.raises(TypeError, match="checked must be a bool"):
        rope_mlir.compiled.default_pipeline(checked)


@pytest.mark.parametrize("dtype, argument, match", [
    (np.int32, "x", "x has the unsupported data type int32"),
    (np.complex64, "cos_cache", "cos_cache has the unsupported data type"),
    (np.bool_, None, "^unsupported data type bool"),
])
def test_dtype_name_refuses_unsupported_dtypes(dtype, argument, match):
    with pytest.raises(TypeError, match=match):
        rope_mlir.dtype_name(dtype, argument)


def test_dtype_name_refuses_what_is_not_a_dtype():
    with pytest.raises(TypeError):
        rope_mlir.dtype_name("no-such-dtype", "x")
    assert rope_mlir.dtype_name(np.float32, "x") == "f32"
