"""The statements of a fuzz sequence. Each one is plain data with two renderings: the hoodie
script text (`hoodie(ident)`, a list of statements) and its effect on the oracle
(`apply(oracle)`), which is DuckDB SQL. Templates name columns as `@Name` (rendered by the
identifier mode) and qualify them with `$s.` / `$t.` (the MERGE source and target aliases)."""
import decimal
import re

import duckdb

import model
from model import AVOID, TYPES, lit
from oracle import Invalid, q

IDENT = re.compile(r"@(\w+)")


def render(tpl, ident, s="s", t="t"):
    if tpl is None:
        return None
    out = IDENT.sub(lambda m: ident(m.group(1)), tpl)
    return out.replace("$s.", s + ".").replace("$t.", t + ".")


def quoted(name):
    return q(name)


def values_sql(rows):
    return ", ".join("(" + ", ".join(lit(v) for v in r) + ")" for r in rows)


WRITE_OP = "hoodie.datasource.write.operation"
INTO_OP = "hoodie.spark.sql.insert.into.operation"
COMBINE = "hoodie.combine.before.insert"
LEGACY_MODE = "hoodie.sql.insert.mode"
DUP_POLICY = "hoodie.datasource.insert.dup.policy"
# the session options an INSERT sets or resets (each INSERT states all of them, so that a shrunk
# sequence means what it meant); INTO_OP, COMBINE and LEGACY_MODE only in sequences that use them
INSERT_OPTIONS = (WRITE_OP, INTO_OP, COMBINE, LEGACY_MODE, DUP_POLICY)


def insert_operation(t, session, policy):
    """The operation an INSERT INTO runs (README, oracle rule 3; Hudi 1.2): the session's
    `hoodie.datasource.write.operation`, else `hoodie.spark.sql.insert.into.operation` (the
    session's, then the table's property), else `insert` (the legacy `hoodie.sql.insert.mode`
    no longer upserts; a `hoodie.datasource.write.operation` table property is ignored). An
    upsert with a duplicate policy, or into a table without a primary key, is an `insert`."""
    op = session.get(WRITE_OP) or session.get(INTO_OP) or ("upsert" if getattr(t, "upsert_prop", False) else "insert")
    if op == "upsert" and (policy != "none" or not t.pk):
        op = "insert"
    return op


class Create:
    kind = "create"

    def __init__(self, table):
        self.t = table

    def hoodie(self, ident):
        t = self.t
        if getattr(ident, "mode", "quoted") == "mixed":
            ident = lambda n: n  # noqa: E731 - declared as the table spells them, unquoted
        cols = ", ".join(f"{ident(c.name)} {TYPES[c.typ][0]}" for c in t.declared)
        props = [f"primaryKey = '{','.join(k.name for k in t.keys)}'"] if t.pk else []
        props.append(f"type = '{t.ttype}'")
        if t.global_index:
            props.append("hoodie.index.type = 'GLOBAL_SIMPLE'")
        if getattr(t, "bucket", False):
            props.append("hoodie.index.type = 'BUCKET'")
            props.append("hoodie.bucket.index.num.buckets = '3'")
        if getattr(t, "drop_partition", False):
            props.append("hoodie.datasource.write.drop.partition.columns = 'true'")
        if getattr(t, "cdc", None):
            props.append("'hoodie.table.cdc.enabled' = 'true'")
            props.append(f"'hoodie.table.cdc.supplemental.logging.mode' = '{t.cdc}'")
        if getattr(t, "commits_retained", None):
            props.append(f"'hoodie.cleaner.commits.retained' = '{t.commits_retained}'")
        if getattr(t, "archives", False):
            props.append("'hoodie.keep.min.commits' = '2'")
            props.append("'hoodie.keep.max.commits' = '3'")
        if t.ordering:
            props.append(f"preCombineField = '{t.ordering.name}'")
            props.append(f"recordMergeMode = '{t.mode}'")
        if getattr(t, "log_blocks", "avro") != "avro":
            props.append(f"'hoodie.logfile.data.block.format' = '{t.log_blocks}'")
        # always said: hoodie's default (9) is not the version of every seed's table
        props.append(f"'hoodie.write.table.version' = '{getattr(t, 'version', 6)}'")
        if getattr(t, "upsert_prop", False):
            props.append(f"'{INTO_OP}' = 'upsert'")
        if getattr(t, "write_op_prop", False):
            props.append(f"'{WRITE_OP}' = '{'insert' if t.upsert_prop else 'upsert'}'")  # ignored (rule 3)
        part = f" PARTITIONED BY ({ident(t.partition.name)})" if t.partition else ""
        return [f"CREATE TABLE {t.name} ({cols}) USING hudi{part} TBLPROPERTIES ({', '.join(props)})"]

    def apply(self, o):
        pass

    def shrinks(self):
        return []


