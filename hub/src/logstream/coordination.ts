// Coordination on top of the log: claim leases (claim ack, renew, release), task dependencies (cycle
// refusal, blocked_by, the ready queue) and advisory file reservations. Every write is an ordinary
// event, so it syncs; every read is a projection of events. Rules: docs/coordination.md.

import { HubError, invalid } from '../errors.js';
import { globProblem, globsOverlap, normalizeGlob, pathMatches } from '../core/globs.js';
import {
  ackStatusesFrom,
  blockedBy,
  dependsOnOf,
  describeHolder,
  jsonBody,
  leaseLeftMs,
  projectTask,
  reservationOf,
  type Reservation,
  type TaskState,
  type TaskStatus,
} from '../core/task-state.js';
import type { EventPage, LogEvent, NewEvent } from '../core/types.js';
import { requiredField, routingField, type RawQuery } from '../core/validate.js';
import type { AppendInput } from './append-input.js';
import type { ReservationProjection } from './reservation-projection.js';
import type { TaskProjection } from './task-projection.js';

/**
 * What coordination reads of the log: a narrow port (the Logstream satisfies it), so this module does
 * not import the Logstream that calls it.
 */
export interface CoordinationReads {
  readonly store: {
    getEvent(id: string): LogEvent | undefined;
    readonly tasks: Pick<TaskProjection, 'eventsOf' | 'hasEvents' | 'openFor' | 'page' | 'ready' | 'statuses'>;
    readonly reservations: Pick<ReservationProjection, 'held' | 'ready'>;
  };
  list(raw: RawQuery): EventPage;
  task(correlationId: unknown): TaskView;
  completeTasks(): void;
  enrichTasks(tasks: readonly TaskState[]): TaskView[];
}

/** Lease bounds: the default a claim gets and the longest one may ask for (config.ts). */
export interface LeaseBounds {
  defaultMs: number;
  maxMs: number;
}

export const DEFAULT_LEASE_BOUNDS: LeaseBounds = { defaultMs: 30 * 60_000, maxMs: 24 * 3_600_000 };
/** The shortest lease or reservation TTL accepted (tests use it; real agents use minutes). */
export const MIN_LEASE_MS = 1_000;
export const MAX_DEPENDENCIES = 64;
export const MAX_RESERVATION_PATHS = 100;

/** A task as the CLI, MCP and dashboard read it: the projection plus what depends on other tasks and the clock. */
export type TaskView = TaskState & {
  /** Dependencies not yet `applied`. */
  blocked_by: string[];
  /** Ms until the current claim's lease ends (negative once lapsed but not yet expired); null without one. */
  lease_left_ms: number | null;
};

export type { Reservation } from '../core/task-state.js';
export { describeHolder } from '../core/task-state.js';

/** Parses a duration: a number of ms, or `<n>ms|s|m|h|d` (e.g. 30m). */
export function durationMs(field: string, value: unknown): number | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'number' && Number.isFinite(value)) return Math.round(value);
  const m = typeof value === 'string' ? /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(value) : null;
  if (!m) throw invalid(field, `${field} must be a duration such as 90000, 90s, 30m or 2h, got ${JSON.stringify(value)}`);
  const unit = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[(m[2] ?? 'ms') as 'ms'];
  return Math.round(Number(m[1]) * unit);
}

/** A lease or TTL within bounds (the default when absent). */
export function boundedMs(field: string, value: unknown, bounds: LeaseBounds): number {
  const ms = durationMs(field, value) ?? bounds.defaultMs;
  if (ms < MIN_LEASE_MS || ms > bounds.maxMs)
    throw invalid(field, `${field} must be from ${MIN_LEASE_MS} ms to ${bounds.maxMs} ms (PALACE_CLAIM_LEASE_MAX_MS), got ${ms}`);
  return ms;
}

/** Validates a `depends_on` list (correlation ids). */
export function dependsOnField(value: unknown): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  const list = typeof value === 'string' ? value.split(',') : value;
  if (!Array.isArray(list)) throw invalid('depends_on', 'depends_on must be a list of correlation ids');
  const ids = [...new Set(list.map((v) => requiredField('depends_on', typeof v === 'string' ? v.trim() : v)))];
  if (ids.length > MAX_DEPENDENCIES) throw invalid('depends_on', `depends_on takes at most ${MAX_DEPENDENCIES} ids`);
  return ids;
}

