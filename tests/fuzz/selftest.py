#!/usr/bin/env python3
"""The fuzzer's own tests. (1) The oracle on hand-written sequences with known answers (taken
from docs/sql-reference.md and sql-tests/). (2) Planted wrong results: the fuzzer must report them
and shrink them to a small script. Exits non-zero if any check fails.

  selftest.py [--hoodie PATH]
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))

from model import Col, Table  # noqa: E402
from oracle import Invalid, Oracle  # noqa: E402
from stmts import COMBINE, INTO_OP, WRITE_OP, Delete, Insert, Merge, Source, Update, insert_operation  # noqa: E402

failures = []


def check(label, got, want):
    if got != want:
        failures.append(f"{label}: got {got!r}, want {want!r}")
        print(f"FAIL {label}: got {got!r}, want {want!r}")
    else:
        print(f"ok   {label}")


def table(name, cols, keys, ordering=None, partition=None, mode=None, ttype="cow", pk=True, global_index=False,
          allow_dups=False, upsert_prop=False):
    t = Table.__new__(Table)
    t.name, t.ttype = name, ttype
    t.pk, t.global_index = pk, global_index
    t.allow_dups, t.upsert_prop = allow_dups, upsert_prop
    role = lambda n: "key" if n in keys else "ordering" if n == ordering else "partition" if n == partition else "data"  # noqa: E731
    t.declared = [Col(n, ty, role(n)) for n, ty in cols]
    t.keys = [c for c in t.declared if c.role == "key"]
    t.ordering = next((c for c in t.declared if c.role == "ordering"), None)
    t.partition = next((c for c in t.declared if c.role == "partition"), None)
    t.data = [c for c in t.declared if c.role == "data"]
    t.columns = [c for c in t.declared if c.role != "partition"] + ([t.partition] if t.partition else [])
    t.mode = mode or ("EVENT_TIME_ORDERING" if ordering else "COMMIT_TIME_ORDERING")
    t.event_time = t.mode == "EVENT_TIME_ORDERING"
    return t


def rows_of(t, *tuples):
    names = [c.name for c in t.columns]
    return [dict(zip(names, r)) for r in tuples]


def invalid(t, units):
    """Whether the units leave the oracle's model (Invalid: the generator would not make them)."""
    try:
        run(t, units)
    except Invalid:
        return True
    return False


def run(t, units):
    o = Oracle(t)
    for u in units:
        u.apply(o)
        o.check_unique()
    return sorted(o.rows(), key=repr)


