# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Build hook for the wheel (issue 16): `pip wheel python/` runs
`cmake --build <build dir> --target RopeJit RopeKernelCall` and copies
libRopeJit.so, its symbol table and debug information stripped (about 170
MB, 50 MB compressed: MLIR and LLVM are linked in), and the fast-call
extension _kernel_call.abi3.so (CPython's stable ABI, 3.11+) into
rope_mlir/_lib/, where _jit.library_path() looks first. The build directory is
$ROPE_MLIR_BUILD_DIR (an absolute path), else the checkout's build/; when it
holds no configured build, it is configured first, as scripts/setup.sh does
(a build from scratch: an hour or more on two cores). The editable install
(scripts/setup.sh) copies nothing: the package then finds the library in
build/lib.

libRopeJit.so needs only system libraries; its threaded path loads the
OpenMP runtime from the absolute path it was built with
(/usr/lib/llvm-22/lib/libomp.so, Debian's libomp-22-dev), which the wheel
does not carry."""
import os
import pathlib
import shutil
import subprocess

from setuptools import Distribution, setup
from setuptools.command.bdist_wheel import bdist_wheel  # setuptools >= 70.1
from setuptools.command.build_py import build_py

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
LLVM = "/usr/lib/llvm-22"


def _build_dir() -> pathlib.Path:
    build = pathlib.Path(os.environ.get("ROPE_MLIR_BUILD_DIR", ROOT / "build"))
    if not build.is_absolute():
        # pip runs this in python/ (or a copy of it): relative to what?
        raise SystemExit(f"ROPE_MLIR_BUILD_DIR must be an absolute path, "
                         f"not {str(build)!r}")
    return build


def _build_libraries() -> list:
    build = _build_dir()
    if not (build / "CMakeCache.txt").exists():
        subprocess.check_call([
            "cmake", "-G", "Ninja", "-S", str(ROOT), "-B", str(build),
            "-DCMAKE_BUILD_TYPE=Release",
            "-DCMAKE_C_COMPILER=clang-22", "-DCMAKE_CXX_COMPILER=clang++-22",
            f"-DMLIR_DIR={LLVM}/lib/cmake/mlir",
            f"-DLLVM_EXTERNAL_LIT={LLVM}/bin/lit"])
    subprocess.check_call(["cmake", "--build", str(build),
                           "--target", "RopeJit", "RopeKernelCall"])
    return [build / "lib" / "libRopeJit.so",
            build / "lib" / "_kernel_call.abi3.so"]


class BuildPyWithLibrary(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = pathlib.Path(self.build_lib) / "rope_mlir" / "_lib"
        target.mkdir(parents=True, exist_ok=True)
        strip = shutil.which("llvm-strip-22") or shutil.which("strip")
        for library in _build_libraries():
            out = target / library.name
            if strip:
                subprocess.check_call([strip, "--strip-unneeded", "-o",
                                       str(out), str(library)])
            else:
                shutil.copy2(library, out)


class BinaryDistribution(Distribution):
    """Installs into platlib: the package carries a shared library."""

    def has_ext_modules(self):
        return True


class PlatformWheel(bdist_wheel):
    """py3-none-linux_x86_64: the package carries a shared library (loaded
    with ctypes, so no CPython ABI), built on Debian 12 (glibc 2.36) and not
    checked by auditwheel, hence no manylinux tag. The fast-call extension
    beside it is optional: only CPython 3.11+ loads it (its stable ABI); any
    other Python calls kernels through ctypes, so the wheel claims no ABI."""

    def get_tag(self):
        _, _, platform = super().get_tag()
        return "py3", "none", platform


setup(distclass=BinaryDistribution,
      cmdclass={"build_py": BuildPyWithLibrary, "bdist_wheel": PlatformWheel})
