// The dashboard's one store: the connection to the hub (token, liveness, feed mode), the window of
// events (older pages on demand), the task list paged from the hub's projection, /statusz,
// /sync/peers and the tool list. Views read snapshots; nothing here renders.
// When the hub goes away the last data stays, marked read-only, until it answers again.

import { createEventFeed, type EventFeed, type FeedMode } from '../../../hub/src/client/event-feed.js';
import { createHubClient, HubClientError, type HubClient } from '../../../hub/src/client/hub-client.js';
import { IN_FLIGHT_STATUSES, stalledFilter, type TaskState, type TaskStatus } from '../../../hub/src/core/task-state.js';
import { EVENT_STATUSES, type Artifact, type LogEvent } from '../../../hub/src/core/types.js';
import type { HubInfo, PalaceBridge } from '../../../main/ipc-contract.js';
import { EVENT_CAP, mergeEvents } from './event-log.js';
import {
  normalizePeers,
  type Loadable,
  type PeersPayload,
  type StatusPayload,
  type TaskCountsPayload,
} from './hub-types.js';

/** Which tasks the Tasks view lists: not done, all, one status, or claimed ones gone quiet. */
export type TaskFilterKey = TaskStatus | 'active' | 'all' | 'stalled';

/** The Tasks view's list: the pages of palace_tasks loaded so far for one filter. */
export interface TaskList {
  filter: TaskFilterKey;
  tasks: readonly TaskState[];
  /** Tasks matching the filter in the whole log. */
  total: number;
  /** Every task by status, whatever the filter (chips and the sidebar badge). */
  counts: TaskCountsPayload | null;
  /** Claimed tasks with no event for STALLED_AFTER_MS in the whole log (the hub's count), whatever the filter. */
  stalled: number | null;
  cursor: string | null;
  hasMore: boolean;
  state: 'idle' | 'loading' | 'ready' | 'error';
  error?: string;
}

export type Phase = 'checking' | 'needs-token' | 'connected' | 'down';

export interface DashboardSnapshot {
  phase: Phase;
  feed: FeedMode;
  baseUrl: string;
  token: string | null;
  /** Whether the hub answered without a token (a loopback hub with none set). */
  tokenRequired: boolean | null;
  tokenError: string | null;
  /** When data was last read from the hub (ms since epoch). */
  lastReadAt: number | null;
  downSince: number | null;
  events: readonly LogEvent[];
  eventsLoaded: boolean;
  /** The log holds events older than the oldest one loaded (loadOlderEvents reads them). */
  eventsHasOlder: boolean;
  eventsLoadingOlder: boolean;
  tasks: TaskList;
  /** The task.request event of each listed task, by correlation id (titles, the detail panel). */
  taskRequests: ReadonlyMap<string, LogEvent>;
  status: Loadable<StatusPayload>;
  peers: Loadable<PeersPayload>;
  tools: readonly string[] | null;
  /** The tray's view of the hub, inside the desktop app. */
  hubInfo: HubInfo | null;
}

export interface StoreOptions {
  baseUrl: string;
  bridge?: PalaceBridge | undefined;
  storage?: Pick<Storage, 'getItem' | 'setItem' | 'removeItem'> | undefined;
  fetch?: typeof fetch;
}

const TOKEN_KEY = 'palace.token';
/** Tasks per palace_tasks page. */
export const TASK_PAGE = 100;
const TASK_REFRESH_MS = 300;
const HEALTH_EVERY_MS = 5_000;
const DOWN_HEALTH_EVERY_MS = 2_000;
const STATUS_EVERY_MS = 10_000;

export class DashboardStore {
  private snapshot: DashboardSnapshot;
  private readonly listeners = new Set<() => void>();
  private readonly artifacts = new Map<string, Promise<Artifact>>();
  private hub: HubClient;
  private feed: EventFeed | undefined;
  private timers: ReturnType<typeof setTimeout>[] = [];
  private generation = 0;
  private everConnected = false;
  /** Grows as older pages are loaded, so the live window does not drop what the user asked for. */
  private eventCap = EVENT_CAP;
  private taskLoads = 0;
  private taskRefreshQueued = false;

  constructor(private readonly options: StoreOptions) {
    const token = options.storage?.getItem(TOKEN_KEY) ?? null;
    this.snapshot = {
      phase: 'checking',
      feed: 'stopped',
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      token,
      tokenRequired: null,
      tokenError: null,
      lastReadAt: null,
      downSince: null,
      events: [],
      eventsLoaded: false,
      eventsHasOlder: false,
      eventsLoadingOlder: false,
      tasks: { filter: 'active', tasks: [], total: 0, counts: null, stalled: null, cursor: null, hasMore: false, state: 'idle' },
      taskRequests: new Map(),
      status: { state: 'idle' },
      peers: { state: 'idle' },
      tools: null,
      hubInfo: null,
    };
    this.hub = this.makeClient();
  }

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  getSnapshot = (): DashboardSnapshot => this.snapshot;

