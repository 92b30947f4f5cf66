"""`fuzz.py --spark`: every sequence also runs through Spark with Hudi (tests/spark/server.py,
reached through tests/spark/client.py at $HOODIE_SPARK), in a database of its own; Spark's read
of its own final table must equal the oracle's rows (and so hoodie's), and Spark's read of the
table hoodie wrote must too. Spark with Hudi is the reference: a disagreement is a finding
against hoodie or against the oracle (README.md, "Spark as a second reference").

The generator writes hoodie's dialect; `spark_sql` is the one place that turns a statement into
Spark's (each rewrite is documented there). What hoodie has and Spark lacks is not generated in
--spark mode (model.SPARK; see gen.py): `WHEN NOT MATCHED BY SOURCE`, which Hudi 1.2 on Spark
parses and then silently ignores."""
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.append(os.path.join(HERE, "..", "spark"))  # after tests/fuzz: its modules come first

try:
    from client import Spark, SparkError  # noqa: E402
except ImportError:  # without tests/spark only --spark is lost
    Spark = None

    class SparkError(Exception):
        pass

# Spark settings of every fuzz session, on top of the server's (hoodie.metadata.enable=false):
# none that changes semantics. The table version is set by --spark-table-version: 6 or 9
# (Spark's default, and hoodie's). A session's `hoodie.write.table.version=6` alone does not
# do it: Spark's CREATE TABLE still makes a version 9 table (which the version 6 writes then
# treat as version 6 in places, as in MERGE's partial updates), so each `CREATE TABLE ... USING
# hudi` gets the table property too (`with_table_version`).
# On version 9 MERGE writes partial updates to merge-on-read logs by default, which Hudi 1.2.0
# gets wrong (README, `spark-mor-partial-update`); turning them off changes how the update is
# stored, not what it does (version 6 has none).
TABLE_VERSION_SETTINGS = {
    6: ["SET hoodie.write.table.version=6", "SET hoodie.write.auto.upgrade=false"],
    9: ["SET hoodie.spark.sql.merge.into.partial.updates=false"],
}


def with_table_version(text, version):
    """A Spark `CREATE TABLE ... USING hudi ... TBLPROPERTIES (...)` that makes a table of the
    given version (6: `'hoodie.write.table.version' = '6'` among its properties); the version
    hoodie's own table of the seed is created with (its statement's property) is left out, as
    Spark's table takes --spark-table-version."""
    text = re.sub(r"'hoodie\.write\.table\.version' = '\d+', ", "", text)
    text = re.sub(r", 'hoodie\.write\.table\.version' = '\d+'", "", text)
    if version == 9 or not text.startswith("CREATE TABLE") or " USING hudi" not in text:
        return text
    m = re.search(r"TBLPROPERTIES \(", text)
    if not m:
        return text + " TBLPROPERTIES ('hoodie.write.table.version' = '6')"
    return text[:m.end()] + "'hoodie.write.table.version' = '6', " + text[m.end():]


def _scan(sql):
    """Yields (is_code, text) pieces of sql: string literals ('...' with '' inside) apart."""
    i, n, start = 0, len(sql), 0
    while i < n:
        if sql[i] == "'":
            if start < i:
                yield True, sql[start:i]
            j = i + 1
            while j < n:
                if sql[j] == "'" and j + 1 < n and sql[j + 1] == "'":
                    j += 2
                    continue
                if sql[j] == "'":
                    break
                j += 1
            yield False, sql[i:j + 1]
            i = start = j + 1
            continue
        i += 1
    if start < n:
        yield True, sql[start:]


def _close_paren(sql, i):
    """The index of the parenthesis that closes the one at sql[i] (string literals skipped)."""
    depth, j, quote = 0, i, False
    while j < len(sql):
        c = sql[j]
        if quote:
            if c == "'" and j + 1 < len(sql) and sql[j + 1] == "'":
                j += 2
                continue
            if c == "'":
                quote = False
        elif c == "'":
            quote = True
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return j
        j += 1
    raise ValueError(f"unbalanced parentheses: {sql}")


