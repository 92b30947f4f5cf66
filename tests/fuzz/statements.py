#!/usr/bin/env python3
"""Statement-text fuzzer: random SQL and random bytes fed to the `hoodie` shell.

Statements of sql-tests/ are mutated (cut short, tokens swapped, random keywords, deep nesting,
odd unicode, NUL bytes, plain random bytes; table names pointed at the warehouse's tables) and
each is run by its own `hoodie -f FILE` process over a warehouse holding copy-on-write and
merge-on-read tables, partitioned and not. A statement passes when the process exits 0 (an
answer) or 1 (an error); a panic (`panicked at` on stderr), an abort, a death by a signal,
another exit status or a hang is a failure. After every statement that failed, the tables'
files must be as before: every file under the warehouse is hashed, except lock and heartbeat
files, markers under `.hoodie/.temp` and the rollback instants a failed write records when it
rolls itself back (the table's content is unchanged by those).

Seeded and reproducible: seed S draws its statements from random.Random(S) alone, and every
failure is printed with its seed and statement (repr). Each seed starts from a fresh copy of
the warehouse. Python's standard library only.

Usage: statements.py --hoodie BIN [--seeds 0..39] [--statements 12] [--keep DIR]
"""

import argparse
import hashlib
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 60

SETUP = """
CREATE TABLE cow_t (id INT, name STRING, price DOUBLE, ts BIGINT) USING hudi
  TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts');
INSERT INTO cow_t VALUES (1, 'a', 1.5, 10), (2, 'b', 2.5, 10), (3, 'c', 3.5, 10);
CREATE TABLE mor_p (id INT, name STRING, price DOUBLE, ts BIGINT, dt STRING) USING hudi
  PARTITIONED BY (dt)
  TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts', type = 'mor');
INSERT INTO mor_p VALUES (1, 'a', 1.5, 10, '2024-01-01'), (2, 'b', 2.5, 10, '2024-01-02');
UPDATE mor_p SET price = 9.5 WHERE id = 2;
CREATE TABLE cow_p (id INT, name STRING, price DOUBLE, ts BIGINT, dt STRING) USING hudi
  PARTITIONED BY (dt) TBLPROPERTIES (primaryKey = 'id', preCombineField = 'ts');
INSERT INTO cow_p VALUES (1, 'a', 1.5, 10, '2024-01-01'), (2, 'b', 2.5, 10, '2024-01-02');
"""
TABLES = ["cow_t", "mor_p", "cow_p"]

KEYWORDS = """SELECT FROM WHERE INSERT INTO VALUES UPDATE SET DELETE MERGE USING ON WHEN MATCHED
THEN NOT AND OR NULL CREATE TABLE DROP ALTER ADD COLUMNS PARTITION PARTITIONED BY TBLPROPERTIES
OVERWRITE TRUNCATE CALL GROUP ORDER LIMIT UNION ALL EXCEPT JOIN LEFT CASE END AS TIMESTAMP OF
SHOW DESCRIBE EXPLAIN RESET IF EXISTS PURGE ( ) , ; * = <> + - / % || ' " ` 1 -1 1e308 NULL
0.5 'x' TRUE FALSE ARRAY STRUCT MAP""".split()

ODD = ["\u0000", "\u200b", "\u202e", "\ufeff", "\uffff", "\u0301", "\U0001f600", "\u00e9",
       "\u4e2d", "\r", "\t", "\x7f", "\\", "\u2028", "\ud7ff"]


def collect_statements():
    """Every statement of the sql-tests/ .slt files (the text after `statement ...` and
    `query ...` up to the blank line, or `----`)."""
    out = []
    for path in sorted((ROOT / "sql-tests").rglob("*.slt")):
        lines = path.read_text(encoding="utf-8").splitlines()
        i = 0
        while i < len(lines):
            if re.match(r"^(statement|query)\b", lines[i]):
                body = []
                i += 1
                while i < len(lines) and lines[i].strip() and lines[i] != "----":
                    body.append(lines[i])
                    i += 1
                if body:
                    out.append("\n".join(body))
            i += 1
    return out


def tokens(sql):
    return re.findall(r"'[^']*'|\"[^\"]*\"|`[^`]*`|\w+|\S", sql)


def retarget(rng, sql):
    """Points the statement's table names at the warehouse's tables, often."""
    names = {"t", "t1", "t2", "tbl", "target", "src", "h", "h0", "h1", "hudi_tbl"}
    return re.sub(r"\b(\w+)\b", lambda m: rng.choice(TABLES)
                  if m.group(1).lower() in names and rng.random() < 0.7 else m.group(1), sql)


