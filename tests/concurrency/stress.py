"""Concurrency stress test: N writer processes x M statements on one Hudi table under
optimistic concurrency control (tests/concurrency/README.md).

Every statement must either commit or fail with hoodie's conflict error. Afterwards each
commit of the table is matched, in commit order, to the one statement whose effect on the
table as of the previous commit gives the table as of that commit (read by time travel);
every committed statement must be matched, so the final table is a serial replay of the
committed statements in commit order: no lost update, no torn commit. hudi-rs then reads
the final table with the same rows.

Usage: stress.py --hoodie BIN --location LOC --work DIR [--type cow|mor] [--writers N]
                 [--statements M] [--seed S] [--storage-options JSON]
"""
import argparse
import json
import os
import random
import re
import subprocess
import sys
import threading

import pyarrow.parquet as pq

CONFLICT = "Cannot resolve conflicts for overlapping writes"
SHARED_UPDATABLE = range(0, 20)  # never deleted: upserted, updated, merged
SHARED_DELETABLE = range(20, 40)  # updated and deleted, never re-inserted


def sql_value(v):
    if v is None:
        return "NULL"
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    return str(v)


class Runner:
    def __init__(self, args):
        self.hoodie = args.hoodie
        self.location = args.location
        self.work = args.work
        self.options = json.loads(args.storage_options or "{}")

    def external(self, name="t"):
        opts = ""
        if self.options:
            opts = " OPTIONS (" + ", ".join(f"'{k}' '{v}'" for k, v in self.options.items()) + ")"
        return f"CREATE EXTERNAL TABLE {name} STORED AS HUDI LOCATION '{self.location}'{opts}; "

    def run(self, sql, warehouse):
        return subprocess.run(
            [self.hoodie, "--warehouse", warehouse, "-c", sql],
            capture_output=True, text=True, timeout=600,
        )

    def state(self, as_of, warehouse, out):
        travel = f" TIMESTAMP AS OF '{as_of}'" if as_of else ""
        r = self.run(
            self.external()
            + f"COPY (SELECT id, v, tag, grp FROM t{travel}) TO '{out}' STORED AS PARQUET",
            warehouse,
        )
        if r.returncode != 0:
            raise SystemExit(f"FAIL reading the table as of {as_of}: {r.stderr}")
        return rows_of(pq.read_table(out).to_pylist())


def rows_of(records):
    out = {}
    for r in records:
        if r["id"] in out:
            raise SystemExit(f"FAIL duplicate key {r['id']} in the table")
        out[r["id"]] = (r["v"], r["tag"], r["grp"])
    return out


def grp(i):
    return f"g{i % 4}"


def statements(rng, w, m):
    """Writer w's M statements: (sql, apply) where apply(state) -> new state."""
    out = []
    fresh = iter(range(1000 + w * 100, 1000 + w * 100 + 100))
    mine = []
    for s in range(m):
        tag = f"w{w}s{s}"
        kind = rng.choice(["upsert", "update", "delete", "merge"])
        if kind == "upsert":
            ids = rng.sample(list(SHARED_UPDATABLE), rng.randint(1, 2)) + [next(fresh)]
            mine.append(ids[-1])
            vals = [(i, rng.randint(0, 99), tag if rng.random() < 0.8 else None, grp(i)) for i in ids]
            sql = "INSERT INTO t VALUES " + ", ".join(
                "(" + ", ".join(sql_value(x) for x in row) + ")" for row in vals)

            def apply(st, vals=vals):
                st = dict(st)
                for i, v, t, g in vals:
                    st[i] = (v, t, g)
                return st
        elif kind == "update":
            pool = list(SHARED_UPDATABLE) + list(SHARED_DELETABLE) + mine
            ids = rng.sample(pool, 2)
            d = rng.randint(1, 9)
            sql = (f"UPDATE t SET v = v + {d}, tag = '{tag}' WHERE id IN "
                   f"({', '.join(map(str, ids))})")

            def apply(st, ids=ids, d=d, tag=tag):
                st = dict(st)
                for i in ids:
                    if i in st:
                        v, _, g = st[i]
                        st[i] = (None if v is None else v + d, tag, g)
                return st
        elif kind == "delete":
            pool = list(SHARED_DELETABLE) + mine
            ids = rng.sample(pool, 1)
            sql = f"DELETE FROM t WHERE id IN ({', '.join(map(str, ids))})"
            if ids[0] in mine:
                mine.remove(ids[0])

            def apply(st, ids=ids):
                return {k: v for k, v in st.items() if k not in ids}
        else:
            ids = [rng.choice(list(SHARED_UPDATABLE)), next(fresh)]
            mine.append(ids[-1])
            vals = [(i, rng.randint(0, 99), tag, grp(i)) for i in ids]
            src = " UNION ALL ".join(
                f"SELECT {i} AS id, CAST({v} AS BIGINT) AS v, '{t}' AS tag, '{g}' AS grp"
                for i, v, t, g in vals)
            sql = (f"MERGE INTO t USING ({src}) s ON t.id = s.id "
                   "WHEN MATCHED THEN UPDATE SET id = s.id, v = s.v, tag = s.tag "
                   "WHEN NOT MATCHED THEN INSERT (id, v, tag, grp) VALUES (s.id, s.v, s.tag, s.grp)")

            def apply(st, vals=vals):
                st = dict(st)
                for i, v, t, g in vals:
                    old = st.get(i)
                    st[i] = (v, t, old[2] if old else g)
                return st
        out.append((tag, sql, apply))
    return out


