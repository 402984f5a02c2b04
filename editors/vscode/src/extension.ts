// The VS Code extension: starts sdy-lsp for `mlir` documents and adds the sdy commands.
// The logic that needs no editor (finding the server, reading the settings, command
// arguments and errors) lives in discovery.ts, settings.ts and commands.ts.

import * as vscode from 'vscode';
import {
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  TransportKind,
} from 'vscode-languageclient/node';
import {
  COMMANDS,
  PROPAGATED_SCHEME,
  SERVER_COMMANDS,
  classifyCommandError,
  documentCommandArgs,
  genericallyRegistered,
  propagateSummary,
  propagatedDocumentUri,
  propagatedModuleText,
} from './commands';
import { discover, fallbackWarning, notFoundMessage } from './discovery';
import {
  SettingKey,
  Settings,
  changeAction,
  didChangeConfigurationParams,
  readSettings,
  serverArgs,
  serverOptions,
} from './settings';

const CLIENT_ID = 'sdy'; // vscode-languageclient reads `sdy.trace.server` from this id
const CLIENT_NAME = 'sdy Language Server';

let client: LanguageClient | undefined;
let output: vscode.OutputChannel;
/** Starts and restarts, in order; commands wait for it. */
let lifecycle: Promise<void> = Promise.resolve();

function enqueue(step: () => Promise<void>): Promise<void> {
  lifecycle = lifecycle.then(step, step);
  return lifecycle;
}

function currentSettings(): Settings {
  const config = vscode.workspace.getConfiguration('sdy');
  const { settings, problems } = readSettings((key: SettingKey) => config.get(key));
  for (const p of problems) output.appendLine(p.message);
  return settings;
}

async function startClient(context: vscode.ExtensionContext): Promise<void> {
  const settings = currentSettings();
  const { found, attempts } = await discover({
    settingPath: settings.serverPath,
    extensionPath: context.extensionPath,
    workspaceFolder: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath,
  });
  if (!found) {
    const message = notFoundMessage(attempts, vscode.env.remoteName);
    output.appendLine(message);
    // Not awaited: activation must not wait for the user to click.
    void vscode.window.showErrorMessage(message, 'Open Settings', 'Show Output').then((choice) => {
      if (choice === 'Open Settings') {
        void vscode.commands.executeCommand('workbench.action.openSettings', 'sdy.server.path');
      } else if (choice === 'Show Output') {
        output.show();
      }
    });
    return;
  }
  const warning = fallbackWarning(attempts, found);
  if (warning !== undefined) {
    output.appendLine(warning);
    void vscode.window.showWarningMessage(warning, 'Open Settings').then((choice) => {
      if (choice === 'Open Settings') {
        void vscode.commands.executeCommand('workbench.action.openSettings', 'sdy.server.path');
      }
    });
  }
  output.appendLine(`Starting sdy-lsp ${found.version} (${found.path}, found via ${found.source}).`);

  const run = { command: found.path, args: serverArgs(settings), transport: TransportKind.stdio };
  const server: ServerOptions = { run, debug: run };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: 'file', language: 'mlir' },
      { scheme: 'untitled', language: 'mlir' },
    ],
    initializationOptions: serverOptions(settings),
    outputChannel: output,
    synchronize: { configurationSection: 'sdy' },
    middleware: {
      workspace: {
        // Send the validated object, not VS Code's raw section.
        // Never rejects: a change of sdy.server.path also restarts the client, which may
        // be stopping by now, and the library would report a failed send as an error.
        didChangeConfiguration: async () => {
          const running = client;
          if (running === undefined || !running.isRunning()) return;
          try {
            await running.sendNotification(
              DidChangeConfigurationNotification.type,
              didChangeConfigurationParams(currentSettings()),
            );
          } catch (err) {
            output.appendLine(`sdy: settings not sent to the server: ${(err as Error).message ?? err}`);
          }
        },
        configuration: async (params, token, next) => {
          const raw = await next(params, token);
          if (!Array.isArray(raw)) return raw;
          return params.items.map((item, i) =>
            item.section === 'sdy' ? serverOptions(currentSettings()) : raw[i],
          );
        },
      },
    },
  };
  const c = new LanguageClient(CLIENT_ID, CLIENT_NAME, server, clientOptions);
  keepOwnCommands(c);
  client = c;
  try {
    await c.start();
  } catch (err) {
    client = undefined;
    const message = `sdy: sdy-lsp (${found.path}) failed to start: ${(err as Error).message ?? err}`;
    output.appendLine(message);
    void vscode.window.showErrorMessage(message, 'Show Output').then((choice) => {
      if (choice === 'Show Output') output.show();
    });
  }
}

/**
 * vscode-languageclient registers a VS Code command for every command the server lists in
 * `executeCommandProvider`; the document commands are ours (same names), so keep them out.
 */
function keepOwnCommands(c: LanguageClient): void {
  const feature = c.getFeature(ExecuteCommandRequest.method);
  const register = feature.register.bind(feature);
  feature.register = (data) => {
    const commands = data.registerOptions.commands ?? [];
    register({ ...data, registerOptions: { ...data.registerOptions, commands: genericallyRegistered(commands) } });
  };
}

async function stopClient(): Promise<void> {
  const c = client;
  client = undefined;
  if (c !== undefined) {
    try {
      await c.stop(2000);
    } catch (err) {
      output.appendLine(`sdy: stopping the server: ${(err as Error).message ?? err}`);
    }
  }
}

