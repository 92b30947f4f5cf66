#!/usr/bin/env bash
# Runs every test of the project: the Rust tests (unit tests, the sql-tests/ suite through
# hoodie-slt, the Spark fixtures and failure injection), then the interoperability check that
# reads hoodie-written tables with the Python `hudi` reader (hudi-rs).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace
cargo build --bin hoodie
bash tests/interop/run.sh target/debug/hoodie
