// Preloaded by `npm test` for the Markdown syntax test: the Markdown grammar embeds ~70 other
// languages, and vscode-tmgrammar-test warns once for each grammar it was not given. Only
// source.mlir matters here, so drop exactly those warnings and keep every other message.
const warn = console.warn;
console.warn = (...args) => {
  if (typeof args[0] === 'string' && args[0].startsWith('grammar not found for ')) return;
  warn(...args);
};
