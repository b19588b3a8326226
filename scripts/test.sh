#!/usr/bin/env bash
# The whole test suite: set-up (deps + build), the lit suite (dialect, passes,
# pipelines, plugin, CPU execution), the downstream find_package project, and
# the Python tests (numerics, package, ONNX). Ends with one summary line.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="${ROPE_BUILD_DIR:-$ROOT/build}"
LLVM=/usr/lib/llvm-22
PYTHON="${PYTHON:-python3}"

bash "$ROOT/scripts/setup.sh" || { echo "total: 0 passed, 1 failed"; exit 1; }
status=0
mkdir -p "$BUILD/test-results"

echo "== lit suite"
"$LLVM/bin/lit" -sv "$BUILD/test" \
  --xunit-xml-output="$BUILD/test-results/lit.xml" || status=1

echo "== downstream find_package(RopeMLIR) project"
bash "$ROOT/test/downstream/run.sh" "$BUILD" \
  > "$BUILD/test-results/downstream.log" 2>&1
downstream=$?
tail -n 5 "$BUILD/test-results/downstream.log"
[ $downstream -eq 0 ] || { status=1; cat "$BUILD/test-results/downstream.log"; }

echo "== python tests"
(cd "$ROOT" && "$PYTHON" -m pytest -q -p no:cacheprovider python/tests \
  --junitxml="$BUILD/test-results/pytest.xml") || status=1

"$PYTHON" - "$BUILD/test-results" "$downstream" <<'PY'
import sys, pathlib, xml.etree.ElementTree as ET
passed = failed = skipped = 0
for name in ("lit.xml", "pytest.xml"):
    path = pathlib.Path(sys.argv[1]) / name
    if not path.exists():
        failed += 1
        continue
    for suite in ET.parse(path).getroot().iter("testsuite"):
        tests = int(suite.get("tests", 0))
        bad = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
        skip = int(suite.get("skipped", 0))
        passed += tests - bad - skip
        failed += bad
        skipped += skip
if sys.argv[2] == "0":
    passed += 1
else:
    failed += 1
print(f"total: {passed} passed, {failed} failed, {skipped} skipped")
PY
exit $status
