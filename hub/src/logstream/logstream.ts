// The logstream service: validates raw inputs, assigns ids and timestamps, group-commits appends,
// wakes waiters, and implements ack, artifacts and patch submission on top of an EventStore.
// Coordination (leases, dependencies, reservations) lives in coordination.ts; the methods here delegate.

import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';

import type { Durability } from '../config.js';
import { HubError, invalid } from '../errors.js';
import { isoSeconds, makeId } from '../core/ids.js';
import { LOGSTREAM_FILE } from '../core/palace-files.js';
import { projectTask, type TaskState } from '../core/task-state.js';
import type { Artifact, ArtifactMeta, EventPage, LogEvent, NewEvent, WaitResult } from '../core/types.js';
import {
  ackStatus,
  artifactContent,
  artifactIds,
  artifactKind,
  eventBody,
  eventQuery,
  eventStatus,
  eventToAgent,
  eventType,
  metadataJson,
  patchWarnings,
  requiredField,
  routingField,
  taskQuery,
  waitTimeout,
  type RawQuery,
  type RawTaskQuery,
} from '../core/validate.js';
import type { AppendInput } from './append-input.js';
import { capabilityList } from '../core/capabilities.js';
import { ChangeFeed } from './change-feed.js';
import {
  DEFAULT_LEASE_BOUNDS,
  activeReservations,
  boundedMs,
  checkAckOrder,
  checkDependencies,
  claimOutcome,
  dependsOnField,
  enrichTasks,
  expiryOf,
  fenceOf,
  missingCapabilities,
  readyQueue,
  readyTasks,
  releaseOf,
  renewalOf,
  reservationOfInput,
  type ClaimOutcome,
  type Fence,
  type LeaseBounds,
  type ReleaseAuthority,
  type Reservation,
  type ReservationFilter,
  type ReserveInput,
  type TaskView,
} from './coordination.js';
import type { LogFile } from './event-store.js';
import type { ReservationCheck } from './reservation-projection.js';
import { SqliteEventStore } from './sqlite-event-store.js';
import type { TaskCheck, TaskCounts, TaskFilter, TaskPage } from './task-projection.js';

export { LOGSTREAM_FILE };
export type { AppendInput };

function shuttingDown(reason: string, cursor: string | null): HubError {
  return new HubError(
    'hub.shutting_down',
    `${reason}; no matching event arrived before it did. Call palace_event_wait again with since_event_id = data.cursor: the next hub (or the local server) answers it`,
    { data: { cursor } },
  );
}

/** Random hex from a pool refilled 4 KiB at a time: one CSPRNG call per ~680 ids instead of one per id. */
function pooledRandomHex(): (bytes: number) => string {
  let pool = Buffer.alloc(0);
  let offset = 0;
  return (bytes) => {
    if (offset + bytes > pool.length) {
      pool = randomBytes(4096);
      offset = 0;
    }
    offset += bytes;
    return pool.toString('hex', offset - bytes, offset);
  };
}

export interface AckInput {
  event_id?: unknown;
  from_agent?: unknown;
  status?: unknown;
  body?: unknown;
  metadata?: unknown;
  /** `claimed` only: the lease (ms or a duration like 30m); default and bound from LeaseBounds. */
  lease_ms?: unknown;
}

export interface ArtifactInput {
  kind?: unknown;
  created_by?: unknown;
  content?: unknown;
  metadata?: unknown;
}

export type PatchInput = Omit<AppendInput, 'type' | 'status' | 'artifact_ids' | 'requires'> & { content?: unknown };

export type StoredArtifact = ArtifactMeta & { warnings?: string[] };

export interface WaitOptions {
  signal?: AbortSignal;
  /** Called about every `progressEveryMs` while waiting, with the ms waited so far. */
  onProgress?: (elapsedMs: number, timeoutMs: number) => void;
  progressEveryMs?: number;
}

export interface LogstreamOptions {
  durability?: Durability;
  now?: () => Date;
  randomHex?: (bytes: number) => string;
  /** Cross-process change polling interval while someone waits. */
  pollMs?: number;
  /** How far ahead of the local clock a pulled event's stamp may be (PALACE_SYNC_MAX_SKEW_MS). */
  maxSkewMs?: number;
  /** Events read per slice by bulk work (task projection build and check); the loop runs between slices. */
  sliceRows?: number;
}