def oracle_tests():
    # pre-combining (hoodie.combine.before.insert): greatest ts, the later row of a tie, NULL
    # loses; incoming >= stored wins (sql-reference.md, INSERT INTO / Upserts)
    t = table("e", [("id", "INT"), ("name", "STRING"), ("ts", "BIGINT")], ["id"], "ts", allow_dups=True)
    up = lambda *r: Insert(t, "upsert", rows=rows_of(t, *r))  # noqa: E731
    comb = lambda *r: Insert(t, {COMBINE: "true"}, rows=rows_of(t, *r))  # noqa: E731
    got = run(t, [comb((1, "a1", 1), (1, "a1_2", 3), (1, "a1_3", 2), (2, "b1", 5), (2, "b2", 5), (3, "c", None), (3, "c2", 0))])
    check("pre-combine: greatest ts, the later of a tie, NULL loses", got, [(1, "a1_2", 3), (2, "b2", 5), (3, "c2", 0)])
    got = run(t, [up((1, "a1", 1), (1, "a1_2", 3), (2, "b1", 5), (2, "b2", 5))])
    check("upsert pre-combines: the later of a tie", got, [(1, "a1_2", 3), (2, "b2", 5)])
    got = run(t, [Insert(t, {}, rows=rows_of(t, (1, "a", 1), (1, "b", 0))), Insert(t, {}, rows=rows_of(t, (1, "c", 2)))])
    check("INSERT runs insert: duplicate keys kept (Hudi 1.1+)", got, [(1, "a", 1), (1, "b", 0), (1, "c", 2)])
    got = run(t, [Insert(t, {"hoodie.sql.insert.mode": "upsert"}, rows=rows_of(t, (1, "a", 1))),
                  Insert(t, {"hoodie.sql.insert.mode": "upsert"}, rows=rows_of(t, (1, "b", 2)))])
    check("the legacy insert mode upsert inserts", got, [(1, "a", 1), (1, "b", 2)])
    got = run(t, [up((1, "a", 3)), up((1, "older", 2), (2, "b", 1)), up((2, "tie", 1))])
    check("upsert: older loses, a tie the incoming wins", got, [(1, "a", 3), (2, "tie", 1)])
    check("upsert of a NULL ordering value: outside the model", invalid(t, [up((1, "a", None))]), True)
    check("upsert of a record held twice: outside the model",
          invalid(t, [Insert(t, {}, rows=rows_of(t, (1, "a", 1), (1, "b", 0))), up((1, "c", 5))]), True)
    check("UPDATE of a record held twice: outside the model",
          invalid(t, [Insert(t, {}, rows=rows_of(t, (1, "a", 1), (1, "b", 0), (2, "c", 0))), Update(t, [("name", "'x'")], "@id = 1")]), True)
    got = run(t, [Insert(t, {}, rows=rows_of(t, (1, "a", 1), (1, "b", 0), (2, "c", 0))), Update(t, [("name", "'x'")], "@id = 2")])
    check("UPDATE beside a record held twice", got, [(1, "a", 1), (1, "b", 0), (2, "x", 0)])
    got = run(t, [up((1, "a", 100), (2, "b", 100)),
                  Update(t, [("name", "'older'"), ("ts", "99")], "@id = 1"),
                  Update(t, [("name", "'newer'"), ("ts", "101")], "@id = 2"),
                  Update(t, [("name", "'kept_ts'")], "@id = 1")])
    check("UPDATE of the ordering field applies where new >= old", got, [(1, "kept_ts", 100), (2, "newer", 101)])
    got = run(t, [up((1, "a", 5)), Update(t, [("ts", "NULL")], None), up((2, "b", 1)), Delete(t, "@id = 2")])
    check("UPDATE to a NULL ordering value loses; DELETE always applies", got, [(1, "a", 5)])
    # which operation (rule 3): the table's upsert property, the session's options, a policy
    u = table("u", [("id", "INT"), ("name", "STRING"), ("ts", "BIGINT")], ["id"], "ts", upsert_prop=True)
    got = run(u, [Insert(u, {}, rows=rows_of(u, (1, "a", 1))), Insert(u, {}, rows=rows_of(u, (1, "b", 2)))])
    check("insert.into.operation = upsert (table property) upserts", got, [(1, "b", 2)])
    got = run(u, [Insert(u, {}, rows=rows_of(u, (1, "a", 1))),
                  Insert(u, {WRITE_OP: "upsert"}, "drop", rows=rows_of(u, (1, "dropped", 2), (2, "b", 0)))])
    check("an upsert with the duplicate policy drop inserts", got, [(1, "a", 1), (2, "b", 0)])
    check("operation: the session's write.operation first",
          insert_operation(u, {WRITE_OP: "insert", INTO_OP: "upsert"}, "none"), "insert")
    check("operation: the session's insert.into.operation over the table's",
          insert_operation(u, {INTO_OP: "insert"}, "none"), "insert")
    # commit-time ordering: the latest write wins, even with a smaller ts, also in a batch
    c = table("c", [("id", "INT"), ("name", "STRING"), ("ts", "BIGINT")], ["id"], "ts", mode="COMMIT_TIME_ORDERING")
    upc = lambda *r: Insert(c, "upsert", rows=rows_of(c, *r))  # noqa: E731
    got = run(c, [upc((1, "a", 5)), upc((1, "b", 1)), Update(c, [("ts", "0"), ("name", "'u'")], None),
                  upc((2, "x", 5), (2, "y", 1))])
    check("commit-time: the latest write wins", got, [(1, "u", 0), (2, "y", 1)])
    # insert with the duplicate policy drop keeps the stored row
    d = table("d", [("id", "INT"), ("v", "STRING")], ["id"])
    got = run(d, [Insert(d, "insert", rows=rows_of(d, (1, "a"))),
                  Insert(d, "insert", "drop", rows=rows_of(d, (1, "dropped"), (2, "b")))])
    check("insert with dup policy drop", got, [(1, "a"), (2, "b")])
    # partitioned upsert: the same key in another partition is another record
    p = table("p", [("id", "INT"), ("v", "STRING"), ("ts", "INT"), ("dt", "STRING")], ["id"], "ts", "dt")
    upp = lambda *r: Insert(p, "upsert", rows=rows_of(p, *r))  # noqa: E731
    got = run(p, [upp((1, "a", 1, "x")), upp((1, "b", 0, "y"), (2, "n", 1, None)), upp((2, "m", 1, None))])
    check("partition-scoped keys; NULL partition values share a path", got, [(1, "a", 1, "x"), (1, "b", 0, "y"), (2, "m", 1, None)])
    # MERGE (sql-tests/merge/merge_into.slt): a matched row meets the UPDATE clauses before the
    # DELETE clause, whatever their order; SET * / INSERT *; unmatched left
    m = table("m", [("id", "INT"), ("name", "STRING"), ("price", "DOUBLE"), ("ts", "BIGINT"), ("dt", "STRING")], ["id"], "ts", "dt")
    src = Source("m_s", "values", [("id", "INT"), ("name", "STRING"), ("price", "DOUBLE"), ("ts", "BIGINT"), ("dt", "STRING"), ("flag", "INT")],
                 [(1, "s1", 11.0, 101, "x", 0), (2, "s2", 0.0, 101, "x", 1), (4, "s4", 40.0, 100, "y", 0), (5, "s5", 50.0, 100, "y", 2)], ["id"])
    mg = lambda clauses: Merge(m, src, None, [("id", "id")], False, None, clauses)  # noqa: E731
    dele = dict(kind="matched", cond="$s.@flag = 1", action="delete")
    old = Source("m_o", "values", src.cols[:5], [(1, "old", 1.0, 50, "x")], ["id"])
    stale = Merge(m, old, "t", [("id", "id")], False, None, [dict(kind="matched", cond=None, action="update_star")])
    ins = Insert(m, "upsert", rows=rows_of(m, (1, "a1", 10.0, 100, "x"), (2, "a2", 20.0, 100, "x"), (3, "a3", 30.0, 100, "y")))
    got = run(m, [ins, mg([dele, dict(kind="matched", cond=None, action="update_star"),
                           dict(kind="not_matched", cond="$s.@flag = 0", action="insert_star")]), stale])
    check("MERGE: UPDATE before DELETE, and a stale update loses", got,
          [(1, "s1", 11.0, 101, "x"), (2, "s2", 0.0, 101, "x"), (3, "a3", 30.0, 100, "y"), (4, "s4", 40.0, 100, "y")])
    got = run(m, [ins, mg([dele, dict(kind="matched", cond="$s.@flag = 0", action="update_star")])])
    check("MERGE: DELETE after a conditional UPDATE", got, [(1, "s1", 11.0, 101, "x"), (3, "a3", 30.0, 100, "y")])
    check("MERGE: two matched DELETE clauses are refused", invalid(m, [ins, mg([dele, dict(dele, cond=None)])]), True)
    ren = Source("m_r", "values", [("srcId", "INT"), ("name", "STRING"), ("ts", "BIGINT"), ("dt", "STRING")], [(1, "r", 200, "x")], ["srcId"])
    upd = dict(kind="matched", cond=None, action="update", assigns=[("name", "$s.@name"), ("ts", "$s.@ts")])
    check("MERGE: a key the source renames must be assigned", invalid(m, [ins, Merge(m, ren, "t", [("id", "srcId")], False, None, [upd])]), True)
    got = run(m, [ins, Merge(m, ren, "t", [("id", "srcId")], False, None, [dict(upd, assigns=[("id", "$s.@srcId")] + upd["assigns"])])])
    check("MERGE: a renamed key resolves through its assignment", got,
          [(1, "r", 10.0, 200, "x"), (2, "a2", 20.0, 100, "x"), (3, "a3", 30.0, 100, "y")])
    rts = Source("m_t", "values", [("id", "INT"), ("name", "STRING"), ("srcTs", "BIGINT"), ("dt", "STRING")], [(1, "r", 200, "x")], ["id"])
    check("MERGE: a renamed ordering field must be assigned",
          invalid(m, [ins, Merge(m, rts, "t", [("id", "id")], False, None, [dict(kind="matched", cond=None, action="delete")])]), True)
    bys = Merge(m, Source("m_k", "values", [("id", "INT"), ("dt", "STRING")], [(1, "x")], ["id"]), "t", [("id", "id")], False, None, [
        dict(kind="by_source", cond=None, action="update", assigns=[("name", "'unmatched'"), ("ts", "$t.@ts + 1")])])
    got = run(m, [ins, bys])
    check("MERGE ... WHEN NOT MATCHED BY SOURCE", got, [(1, "a1", 10.0, 100, "x"), (2, "unmatched", 20.0, 101, "x"), (3, "unmatched", 30.0, 101, "y")])

    # no primary key: INSERT keeps duplicates, UPDATE/DELETE act on rows
    n = table("n", [("id", "INT"), ("v", "STRING")], ["id"], pk=False)
    got = run(n, [Insert(n, "insert", rows=rows_of(n, (1, "a"), (1, "a"), (2, "b"))),
                  Update(n, [("v", "'u'")], "@id = 1"), Delete(n, "@id = 2")])
    check("no primary key: duplicates kept", got, [(1, "u"), (1, "u")])
    # GLOBAL_SIMPLE: an upsert into another partition moves the record, without an ordering test
    g = table("g", [("id", "INT"), ("v", "STRING"), ("ts", "INT"), ("p", "STRING")], ["id"], "ts", "p", global_index=True)
    upg = lambda *r: Insert(g, "upsert", rows=rows_of(g, *r))  # noqa: E731
    got = run(g, [upg((1, "a", 5, "x"), (2, "b", 5, "x")), upg((1, "moved", 1, "y"), (2, "older", 1, "x"))])
    check("global index: a record moves partition, no ordering test for a move", got, [(1, "moved", 1, "y"), (2, "b", 5, "x")])
    # MERGE: two source rows for one key are pre-combined, the greatest ordering value wins
    src2 = Source("m_d", "values", [("id", "INT"), ("name", "STRING"), ("price", "DOUBLE"), ("ts", "BIGINT"), ("dt", "STRING")],
                  [(1, "first", 1.0, 300, "x"), (1, "second", 2.0, 301, "x"), (7, "n1", 1.0, 5, "y"), (7, "n2", 1.0, 4, "y")], ["id"])
    dup = Merge(m, src2, "t", [("id", "id")], False, None, [dict(kind="matched", cond=None, action="update_star"),
                                                         dict(kind="not_matched", cond=None, action="insert_star")])
    got = run(m, [ins, dup])
    check("MERGE: duplicate source keys pre-combined", got, [(1, "second", 2.0, 301, "x"), (2, "a2", 20.0, 100, "x"),
                                                           (3, "a3", 30.0, 100, "y"), (7, "n1", 1.0, 5, "y")])


