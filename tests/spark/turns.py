#!/usr/bin/env python3
"""Spark and hoodie take turns on one table.

For copy-on-write and merge-on-read, partitioned and not, event-time (preCombineField) and
commit-time ordering: hoodie creates the table and inserts; Spark with Hudi (the server of
tests/spark/start.sh, at $HOODIE_SPARK) registers it (`create table x using hudi location ...`)
and runs INSERT, UPDATE, DELETE, MERGE INTO, `call run_compaction` (merge-on-read, after
scheduling) and `call run_clean`; hoodie reads it (the rows must be what Spark reads, meta
columns included) and writes again (INSERT, UPDATE, DELETE, MERGE); Spark reads it (the same
rows both ways again).

It runs three times:
  (a) Spark with `hoodie.write.auto.upgrade=false` and `hoodie.write.table.version=6`: the table
      stays at version 6;
  (b) Spark's defaults: Spark's first write upgrades hoodie's version-6 table to version 9.
      hoodie must read it as Spark does, and write onto it (version 9 from then on);
  (c) hoodie creates the table as version 9 (`hoodie.write.table.version = 9`): Spark writes onto
      it with its defaults and no upgrade (the version and initial version stay 9), then hoodie.
Then once with Spark's metadata table (version 6 kept): hoodie refuses to write beside it until
hoodie.metadata.enable = false, removes it then, and Spark's next write rebuilds it. Then the
history case (both archive into one LSM history), and the upgrade cases: hoodie's CALL
upgrade_table leaves hoodie.properties as Spark's own upgrade of a copy does, and Spark reads and
writes the upgraded table.

Spark registers the tables in its database `default` (hoodie writes hoodie.database.name=default,
and Hudi on Spark refuses to write a table registered in another database). Its writes assign
every column in a MERGE UPDATE (UPDATE SET *) and type the MERGE source as the table, as Hudi
1.2.0 on Spark needs (tests/fuzz/README.md, "Spark as a second reference"). Spark's local file
system writes a `.<file>.crc` beside every file it writes: hoodie must read past them (a check
of its own; the case then goes on without them).

Usage: turns.py <hoodie binary> <work dir>   (needs $HOODIE_SPARK; pyarrow)
Prints "ok ..." per check, "KNOWN ..." for a listed difference, "FAIL ..." for any other, and a
summary line; exits 1 if anything failed.
"""
import decimal
import hashlib
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import pyarrow.parquet as pq  # noqa: E402

from client import Spark, SparkError  # noqa: E402

# Differences between hoodie and Spark with Hudi 1.2.0 that are understood: a check's label (the
# whole label, or the part after "<case>: " to cover every case) -> the one-line reason. Such a
# check passes, printing the reason; the check itself stays. Only real behaviour differences go
# here, never a mistake of this test. (None today.)
KNOWN = {
}


def known(label):
    return next((KNOWN[k] for k in KNOWN if label == k or label.endswith(": " + k)), None)

META = ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
        "_hoodie_file_name"]
COLS = ["id", "name", "price", "ts", "dt"]

passed, known_, failed = [], [], []


def check(label, ok, detail=""):
    if ok:
        passed.append(label)
        print(f"ok   {label}", flush=True)
    elif known(label):
        known_.append(label)
        print(f"KNOWN {label}: {known(label)}\n      ({detail})", flush=True)
    else:
        failed.append(label)
        print(f"FAIL {label}: {detail}", flush=True)


