#!/usr/bin/env bash
# What a statement costs on a localhost cluster of hoodie-worker processes against one
# process (docs/performance.md, "On workers"): for each op and for 0 (one process), 1, 2 and 3
# workers, on a fresh copy of a copy-on-write table of the benchmark's target rows, the op's
# wall time, the CPU seconds of the session's process and of every worker, and each process's
# peak memory. Workers are started afresh per measurement, so a worker's peak is that op's.
# Usage: bench/cluster.sh <release dir with hoodie and hoodie-worker> <data dir of peers.py
#        (target.parquet, updates_u1.parquet)> <work dir> [ops]
set -euo pipefail
BIN=$(realpath "${1:?release dir}")
DATA=$(realpath "${2:?data dir}")
WORK=${3:?work dir}
OPS=${4:-"scan ctas update delete merge"}
mkdir -p "$WORK"
WORK=$(realpath "$WORK")
TICK=$(getconf CLK_TCK)
SPLIT="--option distributed.file_scan_config_bytes_per_partition=16777216"
# the base table, written once
if [ ! -d "$WORK/base/.hoodie" ]; then
  "$BIN/hoodie" --warehouse "$WORK/wh" -c "CREATE EXTERNAL TABLE src STORED AS PARQUET LOCATION '$DATA/target.parquet'; CREATE TABLE t USING hudi PARTITIONED BY (dt) TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts') LOCATION '$WORK/base' AS SELECT * FROM src" > /dev/null
fi
sql_of() {
  local t="CREATE EXTERNAL TABLE t STORED AS HUDI LOCATION '$WORK/copy'"
  case $1 in
    scan) echo "$t; SELECT count(*), sum(price), max(ts) FROM t" ;;
    ctas) echo "CREATE EXTERNAL TABLE src STORED AS PARQUET LOCATION '$DATA/target.parquet'; CREATE TABLE c USING hudi PARTITIONED BY (dt) TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts') LOCATION '$WORK/ctas' AS SELECT * FROM src" ;;
    update) echo "$t; UPDATE t SET price = price * 1.01 WHERE id % 100 = 0" ;;
    delete) echo "$t; DELETE FROM t WHERE id % 100 = 1" ;;
    merge) echo "$t; CREATE EXTERNAL TABLE s STORED AS PARQUET LOCATION '$DATA/updates_u1.parquet'; MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *" ;;
  esac
}
# CPU seconds (user + system) and peak resident MiB of a running process
cpu_of() { awk -v t="$TICK" '{ printf "%.2f", ($14 + $15) / t }' "/proc/$1/stat"; }
peak_of() { awk '/VmHWM/ { printf "%.0f", $2 / 1024 }' "/proc/$1/status"; }
echo "| op | workers | wall s | session CPU s | workers CPU s | total CPU s | session peak MiB | worker peaks MiB |"
echo "|---|---|---|---|---|---|---|---|"
for op in $OPS; do
  for n in 0 1 2 3; do
    rm -rf "$WORK/copy" "$WORK/ctas"
    [ "$op" = ctas ] || cp -r "$WORK/base" "$WORK/copy"
    sync
    pids=(); addrs=()
    for i in $(seq "$n"); do
      "$BIN/hoodie-worker" --listen 127.0.0.1:0 > "$WORK/w$i.addr" &
      pids+=($!)
    done
    for i in $(seq "$n"); do
      for _ in $(seq 100); do [ -s "$WORK/w$i.addr" ] && break; sleep 0.1; done
      addrs+=("$(cat "$WORK/w$i.addr")")
    done
    flags=()
    [ "$n" -gt 0 ] && flags=(--workers "$(IFS=,; echo "${addrs[*]}")" $SPLIT)
    /usr/bin/time -f "%e %U %S %M" -o "$WORK/time" "$BIN/hoodie" --warehouse "$WORK/wh" "${flags[@]}" -c "$(sql_of "$op")" > /dev/null
    read -r wall user sys rss < "$WORK/time"
    wcpu=0; peaks=""
    for pid in "${pids[@]}"; do
      wcpu=$(awk -v a="$wcpu" -v b="$(cpu_of "$pid")" 'BEGIN { printf "%.2f", a + b }')
      peaks="$peaks $(peak_of "$pid")"
      kill "$pid"
    done
    wait 2>/dev/null || true
    scpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
    total=$(awk -v a="$scpu" -v b="$wcpu" 'BEGIN { printf "%.2f", a + b }')
    echo "| $op | $n | $wall | $scpu | $wcpu | $total | $((rss / 1024)) | ${peaks:- -} |"
  done
done
