# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""rope-mlir runs inside other people's processes: it must never put an LLVM
into the process's global symbol scope, never export more than its C API,
never crash on bad C API arguments or hostile IR, and never read outside the
buffers a kernel is given (SEMANTICS.md §3, issue 12).

The symbol checks run in a fresh interpreter (the one running pytest has
loaded other things). Cases that crashed before their fix run in a
subprocess too, so a regression is a failed test, not a dead test runner.
"""

from __future__ import annotations

import ctypes
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import rope_mlir
from rope_mlir import _jit
from rope_mlir import kernel as kernel_module

import _paths

# The symbols another LLVM (triton's, statically linked with default
# visibility) binds to when they are in the global scope.
LLVM_SYMBOLS = ["LLVMContextCreate", "mlirContextCreate",
                "_ZN4llvm11LLVMContextC1Ev", "_ZN4mlir11MLIRContextC1Ev"]


PACKAGE_DIR = _paths.PYTHON


def run_python(code: str, *args: str,
               timeout: float = 300) -> subprocess.CompletedProcess:
    """`code` in a fresh interpreter on this checkout's package."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(PACKAGE_DIR)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH")
                              else []))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args],
                          capture_output=True, text=True, timeout=timeout,
                          env=env)


SYMBOL_SCOPE_PROBE = """
    import ctypes, json
    import numpy as np
    import rope_mlir
    from rope_mlir import attention

    NAMES = %r
    def visible():
        process = ctypes.CDLL(None)  # dlopen(NULL): the global scope
        return [n for n in NAMES if hasattr(process, n)]

    def loaded():
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if ".so" in line}
        return sorted(p for p in paths
                      if "libLLVM" in p or "libMLIR" in p)

    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4, 64)).astype(np.float32)
    pos = np.arange(3, dtype=np.int64)
    before = visible()
    rope_mlir.apply(x, pos)                     # vector path, 1 thread
    rope_mlir.apply(x, pos, threads=2)          # OpenMP
    rope_mlir.compile(dtype="f32", rank=3, head_dim=64, positions="explicit",
                      lowering="scalar")(x, pos)  # linalg path
    c = attention.AttentionConfig(batch=1, q_heads=4, kv_heads=2, q_len=8,
                                  kv_len=64, head_dim=64, mask=True)
    q = rng.standard_normal(c.q_shape()).astype(np.float32)
    k = rng.standard_normal(c.k_shape()).astype(np.float32)
    v = rng.standard_normal(c.v_shape()).astype(np.float32)
    mask = np.zeros((c.q_len, c.kv_len), np.float32)
    offsets = np.zeros(c.batch, np.int64)
    for fuse in (True, False):
        attention.AttentionKernel(c, fuse, threads=2)(q, k, v, offsets,
                                                      mask=mask)
    print(json.dumps({"before": before, "after": visible(),
                      "loaded": loaded()}))
"""


def test_no_llvm_in_the_global_scope_after_kernels():
    # Before the fix: after the first kernel, LLVMContextCreate and
    # llvm::LLVMContext's constructor were visible through dlsym(RTLD_DEFAULT)
    # (the JIT dlopened libmlir_c_runner_utils.so, which needs libLLVM.so,
    # with RTLD_GLOBAL), and `import triton` then crashed.
    result = run_python(SYMBOL_SCOPE_PROBE % (LLVM_SYMBOLS,))
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["before"] == []
    assert report["after"] == [], (
        f"LLVM/MLIR symbols in the global scope: {report['after']}")
    # Self-contained: no shared LLVM or MLIR is loaded at all.
    assert report["loaded"] == [], report["loaded"]


def defined_dynamic_symbols(path: pathlib.Path) -> list:
    nm = shutil.which("nm") or shutil.which("llvm-nm-22")
    if nm is None:
        pytest.fail("nm is needed to read the dynamic symbol table")
    out = subprocess.run([nm, "-D", "--defined-only", str(path)],
                         capture_output=True, text=True, check=True).stdout
    return [line.split()[-1] for line in out.splitlines() if line.strip()]


def test_ropejit_exports_only_its_c_api():
    library = _jit.library_path()
    symbols = defined_dynamic_symbols(library)
    assert symbols, "no dynamic symbols read"
    assert all(s.startswith("ropeJit") for s in symbols), [
        s for s in symbols if not s.startswith("ropeJit")][:20]
    header = (_paths.ROOT / "include" /
              "rope" / "Runtime" / "RopeJit.h").read_text()
    for name in symbols:
        assert name + "(" in header, f"{name} is exported but not declared"