class Case:
    """One table of the matrix: its name, type, partitioning, ordering and the mode of the run."""

    def __init__(self, mode, ttype, partitioned, event_time, tag):
        self.mode, self.ttype, self.partitioned, self.event_time = mode, ttype, partitioned, event_time
        self.name = f"turns{tag}_{mode}_{ttype}_{'p' if partitioned else 'np'}_{'et' if event_time else 'ct'}"

    def __str__(self):
        return (f"({self.mode}) {self.ttype} {'partitioned' if self.partitioned else 'non-partitioned'} "
                f"{'event-time' if self.event_time else 'commit-time'}")

    @property
    def cols(self):
        return COLS if self.partitioned else COLS[:-1]

    def create(self):
        props = [f"type = '{self.ttype}'", "primaryKey = 'id'"]
        # (a) and (b) start from a version 6 table, (c) from version 9 (hoodie's default; said
        # all the same)
        props.append(f"'hoodie.write.table.version' = '{9 if self.mode == 'c' else 6}'")
        if self.event_time:
            props += ["preCombineField = 'ts'", "recordMergeMode = 'EVENT_TIME_ORDERING'"]
        else:
            props += ["recordMergeMode = 'COMMIT_TIME_ORDERING'"]
        part = " PARTITIONED BY (dt)" if self.partitioned else ""
        cols = "id INT, name STRING, price DOUBLE, ts BIGINT" + (", dt STRING" if self.partitioned else "")
        return f"CREATE TABLE {self.name} ({cols}) USING hudi{part} TBLPROPERTIES ({', '.join(props)})"

    def values(self, rows):
        """VALUES text of rows given as (id, name, price, ts, dt)."""
        out = []
        for r in rows:
            r = r if self.partitioned else r[:4]
            out.append("(" + ", ".join(lit(v) for v in r) + ")")
        return ", ".join(out)

    def source(self, rows):
        """A MERGE source of rows (id, name, price, ts, dt), typed as the table's columns (Hudi
        on Spark wants the key, partition and ordering columns of the target's types)."""
        types = {"id": "INT", "name": "STRING", "price": "DOUBLE", "ts": "BIGINT", "dt": "STRING"}
        sel = []
        for r in rows:
            r = r if self.partitioned else r[:4]
            sel.append("SELECT " + ", ".join(f"CAST({lit(v)} AS {types[c]}) AS {c}" for v, c in zip(r, self.cols)))
        return "(" + " UNION ALL ".join(sel) + ")"


def lit(v):
    if v is None:
        return "NULL"
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    return repr(v)


# ------------------------------------------------------------------ hoodie

def hoodie(binary, warehouse, stmts, expect_error=False):
    """Runs statements in one hoodie process; returns (ok, output)."""
    script = os.path.join(warehouse, f"script-{time.time_ns()}.sql")
    with open(script, "w") as f:
        for s in stmts:
            f.write(s.rstrip().rstrip(";") + ";\n")
    p = subprocess.run([binary, "--warehouse", warehouse, "-f", script], capture_output=True, text=True, timeout=600)
    os.remove(script)
    out = (p.stdout + "\n" + p.stderr).strip()
    if p.returncode != 0 and not expect_error:
        raise RuntimeError(f"hoodie failed: {out[-2000:]}\n  script: {stmts}")
    return p.returncode == 0, out


def hoodie_read(binary, warehouse, case):
    path = os.path.join(warehouse, f"read-{time.time_ns()}.parquet")
    hoodie(binary, warehouse, [f"COPY (SELECT * FROM {case.name}) TO '{path}' STORED AS PARQUET"])
    rows = pq.read_table(path).to_pylist()
    os.remove(path)
    return canon(rows, case)


def hoodie_read_spark_files(binary, warehouse, case):
    """hoodie's read of a table Spark just wrote. Spark's local file system (Hadoop's
    ChecksumFileSystem) writes a `.<name>.crc` beside every file; hoodie must ignore them. If the
    read fails on one, that is a failure of its own, and the rest of the case goes on without the
    .crc files (Hadoop reads a file without its checksum file as well)."""
    base = os.path.join(warehouse, case.name)
    crcs = [os.path.join(r, n) for r, _, fs in os.walk(base) for n in fs if n.endswith(".crc")]
    try:
        rows = hoodie_read(binary, warehouse, case)
        check(f"{case}: hoodie reads the table beside Hadoop's .crc files", True)
        return rows
    except RuntimeError as e:
        check(f"{case}: hoodie reads the table beside Hadoop's .crc files", False, str(e).splitlines()[0][:300])
    for p in crcs:
        os.remove(p)
    return hoodie_read(binary, warehouse, case)


def spark_read(spark, case):
    spark.sql(f"REFRESH TABLE {case.name}")
    cols = ", ".join(META + case.cols)
    return canon(spark.sql(f"SELECT {cols} FROM {case.name}").to_pylist(), case)


def norm(v):
    if isinstance(v, float):
        return float(f"{v:.12g}")
    if isinstance(v, decimal.Decimal):
        return str(v)
    return v


def canon(rows, case):
    names = META + case.cols
    missing = [n for n in names if rows and n not in rows[0]]
    if missing:
        raise RuntimeError(f"columns missing from a read: {missing}")
    return sorted((tuple(norm(r[n]) for n in names) for r in rows), key=repr)


