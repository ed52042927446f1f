// Coordination as a service: claims with leases (ack, renew, release, expiry), the ready queue and
// advisory file reservations. It reads the log through a narrow port (CoordinationReads) and writes
// through one append function; the rules themselves are the functions of coordination.ts.

import { HubError, invalid } from '../errors.js';
import type { LogEvent } from '../core/types.js';
import { ackStatus, metadataJson, requiredField } from '../core/validate.js';
import type { AckInput, AppendInput } from './append-input.js';
import { claimOutcome, expiryOf, renewalOf, type ClaimOutcome, type ReleaseAuthority } from './claims.js';
import { DEFAULT_LEASE_BOUNDS, boundedMs, missingCapabilities, readyQueue, type CoordinationReads, type LeaseBounds } from './coordination.js';
import { activeReservations, releaseOf, reservationOfInput, type ReservationFilter, type ReserveInput } from './reservations.js';
import type { Reservation } from '../core/task-state.js';

/** What coordination needs besides its reads: an append, and the clock. */
export interface CoordinationPort {
  reads: CoordinationReads;
  /** Appends one event in its own transaction, with every check of a plain append. */
  appendNow(raw: AppendInput): LogEvent;
  now(): Date;
}

export class Coordination {
  constructor(private readonly port: CoordinationPort) {}

  /**
   * Appends an `event.ack` for an event; the target is never changed. A `claimed` ack carries a
   * lease (lease_ms, lease_expires_at) and its result says whether it holds the task (`claim`).
   */
  ack(raw: AckInput, leases: LeaseBounds = DEFAULT_LEASE_BOUNDS, claimer?: { capabilities: readonly string[] }): LogEvent & { claim?: ClaimOutcome } {
    const { reads } = this.port;
    const eventId = requiredField('event_id', raw.event_id);
    const target = reads.store.getEvent(eventId);
    if (!target) throw new HubError('log.event_not_found', `event '${eventId}' not found`, { field: 'event_id' });
    const status = ackStatus(raw.status);
    if (status === 'claimed' && claimer && target.correlation_id) {
      const missing = missingCapabilities(reads.task(target.correlation_id), claimer.capabilities);
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
      Object.assign(extra, { lease_ms: leaseMs, lease_expires_at: new Date(this.port.now().getTime() + leaseMs).toISOString() });
    } else if (raw.lease_ms !== undefined) throw invalid('lease_ms', 'lease_ms is only for a claimed ack');
    const event = this.port.appendNow({
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
    const task = this.port.reads.stateOf(event.correlation_id);
    if (!task) throw new HubError('store.failed', `task ${event.correlation_id} has no state after its claim was stored`);
    return { ...event, claim: claimOutcome(task, event) };
  }

  /** Renews the lease of a claim its author still holds (appends `claim.renewed`). */
  renew(raw: { event_id?: unknown; from_agent?: unknown; lease_ms?: unknown }, leases: LeaseBounds = DEFAULT_LEASE_BOUNDS): LogEvent & { lease_expires_at: string } {
    const event = this.port.appendNow(renewalOf(this.port.reads, raw, leases, this.port.now()));
    return { ...event, lease_expires_at: String(event.metadata.lease_expires_at) };
  }

  /**
   * Ends the current claim of a task (appends `claim.expired`; the task is open again): by its claimer,
   * its requester, or the desk (`authority.desk`); anyone else gets claim.not_yours.
   */
  releaseClaim(raw: { event_id?: unknown; from_agent?: unknown; reason?: unknown }, authority: ReleaseAuthority = { desk: false }): LogEvent {
    return this.port.appendNow(expiryOf(this.port.reads, raw, false, authority));
  }

  /** The lease sweeper's expiry (from the hub's own identity, carrying the lease end it saw). */
  expireClaim(correlationId: string, fromAgent: string): LogEvent {
    return this.port.appendNow(expiryOf(this.port.reads, { event_id: correlationId, from_agent: fromAgent }, true));
  }

  /** The ready queue for an agent with these capabilities (null: unknown): own claims first, then what it can do; and what it cannot, with why. */
  readyQueue(raw: { agent?: unknown; stream?: unknown; limit?: unknown }, capabilities: readonly string[] | null = null): ReturnType<typeof readyQueue> {
    return readyQueue(this.port.reads, raw, capabilities);
  }

  /** Reserves paths (advisory); refuses a conflict with another agent's reservation unless `force`. */
  reserve(raw: ReserveInput, leases: LeaseBounds = DEFAULT_LEASE_BOUNDS): { reservation: Reservation; event: LogEvent; overridden: Reservation[] } {
    const { append, conflicts } = reservationOfInput(this.port.reads, raw, leases, this.port.now());
    const event = this.port.appendNow(append);
    const filter = { correlation_id: event.correlation_id ?? undefined, agent: event.from_agent, stream: event.stream };
    const reservation = activeReservations(this.port.reads, filter, this.port.now()).find((r) => r.reservation_id === event.id);
    if (!reservation) throw new HubError('store.failed', `reservation ${event.id} was stored but is not active`);
    return { reservation, event, overridden: conflicts };
  }

  /** Reservations in force now (filter by stream, agent, path or task). */
  reservations(raw: ReservationFilter = {}): Reservation[] {
    return activeReservations(this.port.reads, raw, this.port.now());
  }

  /** Releases a reservation by hand (appends `file.released`). */
  releaseReservation(raw: { reservation_id?: unknown; from_agent?: unknown }): LogEvent {
    return this.port.appendNow(releaseOf(this.port.reads, raw));
  }
}
