// Task rows for the dashboard on top of the shared projection (hub/src/core/task-state.ts, stored
// by the hub and paged through palace_tasks): which tasks are stalled, and how they sort. Pure.

import { projectTasks, STALLED_AFTER_MS, type TaskState } from '../../../hub/src/core/task-state.js';
import type { LogEvent } from '../../../hub/src/core/types.js';

export { STALLED_AFTER_MS };
/** An open task nobody claimed for this long needs attention too. */
export const UNCLAIMED_AFTER_MS = 30 * 60_000;

export interface TaskRow extends TaskState {
  /** Milliseconds since the last event of the task. */
  idleMs: number;
  /** Milliseconds since the first event. */
  ageMs: number;
  stalled: boolean;
  unclaimed: boolean;
  /** The request body's first line. */
  title: string;
}

const ORDER: Record<string, number> = {
  claimed: 0,
  open: 1,
  ready: 2,
  blocked: 3,
  failed: 4,
  applied: 5,
  superseded: 6,
};

/** Task rows from a window of events (projected here); the Tasks view uses hubTaskRows instead. */
export function taskRows(events: readonly LogEvent[], now: number): TaskRow[] {
  const byId = new Map(events.map((e) => [e.id, e]));
  return decorateTasks(projectTasks(events), (t) => (t.request_event_id ? byId.get(t.request_event_id) : undefined), now);
}

/** Task rows from the hub's projection (palace_tasks pages), with the request events known so far. */
export function hubTaskRows(tasks: readonly TaskState[], requests: ReadonlyMap<string, LogEvent>, now: number): TaskRow[] {
  return decorateTasks(tasks, (t) => requests.get(t.correlation_id), now);
}

function decorateTasks(tasks: readonly TaskState[], requestOf: (t: TaskState) => LogEvent | undefined, now: number): TaskRow[] {
  return tasks
    .filter((t) => t.status !== null)
    .map((t) => {
      const last = t.last_event_at ? Date.parse(t.last_event_at) : now;
      const first = t.created_at ? Date.parse(t.created_at) : now;
      const request = requestOf(t);
      const idleMs = Math.max(0, now - last);
      return {
        ...t,
        idleMs,
        ageMs: Math.max(0, now - first),
        stalled: t.status === 'claimed' && idleMs >= STALLED_AFTER_MS,
        unclaimed: t.status === 'open' && idleMs >= UNCLAIMED_AFTER_MS,
        title:
          (request?.body ?? '')
            .split('\n')
            .find((l) => l.trim() !== '')
            ?.trim() ?? '',
      };
    })
    .sort((a, b) => {
      if (a.stalled !== b.stalled) return a.stalled ? -1 : 1;
      if (a.done !== b.done) return a.done ? 1 : -1;
      const o = (ORDER[a.status ?? ''] ?? 9) - (ORDER[b.status ?? ''] ?? 9);
      if (!a.done && o !== 0) return o;
      return (b.last_event_at ?? '').localeCompare(a.last_event_at ?? '');
    });
}
