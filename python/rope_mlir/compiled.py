# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""`rope_mlir.jit`: compile a module of tensor functions, call them on numpy.

    m = rope_mlir.jit(module_text)           # parse, verify, lower, JIT
    f = m.function("forward")                # a public func.func
    y = f(x, positions)                      # numpy in, numpy out

The module is any IR the default pipeline lowers: rope.apply, linalg (named
ops and generics, complex arithmetic in their bodies), tensor, math, cf.assert,
dense_resource constants, what torch-mlir and JAX/IREE emit. Its public
functions take ranked tensors (static or dynamic sizes) and scalars and
return the same; each call checks its arguments against the signature the
module declares, runs the compiled code and returns every result as a numpy
array that Python owns.

Memory (docs/DESIGN.md, "rope_mlir.jit"): arguments are lent to the code
read-only (the module is compiled with every tensor argument marked
`bufferization.writable = false`, so bufferization copies rather than writes
them in place); a returned buffer the caller owns is adopted by the numpy
array returned (no copy: the array frees it when collected), or, when it is
strided or holds i1, copied into numpy and then freed. Under the default pipeline's ownership-based deallocation
every returned buffer is a malloc'ed block the caller owns (the callee
clones an argument or a global it returns), but one block may be returned
as several results. So each distinct `allocated` pointer is freed once, and
never one that is null, memref.get_global's 0xdeadbeef marker, or inside an
argument's memory (what a pipeline without deallocation returns).
"""

from __future__ import annotations

import ctypes
import functools
import threading
from typing import NamedTuple, Optional

import ml_dtypes
import numpy as np

from . import _arrays, _ir, _jit, _kernel_path
from ._jit import CheckError, CompileError

__all__ = ["jit", "CompiledModule", "CompiledFunction", "TensorType",
           "CheckError",
           "ScalarType", "default_pipeline", "FunctionNotFoundError"]

#: Tensor element types a compiled function may take or return.
_TENSOR_DTYPES = _ir.DTYPES
#: Scalar types (passed and returned by value): _kernel_path's, which every
#: compiled kernel's C interface is read with. f16/bf16 scalars are not:
#: ctypes has no half-precision type to pass in a vector register.
_SCALAR_CTYPES = _kernel_path.SCALAR_CTYPES
_BOOLS = (bool, np.bool_)
#: memref.get_global's `allocated` pointer (FinalizeMemRefToLLVM): a constant
#: that must never be freed.
_GLOBAL_MARKER = 0xDEADBEEF

_libc = ctypes.CDLL(None)
_libc.free.argtypes = [ctypes.c_void_p]
_libc.free.restype = None


class FunctionNotFoundError(KeyError):
    """`CompiledModule.function` of a name the module has no public function
    for; the message lists the ones it has."""

    def __str__(self):
        return str(self.args[0]) if self.args else ""


class TensorType(NamedTuple):
    """A ranked tensor of a signature: sizes (None where dynamic), numpy
    dtype, MLIR element type and the type's text."""
    shape: tuple
    dtype: np.dtype
    element: str
    text: str

    @property
    def rank(self) -> int:
        return len(self.shape)


class ScalarType(NamedTuple):
    """A scalar (integer, index or float) of a signature."""
    dtype: np.dtype
    element: str
    text: str


def _host_vector_options() -> str:
    """_kernel_path.host_vector_options() as rope-to-llvm-cpu option text."""
    return _kernel_path.option_text(**_kernel_path.host_vector_options())


@functools.lru_cache(maxsize=2)
def _default_pipeline(checked: bool = False) -> str:
    lower = ("rope-to-llvm-cpu{emit-c-interface=true runtime-traps=true" +
             _host_vector_options() + (" checked=true}" if checked else "}"))
    if _jit.is_registered("rope-optimize"):
        # One thread (rope-to-llvm-cpu's default): a decode step's key tile
        # holds every KV head, so a fused K rotation computes cos/sin once
        # per key for all of them (rope-tile-attention's share-key-rotation).
        # The key loop's partial last tile peeled: every other key tile
        # static, so K and V are packed whatever the sequence length.
        return ("builtin.module(rope-optimize{share-key-rotation=true "
                f"peel-key-tiles=true}}, {lower})")
    return f"builtin.module({lower})"


