// A small stand-in for the `vscode` module, enough for extension.ts and
// vscode-languageclient 9 to start the real server and exchange messages with it under
// `node --test` (VS Code itself cannot be downloaded here). It records what the extension
// shows and registers, so activation.test.ts can assert on it. Anything not modelled is a
// permissive no-op.

/* eslint-disable @typescript-eslint/no-explicit-any */

export class Disposable {
  constructor(private fn?: () => void) {}
  static from(...ds: Array<{ dispose(): unknown } | undefined>): Disposable {
    return new Disposable(() => ds.forEach((d) => d?.dispose()));
  }
  dispose(): void {
    const f = this.fn;
    this.fn = undefined;
    f?.();
  }
}

export class EventEmitter<T> {
  private listeners = new Set<(e: T) => unknown>();
  event = (listener: (e: T) => unknown, thisArg?: unknown, disposables?: Disposable[]): Disposable => {
    const f = (e: T) => listener.call(thisArg, e);
    this.listeners.add(f);
    const d = new Disposable(() => this.listeners.delete(f));
    disposables?.push(d);
    return d;
  };
  fire(e: T): void {
    for (const l of [...this.listeners]) l(e);
  }
  dispose(): void {
    this.listeners.clear();
  }
}

export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}

export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(a: Position | number, b: Position | number, c?: number, d?: number) {
    if (typeof a === 'number') {
      this.start = new Position(a, b as number);
      this.end = new Position(c!, d!);
    } else {
      this.start = a;
      this.end = b as Position;
    }
  }
}

export class Location {
  constructor(
    readonly uri: Uri,
    readonly range: Range,
  ) {}
}

export enum DiagnosticSeverity {
  Error = 0,
  Warning = 1,
  Information = 2,
  Hint = 3,
}
export enum DiagnosticTag {
  Unnecessary = 1,
  Deprecated = 2,
}
export class Diagnostic {
  source?: string;
  code?: unknown;
  tags?: DiagnosticTag[];
  relatedInformation?: unknown[];
  constructor(
    readonly range: Range,
    readonly message: string,
    readonly severity: DiagnosticSeverity = DiagnosticSeverity.Error,
  ) {}
}
export class DiagnosticRelatedInformation {
  constructor(
    readonly location: Location,
    readonly message: string,
  ) {}
}

export class MarkdownString {
  isTrusted?: boolean;
  supportHtml?: boolean;
  constructor(
    public value = '',
    public supportThemeIcons = false,
  ) {}
  appendText(v: string): this {
    this.value += v;
    return this;
  }
  appendMarkdown(v: string): this {
    this.value += v;
    return this;
  }
  appendCodeblock(code: string, lang = ''): this {
    this.value += `\n\`\`\`${lang}\n${code}\n\`\`\`\n`;
    return this;
  }
}
export class Hover {
  readonly contents: MarkdownString[];
  constructor(
    contents: MarkdownString | MarkdownString[],
    readonly range?: Range,
  ) {
    this.contents = Array.isArray(contents) ? contents : [contents];
  }
}
export class InlayHintLabelPart {
  constructor(readonly value: string) {}
}
export class InlayHint {
  constructor(
    readonly position: Position,
    readonly label: string | InlayHintLabelPart[],
    readonly kind?: number,
  ) {}
}

export class CancellationError extends Error {}
export class CancellationTokenSource {
  private emitter = new EventEmitter<void>();
  token = { isCancellationRequested: false, onCancellationRequested: this.emitter.event };
  cancel(): void {
    this.token.isCancellationRequested = true;
    this.emitter.fire();
  }
  dispose(): void {
    this.emitter.dispose();
  }
}

