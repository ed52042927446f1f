// The logstream service: validates raw inputs, assigns ids and timestamps, group-commits appends,
// and implements artifacts and patch submission on top of a LogFile. Its parts have files of their
// own: long-polls (waits.ts), task reads (task-reads.ts), coordination (coordination-service.ts,
// with its rules in coordination.ts); the methods here that name them delegate.

import { createHash } from 'node:crypto';
import { join } from 'node:path';

import type { Durability } from '../config.js';
import { HubError, invalid } from '../errors.js';
import { isoSeconds, makeId } from '../core/ids.js';
import { LOGSTREAM_FILE } from '../core/palace-files.js';
import type { Artifact, ArtifactMeta, EventPage, LogEvent, NewEvent, WaitResult } from '../core/types.js';
import { artifactContent, artifactKind, eventQuery, metadataJson, patchWarnings, requiredField, routingField, waitTimeout, type RawQuery, type RawTaskQuery } from '../core/validate.js';
import type { AckInput, AppendInput, ArtifactInput, PatchInput, StoredArtifact } from './append-input.js';
import { fenceOf, type ClaimOutcome, type Fence, type ReleaseAuthority } from './claims.js';
import type { readyQueue} from './coordination.js';
import { DEFAULT_LEASE_BOUNDS, checkAckOrder, checkDependencies, type LeaseBounds, type TaskView } from './coordination.js';
import type { ReservationFilter, ReserveInput } from './reservations.js';
import type { Reservation } from '../core/task-state.js';
import { Coordination } from './coordination-service.js';
import type { LogFile } from './event-store.js';
import { pooledRandomHex, prepareEvent } from './prepare-event.js';
import type { ReservationCheck } from './reservation-projection.js';
import { SqliteEventStore } from './sqlite-event-store.js';
import type { TaskCheck, TaskCounts, TaskPage } from './task-projection.js';
import { TaskReads } from './task-reads.js';
import { Waits, type WaitOptions } from './waits.js';

export { LOGSTREAM_FILE };
export type { AckInput, AppendInput, ArtifactInput, PatchInput, StoredArtifact, WaitOptions };

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

interface Pending {
  event: NewEvent;
  resolve: (event: LogEvent) => void;
  reject: (err: HubError) => void;
}

/** The logstream service, typed against the LogFile interface (`open` builds it on the SQLite one). */
export class Logstream<S extends LogFile = LogFile> {
  readonly store: S;
  /** Task reads over the projection; also the read port coordination is given. */
  readonly taskReads: TaskReads;
  /** Claims, the ready queue and reservations. */
  readonly coordination: Coordination;
  private readonly waits: Waits;
  private readonly now: () => Date;
  private readonly randomHex: (bytes: number) => string;
  private queue: Pending[] = [];
  private flushScheduled = false;
  private readonly closers: Array<() => void> = [];

  constructor(store: S, options: LogstreamOptions = {}) {
    this.store = store;
    this.now = options.now ?? (() => new Date());
    this.randomHex = options.randomHex ?? pooledRandomHex();
    this.waits = new Waits(store, options.pollMs ?? 50);
    this.taskReads = new TaskReads(store, options.sliceRows ?? 2_000, this.now);
    this.coordination = new Coordination({
      reads: this.taskReads,
      appendNow: (raw) => this.appendNow(raw),
      now: this.now,
    });
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
    return prepareEvent(raw, { now: this.now(), randomHex: this.randomHex, requestOf: (id) => this.requestOf(id) });
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
    const fence = fenceOf(this.taskReads, writer, correlationId, given, this.now());
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
    checkDependencies(this.taskReads, event);
    checkAckOrder(this.taskReads, event);
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
      checkDependencies(this.taskReads, event);
      checkAckOrder(this.taskReads, event);
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
        checkDependencies(this.taskReads, p.event, pending);
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
    return this.waits.wait(eventQuery(raw), waitTimeout(raw.timeout_ms), options);
  }

  /** Ends every pending wait now, and every later one at once, with `hub.shutting_down` (and the cursor to resume from). */
  endWaits(reason: string): void {
    this.waits.endWaits(reason);
  }

