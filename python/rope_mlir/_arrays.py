# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""DLPack in, same framework out.

`rope_mlir.apply`, `Kernel` calls and `jit` functions take numpy arrays and
any other object with `__dlpack__`/`__dlpack_device__` (torch, JAX, CuPy
host arrays, ...). A DLPack argument must live on the CPU (kDLCPU), be
C-contiguous (no copy is made behind the caller's back: a strided view is
refused, saying a copy is needed) and have a dtype the kernel takes; it is
imported zero-copy as a numpy view of the producer's memory, so `out=` (and
`out=x`, in place) is written through to the caller's buffer. bfloat16,
which numpy's importer refuses, is imported from the DLPack capsule
directly as `ml_dtypes.bfloat16`.

Results come back as the caller's array type, that of `x` (the first array
argument of a `jit` function): torch tensors for torch, JAX arrays for JAX,
numpy arrays for numpy and for any other producer. An `out=` argument is
returned as the object the caller passed.
"""

from __future__ import annotations

import ctypes
import sys

import ml_dtypes
import numpy as np

_ndarray = np.ndarray
#: Outputs from this size on are allocated 64-byte aligned (empty()).
_ALIGNED_FROM_BYTES = 1 << 20
_BF16 = np.dtype(ml_dtypes.bfloat16)
_KDLCPU = 1
_DEVICES = {1: "CPU", 2: "CUDA", 3: "CUDA host", 4: "OpenCL", 7: "Vulkan",
            8: "Metal", 9: "VPI", 10: "ROCm", 11: "ROCm host", 13: "CUDA "
            "managed", 14: "oneAPI"}
_DTYPE_CODES = {0: "int", 1: "uint", 2: "float", 3: "opaque handle",
                4: "bfloat", 5: "complex", 6: "bool"}


def is_foreign(value) -> bool:
    """True for a DLPack producer that is not a numpy array."""
    return (value.__class__ is not _ndarray and
            hasattr(value, "__dlpack__") and
            not isinstance(value, _ndarray))


def any_foreign(*values) -> bool:
    for value in values:
        if value is not None and value.__class__ is not _ndarray and \
                hasattr(value, "__dlpack__") and \
                not isinstance(value, _ndarray):
            return True
    return False


# -- import -----------------------------------------------------------------

class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice),
                ("ndim", ctypes.c_int32), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32),
                ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64),
                ("dl_tensor", _DLTensor)]


_capsule_is_valid = ctypes.pythonapi.PyCapsule_IsValid
_capsule_is_valid.restype = ctypes.c_int
_capsule_is_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


class _Capsule:
    """Exposes an unconsumed DLPack capsule's tensor to numpy; the array keeps this object, hence the capsule (whose
    destructor releases the producer's tensor) and the producer alive."""

    def __init__(self, interface, capsule, owner):
        self.__array_interface__ = interface
        self.capsule = capsule
        self.owner = owner


def _dtype_text(dtype: _DLDataType) -> str:
    text = f"{_DTYPE_CODES.get(dtype.code, f'code {dtype.code}')}{dtype.bits}"
    return text + (f"x{dtype.lanes}" if dtype.lanes != 1 else "")


def _from_capsule(value, name: str) -> np.ndarray:
    """A bfloat16 tensor (numpy's importer has no bfloat16) read from the
    capsule; any other dtype numpy refused is a TypeError."""
    # A versioned capsule says whether the memory is read-only (JAX's is);
    # a legacy one does not, so its memory is taken as read-only.
    try:
        try:
            capsule = value.__dlpack__(max_version=(1, 0))
        except TypeError:
            capsule = value.__dlpack__()
    except (BufferError, RuntimeError, TypeError, ValueError) as error:
        raise TypeError(f"{name} ({type(value).__name__}) cannot be "
                        f"exported through DLPack: {error}") from None
    if _capsule_is_valid(capsule, b"dltensor_versioned"):
        managed = _DLManagedTensorVersioned.from_address(
            _capsule_pointer(capsule, b"dltensor_versioned"))
        if managed.major != 1:
            raise TypeError(f"{name} is a DLPack {managed.major}."
                            f"{managed.minor} tensor; rope_mlir reads 1.x")
        tensor = managed.dl_tensor
        readonly = bool(managed.flags & 1)
    else:
        tensor = _DLTensor.from_address(
            _capsule_pointer(capsule, b"dltensor"))
        readonly = True
    # The capsule's own device, not only __dlpack_device__'s word: a
    # device pointer read as host memory would be a wild read.
    kind = int(tensor.device.device_type)
    if kind != _KDLCPU:
        raise ValueError(
            f"{name}: its DLPack capsule holds a tensor on the device "
            f"{_DEVICES.get(kind, kind)} (device type {kind}, id "
            f"{int(tensor.device.device_id)}) although __dlpack_device__ "
            f"says CPU; rope_mlir reads CPU memory only")
    dtype = tensor.dtype
    if (dtype.code, dtype.bits, dtype.lanes) != (4, 16, 1):
        raise TypeError(f"{name} has the DLPack dtype {_dtype_text(dtype)}, "
                        f"which rope_mlir does not take (f16, bf16, f32, "
                        f"f64 and integer arrays)")
    ndim = tensor.ndim
    shape = tuple(tensor.shape[i] for i in range(ndim))
    strides = None
    if tensor.strides and ndim:
        strides = tuple(tensor.strides[i] * 2 for i in range(ndim))
    interface = dict(version=3, typestr="<u2", shape=shape, strides=strides,
                     data=((tensor.data or 0) + tensor.byte_offset,
                           readonly))
    return np.asarray(_Capsule(interface, capsule, value)).view(_BF16)


