#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Fuzzes rope IR and the rope passes with tools/rope-fuzz (libFuzzer, ASan,
# UBSan) from the sanitized build of scripts/test-sanitizers.sh, which it
# builds when missing. docs/RELIABILITY.md says what the harness covers.
#
# usage: scripts/fuzz.sh [--time SECONDS] [--seed N] [--keep-going] [--ci]
#                        [-- LIBFUZZER_ARGS...]
#   --time S      run for S seconds (default 600), growing the corpus kept in
#                 <build>/fuzz/corpus between runs
#   --keep-going  record crashes, timeouts and OOMs and go on (libFuzzer's
#                 -fork=1 -ignore_*), for long runs
#   --ci          the suite's short deterministic run: seed 1, a fixed number
#                 of inputs (ROPE_FUZZ_CI_RUNS, default 12000: about 1 min,
#                 capped at 150 s), from the seeds alone, nothing kept; then
#                 the mutation fuzzer over the frontend fixtures
#                 (test/fuzz/mutate_frontend.py: seed 1, ROPE_FUZZ_CI_MUTANTS
#                 mutants, default 400, capped at 150 s) through the
#                 sanitized rope-opt
#   ROPE_ASAN_BUILD_DIR  the sanitized build (default: build-asan)
# Seeds are rebuilt at every run from test/**/*.mlir and the Hugging Face
# fixtures (test/fuzz/make_corpus.py). Crashing inputs land in
# <build>/fuzz/artifacts; each is one selector byte and the text:
# `ROPE_FUZZ_VERBOSE=1 <build>/bin/rope-fuzz FILE` replays it and prints the
# rope-opt command; `tail -c +2 FILE` is the MLIR.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${ROPE_ASAN_BUILD_DIR:-$ROOT/build-asan}"
PYTHON="${PYTHON:-python3}"

time=600
seed=""
ci=0
keep_going=0
while [ $# -gt 0 ]; do
  case "$1" in
    --time) time="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --ci) ci=1; shift ;;
    --keep-going) keep_going=1; shift ;;
    --) shift; break ;;
    *) echo "fuzz.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

FUZZ="$BUILD/bin/rope-fuzz"
if [ ! -f "$BUILD/build.ninja" ]; then
  ROPE_ASAN_BUILD_DIR="$BUILD" bash "$ROOT/scripts/test-sanitizers.sh" --build-only || exit 1
fi
ninja -C "$BUILD" rope-fuzz rope-opt > /dev/null || exit 1

WORK="$BUILD/fuzz"
rm -rf "$WORK/seeds"
mkdir -p "$WORK/seeds" "$WORK/corpus" "$WORK/artifacts"
"$PYTHON" "$ROOT/test/fuzz/make_corpus.py" "$FUZZ" "$ROOT" "$WORK/seeds" || exit 1

export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-22/bin/llvm-symbolizer
# See scripts/test-sanitizers.sh for allow_user_poisoning=0.
export ASAN_OPTIONS="allow_user_poisoning=0:halt_on_error=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"

# -timeout: a pipeline on one small input takes well under a second, even
# sanitized. -rss_limit_mb also limits single allocations: a 2 GiB table
# from a small input is a finding. -max_len: the compacted frontend fixtures
# (make_corpus.py) are 5 to 16 KB; a longer seed is cut, and no longer parses.
args=(-dict="$ROOT/test/fuzz/rope.dict" -timeout=30 -rss_limit_mb=2048
      -max_len=16384 -print_final_stats=1 -artifact_prefix="$WORK/artifacts/")
# A private copy of the harness: a rebuild during a long run must not swap
# the binary under libFuzzer's -fork workers.
binary="$(mktemp "$WORK/rope-fuzz.XXXXXX")"
cp "$FUZZ" "$binary"
chmod +x "$binary"
trap 'rm -f "$binary"' EXIT
if [ $ci -eq 1 ]; then
  corpus="$(mktemp -d)"
  trap 'rm -rf "$corpus" "$binary"' EXIT
  # Half the libFuzzer inputs of before the mutation fuzzer joined the run,
  # so that the two together take no longer than the libFuzzer run alone.
  args+=(-seed="${seed:-1}" -runs="${ROPE_FUZZ_CI_RUNS:-12000}" -max_total_time=150)
else
  corpus="$WORK/corpus"
  args+=(-max_total_time="$time")
  [ -n "$seed" ] && args+=(-seed="$seed")
  [ $keep_going -eq 1 ] && args+=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1
                                  -ignore_ooms=1)
fi

echo "fuzz.sh: $FUZZ ${args[*]} $* $corpus $WORK/seeds"
start=$SECONDS
before=$(find "$WORK/artifacts" -type f | wc -l)
"$binary" "${args[@]}" "$@" "$corpus" "$WORK/seeds"
rc=$?
found=$(( $(find "$WORK/artifacts" -type f | wc -l) - before ))
echo "fuzz.sh: exit $rc after $((SECONDS - start)) s; corpus" \
  "$(find "$corpus" -type f | wc -l) inputs; $found new findings in $WORK/artifacts"
[ $found -eq 0 ] || rc=1

if [ $ci -eq 1 ]; then
  # Structure-aware mutants of real frontend IR through the raise: libFuzzer
  # rarely keeps a 10-20 KB torch-mlir export parseable, and the raise reads
  # indices and sizes from exactly the numbers this mutator edits.
  mstart=$SECONDS
  rm -rf "$WORK/mutants"
  "$PYTHON" "$ROOT/test/fuzz/mutate_frontend.py" --seed "${seed:-1}" \
    --count "${ROPE_FUZZ_CI_MUTANTS:-400}" --time 150 --jobs 2 \
    --rope-opt "$BUILD/bin/rope-opt" --out "$WORK/mutants"
  mrc=$?
  echo "fuzz.sh: mutation fuzzer exit $mrc after $((SECONDS - mstart)) s;" \
    "findings (if any) in $WORK/mutants"
  [ $mrc -eq 0 ] || rc=1
fi
exit $rc
