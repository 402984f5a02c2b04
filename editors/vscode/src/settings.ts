// The extension's settings, read through a getter so that this module does not import
// `vscode` and can be unit-tested with `node --test`.
//
// The server sees one object, `ServerOptions`: it is sent as `initializationOptions`, as
// `settings.sdy` of `workspace/didChangeConfiguration` when a setting changes, and as the
// answer to a `workspace/configuration` request for section `sdy`. The Neovim
// configuration (editors/nvim/lsp/sdy_lsp.lua) sends the same object, and both are
// checked against editors/default-init-options.json.

export const PROPAGATION_MODES = ['off', 'onDemand', 'onSave', 'onChange'] as const;
export type PropagationMode = (typeof PROPAGATION_MODES)[number];

export const PROPAGATION_STRATEGIES = [
  'pipeline',
  'basic',
  'aggressive',
  'op-priority',
  'user-priority',
] as const;
export type PropagationStrategy = (typeof PROPAGATION_STRATEGIES)[number];

export const TRACE_LEVELS = ['off', 'messages', 'verbose'] as const;
export type TraceLevel = (typeof TRACE_LEVELS)[number];

/** Every setting of the extension, typed and with its default applied. */
export interface Settings {
  serverPath: string | null;
  serverExtraArgs: string[];
  traceServer: TraceLevel;
  propagationMode: PropagationMode;
  propagationStrategy: PropagationStrategy;
  inlayHintsEnable: boolean;
  inlayHintsPerDeviceShapes: boolean;
  inlayHintsPropagatedShardings: boolean;
  inlayHintsExtensions: boolean;
  inlayHintsCompact: boolean;
  inlayHintsCommunication: boolean;
  inlayHintsMemory: boolean;
  costBandwidth: Record<string, number>;
}

/** What the server receives (see the top of this file). */
export interface ServerOptions {
  propagation: { mode: PropagationMode; strategy: PropagationStrategy };
  inlayHints: {
    enable: boolean;
    perDeviceShapes: boolean;
    propagatedShardings: boolean;
    extensions: boolean;
    compact: boolean;
    communication: boolean;
    memory: boolean;
  };
  cost: { bandwidth: Record<string, number> };
}

/** The setting keys (under the `sdy` section) and their defaults, as in package.json. */
export const DEFAULTS = {
  'server.path': null as string | null,
  'server.extraArgs': [] as string[],
  'trace.server': 'off' as TraceLevel,
  'propagation.mode': 'onDemand' as PropagationMode,
  'propagation.strategy': 'pipeline' as PropagationStrategy,
  'inlayHints.enable': true,
  'inlayHints.perDeviceShapes': true,
  'inlayHints.propagatedShardings': true,
  'inlayHints.extensions': true,
  'inlayHints.compact': false,
  'inlayHints.communication': true,
  'inlayHints.memory': false,
  'cost.bandwidth': {} as Record<string, number>,
};
export type SettingKey = keyof typeof DEFAULTS;
export const SETTING_KEYS = Object.keys(DEFAULTS) as SettingKey[];

/** The enumerations of the enum-valued settings, as in package.json. */
export const ENUMS: Partial<Record<SettingKey, readonly string[]>> = {
  'trace.server': TRACE_LEVELS,
  'propagation.mode': PROPAGATION_MODES,
  'propagation.strategy': PROPAGATION_STRATEGIES,
};

/** Settings whose change needs a new server process. */
export const RESTART_KEYS: readonly SettingKey[] = ['server.path', 'server.extraArgs'];

/** Reads a setting under `sdy` (`get('propagation.mode')`); undefined when unset. */
export type Getter = (key: SettingKey) => unknown;

/** A setting that had an invalid value and was replaced by its default. */
export interface SettingProblem {
  key: SettingKey;
  value: unknown;
  message: string;
}

function oneOf<T extends string>(
  key: SettingKey,
  value: unknown,
  allowed: readonly T[],
  fallback: T,
  problems: SettingProblem[],
): T {
  if (value === undefined || value === null) return fallback;
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  problems.push({
    key,
    value,
    message: `sdy.${key}: ${JSON.stringify(value)} is not one of ${allowed.join(', ')}; using "${fallback}"`,
  });
  return fallback;
}

function bool(key: SettingKey, value: unknown, fallback: boolean, problems: SettingProblem[]): boolean {
  if (value === undefined || value === null) return fallback;
  if (typeof value === 'boolean') return value;
  problems.push({ key, value, message: `sdy.${key}: expected true or false; using ${fallback}` });
  return fallback;
}

