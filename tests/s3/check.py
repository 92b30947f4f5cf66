"""hudi-rs reads the tables hoodie wrote on the S3 server with the rows hoodie reads, meta
columns included, and the rows are the ones the statements leave (tests/stores/hudi_read.py)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "stores"))
from hudi_read import check_tables  # noqa: E402

ENDPOINT, WORK = sys.argv[1], sys.argv[2]
OPTIONS = {"aws_endpoint": ENDPOINT, "aws_allow_http": "true", "aws_access_key_id": "test",
           "aws_secret_access_key": "test", "aws_region": "us-east-1"}
CASES = [
    ("s3t", [(1, "a", 10.0, "x"), (2, "b", 20.0, "y"), (4, "d", 4.0, "z")], ["id", "name", "price", "dt"]),
    ("s3m", [(2, "b")], ["id", "v"]),
]
sys.exit(0 if check_tables("s3://hoodie/warehouse", OPTIONS, WORK, CASES) else 1)
