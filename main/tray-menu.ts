// The tray menu as a template built from the hub's state: a pure function, so the wiring test can
// read it and click its items without Electron.

import type { MenuItemConstructorOptions } from 'electron';

import { clientConfigs, type ClientConfig } from '../hub/src/client-config.js';
import { HUB_STATES, type HubInfo } from './ipc-contract.js';

export interface TrayActions {
  openDashboard(): void;
  startHub(): void;
  stopHub(): void;
  restartHub(): void;
  copy(text: string, what: string): void;
  openPalaceFolder(): void;
  openLogs(): void;
  setStartAtLogin(enabled: boolean): void;
  quit(): void;
}

const CLIENT_NAMES: Record<ClientConfig['client'], string> = {
  'claude-code': 'Claude Code',
  codex: 'Codex',
  cursor: 'Cursor',
};

/** One line about the hub for the menu header and the tooltip. */
export function hubSummary(info: HubInfo): string {
  switch (info.state) {
    case HUB_STATES.running:
      return `Hub running · ${(info.url ?? '').replace(/^https?:\/\//, '')}`;
    case HUB_STATES.starting:
      return 'Hub starting…';
    case HUB_STATES.stopping:
      return 'Hub stopping…';
    case HUB_STATES.stopped:
      return 'Hub stopped';
    case HUB_STATES.error:
      return 'Hub not running: restarting';
  }
}

export function trayMenuTemplate(
  info: HubInfo,
  startAtLogin: boolean,
  actions: TrayActions,
): MenuItemConstructorOptions[] {
  const running = info.state === HUB_STATES.running;
  const active = running || info.state === HUB_STATES.starting || info.state === HUB_STATES.error;
  const configs = info.url
    ? clientConfigs({
        url: info.url,
        token: info.token ?? undefined,
        needsToken: info.token !== null,
        palacePath: info.palacePath,
        stdio: info.stdio,
      })
    : [];
  return [
    { id: 'status', label: hubSummary(info), enabled: false },
    ...(info.message && info.state !== HUB_STATES.running
      ? [{ id: 'message', label: info.message.slice(0, 90), enabled: false }]
      : []),
    ...(info.waitingTasks > 0
      ? [
          {
            id: 'waiting',
            label: `${info.waitingTasks} task${info.waitingTasks === 1 ? '' : 's'} waiting for your agents`,
            click: () => actions.openDashboard(),
          },
        ]
      : []),
    { type: 'separator' },
    {
      id: 'open-dashboard',
      label: 'Open dashboard',
      accelerator: 'CmdOrCtrl+D',
      click: () => actions.openDashboard(),
    },
    { type: 'separator' },
    { id: 'start', label: 'Start hub', enabled: !active, click: () => actions.startHub() },
    { id: 'stop', label: 'Stop hub', enabled: active, click: () => actions.stopHub() },
    { id: 'restart', label: 'Restart hub', enabled: active, click: () => actions.restartHub() },
    { type: 'separator' },
    {
      id: 'copy-token',
      label: info.token ? 'Copy token' : 'Copy token (none: loopback hub)',
      enabled: info.token !== null,
      click: () => info.token && actions.copy(info.token, 'token'),
    },
    {
      id: 'copy-config',
      label: 'Copy client config',
      enabled: configs.length > 0,
      submenu: configs.map((c) => ({
        id: `copy-config-${c.client}-${c.transport}`,
        label: `${CLIENT_NAMES[c.client]} (${c.transport})`,
        click: () => actions.copy(c.text, `${CLIENT_NAMES[c.client]} ${c.transport} config`),
      })),
    },
    { type: 'separator' },
    { id: 'open-palace', label: 'Open palace folder', click: () => actions.openPalaceFolder() },
    { id: 'open-logs', label: 'Open logs', click: () => actions.openLogs() },
    { type: 'separator' },
    {
      id: 'start-at-login',
      label: 'Start at login',
      type: 'checkbox',
      checked: startAtLogin,
      click: (item) => actions.setStartAtLogin(item.checked),
    },
    { type: 'separator' },
    { id: 'quit', label: 'Quit palace', accelerator: 'CmdOrCtrl+Q', click: () => actions.quit() },
  ];
}
