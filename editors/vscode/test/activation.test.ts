// extension.ts itself, activated inside a mock of the `vscode` module (vscode-mock.ts)
// with the real vscode-languageclient 9.0.1 and the real server: discovery, start,
// initializationOptions and configuration messages (read from the client's verbose
// trace), diagnostics and hover through the client's converters, the commands against a
// server that does not have them yet, restarts, and the "no server" error.
//
// Server: $SDY_LSP_BIN, else ../../target/debug/sdy-lsp; skipped when missing (a failure
// with SDY_LSP_REQUIRE_SERVER=1). A second suite runs against fake-server.ts, which already
// has the server commands and inlay hints, to cover what the real server does not do yet.

import * as fs from 'node:fs';
import Module from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import * as mock from './vscode-mock';

const root = path.resolve(__dirname, '..', '..'); // editors/vscode
const bin = process.env.SDY_LSP_BIN
  ? path.resolve(process.env.SDY_LSP_BIN)
  : path.resolve(root, '..', '..', 'target', 'debug', 'sdy-lsp');
const fixture = path.resolve(root, '..', 'fixtures', 'unknown-axis.mlir');
const missing = `sdy-lsp not found at ${bin}: run \`cargo build -p sdy-lsp\` or set SDY_LSP_BIN`;
if (!fs.existsSync(bin) && process.env.SDY_LSP_REQUIRE_SERVER === '1') throw new Error(missing);
const skip = fs.existsSync(bin) ? false : missing;

const { state } = mock;
const OUTPUT = 'sdy Language Server';

// `require('vscode')` gets the mock; names it does not model are permissive no-ops.
const anything: any = new Proxy(function () {}, {
  get: (_t, p) => (p === 'prototype' ? {} : typeof p === 'symbol' ? undefined : anything),
  apply: () => anything,
  construct: () => ({}),
});
const vscodeModule = new Proxy(mock as any, { get: (t, p) => (p in t ? t[p] : anything) });
const moduleWithLoad = Module as unknown as { _load: (request: string, ...rest: unknown[]) => unknown };
const originalLoad = moduleWithLoad._load;
moduleWithLoad._load = function (request: string, ...rest: unknown[]) {
  return request === 'vscode' ? vscodeModule : originalLoad.call(this, request, ...rest);
};

function output(): string {
  return (state.outputs.get(OUTPUT) ?? []).join('\n');
}

async function until(what: string, cond: () => boolean, ms = 10_000): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}\n--- output ---\n${output()}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function context(extensionPath: string) {
  return { extensionPath, subscriptions: [] as Array<{ dispose(): unknown }> };
}

function positionOf(text: string, needle: string, delta = 0): mock.Position {
  const at = text.indexOf(needle) + delta;
  const before = text.slice(0, at);
  return new mock.Position(before.split('\n').length - 1, at - (before.lastIndexOf('\n') + 1));
}