def planted_run(fz, hoodie, plant, seeds):
    """One fuzzer run with `plant`: its output and the statements of its shrunk script (None when
    it wrote none)."""
    d = tempfile.mkdtemp(prefix="fuzz-selftest-")
    p = subprocess.run([sys.executable, fz, "--seeds", seeds, "--plant", plant, "--hoodie", hoodie,
                        "--max-shrink", "1", "--failures", d], capture_output=True, text=True)
    files = glob.glob(os.path.join(d, "seed-*.sql"))
    n = None
    if len(files) == 1:
        n = int(re.search(r"^-- (\d+) statements after shrinking", open(files[0]).read(), re.M).group(1))
    return p, files, n


def plant_tests(hoodie):
    fz = os.path.join(HERE, "fuzz.py")
    for plant, seeds, most in (("ties-lose", "0..9", 4), ("drop-row", "0..3", 2)):
        # a planted wrong model steers later statements by the oracle's state, where DuckDB may
        # pick among equal candidates: a shrink candidate then need not replay the same way, and
        # the fuzzer keeps the whole sequence. The shrinker must succeed in one of three runs.
        for _ in range(3):
            p, files, n = planted_run(fz, hoodie, plant, seeds)
            if n is not None and n <= most:
                break
        m = re.search(r"^fuzz: (\d+) passed, (\d+) failed$", p.stdout, re.M)
        check(f"plant {plant}: the fuzzer exits 1", p.returncode, 1)
        check(f"plant {plant}: failures are reported", bool(m and int(m.group(2)) > 0), True)
        check(f"plant {plant}: a shrunk script is written", len(files), 1)
        if n is not None:
            check(f"plant {plant}: the shrunk script is small ({n} statements)", n <= most, True)