SET = re.compile(r"^SET\s+([\w.]+)\s*=\s*'([^']*)'$", re.S)
CREATE_PLAIN = re.compile(r"^CREATE TABLE\s+(\w+)\s*\(", re.S)


def spark_sql(stmt, names=()):
    """The Spark text of one generated hoodie statement (`names`: the column names of its tables,
    as declared). The rewrites, all syntax with the same meaning:
    1. `"name"` (a quoted identifier, --idents quoted) -> `` `name` ``: in Spark a double-quoted
       token is a string literal.
    2. `SET k = 'v'` -> `SET k=v`: Spark keeps the quotes as part of the value.
    3. `CREATE TABLE datafusion.public.x (...)` without USING (a DataFusion memory table, the
       `mem`, `derived`, `subquery` and `join` sources) -> `CREATE TABLE x (...) USING parquet`:
       Spark without Hive support cannot create a Hive table.
    4. `MERGE INTO ... USING (...) AS s(c1, ...) ON` (a VALUES or derived source with a column
       alias list) -> `USING (SELECT * FROM (...) AS s(c1, ...)) AS s ON`: Spark refuses column
       aliases in a MERGE's USING (COLUMN_ALIASES_IS_NOT_ALLOWED) but takes them in a FROM.
    5. MERGE clauses in the order Hudi tries them and Spark's grammar takes: every `WHEN
       MATCHED` first, its `DELETE` after its `UPDATE`s (Hudi tries the UPDATE clauses of a
       matched row first whatever the order written, and so do hoodie and the oracle), then
       `WHEN NOT MATCHED [BY TARGET]` (each kind otherwise keeps its order): a row is either
       matched or not, so only the order within a kind decides.
    6. MERGE clauses after an unconditional clause of the same kind (in that order) are dropped:
       they can never be taken, and Spark refuses them (NON_LAST_MATCHED_CLAUSE_OMIT_CONDITION,
       ..._NOT_MATCHED_BY_TARGET_...), as DuckDB does (the oracle drops them too). hoodie
       accepts them.
    7. A column name written in another case than declared (--idents mixed: `ts`, `DT`) is
       written as declared: Spark resolves names case-insensitively, but Hudi 1.2.0 on Spark
       does not everywhere (a static `PARTITION (DT = 'a')` fails with
       NOT_ENOUGH_DATA_COLUMNS, `DELETE ... WHERE ts = 5` with RESOLVED_ATTRIBUTE_MISSING_FROM_INPUT,
       and a MERGE source's `dt` inserts NULL into the partition column `Dt`), which are Hudi's
       bugs, not hoodie's (README, "Spark").
    8. A doubled quote in a string literal (`'o''k'`) -> `'o\\'k'`: Spark reads `'o''k'` as the
       two literals 'o' and 'k', concatenated."""
    by_lower = {n.lower(): n for n in names}
    out = []
    for code, text in _scan(stmt):
        if code:
            text = re.sub(r'"([^"]*)"', r"`\1`", text)
            if by_lower:
                text = re.sub(r"(?<![\w`.'])(\w+)(?![\w`])|(?<=\.)(\w+)(?![\w`])",
                              lambda m: by_lower.get(m.group(0).lower(), m.group(0)), text)
        out.append(text)
    s = "".join(out).strip()
    m = SET.match(s)
    if m:
        return f"SET {m.group(1)}={m.group(2)}"
    # hoodie's in-memory tables live in datafusion.public; Spark's copy is a Parquet table
    s = re.sub(r"^CREATE TABLE datafusion\.public\.", "CREATE TABLE ", s)
    m = CREATE_PLAIN.match(s)
    if m:
        end = _close_paren(s, m.end() - 1)
        if not s[end + 1:].strip():
            return s + " USING parquet"
    if s.startswith("MERGE INTO"):
        s = _reachable_clauses(s)
        m = re.search(r"\bUSING \(", s)
        if m:
            open_ = m.end() - 1
            close = _close_paren(s, open_)
            alias = re.match(r"\s+AS\s+(\w+)\s*\(", s[close + 1:])
            if alias:
                a_open = close + 1 + alias.end() - 1
                a_close = _close_paren(s, a_open)
                name = alias.group(1)
                s = (s[:open_] + f"(SELECT * FROM {s[open_:close + 1]} AS {name}{s[a_open:a_close + 1]}) AS {name}"
                     + s[a_close + 1:])
    return "".join(text if code else "'" + text[1:-1].replace("''", "\\'") + "'" for code, text in _scan(s))


