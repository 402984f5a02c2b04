// Settings: defaults, validation, what the server receives, when to restart.

import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  DEFAULTS,
  SettingKey,
  changeAction,
  didChangeConfigurationParams,
  readSettings,
  serverArgs,
  serverOptions,
} from '../src/settings';

const editors = path.resolve(__dirname, '..', '..', '..'); // editors/

function getter(values: Partial<Record<SettingKey, unknown>>) {
  return (key: SettingKey) => values[key];
}

describe('settings', () => {
  it('nothing set: the defaults, and the server gets editors/default-init-options.json', () => {
    const { settings, problems } = readSettings(getter({}));
    assert.deepEqual(problems, []);
    assert.deepEqual(settings, {
      serverPath: null,
      serverExtraArgs: [],
      traceServer: 'off',
      propagationMode: 'onDemand',
      propagationStrategy: 'pipeline',
      inlayHintsEnable: true,
      inlayHintsPerDeviceShapes: true,
      inlayHintsPropagatedShardings: true,
      inlayHintsExtensions: true,
      inlayHintsCompact: false,
      inlayHintsCommunication: true,
      inlayHintsMemory: false,
      costBandwidth: {},
    });
    const shared = JSON.parse(fs.readFileSync(path.join(editors, 'default-init-options.json'), 'utf8'));
    assert.deepEqual(serverOptions(settings), shared);
  });

  it('VS Code reports unset settings as their package.json defaults: same result', () => {
    const { settings, problems } = readSettings(getter(DEFAULTS));
    assert.deepEqual(problems, []);
    assert.deepEqual(settings, readSettings(getter({})).settings);
  });

  it('every setting is read and reaches the server', () => {
    const { settings, problems } = readSettings(
      getter({
        'server.path': ' ~/bin/sdy-lsp ',
        'server.extraArgs': ['--log', 'x'],
        'trace.server': 'verbose',
        'propagation.mode': 'onChange',
        'propagation.strategy': 'op-priority',
        'inlayHints.enable': false,
        'inlayHints.perDeviceShapes': false,
        'inlayHints.propagatedShardings': true,
        'inlayHints.extensions': false,
        'inlayHints.compact': true,
        'inlayHints.communication': false,
        'inlayHints.memory': true,
        'cost.bandwidth': { x: 100, '*': 12.5 },
      }),
    );
    assert.deepEqual(problems, []);
    assert.equal(settings.serverPath, '~/bin/sdy-lsp');
    assert.deepEqual(serverArgs(settings), ['serve', '--log', 'x']);
    assert.equal(settings.traceServer, 'verbose');
    const expected = {
      propagation: { mode: 'onChange', strategy: 'op-priority' },
      inlayHints: {
        enable: false,
        perDeviceShapes: false,
        propagatedShardings: true,
        extensions: false,
        compact: true,
        communication: false,
        memory: true,
      },
      cost: { bandwidth: { x: 100, '*': 12.5 } },
    };
    assert.deepEqual(serverOptions(settings), expected);
    assert.deepEqual(didChangeConfigurationParams(settings), { settings: { sdy: expected } });
  });

  it('invalid values fall back to the defaults, each with a message', () => {
    const { settings, problems } = readSettings(
      getter({
        'server.path': 42,
        'server.extraArgs': ['ok', 3],
        'propagation.mode': 'always',
        'propagation.strategy': 'Aggressive',
        'inlayHints.enable': 'yes',
        'cost.bandwidth': { x: 0 },
      }),
    );
    assert.equal(settings.serverPath, null);
    assert.deepEqual(settings.serverExtraArgs, []);
    assert.equal(settings.propagationMode, 'onDemand');
    assert.equal(settings.propagationStrategy, 'pipeline');
    assert.equal(settings.inlayHintsEnable, true);
    assert.deepEqual(settings.costBandwidth, {});
    assert.deepEqual(
      problems.map((p) => p.key),
      ['server.path', 'server.extraArgs', 'propagation.mode', 'propagation.strategy', 'inlayHints.enable', 'cost.bandwidth'],
    );
    assert.match(problems[2].message, /sdy\.propagation\.mode: "always" is not one of off, onDemand, onSave, onChange/);
  });

  it('an empty server.path means unset', () => {
    assert.equal(readSettings(getter({ 'server.path': '' })).settings.serverPath, null);
    assert.equal(readSettings(getter({ 'server.path': null })).settings.serverPath, null);
  });

  it('server.path and server.extraArgs restart the server; the others are sent to it; trace is the client\'s', () => {
    const only = (k: SettingKey) => (key: SettingKey) => key === k;
    assert.equal(changeAction(only('server.path')), 'restart');
    assert.equal(changeAction(only('server.extraArgs')), 'restart');
    assert.equal(changeAction(only('propagation.mode')), 'notify');
    assert.equal(changeAction(only('propagation.strategy')), 'notify');
    assert.equal(changeAction(only('inlayHints.perDeviceShapes')), 'notify');
    assert.equal(changeAction(only('inlayHints.compact')), 'notify');
    assert.equal(changeAction(only('trace.server')), 'none');
    assert.equal(changeAction(() => false), 'none');
  });
});