export class Uri {
  private constructor(
    readonly scheme: string,
    readonly authority: string,
    readonly path: string,
    readonly query: string,
    readonly fragment: string,
  ) {}
  static parse(value: string): Uri {
    const m = /^([a-zA-Z][\w+.-]*):(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/.exec(value);
    if (!m) throw new Error(`mock Uri.parse: ${value}`);
    const d = (s: string | undefined) => decodeURIComponent(s ?? '');
    return new Uri(m[1], d(m[2]), d(m[3]), d(m[4]), d(m[5]));
  }
  static file(path: string): Uri {
    return new Uri('file', '', path, '', '');
  }
  get fsPath(): string {
    return this.path;
  }
  with(change: Partial<{ scheme: string; path: string; query: string }>): Uri {
    return new Uri(change.scheme ?? this.scheme, this.authority, change.path ?? this.path, change.query ?? this.query, this.fragment);
  }
  toString(): string {
    const auth = this.authority !== '' || this.scheme === 'file' ? `//${this.authority}` : '';
    const query = this.query !== '' ? `?${encodeURIComponent(this.query)}` : '';
    return `${this.scheme}:${auth}${encodeURI(this.path)}${query}`;
  }
  toJSON(): unknown {
    return { scheme: this.scheme, path: this.path, query: this.query };
  }
}

export interface MockDocument {
  uri: Uri;
  fileName: string;
  languageId: string;
  version: number;
  isClosed: boolean;
  isDirty: boolean;
  isUntitled: boolean;
  lineCount: number;
  eol: number;
  getText(): string;
  save(): Promise<boolean>;
}

export function makeDocument(uri: Uri, languageId: string, text: string): MockDocument {
  return {
    uri,
    fileName: uri.fsPath,
    languageId,
    version: 1,
    isClosed: false,
    isDirty: false,
    isUntitled: uri.scheme === 'untitled',
    lineCount: text.split('\n').length,
    eol: 1,
    getText: () => text,
    save: async () => true,
  };
}

// ---------------------------------------------------------------------------------------
// Recorded state, for the tests.

export interface Shown {
  kind: 'error' | 'warning' | 'information';
  message: string;
  items: string[];
}

export const state = {
  settings: new Map<string, unknown>(),
  shown: [] as Shown[],
  /** What the next show*Message resolves to (the clicked item). */
  click: undefined as string | undefined,
  commands: new Map<string, (...args: unknown[]) => unknown>(),
  executed: [] as Array<{ command: string; args: unknown[] }>,
  outputs: new Map<string, string[]>(),
  diagnostics: new Map<string, Diagnostic[]>(),
  diagnosticsChanged: new EventEmitter<string>(),
  providers: new Map<string, unknown[]>(),
  contentProviders: new Map<string, unknown>(),
  statusBar: [] as string[],
  shownDocuments: [] as MockDocument[],
  documents: [] as MockDocument[],
  configurationChanged: new EventEmitter<{ affectsConfiguration(section: string): boolean }>(),
  opened: new EventEmitter<MockDocument>(),
  reset(): void {
    this.settings.clear();
    this.shown = [];
    this.click = undefined;
    this.executed = [];
    this.outputs.clear();
    this.diagnostics.clear();
    this.statusBar = [];
    this.shownDocuments = [];
  },
};

function event<T>(): (l: (e: T) => unknown) => Disposable {
  return new EventEmitter<T>().event;
}

/** Any property is a no-op function returning a Disposable (for features not modelled). */
function permissive(known: Record<string, unknown>): any {
  return new Proxy(known, {
    get(target, prop) {
      if (prop in target) return (target as any)[prop];
      if (typeof prop === 'symbol') return undefined;
      if (prop.startsWith('onDid') || prop.startsWith('onWill')) return event();
      return () => new Disposable();
    },
  });
}

function configuration(section?: string) {
  const full = (key: string) => (section ? `${section}.${key}` : key);
  return {
    get: (key: string, def?: unknown) => (state.settings.has(full(key)) ? state.settings.get(full(key)) : def),
    has: (key: string) => state.settings.has(full(key)),
    inspect: () => undefined,
    update: async () => undefined,
  };
}

function show(kind: Shown['kind']) {
  return async (message: string, ...items: unknown[]) => {
    state.shown.push({ kind, message, items: items.filter((i): i is string => typeof i === 'string') });
    const click = state.click;
    state.click = undefined;
    return click;
  };
}

function matches(selector: any, doc: MockDocument): number {
  const filters = Array.isArray(selector) ? selector : [selector];
  for (const f of filters) {
    if (typeof f === 'string' ? f === doc.languageId : (!f.language || f.language === doc.languageId) && (!f.scheme || f.scheme === doc.uri.scheme)) {
      return 10;
    }
  }
  return 0;
}

export const version = '1.82.0';

export const workspace = permissive({
  getConfiguration: configuration,
  get workspaceFolders() {
    return undefined;
  },
  get textDocuments() {
    return state.documents;
  },
  onDidChangeConfiguration: state.configurationChanged.event,
  onDidOpenTextDocument: state.opened.event,
  registerTextDocumentContentProvider(scheme: string, provider: unknown) {
    state.contentProviders.set(scheme, provider);
    return new Disposable(() => state.contentProviders.delete(scheme));
  },
  async openTextDocument(uri: Uri) {
    const doc = state.documents.find((d) => d.uri.toString() === uri.toString());
    if (doc) return doc;
    const provider = state.contentProviders.get(uri.scheme) as any;
    const text = provider ? await provider.provideTextDocumentContent(uri) : '';
    return makeDocument(uri, 'mlir', text);
  },
  createFileSystemWatcher: () => permissive({ dispose() {} }),
});

export const window = permissive({
  createOutputChannel(name: string) {
    const lines: string[] = [];
    state.outputs.set(name, lines);
    return permissive({
      name,
      append: (s: string) => lines.push(s),
      appendLine: (s: string) => lines.push(s),
      replace: (s: string) => lines.splice(0, lines.length, s),
      clear: () => lines.splice(0),
      show() {},
      hide() {},
      dispose() {},
    });
  },
  showErrorMessage: show('error'),
  showWarningMessage: show('warning'),
  showInformationMessage: show('information'),
  setStatusBarMessage(text: string) {
    state.statusBar.push(text);
    return new Disposable();
  },
  activeTextEditor: undefined as unknown,
  async showTextDocument(doc: MockDocument) {
    state.shownDocuments.push(doc);
    return { document: doc };
  },
  async withProgress(_options: unknown, task: (progress: unknown, token: unknown) => unknown) {
    return task({ report() {} }, new CancellationTokenSource().token);
  },
  tabGroups: { all: [], onDidChangeTabs: event(), onDidChangeTabGroups: event() },
});

export const commands = permissive({
  registerCommand(id: string, fn: (...args: unknown[]) => unknown) {
    // As in VS Code: registering a command twice is an error.
    if (state.commands.has(id)) throw new Error(`command '${id}' already exists`);
    state.commands.set(id, fn);
    return new Disposable(() => state.commands.delete(id));
  },
  async executeCommand(command: string, ...args: unknown[]) {
    state.executed.push({ command, args });
    const fn = state.commands.get(command);
    return fn ? fn(...args) : undefined;
  },
});

export const languages = permissive({
  match: matches,
  createDiagnosticCollection(name?: string) {
    return permissive({
      name,
      set(uri: Uri, diags: Diagnostic[] | undefined) {
        state.diagnostics.set(uri.toString(), diags ?? []);
        state.diagnosticsChanged.fire(uri.toString());
      },
      delete(uri: Uri) {
        state.diagnostics.delete(uri.toString());
      },
      get: (uri: Uri) => state.diagnostics.get(uri.toString()),
      has: (uri: Uri) => state.diagnostics.has(uri.toString()),
      clear() {
        state.diagnostics.clear();
      },
      forEach() {},
      dispose() {},
    });
  },
  async setTextDocumentLanguage(doc: MockDocument, languageId: string) {
    doc.languageId = languageId;
    return doc;
  },
});
// register*Provider: record the provider under its kind.
for (const kind of ['Hover', 'Definition', 'InlayHints', 'DocumentSymbol', 'SemanticTokens', 'Completion']) {
  (languages as any)[`register${kind}Provider`] = (_selector: unknown, provider: unknown) => {
    const list = state.providers.get(kind) ?? [];
    list.push(provider);
    state.providers.set(kind, list);
    return new Disposable(() => list.splice(list.indexOf(provider), 1));
  };
}

export const env = permissive({
  appName: 'Visual Studio Code (mock)',
  language: 'en',
  machineId: 'mock',
  uriScheme: 'vscode',
  openExternal: async () => true,
});
export const extensions = permissive({ all: [], getExtension: () => undefined });

export enum ViewColumn {
  Active = -1,
  Beside = -2,
  One = 1,
}
export const ProgressLocation = { SourceControl: 1, Window: 10, Notification: 15 };
export enum InlayHintKind {
  Type = 1,
  Parameter = 2,
}
export enum FileType {
  Unknown = 0,
  File = 1,
  Directory = 2,
  SymbolicLink = 64,
}
export enum TextDocumentSaveReason {
  Manual = 1,
  AfterDelay = 2,
  FocusOut = 3,
}
