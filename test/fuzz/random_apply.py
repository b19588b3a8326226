#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Random rope.apply ops through the lowerings: structured fuzzing beside rope-fuzz.

Generates COUNT functions of one random `rope.apply` each (every operand form,
every frequency scheme with random parameters, M-RoPE, token dims, layouts,
static and dynamic shapes; a few values out of range on purpose), then runs
them with ROPE_OPT (the sanitized build's rope-opt) through every lowering and
pipeline, and tiles them with random tile sizes through the transform dialect
(rope.apply's TilingInterface); reports each run that crashed or printed a
sanitizer report.
Invalid ops are fine: they must get a diagnostic. Exit status 1 on a finding.

usage: random_apply.py ROPE_OPT [SEED [COUNT]]   (docs/RELIABILITY.md)
"""

import os
import random
import subprocess
import sys
import tempfile

BAD = 0.04

def pick(r, good, bad):
    return r.choice(bad) if r.random() < BAD else r.choice(good)

def rnd_dim(r):
    return pick(r, ["?", "1", "2", "3", "4", "7", "8", "16", "5", "64", "?"], ["0", "2147483648", "1000000"])

def rnd_head(r):
    return pick(r, ["2", "4", "6", "8", "10", "16", "32", "64", "128", "130", "256", "18"], ["?", "3", "1", "0", "65536", "131072"])

def rnd_float(r):
    return pick(r, ["1.0", "2.0", "0.5", "4.0", "8.0", "32.0", "1.0000000000000002", "40.0", "0.707", "10000.0", "500000.0", "1.0e+30", "1.0e-30", "3.0"],
                ["0.0", "-1.0", "0x7FF8000000000000", "0x7FF0000000000000", "1.0e+300", "4.9e-324"])

def rnd_int(r):
    return pick(r, ["1", "2", "4", "16", "64", "2048", "4096", "8192", "32768", "65536", "2147483647", "9223372036854775807"], ["0", "-1"])

def freqs(r, half):
    kind = r.choice(["default", "linear", "ntk", "dynamic_ntk", "yarn", "llama3", "longrope", "proportional", None, None])
    if kind is None:
        return None
    params = []
    def maybe(name, val):
        if r.random() < 0.6:
            params.append(f"{name} = {val}")
    maybe("base", rnd_float(r))
    if kind in ("linear", "ntk", "dynamic_ntk", "yarn", "llama3"):
        maybe("factor", rnd_float(r))
    if kind == "dynamic_ntk":
        params.append(f"max_position_embeddings = {rnd_int(r)}")
    if kind == "yarn":
        params.append(f"original_max_position_embeddings = {rnd_int(r)}")
        maybe("beta_fast", pick(r, ["32.0", "64.0", "2.0"], [rnd_float(r)])); maybe("beta_slow", pick(r, ["1.0", "0.5"], [rnd_float(r)]))
        maybe("truncate", r.choice(["true", "false"]))
        maybe("attention_factor", rnd_float(r)); maybe("mscale", rnd_float(r)); maybe("mscale_all_dim", rnd_float(r))
    if kind == "llama3":
        lo = rnd_float(r)
        maybe("low_freq_factor", lo); maybe("high_freq_factor", pick(r, [str(float(lo) * 4) if 'x' not in lo else "4.0"], [rnd_float(r)]))
        maybe("original_max_position_embeddings", rnd_int(r))
    if kind == "longrope":
        n = half if half and r.random() < 0.8 else r.choice([1, 2, 3])
        params.append("short_factor = [" + ", ".join(rnd_float(r) for _ in range(n)) + "]")
        params.append("long_factor = [" + ", ".join(rnd_float(r) for _ in range(n)) + "]")
        params.append(f"original_max_position_embeddings = {rnd_int(r)}")
        maybe("factor", rnd_float(r)); maybe("attention_factor", rnd_float(r))
    if kind == "proportional":
        maybe("partial_rotary_factor", r.choice(["0.5", "0.25", "1.0", "0.0", "0.3"]))
        maybe("factor", rnd_float(r))
    r.shuffle(params)
    return f"#rope.{kind}<{', '.join(params)}>"

def case(r, i):
    rank = r.choice([2, 3, 3, 4, 4, 5])
    dims = [rnd_dim(r) for _ in range(rank - 2)] + [rnd_dim(r), rnd_head(r)]
    ety = r.choice(["f32", "f32", "f16", "bf16", "f64"])
    xt = f"tensor<{'x'.join(dims)}x{ety}>"
    args = [f"%x: {xt}", f"%init: {xt}"]
    operands = f"ins(%x : {xt})"
    attrs = []
    head = dims[-1]
    half = int(head) // 2 if head.isdigit() else None
    # token dims
    tdims = None
    if r.random() < 0.3 and rank >= 3:
        tdims = sorted(r.sample(range(rank - 1), r.choice([1, 2]) if rank > 3 else 1))
        attrs.append(f"token_dims = array<i64: {', '.join(map(str, tdims))}>")
    tok = tdims if tdims is not None else list(range(rank - 2))
    mrope = r.random() < 0.15
    if mrope or r.random() < 0.5:
        pshape = ([pick(r, ["3"], ["2"])] if mrope else []) + [dims[d] if r.random() < 0.97 else rnd_dim(r) for d in tok]
        pty = f"tensor<{'x'.join(pshape + [pick(r, ['i64', 'i32'], ['i16', 'f32', 'index'])])}>"
        args.append(f"%p: {pty}")
        operands += f" positions(%p : {pty})"
    elif r.random() < 0.5:
        oty = pick(r, ["i64", "index", "i32", "tensor<i32>", f"tensor<{dims[0]}xi64>"], ["f32", "tensor<3x3xi64>"])
        args.append(f"%o: {oty}")
        operands += f" offset(%o : {oty})"
    if (f_kind_dynamic := r.random() < 0.15):
        lty = r.choice(["i64", "index", "i32"])
        args.append(f"%l: {lty}")
        operands += f" length(%l : {lty})"
    if r.random() < 0.15:
        cty = f"tensor<{r.choice(['2048', '?', '1', '16'])}x{pick(r, [str(half) if half else '32', '?'], ['1', '0'])}x{r.choice(['f32', 'f16', ety])}>"
        args += [f"%c: {cty}", f"%s: {cty}"]
        operands += f" cache(%c, %s : {cty}, {cty})"
    outs = "%init" if r.random() < 0.85 else "%x"
    operands += f" outs({outs} : {xt})"
    if r.random() < 0.3:
        attrs.append(f"layout = #rope.layout<{r.choice(['half', 'interleaved'])}>")
    if r.random() < 0.3:
        rd = pick(r, [str(half - half % 2) if half and half > 1 else "2", "2", "4", head if head.isdigit() else "8"], ["0", "-2", "3", "16", "64"])
        attrs.append(f"rotary_dim = {rd} : i64")
    f = None if ("cache(" in operands and r.random() < 0.95) else freqs(r, half)
    if f_kind_dynamic and (not f or not any(k in f for k in ("dynamic_ntk", "longrope"))) and r.random() < 0.95:
        f = "#rope.dynamic_ntk<factor = 2.0, max_position_embeddings = 64>"
    if f:
        attrs.append(f"freqs = {f}")
    if mrope:
        sec = [r.choice(["1", "2", "4", "8", "16", "0"]) for _ in range(3)]
        if half and r.random() < 0.8:
            a = r.randint(0, half); b = r.randint(0, half - a); sec = [str(a), str(b), str(half - a - b)]
        attrs.append(f"mrope = #rope.mrope<section = [{', '.join(sec)}]" + (", interleaved = true" if r.random() < 0.3 else "") + ">")
    if r.random() < 0.2:
        attrs.append(f"magnitude = {rnd_float(r)} : f64")
    if r.random() < 0.2:
        attrs.append("inverse")
    attr = (" {" + ", ".join(attrs) + "}") if attrs else ""
    return (f"func.func @f{i}({', '.join(args)}) -> {xt} {{\n"
            f"  %y = rope.apply {operands}{attr} -> {xt}\n"
            f"  return %y : {xt}\n}}\n"), rank


def tiled(r, i):
    """A case and a transform script tiling its rope.apply (TilingInterface)."""
    text, rank = case(r, i)
    sizes = [pick(r, ["0", "1", "2", "4", "3"], ["16", "100"]) for _ in range(rank - 1)]
    sizes.append(pick(r, ["0"], ["2", "64"]))
    if r.random() < 0.5:
        op = f"transform.structured.tile_using_for %ops tile_sizes [{', '.join(sizes)}]"
        loops = sum(s != "0" for s in sizes)
        results = "%t" + "".join(f", %l{k}" for k in range(loops))
        types = ", ".join(["!transform.any_op"] * (loops + 1))
    else:
        # All-zero sizes crash MLIR 22's tile_using_forall (docs/RELIABILITY.md).
        if all(size == "0" for size in sizes):
            sizes[0] = "1"
        op = f"transform.structured.tile_using_forall %ops tile_sizes [{', '.join(sizes)}]"
        results, types = "%t, %l", "!transform.any_op, !transform.any_op"
    return text + f"""
module attributes {{transform.with_named_sequence}} {{
  transform.named_sequence @__transform_main(%root: !transform.any_op {{transform.readonly}}) {{
    %ops = transform.structured.match ops{{["rope.apply"]}} in %root : (!transform.any_op) -> !transform.any_op
    {results} = {op} : (!transform.any_op) -> ({types})
    transform.yield
  }}
}}
"""

PASSES = ("convert-rope-to-linalg", "convert-rope-to-vector", "convert-rope-to-gpu",
          "convert-rope-to-gpu{vectorize=false}", "canonicalize", "rope-to-llvm-cpu",
          "rope-to-llvm-cpu{vectorize=false}", "rope-to-nvvm{toolkit=/nonexistent}")
CRASH = ("Sanitizer", "runtime error", "Assertion", "LLVM ERROR", "PLEASE submit")


def main():
    rope_opt = sys.argv[1]
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    count = int(sys.argv[3]) if len(sys.argv) > 3 else 300
    r = random.Random(seed)
    cases = "\n// -----\n\n".join(case(r, i)[0] for i in range(count))
    tiles = "\n// -----\n\n".join(tiled(r, i) for i in range(count))
    env = dict(os.environ)
    env.setdefault("ASAN_OPTIONS", "allow_user_poisoning=0:halt_on_error=1:abort_on_error=1")
    env.setdefault("UBSAN_OPTIONS", "halt_on_error=1:abort_on_error=1:print_stacktrace=1")
    findings = 0
    with tempfile.NamedTemporaryFile("w", suffix=".mlir") as f, \
            tempfile.NamedTemporaryFile("w", suffix=".mlir") as t:
        f.write(cases)
        f.flush()
        t.write(tiles)
        t.flush()
        for name in ("(verify only)",) + PASSES + ("transform-interpreter",):
            args = [rope_opt, t.name if name == "transform-interpreter" else f.name,
                    "--split-input-file"]
            if name != "(verify only)":
                args.append(f"--pass-pipeline=builtin.module({name})")
            try:
                run = subprocess.run(args, env=env, capture_output=True, text=True, timeout=900)
                crashed = run.returncode < 0 or run.returncode >= 128 or any(c in run.stderr for c in CRASH)
                detail = run.stderr
            except subprocess.TimeoutExpired:
                crashed, detail = True, "timeout"
            if name == "(verify only)":
                valid = count - detail.count("error:")
            if crashed:
                findings += 1
                print(f"random_apply: seed {seed}: {name} crashed:\n{detail[-4000:]}")
    print(f"random_apply: seed {seed}: {count} ops ({valid} valid), {len(PASSES)} lowerings "
          f"and tiling, {findings} crashes")
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
