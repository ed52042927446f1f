// The tray's pure parts: which URLs the window may show, the menu for each hub state, how the hub
// child is started in development and when packaged, which agents are this machine's, and where
// the token comes from.

import { mkdirSync, writeFileSync } from 'node:fs';

import { describe, expect, it } from 'vitest';

import { canonicalPalace, serverDir, tokenPath } from '../../hub/src/registration.js';
import { hubCommand, isLocalAgent, loadTrayConfig } from '../../main/config.js';
import type { HubInfo } from '../../main/ipc-contract.js';
import { isAllowedUrl } from '../../main/navigation.js';
import { trayMenuTemplate, type TrayActions } from '../../main/tray-menu.js';
import { makeTmpDir } from '../helpers/tmp-dir.js';

const noop = (): void => undefined;
const actions: TrayActions = {
  openDashboard: noop,
  startHub: noop,
  stopHub: noop,
  restartHub: noop,
  copy: noop,
  openPalaceFolder: noop,
  openLogs: noop,
  setStartAtLogin: noop,
  quit: noop,
};
const info = (patch: Partial<HubInfo>): HubInfo => ({
  state: 'running',
  url: 'http://127.0.0.1:8765',
  pid: 1,
  token: null,
  palacePath: '/p',
  logPath: '/l',
  restarts: 0,
  message: null,
  waitingTasks: 0,
  ...patch,
});

describe('isAllowedUrl', () => {
  it('allows only the listed origins', () => {
    const allowed = ['http://127.0.0.1:8765', undefined, 'file://'];
    expect(isAllowedUrl('http://127.0.0.1:8765/ui/#/tasks', allowed)).toBe(true);
    expect(isAllowedUrl('http://127.0.0.1:8766/ui/', allowed)).toBe(false);
    expect(isAllowedUrl('https://127.0.0.1:8765/ui/', allowed)).toBe(false);
    expect(isAllowedUrl('https://evil.example/', allowed)).toBe(false);
    expect(isAllowedUrl('file:///app/dist/ui/index.html', allowed)).toBe(true);
    expect(isAllowedUrl('file:///etc/passwd', ['http://127.0.0.1:8765'])).toBe(false);
    expect(isAllowedUrl('javascript:alert(1)', allowed)).toBe(false);
    expect(isAllowedUrl('not a url', allowed)).toBe(false);
  });
});

describe('trayMenuTemplate', () => {
  const find = (items: ReturnType<typeof trayMenuTemplate>, id: string) => items.find((i) => i.id === id);
  it('offers Start only when the hub is not running, and copies only what exists', () => {
    const running = trayMenuTemplate(info({}), false, actions);
    expect([
      find(running, 'start')?.enabled,
      find(running, 'stop')?.enabled,
      find(running, 'restart')?.enabled,
    ]).toEqual([false, true, true]);
    expect(find(running, 'copy-token')?.enabled).toBe(false);
    expect(find(running, 'copy-token')?.label).toContain('loopback');
    expect(find(running, 'copy-config')?.submenu).toHaveLength(6);

    const stopped = trayMenuTemplate(info({ state: 'stopped', url: null, token: 'tok' }), true, actions);
    expect([find(stopped, 'start')?.enabled, find(stopped, 'stop')?.enabled]).toEqual([true, false]);
    expect(find(stopped, 'copy-config')?.enabled).toBe(false);
    expect(find(stopped, 'copy-token')?.enabled).toBe(true);
    expect(find(stopped, 'start-at-login')?.checked).toBe(true);
    expect(find(stopped, 'status')?.label).toBe('Hub stopped');

    const failing = trayMenuTemplate(
      info({
        state: 'error',
        url: null,
        message: 'the hub exited with code 1; restarting in 4 s',
        waitingTasks: 2,
      }),
      false,
      actions,
    );
    expect(find(failing, 'message')?.label).toContain('restarting in 4 s');
    expect(find(failing, 'waiting')?.label).toBe('2 tasks waiting for your agents');
  });
});

describe('tray configuration', () => {
  it('starts the hub with system node in development and with Electron as Node when packaged', () => {
    const tmp = makeTmpDir('palace-traycfg-');
    const config = loadTrayConfig(
      { PALACE_HOME: tmp.path, PALACE_PALACE_PATH: `${tmp.path}/palace`, PATH: '/usr/bin' },
      'Laptop.local',
    );
    const dev = hubCommand(config, {
      packaged: false,
      execPath: '/opt/palace/palace',
      appRoot: '/src/palace',
      nodePath: '/usr/bin/node',
    });
    expect(dev.command).toBe('/usr/bin/node');
    expect(dev.args).toEqual([
      '/src/palace/bin/palace.js',
      '--palace',
      config.palacePath,
      'serve',
      '--host',
      '127.0.0.1',
      '--port',
      '8765',
    ]);
    expect(dev.env.ELECTRON_RUN_AS_NODE).toBeUndefined();
    const packed = hubCommand(config, {
      packaged: true,
      execPath: '/opt/palace/palace',
      appRoot: '/opt/palace/resources/app.asar.unpacked',
    });
    expect(packed.command).toBe('/opt/palace/palace');
    expect(packed.args[0]).toBe('/opt/palace/resources/app.asar.unpacked/bin/palace.js');
    expect(packed.env).toMatchObject({ ELECTRON_RUN_AS_NODE: '1', PATH: '/usr/bin' });
    expect(config.agentPrefix).toBe('laptop-');
    tmp.cleanup();
  });

  it('uses the stored token when no environment token is set, and passes it to the hub by environment', () => {
    const tmp = makeTmpDir('palace-traycfg-');
    const palace = `${tmp.path}/palace`;
    mkdirSync(palace, { recursive: true });
    mkdirSync(serverDir(tmp.path, canonicalPalace(palace)), { recursive: true });
    writeFileSync(tokenPath(tmp.path, canonicalPalace(palace)), 'stored-token\n');
    const stored = loadTrayConfig({ PALACE_HOME: tmp.path, PALACE_PALACE_PATH: palace }, 'box');
    expect(stored.token).toBe('stored-token');
    expect(stored.childEnv.PALACE_MCP_HTTP_TOKEN).toBe('stored-token');
    expect(hubCommand(stored, { packaged: false, execPath: 'x', appRoot: '/a' }).args).not.toContain(
      'stored-token',
    );
    const env = loadTrayConfig(
      {
        PALACE_HOME: tmp.path,
        PALACE_PALACE_PATH: palace,
        PALACE_MCP_HTTP_TOKEN: 'env-token',
        PALACE_TRAY_AGENTS: 'ci-runner, build-bot',
      },
      'box',
    );
    expect(env.token).toBe('env-token');
    expect(env.agents).toEqual(['ci-runner', 'build-bot']);
    expect(() => loadTrayConfig({ PALACE_HOME: tmp.path, PALACE_TRAY_PORT: 'lots' }, 'box')).toThrow(
      /PALACE_TRAY_PORT/,
    );
    tmp.cleanup();
  });

  it("counts <hostname>-<harness> names and listed names as this machine's agents", () => {
    const config = { agents: ['ci-runner'], agentPrefix: 'box-' };
    expect(isLocalAgent(config, 'box-codex')).toBe(true);
    expect(isLocalAgent(config, 'BOX-claude')).toBe(true);
    expect(isLocalAgent(config, 'ci-runner')).toBe(true);
    expect(isLocalAgent(config, 'desk-codex')).toBe(false);
    expect(isLocalAgent(config, '*')).toBe(false);
    expect(isLocalAgent(config, null)).toBe(false);
  });
});
