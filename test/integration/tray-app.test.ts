// Main-process wiring with a mocked `electron` module (its binary cannot run here) around the real
// parts: the supervisor spawns a real hub, the task watcher reads it over HTTP, and the menu, IPC,
// window security and notifications are driven the way Electron would drive them.

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

vi.mock('electron', async () => (await import('../helpers/fake-electron.js')).fakeElectron);

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

import { isPidAlive } from '../../hub/src/registration.js';
import { loadTrayConfig } from '../../main/config.js';
import { INVOKE_CHANNELS, type HubInfo } from '../../main/ipc-contract.js';
import { createTrayApp, type TrayApp } from '../../main/tray-app.js';
import { fakeState, menuItem, type FakeBrowserWindow } from '../helpers/fake-electron.js';
import {
  REPO_ROOT,
  callJson,
  connectHttpClient,
  makeHubDirs,
  waitUntil,
  type HubDirs,
} from '../helpers/hub.js';

const TOKEN = 'a1'.repeat(32);

describe('tray app wiring (mocked electron, real hub)', { timeout: 60_000 }, () => {
  let dirs: HubDirs;
  let tray: TrayApp;
  let mcp: Client | undefined;

  const menu = () => fakeState.trays[0]?.menu?.template;
  const invoke = (channel: string, url: string, ...args: unknown[]): unknown => {
    const handler = fakeState.handlers.get(channel);
    if (!handler) throw new Error(`no handler for ${channel}`);
    return handler({ senderFrame: { url } }, ...args);
  };

  beforeAll(async () => {
    dirs = makeHubDirs('palace-tray-');
    const config = loadTrayConfig(
      {
        HOME: dirs.home,
        PATH: process.env.PATH,
        PALACE_HOME: dirs.palaceHome,
        PALACE_PALACE_PATH: dirs.palace,
        PALACE_MCP_IDLE_HOURS: '0',
        PALACE_TRAY_PORT: '0',
        PALACE_MCP_HTTP_TOKEN: TOKEN,
      },
      'box.local',
    );
    tray = await createTrayApp({
      config,
      appPath: REPO_ROOT,
      packaged: false,
      execPath: process.execPath,
      supervisor: { healthEveryMs: 200, backoff: { initialMs: 50, maxMs: 500 } },
    });
    await waitUntil(() => tray.info().state === 'running', 'the supervised hub to run', 30_000);
  });

  afterAll(async () => {
    await mcp?.close();
    await tray?.quit();
    dirs?.cleanup();
  });

  it('shows the hub in the tray and builds the whole menu', () => {
    const info = tray.info();
    expect(info).toMatchObject({ state: 'running', token: TOKEN, waitingTasks: 0 });
    expect(info.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(fakeState.trays[0]?.tooltip).toBe(`palace: Hub running · ${info.url?.replace('http://', '')}`);
    expect((fakeState.trays[0]?.image as { path: string }).path).toMatch(/tray-running\.png$/);
    const ids = (menu() ?? []).map((i) => i.id).filter(Boolean);
    expect(ids).toEqual([
      'status',
      'open-dashboard',
      'start',
      'stop',
      'restart',
      'copy-token',
      'copy-config',
      'open-palace',
      'open-logs',
      'start-at-login',
      'quit',
    ]);
    expect(menuItem(menu(), 'start')?.enabled).toBe(false);
    expect(menuItem(menu(), 'stop')?.enabled).toBe(true);
  });

  it('copies the token and each client config, opens folders, and toggles start at login', () => {
    menuItem(menu(), 'copy-token')?.click?.({ checked: false });
    expect(fakeState.clipboard.at(-1)).toBe(TOKEN);
    expect(menuItem(menu(), 'copy-config')?.submenu).toHaveLength(6);
    menuItem(menu(), 'copy-config-claude-code-http')?.click?.({ checked: false });
    expect(fakeState.clipboard.at(-1)).toBe(
      `claude mcp add --transport http palace ${tray.info().url}/mcp --header "Authorization: Bearer ${TOKEN}"`,
    );
    menuItem(menu(), 'copy-config-codex-stdio')?.click?.({ checked: false });
    // Absolute: node as found on the hub's PATH, and this checkout's bin/palace.js (issue 31).
    expect(fakeState.clipboard.at(-1)).toMatch(/\ncommand = "\/[^"]+"\nargs = \["\/[^"]+\/bin\/palace\.js", "mcp", "--palace", /);

    menuItem(menu(), 'open-palace')?.click?.({ checked: false });
    menuItem(menu(), 'open-logs')?.click?.({ checked: false });
    expect(fakeState.openedPaths).toEqual([tray.info().palacePath, tray.info().logPath]);

    menuItem(menu(), 'start-at-login')?.click?.({ checked: true });
    expect(fakeState.openAtLogin).toBe(true);
    expect(menuItem(menu(), 'start-at-login')?.checked).toBe(true);
  });

  it('answers IPC on every contract channel, only to the dashboard', async () => {
    expect([...fakeState.handlers.keys()].sort()).toEqual(Object.keys(INVOKE_CHANNELS).sort());
    const url = tray.info().url as string;
    expect((await invoke('hub:info', `${url}/ui/`)) as HubInfo).toMatchObject({
      url,
      token: TOKEN,
      state: 'running',
    });
    expect(() => invoke('hub:info', 'https://evil.example/')).toThrow(/not the dashboard/);
    expect(() => invoke('hub:info', '')).toThrow(/not the dashboard/);
  });

  it('opens a locked-down dashboard window on the hub, refusing other origins', () => {
    tray.openDashboard('tasks');
    const win = fakeState.windows[0] as FakeBrowserWindow;
    const url = tray.info().url as string;
    expect(win.options.webPreferences).toMatchObject({
      contextIsolation: true,
      nodeIntegration: false,
      sandbox: true,
      webSecurity: true,
    });
    expect(String(win.options.webPreferences?.preload)).toMatch(/dist[/\\]main[/\\]preload\.cjs$/);
    expect(win.loaded).toEqual([`${url}/ui/#/tasks`]);

    const navigate = (target: string): boolean => {
      const preventDefault = vi.fn();
      win.webContents.listeners.get('will-navigate')?.({ url: target, preventDefault });
      return preventDefault.mock.calls.length > 0;
    };
    expect(navigate('https://evil.example/')).toBe(true);
    expect(navigate(`${url}/ui/#/events`)).toBe(false);
    expect(win.webContents.openHandler?.({ url: 'https://evil.example/' })).toEqual({ action: 'deny' });
    const grant = (permission: string): boolean => {
      let granted: boolean | undefined;
      win.webContents.session.permissionHandler?.(win.webContents, permission, (g) => (granted = g));
      return granted as boolean;
    };
    expect(grant('geolocation')).toBe(false);
    expect(grant('clipboard-sanitized-write')).toBe(true);
  });

  it("notifies a task.request for this machine's agents and counts it as waiting", async () => {
    mcp = await connectHttpClient(tray.info().url as string, { token: TOKEN });
    await callJson(mcp, 'palace_event_append', {
      type: 'task.request',
      stream: 'project/demo',
      room: 'delegation',
      from_agent: 'desk-claude',
      to_agent: 'desk-cursor',
      correlation_id: 'task_elsewhere',
      body: 'not for this machine',
    });
    await callJson(mcp, 'palace_event_append', {
      type: 'task.request',
      stream: 'project/demo',
      room: 'delegation',
      from_agent: 'desk-claude',
      to_agent: 'box-codex',
      correlation_id: 'task_fix_login',
      body: 'Goal: fix the login bug\nDone when: tests pass',
    });
    await waitUntil(
      () => fakeState.notifications.find((n) => n.options.title === 'New task for box-codex'),
      'the notification',
    );
    expect(fakeState.notifications.filter((n) => n.options.title.startsWith('New task'))).toHaveLength(1);
    const note = fakeState.notifications.find((n) => n.options.title === 'New task for box-codex');
    expect(note?.shown).toBe(true);
    expect(note?.options.body).toContain('Goal: fix the login bug');
    await waitUntil(() => tray.info().waitingTasks === 1, 'one waiting task');
    expect(fakeState.trays[0]?.tooltip).toContain('1 waiting');
    expect(menuItem(menu(), 'waiting')?.label).toBe('1 task waiting for your agents');

    note?.clickListener?.();
    const win = fakeState.windows[0] as FakeBrowserWindow;
    expect(
      win.webContents.sent.some(([channel, view]) => channel === 'app:navigate' && view === 'tasks'),
    ).toBe(true);

    // A patch on a task this machine's agent requested (e.g. the human at the desk) notifies too.
    await callJson(mcp, 'palace_event_append', {
      type: 'task.request',
      stream: 'project/demo',
      room: 'delegation',
      from_agent: 'box-claude',
      to_agent: 'desk-cursor',
      correlation_id: 'task_review_copy',
      body: 'Goal: review the copy',
    });
    await callJson(mcp, 'palace_patch_submit', {
      correlation_id: 'task_review_copy',
      from_agent: 'desk-cursor',
      content: '--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n',
      body: 'reworded the intro',
    });
    await waitUntil(
      () => fakeState.notifications.find((n) => n.options.title === 'Patch ready on task_review_copy'),
      'the patch notification',
    );
    const patchNote = fakeState.notifications.find(
      (n) => n.options.title === 'Patch ready on task_review_copy',
    );
    expect(patchNote?.shown).toBe(true);
    expect(patchNote?.options.body).toContain('reworded the intro');
  });

  it('restarts the hub over IPC and points the window at its new address', async () => {
    const before = tray.info();
    const win = fakeState.windows[0] as FakeBrowserWindow;
    const after = (await invoke('hub:restart', `${before.url}/ui/`)) as HubInfo;
    expect(after.state).toBe('starting');
    await waitUntil(() => tray.info().state === 'running', 'the restarted hub', 30_000);
    const now = tray.info();
    expect(now.pid).not.toBe(before.pid);
    expect(isPidAlive(before.pid as number)).toBe(false);
    if (now.url !== before.url) expect(win.loaded.at(-1)).toBe(`${now.url}/ui/`);
    expect(win.webContents.sent.filter(([c]) => c === 'hub:changed').at(-1)?.[1]).toMatchObject({
      state: 'running',
      url: now.url,
    });
  });

  it('stops the hub and cleans up on quit', async () => {
    const pid = tray.info().pid as number;
    await mcp?.close();
    mcp = undefined;
    await tray.quit();
    expect(isPidAlive(pid)).toBe(false);
    expect(tray.info().state).toBe('stopped');
    expect(fakeState.quitCalls).toBe(1);
    expect(fakeState.handlers.size).toBe(0);
    expect(fakeState.trays[0]?.destroyed).toBe(true);
  });
});
