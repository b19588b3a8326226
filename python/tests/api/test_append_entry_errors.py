# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Bad input to the lower-level append entry points (a compiled
AppendKernel called directly, MLAConfig / emit_mla) is refused with an
exception before any code runs, and the caches keep their bytes."""

import numpy as np
import pytest

import rope_mlir
from rope_mlir import mla

H, D, SLOTS = 2, 16, 8


@pytest.fixture(scope="module")
def append():
    return rope_mlir.compile_append(dtype="f32", rank=3, head_dim=D,
                                    positions="explicit", slots=True,
                                    cache_write=True)


def _arrays(n=3):
    rng = np.random.default_rng(5)
    k = rng.standard_normal((n, H, D)).astype(np.float32)
    v = rng.standard_normal((n, H, D)).astype(np.float32)
    kc = np.full((SLOTS, H, D), 7.0, np.float32)
    vc = np.full((SLOTS, H, D), 7.0, np.float32)
    return k, v, kc, vc, np.arange(n, dtype=np.int64), np.arange(n,
                                                                 dtype=np.int64)


def test_a_good_call_writes_its_slots(append):
    k, v, kc, vc, slots, pos = _arrays()
    append(k, slots, kc, positions=pos, v=v, v_cache=vc)
    np.testing.assert_array_equal(vc[:3], v)
    assert (kc[3:] == 7.0).all() and (kc[:3] != 7.0).any()


def _refused(append, exc, match, **changes):
    k, v, kc, vc, slots, pos = _arrays()
    args = dict(k=k, slots=slots, k_cache=kc, positions=pos, v=v, v_cache=vc)
    args.update(changes)
    kc_before = args["k_cache"].copy() if isinstance(
        args["k_cache"], np.ndarray) else None
    with pytest.raises(exc, match=match):
        append(args.pop("k"), args.pop("slots"), args.pop("k_cache"), **args)
    if kc_before is not None:
        assert (kc == 7.0).all() and (vc == 7.0).all()


@pytest.mark.parametrize("name,exc,match,make", [
    ("k dtype", TypeError, "k", lambda a: dict(k=a[0].astype(np.float64))),
    ("k head dim", ValueError, "k",
     lambda a: dict(k=np.zeros((3, H, D + 2), np.float32))),
    ("cache dtype", TypeError, "k_cache",
     lambda a: dict(k_cache=np.zeros((SLOTS, H, D), np.float64))),
    ("cache heads", ValueError, "k_cache",
     lambda a: dict(k_cache=np.zeros((SLOTS, H + 1, D), np.float32))),
    ("slots shape", ValueError, "slots",
     lambda a: dict(slots=np.arange(4, dtype=np.int64))),
    ("slots dtype", TypeError, "slots",
     lambda a: dict(slots=np.arange(3, dtype=np.float32))),
    ("positions shape", ValueError, "positions",
     lambda a: dict(positions=np.arange(5, dtype=np.int64))),
    ("v shape", ValueError, "v",
     lambda a: dict(v=np.zeros((3, H, D // 2), np.float32))),
])
def test_bad_arguments_are_refused(append, name, exc, match, make):
    _refused(append, (exc, ValueError, TypeError), match, **make(_arrays()))


def test_read_only_cache_is_refused(append):
    k, v, kc, vc, slots, pos = _arrays()
    kc.flags.writeable = False
    with pytest.raises(ValueError, match="k_cache"):
        append(k, slots, kc, positions=pos, v=v, v_cache=vc)
    assert (vc == 7.0).all()


@pytest.mark.parametrize("changes,exc,match", [
    (dict(dtype="i32"), TypeError, "dtype"),
    (dict(rope_dim=0), ValueError, "rope_dim"),
    (dict(rope_dim=63), ValueError, "rope_dim"),
    (dict(kv_lora_rank=-1), ValueError, "kv_lora_rank"),
    (dict(nope_dim=-2), ValueError, "nope_dim"),
    (dict(cache_form="ring"), ValueError, "cache_form"),
    (dict(quant="f4"), ValueError, "quant"),
    (dict(dtype="f64", quant="i8"), TypeError, "f64"),
    (dict(layout="diagonal"), ValueError, "layout"),
])
def test_mla_config_refuses_bad_fields(changes, exc, match):
    fields = dict(dtype="bf16")
    fields.update(changes)
    with pytest.raises(exc, match=match):
        mla.emit_mla(mla.MLAConfig(**fields))