/** GB/s per mesh axis name (`*`: the others): an object of positive numbers. */
function bandwidth(key: SettingKey, value: unknown, problems: SettingProblem[]): Record<string, number> {
  if (value === undefined || value === null) return {};
  const ok =
    typeof value === 'object' &&
    !Array.isArray(value) &&
    Object.values(value as object).every((v) => typeof v === 'number' && Number.isFinite(v) && v > 0);
  if (ok) return { ...(value as Record<string, number>) };
  problems.push({ key, value, message: `sdy.${key}: expected {"AXIS": GB/s, ...} with positive numbers; ignoring it` });
  return {};
}

/** Reads and validates every setting; invalid values fall back to their defaults. */
export function readSettings(get: Getter): { settings: Settings; problems: SettingProblem[] } {
  const problems: SettingProblem[] = [];

  let serverPath: string | null = null;
  const rawPath = get('server.path');
  if (typeof rawPath === 'string') {
    serverPath = rawPath.trim() === '' ? null : rawPath.trim();
  } else if (rawPath !== undefined && rawPath !== null) {
    problems.push({ key: 'server.path', value: rawPath, message: 'sdy.server.path: expected a string' });
  }

  let serverExtraArgs: string[] = [];
  const rawArgs = get('server.extraArgs');
  if (Array.isArray(rawArgs) && rawArgs.every((a) => typeof a === 'string')) {
    serverExtraArgs = rawArgs as string[];
  } else if (rawArgs !== undefined && rawArgs !== null) {
    problems.push({
      key: 'server.extraArgs',
      value: rawArgs,
      message: 'sdy.server.extraArgs: expected an array of strings; ignoring it',
    });
  }

  const settings: Settings = {
    serverPath,
    serverExtraArgs,
    traceServer: oneOf('trace.server', get('trace.server'), TRACE_LEVELS, DEFAULTS['trace.server'], problems),
    propagationMode: oneOf(
      'propagation.mode',
      get('propagation.mode'),
      PROPAGATION_MODES,
      DEFAULTS['propagation.mode'],
      problems,
    ),
    propagationStrategy: oneOf(
      'propagation.strategy',
      get('propagation.strategy'),
      PROPAGATION_STRATEGIES,
      DEFAULTS['propagation.strategy'],
      problems,
    ),
    inlayHintsEnable: bool('inlayHints.enable', get('inlayHints.enable'), DEFAULTS['inlayHints.enable'], problems),
    inlayHintsPerDeviceShapes: bool(
      'inlayHints.perDeviceShapes',
      get('inlayHints.perDeviceShapes'),
      DEFAULTS['inlayHints.perDeviceShapes'],
      problems,
    ),
    inlayHintsPropagatedShardings: bool(
      'inlayHints.propagatedShardings',
      get('inlayHints.propagatedShardings'),
      DEFAULTS['inlayHints.propagatedShardings'],
      problems,
    ),
    inlayHintsExtensions: bool(
      'inlayHints.extensions',
      get('inlayHints.extensions'),
      DEFAULTS['inlayHints.extensions'],
      problems,
    ),
    inlayHintsCompact: bool('inlayHints.compact', get('inlayHints.compact'), DEFAULTS['inlayHints.compact'], problems),
    inlayHintsCommunication: bool(
      'inlayHints.communication',
      get('inlayHints.communication'),
      DEFAULTS['inlayHints.communication'],
      problems,
    ),
    inlayHintsMemory: bool('inlayHints.memory', get('inlayHints.memory'), DEFAULTS['inlayHints.memory'], problems),
    costBandwidth: bandwidth('cost.bandwidth', get('cost.bandwidth'), problems),
  };
  return { settings, problems };
}

/** The object the server receives (initializationOptions and didChangeConfiguration). */
export function serverOptions(s: Settings): ServerOptions {
  return {
    propagation: { mode: s.propagationMode, strategy: s.propagationStrategy },
    inlayHints: {
      enable: s.inlayHintsEnable,
      perDeviceShapes: s.inlayHintsPerDeviceShapes,
      propagatedShardings: s.inlayHintsPropagatedShardings,
      extensions: s.inlayHintsExtensions,
      compact: s.inlayHintsCompact,
      communication: s.inlayHintsCommunication,
      memory: s.inlayHintsMemory,
    },
    cost: { bandwidth: s.costBandwidth },
  };
}

/** `workspace/didChangeConfiguration` parameters for the current settings. */
export function didChangeConfigurationParams(s: Settings): { settings: { sdy: ServerOptions } } {
  return { settings: { sdy: serverOptions(s) } };
}

/** The server's command line: `serve` and the extra arguments. */
export function serverArgs(s: Settings): string[] {
  return ['serve', ...s.serverExtraArgs];
}

/** What to do after a configuration change, given which `sdy.*` keys are affected. */
export function changeAction(affected: (key: SettingKey) => boolean): 'restart' | 'notify' | 'none' {
  if (RESTART_KEYS.some(affected)) return 'restart';
  if (SETTING_KEYS.some((k) => !RESTART_KEYS.includes(k) && k !== 'trace.server' && affected(k))) {
    return 'notify';
  }
  return 'none';
}