def differ(a, b):
    only_a = [r for r in a if r not in b]
    only_b = [r for r in b if r not in a]
    return f"{len(a)} rows vs {len(b)}; only in hoodie's read: {only_a[:4]}; only in Spark's: {only_b[:4]}"


def table_version(base):
    with open(os.path.join(base, ".hoodie", "hoodie.properties")) as f:
        for line in f:
            if line.startswith("hoodie.table.version="):
                return int(line.split("=", 1)[1])
    return None


def snapshot(base):
    """Every file of the table (relative path -> size and content hash): what a refused write
    must leave as it was."""
    out = {}
    for root, _, files in os.walk(base):
        for n in files:
            p = os.path.join(root, n)
            with open(p, "rb") as f:
                out[os.path.relpath(p, base)] = (os.path.getsize(p), hashlib.sha1(f.read()).hexdigest())
    return out


# ------------------------------------------------------------------ the turns

def spark_turn(spark, case, base):
    """Spark's writes on the table hoodie created."""
    stmts = [
        "SET hoodie.datasource.write.operation=upsert",
        # a new key, and a newer version of id 1
        f"INSERT INTO {case.name} VALUES {case.values([(4, 'spark_new', 40.0, 20, 'b'), (1, 'spark_v2', 11.0, 20, 'a')])}",
        "RESET hoodie.datasource.write.operation",
        f"UPDATE {case.name} SET price = price * 2, ts = 21 WHERE id = 2",
        f"DELETE FROM {case.name} WHERE id = 3",
        # MERGE with every column assigned (UPDATE SET *): Hudi 1.2.0 sets the columns a MERGE
        # update leaves out to NULL on a version 6 merge-on-read table (tests/fuzz/README.md)
        f"MERGE INTO {case.name} t USING {case.source([(4, 'spark_merged', 44.0, 22, 'b'), (5, 'spark_ins', 50.0, 22, 'a')])} s "
        f"ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *",
    ]
    if case.ttype == "mor":
        stmts += [f"CALL run_compaction(op => 'schedule', table => '{case.name}')",
                  f"CALL run_compaction(op => 'run', table => '{case.name}')"]
    stmts.append(f"CALL run_clean(table => '{case.name}', retain_commits => 1)")
    for s in stmts:
        try:
            spark.sql(s)
        except SparkError as e:
            raise RuntimeError(f"Spark refused: {s}\n  {str(e)[:1500]}")


def hoodie_writes(case):
    """hoodie's writes, one statement each (each is also tried alone on a version 9 table)."""
    return [
        ["SET hoodie.datasource.write.operation = 'upsert'",
         f"INSERT INTO {case.name} VALUES {case.values([(6, 'hoodie_new', 60.0, 30, 'a'), (4, 'hoodie_v3', 45.0, 30, 'b')])}"],
        [f"UPDATE {case.name} SET name = 'hoodie_upd', ts = 31 WHERE id = 5"],
        [f"DELETE FROM {case.name} WHERE id = 2"],
        [f"MERGE INTO {case.name} t USING {case.source([(1, 'hoodie_merged', 12.0, 32, 'a'), (7, 'hoodie_ins', 70.0, 32, 'b')])} s "
         f"ON t.id = s.id WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *"],
    ]


