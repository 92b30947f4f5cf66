#!/usr/bin/env python3
"""hoodie's differential fuzzer: random sequences of INSERT (upsert and insert), UPDATE, DELETE
and MERGE run by hoodie and by a DuckDB oracle; the final table, read in the same session, in a
fresh session and by hudi-rs, must equal the oracle's. See README.md.

  fuzz.py --seeds 0..299            # the CI range
  fuzz.py --seed 17                 # one seed, verbose (prints the script and the reads)
  fuzz.py --start 1000 --count 500  # more seeds
"""
import argparse
import glob
import multiprocessing
import os
import re
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))

import compare  # noqa: E402
import gen  # noqa: E402
import model  # noqa: E402
import runner  # noqa: E402
from oracle import Invalid  # noqa: E402
from shrink import shrink  # noqa: E402

import spark  # noqa: E402 - only used with --spark (it needs nothing but pyarrow)
from spark import Spark, SparkError  # noqa: E402


class Seq:
    def __init__(self, seed, table, units, expected):
        self.seed, self.table, self.units, self.expected = seed, table, units, expected


def make(seed, n, plant=None, force=None):
    g = gen.Gen(seed, n, plant, force)
    units = g.sequence()
    for i, u in enumerate(units):
        u.iseed = seed * 1000 + i
    return Seq(seed, g.t, units, g.o.rows())


def verdict(seq, oc, plant=()):
    """(kind, detail) of the first read that differs from the oracle, or None."""
    if oc.error:
        return "error", oc.error
    same = list(oc.same)
    if "drop-row" in plant and same:
        same = same[:-1]
    for kind, rows, err in (("same-session", same, None), ("fresh-session", oc.fresh, oc.fresh_error),
                            ("hudi-rs", oc.hudi, oc.hudi_error)):
        if err:
            return kind + "-error", err
        if kind == "hudi-rs" and rows is None and getattr(seq.table, "drop_partition", False):
            continue  # not read with hudi-rs (see runner)
        d = compare.diff(seq.table, seq.expected, rows)
        if d:
            return kind, d
    if getattr(oc, "history_error", None):
        return "time-travel", oc.history_error
    if getattr(oc, "cdc_error", None):
        return "cdc", oc.cdc_error
    return None


def spark_verdict(seq, oc, so, plant=()):
    """(kind, detail) of Spark's disagreement with the oracle, or None: `spark-error` (Spark
    refused a statement hoodie accepted, or its read failed), `spark` (Spark's read of its own
    table differs), `spark-read` / `spark-read-error` (Spark's read of hoodie's table)."""
    if so.internal:
        return "fuzzer-error", so.internal
    if so.failed:
        i, text, msg = so.failed
        return "spark-error", (f"Spark refused statement {i + 1}, which hoodie accepted: "
                               f"{spark.first_line(msg)}\n  statement: {' '.join(text.split())[:600]}"
                               f"\n  causes: {spark.causes(msg)}")
    if so.read_error:
        return "spark-error", f"Spark's read of its table failed: {spark.first_line(so.read_error)}"
    rows = [dict(r) for r in so.rows]
    if "spark-row" in plant:
        plant_row(seq, rows)
    d = compare.diff(seq.table, seq.expected, rows)
    if d:
        d = "Spark's read: " + d.replace("only in hoodie", "only in Spark")
        same = compare.canon(seq.table, compare.from_dicts(seq.table, rows)) == \
            compare.canon(seq.table, compare.from_dicts(seq.table, oc.same or []))
        return "spark", d + ("; hoodie's read equals Spark's" if same else "; hoodie's read equals the oracle's")
    if so.hoodie_read_error:
        return "spark-read-error", f"Spark's read of hoodie's table failed: {spark.first_line(so.hoodie_read_error)}"
    if so.hoodie_rows is not None:
        d = compare.diff(seq.table, seq.expected, so.hoodie_rows)
        if d:
            return "spark-read", "Spark's read of hoodie's table: " + d.replace("only in hoodie", "only in Spark")
    return None


