// The task-state projection: from the events of one correlation_id (in append order) to the
// task's current status and the history of its transitions. Pure; used by the CLI, hub and tray.

import type { EventStatus, LogEvent } from './types.js';

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

export interface TaskState {
  correlation_id: string;
  status: TaskStatus | null;
  request_event_id: string | null;
  requester: string | null;
  worker: string | null;
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
  claimed: ['ready', 'blocked', 'failed'],
  ready: ['applied', 'failed'],
  applied: [],
  failed: [],
  blocked: [],
  superseded: [],
};

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

/** Folds the events of one correlation id into its task state. Events must be in append order. */
export function projectTask(correlationId: string, events: readonly LogEvent[]): TaskState {
  const state: TaskState = {
    correlation_id: correlationId,
    status: null,
    request_event_id: null,
    requester: null,
    worker: null,
    artifact_ids: [],
    created_at: null,
    last_event_at: null,
    last_event_id: null,
    event_count: 0,
    done: false,
    history: [],
  };
  for (const event of events) {
    state.event_count += 1;
    state.created_at ??= event.created_at;
    state.last_event_at = event.created_at;
    state.last_event_id = event.id;
    for (const id of event.artifact_ids) if (!state.artifact_ids.includes(id)) state.artifact_ids.push(id);
    if (event.type === 'task.request' && state.request_event_id === null) {
      state.request_event_id = event.id;
      state.requester = event.from_agent;
      state.worker = event.to_agent === '*' ? null : event.to_agent;
    }
    if (event.type === 'event.ack' && event.status === 'claimed') state.worker = event.from_agent;
    if (event.type === 'patch.ready' && state.worker === null) state.worker = event.from_agent;
    const to = statusCarried(event);
    if (to === null) continue;
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
  }
  state.done = isTerminal(state.status);
  return state;
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