class Source:
    """A MERGE or INSERT source: columns (name, type), rows (tuples), and a shape that says how
    it is written: values, derived (column-alias list), mem, parquet, hudi, view, subquery, join."""

    def __init__(self, name, shape, cols, rows, keycols, filt=None):
        self.name, self.shape, self.cols, self.rows = name, shape, cols, rows
        self.keycols, self.filt = keycols, filt
        self.typed = False  # VALUES written as CAST(literal AS type) (fuzz.py --spark)
        self.resets = (WRITE_OP, DUP_POLICY)  # the session options a Hudi source's INSERT resets

    def with_rows(self, rows):
        s = Source(self.name, self.shape, self.cols, rows, self.keycols, self.filt)
        s.typed, s.resets = self.typed, self.resets
        return s

    def _ddl(self, name, cols, ident, dialect, kind):
        if getattr(ident, "mode", "quoted") == "mixed":
            ident = lambda n: n  # noqa: E731 - declared as spelled, unquoted
        body = ", ".join(f"{ident(n)} {TYPES[t][0 if dialect == 'hoodie' else 1]}" for n, t in cols)
        if dialect == "duck":
            return f"CREATE TABLE {name} ({body})"
        if kind == "parquet":
            return f"CREATE TABLE {name} ({body}) USING parquet"
        if kind == "hudi":
            return f"CREATE TABLE {name} ({body}) USING hudi TBLPROPERTIES (primaryKey = '{','.join(self.keycols)}')"
        # an in-memory table lives in datafusion.public (in the warehouse, CREATE TABLE without
        # USING is a Hudi table); bare names find it there
        return f"CREATE TABLE datafusion.public.{name} ({body})"

    def _table(self, name, cols, rows, ident, dialect, kind):
        out = [self._ddl(name, cols, ident, dialect, kind)]
        if kind == "hudi" and dialect == "hoodie":
            # a plain `insert` (its keys are unique): the session options INSERTs set are reset
            out += [f"RESET {k}" for k in INSERT_OPTIONS if k in self.resets]
        if rows:
            out.append(f"INSERT INTO {name} VALUES {values_sql(rows)}")
        return out

    def setup(self, ident, dialect):
        sh, n = self.shape, self.name
        if sh in ("values",):
            return []
        if sh == "derived":
            inner = [(f"c{i}", t) for i, (_, t) in enumerate(self.cols)]
            return self._table(n, inner, self.rows, ident, dialect, "mem")
        if sh in ("mem", "parquet", "hudi"):
            return self._table(n, self.cols, self.rows, ident, dialect, sh)
        if sh in ("view", "subquery"):
            out = self._table(n + "_b", self.cols, self.rows, ident, dialect, "parquet" if sh == "view" else "mem")
            if sh == "view":
                w = f" WHERE {render(self.filt, ident)}" if self.filt else ""
                out.append(f"CREATE VIEW {n} AS SELECT * FROM {n}_b{w}")
            return out
        if sh == "join":
            ka, kb = self._join_split()
            return (self._table(n + "_a", ka, [self._proj(r, ka) for r in self.rows], ident, dialect, "mem")
                    + self._table(n + "_b", kb, [self._proj(r, kb) for r in self.rows], ident, dialect, "parquet"))
        raise ValueError(sh)

    def _join_split(self):
        keys = [c for c in self.cols if c[0] in self.keycols]
        rest = [c for c in self.cols if c[0] not in self.keycols]
        half = len(rest) // 2
        return keys + rest[:half], keys + rest[half:]

    def _proj(self, row, cols):
        names = [c[0] for c in self.cols]
        return tuple(row[names.index(c[0])] for c in cols)

    def ref(self, ident, alias):
        sh, n = self.shape, self.name
        names = ", ".join(ident(c) for c, _ in self.cols)
        if sh == "values":
            if self.typed:
                rows = ", ".join("(" + ", ".join(f"CAST({lit(v)} AS {TYPES[t][0]})" for v, (_, t) in zip(r, self.cols)) + ")"
                                 for r in self.rows)
                return f"(VALUES {rows}) AS {alias}({names})"
            return f"(VALUES {values_sql(self.rows)}) AS {alias}({names})"
        if sh == "derived":
            inner = ", ".join(ident(f"c{i}") for i in range(len(self.cols)))
            return f"(SELECT {inner} FROM {n}) AS {alias}({names})"
        if sh in ("mem", "parquet", "hudi", "view"):
            return f"{n} {alias}" if len(alias) % 2 else f"{n} AS {alias}"
        if sh == "subquery":
            inner = ident
            if getattr(ident, "mode", "quoted") == "mixed" and "plain-column-exact-case" in AVOID:
                inner = Lower()  # F8: never spell a plain table's column exactly as the target's
            w = f" WHERE {render(self.filt, inner)}" if self.filt else ""
            return f"(SELECT {', '.join(inner(c) for c, _ in self.cols)} FROM {n}_b{w}) {alias}"
        if sh == "join":
            ka, kb = self._join_split()
            cols = [f"a.{ident(c)}" for c, _ in ka] + [f"b.{ident(c)}" for c, _ in kb if c not in self.keycols]
            on = " AND ".join(f"a.{ident(k)} = b.{ident(k)}" for k in self.keycols)
            return f"(SELECT {', '.join(cols)} FROM {n}_a a JOIN {n}_b b ON {on}) AS {alias}"
        raise ValueError(sh)


