"""The check the object-store tests share: hudi-rs reads the tables hoodie wrote at `base`
(with the same storage options) with the rows hoodie read (its Parquet copy `WORK/<table>.parquet`),
meta columns included, and those rows are the ones the statements leave."""
import os

import pyarrow as pa
import pyarrow.parquet as pq


def rows(table, cols):
    return sorted((tuple(r[c] for c in cols) for r in table.to_pylist()), key=repr)


def check_tables(base, options, work, cases):
    """`cases`: (table name, the rows it should hold, their columns). Prints a line per check;
    returns whether every check passed."""
    from hudi import HudiTableBuilder
    passed = True
    for name, want, cols in cases:
        ours = pq.read_table(os.path.join(work, name + ".parquet"))
        table = HudiTableBuilder.from_base_uri(f"{base}/{name}").with_storage_options(options).build()
        batches = table.read()
        theirs = pa.Table.from_batches(batches) if batches else pa.table({})
        every = ours.schema.names
        for what, got, exp in [
            (f"{name}: hudi-rs reads hoodie's rows and meta columns", rows(theirs, every), rows(ours, every)),
            (f"{name}: the rows the statements leave", rows(ours, cols), sorted(want, key=repr)),
        ]:
            if got == exp:
                print(f"ok   {what}")
            else:
                passed = False
                print(f"FAIL {what}: got {got}, want {exp}")
    return passed
