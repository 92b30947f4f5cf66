#!/usr/bin/env python3
"""hoodie's differential fuzzer: random sequences of INSERT (upsert and insert), UPDATE, DELETE
and MERGE run by hoodie and by a DuckDB oracle; the final table, read in the same session, in a
fresh session and by hudi-rs, must equal the oracle's. See README.md.

  fuzz.py --seeds 0..299            # the CI range
  fuzz.py --seed 17                 # one seed, verbose (prints the script and the reads)
  fuzz.py --start 1000 --count 500  # more seeds
"""
import argparse
import multiprocessing
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))

import compare  # noqa: E402
import gen  # noqa: E402
import runner  # noqa: E402
from oracle import Invalid  # noqa: E402
from shrink import shrink  # noqa: E402


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


def run_chunk(args):
    seeds, opts = args
    gen.AVOID.clear()
    gen.AVOID.update(opts["avoid"])
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
    for seq in seqs:
        results.append((seq.seed, verdict(seq, outs[seq.seed], opts["plant"])))
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
    return verdict(s, outs[seq.seed], opts["plant"]), s


def do_shrink(seq, first, opts):
    work = tempfile.mkdtemp(prefix="hoodie-shrink-", dir=opts["tmp"])
    sig = runner.signature(*first)

    def fails(units):
        r = run_single(seq, units, opts, work)
        if r == "invalid":
            return False
        v, _ = r
        return v is not None and runner.signature(*v) == sig

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
    p.add_argument("--plant", action="append", default=[], help="plant a wrong result (selftest): ties-lose, drop-row")
    p.add_argument("--avoid", action="append", default=[], help="steer the generator away from a known bug (README)")
    p.add_argument("--allow", action="append", default=[], help="generate what a known-bug switch avoids")
    a = p.parse_args(argv)
    gen.AVOID.update(a.avoid)
    gen.AVOID.difference_update(a.allow)
    runner.STORE = a.store
    opts = dict(statements=a.statements, hoodie=os.path.abspath(a.hoodie), idents=a.idents, keep=a.keep,
                plant=set(a.plant), failures=a.failures, shrink_budget=a.shrink_budget,
                tmp=os.path.join(ROOT, "target", "fuzz-tmp"), avoid=set(gen.AVOID), store=a.store)
    os.makedirs(opts["tmp"], exist_ok=True)
    seeds = parse_seeds(a)
    t0 = time.time()
    if a.seed is not None:
        seq = make(a.seed, a.statements, opts["plant"])
        print(f"-- seed {a.seed}: {seq.table.describe()}")
        for st in runner.script_for(seq, a.idents):
            print(st.rstrip() + ";")
        print("-- oracle:\n" + compare.fmt_rows(seq.table, seq.expected))
    chunks = [seeds[i:i + a.batch] for i in range(0, len(seeds), a.batch)]
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
    if a.seed is not None and not failed:
        print(f"seed {a.seed} passed")
    print(f"fuzz: {len(seeds)} seeds x {a.statements} statements in {time.time() - t0:.0f}s")
    print(f"fuzz: {len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