function firstRequest(ls: CoordinationReads, correlationId: string): LogEvent | undefined {
  return ls.list({ correlation_id: correlationId, type: 'task.request', limit: 1 }).events[0];
}

/**
 * Refuses a task.request whose dependencies lead back to its own task (a self-dependency included).
 * `pending` holds requests accepted earlier in the same group commit.
 */
export function checkDependencies(ls: CoordinationReads, event: NewEvent, pending: ReadonlyMap<string, string[]> = new Map()): void {
  if (event.type !== 'task.request' || !event.correlation_id) return;
  const self = event.correlation_id;
  const deps = dependsOnOf({ metadata: JSON.parse(event.metadata_json) as Record<string, unknown>, body: event.body });
  if (deps.length === 0) return;
  const existing = firstRequest(ls, self);
  if (existing && dependsOnOf(existing).length > 0) return; // the first request's dependencies stand
  const depsOf = (id: string): string[] => {
    const queued = pending.get(id);
    if (queued) return queued;
    const request = firstRequest(ls, id);
    return request ? dependsOnOf(request) : [];
  };
  const path = new Map<string, string | null>(deps.map((d) => [d, null]));
  const queue = [...deps];
  while (queue.length > 0) {
    const id = queue.shift() as string;
    if (id === self) {
      const chain = [self];
      for (let at: string | null = id; at !== null && chain.length < 50; at = path.get(at) ?? null) chain.push(at);
      const shown = chain.slice(1).reverse();
      throw new HubError(
        'task.dependency_cycle',
        deps.includes(self) && shown.length === 1
          ? `task '${self}' cannot depend on itself; nothing was appended`
          : `depends_on would make a cycle: ${[self, ...shown].join(' -> ')}; nothing was appended`,
        { field: 'depends_on', data: { cycle: [self, ...shown] } },
      );
    }
    for (const next of depsOf(id))
      if (!path.has(next)) {
        path.set(next, id);
        queue.push(next);
      }
  }
}

/**
 * Refuses an `event.ack` whose status skips the task order (docs/decisions.md, "Out-of-order acks"):
 * `applied` on a task never claimed or patched, a claim on a task that is ready or done, and so on.
 * The spec's state table decides (ackStatusesFrom); an ack without a status never moves a task and
 * is always accepted. Checked against this hub's log before the append, so the task view, the log,
 * `logstream task`, the dashboard and `hook inbox` never disagree about such an ack. (A peer's event
 * arrives through sync, not here: the projection records it and flags it `expected: false`.)
 */
export function checkAckOrder(ls: CoordinationReads, event: NewEvent): void {
  if (event.type !== 'event.ack' || event.status === null || event.correlation_id === null) return;
  const to = event.status;
  const id = event.correlation_id;
  const from = taskStates(ls, [id]).get(id)?.status ?? null;
  const allowed = ackStatusesFrom(from);
  if ((allowed as readonly string[]).includes(to)) return;
  const where = from === null ? `${id} has no task status yet (no task.request)` : `${id} is ${from}`;
  const next = allowed.length === 0 ? 'it takes no status ack now (ack without a status, or append a new event)' : `an ack on it may be ${allowed.join(', ')}`;
  throw new HubError(
    'task.out_of_order',
    `a ${to} ack skips the task order: ${where}; ${next}. The order: task.request (open), claimed, patch.ready (ready), then applied or failed; blocked or failed from open or claimed. Nothing was appended`,
    { field: 'status', data: { correlation_id: id, status: from, ack: to, allowed } },
  );
}

/**
 * The status (and whether done) of each of these tasks: from the stored projection when it is complete,
 * else the reducer over each task's own events. An id with no events is absent.
 */
export function taskStates(ls: CoordinationReads, ids: readonly string[]): Map<string, { status: TaskStatus | null; done: boolean }> {
  if (ids.length === 0) return new Map();
  if (ls.store.tasks.ready()) return ls.store.tasks.statuses(ids);
  const out = new Map<string, { status: TaskStatus | null; done: boolean }>();
  for (const id of ids) {
    const events = ls.store.tasks.eventsOf(id);
    if (events.length === 0) continue;
    const state = projectTask(id, events);
    out.set(id, { status: state.status, done: state.done });
  }
  return out;
}