def plant_row(seq, rows):
    """--plant spark-row: a wrong value in Spark's read (or a row too many, if it has none)."""
    import random
    rng = random.Random(seq.seed)
    if not rows:
        rows.append({c.name: model.rand_value(rng, c, null_p=0.0) for c in seq.table.columns})
        return
    c = next((c for c in seq.table.columns if c.role in ("data", "ordering")), seq.table.columns[0])
    old = rows[0].get(c.name)
    for _ in range(100):
        v = model.rand_value(rng, c, null_p=0.0)
        if compare.norm(v) != compare.norm(old):
            break
    rows[0][c.name] = v


def with_spark(v, oc, so, seq):
    """A hoodie failure's detail with what Spark made of the same sequence (to tell who is wrong)."""
    if so is None or v is None:
        return v
    kind, detail = v
    if so.internal:
        note = so.internal
    elif so.failed:
        note = f"Spark refuses statement {so.failed[0] + 1} too: {spark.first_line(so.failed[2], 200)}"
    elif so.rows is None:
        note = "Spark's read failed"
    else:
        ok = compare.diff(seq.table, seq.expected, so.rows) is None
        note = "Spark runs every statement; its read " + ("equals the oracle's" if ok else "differs from the oracle's")
        if not ok and kind != "error":
            got = {"same-session": oc.same, "fresh-session": oc.fresh, "hudi-rs": oc.hudi}.get(kind)
            if got is not None and compare.canon(seq.table, compare.from_dicts(seq.table, got)) == \
                    compare.canon(seq.table, compare.from_dicts(seq.table, so.rows)):
                note += " and equals hoodie's"
    return kind, f"{detail}\n  [{note}]"


def hoodie_table(work, seq):
    """The folder of the table hoodie wrote for seq (local warehouses only), or None."""
    if runner.STORE:
        return None
    for same in sorted(glob.glob(os.path.join(work, "*", f"{seq.seed}-same.parquet"))):
        base = os.path.join(os.path.dirname(same), seq.table.name)
        if os.path.isdir(os.path.join(base, ".hoodie")):
            return base
    return None


def run_spark(seqs, outs, opts, work):
    """Runs the sequences through Spark: {seed: SparkOutcome}."""
    client = Spark(opts["spark"])
    tag = re.sub(r"\W", "", os.path.basename(work)).lower()
    res = {}
    try:
        for seq in seqs:
            hoodie = hoodie_table(work, seq) if opts["spark_read"] else None
            try:
                res[seq.seed] = spark.run_seq(client, seq, opts["idents"], work, tag, opts["spark_version"], hoodie,
                                              keep=opts["keep"])
            except (SparkError, ValueError, KeyError) as e:  # the fuzzer's own bug: reported, not hidden
                res[seq.seed] = spark.SparkOutcome()
                res[seq.seed].internal = f"the Spark run failed: {type(e).__name__}: {str(e)[:300]}"
    finally:
        client.close()
    return res


def run_chunk(args):
    seeds, opts = args
    gen.AVOID.clear()
    gen.AVOID.update(opts["avoid"])
    model.SPARK = opts["spark_version"] if opts.get("spark") else False
    runner.STORE = opts["store"]
    work = tempfile.mkdtemp(prefix="hoodie-fuzz-", dir=opts["tmp"])
    results = []
    seqs = []
    for s in seeds:
        try:
            seqs.append(make(s, opts["statements"], opts["plant"], opts.get("force")))
        except Exception as e:  # noqa: BLE001 - a generator/oracle bug is reported, not hidden
            results.append((s, ("fuzzer-error", f"{type(e).__name__}: {e}".splitlines()[0])))
    outs = runner.run_batch(seqs, opts["hoodie"], work, opts["idents"])
    sparks = run_spark(seqs, outs, opts, work) if opts.get("spark") else {}
    for seq in seqs:
        oc, so = outs[seq.seed], sparks.get(seq.seed)
        v = verdict(seq, oc, opts["plant"])
        if v is None and so is not None:
            v = spark_verdict(seq, oc, so, opts["plant"])
        results.append((seq.seed, with_spark(v, oc, so, seq) if v and not v[0].startswith("spark") else v))
    if not opts["keep"]:
        shutil.rmtree(work, ignore_errors=True)
    return results


