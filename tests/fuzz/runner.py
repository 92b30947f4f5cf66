"""Runs sequences through hoodie and reads the final tables three ways: in the same session
(COPY ... TO parquet at the end of the script), in a fresh session (a second hoodie process) and
with hudi-rs. Several sequences share one hoodie process; when it fails, the sequences from the
failing one on are run again, one process each."""
import os
import random
import re
import subprocess
import time

import pyarrow as pa
import pyarrow.parquet as pq

from model import Idents

# An object-store URL the warehouses go under instead of local disk (fuzz.py --store), with the
# store configured by the environment (AWS_ENDPOINT, AWS_ACCESS_KEY_ID, ...), as hoodie and
# hudi-rs read it. The scripts, and the Parquet copies the checks compare, stay on local disk.
STORE = None


def warehouse_uri(wh):
    """The warehouse hoodie is given for the local work folder `wh`: `wh` itself, or a folder of
    the same name (and its parent's) under the store."""
    if STORE is None:
        return wh
    return f"{STORE.rstrip('/')}/{os.path.basename(os.path.dirname(wh))}/{os.path.basename(wh)}"


def table_base(wh, name):
    """The base path of table `name` of the warehouse whose local work folder is `wh`."""
    return f"{warehouse_uri(wh)}/{name}" if STORE else os.path.join(wh, name)


