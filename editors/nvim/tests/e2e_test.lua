-- Headless Neovim end-to-end test: the shipped lsp/sdy_lsp.lua, a real sdy-lsp, the
-- fixture editors/fixtures/unknown-axis.mlir. Run by tests/run.sh:
--
--   SDY_LSP_BIN=... SDY_EDITORS=<repo>/editors nvim --headless --clean -u NONE -l e2e_test.lua
--
-- Prints one line per check and exits with status 1 if any failed.

local editors = assert(os.getenv('SDY_EDITORS'), 'SDY_EDITORS is not set')
local bin = assert(os.getenv('SDY_LSP_BIN'), 'SDY_LSP_BIN is not set')
local fixture = editors .. '/fixtures/unknown-axis.mlir'
local TIMEOUT = 10000

local failures = 0
local function check(ok, what, detail)
  if ok then
    io.stdout:write('ok    ' .. what .. '\n')
  else
    failures = failures + 1
    io.stdout:write('FAIL  ' .. what .. (detail and (': ' .. detail) or '') .. '\n')
  end
  return ok
end
local function finish()
  io.stdout:write(string.format('%s (%d failed)\n', failures == 0 and 'PASS' or 'FAIL', failures))
  for _, c in ipairs(vim.lsp.get_clients()) do
    c:stop(true)
  end
  os.exit(failures == 0 and 0 or 1)
end
local function fatal(what, detail)
  check(false, what, detail)
  finish()
end

local function read(path)
  local f = assert(io.open(path, 'r'))
  local s = f:read('*a')
  f:close()
  return s
end

--- 0-based {line, col} of the `nth` (default 1) occurrence of plain `needle`, plus `delta` bytes.
local function find(lines, needle, delta, nth)
  nth = nth or 1
  for i, l in ipairs(lines) do
    local from = 1
    while true do
      local s = l:find(needle, from, true)
      if not s then
        break
      end
      nth = nth - 1
      if nth == 0 then
        return { i - 1, s - 1 + (delta or 0) }
      end
      from = s + 1
    end
  end
  error('fixture has no ' .. needle)
end

-- before_init merges a `settings.sdy` override into the init options and reports both.
do
  local cfg = dofile(editors .. '/nvim/lsp/sdy_lsp.lua')
  local params = {}
  local c = { init_options = vim.deepcopy(cfg.init_options), settings = { sdy = { propagation = { mode = 'onSave' } } } }
  cfg.before_init(params, c)
  local o = params.initializationOptions
  check(o.propagation.mode == 'onSave' and o.propagation.strategy == 'pipeline' and o.inlayHints.enable == true
    and c.settings.sdy == o, 'settings.sdy overrides init_options; both are sent', vim.inspect(o))
end

-- The configuration under test, from this repository, with the binary under test.
vim.opt.runtimepath:prepend(editors .. '/nvim')
vim.lsp.config('sdy_lsp', { cmd = { bin } })
vim.lsp.enable('sdy_lsp')

vim.cmd.edit(fixture)
local buf = vim.api.nvim_get_current_buf()
local lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
check(vim.bo[buf].filetype == 'mlir', '*.mlir has filetype mlir', vim.bo[buf].filetype)

local client
vim.wait(TIMEOUT, function()
  client = vim.lsp.get_clients({ bufnr = buf, name = 'sdy_lsp' })[1]
  return client ~= nil and client.initialized
end, 10)
if not client or not client.initialized then
  fatal('sdy_lsp attaches to the buffer and initializes')
end
check(true, 'sdy_lsp attaches to the buffer and initializes')

-- The configuration: lsp/sdy_lsp.lua's values, init options as VS Code sends them.
check(client.config.cmd[1] == bin, 'cmd is the binary under test', client.config.cmd[1])
check(vim.deep_equal(client.config.filetypes, { 'mlir' }), "filetypes = { 'mlir' }")
local want_root = vim.fs.root(fixture, '.git') -- the repository; nil in a copy without .git
check(client.root_dir == want_root, 'root_dir from root_markers { ".git" }',
  tostring(client.root_dir) .. ' (want ' .. tostring(want_root) .. ')')
local expected = vim.json.decode(read(editors .. '/default-init-options.json'))
check(vim.deep_equal(client.config.init_options, expected), 'init_options = editors/default-init-options.json',
  vim.inspect(client.config.init_options))
