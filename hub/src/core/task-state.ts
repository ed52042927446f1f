// The task-state projection: from the events of one correlation_id (in append order) to the
// task's current status, the history of its transitions, its claim lease, dependencies and file
// reservations. Pure (no clock): used by the CLI, hub and tray. Rules: docs/coordination.md.

import { ACK_STATUSES, EVENT_STATUSES, type AckStatus, type EventStatus, type LogEvent } from './types.js';

export type TaskStatus = EventStatus;

/** One status change, with whether the spec's state table permits it from the previous status. */
export interface TaskTransition {
  from: TaskStatus | null;
  to: TaskStatus;
  event_id: string;
  event_type: string;
  by: string;
  at: string;
  expected: boolean;
}

/** A file reservation (`file.reserved`) made for this task and not yet released. */
export interface TaskReservation {
  reservation_id: string;
  agent: string;
  stream: string;
  paths: string[];
  exclusive: boolean;
  expires_at: string;
}

/** A file reservation in force, as palace_reservations lists it (the task's reservation plus its task and time). */
export interface Reservation extends TaskReservation {
  correlation_id: string | null;
  created_at: string;
}

/** One line naming who holds a reservation, how, for which task and until when (conflict and guard messages). */
export function describeHolder(r: Reservation): string {
  return `${r.agent} holds ${r.exclusive ? 'exclusive' : 'shared'} ${r.paths.join(', ')}${r.correlation_id ? ` for task ${r.correlation_id}` : ''} until ${r.expires_at} (reservation ${r.reservation_id})`;
}

/** A write the hub stored flagged `stale_attempt` (docs/identity.md): it never moves the task. */
export interface StaleAttempt {
  event_id: string;
  event_type: string;
  by: string;
  at: string;
  /** The attempt it named (or null: its writer held no live claim). */
  attempt: string | null;
  reason: string;
}

export interface TaskState {
  correlation_id: string;
  status: TaskStatus | null;
  request_event_id: string | null;
  requester: string | null;
  /** The request's to_agent (`*` for a broadcast); null without a request. */
  to_agent: string | null;
  worker: string | null;
  /** Correlation ids the request depends on (its `depends_on`). */
  depends_on: string[];
  /** Capabilities the request requires of its worker (metadata `requires`); absent when none. */
  requires?: string[];
  /** The claim ack that holds the task now (null when unclaimed). */
  claim_event_id: string | null;
  /** When the current claim's lease ends (ISO); null when unclaimed or claimed without a lease. */
  lease_expires_at: string | null;
  /** A `claim.expired` event ended the last claim (the task went back to open). */
  lease_expired: boolean;
  /** A `patch.ready` came from a claimer whose lease had expired. */
  late_patch: boolean;
  /** Writes flagged stale_attempt (a patch or reply from a writer without the live claim); absent when none. */
  stale_attempts?: StaleAttempt[];
  /** Reservations made for this task and not released (all released once the task is done). */
  reservations: TaskReservation[];
  artifact_ids: string[];
  created_at: string | null;
  last_event_at: string | null;
  last_event_id: string | null;
  event_count: number;
  /** Terminal: applied, failed, blocked or superseded. */
  done: boolean;
  history: TaskTransition[];
}

const TERMINAL: ReadonlySet<TaskStatus> = new Set(['applied', 'failed', 'blocked', 'superseded']);

/** The moves the spec's state table shows; anything else is recorded but flagged `expected: false`. */
const ALLOWED: Record<string, readonly TaskStatus[]> = {
  none: ['open'],
  open: ['claimed', 'blocked', 'failed'],
  // claimed -> open: the claim's lease expired (or it was released) and the task can be claimed again.
  claimed: ['ready', 'blocked', 'failed', 'open'],
  ready: ['applied', 'failed'],
  applied: [],
  failed: [],
  blocked: [],
  superseded: [],
};

/**
 * The ack statuses an `event.ack` may carry on a task whose latest status is `from`: the state table's
 * moves, plus `claimed` on a claimed task (the claim rules decide who holds it; the ack is told).
 * Acks outside this set are refused at append time (task.out_of_order; docs/decisions.md).
 */
export function ackStatusesFrom(from: TaskStatus | null): AckStatus[] {
  return ACK_STATUSES.filter((to) => isExpected(from, to) || (to === 'claimed' && from === 'claimed'));
}

