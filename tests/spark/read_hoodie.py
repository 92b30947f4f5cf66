"""Spark reads every table hoodie writes, as hoodie reads it.

hoodie writes the tables of tests/spark/read_hoodie.sql (every shape it writes: COW and MOR,
partitioned or not, simple, composite and nested keys, NULLs everywhere, both ordering modes,
bucket index, dropped partition columns, CDC in every logging mode, compaction, clean, archival,
savepoint and restore, ADD COLUMNS, INSERT OVERWRITE, DROP PARTITION, TRUNCATE). Then hoodie and
Spark Hudi (the reference) both read each table: the snapshot, the read-optimized view (MOR), the
table as of every completed commit, incremental windows (latest_state) and, on CDC tables, CDC
windows. The rows must be the same, meta columns included (compared as sorted multisets of
normalised values: floats to 12 digits, decimals without trailing zeros, timestamps in UTC); a
read both refuse agrees if both give the same kind of reason (REFUSALS). CDC rows are compared
on op, ts_ms and the before/after images as parsed JSON over the table's data columns: meta
columns in an image (Spark's inferred images carry them) are left out, a missing key is NULL (Spark
leaves NULLs out), the JSON text "null" is NULL, and Spark's epoch days / epoch microseconds /
Avro decimal bytes are read as the dates, timestamps and decimals they are. A decimal Spark's JSON
cannot show at all ({"zero": false}, Jackson's view of a ByteBuffer) is not compared; the ok line
counts the change rows that had one.

Usage: read_hoodie.py <hoodie binary> <work dir> [table version]   (HOODIE_SPARK set: start.sh)
With a table version (6, the default, 8 or 9), hoodie creates the tables of that version (`SET
hoodie.write.table.version`); incremental and CDC windows then run on completion times, as Hudi
1.x ranges them on versions 8 and 9.
Prints one line per check ("ok", "known" or "FAIL") and a summary; exits non-zero on a mismatch.
READ_HOODIE_TABLES=t1,t2 limits the run to those tables.

The helpers (hoodie and Spark batch reads, value normalisation, comparison) are shared with
spark_tables.py.
"""
import collections
import datetime as dt
import decimal
import fnmatch
import glob
import json
import math
import os
import queue
import re
import shutil
import subprocess
import sys
import threading
import time

import pyarrow as pa
import pyarrow.parquet as pq

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from client import Spark, SparkError  # noqa: E402

# Known differences between hoodie and Spark on the tables read_hoodie.sql writes, each
# (check label pattern, text the difference must contain, why). A pattern is an fnmatch pattern of
# check labels ("table: read"); commits are named by position (c1 = the table's first commit).
# A matching check is still run and printed as "known"; a pattern whose checks all agree fails
# the run (remove it here). An entry holds for the table versions of its optional fourth element
# (version 6 only when it has none).
KNOWN = [
    ("added_*: as of c1", "columns: hoodie",
     "time travel to before ALTER TABLE ADD COLUMNS: Spark reads with the table's schema as of the "
     "instant (without the added columns), hoodie with the latest schema (them as NULL)", (6, 9)),
    ("archived_mor: incremental (start, *", "only Spark",
     "v6 MOR incremental window from before the archived commits: Spark counts the active "
     "compaction commit and returns its base file's records whose commit time is in the window; "
     "hoodie leaves the compaction commit out"),
    ("bkt_mor: incremental (c1, *", '"v": "c0"',
     "MOR incremental read where a log record loses to the base record (an older ordering value; "
     "the bucket index sends an insert of a stored key to its file group's log): Spark returns "
     "the losing log record as the window's change, hoodie nothing (as its snapshot does)", (6, 9)),
    ("mor_partial*: incremental *", "ClassCastException",
     "Hudi 1.2.0 bug, not hoodie's: its incremental reader fails on partial-update log blocks "
     "(ClassCastException, UTF8String as InternalRow or Long), as on the ones Spark writes "
     "(spark_tables.py mor_merge); its snapshot and time travel reads agree", (9,)),
    ("cdc_mor_*: cdc *", "Fail to parse the base file and log files from DeltaCommit",
     "Hudi 1.2 bug, not hoodie's: its CDC reader parses a v6 (JSON) deltacommit as Avro for "
     "log files (Spark fails the same on a v6 MOR CDC table Spark writes)"),
    ("cdc_mor_*: cdc *", '"name": "A2"',
     "v9 MOR CDC of a log update after an earlier log update (MERGE at c5 over the UPDATE at c2): "
     "Spark's before image is the base file's record (name 'a'), not the state before the commit "
     "(name 'A2'), and over a window from the start it reports the update as an insert; hoodie "
     "gives the state before the commit", (9,)),
    ("cleaned_cow: incremental *", "only Spark",
     "v9 incremental window whose slice as of its end the cleaner deleted: Hudi 1.2.0's reader "
     "reads the latest slices (filtered on commit time), so it finds a record a later commit "
     "copied into a newer file; hoodie reads the slices as of the window's end that are left, as "
     "Hudi's V2 reader in apache/hudi's source does (HUDI #18943, planning docs hudi-history.md "
     "2.3)", (9,)),
]

