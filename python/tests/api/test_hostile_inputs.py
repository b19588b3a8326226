# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Hostile and careless callers of the Python API (issue 32): one test per
finding, each named after it. Every call here must either raise a clean
exception naming the argument (before anything is written) or return the
right result; none may hang, read foreign memory or write an input."""

import ctypes
import subprocess
import sys
import textwrap

import ml_dtypes
import numpy as np
import pytest

import rope_mlir
from rope_mlir import _arrays, _jit, reference
from rope_mlir import kernel as K

BF16 = np.dtype(ml_dtypes.bfloat16)


def _aliased(first_dtype, first_count, second_dtype, second_count, shift=0):
    """Two arrays over one base buffer, the second starting `shift` bytes
    into the first (so they overlap when shift < first's bytes)."""
    a_bytes = np.dtype(first_dtype).itemsize * first_count
    b_bytes = np.dtype(second_dtype).itemsize * second_count
    base = np.zeros(max(a_bytes, shift + b_bytes) + 64, np.uint8)
    return (base[:a_bytes].view(first_dtype),
            base[shift:shift + b_bytes].view(second_dtype))


# -- 3: a DLPack capsule that says CUDA under a producer that says CPU -----

class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _arrays._DLTensor),
                ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


class _LyingProducer:
    """__dlpack_device__ says CPU; the capsule's own DLTensor says CUDA
    (device type 2) and holds a bf16 tensor."""

    def __init__(self, device_type):
        self.host = np.arange(8, dtype=np.float32).astype(BF16)  # real memory
        self.shape = (ctypes.c_int64 * 2)(2, 4)
        self.managed = _DLManagedTensor()
        t = self.managed.dl_tensor
        t.data = self.host.ctypes.data
        t.device.device_type = device_type
        t.device.device_id = 0
        t.ndim = 2
        t.dtype.code, t.dtype.bits, t.dtype.lanes = 4, 16, 1
        t.shape = self.shape
        t.byte_offset = 0

    def __dlpack_device__(self):
        return (1, 0)

    def __dlpack__(self, *args, **kwargs):
        if kwargs.get("max_version") is not None:
            raise TypeError("legacy producer")
        new = ctypes.pythonapi.PyCapsule_New
        new.restype = ctypes.py_object
        new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        return new(ctypes.addressof(self.managed), b"dltensor", None)


def test_3_dlpack_capsule_device_is_checked():
    lying = _LyingProducer(device_type=2)  # kDLCUDA
    with pytest.raises((ValueError, TypeError), match=r"\bx\b.*CUDA"):
        rope_mlir.apply(lying)
    with pytest.raises((ValueError, TypeError), match="CUDA"):
        _arrays.to_numpy(_LyingProducer(device_type=2), "x")
    # The same producer with a CPU capsule is read.
    honest = _LyingProducer(device_type=1)
    assert _arrays.to_numpy(honest, "x").shape == (2, 4)


# -- 4: empty inputs return at once ----------------------------------------

_EMPTY_SCRIPT = textwrap.dedent("""
    import numpy as np, rope_mlir
    from rope_mlir import KernelConfig, compile_append
    big = 2 ** 40
    x = np.zeros((big, 0, 4), np.float32)
    assert rope_mlir.apply(x).shape == x.shape
    assert rope_mlir.apply(x, offset=5).shape == x.shape
    out = np.zeros((big, 0, 4), np.float32)
    assert rope_mlir.apply(x, out=out) is out
    assert rope_mlir.apply(x, out=x) is x
    kern = rope_mlir.compile(dtype="f32", rank=3, head_dim=4)
    assert kern(x).shape == x.shape
    assert kern(x, out=out) is out
    q, k = rope_mlir.apply_qk(x, np.zeros((big, 0, 4), np.float32))
    assert q.shape == k.shape == x.shape
    x4 = np.zeros((3, big, 0, 4), np.float32)
    assert rope_mlir.apply(x4, offset=np.zeros(3, np.int64)).shape == x4.shape
    kv = np.zeros((1, 0, 2, 4), np.float32)
    cache = np.zeros((1, 8, 2, 4), np.float32)
    before = cache.copy()
    assert rope_mlir.append_kv(kv, kv, cache, cache.copy(),
                               np.zeros((1, 0), np.int64)) is None
    assert (cache == before).all()
    from rope_mlir.mla import apply_mla
    res = apply_mla(np.zeros((0, 2, 8), np.float32),
                    np.zeros((0, 4), np.float32),
                    np.zeros((0, 8), np.float32),
                    np.zeros((4, 12), np.float32),
                    np.zeros(0, np.int64), slots=np.zeros(0, np.int64),
                    rope_dim=8)
    assert res.shape == (0, 2, 8)
    print("ok")
""")