check(vim.deep_equal(client.settings.sdy, expected), 'settings.sdy = the same options',
  vim.inspect(client.settings.sdy))
check(client.offset_encoding == 'utf-8', 'UTF-8 positions negotiated (Neovim offers them first)',
  client.offset_encoding)

-- Diagnostics from didOpen.
local function diagnostics()
  return vim.diagnostic.get(buf)
end
vim.wait(TIMEOUT, function()
  return #diagnostics() > 0
end, 10)
local d = diagnostics()
if check(#d == 1, 'one diagnostic', vim.inspect(d)) then
  local z = find(lines, '{"z"}', 1)
  check(d[1].message == '\'stablehlo.abs\' op result - unknown axis name: "z"', "Shardy's message", d[1].message)
  check(d[1].severity == vim.diagnostic.severity.ERROR, 'severity error')
  check(d[1].lnum == z[1] and d[1].col == z[2] and d[1].end_lnum == z[1] and d[1].end_col == z[2] + 3,
    'range covers "z"', vim.inspect({ d[1].lnum, d[1].col, d[1].end_lnum, d[1].end_col, want = z }))
end

-- Hover requests, as vim.lsp.buf.hover sends them.
local function hover_at(pos)
  vim.api.nvim_win_set_cursor(0, { pos[1] + 1, pos[2] })
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  local res, err = client:request_sync('textDocument/hover', params, TIMEOUT, buf)
  if not res then
    return nil, err
  end
  if res.err then
    return nil, vim.inspect(res.err)
  end
  return res.result
end

local ssa = find(lines, '%1 :', 1) -- `return %1 : ...`
local h, err = hover_at(ssa)
if check(h ~= nil and h ~= vim.NIL, 'hover on an SSA value answers', err) then
  check(h.contents.kind == 'markdown', 'hover is Markdown', vim.inspect(h.contents))
  check(h.contents.value:find('%1', 1, true) ~= nil and h.contents.value:find('tensor<8x16xf32>', 1, true) ~= nil,
    'hover names the value and its type', h.contents.value)
end

-- The same through Neovim's UI: vim.lsp.buf.hover() opens a floating window with it.
vim.api.nvim_win_set_cursor(0, { ssa[1] + 1, ssa[2] })
vim.lsp.buf.hover()
local float_text
vim.wait(TIMEOUT, function()
  for _, w in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(w).relative ~= '' then
      float_text = table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(w), 0, -1, false), '\n')
      return true
    end
  end
  return false
end, 10)
check(float_text ~= nil and float_text:find('%1', 1, true) ~= nil, 'vim.lsp.buf.hover() shows it in a float',
  tostring(float_text))
for _, w in ipairs(vim.api.nvim_list_wins()) do
  if vim.api.nvim_win_get_config(w).relative ~= '' then
    vim.api.nvim_win_close(w, true)
  end
end

local sharding = find(lines, '#sdy.sharding<@mesh, [{"x"}', 5)
local hs = hover_at(sharding)
if check(hs ~= nil and hs ~= vim.NIL, 'hover on a #sdy.sharding answers') then
  local md = hs.contents.value
  check(hs.contents.kind == 'markdown' and md:find('%arg0', 1, true) ~= nil and md:find('@mesh', 1, true) ~= nil,
    'hover on a sharding explains it', md)
  check(md:find('tensor<4x4xf32>', 1, true) ~= nil, 'sharding hover gives the per-device shape', md)
end

