#!/usr/bin/env bash
# Renders editors/hover.png, the README's screenshot of the explain hover: the Markdown
# that `sdy-lsp explain --markdown` gives for a #sdy.sharding in examples/mlp.mlir (the
# same text the server's hover shows), laid out like a VS Code hover (render.mjs) and photographed with
# headless Chromium.
#
#   bash editors/screenshot/render.sh [FILE:LINE:COL]     (default examples/mlp.mlir:6:60)
#
# Needs target/debug/sdy-lsp (cargo build; or SDY_LSP_BIN), node, and chromium
# (apt-get install -y chromium). Installs its npm pieces (package-lock.json) on first use.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
pos=${1:-examples/mlp.mlir:6:60}
out=${SDY_SCREENSHOT_OUT:-$repo/editors/hover.png}
bin=${SDY_LSP_BIN:-$repo/target/debug/sdy-lsp}
chromium=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)}
[ -x "$bin" ] || { echo "render: no $bin (cargo build -p sdy-lsp)" >&2; exit 1; }
[ -n "$chromium" ] || { echo "render: no chromium (apt-get install -y chromium)" >&2; exit 1; }
[ -d "$here/node_modules" ] || (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)

file=${pos%:*:*}
rest=${pos#"$file":}
line=${rest%:*}
col=${rest#*:}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$repo" && "$bin" explain --markdown "$pos") >"$tmp/hover.md"
node "$here/render.mjs" "$tmp/hover.md" "$repo/$file" "$line" "$col" "$tmp/hover.html"

shoot() { # extra chromium arguments...
  "$chromium" --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run --hide-scrollbars \
    --user-data-dir="$tmp/profile" --force-device-scale-factor=2 "$@" "file://$tmp/hover.html" 2>/dev/null
}
# First pass: let the page measure the hover; second: screenshot at that size.
dom=$(shoot --window-size=2000,4000 --dump-dom)
height=$(sed -n 's/.*data-height="\([0-9]*\)".*/\1/p' <<<"$dom" | head -n 1)
width=$(sed -n 's/.*data-width="\([0-9]*\)".*/\1/p' <<<"$dom" | head -n 1)
[ -n "$height" ] && [ -n "$width" ] || { echo "render: could not measure the page" >&2; exit 1; }
shoot --window-size="$width,$height" --screenshot="$out" >/dev/null
echo "render: $out (${width}x${height} CSS px at 2x) from sdy-lsp explain $pos"