def run_case(binary, spark, warehouse, case):
    base = os.path.join(warehouse, case.name)
    print(f"-- {case}", flush=True)
    hoodie(binary, warehouse, [
        case.create(),
        "SET hoodie.datasource.write.operation = 'upsert'",
        f"INSERT INTO {case.name} VALUES {case.values([(1, 'a', 10.0, 10, 'a'), (2, 'b', 20.0, 10, 'b'), (3, 'c', 30.0, 10, 'a')])}",
    ])
    created = 9 if case.mode == "c" else 6
    check(f"{case}: hoodie writes version {created}", table_version(base) == created,
          f"version {table_version(base)}")
    spark.sql("RESET")
    if case.mode == "a":
        spark.sql("SET hoodie.write.auto.upgrade=false")
        spark.sql("SET hoodie.write.table.version=6")
    spark.sql(f"CREATE TABLE {case.name} USING hudi LOCATION '{base}'")
    first_h, first_s = hoodie_read(binary, warehouse, case), spark_read(spark, case)
    check(f"{case}: Spark reads hoodie's table as hoodie does", first_h == first_s, differ(first_h, first_s))

    spark_turn(spark, case, base)
    want_version = 6 if case.mode == "a" else 9
    check(f"{case}: after Spark's writes the table is at version {want_version}",
          table_version(base) == want_version, f"version {table_version(base)}")
    if case.mode == "c":
        check(f"{case}: Spark wrote without an upgrade (initial version 9)",
              table_property(base, "hoodie.table.initial.version") == "9",
              f"initial version {table_property(base, 'hoodie.table.initial.version')}")
    h, s = hoodie_read_spark_files(binary, warehouse, case), spark_read(spark, case)
    check(f"{case}: hoodie reads Spark's writes as Spark does", h == s, differ(h, s))
    names = {r[META.index("_hoodie_record_key")]: r[len(META) + 1] for r in s}
    check(f"{case}: Spark's writes took effect", names.get("1") == "spark_v2" and names.get("4") == "spark_merged"
          and "3" not in names and names.get("5") == "spark_ins", f"names by key: {names}")

    for stmts in hoodie_writes(case):
        hoodie(binary, warehouse, stmts)
    check(f"{case}: after hoodie's writes the table is at version {want_version}",
          table_version(base) == want_version, f"version {table_version(base)}")
    h, s = hoodie_read(binary, warehouse, case), spark_read(spark, case)
    check(f"{case}: Spark reads hoodie's writes as hoodie does", h == s, differ(h, s))
    names = {r[META.index("_hoodie_record_key")]: r[len(META) + 1] for r in h}
    check(f"{case}: hoodie's writes took effect", names.get("6") == "hoodie_new" and names.get("4") == "hoodie_v3"
          and names.get("5") == "hoodie_upd" and "2" not in names and names.get("1") == "hoodie_merged"
          and names.get("7") == "hoodie_ins", f"names by key: {names}")
    if want_version == 9:
        # Spark writes again after hoodie, and both read the same rows
        spark.sql(f"UPDATE {case.name} SET name = 'spark_last', ts = 40 WHERE id = 7")
        h, s = hoodie_read(binary, warehouse, case), spark_read(spark, case)
        check(f"{case}: Spark writes after hoodie and both read the same rows", h == s, differ(h, s))
        names = {r[META.index("_hoodie_record_key")]: r[len(META) + 1] for r in h}
        check(f"{case}: Spark's write after hoodie's took effect", names.get("7") == "spark_last",
              f"names by key: {names}")


def table_property(base, key):
    """The value of `key` in hoodie.properties (None when absent)."""
    with open(os.path.join(base, ".hoodie", "hoodie.properties")) as f:
        for line in f:
            if line.startswith(key + "="):
                return line.split("=", 1)[1].strip()
    return None


def metadata_properties(base):
    """hoodie.table.metadata.partitions as hoodie.properties has it ('' when absent)."""
    with open(os.path.join(base, ".hoodie", "hoodie.properties")) as f:
        for line in f:
            if line.startswith("hoodie.table.metadata.partitions="):
                return line.split("=", 1)[1].strip()
    return ""


