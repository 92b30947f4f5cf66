"""Compares a read of the table with the oracle: a sorted multiset of rows over the data columns
(doubles to 9 significant digits, decimals at scale 2, dates as ISO text), plus the meta columns
_hoodie_record_key and _hoodie_partition_path against the key and partition values."""
import datetime
import decimal

from model import partition_path, record_key


def norm(v):
    if v is None:
        return None
    if isinstance(v, bool):
        return v
    if isinstance(v, float):
        return float(f"{v:.9g}")
    if isinstance(v, decimal.Decimal):
        return str(v.quantize(decimal.Decimal("0.01")))
    if isinstance(v, datetime.datetime):
        return v.isoformat()
    if isinstance(v, datetime.date):
        return v.isoformat()
    return v


def sort_key(row):
    return tuple((v is None, type(v).__name__, v if v is not None else 0) for v in row)


def canon(table, rows):
    """rows: tuples in table.columns order."""
    return sorted((tuple(norm(v) for v in r) for r in rows), key=sort_key)


def from_dicts(table, dicts):
    return [tuple(d.get(c.name) for c in table.columns) for d in dicts]


def diff(table, expected, got_dicts, meta=True):
    """None if the read equals the oracle, else a short text of what differs."""
    missing = [c.name for c in table.columns if got_dicts and c.name not in got_dicts[0]]
    if missing:
        return f"columns missing from the read: {missing} (has {sorted(got_dicts[0])})"
    want = canon(table, expected)
    got = canon(table, from_dicts(table, got_dicts))
    if want != got:
        extra = [r for r in got if r not in want]
        lost = [r for r in want if r not in got]
        return (f"{len(got)} rows, oracle has {len(want)}; only in hoodie: {extra[:6]}; only in oracle: {lost[:6]}")
    if meta:
        if not table.pk:  # generated keys (<instant>_<task>_<row>): present and distinct
            keys = [d.get("_hoodie_record_key") for d in got_dicts]
            if not all(keys) or len(set(keys)) != len(keys):
                return f"generated record keys not distinct and non-empty: {sorted(map(str, keys))[:8]}"
        for d in got_dicts:
            row = {c.name: d[c.name] for c in table.columns}
            rk, pp = record_key(table, row), partition_path(table, row)
            if not table.pk:
                rk = d.get("_hoodie_record_key")
            if d.get("_hoodie_record_key") != rk or d.get("_hoodie_partition_path") != pp:
                return (f"meta columns of {tuple(norm(v) for v in row.values())}: record key "
                        f"{d.get('_hoodie_record_key')!r} (want {rk!r}), partition path "
                        f"{d.get('_hoodie_partition_path')!r} (want {pp!r})")
    return None


def fmt_rows(table, rows):
    head = " | ".join(c.name for c in table.columns)
    return "\n".join([head] + [" | ".join(repr(v) for v in r) for r in canon(table, rows)])
