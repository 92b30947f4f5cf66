"""The table model of one fuzz sequence: columns, types, keys, partition and ordering fields,
and how values and identifiers are written as SQL (the same text serves hoodie and DuckDB)."""
import datetime
import decimal
import random

# type name -> (hoodie DDL type, DuckDB DDL type)
TYPES = {
    "INT": ("INT", "INTEGER"),
    "BIGINT": ("BIGINT", "BIGINT"),
    "DOUBLE": ("DOUBLE", "DOUBLE"),
    "STRING": ("STRING", "VARCHAR"),
    "BOOLEAN": ("BOOLEAN", "BOOLEAN"),
    "DATE": ("DATE", "DATE"),
    "DECIMAL": ("DECIMAL(10,2)", "DECIMAL(10,2)"),
}

# candidate data columns: (name, type)
DATA_COLUMNS = [
    ("userName", "STRING"),
    ("isActive", "BOOLEAN"),
    ("Score", "DOUBLE"),
    ("Amount", "DECIMAL"),
    ("birthDay", "DATE"),
    ("Cnt", "INT"),
    ("bigNum", "BIGINT"),
]

D0 = datetime.date(2024, 1, 1)


class Col:
    def __init__(self, name, typ, role="data"):
        self.name, self.typ, self.role = name, typ, role

    def __repr__(self):
        return f"Col({self.name!r}, {self.typ!r}, {self.role!r})"


class Idents:
    """Renders identifiers: 'quoted' always writes "exactName"; 'mixed' writes the name unquoted
    in a random casing, as Spark users do (needs case-insensitive resolution in hoodie)."""

    def __init__(self, mode, rng):
        self.mode, self.rng = mode, rng

    def __call__(self, name):
        if self.mode == "quoted":
            return f'"{name}"'
        r = self.rng.random()
        if r < 0.3:
            return name
        if r < 0.5:
            return name.lower()
        if r < 0.7:
            return name.upper()
        return "".join(c.upper() if self.rng.random() < 0.5 else c.lower() for c in name)