def to_numpy(value, name: str) -> np.ndarray:
    """The numpy view (zero-copy) of the DLPack argument `name`."""
    try:
        device = value.__dlpack_device__()
    except AttributeError:
        raise TypeError(f"{name} ({type(value).__name__}) has __dlpack__ but "
                        f"no __dlpack_device__") from None
    kind = int(device[0])
    if kind != _KDLCPU:
        raise ValueError(
            f"{name} is on the DLPack device {_DEVICES.get(kind, kind)} "
            f"(device type {kind}, id {int(device[1])}); rope_mlir runs on "
            f"the CPU: move it there first (e.g. tensor.cpu())")
    try:
        array = np.from_dlpack(value)
    except (BufferError, RuntimeError, TypeError):
        array = _from_capsule(value, name)
    flags = array.flags
    if not (flags.c_contiguous and flags.aligned):
        raise ValueError(
            f"{name} is a non-contiguous view (shape {array.shape}, byte "
            f"strides {array.strides}): the kernel needs C-contiguous memory "
            f"and a DLPack argument is used in place, never copied; pass a "
            f"contiguous copy (e.g. tensor.contiguous())")
    return array


def import_all(names, values) -> list:
    """`values` with each DLPack producer replaced by its numpy view; one
    object passed twice (out=x) becomes one array, so identity holds."""
    seen = {}
    result = []
    for name, value in zip(names, values):
        if value is not None and is_foreign(value):
            key = id(value)
            if key not in seen:
                seen[key] = to_numpy(value, name)
            value = seen[key]
        result.append(value)
    return result


# -- export -----------------------------------------------------------------

_wrappers = {}  # type -> a function turning a numpy array into that type


def _torch_wrapper():
    torch = sys.modules["torch"]

    def wrap(array):
        if array.dtype == _BF16:
            return torch.from_dlpack(array.view(np.uint16)).view(
                torch.bfloat16)
        return torch.from_dlpack(array)
    return wrap


def _jax_wrapper():
    import jax.numpy as jnp

    def wrap(array):
        if array.dtype == _BF16:
            return jnp.from_dlpack(array.view(np.uint16)).view(jnp.bfloat16)
        return jnp.from_dlpack(array)
    return wrap


def wrapper(kind: type):
    """How a result is returned to a caller whose array has type `kind`
    (None: as the numpy array). Cached by type."""
    try:
        return _wrappers[kind]
    except KeyError:
        pass
    root = (kind.__module__ or "").partition(".")[0]
    if root == "torch" and "torch" in sys.modules:
        wrap = _torch_wrapper()
    elif root in ("jax", "jaxlib"):
        wrap = _jax_wrapper()
    else:
        wrap = None
    _wrappers[kind] = wrap
    return wrap


def wrap(result, like):
    """`result` (a numpy array) as the array type of `like`."""
    if like is None or not isinstance(result, _ndarray) or \
            not is_foreign(like):
        return result
    convert = wrapper(type(like))
    return result if convert is None else convert(result)


def empty(shape, dtype) -> np.ndarray:
    """np.empty(shape, dtype), but starting on a 64-byte boundary when it is
    1 MiB or more. numpy's large arrays come from mmap and start 16 bytes
    into a page, so every 64-byte vector store of a kernel writing them
    splits two cache lines; on Intel Sapphire Rapids that made a rotation
    into such an output ~1.2x slower than into an aligned one (torch's and
    JAX's allocators align to 64 bytes already). Small outputs stay plain
    np.empty: they live in the caches, and the call costs less."""
    dtype = np.dtype(dtype)
    nbytes = dtype.itemsize
    for size in shape:
        nbytes *= size
    if nbytes < _ALIGNED_FROM_BYTES:
        return np.empty(shape, dtype)
    raw = np.empty(nbytes + 64, np.uint8)
    start = -raw.ctypes.data % 64
    return raw[start:start + nbytes].view(dtype).reshape(shape)