class _NoOrdering:
    """Stands in for the oracle in a MERGE probe: every update wins (no ordering test)."""

    def win(self, new, old):
        return "TRUE"


class Lower:
    """Mixed-mode identifiers, all in lower case (the known-bug switch plain-column-exact-case)."""
    mode = "mixed"

    def __call__(self, name):
        return name.lower()


class Insert:
    """INSERT INTO: VALUES rows (dicts) in positional or column-list form, an optional static
    partition, or a SELECT from a source. `session`: the session options it runs with
    ({WRITE_OP: 'upsert', COMBINE: 'true', ...}; the others are reset; a plain string is
    {WRITE_OP: it}); its operation follows from them, the table and the duplicate policy
    (`insert_operation`)."""
    kind = "insert"

    def __init__(self, t, session, policy="none", rows=None, cols=None, static=False, source=None, select=None):
        self.t, self.policy = t, policy
        self.session = {WRITE_OP: session} if isinstance(session, str) else dict(session or {})
        self.op = insert_operation(t, self.session, policy)
        # pre-combining: an upsert always, insert and bulk_insert with hoodie.combine.before.insert
        self.combine = self.session.get(COMBINE) == "true"
        self.rows, self.cols, self.static = rows, cols, static
        self.source, self.select = source, select  # select: [(target col, expr template over source)]

    def _with(self, **kw):
        d = dict(rows=self.rows, cols=self.cols, static=self.static, source=self.source, select=self.select)
        d.update(kw)
        return Insert(self.t, self.session, self.policy, **d)

    def target_cols(self):
        if self.source is not None:
            return [c for c, _ in self.select]
        if self.cols is not None:
            return self.cols
        return [c.name for c in self.t.columns if not (self.static and c.role == "partition")]

    def used(self):
        """The session options the sequence's INSERTs use, in a fixed order."""
        used = set(getattr(self.t, "session_options", ())) | {WRITE_OP, DUP_POLICY} | set(self.session)
        return [k for k in INSERT_OPTIONS if k in used]

    def options(self):
        """SET or RESET of every session option the sequence's INSERTs use."""
        vals = dict(self.session)
        if self.policy != "none":
            vals[DUP_POLICY] = self.policy
        return [f"SET {k} = '{vals[k]}'" if k in vals else f"RESET {k}" for k in self.used()]

    def hoodie(self, ident):
        t = self.t
        out = self.options()
        if self.source is not None:  # first: a Hudi source's own INSERT resets the options
            out = self.source.setup(ident, "hoodie") + out
        head = f"INSERT INTO {t.name}"
        if self.static:
            p = t.partition.name
            head += f" PARTITION ({ident(p)} = {lit(self.rows[0][p])})"
        if self.source is not None:
            clist = f" ({', '.join(ident(c) for c, _ in self.select)})" if self.cols is not None else ""
            exprs = ", ".join(render(e, ident) for _, e in self.select)
            out.append(f"{head}{clist} SELECT {exprs} FROM {self.source.ref(ident, 's')}")
            return out + self._reset()
        cols = self.target_cols()
        clist = f" ({', '.join(ident(c) for c in cols)})" if self.cols is not None else ""
        out.append(f"{head}{clist} VALUES {values_sql([[r.get(c) for c in cols] for r in self.rows])}")
        return out + self._reset()

    def _reset(self):
        """--spark: the INSERT's options are reset after it, as Hudi on Spark applies a session's
        `insert` operation and `drop` policy to later UPDATEs and MERGEs (README, "Spark")."""
        if model.spark_avoids("spark-session-options-leak"):
            return [f"RESET {k}" for k in self.used()]
        return []

    def apply(self, o):
        t = self.t
        typed = ", ".join(f"{q(c.name)} {TYPES[c.typ][1]}" for c in t.columns)
        o.x(f"CREATE OR REPLACE TEMP TABLE inc (rn INTEGER, {typed})")
        if self.source is not None:
            for s in self.source.setup(quoted, "duck"):
                o.x(s)
            cl = ", ".join(q(c) for c, _ in self.select)
            ex = ", ".join(render(e, quoted) for _, e in self.select)
            o.x(f"INSERT INTO inc (rn, {cl}) SELECT row_number() OVER (), {ex} FROM {self.source.ref(quoted, 's')}")
        else:
            cols = [c.name for c in t.columns]
            for i, r in enumerate(self.rows):
                o.x(f"INSERT INTO inc (rn, {', '.join(q(c) for c in cols)}) VALUES ({i}, {', '.join(lit(r.get(c)) for c in cols)})")
        if o.x("SELECT count(*) FROM inc WHERE " + " OR ".join(f"{q(k.name)} IS NULL" for k in t.keys)).fetchone()[0]:
            raise Invalid("NULL record key")
        if self.op == "upsert" and t.event_time and \
                o.x(f"SELECT count(*) FROM inc WHERE {q(t.ordering.name)} IS NULL").fetchone()[0]:
            raise Invalid("an upsert under event-time ordering refuses a NULL ordering value (rule 3a)")
        ids = ", ".join(q(c.name) for c in t.identity)
        # pre-combine (rule 4): one row per record (key + partition path, the key under a global
        # index); under event time the greatest ordering value, NULL least, a tie the later row;
        # under commit time or without an ordering field the later row
        if t.ordering is not None and t.event_time:
            order = f"{q(t.ordering.name)} DESC NULLS LAST, rn DESC"
        else:
            order = "rn DESC"
        # an upsert pre-combines, insert and bulk_insert only with hoodie.combine.before.insert;
        # without a primary key nothing is
        dedup = t.pk and (self.op == "upsert" or self.combine)
        if dedup:
            o.x(f"CREATE OR REPLACE TEMP TABLE dd AS SELECT * EXCLUDE (r) FROM "
                f"(SELECT *, row_number() OVER (PARTITION BY {ids} ORDER BY {order}) AS r FROM inc) WHERE r = 1")
        else:
            o.x("CREATE OR REPLACE TEMP TABLE dd AS SELECT * FROM inc")
        names = ", ".join(q(c.name) for c in t.columns)
        m = o.same_identity(t.name, "_in")
        if self.op == "upsert":
            if t.pk and o.x(f"SELECT count(*) FROM dd _in WHERE (SELECT count(*) FROM {t.name} WHERE {m}) > 1").fetchone()[0]:
                raise Invalid("an upsert of a record held twice")
            cond = "TRUE"  # commit-time ordering: the incoming record always wins
            if t.event_time:
                ts = q(t.ordering.name)
                win = o.win('_in.' + ts, t.name + '.' + ts)
                if t.global_index:  # a record that changes partition moves: no ordering test
                    p = q(t.partition.name)
                    win = f"({t.name}.{p} IS DISTINCT FROM _in.{p} OR {win})"
                cond = (f"NOT EXISTS (SELECT 1 FROM {t.name} WHERE {m})"
                        f" OR EXISTS (SELECT 1 FROM {t.name} WHERE {m} AND {win})")
            o.x(f"CREATE OR REPLACE TEMP TABLE w AS SELECT * FROM dd _in WHERE {cond}")
            o.x(f"DELETE FROM {t.name} WHERE EXISTS (SELECT 1 FROM w _in WHERE {m})")
            o.x(f"INSERT INTO {t.name} ({names}) SELECT {names} FROM w")
        elif self.policy == "drop":
            o.x(f"INSERT INTO {t.name} ({names}) SELECT {names} FROM dd _in WHERE NOT EXISTS (SELECT 1 FROM {t.name} WHERE {m})")
        else:
            o.x(f"INSERT INTO {t.name} ({names}) SELECT {names} FROM dd")

    def shrinks(self):
        if self.source is not None:
            rows = self.source.rows
            return [self._with(source=self.source.with_rows(rows[:i] + rows[i + 1:]))
                    for i in range(len(rows)) if len(rows) > 1]
        return [self._with(rows=self.rows[:i] + self.rows[i + 1:]) for i in range(len(self.rows)) if len(self.rows) > 1]