class Table:
    """One target table: name, columns in declaration order, keys, partition, ordering, type."""

    def __init__(self, rng, name, force=None):
        f = force or {}
        self.name = name
        self.ttype = f.get("ttype", rng.choice(["cow", "mor"]))
        ktype = f.get("ktype", rng.choice(["INT", "BIGINT", "STRING"]))
        keys = [Col("Id", ktype, "key")]
        if f.get("composite", rng.random() < 0.35):
            keys.append(rng.choice([Col("regionCode", "STRING", "key"), Col("subId", "INT", "key")]))
        self.keys = keys
        # primaryKey declared (else hoodie generates a key per row and the key columns are data)
        self.pk = f.get("pk", rng.random() < 0.85)
        self.ordering = None
        if f.get("has_ordering", rng.random() < 0.8):
            self.ordering = Col("Ts", f.get("otype", rng.choice(["BIGINT", "INT", "INT", "DATE"])), "ordering")
        self.mode = "COMMIT_TIME_ORDERING"
        if self.ordering is not None:
            self.mode = f.get("mode", rng.choice(["EVENT_TIME_ORDERING", "EVENT_TIME_ORDERING", "COMMIT_TIME_ORDERING"]))
        self.partition = None
        if f.get("partitioned", rng.random() < 0.6):
            self.partition = Col("Dt", f.get("ptype", rng.choice(["STRING", "STRING", "INT", "DATE"])), "partition")
        # the index: SIMPLE (partition-scoped, the default) or GLOBAL_SIMPLE (keys unique across partitions)
        self.global_index = bool(self.pk and self.partition is not None and f.get("global", rng.random() < 0.25))
        # a simple BUCKET index (3 buckets): the same records as SIMPLE, each in its bucket
        self.bucket = bool(self.pk and not self.global_index and f.get("bucket", rng.random() < 0.2))
        if self.bucket and self.ttype == "mor" and self.mode == "EVENT_TIME_ORDERING" and "mor-bucket-reinsert" in AVOID:
            self.ttype = "cow"  # README, "Known issues"
        if self.global_index and spark_avoids("spark-global-index"):
            self.global_index = False  # README, "Spark": Hudi 1.2.0's global index fails or differs
        if not self.pk and self.ttype == "mor" and spark_avoids("spark-mor-partial-update"):
            self.ttype = "cow"  # README, "Spark": a MERGE on such a table nulls the columns it does not assign
        if self.bucket and spark_avoids("spark-bucket-index"):
            self.bucket = False  # README, "Spark": Hudi 1.2.0's bucket index takes new keys for stored ones
        if self.ordering is not None and self.ordering.typ == "DATE" and spark_avoids("spark-date-ordering"):
            self.ordering.typ = "INT"  # README, "Spark": Hudi 1.2.0 fails to compare DATE ordering values
        # files without the partition column (hoodie.datasource.write.drop.partition.columns);
        # hudi-rs 0.5.0 refuses such tables, so they are not read with it
        self.drop_partition = bool(self.partition is not None and f.get("drop_partition", rng.random() < 0.15))
        if self.drop_partition and spark_avoids("spark-drop-partition-merge"):
            self.drop_partition = False  # README, "Spark": Hudi's MERGE fails on such tables
        # CDC logging in one of its modes (the change rows are replayed against the table's states)
        self.cdc = None
        if self.pk and not self.drop_partition and f.get("cdc", rng.random() < 0.3):
            self.cdc = f.get("cdc_mode", rng.choice(["OP_KEY_ONLY", "DATA_BEFORE", "DATA_BEFORE_AFTER"]))
        n = f.get("ndata", rng.randint(2, 5))
        data = [Col(n_, t) for n_, t in rng.sample(DATA_COLUMNS, n)]
        self.data = data
        cols = keys + data + ([self.ordering] if self.ordering else []) + ([self.partition] if self.partition else [])
        if "order" not in f:
            rng.shuffle(cols)
        self.declared = cols
        # hoodie's table order: partition columns last
        self.columns = [c for c in cols if c.role != "partition"] + ([self.partition] if self.partition else [])
        self.event_time = self.mode == "EVENT_TIME_ORDERING"
        # how many commits the cleaner keeps: the default (10) or few, so that cleans run in
        # a sequence; drawn from a generator of its own, so the tables and statements of a
        # seed stay what they were before cleaning existed
        clean = random.Random(f"{name}-clean")
        self.commits_retained = f.get("commits_retained", clean.choice([None, None, 1, 2, 3]))
        # the tables that clean also archive as soon as they can (2 to 3 commits kept; the
        # cleaner's retention raises that), so reads after archival are checked too
        self.archives = f.get("archives", bool(self.commits_retained))
        # how the table's INSERTs run (Hudi 1.1+: `insert` unless asked otherwise), drawn from a
        # generator of its own too: a table property `hoodie.spark.sql.insert.into.operation =
        # 'upsert'` (its INSERTs upsert by default), a decoy `hoodie.datasource.write.operation`
        # property (ignored: an option of one write, set in the session only), and whether the
        # sequence keeps duplicate keys (`insert` of stored keys; the generator then keeps every
        # UPDATE, DELETE, MERGE and upsert away from the keys held twice, README rule 1)
        ins = random.Random(f"{name}-insert")
        self.upsert_prop = bool(self.pk and f.get("upsert_prop", ins.random() < 0.4))
        self.write_op_prop = bool(self.pk and f.get("write_op_prop", ins.random() < 0.1))
        # not on a bucket index: an `insert` of a stored key goes to the file group that holds
        # it (on merge-on-read to its log, merged with the stored record on read)
        self.allow_dups = bool(self.pk and not self.bucket and f.get("allow_dups", ins.random() < 0.35))
        # the table version hoodie creates it with (6, or 9: Hudi 1.2's and hoodie's default), from a
        # generator of its own so the rest of a seed stays what it was
        self.version = f.get("version", random.Random(f"{name}-version").choice([6, 9]))
        # how a merge-on-read table's logs hold their records (hoodie.logfile.data.block.format:
        # Avro blocks, Hudi's default, or Parquet blocks), from a generator of its own too
        blocks = random.Random(f"{name}-blocks").choice(["avro", "avro", "parquet"])
        self.log_blocks = f.get("log_blocks", blocks if self.ttype == "mor" else "avro")

    # columns an UPDATE may assign
    @property
    def assignable(self):
        return [c for c in self.columns if c.role in ("data", "ordering")]

    @property
    def identity(self):
        """The columns that make a record: the key and the partition (the key alone under a
        global index). A table without a primary key has no record identity (see `pk`)."""
        return self.keys + ([self.partition] if self.partition and not self.global_index else [])

    def col(self, name):
        return next(c for c in self.columns if c.name == name)

    def describe(self):
        return (f"v{getattr(self, 'version', 6)} {self.ttype} {'keys' if self.pk else 'no primary key, columns'}={[c.name + ':' + c.typ for c in self.keys]} "
                f"{'index=GLOBAL_SIMPLE ' if self.global_index else ''}"
                f"{'index=BUCKET ' if self.bucket else ''}"
                f"{'drop.partition.columns ' if self.drop_partition else ''}"
                f"{'cdc=' + self.cdc + ' ' if self.cdc else ''}"
                f"{'commits.retained=' + str(self.commits_retained) + ' ' if self.commits_retained else ''}"
                f"{'archives ' if getattr(self, 'archives', False) else ''}"
                f"{'log.blocks=parquet ' if getattr(self, 'log_blocks', 'avro') == 'parquet' else ''}"
                f"{'insert.into.operation=upsert ' if getattr(self, 'upsert_prop', False) else ''}"
                f"{'duplicates ' if getattr(self, 'allow_dups', False) else ''}"
                f"ordering={self.ordering.name + ':' + self.ordering.typ if self.ordering else None} "
                f"mode={self.mode} partition={self.partition.name + ':' + self.partition.typ if self.partition else None}")


