#!/usr/bin/env bash
# Runs one op of the peer benchmark as `hoodie --timing -c SQL` and reports the time of the
# op's statement alone (the last statement of SQL) as @@RESULT {"op_s": ...}, as the Python
# peers time the op alone inside a running process (their interpreter start, connection and
# table open, DuckLake's ATTACH, are outside op_s). The whole command's wall time, process start
# and table open included, goes into info.process_s.
# Usage: hoodie_op.sh <hoodie binary> <SQL>
set -euo pipefail
H=$1 sql=$2
err=$(mktemp)
trap 'rm -f "$err"' EXIT
start=$(date +%s.%N)
"$H" --timing -c "$sql" > /dev/null 2> "$err" || { cat "$err" >&2; exit 1; }
end=$(date +%s.%N)
op=$(grep '^Time: ' "$err" | tail -1 | sed 's/^Time: //; s/s$//')
grep -v '^Time: ' "$err" >&2 || true
echo "@@RESULT {\"op_s\": $op, \"info\": {\"process_s\": $(awk "BEGIN { print $end - $start }")}}"