def run_single(seq, units, opts, work):
    """Replays units on a fresh oracle and in a fresh hoodie warehouse; (kind, detail) or None,
    or 'invalid' if the units leave the oracle's model."""
    try:
        o = gen.replay(seq.table, units, opts["plant"])
    except Invalid:
        return "invalid"
    s = Seq(seq.seed, seq.table, units, o.rows())
    outs = runner.run_batch([s], opts["hoodie"], work, opts["idents"], tag=f"r{time.time_ns()}_")
    v = verdict(s, outs[seq.seed], opts["plant"])
    if v is None and opts.get("spark_shrink"):
        so = run_spark([s], outs, opts, work)[seq.seed]
        v = spark_verdict(s, outs[seq.seed], so, opts["plant"])
    return v, s


def signature(kind, detail):
    """runner.signature, and for a statement Spark refused, the wording of Spark's message."""
    if kind == "spark-error":
        lines = detail.splitlines()
        causes = [x for x in lines if x.strip().startswith("causes:")]
        root = causes[0].split(" | ")[-1] if causes and causes[0].strip() != "causes:" else lines[0].split("accepted: ")[-1]
        return "spark-" + runner.signature("error", root)
    return runner.signature(kind, detail)


def do_shrink(seq, first, opts):
    work = tempfile.mkdtemp(prefix="hoodie-shrink-", dir=opts["tmp"])
    sig = signature(*first)
    # a Spark failure is shrunk with Spark in the loop (each candidate runs through both)
    opts = dict(opts, spark_shrink=first[0].startswith("spark"))
    if opts["spark_shrink"]:
        opts["shrink_budget"] = opts["spark_shrink_budget"]

    def fails(units):
        r = run_single(seq, units, opts, work)
        if r == "invalid":
            return False
        v, _ = r
        return v is not None and signature(*v) == sig

    units, tries = shrink(seq.units, fails, budget=opts["shrink_budget"])
    r = run_single(seq, units, opts, work)
    shutil.rmtree(work, ignore_errors=True)
    if r == "invalid" or r[0] is None:  # flaky: keep the whole sequence
        units = seq.units
        r = run_single(seq, units, opts, work)
    if r == "invalid" or r[0] is None:  # the replay does not reproduce it: report it as found
        r = (first, seq)
    v, s = r
    return units, v, s, tries


def write_failure(seq, units, v, s, opts):
    d = opts["failures"]
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, f"seed-{seq.seed}.sql")
    stmts = runner.script_for(s, opts["idents"])[1:]
    with open(path, "w") as f:
        f.write(f"-- fuzz seed {seq.seed}: {seq.table.describe()}\n")
        f.write(f"-- {len(units) - 1} statements after shrinking; failure: {v[0] if v else '?'}\n")
        for line in (v[1] if v else "").splitlines():
            f.write(f"--   {line}\n")
        f.write("-- expected (oracle) rows:\n")
        for line in compare.fmt_rows(seq.table, s.expected).splitlines():
            f.write(f"--   {line}\n")
        for st in stmts:
            f.write(st.rstrip() + ";\n")
        f.write(f"SELECT {runner.select_cols(seq.table)} FROM {seq.table.name};\n")
    return path