def metadata_case(binary, spark, warehouse, tag):
    """Spark (version 6 kept, metadata table on) makes a metadata table on a table hoodie
    created; hoodie keeps none, so it refuses to write (nothing changes) until
    hoodie.metadata.enable = false, when it removes the metadata table and writes; Spark's next
    write rebuilds the metadata table and both read the same rows."""
    case = Case("a", "cow", True, True, f"{tag}_md")
    base = os.path.join(warehouse, case.name)
    print(f"-- {case} with Spark's metadata table", flush=True)
    hoodie(binary, warehouse, [
        case.create(),
        f"INSERT INTO {case.name} VALUES {case.values([(1, 'a', 10.0, 10, 'a'), (2, 'b', 20.0, 10, 'b'), (3, 'c', 30.0, 10, 'a')])}",
    ])
    spark.sql("RESET")
    spark.sql("SET hoodie.write.auto.upgrade=false")
    spark.sql("SET hoodie.write.table.version=6")
    spark.sql("SET hoodie.metadata.enable=true")
    spark.sql(f"CREATE TABLE {case.name} USING hudi LOCATION '{base}'")
    spark_turn(spark, case, base)
    mdt = os.path.join(base, ".hoodie", "metadata")
    check(f"{case}: Spark made a metadata table", os.path.isdir(mdt) and "files" in metadata_properties(base),
          f"partitions {metadata_properties(base)!r}")
    insert = [f"INSERT INTO {case.name} VALUES {case.values([(8, 'hoodie_md', 80.0, 40, 'b')])}"]
    before = snapshot(base)
    ok, out = hoodie(binary, warehouse, insert, expect_error=True)
    check(f"{case}: hoodie refuses to write beside the metadata table",
          not ok and "has a metadata table" in out and "hoodie.metadata.enable = false" in out, out[-300:])
    check(f"{case}: the refused write leaves the table as it was", snapshot(base) == before)
    hoodie(binary, warehouse, ["SET hoodie.metadata.enable = false"] + insert)
    check(f"{case}: hoodie removed the metadata table", not os.path.exists(mdt) and metadata_properties(base) == "",
          f"partitions {metadata_properties(base)!r}")
    spark.sql(f"INSERT INTO {case.name} VALUES {case.values([(9, 'spark_md', 90.0, 41, 'a')])}")
    check(f"{case}: Spark's next write rebuilt the metadata table",
          os.path.isdir(mdt) and "files" in metadata_properties(base), f"partitions {metadata_properties(base)!r}")
    h, s = hoodie_read(binary, warehouse, case), spark_read(spark, case)
    check(f"{case}: both read the same rows after the rebuild", h == s, differ(h, s))
    names = {r[META.index("_hoodie_record_key")]: r[len(META) + 1] for r in s}
    check(f"{case}: hoodie's and Spark's rows are there", names.get("8") == "hoodie_md"
          and names.get("9") == "spark_md" and names.get("4") == "spark_merged", f"names by key: {names}")
    spark.sql(f"DROP TABLE IF EXISTS {case.name}")


def archived_by_hoodie(binary, warehouse, name):
    """The commit times hoodie's show_archived_commits lists for table `name`."""
    _, out = hoodie(binary, warehouse, [
        f"CALL show_archived_commits(table => '{name}', start_ts => '000', "
        f"end_ts => '99999999999999999', limit => 1000)"])
    return sorted(set(re.findall(r"^\|\s*(\d{17})\s*\|", out, re.M)))


def archived_by_spark(spark, name):
    rows = spark.sql(f"CALL show_archived_commits(table => '{name}', start_ts => '000', "
                     f"end_ts => '99999999999999999', limit => 1000)").to_pylist()
    return sorted({r["commit_time"] for r in rows})


def history_case(binary, spark, warehouse, tag):
    """Turns of archival on a version 9 table: hoodie archives into the LSM history, Spark lists
    what hoodie archived and archives onto the same history (compacting it), hoodie lists what
    both archived and archives on; at each turn both list the same archived commits and read
    the same rows."""
    case = Case("c", "cow", True, True, f"{tag}_hist")
    base = os.path.join(warehouse, case.name)
    history = os.path.join(base, ".hoodie", "timeline", "history")
    keep = {"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3",
            "hoodie.cleaner.commits.retained": "1", "hoodie.timeline.compaction.batch.size": "2"}
    print(f"-- {case} archived by both", flush=True)
    hoodie(binary, warehouse, [f"SET {k} = {v}" for k, v in keep.items()] + [case.create()] + [
        f"INSERT INTO {case.name} VALUES {case.values([(i, f'h{i}', float(i), 10 + i, 'ab'[i % 2])])}"
        for i in range(1, 7)])
    files = [f for f in os.listdir(history) if f.endswith(".parquet")] if os.path.isdir(history) else []
    check(f"{case}: hoodie archived into the LSM history", len(files) > 0, f"history: {files}")
    spark.sql("RESET")
    spark.sql("SET hoodie.metadata.enable=false")
    for k, v in keep.items():
        spark.sql(f"SET {k}={v}")
    spark.sql(f"CREATE TABLE {case.name} USING hudi LOCATION '{base}'")
    h, s = archived_by_hoodie(binary, warehouse, case.name), archived_by_spark(spark, case.name)
    check(f"{case}: Spark lists the commits hoodie archived", h == s and len(h) > 0, f"hoodie {h}, Spark {s}")
    for i in range(7, 11):
        spark.sql(f"INSERT INTO {case.name} VALUES {case.values([(i, f's{i}', float(i), 10 + i, 'ab'[i % 2])])}")
    h, s = archived_by_hoodie(binary, warehouse, case.name), archived_by_spark(spark, case.name)
    check(f"{case}: hoodie lists what both archived", h == s and len(h) > 4, f"hoodie {h}, Spark {s}")
    hoodie(binary, warehouse, [f"SET {k} = {v}" for k, v in keep.items()] + [
        f"UPDATE {case.name} SET name = 'hoodie_upd', ts = 40 WHERE id = {i}" for i in (1, 7, 9)])
    h, s = archived_by_hoodie(binary, warehouse, case.name), archived_by_spark(spark, case.name)
    check(f"{case}: Spark lists what hoodie archived on its history", h == s and len(h) > 6,
          f"hoodie {h}, Spark {s}")
    h, s = hoodie_read(binary, warehouse, case), spark_read(spark, case)
    check(f"{case}: both read the same rows", h == s and len(h) == 10, differ(h, s))
    spark.sql(f"DROP TABLE IF EXISTS {case.name}")
    spark.sql("RESET")


