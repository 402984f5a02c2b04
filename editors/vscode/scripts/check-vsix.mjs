// Checks a packaged .vsix: the files the extension needs at run time are in it, and the
// sources and tests are not. Usage: node scripts/check-vsix.mjs sdy-lsp.vsix
import { readFileSync } from 'node:fs';
import { inflateRawSync } from 'node:zlib';

const file = process.argv[2];
const zip = readFileSync(file);

// The central directory (from the end-of-central-directory record).
const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
if (eocd < 0) throw new Error(`${file}: not a zip file`);
const count = zip.readUInt16LE(eocd + 10);
let at = zip.readUInt32LE(eocd + 16);
const entries = new Map();
for (let i = 0; i < count; i++) {
  const method = zip.readUInt16LE(at + 10);
  const compressed = zip.readUInt32LE(at + 20);
  const size = zip.readUInt32LE(at + 24);
  const nameLen = zip.readUInt16LE(at + 28);
  const extraLen = zip.readUInt16LE(at + 30);
  const commentLen = zip.readUInt16LE(at + 32);
  const local = zip.readUInt32LE(at + 42);
  const name = zip.toString('utf8', at + 46, at + 46 + nameLen);
  const externalAttrs = zip.readUInt32LE(at + 38);
  entries.set(name, { method, compressed, size, local, mode: externalAttrs >>> 16 });
  at += 46 + nameLen + extraLen + commentLen;
}

function read(name) {
  const e = entries.get(name);
  const nameLen = zip.readUInt16LE(e.local + 26);
  const extraLen = zip.readUInt16LE(e.local + 28);
  const start = e.local + 30 + nameLen + extraLen;
  const data = zip.subarray(start, start + e.compressed);
  return e.method === 0 ? data : inflateRawSync(data);
}

const errors = [];
const must = [
  'extension.vsixmanifest',
  'extension/package.json',
  'extension/out/src/extension.js',
  'extension/out/src/discovery.js',
  'extension/out/src/settings.js',
  'extension/out/src/commands.js',
  'extension/language-configuration.json',
  'extension/syntaxes/mlir.tmLanguage.json',
  'extension/syntaxes/mlir-markdown-injection.tmLanguage.json',
  'extension/node_modules/vscode-languageclient/node.js',
  'extension/node_modules/vscode-jsonrpc/package.json',
  'extension/readme.md',
  'extension/LICENSE.txt',
];
for (const name of must) if (!entries.has(name)) errors.push(`missing ${name}`);
for (const name of entries.keys()) {
  if (/^extension\/(src|test|scripts|out\/test)\//.test(name) || /\.ts$/.test(name) && !/\.d\.ts$/.test(name)) {
    errors.push(`should not be packaged: ${name}`);
  }
  if (/node_modules\/(typescript|@vscode\/vsce|@types)\//.test(name)) errors.push(`dev dependency packaged: ${name}`);
}
if (errors.length === 0) {
  const manifest = JSON.parse(read('extension/package.json').toString('utf8'));
  if (manifest.dependencies['vscode-languageclient'] !== '9.0.1') errors.push('vscode-languageclient is not 9.0.1');
  const grammar = JSON.parse(read('extension/syntaxes/mlir.tmLanguage.json').toString('utf8'));
  if (grammar.scopeName !== 'source.mlir') errors.push('the packaged grammar is not source.mlir');
}
const bundled = entries.get('extension/server/sdy-lsp') ?? entries.get('extension/server/sdy-lsp.exe');
if (bundled && entries.has('extension/server/sdy-lsp') && (bundled.mode & 0o111) === 0) {
  errors.push('the bundled server is not executable in the archive');
}
if (errors.length > 0) {
  console.error(`check-vsix: ${file}:\n  ${errors.join('\n  ')}`);
  process.exit(1);
}
console.log(
  `check-vsix: ${file}: ${entries.size} files, ${(zip.length / 1e6).toFixed(1)} MB, ` +
    (bundled ? `server bundled (${(bundled.size / 1e6).toFixed(1)} MB)` : 'no server bundled'),
);
