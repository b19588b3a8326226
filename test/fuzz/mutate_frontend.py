#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Mutation fuzzer for rope-raise over real frontend IR.

The frontend fixtures (test/Frontends/Inputs/**/*.mlir: torch-mlir, StableHLO
and ONNX exports) are what `--rope-raise` reads in practice. libFuzzer's byte
mutations rarely keep such a file parseable, so this mutator edits the MLIR
text where the raise reads numbers and structure from it: integer constants
(extract indices, `linalg.index` comparisons), static slice offsets, sizes
and strides, dense constants, affine map constants, tensor shapes (one dim
size renamed throughout the file, so that the mutant still verifies more
often), operands of binary ops swapped, addf/subf flipped, negations added or
removed, with edge values (0, 1, -1, a dim size, size + 1, 2^31, 2^63 - 1).

Each mutant runs through `rope-opt --rope-raise=remarks=true` and
`rope-opt --rope-optimize` (and `--rope-to-llvm-cpu` after it with --lower)
with a timeout. Exit 0 or 1 without a crash marker is fine (a mutant may be
invalid IR, or not raised); a signal, another exit status, "LLVM ERROR",
"Assertion", a sanitizer report or a timeout is a finding: the mutant is
written to --out and the command printed. Mutants are a function of
(--seed, index) and the fixtures; a finding is reproduced by its file alone.

usage: mutate_frontend.py [--seed N] [--count N] [--time S] [--jobs N]
                          [--rope-opt PATH] [--out DIR] [--lower]
