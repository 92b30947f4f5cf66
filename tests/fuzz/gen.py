"""The generator: a seed gives a table and a sequence of statements that are valid for hoodie.
Each statement is applied to the oracle as it is drawn (the generator reads the oracle's rows to
pick keys that exist); a statement the oracle finds outside the model (`Invalid`) is drawn again."""
import random

from model import Col, Table, lit, rand_value, key_value
from oracle import Invalid, Oracle
from stmts import COMBINE, INTO_OP, LEGACY_MODE, WRITE_OP, DUP_POLICY, insert_operation
from stmts import Compact, Create, Delete, Insert, Merge, Source, Update

from model import AVOID  # noqa: F401 - the known-bug switches
import model


def expr(rng, col, operands, allow_null=True):
    """A template of type col.typ: a literal, NULL, an operand or a function of one.
    operands: templates of columns of the same type ("@Cnt", "$s.@Cnt", ...)."""
    r = rng.random()
    if allow_null and r < 0.12:
        return "NULL"
    if not operands or r < 0.35:
        return lit(rand_value(rng, col, null_p=0.0))
    x = rng.choice(operands)
    if rng.random() < 0.5:
        return x
    t = col.typ
    if t in ("INT", "BIGINT"):
        return rng.choice([f"{x} + 1", f"{x} - 1", f"COALESCE({x}, 0)", f"{x} * 2"])
    if t == "DOUBLE":
        return rng.choice([f"{x} * 2", f"{x} + 0.5", f"COALESCE({x}, -1.5)"])
    if t == "DECIMAL":
        return rng.choice([f"{x} + CAST('1.50' AS DECIMAL(10,2))", f"COALESCE({x}, CAST('0.01' AS DECIMAL(10,2)))"])
    if t == "STRING":
        return rng.choice([f"{x} || 'x'", f"UPPER({x})", f"COALESCE({x}, 'none')", f"CASE WHEN {x} IS NULL THEN 'was null' ELSE {x} END"])
    if t == "BOOLEAN":
        return rng.choice([f"NOT {x}", f"COALESCE({x}, FALSE)", f"{x} IS NULL"])
    if t == "DATE":
        return rng.choice([f"COALESCE({x}, DATE '2030-01-01')", f"CASE WHEN {x} IS NULL THEN NULL ELSE DATE '2029-12-31' END"])
    return x


def pred(rng, cols, prefix="", depth=0):
    """A boolean template over columns (prefix '' for UPDATE/DELETE, '$s.' or '$t.' in MERGE)."""
    r = rng.random()
    if depth < 1 and r < 0.25:
        a, b = pred(rng, cols, prefix, depth + 1), pred(rng, cols, prefix, depth + 1)
        return f"({a} {rng.choice(['AND', 'OR'])} {b})"
    if depth < 1 and r < 0.3:
        return f"NOT ({pred(rng, cols, prefix, depth + 1)})"
    c = rng.choice(cols)
    x = f"{prefix}@{c.name}"
    if rng.random() < 0.2:
        return f"{x} IS {rng.choice(['', 'NOT '])}NULL"
    v = rand_value(rng, c, null_p=0.0)
    if c.typ == "BOOLEAN":
        return rng.choice([x, f"NOT {x}", f"{x} = {lit(v)}"])
    if rng.random() < 0.25:
        vs = sorted({lit(rand_value(rng, c, null_p=0.0)) for _ in range(3)})
        return f"{x} IN ({', '.join(vs)})"
    return f"{x} {rng.choice(['=', '<>', '<', '<=', '>', '>='])} {lit(v)}"