def cdc_replay_tests():
    """The CDC check's replay: a right change log replays to the table; a wrong one is caught."""
    from runner import canon_rows, replay_commit, state_rows
    t = table("c", [("Id", "INT"), ("v", "STRING"), ("Dt", "STRING")], ["Id"], partition="Dt")
    a, a2, b = {"Id": 1, "v": "a", "Dt": "x"}, {"Id": 1, "v": "a2", "Dt": "x"}, {"Id": 2, "v": None, "Dt": "x"}
    state = {}
    check("cdc replay: inserts", replay_commit(t, state, [
        {"op": "i", "before": None, "after": a}, {"op": "i", "before": None, "after": b}]), None)
    check("cdc replay: an update and a delete", replay_commit(t, state, [
        {"op": "u", "before": a, "after": a2}, {"op": "d", "before": b, "after": None}]), None)
    check("cdc replay: the state", canon_rows(state_rows(state)), canon_rows([a2]))
    check("cdc replay: an update of a missing record is caught",
          "did not hold" in (replay_commit(t, dict(state), [{"op": "u", "before": b, "after": b}]) or ""), True)
    check("cdc replay: a wrong before image is caught",
          "is not the record" in (replay_commit(t, dict(state), [{"op": "d", "before": a, "after": None}]) or ""), True)
    check("cdc replay: an insert of a held record is caught",
          "already held" in (replay_commit(t, dict(state), [{"op": "i", "before": None, "after": a2}]) or ""), True)


