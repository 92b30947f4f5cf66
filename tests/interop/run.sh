#!/usr/bin/env bash
# Interoperability: tables written by hoodie, of table version 6 and of version 9, are read by the
# Python `hudi` reader (hudi-rs, PyPI hudi==0.5.0) with the same rows and meta columns.
# Usage: tests/interop/run.sh <path to the hoodie binary>
set -euo pipefail
HOODIE=$(realpath "${1:?usage: run.sh <hoodie binary>}")
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=${HOODIE_INTEROP_VENV:-${HOODIE_CACHE:-$HOME/.cache/hoodie}/interop-venv}
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c "import hudi, pyarrow" 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet "hudi==0.5.0" pyarrow
fi
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
# writes the tables of write_tables.sql into warehouse $1 as table version $2, and has hudi-rs
# read them (check.py)
write_and_check() {
  local wh=$1 version=$2 dump=$1-dump script=$WORK/write_tables_v$2.sql
  { echo "SET hoodie.write.table.version = $version;"; cat "$HERE/write_tables.sql"; } > "$script"
  "$HOODIE" --warehouse "$wh" -f "$script"
  # a savepoint of the first commit of `restored`, two more writes, then the restore to it
  local timeline=$wh/restored/.hoodie
  [ -d "$timeline/timeline" ] && timeline=$timeline/timeline
  local first
  first=$(ls "$timeline" | grep -E '^[0-9]+(_[0-9]+)?\.deltacommit$' | sort | head -1 | cut -d. -f1 | cut -d_ -f1)
  "$HOODIE" --warehouse "$wh" -c "CALL create_savepoint(table => 'restored', commit_time => '$first'); UPDATE restored SET v = 'b' WHERE id = 2; DELETE FROM restored WHERE id = 1; CALL rollback_to_savepoint(table => 'restored', instant_time => '$first')" > /dev/null
  # hoodie's own read of the merge-on-read tables, for check.py to compare hudi-rs's with
  mkdir -p "$dump"
  for t in mor_part mor_np mor_ow mor_pq mor_partial cdc_cow cdc_mor cleaned_cow cleaned_mor archived_cow archived_mor archived_nc added_cow added_mor dropped truncated_mor restored; do
    "$HOODIE" --warehouse "$wh" -c "COPY (SELECT * FROM $t) TO '$dump/$t.parquet' STORED AS PARQUET" > /dev/null
  done
  "$VENV/bin/python" "$HERE/check.py" "$wh" "$dump"
}
write_and_check "$WORK/wh" 6
# the same tables of version 9 (Hudi 1.1 and 1.2's), read by hudi-rs too
write_and_check "$WORK/wh9" 9
# a table written through hoodie-format's write client alone (examples/client_engine.rs, built
# by cargo test beside the hoodie binary: two writers in one commit, two upserts, a clean)
"$(dirname "$HOODIE")/examples/client_engine" "$WORK/engine_t" > "$WORK/engine_t.jsonl"
"$VENV/bin/python" "$HERE/client_engine.py" "$WORK/engine_t" "$WORK/engine_t.jsonl"
# time travel to every commit and incremental reads between every pair of commits, against
# hudi-rs: on the tables above (hudi-rs cannot open dpc, which drops its partition columns) and
# on the Spark-written fixtures (but the Lance ones, whose base files hoodie cannot read); the
# cleaned tables are left out: reads as of cleaned commits fail in hoodie as in Hudi (archived_nc,
# archived but never cleaned, is read)
FIXTURES=$HERE/../fixtures/hudi-tables/data
for zip in $(find "$FIXTURES" -name '*.zip' ! -name '*lance*' | sort); do
  rel=${zip#"$FIXTURES"/}
  dir="$WORK/fixtures/$(echo "${rel%.zip}" | tr / _)"
  mkdir -p "$dir"
  unzip -q -o "$zip" -d "$dir"
  rm -rf "$dir/__MACOSX"
done
"$VENV/bin/python" "$HERE/history.py" "$HOODIE" "$WORK" \
  $(ls -d "$WORK"/wh/* "$WORK"/wh9/* | grep -v -e '/dpc$' -e '/cleaned_' -e '/archived_cow$' -e '/archived_mor$') $(ls -d "$WORK"/fixtures/*/*)
