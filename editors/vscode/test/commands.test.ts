// Command arguments, answers and error handling.

import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  classifyCommandError,
  documentCommandArgs,
  genericallyRegistered,
  propagateSummary,
  propagatedDocumentUri,
  propagatedModuleText,
} from '../src/commands';

describe('commands', () => {
  it('server commands we call ourselves are not registered again by the client library', () => {
    assert.deepEqual(
      genericallyRegistered(['sdy.propagate', 'sdy.showPropagatedModule', 'sdy.somethingElse']),
      ['sdy.somethingElse'],
    );
  });

  it('document commands take one {uri, strategy} argument', () => {
    assert.deepEqual(documentCommandArgs('file:///a.mlir', 'basic'), [{ uri: 'file:///a.mlir', strategy: 'basic' }]);
  });

  it('the propagated-module URI keeps the file name and the source URI', () => {
    const src = 'file:///home/u/my%20models/mlp.mlir';
    const view = propagatedDocumentUri(src);
    assert.ok(view.startsWith('sdy-propagated:/home/u/my%20models/mlp.propagated.mlir?'), view);
    const url = new URL(view);
    assert.equal(decodeURIComponent(url.search.slice(1)), src);
    assert.match(propagatedDocumentUri('untitled:Untitled-1'), /^sdy-propagated:.*\.propagated\.mlir\?untitled%3AUntitled-1$/);
  });

  it('a propagated module may come as a string, {text} or {module}', () => {
    assert.equal(propagatedModuleText('m'), 'm');
    assert.equal(propagatedModuleText({ text: 't' }), 't');
    assert.equal(propagatedModuleText({ module: 'u' }), 'u');
    assert.throws(() => propagatedModuleText(null), /unexpected answer from the server: null/);
    assert.throws(() => propagatedModuleText({ text: 3 }), /unexpected answer/);
  });

  it('sdy.propagate may answer with a message', () => {
    assert.equal(propagateSummary(null), undefined);
    assert.equal(propagateSummary('12 shardings changed'), '12 shardings changed');
    assert.equal(propagateSummary({ message: 'done' }), 'done');
    assert.equal(propagateSummary({}), undefined);
    // The server's own `sdy: ` prefix is dropped: the status bar adds one.
    assert.equal(propagateSummary({ message: 'sdy: propagated 1 chunk (pipeline) of version 1 in 42 ms' }),
      'propagated 1 chunk (pipeline) of version 1 in 42 ms');
    assert.equal(propagateSummary('sdy: '), undefined);
  });

  it('a server without the command: "unsupported", not an error', () => {
    const notFound = { code: -32601, message: 'Method not found' };
    assert.equal(classifyCommandError('sdy.propagate', notFound, undefined).kind, 'unsupported');
    assert.equal(classifyCommandError('sdy.propagate', notFound, ['sdy.propagate']).kind, 'unsupported');
    const invalid = { code: -32602, message: 'Invalid params' };
    assert.equal(classifyCommandError('sdy.propagate', invalid, []).kind, 'unsupported');
    const unknown = { code: -32603, message: 'unknown command sdy.propagate' };
    const r = classifyCommandError('sdy.propagate', unknown, []);
    assert.equal(r.kind, 'unsupported');
    assert.match(r.message, /does not support "sdy.propagate" yet/);
  });

  it('a real failure of an advertised command shows the server\'s message', () => {
    const err = { code: -32603, message: 'the module has errors: unknown axis name "z"' };
    const r = classifyCommandError('sdy.propagate', err, ['sdy.propagate']);
    assert.deepEqual(r, {
      kind: 'failed',
      message: 'sdy-lsp: sdy.propagate failed: the module has errors: unknown axis name "z"',
    });
  });
});
