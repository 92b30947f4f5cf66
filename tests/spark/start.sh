#!/usr/bin/env bash
# Starts the Spark server (server.py) in the background and prints `export` lines for its
# address and process: eval "$(tests/spark/start.sh DIR)". DIR holds its log, its port file and
# Spark's own warehouse. Stop it with: kill "$HOODIE_SPARK_PID".
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DIR=$(realpath -m "${1:?usage: start.sh DIR}")
mkdir -p "$DIR"
{ read -r PY; read -r JAR; } < <(bash "$HERE/setup.sh")
rm -f "$DIR/port"
SPARK_WAREHOUSE="$DIR/spark-warehouse" "$PY" "$HERE/server.py" --jar "$JAR" \
  --port-file "$DIR/port" --memory "${HOODIE_SPARK_MEMORY:-3g}" --timings "$DIR/timings.txt" > "$DIR/server.log" 2>&1 &
pid=$!
for _ in $(seq 300); do
  [ -s "$DIR/port" ] && break
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "start.sh: the Spark server stopped; its log:" >&2
    tail -40 "$DIR/server.log" >&2
    exit 1
  fi
  sleep 1
done
if [ ! -s "$DIR/port" ]; then
  echo "start.sh: Spark did not start in 300 s; its log: $DIR/server.log" >&2
  kill "$pid" 2>/dev/null || true
  exit 1
fi
echo "export HOODIE_SPARK=127.0.0.1:$(cat "$DIR/port") HOODIE_SPARK_PID=$pid HOODIE_SPARK_PYTHON=$PY"
