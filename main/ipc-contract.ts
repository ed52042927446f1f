// The one IPC channel map shared by main, preload and renderer: request channels (renderer → main,
// answered) and event channels (main → renderer). Types and channel tables only; no imports.

/** Views of the dashboard that main may ask the renderer to show. */
export const VIEW_IDS = ['events', 'tasks', 'peers', 'memory', 'setup', 'status'] as const;
export type ViewId = (typeof VIEW_IDS)[number];

/** The supervised hub as the tray sees it. */
export const HUB_STATES = {
  stopped: 'stopped',
  starting: 'starting',
  running: 'running',
  stopping: 'stopping',
  /** It exited or stopped answering; a restart is scheduled with backoff. */
  error: 'error',
} as const;
export type HubState = (typeof HUB_STATES)[keyof typeof HUB_STATES];

export interface HubInfo {
  state: HubState;
  /** Where the hub answers, from its registration file (follows a restart on another port). */
  url: string | null;
  pid: number | null;
  /** The bearer token the hub was started with, or null for a tokenless loopback hub. */
  token: string | null;
  palacePath: string;
  logPath: string;
  restarts: number;
  /** Why the hub is not running, in words, when it is not. */
  message: string | null;
  /** task.request events addressed to this machine's agents that nobody has claimed yet. */
  waitingTasks: number;
  /** The absolute command that runs palace as the hub runs it (for the stdio client configs). */
  stdio?: { command: string; args: string[]; env?: Record<string, string> };
}

/** Request channels: the renderer asks, main answers. */
export interface PalaceIpc {
  'hub:info': () => HubInfo;
  'hub:start': () => HubInfo;
  'hub:stop': () => HubInfo;
  'hub:restart': () => HubInfo;
  'shell:open-palace': () => void;
  'shell:open-logs': () => void;
}

/** Event channels: main tells the renderer. */
export interface PalaceEvents {
  'hub:changed': HubInfo;
  'peers:changed': { at: string };
  'app:navigate': ViewId;
}

export type InvokeChannel = keyof PalaceIpc;
export type EventChannel = keyof PalaceEvents;

/** What preload exposes on `window.palace`. */
export interface PalaceBridge {
  invoke<K extends InvokeChannel>(
    channel: K,
    ...args: Parameters<PalaceIpc[K]>
  ): Promise<Awaited<ReturnType<PalaceIpc[K]>>>;
  on<K extends EventChannel>(channel: K, listener: (payload: PalaceEvents[K]) => void): () => void;
}

/** Every request channel, exactly once (the compiler checks the table against PalaceIpc). */
export const INVOKE_CHANNELS = {
  'hub:info': true,
  'hub:start': true,
  'hub:stop': true,
  'hub:restart': true,
  'shell:open-palace': true,
  'shell:open-logs': true,
} as const satisfies Record<InvokeChannel, true>;

/** Every event channel, exactly once. */
export const EVENT_CHANNELS = {
  'hub:changed': true,
  'peers:changed': true,
  'app:navigate': true,
} as const satisfies Record<EventChannel, true>;

export function isInvokeChannel(value: unknown): value is InvokeChannel {
  return typeof value === 'string' && Object.hasOwn(INVOKE_CHANNELS, value);
}

export function isEventChannel(value: unknown): value is EventChannel {
  return typeof value === 'string' && Object.hasOwn(EVENT_CHANNELS, value);
}

/** The global name of the bridge in the renderer. */
export const BRIDGE_KEY = 'palace';
