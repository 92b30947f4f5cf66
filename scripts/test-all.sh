#!/usr/bin/env bash
# Runs every test of the project: the Rust tests (unit tests, the sql-tests/ suite through
# hoodie-slt, the Spark fixtures and failure injection), DataFusion's own .slt files through
# hoodie-slt --datafusion, then the interoperability check that
# reads hoodie-written tables with the Python `hudi` reader (hudi-rs), the object stores, the
# concurrency stress test, the differential fuzzer (tests/fuzz/README.md), a cluster of
# hoodie-worker processes (tests/cluster/run.sh) and last Spark with
# Hudi beside hoodie (tests/spark/README.md). Downloads (pip, npm, Maven) are cached under
# ~/.cache and ~/.m2 ($HOODIE_CACHE moves the project's own), where the next run finds them.
set -euo pipefail
cd "$(dirname "$0")/.."
# the fixture tests unzip the Spark-written tables in tests/fixtures
if ! command -v unzip >/dev/null; then
  apt-get update -qq && apt-get install -y -qq unzip
fi
cargo test --workspace
cargo build --bin hoodie --bin hoodie-slt --bin hoodie-worker
# DataFusion 55.2.0's own .slt files, unchanged, as DataFusion's runner runs them
# (tests/datafusion-slt/README.md); the closing line must count every record
"${CARGO_TARGET_DIR:-target}/debug/hoodie-slt" --datafusion --jobs 2 tests/datafusion-slt | tee /dev/stderr | tail -n 1 | grep -qx '12384 passed, 0 failed'
# the sql-tests again on tables of version 6 (cargo test ran them on hoodie's default, 9):
# every file's session creates its tables with hoodie.write.table.version = 6
"${CARGO_TARGET_DIR:-target}/debug/hoodie-slt" --jobs 2 --table-version 6 sql-tests | tee /dev/stderr | tail -n 1 | grep -E '^[0-9]+ passed, 0 failed'
# the embedding example (built by cargo test): a plain DataFusion session with_hoodie
"${CARGO_TARGET_DIR:-target}/debug/examples/embed" > /dev/null
bash tests/interop/run.sh "${CARGO_TARGET_DIR:-target}/debug/hoodie"
# tables on an S3 server (moto, started by the script) read back by hudi-rs, and several
# writers on one table there
bash tests/s3/run.sh "${CARGO_TARGET_DIR:-target}/debug/hoodie"
# tables on Azure Blob Storage (Azurite from npm, started by the script) read back by hudi-rs
bash tests/azure/run.sh "${CARGO_TARGET_DIR:-target}/debug/hoodie"
# several writer processes on one table under optimistic concurrency control (local disk)
bash tests/concurrency/run.sh "${CARGO_TARGET_DIR:-target}/debug/hoodie"
# statement-text fuzzer: mutated sql-tests statements and random bytes through hoodie -f; no
# panic or abort, no table changed by a failed statement (prints "statement fuzz: ... N failed")
python3 tests/fuzz/statements.py --hoodie "${CARGO_TARGET_DIR:-target}/debug/hoodie" --seeds 0..199 --statements 15
# Ctrl-C in the interactive shell on a pty (tests/shell/README.md; prints "shell ctrl-c: 4 checks passed")
python3 tests/shell/ctrl_c.py --hoodie "${CARGO_TARGET_DIR:-target}/debug/hoodie"
# differential fuzzer against DuckDB: self-test, then seeds 0..299 (prints "fuzz: N passed, M failed")
bash tests/fuzz/run.sh "${CARGO_TARGET_DIR:-target}/debug/hoodie"
# a localhost cluster of three hoodie-worker processes: the sql-tests and fuzzer seeds with
# every statement's scans on the workers (prints "cluster: ... passed on three workers")
bash tests/cluster/run.sh "${CARGO_TARGET_DIR:-target}/debug"
# Spark with Hudi (pyspark from PyPI, the Hudi bundle from Maven Central, one Spark session for
# the stage): the sql-tests with Spark as the oracle, each engine reading the other's tables,
# the two taking turns on one table, and fuzzer seeds through Spark
bash tests/spark/run.sh "${CARGO_TARGET_DIR:-target}/debug/hoodie" "${CARGO_TARGET_DIR:-target}/debug/hoodie-slt"
