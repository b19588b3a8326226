# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""ctypes binding of librope's C API (include/rope/Runtime/RopeJit.h).

The library compiles rope IR in process (MLIR ExecutionEngine) and returns
the addresses of `_mlir_ciface_` functions, which take pointers to memref
descriptors. Nothing here spawns a subprocess.
"""

from __future__ import annotations

import ctypes
import functools
import json
import os
import pathlib
import threading
import typing

import numpy as np

__all__ = ["CheckError", "CompileError", "library_path", "compile_module", "lower",
           "scaling_attributes", "ScalingAttributes", "JitModule",
           "memref_descriptor", "is_registered", "READ_ONLY_ARGUMENTS",
           "kernel_call_module"]

#: ropeJitCompileWithFlags: mark the public functions' tensor arguments
#: `bufferization.writable = false`, so compiled code never writes them.
READ_ONLY_ARGUMENTS = 1


class CheckError(RuntimeError):
    """A runtime check of code compiled with `checked=True` failed: the
    message names the check and the op's location. The call wrote nothing
    past any buffer; its results are not returned."""


class CompileError(ValueError):
    """The compiler rejected the IR; the message holds its diagnostics."""


def library_path() -> pathlib.Path:
    """Where libRopeJit.so is: $ROPE_MLIR_LIBRARY, next to the package, or the
    repository's build/lib (the package is installed editable by
    scripts/setup.sh)."""
    env = os.environ.get("ROPE_MLIR_LIBRARY")
    if env:
        return pathlib.Path(env)
    here = pathlib.Path(__file__).resolve().parent
    candidates = [here / "_lib" / "libRopeJit.so",
                  here.parent.parent / "build" / "lib" / "libRopeJit.so"]
    for candidate in candidates:
        if candidate.exists():
            return candidate
    raise RuntimeError(
        "libRopeJit.so not found: build the project (scripts/setup.sh) or "
        "set ROPE_MLIR_LIBRARY; looked in " +
        ", ".join(str(c) for c in candidates))


_lib = None
_lib_lock = threading.Lock()


def _library():
    global _lib
    with _lib_lock:
        if _lib is None:
            lib = ctypes.CDLL(str(library_path()))
            lib.ropeJitCompile.restype = ctypes.c_void_p
            lib.ropeJitCompile.argtypes = [
                ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int,
                ctypes.POINTER(ctypes.c_void_p)]
            lib.ropeJitCompileWithFlags.restype = ctypes.c_void_p
            lib.ropeJitCompileWithFlags.argtypes = [
                ctypes.c_char_p, ctypes.c_char_p, ctypes.c_int, ctypes.c_int,
                ctypes.POINTER(ctypes.c_void_p)]
            lib.ropeJitFunctionType.restype = ctypes.c_void_p
            lib.ropeJitFunctionType.argtypes = [
                ctypes.c_void_p, ctypes.c_char_p,
                ctypes.POINTER(ctypes.c_void_p)]
            lib.ropeJitFunctionNames.restype = ctypes.c_void_p
            lib.ropeJitFunctionNames.argtypes = [
                ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
            lib.ropeJitIsRegistered.restype = ctypes.c_int
            lib.ropeJitIsRegistered.argtypes = [ctypes.c_char_p]
            lib.ropeJitHostHasFeature.restype = ctypes.c_int
            lib.ropeJitHostHasFeature.argtypes = [ctypes.c_char_p]
            lib.ropeJitLookup.restype = ctypes.c_void_p
            lib.ropeJitLookup.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                          ctypes.c_int]
            lib.ropeJitLookupPacked.restype = ctypes.c_void_p
            lib.ropeJitLookupPacked.argtypes = [ctypes.c_void_p,
                                                ctypes.c_char_p]
            lib.ropeJitInvoke.restype = ctypes.c_int
            lib.ropeJitInvoke.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                          ctypes.POINTER(ctypes.c_void_p)]
            lib.ropeJitLower.restype = ctypes.c_void_p
            lib.ropeJitLower.argtypes = [ctypes.c_char_p, ctypes.c_char_p,
                                         ctypes.POINTER(ctypes.c_void_p)]
            lib.ropeJitScalingAttributes.restype = ctypes.c_void_p
            lib.ropeJitScalingAttributes.argtypes = [
                ctypes.c_char_p, ctypes.c_double, ctypes.c_int64,
                ctypes.POINTER(ctypes.c_int64),
                ctypes.POINTER(ctypes.c_double),
                ctypes.POINTER(ctypes.c_void_p),
                ctypes.POINTER(ctypes.c_void_p)]
            lib.ropeJitCanonicalAttribute.restype = ctypes.c_void_p
            lib.ropeJitCanonicalAttribute.argtypes = [
                ctypes.c_char_p, ctypes.c_char_p,
                ctypes.POINTER(ctypes.c_void_p)]
            lib.ropeJitDestroy.argtypes = [ctypes.c_void_p]
            lib.ropeJitFreeString.argtypes = [ctypes.c_void_p]
            _lib = lib
        return _lib


_kernel_call = None
_kernel_call_loaded = False


def kernel_call_module():
    """The checked fast call of compiled kernels (lib/Runtime/KernelCall.cpp,
    the extension `_kernel_call.abi3.so` next to libRopeJit.so), or None when
    it is absent (built without Python headers) or ROPE_MLIR_FAST_CALL=0:
    kernels are then called through ctypes, with the same checks."""
    global _kernel_call, _kernel_call_loaded
    with _lib_lock:
        if not _kernel_call_loaded:
            _kernel_call_loaded = True
            if os.environ.get("ROPE_MLIR_FAST_CALL", "1") != "0":
                _kernel_call = _load_kernel_call()
        return _kernel_call


def _load_kernel_call():
    import importlib.util
    import sys
    path = library_path().parent / "_kernel_call.abi3.so"
    # The extension uses CPython's stable ABI of 3.11.
    if sys.implementation.name != "cpython" or sys.version_info < (3, 11) \
            or not path.exists():
        return None
    spec = importlib.util.spec_from_file_location(
        "rope_mlir._kernel_call", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _take_string(lib, pointer) -> str:
    if not pointer:
        return ""
    text = ctypes.string_at(pointer).decode("utf-8", "replace")
    lib.ropeJitFreeString(pointer)
    return text


class JitModule:
    """A JIT-compiled module; keeps the code alive while referenced."""

    def __init__(self, handle, lib):
        self._handle = handle
        self._lib = lib

    def lookup(self, name: str) -> int:
        address = self._lib.ropeJitLookup(self._handle, name.encode(), 0)
        if not address:
            raise KeyError(f"no C-interface function named {name!r}")
        return address

    def lookup_packed(self, name: str) -> int:
        """The packed wrapper of `_mlir_ciface_<name>` (`void(void **)`),
        for `invoke`."""
        address = self._lib.ropeJitLookupPacked(self._handle, name.encode())
        if not address:
            raise KeyError(f"no C-interface function named {name!r}")
        return address

    def invoke(self, packed: int, arguments) -> None:
        """Calls a packed wrapper on `arguments` (a ctypes array of pointers
        to each parameter's value, then to the returned value's slot) so
        that a failure in the compiled code is an exception: MemoryError
        when an allocation failed or its size overflowed, CheckError when a
        runtime check (`checked=True`) failed."""
        error = ctypes.c_void_p()
        kind = self._lib.ropeJitInvoke(packed, arguments, ctypes.byref(error))
        if kind == 0:
            return
        message = _take_string(self._lib, error.value)
        if kind == 1:
            raise MemoryError(message)
        raise CheckError(message)

    def function_names(self) -> list:
        """The public functions of the module as parsed (ropeJitFunctionNames)."""
        error = ctypes.c_void_p()
        text = self._lib.ropeJitFunctionNames(self._handle,
                                              ctypes.byref(error))
        if not text:
            raise RuntimeError(_take_string(self._lib, error.value))
        return json.loads(_take_string(self._lib, text))

    def function_type(self, name: str) -> dict:
        """The signature of public function `name` before lowering, and what
        the lowering made of its C interface (ropeJitFunctionType); KeyError
        with the library's message (which names the functions there are)."""
        error = ctypes.c_void_p()
        text = self._lib.ropeJitFunctionType(self._handle, name.encode(),
                                             ctypes.byref(error))
        if not text:
            raise KeyError(_take_string(self._lib, error.value))
        return json.loads(_take_string(self._lib, text))

    def __del__(self):
        if getattr(self, "_handle", None):
            self._lib.ropeJitDestroy(self._handle)
            self._handle = None


