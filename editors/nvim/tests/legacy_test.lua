-- Smoke test of lua/sdy_lsp/legacy.lua (Neovim 0.7 to 0.10 setup) with a real sdy-lsp.
-- Written for every Neovim from 0.7 on (no -l, no client:method() calls), so it runs as
--
--   SDY_LSP_BIN=... SDY_EDITORS=<repo>/editors nvim --headless --clean -u NONE -c 'luafile legacy_test.lua'
--
-- tests/run.sh runs it with the test's Neovim 0.12; it was also run by hand with Debian's
-- Neovim 0.7.2 (apt-get install neovim; SDY_NVIM_BIN=/usr/bin/nvim bash tests/run.sh legacy).

local editors = assert(os.getenv('SDY_EDITORS'), 'SDY_EDITORS is not set')
local bin = assert(os.getenv('SDY_LSP_BIN'), 'SDY_LSP_BIN is not set')
local fixture = editors .. '/fixtures/unknown-axis.mlir'
local TIMEOUT = 10000

local failures = 0
local function check(ok, what, detail)
  io.stdout:write((ok and 'ok    ' or 'FAIL  ') .. what .. ((not ok and detail) and (': ' .. detail) or '') .. '\n')
  if not ok then
    failures = failures + 1
  end
  return ok
end
local function finish()
  io.stdout:write(string.format('%s (%d failed)\n', failures == 0 and 'PASS' or 'FAIL', failures))
  io.stdout:flush()
  vim.cmd((failures == 0 and 'qall!' or 'cquit! 1'))
end

local function clients(bufnr)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients({ bufnr = bufnr })
  end
  return vim.tbl_values(vim.lsp.buf_get_clients(bufnr))
end
local function request_sync(client, method, params, bufnr)
  if vim.fn.has('nvim-0.11') == 1 then
    return client:request_sync(method, params, TIMEOUT, bufnr)
  end
  return client.request_sync(method, params, TIMEOUT, bufnr)
end

local ok, err = pcall(function()
  vim.opt.runtimepath:prepend(editors .. '/nvim')
  require('sdy_lsp.legacy').setup({ cmd = { bin } })
  vim.cmd('edit ' .. vim.fn.fnameescape(fixture))
  local buf = vim.api.nvim_get_current_buf()
  check(vim.bo.filetype == 'mlir', '*.mlir has filetype mlir', vim.bo.filetype)

  local client
  vim.wait(TIMEOUT, function()
    client = clients(buf)[1]
    return client ~= nil and client.initialized == true
  end, 10)
  if not check(client ~= nil, 'sdy_lsp attaches (' .. vim.trim(vim.fn.execute('version')):match('^[^\n]+') .. ')') then
    return
  end
  check(client.name == 'sdy_lsp', 'client name sdy_lsp', client.name)
  local want_root = vim.fn.fnamemodify(editors, ':h') -- the repository, if it is a git checkout
  if vim.loop.fs_stat(want_root .. '/.git') == nil then
    want_root = nil
  end
  check(client.config.root_dir == want_root, 'root_dir from .git', tostring(client.config.root_dir))
  local f = assert(io.open(editors .. '/default-init-options.json'))
  local expected = vim.json.decode(f:read('*a'))
  f:close()
  check(vim.deep_equal(client.config.init_options, expected), 'init_options = editors/default-init-options.json')
  check(vim.deep_equal(client.config.settings.sdy, expected), 'settings.sdy = the same options')

  vim.wait(TIMEOUT, function()
    return #vim.diagnostic.get(buf) > 0
  end, 10)
  local d = vim.diagnostic.get(buf)
  check(#d == 1 and d[1].message == '\'stablehlo.abs\' op result - unknown axis name: "z"',
    'the unknown-axis diagnostic', vim.inspect(d))

  local line = vim.fn.search('return %1', 'n')
  vim.api.nvim_win_set_cursor(0, { line, (vim.fn.getline(line):find('%1', 1, true)) })
  local params = vim.lsp.util.make_position_params(0, client.offset_encoding)
  local res = request_sync(client, 'textDocument/hover', params, buf)
  local value = res and res.result and res.result.contents and res.result.contents.value or ''
  check(value:find('tensor<8x16xf32>', 1, true) ~= nil, 'hover on %1 gives its type', vim.inspect(res))
  if vim.fn.has('nvim-0.11') == 1 then
    client:stop()
  else
    client.stop()
  end
end)
check(ok, 'no Lua error', tostring(err))
finish()
