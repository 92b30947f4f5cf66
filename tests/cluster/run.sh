#!/usr/bin/env bash
# hoodie on a localhost cluster of three hoodie-worker processes (docs/distributed.md): the
# sql-tests run with every session's statements on the workers (every scan spread over them,
# however small its table), then differential fuzzer seeds (tests/fuzz/README.md) whose hoodie
# runs on the workers: each table, read by hoodie and by hudi-rs, must equal the oracle's, as
# it does in one process. Last, a worker is killed (by its pid) during an UPDATE whose scan runs
# on the workers: the statement fails or completes, and the table reads as before it or as after
# it, never in between; the next write goes through.
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

# a worker killed in the middle of an UPDATE, at four points of it: each time a fresh third
# worker, killed after a delay
KW="$WORK/killed"
q() { "$BIN/hoodie" --warehouse "$KW" -c "$1" | grep -E '^\| [0-9]' | tr -d ' '; }
"$BIN/hoodie" --warehouse "$KW" -c "CREATE TABLE k (id BIGINT, v BIGINT, dt STRING) USING hudi PARTITIONED BY (dt) TBLPROPERTIES (primaryKey = 'id'); INSERT INTO k SELECT value AS id, value % 1000 AS v, CAST(value % 4 AS STRING) AS dt FROM generate_series(1, 600000)" > /dev/null
kill "${PIDS[2]}"
TWO=$(cat "$WORK/worker1.addr" "$WORK/worker2.addr" | paste -sd, -)
outcomes=""
for delay in 0.02 0.1 0.3 0.6; do
  before=$(q "SELECT count(*), sum(v) FROM k")
  after=$(q "SELECT count(*), sum(v + CASE WHEN id % 2 = 0 THEN 1 ELSE 0 END) FROM k")
  "$BIN/hoodie-worker" --listen 127.0.0.1:0 > "$WORK/victim.addr" 2> /dev/null &
  victim=$!
  for _ in $(seq 100); do [ -s "$WORK/victim.addr" ] && break; sleep 0.1; done
  set +e
  "$BIN/hoodie" --warehouse "$KW" --workers "$TWO,$(cat "$WORK/victim.addr")" \
    --option distributed.file_scan_config_bytes_per_partition=1 \
    -c "UPDATE k SET v = v + 1 WHERE id % 2 = 0" > "$WORK/killed.out" 2>&1 &
  update=$!
  sleep "$delay"
  kill -9 "$victim"
  wait "$update"
  rc=$?
  wait "$victim" 2> /dev/null
  set -e
  now=$(q "SELECT count(*), sum(v) FROM k")
  if [ "$rc" -ne 0 ]; then
    [ "$now" = "$before" ] || { cat "$WORK/killed.out" >&2; echo "a failed UPDATE changed the table: $before -> $now" >&2; exit 1; }
    outcomes="$outcomes failed-unchanged"
  else
    [ "$now" = "$after" ] || { cat "$WORK/killed.out" >&2; echo "the UPDATE that succeeded left $now, not $after" >&2; exit 1; }
    outcomes="$outcomes committed"
  fi
  # the next write, on the workers left, rolls back what a failed one left and goes through
  "$BIN/hoodie" --warehouse "$KW" --workers "$TWO" -c "UPDATE k SET v = 0 WHERE id = 1" > /dev/null
  [ "$(q "SELECT count(*), sum(v) FROM k WHERE id = 1")" = "|1|0|" ] || { echo "the write after the kill did not go through" >&2; exit 1; }
done
echo "cluster: a worker killed during an UPDATE after 0.02, 0.1, 0.3 and 0.6 s:$outcomes; the table as before or as after each time"
