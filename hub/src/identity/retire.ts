// Retiring an agent (a crashed or departed one): its live claims and file reservations are released,
// its secret is revoked for good, and an `agent.retired` event records who retired it and what was
// released. The hub does it through palace_agent_retire; the CLI's `palace agent retire` calls that.

import { HubError } from '../errors.js';
import type { LogEvent } from '../core/types.js';
import type { Logstream } from '../logstream/logstream.js';
import type { AgentRegistry } from './agent-registry.js';

export interface RetireResult {
  agent: string;
  retired_by: string;
  released_claims: string[];
  released_reservations: string[];
  event: LogEvent;
}

/** Retires `name` on behalf of `by`: releases what it holds, revokes its secret, records the event. */
export function retireAgent(ls: Logstream, registry: AgentRegistry, name: string, by: string, reason?: string): RetireResult {
  const agent = registry.get(name);
  if (!agent) throw new HubError('agent.not_found', `no registered agent '${name}' (palace agent list)`, { field: 'name' });
  // Revoke first: from here on the agent cannot claim or reserve anything new.
  registry.retire(name, by);
  const why = reason?.trim() || `agent ${name} retired by ${by}`;
  ls.completeTasks();
  const claims = ls.store.tasks.page({ status: ['claimed'], worker: [name], order: 'asc', limit: null }).tasks.filter((t) => t.worker === name);
  const releasedClaims: string[] = [];
  for (const task of claims) {
    try {
      ls.releaseClaim({ event_id: task.correlation_id, from_agent: by, reason: why }, { desk: true });
      releasedClaims.push(task.correlation_id);
    } catch (err) {
      if (!(err instanceof HubError && err.code === 'task.not_claimed')) throw err; // released meanwhile
    }
  }
  const releasedReservations: string[] = [];
  for (const r of ls.reservations({ agent: name })) {
    ls.releaseReservation({ reservation_id: r.reservation_id, from_agent: by });
    releasedReservations.push(r.reservation_id);
  }
  const event = ls.appendNow({
    type: 'agent.retired',
    stream: 'palace/agents',
    room: 'identity',
    from_agent: by,
    to_agent: name,
    body: JSON.stringify({ agent: name, retired_by: by, reason: why, released_claims: releasedClaims, released_reservations: releasedReservations }),
  });
  return { agent: name, retired_by: by, released_claims: releasedClaims, released_reservations: releasedReservations, event };
}
