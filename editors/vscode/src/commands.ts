// Command identifiers and the plain-data parts of the commands (arguments, results,
// error handling). No `vscode` import: unit-tested with `node --test`.

/** The VS Code commands the extension contributes (package.json `contributes.commands`). */
export const COMMANDS = {
  restartServer: 'sdy.restartServer',
  propagate: 'sdy.propagate',
  showPropagatedModule: 'sdy.showPropagatedModule',
  showCommunication: 'sdy.showCommunication',
} as const;

/**
 * Server commands (`workspace/executeCommand`) the extension calls itself with a document
 * argument. vscode-languageclient registers a VS Code command for every command the
 * server advertises in `executeCommandProvider.commands`; these must be left out of that
 * (same names as ours, which would clash, and they need the active document).
 */
export const SERVER_COMMANDS = {
  propagate: 'sdy.propagate',
  showPropagatedModule: 'sdy.showPropagatedModule',
  showCommunication: 'sdy.showCommunication',
} as const;

const OWN_SERVER_COMMANDS: ReadonlySet<string> = new Set(Object.values(SERVER_COMMANDS));

/** The server-advertised commands that vscode-languageclient may register generically. */
export function genericallyRegistered(advertised: readonly string[]): string[] {
  return advertised.filter((c) => !OWN_SERVER_COMMANDS.has(c));
}

/** The single argument of `sdy.propagate` and `sdy.showPropagatedModule`. */
export interface DocumentCommandArgs {
  uri: string;
  strategy: string;
}

export function documentCommandArgs(uri: string, strategy: string): [DocumentCommandArgs] {
  return [{ uri, strategy }];
}

/** URI scheme of the read-only "propagated module" documents. */
export const PROPAGATED_SCHEME = 'sdy-propagated';

/**
 * The virtual document for `source`: same path with `.propagated.mlir` (so the tab says
 * what it is and the language is mlir), the source URI in the query (percent-encoded;
 * `vscode.Uri#query` gives it back decoded).
 */
export function propagatedDocumentUri(source: string): string {
  let p: string;
  try {
    p = decodeURIComponent(new URL(source).pathname);
  } catch {
    p = '/untitled';
  }
  const base = p.replace(/\.mlir$/, '');
  return `${PROPAGATED_SCHEME}:${encodeURI(base)}.propagated.mlir?${encodeURIComponent(source)}`;
}

/**
 * The text of a `sdy.showPropagatedModule` answer. Accepted: a string, or an object with
 * `text` (or `module`) as a string. Anything else is an error.
 */
export function propagatedModuleText(result: unknown): string {
  if (typeof result === 'string') return result;
  if (result !== null && typeof result === 'object') {
    const r = result as Record<string, unknown>;
    if (typeof r.text === 'string') return r.text;
    if (typeof r.module === 'string') return r.module;
  }
  throw new Error(`unexpected answer from the server: ${JSON.stringify(result)?.slice(0, 200)}`);
}

/** A short human summary of a `sdy.propagate` answer, if it carries one. */
export function propagateSummary(result: unknown): string | undefined {
  let m: unknown = result;
  if (result !== null && typeof result === 'object') m = (result as Record<string, unknown>).message;
  if (typeof m !== 'string') return undefined;
  // The server's messages start with `sdy: `; the status bar adds its own.
  const summary = m.replace(/^sdy:\s*/, '');
  return summary === '' ? undefined : summary;
}

/** JSON-RPC error codes the extension tells apart. */
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;

/**
 * How to report a failed server command: `unsupported` (the server does not have the
 * command: an information message, not an error) or `failed` (show the server's message).
 */
export function classifyCommandError(
  command: string,
  err: unknown,
  advertised: readonly string[] | undefined,
): { kind: 'unsupported' | 'failed'; message: string } {
  const e = err as { code?: unknown; message?: unknown } | undefined;
  const code = typeof e?.code === 'number' ? e.code : undefined;
  const text = typeof e?.message === 'string' ? e.message : String(err);
  const notAdvertised = advertised !== undefined && !advertised.includes(command);
  const unknownCommand = /unknown command|not (supported|implemented)|method not found/i.test(text);
  if (code === METHOD_NOT_FOUND || (notAdvertised && (code === INVALID_PARAMS || unknownCommand))) {
    return {
      kind: 'unsupported',
      message: `This version of sdy-lsp does not support "${command}" yet (it needs a newer server).`,
    };
  }
  return { kind: 'failed', message: `sdy-lsp: ${command} failed: ${text}` };
}