def test_ropejit_needs_no_shared_llvm_or_mlir():
    readelf = shutil.which("readelf") or shutil.which("llvm-readelf-22")
    if readelf is None:
        pytest.fail("readelf is needed to read the dynamic section")
    out = subprocess.run([readelf, "-d", str(_jit.library_path())],
                         capture_output=True, text=True, check=True).stdout
    needed = [line for line in out.splitlines() if "(NEEDED)" in line]
    assert needed
    assert not [n for n in needed if "LLVM" in n or "MLIR" in n], needed


def test_plugin_exports_entry_points_and_shared_typeids_only():
    plugin = _jit.library_path().parent / "RopePlugin.so"
    if not plugin.exists():
        pytest.fail(f"{plugin} not built")
    symbols = defined_dynamic_symbols(plugin)
    allowed = ("_ZZN4mlir6detail14TypeIDResolver",
               "_ZGVZN4mlir6detail14TypeIDResolver")
    assert "mlirGetDialectPluginInfo" in symbols
    assert "mlirGetPassPluginInfo" in symbols
    others = [s for s in symbols if not s.startswith(allowed) and
              s not in ("mlirGetDialectPluginInfo", "mlirGetPassPluginInfo")]
    assert others == []


# -- the C API -------------------------------------------------------------

def capi():
    return _jit._library()


def take_error(lib, error: ctypes.c_void_p) -> str:
    assert error.value, "no error message"
    return _jit._take_string(lib, error.value)


def test_capi_null_arguments_are_errors():
    # Before: ropeJitCompile(NULL)/ropeJitLower(NULL) crashed in the parser;
    # ropeJitLookup(m, NULL) constructed std::string(NULL) (abort).
    lib = capi()
    error = ctypes.c_void_p()
    assert not lib.ropeJitCompile(None, None, 3, ctypes.byref(error))
    assert "source is NULL" in take_error(lib, error)
    error = ctypes.c_void_p()
    assert not lib.ropeJitLower(None, b"builtin.module()", ctypes.byref(error))
    assert "source is NULL" in take_error(lib, error)
    # A NULL error pointer is allowed: the failure is the NULL result.
    assert not lib.ropeJitCompile(None, None, 3, None)
    assert not lib.ropeJitLookup(None, b"f", 0)
    module = _jit.compile_module(kernel_module.emit(kernel_module.KernelConfig(
        dtype="f32", rank=2, head_dim=8)))
    assert not lib.ropeJitLookup(module._handle, None, 0)
    assert not lib.ropeJitLookup(module._handle, None, 1)
    assert module.lookup("rope_kernel")
    lib.ropeJitFreeString(None)
    lib.ropeJitDestroy(None)


@pytest.mark.parametrize("text,words", [
    ("func.func @f() {" * 20000 + "}" * 20000, "nesting"),
    ("module {" + "(" * 100000, "nesting"),
    ('module attributes {a = array<index: 1>} {}', "array<index"),
    # tensor.concat's verifier indexes the shapes with a negative dim
    # (found by scripts/fuzz.sh --ci); custom and generic form, and a dim
    # beyond int64 that the parser wraps to a negative one.
    ("func.func @f(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {\n"
     "  %c = tensor.concat dim(-1) %a : (tensor<2x3xf32>) -> tensor<2x3xf32>\n"
     "  return %c : tensor<2x3xf32>\n}", "tensor.concat dim"),
    ("func.func @f(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {\n"
     '  %c = "tensor.concat"(%a) <{dim = -3 : i64}> : '
     "(tensor<2x3xf32>) -> tensor<2x3xf32>\n"
     "  return %c : tensor<2x3xf32>\n}", "tensor.concat dim"),
    ("func.func @f(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {\n"
     "  %c = tensor.concat dim(18446744073709551615) %a : "
     "(tensor<2x3xf32>) -> tensor<2x3xf32>\n"
     "  return %c : tensor<2x3xf32>\n}", "tensor.concat dim"),
])
def test_capi_refuses_text_that_crashes_the_mlir_parser(text, words):
    # Deep nesting overflowed the parser's stack (the host process died);
    # array<index: ...> crashes MLIR 22's dense-array parser.
    lib = capi()
    for call in ("compile", "lower"):
        error = ctypes.c_void_p()
        if call == "compile":
            assert not lib.ropeJitCompile(text.encode(), None, 0,
                                          ctypes.byref(error))
        else:
            assert not lib.ropeJitLower(text.encode(), b"builtin.module()",
                                        ctypes.byref(error))
        assert words in take_error(lib, error)


