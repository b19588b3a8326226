# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The cheap call of cache appends and MLA (issue 18's follow-up).

AppendKernel (and MLAKernel) pass their checked arrays to the C++
extension's `run` (lib/Runtime/KernelCall.cpp), which builds the memref
descriptors on the stack, instead of building ctypes descriptors in
Python. Both ways must compute the same bytes, the fast way must really be
taken for ordinary numpy arguments (else the speed is lost without a
failing test), and `run` must refuse (answer False, run nothing) anything
it cannot describe, so that the ctypes path takes it."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import rope_mlir
from rope_mlir import _jit, cache as cache_mod

FAST = _jit.kernel_call_module()
needs_fast = pytest.mark.skipif(FAST is None,
                                reason="built without the _kernel_call "
                                "extension")


class _Spy:
    """Stands for the extension module in a kernel: records run()'s answers."""

    def __init__(self, module):
        self.module = module
        self.answers = []

    def run(self, *args):
        answer = self.module.run(*args)
        self.answers.append(answer)
        return answer


def _case(form, dtype, rng):
    """(kwargs of append_kv) for a small case of `form`."""
    d, hkv, hq = 16, 2, 4
    if form in ("bshd", "bhsd"):
        b, s, max_len = 3, 2, 8
        kshape = (b, s, hkv, d) if form == "bshd" else (b, hkv, s, d)
        cshape = ((b, max_len, hkv, d) if form == "bshd" else
                  (b, hkv, max_len, d))
        pos = np.stack([rng.permutation(max_len)[:s] for _ in range(b)])
        extra = {}
        q = None
    else:
        t, pages, page = 5, 6, 4
        kshape, cshape = (t, hkv, d), (pages, page, hkv, d)
        table = rng.permutation(pages)[:4].reshape(2, 2)
        pos = np.array([0, 5, 1, 7, 2])
        extra = dict(block_table=table,
                     batch_indices=np.array([0, 0, 1, 1, 0]))
        q = rng.standard_normal((t, hq, d)).astype(dtype)
    k = rng.standard_normal(kshape).astype(dtype)
    v = rng.standard_normal(kshape).astype(dtype)
    kc = rng.standard_normal(cshape).astype(dtype)
    vc = rng.standard_normal(cshape).astype(dtype)
    return dict(k=k, v=v, k_cache=kc, v_cache=vc, positions=pos,
                cache_layout="paged" if form == "paged+q" else form, q=q,
                **extra)


def _run(case, monkeypatch, fast):
    """append_kv on fresh copies of the case's caches, with the kernels'
    extension replaced by `fast` (None: the ctypes path)."""
    case = dict(case, k_cache=case["k_cache"].copy(),
                v_cache=case["v_cache"].copy())
    seen = []
    original = cache_mod.AppendKernel.__call__

    def call(self, *args, **kwargs):
        monkeypatch.setattr(self, "_fast", fast)
        seen.append(self)
        return original(self, *args, **kwargs)

    with monkeypatch.context() as m:
        m.setattr(cache_mod.AppendKernel, "__call__", call)
        q = rope_mlir.append_kv(**case)
    assert seen
    return case["k_cache"], case["v_cache"], q


@needs_fast
@pytest.mark.parametrize("form", ["bshd", "bhsd", "paged+q"])
@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16])
def test_fast_call_matches_ctypes_call(form, dtype, monkeypatch):
    case = _case(form, dtype, np.random.default_rng(7))
    spy = _Spy(FAST)
    fast = _run(case, monkeypatch, spy)
    assert spy.answers == [True]  # taken, once
    slow = _run(case, monkeypatch, None)
    for a, b in zip(fast, slow):
        if a is None:
            assert b is None
            continue
        assert a.tobytes() == b.tobytes()
    # and the result is the append's: the written rows rotated, v copied
    if form == "bshd":
        rot = rope_mlir.apply(case["k"], case["positions"])
        for b in range(case["k"].shape[0]):
            for s, p in enumerate(case["positions"][b]):
                assert fast[0][b, p].tobytes() == rot[b, s].tobytes()
                assert fast[1][b, p].tobytes() == case["v"][b, s].tobytes()