def touches_dups(o, where):
    """An UPDATE or DELETE whose WHERE takes a record held twice is outside the model."""
    if o.has_dups():
        w = render(where, quoted) if where else "TRUE"
        if o.x(f"SELECT count(*) FROM {o.t.name} WHERE ({w}) AND {o.held_twice(o.t.name)}").fetchone()[0]:
            raise Invalid("a change of a record held twice")


class Update:
    kind = "update"

    def __init__(self, t, assigns, where):
        self.t, self.assigns, self.where = t, assigns, where

    def hoodie(self, ident):
        sets = ", ".join(f"{ident(c)} = {render(e, ident)}" for c, e in self.assigns)
        w = f" WHERE {render(self.where, ident)}" if self.where else ""
        return [f"UPDATE {self.t.name} SET {sets}{w}"]

    def apply(self, o):
        t = self.t
        touches_dups(o, self.where)
        win = None
        if t.event_time:
            for c, e in self.assigns:
                if c == t.ordering.name:
                    win = o.win(render(e, quoted), q(c))
        sets = ", ".join(f"{q(c)} = " + (f"CASE WHEN {win} THEN {render(e, quoted)} ELSE {q(c)} END" if win else render(e, quoted))
                         for c, e in self.assigns)
        w = f" WHERE {render(self.where, quoted)}" if self.where else ""
        o.x(f"UPDATE {t.name} SET {sets}{w}")

    def shrinks(self):
        out = []
        if self.where:
            out.append(Update(self.t, self.assigns, None))
        if len(self.assigns) > 1:
            out += [Update(self.t, self.assigns[:i] + self.assigns[i + 1:], self.where) for i in range(len(self.assigns))
                    if not (self.t.event_time and self.assigns[i][0] == self.t.ordering.name and False)]
        return out