/** Adds read-time fields: blocked_by (dependencies not applied), lease_left_ms, live reservations only. */
export function enrichTasks(ls: CoordinationReads, tasks: readonly TaskState[], now: Date): TaskView[] {
  const known = new Map<string, TaskStatus | null>(tasks.map((t) => [t.correlation_id, t.status]));
  // The dependencies' states in one read of the stored projection, not one re-projection each.
  const wanted = [...new Set(tasks.flatMap((t) => t.depends_on))].filter((id) => !known.has(id));
  for (const [id, state] of taskStates(ls, wanted)) known.set(id, state.status);
  const statusOf = (id: string): TaskStatus | null => known.get(id) ?? null;
  const iso = now.toISOString();
  return tasks.map((t) => ({
    ...t,
    reservations: t.reservations.filter((r) => r.expires_at > iso),
    blocked_by: blockedBy(t, statusOf),
    lease_left_ms: leaseLeftMs(t, now),
  }));
}

/** Candidates read per page of the ready queue. */
const READY_PAGE = 200;
export const MAX_READY_LIMIT = 500;

/** A task the ready queue does not offer the caller, and why (palace_task_ready's not_offered). */
export interface NotOffered {
  correlation_id: string;
  reason: string;
}

/** The capabilities a task's request requires that `capabilities` lacks (null = the caller's are unknown). */
export function missingCapabilities(task: Pick<TaskState, 'requires'>, capabilities: readonly string[] | null): string[] {
  const required = task.requires ?? [];
  if (capabilities === null) return required;
  const has = new Set(capabilities);
  // A read-only agent never takes a task that requires writing, even if it also declared write.
  return required.filter((c) => !has.has(c) || (c !== 'read-only' && c !== 'review' && has.has('read-only')));
}

/**
 * The caller's ready queue: its own in-flight claims first (to resume before taking new work), then
 * open tasks addressed to `agent` (or `*`) whose dependencies are all applied and whose required
 * capabilities it has, oldest first. The open tasks are read from the projection a page at a time
 * (tasks_ready_idx); with `limit`, reading stops once that many are listed. `capabilities` null: the
 * agent is not registered, so tasks that require any capability are not offered.
 */
export function readyQueue(
  ls: CoordinationReads,
  raw: { agent?: unknown; stream?: unknown; limit?: unknown },
  capabilities: readonly string[] | null = null,
): { tasks: Array<TaskView & { resume?: true }>; not_offered: NotOffered[] } {
  const agent = requiredField('agent', raw.agent);
  const stream = routingField('stream', raw.stream);
  let limit: number | undefined;
  if (raw.limit !== undefined && raw.limit !== null) {
    limit = Number(raw.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_READY_LIMIT)
      throw invalid('limit', `limit must be a whole number from 1 to ${MAX_READY_LIMIT}, got ${JSON.stringify(raw.limit)}`);
  }
  ls.completeTasks();
  const out: Array<TaskView & { resume?: true }> = [];
  const notOffered: NotOffered[] = [];
  const mine = ls.store.tasks.page({ status: ['claimed'], worker: [agent], ...(stream ? { stream: [stream] } : {}), order: 'asc', limit: MAX_READY_LIMIT });
  for (const t of ls.enrichTasks(mine.tasks.filter((t) => t.worker === agent))) {
    out.push({ ...t, resume: true });
    if (out.length === limit) return { tasks: out, not_offered: notOffered };
  }
  // Pages no bigger than the limit asks for (a few more, as some may be blocked).
  const pageSize = limit === undefined ? READY_PAGE : Math.min(READY_PAGE, Math.max(limit, 8));
  let after: { created_at: string; first_seq: number } | undefined;
  for (;;) {
    const page = ls.store.tasks.openFor(agent, stream, pageSize, after);
    for (const t of ls.enrichTasks(page.tasks)) {
      if (t.blocked_by.length > 0) continue;
      const missing = missingCapabilities(t, capabilities);
      if (missing.length > 0) {
        notOffered.push({
          correlation_id: t.correlation_id,
          reason:
            capabilities === null
              ? `requires ${missing.join(', ')}; ${agent} is not a registered agent, so its capabilities are unknown (palace agent add ${agent} --can ...)`
              : `requires ${missing.join(', ')}; ${agent} is registered with ${capabilities.length > 0 ? capabilities.join(', ') : 'no capabilities'}`,
        });
        continue;
      }
      out.push(t);
      if (out.length === limit) return { tasks: out, not_offered: notOffered };
    }
    if (page.tasks.length < pageSize) return { tasks: out, not_offered: notOffered };
    after = page.last;
  }
}