def completed_commits(location, options, work):
    """Completed write instants of the table (requested times), in time order: `T.<action>`
    under .hoodie/ (version 6) or `T_C.<action>` under .hoodie/timeline/ (versions 8 and 9)."""
    names = []
    for folder in (".hoodie/", ".hoodie/timeline/"):
        names += instant_files(location, folder)
    done = [n.split(".")[0].split("_")[0] for n in names
            if re.fullmatch(r"\d{17}(_\d{17})?\.(commit|deltacommit|replacecommit)", n)]
    return sorted(done)


def instant_files(location, folder):
    """The names of the files directly in `folder` (relative to the table) of the table."""
    names = []
    if location.startswith("s3://"):
        import boto3
        bucket, _, prefix = location[len("s3://"):].partition("/")
        s3 = boto3.client("s3", endpoint_url=os.environ["AWS_ENDPOINT"],
                          aws_access_key_id="test", aws_secret_access_key="test",
                          region_name="us-east-1")
        pages = s3.get_paginator("list_objects_v2").paginate(
            Bucket=bucket, Prefix=prefix.rstrip("/") + "/" + folder, Delimiter="/")
        for page in pages:
            names += [o["Key"].rsplit("/", 1)[1] for o in page.get("Contents", [])]
    elif location.startswith("az://"):
        from azure.storage.blob import BlobServiceClient
        container, _, prefix = location[len("az://"):].partition("/")
        conn = ("DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey="
                + os.environ["AZURE_STORAGE_ACCOUNT_KEY"] + ";BlobEndpoint="
                + os.environ["AZURITE_BLOB_STORAGE_URL"] + "/devstoreaccount1;")
        client = BlobServiceClient.from_connection_string(conn).get_container_client(container)
        base = prefix.rstrip("/") + "/" + folder
        names = [b.name[len(base):] for b in client.list_blobs(name_starts_with=base)
                 if "/" not in b.name[len(base):]]
    elif os.path.isdir(os.path.join(location, folder)):
        names = os.listdir(os.path.join(location, folder))
    return names