def default_pipeline(checked: bool = False) -> str:
    """The pipeline `jit` uses when given none: rope-optimize (raising
    frontend IR to rope ops, when this build of the library registers it)
    then rope-to-llvm-cpu with C interfaces, single-threaded, failures
    trapped back to the caller (`runtime-traps`), and with `checked` the
    runtime checks of dynamic sizes and indices."""
    if not isinstance(checked, _BOOLS):
        raise TypeError(f"checked must be a bool, got {checked!r}")
    return _default_pipeline(bool(checked))


def _parse_type(entry: dict, where: str, function: str):
    """TensorType/ScalarType of a signature entry, or TypeError naming it."""
    kind, text = entry.get("kind"), entry.get("type")
    element = entry.get("element")
    if kind == "tensor" and element in _TENSOR_DTYPES:
        return TensorType(tuple(entry["shape"]), _TENSOR_DTYPES[element],
                          element, text)
    if kind == "scalar" and element in _SCALAR_CTYPES:
        return ScalarType(_TENSOR_DTYPES[element], element, text)
    if kind == "tensor":
        why = f"tensors of {element} are not supported"
    elif kind == "scalar":
        why = f"{element} scalars are not supported"
    else:
        why = "only ranked tensors and scalars cross the boundary"
    raise TypeError(
        f"@{function} cannot be called from Python: {where} has type {text} "
        f"({why}); jit functions take and return ranked tensors of "
        f"{', '.join(_TENSOR_DTYPES)} and scalars of "
        f"{', '.join(_SCALAR_CTYPES)}")


