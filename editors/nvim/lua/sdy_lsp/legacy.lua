-- sdy-lsp for Neovim 0.7 to 0.10, which have no vim.lsp.config / vim.lsp.enable.
--
--   vim.opt.runtimepath:append('/path/to/sdy-lsp/editors/nvim')
--   require('sdy_lsp.legacy').setup()            -- or setup({ cmd = { '/path/to/sdy-lsp' } })
--
-- It reads the same configuration as Neovim >= 0.11 (lsp/sdy_lsp.lua on the runtimepath),
-- merges the overrides given to setup(), maps *.mlir to filetype mlir (built into Neovim
-- only since 0.11), and starts or reuses one client per project root for every mlir
-- buffer: vim.lsp.start on 0.8+, vim.lsp.start_client + buf_attach_client on 0.7.
-- On Neovim >= 0.11 it works too, but vim.lsp.enable('sdy_lsp') is the way there.

local M = {}

--- The configuration: lsp/sdy_lsp.lua with `overrides` merged in.
function M.config(overrides)
  local file = vim.api.nvim_get_runtime_file('lsp/sdy_lsp.lua', false)[1]
  assert(file, 'sdy_lsp: lsp/sdy_lsp.lua is not on the runtimepath (add editors/nvim to it)')
  return vim.tbl_deep_extend('force', dofile(file), overrides or {})
end

--- The nearest ancestor directory of the buffer's file that contains one of `markers`.
local function find_root(bufnr, markers)
  local name = vim.api.nvim_buf_get_name(bufnr)
  local dir = name ~= '' and vim.fn.fnamemodify(name, ':p:h') or vim.loop.cwd()
  while dir do
    for _, marker in ipairs(markers) do
      if vim.loop.fs_stat(dir .. '/' .. marker) then
        return dir
      end
    end
    local parent = vim.fn.fnamemodify(dir, ':h')
    if parent == dir then
      return nil
    end
    dir = parent
  end
end

function M.setup(overrides)
  local config = M.config(overrides)
  local markers = config.root_markers or { '.git' }
  local filetypes = config.filetypes or { 'mlir' }
  config.root_markers, config.filetypes = nil, nil
  config.name = 'sdy_lsp'

  if vim.fn.has('nvim-0.8') == 1 then
    vim.filetype.add({ extension = { mlir = 'mlir' } })
  else
    vim.cmd('autocmd BufRead,BufNewFile *.mlir setfiletype mlir')
  end

  local clients = {} -- Neovim 0.7: project root -> client id
  local group = vim.api.nvim_create_augroup('sdy_lsp_legacy', { clear = true })
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = filetypes,
    callback = function(args)
      local root = find_root(args.buf, markers)
      local c = vim.deepcopy(config)
      c.root_dir = root
      if vim.lsp.start then
        vim.lsp.start(c, { bufnr = args.buf })
        return
      end
      local key = root or ''
      local id = clients[key]
      local client = id and vim.lsp.get_client_by_id(id)
      if not client or client.is_stopped() then
        id = vim.lsp.start_client(c)
        clients[key] = id
      end
      if id then
        vim.lsp.buf_attach_client(args.buf, id)
      end
    end,
  })
end

return M
