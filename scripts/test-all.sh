#!/usr/bin/env bash
# Runs every test of the project: the Rust tests (unit tests, the sql-tests/ suite through
# hoodie-slt, the Spark fixtures and failure injection), then the interoperability check that
# reads hoodie-written tables with the Python `hudi` reader (hudi-rs).
set -euo pipefail
cd "$(dirname "$0")/.."
# the fixture tests unzip the Spark-written tables in tests/fixtures
if ! command -v unzip >/dev/null; then
  apt-get update -qq && apt-get install -y -qq unzip
fi
cargo test --workspace
cargo build --bin hoodie
bash tests/interop/run.sh "${CARGO_TARGET_DIR:-target}/debug/hoodie"
