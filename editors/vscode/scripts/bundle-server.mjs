// Optional step of `npm run package`: puts a server binary into ./server/, where the
// extension looks after the `sdy.server.path` setting and before $PATH.
//
//   SDY_LSP_BUNDLE=<file>  bundle that binary
//   SDY_LSP_BUNDLE=0       bundle nothing (and remove a previously bundled one)
//   unset                  bundle ../../target/release/sdy-lsp when it exists
//
// A .vsix with a binary only works on the platform the binary was built for; publish one
// per platform with `npx vsce package --target linux-x64` (darwin-arm64, win32-x64, ...).
import { chmodSync, copyFileSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const exe = process.platform === 'win32' ? 'sdy-lsp.exe' : 'sdy-lsp';
const dest = join(here, '..', 'server', exe);
const choice = process.env.SDY_LSP_BUNDLE;

rmSync(join(here, '..', 'server'), { recursive: true, force: true });
if (choice === '0') {
  console.log('bundle-server: SDY_LSP_BUNDLE=0, no server bundled');
  process.exit(0);
}
const src = choice ? resolve(choice) : join(here, '..', '..', '..', 'target', 'release', exe);
if (!existsSync(src)) {
  if (choice) {
    console.error(`bundle-server: ${src} does not exist`);
    process.exit(1);
  }
  console.log(`bundle-server: ${src} not built, no server bundled (users need sdy.server.path or $PATH)`);
  process.exit(0);
}
mkdirSync(dirname(dest), { recursive: true });
copyFileSync(src, dest);
chmodSync(dest, 0o755);
console.log(`bundle-server: bundled ${src}`);
