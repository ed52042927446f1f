// The projections a log keeps in the same transaction as its events: the task table and the
// reservations table. Each hangs off the store's commit hook; neither the local nor the remote
// writer knows of them.

import type { LogEvent } from '../core/types.js';
import { RESERVATION_TYPES, ReservationProjection } from './reservation-projection.js';
import type { StoreCore } from './store-core.js';
import { TaskProjection } from './task-projection.js';

export interface Projections {
  /** The task projection table, refreshed in the same transaction as every append (local or remote). */
  readonly tasks: TaskProjection;
  /** The reservations not released, kept in the same transaction as every append (local or remote). */
  readonly reservations: ReservationProjection;
}

const isReservationEvent = (e: { type: string }): boolean => (RESERVATION_TYPES as readonly string[]).includes(e.type);

/** Opens both projections over the core's file and hooks them to its commits: the task table, then the reservations. */
export function attachProjections(core: StoreCore): Projections {
  const tasks = new TaskProjection(core.db);
  const reservations = new ReservationProjection(core.db, () => core.topSeq());
  core.onCommit((events: readonly LogEvent[]) => {
    tasks.apply(events);
    reservations.apply(events.filter(isReservationEvent));
  });
  return { tasks, reservations };
}
