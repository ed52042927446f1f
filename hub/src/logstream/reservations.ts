// Advisory file reservations: which are in force (from the reservations table, or a scan of the log
// while an older log's table is being built), conflicts, and the appends that reserve and release.

import { HubError, invalid } from '../errors.js';
import { globProblem, globsOverlap, normalizeGlob, pathMatches } from '../core/globs.js';
import { describeHolder, jsonBody, reservationOf, type Reservation } from '../core/task-state.js';
import type { LogEvent } from '../core/types.js';
import { requiredField, routingField } from '../core/validate.js';
import type { AppendInput } from './append-input.js';
import { MAX_RESERVATION_PATHS, boundedMs, taskStates, type CoordinationReads, type LeaseBounds } from './coordination.js';

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