/** Open tasks for `agent` whose dependencies are applied (the ready queue without the capability filter's report). */
export function readyTasks(ls: CoordinationReads, raw: { agent?: unknown; stream?: unknown; limit?: unknown }): TaskView[] {
  return readyQueue(ls, raw).tasks;
}

/** The task one event belongs to (an event id or a correlation id). */
export function taskOfRef(ls: CoordinationReads, ref: unknown, field = 'event_id'): { correlationId: string; target: LogEvent | undefined } {
  const id = requiredField(field, ref);
  const event = ls.store.getEvent(id);
  if (event) {
    if (!event.correlation_id) throw invalid(field, `event '${id}' has no correlation_id; it is not part of a task`);
    return { correlationId: event.correlation_id, target: event };
  }
  if (ls.store.tasks.hasEvents(id)) return { correlationId: id, target: undefined };
  throw new HubError('log.event_not_found', `no event or task '${id}'`, { field });
}

/** Who may end someone else's claim: the human at the desk (identity.isDesk). */
export interface ReleaseAuthority {
  desk: boolean;
}

/** What the hub stamps on a patch.ready or task.reply (identity.md): the live attempt, or a stale_attempt flag. */
export interface Fence {
  attempt?: string;
  stale?: { attempt: string | null; reason: string };
}

/**
 * The claim attempt a write by `writer` on a task belongs to. The current claimer with a live lease
 * (or a task it made ready) gets the claim event's id as its attempt; naming any other attempt is
 * refused (task.stale_attempt). A writer without the live claim, on a task someone claimed or whose
 * claim it lost, gets a stale flag: the write is kept but never moves the task. A task never claimed
 * (or no task) is not fenced.
 */
export function fenceOf(ls: CoordinationReads, writer: string, correlationId: string | null, given: unknown, now: Date): Fence {
  if (!correlationId) return {};
  const attempt = given === undefined || given === null || given === '' ? undefined : requiredField('attempt', given);
  const events = ls.store.tasks.eventsOf(correlationId);
  if (events.length === 0) {
    if (attempt !== undefined) throw new HubError('task.stale_attempt', `attempt ${attempt} names no claim: ${correlationId} has no events`, { field: 'attempt' });
    return {};
  }
  const task = projectTask(correlationId, events);
  const leaseLive = task.lease_expires_at === null || Date.parse(task.lease_expires_at) > now.getTime();
  const holds = task.claim_event_id !== null && task.worker === writer && ((task.status === 'claimed' && leaseLive) || task.status === 'ready');
  if (attempt !== undefined) {
    if (holds && attempt === task.claim_event_id) return { attempt };
    throw new HubError(
      'task.stale_attempt',
      `attempt ${attempt} is not the live claim on ${correlationId}${task.claim_event_id ? ` (that is ${task.claim_event_id} by ${task.worker ?? '?'}${task.status === 'claimed' && !leaseLive ? `, its lease ended at ${task.lease_expires_at}` : ''})` : ` (it is ${task.status ?? 'unknown'} with no live claim)`}; claim it again; nothing was written`,
      { field: 'attempt', data: { live_attempt: task.claim_event_id, worker: task.worker, status: task.status } },
    );
  }
  if (holds) return { attempt: task.claim_event_id as string };
  if (task.claim_event_id !== null && task.worker !== writer)
    return { stale: { attempt: null, reason: `${correlationId} is ${task.status ?? 'unknown'} under the claim of ${task.worker ?? '?'} (attempt ${task.claim_event_id}); ${writer} does not hold it` } };
  if (task.claim_event_id !== null && task.status === 'claimed' && !leaseLive)
    return { stale: { attempt: task.claim_event_id, reason: `the lease of ${writer} on ${correlationId} ended at ${task.lease_expires_at}; claim it again` } };
  const lost = task.history.some((h) => h.event_type === 'event.ack' && h.to === 'claimed' && h.by === writer);
  if (lost && task.claim_event_id === null)
    return { stale: { attempt: null, reason: `the claim of ${writer} on ${correlationId} ended (${task.lease_expired ? 'lease expired or released' : 'released'}); claim it again` } };
  return {};
}