def check_hudi_rs(args, runner, final):
    """hudi-rs reads the final table with the same rows."""
    import pyarrow as pa
    from hudi import HudiTableBuilder
    options = {}
    if args.location.startswith("s3://"):
        options = {"aws_endpoint": os.environ["AWS_ENDPOINT"], "aws_allow_http": "true",
                   "aws_access_key_id": "test", "aws_secret_access_key": "test",
                   "aws_region": "us-east-1"}
    elif args.location.startswith("az://"):
        options = {"azure_storage_use_emulator": "true",
                   "azure_storage_account_name": "devstoreaccount1",
                   "azure_storage_account_key": os.environ["AZURE_STORAGE_ACCOUNT_KEY"]}
    table = HudiTableBuilder.from_base_uri(args.location).with_storage_options(options).build()
    batches = table.read()
    theirs = pa.Table.from_batches(batches) if batches else pa.table({})
    got = rows_of([{c: r[c] for c in ("id", "v", "tag", "grp")} for r in theirs.to_pylist()])
    if got != final:
        raise SystemExit(f"FAIL hudi-rs reads other rows than hoodie\nhudi-rs: {got}\nhoodie: {final}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hoodie", required=True)
    ap.add_argument("--location", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--type", default="cow")
    ap.add_argument("--writers", type=int, default=3)
    ap.add_argument("--statements", type=int, default=6)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--storage-options", default="")
    ap.add_argument("--table-version", type=int, default=6, choices=[6, 8, 9])
    ap.add_argument("--mode", default="optimistic_concurrency_control",
                    help="hoodie.write.concurrency.mode (single_writer: the self-test, which must fail)")
    args = ap.parse_args()
    runner = Runner(args)
    os.makedirs(args.work, exist_ok=True)
    setup_wh = os.path.join(args.work, "wh-setup")
    init = [(i, 0, None if i % 7 == 0 else "init", grp(i)) for i in range(40)]
    opts = "".join(f", '{k}' = '{v}'" for k, v in runner.options.items())
    create = (
        f"CREATE TABLE t (id INT, v BIGINT, tag STRING, grp STRING) USING hudi "
        f"PARTITIONED BY (grp) LOCATION '{args.location}' TBLPROPERTIES (primaryKey = 'id', "
        f"type = '{args.type}', 'hoodie.spark.sql.insert.into.operation' = 'upsert', "
        f"'hoodie.write.concurrency.mode' = '{args.mode}', "
        "'hoodie.cleaner.commits.retained' = '200', 'hoodie.keep.min.commits' = '210', "
        f"'hoodie.keep.max.commits' = '220', 'hoodie.compact.inline.max.delta.commits' = '4', "
        f"'hoodie.write.table.version' = '{args.table_version}'{opts}); "
        "INSERT INTO t VALUES " + ", ".join(
            "(" + ", ".join(sql_value(x) for x in row) + ")" for row in init))
    r = runner.run(create, setup_wh)
    if r.returncode != 0:
        raise SystemExit(f"FAIL creating the table: {r.stderr}")
    before = set(completed_commits(args.location, runner.options, args.work))
    rng = random.Random(args.seed)
    plans = [statements(random.Random(rng.random()), w, args.statements) for w in range(args.writers)]
    results = [[] for _ in range(args.writers)]

    def writer(w):
        wh = os.path.join(args.work, f"wh-{w}")
        for tag, sql, apply in plans[w]:
            r = runner.run(runner.external() + sql, wh)
            results[w].append((tag, sql, apply, r))

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(args.writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    committed = [[] for _ in range(args.writers)]
    conflicts = 0
    for w in range(args.writers):
        for tag, sql, apply, r in results[w]:
            if r.returncode == 0:
                committed[w].append((tag, sql, apply, r.stdout))
            elif CONFLICT in r.stderr:
                conflicts += 1
            else:
                raise SystemExit(f"FAIL {tag} neither committed nor conflicted: {sql}\n{r.stderr}")
    commits = [c for c in completed_commits(args.location, runner.options, args.work)
               if c not in before]
    wh = os.path.join(args.work, "wh-check")
    state = runner.state(None if not before else max(before), wh, os.path.join(args.work, "s0.parquet"))
    heads = [0] * args.writers
    matched = 0
    for k, c in enumerate(commits):
        actual = runner.state(c, wh, os.path.join(args.work, f"s{k + 1}.parquet"))
        if actual == state:
            # a compaction (or a write that changed nothing visible) leaves the rows as they were
            continue
        hit = None
        for w in range(args.writers):
            # statements that changed nothing when they ran left no commit: they may be skipped
            i = heads[w]
            while i < len(committed[w]):
                tag, sql, apply, _ = committed[w][i]
                if apply(state) == actual:
                    hit = (w, i)
                    break
                if apply(state) != state:
                    break
                i += 1
            if hit:
                break
        if hit is None:
            raise SystemExit(f"FAIL commit {c} is no committed statement applied to the table "
                             f"before it (a lost update or torn commit)\nbefore: {state}\nafter: {actual}")
        w, i = hit
        heads[w] = i + 1
        state = actual
        matched += 1
    for w in range(args.writers):
        for tag, sql, apply, _ in committed[w][heads[w]:]:
            if apply(state) != state:
                raise SystemExit(f"FAIL statement {tag} reported success but its commit is missing: {sql}")
    final = runner.state(None, wh, os.path.join(args.work, "final.parquet"))
    if final != state:
        raise SystemExit("FAIL the final table is not the replay of its commits")
    check_hudi_rs(args, runner, final)
    total = args.writers * args.statements
    print(f"ok   {args.type} at {args.location.split('://')[0] + '://' if '://' in args.location else 'local disk'}: "
          f"{total} statements by {args.writers} writers, {matched} commits replayed in order, "
          f"{conflicts} conflicts, {total - conflicts - matched} changed nothing")
    if conflicts == 0 and args.writers > 1:
        print("note no statement conflicted in this run")
    return final


if __name__ == "__main__":
    main()
