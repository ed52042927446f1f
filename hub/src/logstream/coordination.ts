// Coordination's rules on top of the log, and its read port: lease bounds, task dependencies (cycle
// refusal, blocked_by, the ready queue) and the ack order. Claims are in claims.ts, reservations in
// reservations.ts, the service that writes with them in coordination-service.ts. Every write is an
// ordinary event, so it syncs; every read is a projection of events. Rules: docs/coordination.md.

import { HubError, invalid } from '../errors.js';
import { ackStatusesFrom, blockedBy, dependsOnOf, leaseLeftMs, projectTask, type TaskState, type TaskStatus } from '../core/task-state.js';
import type { EventPage, LogEvent, NewEvent } from '../core/types.js';
import { requiredField, routingField, type RawQuery } from '../core/validate.js';
import type { ReservationProjection } from './reservation-projection.js';
import type { TaskProjection } from './task-projection.js';

/**
 * What coordination reads of the log: a narrow port (TaskReads satisfies it), so no coordination
 * module imports the Logstream that calls it.
 */
export interface CoordinationReads {
  readonly store: {
    getEvent(id: string): LogEvent | undefined;
    readonly tasks: Pick<TaskProjection, 'claimedBy' | 'eventsOf' | 'hasEvents' | 'openFor' | 'ready' | 'requestId' | 'statuses'>;
    readonly reservations: Pick<ReservationProjection, 'held' | 'ready'>;
  };
  list(raw: RawQuery): EventPage;
  /** One task's state as the reducer makes it (the stored row; the reducer over its events while a cold table is built). */
  stateOf(correlationId: string): TaskState | undefined;
  /** A task's first task.request, or undefined. */
  requestOf(correlationId: string): LogEvent | undefined;
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
  return ls.requestOf(correlationId);
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
  const mine = ls.store.tasks.claimedBy(agent, stream, limit ?? MAX_READY_LIMIT);
  for (const t of ls.enrichTasks(mine)) {
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