-- Inlay hints.
local all = { start = { line = 0, character = 0 }, ['end'] = { line = #lines, character = 0 } }
if check(client.server_capabilities.inlayHintProvider, 'inlayHintProvider advertised') then
  vim.lsp.inlay_hint.enable(true, { bufnr = buf })
  local hints = {}
  vim.wait(TIMEOUT, function()
    hints = vim.lsp.inlay_hint.get({ bufnr = buf })
    return #hints > 0
  end, 10)
  if check(#hints > 0, 'inlay hints shown (vim.lsp.inlay_hint)') then
    for _, item in ipairs(hints) do
      local hint = item.inlay_hint
      local label = type(hint.label) == 'string' and hint.label
        or table.concat(vim.tbl_map(function(p) return p.value end, hint.label))
      check(hint.position.line < #lines and vim.trim(label) ~= '', 'inlay hint ' .. vim.inspect(label))
    end
  end
end

-- An edit (incremental didChange from Neovim) that fixes the error clears the diagnostic;
-- undoing it brings it back.
local z = find(lines, '{"z"}', 2)
vim.api.nvim_buf_set_text(buf, z[1], z[2], z[1], z[2] + 1, { 'y' })
vim.wait(TIMEOUT, function()
  return #diagnostics() == 0
end, 10)
check(#diagnostics() == 0, 'fixing the axis clears the diagnostic', vim.inspect(diagnostics()))
vim.api.nvim_buf_set_text(buf, z[1], z[2], z[1], z[2] + 1, { 'z' })
vim.wait(TIMEOUT, function()
  return #diagnostics() == 1
end, 10)
check(#diagnostics() == 1, 'restoring it brings the diagnostic back')
check(not client:is_stopped(), 'the server is still running')

-- Propagation: on a valid copy of the fixture ("z" -> "y"), the code lens offers
-- `sdy.propagate`; running the command gives the propagated shardings as inlay hints.
do
  local valid = vim.fn.tempname() .. '.mlir'
  local f = assert(io.open(valid, 'w'))
  f:write((read(fixture):gsub('{"z"}', '{"y"}')))
  f:close()
  vim.cmd.edit(valid)
  local vbuf = vim.api.nvim_get_current_buf()
  local vlines = vim.api.nvim_buf_get_lines(vbuf, 0, -1, false)
  -- Outside the repository (no root marker): possibly a client of its own.
  local vclient
  vim.wait(TIMEOUT, function()
    vclient = vim.lsp.get_clients({ bufnr = vbuf, name = 'sdy_lsp' })[1]
    return vclient ~= nil and vclient.initialized and vim.lsp.buf_is_attached(vbuf, vclient.id)
  end, 10)
  if not vclient then
    fatal('sdy_lsp attaches to a second buffer')
  end
  local params = { textDocument = vim.lsp.util.make_text_document_params(vbuf) }
  local lenses = vclient:request_sync('textDocument/codeLens', params, TIMEOUT, vbuf)
  local titles = {}
  for _, l in ipairs(lenses and lenses.result or {}) do
    titles[#titles + 1] = l.command and l.command.command .. ': ' .. l.command.title
  end
  check(vim.tbl_contains(titles, 'sdy.propagate: Propagate shardings'), 'code lens "Propagate shardings"',
    vim.inspect(titles))
  local args = { { uri = vim.uri_from_bufnr(vbuf), strategy = 'pipeline' } }
  local run = vclient:request_sync('workspace/executeCommand', { command = 'sdy.propagate', arguments = args },
    TIMEOUT * 3, vbuf)
  local answer = run and run.result or {}
  check(answer.chunks == 1 and answer.failed == 0, 'sdy.propagate runs (workspace/executeCommand)',
    vim.inspect(run))
  local range = { start = { line = 0, character = 0 }, ['end'] = { line = #vlines, character = 0 } }
  local res = vclient:request_sync('textDocument/inlayHint', { textDocument = params.textDocument, range = range },
    TIMEOUT, vbuf)
  local at = find(vlines, '%1 =', 2)
  local found = false
  for _, h in ipairs(res and res.result or {}) do
    if h.position.line == at[1] and h.position.character == at[2] and h.label == '[{"y"}, {}]' then
      found = true
    end
  end
  check(found, 'the propagated sharding of %1 as an inlay hint', vim.inspect(res and res.result))
  local module = vclient:request_sync('workspace/executeCommand',
    { command = 'sdy.showPropagatedModule', arguments = args }, TIMEOUT * 3, vbuf)
  local opt = vim.fn.system({ bin, 'opt', valid, '-sdy-propagation-pipeline' })
  check(module and module.result == opt, 'sdy.showPropagatedModule is what `sdy-lsp opt` prints',
    vim.inspect(module))
  os.remove(valid)
end

-- Shutdown.
client:stop()
vim.wait(TIMEOUT, function()
  return client:is_stopped()
end, 10)
check(client:is_stopped(), 'client:stop() shuts the server down')

finish()