# ---------------------------------------------------------------- values

STRINGS = ["ann", "Bob", "c d", "", "o'k", "zed", "ÄÖ"]

# Switches that steer the generator away from known hoodie bugs, on by default until the bug is
# fixed (README.md, "Known issues"); `fuzz.py --allow NAME` turns one off, `--avoid NAME` on.
AVOID = {"merge-delete-insert-same-record", "merge-duplicate-source", "mor-bucket-reinsert",  # the last: the oracle's model of it is not trusted yet (README)
         # with --spark only: what Hudi on Spark refuses or does otherwise (README, "Spark")
         "spark-merge-typed-values", "spark-null-ordering",
         "spark-merge-insert-partition", "spark-bucket-index", "spark-session-options-leak",
         "spark-mor-partial-update", "spark-drop-partition-merge",
         "spark-date-ordering", "spark-merge-insert-only", "spark-mor-delete-reinsert",
         "spark-mor-target-condition", "spark-global-index", "spark-mor-merge-delete-ordering",
         "spark-pkless-merge-partition"}
# fuzz.py --spark: the sequences also run through Spark with Hudi (spark.py), on tables of this
# version (6 or 9; False without --spark), so the generator leaves out what Hudi on Spark lacks
# or gets wrong: the `spark-*` switches of AVOID (README, "Spark as a second reference")
SPARK = False


def spark_avoids(name):
    """Whether the generator steers away from `name` (a `spark-*` switch): with --spark only."""
    return bool(SPARK) and name in AVOID

DOUBLES = [-1.5, 0.0, 2.25, 3.5, 100.125, 1e10]
DECIMALS = ["-1.25", "0.00", "12.34", "999.99", "5.50"]


def rand_value(rng, col, null_p=0.25):
    if col.role == "key":
        return key_value(rng, col)
    if rng.random() < null_p:
        return None
    t = col.typ
    if col.role == "partition":
        if t == "STRING":
            return rng.choice(["a", "b", "c"])
        if t == "INT":
            return rng.choice([1, 2, 3])
        return D0 + datetime.timedelta(days=rng.choice([0, 31]))
    if col.role == "ordering":
        if t == "DATE":
            return D0 + datetime.timedelta(days=rng.randint(0, 5))
        return rng.randint(0, 6)
    if t == "INT":
        return rng.randint(-3, 9)
    if t == "BIGINT":
        return 10**12 + rng.randint(0, 5)
    if t == "DOUBLE":
        return rng.choice(DOUBLES)
    if t == "STRING":
        v = rng.choice(STRINGS)
        return "ok" if v == "o'k" and "quote-escape" in AVOID else v
    if t == "BOOLEAN":
        return rng.random() < 0.5
    if t == "DATE":
        return D0 + datetime.timedelta(days=rng.randint(0, 400))
    if t == "DECIMAL":
        return decimal.Decimal(rng.choice(DECIMALS))
    raise ValueError(t)


def key_value(rng, col):
    if col.name == "Id":
        n = rng.randint(1, 12)
        return f"k{n}" if col.typ == "STRING" else n
    if col.name == "regionCode":
        return rng.choice(["eu", "us"])
    return rng.randint(1, 2)


def lit(v, typ=None):
    """A SQL literal both hoodie (DataFusion) and DuckDB read as the same value."""
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v) if v != 1e10 else "10000000000.0"
    if isinstance(v, decimal.Decimal):
        return f"CAST('{v}' AS DECIMAL(10,2))"
    if isinstance(v, datetime.date):
        return f"DATE '{v.isoformat()}'"
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    raise ValueError(repr(v))


def key_text(v):
    """A value as hoodie writes it into a record key or a partition path."""
    if isinstance(v, datetime.date):
        return v.isoformat()
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def record_key(table, row):
    if len(table.keys) == 1:
        return key_text(row[table.keys[0].name])
    parts = []
    for k in table.keys:
        v = row[k.name]
        s = "__null__" if v is None else ("__empty__" if v == "" else key_text(v))
        parts.append(f"{k.name}:{s}")
    return ",".join(parts)


def partition_path(table, row):
    if table.partition is None:
        return ""
    v = row[table.partition.name]
    if v is None or v == "":
        return f"{table.partition.name}=__HIVE_DEFAULT_PARTITION__"
    return f"{table.partition.name}={key_text(v)}"
