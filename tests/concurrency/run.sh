#!/usr/bin/env bash
# Concurrency stress test on local disk (tests/concurrency/README.md): N writer processes x M
# statements on one table under optimistic concurrency control, copy-on-write and
# merge-on-read; first a self-test: the same run in single-writer mode must be caught.
# Usage: tests/concurrency/run.sh <path to the hoodie binary>
set -euo pipefail
HOODIE=$(realpath "${1:?usage: run.sh <hoodie binary>}")
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=${HOODIE_S3_VENV:-${HOODIE_CACHE:-$HOME/.cache/hoodie}/s3-venv}
if ! "$VENV/bin/python" -c "import hudi, pyarrow" 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet "moto[server]" "hudi==0.5.0" pyarrow
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
stress() { "$VENV/bin/python" "$HERE/stress.py" --hoodie "$HOODIE" "$@"; }
# the self-test: writers that overlap in single-writer mode roll back each other's writes or
# lose updates; a run in which they happen not to overlap is retried with another seed
caught=""
for seed in 1 2 3; do
  if ! stress --location "$WORK/self$seed/t" --work "$WORK/self$seed/w" --writers 4 --statements 8 \
      --seed "$seed" --mode single_writer > "$WORK/self.txt" 2>&1; then
    grep -q "^FAIL" "$WORK/self.txt" || { echo "FAIL self-test: $(cat "$WORK/self.txt")"; exit 1; }
    caught=$(grep -o '^FAIL [a-z0-9 ]*' "$WORK/self.txt" | head -1)
    break
  fi
done
[ -n "$caught" ] || { echo "FAIL self-test: single-writer mode under concurrent writers passed the checks"; exit 1; }
echo "ok   self-test: concurrent writers in single-writer mode are caught ($caught)"
# seeds 1 and 2 on tables of version 6, seed 3 of version 9 (completion times in the layout-2
# timeline, taken inside the lock)
for type in cow mor; do
  for seed in 1 2 3; do
    version=6
    [ "$seed" = 3 ] && version=9
    stress --location "$WORK/$type$seed/t" --work "$WORK/$type$seed/w" --type "$type" \
      --writers 4 --statements 8 --seed "$seed" --table-version "$version"
  done
done