class CompiledFunction:
    """A public function of a compiled module. Calling it checks each
    argument against the signature (TypeError: not an array, wrong dtype or
    argument count; ValueError: wrong rank or a static size that differs),
    runs the code, and returns a numpy array (one result), a tuple (several)
    or None (none). Results are fresh arrays owned by Python. Safe to call
    from several threads at once."""

    def __init__(self, module: "CompiledModule", name: str, signature: dict):
        self._module = module  # keeps the code alive
        self.name = name
        self.arguments = tuple(
            _parse_type(entry, f"argument {i}", name)
            for i, entry in enumerate(signature["arguments"]))
        self.results = tuple(
            _parse_type(entry, f"result {i}", name)
            for i, entry in enumerate(signature["results"]))
        # Each argument's ArgSpec, read from the signature: what the checks
        # (_kernel_path.check_input) and the compiled function's signature
        # check (CompiledKernel) read.
        self.specs = tuple(
            _kernel_path.ArgSpec(
                f"@{name} argument {i} ({t.text})", t.dtype,
                None if isinstance(t, ScalarType) else t.shape,
                scalar=isinstance(t, ScalarType), declared=t.text)
            for i, t in enumerate(self.arguments))
        # The C interface (FuncToLLVM's _mlir_ciface_ wrapper): memref
        # arguments by pointer to their descriptor, scalars by value; one
        # scalar result is returned, a memref result or several results are
        # written to a struct the first parameter points to. Called through
        # the packed wrapper under ropeJitInvoke, so that a failed
        # allocation or runtime check comes back as an exception rather
        # than ending the process (CompiledKernel.call).
        self._kernel = _kernel_path.CompiledKernel(
            None, None, name, self.specs, module=module._handle,
            results=True)

    def __repr__(self):
        args = ", ".join(t.text for t in self.arguments)
        res = ", ".join(t.text for t in self.results)
        return f"<CompiledFunction @{self.name}({args}) -> ({res})>"

    # -- results ----------------------------------------------------------

    def _layout(self, i: int, expected: TensorType, desc):
        """The sizes and strides of result `i`, checked against the
        signature."""
        rank = expected.rank
        shape = tuple(desc.sizes) if rank else ()
        strides = tuple(desc.strides) if rank else ()
        if any(size < 0 for size in shape) or any(
                want is not None and size != want
                for size, want in zip(shape, expected.shape)):
            raise RuntimeError(f"@{self.name} returned result {i} with sizes "
                               f"{shape}, which do not fit {expected.text}")
        return shape, strides

    def _copy_out(self, i: int, expected: TensorType, desc) -> np.ndarray:
        shape, strides = self._layout(i, expected, desc)
        # i1 is one byte a value; read the bytes, keep bit 0.
        dtype = np.dtype(np.uint8) if expected.element == "i1" \
            else expected.dtype
        out = np.empty(shape, dtype)
        if out.size:
            item = dtype.itemsize
            low = sum(min(0, (n - 1) * s) for n, s in zip(shape, strides))
            high = sum(max(0, (n - 1) * s) for n, s in zip(shape, strides))
            base = desc.aligned + (desc.offset + low) * item
            raw = (ctypes.c_char * ((high - low + 1) * item)).from_address(
                base)
            flat = np.frombuffer(raw, dtype=dtype)
            out[...] = np.lib.stride_tricks.as_strided(
                flat[-low:], shape, tuple(s * item for s in strides),
                writeable=False)
        if expected.element == "i1":
            out = (out & 1).astype(np.bool_)
        return out

    def __call__(self, *args):
        if len(args) != len(self.arguments):
            listed = ", ".join(t.text for t in self.arguments) or "none"
            raise TypeError(f"@{self.name} takes {len(self.arguments)} "
                            f"arguments ({listed}), got {len(args)}")
        if _arrays.any_foreign(*args):
            return self._call_dlpack(args)
        arguments = [_kernel_path.check_input(spec, value)
                     for spec, value in zip(self.specs, args)]
        returned = self._kernel.call(arguments)
        if self._kernel.restype is not None:
            return self._scalar_result(self.results[0], returned)
        if returned is None:
            return None
        if len(self.results) == 1:
            values = [returned]
        else:
            values = [getattr(returned, f"r{i}")
                      for i in range(len(self.results))]
        arguments = [a for a in arguments if isinstance(a, np.ndarray)]
        owners = {}
        try:
            outputs = tuple(
                self._result(i, t, v, arguments, owners)
                if isinstance(t, TensorType) else self._scalar_result(t, v)
                for i, (t, v) in enumerate(zip(self.results, values)))
        finally:
            self._free(values, arguments, adopted=owners)
        return outputs[0] if len(outputs) == 1 else outputs

    def _call_dlpack(self, args):
        """A call with DLPack arguments: each imported zero-copy (see
        _arrays); tensor results come back as the array type of the first
        array argument (numpy or DLPack)."""
        names = [spec.name for spec in self.specs]
        like = next(a for a in args if isinstance(a, np.ndarray) or
                    _arrays.is_foreign(a))
        outputs = self(*_arrays.import_all(names, args))
        if isinstance(outputs, tuple):
            return tuple(_arrays.wrap(o, like) for o in outputs)
        return _arrays.wrap(outputs, like)

    def _result(self, i: int, expected: TensorType, desc, arguments,
                owners) -> np.ndarray:
        """Result `i` as a numpy array: the code's own buffer, adopted without
        a copy when the caller owns it, it is contiguous and no other result
        of the call adopted it (the array frees it when it is collected),
        else a copy (module doc)."""
        pointer = self._owned_pointer(desc, arguments)
        if pointer is None or expected.element == "i1":
            return self._copy_out(i, expected, desc)
        shape, strides = self._layout(i, expected, desc)
        contiguous, step = True, 1
        for size, stride in zip(reversed(shape), reversed(strides)):
            if size != 1 and stride != step:
                contiguous = False
            step *= size
        count = int(np.prod(shape, dtype=np.int64)) if shape else 1
        if not contiguous or count == 0:
            return self._copy_out(i, expected, desc)
        if pointer in owners:
            # Another result of this call is that block already: copy, so
            # that no two returned arrays share memory.
            return self._copy_out(i, expected, desc)
        dtype = expected.dtype
        owner = owners[pointer] = _Allocation(pointer)
        raw = (ctypes.c_char * (count * dtype.itemsize)).from_address(
            desc.aligned + desc.offset * dtype.itemsize)
        raw._owner = owner  # freed when the last array over it goes
        return np.frombuffer(raw, dtype=dtype).reshape(shape)

    @staticmethod
    def _owned_pointer(desc, arguments):
        """The `allocated` pointer of a result buffer the caller owns (module
        doc), or None."""
        pointer = desc.allocated or 0
        if pointer in (0, _GLOBAL_MARKER):
            return None
        for a in arguments:
            if a.nbytes and a.ctypes.data <= pointer < a.ctypes.data + a.nbytes:
                return None
        return pointer

    @staticmethod
    def _scalar_result(expected: ScalarType, value):
        if expected.element == "i1":
            return np.bool_(int(value) & 1)
        return expected.dtype.type(value)

    def _free(self, values, arguments, adopted=()):
        """Frees each result buffer the caller owns, once (module doc), but
        not those adopted by a returned array (their owner frees them)."""
        spans = [(a.ctypes.data, a.ctypes.data + a.nbytes)
                 for a in arguments if a.nbytes]
        freed = set()
        for expected, desc in zip(self.results, values):
            if not isinstance(expected, TensorType):
                continue
            pointer = desc.allocated or 0
            if pointer in (0, _GLOBAL_MARKER) or pointer in freed or \
                    pointer in adopted:
                continue
            if any(start <= pointer < end for start, end in spans):
                continue
            freed.add(pointer)
            _libc.free(pointer)


