"""The oracle: a DuckDB database that holds what the Hudi table must hold after each statement.

Every statement of a sequence (see stmts.py) applies its effect here with DuckDB SQL; the rules
that map Hudi's semantics onto DuckDB are in README.md ("The oracle"). This module has the
shared pieces: the connection, the ordering test, identity matching and the invariant check."""
import duckdb

from model import TYPES


class Invalid(Exception):
    """The statement would leave the table in a state the fuzzer does not model (a record key
    held twice in one partition); the generator draws another statement, the shrinker drops the
    candidate."""


def q(name):
    return f'"{name}"'


class Oracle:
    def __init__(self, table, plant=None):
        self.t = table
        self.plant = plant or set()
        self.db = duckdb.connect()
        cols = ", ".join(f"{q(c.name)} {TYPES[c.typ][1]}" for c in table.columns)
        self.db.execute(f"CREATE TABLE {table.name} ({cols})")

    def x(self, sql, params=None):
        try:
            return self.db.execute(sql, params) if params is not None else self.db.execute(sql)
        except duckdb.Error as e:
            raise OracleError(f"{e}\n  in: {sql}") from e

    def win(self, new, old):
        """Event-time ordering: the incoming record wins iff new >= old, NULL ordering before
        every other value (so NULL vs NULL is a tie, which the incoming record wins)."""
        if "ties-lose" in self.plant:
            return f"(CASE WHEN ({new}) IS NULL THEN FALSE ELSE (({old}) IS NULL OR ({new}) > ({old})) END)"
        return f"(CASE WHEN ({new}) IS NULL THEN ({old}) IS NULL ELSE (({old}) IS NULL OR ({new}) >= ({old})) END)"

    def same_identity(self, a, b):
        """The record identity with the default (partition-scoped) index: the key columns and the
        partition path (NULL partition values share __HIVE_DEFAULT_PARTITION__); with a global
        index, the key columns alone."""
        parts = [f"{a}.{q(k.name)} = {b}.{q(k.name)}" for k in self.t.keys]
        if self.t.partition is not None and not self.t.global_index:
            p = q(self.t.partition.name)
            parts.append(f"{a}.{p} IS NOT DISTINCT FROM {b}.{p}")
        return " AND ".join(parts)

    def check_unique(self):
        if self.t.partition is not None and self.t.partition.typ == "STRING":
            p = q(self.t.partition.name)
            if self.x(f"SELECT count(*) FROM {self.t.name} WHERE {p} = ''").fetchone()[0]:
                # '' shares __HIVE_DEFAULT_PARTITION__ with NULL: not modelled
                raise Invalid("an empty partition value")
        if not self.t.pk or getattr(self.t, "allow_dups", False):
            return  # rows without a primary key are not records of a key: duplicates are kept
        ids = ", ".join(q(c.name) for c in self.t.identity)
        n = self.x(f"SELECT count(*) FROM (SELECT {ids} FROM {self.t.name} GROUP BY ALL HAVING count(*) > 1)").fetchone()[0]
        if n:
            raise Invalid("a record key would be held twice in one partition")

    def held_twice(self, alias):
        """A condition on the row `alias` of the table: its record is held more than once (an
        `insert` of a stored key keeps both copies). What an UPDATE, DELETE, MERGE or upsert
        does to such a record is Hudi's implementation's choice (Spark changes the first copy
        in file order): the generator keeps every change away from them (Invalid)."""
        return f"(SELECT count(*) FROM {self.t.name} AS _dup WHERE {self.same_identity('_dup', alias)}) > 1"

    def has_dups(self):
        if not self.t.pk or not getattr(self.t, "allow_dups", False):
            return False
        ids = ", ".join(q(c.name) for c in self.t.identity)
        return bool(self.x(f"SELECT count(*) FROM (SELECT {ids} FROM {self.t.name} GROUP BY ALL HAVING count(*) > 1)").fetchone()[0])

    def rows(self):
        names = ", ".join(q(c.name) for c in self.t.columns)
        return self.x(f"SELECT {names} FROM {self.t.name}").fetchall()

    def snapshot(self):
        self.x("BEGIN TRANSACTION")

    def commit(self):
        self.x("COMMIT")

    def rollback(self):
        self.x("ROLLBACK")


class OracleError(Exception):
    """DuckDB refused the oracle's SQL: a bug in the fuzzer (or a generated statement outside
    what both engines read the same way)."""
