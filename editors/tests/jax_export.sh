#!/usr/bin/env bash
# From a JAX program to the editor: editors/jax/export_mlir.py lowers a sharded JAX
# function (8 virtual CPU devices) to MLIR with locations; `sdy-lsp check` must find no
# error in it and `sdy-lsp opt -sdy-propagation-pipeline` must run on it.
#
#   bash editors/tests/jax_export.sh
#
# Needs a Python with jax: SDY_JAX_PYTHON, else the oracle's venv
# (~/.cache/sdy-oracle-venv), else python3. Without jax it says so and skips (exit 0).
# The server binary: SDY_LSP_BIN, default target/debug/sdy-lsp.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
bin=${SDY_LSP_BIN:-$repo/target/debug/sdy-lsp}
start=$(date +%s)
python=
for p in "${SDY_JAX_PYTHON:-}" "$HOME/.cache/sdy-oracle-venv/bin/python" python3; do
  if [ -n "$p" ] && command -v "$p" >/dev/null 2>&1 && "$p" -c 'import jax' >/dev/null 2>&1; then
    python=$p
    break
  fi
done
if [ -z "$python" ]; then
  echo "jax_export: no Python with jax (set SDY_JAX_PYTHON): skipped"
  echo "jax_export: 0 passed, 0 failed, 1 skipped"
  exit 0
fi
[ -x "$bin" ] || { echo "jax_export: no $bin (cargo build -p sdy-lsp, or set SDY_LSP_BIN)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "jax_export: FAIL: $*" >&2; exit 1; }

(cd "$tmp" && XLA_FLAGS=--xla_force_host_platform_device_count=8 "$python" "$repo/editors/jax/export_mlir.py" mlp_jax.mlir)
mlir=$tmp/mlp_jax.mlir
grep -q 'sdy.mesh @mesh = <\["data"=2, "model"=4\]>' "$mlir" || fail "no sdy mesh in the export (is JAX using Shardy?)"
grep -q 'sdy.sharding = #sdy.sharding<@mesh' "$mlir" || fail "no sdy shardings in the export"
grep -q 'loc(".*export_mlir.py":[0-9]' "$mlir" || fail "no source locations in the export"
out=$("$bin" check "$mlir" 2>&1) || fail "sdy-lsp check reported errors:
$out"
"$bin" opt "$mlir" -sdy-propagation-pipeline >"$tmp/propagated.mlir" 2>"$tmp/opt.err" ||
  fail "opt -sdy-propagation-pipeline: $(cat "$tmp/opt.err")"
grep -q 'sdy.sharding' "$tmp/propagated.mlir" || fail "the propagated module has no shardings"
echo "jax_export: $(wc -l <"$mlir") lines from jax $("$python" -c 'import jax; print(jax.__version__)'), check clean, propagation ran"
echo "jax_export: 1 passed, 0 failed ($(( $(date +%s) - start )) s)"
