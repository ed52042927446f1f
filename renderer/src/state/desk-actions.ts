// Every write the human makes from the dashboard, each one MCP tool call through the same hub
// client the page reads with (so a read-only hub refuses it exactly as it refuses an agent).

import type { HubClient } from '../../../hub/src/client/hub-client.js';
import type { LogEvent } from '../../../hub/src/core/types.js';

export interface NewTask {
  to_agent: string;
  stream: string;
  room: string;
  correlation_id: string;
  branch?: string;
  base_commit?: string;
  /** Correlation ids this task waits for (request metadata `depends_on`). */
  depends_on?: string[];
  body: string;
}

function optional(fields: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(fields)) if (v !== undefined && v.trim() !== '') out[k] = v.trim();
  return out;
}

export function createTask(client: HubClient, agent: string, task: NewTask): Promise<LogEvent> {
  return client.call('palace_event_append', {
    type: 'task.request',
    status: 'open',
    from_agent: agent,
    to_agent: task.to_agent.trim(),
    stream: task.stream.trim(),
    room: task.room.trim(),
    correlation_id: task.correlation_id.trim(),
    body: task.body,
    ...optional({ branch: task.branch, base_commit: task.base_commit }),
    ...(task.depends_on && task.depends_on.length > 0 ? { metadata: { depends_on: task.depends_on } } : {}),
  });
}

/** A `task.reply` on a task (no status: it does not move the task), addressed to `to`. */
export function replyOnTask(
  client: HubClient,
  agent: string,
  request: LogEvent,
  to: string,
  body: string,
): Promise<LogEvent> {
  return client.call('palace_event_append', {
    type: 'task.reply',
    from_agent: agent,
    to_agent: to,
    stream: request.stream,
    room: request.room,
    // A request without one is sent without it: the schema takes a string or nothing, never null.
    correlation_id: request.correlation_id ?? undefined,
    body,
  });
}

/** Approves (`applied`) or rejects (`failed`) a patch: an ack of its patch.ready event. */
export function decidePatch(
  client: HubClient,
  agent: string,
  patchEventId: string,
  status: 'applied' | 'failed',
  note: string,
): Promise<LogEvent> {
  return client.call('palace_event_ack', {
    event_id: patchEventId,
    from_agent: agent,
    status,
    ...optional({ body: note }),
  });
}

/** Releases a (stale) claim: `palace_task_release`, which appends `claim.expired`. */
export function releaseClaim(
  client: HubClient,
  agent: string,
  correlationId: string,
  reason: string,
): Promise<unknown> {
  return client.call('palace_task_release', { event_id: correlationId, from_agent: agent, reason });
}

/** Cancels a file reservation: `palace_release`, which appends `file.released`. */
export function cancelReservation(client: HubClient, agent: string, reservationId: string): Promise<unknown> {
  return client.call('palace_release', { reservation_id: reservationId, from_agent: agent });
}
