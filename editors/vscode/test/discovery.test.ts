// Server discovery with fake binaries in a temporary directory.

import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  candidates,
  discover,
  expandHome,
  fallbackWarning,
  findOnPath,
  notFoundMessage,
  probe,
} from '../src/discovery';

const posix = process.platform !== 'win32';

let tmp: string;

function script(rel: string, body: string, mode = 0o755): string {
  const file = path.join(tmp, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode });
  return file;
}

/** A directory with a working `sdy-lsp` printing `version`. */
function goodDir(rel: string, version: string): string {
  script(path.join(rel, 'sdy-lsp'), `echo "sdy-lsp ${version}"`);
  return path.join(tmp, rel);
}

describe('server discovery', { skip: posix ? false : 'fake binaries are shell scripts' }, () => {
  before(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'sdy-discovery-'));
  });
  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  it('expandHome expands ~ and ~/ only', () => {
    assert.equal(expandHome('~', '/home/u'), '/home/u');
    assert.equal(expandHome('~/bin/sdy-lsp', '/home/u'), path.join('/home/u', 'bin/sdy-lsp'));
    assert.equal(expandHome('/opt/sdy-lsp', '/home/u'), '/opt/sdy-lsp');
    assert.equal(expandHome('~other/x', '/home/u'), '~other/x');
    assert.equal(expandHome('a/~/b', '/home/u'), 'a/~/b');
  });

  it('findOnPath: first executable match, skipping non-executable files and empty entries', () => {
    script('path-a/sdy-lsp', 'echo "sdy-lsp 0.0.1"', 0o644); // not executable
    const b = goodDir('path-b', '0.0.2');
    const c = goodDir('path-c', '0.0.3');
    const env = { PATH: ['', path.join(tmp, 'path-a'), b, c].join(':') };
    assert.equal(findOnPath('sdy-lsp', env, 'linux'), path.join(b, 'sdy-lsp'));
    assert.equal(findOnPath('nope', env, 'linux'), undefined);
    assert.equal(findOnPath('sdy-lsp', {}, 'linux'), undefined);
  });

  it('probe: accepts "sdy-lsp <version>"', async () => {
    const r = await probe(path.join(goodDir('probe-ok', '1.2.3'), 'sdy-lsp'));
    assert.deepEqual(r, { ok: true, version: '1.2.3' });
  });

  it('probe: a failing binary is rejected with its status and stderr', async () => {
    const bad = script('probe-fail/sdy-lsp', 'echo "error while loading shared libraries" >&2; exit 3');
    const r = await probe(bad);
    assert.equal(r.ok, false);
    assert.match((r as { reason: string }).reason, /exited with status 3: error while loading shared libraries/);
  });

  it('probe: another program (e.g. mlir-lsp-server) is rejected', async () => {
    const other = script('probe-other/mlir-lsp-server', 'echo "LLVM (http://llvm.org/):"; echo "  LLVM version 22.1.8"');
    const r = await probe(other);
    assert.equal(r.ok, false);
    assert.match((r as { reason: string }).reason, /not "sdy-lsp <version>" \(is this sdy-lsp\?\)/);
  });

  it('probe: a binary that hangs is rejected after the timeout', async () => {
    const hang = script('probe-hang/sdy-lsp', 'exec sleep 30');
    const t0 = Date.now();
    const r = await probe(hang, 300);
    assert.equal(r.ok, false);
    assert.match((r as { reason: string }).reason, /did not answer within 300 ms/);
    assert.ok(Date.now() - t0 < 5000);
  });

  it('probe: a missing file is "not found"', async () => {
    const r = await probe(path.join(tmp, 'does-not-exist'));
    assert.deepEqual(r, { ok: false, reason: 'not found' });
  });

  it('order: setting, then bundled, then PATH', () => {
    const ext = path.join(tmp, 'ext-order');
    goodDir('ext-order/server', '0.5.0');
    const pathDir = goodDir('order-path', '0.6.0');
    const cs = candidates({ settingPath: '/x/sdy-lsp', extensionPath: ext, env: { PATH: pathDir } });
    assert.deepEqual(
      cs.map((c) => [c.source, c.path]),
      [
        ['setting', '/x/sdy-lsp'],
        ['bundled', path.join(ext, 'server', 'sdy-lsp')],
        ['path', path.join(pathDir, 'sdy-lsp')],
      ],
    );
    // No setting: no setting candidate; an empty setting counts as none.
    assert.deepEqual(
      candidates({ settingPath: '  ', extensionPath: ext, env: { PATH: pathDir } }).map((c) => c.source),
      ['bundled', 'path'],
    );
  });

  it('the setting wins when it works (with ~ expanded)', async () => {
    const home = path.join(tmp, 'home');
    goodDir('home/bin', '1.0.0');
    const pathDir = goodDir('setting-path', '2.0.0');
    const { found, attempts } = await discover({
      settingPath: '~/bin/sdy-lsp',
      homedir: home,
      env: { PATH: pathDir },
    });
    assert.deepEqual(found, { path: path.join(home, 'bin', 'sdy-lsp'), version: '1.0.0', source: 'setting' });
    assert.equal(attempts.length, 1);
  });

  it('a bare name in the setting is looked up on PATH; a relative path is taken from the workspace', async () => {
    const pathDir = path.join(tmp, 'bare');
    script('bare/my-sdy-lsp', 'echo "sdy-lsp 3.0.0"');
    const bare = await discover({ settingPath: 'my-sdy-lsp', env: { PATH: pathDir } });
    assert.equal(bare.found?.path, path.join(pathDir, 'my-sdy-lsp'));
    assert.equal(bare.found?.source, 'setting');

    goodDir('ws/target/release', '3.1.0');
    const rel = await discover({ settingPath: 'target/release/sdy-lsp', workspaceFolder: path.join(tmp, 'ws'), env: {} });
    assert.equal(rel.found?.version, '3.1.0');
  });

  it('a broken setting falls back to the bundled binary, with a warning naming both', async () => {
    const broken = script('broken/sdy-lsp', 'exit 1');
    const ext = path.join(tmp, 'ext-fallback');
    goodDir('ext-fallback/server', '4.0.0');
    const { found, attempts } = await discover({ settingPath: broken, extensionPath: ext, env: { PATH: '' } });
    assert.equal(found?.source, 'bundled');
    assert.equal(found?.version, '4.0.0');
    assert.deepEqual(
      attempts.map((a) => [a.source, a.ok]),
      [
        ['setting', false],
        ['bundled', true],
      ],
    );
    const warning = fallbackWarning(attempts, found!);
    assert.ok(warning);
    assert.match(warning!, new RegExp(`sdy.server.path "${broken}": \`--version\` exited with status 1`));
    assert.match(warning!, /using .*ext-fallback\/server\/sdy-lsp \(sdy-lsp 4\.0\.0\)/);
  });

  it('without setting and bundled binary, sdy-lsp on PATH is used', async () => {
    const pathDir = goodDir('only-path', '5.0.0');
    const { found, attempts } = await discover({
      settingPath: null,
      extensionPath: path.join(tmp, 'ext-empty'),
      env: { PATH: pathDir },
    });
    assert.deepEqual(found, { path: path.join(pathDir, 'sdy-lsp'), version: '5.0.0', source: 'path' });
    assert.equal(fallbackWarning(attempts, found!), undefined);
    assert.deepEqual(attempts[0], {
      source: 'bundled',
      origin: path.join(tmp, 'ext-empty', 'server', 'sdy-lsp'),
      path: undefined,
      ok: false,
      reason: 'not bundled with this build of the extension',
    });
  });

  it('nothing works: the message lists every attempt and says what to do', async () => {
    const failing = script('nothing/sdy-lsp', 'echo oops >&2; exit 2');
    const { found, attempts } = await discover({
      settingPath: path.join(tmp, 'missing', 'sdy-lsp'),
      extensionPath: path.join(tmp, 'ext-none'),
      env: { PATH: path.dirname(failing) },
    });
    assert.equal(found, undefined);
    assert.deepEqual(
      attempts.map((a) => [a.source, a.ok, a.reason]),
      [
        ['setting', false, 'no such file'],
        ['bundled', false, 'not bundled with this build of the extension'],
        ['path', false, '`--version` exited with status 2: oops'],
      ],
    );
    const msg = notFoundMessage(attempts);
    assert.match(msg, /cannot start the sdy-lsp language server/);
    assert.match(msg, /missing\/sdy-lsp.*no such file/);
    assert.match(msg, /exited with status 2: oops/);
    assert.match(msg, /"sdy\.server\.path"/);
    assert.match(msg, /cargo install --path server\/sdy-lsp/);
    assert.match(msg, /PATH/);
    assert.doesNotMatch(msg, /remote/);
  });

  it('in a remote window the message says the server and its path are on the remote machine', async () => {
    const { attempts } = await discover({ settingPath: '/home/me/sdy-lsp', env: { PATH: '' } });
    const msg = notFoundMessage(attempts, 'ssh-remote');
    assert.match(msg, /on the remote machine \(ssh-remote\)/);
    assert.match(msg, /\/home\/me\/sdy-lsp.*no such file/);
    assert.match(msg, /a path on that machine \(User, Remote or Workspace settings all apply\)/);
    assert.equal(notFoundMessage(attempts, ''), notFoundMessage(attempts));
  });

  it('a directory or a non-executable file in the setting is rejected before running it', async () => {
    const dir = await discover({ settingPath: tmp, env: {} });
    assert.equal(dir.attempts[0].reason, 'not an executable file');
    const plain = script('plain/sdy-lsp', 'echo "sdy-lsp 9"', 0o644);
    const nx = await discover({ settingPath: plain, env: {} });
    assert.equal(nx.attempts[0].reason, 'not an executable file');
  });
});
