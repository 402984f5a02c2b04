// package.json agrees with the code and with the repository's grammars.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { COMMANDS } from '../src/commands';
import { DEFAULTS, ENUMS, SETTING_KEYS } from '../src/settings';

const root = path.resolve(__dirname, '..', '..'); // editors/vscode
const repo = path.resolve(root, '..', '..');
const read = (rel: string) => fs.readFileSync(path.join(root, rel), 'utf8');
const pkg = JSON.parse(read('package.json'));

interface Property {
  type: string | string[];
  default: unknown;
  enum?: string[];
  enumDescriptions?: string[];
  markdownDescription?: string;
}

describe('package.json', () => {
  it('pins vscode-languageclient 9.0.1 for VS Code ^1.82.0, with matching @types/vscode and vscode-jsonrpc', () => {
    assert.equal(pkg.engines.vscode, '^1.82.0');
    assert.equal(pkg.dependencies['vscode-languageclient'], '9.0.1');
    assert.equal(pkg.devDependencies['@types/vscode'], '1.82.0');
    assert.match(pkg.devDependencies['@vscode/vsce'], /^3\.\d+\.\d+$/);
    // The test client speaks the same vscode-jsonrpc as the language client.
    const protocol = JSON.parse(read('node_modules/vscode-languageserver-protocol/package.json'));
    assert.equal(pkg.devDependencies['vscode-jsonrpc'], protocol.dependencies['vscode-jsonrpc']);
    for (const [name, version] of Object.entries({ ...pkg.dependencies, ...pkg.devDependencies })) {
      assert.match(String(version), /^\d+\.\d+\.\d+$/, `${name} is pinned exactly`);
    }
  });

  it('activates on mlir documents and runs out/src/extension.js', () => {
    assert.ok(pkg.activationEvents.includes('onLanguage:mlir'));
    assert.equal(pkg.main, './out/src/extension.js');
    assert.ok(fs.existsSync(path.join(root, 'out', 'src', 'extension.js')), 'compiled');
  });

  it('contributes every setting of settings.ts, with the same defaults and enumerations', () => {
    const props: Record<string, Property> = pkg.contributes.configuration.properties;
    assert.deepEqual(Object.keys(props).sort(), SETTING_KEYS.map((k) => `sdy.${k}`).sort());
    for (const key of SETTING_KEYS) {
      const p = props[`sdy.${key}`];
      assert.deepEqual(p.default, DEFAULTS[key], `default of sdy.${key}`);
      assert.deepEqual(p.enum, ENUMS[key] ? [...ENUMS[key]!] : undefined, `enum of sdy.${key}`);
      if (p.enumDescriptions) assert.equal(p.enumDescriptions.length, p.enum!.length);
      assert.ok(p.markdownDescription, `sdy.${key} is described`);
    }
    assert.deepEqual(props['sdy.propagation.mode'].enum, ['off', 'onDemand', 'onSave', 'onChange']);
    assert.equal(props['sdy.propagation.mode'].default, 'onDemand');
    assert.deepEqual(props['sdy.propagation.strategy'].enum, [
      'pipeline',
      'basic',
      'aggressive',
      'op-priority',
      'user-priority',
    ]);
  });

  it('the server settings are read in remote windows too and restricted in untrusted workspaces', () => {
    const props: Record<string, Property & { scope?: string }> = pkg.contributes.configuration.properties;
    // `machine` / `machine-overridable` settings are read only from the Remote settings in a
    // remote window: the User settings' sdy.server.path would be ignored without a word.
    const restricted = ['sdy.server.path', 'sdy.server.extraArgs'];
    for (const key of restricted) assert.equal(props[key].scope, 'window', key);
    // A workspace setting could point at a program inside the opened folder.
    const trust = pkg.capabilities.untrustedWorkspaces;
    assert.equal(trust.supported, 'limited');
    assert.deepEqual(trust.restrictedConfigurations, restricted);
    assert.ok(trust.description);
  });

  it('mlir files get untruncated inlay hints (VS Code cuts them at 43 characters by default)', () => {
    assert.deepEqual(pkg.contributes.configurationDefaults, { '[mlir]': { 'editor.inlayHints.maximumLength': 0 } });
  });

  it('contributes exactly the commands extension.ts registers', () => {
    const contributed = pkg.contributes.commands.map((c: { command: string }) => c.command).sort();
    assert.deepEqual(contributed, Object.values(COMMANDS).sort());
    const source = read('src/extension.ts');
    for (const key of Object.keys(COMMANDS)) {
      assert.match(source, new RegExp(`registerCommand\\(COMMANDS\\.${key}\\b`), `registers COMMANDS.${key}`);
    }
  });

  it('language mlir for .mlir, with a language configuration (// comments, <> brackets)', () => {
    const [lang] = pkg.contributes.languages;
    assert.equal(lang.id, 'mlir');
    assert.deepEqual(lang.extensions, ['.mlir']);
    const conf = JSON.parse(read(lang.configuration));
    assert.equal(conf.comments.lineComment, '//');
    for (const pair of [['{', '}'], ['[', ']'], ['(', ')'], ['<', '>']]) {
      assert.ok(conf.brackets.some((b: string[]) => b[0] === pair[0] && b[1] === pair[1]), `bracket ${pair}`);
      assert.ok(conf.autoClosingPairs.some((b: { open: string }) => b.open === pair[0]), `auto-closes ${pair[0]}`);
    }
    const word = new RegExp(conf.wordPattern, 'g');
    assert.deepEqual('%0#1 = @mesh #sdy.sharding'.match(word), ['%0#1', '@mesh', '#sdy.sharding']);
  });

  it('grammars: copies of ../../syntaxes, with the scope names package.json declares', () => {
    const grammars: Array<{ scopeName: string; path: string; injectTo?: string[] }> = pkg.contributes.grammars;
    assert.deepEqual(
      grammars.map((g) => g.scopeName),
      ['source.mlir', 'markdown.mlir.codeblock'],
    );
    for (const g of grammars) {
      const copy = read(g.path);
      const original = fs.readFileSync(path.join(repo, 'syntaxes', path.basename(g.path)), 'utf8');
      assert.equal(copy, original, `${g.path} is up to date (npm run build copies it)`);
      assert.equal(JSON.parse(copy).scopeName, g.scopeName);
    }
    assert.deepEqual(grammars[1].injectTo, ['text.html.markdown']);
  });

  it('.vscodeignore keeps sources and tests out of the package', () => {
    const ignore = read('.vscodeignore').split('\n');
    for (const p of ['src/**', 'test/**', 'out/test/**', 'scripts/**']) assert.ok(ignore.includes(p), p);
  });
});
