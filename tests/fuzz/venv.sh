#!/usr/bin/env bash
# Makes the fuzzer's Python environment (DuckDB, hudi-rs, pyarrow) if it is missing and prints
# its path. Usage: tests/fuzz/venv.sh
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=${HOODIE_FUZZ_VENV:-$HERE/../../target/fuzz-venv}
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c "import duckdb, hudi, pyarrow" 2>/dev/null; then
  python3 -m venv "$VENV" >&2
  "$VENV/bin/pip" install --quiet -r "$HERE/requirements.txt" >&2
fi
echo "$VENV"