# Verified IR that MLIR 22's canonicalizer crashes on (found by
# scripts/fuzz.sh through rope-to-nvvm): a tensor.dim of dim -1 whose value
# sizes a slice, next to a gpu.launch. A negative constant dim index is
# refused (undefined behaviour); the same module with dim 1 compiles.
DIM_INDEX_MODULE = """
func.func @f(%m: memref<?x?x8xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %ci = arith.constant INDEX : index
  %t = bufferization.to_tensor %m : memref<?x?x8xf32> to tensor<?x?x8xf32>
  %d0 = tensor.dim %t, %c0 : tensor<?x?x8xf32>
  %d1 = tensor.dim %t, %ci : tensor<?x?x8xf32>
  %s = tensor.extract_slice %t[0, 0, 4] [%d0, %d1, 4] [1, 1, 1] : tensor<?x?x8xf32> to tensor<?x?x4xf32>
  gpu.launch blocks(%a, %b, %c) in (%x = %n, %y = %c1, %z = %c1) threads(%tx, %ty, %tz) in (%u = %c1, %v = %c1, %w = %c1) {
    gpu.terminator
  }
  return
}
"""


@pytest.mark.parametrize("index,words", [
    (-1, "negative dim index"), (-(2**63), "negative dim index"),
    (3, "dim index past the rank"), (2**31 - 1, "dim index past the rank")])
def test_capi_refuses_ir_that_crashes_mlir_passes(index, words):
    lib = capi()
    text = DIM_INDEX_MODULE.replace("INDEX", str(index)).encode()
    error = ctypes.c_void_p()
    assert not lib.ropeJitLower(text, b"builtin.module(canonicalize)",
                                ctypes.byref(error))
    message = take_error(lib, error)
    assert f"tensor.dim of dim {index} of a rank-3 value" in message
    assert words in message


# Verified IR that MLIR 22's one-shot bufferization crashes on (a SEGV in
# ValueBoundsConstraintSet::getExpr, found by scripts/fuzz.sh --ci in CI):
# two slices of one tensor offset by a tensor.dim past the rank, whose
# bounds upstream reads from past the end of the shape when it asks whether
# the slices are the same subset. Refused; with dim 0 it bufferizes.
SLICE_PAIR_MODULE = """
func.func @f(%t: tensor<16xf32>) -> tensor<16xf32> {
  %c = arith.constant INDEX : index
  %j = tensor.dim %t, %c : tensor<16xf32>
  %s = tensor.extract_slice %t[%j][4][1] : tensor<16xf32> to tensor<4xf32>
  %r = tensor.insert_slice %s into %t[%j][4][1] : tensor<4xf32> into tensor<16xf32>
  return %r : tensor<16xf32>
}
"""


@pytest.mark.parametrize("index", [0, 1, 2**31 - 1])
def test_capi_refuses_a_dim_past_the_rank_before_bufferization(index):
    lib = capi()
    text = SLICE_PAIR_MODULE.replace("INDEX", str(index)).encode()
    pipeline = b"builtin.module(one-shot-bufferize{bufferize-function-boundaries})"
    error = ctypes.c_void_p()
    lowered = lib.ropeJitLower(text, pipeline, ctypes.byref(error))
    if index == 0:
        assert lowered, take_error(lib, error)
        lib.ropeJitFreeString(lowered)
    else:
        assert not lowered
        message = take_error(lib, error)
        assert f"tensor.dim of dim {index} of a rank-1 value" in message
        assert "dim index past the rank" in message


