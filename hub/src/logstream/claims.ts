// Claims on tasks: the claim attempt a write belongs to (fencing), the outcome of a claim ack, and the
// appends that renew or end a claim. Rules: docs/coordination.md and docs/identity.md.

import { HubError, invalid } from '../errors.js';
import type { TaskState } from '../core/task-state.js';
import type { LogEvent } from '../core/types.js';
import { requiredField } from '../core/validate.js';
import type { AppendInput } from './append-input.js';
import { boundedMs, type CoordinationReads, type LeaseBounds } from './coordination.js';

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
  // The stored state, not a re-run of the reducer over the task's history: a long task stays cheap to write to.
  const task = ls.stateOf(correlationId);
  if (!task) {
    if (attempt !== undefined) throw new HubError('task.stale_attempt', `attempt ${attempt} names no claim: ${correlationId} has no events`, { field: 'attempt' });
    return {};
  }
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