def no_nul(text: str, name: str) -> None:
    # C strings end at the first NUL: the library would see (and compile)
    # only the text before it.
    if "\0" in text:
        raise ValueError(f"{name} must not contain NUL characters (at offset "
                         f"{text.index(chr(0))}): the text after it would "
                         "be ignored")


def compile_module(source: str, pipeline: str | None = None,
                   opt_level: int = 3, flags: int = 0) -> JitModule:
    no_nul(source, "source")
    if pipeline is not None:
        no_nul(pipeline, "pipeline")
    lib = _library()
    error = ctypes.c_void_p()
    handle = lib.ropeJitCompileWithFlags(
        source.encode(), pipeline.encode() if pipeline else None, opt_level,
        flags, ctypes.byref(error))
    if not handle:
        raise CompileError(_take_string(lib, error.value) or
                           "compilation failed")
    return JitModule(handle, lib)


@functools.lru_cache(maxsize=None)
def host_has_feature(name: str) -> bool:
    """Whether this CPU has the LLVM target feature `name` (e.g.
    "avx512bf16"), as the JIT's target machine sees it."""
    if not isinstance(name, str) or "\0" in name:
        raise TypeError(f"name must be a str without NUL characters (an LLVM "
                        f"target feature), got {name!r}")
    return bool(_library().ropeJitHostHasFeature(name.encode()))