def storage_options():
    """hudi-rs's storage options for the store (object_store's keys, from the environment)."""
    keys = ("AWS_ENDPOINT", "AWS_ALLOW_HTTP", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION")
    return {k.lower(): os.environ[k] for k in keys if k in os.environ}


def listdir(base):
    """The names in folder `base` (a local path or a URL on the store); [] if there is none."""
    if STORE is None:
        return os.listdir(base) if os.path.isdir(base) else []
    from urllib.parse import urlparse
    from pyarrow import fs
    endpoint = urlparse(os.environ["AWS_ENDPOINT"])
    s3 = fs.S3FileSystem(access_key=os.environ.get("AWS_ACCESS_KEY_ID"),
                         secret_key=os.environ.get("AWS_SECRET_ACCESS_KEY"),
                         region=os.environ.get("AWS_REGION", "us-east-1"),
                         endpoint_override=endpoint.netloc, scheme=endpoint.scheme or "https")
    u = urlparse(base)
    infos = s3.get_file_info(fs.FileSelector(f"{u.netloc}{u.path}", allow_not_found=True))
    return [os.path.basename(i.path) for i in infos]


def wait_for(binary, timeout=900):
    """hoodie is rebuilt from time to time; wait while the binary is missing."""
    t0 = time.time()
    while not os.path.exists(binary):
        if time.time() - t0 > timeout:
            raise SystemExit(f"fuzz: no hoodie binary at {binary}")
        time.sleep(5)


def run_hoodie(binary, warehouse, script_path, timeout=600):
    for attempt in range(3):
        wait_for(binary)
        try:
            p = subprocess.run([binary, "--warehouse", warehouse_uri(warehouse), "-f", script_path],
                               capture_output=True, text=True, timeout=timeout)
        except FileNotFoundError:  # replaced between the check and the exec
            time.sleep(5)
            continue
        except subprocess.TimeoutExpired as e:
            return 124, "", f"Error: timeout after {timeout}s"
        return p.returncode, p.stdout, p.stderr
    return 127, "", f"Error: cannot run {binary}"


def error_line(stdout, stderr):
    for line in (stderr + "\n" + stdout).splitlines():
        if line.startswith("Error:"):
            return line
    tail = (stderr.strip() or stdout.strip()).splitlines()
    return tail[-1] if tail else "(no output)"


def select_cols(table):
    return ", ".join(["_hoodie_record_key", "_hoodie_partition_path"] + [f'"{c.name}"' for c in table.columns])


def copy_stmt(table, path):
    return f"COPY (SELECT {select_cols(table)} FROM {table.name}) TO '{path}' STORED AS PARQUET"


def checks_history(seq):
    """Every fourth sequence also checks time travel (it costs a copy after every statement)."""
    return seq.seed % 4 == 0


def script_for(seq, ident_mode, out=None):
    """The hoodie statements of one sequence (and the COPY of its table to out; for a sequence
    that checks history, a copy after every statement too)."""
    stmts = ["RESET"]
    for k, u in enumerate(seq.units):
        stmts += u.hoodie(Idents(ident_mode, random.Random(u.iseed)))
        if out and checks_history(seq):
            stmts.append(copy_stmt(seq.table, f"{out}.step{k}"))
    if out:
        stmts.append(copy_stmt(seq.table, out))
    return stmts


def timeline_dir(base):
    """The folder of a table's instants: `.hoodie/timeline` on versions 8 and 9, `.hoodie` on 6."""
    layout2 = f"{base}/.hoodie/timeline"
    return layout2 if listdir(layout2) else f"{base}/.hoodie"


def completed_writes(base):
    """Requested times of the completed commits, deltacommits and replacecommits of a table
    (`T.<action>`, or `T_C.<action>` with the completion time on versions 8 and 9)."""
    out = []
    for n in listdir(timeline_dir(base)):
        head, _, action = n.partition(".")
        requested = head.split("_")[0]
        if action in ("commit", "deltacommit", "replacecommit") and requested.isdigit():
            out.append(requested)
    return sorted(out)


def dedup(states):
    out = []
    for s in states:
        if not out or out[-1] != s:
            out.append(s)
    return out


def canon_rows(rows):
    return sorted(tuple(sorted((k, str(v)) for k, v in r.items())) for r in rows)


def earliest_kept(seq, wh, binary):
    """The earliest commit the table's last clean kept, as `CALL show_cleans` gives it (None:
    the table was never cleaned). Reads before it fail; reads from it on see every state."""
    if not any(n.endswith(".clean") for n in listdir(timeline_dir(table_base(wh, seq.table.name)))):
        return None
    script = os.path.join(wh, f"cleans-{seq.seed}.sql")
    write_script(script, [f"CALL show_cleans(table => '{seq.table.name}', limit => 1)"])
    rc, so, se = run_hoodie(binary, wh, script)
    lines = [[c.strip() for c in line.strip().strip("|").split("|")]
             for line in so.splitlines() if line.startswith("|")]
    if rc != 0 or len(lines) < 2 or "earliest_commit_to_retain" not in lines[0]:
        raise RuntimeError("show_cleans failed: " + error_line(so, se))
    return lines[1][lines[0].index("earliest_commit_to_retain")] or None


def last_archived(seq, wh, binary):
    """The latest instant of the table's archived timeline, as `CALL show_timeline` gives it
    (None: nothing was archived). A CDC read must start at it or later, as in Hudi."""
    base = table_base(wh, seq.table.name)
    # version 6 archives into .hoodie/archived, 8 and 9 into the LSM history
    if not listdir(f"{base}/.hoodie/archived") and not listdir(f"{base}/.hoodie/timeline/history"):
        return None
    script = os.path.join(wh, f"archived-{seq.seed}.sql")
    write_script(script, [f"CALL show_timeline(table => '{seq.table.name}', showArchived => true, "
                          f"filter => \"timeline_type = 'ARCHIVED'\", limit => 1000000)"])
    rc, so, se = run_hoodie(binary, wh, script)
    lines = [[c.strip() for c in line.strip().strip("|").split("|")]
             for line in so.splitlines() if line.startswith("|")]
    if rc != 0 or not lines or "instant_time" not in lines[0]:
        raise RuntimeError("show_timeline failed: " + error_line(so, se))
    return lines[1][lines[0].index("instant_time")] if len(lines) > 1 else None


def states_match(want, got, cleaned):
    """Whether the states read (`got`, consecutive repeats dropped) are those the statements
    went through (`want`), or, once a clean dropped the oldest commits, the last of them."""
    return want[-len(got):] == got if cleaned else want == got


def history_check(seq, wh, binary):
    """Time travel against the states the sequence went through: the table as of each completed
    write, in order, must pass through the same states as the copies taken after each statement
    (consecutive repeats dropped: a compaction or a statement that changes nothing). After a
    clean, the reads as of the commits it kept must be the last of those states, and a read as
    of a commit before them must fail with Hudi's message. Returns the first difference, or
    None."""
    same = os.path.join(wh, f"{seq.seed}-same.parquet")
    steps = [canon_rows(read_parquet(f"{same}.step{k}")) for k in range(len(seq.units))
             if os.path.exists(f"{same}.step{k}")]
    kept = earliest_kept(seq, wh, binary)
    instants = completed_writes(table_base(wh, seq.table.name))
    cleaned = [i for i in instants if kept is not None and i < kept]
    instants = [i for i in instants if i not in cleaned]
    # archived commits are not on the active timeline: the reads as of those left are the last states
    trimmed = bool(cleaned) or last_archived(seq, wh, binary) is not None
    stmts = [f"COPY (SELECT {select_cols(seq.table)} FROM {seq.table.name} TIMESTAMP AS OF '{i}') "
             f"TO '{same}.asof{i}' STORED AS PARQUET" for i in instants]
    script = os.path.join(wh, f"history-{seq.seed}.sql")
    write_script(script, stmts)
    rc, so, se = run_hoodie(binary, wh, script)
    if rc != 0:
        return "time travel failed: " + error_line(so, se)
    if cleaned:
        write_script(script, [f"SELECT count(*) FROM {seq.table.name} TIMESTAMP AS OF '{cleaned[-1]}'"])
        rc, so, se = run_hoodie(binary, wh, script)
        if rc == 0 or "Cleaner cleaned up the timestamp of interest" not in error_line(so, se):
            return f"time travel to {cleaned[-1]}, before the earliest commit kept {kept}, did not fail as Hudi's: {error_line(so, se)}"
    travelled = [canon_rows(read_parquet(f"{same}.asof{i}")) for i in instants]
    want, got = dedup([[]] + steps), dedup(([] if trimmed else [[]]) + travelled)
    if not states_match(want, got, trimmed):
        return (f"{len(want) - 1} states after the statements, {len(got) - 1} as of the "
                f"{len(instants)} commits{' kept' if trimmed else ''}; first difference at state "
                f"{next((k for k, (a, b) in enumerate(zip(want, got)) if a != b), min(len(want), len(got)))}")
    return None


def identity(table, row):
    return tuple(str(row.get(c.name)) for c in table.identity)


def replay_commit(table, state, changes):
    """Applies one commit's change rows to `state` (identity -> the data rows of that record:
    one, or several where the table keeps duplicate keys): its deletes, then its updates, then
    its inserts (a record that moves partition is a delete and an insert). Returns what went
    wrong, or None."""
    dups = getattr(table, "allow_dups", False)
    for op in ("d", "u", "i"):
        for ch in changes:
            if ch["op"] != op:
                continue
            before, after = ch["before"], ch["after"]
            if op in ("d", "u"):
                held = state.get(identity(table, before)) if before is not None else None
                if not held:
                    return f"'{op}' of a record the table did not hold: {before}"
                same = [k for k, r in enumerate(held) if canon_rows([r]) == canon_rows([before])]
                if not same:
                    return f"'{op}' whose before image {before} is not the record {held[0]}"
                del held[same[0]]
                if not held:
                    del state[identity(table, before)]
            if op in ("u", "i"):
                if after is None or (identity(table, after) in state and not dups):
                    return f"'{op}' of a record the table already held: {after}"
                state.setdefault(identity(table, after), []).append(after)
    return None


def state_rows(state):
    return [r for rows in state.values() for r in rows]


def cdc_check(seq, wh, binary):
    """Replays the table's CDC rows (typed images) commit by commit from the empty table: every
    'd' and 'u' must find the record its before image shows, the states must pass through the
    table's states after each statement (sequences that copy them), and end at its final state.
    Returns the first difference, or None."""
    same = os.path.join(wh, f"{seq.seed}-same.parquet")
    out = f"{same}.cdc"
    script = os.path.join(wh, f"cdc-{seq.seed}.sql")
    # after a clean, the changes from the earliest commit kept on, replayed from the table as of it
    kept = earliest_kept(seq, wh, binary)
    # a CDC read starts at the last archived instant or later (Hudi's rule)
    archived = last_archived(seq, wh, binary)
    if archived is not None and (kept is None or archived > kept):
        kept = archived
    stmts = ["SET hoodie.datafusion.cdc.image.format = 'struct'",
             f"COPY (SELECT op, ts_ms, before, after FROM hudi_table_changes('{seq.table.name}', 'cdc', "
             f"'{kept or 'earliest'}')) TO '{out}' STORED AS PARQUET"]
    if kept:
        stmts.append(f"COPY (SELECT {select_cols(seq.table)} FROM {seq.table.name} TIMESTAMP AS OF '{kept}') "
                     f"TO '{out}.start' STORED AS PARQUET")
    write_script(script, stmts)
    rc, so, se = run_hoodie(binary, wh, script)
    if rc != 0:
        return "CDC read failed: " + error_line(so, se)
    rows = read_parquet(out)
    data = [c.name for c in seq.table.columns]
    commits = sorted({r["ts_ms"] for r in rows})
    start = read_parquet(f"{out}.start") if kept else []
    state = {}
    for r in start:
        state.setdefault(identity(seq.table, r), []).append({c: r[c] for c in data})
    first = canon_rows(state_rows(state))
    states = []
    for ts in commits:
        err = replay_commit(seq.table, state, [r for r in rows if r["ts_ms"] == ts])
        if err:
            return f"commit {ts}: {err}"
        states.append(canon_rows(state_rows(state)))
    final = canon_rows([{c: r[c] for c in data} for r in read_parquet(same)])
    if (states[-1] if states else first) != final:
        return f"replaying {len(rows)} change rows of {len(commits)} commits does not give the table"
    if checks_history(seq):
        steps = [canon_rows([{c: r[c] for c in data} for r in read_parquet(f"{same}.step{k}")])
                 for k in range(len(seq.units)) if os.path.exists(f"{same}.step{k}")]
        want, got = dedup([[]] + steps), dedup([first] + states)
        if not states_match(want, got, kept is not None):
            return (f"{len(want) - 1} states after the statements, {len(got) - 1} replayed from the "
                    f"change rows of {len(commits)} commits")
    return None


def write_script(path, stmts):
    with open(path, "w") as f:
        for s in stmts:
            f.write(s.rstrip() + ";\n")


def read_parquet(path):
    return pq.read_table(path).to_pylist()


def read_hudi(base):
    from hudi import HudiTableBuilder
    builder = HudiTableBuilder.from_base_uri(base)
    if STORE:
        builder = builder.with_storage_options(storage_options())
    batches = builder.build().read()
    return pa.Table.from_batches(batches).to_pylist() if batches else []


class Outcome:
    def __init__(self, error=None, same=None, fresh=None, hudi=None, fresh_error=None, hudi_error=None):
        self.error, self.same, self.fresh, self.hudi = error, same, fresh, hudi
        self.fresh_error, self.hudi_error = fresh_error, hudi_error
        self.history_error = None
        self.cdc_error = None


def run_batch(seqs, binary, work, ident_mode, tag="b"):
    """Runs the sequences in one hoodie process (falling back to one process per sequence from
    the first that fails). Returns {seed: Outcome}."""
    os.makedirs(work, exist_ok=True)
    out = {}
    pending = list(seqs)
    n = 0
    while pending:
        n += 1
        wh = os.path.join(work, f"{tag}{n}")
        os.makedirs(wh, exist_ok=True)
        stmts = []
        for s in pending:
            stmts += script_for(s, ident_mode, os.path.join(wh, f"{s.seed}-same.parquet"))
        script = os.path.join(wh, "script.sql")
        write_script(script, stmts)
        rc, so, se = run_hoodie(binary, wh, script)
        done = [s for s in pending if os.path.exists(os.path.join(wh, f"{s.seed}-same.parquet"))]
        for s in done:
            out[s.seed] = Outcome(same=read_parquet(os.path.join(wh, f"{s.seed}-same.parquet")))
        rest = pending[len(done):]
        if rest:
            # the first sequence without its copy is the one that failed; the sequences are
            # independent (own tables, RESET first), but it is run again alone to be sure
            bad = rest[0]
            if len(pending) == 1:
                msg = error_line(so, se) if rc != 0 else "Error: (the script ended without the table's copy)"
                out[bad.seed] = Outcome(error=msg)
            else:
                out.update(run_batch([bad], binary, work, ident_mode, tag=f"{tag}{n}x"))
            rest = rest[1:]
        # reads of the tables this process completed
        if done:
            _fresh_and_hudi(done, out, binary, wh)
        pending = rest
    return out


def _fresh_and_hudi(done, out, binary, wh):
    stmts = [copy_stmt(s.table, os.path.join(wh, f"{s.seed}-fresh.parquet")) for s in done]
    script = os.path.join(wh, "fresh.sql")
    write_script(script, stmts)
    rc, so, se = run_hoodie(binary, wh, script)
    for s in done:
        o = out[s.seed]
        if checks_history(s):
            o.history_error = history_check(s, wh, binary)
        if getattr(s.table, "cdc", None) and not o.history_error:
            o.cdc_error = cdc_check(s, wh, binary)
        p = os.path.join(wh, f"{s.seed}-fresh.parquet")
        if os.path.exists(p):
            o.fresh = read_parquet(p)
        elif rc != 0:
            # run this one alone to get its own error
            one = os.path.join(wh, f"fresh-{s.seed}.sql")
            write_script(one, [copy_stmt(s.table, p)])
            rc1, so1, se1 = run_hoodie(binary, wh, one)
            if os.path.exists(p):
                o.fresh = read_parquet(p)
            else:
                o.fresh_error = error_line(so1, se1)
        if getattr(s.table, "drop_partition", False):
            o.hudi = None  # hudi-rs 0.5.0 refuses tables that drop their partition columns
            continue
        try:
            o.hudi = read_hudi(table_base(wh, s.table.name))
        except Exception as e:  # noqa: BLE001 - any reader failure is a finding
            o.hudi_error = f"{type(e).__name__}: {e}"


def signature(kind, detail):
    """What a shrunk script must keep reproducing: the failing read, or the error's wording."""
    if kind == "error":
        d = re.sub(r'"[^"]*"', '"X"', detail)  # identifiers (in any casing) and values
        d = re.sub(r"'[^']*'", "'X'", d)
        d = re.sub(r"t\d+(_s\d+)?(_[ab])?", "T", d)
        d = re.sub(r"\d+", "N", d)
        return "error:" + d[:90]
    return kind
