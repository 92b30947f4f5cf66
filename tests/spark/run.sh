#!/usr/bin/env bash
# The Spark stage of the tests (tests/spark/README.md): installs Spark with Hudi if the caches
# lack it, starts one Spark session for the whole stage, and runs against it
#   1. the self-test: a planted wrong expectation and a planted wrong row are caught;
#   2. sql-tests/ with Spark as the oracle (hoodie-slt --engine spark);
#   3. Spark reads the tables hoodie writes, as hoodie reads them (read_hoodie.py), once with
#      tables of version 6 and once of version 9, hoodie's default (read9);
#   4. hoodie reads the tables Spark writes by default, as Spark reads them (spark_tables.py);
#   5. Spark and hoodie take turns on one table (turns.py);
#   6. the differential fuzzer asks Spark too, on a small range of seeds.
# Usage: tests/spark/run.sh <hoodie binary> <hoodie-slt binary> [stage ...]
# (stages: selftest slt read read9 tables turns fuzz; all when none are named)
set -euo pipefail
HOODIE=$(realpath "${1:?usage: run.sh <hoodie binary> <hoodie-slt binary> [stage ...]}")
SLT=$(realpath "${2:?usage: run.sh <hoodie binary> <hoodie-slt binary> [stage ...]}")
shift 2
STAGES=${*:-selftest slt read read9 tables turns fuzz}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
WORK=$(mktemp -d)
# stop Spark (started by start.sh, not a child: wait up to 10 s for it) before its folder goes
trap 'kill "${HOODIE_SPARK_PID:-0}" 2>/dev/null || true
  for _ in $(seq 50); do kill -0 "${HOODIE_SPARK_PID:-0}" 2>/dev/null || break; sleep 0.2; done
  rm -rf "$WORK" || true' EXIT
eval "$(bash "$HERE/start.sh" "$WORK/server")"
PY=$HOODIE_SPARK_PYTHON
# seeds of the fuzzer that also run through Spark in CI (more: HOODIE_SPARK_FUZZ_SEEDS=0..99)
FUZZ_SEEDS=${HOODIE_SPARK_FUZZ_SEEDS:-0..9}

stage() {
  local name=$1
  shift
  local t0=$SECONDS
  echo "== spark: $name"
  "$@"
  echo "== spark: $name done in $((SECONDS - t0)) s"
}

for s in $STAGES; do
  case $s in
    selftest) stage selftest "$PY" "$HERE/selftest.py" "$HOODIE" "$SLT" "$WORK/selftest" ;;
    slt) stage sql-tests "$SLT" --engine spark --jobs 3 "$ROOT/sql-tests" ;;
    read) stage "reads of hoodie's tables" "$PY" "$HERE/read_hoodie.py" "$HOODIE" "$WORK/read" ;;
    read9) stage "reads of hoodie's version 9 tables" "$PY" "$HERE/read_hoodie.py" "$HOODIE" "$WORK/read9" 9 ;;
    tables) stage "reads of Spark's tables" "$PY" "$HERE/spark_tables.py" "$HOODIE" "$WORK/tables" ;;
    turns) stage turns "$PY" "$HERE/turns.py" "$HOODIE" "$WORK/turns" ;;
    fuzz)
      VENV=$(bash "$ROOT/tests/fuzz/venv.sh")
      stage "fuzzer with Spark" "$VENV/bin/python" "$ROOT/tests/fuzz/fuzz.py" --hoodie "$HOODIE" \
        --spark --seeds "$FUZZ_SEEDS" ;;
    *) echo "run.sh: unknown stage $s (selftest slt read read9 tables turns fuzz)" >&2; exit 2 ;;
  esac
done
