// Finding the sdy-lsp binary. No `vscode` import here: unit-tested with `node --test`.
//
// Order (as rust-analyzer's bootstrap does, plus $PATH, which vscode-mlir lacks):
//   1. the `sdy.server.path` setting (`~` expanded; a bare name is looked up on $PATH;
//      a relative path is taken from the first workspace folder),
//   2. the binary bundled in the extension, `<extension>/server/sdy-lsp[.exe]`,
//   3. `sdy-lsp` on $PATH.
// Every candidate must answer `--version` with `sdy-lsp <version>`; the first that does
// wins. The attempts are kept so that the error message can say what was tried and why
// each candidate was rejected.

import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export type Source = 'setting' | 'bundled' | 'path';

export interface Candidate {
  source: Source;
  /** What the user wrote or where we looked (for messages). */
  origin: string;
  /** The resolved file to run, or undefined when nothing was found there. */
  path?: string;
}

export interface Attempt extends Candidate {
  ok: boolean;
  version?: string;
  /** Why the candidate was rejected. */
  reason?: string;
}

export interface Found {
  path: string;
  version: string;
  source: Source;
}

export interface DiscoveryOptions {
  /** `sdy.server.path`, or null when unset. */
  settingPath: string | null;
  /** The extension's install directory (for the bundled binary). */
  extensionPath?: string;
  /** The first workspace folder, for a relative `sdy.server.path`. */
  workspaceFolder?: string;
  /** Defaults to process.env. */
  env?: NodeJS.ProcessEnv;
  /** Defaults to process.platform. */
  platform?: NodeJS.Platform;
  /** Defaults to os.homedir(). */
  homedir?: string;
  /** Time allowed for `--version`, in ms (default 5000). */
  timeoutMs?: number;
}

export const BINARY_NAME = 'sdy-lsp';

export function exeName(platform: NodeJS.Platform = process.platform): string {
  return platform === 'win32' ? `${BINARY_NAME}.exe` : BINARY_NAME;
}

/** `~` and `~/x` become the home directory; `${env:HOME}`-style variables are not expanded. */
export function expandHome(p: string, homedir: string = os.homedir()): string {
  if (p === '~') return homedir;
  if (p.startsWith('~/') || p.startsWith('~\\')) return path.join(homedir, p.slice(2));
  return p;
}

function isExecutableFile(file: string, platform: NodeJS.Platform): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    if (platform !== 'win32') fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first executable `name` on the PATH of `env`, like `which`. */
export function findOnPath(
  name: string,
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): string | undefined {
  const pathVar = (platform === 'win32' ? (env.Path ?? env.PATH) : env.PATH) ?? '';
  const sep = platform === 'win32' ? ';' : ':';
  const exts =
    platform === 'win32' && path.extname(name) === ''
      ? (env.PATHEXT ?? '.EXE;.CMD;.BAT;.COM').split(';').filter((e) => e !== '')
      : [''];
  for (const dir of pathVar.split(sep)) {
    if (dir === '') continue;
    for (const ext of exts) {
      const file = path.join(dir, name + ext);
      if (isExecutableFile(file, platform)) return file;
    }
  }
  return undefined;
}

function hasSeparator(p: string): boolean {
  return p.includes('/') || p.includes('\\');
}

/** Where to look, in order. A candidate without `path` was looked for and not found. */
export function candidates(opts: DiscoveryOptions): Candidate[] {
  const env = opts.env ?? process.env;
  const platform = opts.platform ?? process.platform;
  const out: Candidate[] = [];
  if (opts.settingPath !== null && opts.settingPath.trim() !== '') {
    const origin = opts.settingPath.trim();
    const expanded = expandHome(origin, opts.homedir ?? os.homedir());
    if (!hasSeparator(expanded)) {
      out.push({ source: 'setting', origin, path: findOnPath(expanded, env, platform) });
    } else {
      const base = opts.workspaceFolder ?? process.cwd();
      out.push({ source: 'setting', origin, path: path.resolve(base, expanded) });
    }
  }
  if (opts.extensionPath !== undefined) {
    const bundled = path.join(opts.extensionPath, 'server', exeName(platform));
    out.push({ source: 'bundled', origin: bundled, path: fs.existsSync(bundled) ? bundled : undefined });
  }
  out.push({ source: 'path', origin: `${exeName(platform)} on $PATH`, path: findOnPath(BINARY_NAME, env, platform) });
  return out;
}

