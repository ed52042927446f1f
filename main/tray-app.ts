// Wires the tray app: supervisor, file watchers, task watcher, tray icon and menu, the dashboard
// window and IPC. Main supervises and relays shell concerns; it never opens the palace's files, and
// the dashboard reads its data from the hub itself.

import { existsSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

import {
  app,
  clipboard,
  ipcMain,
  Menu,
  nativeImage,
  Notification,
  shell,
  Tray,
  type BrowserWindow,
} from 'electron';

import { createHubClient } from '../hub/src/client/hub-client.js';
import type { LogEvent } from '../hub/src/core/types.js';
import { readLiveRegistration } from '../hub/src/registration.js';
import { hubCommand, isLocalAgent, type TrayConfig } from './config.js';
import { watchHubFiles, type HubFileWatcher } from './file-watchers.js';
import type { HubInfo, HubState, ViewId } from './ipc-contract.js';
import { registerIpc, sendToRenderer } from './ipc.js';
import { isAllowedUrl, originOf } from './navigation.js';
import { createRotatingLog } from './rotating-log.js';
import { HubSupervisor, type SupervisorOptions } from './supervisor.js';
import { TaskWatcher } from './task-watcher.js';
import { hubSummary, trayMenuTemplate, type TrayActions } from './tray-menu.js';
import { createDashboardWindow, hardenContents, restrictPermissions } from './window.js';

export interface TrayAppInput {
  config: TrayConfig;
  /** app.getAppPath(): where dist/, assets/ and bin/ are (inside app.asar when packaged). */
  appPath: string;
  packaged: boolean;
  execPath: string;
  /** Supervisor tuning (tests shorten the delays). */
  supervisor?: Partial<
    Pick<SupervisorOptions, 'backoff' | 'stableAfterMs' | 'healthEveryMs' | 'stopGraceMs'>
  >;
}

export interface TrayApp {
  info(): HubInfo;
  supervisor: HubSupervisor;
  tray: Tray;
  openDashboard(view?: ViewId): void;
  window(): BrowserWindow | undefined;
  quit(): Promise<void>;
}

/** `name` as an absolute path: as is when it has a slash, else the first match on `path` (else as is). */
export function onPath(name: string, path: string | undefined): string {
  if (isAbsolute(name) || name.includes('/') || name.includes('\\')) return name;
  for (const dir of (path ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, process.platform === 'win32' ? `${name}.exe` : name);
    if (existsSync(candidate)) return candidate;
  }
  return name;
}

/** Unpacked files (bin/, dist/hub, native modules) live beside app.asar in a packaged app. */
function unpackedRoot(appPath: string, packaged: boolean): string {
  return packaged ? appPath.replace(/app\.asar$/, 'app.asar.unpacked') : appPath;
}

export async function createTrayApp(input: TrayAppInput): Promise<TrayApp> {
  const { config, appPath } = input;
  const log = createRotatingLog({ path: join(config.logDir, 'hub.log') });
  const command = hubCommand(config, {
    packaged: input.packaged,
    execPath: input.execPath,
    appRoot: unpackedRoot(appPath, input.packaged),
  });
  // The stdio configs must work pasted into a client with another PATH: name node by its absolute path.
  const stdioExecutable = onPath(command.command, command.env.PATH);
  const readRegistration = () => readLiveRegistration(config.palace.home, config.palacePath);
  const supervisor = new HubSupervisor({ ...command, readRegistration, log, ...input.supervisor });
  const preloadPath = join(appPath, 'dist', 'main', 'preload.cjs');
  const fallbackPage = join(appPath, 'dist', 'ui', 'index.html');
  const iconPath = join(appPath, 'assets', 'icon.png');
  let waiting = 0;
  let win: BrowserWindow | undefined;
  let quitting = false;

  const info = (): HubInfo => {
    const s = supervisor.status();
    return {
      state: s.state,
      url: s.url,
      pid: s.pid,
      token: config.token ?? null,
      palacePath: config.palacePath,
      logPath: log.path,
      restarts: s.restarts,
      message: s.message,
      waitingTasks: waiting,
      // The hub's own command minus its `--palace … serve …` arguments: node (or Electron as node) and bin/palace.js.
      stdio: {
        command: stdioExecutable,
        args: command.args.slice(0, 1),
        ...(command.env.ELECTRON_RUN_AS_NODE ? { env: { ELECTRON_RUN_AS_NODE: '1' } } : {}),
      },
    };
  };
  const dashboardUrl = (): string | undefined => {
    const url = info().url;
    if (config.devServerUrl) return config.devServerUrl;
    return url ? `${url}/ui/` : undefined;
  };
  const allowedOrigins = (): (string | undefined)[] => [
    info().url ?? undefined,
    config.devServerUrl,
    'file://',
  ];
  const isTrustedSender = (url: string): boolean => isAllowedUrl(url, allowedOrigins());

  app.on('web-contents-created', (_event, contents) => hardenContents(contents, allowedOrigins));

  const trayImage = (state: HubState) =>
    nativeImage.createFromPath(
      join(appPath, 'assets', 'tray', `tray-${state === 'stopping' ? 'starting' : state}.png`),
    );
  const tray = new Tray(trayImage('stopped'));

  const copy = (text: string, what: string): void => {
    clipboard.writeText(text);
    if (Notification.isSupported())
      new Notification({ title: 'palace', body: `Copied ${what}`, silent: true }).show();
  };
  const actions: TrayActions = {
    openDashboard: () => openDashboard(),
    startHub: () => supervisor.start(),
    stopHub: () => void supervisor.stop(),
    restartHub: () => void supervisor.restart(),
    copy,
    openPalaceFolder: () => void shell.openPath(config.palacePath),
    openLogs: () => void shell.openPath(log.path),
    setStartAtLogin: (enabled) => {
      app.setLoginItemSettings({ openAtLogin: enabled });
      refresh();
    },
    quit: () => void quit(),
  };

  const refresh = (): void => {
    const current = info();
    tray.setImage(trayImage(current.state));
    const waitingText = current.waitingTasks > 0 ? ` · ${current.waitingTasks} waiting` : '';
    tray.setToolTip(`palace: ${hubSummary(current)}${waitingText}`);
    tray.setContextMenu(
      Menu.buildFromTemplate(trayMenuTemplate(current, app.getLoginItemSettings().openAtLogin, actions)),
    );
    sendToRenderer(win?.webContents, 'hub:changed', current);
  };

  const loadDashboard = (view?: ViewId): void => {
    if (!win || win.isDestroyed()) return;
    const url = dashboardUrl();
    const hash = view ? `#/${view}` : '';
    if (url) void win.loadURL(`${url}${hash}`);
    else void win.loadFile(fallbackPage, view ? { hash: `/${view}` } : {});
  };

  function openDashboard(view?: ViewId): void {
    if (win && !win.isDestroyed()) {
      if (view) sendToRenderer(win.webContents, 'app:navigate', view);
      win.show();
      win.focus();
      return;
    }
    win = createDashboardWindow({ preloadPath, iconPath });
    restrictPermissions(win.webContents.session);
    win.on('closed', () => (win = undefined));
    loadDashboard(view);
  }

  // The window follows the hub: to its new address after a restart on another port, and from the
  // fallback page to the hub once it answers.
  let loadedOrigin: string | null = null;
  const followHub = (): void => {
    const url = info().url;
    const origin = url ? originOf(url) : null;
    if (origin === loadedOrigin) return;
    loadedOrigin = origin;
    if (origin && win && !win.isDestroyed() && !config.devServerUrl) loadDashboard();
  };

  const tasks = new TaskWatcher({
    isLocalAgent: (name) => isLocalAgent(config, name),
    onRequest: (event: LogEvent) => notifyRequest(event),
    onPatch: (event: LogEvent) => notifyPatch(event),
    onWaiting: (count) => {
      waiting = count;
      refresh();
    },
  });
  const notifyRequest = (event: LogEvent): void => {
    if (!Notification.isSupported()) return;
    const first = event.body.split('\n').find((l) => l.trim() !== '') ?? '';
    const note = new Notification({
      title: `New task for ${event.to_agent}`,
      body: `${event.from_agent}${event.correlation_id ? ` · ${event.correlation_id}` : ''}${first ? `\n${first.slice(0, 160)}` : ''}`,
    });
    note.on('click', () => openDashboard('tasks'));
    note.show();
  };
  const notifyPatch = (event: LogEvent): void => {
    if (!Notification.isSupported()) return;
    const note = new Notification({
      title: `Patch ready on ${event.correlation_id ?? 'a task'}`,
      body: `${event.from_agent} → ${event.to_agent ?? '*'}${event.body ? `\n${event.body.split('\n')[0]?.slice(0, 160) ?? ''}` : ''}`,
    });
    note.on('click', () => openDashboard('tasks'));
    note.show();
  };
  let watchedUrl: string | null = null;
  supervisor.onChange((status) => {
    refresh();
    followHub();
    if (status.state === 'running' && status.url && status.url !== watchedUrl) {
      watchedUrl = status.url;
      void tasks.start(createHubClient({ baseUrl: status.url, token: config.token }));
    }
    if (status.state !== 'running' && status.state !== 'starting') watchedUrl = null;
  });

  const files: HubFileWatcher = await watchHubFiles({
    registrationPath: config.registrationPath,
    peersPath: config.peersPath,
    readRegistration,
    onHubMoved: () => refresh(),
    onPeersChanged: () => sendToRenderer(win?.webContents, 'peers:changed', { at: new Date().toISOString() }),
  });

  const removeIpc = registerIpc(
    ipcMain,
    {
      'hub:info': () => info(),
      'hub:start': () => (supervisor.start(), info()),
      'hub:stop': async () => (await supervisor.stop(), info()),
      'hub:restart': async () => (await supervisor.restart(), info()),
      'shell:open-palace': () => void shell.openPath(config.palacePath),
      'shell:open-logs': () => void shell.openPath(log.path),
    },
    isTrustedSender,
  );

  async function quit(): Promise<void> {
    if (quitting) return;
    quitting = true;
    tasks.stop();
    await supervisor.stop();
    await files.close();
    removeIpc();
    log.close();
    tray.destroy();
    app.quit();
  }
  app.on('before-quit', (event) => {
    if (quitting) return;
    event.preventDefault();
    void quit();
  });
  // A tray app keeps running with no window open.
  app.on('window-all-closed', () => undefined);
  tray.on('click', () => openDashboard());

  refresh();
  supervisor.start();
  return { info, supervisor, tray, openDashboard, window: () => win, quit };
}
