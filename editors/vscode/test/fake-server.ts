// A stand-in sdy-lsp that already has the commands and inlay hints the real server will
// get (issue 6), for activation.test.ts: `--version` answers like sdy-lsp, then LSP on
// stdio. Run through a shell wrapper that the test writes.

import * as rpc from 'vscode-jsonrpc/node';

if (process.argv.includes('--version')) {
  process.stdout.write('sdy-lsp 0.0.0-fake\n');
  process.exit(0);
}

const conn = rpc.createMessageConnection(
  new rpc.StreamMessageReader(process.stdin),
  new rpc.StreamMessageWriter(process.stdout),
);

conn.onRequest('initialize', () => ({
  capabilities: {
    textDocumentSync: { openClose: true, change: 2 },
    hoverProvider: true,
    inlayHintProvider: true,
    executeCommandProvider: { commands: ['sdy.propagate', 'sdy.showPropagatedModule', 'sdy.fake.other'] },
  },
  serverInfo: { name: 'sdy-lsp (fake)' },
}));
conn.onNotification('initialized', () => undefined);
conn.onNotification('workspace/didChangeConfiguration', () => undefined);
conn.onNotification('textDocument/didOpen', () => undefined);
conn.onNotification('textDocument/didClose', () => undefined);
conn.onRequest('textDocument/inlayHint', () => [
  { position: { line: 0, character: 5 }, label: ' → tensor<4x4xf32>', kind: 1 },
]);
conn.onRequest('workspace/executeCommand', (p: { command: string; arguments?: Array<{ uri: string; strategy: string }> }) => {
  const arg = p.arguments?.[0];
  if (arg?.uri.includes('broken')) {
    throw new rpc.ResponseError(-32603, 'the module has errors: unknown axis name "z"');
  }
  switch (p.command) {
    case 'sdy.propagate':
      return { message: `sdy: propagated ${arg?.uri.split('/').pop()} with ${arg?.strategy}` };
    case 'sdy.showPropagatedModule':
      return { text: `// propagated from ${arg?.uri}\nsdy.mesh @mesh = <["x"=2]>\n` };
    case 'sdy.fake.other':
      return 'other';
  }
  throw new rpc.ResponseError(rpc.ErrorCodes.MethodNotFound, `unknown command ${p.command}`);
});
conn.onRequest('shutdown', () => null);
conn.onNotification('exit', () => process.exit(0));
conn.listen();