describe('extension.ts in a mock VS Code, with the real language client and server', { skip }, () => {
  let ext: typeof import('../src/extension');
  let ctx: ReturnType<typeof context>;
  let emptyExtension: string;
  const text = fs.readFileSync(fixture, 'utf8');
  const doc = mock.makeDocument(mock.Uri.file(fixture), 'mlir', text);

  before(async () => {
    ext = require('../src/extension');
    emptyExtension = fs.mkdtempSync(path.join(os.tmpdir(), 'sdy-ext-'));
    state.reset();
    state.settings.set('sdy.server.path', bin);
    state.settings.set('sdy.trace.server', 'verbose');
    ctx = context(emptyExtension);
    await ext.activate(ctx as any);
  });

  after(async () => {
    await ext?.deactivate();
    for (const d of ctx?.subscriptions ?? []) d.dispose();
    fs.rmSync(emptyExtension, { recursive: true, force: true });
  });

  it('finds the server through sdy.server.path and starts it without showing an error', async () => {
    assert.match(output(), /Starting sdy-lsp \S+ \(.*sdy-lsp, found via setting\)/);
    await until('the initialize response', () => /Received response 'initialize - \(0\)'/.test(output()));
    assert.deepEqual(state.shown.filter((s) => s.kind !== 'information'), []);
  });

  it('sends the settings as initializationOptions and settings.sdy (didChangeConfiguration)', async () => {
    const out = output();
    const init = out.slice(out.indexOf("Sending request 'initialize - (0)'"));
    assert.match(init, /"initializationOptions": \{\s*"propagation": \{\s*"mode": "onDemand",\s*"strategy": "pipeline"/);
    await until('didChangeConfiguration', () => /Sending notification 'workspace\/didChangeConfiguration'/.test(output()));
    assert.match(output(), /"settings": \{\s*"sdy": \{\s*"propagation": \{\s*"mode": "onDemand"/);
  });

  it('registers the commands once (no clash with server-advertised commands)', () => {
    for (const c of ['sdy.restartServer', 'sdy.propagate', 'sdy.showPropagatedModule']) {
      assert.ok(state.commands.has(c), c);
    }
  });

  it('didOpen: the client turns publishDiagnostics into a vscode.Diagnostic', async () => {
    state.documents.push(doc);
    state.opened.fire(doc);
    await until('diagnostics', () => (state.diagnostics.get(doc.uri.toString()) ?? []).length > 0);
    const [d] = state.diagnostics.get(doc.uri.toString())!;
    assert.equal(d.message, '\'stablehlo.abs\' op result - unknown axis name: "z"');
    assert.equal(d.severity, mock.DiagnosticSeverity.Error);
    assert.deepEqual(d.range.start, positionOf(text, '{"z"}', 1));
  });

  it('hover: the client\'s provider returns Markdown from the server', async () => {
    const [provider] = state.providers.get('Hover') as Array<{
      provideHover(doc: unknown, pos: mock.Position, token: unknown): Promise<mock.Hover>;
    }>;
    const h = await provider.provideHover(doc, positionOf(text, '%1 :', 1), new mock.CancellationTokenSource().token);
    assert.ok(h instanceof mock.Hover);
    assert.match(h.contents[0].value, /%1/);
    assert.match(h.contents[0].value, /tensor<8x16xf32>/);
  });

  it('sdy.propagate and sdy.showPropagatedModule on a server without them: a message, nothing else', async () => {
    (mock.window as any).activeTextEditor = { document: doc };
    state.shown = [];
    await state.commands.get('sdy.propagate')!();
    await state.commands.get('sdy.showPropagatedModule')!();
    const caps = /"executeCommandProvider"[^}]*"commands": \[([^\]]*)\]/.exec(output());
    if (caps && caps[1].includes('sdy.propagate')) {
      // The server has them now: no error may be shown.
      assert.deepEqual(state.shown.filter((s) => s.kind === 'error'), []);
    } else {
      assert.deepEqual(
        state.shown.map((s) => [s.kind, s.message]),
        [
          ['information', 'This version of sdy-lsp does not support "sdy.propagate" yet (it needs a newer server).'],
          [
            'information',
            'This version of sdy-lsp does not support "sdy.showPropagatedModule" yet (it needs a newer server).',
          ],
        ],
      );
    }
    (mock.window as any).activeTextEditor = undefined;
  });

  it('changing sdy.propagation.mode notifies the server with the new options; no restart', async () => {
    const starts = output().match(/Starting sdy-lsp/g)!.length;
    const sent = output().match(/Sending notification 'workspace\/didChangeConfiguration'/g)!.length;
    state.settings.set('sdy.propagation.mode', 'onChange');
    state.configurationChanged.fire({
      affectsConfiguration: (s: string) => s === 'sdy' || s === 'sdy.propagation' || s === 'sdy.propagation.mode',
    });
    await until(
      'a second didChangeConfiguration',
      () => output().match(/Sending notification 'workspace\/didChangeConfiguration'/g)!.length > sent,
    );
    const last = output().slice(output().lastIndexOf("Sending notification 'workspace/didChangeConfiguration'"));
    assert.match(last, /"mode": "onChange"/);
    assert.equal(output().match(/Starting sdy-lsp/g)!.length, starts);
  });

  it('changing sdy.server.path, or sdy.restartServer, restarts the server', async () => {
    const starts = () => output().match(/Starting sdy-lsp/g)!.length;
    const n = starts();
    state.configurationChanged.fire({ affectsConfiguration: (s: string) => s === 'sdy' || s.startsWith('sdy.server') });
    await until('a restart after the path change', () => starts() === n + 1);
    await state.commands.get('sdy.restartServer')!();
    assert.equal(starts(), n + 2);
    // The restarted client is the one serving: diagnostics again for the open document.
    state.diagnostics.clear();
    await until('diagnostics after the restart', () => (state.diagnostics.get(doc.uri.toString()) ?? []).length === 1);
    assert.deepEqual(state.shown.filter((s) => s.kind === 'error'), []);
  });

  it('no server anywhere: an error naming what was tried, with Open Settings', async () => {
    await ext.deactivate();
    for (const d of ctx.subscriptions.splice(0)) d.dispose();
    const savedPath = process.env.PATH;
    state.reset();
    state.settings.set('sdy.server.path', '~/no/such/sdy-lsp');
    state.click = 'Open Settings';
    process.env.PATH = emptyExtension; // no sdy-lsp on PATH
    try {
      ctx = context(emptyExtension);
      await ext.activate(ctx as any);
    } finally {
      process.env.PATH = savedPath;
    }
    await until('the Open Settings click', () => state.executed.some((e) => e.command === 'workbench.action.openSettings'));
    const [err] = state.shown;
    assert.equal(err.kind, 'error');
    assert.deepEqual(err.items, ['Open Settings', 'Show Output']);
    assert.match(err.message, /cannot start the sdy-lsp language server/);
    assert.match(err.message, new RegExp(`sdy.server.path "~/no/such/sdy-lsp" \\(${os.homedir()}/no/such/sdy-lsp\\): no such file`));
    assert.match(err.message, /bundled binary.*not bundled/);
    assert.match(err.message, /sdy-lsp on \$PATH: not found/);
    assert.deepEqual(state.executed.find((e) => e.command === 'workbench.action.openSettings')!.args, ['sdy.server.path']);
    // The commands are there and say that the server is not running.
    (mock.window as any).activeTextEditor = { document: doc };
    await state.commands.get('sdy.propagate')!();
    (mock.window as any).activeTextEditor = undefined;
    assert.deepEqual(state.shown.at(-1), {
      kind: 'error',
      message: 'sdy: the sdy-lsp server is not running (see the "sdy Language Server" output).',
      items: [],
    });
  });
});

describe('extension.ts in a mock VS Code, against a server that has the commands (fake-server.ts)', () => {
  let ext: typeof import('../src/extension');
  let ctx: ReturnType<typeof context>;
  let dir: string;
  const text = fs.readFileSync(fixture, 'utf8');
  const doc = mock.makeDocument(mock.Uri.file(fixture), 'mlir', text);
  const broken = mock.makeDocument(mock.Uri.file('/tmp/broken.mlir'), 'mlir', text);

  before(async () => {
    ext = require('../src/extension');
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sdy-fake-'));
    // Found as the bundled binary this time: <extension>/server/sdy-lsp.
    fs.mkdirSync(path.join(dir, 'server'));
    const wrapper = path.join(dir, 'server', 'sdy-lsp');
    fs.writeFileSync(wrapper, `#!/bin/sh\nexec "${process.execPath}" "${path.join(__dirname, 'fake-server.js')}" "$@"\n`, {
      mode: 0o755,
    });
    state.reset();
    state.documents.splice(0, state.documents.length, doc, broken);
    ctx = context(dir);
    await ext.activate(ctx as any);
  });

  after(async () => {
    await ext?.deactivate();
    for (const d of ctx?.subscriptions ?? []) d.dispose();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('starts the bundled binary; the advertised sdy.* commands do not clash with the extension\'s', () => {
    assert.match(output(), /Starting sdy-lsp 0\.0\.0-fake \(.*server\/sdy-lsp, found via bundled\)/);
    assert.deepEqual(state.shown, []);
    // The other advertised command is registered by the client library as usual.
    assert.ok(state.commands.has('sdy.fake.other'));
  });

  it('sdy.propagate sends {uri, strategy} and shows the answer in the status bar', async () => {
    (mock.window as any).activeTextEditor = { document: doc };
    await state.commands.get('sdy.propagate')!();
    assert.deepEqual(state.statusBar, ['sdy: propagated unknown-axis.mlir with pipeline']);
    assert.deepEqual(state.shown, []);
  });

  it('sdy.showPropagatedModule opens the server\'s module as a read-only mlir document', async () => {
    (mock.window as any).activeTextEditor = { document: doc };
    await state.commands.get('sdy.showPropagatedModule')!();
    assert.equal(state.shownDocuments.length, 1);
    const shown = state.shownDocuments[0];
    assert.equal(shown.uri.scheme, 'sdy-propagated');
    assert.match(shown.uri.path, /unknown-axis\.propagated\.mlir$/);
    assert.equal(shown.uri.query, doc.uri.toString());
    assert.equal(shown.languageId, 'mlir');
    assert.equal(shown.getText(), `// propagated from ${doc.uri.toString()}\nsdy.mesh @mesh = <["x"=2]>\n`);
  });

  it('a command the server fails shows the server\'s message as an error', async () => {
    (mock.window as any).activeTextEditor = { document: broken };
    await state.commands.get('sdy.propagate')!();
    (mock.window as any).activeTextEditor = undefined;
    assert.deepEqual(state.shown.map((s) => [s.kind, s.message]), [
      ['error', 'sdy-lsp: sdy.propagate failed: the module has errors: unknown axis name "z"'],
    ]);
  });

  it('inlay hints: the client registers a provider and converts the server\'s hints', async () => {
    const [provider] = state.providers.get('InlayHints') as Array<{
      provideInlayHints(doc: unknown, range: mock.Range, token: unknown): Promise<mock.InlayHint[]>;
    }>;
    assert.ok(provider, 'an inlay hint provider');
    const hints = await provider.provideInlayHints(doc, new mock.Range(0, 0, 8, 0), new mock.CancellationTokenSource().token);
    assert.equal(hints.length, 1);
    assert.equal(hints[0].label, ' → tensor<4x4xf32>');
    assert.deepEqual(hints[0].position, new mock.Position(0, 5));
  });
});
