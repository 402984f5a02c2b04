---@brief
---
--- sdy-lsp: language server for MLIR files that use OpenXLA Shardy's `sdy` dialect
--- (diagnostics with Shardy's verifier messages, hover explanations of shardings, meshes
--- and values, go to definition, inlay hints, sharding propagation through code lenses and
--- the `sdy.propagate` command).
---
--- Put it on your PATH: `pip install sdy-lsp` (the repository's wheel), or from the
--- sdy-lsp repository:
--- ```sh
--- cargo install --path server/sdy-lsp
--- ```
---
--- Neovim >= 0.11: put this file's directory (`editors/nvim`) on the runtimepath, or copy
--- this file to `~/.config/nvim/lsp/sdy_lsp.lua`, then
--- ```lua
--- vim.lsp.enable('sdy_lsp')
--- ```
---
--- Options are `init_options` (the same object the VS Code extension sends; see
--- editors/default-init-options.json). They are also reported to the server as
--- `settings.sdy` (workspace/didChangeConfiguration and workspace/configuration), so
--- either may be overridden:
--- ```lua
--- vim.lsp.config('sdy_lsp', {
---   init_options = { propagation = { mode = 'onSave', strategy = 'aggressive' } },
--- })
--- ```
---
--- Neovim detects `*.mlir` as filetype `mlir` since 0.11; it has no MLIR syntax file, so
--- highlighting comes from the server's semantic tokens. Neovim 0.11+ shows diagnostics
--- without their message at the line end: `vim.diagnostic.config({ virtual_text = true })`.

---@type vim.lsp.Config
return {
  cmd = { 'sdy-lsp' },
  filetypes = { 'mlir' },
  root_markers = { '.git' },
  init_options = {
    propagation = {
      -- 'off' | 'onDemand' | 'onSave' | 'onChange'
      mode = 'onDemand',
      -- 'pipeline' | 'basic' | 'aggressive' | 'op-priority' | 'user-priority'
      strategy = 'pipeline',
    },
    inlayHints = {
      enable = true,
      perDeviceShapes = true,
      propagatedShardings = true,
      extensions = true,
      -- true: no hints on op results sharded like one of their operands (JAX exports)
      compact = false,
      -- after a propagation run: the collectives each op costs (`⇄ all-gather{"x"} 4 MiB`)
      communication = true,
      -- bytes per device of each value
      memory = false,
    },
    -- GB/s per mesh axis (`['*']`: the others), e.g. { x = 100, ['*'] = 25 }: estimated
    -- times next to the bytes of collectives
    cost = { bandwidth = vim.empty_dict() },
  },
  settings = { sdy = {} },
  -- One set of options: `settings.sdy` overrides `init_options`, and the result is both
  -- the initializationOptions and the `sdy` settings section.
  before_init = function(params, config)
    local sdy = vim.tbl_deep_extend('force', config.init_options or {}, (config.settings or {}).sdy or {})
    params.initializationOptions = sdy
    if config.settings then
      config.settings.sdy = sdy
    end
  end,
}