def properties_of(base):
    with open(os.path.join(base, ".hoodie", "hoodie.properties")) as f:
        return dict(line.rstrip("\n").split("=", 1) for line in f if "=" in line and not line.startswith("#"))


# the keys of two copies of one table that differ by their names alone
NAMED_KEYS = {"hoodie.table.name", "hoodie.table.checksum", "hoodie.table.create.schema"}


def completed_actions(base):
    """The actions of the completed instants on a table's active timeline (layout 2), in
    order of their requested times."""
    names = os.listdir(os.path.join(base, ".hoodie", "timeline"))
    done = sorted(n for n in names if re.fullmatch(r"\d+_\d+\.[a-z]+", n))
    return [n.split(".")[1] for n in done]


def version_change_by_both(binary, spark, warehouse, case, twin, base, twin_base, spark_change, procedure, to):
    """Copies the table at `base` to `twin_base`, lets Spark change the copy's version
    (`spark_change`, run on it by name) and hoodie the original's (`CALL procedure`), and checks
    that both leave the same hoodie.properties."""
    shutil.copytree(base, twin_base)
    spark.sql("RESET")
    spark.sql("SET hoodie.metadata.enable=false")
    spark.sql(f"CREATE TABLE {twin.name} USING hudi LOCATION '{twin_base}'")
    spark.sql(spark_change)
    _, out = hoodie(binary, warehouse, [f"CALL {procedure}(table => '{case.name}', to_version => '{to}')"])
    check(f"{case}: {procedure} returns true", re.search(r"\|\s*true\s*\|", out) is not None, out[-300:])
    mine, spark_props = properties_of(base), properties_of(twin_base)
    diff = {k: (mine.get(k), spark_props.get(k)) for k in sorted(set(mine) | set(spark_props))
            if k not in NAMED_KEYS and mine.get(k) != spark_props.get(k)}
    check(f"{case}: hoodie's {procedure} leaves hoodie.properties as Spark's does", not diff,
          f"hoodie vs Spark: {diff}")