@needs_fast
def test_fast_call_with_norm_and_quant(monkeypatch):
    rng = np.random.default_rng(3)
    case = _case("paged+q", np.float32, rng)
    case["k_cache"] = np.zeros(case["k_cache"].shape, ml_dtypes.float8_e4m3fn)
    case["v_cache"] = np.zeros(case["v_cache"].shape, ml_dtypes.float8_e4m3fn)
    case.update(k_norm_weight=rng.standard_normal(16).astype(np.float32),
                q_norm_weight=rng.standard_normal(16).astype(np.float32),
                k_scale=np.float32(2.0), v_scale=np.float32(0.5))
    spy = _Spy(FAST)
    fast = _run(case, monkeypatch, spy)
    assert spy.answers == [True]
    slow = _run(case, monkeypatch, None)
    for a, b in zip(fast, slow):
        assert a.tobytes() == b.tobytes()
    assert fast[0].view(np.uint8).any() and fast[1].view(np.uint8).any()


class _Sub(np.ndarray):
    pass


def _copy_kernel():
    """A compiled append (K only, f32) and valid ctypes-free arguments:
    (kernel, [k, positions, slots, k_cache])."""
    kernel = rope_mlir.compile_append(dtype="f32", rank=3, head_dim=8,
                                      positions="explicit", slots=True,
                                      slots_dtype="i64")
    k = np.ones((2, 1, 8), np.float32)
    pos = np.zeros(2, np.int64)
    slots = np.array([0, 3], np.int64)
    cache = np.zeros((4, 1, 8), np.float32)
    return kernel, [k, pos, slots, cache]


@needs_fast
def test_run_takes_checked_arrays():
    kernel, args = _copy_kernel()
    assert FAST.run(kernel._address, np.ndarray, tuple(args)) is True
    cache = args[3]
    assert cache[0].tobytes() == cache[3].tobytes() and cache[0].any()
    assert not cache[1:3].any()


@needs_fast
@pytest.mark.parametrize("bad", [
    "strided", "misaligned", "subclass", "float", "list", "too_many",
    "none_at_all", "huge_int"])
def test_run_refuses_what_it_cannot_describe(bad):
    kernel, args = _copy_kernel()
    cache = args[3]
    if bad == "strided":
        args[0] = np.ones((2, 1, 16), np.float32)[:, :, ::2]
    elif bad == "misaligned":
        raw = np.zeros(2 * 8 * 4 + 1, np.uint8)[1:]
        args[0] = raw.view(np.float32).reshape(2, 1, 8)
    elif bad == "subclass":
        args[0] = args[0].view(_Sub)
    elif bad == "float":
        args[1] = 1.5
    elif bad == "list":
        args[1] = [0, 0]
    elif bad == "too_many":
        args = args + [0] * 13
    elif bad == "none_at_all":
        args = []
    elif bad == "huge_int":
        args[1] = 1 << 70
    assert FAST.run(kernel._address, np.ndarray, tuple(args)) is False
    assert not cache.any()  # nothing ran


def test_ctypes_path_without_extension(monkeypatch):
    """ROPE_MLIR_FAST_CALL=0 (no extension): the same bytes through
    ctypes descriptors."""
    case = _case("bshd", np.float32, np.random.default_rng(11))
    slow = _run(case, monkeypatch, None)
    rot = rope_mlir.apply(case["k"], case["positions"])
    for b in range(case["k"].shape[0]):
        for s, p in enumerate(case["positions"][b]):
            assert slow[0][b, p].tobytes() == rot[b, s].tobytes()


def test_tokens_resolve_to_their_arrays():
    import ctypes
    keep = []
    a, b = np.zeros(3), np.ones(2)
    args = [ctypes.addressof(cache_mod._defer(keep, a)), 7,
            ctypes.addressof(cache_mod._defer(keep, b))]
    resolved = cache_mod._resolve(args, keep)
    assert [x is y for x, y in zip(resolved, [a, 7, b])] == [True] * 3
    # a scalar offset equal to a token's address stays a value
    token = args[0]
    assert cache_mod._resolve([args[0], token], keep, skip=1)[1] == token