/** The claim's outcome reported on a `claimed` ack: who holds the task now. */
export interface ClaimOutcome {
  won: boolean;
  worker: string | null;
  claim_event_id: string | null;
  lease_expires_at: string | null;
  message: string;
}

export function claimOutcome(task: TaskState, ack: LogEvent): ClaimOutcome {
  const won = task.claim_event_id === ack.id || (task.status === 'claimed' && task.worker === ack.from_agent);
  return {
    won,
    worker: task.worker,
    claim_event_id: task.claim_event_id,
    lease_expires_at: task.lease_expires_at,
    message: won
      ? `claimed ${task.correlation_id}${task.lease_expires_at ? `; lease until ${task.lease_expires_at} (renew with palace_task_renew)` : ''}`
      : `not claimed: ${task.correlation_id} is ${task.status ?? 'unknown'}${task.status === 'claimed' ? ` by ${task.worker ?? '?'} (claim ${task.claim_event_id ?? '?'}, first in log order wins)` : ''}; your ack is in the log but does not hold the task`,
  };
}

/** The append that renews `from`'s lease on a task it holds; refuses when it does not hold it. */
export function renewalOf(
  ls: CoordinationReads,
  raw: { event_id?: unknown; from_agent?: unknown; lease_ms?: unknown },
  bounds: LeaseBounds,
  now: Date,
): AppendInput {
  const from = requiredField('from_agent', raw.from_agent);
  const leaseMs = boundedMs('lease_ms', raw.lease_ms, bounds);
  const { correlationId } = taskOfRef(ls, raw.event_id);
  const task = ls.task(correlationId);
  if (task.status !== 'claimed' || task.worker !== from || task.claim_event_id === null)
    throw new HubError(
      'task.not_claimed',
      `${from} does not hold ${correlationId}: it is ${task.status ?? 'unknown'}${task.status === 'claimed' ? ` by ${task.worker ?? '?'}` : ''}${task.lease_expired ? ' (the last claim expired; claim it again)' : ''}`,
      { field: 'event_id', data: { status: task.status, worker: task.worker } },
    );
  if (task.lease_expires_at !== null && Date.parse(task.lease_expires_at) <= now.getTime())
    throw new HubError('task.not_claimed', `the lease of ${from} on ${correlationId} ended at ${task.lease_expires_at}; claim it again`, {
      field: 'event_id',
    });
  const request = task.request_event_id ? ls.store.getEvent(task.request_event_id) : undefined;
  const claim = ls.store.getEvent(task.claim_event_id);
  return {
    type: 'claim.renewed',
    stream: request?.stream ?? claim?.stream,
    room: request?.room ?? claim?.room,
    from_agent: from,
    correlation_id: correlationId,
    body: '',
    metadata: {
      claim_event_id: task.claim_event_id,
      attempt: task.claim_event_id,
      lease_ms: leaseMs,
      lease_expires_at: new Date(now.getTime() + leaseMs).toISOString(),
    },
  };
}

