// The real sdy-lsp over stdio, driven the way vscode-languageclient 9 drives it (same
// vscode-jsonrpc 8.2.0, the same initialize parameters that matter, the extension's
// initializationOptions and configuration messages).
//
// Server: $SDY_LSP_BIN, else ../../target/debug/sdy-lsp (built by `cargo build`).
// Skipped, with a message saying so, when the binary is missing (a failure instead when
// SDY_LSP_REQUIRE_SERVER=1).

import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { pathToFileURL } from 'node:url';
import * as rpc from 'vscode-jsonrpc/node';
import { documentCommandArgs, propagatedModuleText, SERVER_COMMANDS } from '../src/commands';
import { didChangeConfigurationParams, readSettings, serverArgs, serverOptions } from '../src/settings';

const root = path.resolve(__dirname, '..', '..'); // editors/vscode
const bin = process.env.SDY_LSP_BIN
  ? path.resolve(process.env.SDY_LSP_BIN)
  : path.resolve(root, '..', '..', 'target', 'debug', 'sdy-lsp');
const fixture = path.resolve(root, '..', 'fixtures', 'unknown-axis.mlir');
const missing = `sdy-lsp not found at ${bin}: run \`cargo build -p sdy-lsp\` or set SDY_LSP_BIN`;
// CI sets SDY_LSP_REQUIRE_SERVER=1: there a missing server is a failure, not a skip.
if (!fs.existsSync(bin) && process.env.SDY_LSP_REQUIRE_SERVER === '1') throw new Error(missing);
const skip = fs.existsSync(bin) ? false : missing;

const TIMEOUT = 10_000;

interface Position {
  line: number;
  character: number;
}
interface Range {
  start: Position;
  end: Position;
}
interface Diagnostic {
  range: Range;
  severity?: number;
  message: string;
  source?: string;
}
interface PublishDiagnosticsParams {
  uri: string;
  version?: number;
  diagnostics: Diagnostic[];
}

/** The position of the `nth` occurrence of `needle` (plus `delta` characters); ASCII text. */
/** The `sdy-lsp opt` pass flag of a `propagation.strategy` setting. */
function strategyFlag(strategy: string): string {
  return strategy === 'pipeline' ? 'sdy-propagation-pipeline' : `sdy-${strategy}-propagate`;
}

function positionOf(text: string, needle: string, delta = 0, nth = 0): Position {
  let at = -1;
  for (let i = 0; i <= nth; i++) {
    at = text.indexOf(needle, at + 1);
    assert.notEqual(at, -1, `fixture has no ${JSON.stringify(needle)}`);
  }
  at += delta;
  const before = text.slice(0, at);
  const line = before.split('\n').length - 1;
  return { line, character: at - (before.lastIndexOf('\n') + 1) };
}

function withTimeout<T>(p: Promise<T>, what: string, ms = TIMEOUT): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    p.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
    }),
  ]);
}

