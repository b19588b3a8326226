#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The whole test suite: set-up (deps + build), the lit suite (dialect, passes,
# pipelines, plugin, CPU execution), the downstream find_package project, the
# installed tools run from a temporary prefix (test/install), the wheel
# installed into a fresh venv and smoke-tested there (test/wheel), the Python tests
# (numerics, package, ONNX), and the sanitizer stage (lit and the Python tests
# on an ASan+UBSan build, a short fuzz run; docs/RELIABILITY.md;
# ROPE_TEST_SANITIZERS=0 skips it). Ends with one summary line.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${ROPE_BUILD_DIR:-$ROOT/build}"
LLVM=/usr/lib/llvm-22
PYTHON="${PYTHON:-python3}"

# Each stage's wall time, printed as it ends and again in the summary (CI
# must stay under 45 minutes on a loaded 2-core machine).
stage_name=""
stage_start=$SECONDS
suite_start=$SECONDS
timings=()
stage() {
  if [ -n "$stage_name" ]; then
    local took=$((SECONDS - stage_start))
    echo "-- $stage_name took ${took} s"
    timings+=("$(printf '%-44s %5d s' "$stage_name" "$took")")
  fi
  stage_name="$1"
  stage_start=$SECONDS
  [ -n "$stage_name" ] && echo "== $stage_name"
}

stage "set-up (deps, build)"
bash "$ROOT/scripts/setup.sh" || { echo "total: 0 passed, 1 failed"; exit 1; }
status=0
mkdir -p "$BUILD/test-results"

stage "lit suite"
"$LLVM/bin/lit" -sv "$BUILD/test" \
  --xunit-xml-output="$BUILD/test-results/lit.xml" || status=1

stage "downstream find_package(RopeMLIR) project"
bash "$ROOT/test/downstream/run.sh" "$BUILD" \
  > "$BUILD/test-results/downstream.log" 2>&1
downstream=$?
tail -n 5 "$BUILD/test-results/downstream.log"
[ $downstream -eq 0 ] || { status=1; cat "$BUILD/test-results/downstream.log"; }

stage "installed artifacts run from the prefix"
bash "$ROOT/test/install/run.sh" "$BUILD" \
  > "$BUILD/test-results/install.log" 2>&1
install=$?
tail -n 5 "$BUILD/test-results/install.log"
[ $install -eq 0 ] || { status=1; cat "$BUILD/test-results/install.log"; }

stage "the wheel, installed into a fresh venv"
bash "$ROOT/test/wheel/run.sh" "$BUILD" \
  > "$BUILD/test-results/wheel.log" 2>&1
wheel=$?
grep "^wheel: " "$BUILD/test-results/wheel.log"
[ $wheel -eq 0 ] || { status=1; cat "$BUILD/test-results/wheel.log"; }

stage "python tests"
(cd "$ROOT" && "$PYTHON" -m pytest -q -p no:cacheprovider python/tests \
  --junitxml="$BUILD/test-results/pytest.xml") || status=1

# The sanitizer stage: the sanitized build from scratch, lit, and the Python
# tests that reach native code with hostile input (docs/RELIABILITY.md has
# the measured times).
sanitizers=()
if [ "${ROPE_TEST_SANITIZERS:-1}" != 0 ]; then
  ASAN_BUILD="${ROPE_ASAN_BUILD_DIR:-$ROOT/build-asan}"
  rm -rf "$ASAN_BUILD/sanitizer-reports" "$ASAN_BUILD"/test-results/*asan*.xml
  stage "sanitizers: build, lit, native-reaching python tests"
  # The Python tests that drive native code with hostile, malformed or
  # unusual input (python/tests/sanitized.txt); the whole Python suite runs
  # above on the normal build (docs/RELIABILITY.md says why and what it
  # costs: `scripts/test-sanitizers.sh` alone runs all of it).
  mapfile -t sanitized < <(grep -v '^#' "$ROOT/python/tests/sanitized.txt" | sed '/^$/d; s|^|python/tests/|')
  ROPE_ASAN_BUILD_DIR="$ASAN_BUILD" bash "$ROOT/scripts/test-sanitizers.sh" "${sanitized[@]}" || status=1
  reports=$(find "$ASAN_BUILD/sanitizer-reports" -type f 2>/dev/null | wc -l)
  stage "fuzzing (scripts/fuzz.sh --ci)"
  ROPE_ASAN_BUILD_DIR="$ASAN_BUILD" bash "$ROOT/scripts/fuzz.sh" --ci \
    > "$BUILD/test-results/fuzz.log" 2>&1
  fuzz=$?
  tail -n 3 "$BUILD/test-results/fuzz.log"
  [ $fuzz -eq 0 ] || { status=1; tail -n 80 "$BUILD/test-results/fuzz.log"; }
  sanitizers=("$ASAN_BUILD/test-results/lit-asan.xml"
              "$ASAN_BUILD/test-results/lit-asan-plugin.xml"
              "$ASAN_BUILD/test-results/pytest-asan.xml"
              "sanitizer-reports=$reports" "fuzz=$fuzz")
fi

stage ""
echo "== stage times"
printf '%s\n' "${timings[@]}"
echo "whole suite: $((SECONDS - suite_start)) s"

# Arguments after the first two: more JUnit files, and name=status checks
# that count as one test each (0 passes).
"$PYTHON" - "$BUILD/test-results" "$downstream" "install=$install" "wheel=$wheel" \
  "${sanitizers[@]}" <<'PY'
import sys, pathlib, xml.etree.ElementTree as ET
passed = failed = skipped = 0
results = pathlib.Path(sys.argv[1])
files = [results / "lit.xml", results / "pytest.xml"]
checks = [sys.argv[2]]
for arg in sys.argv[3:]:
    if arg.endswith(".xml"):
        files.append(pathlib.Path(arg))
    else:
        checks.append(arg.partition("=")[2])
for path in files:
    if not path.exists():
        failed += 1
        continue
    for suite in ET.parse(path).getroot().iter("testsuite"):
        tests = int(suite.get("tests", 0))
        bad = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
        skip = int(suite.get("skipped", 0))
        # lit lists the tests a --filter left out as skipped: not run here.
        unselected = sum(1 for s in suite.iter("skipped")
                         if s.get("message", "").startswith("Test not selected"))
        tests -= unselected
        skip -= unselected
        passed += tests - bad - skip
        failed += bad
        skipped += skip
for check in checks:
    if check == "0":
        passed += 1
    else:
        failed += 1
print(f"total: {passed} passed, {failed} failed, {skipped} skipped")
PY
exit $status