/** The `claim.expired` append ending the current claim of a task (by hand, or by the lease sweeper). */
export function expiryOf(
  ls: CoordinationReads,
  raw: { event_id?: unknown; from_agent?: unknown; reason?: unknown },
  sweeper = false,
  authority: ReleaseAuthority = { desk: false },
): AppendInput {
  const from = requiredField('from_agent', raw.from_agent);
  const { correlationId } = taskOfRef(ls, raw.event_id);
  const task = ls.task(correlationId);
  if (task.status !== 'claimed' || task.claim_event_id === null)
    throw new HubError('task.not_claimed', `${correlationId} is not claimed (it is ${task.status ?? 'unknown'}); nothing to release`, {
      field: 'event_id',
    });
  // Only the claimer, the task's requester, the human at the desk or the hub's sweeper ends a claim.
  if (!sweeper && !authority.desk && from !== task.worker && from !== task.requester)
    throw new HubError(
      'claim.not_yours',
      `${from} may not release the claim of ${task.worker ?? '?'} on ${correlationId}: only the claimer, the requester (${task.requester ?? '?'}) or the human at the desk may; nothing was written`,
      { field: 'event_id', data: { worker: task.worker, requester: task.requester } },
    );
  const claim = ls.store.getEvent(task.claim_event_id);
  const reason = typeof raw.reason === 'string' && raw.reason.trim() ? raw.reason.trim() : sweeper ? 'lease expired' : `released by ${from}`;
  return {
    type: 'claim.expired',
    stream: claim?.stream,
    room: claim?.room,
    from_agent: from,
    to_agent: task.worker,
    correlation_id: correlationId,
    body: JSON.stringify({
      reason,
      claimed_event_id: task.claim_event_id,
      worker: task.worker,
      ...(sweeper ? {} : { released_by: from, as: from === task.worker ? 'claimer' : from === task.requester ? 'requester' : 'desk' }),
      ...(sweeper && task.lease_expires_at ? { lease_expires_at: task.lease_expires_at } : {}),
    }),
  };
}

// ---- reservations ----

function allOfTypes(ls: CoordinationReads, types: string[]): LogEvent[] {
  const out: LogEvent[] = [];
  let since: string | undefined;
  for (;;) {
    const page = ls.list({ type: types, since_event_id: since, limit: 500 });
    out.push(...page.events);
    if (!page.has_more) return out;
    since = page.events.at(-1)?.id;
  }
}

/**
 * Every reservation not released, oldest first, from a full scan of the log: the answer while the
 * reservations table of an older log is still being built. A release counts whatever its stream.
 */
export function scanReservations(ls: CoordinationReads, stream: string | null): Reservation[] {
  const events = allOfTypes(ls, ['file.reserved', 'file.released']);
  const released = new Set(events.filter((e) => e.type === 'file.released').map((e) => jsonBody(e)?.reservation_id));
  const out: Reservation[] = [];
  for (const e of events) {
    if (e.type !== 'file.reserved' || released.has(e.id) || (stream && e.stream !== stream)) continue;
    const r = reservationOf(e);
    if (r) out.push({ ...r, correlation_id: e.correlation_id, created_at: e.created_at });
  }
  return out;
}

export interface ReservationFilter {
  stream?: unknown;
  agent?: unknown;
  path?: unknown;
  correlation_id?: unknown;
}

/**
 * Reservations in force now: not released, not expired, and their task (if any) not done. Read from the
 * reservations table through its expiry index (a full scan while an older log's table is being built).
 */
export function activeReservations(ls: CoordinationReads, raw: ReservationFilter, now: Date): Reservation[] {
  const stream = routingField('stream', raw.stream);
  const agent = routingField('agent', raw.agent);
  const path = routingField('path', raw.path);
  const corr = routingField('correlation_id', raw.correlation_id);
  const iso = now.toISOString();
  const held = ls.store.reservations.ready()
    ? ls.store.reservations.held({ stream, agent, correlation_id: corr, after: iso })
    : scanReservations(ls, stream).filter(
        (r) => r.expires_at > iso && (!agent || r.agent === agent) && (!corr || r.correlation_id === corr),
      );
  const tasks = taskStates(ls, [...new Set(held.flatMap((r) => (r.correlation_id ? [r.correlation_id] : [])))]);
  return held.filter(
    (r) =>
      !(r.correlation_id && tasks.get(r.correlation_id)?.done === true) &&
      (!path || r.paths.some((p) => pathMatches(path, p) || globsOverlap(path, p))),
  );
}

export interface ReserveInput {
  paths?: unknown;
  stream?: unknown;
  room?: unknown;
  from_agent?: unknown;
  exclusive?: unknown;
  ttl_ms?: unknown;
  correlation_id?: unknown;
  force?: unknown;
}