  /** The client for direct calls (memory tools); it carries the current token. */
  get client(): HubClient {
    return this.hub;
  }

  get bridge(): PalaceBridge | undefined {
    return this.options.bridge;
  }

  private set(patch: Partial<DashboardSnapshot>): void {
    this.snapshot = { ...this.snapshot, ...patch };
    for (const l of this.listeners) l();
  }

  private makeClient(): HubClient {
    return createHubClient({
      baseUrl: this.snapshot.baseUrl,
      token: this.snapshot.token,
      ...(this.options.fetch ? { fetch: this.options.fetch } : {}),
    });
  }

  /** Starts everything: bridge info (desktop), connection check, data, live feed. */
  async start(): Promise<void> {
    const bridge = this.options.bridge;
    if (bridge) {
      bridge.on('hub:changed', (info) => this.applyHubInfo(info));
      bridge.on('peers:changed', () => void this.refreshPeers());
      try {
        this.applyHubInfo(await bridge.invoke('hub:info'));
      } catch {
        // an older main without the channel: run as a browser page
      }
    }
    await this.connect();
  }

  private applyHubInfo(info: HubInfo): void {
    const patch: Partial<DashboardSnapshot> = { hubInfo: info };
    if (info.token && info.token !== this.snapshot.token) patch.token = info.token;
    if (
      info.url &&
      !/^https?:/.test(globalThis.location?.protocol ?? '') &&
      info.url !== this.snapshot.baseUrl
    )
      patch.baseUrl = info.url;
    const reconnect = patch.token !== undefined || patch.baseUrl !== undefined;
    this.set(patch);
    if (reconnect && this.everConnected) void this.connect();
    else if (info.state === 'running' && this.snapshot.phase === 'down') this.healthTick();
  }

  /** Keeps a token for this tab (sessionStorage) and connects with it. */
  async submitToken(token: string): Promise<void> {
    const t = token.trim();
    if (!t) return;
    this.options.storage?.setItem(TOKEN_KEY, t);
    this.set({ token: t, tokenError: null });
    await this.connect();
  }

  forgetToken(): void {
    this.options.storage?.removeItem(TOKEN_KEY);
    this.stopLive();
    this.set({ token: null, phase: 'needs-token', tokenError: null, feed: 'stopped' });
  }

  stop(): void {
    this.generation++;
    this.stopLive();
  }

  private stopLive(): void {
    this.feed?.stop();
    this.feed = undefined;
    for (const t of this.timers) clearTimeout(t);
    this.timers = [];
  }

  private later(ms: number, fn: () => void): void {
    const gen = this.generation;
    const timer = setTimeout(() => {
      this.timers = this.timers.filter((t) => t !== timer);
      if (gen === this.generation) fn();
    }, ms);
    this.timers.push(timer);
  }

  async connect(): Promise<void> {
    this.stopLive();
    const gen = ++this.generation;
    this.hub = this.makeClient();
    if (!this.everConnected) this.set({ phase: 'checking' });
    let status: StatusPayload;
    try {
      status = await this.hub.getJson<StatusPayload>('/statusz');
    } catch (err) {
      if (gen !== this.generation) return;
      if (err instanceof HubClientError && err.status === 401) {
        this.set({
          phase: 'needs-token',
          tokenRequired: true,
          tokenError: this.snapshot.token ? 'The hub refused this token. Check it and paste it again.' : null,
        });
        if (this.snapshot.token) this.options.storage?.removeItem(TOKEN_KEY);
        return;
      }
      this.markDown();
      return;
    }
    if (gen !== this.generation) return;
    this.everConnected = true;
    this.set({
      phase: 'connected',
      tokenError: null,
      tokenRequired: this.snapshot.tokenRequired ?? (this.snapshot.token ? null : false),
      downSince: null,
      lastReadAt: Date.now(),
      status: { state: 'ready', data: status, at: Date.now() },
    });
    void this.hub.hello('palace-dashboard', status.server?.version ?? '').catch(() => undefined);
    const [tip] = await Promise.all([this.loadEvents(gen), this.loadTools(gen), this.refreshPeers(), this.refreshTasks()]);
    if (gen !== this.generation) return;
    this.startFeed(tip ?? null, gen);
    this.later(HEALTH_EVERY_MS, () => this.healthTick());
    this.later(STATUS_EVERY_MS, () => this.statusTick());
  }

  private markDown(): void {
    if (this.snapshot.phase !== 'down') this.set({ phase: 'down', downSince: Date.now() });
    this.later(DOWN_HEALTH_EVERY_MS, () => this.healthTick());
  }

