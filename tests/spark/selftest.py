"""The Spark stage's own test: what it compares is really compared.

1. hoodie-slt --engine spark: a file whose expectations are Spark's answers passes; the same file
   with one planted wrong expectation fails at that record; `skipif spark` and a conditional
   `halt` keep records from Spark; a statement error's regex is checked against Spark's text.
2. The comparison of read_hoodie.py and spark_tables.py: a table hoodie wrote, read by both,
   agrees; the same read with a planted wrong row, a missing row and a planted wrong meta column
   in hoodie's answer is caught.

Usage: selftest.py <hoodie binary> <hoodie-slt binary> <work dir>   (HOODIE_SPARK set)
"""
import contextlib
import io
import os
import subprocess
import sys

import pyarrow as pa

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from read_hoodie import Checker, Read, hoodie_reads, spark_reads  # noqa: E402

HOODIE, SLT, WORK = (os.path.abspath(a) for a in sys.argv[1:4])
failures = []


def expect(label, ok):
    print(("ok   " if ok else "FAIL ") + label, flush=True)
    if not ok:
        failures.append(label)


def slt(name, text):
    path = os.path.join(WORK, name)
    with open(path, "w") as f:
        f.write(text)
    done = subprocess.run([SLT, "--engine", "spark", path], capture_output=True, text=True)
    return done.returncode, done.stdout + done.stderr


GOOD = """\
statement ok
create table t (id int, name string, ts bigint) using hudi tblproperties (primaryKey = 'id', preCombineField = 'ts')

statement count 2
insert into t values (1, 'a', 10), (2, 'b', 20)

query ITI rowsort
select id, name, ts from t
----
1 a 10
2 b 20

statement error (TABLE_OR_VIEW_NOT_FOUND|not found)
select * from no_such_table

# hoodie only: a planted wrong answer that Spark must not see
skipif spark
query I
select count(*) from t
----
99
"""


def runner_checks():
    code, out = slt("good.slt", GOOD)
    expect(f"a file with Spark's answers passes ({out.strip().splitlines()[-1:]})", code == 0 and "1 skipped" in out)
    code, out = slt("wrong_row.slt", GOOD.replace("2 b 20", "2 b 21"))
    expect("a planted wrong expected row fails", code == 1 and "wrong_row.slt:7" in out and "2 b 21" in out)
    code, out = slt("wrong_error.slt", GOOD.replace("(TABLE_OR_VIEW_NOT_FOUND|not found)", "no field named x"))
    expect("a statement error whose regex does not match Spark's text fails", code == 1 and "wrong_error.slt:13" in out)
    code, out = slt("wrong_type.slt", GOOD.replace("query ITI rowsort", "query ITT rowsort"))
    expect("a planted wrong column type fails", code == 1 and "wrong_type.slt" in out)
    halted = "# hoodie only\nonlyif spark\nhalt\n\nquery I\nselect 1\n----\n2\n"
    code, out = slt("halted.slt", halted)
    expect("onlyif spark + halt skips the rest of a file on Spark", code == 0 and "0 passed, 0 failed, 1 skipped" in out)


def comparison_checks():
    wh = os.path.join(WORK, "wh")
    os.makedirs(wh, exist_ok=True)
    script = ("create table st (id int, name string, ts bigint, dt string) using hudi partitioned by (dt) "
              "tblproperties (primaryKey = 'id', preCombineField = 'ts', type = 'mor');"
              "insert into st values (1, 'a', 1, 'x'), (2, NULL, 2, 'y'), (3, 'c', 3, 'x');"
              "update st set name = 'b' where id = 2")
    subprocess.run([HOODIE, "--warehouse", wh, "-c", script], check=True, capture_output=True)
    reads = [Read("st", "snapshot", "select * from st")]
    ours = hoodie_reads(HOODIE, wh, reads, os.path.join(WORK, "out"))
    from client import Spark

    spark = Spark.from_env()
    spark.sql(f"create database if not exists selftest location '{WORK}/spark-db'")
    spark.sql(f"create table selftest.st using hudi location '{wh}/st'")
    theirs = spark_reads(reads, "selftest")
    fields = None

    def verdict(hoodie_table):
        c = Checker([])
        # the checker prints its verdict; a planted mismatch's FAIL line is the expected one
        with contextlib.redirect_stdout(io.StringIO()):
            c.check(reads[0], hoodie_table, theirs[0], fields)
        return c.failures

    expect("hoodie's and Spark's reads of the same table agree", verdict(ours[0]) == [])
    rows = ours[0].to_pylist()
    wrong = [dict(r) for r in rows]
    wrong[0]["name"] = "planted"
    expect("a planted wrong value in hoodie's rows is caught",
           verdict(pa.Table.from_pylist(wrong, schema=ours[0].schema)) != [])
    expect("a missing row is caught", verdict(pa.Table.from_pylist(rows[1:], schema=ours[0].schema)) != [])
    meta = [dict(r) for r in rows]
    meta[0]["_hoodie_commit_time"] = "19700101000000000"
    expect("a planted wrong meta column is caught",
           verdict(pa.Table.from_pylist(meta, schema=ours[0].schema)) != [])


def main():
    os.makedirs(WORK, exist_ok=True)
    runner_checks()
    comparison_checks()
    print(f"spark self-test: {len(failures)} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
