#!/usr/bin/env bash
# The differential fuzzer (tests/fuzz/README.md): its self-test, then the CI range of seeds.
# Usage: tests/fuzz/run.sh <path to the hoodie binary> [more fuzz.py flags]
set -euo pipefail
HOODIE=$(realpath "${1:?usage: run.sh <hoodie binary> [fuzz.py flags]}")
shift
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=$(bash "$HERE/venv.sh")
"$VENV/bin/python" "$HERE/selftest.py" --hoodie "$HOODIE"
"$VENV/bin/python" "$HERE/fuzz.py" --hoodie "$HOODIE" --seeds 0..299 --statements 22 "$@"