/** Runs `<file> --version`; accepts the answer `sdy-lsp <version>`. */
export function probe(
  file: string,
  timeoutMs = 5000,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ ok: true; version: string } | { ok: false; reason: string }> {
  return new Promise((resolve) => {
    let child;
    try {
      child = execFile(file, ['--version'], { timeout: timeoutMs, env, windowsHide: true }, (err, stdout, stderr) => {
        const out = String(stdout);
        if (err) {
          const e = err as NodeJS.ErrnoException & { killed?: boolean; code?: unknown; signal?: string };
          let reason: string;
          if (e.code === 'ENOENT') reason = 'not found';
          else if (e.code === 'EACCES') reason = 'not executable (permission denied)';
          else if (e.killed || e.signal === 'SIGTERM') reason = `\`--version\` did not answer within ${timeoutMs} ms`;
          else if (typeof e.code === 'number') reason = `\`--version\` exited with status ${e.code}`;
          else reason = `cannot run it: ${e.message}`;
          const detail = String(stderr).trim().split('\n')[0];
          resolve({ ok: false, reason: detail ? `${reason}: ${detail}` : reason });
          return;
        }
        const m = /^sdy-lsp\s+(\S+)/m.exec(out);
        if (!m) {
          const first = out.trim().split('\n')[0] ?? '';
          resolve({
            ok: false,
            reason: `\`--version\` printed ${JSON.stringify(first.slice(0, 80))}, not "sdy-lsp <version>" (is this sdy-lsp?)`,
          });
          return;
        }
        resolve({ ok: true, version: m[1] });
      });
    } catch (err) {
      resolve({ ok: false, reason: `cannot run it: ${(err as Error).message}` });
      return;
    }
    child.on('error', () => {
      /* reported through the callback */
    });
  });
}

/** Tries the candidates in order; returns the first that works and every attempt. */
export async function discover(opts: DiscoveryOptions): Promise<{ found?: Found; attempts: Attempt[] }> {
  const attempts: Attempt[] = [];
  for (const c of candidates(opts)) {
    if (c.path === undefined) {
      attempts.push({
        ...c,
        ok: false,
        reason: c.source === 'bundled' ? 'not bundled with this build of the extension' : 'not found',
      });
      continue;
    }
    if (!isExecutableFile(c.path, opts.platform ?? process.platform)) {
      const exists = fs.existsSync(c.path);
      attempts.push({ ...c, ok: false, reason: exists ? 'not an executable file' : 'no such file' });
      continue;
    }
    const r = await probe(c.path, opts.timeoutMs ?? 5000, opts.env ?? process.env);
    if (r.ok) {
      attempts.push({ ...c, ok: true, version: r.version });
      return { found: { path: c.path, version: r.version, source: c.source }, attempts };
    }
    attempts.push({ ...c, ok: false, reason: r.reason });
  }
  return { attempts };
}

function describe(a: Attempt): string {
  const where = a.source === 'setting' ? `sdy.server.path "${a.origin}"` : a.source === 'bundled' ? 'bundled binary' : a.origin;
  const file = a.path !== undefined && a.path !== a.origin ? ` (${a.path})` : '';
  return `${where}${file}: ${a.reason ?? 'ok'}`;
}

/**
 * The error shown when no candidate works: what was tried, and what to do. `remoteName`
 * is `vscode.env.remoteName`: in a remote window the server must be on the remote machine.
 */
export function notFoundMessage(attempts: Attempt[], remoteName?: string): string {
  const tried = attempts.map(describe).join('; ');
  const install =
    'Put sdy-lsp on the PATH (`pip install` its wheel, or `cargo install --path server/sdy-lsp` ' +
    'in the sdy-lsp repository), or set "sdy.server.path" to the binary.';
  if (remoteName === undefined || remoteName === '') {
    return `sdy: cannot start the sdy-lsp language server. Tried ${tried}. ${install}`;
  }
  return (
    `sdy: cannot start the sdy-lsp language server on the remote machine (${remoteName}). Tried ${tried}. ` +
    `${install} In a remote window the server runs on the remote machine: install it there, and give ` +
    '"sdy.server.path" as a path on that machine (User, Remote or Workspace settings all apply).'
  );
}

/** A warning when the configured path failed but a later candidate was used. */
export function fallbackWarning(attempts: Attempt[], found: Found): string | undefined {
  const setting = attempts.find((a) => a.source === 'setting' && !a.ok);
  if (setting === undefined || found.source === 'setting') return undefined;
  return `sdy: ${describe(setting)}; using ${found.path} (sdy-lsp ${found.version}) instead.`;
}