  private healthTick(): void {
    void this.hub.health().then((ok) => {
      if (ok && this.snapshot.phase === 'down') {
        if (!this.everConnected || !this.feed) return void this.connect();
        this.set({ phase: 'connected', downSince: null });
        this.feed.reconnectNow();
        void this.refreshStatus();
        void this.refreshPeers();
      } else if (!ok && this.snapshot.phase === 'connected') {
        this.set({ phase: 'down', downSince: Date.now() });
      }
      const down = (this.snapshot.phase as Phase) === 'down';
      this.later(down ? DOWN_HEALTH_EVERY_MS : HEALTH_EVERY_MS, () => this.healthTick());
    });
  }

  private statusTick(): void {
    const peers = this.snapshot.peers.state === 'unavailable' ? Promise.resolve() : this.refreshPeers();
    void Promise.all([this.refreshStatus(), peers, this.refreshTasks()]).finally(() =>
      this.later(STATUS_EVERY_MS, () => this.statusTick()),
    );
  }

  private async loadTools(gen: number): Promise<void> {
    try {
      const tools = await this.hub.listTools();
      if (gen === this.generation) this.set({ tools });
    } catch {
      // the tool list is an optimisation for the memory view; it will ask again
    }
  }

  /** Loads the newest events (one page); returns the tip id. Older pages come with loadOlderEvents. */
  private async loadEvents(gen: number): Promise<string | undefined> {
    try {
      const page = await this.hub.call('palace_event_list', { order: 'desc', limit: 500 });
      if (gen !== this.generation) return undefined;
      this.set({
        events: mergeEvents(this.snapshot.events, page.events, this.eventCap),
        eventsLoaded: true,
        eventsHasOlder: page.has_more,
        lastReadAt: Date.now(),
      });
      return page.events[0]?.id ?? this.snapshot.events.at(-1)?.id;
    } catch {
      this.set({ eventsLoaded: true });
      return this.snapshot.events.at(-1)?.id;
    }
  }

  /** Reads the page of events just before the oldest one loaded (the Events view's "load older"). */
  async loadOlderEvents(): Promise<void> {
    const oldest = this.snapshot.events[0]?.id;
    if (!oldest || this.snapshot.eventsLoadingOlder) return;
    this.set({ eventsLoadingOlder: true });
    try {
      const page = await this.hub.call('palace_event_list', { order: 'desc', limit: 500, before_event_id: oldest });
      this.eventCap = Math.max(this.eventCap, this.snapshot.events.length + page.events.length);
      this.set({
        events: mergeEvents(this.snapshot.events, page.events, this.eventCap),
        eventsHasOlder: page.has_more,
        eventsLoadingOlder: false,
      });
    } catch {
      this.set({ eventsLoadingOlder: false });
    }
  }

  /** Lists another set of tasks in the Tasks view (first page). */
  setTaskFilter(filter: TaskFilterKey): void {
    this.set({ tasks: { ...this.snapshot.tasks, filter, tasks: [], total: 0, cursor: null, hasMore: false, state: 'loading' } });
    void this.loadTasks(false, TASK_PAGE);
  }

  /** Appends the next page of the current task filter. */
  async loadMoreTasks(): Promise<void> {
    if (!this.snapshot.tasks.hasMore || this.snapshot.tasks.state === 'loading') return;
    await this.loadTasks(true, TASK_PAGE);
  }

  /** Reloads the tasks listed so far (at least a page), e.g. after task events arrived. */
  async refreshTasks(): Promise<void> {
    await this.loadTasks(false, Math.min(500, Math.max(TASK_PAGE, this.snapshot.tasks.tasks.length)));
  }

  private queueTaskRefresh(): void {
    if (this.taskRefreshQueued) return;
    this.taskRefreshQueued = true;
    this.later(TASK_REFRESH_MS, () => {
      this.taskRefreshQueued = false;
      void this.refreshTasks();
    });
  }

  private async loadTasks(more: boolean, limit: number): Promise<void> {
    const load = ++this.taskLoads;
    const list = this.snapshot.tasks;
    const f = list.filter;
    // Stalled = claimed and quiet since the cutoff: the hub counts and pages them (tasks_quiet_idx).
    const stalled = stalledFilter(Date.now());
    const args: Record<string, unknown> = {
      limit,
      // In flight and All name their statuses: a correlation id with no status yet (only notes) is not a
      // task row, so a page holds only rows and its total is the chip's count.
      ...(f === 'active' ? { status: IN_FLIGHT_STATUSES } : f === 'all' ? { status: EVENT_STATUSES } : f === 'stalled' ? stalled : { status: f }),
      ...(more && list.cursor ? { cursor: list.cursor } : {}),
    };
    try {
      // The stalled list's own total is the count; any other list asks for it beside (one row). A hub
      // that cannot count them (older than last_event_before) leaves the chip out, not the list.
      const [page, stalledTotal] = await Promise.all([
        this.hub.call('palace_tasks', args),
        f === 'stalled'
          ? undefined
          : this.hub.call('palace_tasks', { ...stalled, limit: 1 }).then(
              (p) => p.total,
              () => null,
            ),
      ]);
      if (load !== this.taskLoads) return;
      const tasks = more ? [...list.tasks, ...page.tasks] : page.tasks;
      this.set({
        tasks: {
          filter: f,
          tasks,
          total: page.total,
          counts: page.counts,
          stalled: stalledTotal === undefined ? page.total : stalledTotal,
          cursor: page.cursor,
          hasMore: page.has_more,
          state: 'ready',
        },
      });
      await this.loadRequests(page.tasks);
    } catch (err) {
      if (load === this.taskLoads) this.set({ tasks: { ...this.snapshot.tasks, state: 'error', error: (err as Error).message } });
    }
  }