# ---------------------------------------------------------------------------------------------
# shared machinery


class Read:
    """One read, run by hoodie and by Spark with the same SQL (table names resolve in hoodie's
    warehouse and in Spark's current database). kind: 'rows' or 'cdc'."""

    def __init__(self, table, label, sql, kind="rows"):
        self.table, self.label, self.sql, self.kind = table, label, sql, kind

    @property
    def check(self):
        return f"{self.table}: {self.label}"


def run(cmd, **kw):
    done = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if done.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)[:300]}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return done.stdout


def hoodie_reads(hoodie, warehouse, reads, out, prelude=()):
    """Runs every read in as few hoodie processes as possible (one, unless some fail): each read
    is COPY'd to out/<k>.parquet, after the prelude's statements (CREATE TABLEs hoodie's
    catalog does not keep across processes). Returns {k: pyarrow Table or error text}."""
    os.makedirs(out, exist_ok=True)
    for f in glob.glob(os.path.join(out, "*.parquet")):
        os.remove(f)
    results = {}
    start = 0
    while start < len(reads):
        script = ";\n".join(list(prelude) + [f"COPY ({r.sql}) TO '{out}/{k}.parquet' STORED AS PARQUET"
                                               for k, r in enumerate(reads) if k >= start])
        done = subprocess.run([hoodie, "--warehouse", warehouse, "-c", script], capture_output=True, text=True)
        # each COPY that succeeded printed its count; the one that failed may have left a file
        copied = done.stdout.count("| count |")
        for k in range(start, start + copied):
            results[k] = pq.read_table(f"{out}/{k}.parquet")
        k = start + copied
        if k < len(reads):
            if done.returncode == 0:
                raise SystemExit(f"hoodie ran {copied} of the COPYs from {start} on but did not fail: {reads[k].sql}")
            results[k] = "hoodie error: " + (done.stderr.strip() or done.stdout.strip()[-500:])
            k += 1
        start = k
    return results