def parse_seeds(a):
    if a.seed is not None:
        return [a.seed]
    if a.seeds:
        lo, hi = a.seeds.split("..")
        return list(range(int(lo), int(hi) + 1))
    return list(range(a.start, a.start + a.count))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seeds", help="inclusive range A..B")
    p.add_argument("--start", type=int, default=0)
    p.add_argument("--count", type=int, default=300)
    p.add_argument("--seed", type=int, help="run one seed verbosely")
    p.add_argument("--statements", type=int, default=22, help="statements per sequence (after the CREATE)")
    p.add_argument("--hoodie", default=os.path.join(ROOT, "target", "debug", "hoodie"))
    p.add_argument("--store", help="put the warehouses under this object-store URL (s3://bucket/prefix), "
                   "the store configured by the environment as tests/s3/run.sh does")
    p.add_argument("--idents", choices=["quoted", "mixed"], default="mixed")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--batch", type=int, default=10, help="sequences per hoodie process")
    p.add_argument("--keep", action="store_true", help="keep the work directories")
    p.add_argument("--shrink", dest="shrink", action="store_true", default=True)
    p.add_argument("--no-shrink", dest="shrink", action="store_false")
    p.add_argument("--max-shrink", type=int, default=3, help="shrink at most this many failing seeds")
    p.add_argument("--shrink-budget", type=int, default=120, help="hoodie runs per shrink")
    p.add_argument("--failures", default=os.path.join(ROOT, "target", "fuzz-failures"))
    p.add_argument("--plant", action="append", default=[], help="plant a wrong result (selftest): ties-lose, drop-row, spark-row (a wrong row in Spark's read)")
    p.add_argument("--avoid", action="append", default=[], help="steer the generator away from a known bug (README)")
    p.add_argument("--allow", action="append", default=[], help="generate what a known-bug switch avoids")
    p.add_argument("--spark", action="store_true",
                   help="run every sequence through Spark with Hudi too ($HOODIE_SPARK, tests/spark/start.sh)")
    p.add_argument("--spark-table-version", type=int, choices=[6, 9], default=6,
                   help="the table version of Spark's tables: 6 or 9 (Spark's and hoodie's default)")
    p.add_argument("--no-spark-read", dest="spark_read", action="store_false", default=True,
                   help="with --spark, do not also read hoodie's table with Spark")
    p.add_argument("--spark-shrink-budget", type=int, default=40, help="runs per shrink of a Spark failure")
    a = p.parse_args(argv)
    gen.AVOID.update(a.avoid)
    gen.AVOID.difference_update(a.allow)
    runner.STORE = a.store
    address = None
    if a.spark:
        address = os.environ.get("HOODIE_SPARK")
        if not address:
            p.error("--spark needs $HOODIE_SPARK (eval \"$(tests/spark/start.sh DIR)\")")
        model.SPARK = a.spark_table_version
    opts = dict(statements=a.statements, hoodie=os.path.abspath(a.hoodie), idents=a.idents, keep=a.keep,
                plant=set(a.plant), failures=a.failures, shrink_budget=a.shrink_budget,
                tmp=os.path.join(ROOT, "target", "fuzz-tmp"), avoid=set(gen.AVOID), store=a.store,
                spark=address, spark_version=a.spark_table_version, spark_read=a.spark_read,
                spark_shrink_budget=a.spark_shrink_budget)
    os.makedirs(opts["tmp"], exist_ok=True)
    seeds = parse_seeds(a)
    t0 = time.time()
    if a.seed is not None:
        seq = make(a.seed, a.statements, opts["plant"])
        print(f"-- seed {a.seed}: {seq.table.describe()}")
        for st in runner.script_for(seq, a.idents):
            print(st.rstrip() + ";")
        print("-- oracle:\n" + compare.fmt_rows(seq.table, seq.expected))
    batch = a.batch
    if a.spark and batch == 10 and a.jobs > 1:  # few seeds, each slow in Spark: spread them over the jobs
        batch = max(1, min(batch, -(-len(seeds) // a.jobs)))
    chunks = [seeds[i:i + batch] for i in range(0, len(seeds), batch)]
    results = []
    if a.jobs > 1 and len(chunks) > 1:
        with multiprocessing.Pool(a.jobs) as pool:
            for r in pool.imap_unordered(run_chunk, [(c, opts) for c in chunks]):
                results += r
    else:
        for c in chunks:
            results += run_chunk((c, opts))
    results.sort()
    failed = [(s, v) for s, v in results if v is not None]
    shrunk = 0
    for s, v in failed:
        line = f"FAIL seed {s}: {v[0]}: {v[1].splitlines()[0][:300]}"
        if a.shrink and shrunk < a.max_shrink and v[0] != "fuzzer-error":
            shrunk += 1
            seq = make(s, a.statements, opts["plant"])
            units, v2, s2, tries = do_shrink(seq, v, opts)
            path = write_failure(seq, units, v2, s2, opts)
            line += f" -> {os.path.relpath(path, ROOT)} ({len(units) - 1} statements, {tries} runs)"
        print(line, flush=True)
        if a.seed is not None and a.spark:
            print("\n".join("  " + x for x in v[1].splitlines()[1:]))
    if a.seed is not None and not failed:
        print(f"seed {a.seed} passed")
    print(f"fuzz: {len(seeds)} seeds x {a.statements} statements in {time.time() - t0:.0f}s")
    print(f"fuzz: {len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