Exit status: 0 without findings, 1 with findings, 2 on usage errors.
"""

import argparse
import concurrent.futures
import os
import pathlib
import random
import re
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
INPUTS = ROOT / "test" / "Frontends" / "Inputs"

CRASH_MARKERS = ("LLVM ERROR", "Assertion", "AddressSanitizer", "LeakSanitizer",
                 "UndefinedBehaviorSanitizer", "runtime error:",
                 "Stack dump:", "PLEASE submit a bug report")

EDGE = [0, 1, -1, 2, 2**31, 2**31 - 1, 2**63 - 1, -(2**63)]


def fixtures(root=ROOT):
    """The frontend fixtures, zoo/ included when it exists."""
    return sorted((root / "test" / "Frontends" / "Inputs").rglob("*.mlir"))


def dim_sizes(text):
    """Static dim sizes that appear in tensor types."""
    sizes = set()
    for shape in re.findall(r"tensor<([0-9?x]+)x", text):
        sizes.update(int(s) for s in shape.split("x") if s.isdigit())
    return sorted(sizes) or [1]


def edge_value(rng, text, old=None):
    """An edge value: fixed ones, a dim size of the file, or size + 1."""
    size = rng.choice(dim_sizes(text))
    choices = EDGE + [size, size + 1, size - 1, size * 2]
    if old is not None:
        choices += [old + 1, old - 1, old * 2, -old]
    return rng.choice(choices)


def _replace_span(text, span, new):
    return text[:span[0]] + new + text[span[1]:]


def _pick(rng, matches):
    matches = list(matches)
    return rng.choice(matches) if matches else None


def mutate_int_constant(rng, text):
    # `arith.constant 3 : index` / `: i64`: extract indices, bounds, offsets.
    m = _pick(rng, re.finditer(r"arith\.constant (-?\d+) : (index|i\d+)\b", text))
    if not m:
        return None
    old = int(m.group(1))
    new = edge_value(rng, text, old)
    return _replace_span(text, m.span(1), str(new)), f"constant {old}->{new}"


def mutate_slice_numbers(rng, text):
    # The static offsets, sizes and strides of extract_slice / insert_slice.
    m = _pick(rng, re.finditer(
        r"tensor\.(?:extract|insert)_slice [^\[\n]*(\[[^\]\n]*\] \[[^\]\n]*\] \[[^\]\n]*\])",
        text))
    if not m:
        return None
    nums = list(re.finditer(r"-?\d+", m.group(1)))
    if not nums:
        return None
    n = rng.choice(nums)
    old = int(n.group(0))
    new = edge_value(rng, text, old)
    start = m.start(1)
    return (_replace_span(text, (start + n.start(), start + n.end()), str(new)),
            f"slice number {old}->{new}")


def _fresh_constant(text, pos, value, ty="index"):
    """Defines `%fz<n> = arith.constant value` at the top of the function
    around `pos` (it dominates every use in it, payloads included); returns
    the text and the name."""
    func = text.rfind("func.func", 0, pos)
    body = text.find("{\n", func)
    if func < 0 or body < 0 or body > pos:
        return None
    n = len(re.findall(r"%fz\d+ = ", text))
    name = f"%fz{n}"
    line = f"    {name} = arith.constant {value} : {ty}\n"
    return text[:body + 2] + line + text[body + 2:], name


def mutate_extract_index(rng, text):
    # One index operand of a tensor.extract replaced by a new constant with
    # an edge value (the dim's size, size + 1, 2^31...) or by another of the
    # function's index constants.
    m = _pick(rng, re.finditer(r"tensor\.extract %[\w.#]+\[([^\]\n]*)\] : tensor<([^>]*)>", text))
    if not m:
        return None
    ops = list(re.finditer(r"%[\w.#]+", m.group(1)))
    if not ops:
        return None
    k = rng.randrange(len(ops))
    op = ops[k]
    dims = m.group(2).split("x")
    size = int(dims[k]) if k < len(dims) - 1 and dims[k].isdigit() else 1
    value = rng.choice([0, 1, size - 1, size, size + 1, 2 * size, 64, 65,
                        2**31, 2**63 - 1, -1])
    start = m.start(1)
    text = _replace_span(text, (start + op.start(), start + op.end()), "%FZ_NEW")
    fresh = _fresh_constant(text, start, value)
    if not fresh:
        return None
    text, name = fresh
    return text.replace("%FZ_NEW", name), f"extract index {op.group(0)}->{value}"


def mutate_dense(rng, text):
    m = _pick(rng, re.finditer(r"dense<(-?[0-9][0-9.e+-]*)>", text))
    if not m:
        return None
    old = m.group(1)
    if re.fullmatch(r"-?\d+", old):
        new = str(edge_value(rng, text, int(old)))
    else:
        new = rng.choice(["0.0", "-1.0", "1.0", "2.0", "1.0e+30", "-0.0", "0.5"])
    return _replace_span(text, m.span(1), new), f"dense {old}->{new}"


def mutate_affine_map(rng, text):
    # A result of an indexing map: a constant changed or a dim replaced by a
    # constant or another dim.
    m = _pick(rng, re.finditer(r"affine_map<\(([^)]*)\)(?:\[[^\]]*\])? -> \(([^)]*)\)>", text))
    if not m:
        return None
    dims = [d.strip() for d in m.group(1).split(",") if d.strip()]
    results = list(re.finditer(r"[^,\s][^,]*", m.group(2)))
    if not results:
        return None
    r = rng.choice(results)
    choices = dims + ["0", "1", str(edge_value(rng, text))]
    new = rng.choice(choices)
    start = m.start(2)
    return (_replace_span(text, (start + r.start(), start + r.end()), new),
            f"map result {r.group(0)}->{new}")


def mutate_linalg_index(rng, text):
    m = _pick(rng, re.finditer(r"linalg\.index (\d+)", text))
    if not m:
        return None
    old = int(m.group(1))
    new = rng.choice([0, 1, 2, 3, 4, old + 1, max(old - 1, 0)])
    return _replace_span(text, m.span(1), str(new)), f"linalg.index {old}->{new}"


def mutate_shape(rng, text):
    # One dim size renamed in every tensor type and output_shape of the file:
    # types stay consistent, slices and constants that depend on it do not.
    sizes = [s for s in dim_sizes(text) if s > 1] or dim_sizes(text)
    old = rng.choice(sizes)
    new = rng.choice([1, 2, old + 1, old * 2, max(old // 2, 1), 2**31, 2**40])
    if new == old:
        new = old + 1
    pattern = re.compile(r"(?<=[<x])" + str(old) + r"(?=x)")

    def in_type(m):
        return pattern.sub(str(new), m.group(0))
    out = re.sub(r"tensor<[0-9?x]+x", in_type, text)
    same = lambda m: re.sub(r"\b" + str(old) + r"\b", str(new), m.group(0))
    out = re.sub(r"output_shape \[[^\]]*\]", same, out)
    # The sizes of slices (the middle list), which are often the dim.
    out = re.sub(r"(?<=\] )\[[^\]\n]*\](?= \[)", same, out)
    return out, f"shape {old}->{new}"


BINARY = r"(arith\.(?:addf|subf|mulf|divf|addi|subi|muli|maximumf|minimumf)|complex\.(?:add|sub|mul|div))"


def mutate_swap(rng, text):
    m = _pick(rng, re.finditer(BINARY + r" (%[\w.#]+), (%[\w.#]+)", text))
    if not m:
        return None
    new = f"{m.group(1)} {m.group(3)}, {m.group(2)}"
    return _replace_span(text, m.span(), new), f"swap {m.group(1)}"


def mutate_sign(rng, text):
    m = _pick(rng, re.finditer(r"(arith|complex)\.(addf|subf|add|sub)\b", text))
    if not m:
        return None
    flip = {"addf": "subf", "subf": "addf", "add": "sub", "sub": "add"}
    new = f"{m.group(1)}.{flip[m.group(2)]}"
    return _replace_span(text, m.span(), new), f"{m.group(0)}->{new}"


def mutate_negation(rng, text):
    negs = list(re.finditer(r"^( *)(%[\w.]+) = arith\.negf (%[\w.]+) : (\S+)\n", text, re.M))
    if negs and rng.random() < 0.5:
        m = rng.choice(negs)
        result, operand = m.group(2), m.group(3)
        if rng.random() < 0.5:
            # Removed: the uses read the operand, up to where the name is
            # defined again (payloads reuse names).
            rest = text[m.end():]
            again = re.search(r"^\s*" + re.escape(result) + r" = ", rest, re.M)
            cut = again.start() if again else len(rest)
            uses = re.sub(re.escape(result) + r"(?![\w.])", operand, rest[:cut])
            return text[:m.start()] + uses + rest[cut:], f"negation {result} removed"
        # Duplicated: negf(negf(x)). (A fresh name: `%42_neg` is not one.)
        inner = f"%fzn{len(re.findall(r'%fzn[0-9]+ = ', text))}"
        line = (f"{m.group(1)}{inner} = arith.negf {operand} : {m.group(4)}\n"
                f"{m.group(1)}{result} = arith.negf {inner} : {m.group(4)}\n")
        return _replace_span(text, m.span(), line), f"negation {result} doubled"
    # Added after a float multiply or add.
    m = _pick(rng, re.finditer(
        r"^( *)(%[\w.]+) = (arith\.(?:mulf|addf|subf) [^\n:]+) : (f\d+|bf16)\n", text, re.M))
    if not m:
        return None
    indent, result, body, ty = m.groups()
    pre = f"%fzn{len(re.findall(r'%fzn[0-9]+ = ', text))}"
    line = (f"{indent}{pre} = {body} : {ty}\n"
            f"{indent}{result} = arith.negf {pre} : {ty}\n")
    return _replace_span(text, m.span(), line), f"negation added at {result}"


MUTATIONS = {
    "constant": (mutate_int_constant, 4),
    "slice": (mutate_slice_numbers, 3),
    "extract-index": (mutate_extract_index, 3),
    "dense": (mutate_dense, 1),
    "affine-map": (mutate_affine_map, 2),
    "linalg-index": (mutate_linalg_index, 1),
    "shape": (mutate_shape, 2),
    "swap": (mutate_swap, 2),
    "sign": (mutate_sign, 1),
    "negation": (mutate_negation, 1),
}


def mutate(text, rng, steps=None):
    """Applies 1-3 mutations; returns the text and what was done."""
    names = list(MUTATIONS)
    weights = [MUTATIONS[n][1] for n in names]
    done = []
    for _ in range(steps or rng.choice([1, 1, 1, 2, 3])):
        for _attempt in range(8):
            name = rng.choices(names, weights)[0]
            result = MUTATIONS[name][0](rng, text)
            if result and result[0] != text:
                text = result[0]
                done.append(result[1])
                break
    return text, done


def mutants(seed, count, root=ROOT):
    """(index, fixture, text, description) for mutants 0..count-1: each a
    function of (seed, index) and the list of fixtures."""
    files = fixtures(root)
    # Round robin, three turns in four over the small fixtures (one function
    # each: one index is the whole difference there, and they are fast), the
    # fourth over all of them (the whole-model exports in zoo/ included).
    def size(f):
        try:
            return f.stat().st_size
        except OSError:
            return 0
    small = [f for f in files if size(f) < 64 * 1024] or files
    texts = {}
    for i in range(count):
        rng = random.Random(f"{seed}:{i}")
        if i % 4 == 3:
            path = files[(i // 4 + seed) % len(files)]
        else:
            path = small[(i - i // 4 + seed) % len(small)]
        if path not in texts:
            try:
                texts[path] = path.read_text()
            except OSError:
                # A fixture removed while the run lists them (regenerated).
                texts[path] = None
        if texts[path] is None:
            continue
        text, done = mutate(texts[path], rng)
        yield i, path, text, done


def pipelines(lower):
    out = [["--rope-raise=remarks=true"], ["--rope-optimize"]]
    if lower:
        out.append(["--rope-optimize", "--rope-to-llvm-cpu"])
    return out


def classify(proc_rc, stderr):
    if proc_rc is None:
        return "timeout"
    if proc_rc < 0:
        return f"signal {-proc_rc}"
    for marker in CRASH_MARKERS:
        if marker in stderr:
            return marker
    if proc_rc not in (0, 1):
        return f"exit {proc_rc}"
    return None


def summary(stderr, lines=3):
    """The lines of a crash report that say what and where: the error or
    sanitizer line, then the first frames in rope code."""
    out = [l.strip() for l in stderr.splitlines()
           if any(m in l for m in CRASH_MARKERS[:6]) or "SUMMARY:" in l]
    frames = [l.strip() for l in stderr.splitlines()
              if re.match(r"\s*#\d+ ", l) and "rope" in l and "llvm::sys" not in l]
    return (out[:1] + frames)[:lines]


def run_one(rope_opt, path, args, timeout):
    env = dict(os.environ)
    # A sanitized rope-opt: reports are fatal and on stderr, and their exit
    # status is not 1 (ASan's default, a clean error's status here).
    # allow_user_poisoning=0: see scripts/test-sanitizers.sh.
    asan = env.get("ASAN_OPTIONS", "allow_user_poisoning=0:halt_on_error=1")
    env["ASAN_OPTIONS"] = asan + ":exitcode=86:log_path=stderr"
    ubsan = env.get("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1")
    env["UBSAN_OPTIONS"] = ubsan + ":exitcode=86:log_path=stderr"
    try:
        proc = subprocess.run([rope_opt, str(path), *args, "-o", os.devnull],
                              capture_output=True, text=True, errors="replace",
                              timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None, ""
    return proc.returncode, proc.stderr


def check(rope_opt, mutant_path, lower, timeout):
    """The first finding of a mutant file, (args, reason, stderr) or None,
    and whether the raise accepted the mutant (it parsed and verified)."""
    accepted = False
    for args in pipelines(lower):
        rc, stderr = run_one(rope_opt, mutant_path, args, timeout)
        reason = classify(rc, stderr)
        if reason:
            return (args, reason, stderr), accepted
        accepted |= rc == 0
    return None, accepted


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--count", type=int, default=300)
    p.add_argument("--time", type=float, default=0,
                   help="stop starting mutants after S seconds (0: no bound)")
    p.add_argument("--rope-opt", default=str(ROOT / "build" / "bin" / "rope-opt"))
    p.add_argument("--out", default="mutate-findings")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--timeout", type=float, default=60,
                   help="per rope-opt run, seconds")
    p.add_argument("--lower", action="store_true",
                   help="also run --rope-optimize --rope-to-llvm-cpu")
    p.add_argument("--keep", action="store_true",
                   help="keep the mutants that found nothing too")
    args = p.parse_args(argv)
    if not os.access(args.rope_opt, os.X_OK):
        print(f"mutate_frontend: no rope-opt at {args.rope_opt}", file=sys.stderr)
        return 2
    out = pathlib.Path(args.out)
    work = out / "work"
    work.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    findings = []
    ran = 0
    valid = 0

    def task(item):
        i, path, text, done = item
        name = f"{path.stem}-s{args.seed}-m{i}.mlir"
        mutant = work / name
        mutant.write_text(text)
        result, accepted = check(args.rope_opt, mutant, args.lower, args.timeout)
        if result:
            final = out / name
            mutant.replace(final)
            return i, path, done, result, final, accepted
        if not args.keep:
            mutant.unlink()
        return i, path, done, None, mutant, accepted

    def items():
        for item in mutants(args.seed, args.count):
            if args.time and time.monotonic() - start > args.time:
                return
            yield item

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(args.jobs, 1)) as pool:
        pending = set()
        source = items()
        for item in source:
            pending.add(pool.submit(task, item))
            if len(pending) >= 2 * max(args.jobs, 1):
                finished, pending = concurrent.futures.wait(
                    pending, return_when=concurrent.futures.FIRST_COMPLETED)
                for f in finished:
                    r = f.result()
                    ran += 1
                    valid += r[5]
                    if r[3]:
                        findings.append(r)
        for f in concurrent.futures.as_completed(pending):
            r = f.result()
            ran += 1
            valid += r[5]
            if r[3]:
                findings.append(r)

    findings.sort(key=lambda r: r[0])
    for i, path, done, (pargs, reason, stderr), final, _ in findings:
        rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
        print(f"FINDING mutant {i} of {rel} ({'; '.join(done)}): {reason}")
        print(f"  {args.rope_opt} {final} {' '.join(pargs)}")
        for line in summary(stderr):
            print(f"    {line[:200]}")
    elapsed = time.monotonic() - start
    print(f"mutate_frontend: seed {args.seed}: {ran} mutants of "
          f"{len(fixtures())} fixtures ({valid} valid IR), "
          f"{len(findings)} findings, "
          f"{elapsed:.0f} s")
    try:
        work.rmdir()
    except OSError:
        pass
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