def deep(rng):
    n = rng.choice([50, 500, 1200, 5000, 100_000])
    shape = rng.randrange(6)
    if shape == 0:
        return "SELECT " + "+".join(["1"] * n)
    if shape == 1:
        return "SELECT * FROM cow_t WHERE " + " OR ".join(["id = 1"] * n)
    if shape == 2:
        return "SELECT " + "(" * n + "1" + ")" * n
    if shape == 3:
        k = min(n, 2000)
        return "SELECT * FROM " + "(SELECT * FROM " * k + "cow_t" + ") x" * k
    if shape == 4:
        return "SELECT count(*) FROM cow_t WHERE id IN (" + ", ".join(map(str, range(n))) + ")"
    return "SELECT length('" + "x" * (n * 10) + "')"


def mutate(rng, pool):
    """One fuzzed statement: bytes (not always valid UTF-8)."""
    kind = rng.randrange(10)
    if kind == 0:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
    if kind == 1:
        return deep(rng).encode()
    sql = retarget(rng, rng.choice(pool))
    toks = tokens(sql)
    for _ in range(rng.randrange(1, 4)):
        op = rng.randrange(7)
        if op == 0 and toks:
            toks = toks[: rng.randrange(len(toks) + 1)]
        elif op == 1 and len(toks) > 1:
            a, b = rng.randrange(len(toks)), rng.randrange(len(toks))
            toks[a], toks[b] = toks[b], toks[a]
        elif op == 2:
            toks.insert(rng.randrange(len(toks) + 1), rng.choice(KEYWORDS))
        elif op == 3 and toks:
            del toks[rng.randrange(len(toks))]
        elif op == 4:
            toks.insert(rng.randrange(len(toks) + 1), rng.choice(ODD) * rng.randrange(1, 4))
        elif op == 5 and toks:
            i = rng.randrange(len(toks))
            toks[i] = toks[i] + rng.choice(ODD)
        elif op == 6 and toks:
            i = rng.randrange(len(toks))
            toks[i] = "(" * 300 + toks[i] + ")" * 300
    return " ".join(toks).encode("utf-8", "surrogatepass")


def snapshot(warehouse):
    """A hash of every file that makes up the tables (see the module docs for what is left
    out)."""
    digests = {}
    for path in sorted(warehouse.rglob("*")):
        if not path.is_file():
            continue
        rel = path.relative_to(warehouse).as_posix()
        if re.search(r"(^|/)\.hoodie/(\.temp|\.heartbeat|\.lock|lock)(/|$)", rel) or \
                ".rollback" in rel or rel.endswith(".lock"):
            continue
        digests[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return digests


def run_statement(hoodie, warehouse, sql, scratch):
    script = scratch / "stmt.sql"
    script.write_bytes(sql)
    try:
        p = subprocess.run([hoodie, "--warehouse", str(warehouse), "-f", str(script)],
                           capture_output=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, "timed out"
    return p.returncode, p.stderr.decode("utf-8", "replace")


def check(seed, sql, code, stderr, before, after):
    """The failure message, or None."""
    if code is None:
        return f"hang ({stderr})"
    if "panicked at" in stderr:
        return "panic: " + stderr[stderr.index("panicked at"):][:400]
    if code not in (0, 1):
        return f"exit status {code}: {stderr[-400:]}"
    if code == 1 and before != after:
        changed = sorted(set(before) ^ set(after) | {k for k in before if after.get(k, before[k]) != before[k]})
        return f"a failed statement changed the tables: {changed[:10]}"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hoodie", required=True)
    ap.add_argument("--seeds", default="0..39")
    ap.add_argument("--statements", type=int, default=12)
    ap.add_argument("--keep", help="keep the scratch directory here")
    args = ap.parse_args()
    lo, hi = (int(x) for x in args.seeds.split(".."))
    pool = collect_statements()
    scratch = Path(args.keep or tempfile.mkdtemp(prefix="hoodie-stmt-fuzz-"))
    scratch.mkdir(parents=True, exist_ok=True)
    template = scratch / "template"
    shutil.rmtree(template, ignore_errors=True)
    setup = subprocess.run([args.hoodie, "--warehouse", str(template), "-c", SETUP],
                           capture_output=True, text=True)
    if setup.returncode != 0:
        sys.exit(f"setup failed: {setup.stderr}")
    counts = {"statements": 0, "answers": 0, "errors": 0}
    failures = []
    for seed in range(lo, hi + 1):
        rng = random.Random(seed)
        warehouse = scratch / "wh"
        shutil.rmtree(warehouse, ignore_errors=True)
        shutil.copytree(template, warehouse)
        for _ in range(args.statements):
            sql = mutate(rng, pool)
            before = snapshot(warehouse)
            code, stderr = run_statement(args.hoodie, warehouse, sql, scratch)
            after = snapshot(warehouse) if code == 1 else before
            counts["statements"] += 1
            counts["answers" if code == 0 else "errors"] += 1
            problem = check(seed, sql, code, stderr, before, after)
            if problem:
                failures.append((seed, sql, problem))
                print(f"FAIL seed {seed}: {problem}\n  statement: {sql[:600]!r}", flush=True)
    if not args.keep:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f"statement fuzz: {counts['statements']} statements ({counts['answers']} answered, "
          f"{counts['errors']} errors), {len(failures)} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