@needs_fast
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("size", [1, 7, 600])
def test_int_range_is_min_max(dtype, size):
    rng = np.random.default_rng(size)
    a = rng.integers(-1000, 1000, size).astype(dtype)
    assert FAST.int_range(np.ndarray, a) == (int(a.min()), int(a.max()))
    assert cache_mod._range(a) == (int(a.min()), int(a.max()))


@needs_fast
@pytest.mark.parametrize("a", [np.zeros(0, np.int64), np.ones(3),
                               np.ones(3, np.uint64), np.arange(8)[::2],
                               np.arange(4).view(_Sub)])
def test_int_range_leaves_other_arrays_to_numpy(a):
    assert FAST.int_range(np.ndarray, a) is None
    if a.size:
        assert cache_mod._range(a) == (a.min(), a.max())


def _numpy_duplicate(s):
    valid = np.sort(s[s >= 0])
    same = valid[1:] == valid[:-1]
    return int(valid[1:][same][0]) if same.any() else None


@needs_fast
@pytest.mark.parametrize("size", [0, 1, 2, 64, 511, 512, 513, 5000])
def test_first_duplicate_is_numpy_s(size):
    rng = np.random.default_rng(size)
    for trial in range(20):
        s = rng.integers(-1, 2 * size + 1, size).astype(np.int64)
        if trial % 2:  # mostly unique
            s = rng.permutation(4 * size + 2)[:size].astype(np.int64) - 1
        assert FAST.first_duplicate(np.ndarray, s) == _numpy_duplicate(s)
    assert FAST.first_duplicate(np.ndarray, np.full(3, -1)) is None
    assert FAST.first_duplicate(np.ndarray,
                                np.arange(4, dtype=np.int32)) is \
        NotImplemented


ERRORS = [
    # (form, change, error)
    ("bshd", dict(positions=np.array([[0, 0], [1, 8], [2, 3]])), IndexError),
    ("bshd", dict(positions=np.array([[0, -1], [1, 2], [2, 3]])), IndexError),
    ("bshd", dict(positions=np.array([[4, 4], [1, 2], [2, 3]])), ValueError),
    ("paged+q", dict(positions=np.array([0, 5, 1, 5, 0])), ValueError),
    ("paged+q", dict(positions=np.array([0, 5, 1, 9, 2])), IndexError),
    ("paged+q", dict(batch_indices=np.array([0, 0, 1, 2, 0])), IndexError),
    ("paged+q", dict(block_table=np.array([[0, 1], [2, 6]])), IndexError),
]


@pytest.mark.parametrize("form, change, error", ERRORS)
def test_errors_the_same_with_and_without_extension(form, change, error,
                                                    monkeypatch):
    case = _case(form, np.float32, np.random.default_rng(2))
    case.update(change)
    messages = []
    for fast in (True, False):
        kc, vc = case["k_cache"].copy(), case["v_cache"].copy()
        with monkeypatch.context() as m:
            if not fast:
                m.setattr(_jit, "kernel_call_module", lambda: None)
            with pytest.raises(error) as info:
                rope_mlir.append_kv(**dict(case, k_cache=kc, v_cache=vc))
        messages.append(str(info.value))
        assert kc.tobytes() == case["k_cache"].tobytes()  # nothing written
    assert messages[0] == messages[1]


def _mla_case(rng):
    t, pages, page = 4, 5, 4
    return dict(q=rng.standard_normal((t, 2, 24)).astype(np.float32),
                c_kv=rng.standard_normal((t, 32)).astype(np.float32),
                k_pe=rng.standard_normal((t, 8)).astype(np.float32),
                kv_cache=np.zeros((pages, page, 40), np.float32),
                positions=np.array([0, 3, 5, 1]), rope_dim=8,
                block_table=np.array([[0, 1], [2, 3], [4, 0], [1, 2]]))