describe('sdy-lsp over stdio (vscode-jsonrpc 8.2.0)', { skip }, () => {
  let proc: ChildProcess;
  let conn: rpc.MessageConnection;
  let stderr = '';
  let exitCode: Promise<number | null>;
  let capabilities: Record<string, unknown>;
  const diagnostics = new Map<string, PublishDiagnosticsParams[]>();
  const diagnosticWaiters: Array<() => void> = [];
  const text = fs.readFileSync(fixture, 'utf8');
  const uri = pathToFileURL(fixture).href;
  const { settings } = readSettings(() => undefined);

  function diagnosticsFor(u: string): Promise<PublishDiagnosticsParams> {
    return withTimeout(
      new Promise((resolve) => {
        const check = (): boolean => {
          const got = diagnostics.get(u);
          if (got && got.length > 0) {
            resolve(got[got.length - 1]);
            return true;
          }
          return false;
        };
        if (!check()) diagnosticWaiters.push(() => void check());
      }),
      `publishDiagnostics for ${u}`,
    );
  }

  before(async () => {
    proc = spawn(bin, serverArgs(settings), { stdio: ['pipe', 'pipe', 'pipe'] });
    proc.stderr!.on('data', (d) => (stderr += String(d)));
    exitCode = new Promise((resolve) => proc.on('exit', (code) => resolve(code)));
    conn = rpc.createMessageConnection(
      new rpc.StreamMessageReader(proc.stdout!),
      new rpc.StreamMessageWriter(proc.stdin!),
    );
    conn.onNotification('textDocument/publishDiagnostics', (p: PublishDiagnosticsParams) => {
      const list = diagnostics.get(p.uri) ?? [];
      list.push(p);
      diagnostics.set(p.uri, list);
      for (const w of diagnosticWaiters.splice(0)) w();
    });
    // Requests a real client answers (the server may send them at any time).
    conn.onRequest('workspace/configuration', (p: { items: Array<{ section?: string }> }) =>
      p.items.map((i) => (i.section === 'sdy' ? serverOptions(settings) : null)),
    );
    conn.onRequest('client/registerCapability', () => null);
    conn.onRequest('window/workDoneProgress/create', () => null);
    conn.onRequest('workspace/inlayHint/refresh', () => null);
    conn.onRequest('workspace/semanticTokens/refresh', () => null);
    conn.onNotification('window/logMessage', () => undefined);
    conn.listen();

    const init = await withTimeout(
      conn.sendRequest<{ capabilities: Record<string, unknown>; serverInfo?: { name: string } }>('initialize', {
        processId: process.pid,
        clientInfo: { name: 'Visual Studio Code', version: '1.82.0' },
        rootUri: pathToFileURL(path.dirname(fixture)).href,
        workspaceFolders: null,
        initializationOptions: serverOptions(settings),
        capabilities: {
          general: { positionEncodings: ['utf-16'] },
          workspace: {
            configuration: true,
            didChangeConfiguration: { dynamicRegistration: true },
            executeCommand: { dynamicRegistration: true },
            inlayHint: { refreshSupport: true },
          },
          textDocument: {
            synchronization: { dynamicRegistration: true, didSave: true },
            hover: { dynamicRegistration: true, contentFormat: ['markdown', 'plaintext'] },
            publishDiagnostics: { relatedInformation: true, versionSupport: false },
            inlayHint: { dynamicRegistration: true, resolveSupport: { properties: ['tooltip'] } },
          },
        },
      }),
      'initialize',
    );
    capabilities = init.capabilities;
    await conn.sendNotification('initialized', {});
    // What the extension sends once it starts (synchronize.configurationSection).
    await conn.sendNotification('workspace/didChangeConfiguration', didChangeConfigurationParams(settings));
    await conn.sendNotification('textDocument/didOpen', {
      textDocument: { uri, languageId: 'mlir', version: 1, text },
    });
  });

  after(async () => {
    if (proc && proc.exitCode === null) proc.kill();
    conn?.dispose();
  });

  it('initialize: UTF-16 positions, incremental sync, hover', () => {
    assert.equal(capabilities.positionEncoding ?? 'utf-16', 'utf-16');
    assert.ok(capabilities.hoverProvider, 'hoverProvider');
    const sync = capabilities.textDocumentSync as { openClose?: boolean; change?: number } | number;
    const change = typeof sync === 'number' ? sync : sync?.change;
    assert.ok(change === 1 || change === 2, `textDocumentSync.change = ${change}`);
    if (typeof sync === 'object') assert.equal(sync.openClose, true);
  });

  it('didOpen a file with an unknown axis: publishDiagnostics has the Shardy message', async () => {
    const p = await diagnosticsFor(uri);
    assert.equal(p.diagnostics.length, 1, JSON.stringify(p.diagnostics));
    const d = p.diagnostics[0];
    assert.equal(d.message, '\'stablehlo.abs\' op result - unknown axis name: "z"');
    assert.equal(d.severity, 1, 'error');
    // The range covers the axis name "z" (with its quotes) in the sharding.
    const start = positionOf(text, '{"z"}', 1);
    assert.deepEqual(d.range, { start, end: { line: start.line, character: start.character + 3 } });
  });

  it('fixing the file (incremental didChange) clears the diagnostics', async () => {
    const at = positionOf(text, '{"z"}', 2);
    diagnostics.delete(uri);
    await conn.sendNotification('textDocument/didChange', {
      textDocument: { uri, version: 2 },
      contentChanges: [{ range: { start: at, end: { line: at.line, character: at.character + 1 } }, text: 'y' }],
    });
    const fixed = await diagnosticsFor(uri);
    assert.deepEqual(fixed.diagnostics, []);
    // And back, so the remaining tests see the fixture's text.
    diagnostics.delete(uri);
    await conn.sendNotification('textDocument/didChange', {
      textDocument: { uri, version: 3 },
      contentChanges: [{ range: { start: at, end: { line: at.line, character: at.character + 1 } }, text: 'z' }],
    });
    const again = await diagnosticsFor(uri);
    assert.equal(again.diagnostics.length, 1);
  });

  it('hover on an SSA value returns Markdown about it', async () => {
    const pos = positionOf(text, '%1 :', 1); // in `return %1 : ...`
    const h = await withTimeout(
      conn.sendRequest<{ contents: { kind: string; value: string }; range?: Range }>('textDocument/hover', {
        textDocument: { uri },
        position: pos,
      }),
      'hover',
    );
    assert.ok(h, 'a hover');
    assert.equal(h.contents.kind, 'markdown');
    assert.match(h.contents.value, /%1/);
    assert.match(h.contents.value, /tensor<8x16xf32>/);
    if (h.range) assert.equal(h.range.start.line, pos.line);
  });

  it('hover on a #sdy.sharding explains it in Markdown (mesh, per-dimension table)', async () => {
    const pos = positionOf(text, '#sdy.sharding<@mesh, [{"x"}', 5);
    const h = await withTimeout(
      conn.sendRequest<{ contents: { kind: string; value: string } } | null>('textDocument/hover', {
        textDocument: { uri },
        position: pos,
      }),
      'hover',
    );
    assert.ok(h, 'a hover on the sharding');
    assert.equal(h.contents.kind, 'markdown');
    const md = h.contents.value;
    assert.match(md, /%arg0/);
    assert.match(md, /@mesh/);
    assert.match(md, /^\|.*\|$/m, 'a Markdown table');
    assert.match(md, /tensor<4x4xf32>/, 'the per-device shape (8/2 x 16/4)');
    // The same text as the CLI (what the README's screenshot is rendered from).
    const cli = execFileSync(bin, ['explain', '--markdown', `${fixture}:${pos.line + 1}:${pos.character + 1}`], { encoding: 'utf8' });
    assert.equal(md.trim(), cli.trim());
  });

  it('inlay hints: advertised, answered, inside the file', async () => {
    const lines = text.split('\n');
    const range = { start: { line: 0, character: 0 }, end: { line: lines.length - 1, character: 0 } };
    let result: unknown;
    let error: { code?: number; message?: string } | undefined;
    try {
      result = await withTimeout(
        conn.sendRequest('textDocument/inlayHint', { textDocument: { uri }, range }),
        'inlayHint',
      );
    } catch (err) {
      error = err as { code?: number; message?: string };
    }
    assert.ok(capabilities.inlayHintProvider, 'inlayHintProvider advertised');
    assert.equal(error, undefined, `inlayHint failed: ${error?.message}`);
    assert.ok(Array.isArray(result), 'an array of hints');
    const hints = result as Array<{ position: Position; label: string | Array<{ value: string }> }>;
    assert.ok(hints.length > 0, 'at least one hint on a file with shardings');
    for (const h of hints) {
      assert.ok(h.position.line >= 0 && h.position.line < lines.length, 'hint inside the file');
      assert.ok(h.position.character <= lines[h.position.line].length, 'hint inside its line');
      const label = typeof h.label === 'string' ? h.label : h.label.map((p) => p.value).join('');
      assert.ok(label.trim().length > 0, 'non-empty label');
    }
    // Still alive and answering.
    const h = await conn.sendRequest('textDocument/hover', { textDocument: { uri }, position: positionOf(text, '%1 :', 1) });
    assert.ok(h);
  });

  it('sdy.propagate (then its inlay hints) / sdy.showPropagatedModule (= sdy-lsp opt): advertised and carried out', async () => {
    // On a valid copy of the fixture ("z" -> "y"), under another URI.
    const validUri = uri.replace(/\.mlir$/, '-valid.mlir');
    const validText = text.replace('{"z"}', '{"y"}');
    await conn.sendNotification('textDocument/didOpen', {
      textDocument: { uri: validUri, languageId: 'mlir', version: 1, text: validText },
    });
    // After `sdy.propagate`: the inferred sharding of `%1` as an inlay hint, with the
    // explanation as its resolved tooltip.
    const checkPropagatedHints = async (doc: string) => {
      const lines = validText.split('\n');
      const range = { start: { line: 0, character: 0 }, end: { line: lines.length - 1, character: 0 } };
      type Hint = { position: Position; label: string; data?: unknown; tooltip?: { value: string } };
      const hints = await withTimeout(
        conn.sendRequest<Hint[]>('textDocument/inlayHint', { textDocument: { uri: doc }, range }),
        'inlayHint',
      );
      const at = positionOf(validText, '%1 =', 1);
      const hint = hints.find((h) => h.position.line === at.line && h.label === '[{"y"}, {}]');
      assert.ok(hint, `a propagated sharding after %1: ${JSON.stringify(hints)}`);
      const resolved = await withTimeout(conn.sendRequest<Hint>('inlayHint/resolve', hint), 'inlayHint/resolve');
      assert.match(resolved.tooltip?.value ?? '', /Propagated/);
    };
    assert.deepEqual((await diagnosticsFor(validUri)).diagnostics, []);
    const provider = capabilities.executeCommandProvider as { commands?: string[] } | undefined;
    const advertised = provider?.commands ?? [];
    for (const command of [SERVER_COMMANDS.propagate, SERVER_COMMANDS.showPropagatedModule]) {
      let result: unknown;
      let error: unknown;
      try {
        result = await withTimeout(
          conn.sendRequest('workspace/executeCommand', {
            command,
            arguments: documentCommandArgs(validUri, settings.propagationStrategy),
          }),
          command,
        );
      } catch (err) {
        error = err;
      }
      if (advertised.includes(command)) {
        assert.equal(error, undefined, `${command} failed: ${(error as Error)?.message}`);
        if (command === SERVER_COMMANDS.propagate) {
          assert.equal((result as { version?: number }).version, 1, JSON.stringify(result));
          await checkPropagatedHints(validUri);
        }
        if (command === SERVER_COMMANDS.showPropagatedModule) {
          const module = propagatedModuleText(result);
          assert.match(module, /sdy\.mesh @mesh/);
          assert.match(module, /func\.func @main/);
          // The virtual document is what `sdy-lsp opt` prints with the same pass.
          const opt = execFileSync(bin, ['opt', '-', `-${strategyFlag(settings.propagationStrategy)}`], {
            encoding: 'utf8',
            input: validText,
          });
          assert.equal(module, opt);
        }
      } else {
        assert.fail(`${command} is not advertised (${advertised.join(', ')})`);
      }
    }
    await conn.sendNotification('textDocument/didClose', { textDocument: { uri: validUri } });
  });

  it('shutdown and exit end the process with status 0', async () => {
    await withTimeout(conn.sendRequest('shutdown'), 'shutdown');
    await conn.sendNotification('exit');
    const code = await withTimeout(exitCode, 'the process to exit', 5000);
    assert.equal(code, 0, `exit status; stderr:\n${stderr}`);
  });
});