class _Allocation:
    """A block the compiled code malloc'ed and returned, adopted by the numpy
    arrays over it: freed once, when the last of them is collected."""

    __slots__ = ("pointer",)

    def __init__(self, pointer: int):
        self.pointer = pointer

    def __del__(self):
        _libc.free(self.pointer)


class CompiledModule:
    """A JIT-compiled module (`rope_mlir.jit`). `functions` names its public
    functions; `function(name)` returns one as a callable. The compiled
    code lives as long as this object or any function taken from it."""

    def __init__(self, handle: _jit.JitModule, pipeline: str):
        self._handle = handle
        self.pipeline = pipeline
        self.functions = tuple(handle.function_names())
        self._cache: dict = {}
        self._lock = threading.Lock()

    def function(self, name: str) -> CompiledFunction:
        """The public function `name`: FunctionNotFoundError (a KeyError)
        listing the module's functions when there is none; TypeError when
        its signature has a type other than a ranked tensor or scalar of a
        supported element type; ValueError when the pipeline did not give it
        the expected C interface."""
        if not isinstance(name, str):
            raise TypeError(f"function name must be a str, got "
                            f"{type(name).__name__}")
        _jit.no_nul(name, "function name")
        with self._lock:
            if name not in self._cache:
                try:
                    signature = self._handle.function_type(name)
                except KeyError as error:
                    raise FunctionNotFoundError(error.args[0]) from None
                self._cache[name] = CompiledFunction(self, name, signature)
            return self._cache[name]

    def __repr__(self):
        names = ", ".join("@" + f for f in self.functions)
        return f"<CompiledModule ({names})>"


def jit(module_text: str, pipeline: Optional[str] = None, *,
        opt_level: int = 3, checked: bool = False) -> CompiledModule:
    """Parses, verifies, lowers and JIT-compiles `module_text` in process.

    `pipeline`: a pass pipeline string; None is `default_pipeline()`
    (`builtin.module(rope-optimize{share-key-rotation=true
    peel-key-tiles=true}, rope-to-llvm-cpu{emit-c-interface=true ...})`, or without rope-optimize
    where the library does not register it).
    A custom pipeline must bufferize function boundaries with identity
    layouts, deallocate with the ownership-based pipeline and emit C
    interfaces, as rope-to-llvm-cpu{emit-c-interface=true} does.
    Raises CompileError (a ValueError) with the diagnostics when parsing,
    verification, lowering or code generation fails.

    `checked=True` (default pipeline only) compiles runtime checks of what
    the verifiers cannot see with dynamic sizes: operand sizes that must
    agree (rope.apply's x, positions and out; linalg operands), positions
    inside the cos/sin cache, tensor indices and slices in bounds. A failed
    check raises `rope_mlir.CheckError` naming the check and the op's
    location, instead of reading or writing outside a buffer. Checked code
    runs on one thread (docs/RELIABILITY.md has its measured cost).

    Whatever the mode, an allocation the code cannot make (its size from an
    argument) raises MemoryError, and one whose byte size overflows is
    refused: at compile time when static, at the call when dynamic."""
    if not isinstance(module_text, str):
        raise TypeError(f"module_text must be a str of MLIR, got "
                        f"{type(module_text).__name__}")
    if pipeline is not None and not isinstance(pipeline, str):
        raise TypeError(f"pipeline must be a str or None, got "
                        f"{type(pipeline).__name__}")
    if isinstance(opt_level, _BOOLS) or not isinstance(opt_level, int):
        raise TypeError(f"opt_level must be an int, got {opt_level!r}")
    if not 0 <= opt_level <= 3:
        raise ValueError(f"opt_level must be an int in 0..3, got "
                         f"{opt_level!r}")
    if not isinstance(checked, _BOOLS):
        raise TypeError(f"checked must be a bool, got {checked!r}")
    if checked and pipeline is not None:
        raise ValueError("checked=True applies to the default pipeline; a "
                         "custom pipeline asks for the checks itself "
                         "(rope-to-llvm-cpu{checked=true runtime-traps=true "
                         "emit-c-interface=true})")
    chosen = pipeline if pipeline is not None else \
        _default_pipeline(bool(checked))
    handle = _jit.compile_module(module_text, chosen, opt_level,
                                 flags=_jit.READ_ONLY_ARGUMENTS)
    return CompiledModule(handle, chosen)
