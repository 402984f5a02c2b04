#!/usr/bin/env bash
# Install without Rust: builds the sdy-lsp wheel (pyproject.toml at the repository root,
# maturin's `bin` bindings), installs it into a fresh venv without any index, and checks
# that the venv's `sdy-lsp` works: --version, `check` of a clean example (exit 0) and of
# one with mistakes (exit 1, Shardy's messages).
#
#   bash editors/tests/wheel.sh [--dev]    (maturin comes from PyPI into ~/.cache/sdy-lsp-wheel)
#
# --dev builds with cargo's dev profile, reusing what `cargo build` built (tests/run-all.sh);
# the default is a release build, the wheel to install.
#
# The wheel is left in target/wheels/ (the README's "pip install target/wheels/sdy_lsp-*.whl").
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cache=${SDY_WHEEL_CACHE:-$HOME/.cache/sdy-lsp-wheel}
maturin_version=1.16.0
profile=(--release)
[ "${1:-}" = --dev ] && profile=(--profile dev)
start=$(date +%s)

maturin=$cache/maturin-$maturin_version/bin/maturin
if [ ! -x "$maturin" ]; then
  python3 -m venv "$cache/maturin-$maturin_version"
  "$cache/maturin-$maturin_version/bin/pip" install -q "maturin==$maturin_version"
fi

cd "$repo"
target_dir=${CARGO_TARGET_DIR:-$repo/target}
rm -f "$target_dir"/wheels/sdy_lsp-*.whl
# --compatibility linux: a wheel for this machine (manylinux tags are for publishing from
# a manylinux container or with zig).
"$maturin" build "${profile[@]}" --compatibility linux --out "$target_dir/wheels" 2>&1 | grep -E '📦|🔗|Built wheel|error|warning: ' || true
wheel=$(ls "$target_dir"/wheels/sdy_lsp-*.whl 2>/dev/null | head -n 1)
[ -n "$wheel" ] || { echo "wheel: no wheel built" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install -q --no-index "$wheel"
bin=$tmp/venv/bin/sdy-lsp
fail() { echo "wheel: FAIL: $*" >&2; exit 1; }
[ -x "$bin" ] || fail "the wheel did not put sdy-lsp into the venv's bin/"
version=$("$bin" --version)
[[ $version == "sdy-lsp "* ]] || fail "--version printed '$version'"
# On the venv's PATH, as an editor started from an activated venv sees it.
found=$(PATH="$tmp/venv/bin:/usr/bin:/bin" command -v sdy-lsp)
[ "$found" = "$bin" ] || fail "sdy-lsp on PATH is '$found', not the venv's"

out=$(cd "$repo" && "$bin" check examples/mlp.mlir 2>&1) || fail "check examples/mlp.mlir: $out"
set +e
out=$(cd "$repo" && "$bin" check examples/mistakes.mlir 2>&1)
status=$?
set -e
[ "$status" = 1 ] || fail "check examples/mistakes.mlir exited $status, not 1"
grep -q '^examples/mistakes.mlir:[0-9]*:[0-9]*: error: ' <<<"$out" || fail "no error lines: $out"
echo "wheel: $(basename "$wheel") ($(du -h "$wheel" | cut -f1)): $version; check: mlp.mlir clean, mistakes.mlir $(grep -c ': error: ' <<<"$out") errors"
echo "wheel: 1 passed, 0 failed ($(( $(date +%s) - start )) s)"
