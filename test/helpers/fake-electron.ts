// A stand-in for the `electron` module (its binary cannot run on these machines), for tests that
// vi.mock('electron'): it records what main does (tray, menus, windows, IPC handlers, clipboard,
// notifications) and lets a test fire the events Electron would.

type Listener = (...args: unknown[]) => unknown;

export interface FakeMenuItem {
  id?: string;
  label?: string;
  type?: string;
  enabled?: boolean;
  checked?: boolean;
  submenu?: FakeMenuItem[];
  click?: (item: { checked: boolean }) => void;
}

export class FakeSession {
  permissionHandler:
    ((contents: unknown, permission: string, callback: (granted: boolean) => void) => void) | undefined;
  checkHandler: ((contents: unknown, permission: string) => boolean) | undefined;
  setPermissionRequestHandler(handler: FakeSession['permissionHandler']): void {
    this.permissionHandler = handler;
  }
  setPermissionCheckHandler(handler: FakeSession['checkHandler']): void {
    this.checkHandler = handler;
  }
}

export class FakeWebContents {
  readonly listeners = new Map<string, Listener>();
  openHandler: Listener | undefined;
  readonly sent: [string, unknown][] = [];
  readonly session = new FakeSession();
  on(event: string, listener: Listener): this {
    this.listeners.set(event, listener);
    return this;
  }
  setWindowOpenHandler(handler: Listener): void {
    this.openHandler = handler;
  }
  send(channel: string, payload: unknown): void {
    this.sent.push([channel, payload]);
  }
  isDestroyed(): boolean {
    return false;
  }
}

export const fakeState = {
  appListeners: new Map<string, Listener[]>(),
  trays: [] as FakeTray[],
  windows: [] as FakeBrowserWindow[],
  notifications: [] as FakeNotification[],
  clipboard: [] as string[],
  handlers: new Map<string, Listener>(),
  openedPaths: [] as string[],
  openAtLogin: false,
  quitCalls: 0,
};

function emitApp(event: string, ...args: unknown[]): void {
  for (const l of fakeState.appListeners.get(event) ?? []) l(...args);
}

export class FakeBrowserWindow {
  readonly webContents = new FakeWebContents();
  readonly loaded: string[] = [];
  shown = 0;
  constructor(readonly options: { webPreferences?: Record<string, unknown> } & Record<string, unknown>) {
    fakeState.windows.push(this);
    emitApp('web-contents-created', {}, this.webContents);
  }
  loadURL(url: string): Promise<void> {
    this.loaded.push(url);
    return Promise.resolve();
  }
  loadFile(path: string, options?: { hash?: string }): Promise<void> {
    this.loaded.push(`file://${path}${options?.hash ? `#${options.hash}` : ''}`);
    return Promise.resolve();
  }
  once(): this {
    return this;
  }
  on(): this {
    return this;
  }
  isDestroyed(): boolean {
    return false;
  }
  show(): void {
    this.shown++;
  }
  focus(): void {}
}

export class FakeTray {
  image: unknown;
  tooltip = '';
  menu: { template: FakeMenuItem[] } | undefined;
  destroyed = false;
  constructor(image: unknown) {
    this.image = image;
    fakeState.trays.push(this);
  }
  setImage(image: unknown): void {
    this.image = image;
  }
  setToolTip(text: string): void {
    this.tooltip = text;
  }
  setContextMenu(menu: { template: FakeMenuItem[] }): void {
    this.menu = menu;
  }
  on(): this {
    return this;
  }
  destroy(): void {
    this.destroyed = true;
  }
}

export class FakeNotification {
  shown = false;
  clickListener: Listener | undefined;
  static isSupported(): boolean {
    return true;
  }
  constructor(readonly options: { title: string; body?: string }) {
    fakeState.notifications.push(this);
  }
  on(event: string, listener: Listener): this {
    if (event === 'click') this.clickListener = listener;
    return this;
  }
  show(): void {
    this.shown = true;
  }
}

export const fakeElectron = {
  app: {
    on(event: string, listener: Listener) {
      fakeState.appListeners.set(event, [...(fakeState.appListeners.get(event) ?? []), listener]);
    },
    quit() {
      fakeState.quitCalls++;
    },
    getLoginItemSettings: () => ({ openAtLogin: fakeState.openAtLogin }),
    setLoginItemSettings(settings: { openAtLogin: boolean }) {
      fakeState.openAtLogin = settings.openAtLogin;
    },
  },
  BrowserWindow: FakeBrowserWindow,
  Tray: FakeTray,
  Notification: FakeNotification,
  Menu: { buildFromTemplate: (template: FakeMenuItem[]) => ({ template }) },
  ipcMain: {
    handle(channel: string, listener: Listener) {
      fakeState.handlers.set(channel, listener);
    },
    removeHandler(channel: string) {
      fakeState.handlers.delete(channel);
    },
  },
  clipboard: {
    writeText(text: string) {
      fakeState.clipboard.push(text);
    },
  },
  nativeImage: { createFromPath: (path: string) => ({ path }) },
  shell: {
    openPath(path: string) {
      fakeState.openedPaths.push(path);
      return Promise.resolve('');
    },
  },
};

/** Finds a menu item by id, in submenus too. */
export function menuItem(items: readonly FakeMenuItem[] | undefined, id: string): FakeMenuItem | undefined {
  for (const item of items ?? []) {
    if (item.id === id) return item;
    const inner = menuItem(item.submenu, id);
    if (inner) return inner;
  }
  return undefined;
}