MLA_ERRORS = [
    (dict(positions=np.array([0, 3, 9, 1])), IndexError),
    (dict(positions=np.array([0, -3, 5, 1])), IndexError),
    (dict(block_table=np.array([[0, 1], [2, 3], [4, 7], [1, 2]])),
     IndexError),
    (dict(block_table=None, slots=np.array([0, 3, 3, -1])), ValueError),
    (dict(block_table=None, slots=np.array([0, 3, 20, -1])), IndexError),
    (dict(block_table=np.array([[0, 1], [0, 3], [4, 0], [1, 0]]),
          positions=np.array([0, 0, 5, 1])), ValueError),
    (dict(batch_indices=np.array([0, 1, 2, 4])), IndexError),
]


@pytest.mark.parametrize("change, error", MLA_ERRORS)
def test_mla_errors_the_same_with_and_without_extension(change, error,
                                                        monkeypatch):
    case = _mla_case(np.random.default_rng(4))
    case.update(change)
    messages = []
    for fast in (True, False):
        cache = case["kv_cache"].copy()
        with monkeypatch.context() as m:
            if not fast:
                m.setattr(_jit, "kernel_call_module", lambda: None)
            with pytest.raises(error) as info:
                rope_mlir.apply_mla(**dict(case, kv_cache=cache))
        messages.append(str(info.value))
        assert not cache.any()
    assert messages[0] == messages[1]


@needs_fast
def test_mla_fast_call_matches_ctypes_call(monkeypatch):
    case = _mla_case(np.random.default_rng(9))
    results = []
    for fast in (True, False):
        cache = case["kv_cache"].copy()
        with monkeypatch.context() as m:
            if not fast:
                m.setattr(rope_mlir.mla.MLAKernel, "_fast", None,
                          raising=False)
                m.setattr(rope_mlir.mla.MLAKernel, "__getattribute__",
                          _no_fast, raising=False)
            q = rope_mlir.apply_mla(**dict(case, kv_cache=cache))
        results.append((q.tobytes(), cache.tobytes()))
        assert cache.any()
    assert results[0] == results[1]


def _no_fast(self, name):
    return None if name == "_fast" else object.__getattribute__(self, name)


@pytest.mark.parametrize("change, error", [
    (dict(base=True), TypeError), (dict(rotary_dim=8.0), TypeError),
    (dict(layout="sideways"), ValueError), (dict(threads="1"), TypeError),
    (dict(inverse=1.5), TypeError), (dict(rotary_dim=7), ValueError),
    (dict(magnitude="x"), TypeError)])
def test_memoized_rotation_still_checks(change, error):
    """append_kv memoizes the rotation's fields on the exact arguments: a
    call that differs from a memoized one in any of them (or only in its
    type) is checked again."""
    case = _case("bshd", np.float32, np.random.default_rng(5))
    good = dict(base=10000.0, rotary_dim=8, layout="half", threads=1,
                inverse=False, magnitude=None)
    rope_mlir.append_kv(**case, **good)
    rope_mlir.append_kv(**case, **good)  # memoized
    kc = case["k_cache"].copy()
    with pytest.raises(error):
        rope_mlir.append_kv(**dict(case, k_cache=kc), **dict(good, **change))
    assert kc.tobytes() == case["k_cache"].tobytes()


def test_memoized_rotation_follows_its_arguments():
    """Two calls that differ only in base, rotary_dim or inverse rotate as
    apply does with each."""
    case = _case("bshd", np.float32, np.random.default_rng(6))
    for kwargs in (dict(base=10000.0), dict(base=500000.0),
                   dict(base=500000.0, rotary_dim=8),
                   dict(base=500000.0, inverse=True), dict(base=10000.0)):
        for _ in range(2):
            kc = np.zeros_like(case["k_cache"])
            rope_mlir.append_kv(**dict(case, k_cache=kc), **kwargs)
            rot = rope_mlir.apply(case["k"], case["positions"], **kwargs)
            for b, row in enumerate(case["positions"]):
                for s, p in enumerate(row):
                    assert kc[b, p].tobytes() == rot[b, s].tobytes()