def cleaned_history_tests(hoodie):
    """Cleaned tables: the history and CDC checks compare the states of the commits a clean
    kept (which must be the last states), and they catch a wrong one."""
    import shutil
    import fuzz
    import runner
    a, b, c = [("a",)], [("b",)], [("c",)]
    check("cleaned history: the last states match", runner.states_match([[], a, b, c], [b, c], True), True)
    check("cleaned history: a gap is caught", runner.states_match([[], a, b, c], [a, c], True), False)
    check("cleaned history: uncleaned needs them all", runner.states_match([[], a, b, c], [b, c], False), False)
    # a CDC table that keeps one commit, checking history (seed % 4 == 0): cleaned, and passing
    force = {"ttype": "cow", "cdc": True, "cdc_mode": "DATA_BEFORE_AFTER", "commits_retained": 1}
    seq = fuzz.make(8, 12, force=force)
    work = tempfile.mkdtemp(prefix="fuzz-selftest-clean-")
    out = runner.run_batch([seq], hoodie, work, "quoted")[seq.seed]
    wh = os.path.join(work, "b1")
    check("cleaned history: the table was cleaned",
          runner.earliest_kept(seq, wh, hoodie) is not None, True)
    check("cleaned history: hoodie passes", fuzz.verdict(seq, out), None)
    # a wrong state after the last statement: both checks see it
    same = os.path.join(wh, f"{seq.seed}-same.parquet")
    last = max(k for k in range(len(seq.units)) if os.path.exists(f"{same}.step{k}"))
    shutil.copy(f"{same}.step0", f"{same}.step{last}")
    check("cleaned history: a wrong state is caught by time travel",
          runner.history_check(seq, wh, hoodie) is not None, True)
    check("cleaned history: a wrong state is caught by the CDC replay",
          runner.cdc_check(seq, wh, hoodie) is not None, True)
    shutil.rmtree(work, ignore_errors=True)