# A crash of an MLIR pass that rope-check-ir-safety does not foresee: a
# branch on a constant, which the canonicalizer resolves into a dim index
# past the rank, whose slices one-shot bufferization then compares (the SEGV
# above). The check does not follow branches between blocks; the C API runs
# the pipeline under crash recovery, so the compile fails and the process
# lives on.
CRASHING_BRANCH_MODULE = """
func.func @f(%t: tensor<16xf32>) -> tensor<16xf32> {
  %true = arith.constant true
  %index = arith.constant INDEX : index
  %c0 = arith.constant 0 : index
  %c12 = arith.constant 12 : index
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<16xf32>
  %w = linalg.copy ins(%t : tensor<16xf32>) outs(%e : tensor<16xf32>) -> tensor<16xf32>
  cf.cond_br %true, ^bb1(%index : index), ^bb1(%c0 : index)
^bb1(%i: index):
  %j = tensor.dim %t, %i : tensor<16xf32>
  %o = arith.subi %j, %c12 : index
  %s = tensor.extract_slice %w[%o][4][1] : tensor<16xf32> to tensor<4xf32>
  %f = linalg.fill ins(%one : f32) outs(%s : tensor<4xf32>) -> tensor<4xf32>
  %r = tensor.insert_slice %f into %w[%o][4][1] : tensor<4xf32> into tensor<16xf32>
  return %r : tensor<16xf32>
}
"""


def test_capi_survives_a_crashing_pass():
    lib = capi()
    crashing = CRASHING_BRANCH_MODULE.replace("INDEX", "2147483647").encode()
    pipeline = b"builtin.module(rope-to-llvm-cpu)"
    for _ in range(3):
        error = ctypes.c_void_p()
        assert not lib.ropeJitLower(crashing, pipeline, ctypes.byref(error))
        message = take_error(lib, error)
        assert "an MLIR pass crashed on this module (one-shot-bufferize)" \
            in message, message
    # A context of its own: the next compile is unaffected (dim 0: the
    # slice at 16 - 12).
    valid = CRASHING_BRANCH_MODULE.replace("INDEX", "0").encode()
    error = ctypes.c_void_p()
    lowered = lib.ropeJitLower(valid, pipeline, ctypes.byref(error))
    assert lowered, take_error(lib, error)
    lib.ropeJitFreeString(lowered)


