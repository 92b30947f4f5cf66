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
from oracle import Oracle  # noqa: E402
from stmts import Delete, Insert, Merge, Source, Update  # noqa: E402

failures = []


def check(label, got, want):
    if got != want:
        failures.append(f"{label}: got {got!r}, want {want!r}")
        print(f"FAIL {label}: got {got!r}, want {want!r}")
    else:
        print(f"ok   {label}")


def table(name, cols, keys, ordering=None, partition=None, mode=None, ttype="cow", pk=True, global_index=False):
    t = Table.__new__(Table)
    t.name, t.ttype = name, ttype
    t.pk, t.global_index = pk, global_index
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


def run(t, units):
    o = Oracle(t)
    for u in units:
        u.apply(o)
        o.check_unique()
    return sorted(o.rows(), key=repr)


def oracle_tests():
    # event-time ordering: pre-combining (greatest ts, tie keeps the first, NULL loses), then
    # incoming >= stored wins, NULL orders first (sql-reference.md, INSERT INTO / Upserts)
    t = table("e", [("id", "INT"), ("name", "STRING"), ("ts", "BIGINT")], ["id"], "ts")
    up = lambda *r: Insert(t, "upsert", "none", False, rows=rows_of(t, *r))  # noqa: E731
    got = run(t, [up((1, "a1", 1), (1, "a1_2", 3), (1, "a1_3", 2), (2, "b1", 5), (2, "b2", 5), (3, "c", None), (3, "c2", 0))])
    check("pre-combine: greatest ts, first of a tie, NULL loses", got, [(1, "a1_2", 3), (2, "b1", 5), (3, "c2", 0)])
    got = run(t, [up((1, "a", 3)), up((1, "older", 2), (2, "b", None)), up((2, "null tie", None)), up((2, "x", 0))])
    check("upsert: older loses, NULL vs NULL is a tie the incoming wins", got, [(1, "a", 3), (2, "x", 0)])
    got = run(t, [up((1, "a", 100), (2, "b", 100)),
                  Update(t, [("name", "'older'"), ("ts", "99")], "@id = 1"),
                  Update(t, [("name", "'newer'"), ("ts", "101")], "@id = 2"),
                  Update(t, [("name", "'kept_ts'")], "@id = 1")])
    check("UPDATE of the ordering field applies where new >= old", got, [(1, "kept_ts", 100), (2, "newer", 101)])
    got = run(t, [up((1, "a", 5)), Update(t, [("ts", "NULL")], None), up((2, "b", 1)), Delete(t, "@id = 2")])
    check("UPDATE to a NULL ordering value loses; DELETE always applies", got, [(1, "a", 5)])
    # commit-time ordering: the latest write wins, even with a smaller ts
    c = table("c", [("id", "INT"), ("name", "STRING"), ("ts", "BIGINT")], ["id"], "ts", mode="COMMIT_TIME_ORDERING")
    upc = lambda *r: Insert(c, "upsert", "none", True, rows=rows_of(c, *r))  # noqa: E731
    got = run(c, [upc((1, "a", 5)), upc((1, "b", 1)), Update(c, [("ts", "0"), ("name", "'u'")], None)])
    check("commit-time: the latest write wins", got, [(1, "u", 0)])
    # insert with the duplicate policy drop keeps the stored row
    d = table("d", [("id", "INT"), ("v", "STRING")], ["id"])
    got = run(d, [Insert(d, "insert", "none", False, rows=rows_of(d, (1, "a"))),
                  Insert(d, "insert", "drop", True, rows=rows_of(d, (1, "dropped"), (2, "b")))])
    check("insert with dup policy drop", got, [(1, "a"), (2, "b")])
    # partitioned upsert: the same key in another partition is another record
    p = table("p", [("id", "INT"), ("v", "STRING"), ("ts", "INT"), ("dt", "STRING")], ["id"], "ts", "dt")
    upp = lambda *r: Insert(p, "upsert", "none", False, rows=rows_of(p, *r))  # noqa: E731
    got = run(p, [upp((1, "a", 1, "x")), upp((1, "b", 0, "y"), (2, "n", 1, None)), upp((2, "m", 1, None))])
    check("partition-scoped keys; NULL partition values share a path", got, [(1, "a", 1, "x"), (1, "b", 0, "y"), (2, "m", 1, None)])
    # MERGE (sql-tests/merge/merge_into.slt): first clause wins; SET * / INSERT *; unmatched left
    m = table("m", [("id", "INT"), ("name", "STRING"), ("price", "DOUBLE"), ("ts", "BIGINT"), ("dt", "STRING")], ["id"], "ts", "dt")
    src = Source("m_s", "values", [("id", "INT"), ("name", "STRING"), ("price", "DOUBLE"), ("ts", "BIGINT"), ("dt", "STRING"), ("flag", "INT")],
                 [(1, "s1", 11.0, 101, "x", 0), (2, "s2", 0.0, 101, "x", 1), (4, "s4", 40.0, 100, "y", 0), (5, "s5", 50.0, 100, "y", 2)], ["id"])
    mg = Merge(m, src, None, [("id", "id")], False, None, [
        dict(kind="matched", cond="$s.@flag = 1", action="delete"),
        dict(kind="matched", cond=None, action="update_star"),
        dict(kind="not_matched", cond="$s.@flag = 0", action="insert_star")])
    old = Source("m_o", "values", src.cols[:5], [(1, "old", 1.0, 50, "x")], ["id"])
    stale = Merge(m, old, "t", [("id", "id")], False, None, [dict(kind="matched", cond=None, action="update_star")])
    ins = Insert(m, "upsert", "none", False, rows=rows_of(m, (1, "a1", 10.0, 100, "x"), (2, "a2", 20.0, 100, "x"), (3, "a3", 30.0, 100, "y")))
    got = run(m, [ins, mg, stale])
    check("MERGE clauses, and a stale update loses", got, [(1, "s1", 11.0, 101, "x"), (3, "a3", 30.0, 100, "y"), (4, "s4", 40.0, 100, "y")])
    bys = Merge(m, Source("m_k", "values", [("id", "INT"), ("dt", "STRING")], [(1, "x")], ["id"]), "t", [("id", "id")], False, None, [
        dict(kind="by_source", cond=None, action="update", assigns=[("name", "'unmatched'"), ("ts", "$t.@ts + 1")])])
    got = run(m, [ins, bys])
    check("MERGE ... WHEN NOT MATCHED BY SOURCE", got, [(1, "a1", 10.0, 100, "x"), (2, "unmatched", 20.0, 101, "x"), (3, "unmatched", 30.0, 101, "y")])

    # no primary key: INSERT keeps duplicates, UPDATE/DELETE act on rows
    n = table("n", [("id", "INT"), ("v", "STRING")], ["id"], pk=False)
    got = run(n, [Insert(n, "insert", "none", False, rows=rows_of(n, (1, "a"), (1, "a"), (2, "b"))),
                  Update(n, [("v", "'u'")], "@id = 1"), Delete(n, "@id = 2")])
    check("no primary key: duplicates kept", got, [(1, "u"), (1, "u")])
    # GLOBAL_SIMPLE: an upsert into another partition moves the record, without an ordering test
    g = table("g", [("id", "INT"), ("v", "STRING"), ("ts", "INT"), ("p", "STRING")], ["id"], "ts", "p", global_index=True)
    upg = lambda *r: Insert(g, "upsert", "none", False, rows=rows_of(g, *r))  # noqa: E731
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
    from runner import canon_rows, replay_commit
    t = table("c", [("Id", "INT"), ("v", "STRING"), ("Dt", "STRING")], ["Id"], partition="Dt")
    a, a2, b = {"Id": 1, "v": "a", "Dt": "x"}, {"Id": 1, "v": "a2", "Dt": "x"}, {"Id": 2, "v": None, "Dt": "x"}
    state = {}
    check("cdc replay: inserts", replay_commit(t, state, [
        {"op": "i", "before": None, "after": a}, {"op": "i", "before": None, "after": b}]), None)
    check("cdc replay: an update and a delete", replay_commit(t, state, [
        {"op": "u", "before": a, "after": a2}, {"op": "d", "before": b, "after": None}]), None)
    check("cdc replay: the state", canon_rows(list(state.values())), canon_rows([a2]))
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hoodie", default=os.path.join(ROOT, "target", "debug", "hoodie"))
    ap.add_argument("--oracle-only", action="store_true")
    a = ap.parse_args()
    oracle_tests()
    cdc_replay_tests()
    if not a.oracle_only:
        cleaned_history_tests(os.path.abspath(a.hoodie))
        plant_tests(os.path.abspath(a.hoodie))
    if failures:
        print(f"selftest: {len(failures)} failed")
        return 1
    print("selftest: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