CLAUSE = re.compile(r"^WHEN (MATCHED|NOT MATCHED BY SOURCE|NOT MATCHED(?: BY TARGET)?)( AND )?")


def _reachable_clauses(s):
    """A generated MERGE (one `WHEN` clause a line) in Spark's grammar order, its `WHEN MATCHED
    ... DELETE` after the `WHEN MATCHED ... UPDATE` clauses (the order in which Hudi tries them
    anyway), and without the clauses after an unconditional clause of the same kind."""
    lines = s.split("\n")
    head, clauses = [], {"MATCHED": [], "NOT MATCHED": [], "NOT MATCHED BY SOURCE": []}
    for line in lines:
        m = CLAUSE.match(line.strip())
        if not m:
            head.append(line)
            continue
        kind = "NOT MATCHED" if m.group(1).startswith("NOT MATCHED BY T") else m.group(1)
        clauses[kind].append((line, not m.group(2)))
    delete = [c for c in clauses["MATCHED"] if c[0].rstrip().endswith("THEN DELETE")]
    clauses["MATCHED"] = [c for c in clauses["MATCHED"] if c not in delete] + delete
    out = []
    for k in clauses:
        for line, unconditional in clauses[k]:
            out.append(line)
            if unconditional:
                break
    return "\n".join(head + out)


class SparkOutcome:
    """What Spark made of a sequence: the rows it reads of its own table (or the statement it
    refused), and the rows it reads of hoodie's table (or why it could not)."""

    def __init__(self):
        self.rows = None
        self.failed = None  # (index of the statement, its Spark text, Spark's message)
        self.read_error = None
        self.hoodie_rows = None
        self.hoodie_read_error = None
        self.statements = 0
        self.seconds = 0.0
        self.internal = None  # the fuzzer's own failure (a translation it could not make, say)


def select(table, name=None):
    cols = ", ".join(["_hoodie_record_key", "_hoodie_partition_path"] + [f"`{c.name}`" for c in table.columns])
    return f"SELECT {cols} FROM {name or table.name}"


def statements(seq, ident_mode):
    """(unit index, hoodie text) of every statement of the sequence, in order."""
    import random

    from model import Idents
    out = []
    for k, u in enumerate(seq.units):
        for st in u.hoodie(Idents(ident_mode, random.Random(u.iseed))):
            out.append((k, st))
    return out


def column_names(seq):
    """The declared names of every column of the sequence's tables (target and sources)."""
    names = {c.name for c in seq.table.columns} | {"opFlag"}
    for u in seq.units:
        src = getattr(u, "source", None)
        if src is not None:
            names |= {n for n, _ in src.cols}
    return sorted(names)


def database(tag, seed):
    return f"fuzz_{tag}_{seed}"