def spark_reads(reads, database, connections=3, setup=()):
    """Runs the reads on Spark over a few connections (sessions) at once, each using `database`.
    Returns {k: pyarrow Table or error text}."""
    results = {}
    work = queue.Queue()
    for k in range(len(reads)):
        work.put(k)

    def worker():
        spark = Spark.from_env()
        spark.sql(f"use {database}")
        for s in setup:
            spark.sql(s)
        while True:
            try:
                k = work.get_nowait()
            except queue.Empty:
                break
            try:
                results[k] = spark.sql(reads[k].sql)
            except SparkError as e:
                results[k] = "spark error: " + str(e)
        spark.close()

    threads = [threading.Thread(target=worker) for _ in range(min(connections, max(len(reads), 1)))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def norm(v):
    """A Python value of a pyarrow result as a plain JSON value that compares across engines:
    floats to 12 significant digits, decimals without trailing zeros, timestamps in UTC ISO
    form (microseconds), dates ISO, structs as dicts, maps as sorted pairs."""
    if v is None:
        return None
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return str(v)
        return float(f"{v:.12g}")
    if isinstance(v, decimal.Decimal):
        return "D" + format(v.normalize(), "f")
    if isinstance(v, dt.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(dt.timezone.utc).replace(tzinfo=None)
        return "T" + v.isoformat(timespec="microseconds")
    if isinstance(v, dt.date):
        return "d" + v.isoformat()
    if isinstance(v, dict):
        return {str(k): norm(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        if v and all(isinstance(x, tuple) and len(x) == 2 for x in v):  # a map
            return sorted([[norm(a), norm(b)] for a, b in v], key=json.dumps)
        return [norm(x) for x in v]
    if isinstance(v, bytes):
        return "0x" + v.hex()
    return str(v)


UNREADABLE = "<unreadable>"


def norm_json(v, typ):
    """A value of a CDC image (parsed JSON) as norm() gives the same value of Arrow type typ:
    dates may come as ISO text or epoch days, timestamps as ISO text or epoch microseconds,
    decimals as numbers or text. A decimal Spark cannot show (a JSON object) is UNREADABLE."""
    if v is None:
        return None
    try:
        if pa.types.is_date(typ):
            if isinstance(v, int):
                return "d" + (dt.date(1970, 1, 1) + dt.timedelta(days=v)).isoformat()
            return "d" + dt.date.fromisoformat(str(v)[:10]).isoformat()
        if pa.types.is_timestamp(typ):
            if isinstance(v, (int, float)):
                unit = {"s": 1, "ms": 1000, "us": 10 ** 6, "ns": 10 ** 9}[typ.unit]
                t = dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=int(v) * 10 ** 6 // unit)
                return "T" + t.isoformat(timespec="microseconds")
            t = dt.datetime.fromisoformat(str(v).replace("Z", "+00:00"))
            return norm(t)
        if pa.types.is_decimal(typ):
            if isinstance(v, list) and all(isinstance(b, int) for b in v):
                # Avro's bytes of the unscaled value (big-endian two's complement), as Spark's
                # JSON shows a ByteBuffer of a logged image: [0, 0, 0, 0, -106] is 1.50
                unscaled = int.from_bytes(bytes(b & 0xFF for b in v), "big", signed=True)
                return norm(decimal.Decimal(unscaled).scaleb(-typ.scale))
            if isinstance(v, (dict, list)):
                return UNREADABLE
            return norm(decimal.Decimal(str(v)))
        if pa.types.is_floating(typ):
            return norm(float(v))
        if pa.types.is_integer(typ):
            return int(v)
        if pa.types.is_boolean(typ):
            return bool(v)
        if pa.types.is_struct(typ) and isinstance(v, dict):
            return {f.name: norm_json(v.get(f.name), f.type) for f in typ}
        if (pa.types.is_list(typ) or pa.types.is_large_list(typ)) and isinstance(v, list):
            return [norm_json(x, typ.value_type) for x in v]
        if pa.types.is_map(typ) and isinstance(v, dict):
            return sorted([[k, norm_json(x, typ.item_type)] for k, x in v.items()], key=json.dumps)
    except (ValueError, TypeError, decimal.InvalidOperation):
        return f"<bad {typ}: {v!r}>"
    if pa.types.is_string(typ) or pa.types.is_large_string(typ):
        return str(v)
    return norm(v)


META = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
        "_hoodie_file_name")


def image(text, fields):
    """A CDC image (JSON text or NULL) as a dict of the table's data columns. Meta columns in the
    image (Spark's inferred images carry them, hoodie's never) are left out; a data column the
    image lacks is NULL (Spark leaves NULL values out); keys that are no column are kept under
    '?extra' so they show in a diff."""
    if text is None:
        return None
    obj = json.loads(text)
    if obj is None:  # the JSON text "null"
        return None
    if not isinstance(obj, dict):
        return {"?not an object": obj}
    out = {f.name: norm_json(obj.get(f.name), f.type) for f in fields}
    extra = {k: v for k, v in obj.items() if k not in out and k not in META}
    if extra:
        out["?extra"] = extra
    return out


def rows_of(table, kind, fields):
    if kind == "cdc":
        rows = []
        for r in table.to_pylist():
            rows.append({"op": r.get("op"), "ts_ms": r.get("ts_ms"),
                         "before": image(r.get("before"), fields), "after": image(r.get("after"), fields)})
    else:
        rows = [{k: norm(v) for k, v in r.items()} for r in table.to_pylist()]
    return sorted(json.dumps(r, sort_keys=True) for r in rows)


def unreadable_free(ours, theirs):
    """CDC rows: where Spark's image has an UNREADABLE decimal, take hoodie's value of the same
    row and column (Spark's JSON of a decimal is Jackson's view of a ByteBuffer, no number).
    Pairs rows by (op, ts_ms, record images with those fields blanked)."""
    if UNREADABLE not in "".join(theirs):
        return theirs, 0

    def blank(r, mask):
        r = json.loads(r)
        for side in ("before", "after"):
            if r[side]:
                for k in mask:
                    if k in r[side]:
                        r[side][k] = None
        return json.dumps(r, sort_keys=True)

    masks = set()
    for r in theirs:
        obj = json.loads(r)
        for side in ("before", "after"):
            for k, v in (obj[side] or {}).items():
                if v == UNREADABLE:
                    masks.add(k)
    pool = {}
    for r in ours:
        pool.setdefault(blank(r, masks), []).append(r)
    out, replaced = [], 0
    for r in theirs:
        if UNREADABLE in r and pool.get(blank(r, masks)):
            out.append(pool[blank(r, masks)].pop())
            replaced += 1
        else:
            out.append(r)
    return sorted(out), replaced


# why a read was refused, so that "both refuse" means both refuse for the same reason
REFUSALS = [
    ("cleaned", r"Cleaner cleaned up|cleaner has since deleted|does not exist|FileNotFound"),
    ("incomplete commit", r"incomplete commit"),
    ("not a CDC table", r"isn't a CDC hudi table"),
    ("not in the active timeline", r"has to be in the active timeline"),
]


def refusal(text):
    for name, pattern in REFUSALS:
        if re.search(pattern, text):
            return name
    return "other"


def first_line(text):
    return text.strip().splitlines()[0][:400] if text.strip() else text


def compare(read, ours, theirs, fields):
    """(None or a description of the difference, a note for the ok line)."""
    if isinstance(ours, str) or isinstance(theirs, str):
        if isinstance(ours, str) and isinstance(theirs, str):
            a, b = refusal(ours), refusal(theirs)
            if a == b and a != "other":
                return None, f"both refuse: {a}"
            return f"both refuse, for different reasons: {first_line(ours)} | {first_line(theirs)}", ""
        if isinstance(ours, str):
            return f"{first_line(ours)} | Spark: {theirs.num_rows if theirs is not None else 0} rows", ""
        return f"hoodie: {ours.num_rows} rows | {first_line(theirs)}", ""
    if theirs is None:
        return "Spark returned no result", ""
    diff = []
    if ours.column_names != theirs.column_names:
        diff.append(f"columns: hoodie {ours.column_names} | Spark {theirs.column_names}")
        common = [c for c in ours.column_names if c in theirs.column_names]
        ours, theirs = ours.select(common), theirs.select(common)
    a = rows_of(ours, read.kind, fields)
    b = rows_of(theirs, read.kind, fields)
    note = ""
    if read.kind == "cdc":
        b, replaced = unreadable_free(a, b)
        if replaced:
            note = f"{replaced} change rows with a decimal Spark's JSON cannot show"
    if a == b:
        if diff:
            diff.append(f"the same {len(a)} rows in the common columns")
    else:
        ca, cb = collections.Counter(a), collections.Counter(b)
        only_a = sorted((ca - cb).elements())[:3]  # rows (or extra copies of rows) hoodie alone has
        only_b = sorted((cb - ca).elements())[:3]
        diff.append(f"hoodie {len(a)} rows, Spark {len(b)}; only hoodie: {only_a}; only Spark: {only_b}")
    return ("; ".join(diff)[:3000] or None), note


class Checker:
    def __init__(self, known):
        self.known = known
        self.failures = []
        self.known_seen = []  # (label, pattern index, sql, diff)
        self.matched = set()  # patterns that matched a check's label
        self.fitted = set()  # patterns that matched a check's label and its difference
        self.checked = 0

    def known_for(self, label, diff):
        """The first known difference this is; every pattern it fits counts as seen."""
        first = None
        for i, (pattern, needle, _) in enumerate(self.known):
            if fnmatch.fnmatchcase(label, pattern):
                self.matched.add(i)
                if diff is not None and needle in diff:
                    self.fitted.add(i)
                    first = i if first is None else first
        return first

    def check(self, read, ours, theirs, fields):
        self.checked += 1
        try:
            diff, note = compare(read, ours, theirs, fields)
        except Exception as e:  # a result the comparison cannot take is a mismatch too
            diff, note = f"comparison failed: {type(e).__name__}: {e}", ""
        label = read.check
        k = self.known_for(label, diff)
        if diff is None:
            print(f"ok   {label}" + (f" ({note})" if note else ""), flush=True)
        elif k is not None:
            self.known_seen.append((label, k, read.sql, diff))
            print(f"known {label}: {self.known[k][2]}", flush=True)
        else:
            self.failures.append(f"{label}: {read.sql}\n     {diff}")
            print(f"FAIL {label}: {read.sql}\n     {diff}", flush=True)

    def finish(self, what, started):
        if self.known_seen:
            print("known differences (kept as checks; see KNOWN), by entry, with examples:")
        for i, (pattern, _, reason) in enumerate(self.known):
            hits = [x for x in self.known_seen if x[1] == i]
            if hits:
                print(f"known [{pattern}] {len(hits)} checks: {reason}")
            for label, _, sql, diff in hits[:2]:
                print(f"   {label}: {sql}\n     {diff[:700]}")
        for i, (pattern, needle, reason) in enumerate(self.known):
            if i in self.matched and i not in self.fitted:
                self.failures.append(f"known difference {pattern!r} ({reason}) no longer differs: remove it")
            elif i not in self.matched:
                print(f"note: known difference {pattern!r} was not checked in this run")
        for f in self.failures:
            print("FAIL", f)
        print(f"{what}: {self.checked} comparisons, {len(self.failures)} mismatches, "
              f"{len(self.known_seen)} known differences, {time.monotonic() - started:.1f} s")
        return 1 if self.failures else 0


def windows(bounds, many=3):
    """Incremental / CDC windows over bounds (['000', c1, c2, ...]): every pair when the table
    has at most `many` commits, else consecutive pairs plus (start, middle] and (start, last]."""
    n = len(bounds) - 1
    if n <= many:
        return [(i, j) for i in range(n + 1) for j in range(i + 1, n + 1)]
    out = [(i, i + 1) for i in range(n)]
    for j in (n // 2, n):
        if (0, j) not in out:
            out.append((0, j))
    return out


def bound_name(i):
    return "start" if i == 0 else f"c{i}"


def table_reads(name, mor, commits, bounds):
    """The reads of one table. commits: the instants to time-travel to (c1..cn); bounds: the
    window bounds ['000', ...] in the order of the commits (requested or completion times)."""
    reads = [Read(name, "snapshot", f"SELECT * FROM {name}")]
    if mor:
        reads.append(Read(name, "read_optimized", f"SELECT * FROM hudi_query('{name}', 'read_optimized')"))
        # Hudi's ro table of it (ro_table_sql), in both engines
        reads.append(Read(name, "ro table", f"SELECT * FROM {name}_ro"))
    for i, c in enumerate(commits, 1):
        reads.append(Read(name, f"as of c{i}", f"SELECT * FROM {name} TIMESTAMP AS OF '{c}'"))
    for i, j in windows(bounds):
        reads.append(Read(name, f"incremental ({bound_name(i)}, {bound_name(j)}]",
                          f"SELECT * FROM hudi_table_changes('{name}', 'latest_state', '{bounds[i]}', '{bounds[j]}')"))
    return reads


def ro_table_sql(name, location):
    """The CREATE TABLE of Hudi's read-optimized table of a merge-on-read table, `<name>_ro`."""
    return (f"CREATE TABLE {name}_ro USING hudi LOCATION '{location}' "
            f"TBLPROPERTIES ('hoodie.query.as.ro.table' = 'true')")


def cdc_reads(name, bounds):
    return [Read(name, f"cdc ({bound_name(i)}, {bound_name(j)}]",
                 f"SELECT * FROM hudi_table_changes('{name}', 'cdc', '{bounds[i]}', '{bounds[j]}')", kind="cdc")
            for i, j in windows(bounds)]


def properties(base):
    props = {}
    for line in open(os.path.join(base, ".hoodie", "hoodie.properties")):
        if "=" in line and not line.startswith("#"):
            k, _, v = line.rstrip("\n").partition("=")
            props[k] = v.replace("\\:", ":").replace("\\=", "=")
    return props


def timeline(base):
    """Completed writes of the active timeline: [(requested, completed, action)], by requested
    time; completed is the completion time on layout 2 (versions 8, 9), else the requested."""
    props = properties(base)
    layout2 = props.get("hoodie.timeline.layout.version") == "2"
    folder = os.path.join(base, ".hoodie", "timeline") if layout2 else os.path.join(base, ".hoodie")
    out = []
    for path in os.listdir(folder):
        head, _, action = path.partition(".")
        if action not in ("commit", "deltacommit", "replacecommit"):
            continue
        requested, _, completed = head.partition("_")
        out.append((requested, completed or requested, action))
    return sorted(out)


def history(base):
    """Completed writes of the LSM history (versions 8 and 9), read from its files as Hudi's
    reader does (_version_, its manifest, the Parquet files it names):
    [(requested, completed, action)]."""
    folder = os.path.join(base, ".hoodie", "timeline", "history")
    try:
        with open(os.path.join(folder, "_version_")) as f:
            version = f.read().strip()
        with open(os.path.join(folder, f"manifest_{version}")) as f:
            files = [e["fileName"] for e in json.load(f)["files"]]
    except FileNotFoundError:
        return []
    out = set()
    for name in files:
        for row in pq.read_table(os.path.join(folder, name)).to_pylist():
            if row["action"] in ("commit", "deltacommit", "replacecommit"):
                out.add((row["instantTime"], row["completionTime"], row["action"]))
    return sorted(out)


def snapshot_fields(reads, *results):
    """The data columns (Arrow fields, meta columns left out) of each table, from the first
    snapshot read that worked (hoodie's, else Spark's), for the CDC images."""
    fields = {}
    for res in results:
        for k, r in enumerate(reads):
            if r.label == "snapshot" and r.table not in fields and not isinstance(res.get(k), (str, type(None))):
                fields[r.table] = [f for f in res[k].schema if f.name not in META]
    return fields


def compare_all(checker, reads, ours, theirs):
    fields = snapshot_fields(reads, ours, theirs)
    for k, r in enumerate(reads):
        checker.check(r, ours[k], theirs[k], fields.get(r.table, []))


# ---------------------------------------------------------------------------------------------
# read_hoodie.py


def restore(hoodie, wh):
    """The restored_* tables: a savepoint, writes after it, a restore to it, a write after."""
    def commits(t):
        return [c[0] for c in timeline(os.path.join(wh, t))]
    first = commits("restored_cow")[0]
    run([hoodie, "--warehouse", wh, "-c",
         f"CALL create_savepoint(table => 'restored_cow', commit_time => '{first}'); "
         "UPDATE restored_cow SET v = 'b' WHERE id = 2; DELETE FROM restored_cow WHERE id = 1; "
         f"CALL rollback_to_savepoint(table => 'restored_cow', instant_time => '{first}'); "
         "INSERT INTO restored_cow VALUES (4, 'd', 'z')"])
    second = commits("restored_mor")[1]
    run([hoodie, "--warehouse", wh, "-c",
         f"CALL create_savepoint(table => 'restored_mor', commit_time => '{second}'); "
         "UPDATE restored_mor SET v = 'b' WHERE id = 2; DELETE FROM restored_mor WHERE id = 1; "
         "INSERT INTO restored_mor VALUES (5, 'e', 'x'); "
         f"CALL rollback_to_savepoint(table => 'restored_mor', instant_time => '{second}'); "
         "UPDATE restored_mor SET v = 'AA' WHERE id = 1"])


def archived_commits(hoodie, wh, name):
    out = run([hoodie, "--warehouse", wh, "-c",
               f"CALL show_archived_commits(table => '{name}', start_ts => '000', "
               f"end_ts => '99999999999999999', limit => 1000)"])
    return sorted(set(re.findall(r"^\|\s*(\d{17})\s*\|", out, re.M)))


def known_for(version):
    """The KNOWN entries that hold for tables of `version`."""
    return [k[:3] for k in KNOWN if version in (k[3] if len(k) > 3 else (6,))]


def main():
    hoodie, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    version = int(sys.argv[3]) if len(sys.argv) > 3 else 6
    started = time.monotonic()
    shutil.rmtree(work, ignore_errors=True)
    wh = os.path.join(work, "wh")
    script = os.path.join(HERE, "read_hoodie.sql")
    # the version is always said: hoodie's default (9) is not every run's
    os.makedirs(work, exist_ok=True)
    versioned = os.path.join(work, "read_hoodie.sql")
    with open(script) as src, open(versioned, "w") as dst:
        dst.write(f"SET hoodie.write.table.version = {version};\n" + src.read())
    script = versioned
    run([hoodie, "--warehouse", wh, "-f", script])
    restore(hoodie, wh)
    wrote = time.monotonic()

    only = set(filter(None, os.environ.get("READ_HOODIE_TABLES", "").split(",")))
    reads = []
    ro = []  # CREATE TABLE statements of the ro tables, run in both engines
    tables = sorted(t for t in os.listdir(wh) if not only or t in only)
    for name in tables:
        base = os.path.join(wh, name)
        props = properties(base)
        mor = props["hoodie.table.type"] == "MERGE_ON_READ"
        cdc = props.get("hoodie.table.cdc.enabled") == "true"
        commits = [c[0] for c in timeline(base)]
        if glob.glob(os.path.join(base, ".hoodie", "archived", ".commits_.archive*")):
            commits = sorted(set(commits) | set(archived_commits(hoodie, wh, name)))
        # version 6: windows on requested times; 8 and 9: on completion times
        if props.get("hoodie.timeline.layout.version") == "2":
            writes = sorted(set(timeline(base)) | set(history(base)))
            commits = sorted(c[0] for c in writes)
            bounds = ["000"] + sorted(c[1] for c in writes)
        else:
            bounds = ["000"] + commits
        reads += table_reads(name, mor, commits, bounds)
        if mor:
            ro.append(ro_table_sql(name, base))
        if cdc:
            reads += cdc_reads(name, bounds)

    # hoodie first: Spark's reads must not change what hoodie reads
    ours = hoodie_reads(hoodie, wh, reads, os.path.join(work, "hoodie-out"), prelude=ro)
    read_ours = time.monotonic()

    database = f"read_hoodie_{os.getpid()}"
    admin = Spark.from_env()
    admin.sql(f"create database {database} location '{work}/spark-db'")
    try:
        for name in tables:
            admin.sql(f"create table {database}.{name} using hudi location '{wh}/{name}'")
        admin.sql(f"use {database}")
        for statement in ro:
            admin.sql(statement)
        theirs = spark_reads(reads, database)
    finally:
        admin.sql(f"drop database if exists {database} cascade")
    read_theirs = time.monotonic()

    checker = Checker(known_for(version))
    compare_all(checker, reads, ours, theirs)
    print(f"timings: hoodie writes {wrote - started:.1f} s, hoodie reads {read_ours - wrote:.1f} s, "
          f"Spark reads {read_theirs - read_ours:.1f} s ({len(tables)} tables)")
    return checker.finish("read_hoodie" if version == 6 else f"read_hoodie (version {version})", started)


if __name__ == "__main__":
    sys.exit(main())
