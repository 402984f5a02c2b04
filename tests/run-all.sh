#!/usr/bin/env bash
# Runs every test of the project: formatting, lints, the Rust tests (fixtures, in-process
# and whole-process tests, the conformance ratchet when ../shared is present, property
# tests), and the grammar tests. Assumes the tools .ci/run installs.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
cargo test --workspace
if [ -d syntaxes/node_modules ]; then
  (cd syntaxes && npm test)
else
  echo "syntaxes/node_modules missing: run 'npm ci' in syntaxes/ (done by .ci/run)" >&2
  exit 1
fi