def upgrade_case(binary, spark, warehouse, tag, ttype, partitioned, event_time, archived=False):
    """hoodie's CALL upgrade_table against Spark's upgrade: two copies of one version 6 table
    hoodie wrote; Spark's first write (defaults: auto upgrade) upgrades one, hoodie's
    upgrade_table the other. Both leave the same hoodie.properties, Spark reads
    hoodie's upgraded table with the rows hoodie reads, writes onto it with no further change
    of version, and hoodie reads Spark's write. With `archived` the version 6 table has archived
    commits, which both upgrades move into the LSM history: Spark lists the same archived
    commits on both copies, and hoodie lists them as Spark does."""
    case = Case("a", ttype, partitioned, event_time, f"{tag}_up")
    twin = Case("a", ttype, partitioned, event_time, f"{tag}_upspark")
    base, twin_base = os.path.join(warehouse, case.name), os.path.join(warehouse, twin.name)
    print(f"-- {case} upgraded by hoodie and by Spark", flush=True)
    keep = {"hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3",
            "hoodie.cleaner.commits.retained": "1"} if archived else {}
    hoodie(binary, warehouse, [f"SET {k} = {v}" for k, v in keep.items()] + [
        case.create(),
        f"INSERT INTO {case.name} VALUES {case.values([(1, 'a', 10.0, 10, 'a'), (2, 'b', 20.0, 10, 'b')])}",
        f"UPDATE {case.name} SET name = 'B', ts = 11 WHERE id = 2",
    ] + [f"UPDATE {case.name} SET price = {i}.0, ts = {20 + i} WHERE id = 1" for i in range(5 if archived else 0)])
    if archived:
        check(f"{case}: hoodie archived commits of version 6", os.path.isdir(os.path.join(base, ".hoodie", "archived")))
    # Spark's first write (its defaults) upgrades its copy
    version_change_by_both(binary, spark, warehouse, case, twin, base, twin_base,
                           f"INSERT INTO {twin.name} VALUES {twin.values([(3, 'c', 30.0, 12, 'a')])}",
                           "upgrade_table", "NINE")
    spark.sql(f"CREATE TABLE {case.name} USING hudi LOCATION '{base}'")
    if archived:
        mine, theirs = archived_by_spark(spark, case.name), archived_by_spark(spark, twin.name)
        check(f"{case}: Spark lists the archived commits of hoodie's upgrade as of its own",
              mine == theirs and len(mine) > 0, f"hoodie's upgrade {mine}, Spark's {theirs}")
        h = archived_by_hoodie(binary, warehouse, case.name)
        check(f"{case}: hoodie lists them as Spark does", h == mine, f"hoodie {h}, Spark {mine}")
    h, s = hoodie_read(binary, warehouse, case), spark_read(spark, case)
    check(f"{case}: Spark reads hoodie's upgraded table as hoodie does", h == s and len(h) == 2, differ(h, s))
    spark.sql(f"INSERT INTO {case.name} VALUES {case.values([(3, 'c', 30.0, 12, 'a')])}")
    after = properties_of(base)
    check(f"{case}: Spark writes onto it at version 9, no upgrade",
          after.get("hoodie.table.version") == "9" and after.get("hoodie.table.initial.version") == "6",
          f"version {after.get('hoodie.table.version')}, initial {after.get('hoodie.table.initial.version')}")
    h, s = hoodie_read_spark_files(binary, warehouse, case), spark_read(spark, case)
    check(f"{case}: hoodie reads Spark's write", h == s and len(h) == 3, differ(h, s))
    mine, theirs = completed_actions(base), completed_actions(twin_base)
    check(f"{case}: hoodie's upgrade runs what Spark's runs first (a merge-on-read table's compaction)",
          mine == theirs, f"hoodie {mine}, Spark {theirs}")
    for name in (case.name, twin.name):
        spark.sql(f"DROP TABLE IF EXISTS {name}")
    spark.sql("RESET")


def layout_1_actions(base):
    """The actions of the completed instants of a table's layout-1 timeline (`.hoodie/`), in
    order of their times."""
    names = os.listdir(os.path.join(base, ".hoodie"))
    done = sorted(n for n in names if re.fullmatch(r"\d+\.[a-z]+", n))
    return [n.split(".")[1] for n in done]