/** Who already holds what a new reservation asks for, in a way that conflicts (exclusive on either side). */
export function reservationConflicts(
  held: readonly Reservation[],
  agent: string,
  paths: readonly string[],
  exclusive: boolean,
): Array<{ reservation: Reservation; paths: string[] }> {
  const out: Array<{ reservation: Reservation; paths: string[] }> = [];
  for (const r of held) {
    if (r.agent === agent || !(r.exclusive || exclusive)) continue;
    const overlapping = paths.filter((p) => r.paths.some((q) => globsOverlap(p, q)));
    if (overlapping.length > 0) out.push({ reservation: r, paths: overlapping });
  }
  return out;
}

/** Validates a reservation and checks conflicts; returns the `file.reserved` append (and forced-over conflicts). */
export function reservationOfInput(
  ls: CoordinationReads,
  raw: ReserveInput,
  bounds: LeaseBounds,
  now: Date,
): { append: AppendInput; conflicts: Reservation[] } {
  const from = requiredField('from_agent', raw.from_agent);
  const stream = requiredField('stream', raw.stream);
  const list = typeof raw.paths === 'string' ? [raw.paths] : raw.paths;
  if (!Array.isArray(list) || list.length === 0) throw invalid('paths', 'paths must list at least one path or glob');
  if (list.length > MAX_RESERVATION_PATHS) throw invalid('paths', `at most ${MAX_RESERVATION_PATHS} paths per reservation`);
  const paths = [...new Set(list.map((p) => normalizeGlob(requiredField('paths', p))))];
  if (paths.some((p) => p === '' || p.split('/').includes('..'))) throw invalid('paths', 'paths must be relative to the repository and stay inside it (no ..)');
  for (const p of paths) {
    const problem = globProblem(p);
    if (problem) throw invalid('paths', `path '${p.slice(0, 80)}${p.length > 80 ? '…' : ''}' ${problem}`);
  }
  const ttl = boundedMs('ttl_ms', raw.ttl_ms, bounds);
  const exclusive = raw.exclusive === true || raw.exclusive === 'true';
  const corr = routingField('correlation_id', raw.correlation_id);
  if (corr && !ls.store.tasks.hasEvents(corr))
    throw new HubError('log.event_not_found', `no task '${corr}' to reserve for`, { field: 'correlation_id' });
  const conflicts = reservationConflicts(activeReservations(ls, { stream }, now), from, paths, exclusive);
  if (conflicts.length > 0 && raw.force !== true)
    throw new HubError(
      'reservation.conflict',
      `cannot reserve ${conflicts.flatMap((c) => c.paths).join(', ')}: ${conflicts.map((c) => describeHolder(c.reservation)).join('; ')}. Coordinate with the holder, wait for it to end, or pass force`,
      {
        field: 'paths',
        data: { conflicts: conflicts.map((c) => ({ ...c.reservation, overlapping: c.paths })) },
      },
    );
  const expiresAt = new Date(now.getTime() + ttl).toISOString();
  return {
    append: {
      type: 'file.reserved',
      stream,
      room: raw.room ?? 'reservations',
      from_agent: from,
      to_agent: null,
      correlation_id: corr,
      body: JSON.stringify({ paths, exclusive, expires_at: expiresAt, ...(corr ? { correlation_id: corr } : {}) }),
    },
    conflicts: conflicts.map((c) => c.reservation),
  };
}

/** The `file.released` append for a reservation (by id). */
export function releaseOf(ls: CoordinationReads, raw: { reservation_id?: unknown; from_agent?: unknown }): AppendInput {
  const from = requiredField('from_agent', raw.from_agent);
  const id = requiredField('reservation_id', raw.reservation_id);
  const event = ls.store.getEvent(id);
  if (!event || event.type !== 'file.reserved')
    throw new HubError('log.event_not_found', `no reservation '${id}' (a file.reserved event id)`, { field: 'reservation_id' });
  return {
    type: 'file.released',
    stream: event.stream,
    room: event.room,
    from_agent: from,
    to_agent: null,
    correlation_id: event.correlation_id,
    body: JSON.stringify({ reservation_id: id }),
  };
}
