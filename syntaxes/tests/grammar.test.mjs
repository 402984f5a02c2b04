// Structural checks of the two grammars, plus a guard against slow regexes on very long lines.
// Run with: node --test tests/grammar.test.mjs   (from syntaxes/, after npm install)
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..');
const require = createRequire(import.meta.url);
const tm = require('vscode-textmate');
const onig = require('vscode-oniguruma');

const readJson = (name) => JSON.parse(fs.readFileSync(path.join(root, name), 'utf8'));
const mlir = readJson('mlir.tmLanguage.json');
const injection = readJson('mlir-markdown-injection.tmLanguage.json');

await onig.loadWASM(fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm')).buffer);
const onigLib = Promise.resolve({
  createOnigScanner: (patterns) => new onig.OnigScanner(patterns),
  createOnigString: (s) => new onig.OnigString(s),
});

// Every rule object reachable from a grammar (top-level patterns, repository, nested patterns).
function* rules(node) {
  if (Array.isArray(node)) {
    for (const x of node) yield* rules(x);
  } else if (node && typeof node === 'object') {
    yield node;
    for (const v of Object.values(node)) yield* rules(v);
  }
}

for (const [file, grammar] of [['mlir.tmLanguage.json', mlir], ['mlir-markdown-injection.tmLanguage.json', injection]]) {
  test(`${file}: local includes resolve`, () => {
    const missing = [];
    for (const r of rules(grammar)) {
      if (typeof r.include === 'string' && r.include.startsWith('#')) {
        if (!(r.include.slice(1) in grammar.repository)) missing.push(r.include);
      }
    }
    assert.deepEqual(missing, []);
  });

  test(`${file}: every regex compiles with oniguruma`, () => {
    for (const r of rules(grammar)) {
      for (const key of ['match', 'begin', 'end', 'while']) {
        if (typeof r[key] === 'string') {
          assert.doesNotThrow(() => new onig.OnigScanner([r[key]]), `${key}: ${r[key]}`);
        }
      }
    }
  });
}

test('source.mlir: scope name and no unused repository rules', () => {
  assert.equal(mlir.scopeName, 'source.mlir');
  const used = new Set();
  for (const r of rules(mlir)) if (typeof r.include === 'string') used.add(r.include.slice(1));
  assert.deepEqual(Object.keys(mlir.repository).filter((k) => !used.has(k)), []);
});

test('markdown injection: selector, fence regex and embedded grammar', () => {
  assert.equal(injection.scopeName, 'markdown.mlir.codeblock');
  assert.equal(injection.injectionSelector, 'L:text.html.markdown');
  const block = injection.repository['mlir-code-block'];
  const fence = new onig.OnigScanner([block.begin]);
  const opens = (line) => fence.findNextMatchSync(line, 0) !== null;
  for (const line of ['```mlir', '~~~mlir', '```MLIR', '  ```mlir', '```mlir {.numbers}', '````mlir']) {
    assert.ok(opens(line), `should open an mlir block: ${line}`);
  }
  for (const line of ['```', '```mlirx', '```python', 'mlir', '`mlir`']) {
    assert.ok(!opens(line), `should not open an mlir block: ${line}`);
  }
  const body = block.patterns[0];
  assert.equal(body.contentName, 'meta.embedded.block.mlir');
  assert.deepEqual(body.patterns, [{ include: 'source.mlir' }]);
});

test('README documents only scopes that the grammar uses', () => {
  const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');
  const grammarText = JSON.stringify(mlir);
  const documented = [...readme.matchAll(/`([a-z][\w.-]*\.mlir)`/g)].map((m) => m[1]);
  assert.ok(documented.length > 20, 'README scope table not found');
  const unknown = documented.filter((s) => s !== 'source.mlir' && !grammarText.includes(`"${s}"`));
  assert.deepEqual(unknown, []);
});

test('long lines tokenize in linear time', async () => {
  const registry = new tm.Registry({
    onigLib,
    loadGrammar: async (scope) => (scope === 'source.mlir' ? mlir : null),
  });
  const grammar = await registry.loadGrammar('source.mlir');
  const arg = (i) =>
    `%arg${i}: tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)2, "y", ?}p1, {}], ` +
    `replicated={"z"}>} loc("params['w${i}']")`;
  const lines = {
    'signature with 5000 sharded arguments': `func.func @main(${Array.from({ length: 5000 }, (_, i) => arg(i)).join(', ')}) {`,
    '1 MB dense hex string': `%0 = stablehlo.constant dense<"0x${'AB'.repeat(500000)}"> : tensor<8xf32>`,
    'unterminated string with a trailing backslash': `%1 = foo "${'a'.repeat(500000)}\\`,
    'unbalanced braces': `%2 = foo ${'{'.repeat(200000)}"x"`,
    'long digit run': `%3 = foo ${'1'.repeat(500000)}x`,
    'long factor keyword': `%4 = foo #sdy.op_sharding_rule<([${'z_1'.repeat(100000)}a])>`,
    'many axis lists': `%5 = foo ${'{"x"'.repeat(100000)}`,
  };
  for (const [what, line] of Object.entries(lines)) {
    const start = performance.now();
    const { tokens } = grammar.tokenizeLine(line, tm.INITIAL, 0);
    const ms = performance.now() - start;
    assert.ok(tokens.length > 0);
    assert.ok(ms < 10000, `${what}: ${line.length} chars took ${Math.round(ms)} ms`);
  }
});
