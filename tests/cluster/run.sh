#!/usr/bin/env bash
# hoodie on a localhost cluster of three hoodie-worker processes (docs/distributed.md): the
# sql-tests run with every session's statements on the workers (every scan spread over them,
# however small its table), then differential fuzzer seeds (tests/fuzz/README.md) whose hoodie
# runs on the workers: each table, read by hoodie and by hudi-rs, must equal the oracle's, as
# it does in one process.
# Usage: tests/cluster/run.sh <target dir with hoodie, hoodie-slt and hoodie-worker> [seeds]
set -euo pipefail
BIN=$(realpath "${1:?usage: run.sh <target dir> [seeds]}")
SEEDS=${2:-0..59}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
WORK=$(mktemp -d)
PIDS=()
stop() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap stop EXIT
# three workers on free ports; each prints the address it bound
for i in 1 2 3; do
  "$BIN/hoodie-worker" --listen 127.0.0.1:0 > "$WORK/worker$i.addr" 2> "$WORK/worker$i.err" &
  PIDS+=($!)
done
for i in 1 2 3; do
  for _ in $(seq 100); do [ -s "$WORK/worker$i.addr" ] && break; sleep 0.1; done
  [ -s "$WORK/worker$i.addr" ] || { cat "$WORK/worker$i.err" >&2; echo "worker $i did not start" >&2; exit 1; }
done
WORKERS=$(cat "$WORK"/worker*.addr | paste -sd, -)
echo "cluster: workers $WORKERS"
cd "$ROOT"
"$BIN/hoodie-slt" --jobs 2 --workers "$WORKERS" sql-tests | tee /dev/stderr | tail -n 1 | grep -E '^[0-9]+ passed, 0 failed'
# the fuzzer's hoodie: the shell on the workers, every scan spread over them
cat > "$WORK/hoodie" <<SH
#!/usr/bin/env bash
exec "$BIN/hoodie" --workers "$WORKERS" --option distributed.file_scan_config_bytes_per_partition=1 "\$@"
SH
chmod +x "$WORK/hoodie"
VENV=$(bash "$ROOT/tests/fuzz/venv.sh")
"$VENV/bin/python" "$ROOT/tests/fuzz/fuzz.py" --hoodie "$WORK/hoodie" --seeds "$SEEDS" --statements 22 | tee "$WORK/fuzz.log"
grep -Eq '^fuzz: [0-9]+ passed, 0 failed' "$WORK/fuzz.log"
for i in 1 2 3; do kill -0 "${PIDS[$((i - 1))]}" || { cat "$WORK/worker$i.err" >&2; echo "worker $i died" >&2; exit 1; }; done
echo "cluster: sql-tests and fuzz seeds $SEEDS passed on three workers"
