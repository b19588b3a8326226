# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""rope_mlir._ir: the one module that spells the IR the package writes.

- every builder's output parses and verifies (the compiler's own parser,
  in process: `_jit.lower(text, "builtin.module()")`);
- float literals round-trip exactly: the value MLIR holds (read back by
  running the compiled constant) has the bits of the Python value rounded
  to the element type, for edge values (±0, subnormals, the largest
  doubles, inf, NaN with its sign) and random bit patterns; the rope
  attributes (base, magnitude) read back from the printed IR equal them;
- one place: kernel.py, attention.py, onnx.py and hf.py hold no IR spelling
  in their code (string literals and f-string parts, docstrings aside): a
  type, attribute, op name or float format found there fails the test, and
  the check is shown to catch one.
"""

from __future__ import annotations

import ast
import math
import pathlib
import re
import struct

import ml_dtypes
import numpy as np
import pytest

import rope_mlir
from rope_mlir import _ir, _jit, kernel

PACKAGE = pathlib.Path(rope_mlir.__file__).resolve().parent
EMITTERS = ("kernel.py", "attention.py", "onnx.py", "hf.py")


def _parses(text: str) -> str:
    """The module as the compiler prints it after parsing and verifying."""
    return _jit.lower(text, "builtin.module()")


# ---------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------

def test_type_spelling():
    assert _ir.tensor((2, None, 8), "f32") == "tensor<2x?x8xf32>"
    assert _ir.memref((None,), "i64") == "memref<?xi64>"
    assert _ir.tensor((), "bf16") == "tensor<bf16>"
    assert _ir.Type("index", (3, None)).memref() == "memref<3x?xindex>"
    assert _ir.Type("f16", (1,)).with_shape((None, 2)).tensor() == \
        "tensor<?x2xf16>"
    with pytest.raises(ValueError, match="unsupported element type"):
        _ir.tensor((2,), "f8")
    with pytest.raises(ValueError, match="dimension"):
        _ir.tensor((-1,), "f32")
    with pytest.raises(ValueError, match="dimension"):
        _ir.tensor((True,), "f32")


def test_every_type_parses():
    """A function taking every element type as tensors and memrefs of
    static, dynamic and rank-0 shapes, and as scalars."""
    body = _ir.Body()
    args = []
    for elt in _ir.DTYPES:
        for shape in ((), (3,), (None, 4), (2, None, None)):
            t = _ir.Type(elt, shape)
            args.append((body.fresh(f"t_{elt}"), t.tensor()))
            args.append((body.fresh(f"m_{elt}"), t.memref()))
        args.append((body.fresh(elt), elt))
    body.ret()
    printed = _parses(_ir.module(_ir.function("types", args, body)))
    for elt in _ir.DTYPES:
        assert f"tensor<2x?x?x{elt}>" in printed
        assert f"memref<{elt}>" in printed


# ---------------------------------------------------------------------------
# Float literals
# ---------------------------------------------------------------------------

_EDGES = [0.0, -0.0, 1.0, -1.0, 0.1, 1 / 3, math.pi, 1e-05, 2.0 ** -1074,
          -(2.0 ** -1074), 2.2250738585072014e-308, 2.225073858507201e-308,
          1e308, 1.7976931348623157e308, -1.7976931348623157e308,
          2.0 ** 53 + 2, 123456789.125, 65504.0, 6.0e-8, 3.4028234663852886e38,
          1.1754943508222875e-38, 1.401298464324817e-45, math.inf, -math.inf,
          math.nan, -math.nan]


def _random_doubles(n: int, seed: int = 0) -> list:
    """Random finite doubles over the whole range (random bit patterns)
    and over a few decades (random mantissas)."""
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2 ** 63, n, dtype=np.uint64) | \
        (rng.integers(0, 2, n, dtype=np.uint64) << np.uint64(63))
    values = [float(v) for v in bits.view(np.float64) if np.isfinite(v)]
    values += [float(v) for v in rng.uniform(-1e4, 1e4, n)]
    values += [float(v) for v in rng.standard_normal(n) * 1e-300]
    return values


def _bits(values, elt: str) -> np.ndarray:
    with np.errstate(over="ignore"):
        array = np.asarray(values, np.float64).astype(_ir.DTYPES[elt])
    return array.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[
        array.itemsize])


@pytest.mark.parametrize("elt", _ir.FLOAT_TYPES)
def test_float_literals_round_trip(elt):
    """Each literal, compiled as an arith.constant and read back, has the
    bits of the value rounded to `elt` (NaN sign and payload included)."""
    values = _EDGES + _random_doubles(100, seed=len(elt))
    limit = float(ml_dtypes.finfo(_ir.DTYPES[elt]).max)
    values = [v for v in values if not math.isfinite(v) or abs(v) <= limit]
    body = _ir.Body()
    names = [body.assign("c", _ir.constant(v, elt)) for v in values]
    t = _ir.Type(elt, (len(values),))
    result = body.assign("all", f"tensor.from_elements {', '.join(names)} "
                         f": {t.tensor()}")
    body.ret([(result, t)])
    text = _ir.module(_ir.function("values", [], body,
                                   results=[t.tensor()]))
    got = rope_mlir.jit(text).function("values")()
    assert got.dtype == _ir.DTYPES[elt]
    want = _bits(values, elt)
    bad = [(values[i], _ir.float_literal(values[i], elt))
           for i in np.flatnonzero(got.view(want.dtype) != want)]
    assert not bad, f"literals that do not round-trip in {elt}: {bad[:5]}"


def test_float_literal_forms():
    assert _ir.float_literal(1e-05) == "1.0e-05"  # the lexer needs a '.'
    assert _ir.float_literal(5e-324) == "5.0e-324"
    assert _ir.float_literal(1e308) == "1.0e+308"
    assert _ir.float_literal(-0.0) == "-0.0"
    assert _ir.float_literal(10000.0) == "10000.0"
    assert _ir.float_literal(math.inf) == "0x7FF0000000000000"
    assert _ir.float_literal(-math.inf, "f32") == "0xFF800000"
    assert _ir.float_literal(math.nan, "f16") == "0x7E00"
    assert _ir.float_literal(-math.nan, "f32") == "0xFFC00000"
    assert _ir.float_literal(math.inf, "bf16") == "0x7F80"
    assert _ir.float_literal(0.1, "f32") == repr(float(np.float32(0.1)))
    assert _ir.float_literal(np.float16(0.5), "f16") == "0.5"
    for value in _random_doubles(200, seed=7):
        text = _ir.float_literal(value)
        assert re.fullmatch(r"-?[0-9]+\.[0-9]*(e[-+][0-9]+)?", text), text
        assert struct.pack("<d", float(text)) == struct.pack("<d", value)
    with pytest.raises(ValueError, match="overflows f16"):
        _ir.float_literal(1e5, "f16")
    with pytest.raises(TypeError):
        _ir.float_literal("1.0")
    with pytest.raises(TypeError):
        _ir.float_literal(True)
    with pytest.raises(ValueError, match="not a float type"):
        _ir.float_literal(1.0, "i64")


def _printed_floats(printed: str, name: str) -> list:
    return [float(m) for m in re.findall(
        rf"{name} = (-?[0-9.]+(?:[eE][-+]?[0-9]+)?)", printed)]


def test_rope_float_attributes_round_trip():
    """base (#rope.default's parser) and magnitude (a FloatAttr) read back
    from the printed op equal the values given, to the bit."""
    values = [1.2345678901234567, 5e-324, 1e308, 0.1, 1 / 3, 1e-05,
              1.7976931348623157e308, 500000.0] + \
        [abs(v) for v in _random_doubles(20, seed=3) if v]
    for value in values:
        text = kernel.emit(kernel.KernelConfig(
            dtype="f32", rank=3, head_dim=8, base=value, magnitude=value))
        printed = _parses(text)
        bases = _printed_floats(printed, "base") or [10000.0]
        magnitudes = _printed_floats(printed, "magnitude")
        assert bases == [value] and magnitudes == [value], (value, printed)


# ---------------------------------------------------------------------------
# Attributes and rope.apply
# ---------------------------------------------------------------------------

def test_attribute_spelling():
    assert _ir.int_attr(3) == "3 : i64"
    assert _ir.float_attr(1.5) == "1.5 : f64"
    assert _ir.i64_array([0, 2]) == "array<i64: 0, 2>"
    assert _ir.i64_array([]) == "array<i64: >"
    assert _ir.layout_attr("interleaved") == "#rope.layout<interleaved>"
    assert _ir.default_freqs(1e4) == "#rope.default<base = 10000.0>"
    assert _ir.rope_attributes(layout="half") == \
        "{layout = #rope.layout<half>}"
    assert _ir.rope_attributes(
        layout="half", rotary_dim=32, token_dims=(0, 2),
        freqs=_ir.default_freqs(5e5), mrope="#rope.mrope<section = [1, 1, 2]>",
        magnitude=1.25, inverse=True) == (
        "{layout = #rope.layout<half>, rotary_dim = 32 : i64, token_dims = "
        "array<i64: 0, 2>, freqs = #rope.default<base = 500000.0>, mrope = "
        "#rope.mrope<section = [1, 1, 2]>, magnitude = 1.25 : f64, inverse}")
    with pytest.raises(ValueError):
        _ir.layout_attr("neox")
    with pytest.raises(TypeError):
        _ir.int_attr(2.0)
    with pytest.raises(ValueError, match="not both"):
        _ir.rope_apply("%x", _ir.Type("f32", (2, 8)), "%y", "{}",
                       positions=("%p", "i64"), offset=("%o", "i64"))


_SCALINGS = [
    None,
    {"rope_type": "linear", "factor": 4.0},
    {"rope_type": "dynamic", "factor": 2.0, "max_position_embeddings": 4096},
    {"rope_type": "yarn", "factor": 40.0,
     "original_max_position_embeddings": 4096, "beta_fast": 32.0,
     "beta_slow": 1.0, "mscale": 1.0, "mscale_all_dim": 0.707},
    {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
     "high_freq_factor": 4.0, "original_max_position_embeddings": 8192},
    {"rope_type": "longrope", "short_factor": [1.0, 1.25, 1.5, 2.0] * 2,
     "long_factor": [3.0, 3.5, 4.0, 4.5] * 2,
     "original_max_position_embeddings": 4096,
     "max_position_embeddings": 131072},
    {"rope_type": "default", "partial_rotary_factor": 0.5},
]


@pytest.mark.parametrize("scaling", _SCALINGS,
                         ids=lambda s: (s or {}).get("rope_type", "none"))
@pytest.mark.parametrize("mrope", [None, "chunked", "interleaved"])
def test_kernel_attribute_forms_parse(scaling, mrope):
    """Every rope.apply attribute the package writes (the C++ importer's
    freqs and mrope texts, the magnitude, rotary_dim, token_dims, inverse,
    both layouts) parses and verifies."""
    # Sections of P/2 pairs (4 with the partial rotary factor 0.5, else
    # 8) that both M-RoPE forms accept.
    partial = "partial_rotary_factor" in (scaling or {})
    section = None if mrope is None else [2, 1, 1] if partial else [3, 3, 2]
    attrs = kernel.scaling_attributes(
        scaling, base=5e5, head_dim=16, mrope_section=section,
        mrope_interleaved=mrope == "interleaved")
    config = kernel.KernelConfig(
        dtype="bf16", rank=4, head_dim=16, token_dims=(0, 2),
        layout="interleaved" if mrope else "half",
        rotary_dim=attrs.rotary_dim if attrs.rotary_dim != 16 else None,
        freqs=attrs.freqs, mrope=attrs.mrope, magnitude=attrs.magnitude,
        inverse=scaling is None, positions="explicit")
    printed = _parses(kernel.emit(config))
    assert printed.count("rope.apply") == 1
    assert "layout = #rope.layout<" in printed or mrope is None


@pytest.mark.parametrize("positions,cache", [
    ("explicit", None), ("offset", None), ("row_offset", None),
    ("explicit", "gathered"), ("offset", "gathered"),
    ("row_offset", "gathered"), ("none", "pregathered"), ("none", None)])
@pytest.mark.parametrize("inplace", [False, True])
def test_kernel_operand_forms_parse(positions, cache, inplace):
    config = kernel.KernelConfig(
        dtype="f16", rank=4, head_dim=8, positions=positions, cache=cache,
        cache_dtype="f32", inplace=inplace,
        token_dims=(0, 1) if positions == "row_offset" else None)
    _parses(kernel.emit(config))


def test_rope_apply_builder_parses():
    """rope_apply with each operand form, straight from the builders: a
    tensor function, as import_model writes."""
    x = _ir.Type("f32", (None, 3, None, 8))
    cache = _ir.Type("f16", (None, 2))
    forms = [dict(positions=("%pos", _ir.Type("i32", (None, None)))),
             dict(offset=("%off", "i64")),
             dict(offset=("%rows", _ir.Type("i64", (None,))))]
    for i, form in enumerate(forms):
        body = _ir.Body()
        args = [(body.fresh("x"), x.tensor()),
                (body.fresh("pos"), _ir.tensor((None, None), "i32")),
                (body.fresh("off"), "i64"),
                (body.fresh("rows"), _ir.tensor((None,), "i64")),
                (body.fresh("cos"), cache.tensor()),
                (body.fresh("sin"), cache.tensor()),
                (body.fresh("init"), x.tensor())]
        attrs = _ir.rope_attributes(layout="half", rotary_dim=4,
                                    token_dims=(0, 2))
        y = body.assign("y", _ir.rope_apply(
            "%x", x, "%init", attrs, cache=("%cos", "%sin", cache), **form))
        body.ret([(y, x)])
        printed = _parses(_ir.function(f"f{i}", args, body,
                                       results=[x.tensor()]))
        assert "cache(" in printed


# ---------------------------------------------------------------------------
# Other ops, functions and modules
# ---------------------------------------------------------------------------

def test_op_builders_parse_and_run():
    """Every op builder in one module, compiled and run: dense constants
    of each element type come back exactly."""
    rng = np.random.default_rng(0)
    dense = {
        "f32": rng.standard_normal((2, 3)).astype(np.float32),
        "f16": rng.standard_normal((3,)).astype(np.float16),
        "bf16": rng.standard_normal((2, 2)).astype(ml_dtypes.bfloat16),
        "f64": np.array([[math.pi, -0.0, 5e-324]]),
        "i64": np.array([-(2 ** 63), 2 ** 63 - 1, 0]),
        "i32": np.array([[1, -2], [3, 4]], np.int32),
        "i1": np.array([[True, False, True]]),
    }
    body = _ir.Body()
    x_t = _ir.Type("f32", (2, None))
    x = body.fresh("x")
    results = []
    for elt, array in dense.items():
        t = _ir.Type(elt, array.shape)
        results.append((body.assign(f"d_{elt}", _ir.constant_dense(array, t)),
                        t))
    empty = _ir.Type("f32", (0, 2))
    results.append((body.assign("none", _ir.constant_dense(
        np.zeros((0, 2)), empty)), empty))
    # tensor ops on the dynamic argument
    n = body.dim(x, x_t, 1)
    static = body.cast(x, x_t, (2, 6), "static")
    s_t = x_t.with_shape((2, 6))
    four = _ir.Type("f32", (2, 3, 2))
    expanded = body.assign("e", _ir.expand_shape(static, [[0], [1, 2]],
                                                 ["2", "3", "2"], s_t, four))
    collapsed = body.assign("c", _ir.collapse_shape(expanded, [[0], [1, 2]],
                                                    four, s_t))
    first = body.assign("first", _ir.tensor_extract(
        collapsed, s_t, [body.index(0), body.index(1)]))
    one = body.assign("one", _ir.constant(1.0, "f32"))
    total = body.assign("t", _ir.arith("addf", [first, one], "f32"))
    flag = body.assign("flag", _ir.constant(True, "i1"))
    seven = body.assign("seven", _ir.constant(7, "i64"))
    # linalg: fill, generic (with a region), reduce, broadcast, named ops,
    # softmax, batch_matmul
    rows = _ir.Type("f32", (2,))
    zeros = body.assign("z", _ir.fill(
        body.assign("zero", _ir.constant(0.0, "f32")), "f32",
        body.assign("re", _ir.empty(rows)), rows))
    row_sum = body.assign("rs", _ir.reduce("addf", (collapsed, s_t),
                                           (zeros, rows), [1]))
    wide = body.assign("w", _ir.empty(x_t, [n]))
    spread = body.assign("b", _ir.broadcast((row_sum, rows), (wide, x_t),
                                            [1]))

    def scale(region, a, o):
        y = region.assign("y", _ir.arith("mulf", [a, total], "f32"))
        e = region.assign("ex", _ir.math_op("exp", [y], "f32"))
        region.emit(_ir.linalg_yield([e], ["f32"]))
    region = body.region()
    block = [(region.fresh(a), "f32") for a in ("a", "o")]
    scale(region, *[name for name, _ in block])
    scaled = body.assign("g", _ir.generic(
        [_ir.affine_map("i j", "i j")] * 2, ["parallel", "parallel"],
        [(x, x_t)], (spread, x_t), block, region.lines))
    diff = body.assign("sub", _ir.named("sub", [(scaled, x_t), (x, x_t)],
                                        (wide, x_t)))
    probs = body.assign("p", _ir.softmax(1, (diff, x_t), (wide, x_t)))
    a_t, c_t = _ir.Type("f32", (1, 2, 3)), _ir.Type("f32", (1, 2, 2))
    a = body.assign("a", _ir.constant_dense(np.ones((1, 2, 3)), a_t))
    mm = body.assign("mm", _ir.batch_matmul(
        [_ir.affine_map("b m n k", "b m k"), _ir.affine_map("b m n k",
                                                            "b n k"),
         _ir.affine_map("b m n k", "b m n")], [(a, a_t), (a, a_t)],
        (body.assign("mmz", _ir.fill("%zero", "f32", body.assign(
            "mme", _ir.empty(c_t)), c_t)), c_t)))
    results += [(probs, x_t), (mm, c_t), (flag, "i1"), (seven, "i64")]
    body.ret(results)
    text = _ir.comment("all builders\nin one module") + _ir.module(
        _ir.function("ops", [(x, x_t.tensor())], body,
                     results=[_ir.Type.tensor(t) if isinstance(t, _ir.Type)
                              else t for _, t in results]))
    assert text.startswith("// all builders\n// in one module\nmodule {\n")
    _parses(text)
    got = rope_mlir.jit(text).function("ops")(
        rng.standard_normal((2, 6)).astype(np.float32))
    for (elt, array), value in zip(dense.items(), got):
        assert value.dtype == array.dtype and value.shape == array.shape
        assert value.tobytes() == array.tobytes(), elt
    assert got[len(dense)].shape == (0, 2)
    np.testing.assert_allclose(got[-3], np.full((1, 2, 2), 3.0))
    np.testing.assert_allclose(got[-4].sum(axis=1), [1.0, 1.0], rtol=1e-6)
    assert bool(got[-2]) is True and int(got[-1]) == 7


def test_body_names():
    body = _ir.Body()
    assert body.fresh("x") == "%x"
    assert body.fresh("x") == "%x_1"
    assert body.fresh("x") == "%x_2"
    assert body.fresh("a b/c") == "%a_b_c"
    assert body.fresh("0in") == "%v0in"
    assert body.fresh("") == "%v"
    assert body.index(3) is body.index(3) and body.lines == [
        "%c3 = arith.constant 3 : index"]
    region = body.region()
    assert region.fresh("x") == "%x_3"   # the outer %x is visible inside
    assert body.fresh("y") == "%y"       # region names are its own
    t = _ir.Type("f32", (2, None))
    assert body.dim("%x", t, 0) == "2"
    assert body.cast("%x", t, (2, None), "cast") == "%x"


def test_function_signatures():
    body = _ir.Body()
    body.ret()
    assert _ir.function("f", [("%a", "i64")], body, c_interface=True) == (
        "func.func @f(%a: i64) attributes {llvm.emit_c_interface} {\n"
        "  return\n}\n")
    body = _ir.Body()
    body.ret([("%a", "i64"), ("%b", _ir.Type("f32", (None,)))])
    assert _ir.function("g", [("%a", "i64"), ("%b", "tensor<?xf32>")], body,
                        results=["i64", "tensor<?xf32>"]) == (
        "func.func @g(%a: i64, %b: tensor<?xf32>) -> (i64, tensor<?xf32>) "
        "{\n  return %a, %b : i64, tensor<?xf32>\n}\n")
    _parses(_ir.module(_ir.function("g", [("%a", "i64"),
                                          ("%b", "tensor<?xf32>")], body,
                                    results=["i64", "tensor<?xf32>"])))


# ---------------------------------------------------------------------------
# One place
# ---------------------------------------------------------------------------

#: IR spellings that belong to _ir.py alone (each is also found there).
IR_SPELLINGS = {
    "tensor type": r"tensor<",
    "memref type": r"memref<",
    "rope attribute": r"#rope\.",
    "rope.apply": r"rope\.apply\s+ins",
    "func.func": r"func\.func",
    "func attribute": r"llvm\.emit_c_interface",
    "bufferization op": r"bufferization\.",
    "arith op": r"arith\.",
    "math op": r"\bmath\.",
    "linalg op": r"\blinalg\.",
    "tensor op": r"\btensor\.",
    "affine map": r"affine_map<",
    "dense array": r"array<i64",
    "dense elements": r"dense<",
    "block header": r"\^bb",
    "typed literal": r":\s*(f16|bf16|f32|f64|i1|i32|i64|index)\b",
    "hex float": r"0x(7F|FF)[0-9A-F]{2}",
    "comment": r"^// ",
    "return": r"^return\b",
}
#: Float formats that are not exact or not MLIR (repr's "1e-05").
FLOAT_FORMAT = re.compile(r"%[-+ #0]*\d*(\.\d+)?[eEfFgGa]")
FORMAT_SPEC = re.compile(r"\.\d*[eEfFgGa%]|^[eEfFgGa%]$")


def _docstrings(tree) -> set:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                             ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(
                    first.value, ast.Constant):
                ids.add(id(first.value))
    return ids


def spelling_violations(source: str) -> list:
    """(line, what, text) for each IR spelling or float format in the code
    of `source`: string literals and the literal parts of f-strings
    (docstrings and comments are prose, not IR)."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    found = []

    def check(text: str, line: int):
        for what, pattern in IR_SPELLINGS.items():
            if re.search(pattern, text, re.M):
                found.append((line, what, text))
        if FLOAT_FORMAT.search(text):
            found.append((line, "float format", text))

    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in docs:
            check(node.value, node.lineno)
        elif isinstance(node, ast.FormattedValue) and node.format_spec:
            spec = "".join(part.value for part in node.format_spec.values
                           if isinstance(part, ast.Constant))
            if FORMAT_SPEC.search(spec):
                found.append((node.lineno, "float format spec", spec))
        elif isinstance(node, ast.Call) and isinstance(
                node.func, ast.Attribute) and node.func.attr == "hex" and \
                not node.args:
            found.append((node.lineno, "float.hex or bytes.hex", ""))
    return found


@pytest.mark.parametrize("name", EMITTERS)
def test_one_place(name):
    """The emitting modules spell no IR: every type, attribute, op and
    float format comes from _ir."""
    source = (PACKAGE / name).read_text()
    assert re.search(r"^from \. import (.*, )?_ir\b", source, re.M), (
        f"{name} does not import _ir")
    violations = spelling_violations(source)
    assert not violations, (
        f"{name} spells IR itself; use rope_mlir._ir:\n" +
        "\n".join(f"  line {line}: {what}: {text!r}"
                  for line, what, text in violations))


def test_ir_module_has_the_spellings():
    """Each spelling the check looks for is one _ir.py writes (the check
    is not vacuous)."""
    found = {what for _, what, _ in spelling_violations(
        (PACKAGE / "_ir.py").read_text())}
    # (_ir.py takes element types and hex digits as values, and its
    # comment and return builders put them together at run time.)
    missing = set(IR_SPELLINGS) - found - {"typed literal", "hex float",
                                           "return"}
    assert not missing, missing


@pytest.mark.parametrize("snippet,what", [
    ('t = f"tensor<{d}x{elt}>"', "tensor type"),
    ('t = "memref<?x" + elt + ">"', "memref type"),
    ('a = f"freqs = #rope.default<base = {b}>"', "rope attribute"),
    ('a = f"magnitude = {m!r} : f64"', "typed literal"),
    ('v = "%.17e" % base', "float format"),
    ('v = f"{base:.17g}"', "float format spec"),
    ('v = f"{base:e}"', "float format spec"),
    ('line = f"%s = arith.constant {v} : f32"', "arith op"),
    ('h = raw.hex()', "float.hex or bytes.hex"),
    ('m = "affine_map<(b) -> (b)>"', "affine map"),
])
def test_one_place_check_catches(snippet, what):
    """The check fails on a reintroduced spelling (and ignores prose)."""
    source = f'"""Docs may say tensor<f32> and rope.apply ins."""\n{snippet}\n'
    assert what in {w for _, w, _ in spelling_violations(source)}
    assert not spelling_violations('"""tensor<2xf32>, %.17e"""\n# arith.\n')
