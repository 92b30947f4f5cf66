"""Counts the S3 requests of each statement of a small benchmark on an S3 warehouse (from the
request log of moto's server) and times it beside the same statement on local disk.

Usage: start `moto_server -H 127.0.0.1 -p 5601 > moto.log 2>&1`, create the bucket `bench`,
then `python bench/s3_requests.py <hoodie binary> moto.log <rows> <local warehouse dir>`
(docs/performance.md, "Object stores")."""
import collections
import os
import re
import subprocess
import sys
import time

H = sys.argv[1]; LOG = sys.argv[2]; N = int(sys.argv[3]); LOCAL = sys.argv[4]
# a fifth argument `occ` runs the statements under optimistic concurrency control
OCC = len(sys.argv) > 5 and sys.argv[5] == "occ"
MODE = ", 'hoodie.write.concurrency.mode' = 'optimistic_concurrency_control'" if OCC else ""
WH = "s3://bench/" + ("wh_occ" if OCC else "wh")
ENV = dict(os.environ, AWS_ENDPOINT="http://127.0.0.1:5601", AWS_ALLOW_HTTP="true",
           AWS_ACCESS_KEY_ID="t", AWS_SECRET_ACCESS_KEY="t", AWS_REGION="us-east-1")
K = N // 100
OPS = [
  ("create (CTAS)", f"CREATE TABLE t USING hudi PARTITIONED BY (p) TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts'{MODE}) AS SELECT CAST(value AS INT) AS id, CAST(value % 1000 AS DOUBLE) AS price, CAST(1 AS BIGINT) AS ts, CONCAT('p', CAST(value % 4 AS STRING)) AS p FROM range({N})"),
  ("upsert 1%", f"INSERT INTO t SELECT CAST(value * 97 % {N} AS INT), 1.5, CAST(2 AS BIGINT), CONCAT('p', CAST((value * 97 % {N}) % 4 AS STRING)) FROM range({K})"),
  ("update 1%", f"UPDATE t SET price = price + 1 WHERE id % 100 = 7"),
  ("delete 1%", f"DELETE FROM t WHERE id % 100 = 9"),
  ("merge 1%", f"MERGE INTO t USING (SELECT CAST(value * 89 % {N} AS INT) AS id, 2.5 AS price, CAST(3 AS BIGINT) AS ts, CONCAT('p', CAST((value * 89 % {N}) % 4 AS STRING)) AS p FROM range({K})) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"),
  ("scan", "SELECT count(*), sum(price) FROM t"),
]
def lines():
    with open(LOG) as f: return f.readlines()
def run(wh, sql):
    t0 = time.time()
    r = subprocess.run([H, "--warehouse", wh, "-c", sql], env=ENV, capture_output=True, text=True)
    dt = time.time() - t0
    if r.returncode: raise SystemExit(r.stderr)
    return dt
print(f"| statement ({N} rows{', OCC' if OCC else ''}) | local s | S3 s | GET | HEAD | PUT | LIST | DELETE | multipart |")
print("|---|---|---|---|---|---|---|---|---|")
for name, sql in OPS:
    local = run(LOCAL, sql)
    before = len(lines())
    s3 = run(WH, sql)
    new = lines()[before:]
    c = collections.Counter()
    for l in new:
        m = re.search(r'"(?:\x1b\[[0-9;]*m)*(GET|PUT|HEAD|DELETE|POST) (\S+)', l)
        if not m: continue
        meth, path = m.groups()
        if meth == "GET" and "list-type" in path: c["LIST"] += 1
        elif meth == "POST" and "?delete" in path: c["DELETE"] += 1
        elif "uploadId" in path or "uploads" in path: c["multipart"] += 1
        else: c[meth] += 1
    print(f"| {name} | {local:.2f} | {s3:.2f} | {c['GET']} | {c['HEAD']} | {c['PUT']} | {c['LIST']} | {c['DELETE']} | {c['multipart']} |")