class Delete:
    kind = "delete"

    def __init__(self, t, where):
        self.t, self.where = t, where

    def hoodie(self, ident):
        w = f" WHERE {render(self.where, ident)}" if self.where else ""
        return [f"DELETE FROM {self.t.name}{w}"]

    def apply(self, o):
        touches_dups(o, self.where)
        w = f" WHERE {render(self.where, quoted)}" if self.where else ""
        o.x(f"DELETE FROM {self.t.name}{w}")

    def shrinks(self):
        return [Delete(self.t, None)] if self.where else []


class Compact:
    """A compaction of a merge-on-read table (RUN COMPACTION, the run_compaction procedure, or
    SCHEDULE COMPACTION, which the next write runs first): it changes no row."""
    kind = "compact"

    FORMS = ["RUN COMPACTION ON {t}", "CALL run_compaction(op => 'run', table => '{t}')",
             "SCHEDULE COMPACTION ON {t}"]

    def __init__(self, t, form):
        self.t, self.form = t, form

    def hoodie(self, ident):
        return [self.FORMS[self.form].format(t=self.t.name)]

    def apply(self, o):
        pass

    def shrinks(self):
        return []


class Merge:
    """MERGE INTO. clauses: dicts with kind (matched | not_matched | by_source), cond (template
    or None), action (update | update_star | delete | insert | insert_star), assigns
    [(target col, template)] for update and insert."""
    kind = "merge"

    def __init__(self, t, source, talias, keymap, on_partition, on_extra, clauses, on_tpl=None, on_omit=()):
        self.t, self.source, self.talias = t, source, talias
        self.keymap, self.on_partition, self.on_extra, self.clauses = keymap, on_partition, on_extra, clauses
        self.on_tpl = on_tpl  # a table without a primary key: the ON as written, for both engines
        # key columns hoodie's ON leaves out: Hudi takes them from the source's column of that
        # name (hoodie.spark.sql.optimized.writes.enable, false by default)
        self.on_omit = tuple(on_omit)

    def hudi_order(self):
        """The clauses in the order Hudi tries them (rule 9): a matched row meets the UPDATE
        clauses first, in the order written, and the DELETE clause only after them; the other
        kinds as written."""
        md = lambda c: c["kind"] == "matched" and c["action"] == "delete"  # noqa: E731
        return [c for c in self.clauses if not md(c)] + [c for c in self.clauses if md(c)]

    def validate(self):
        """Raises Invalid for a MERGE hoodie (and Hudi) refuse (rule 9): two matched DELETE
        clauses; on a merge-on-read table (version 6, or a global index) a matched UPDATE clause that does not
        assign every key column; with a matched UPDATE clause, a record key column that does not resolve in the
        source; with a clause other than BY SOURCE, an ordering field that does not; a key column
        the ON leaves out that the source does not name. A field resolves as a source column of
        its name (any case) or as a matched UPDATE clause's assignment of a plain source column."""
        t = self.t
        if not t.pk:
            return
        cl = self.clauses
        if sum(1 for c in cl if c["kind"] == "matched" and c["action"] == "delete") > 1:
            raise Invalid("two WHEN MATCHED ... DELETE clauses")
        names = {n.lower() for n, _ in self.source.cols}
        ups = [c for c in cl if c["kind"] == "matched" and c["action"] in ("update", "update_star")]
        plain = {x.lower() for c in ups if c["action"] == "update" for x, e in c["assigns"]
                 if re.fullmatch(r"\$s\.@\w+", e)}
        resolves = lambda f: f.lower() in names or f.lower() in plain  # noqa: E731
        if ups and not all(resolves(k.name) for k in t.keys):
            raise Invalid("Failed to resolve primary key")
        # versions 8 and 9 take partial updates there instead (without a global index)
        partial = getattr(t, "version", 6) >= 8 and not t.global_index
        if t.ttype == "mor" and not partial and any(c["action"] == "update" and not all(
                any(x.lower() == k.name.lower() for x, _ in c["assigns"]) for k in t.keys) for c in ups):
            raise Invalid("No matching assignment found for target table record key field (merge-on-read, version 6)")
        if t.ordering is not None and any(c["kind"] != "by_source" for c in cl) and not resolves(t.ordering.name):
            raise Invalid("Failed to resolve ordering fields")
        if any(k.lower() not in names for k in self.on_omit):
            raise Invalid("a key column neither the ON nor the source names")

    def _ta(self):
        return self.talias or self.t.name

    def _clause(self, c, ident, duck, o=None):
        ta = self._ta()
        r = lambda e: render(e, ident, "s", ta)
        kind = {"matched": "WHEN MATCHED", "not_matched": "WHEN NOT MATCHED", "by_source": "WHEN NOT MATCHED BY SOURCE"}[c["kind"]]
        if c["kind"] == "not_matched" and c.get("by_target"):
            kind = "WHEN NOT MATCHED BY TARGET"
        cond = f" AND {r(c['cond'])}" if c["cond"] else ""
        a = c["action"]
        t = self.t
        if a == "delete":
            return f"{kind}{cond} THEN DELETE"
        if a in ("update_star", "insert_star") and not duck:
            return f"{kind}{cond} THEN {'UPDATE SET *' if a == 'update_star' else 'INSERT *'}"
        assigns = c.get("assigns")
        if a == "update_star":
            assigns = [(col.name, f"$s.@{col.name}") for col in t.assignable]
        if a == "insert_star":
            assigns = [(col.name, f"$s.@{col.name}") for col in t.columns]
        if a in ("insert", "insert_star"):
            return (f"{kind}{cond} THEN INSERT ({', '.join(ident(x) for x, _ in assigns)}) "
                    f"VALUES ({', '.join(r(e) for _, e in assigns)})")
        win = None
        if duck and t.event_time:
            for x, e in assigns:
                if x == t.ordering.name:
                    win = o.win(r(e), f"{ta}.{q(x)}")
        sets = ", ".join(f"{ident(x)} = " + (f"CASE WHEN {win} THEN {r(e)} ELSE {ta}.{q(x)} END" if win else r(e))
                         for x, e in assigns)
        return f"{kind}{cond} THEN UPDATE SET {sets}"

    def _on(self, ident, duck):
        ta = self._ta()
        if not self.t.pk:
            return render(self.on_tpl, ident, "s", ta)
        parts = [f"{ta}.{ident(k)} = s.{ident(sk)}" for k, sk in self.keymap if duck or k not in self.on_omit]
        if self.t.partition is not None and self.t.global_index:
            pass  # a global index matches the key in any partition
        elif self.t.partition is not None and duck:
            # the index: the key in the partition the source row names, a NULL partition value
            # naming __HIVE_DEFAULT_PARTITION__ (null-safe)
            p = self.t.partition.name
            parts.append(f"{ta}.{ident(p)} IS NOT DISTINCT FROM s.{ident(p)}")
        elif self.t.partition is not None and self.on_partition:
            p = self.t.partition.name
            parts.append(f"{ta}.{ident(p)} = s.{ident(p)}")
        if self.on_extra and not duck:
            parts.append(render(self.on_extra, ident, "s", ta))
        return " AND ".join(parts)

    def _text(self, ident, duck, o=None):
        alias = f" AS {self.talias}" if self.talias else ""
        live, done = [], set()
        for c in (self.hudi_order() if duck else self.clauses):
            if duck and c["kind"] in done:
                continue  # after an unconditional clause of its kind: never taken (DuckDB refuses it)
            live.append(c)
            if not c["cond"]:
                done.add(c["kind"])
        clauses = "\n  ".join(self._clause(c, ident, duck, o) for c in live)
        return (f"MERGE INTO {self.t.name}{alias} USING {self.source.ref(ident, 's')} ON {self._on(ident, duck)}\n  {clauses}")

    def hoodie(self, ident):
        return self.source.setup(ident, "hoodie") + [self._text(ident, False)]

    def apply(self, o):
        self.validate()
        for s in self.source.setup(quoted, "duck"):
            o.x(s)
        dups = set()
        if self.t.pk and o.has_dups():
            ta = self._ta()
            if o.x(f"SELECT count(*) FROM {self.t.name} AS {ta}, {self.source.ref(quoted, 's')} "
                   f"WHERE {self._on(quoted, True)} AND {o.held_twice(ta)}").fetchone()[0]:
                raise Invalid("a MERGE source row for a record held twice")
            ids = ", ".join(q(c.name) for c in self.t.identity)
            dups = set(o.x(f"SELECT {ids} FROM {self.t.name} GROUP BY ALL HAVING count(*) > 1").fetchall())
        if self.t.pk and self.t.ordering is not None and not getattr(self, "precombined", False):
            m = self._precombined(o)
            if m is not None:  # two source rows for one record: the MERGE of the change set's winners
                return m.apply(o)
        ids = ", ".join(q(c.name) for c in self.t.identity)
        if not self.t.pk:
            # any ON: a target row matched by two source rows is not modelled (its change set
            # would be pre-combined in an undefined order)
            ta = self._ta()
            n = o.x(f"SELECT count(*) FROM (SELECT {ta}.rowid FROM {self.t.name} AS {ta} JOIN "
                    f"{self.source.ref(quoted, 's')} ON {self._on(quoted, True)} GROUP BY 1 HAVING count(*) > 1)").fetchone()[0]
            if n:
                raise Invalid("a target row matched by two source rows")
        acts = o.x(self._text(quoted, True, o) + f"\nRETURNING merge_action, {ids}").fetchall()
        if any(tuple(a[1:]) in dups for a in acts):
            raise Invalid("a WHEN NOT MATCHED BY SOURCE clause changes a record held twice")
        if "merge-delete-insert-same-record" in AVOID and self.t.pk:
            ins = {a[1:] for a in acts if a[0] == "INSERT"}
            if any(a[1:] in ins for a in acts if a[0] != "INSERT"):
                raise Invalid("one MERGE deletes or updates a record and inserts it again")

    def _precombined(self, o):
        """Source rows for one record (key and partition path, the key alone under a global index)
        are pre-combined in the change set: of the rows that a clause takes, the one whose change
        has the greatest ordering value wins (sql-reference.md, MERGE INTO / What is written).
        Each such row is probed alone (a MERGE without BY SOURCE clauses into a copy of the
        target, ordering test off) for its action and ordering value. Returns a Merge over the
        winning rows (the others as they are), or None if no record has two source rows. Two
        acting rows with a DELETE, or with equal or NULL ordering values, are not modelled."""
        t = self.t
        cur = o.x(f"SELECT * FROM {self.source.ref(quoted, 's')}")
        names = [d[0] for d in cur.description]
        types = dict(self.source.cols)
        cols = [(n, types[n]) for n in names]
        # DuckDB may type a VALUES column by its literals (1e10 as a DECIMAL): back to the declared types
        conv = {"DOUBLE": float, "DECIMAL": lambda v: decimal.Decimal(v).quantize(decimal.Decimal("0.01"))}
        rows = [tuple(v if v is None or c[1] not in conv else conv[c[1]](v) for v, c in zip(r, cols)) for r in cur.fetchall()]
        idc = [names.index(sk) for _, sk in self.keymap]
        if t.partition is not None and not t.global_index:
            idc.append(names.index(t.partition.name))
        groups = {}
        for r in rows:
            groups.setdefault(tuple(r[i] for i in idc), []).append(r)
        if all(len(g) == 1 for g in groups.values()):
            return None
        probe_clauses = [c for c in self.clauses if c["kind"] != "by_source"]
        target_rows = o.x(f"SELECT * FROM {t.name}").arrow()  # noqa: F841 - read by pdb's SQL
        keep = []
        for gi, g in enumerate(groups.values()):
            if len(g) == 1:
                keep += g
                continue
            acting = []
            for ri, r in enumerate(g):
                if not probe_clauses:
                    break
                src = Source(f"{self.source.name}_p{gi}_{ri}", "mem", cols, [r], [sk for _, sk in self.keymap])
                # in a connection of its own, outside the generator's transaction (in which
                # DuckDB's MERGE into a copy of the target saw the previous probe's change)
                pdb = duckdb.connect()  # a fresh one per probe: DuckDB's MERGE into a re-created
                pdb.execute(f"CREATE TABLE {t.name} AS SELECT * FROM target_rows")  # copy saw the last probe's change
                for st in src.setup(quoted, "duck"):
                    pdb.execute(st)
                pm = Merge(t, src, self.talias, self.keymap, self.on_partition, None, probe_clauses)
                ids = ", ".join(q(c.name) for c in t.identity)
                res = pdb.execute(pm._text(quoted, True, _NoOrdering()) + f"\nRETURNING merge_action, {q(t.ordering.name)}, {ids}").fetchall()
                if res:
                    acting.append((r, res[0][0], res[0][1], tuple(res[0][2:])))
            if not acting:
                keep.append(g[0])
                continue
            # the change set is pre-combined per record of the change: two inserts into
            # different partitions are two records
            byrec = {}
            for a in acting:
                byrec.setdefault(a[3], []).append(a)
            for sub in byrec.values():
                tss = [a[2] for a in sub]
                if len(sub) > 1 and (any(a[1] == "DELETE" for a in sub) or None in tss or len(set(tss)) != len(tss)):
                    raise Invalid("two source rows for one record that the change set cannot order")
                keep.append(max(sub, key=lambda a: a[2])[0] if len(sub) > 1 else sub[0][0])
        src = Source(self.source.name + "_pc", "mem", cols, keep, [sk for _, sk in self.keymap])
        m = self._with(source=src)
        m.precombined = True
        return m

    def shrinks(self):
        out = []
        rows = self.source.rows
        if len(self.clauses) > 1:
            out += [self._with(clauses=self.clauses[:i] + self.clauses[i + 1:]) for i in range(len(self.clauses))]
        for i, c in enumerate(self.clauses):
            if c["cond"]:
                out.append(self._with(clauses=self.clauses[:i] + [dict(c, cond=None)] + self.clauses[i + 1:]))
        if len(rows) > 1:
            out += [self._with(source=self.source.with_rows(rows[:i] + rows[i + 1:])) for i in range(len(rows))]
        if self.on_extra:
            out.append(self._with(on_extra=None))
        return out

    def _with(self, **kw):
        d = dict(source=self.source, clauses=self.clauses, on_extra=self.on_extra)
        d.update(kw)
        return Merge(self.t, d["source"], self.talias, self.keymap, self.on_partition, d["on_extra"], d["clauses"], self.on_tpl,
                     self.on_omit)
