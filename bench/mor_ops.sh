#!/usr/bin/env bash
# The merge-on-read ops of the peer benchmark that time one step after untimed set-up (the
# adapter hoodie_mor.json calls it; it prints the timed step as @@RESULT {"op_s": ...}, the
# statement's own time, as bench/hoodie_op.sh does).
# Usage: mor_ops.sh <op> <hoodie binary> <table dir> <source parquet of the MERGE>
#   scan_after_merge_u10: MERGE the source, then time SELECT count(*), sum(price)
#   compact:              MERGE the source, then time RUN COMPACTION (of every slice the MERGE
#                         logged to)
#   scan_after_compact:   MERGE the source and compact, then time the scan
#   scan_after_upsert_u10: upsert the source by INSERT (its updates' log blocks carry record
#                         positions on table versions 8 and 9), then time the scan
set -euo pipefail
op=$1 H=$2 work=$3 src=$4
open="CREATE EXTERNAL TABLE t STORED AS HUDI LOCATION '$work'"
merge="$open; CREATE EXTERNAL TABLE s STORED AS PARQUET LOCATION '$src'; MERGE INTO t USING s ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"
upsert="$open; CREATE EXTERNAL TABLE s STORED AS PARQUET LOCATION '$src'; SET hoodie.spark.sql.insert.into.operation = 'upsert'; INSERT INTO t SELECT id, name, price, qty, ts, customer_id, discount, category, note, dt FROM s"
scan="$open; SELECT count(*), sum(price) FROM t"
# RUN COMPACTION plans only once hoodie.compact.inline.max.delta.commits (default 5)
# deltacommits followed the last compaction, as Hudi's does: after the one MERGE it would plan
# nothing, so the trigger is lowered to one
compact="$open; SET hoodie.compact.inline.max.delta.commits = 1; RUN COMPACTION ON t"
case "$op" in
  scan_after_upsert_u10) "$H" -c "$upsert" > /dev/null ;;
  *) "$H" -c "$merge" > /dev/null ;;
esac
case "$op" in
  scan_after_merge_u10 | scan_after_upsert_u10) timed=$scan ;;
  compact) timed="$compact" ;;
  scan_after_compact) "$H" -c "$compact" > /dev/null; timed=$scan ;;
  *) echo "unknown op $op" >&2; exit 2 ;;
esac
# the timed step's statement alone, as bench/hoodie_op.sh reports it
bash "$(dirname "$0")/hoodie_op.sh" "$H" "$timed"