def bf16_truncation(rounding: str = "exact") -> str:
    """The rope-to-llvm-cpu `bf16-truncation` for a kernel's `bf16_rounding`:
    "target" (the CPU's vcvtneps2bf16: round to nearest even, results below
    2^-126 flushed to zero) for "native" on a host with AVX512-BF16, else
    "bits" (integer arithmetic, bf16 subnormal results kept)."""
    if rounding not in ("exact", "native"):
        raise ValueError(f"bf16_rounding must be 'exact' or 'native', got "
                         f"{rounding!r}")
    if rounding == "native" and host_has_feature("avx512bf16"):
        return "target"
    return "bits"


def is_registered(name: str) -> bool:
    """Whether the library registers a pass or pipeline called `name`."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a str (a pass or pipeline name), got "
                        f"{type(name).__name__}")
    if "\0" in name:
        raise ValueError("name must not contain NUL characters")
    return bool(_library().ropeJitIsRegistered(name.encode()))


def lower(source: str, pipeline: str) -> str:
    """Runs `pipeline` (e.g. "builtin.module()" to only verify) and returns
    the resulting IR; raises CompileError with the diagnostics."""
    no_nul(source, "source")
    no_nul(pipeline, "pipeline")
    lib = _library()
    error = ctypes.c_void_p()
    text = lib.ropeJitLower(source.encode(), pipeline.encode(),
                            ctypes.byref(error))
    if not text:
        raise CompileError(_take_string(lib, error.value) or "lowering failed")
    return _take_string(lib, text)


@functools.lru_cache(maxsize=256)
def canonical_attribute(text: str, kind: str) -> str:
    """`text` parsed as exactly one attribute of `kind` ("freqs": a frequency
    scheme, "layout": #rope.layout<...>, "mrope": #rope.mrope<...>) and
    printed back: what IR built from a user's string pastes, so that text
    after the attribute (", token_dims = ...") can never reach the op's
    attribute dictionary. Raises ValueError with the parser's message."""
    if not isinstance(text, str):
        raise TypeError(f"{kind} must be a str (an attribute's text), got "
                        f"{type(text).__name__}")
    no_nul(text, kind)
    lib = _library()
    error = ctypes.c_void_p()
    printed = lib.ropeJitCanonicalAttribute(text.encode(), kind.encode(),
                                            ctypes.byref(error))
    if not printed:
        raise ValueError(f"{kind}: " + (_take_string(lib, error.value) or
                                        f"{text!r} is not an attribute"))
    return _take_string(lib, printed)


class ScalingAttributes(typing.NamedTuple):
    """What a Hugging Face rope_scaling dict means for `rope.apply`."""

    #: The `freqs` attribute's text, e.g. '#rope.yarn<...>'.
    freqs: str
    #: The `magnitude` the op must state (the scheme's, else 1).
    magnitude: float
    #: The `mrope` attribute's text, or None.
    mrope: typing.Optional[str]
    #: The rotary dimension the attributes were checked against.
    rotary_dim: int


def scaling_attributes(scaling: typing.Optional[dict], base: float,
                       head_dim: int,
                       rotary_dim: typing.Optional[int] = None
                       ) -> ScalingAttributes:
    """Translates a Hugging Face rope_scaling dict with the C++ importer
    (rope::buildFrequencyAttrFromHF); rotary_dim None derives it as Hugging
    Face does. Raises ValueError with the importer's (or the attribute
    verifier's) message."""
    lib = _library()
    try:
        text = json.dumps(scaling, allow_nan=False)
    except (TypeError, ValueError) as error:
        raise ValueError(f"rope_scaling is not JSON-serializable: "
                         f"{error}") from None
    dim = ctypes.c_int64(0 if rotary_dim is None else int(rotary_dim))
    magnitude = ctypes.c_double(1.0)
    mrope = ctypes.c_void_p()
    error = ctypes.c_void_p()
    freqs = lib.ropeJitScalingAttributes(
        text.encode(), float(base), int(head_dim), ctypes.byref(dim),
        ctypes.byref(magnitude), ctypes.byref(mrope), ctypes.byref(error))
    if not freqs:
        raise ValueError(_take_string(lib, error.value) or
                         "invalid rope_scaling")
    return ScalingAttributes(_take_string(lib, freqs), magnitude.value,
                             _take_string(lib, mrope.value) or None,
                             dim.value)


_descriptor_types: dict[int, type] = {}


def _descriptor_type(rank: int) -> type:
    if rank not in _descriptor_types:
        fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
                  ("offset", ctypes.c_int64)]
        if rank:
            fields += [("sizes", ctypes.c_int64 * rank),
                       ("strides", ctypes.c_int64 * rank)]
        _descriptor_types[rank] = type(f"MemRef{rank}D", (ctypes.Structure,),
                                       {"_fields_": fields})
    return _descriptor_types[rank]