def test_4_empty_inputs_return_at_once():
    done = subprocess.run([sys.executable, "-c", _EMPTY_SCRIPT],
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "ok"


def test_4_empty_input_skips_the_fast_path_kernel():
    # The plan defers an empty call to Python (which does not run the
    # kernel); a tiny token loop of 2^40 would otherwise hang.
    kern = rope_mlir.compile(dtype="f32", rank=3, head_dim=4)
    if kern._plan is not None:
        x = np.zeros((2 ** 40, 0, 4), np.float32)
        assert kern._plan(x, None, 0, None, None,
                          np.zeros((2 ** 40, 0, 4), np.float32)) is None


# -- 5, 6: apply_mla's out against every input, before any write -----------

def _mla_args(tokens=4, heads=2, lora=8, rope=8, rows=16):
    rng = np.random.default_rng(5)
    q = rng.standard_normal((tokens, heads, 4 + rope)).astype(np.float32)
    c_kv = rng.standard_normal((tokens, lora)).astype(np.float32)
    k_pe = rng.standard_normal((tokens, rope)).astype(np.float32)
    cache = np.zeros((rows, lora + rope), np.float32)
    positions = np.arange(tokens, dtype=np.int64)
    return q, c_kv, k_pe, cache, positions


def test_5_mla_out_overlapping_slots_is_refused_before_writing():
    from rope_mlir.mla import apply_mla
    q, c_kv, k_pe, cache, positions = _mla_args()
    out, slots = _aliased(np.float32, q.size, np.int64, 4)
    out = out.reshape(q.shape)
    slots[:] = [0, 3, 5, 6]
    slots_before = slots.copy()
    with pytest.raises(ValueError, match=r"out.*slots|slots.*out"):
        apply_mla(q, c_kv, k_pe, cache, positions, slots=slots, out=out,
                  rope_dim=8)
    assert (slots == slots_before).all()
    assert not cache.any()


def test_6_mla_out_overlapping_c_kv_or_cache_writes_nothing():
    from rope_mlir.mla import apply_mla
    q, _, k_pe, cache, positions = _mla_args()
    out, c_kv = _aliased(np.float32, q.size, np.float32, 4 * 8, shift=16)
    out = out.reshape(q.shape)
    c_kv = c_kv.reshape(4, 8)
    c_kv[:] = np.arange(32, dtype=np.float32).reshape(4, 8)
    c_kv_before = c_kv.copy()
    with pytest.raises(ValueError, match=r"out.*c_kv|c_kv.*out"):
        apply_mla(q, c_kv, k_pe, cache, positions,
                  slots=np.arange(4, dtype=np.int64), out=out, rope_dim=8)
    assert (c_kv == c_kv_before).all()
    assert not cache.any()
    # out overlapping the cache: refused, and the cache not written.
    q, c_kv, k_pe, _, positions = _mla_args()
    base = np.zeros(q.size + 16 * 16, np.float32)
    cache = base[q.size - 8:q.size - 8 + 16 * 16].reshape(16, 16)
    out = base[:q.size].reshape(q.shape)
    with pytest.raises(ValueError, match="overlaps"):
        apply_mla(q, c_kv, k_pe, cache, positions,
                  slots=np.arange(4, dtype=np.int64), out=out, rope_dim=8)
    assert not base.any()


# -- 7: apply's out against every input (Python and the C++ fast path) -----

def test_7_apply_out_overlapping_positions_or_cache_is_refused():
    x = np.random.default_rng(7).standard_normal((4, 2, 8)).astype(np.float32)
    out, positions = _aliased(np.float32, x.size, np.int64, 4, shift=8)
    out = out.reshape(x.shape)
    positions[:] = [0, 1, 2, 3]
    with pytest.raises(ValueError, match=r"out overlaps positions"):
        rope_mlir.apply(x, positions, out=out)
    kern = rope_mlir.compile(dtype="f32", rank=3, head_dim=8,
                             positions="explicit")
    with pytest.raises(ValueError, match=r"out overlaps positions"):
        kern(x, positions, out=out)
    if kern._plan is not None:  # the fast path defers (None)
        assert kern._plan(x, positions, 0, None, None, out) is None
    assert (positions == [0, 1, 2, 3]).all()
    # out over the gathered cos/sin cache.
    angles = np.arange(8)[:, None] * np.ones(4)
    base = np.zeros(x.size + 64, np.float32)
    cos = base[:32].reshape(8, 4)
    cos[:] = np.cos(angles)
    sin = np.sin(angles).astype(np.float32)
    out = base[16:16 + x.size].reshape(x.shape)
    pos = np.arange(4, dtype=np.int64)
    with pytest.raises(ValueError, match=r"out overlaps cos_cache"):
        rope_mlir.apply(x, pos, cos_cache=cos, sin_cache=sin, out=out)
    kern = rope_mlir.compile(dtype="f32", rank=3, head_dim=8,
                             positions="explicit", cache="gathered")
    with pytest.raises(ValueError, match=r"out overlaps cos_cache"):
        kern(x, pos, cos_cache=cos, sin_cache=sin, out=out)
    if kern._plan is not None:
        assert kern._plan(x, pos, 0, cos, sin, out) is None
    # Row offsets under the destination, and x rotated in place over them.
    x4 = np.ones((2, 3, 2, 8), np.float32)
    dest, offsets = _aliased(np.float32, x4.size, np.int64, 2, shift=0)
    dest = dest.reshape(x4.shape)
    with pytest.raises(ValueError, match=r"out overlaps offset"):
        rope_mlir.apply(x4, offset=offsets, out=dest)
    # apply_qk: out_q over the positions, out_k over the caches.
    k = x.copy()
    out_q, positions = _aliased(np.float32, x.size, np.int64, 4, shift=8)
    with pytest.raises(ValueError, match=r"out_q overlaps positions"):
        rope_mlir.apply_qk(x, k, positions, out_q=out_q.reshape(x.shape))
    with pytest.raises(ValueError, match=r"out_k overlaps cos_cache"):
        rope_mlir.apply_qk(x, k, pos, cos_cache=cos, sin_cache=sin,
                           out_k=base[16:16 + x.size].reshape(x.shape))


# -- 8: AppendKernel's read-only inputs against the caches ------------------

def test_8_append_row_offsets_overlapping_the_cache_are_refused():
    kern = rope_mlir.compile_append(dtype="f32", rank=4, head_dim=8,
                                    positions="row_offset", slots=True)
    k = np.ones((2, 3, 2, 8), np.float32)
    base = np.zeros(2 * 8 * 2 * 8, np.float32)
    k_cache = base.reshape(2, 8, 2, 8)
    offsets = base[:4].view(np.int64)  # the first two cache floats x2
    offsets[:] = [0, 0]
    slots = np.arange(6, dtype=np.int64).reshape(2, 3)
    with pytest.raises(ValueError, match=r"k_cache overlaps offset"):
        kern(k, slots, k_cache, offset=offsets)
    assert not base.any()


# -- 9: attribute text is parsed and re-printed, never pasted ---------------

def test_9_attribute_injection_is_refused():
    if not hasattr(_jit, "canonical_attribute"):
        pytest.skip("rope_mlir._jit.canonical_attribute is not there yet")
    with pytest.raises(ValueError, match="freqs"):
        K.KernelConfig(dtype="f32", rank=2, head_dim=4,
                       freqs="#rope.default<base = 10000.0>, "
                             "token_dims = array<i64: 1>")


# -- 11: offset + token index overflowing int64 -----------------------------

def test_11_offset_overflow_is_refused():
    x = np.ones((2, 1, 4), np.float32)
    top = 2 ** 63 - 1
    with pytest.raises(ValueError, match="offset"):
        rope_mlir.apply(x, offset=top)
    kern = rope_mlir.compile(dtype="f32", rank=3, head_dim=4)
    with pytest.raises(ValueError, match="offset"):
        kern(x, offset=top)
    if kern._plan is not None:
        assert kern._plan(x, None, top, None, None,
                          np.empty_like(x)) is None
    # One token at the top is fine (position 2^63 - 1).
    one = np.ones((1, 1, 4), np.float32)
    assert np.isfinite(rope_mlir.apply(one, offset=top)).all()
    x4 = np.ones((2, 3, 1, 4), np.float32)
    with pytest.raises(ValueError, match="offset"):
        rope_mlir.apply(x4, offset=np.array([0, top - 1], np.int64))
    with pytest.raises(ValueError, match="offset"):
        rope_mlir.apply_qk(x, x.copy(), offset=top)
    rows = rope_mlir.compile(dtype="f32", rank=4, head_dim=4,
                             positions="row_offset")
    with pytest.raises(ValueError, match="offset"):
        rows(x4, offset=np.array([0, top - 1], np.int64))
    from rope_mlir import attention
    c = attention.ScoresConfig(batch=1, q_heads=1, kv_heads=1, q_len=2,
                               kv_len=2, head_dim=4)
    scores = attention.ScoresKernel(c, fuse=False)
    q = np.ones(c.q_shape(), np.float32)
    kk = np.ones(c.k_shape(), np.float32)
    with pytest.raises(ValueError, match="offsets"):
        scores(q, kk, np.array([top], np.int64))


# -- 12: paged caches of page size 0 ----------------------------------------

def test_12_page_size_zero_is_a_value_error():
    k = np.ones((2, 2, 4), np.float32)
    cache = np.zeros((4, 0, 2, 4), np.float32)
    with pytest.raises(ValueError, match="page_size"):
        rope_mlir.append_kv(k, k.copy(), cache, cache.copy(),
                            np.arange(2, dtype=np.int64),
                            cache_layout="paged",
                            block_table=np.zeros((1, 2), np.int64))
    from rope_mlir.mla import apply_mla
    q, c_kv, k_pe, _, positions = _mla_args()
    with pytest.raises(ValueError, match="page_size"):
        apply_mla(q, c_kv, k_pe, np.zeros((4, 0, 16), np.float32),
                  positions, block_table=np.zeros((4, 1), np.int64),
                  rope_dim=8)


# -- 13: a file that is not ONNX --------------------------------------------

def test_13_import_model_of_a_non_onnx_file(tmp_path):
    from rope_mlir import onnx as rope_onnx
    path = tmp_path / "not_a_model.onnx"
    path.write_bytes(b"\xff\xff\xff\xff not a protobuf \x00\x01")
    with pytest.raises(ValueError, match="not_a_model.onnx"):
        rope_onnx.import_model(str(path))
    with pytest.raises(ValueError, match="not_a_model.onnx"):
        rope_onnx.run(str(path), {})


# -- found by the property fuzzer -------------------------------------------

def test_fuzz_empty_misaligned_out_is_not_an_error():
    # numpy calls an empty array aligned whatever its address; the memref
    # descriptor of one at an odd address was refused with a message that
    # named no argument. Nothing is read there: the call returns.
    x = np.zeros((3, 0, 4), np.float64)
    out = np.ndarray((3, 0, 4), np.float64, buffer=np.zeros(64, np.uint8),
                     offset=3)
    assert out.ctypes.data % 8
    assert rope_mlir.apply(x, np.zeros(3, np.uint16), out=out) is out


def test_fuzz_messages_name_the_argument():
    with pytest.raises(TypeError, match=r"^x has the unsupported data type"):
        rope_mlir.apply(np.zeros((2, 4), np.int32))
    with pytest.raises(TypeError, match=r"^q has the unsupported data type"):
        rope_mlir.apply_qk(np.zeros((2, 1, 4), np.int32),
                           np.zeros((2, 1, 4), np.int32))
    k = np.zeros((1, 2, 1, 4), np.int32)
    with pytest.raises(TypeError, match=r"^k has the unsupported data type"):
        rope_mlir.append_kv(k, k, k.copy(), k.copy(),
                            np.array([[0, 1]], np.int64))
    from rope_mlir.mla import apply_mla
    q, c_kv, k_pe, cache, positions = _mla_args()
    with pytest.raises(ValueError, match=r"cache row 3 \(slots\)"):
        apply_mla(q, c_kv, k_pe, cache, positions,
                  slots=np.array([3, 3, 1, 2]), rope_dim=8)
    q = np.ones((2, 1, 8), np.float32)
    qs = np.zeros((4, 1, 8), np.float32)[::2]  # in place needs contiguous
    with pytest.raises(ValueError, match=r"^q must be C-contiguous"):
        rope_mlir.apply_qk(qs, q, np.arange(2), out_q=qs, out_k=q)
