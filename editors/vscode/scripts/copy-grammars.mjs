// Copies the TextMate grammars from ../../syntaxes into ./syntaxes, where package.json
// points and from where `vsce package` takes them (a .vsix cannot refer to files outside
// the extension). Run by `npm run build` (and so by `vscode:prepublish`).
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const from = join(here, '..', '..', '..', 'syntaxes');
const to = join(here, '..', 'syntaxes');
mkdirSync(to, { recursive: true });
for (const f of ['mlir.tmLanguage.json', 'mlir-markdown-injection.tmLanguage.json']) {
  copyFileSync(join(from, f), join(to, f));
}