class Gen:
    def __init__(self, seed, n_statements, plant=None, force=None):
        self.seed = seed
        self.rng = random.Random(seed)
        self.t = Table(self.rng, f"t{seed}", force)
        self.o = Oracle(self.t, plant)
        self.t.session_options = {WRITE_OP, DUP_POLICY}  # the session options INSERTs set or reset
        self.n = n_statements
        self.k = 0
        # --spark on merge-on-read tables: the records the sequence deleted, never written again
        # (README, "Spark": Hudi 1.2.0 loses or resurrects records written after a logged delete)
        self.track_deleted = self.t.ttype == "mor" and self.t.pk and model.spark_avoids("spark-mor-delete-reinsert")
        self.deleted = set()

    def sequence(self):
        units = [Create(self.t)]
        kinds = ["upsert"] * 5 + ["insert"] * 2 + ["update"] * 4 + ["delete"] * 2 + ["merge"] * 6
        if self.t.ttype == "mor":
            kinds += ["compact"]
        while len(units) <= self.n:
            for _ in range(30):
                kind = self.rng.choice(kinds)
                u = getattr(self, "g_" + kind)()
                if u is None:
                    continue
                before = self.identities() if self.track_deleted else None
                self.o.snapshot()
                try:
                    u.apply(self.o)
                    self.o.check_unique()
                except Invalid:
                    self.o.rollback()
                    continue
                self.o.commit()
                if before is not None:
                    self.deleted |= before - self.identities()
                units.append(u)
                break
            else:
                raise RuntimeError(f"seed {self.seed}: could not draw a valid statement")
        return units

    # ------------------------------------------------------------ helpers

    def identities(self):
        """The record identities the oracle holds (see Table.identity)."""
        names = ", ".join(chr(34) + c.name + chr(34) for c in self.t.identity)
        return set(self.o.x(f"SELECT {names} FROM {self.t.name}").fetchall())

    def identity_of(self, r):
        return tuple(r[c.name] for c in self.t.identity)

    def existing(self):
        """The key and partition values of the stored rows, in a fixed order: DuckDB returns
        rows in any order, and a seed must generate the same statements every run."""
        names = [c.name for c in self.t.keys + ([self.t.partition] if self.t.partition else [])]
        rows = self.o.x(f"SELECT {', '.join(chr(34) + n + chr(34) for n in names)} FROM {self.t.name}").fetchall()
        rows.sort(key=lambda r: tuple((v is None, repr(v)) for v in r))
        return [dict(zip(names, r)) for r in rows]

    def row(self, ident_from=None):
        t, rng = self.t, self.rng
        r = {c.name: rand_value(rng, c) for c in t.columns}
        if ident_from:
            ident_from = dict(ident_from)
            if t.global_index and rng.random() < 0.4:
                del ident_from[t.partition.name]  # a stored key in maybe another partition
            r.update(ident_from)
        return r

    def rows(self, n, existing_p=0.5, unique_keys=False):
        ex = self.existing()
        out, seen = [], set()
        for _ in range(n * 3):
            if len(out) >= n:
                break
            r = self.row(self.rng.choice(ex) if ex and self.rng.random() < existing_p else None)
            k = tuple(r[c.name] for c in self.t.keys)
            if unique_keys and k in seen:
                continue
            if self.track_deleted and self.identity_of(r) in self.deleted:
                continue
            if self.t.partition is not None and "precombine-across-partitions" in AVOID:
                p = self.t.partition.name
                same = [x for x in out if tuple(x[c.name] for c in self.t.keys) == k]
                if same:
                    r[p] = same[0][p]
            seen.add(k)
            out.append(r)
        return self._nonnull_rows(out)

    def _ordering_nonnull(self, c, e):
        """--spark: an ordering value is never NULL (README, "Spark": Hudi 1.2.0 compares a NULL
        ordering value as 0, an UPDATE of one fails on copy-on-write tables, and so does a MERGE
        DELETE of a record that holds one)."""
        if c.role == "ordering" and model.spark_avoids("spark-null-ordering"):
            return f"COALESCE({e}, {lit(rand_value(self.rng, c, null_p=0.0))})"
        return e

    def _nonnull_rows(self, rows):
        t = self.t
        if t.ordering is not None and model.spark_avoids("spark-null-ordering"):
            for r in rows:
                if r[t.ordering.name] is None:
                    r[t.ordering.name] = rand_value(self.rng, t.ordering, null_p=0.0)
        return rows

    def name(self):
        self.k += 1
        return f"{self.t.name}_s{self.k}"

    # ------------------------------------------------------------ statements

    def session_for(self, want, policy):
        """Session options under which an INSERT runs `want` (stmts.insert_operation): the
        operation set by `hoodie.datasource.write.operation` or
        `hoodie.spark.sql.insert.into.operation`, or left to the table (its upsert property, else
        `insert`); an `insert` with policy `drop` sometimes asks for an upsert (which then
        inserts), or sets the legacy `hoodie.sql.insert.mode = 'upsert'` (which no longer
        upserts). Sometimes with `hoodie.combine.before.insert` (rule 4)."""
        t, rng = self.t, self.rng
        r = rng.random()
        prop = "upsert" if t.upsert_prop else "insert"
        if want == "upsert" and not t.pk:
            want = "upsert"  # into a table without a primary key: inserts (rule 3)
        elif want == "insert" and policy == "drop" and rng.random() < 0.3:
            want = "upsert"  # an upsert with a duplicate policy inserts (rule 3)
        if want == prop and r < 0.4:
            ses = {}
        elif r < 0.7:
            ses = {WRITE_OP: want}
            if rng.random() < 0.2:  # the session's write.operation comes first
                ses[INTO_OP] = rng.choice(["insert", "upsert"])
        else:
            ses = {INTO_OP: want}
        if want == "insert" and WRITE_OP not in ses and INTO_OP not in ses and rng.random() < 0.2:
            ses[LEGACY_MODE] = "upsert"
        if t.pk and rng.random() < 0.2:
            ses[COMBINE] = "true"
            if (t.ordering is None and policy == "none" and insert_operation(t, ses, policy) != "upsert"
                    and "combine-no-ordering" in AVOID):
                del ses[COMBINE]  # F15 (README, "Known issues")
        t.session_options.update(ses)
        return ses

    def g_upsert(self):
        if not self.t.pk:  # upserts need a primary key: a bulk insert, or an upsert that inserts
            r = self.rng.random()
            return self._insert("bulk_insert" if r < 0.4 else "upsert" if r < 0.6 else "insert")
        return self._insert("upsert")

    def g_insert(self):
        return self._insert("insert")

    def _insert(self, op):
        t, rng = self.t, self.rng
        policy = "none"
        if op == "insert" and t.pk and rng.random() < 0.4:
            policy = "drop"
        ses = self.session_for(op, policy)
        eff = insert_operation(t, ses, policy)
        assert eff == (op if t.pk else "bulk_insert" if op == "bulk_insert" else "insert"), (op, ses, eff)
        combine = ses.get(COMBINE) == "true" or eff == "upsert"
        n = rng.randint(1, 6)
        if not t.pk:  # any keys: the rows are kept as they come, duplicates included
            rows = self.rows(n, existing_p=0.6)
        else:
            # an `insert` keeps duplicate keys: of stored keys only where the sequence keeps
            # them (Table.allow_dups), in the batch where they are pre-combined too
            fresh = eff == "insert" and policy == "none" and not t.allow_dups
            rows = self.rows(n, existing_p=0.0 if fresh else 0.4 if eff == "insert" and policy == "none" else 0.6,
                             unique_keys=not (combine or t.allow_dups))
            if rows and (combine or t.allow_dups) and rng.random() < 0.3:  # one key twice in the batch
                d = dict(rows[0])
                if t.ordering is not None:
                    d[t.ordering.name] = rand_value(rng, t.ordering)
                for c in t.data:
                    d[c.name] = rand_value(rng, c)
                self._nonnull_rows([d])
                rows.insert(rng.randint(0, len(rows)), d)
        if not rows:
            return None
        # Hudi 1.2: an upsert under event-time ordering fails on a NULL ordering value in its
        # input ("Precombine/ordering field 'Ts' has null value ..."), so its rows have one
        nonnull_ts = t.event_time and (eff == "upsert" or (policy == "drop" and "insert-drop-null-ordering" in AVOID)
                                       ) or (t.ordering is not None and model.spark_avoids("spark-null-ordering"))
        if nonnull_ts:
            for x in rows:
                if x[t.ordering.name] is None:
                    x[t.ordering.name] = rand_value(rng, t.ordering, null_p=0.0)
        r = rng.random()
        if r < 0.25:  # INSERT ... SELECT from a source
            return self._insert_select(ses, policy, rows, nonnull_ts)
        cols = None
        static = False
        if r < 0.5:
            must = [c.name for c in t.keys] + ([t.ordering.name] if nonnull_ts else [])
            others = [c.name for c in t.columns if c.name not in must]
            cols = must + rng.sample(others, rng.randint(0, len(others)))
            rng.shuffle(cols)
        if t.partition is not None and rng.random() < 0.15:
            p = t.partition.name
            v = rand_value(rng, t.partition, null_p=0.0)
            for x in rows:
                x[p] = v
            static = True
            if cols is not None and p in cols:
                cols.remove(p)
            if self.track_deleted:
                rows = [x for x in rows if self.identity_of(x) not in self.deleted]
                if not rows:
                    return None
        if cols is not None:
            rows = [{c: (x[c] if c in cols or (static and c == t.partition.name) else None) for c in x} for x in rows]
        return Insert(t, ses, policy, rows=rows, cols=cols, static=static)

    def _insert_select(self, ses, policy, rows, nonnull_ts=False):
        t, rng = self.t, self.rng
        # the source holds one row per key: the order of a SELECT is not defined, so ties of
        # pre-combining could go either way
        seen, uniq = set(), []
        for r in rows:
            k = tuple(r[c.name] for c in t.keys)
            if k not in seen:
                seen.add(k)
                uniq.append(r)
        cols = [(c.name, c.typ) for c in t.columns]
        rng.shuffle(cols)
        shapes = ["values", "mem", "parquet", "subquery", "derived", "view", "hudi"]
        if "insert-select-values" in AVOID:
            shapes.remove("values")
        src = Source(self.name(), rng.choice(shapes),
                     cols, [tuple(r[c] for c, _ in cols) for r in uniq], [c.name for c in t.keys])
        if src.shape in ("view", "subquery") and rng.random() < 0.5:
            src.filt = pred(rng, [Col(n, ty) for n, ty in cols if n not in src.keycols] or t.keys)
        named = rng.random() < 0.5
        sel = [(c.name, f"$s.@{c.name}") for c in t.columns]
        if named:
            rng.shuffle(sel)
            keep = [x for x in sel if x[0] in src.keycols or (nonnull_ts and x[0] == t.ordering.name)
                    or rng.random() < 0.8]
            sel = keep
        src.resets = t.session_options
        return Insert(t, ses, policy, cols=[c for c, _ in sel] if named else None, source=src, select=sel)

    def g_update(self):
        t, rng = self.t, self.rng
        cols = rng.sample(t.assignable, rng.randint(1, min(3, len(t.assignable))))
        assigns = []
        for c in cols:
            same = [f"@{x.name}" for x in t.columns if x.typ == c.typ and x.role != "key"]
            assigns.append((c.name, self._ordering_nonnull(c, expr(rng, c, same))))
        where = None
        if rng.random() < 0.85:
            where = self._where()
        return Update(t, assigns, where)

    def _where(self):
        t, rng = self.t, self.rng
        r = rng.random()
        k = t.keys[0]
        if r < 0.12:
            vs = ", ".join(sorted({lit(key_value(rng, k)) for _ in range(3)}))
            return f"@{k.name} IN (SELECT x FROM (VALUES {', '.join('(' + v + ')' for v in vs.split(', '))}) AS kk(x))"
        if r < 0.2:
            return f"@{k.name} = (SELECT max(@{k.name}) FROM {t.name})"
        if r < 0.27:
            c = rng.choice(t.data)
            return f"@{k.name} IN (SELECT @{k.name} FROM {t.name} WHERE @{c.name} IS NOT NULL)"
        return pred(rng, t.columns)

    def g_compact(self):
        return Compact(self.t, self.rng.randrange(len(Compact.FORMS)))

    def g_delete(self):
        return Delete(self.t, self._where() if self.rng.random() < 0.95 else None)

    def g_merge(self):
        t, rng = self.t, self.rng
        # source columns: the target's, some renamed (keys and data), the partition and
        # ordering columns by name, and maybe an extra flag column
        star = rng.random() < 0.5
        self.no_update_star = not t.pk  # without a key, ON may pair rows of different keys
        cols, rename = [], {}
        for c in t.columns:
            if not star and c.role == "data" and rng.random() < 0.3:
                continue  # the source lacks this column
            nm = c.name
            if not star and (c.role in ("key", "data") and rng.random() < 0.4
                             or c.role == "ordering" and t.pk and rng.random() < 0.15):
                nm = "src" + c.name[0].upper() + c.name[1:]
            rename[c.name] = nm
            cols.append((nm, c.typ))
        extra = rng.random() < 0.4
        if extra:
            cols.append(("opFlag", "INT"))
        rows = self.rows(rng.randint(1, 6), existing_p=0.6, unique_keys=True)
        if not rows:
            return None
        if t.partition is not None and "merge-null-partition" in AVOID:
            p = t.partition.name
            held = {tuple(e[c.name] for c in t.keys) for e in self.existing() if e[p] is None}
            for r in rows:
                if r[p] is None and tuple(r[c.name] for c in t.keys) in held:
                    r[p] = rand_value(rng, t.partition, null_p=0.0)
        if t.ordering is not None and rows and "merge-duplicate-source" not in AVOID and rng.random() < 0.3:
            # two source rows for one record: pre-combined by their changes' ordering values
            d = dict(rng.choice(rows))
            d[t.ordering.name] = rand_value(rng, t.ordering, null_p=0.0)
            for c in t.data:
                d[c.name] = rand_value(rng, c)
            self._nonnull_rows([d])
            rows.insert(rng.randint(0, len(rows)), d)
        if t.global_index:
            # UPDATE SET * of a record whose source row names another partition would keep the
            # record in its partition with the column changed (sql-reference.md): not modelled
            p = t.partition.name
            held = {tuple(e[c.name] for c in t.keys): e[p] for e in self.existing()}
            for r in rows:
                k = tuple(r[c.name] for c in t.keys)
                if k in held and held[k] != r[p]:
                    self.no_update_star = True
        srows = []
        for r in rows:
            vals = [r[c.name] for c in t.columns if c.name in rename]
            if extra:
                vals.append(rng.randint(0, 3))
            srows.append(tuple(vals))
        shape = rng.choice(["values", "derived", "mem", "parquet", "hudi", "view", "subquery", "join"])
        keycols = [rename[k.name] for k in t.keys]
        src = Source(self.name(), shape, cols, srows, keycols)
        src.resets = t.session_options
        # Hudi on Spark wants the source's key, partition and ordering columns of the target's
        # types exactly (README, "Spark"): VALUES are typed by their literals, so cast them
        src.typed = model.spark_avoids("spark-merge-typed-values")
        scols = [Col(n, ty) for n, ty in cols]
        if shape in ("view", "subquery") and rng.random() < 0.4:
            src.filt = pred(rng, [c for c in scols if c.name not in keycols] or scols)
        talias = rng.choice(["t", "tgt", None])
        keymap = [(k.name, rename[k.name]) for k in t.keys]
        on_extra = on_tpl = None
        if not t.pk:
            on_tpl = self._free_on(rename)
        elif rng.random() < 0.08:
            c = rng.choice([c for c in t.data if c.name in rename] or [None])
            if c is not None:
                on_extra = f"$t.@{c.name} = $s.@{rename[c.name]}"
        tcols = t.columns
        clauses = []
        for _ in range(rng.randint(1, 4)):
            # (a MERGE has one WHEN MATCHED ... DELETE clause at most, rule 9)
            one_delete = any(c["kind"] == "matched" and c["action"] == "delete" for c in clauses)
            cl = self._clause(star, rename, scols, tcols, one_delete)
            if cl:
                clauses.append(cl)
        if not clauses:
            return None
        if t.pk and not self._resolve_fields(clauses, rename):
            return None
        if (t.pk and t.ordering is None and model.spark_avoids("spark-merge-insert-only")
                and not any(c["kind"] == "matched" and c["action"] in ("update", "update_star") for c in clauses)):
            return None  # README, "Spark": Hudi runs such a MERGE as an insert, adding stored keys again
        # a key column the source names as the target does may be left out of the ON (rule 9:
        # Hudi takes it from the source), as long as one key equality stays
        on_omit = []
        if t.pk and rng.random() < 0.25:
            named = [k.name for k in t.keys if rename[k.name] == k.name]
            if named:
                on_omit = [n for n in named if rng.random() < 0.6][:len(t.keys) - 1]
        return Merge(t, src, talias, keymap, rng.random() < 0.3 and not t.global_index, on_extra, clauses, on_tpl, on_omit)

    def _resolve_fields(self, clauses, rename):
        """Rule 9: with a matched UPDATE clause every record key column must resolve in the
        source (a column of its name, or a matched UPDATE's assignment of a plain source column),
        and the ordering field in every MERGE with a clause other than BY SOURCE. A key the
        source renames (`srcId`) is assigned (`Id = s.srcId`, which changes nothing for a matched
        row) in the first matched UPDATE clause, sometimes in the others too, and on a
        merge-on-read table (of version 6, as hoodie writes) in every one; a renamed ordering
        field (`srcTs`) is assigned from the source in the first one."""
        t, rng = self.t, self.rng
        ups = [c for c in clauses if c["kind"] == "matched" and c["action"] == "update"]
        for i, c in enumerate(ups):
            # (an UPDATE clause of a version 6 merge-on-read table assigns the key, rule 9)
            keys = [k for k in t.keys if t.ttype == "mor" or rng.random() < 0.2 or (i == 0 and rename[k.name] != k.name)]
            c["assigns"] = [(k.name, f"$s.@{rename[k.name]}") for k in keys] + c["assigns"]
        o = t.ordering
        if o is not None and rename.get(o.name, o.name) != o.name:
            if not ups:
                return any(c["kind"] == "by_source" for c in clauses) and all(c["kind"] == "by_source" for c in clauses)
            c = ups[0]
            c["assigns"] = [(x, e) for x, e in c["assigns"] if x != o.name] + [(o.name, f"$s.@{rename[o.name]}")]
        return True

    def _free_on(self, rename):
        """ON of a MERGE into a table without a primary key: any condition (equalities on some
        columns, maybe a comparison)."""
        t, rng = self.t, self.rng
        parts = []
        for c in t.columns:
            if c.name not in rename or c.role == "ordering":
                continue
            p = {"key": 0.8 if c.name == "Id" else 0.5, "partition": 0.4}.get(c.role, 0.12)
            if rng.random() < p or (c.role == "partition" and model.spark_avoids("spark-pkless-merge-partition")):
                # (Hudi on Spark finds a matched row in the partition the source row names)
                parts.append(f"$t.@{c.name} = $s.@{rename[c.name]}")
        if not parts:
            parts.append(f"$t.@Id = $s.@{rename['Id']}")
        if rng.random() < 0.15:
            c = rng.choice([c for c in t.columns if c.name in rename])
            parts.append(f"$t.@{c.name} {rng.choice(['<>', '<=', '>='])} $s.@{rename[c.name]}")
        return " AND ".join(parts)

    def _clause(self, star, rename, scols, tcols, one_delete=False):
        t, rng = self.t, self.rng
        kinds = ["matched", "matched", "not_matched", "not_matched", "by_source"]
        if model.SPARK:
            kinds = kinds[:-1]  # Hudi on Spark parses WHEN NOT MATCHED BY SOURCE and ignores it (spark.py)
        kind = rng.choice(kinds)
        s_of = lambda c: [f"$s.@{sc.name}" for sc in scols if sc.typ == c.typ and sc.name != "opFlag"]
        t_of = lambda c: [f"$t.@{x.name}" for x in tcols if x.typ == c.typ]
        cond = None
        if rng.random() < 0.5:
            if kind == "by_source":
                cond = pred(rng, tcols, "$t.")
            elif kind == "matched" and rng.random() < 0.4 and not (
                    t.ttype == "mor" and model.spark_avoids("spark-mor-target-condition")):
                # (Hudi 1.2.0 on Spark reads a merge-on-read target's columns as NULL there: README)
                cond = pred(rng, tcols, "$t.")
            else:
                cond = pred(rng, scols, "$s.")
        if kind in ("matched", "by_source"):
            if rng.random() < 0.3 and not (kind == "matched" and one_delete) and not (t.ttype == "mor" and t.event_time
                                           and model.spark_avoids("spark-mor-merge-delete-ordering")):
                # (Hudi on Spark ignores a MOR MERGE delete whose source orders before the record)
                return dict(kind=kind, cond=cond, action="delete")
            if kind == "matched" and star and not self.no_update_star and rng.random() < 0.5:
                return dict(kind=kind, cond=cond, action="update_star")
            cols = rng.sample(t.assignable, rng.randint(1, min(3, len(t.assignable))))
            if t.event_time and t.ordering not in cols:
                cols.append(t.ordering)
            if t.ttype == "mor" and model.spark_avoids("spark-mor-partial-update"):
                # Hudi 1.2.0 on Spark sets the columns a MERGE update leaves out to NULL on a
                # version 6 merge-on-read table, and fails on version 9 (README, "Spark"): assign them all
                cols = cols + [c for c in t.assignable if c not in cols]
            assigns = []
            for c in cols:
                ops = [] if kind == "by_source" else s_of(c)
                if t.ttype == "cow":
                    ops = ops + t_of(c)
                assigns.append((c.name, self._ordering_nonnull(c, expr(rng, c, ops))))
            return dict(kind=kind, cond=cond, action="update", assigns=assigns)
        # not matched: insert
        if star and rng.random() < 0.5:
            return dict(kind=kind, cond=cond, action="insert_star", by_target=rng.random() < 0.2)
        cols = [c for c in t.columns if c.role in ("key",)
                or (c.role == "ordering" and (t.event_time or model.spark_avoids("spark-null-ordering")))
                or (c.role == "partition" and (rng.random() < 0.85 or (model.spark_avoids("spark-merge-insert-partition"))))
                or (c.name in rename and rng.random() < 0.7)]
        rng.shuffle(cols)
        assigns = []
        for c in cols:
            if c.role == "key":
                assigns.append((c.name, f"$s.@{rename[c.name]}"))
            elif c.name in rename and rng.random() < 0.7:
                assigns.append((c.name, f"$s.@{rename[c.name]}"))
            elif c.role == "partition" and model.spark_avoids("spark-merge-insert-partition"):
                # Hudi on Spark puts the record in the source's partition whatever the clause
                # assigns (README, "Spark")
                assigns.append((c.name, f"$s.@{c.name}"))
            elif c.role == "partition" and "non-ascii-partition" in AVOID:
                assigns.append((c.name, expr(rng, c, [f"$s.@{c.name}"])))
            else:
                assigns.append((c.name, self._ordering_nonnull(c, expr(rng, c, s_of(c)))))
        return dict(kind=kind, cond=cond, action="insert", assigns=assigns, by_target=rng.random() < 0.2)


def replay(table, units, plant=None):
    """Applies units to a fresh oracle; returns it (raises Invalid if a unit leaves the model)."""
    o = Oracle(table, plant)
    for u in units:
        u.apply(o)
        o.check_unique()
    return o