  /** Fetches the task.request events of listed tasks not known yet (64 correlation ids per call). */
  private async loadRequests(tasks: readonly TaskState[]): Promise<void> {
    const known = this.snapshot.taskRequests;
    const inWindow = new Map(this.snapshot.events.map((e) => [e.id, e]));
    const found = new Map<string, LogEvent>();
    const missing: string[] = [];
    for (const t of tasks) {
      if (!t.request_event_id || known.has(t.correlation_id)) continue;
      const e = inWindow.get(t.request_event_id);
      if (e) found.set(t.correlation_id, e);
      else missing.push(t.correlation_id);
    }
    for (let i = 0; i < missing.length; i += 64) {
      const ids = missing.slice(i, i + 64);
      const page = await this.hub.call('palace_event_list', { correlation_id: ids, type: 'task.request', limit: 500 });
      for (const e of page.events) if (e.correlation_id && !found.has(e.correlation_id)) found.set(e.correlation_id, e);
    }
    if (found.size > 0) this.set({ taskRequests: new Map([...this.snapshot.taskRequests, ...found]) });
  }

  private startFeed(cursor: string | null, gen: number): void {
    let caughtUp = cursor !== null;
    this.feed = createEventFeed({
      client: this.hub,
      cursor,
      onPage: (page) => {
        if (gen !== this.generation) return;
        this.set({ events: mergeEvents(this.snapshot.events, page.events, this.eventCap), lastReadAt: Date.now() });
        if (page.events.some((e) => e.correlation_id)) this.queueTaskRefresh();
      },
      onMode: (mode) => {
        if (gen !== this.generation) return;
        const patch: Partial<DashboardSnapshot> = { feed: mode };
        if (mode === 'stream' || mode === 'poll') {
          patch.lastReadAt = Date.now();
          if (this.snapshot.phase === 'down') {
            patch.phase = 'connected';
            patch.downSince = null;
          }
        }
        if (mode === 'down' && this.snapshot.phase === 'connected') {
          patch.phase = 'down';
          patch.downSince = Date.now();
        }
        if (mode === 'unauthorized') patch.phase = 'needs-token';
        this.set(patch);
        // An empty log at load time: anything appended before the stream opened is read once here.
        if (mode === 'stream' && !caughtUp) {
          caughtUp = true;
          void this.hub
            .call('palace_event_list', { limit: 500 })
            .then((page) => this.set({ events: mergeEvents(this.snapshot.events, page.events, this.eventCap) }))
            .catch(() => undefined);
        }
      },
    });
    this.feed.start();
  }

  async refreshStatus(): Promise<void> {
    try {
      const data = await this.hub.getJson<StatusPayload>('/statusz');
      this.set({ status: { state: 'ready', data, at: Date.now() }, lastReadAt: Date.now() });
    } catch (err) {
      if (this.snapshot.status.state !== 'ready')
        this.set({ status: { state: 'error', message: (err as Error).message } });
    }
  }

  async refreshPeers(): Promise<void> {
    if (this.snapshot.peers.state === 'idle') this.set({ peers: { state: 'loading' } });
    try {
      const data = normalizePeers(await this.hub.getJson<unknown>('/sync/peers'));
      this.set({ peers: { state: 'ready', data, at: Date.now() } });
    } catch (err) {
      if (err instanceof HubClientError && err.status === 404)
        this.set({ peers: { state: 'unavailable', message: 'Peer sync is not available on this hub.' } });
      else if (this.snapshot.peers.state !== 'ready')
        this.set({ peers: { state: 'error', message: (err as Error).message } });
    }
  }

  /** An artifact with its content (cached: artifacts are immutable). */
  artifact(id: string): Promise<Artifact> {
    let pending = this.artifacts.get(id);
    if (!pending) {
      pending = this.hub.call('palace_artifact_get', { artifact_id: id });
      pending.catch(() => this.artifacts.delete(id));
      this.artifacts.set(id, pending);
    }
    return pending;
  }
}
