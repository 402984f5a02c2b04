#!/usr/bin/env bash
# Runs every test of the project: formatting, lints, the Rust tests (fixtures, in-process
# and whole-process tests, the conformance ratchet when ../shared is present, property
# tests), the grammar tests, and the editor tests (VS Code extension tests and .vsix
# packaging, headless Neovim). Assumes the tools .ci/run installs.
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

# Editor tests. Both run the real server, target/debug/sdy-lsp: `cargo test` has built it,
# this makes sure.
cargo build -p sdy-lsp --bin sdy-lsp
target_dir=${CARGO_TARGET_DIR:-target}
bin=$(cd "$target_dir" && pwd)/debug/sdy-lsp
if [ -d editors/vscode/node_modules ]; then
  (cd editors/vscode &&
    SDY_LSP_BIN=$bin SDY_LSP_REQUIRE_SERVER=1 npm test --silent &&
    npm run --silent package)
else
  echo "editors/vscode/node_modules missing: run 'npm ci' in editors/vscode (done by .ci/run)" >&2
  exit 1
fi
SDY_LSP_BIN=$bin bash editors/nvim/tests/run.sh
# The packaged extension in a real VS Code (code-server driven by Chromium), where it is
# installed (.ci/run installs it and sets SDY_VSCODE_E2E=1, which makes it required).
if [ "${SDY_VSCODE_E2E:-0}" = 1 ] || bash editors/tests/vscode-e2e/run.sh --is-installed; then
  SDY_LSP_BIN=$bin bash editors/tests/vscode-e2e/run.sh
else
  echo "vscode-e2e: skipped (not installed: bash editors/tests/vscode-e2e/run.sh --install)"
fi
# From a JAX program to the editor (skipped where no Python has jax).
SDY_LSP_BIN=$bin bash editors/tests/jax_export.sh
# Install without Rust: the wheel (dev profile, reusing the debug build) in a fresh venv.
bash editors/tests/wheel.sh --dev