@functools.lru_cache(maxsize=1024)
def _identity_strides(shape: tuple) -> tuple:
    # Row-major strides in elements. Size-1 and empty dims have arbitrary
    # numpy strides; recompute them (cached: shapes repeat call after call).
    strides, stride = [], 1
    for size in reversed(shape):
        strides.append(stride)
        stride *= max(size, 1)
    return tuple(reversed(strides))


def memref_descriptor(array: np.ndarray):
    """A memref descriptor viewing `array` without a copy. The array must be
    C-contiguous (the descriptor states row-major strides) and aligned to its
    itemsize (compiled code loads whole elements, vectors of them): anything
    else raises ValueError rather than let a kernel read the wrong bytes."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"memref descriptors view numpy arrays, got "
                        f"{type(array).__name__}")
    if not array.flags.c_contiguous:
        raise ValueError(f"memref descriptors need a C-contiguous array, got "
                         f"one of shape {array.shape} with strides "
                         f"{array.strides} (np.ascontiguousarray copies it)")
    pointer = array.ctypes.data
    if pointer % array.itemsize:
        raise ValueError(f"memref descriptors need an array aligned to its "
                         f"itemsize ({array.itemsize} bytes), got address "
                         f"{pointer:#x} ({array.dtype}, shape {array.shape}); "
                         "copy it (array.copy()) first")
    desc = _descriptor_type(array.ndim)()
    desc.allocated = pointer
    desc.aligned = pointer
    if array.ndim:
        shape = array.shape
        desc.sizes[:] = shape
        desc.strides[:] = _identity_strides(shape)
    return desc