export function isTerminal(status: TaskStatus | null): boolean {
  return status !== null && TERMINAL.has(status);
}

/** The status an event moves its task to, or null when it does not move it (e.g. `status` notes). */
export function statusCarried(event: Pick<LogEvent, 'type' | 'status'>): TaskStatus | null {
  if (event.status === 'superseded') return 'superseded';
  switch (event.type) {
    case 'task.request':
      return event.status ?? 'open';
    case 'patch.ready':
      return event.status ?? 'ready';
    case 'event.ack':
    case 'task.reply':
      return event.status;
    default:
      return null;
  }
}

function isExpected(from: TaskStatus | null, to: TaskStatus): boolean {
  if (to === 'superseded') return true;
  return (ALLOWED[from ?? 'none'] ?? []).includes(to);
}

/** An event body as a JSON object, or null when it is not one (bodies are verbatim text). */
export function jsonBody(event: Pick<LogEvent, 'body'>): Record<string, unknown> | null {
  const text = event.body.trim();
  if (!text.startsWith('{')) return null;
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function stringList(value: unknown): string[] | null {
  return Array.isArray(value) && value.every((v) => typeof v === 'string') ? [...new Set(value as string[])] : null;
}

/** The correlation ids a task.request depends on: metadata `depends_on`, else a JSON body's `depends_on`. */
export function dependsOnOf(event: Pick<LogEvent, 'metadata' | 'body'>): string[] {
  return stringList(event.metadata.depends_on) ?? stringList(jsonBody(event)?.depends_on) ?? [];
}

/** The lease end a claim (or renewal) carries in its metadata, or null. */
function leaseEndOf(event: LogEvent): string | null {
  const end = event.metadata.lease_expires_at;
  return typeof end === 'string' && !Number.isNaN(Date.parse(end)) ? new Date(end).toISOString() : null;
}

const later = (a: string | null, b: string | null): string | null => (a === null ? b : b === null ? a : a > b ? a : b);

/** A `file.reserved` event as a reservation, or null when its body is not one. */
export function reservationOf(event: Pick<LogEvent, 'id' | 'from_agent' | 'stream' | 'body'>): TaskReservation | null {
  const body = jsonBody(event);
  const paths = stringList(body?.paths);
  if (!body || !paths || typeof body.expires_at !== 'string') return null;
  return {
    reservation_id: event.id,
    agent: event.from_agent,
    stream: event.stream,
    paths,
    exclusive: body.exclusive === true,
    expires_at: body.expires_at,
  };
}

/** A claimed task with no event for this long is stalled (the dashboard, `logstream tasks --stalled`). */
export const STALLED_AFTER_MS = 10 * 60_000;

/** The palace_tasks filter of the tasks stalled at `now`: claimed, with no event since STALLED_AFTER_MS before it. */
export function stalledFilter(now: number): { status: 'claimed'; last_event_before: string } {
  return { status: 'claimed', last_event_before: new Date(now - STALLED_AFTER_MS).toISOString() };
}

/** The statuses of a task in flight (not done): open, claimed and ready. */
export const IN_FLIGHT_STATUSES: readonly TaskStatus[] = EVENT_STATUSES.filter((s) => !TERMINAL.has(s));

/**
 * A task's state part-way through the fold: the TaskState before projectTask's last touches (lease and
 * reservations as the events left them, `done` not yet set), and what the reducer keeps between events.
 * The task table stores it (as `fold_json`, beside the finished state) so an append applies one event
 * to it instead of folding the task's whole history again.
 */
export interface TaskFold {
  state: TaskState;
  /** The HLC stamp of the current claim (a concurrent earlier-stamped claim may take over). */
  claimHlc: string;
  /** The history index of the current claim's transition while nothing happened after it. */
  claimStep: number;
  /** The claim the last `claim.expired` ended, and the lease end that expirer saw. */
  expired: { claim: string; worker: string; seen: string | null; step: number } | null;
  /** Workers whose claim expired (a later patch.ready from one is late). */
  expiredWorkers: string[];
}

/** The fold of a task with no events yet. */
export function newTaskFold(correlationId: string): TaskFold {
  return {
    state: {
      correlation_id: correlationId,
      status: null,
      request_event_id: null,
      requester: null,
      to_agent: null,
      worker: null,
      depends_on: [],
      claim_event_id: null,
      lease_expires_at: null,
      lease_expired: false,
      late_patch: false,
      reservations: [],
      artifact_ids: [],
      created_at: null,
      last_event_at: null,
      last_event_id: null,
      event_count: 0,
      done: false,
      history: [],
    },
    claimHlc: '',
    claimStep: -1,
    expired: null,
    expiredWorkers: [],
  };
}

/**
 * Applies one event (the task's next in append order) to its fold, in place: O(1) in the task's
 * history but for the artifact and reservation lists it carries. projectTask is this over every event.
 *
 * Claims: the first claim of an open task wins; a later claim by another agent while the claim is
 * live changes nothing (except between replicas: a concurrent claim with an earlier HLC stamp takes
 * over while no progress was made, so every replica settles on the same winner). `claim.renewed`
 * extends the holder's lease. `claim.expired` naming the current claim sends the task back to open
 * unless a renewal extended the lease past the end the expirer saw (in either log order).
 */
export function foldTaskEvent(fold: TaskFold, event: LogEvent): void {
  const state = fold.state;
  const move = (to: TaskStatus): void => {
    state.history.push({
      from: state.status,
      to,
      event_id: event.id,
      event_type: event.type,
      by: event.from_agent,
      at: event.created_at,
      expected: isExpected(state.status, to),
    });
    state.status = to;
  };
  const forgetExpired = (worker: string): void => {
    fold.expiredWorkers = fold.expiredWorkers.filter((w) => w !== worker);
  };
  const claim = (): void => {
    state.worker = event.from_agent;
    state.claim_event_id = event.id;
    state.lease_expires_at = leaseEndOf(event);
    state.lease_expired = false;
    fold.claimHlc = event.hlc;
    forgetExpired(event.from_agent);
  };
  state.event_count += 1;
  state.created_at ??= event.created_at;
  state.last_event_at = event.created_at;
  state.last_event_id = event.id;
  const stale = staleAttemptOf(event);
  if (stale) {
    // Stored for the record, never the task's patch or reply (the hub fenced it: identity.md).
    (state.stale_attempts ??= []).push(stale);
    if (event.type === 'patch.ready' && fold.expiredWorkers.includes(event.from_agent)) state.late_patch = true;
    return;
  }
  for (const id of event.artifact_ids) if (!state.artifact_ids.includes(id)) state.artifact_ids.push(id);
  if (event.type === 'task.request' && state.request_event_id === null) {
    state.request_event_id = event.id;
    state.requester = event.from_agent;
    state.to_agent = event.to_agent;
    state.worker = event.to_agent === '*' ? null : event.to_agent;
    state.depends_on = dependsOnOf(event).filter((id) => id !== state.correlation_id);
    const requires = stringList(event.metadata.requires);
    if (requires && requires.length > 0) state.requires = requires;
  }
  if (event.type === 'file.reserved') {
    const reservation = reservationOf(event);
    if (reservation) state.reservations.push(reservation);
    return;
  }
  if (event.type === 'file.released') {
    const id = jsonBody(event)?.reservation_id;
    state.reservations = state.reservations.filter((r) => r.reservation_id !== id);
    return;
  }
  if (event.type === 'claim.renewed') {
    const of = event.metadata.claim_event_id;
    const end = leaseEndOf(event);
    const expired = fold.expired;
    if (state.status === 'claimed' && of === state.claim_event_id && event.from_agent === state.worker)
      state.lease_expires_at = later(state.lease_expires_at, end);
    else if (
      expired !== null &&
      of === expired.claim &&
      event.from_agent === expired.worker &&
      state.status === 'open' &&
      state.history.length - 1 === expired.step &&
      end !== null &&
      (expired.seen === null ? false : end > expired.seen)
    ) {
      // The renewal was made before its author saw the expiry: the claim lives on.
      move('claimed');
      state.worker = expired.worker;
      state.claim_event_id = expired.claim;
      state.lease_expires_at = end;
      state.lease_expired = false;
      forgetExpired(expired.worker);
      fold.claimStep = state.history.length - 1;
      fold.expired = null;
    }
    return;
  }
  if (event.type === 'claim.expired') {
    const body = jsonBody(event) ?? {};
    const seen = typeof body.lease_expires_at === 'string' ? body.lease_expires_at : null;
    const stale = seen !== null && state.lease_expires_at !== null && state.lease_expires_at > seen;
    if (state.status === 'claimed' && state.claim_event_id !== null && body.claimed_event_id === state.claim_event_id && state.worker !== null && !stale) {
      const worker = state.worker;
      move('open');
      fold.expired = { claim: state.claim_event_id, worker, seen, step: state.history.length - 1 };
      if (!fold.expiredWorkers.includes(worker)) fold.expiredWorkers.push(worker);
      state.worker = state.to_agent === '*' ? null : state.to_agent;
      state.claim_event_id = null;
      state.lease_expires_at = null;
      state.lease_expired = true;
      fold.claimStep = -1;
    }
    return;
  }
  if (event.type === 'event.ack' && event.status === 'claimed') {
    if (state.status === 'claimed' && state.worker !== null && event.from_agent !== state.worker) {
      // A competing claim. Only an earlier-stamped concurrent claim (another replica) takes over.
      const step = state.history[fold.claimStep];
      if (step && fold.claimStep === state.history.length - 1 && event.hlc !== '' && event.hlc < fold.claimHlc) {
        Object.assign(step, { event_id: event.id, by: event.from_agent, at: event.created_at });
        claim();
      }
      return;
    }
    if (state.status === 'claimed' && event.from_agent === state.worker) {
      state.lease_expires_at = later(state.lease_expires_at, leaseEndOf(event));
      move('claimed');
      return;
    }
    claim();
    move('claimed');
    fold.claimStep = state.history.length - 1;
    return;
  }
  if (event.type === 'patch.ready') {
    if (fold.expiredWorkers.includes(event.from_agent)) state.late_patch = true;
    if (state.worker === null) state.worker = event.from_agent;
  }
  const to = statusCarried(event);
  if (to === null) return;
  move(to);
}

/** The task state a fold stands for: done set, and no lease once unclaimed nor reservations once done. */
export function finishTask(fold: TaskFold): TaskState {
  const state = fold.state;
  const done = isTerminal(state.status);
  return {
    ...state,
    lease_expires_at: state.status === 'claimed' ? state.lease_expires_at : null,
    reservations: done ? [] : state.reservations,
    done,
  };
}

/** Folds the events of one correlation id into its fold (events in append order). */
export function foldTask(correlationId: string, events: readonly LogEvent[]): TaskFold {
  const fold = newTaskFold(correlationId);
  for (const event of events) foldTaskEvent(fold, event);
  return fold;
}

/**
 * Folds the events of one correlation id into its task state. Events must be in append order. The
 * reference the task table (which applies one event at a time) is checked against.
 */
export function projectTask(correlationId: string, events: readonly LogEvent[]): TaskState {
  return finishTask(foldTask(correlationId, events));
}

/** Dependencies of a task not yet `applied`, given the status of other tasks (read time; the dashboard uses it too). */
export function blockedBy(task: Pick<TaskState, 'depends_on'>, statusOf: (correlationId: string) => TaskStatus | null | undefined): string[] {
  return task.depends_on.filter((id) => statusOf(id) !== 'applied');
}

/** The stale_attempt flag the hub put on a patch.ready or task.reply, as the task lists it; null when unflagged. */
export function staleAttemptOf(event: LogEvent): StaleAttempt | null {
  const flag = event.metadata.stale_attempt;
  if (!flag || typeof flag !== 'object' || (event.type !== 'patch.ready' && event.type !== 'task.reply')) return null;
  const f = flag as { attempt?: unknown; reason?: unknown };
  return {
    event_id: event.id,
    event_type: event.type,
    by: event.from_agent,
    at: event.created_at,
    attempt: typeof f.attempt === 'string' ? f.attempt : null,
    reason: typeof f.reason === 'string' ? f.reason : 'stale attempt',
  };
}

/** Ms until the task's claim lease ends at `now` (negative once lapsed), or null without a lease. */
export function leaseLeftMs(task: Pick<TaskState, 'lease_expires_at'>, now: Date): number | null {
  return task.lease_expires_at === null ? null : Date.parse(task.lease_expires_at) - now.getTime();
}

/** Groups events by correlation id (keeping append order) and projects each task. */
export function projectTasks(events: readonly LogEvent[]): TaskState[] {
  const groups = new Map<string, LogEvent[]>();
  for (const event of events) {
    if (!event.correlation_id) continue;
    const list = groups.get(event.correlation_id);
    if (list) list.push(event);
    else groups.set(event.correlation_id, [event]);
  }
  return [...groups.entries()].map(([id, list]) => projectTask(id, list));
}
