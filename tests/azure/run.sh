#!/usr/bin/env bash
# Tables on Azure Blob Storage: starts Azurite (npm `azurite`, installed under ~/.cache/hoodie) on
# 127.0.0.1, checks that it refuses a second create-if-absent, runs every kind of DML on tables
# at az:// locations (copy-on-write and merge-on-read, under optimistic concurrency control),
# has hudi-rs read them with the same storage options, and runs the concurrency stress test
# there. Usage: tests/azure/run.sh <path to the hoodie binary>
set -euo pipefail
HOODIE=$(realpath "${1:?usage: run.sh <hoodie binary>}")
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
VENV=${HOODIE_S3_VENV:-${HOODIE_CACHE:-$HOME/.cache/hoodie}/s3-venv}
AZURITE=${HOODIE_CACHE:-$HOME/.cache/hoodie}/azurite
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c "import hudi, pyarrow, azure.storage.blob" 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet "moto[server]" "hudi==0.5.0" pyarrow azure-storage-blob
fi
if [ ! -x "$AZURITE/node_modules/.bin/azurite-blob" ]; then
  npm install --silent --no-audit --no-fund --prefix "$AZURITE" azurite@3 > /dev/null
fi
WORK=$(mktemp -d)
PORT=$("$VENV/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$AZURITE/node_modules/.bin/azurite-blob" --blobHost 127.0.0.1 --blobPort "$PORT" \
  --location "$WORK/azurite" --silent --skipApiVersionCheck > "$WORK/azurite.log" 2>&1 &
AZ=$!
# stop Azurite and give it up to 10 s to exit (then kill it) before its folder goes
trap 'kill $AZ 2>/dev/null || true
  for _ in $(seq 50); do kill -0 $AZ 2>/dev/null || break; sleep 0.2; done
  kill -9 $AZ 2>/dev/null || true
  rm -rf "$WORK" || true' EXIT
export AZURITE_BLOB_STORAGE_URL=http://127.0.0.1:$PORT
export AZURE_STORAGE_USE_EMULATOR=true AZURE_STORAGE_ACCOUNT_NAME=devstoreaccount1
export AZURE_STORAGE_ACCOUNT_KEY="Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
for _ in $(seq 1 50); do
  curl -s -o /dev/null "$AZURITE_BLOB_STORAGE_URL" && break
  sleep 0.2
done
"$VENV/bin/python" "$HERE/check.py" probe
"$HOODIE" --warehouse "$WORK/wh" -f "$HERE/azure.sql" > "$WORK/out.txt"
for t in azc azm; do
  "$HOODIE" --warehouse "$WORK/wh" -c "CREATE EXTERNAL TABLE $t STORED AS HUDI LOCATION 'az://hoodie/warehouse/$t'; COPY (SELECT * FROM $t) TO '$WORK/$t.parquet' STORED AS PARQUET" > /dev/null
done
"$VENV/bin/python" "$HERE/check.py" read "$WORK"
for type in cow mor; do
  "$VENV/bin/python" "$HERE/../concurrency/stress.py" --hoodie "$HOODIE" --type "$type" \
    --location "az://hoodie/stress_$type" --work "$WORK/stress_$type" --writers 3 --statements 6 --seed 2
done