def run_seq(spark, seq, ident_mode, work, tag, version, hoodie_table=None, keep=False):
    """Runs one sequence through Spark in a database of its own under `work`; reads Spark's
    table and (if given) hoodie's table at `hoodie_table`. The database is dropped after
    (unless `keep`). Returns a SparkOutcome."""
    o = SparkOutcome()
    t0 = time.time()
    db = database(tag, seq.seed)
    loc = os.path.join(work, f"spark-{seq.seed}")
    spark.sql(f"CREATE DATABASE {db} LOCATION '{loc}'")
    try:
        spark.sql(f"USE {db}")
        spark.sql("RESET")
        for s in TABLE_VERSION_SETTINGS[version]:
            spark.sql(s)
        names = column_names(seq)
        for i, (_, st) in enumerate(statements(seq, ident_mode)):
            text = with_table_version(spark_sql(st, names), version)
            if text == "RESET":
                continue  # the session is fresh, and a RESET would drop the table version settings
            o.statements += 1
            try:
                spark.sql(text)
            except SparkError as e:
                o.failed = (i, text, str(e))
                break
        if o.failed is None:
            try:
                o.rows = spark.sql(select(seq.table)).to_pylist()
            except SparkError as e:
                o.read_error = str(e)
        if hoodie_table is not None:
            try:
                spark.sql(f"CREATE TABLE hoodie_{seq.table.name} USING hudi LOCATION '{hoodie_table}'")
                o.hoodie_rows = spark.sql(select(seq.table, f"hoodie_{seq.table.name}")).to_pylist()
            except SparkError as e:
                o.hoodie_read_error = str(e)
    finally:
        spark.sql("USE default")
        if not keep:
            try:
                spark.sql(f"DROP DATABASE {db} CASCADE")
            except SparkError:
                pass
    o.seconds = time.time() - t0
    return o


def first_line(msg, n=300):
    lines = [x for x in msg.splitlines() if x.strip()]
    return (lines[0] if lines else msg)[:n]


def causes(msg, n=800):
    """The exception lines of a Spark error (class: message of each cause), without stack frames."""
    lines = [x.strip() for x in msg.splitlines()
             if re.match(r"\s*(Caused by: )?[\w.$]+(Exception|Error)\b", x) and not x.strip().startswith("at ")]
    seen, out = set(), []
    for x in lines:
        if x not in seen:
            seen.add(x)
            out.append(x[:300])
    return " | ".join(out)[:n]


def step(seed, statements_n=22, ident_mode="mixed", version=6, work=None):
    """Runs one seed's statements in Spark one unit at a time and compares Spark's table with the
    oracle's after each: prints the first unit after which they differ (a debugging aid:
    `spark.py SEED [STATEMENTS [TABLE VERSION]]`, with $HOODIE_SPARK)."""
    import tempfile

    import compare
    import fuzz
    import gen
    import model
    model.SPARK = version
    seq = fuzz.make(seed, statements_n)
    work = work or tempfile.mkdtemp(prefix="spark-step-")
    client = Spark.from_env()
    db = database("step" + str(os.getpid()), seed)
    client.sql(f"CREATE DATABASE {db} LOCATION '{os.path.join(work, db)}'")
    client.sql(f"USE {db}")
    for s in TABLE_VERSION_SETTINGS[version]:
        client.sql(s)
    names = column_names(seq)
    print(f"-- seed {seed}: {seq.table.describe()}  (Spark database {db})")
    import random

    from model import Idents
    for k, u in enumerate(seq.units):
        texts = [with_table_version(spark_sql(st, names), version)
                 for st in u.hoodie(Idents(ident_mode, random.Random(u.iseed)))]
        for text in texts:
            if text == "RESET":
                continue
            try:
                client.sql(text)
            except SparkError as e:
                print(f"unit {k}: Spark refuses\n{text}\n  {causes(str(e)) or first_line(str(e))}")
                return
        want = gen.replay(seq.table, seq.units[:k + 1]).rows()
        got = client.sql(select(seq.table)).to_pylist()
        d = compare.diff(seq.table, want, got)
        if d:
            before = gen.replay(seq.table, seq.units[:k]).rows()
            print(f"unit {k} ({u.kind}): Spark differs from the oracle after\n" + "\n".join(texts))
            print("-- before (oracle):\n" + compare.fmt_rows(seq.table, before))
            print("-- after (oracle):\n" + compare.fmt_rows(seq.table, want))
            print("-- after (Spark):\n" + compare.fmt_rows(seq.table, compare.from_dicts(seq.table, got)))
            print("-- " + d)
            return
    print("Spark agrees with the oracle after every statement")


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    step(int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 22,
         version=int(sys.argv[3]) if len(sys.argv) > 3 else 6)
