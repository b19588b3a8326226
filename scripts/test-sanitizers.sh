#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Builds rope-mlir with AddressSanitizer and UndefinedBehaviorSanitizer (and
# libFuzzer coverage, so the same build serves scripts/fuzz.sh) in a build
# directory of its own, then runs the lit suite and the Python tests against
# it. Every sanitizer report is fatal to the process that hits it and is also
# written under <build>/sanitizer-reports; the script fails if any stage fails
# or any report was written. docs/RELIABILITY.md explains the set-up.
#
# usage: scripts/test-sanitizers.sh [--build-only | --no-python] [PYTEST_ARGS...]
#   PYTEST_ARGS (default: python/tests) choose the Python tests to run.
#   ROPE_ASAN_BUILD_DIR  the build directory (default: build-asan)
# Needs what scripts/setup.sh installs; adds the clang runtimes
# (libclang-rt-22-dev).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${ROPE_ASAN_BUILD_DIR:-$ROOT/build-asan}"
LLVM=/usr/lib/llvm-22
PYTHON="${PYTHON:-python3}"

mode=all
case "${1:-}" in
  --build-only) mode=build; shift ;;
  --no-python) mode=lit; shift ;;
esac
pytest_args=("$@")
[ ${#pytest_args[@]} -gt 0 ] || pytest_args=(python/tests)

if ! dpkg -s libclang-rt-22-dev >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null; then SUDO=sudo; fi
  echo "test-sanitizers: installing libclang-rt-22-dev"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    libclang-rt-22-dev || exit 1
fi

# Release flags without -DNDEBUG: the project's own assertions (and the
# inline ones of the LLVM/MLIR headers it instantiates) are on. -O1 as LLVM's
# sanitized builds.
if [ ! -f "$BUILD/build.ninja" ]; then
  cmake -G Ninja -S "$ROOT" -B "$BUILD" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS_RELEASE=-O1 -DCMAKE_CXX_FLAGS_RELEASE=-O1 \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DMLIR_DIR="$LLVM/lib/cmake/mlir" \
    -DLLVM_EXTERNAL_LIT="$LLVM/bin/lit" \
    -DROPE_SANITIZE=address,undefined -DROPE_ENABLE_FUZZER=ON || exit 1
fi
start=$SECONDS
ninja -C "$BUILD" || exit 1
echo "test-sanitizers: build took $((SECONDS - start)) s"
[ "$mode" = build ] && exit 0

ASAN_RUNTIME="$(clang-22 -print-file-name=libclang_rt.asan-x86_64.so)"
REPORTS="$BUILD/sanitizer-reports"
rm -rf "$REPORTS"
mkdir -p "$REPORTS" "$BUILD/test-results"
# allow_user_poisoning=0: the instrumented code inlines LLVM's allocators,
# which poison memory that the uninstrumented libMLIR then uses (false
# use-after-poison). abort_on_error: a report kills the process with SIGABRT,
# which also fails RUN lines that expect an error (`not` fails on a crash).
# allocator_may_return_null=1: malloc returns NULL for a request it cannot
# serve, as the C library does, instead of reporting it; the JIT's malloc
# turns that NULL into MemoryError (test_jit_runtime_safety.py asks it for
# 4 TiB on purpose).
export ASAN_SYMBOLIZER_PATH="$LLVM/bin/llvm-symbolizer"
export UBSAN_SYMBOLIZER_PATH="$ASAN_SYMBOLIZER_PATH"
asan="allow_user_poisoning=0:halt_on_error=1:abort_on_error=1:allocator_may_return_null=1"
# log_path: pytest captures stderr, and a process that aborts loses it.
asan+=":log_path=$REPORTS/report:log_exe_name=1"
export UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1:log_path=$REPORTS/report:log_exe_name=1"
status=0

echo "== lit suite under ASan+UBSan"
# rope-opt links the sanitizer runtime itself, with leak checking. The plugin
# test loads RopePlugin.so into the stock (uninstrumented) mlir-opt, which
# needs the runtime preloaded; leaks of the host are not ours to report.
ASAN_OPTIONS="$asan" "$LLVM/bin/lit" -sv "$BUILD/test" --filter-out '^ROPE :: Plugin/' \
  --xunit-xml-output="$BUILD/test-results/lit-asan.xml" || status=1
LD_PRELOAD="$ASAN_RUNTIME" ASAN_OPTIONS="$asan:detect_leaks=0" \
  "$LLVM/bin/lit" -sv "$BUILD/test" --filter '^ROPE :: Plugin/' \
  --xunit-xml-output="$BUILD/test-results/lit-asan-plugin.xml" || status=1

if [ "$mode" = all ]; then
  echo "== python tests under ASan+UBSan (${pytest_args[*]})"
  # CPython is uninstrumented and does not free everything at exit: no leak
  # checking in it. The package loads the sanitized libRopeJit.so.
  (cd "$ROOT" && LD_PRELOAD="$ASAN_RUNTIME" ASAN_OPTIONS="$asan:detect_leaks=0" \
    ROPE_MLIR_LIBRARY="$BUILD/lib/libRopeJit.so" \
    "$PYTHON" -m pytest -q -p no:cacheprovider "${pytest_args[@]}" \
    --junitxml="$BUILD/test-results/pytest-asan.xml") || status=1
fi

# With allocator_may_return_null=1 a request the allocator cannot serve
# returns NULL (which the code under test turns into MemoryError) and ASan
# still logs one "failed to allocate" warning: an expected event, not a
# finding. A file holding only such lines is reported here and removed.
for report in "$REPORTS"/*; do
  [ -f "$report" ] || continue
  if ! grep -qv "WARNING: AddressSanitizer failed to allocate" "$report"; then
    echo "test-sanitizers: refused allocation, as asked: $(head -n 1 "$report")"
    rm -f "$report"
  fi
done
reports=$(find "$REPORTS" -type f | wc -l)
if [ "$reports" -gt 0 ]; then
  status=1
  for report in "$REPORTS"/*; do
    echo "---- $report"
    head -n 60 "$report"
  done
fi
echo "test-sanitizers: $reports sanitizer reports, took $((SECONDS - start)) s in all"
exit $status