/** Lets every pending I/O callback run before the next slice of bulk work. */
const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

interface Pending {
  event: NewEvent;
  resolve: (event: LogEvent) => void;
  reject: (err: HubError) => void;
}

/** The logstream service, typed against the LogFile interface (`open` builds it on the SQLite one). */
export class Logstream<S extends LogFile = LogFile> {
  readonly store: S;
  private readonly feed: ChangeFeed;
  private readonly now: () => Date;
  private readonly randomHex: (bytes: number) => string;
  private queue: Pending[] = [];
  private flushScheduled = false;
  /** Pending waits, each ended by `endWaits` with the error it is handed. */
  private readonly waiters = new Set<(reason: string) => void>();
  private ending: string | undefined;
  private readonly closers: Array<() => void> = [];
  private readonly sliceRows: number;
  private building: Promise<void> | undefined;
  private buildingReservations: Promise<void> | undefined;
  private closed = false;

  constructor(store: S, options: LogstreamOptions = {}) {
    this.store = store;
    this.sliceRows = options.sliceRows ?? 2_000;
    this.now = options.now ?? (() => new Date());
    this.randomHex = options.randomHex ?? pooledRandomHex();
    this.feed = new ChangeFeed({ changeToken: () => store.changeToken(), pollMs: options.pollMs ?? 50 });
    // Every commit that stored events (a local append, a pulled page) wakes waiters and stream clients.
    store.onCommitted(() => this.feed.notify());
  }

  /** Opens (creating if needed) the logstream of the palace at `palaceDir`. */
  static open(palaceDir: string, options: LogstreamOptions = {}): Logstream<SqliteEventStore> {
    const randomHex = options.randomHex ?? pooledRandomHex();
    const store = new SqliteEventStore(join(palaceDir, LOGSTREAM_FILE), {
      durability: options.durability ?? 'normal',
      mintReplicaId: () => `rep_${randomHex(6)}`,
      ...(options.maxSkewMs === undefined ? {} : { maxSkewMs: options.maxSkewMs }),
    });
    return new Logstream(store, { ...options, randomHex });
  }

  get replicaId(): string {
    return this.store.replicaId;
  }

  /** Validates an append; throws a HubError naming the field, before anything is stored. */
  prepareEvent(raw: AppendInput): NewEvent {
    const now = this.now();
    const dependsOn = dependsOnField(raw.depends_on);
    if (dependsOn !== undefined) {
      if (raw.type !== 'task.request') throw invalid('depends_on', 'depends_on is only for a task.request');
      const extra = raw.metadata === undefined || raw.metadata === null ? {} : (JSON.parse(metadataJson(raw.metadata)) as object);
      raw = { ...raw, metadata: { ...extra, depends_on: dependsOn } };
    }
    if (raw.requires !== undefined && raw.requires !== null) {
      if (raw.type !== 'task.request') throw invalid('requires', 'requires is only for a task.request');
      const requires = capabilityList('requires', raw.requires);
      const extra = raw.metadata === undefined || raw.metadata === null ? {} : (JSON.parse(metadataJson(raw.metadata)) as object);
      raw = { ...raw, metadata: { ...extra, ...(requires.length > 0 ? { requires } : {}) } };
    }
    const type = eventType(raw.type);
    const correlationId = routingField('correlation_id', raw.correlation_id);
    let toAgent = raw.to_agent;
    // A reply or a patch with no recipient goes to the task's requester (the spec's table addresses them so).
    if ((toAgent === undefined || toAgent === null || toAgent === '') && correlationId !== null && (type === 'task.reply' || type === 'patch.ready'))
      toAgent = this.requestOf(correlationId)?.from_agent;
    return {
      id: makeId('evt', now, this.randomHex(6)),
      type,
      stream: requiredField('stream', raw.stream),
      room: requiredField('room', raw.room),
      from_agent: requiredField('from_agent', raw.from_agent),
      to_agent: eventToAgent(type, toAgent),
      correlation_id: correlationId,
      branch: routingField('branch', raw.branch),
      base_commit: routingField('base_commit', raw.base_commit),
      status: eventStatus(raw.status),
      artifact_ids: artifactIds(raw.artifact_ids),
      body: eventBody(raw.body),
      metadata_json: metadataJson(raw.metadata),
      created_at: isoSeconds(now),
    };
  }

