#!/usr/bin/env bash
# The cost of a long history: N upserts of 1% of the peer benchmark's table (each a different
# 1%: id % 100 = k), one `hoodie -c` process each, on a copy-on-write table with the default
# cleaning (10 commits retained). Prints, per upsert: k, wall seconds of the whole command,
# data files on disk, files under .hoodie/.
# Usage: bench/history_cost.sh <hoodie binary> <target.parquet> <work dir> [N=200]
set -euo pipefail
H=$1 SRC=$2 WORK=$3 N=${4:-200}
rm -rf "$WORK"
mkdir -p "$WORK"
"$H" -c "CREATE EXTERNAL TABLE src STORED AS PARQUET LOCATION '$SRC'; CREATE TABLE t USING hudi PARTITIONED BY (dt) TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts') LOCATION '$WORK/t' AS SELECT * FROM src" > /dev/null
for k in $(seq 1 "$N"); do
  start=$(date +%s.%N)
  "$H" -c "CREATE EXTERNAL TABLE src STORED AS PARQUET LOCATION '$SRC'; CREATE EXTERNAL TABLE t STORED AS HUDI LOCATION '$WORK/t'; INSERT INTO t SELECT id, name, price + $k, qty, ts + $k, customer_id, discount, category, note, dt FROM src WHERE id % 100 = $((k % 100))" > /dev/null
  end=$(date +%s.%N)
  data=$(find "$WORK/t" -name '*.parquet' -not -path '*/.hoodie/*' | wc -l)
  meta=$(find "$WORK/t/.hoodie" -maxdepth 1 -type f | wc -l)
  echo "$k $(awk "BEGIN { print $end - $start }") $data $meta"
done