function restart(context: vscode.ExtensionContext): Promise<void> {
  return enqueue(async () => {
    await stopClient();
    await startClient(context);
  });
}

function advertisedCommands(): readonly string[] | undefined {
  return client?.initializeResult?.capabilities.executeCommandProvider?.commands ?? undefined;
}

/** Runs a server command on the active mlir document; reports errors, returns undefined on failure. */
async function runDocumentCommand(command: string, document: vscode.TextDocument): Promise<unknown> {
  await lifecycle.catch(() => undefined);
  const c = client;
  if (c === undefined || !c.isRunning()) {
    void vscode.window.showErrorMessage('sdy: the sdy-lsp server is not running (see the "sdy Language Server" output).');
    return undefined;
  }
  const args = documentCommandArgs(document.uri.toString(), currentSettings().propagationStrategy);
  try {
    return await c.sendRequest(ExecuteCommandRequest.type, { command, arguments: args });
  } catch (err) {
    const { kind, message } = classifyCommandError(command, err, advertisedCommands());
    output.appendLine(message);
    if (kind === 'unsupported') void vscode.window.showInformationMessage(message);
    else void vscode.window.showErrorMessage(message);
    return undefined;
  }
}

function activeMlirDocument(): vscode.TextDocument | undefined {
  const doc = vscode.window.activeTextEditor?.document;
  if (doc === undefined || doc.languageId !== 'mlir' || doc.uri.scheme === PROPAGATED_SCHEME) {
    void vscode.window.showInformationMessage('sdy: open an MLIR file first.');
    return undefined;
  }
  return doc;
}

/** The read-only documents of `sdy.showPropagatedModule`; their text comes from the server. */
class PropagatedModules implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  set(uri: vscode.Uri, text: string): void {
    this.texts.set(uri.toString(), text);
    this.changed.fire(uri);
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const cached = this.texts.get(uri.toString());
    if (cached !== undefined) return cached;
    // Reopened after a reload: ask the server again.
    // `uri.query` is the source URI, already percent-decoded by vscode.Uri.
    const source = await vscode.workspace.openTextDocument(vscode.Uri.parse(uri.query));
    const result = await runDocumentCommand(SERVER_COMMANDS.showPropagatedModule, source);
    return result === undefined ? '// sdy: the server gave no propagated module.\n' : propagatedModuleText(result);
  }

  isOpen(uri: vscode.Uri): boolean {
    return this.texts.has(uri.toString());
  }

  dispose(): void {
    this.changed.dispose();
  }
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel(CLIENT_NAME);
  const modules = new PropagatedModules();
  context.subscriptions.push(
    output,
    modules,
    vscode.workspace.registerTextDocumentContentProvider(PROPAGATED_SCHEME, modules),
    vscode.commands.registerCommand(COMMANDS.restartServer, () => restart(context)),
    vscode.commands.registerCommand(COMMANDS.propagate, async () => {
      const doc = activeMlirDocument();
      if (doc === undefined) return;
      const result = await runDocumentCommand(SERVER_COMMANDS.propagate, doc);
      const summary = propagateSummary(result);
      if (summary !== undefined) void vscode.window.setStatusBarMessage(`sdy: ${summary}`, 5000);
      // Refresh an open propagated view of this document.
      const view = vscode.Uri.parse(propagatedDocumentUri(doc.uri.toString()));
      if (modules.isOpen(view)) {
        const text = await runDocumentCommand(SERVER_COMMANDS.showPropagatedModule, doc);
        if (text !== undefined) modules.set(view, propagatedModuleText(text));
      }
    }),
    vscode.commands.registerCommand(COMMANDS.showPropagatedModule, async () => {
      const doc = activeMlirDocument();
      if (doc === undefined) return;
      const result = await runDocumentCommand(SERVER_COMMANDS.showPropagatedModule, doc);
      if (result === undefined) return;
      let text: string;
      try {
        text = propagatedModuleText(result);
      } catch (err) {
        void vscode.window.showErrorMessage(`sdy: ${(err as Error).message}`);
        return;
      }
      const view = vscode.Uri.parse(propagatedDocumentUri(doc.uri.toString()));
      modules.set(view, text);
      const shown = await vscode.workspace.openTextDocument(view);
      await vscode.languages.setTextDocumentLanguage(shown, 'mlir');
      await vscode.window.showTextDocument(shown, { viewColumn: vscode.ViewColumn.Beside, preview: true });
    }),
    vscode.commands.registerCommand(COMMANDS.showCommunication, async () => {
      // The module with Shardy's explicit collectives, each function headed by its cost.
      const doc = activeMlirDocument();
      if (doc === undefined) return;
      const result = await runDocumentCommand(SERVER_COMMANDS.showCommunication, doc);
      if (result === undefined) return;
      try {
        const shown = await vscode.workspace.openTextDocument({ content: propagatedModuleText(result), language: 'mlir' });
        await vscode.window.showTextDocument(shown, { viewColumn: vscode.ViewColumn.Beside, preview: true });
      } catch (err) {
        void vscode.window.showErrorMessage(`sdy: ${(err as Error).message}`);
      }
    }),
    vscode.workspace.onDidChangeConfiguration((event) => {
      const action = changeAction((key) => event.affectsConfiguration(`sdy.${key}`));
      if (action === 'restart') void restart(context);
      // 'notify' is sent by the client's configuration middleware above.
    }),
    { dispose: () => void stopClient() },
  );
  await enqueue(() => startClient(context));
}

export async function deactivate(): Promise<void> {
  await stopClient();
}