  /** Subscribes to "the log changed" (appends here, or by other processes). */
  onChange(listener: () => void): () => void {
    return this.waits.onChange(listener);
  }

  // ---- coordination (coordination-service.ts) ----

  ack(raw: AckInput, leases: LeaseBounds = DEFAULT_LEASE_BOUNDS, claimer?: { capabilities: readonly string[] }): LogEvent & { claim?: ClaimOutcome } {
    return this.coordination.ack(raw, leases, claimer);
  }

  renew(raw: { event_id?: unknown; from_agent?: unknown; lease_ms?: unknown }, leases: LeaseBounds = DEFAULT_LEASE_BOUNDS): LogEvent & { lease_expires_at: string } {
    return this.coordination.renew(raw, leases);
  }

  releaseClaim(raw: { event_id?: unknown; from_agent?: unknown; reason?: unknown }, authority: ReleaseAuthority = { desk: false }): LogEvent {
    return this.coordination.releaseClaim(raw, authority);
  }

  expireClaim(correlationId: string, fromAgent: string): LogEvent {
    return this.coordination.expireClaim(correlationId, fromAgent);
  }

  /** Open tasks for an agent (or `*`) whose dependencies are all applied, oldest first. */
  ready(raw: { agent?: unknown; stream?: unknown; limit?: unknown }): TaskView[] {
    return this.coordination.readyQueue(raw).tasks;
  }

  readyQueue(raw: { agent?: unknown; stream?: unknown; limit?: unknown }, capabilities: readonly string[] | null): ReturnType<typeof readyQueue> {
    return this.coordination.readyQueue(raw, capabilities);
  }

  reserve(raw: ReserveInput, leases: LeaseBounds = DEFAULT_LEASE_BOUNDS): { reservation: Reservation; event: LogEvent; overridden: Reservation[] } {
    return this.coordination.reserve(raw, leases);
  }

  reservations(raw: ReservationFilter = {}): Reservation[] {
    return this.coordination.reservations(raw);
  }

  releaseReservation(raw: { reservation_id?: unknown; from_agent?: unknown }): LogEvent {
    return this.coordination.releaseReservation(raw);
  }

  // ---- task reads (task-reads.ts) ----

  eventsOf(correlationId: unknown): LogEvent[] {
    return this.taskReads.eventsOf(correlationId);
  }

  task(correlationId: unknown): TaskView {
    return this.taskReads.task(correlationId);
  }

  tasks(raw: RawQuery = {}): TaskView[] {
    return this.taskReads.tasks(raw);
  }

  taskPage(raw: RawTaskQuery): Promise<TaskPage> {
    return this.taskReads.taskPage(raw);
  }

  taskCounts(): Promise<TaskCounts> {
    return this.taskReads.taskCounts();
  }

  completeTasks(): void {
    this.taskReads.completeTasks();
  }

  ensureReservations(): Promise<void> {
    return this.taskReads.ensureReservations();
  }

  verifyTasks(): Promise<TaskCheck & { reservations: ReservationCheck }> {
    return this.taskReads.verifyTasks();
  }

  rebuildTasks(): Promise<void> {
    return this.taskReads.rebuildTasks();
  }

  /** The service clock (injected in tests). */
  clock(): Date {
    return this.now();
  }

  // ---- artifacts and patches ----

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
    const late = correlationId !== null && this.taskReads.stateOf(correlationId)?.late_patch === true;
    return { artifact, event, ...(late ? { late_patch: true as const } : {}), ...(fence.stale ? { stale_attempt: fence.stale } : {}) };
  }

  private requestOf(correlationId: string): LogEvent | undefined {
    return this.taskReads.requestOf(correlationId);
  }

  tipId(): string | null {
    return this.store.tipId();
  }

  /** Runs `fn` when the log closes (background workers such as the lease sweeper stop with it). */
  onClose(fn: () => void): void {
    this.closers.push(fn);
  }

  close(): void {
    this.taskReads.close();
    for (const fn of this.closers.splice(0)) fn();
    this.endWaits('the palace log was closed');
    this.flush();
    this.waits.close();
    this.store.close();
  }
}
