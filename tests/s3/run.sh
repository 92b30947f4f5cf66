#!/usr/bin/env bash
# Tables on an S3 server: starts moto's S3 server (PyPI moto[server]) on 127.0.0.1, checks
# that it refuses a second create-if-absent (hoodie's commits rely on it), runs every kind of
# DML on tables at s3:// locations and has hudi-rs (PyPI hudi) read them with the same storage
# options; then the quickstart with its warehouse on S3, the object-store sql-tests, failure
# injection at every write of each DML kind and of a compaction
# (crates/hoodie-datafusion/tests/store_failure.rs), a subset of the differential fuzzer's
# seeds and the stress test, all on the server.
# Usage: tests/s3/run.sh <path to the hoodie binary>
set -euo pipefail
HOODIE=$(realpath "${1:?usage: run.sh <hoodie binary>}")
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=${HOODIE_S3_VENV:-${HOODIE_CACHE:-$HOME/.cache/hoodie}/s3-venv}
if [ ! -x "$VENV/bin/moto_server" ] || ! "$VENV/bin/python" -c "import hudi, pyarrow" 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet "moto[server]" "hudi==0.5.0" pyarrow
fi
WORK=$(mktemp -d)
PORT=$("$VENV/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$VENV/bin/moto_server" -H 127.0.0.1 -p "$PORT" > "$WORK/moto.log" 2>&1 &
MOTO=$!
# stop the server and give it up to 10 s to exit (then kill it) before its folder goes
trap 'kill $MOTO 2>/dev/null || true
  for _ in $(seq 50); do kill -0 $MOTO 2>/dev/null || break; sleep 0.2; done
  kill -9 $MOTO 2>/dev/null || true
  rm -rf "$WORK" || true' EXIT
ENDPOINT=http://127.0.0.1:$PORT
for _ in $(seq 1 50); do
  curl -s -o /dev/null "$ENDPOINT" && break
  sleep 0.2
done
"$VENV/bin/python" "$HERE/probe.py" "$ENDPOINT"
export AWS_ENDPOINT=$ENDPOINT AWS_ALLOW_HTTP=true AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_REGION=us-east-1
"$HOODIE" --warehouse "$WORK/wh" -f "$HERE/s3.sql" > "$WORK/out.txt"
for t in s3t s3m; do
  "$HOODIE" --warehouse "$WORK/wh" -c "CREATE EXTERNAL TABLE $t STORED AS HUDI LOCATION 's3://hoodie/warehouse/$t'; COPY (SELECT * FROM $t) TO '$WORK/$t.parquet' STORED AS PARQUET" > /dev/null
done
"$VENV/bin/python" "$HERE/check.py" "$ENDPOINT" "$WORK"
# the store configured by the session instead of the environment: the shell's --option, and
# SET with Hadoop's S3A keys as a Spark session sets them
NOENV="env -u AWS_ENDPOINT -u AWS_ALLOW_HTTP -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_REGION"
got=$($NOENV "$HOODIE" --warehouse "$WORK/wh" --option "aws_endpoint=$ENDPOINT" --option aws_allow_http=true \
  --option aws_access_key_id=test --option aws_secret_access_key=test --option aws_region=us-east-1 \
  -c "CREATE EXTERNAL TABLE opt STORED AS HUDI LOCATION 's3://hoodie/warehouse/s3t'; SELECT count(*) AS n FROM opt")
echo "$got" | grep -q "| 3 " || { echo "FAIL --option: $got"; exit 1; }
echo "ok   the S3 store configured by the shell's --option"
got=$($NOENV "$HOODIE" --warehouse "$WORK/wh" -c "SET spark.hadoop.fs.s3a.endpoint = '$ENDPOINT';
  SET fs.s3a.connection.ssl.enabled = false; SET fs.s3a.access.key = test; SET fs.s3a.secret.key = test;
  SET fs.s3a.endpoint.region = us-east-1;
  CREATE TABLE viaset (id INT, v STRING) USING hudi LOCATION 's3://hoodie/warehouse/viaset' TBLPROPERTIES (primaryKey = 'id');
  INSERT INTO viaset VALUES (1, NULL), (2, 'b'); UPDATE viaset SET v = 'a' WHERE id = 1;
  SELECT count(*) AS n FROM viaset WHERE v IS NOT NULL")
echo "$got" | grep -q "| 2 " || { echo "FAIL SET fs.s3a.*: $got"; exit 1; }
props=$("$VENV/bin/python" -c "
import boto3
s3 = boto3.client('s3', endpoint_url='$ENDPOINT', aws_access_key_id='test', aws_secret_access_key='test', region_name='us-east-1')
print(s3.get_object(Bucket='hoodie', Key='warehouse/viaset/.hoodie/hoodie.properties')['Body'].read().decode())")
if echo "$props" | grep -qi "s3a\|aws_\|endpoint"; then echo "FAIL store options in hoodie.properties"; exit 1; fi
echo "ok   the S3 store configured by SET with Hadoop's S3A keys (none in hoodie.properties)"
# a store told not to create files only if absent is refused for writes, and nothing is written
if "$HOODIE" --warehouse "$WORK/wh" -c "CREATE TABLE nc (id INT) USING hudi LOCATION 's3://hoodie/warehouse/nc' TBLPROPERTIES (primaryKey = 'id', 'aws_conditional_put' = 'disabled')" > "$WORK/nc.txt" 2>&1; then
  echo "FAIL a table on a store without create-if-absent was created"; exit 1
fi
grep -q "cannot create a file only if it is absent" "$WORK/nc.txt" || { echo "FAIL unexpected error: $(cat "$WORK/nc.txt")"; exit 1; }
echo "ok   a store without create-if-absent is refused for writes"
# the warehouse itself on the S3 server: the quickstart there and on local disk leave the same
# tables, and a new session on the S3 warehouse lists and reads them
"$HOODIE" --warehouse s3://hoodie/qs-warehouse -f "$HERE/../../examples/quickstart.sql" > "$WORK/qs.txt"
"$HOODIE" --warehouse "$WORK/qs-local" -f "$HERE/../../examples/quickstart.sql" > "$WORK/qs-local.txt"
# the quickstart's tables as version 6 on the server too (hoodie's default is 9)
{ echo "SET hoodie.write.table.version = 6;"; cat "$HERE/../../examples/quickstart.sql"; } > "$WORK/qs6.sql"
"$HOODIE" --warehouse s3://hoodie/qs6-warehouse -f "$WORK/qs6.sql" > "$WORK/qs6.txt"
FINAL="SELECT uuid, rider, driver, fare, ts, city FROM trips ORDER BY uuid;
  SELECT uuid, rider, fare, city FROM trips_mor ORDER BY uuid; SELECT uuid, rider, fare FROM fares ORDER BY uuid"
"$HOODIE" --warehouse s3://hoodie/qs-warehouse -c "$FINAL" > "$WORK/qs-final.txt"
"$HOODIE" --warehouse "$WORK/qs-local" -c "$FINAL" > "$WORK/qs-local-final.txt"
diff "$WORK/qs-local-final.txt" "$WORK/qs-final.txt" \
  || { echo "FAIL the quickstart's tables differ between a local and an S3 warehouse"; exit 1; }
"$HOODIE" --warehouse s3://hoodie/qs6-warehouse -c "$FINAL" > "$WORK/qs6-final.txt"
diff "$WORK/qs-local-final.txt" "$WORK/qs6-final.txt" \
  || { echo "FAIL the quickstart's version 6 tables on S3 differ from the local version 9 ones"; exit 1; }
echo "ok   the quickstart as version 6 tables on S3 reads as on local disk"
tables=$("$HOODIE" --warehouse s3://hoodie/qs-warehouse -c "SHOW TABLES")
for t in trips trips_mor fares; do
  echo "$tables" | grep -q "| $t " || { echo "FAIL SHOW TABLES on the S3 warehouse lacks $t: $tables"; exit 1; }
done
echo "ok   the quickstart with its warehouse on S3: a new session lists and reads the tables it left"
# the object-store sql-tests (sql-tests/storage/memory.slt) run by hoodie-slt on the S3
# server instead of memory://
SLT=$(dirname "$HOODIE")/hoodie-slt
[ -x "$SLT" ] || cargo build --quiet --manifest-path "$HERE/../../Cargo.toml" --bin hoodie-slt
sed -e "s#memory://slt/#s3://hoodie/slt/#g" -e "s#memory://elsewhere/#s3://hoodie/elsewhere/#g" \
  "$HERE/../../sql-tests/storage/memory.slt" > "$WORK/s3.slt"
"$SLT" "$WORK/s3.slt"
echo "ok   sql-tests/storage/memory.slt on the S3 server"
# several writers on one table on the S3 server (tests/concurrency/README.md)
for type in cow mor; do
  "$VENV/bin/python" "$HERE/../concurrency/stress.py" --hoodie "$HOODIE" --type "$type" \
    --location "s3://hoodie/stress_$type" --work "$WORK/stress_$type" --writers 3 --statements 6 --seed 1
done
# every object-store write of each DML kind, of a deltacommit and of a compaction failed in turn
HOODIE_TEST_S3_URL=s3://hoodie/failure cargo test --quiet --manifest-path "$HERE/../../Cargo.toml" \
  -p hoodie-datafusion --test store_failure -- --ignored
echo "ok   failure injection at every write on the S3 server"
# the differential fuzzer with its warehouses on the server (tests/fuzz/README.md)
FUZZ_VENV=$(bash "$HERE/../fuzz/venv.sh")
"$FUZZ_VENV/bin/python" "$HERE/../fuzz/fuzz.py" --hoodie "$HOODIE" --store s3://hoodie/fuzz \
  --seeds "${HOODIE_S3_FUZZ_SEEDS:-0..29}" --statements 22
