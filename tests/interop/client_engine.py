"""Reads the table examples/client_engine.rs wrote through hoodie-format's write client alone
(two writers in one commit, two upserts, a clean) with the Python `hudi` reader (hudi-rs), and
checks its rows against the ones the engine printed. Usage: client_engine.py TABLE ROWS.jsonl"""
import json
import sys

import pyarrow as pa
from hudi import HudiTableBuilder

table_dir, rows_file = sys.argv[1], sys.argv[2]
with open(rows_file) as f:
    want = sorted((r["id"], r["name"], r["ts"], r["region"]) for r in map(json.loads, f))
t = HudiTableBuilder.from_base_uri(table_dir).build()
tab = pa.Table.from_batches(t.read())
got = sorted((r["id"], r["name"], r["ts"], r["region"]) for r in tab.to_pylist())
commits = sorted(i.timestamp for i in t.get_timeline().get_completed_commits())
meta = {(r["_hoodie_record_key"], r["_hoodie_partition_path"]) for r in tab.to_pylist()}
failures = []
if len(want) < 7 or got != want:
    failures.append(f"rows: got {got!r}, want {want!r}")
if len(commits) != 3:
    failures.append(f"commits: got {commits!r}, want three")
if meta != {(str(r[0]), f"region={r[3]}") for r in want}:
    failures.append(f"meta columns: {sorted(meta)!r}")
if not {r["_hoodie_commit_time"] for r in tab.to_pylist()} <= set(commits):
    failures.append("a commit time that is no commit")
for f in failures:
    print("FAIL client_engine", f)
if failures:
    sys.exit(1)
print(f"ok   client_engine: {len(got)} rows, {len(commits)} commits, as the engine wrote them")