def spark_translation_tests():
    """fuzz.py --spark: hoodie's statements as Spark's (spark.spark_sql), without Spark."""
    import spark
    names = ["Id", "Dt", "Ts", "userName"]
    check("spark: quoted identifiers, declared case, doubled quotes",
          spark.spark_sql("UPDATE t SET \"userName\" = 'o''k' WHERE ts > 1 AND DT IS NULL", names),
          "UPDATE t SET `userName` = 'o\\'k' WHERE Ts > 1 AND Dt IS NULL")
    check("spark: SET without quotes", spark.spark_sql("SET hoodie.datasource.write.operation = 'upsert'"),
          "SET hoodie.datasource.write.operation=upsert")
    check("spark: a memory table is a Parquet table", spark.spark_sql("CREATE TABLE datafusion.public.t_s1 (c0 INT, c1 STRING)"),
          "CREATE TABLE t_s1 (c0 INT, c1 STRING) USING parquet")
    check("spark: a Hudi table is left alone",
          spark.spark_sql("CREATE TABLE t_s1 (c0 INT) USING hudi TBLPROPERTIES (primaryKey = 'c0')"),
          "CREATE TABLE t_s1 (c0 INT) USING hudi TBLPROPERTIES (primaryKey = 'c0')")
    merge = ("MERGE INTO t USING (VALUES (1, 'a')) AS s(id, dt) ON t.Id = s.Id\n"
             "  WHEN NOT MATCHED THEN INSERT *\n"
             "  WHEN MATCHED AND s.Dt = 'a' THEN DELETE\n"
             "  WHEN MATCHED AND s.Dt = 'b' THEN UPDATE SET *\n"
             "  WHEN NOT MATCHED BY TARGET THEN INSERT *")
    check("spark: MERGE source alias list, clause order (DELETE after UPDATE), unreachable clauses", spark.spark_sql(merge, names),
          "MERGE INTO t USING (SELECT * FROM (VALUES (1, 'a')) AS s(Id, Dt)) AS s ON t.Id = s.Id\n"
          "  WHEN MATCHED AND s.Dt = 'b' THEN UPDATE SET *\n"
          "  WHEN MATCHED AND s.Dt = 'a' THEN DELETE\n"
          "  WHEN NOT MATCHED THEN INSERT *")
    merge = ("MERGE INTO t USING s ON t.Id = s.Id\n"
             "  WHEN MATCHED THEN DELETE\n"
             "  WHEN MATCHED AND s.Dt = 'b' THEN UPDATE SET *\n"
             "  WHEN MATCHED THEN UPDATE SET Dt = s.Dt\n"
             "  WHEN MATCHED AND s.Dt = 'c' THEN UPDATE SET *")
    check("spark: MERGE clauses after an unconditional UPDATE are dropped", spark.spark_sql(merge, names),
          "MERGE INTO t USING s ON t.Id = s.Id\n"
          "  WHEN MATCHED AND s.Dt = 'b' THEN UPDATE SET *\n"
          "  WHEN MATCHED THEN UPDATE SET Dt = s.Dt")
    check("spark: version 6 tables", spark.with_table_version(
        "CREATE TABLE t (Id INT) USING hudi TBLPROPERTIES (primaryKey = 'Id')", 6),
        "CREATE TABLE t (Id INT) USING hudi TBLPROPERTIES ('hoodie.write.table.version' = '6', primaryKey = 'Id')")


def spark_plant_tests(hoodie):
    """With $HOODIE_SPARK: a wrong row planted in Spark's read is reported as a `spark` failure."""
    d = tempfile.mkdtemp(prefix="fuzz-selftest-spark-")
    fz = os.path.join(HERE, "fuzz.py")
    p = subprocess.run([sys.executable, fz, "--spark", "--seeds", "0..0", "--plant", "spark-row", "--hoodie", hoodie,
                        "--no-shrink", "--failures", d], capture_output=True, text=True)
    check("plant spark-row: the fuzzer exits 1", p.returncode, 1)
    check("plant spark-row: reported as a spark failure", bool(re.search(r"^FAIL seed 0: spark: ", p.stdout, re.M)),
          True)
    if p.returncode != 1:
        print(p.stdout[-2000:], p.stderr[-2000:])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hoodie", default=os.path.join(ROOT, "target", "debug", "hoodie"))
    ap.add_argument("--oracle-only", action="store_true")
    a = ap.parse_args()
    oracle_tests()
    cdc_replay_tests()
    spark_translation_tests()
    if not a.oracle_only:
        cleaned_history_tests(os.path.abspath(a.hoodie))
        plant_tests(os.path.abspath(a.hoodie))
        if os.environ.get("HOODIE_SPARK"):  # the Spark server of tests/spark/start.sh
            spark_plant_tests(os.path.abspath(a.hoodie))
    if failures:
        print(f"selftest: {len(failures)} failed")
        return 1
    print("selftest: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