def downgrade_case(binary, spark, warehouse, tag, ttype, partitioned, event_time):
    """hoodie's CALL downgrade_table against Spark's: two copies of one version 9 table hoodie
    wrote (an insert, an insert overwrite, an update); Spark's downgrade_table moves one to 6,
    hoodie's the other. Both leave the same hoodie.properties and the same completed actions
    (a merge-on-read table compacted first), Spark reads hoodie's downgraded table as hoodie
    does and hoodie Spark's, and Spark writes onto hoodie's at version 6, which hoodie reads."""
    case = Case("c", ttype, partitioned, event_time, f"{tag}_down")
    twin = Case("c", ttype, partitioned, event_time, f"{tag}_downspark")
    base, twin_base = os.path.join(warehouse, case.name), os.path.join(warehouse, twin.name)
    print(f"-- {case} downgraded by hoodie and by Spark", flush=True)
    hoodie(binary, warehouse, [
        case.create(),
        f"INSERT INTO {case.name} VALUES {case.values([(1, 'a', 10.0, 10, 'a'), (2, 'b', 20.0, 10, 'b')])}",
        f"INSERT OVERWRITE {case.name} SELECT {', '.join(case.cols)} FROM {case.name} WHERE id = 2",
        f"INSERT INTO {case.name} VALUES {case.values([(1, 'a', 11.0, 11, 'a')])}",
        f"UPDATE {case.name} SET name = 'B', ts = 12 WHERE id = 2",
    ])
    version_change_by_both(binary, spark, warehouse, case, twin, base, twin_base,
                           f"CALL downgrade_table(table => '{twin.name}', to_version => 'SIX')",
                           "downgrade_table", "SIX")
    mine, theirs = layout_1_actions(base), layout_1_actions(twin_base)
    check(f"{case}: hoodie's downgrade leaves the actions Spark's does", mine == theirs and len(mine) > 0,
          f"hoodie {mine}, Spark {theirs}")
    spark.sql(f"CREATE TABLE {case.name} USING hudi LOCATION '{base}'")
    h, s = hoodie_read(binary, warehouse, case), spark_read(spark, case)
    check(f"{case}: Spark reads hoodie's downgraded table as hoodie does", h == s and len(h) == 2, differ(h, s))
    h, s = hoodie_read(binary, warehouse, twin), spark_read(spark, twin)
    check(f"{case}: hoodie reads Spark's downgraded table as Spark does", h == s and len(h) == 2, differ(h, s))
    spark.sql("SET hoodie.write.auto.upgrade=false")
    spark.sql(f"INSERT INTO {case.name} VALUES {case.values([(3, 'c', 30.0, 12, 'a')])}")
    after = properties_of(base)
    check(f"{case}: Spark writes onto it at version 6", after.get("hoodie.table.version") == "6",
          f"version {after.get('hoodie.table.version')}")
    h, s = hoodie_read_spark_files(binary, warehouse, case), spark_read(spark, case)
    check(f"{case}: hoodie reads Spark's write", h == s and len(h) == 3, differ(h, s))
    for name in (case.name, twin.name):
        spark.sql(f"DROP TABLE IF EXISTS {name}")
    spark.sql("RESET")


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    binary, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    t0 = time.time()
    spark = Spark.from_env()
    # Spark registers the tables in its database `default`: hoodie writes
    # hoodie.database.name=default, and Hudi on Spark refuses to write a table registered in
    # another database ("Config conflict ... hoodie.database.name")
    spark.sql("USE default")
    tag = os.getpid()
    warehouse = os.path.join(work, f"turns-{tag}")
    shutil.rmtree(warehouse, ignore_errors=True)
    os.makedirs(warehouse)
    for mode in ("a", "b", "c"):
        for ttype in ("cow", "mor"):
            for partitioned in (True, False):
                for event_time in (True, False):
                    case = Case(mode, ttype, partitioned, event_time, tag)
                    try:
                        run_case(binary, spark, warehouse, case)
                    except (RuntimeError, SparkError) as e:
                        check(f"{case}: runs to the end", False, str(e)[:2000])
                    finally:
                        try:
                            spark.sql(f"DROP TABLE IF EXISTS {case.name}")  # external: the files stay
                        except SparkError:
                            pass
    try:
        metadata_case(binary, spark, warehouse, tag)
    except (RuntimeError, SparkError) as e:
        check("the metadata table case runs to the end", False, str(e)[:2000])
    try:
        history_case(binary, spark, warehouse, tag)
    except (RuntimeError, SparkError) as e:
        check("the history case runs to the end", False, str(e)[:2000])
    for ttype, partitioned, event_time, archived in (("cow", True, True, True), ("mor", False, False, False),
                                                     ("mor", True, True, True)):
        try:
            upgrade_case(binary, spark, warehouse, tag, ttype, partitioned, event_time, archived)
        except (RuntimeError, SparkError) as e:
            check(f"the {ttype} upgrade case runs to the end", False, str(e)[:2000])
    for ttype, partitioned, event_time in (("cow", True, True), ("mor", False, False), ("mor", True, True)):
        try:
            downgrade_case(binary, spark, warehouse, tag, ttype, partitioned, event_time)
        except (RuntimeError, SparkError) as e:
            check(f"the {ttype} downgrade case runs to the end", False, str(e)[:2000])
    print(f"turns: {len(passed)} passed, {len(known_)} known differences, {len(failed)} failed "
          f"in {time.time() - t0:.0f}s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
