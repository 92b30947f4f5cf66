"""hudi-rs reads the tables hoodie wrote on the S3 server with the rows hoodie reads, meta
columns included, and the rows are the ones the statements leave."""
import os
import sys

import pyarrow as pa
import pyarrow.parquet as pq
from hudi import HudiTableBuilder

ENDPOINT, WORK = sys.argv[1], sys.argv[2]
OPTIONS = {"aws_endpoint": ENDPOINT, "aws_allow_http": "true", "aws_access_key_id": "test",
           "aws_secret_access_key": "test", "aws_region": "us-east-1"}
failed = False


def check(what, got, want):
    global failed
    if got == want:
        print(f"ok   {what}")
    else:
        failed = True
        print(f"FAIL {what}: got {got}, want {want}")


def rows(table, cols):
    return sorted((tuple(r[c] for c in cols) for r in table.to_pylist()), key=repr)


for name, want, cols in [
    ("s3t", [(1, "a", 10.0, "x"), (2, "b", 20.0, "y"), (4, "d", 4.0, "z")], ["id", "name", "price", "dt"]),
    ("s3m", [(2, "b")], ["id", "v"]),
]:
    ours = pq.read_table(os.path.join(WORK, name + ".parquet"))
    table = HudiTableBuilder.from_base_uri(f"s3://hoodie/warehouse/{name}").with_storage_options(OPTIONS).build()
    batches = table.read()
    theirs = pa.Table.from_batches(batches) if batches else pa.table({})
    every = ours.schema.names
    check(f"{name}: hudi-rs reads hoodie's rows and meta columns", rows(theirs, every), rows(ours, every))
    check(f"{name}: the rows the statements leave", rows(ours, cols), sorted(want, key=repr))
sys.exit(1 if failed else 0)
