# -*- Python -*-
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# lit configuration of the rope-mlir test suite.

import os
import shutil
import subprocess
import sys

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "ROPE"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir"]

config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.rope_obj_root, "test")

# test/downstream (an out-of-tree consumer project) is built and run by its
# own script, not by lit. Inputs/ directories hold data that tests read
# (test/Frontends/Inputs: frontend IR fixtures), not tests.
config.excludes = [
    "CMakeLists.txt",
    "lit.cfg.py",
    "lit.site.cfg.py",
    "lit.site.cfg.py.in",
    "downstream",
    "Inputs",
]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%shlibext", config.llvm_shlib_ext))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()  # FileCheck, not, count

# Project binaries first, then the LLVM/MLIR installation.
tool_dirs = [config.rope_tools_dir, config.llvm_tools_dir]
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.rope_tools_dir, append_path=True)

tools = [
    "rope-opt",
    ToolSubst("mlir-opt", os.path.join(config.llvm_tools_dir, "mlir-opt")),
    "mlir-runner",
]
llvm_config.add_tool_substitutions(tools, tool_dirs)


def runner_lib(name):
    return os.path.join(config.llvm_lib_dir, "lib" + name + config.llvm_shlib_ext)


config.substitutions.append(("%mlir_runner_utils", runner_lib("mlir_runner_utils")))
config.substitutions.append(
    ("%mlir_c_runner_utils", runner_lib("mlir_c_runner_utils"))
)
config.substitutions.append(
    (
        "%rope_plugin",
        os.path.join(config.rope_lib_dir, "RopePlugin" + config.llvm_shlib_ext),
    )
)

# GPU tests that compile to a cubin need the CUDA toolkit's assembler.
ptxas = "/usr/local/cuda/bin/ptxas"
if os.path.exists(ptxas):
    config.available_features.add("ptxas")
config.substitutions.append(("%ptxas", ptxas))
# Lowering to PTX links the toolkit's libdevice (rope-to-nvvm's default
# toolkit=/usr/local/cuda).
if os.path.exists("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc"):
    config.available_features.add("cuda-libdevice")
# %extract_ptx: prints the PTX of a gpu.binary (bench/gpu/extract_ptx.py).
extract_ptx = os.path.join(
    os.path.dirname(config.test_source_root), "bench", "gpu", "extract_ptx.py"
)


# %python: an interpreter that can run the float64 reference
# (python/rope_mlir/reference.py needs numpy). lit itself may run under a
# system Python without numpy, so probe lit's interpreter first, then the
# python3 on PATH, and substitute the real executable (not a shim). This
# replaces the %python that use_default_substitutions() defines as lit's own
# interpreter.
def find_python():
    for candidate in (sys.executable, shutil.which("python3")):
        if not candidate:
            continue
        try:
            return subprocess.run(
                [candidate, "-c", "import numpy, sys; print(sys.executable)"],
                check=True,
                capture_output=True,
                text=True,
            ).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            continue
    return "python3"


config.substitutions = [s for s in config.substitutions if s[0] != "%python"]
config.substitutions.append(("%python", '"' + find_python() + '"'))
config.substitutions.append(
    ("%extract_ptx", '"' + (shutil.which("python3") or sys.executable) + '" ' + extract_ptx)
)


# %omp_lib: the OpenMP runtime that code lowered with num-threads != 1 calls
# (rope-to-llvm-cpu -> convert-scf-to-openmp), for mlir-runner's -shared-libs.
# It ships with LLVM, next to the runner utils.
omp_lib = os.path.normpath(
    os.path.join(config.llvm_tools_dir, "..", "lib", "libomp" + config.llvm_shlib_ext)
)
config.substitutions.append(("%omp_lib", omp_lib))
if os.path.exists(omp_lib):
    config.available_features.add("libomp")