def test_capi_survives_crashing_passes_on_several_threads():
    # Crash recovery is per thread (LLVM's CrashRecoveryContext) and its
    # signal handlers are counted across threads: four threads compiling
    # crashing and valid modules at once (ctypes releases the GIL) each get
    # their own answers.
    import threading
    lib = capi()
    crashing = CRASHING_BRANCH_MODULE.replace("INDEX", "2147483647").encode()
    valid = CRASHING_BRANCH_MODULE.replace("INDEX", "0").encode()
    pipeline = b"builtin.module(rope-to-llvm-cpu)"
    answers = []

    def compile_both():
        for _ in range(3):
            for text, should_lower in ((crashing, False), (valid, True)):
                error = ctypes.c_void_p()
                lowered = lib.ropeJitLower(text, pipeline, ctypes.byref(error))
                if lowered:
                    lib.ropeJitFreeString(lowered)
                    answers.append(should_lower)
                else:
                    message = take_error(lib, error)
                    answers.append(not should_lower and
                                   "an MLIR pass crashed" in message)

    threads = [threading.Thread(target=compile_both) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == [True] * 24, answers


def test_a_chain_deeper_than_the_check_follows_meets_the_net():
    # The check follows an index's producers 128 deep (its stack is the
    # caller's); the canonicalizer folds 20000 additions of 0 into the -1
    # that crashes it, and the C API reports that crash instead of dying.
    lib = capi()
    depth = 20000
    chain = "  %v0 = arith.constant 0 : index\n" + "".join(
        f"  %v{i + 1} = arith.addi %v{i}, %c0 : index\n"
        for i in range(depth)) + f"  %ci = arith.subi %v{depth}, %c1 : index\n"
    text = DIM_INDEX_MODULE.replace("  %ci = arith.constant INDEX : index\n",
                                    chain)
    error = ctypes.c_void_p()
    assert not lib.ropeJitLower(text.encode(), b"builtin.module(canonicalize)",
                                ctypes.byref(error))
    message = take_error(lib, error)
    assert "an MLIR pass crashed on this module (canonicalize)" in message
    # 100 deep, the check folds it and refuses it first.
    short = DIM_INDEX_MODULE.replace(
        "  %ci = arith.constant INDEX : index\n",
        chain.split("  %v101 =")[0] + "  %ci = arith.subi %v100, %c1 : index\n")
    error = ctypes.c_void_p()
    assert not lib.ropeJitLower(short.encode(), b"builtin.module(canonicalize)",
                                ctypes.byref(error))
    assert "tensor.dim of dim -1 of a rank-3 value" in take_error(lib, error)


# rope-to-llvm-cpu alone: the default pipeline's rope-optimize canonicalizes
# first, and the check at the head of rope-to-llvm-cpu then refuses the
# constant it made.
CPU_ONLY = "builtin.module(rope-to-llvm-cpu{emit-c-interface=true})"


def test_jit_reports_a_crashing_pass_as_a_compile_error():
    text = CRASHING_BRANCH_MODULE.replace("INDEX", "2147483647")
    with pytest.raises(rope_mlir.CompileError, match="an MLIR pass crashed"):
        rope_mlir.jit(text, pipeline=CPU_ONLY)
    with pytest.raises(rope_mlir.CompileError,
                       match="rope-check-ir-safety: a tensor.dim of dim "
                       "2147483647"):
        rope_mlir.jit(text)
    x = np.arange(16, dtype=np.float32)
    out = rope_mlir.jit(CRASHING_BRANCH_MODULE.replace("INDEX", "0"),
                        pipeline=CPU_ONLY).function("f")(x)
    expected = x.copy()
    expected[4:8] = 1
    np.testing.assert_array_equal(np.asarray(out), expected)


def test_the_crash_is_real_without_recovery():
    # What the net saves the host from: with ROPE_JIT_CRASH_RECOVERY=0 the
    # same compile ends the process by a signal, as in mlir-opt.
    script = textwrap.dedent(f"""
        import rope_mlir
        rope_mlir.jit({CRASHING_BRANCH_MODULE.replace("INDEX", "2147483647")!r},
                      pipeline={CPU_ONLY!r})
    """)
    env = dict(os.environ, ROPE_JIT_CRASH_RECOVERY="0")
    # Under the sanitizer stage ASan reports the crash, asked for here: to
    # the child's stderr, not to the reports directory, where any file
    # fails the stage.
    for name in ("ASAN_OPTIONS", "UBSAN_OPTIONS"):
        if name in env:
            env[name] = re.sub(r"log_path=[^:]*", "log_path=stderr", env[name])
    done = subprocess.run([sys.executable, "-c", script], env=env,
                          capture_output=True, timeout=120)
    assert done.returncode < 0, (done.returncode, done.stderr[-2000:])


GPU_LAUNCH_MODULE = """
func.func @launch(%x: memref<256xf32>) {
  %c1 = arith.constant 1 : index
  %cn = arith.constant THREADS : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %cn, %sy = %c1, %sz = %c1) {
    %v = memref.load %x[%tx] : memref<256xf32>
    memref.store %v, %x[%tx] : memref<256xf32>
    gpu.terminator
  }
  return
}
"""


@pytest.mark.parametrize("threads", [2**31, 0, -5])
def test_capi_refuses_a_launch_size_llvm_exits_on(threads):
    # Kernel outlining makes constant launch sizes i32 attributes
    # (nvvm.maxntid); 2^31 made LLVM's NVPTX backend exit the process (a
    # fuzz finding through rope-to-nvvm).
    lib = capi()
    text = GPU_LAUNCH_MODULE.replace("THREADS", str(threads)).encode()
    error = ctypes.c_void_p()
    assert not lib.ropeJitLower(text, b"builtin.module(canonicalize)",
                                ctypes.byref(error))
    message = take_error(lib, error)
    assert f"gpu.launch" in message and f"constant size {threads}" in message


def test_capi_refuses_a_launch_size_folding_makes():
    # 2^30 * 2 is 2^31 once the canonicalizer folds it, before outlining.
    lib = capi()
    text = GPU_LAUNCH_MODULE.replace(
        "%cn = arith.constant THREADS : index",
        "%c2 = arith.constant 2 : index\n"
        "  %half = arith.constant 1073741824 : index\n"
        "  %cn = arith.muli %half, %c2 : index").encode()
    error = ctypes.c_void_p()
    assert not lib.ropeJitLower(text, b"builtin.module(canonicalize)",
                                ctypes.byref(error))
    assert "constant size 2147483648" in take_error(lib, error)


NEGATIVE_TILE_MODULE = """
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @f(%q: tensor<16x64xf32>) -> tensor<16x64xf32> {
  %e = tensor.empty() : tensor<16x64xf32>
  %z = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%q : tensor<16x64xf32>) outs(%e : tensor<16x64xf32>) {
  ^bb0(%a: f32, %b: f32):
    %s = arith.mulf %a, %a : f32
    linalg.yield %s : f32
  } -> tensor<16x64xf32>
  return %z : tensor<16x64xf32>
}
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %g = transform.structured.match ops{["linalg.generic"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %loop = transform.structured.fuse %g tile_sizes [TILE, 0] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    transform.yield
  }
}
"""


@pytest.mark.parametrize("tile,refused", [(-1, True), (4, False)])
def test_capi_refuses_negative_tile_sizes(tile, refused):
    # MLIR 22's tiling transforms take a negative tile size and build slices
    # of negative size, reporting success (a fuzz finding through
    # transform-interpreter on rope.attention's tiling).
    lib = capi()
    text = NEGATIVE_TILE_MODULE.replace("TILE", str(tile)).encode()
    error = ctypes.c_void_p()
    lowered = lib.ropeJitLower(text, b"builtin.module(transform-interpreter)",
                               ctypes.byref(error))
    if refused:
        assert not lowered
        message = take_error(lib, error)
        assert "transform.structured.fuse" in message
        assert "tile_sizes entry -1" in message
    else:
        assert lowered, take_error(lib, error)
        lib.ropeJitFreeString(lowered)


def test_capi_lowers_a_launch_of_a_valid_size():
    lib = capi()
    text = GPU_LAUNCH_MODULE.replace("THREADS", "256").encode()
    error = ctypes.c_void_p()
    lowered = lib.ropeJitLower(text, b"builtin.module(canonicalize)",
                               ctypes.byref(error))
    assert lowered, take_error(lib, error)
    lib.ropeJitFreeString(lowered)


def test_capi_lowers_the_same_ir_with_the_dim_in_range():
    lib = capi()
    text = DIM_INDEX_MODULE.replace("INDEX", "1").encode()
    error = ctypes.c_void_p()
    lowered = lib.ropeJitLower(text, b"builtin.module(canonicalize)",
                               ctypes.byref(error))
    assert lowered, take_error(lib, error)
    lib.ropeJitFreeString(lowered)


@pytest.mark.parametrize("head_dim,scaling,words", [
    # Signed overflow summing the sections (UB) in the importer.
    (128, {"rope_type": "default", "mrope_section": [2**63 - 1, 1, 0]},
     "M-RoPE section entries must be in [0, 32768]"),
    # Float -> int overflow deriving the rotary dim (UB).
    (2**62, {"rope_type": "default", "partial_rotary_factor": 0.5},
     "head_dim must be in [1, 65536]"),
    (2**31, {"rope_type": "default"}, "head_dim must be in [1, 65536]"),
])
def test_capi_scaling_attributes_bounds(head_dim, scaling, words):
    with pytest.raises(ValueError, match=words.replace("[", r"\[")):
        _jit.scaling_attributes(scaling, 10000.0, head_dim)


def test_from_hf_config_mrope_section_overflow():
    config = {"hidden_size": 128, "num_attention_heads": 1,
              "rope_scaling": {"rope_type": "default",
                               "mrope_section": [2**63 - 1, 1, 0]}}
    with pytest.raises(ValueError, match="mrope_section|M-RoPE"):
        rope_mlir.from_hf_config(config)


# -- kernels never read outside their buffers -----------------------------

EMPTY_CACHE_PROBE = """
    import ctypes, sys
    import numpy as np
    from rope_mlir import _jit, kernel
    lowering = sys.argv[1]
    config = kernel.KernelConfig(dtype="f32", rank=3, head_dim=16,
                                 positions="explicit", cache="gathered",
                                 lowering=lowering)
    module = _jit.compile_module(kernel.emit(config), kernel.pipeline(config))
    fn = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * 5)(
        module.lookup("rope_kernel"))
    x = np.ones((4, 2, 16), np.float32)
    out = np.zeros_like(x)
    pos = np.arange(4, dtype=np.int64)
    keep = []
    def desc(a):
        d = _jit.memref_descriptor(a)
        keep.append(d)
        return ctypes.addressof(d)
    # An empty [0, 8] cache whose data pointer is NULL: reading its row 0,
    # as the lowerings did for an out-of-range position, faults.
    empty = _jit._descriptor_type(2)()
    empty.allocated = empty.aligned = 0
    empty.offset = 0
    empty.sizes[:] = (0, 8)
    empty.strides[:] = (8, 1)
    fn(desc(x), desc(pos), ctypes.addressof(empty), ctypes.addressof(empty),
       desc(out))
    rotated = out[..., :16]
    assert np.isnan(rotated).all(), rotated
    print("ok")
"""


@pytest.mark.parametrize("lowering", ["vector", "scalar"])
def test_empty_gathered_cache_reads_nothing(lowering):
    # The Python API refuses an empty cache before any kernel runs; rope-opt
    # and C API users call the kernel directly, so the kernel itself must not
    # read row 0 of an empty cache (it segfaulted with a NULL data pointer).
    result = run_python(EMPTY_CACHE_PROBE, lowering)
    assert result.returncode == 0, (result.returncode, result.stderr[-2000:])
    assert result.stdout.strip().endswith("ok")


CAST_FOLD_MODULES = {
    # Q cast from 4 queries to ?, the output static with 5: the op fails at
    # run time as written; folding the cast (rope's attention fold, or
    # upstream's for any destination-style op) builds an op that does not
    # verify.
    "rope.attention": """
#q = affine_map<(m, k1, k2, n) -> (m, k1)>
#k = affine_map<(m, k1, k2, n) -> (k2, k1)>
#v = affine_map<(m, k1, k2, n) -> (k2, n)>
#o = affine_map<(m, k1, k2, n) -> (m, n)>
func.func @g(%q0: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x8xf32>) -> tensor<5x8xf32> {
  %q = tensor.cast %q0 : tensor<4x8xf32> to tensor<?x8xf32>
  %o = tensor.empty() : tensor<5x8xf32>
  %r = rope.attention ins(%q, %k, %v : tensor<?x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>) outs(%o : tensor<5x8xf32>) attributes {indexing_maps = [#q, #k, #v, #o], scale = 0.125 : f64} -> tensor<5x8xf32>
  return %r : tensor<5x8xf32>
}
""",
    "rope.apply": """
func.func @f(%x: tensor<4x8xf32>, %e0: tensor<5x8xf32>) -> tensor<?x8xf32> {
  %c = tensor.cast %x : tensor<4x8xf32> to tensor<?x8xf32>
  %e = tensor.cast %e0 : tensor<5x8xf32> to tensor<?x8xf32>
  %y = rope.apply ins(%c : tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}
""",
    "linalg.generic": """
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @g(%q0: tensor<4x8xf32>) -> tensor<5x8xf32> {
  %q = tensor.cast %q0 : tensor<4x8xf32> to tensor<?x8xf32>
  %o = tensor.empty() : tensor<5x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%q : tensor<?x8xf32>) outs(%o : tensor<5x8xf32>) {
  ^bb0(%a: f32, %b: f32):
    linalg.yield %a : f32
  } -> tensor<5x8xf32>
  return %r : tensor<5x8xf32>
}
""",
}


@pytest.mark.parametrize("op", sorted(CAST_FOLD_MODULES))
def test_capi_refuses_casts_whose_fold_contradicts(op):
    # A fuzz finding (canonicalize left invalid IR): refused up front with
    # the op named, not lowered into IR that does not verify.
    lib = capi()
    error = ctypes.c_void_p()
    assert not lib.ropeJitLower(CAST_FOLD_MODULES[op].encode(),
                                b"builtin.module(canonicalize)",
                                ctypes.byref(error))
    message = take_error(lib, error)
    assert f"a {op} at" in message
    assert "contradicting static sizes" in message


def test_capi_folds_a_static_input_cast_into_rope_apply():
    # The plain case: a static input cast to a dynamic kernel. Canonicalized,
    # input and init meet at the static shape (before, the fold left the
    # init dynamic and the op did not verify).
    lib = capi()
    text = """
func.func @f(%x: tensor<4x8xf32>, %e: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %c = tensor.cast %x : tensor<4x8xf32> to tensor<?x8xf32>
  %y = rope.apply ins(%c : tensor<?x8xf32>) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}
"""
    error = ctypes.c_void_p()
    out = lib.ropeJitLower(text.encode(), b"builtin.module(canonicalize)",
                           ctypes.byref(error))
    assert out, take_error(lib, error)
    lowered = ctypes.string_at(out).decode()
    lib.ropeJitFreeString(out)
    assert "rope.apply ins(%arg0 : tensor<4x8xf32>) outs(%cast : tensor<4x8xf32>)" in lowered