  /**
   * Stamps a patch.ready, or a task.reply that moves its task, with its claim attempt (fenceOf): the
   * live claim's id, or a stale_attempt flag (kept, never moves the task). A named stale attempt is refused.
   */
  fence(raw: AppendInput): { raw: AppendInput; fence: Fence } {
    const type = typeof raw.type === 'string' ? raw.type.trim() : raw.type;
    const moves = type === 'patch.ready' || (type === 'task.reply' && raw.status !== undefined && raw.status !== null && raw.status !== '');
    if (!moves) {
      // Other types are never fenced (and the projection reads stale_attempt only on these two).
      if (raw.attempt !== undefined && raw.attempt !== null) throw invalid('attempt', 'attempt is only for a patch.ready or a task.reply that moves a task');
      return { raw, fence: {} };
    }
    const extra = raw.metadata === undefined || raw.metadata === null ? {} : (JSON.parse(metadataJson(raw.metadata)) as Record<string, unknown>);
    const given = raw.attempt ?? extra.attempt;
    delete extra.stale_attempt; // only the hub sets it
    const correlationId = routingField('correlation_id', raw.correlation_id);
    if (typeof raw.from_agent !== 'string' || !correlationId) return { raw: { ...raw, attempt: undefined, metadata: extra }, fence: {} };
    const writer = raw.from_agent.trim();
    const request = type === 'task.reply' ? this.requestOf(correlationId) : undefined;
    if (request && request.from_agent === writer) return { raw: { ...raw, attempt: undefined, metadata: extra }, fence: {} }; // the requester's own reply
    const fence = fenceOf(this, writer, correlationId, given, this.now());
    delete extra.attempt;
    if (fence.attempt) extra.attempt = fence.attempt;
    if (fence.stale) extra.stale_attempt = fence.stale;
    return { raw: { ...raw, attempt: undefined, metadata: extra }, fence };
  }

  /** Appends one event in its own transaction (synchronous; for the CLI and tests). */
  appendNow(raw: AppendInput): LogEvent {
    return this.appendChecked(this.fence(raw).raw);
  }

  /** appendNow for an input already fenced. */
  private appendChecked(raw: AppendInput): LogEvent {
    const event = this.prepareEvent(raw);
    checkDependencies(this, event);
    checkAckOrder(this, event);
    return this.commit(event);
  }

  private commit(event: NewEvent): LogEvent {
    const [result] = this.store.append([event]);
    if (result instanceof HubError) throw result;
    if (!result) throw new HubError('store.failed', 'the store returned no result for an append');
    return result;
  }

