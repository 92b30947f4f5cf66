#!/usr/bin/env bash
# The differential fuzzer (tests/fuzz/README.md): its self-test, then the CI range of seeds.
# Usage: tests/fuzz/run.sh <path to the hoodie binary> [more fuzz.py flags]
set -euo pipefail
HOODIE=$(realpath "${1:?usage: run.sh <hoodie binary> [fuzz.py flags]}")
shift
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=${HOODIE_FUZZ_VENV:-$HERE/../../target/fuzz-venv}
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c "import duckdb, hudi, pyarrow" 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet -r "$HERE/requirements.txt"
fi
"$VENV/bin/python" "$HERE/selftest.py" --hoodie "$HOODIE"
"$VENV/bin/python" "$HERE/fuzz.py" --hoodie "$HOODIE" --seeds 0..299 --statements 22 "$@"