  /**
   * Appends one event. Appends issued in the same event-loop turn share one transaction (group
   * commit); each resolves or fails alone.
   */
  append(raw: AppendInput): Promise<LogEvent> {
    let event: NewEvent;
    try {
      event = this.prepareEvent(this.fence(raw).raw);
      checkDependencies(this, event);
      checkAckOrder(this, event);
    } catch (err) {
      return Promise.reject(err as Error);
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ event, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.flushScheduled = false;
    const queued = this.queue;
    this.queue = [];
    // Requests in one group commit may close a dependency cycle between them: re-check in order.
    const pending = new Map<string, string[]>();
    const batch = queued.filter((p) => {
      if (p.event.type !== 'task.request' || !p.event.correlation_id || !p.event.metadata_json.includes('depends_on')) return true;
      try {
        checkDependencies(this, p.event, pending);
      } catch (err) {
        p.reject(err as HubError);
        return false;
      }
      const deps = (JSON.parse(p.event.metadata_json) as { depends_on?: unknown }).depends_on;
      if (Array.isArray(deps) && !pending.has(p.event.correlation_id)) pending.set(p.event.correlation_id, deps as string[]);
      return true;
    });
    if (batch.length === 0) return;
    const results = this.store.append(batch.map((p) => p.event));
    batch.forEach((pending, i) => {
      const result = results[i];
      if (result instanceof HubError) pending.reject(result);
      else if (result) pending.resolve(result);
      else pending.reject(new HubError('store.failed', 'the store returned no result for an append'));
    });
  }

  list(raw: RawQuery): EventPage {
    return this.store.query(eventQuery(raw));
  }

  /**
   * Long-poll: returns at once when events match, else waits (woken by appends, not by a
   * polling loop in this process) until one does or `timeout_ms` passes. Bad filters reject.
   */
  async wait(raw: RawQuery & { timeout_ms?: unknown }, options: WaitOptions = {}): Promise<WaitResult> {
    const query = eventQuery(raw);
    const timeoutMs = waitTimeout(raw.timeout_ms);
    const first = this.store.query(query);
    if (first.count > 0 || timeoutMs === 0 || options.signal?.aborted) return { ...first, timed_out: first.count === 0 };
    if (this.ending !== undefined) throw shuttingDown(this.ending, first.cursor);
    const started = Date.now();
    return new Promise((resolve, reject) => {
      let cursor = first.cursor;
      let settled = false;
      const settle = (): void => {
        settled = true;
        this.waiters.delete(end);
        unsubscribe();
        clearTimeout(timer);
        if (progress) clearInterval(progress);
        options.signal?.removeEventListener('abort', onAbort);
      };
      const finish = (result: WaitResult): void => {
        if (settled) return;
        settle();
        resolve(result);
      };
      const end = (reason: string): void => {
        check(); // an event appended just now still counts
        if (settled) return;
        settle();
        reject(shuttingDown(reason, cursor));
      };
      const timedOut = (): void => finish({ events: [], count: 0, has_more: false, cursor, timed_out: true });
      const check = (): void => {
        if (settled) return;
        let page: EventPage;
        try {
          page = this.store.query({ ...query, since_event_id: cursor });
        } catch {
          return; // a failing re-check must not kill the waiter; the timeout still ends it
        }
        if (page.count > 0) finish({ ...page, timed_out: false });
        else cursor = page.cursor ?? cursor;
      };
      const onAbort = (): void => timedOut();
      const unsubscribe = this.feed.subscribe(check);
      const timer = setTimeout(timedOut, timeoutMs);
      const progress =
        options.onProgress && options.progressEveryMs
          ? setInterval(() => options.onProgress?.(Date.now() - started, timeoutMs), options.progressEveryMs)
          : undefined;
      options.signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.add(end);
    });
  }

  /**
   * Ends every pending wait now, and every later one at once, with `hub.shutting_down` (carrying
   * the cursor to resume from): a process about to exit answers its long-polls instead of cutting them.
   */
  endWaits(reason: string): void {
    this.ending ??= reason;
    for (const end of [...this.waiters]) end(this.ending);
  }

  /** Subscribes to "the log changed" (appends here, or by other processes). */
  onChange(listener: () => void): () => void {
    return this.feed.subscribe(listener);
  }

  /**
   * Appends an `event.ack` for an event; the target is never changed. A `claimed` ack carries a
   * lease (lease_ms, lease_expires_at) and its result says whether it holds the task (`claim`).
   */
  ack(
    raw: AckInput,
    leases: LeaseBounds = DEFAULT_LEASE_BOUNDS,
    claimer?: { capabilities: readonly string[] },
  ): LogEvent & { claim?: ClaimOutcome } {
    const eventId = requiredField('event_id', raw.event_id);
    const target = this.store.getEvent(eventId);
    if (!target) throw new HubError('log.event_not_found', `event '${eventId}' not found`, { field: 'event_id' });
    const status = ackStatus(raw.status);
    if (status === 'claimed' && claimer && target.correlation_id) {
      const missing = missingCapabilities(this.task(target.correlation_id), claimer.capabilities);
      if (missing.length > 0)
        throw new HubError(
          'task.capability_missing',
          `${target.correlation_id} requires ${missing.join(', ')}; you are registered with ${claimer.capabilities.join(', ') || 'no capabilities'}; nothing was written`,
          { field: 'event_id', data: { missing } },
        );
    }
    const extra = raw.metadata === undefined || raw.metadata === null ? {} : JSON.parse(metadataJson(raw.metadata));
    if (status === 'claimed') {
      const leaseMs = boundedMs('lease_ms', raw.lease_ms, leases);
      Object.assign(extra, { lease_ms: leaseMs, lease_expires_at: new Date(this.now().getTime() + leaseMs).toISOString() });
    } else if (raw.lease_ms !== undefined) throw invalid('lease_ms', 'lease_ms is only for a claimed ack');
    const event = this.appendNow({
      type: 'event.ack',
      stream: target.stream,
      room: target.room,
      from_agent: raw.from_agent,
      to_agent: target.from_agent,
      correlation_id: target.correlation_id ?? target.id,
      branch: target.branch,
      base_commit: target.base_commit,
      status,
      body: raw.body,
      metadata: { ...extra, ack_of: target.id },
    });
    if (status !== 'claimed' || !event.correlation_id) return event;
    const task = this.stateOf(event.correlation_id);
    if (!task) throw new HubError('store.failed', `task ${event.correlation_id} has no state after its claim was stored`);
    return { ...event, claim: claimOutcome(task, event) };
  }

  /** Renews the lease of a claim its author still holds (appends `claim.renewed`). */
  renew(raw: { event_id?: unknown; from_agent?: unknown; lease_ms?: unknown }, leases: LeaseBounds = DEFAULT_LEASE_BOUNDS): LogEvent & { lease_expires_at: string } {
    const event = this.appendNow(renewalOf(this, raw, leases, this.now()));
    return { ...event, lease_expires_at: String(event.metadata.lease_expires_at) };
  }

  /**
   * Ends the current claim of a task (appends `claim.expired`; the task is open again): by its claimer,
   * its requester, or the desk (`authority.desk`); anyone else gets claim.not_yours.
   */
  releaseClaim(raw: { event_id?: unknown; from_agent?: unknown; reason?: unknown }, authority: ReleaseAuthority = { desk: false }): LogEvent {
    return this.appendNow(expiryOf(this, raw, false, authority));
  }

  /** The lease sweeper's expiry (from the hub's own identity, carrying the lease end it saw). */
  expireClaim(correlationId: string, fromAgent: string): LogEvent {
    return this.appendNow(expiryOf(this, { event_id: correlationId, from_agent: fromAgent }, true));
  }

  /** Open tasks for an agent (or `*`) whose dependencies are all applied, oldest first. */
  ready(raw: { agent?: unknown; stream?: unknown; limit?: unknown }): TaskView[] {
    return readyTasks(this, raw);
  }

  /** The ready queue for an agent with these capabilities (null: unknown): own claims first, then what it can do; and what it cannot, with why. */
  readyQueue(raw: { agent?: unknown; stream?: unknown; limit?: unknown }, capabilities: readonly string[] | null): ReturnType<typeof readyQueue> {
    return readyQueue(this, raw, capabilities);
  }

  /** Reserves paths (advisory); refuses a conflict with another agent's reservation unless `force`. */
  reserve(raw: ReserveInput, leases: LeaseBounds = DEFAULT_LEASE_BOUNDS): { reservation: Reservation; event: LogEvent; overridden: Reservation[] } {
    const { append, conflicts } = reservationOfInput(this, raw, leases, this.now());
    const event = this.appendNow(append);
    const reservation = activeReservations(this, { correlation_id: event.correlation_id ?? undefined, agent: event.from_agent, stream: event.stream }, this.now()).find((r) => r.reservation_id === event.id);
    if (!reservation) throw new HubError('store.failed', `reservation ${event.id} was stored but is not active`);
    return { reservation, event, overridden: conflicts };
  }

  /** Reservations in force now (filter by stream, agent, path or task). */
  reservations(raw: ReservationFilter = {}): Reservation[] {
    return activeReservations(this, raw, this.now());
  }

  /** Releases a reservation by hand (appends `file.released`). */
  releaseReservation(raw: { reservation_id?: unknown; from_agent?: unknown }): LogEvent {
    return this.appendNow(releaseOf(this, raw));
  }

  /** THE read-time enrichment of projected tasks (blocked_by, lease time left, live reservations). */
  enrichTasks(tasks: readonly TaskState[]): TaskView[] {
    return enrichTasks(this, tasks, this.now());
  }

  /** The service clock (injected in tests). */
  clock(): Date {
    return this.now();
  }

  /** Stores exact content; warns (without changing it) when a patch would break `git apply`. */
  putArtifact(raw: ArtifactInput): StoredArtifact {
    const kind = artifactKind(raw.kind);
    const createdBy = requiredField('created_by', raw.created_by);
    const { content, bytes } = artifactContent(raw.content);
    const metadata = metadataJson(raw.metadata);
    const now = this.now();
    const meta = this.store.putArtifact({
      id: makeId('art', now, this.randomHex(6)),
      kind,
      created_by: createdBy,
      sha256: createHash('sha256').update(content, 'utf8').digest('hex'),
      size_bytes: bytes,
      content,
      metadata_json: metadata,
      created_at: isoSeconds(now),
    });
    const warnings = patchWarnings(kind, content);
    return warnings.length > 0 ? { ...meta, warnings } : meta;
  }

  getArtifact(rawId: unknown): Artifact {
    const id = requiredField('artifact_id', rawId);
    const artifact = this.store.getArtifact(id);
    if (!artifact) throw new HubError('artifact.not_found', `artifact '${id}' not found`, { field: 'artifact_id' });
    return artifact;
  }

  /** The artifact's metadata and its exact stored bytes (a Buffer straight from SQLite, no string round trip). */
  getArtifactBytes(rawId: unknown): { meta: ArtifactMeta; bytes: Buffer } {
    const id = requiredField('artifact_id', rawId);
    const found = this.store.getArtifactBytes(id);
    if (!found) throw new HubError('artifact.not_found', `artifact '${id}' not found`, { field: 'artifact_id' });
    return found;
  }

  /**
   * Stores a patch and appends its `patch.ready` event. Everything is validated before anything is
   * stored. With a correlation_id, stream, recipient, branch and base commit default to the task's request.
   */
  submitPatch(raw: PatchInput): { artifact: StoredArtifact; event: LogEvent; late_patch?: true; stale_attempt?: Fence['stale'] } {
    const correlationId = routingField('correlation_id', raw.correlation_id);
    const request = correlationId ? this.requestOf(correlationId) : undefined;
    const eventInput: AppendInput = {
      type: 'patch.ready',
      status: 'ready',
      stream: raw.stream ?? request?.stream,
      room: raw.room ?? 'patches',
      from_agent: raw.from_agent,
      to_agent: raw.to_agent ?? request?.from_agent,
      correlation_id: correlationId,
      branch: raw.branch ?? request?.branch,
      base_commit: raw.base_commit ?? request?.base_commit,
      body: raw.body,
      metadata: raw.metadata,
      attempt: raw.attempt,
    };
    const { raw: fenced, fence } = this.fence(eventInput);
    this.prepareEvent(fenced); // validate first: bad input stores nothing
    const artifact = this.putArtifact({ kind: 'patch', created_by: raw.from_agent, content: raw.content });
    const event = this.appendChecked({ ...fenced, artifact_ids: [artifact.id] });
    // A writer without the live claim: kept, flagged stale_attempt, never the task's patch (identity.md).
    const late = correlationId !== null && this.stateOf(correlationId)?.late_patch === true;
    return { artifact, event, ...(late ? { late_patch: true as const } : {}), ...(fence.stale ? { stale_attempt: fence.stale } : {}) };
  }

  private requestOf(correlationId: string): LogEvent | undefined {
    return this.store.query(
      eventQuery({ correlation_id: correlationId, type: 'task.request', limit: 1 }),
    ).events[0];
  }

  /** Every event of one correlation id, in append order. */
  eventsOf(correlationId: unknown): LogEvent[] {
    const id = requiredField('correlation_id', correlationId);
    return this.store.tasks.eventsOf(id);
  }

  /**
   * Builds the task projection of a log that predates it (or was reset), in slices of `sliceRows`
   * events with the event loop running between them. Resolves at once when it is complete.
   */
  ensureTasks(): Promise<void> {
    if (this.store.tasks.ready()) return Promise.resolve();
    this.building ??= (async () => {
      try {
        while (!this.store.tasks.buildSlice(this.sliceRows)) await yieldToLoop();
      } finally {
        this.building = undefined;
      }
    })();
    return this.building;
  }

  private projectOne(id: string): TaskState | undefined {
    const events = this.store.tasks.eventsOf(id);
    return events.length === 0 ? undefined : projectTask(id, events);
  }

  /** One task's state: its row (kept with every append), or the reducer over its events while the table is being built. */
  private stateOf(id: string): TaskState | undefined {
    return this.store.tasks.ready() ? this.store.tasks.get(id) : this.projectOne(id);
  }

  /** Completes the projection now, blocking (a CLI process has nobody else to answer). */
  private tasksNow(): void {
    while (!this.store.tasks.buildSlice(this.sliceRows));
  }

  /** Completes the task projection now if it is not (blocking; the ready queue reads it). */
  completeTasks(): void {
    this.tasksNow();
  }

  /**
   * Builds the reservations table of a log that predates it (or was reset), in slices of `sliceRows`
   * seqs with the event loop running between them; until then reads scan the log. The hub starts it.
   */
  ensureReservations(): Promise<void> {
    if (this.closed || this.store.reservations.ready()) return Promise.resolve();
    this.buildingReservations ??= (async () => {
      try {
        while (!this.closed && !this.store.reservations.buildSlice(this.sliceRows)) await yieldToLoop();
      } finally {
        this.buildingReservations = undefined;
      }
    })();
    return this.buildingReservations;
  }

  /**
   * The current state of one task, from the projection table (while a cold table is still being
   * built, the reducer over that task's own events: the same answer, without waiting for the build).
   */
  task(correlationId: unknown): TaskView {
    const id = requiredField('correlation_id', correlationId);
    const task = this.stateOf(id);
    if (!task) throw new HubError('log.event_not_found', `no events with correlation_id '${id}'`, { field: 'correlation_id' });
    return this.enrichTasks([task])[0] as TaskView;
  }

  /**
   * Every task (every correlation id) in order of first appearance, from the projection table.
   * Filters: stream, since_event_id (tasks with an event after it), order. Blocks while building a
   * cold projection: the hub reads through taskPage instead.
   */
  tasks(raw: RawQuery = {}): TaskView[] {
    const q = eventQuery(raw);
    this.tasksNow();
    const filter: TaskFilter = { stream: q.stream, ...(q.since_event_id ? { after_seq: this.seqOf('since_event_id', q.since_event_id) } : {}) };
    return this.enrichTasks(this.store.tasks.page({ ...filter, order: q.order, limit: null }).tasks);
  }

  /**
   * One page of tasks with true totals and counts by status (palace_tasks, the dashboard). Waits for
   * a cold projection to be built in slices; never blocks the loop for long.
   */
  async taskPage(raw: RawTaskQuery): Promise<TaskPage> {
    const q = taskQuery(raw);
    const filter: TaskFilter = {
      status: q.status,
      stream: q.stream,
      requester: q.requester,
      worker: q.worker,
      to_agent: q.to_agent,
      correlation_id: q.correlation_id,
      ...(q.open === null ? {} : { open: q.open }),
      ...(q.since_event_id ? { after_seq: this.seqOf('since_event_id', q.since_event_id) } : {}),
      ...(q.last_event_before === null ? {} : { last_event_before: q.last_event_before }),
    };
    await this.ensureTasks();
    const page = this.store.tasks.page({ ...filter, order: q.order, limit: q.limit, ...(q.cursor === null ? {} : { cursor: q.cursor }) });
    return { ...page, tasks: this.enrichTasks(page.tasks) };
  }

  /** Task counts by status over the whole log (palace_status), once the projection is complete. */
  async taskCounts(): Promise<TaskCounts> {
    await this.ensureTasks();
    return this.store.tasks.counts();
  }

  /**
   * Checks the task projection and the reservations table against a full scan of the log (in slices);
   * lists every difference.
   */
  async verifyTasks(): Promise<TaskCheck & { reservations: ReservationCheck }> {
    await this.ensureTasks();
    await this.ensureReservations();
    const tasks = await this.store.tasks.verify(this.sliceRows, yieldToLoop);
    return { ...tasks, reservations: await this.store.reservations.verify(this.sliceRows, yieldToLoop) };
  }

  /** Drops the task projection and the reservations table and builds them again from the log, in slices. */
  async rebuildTasks(): Promise<void> {
    await this.building;
    await this.buildingReservations;
    this.store.tasks.reset();
    this.store.reservations.reset();
    await this.ensureTasks();
    await this.ensureReservations();
  }

  private seqOf(field: string, id: string): number {
    const event = this.store.getEvent(id);
    if (!event) throw new HubError('log.unknown_cursor', `${field} '${id}' is not an event in this log`, { field });
    return event.seq;
  }

  tipId(): string | null {
    return this.store.tipId();
  }

  /** Runs `fn` when the log closes (background workers such as the lease sweeper stop with it). */
  onClose(fn: () => void): void {
    this.closers.push(fn);
  }

  close(): void {
    this.closed = true;
    for (const fn of this.closers.splice(0)) fn();
    this.endWaits('the palace log was closed');
    this.flush();
    this.feed.close();
    this.store.close();
  }
}
