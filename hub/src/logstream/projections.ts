// The projections a log keeps: the task table (behind a watermark, projected in batches:
// task-catch-up.ts) and the reservations table (in the same transaction as its events). Each hangs off
// the store's commit hook; neither the local nor the remote writer knows of them.

import type { LogEvent } from '../core/types.js';
import { RESERVATION_TYPES, ReservationProjection } from './reservation-projection.js';
import type { StoreCore } from './store-core.js';
import { TaskTable, type TaskCatchUpOptions } from './task-catch-up.js';

export interface Projections {
  /** The task projection table: appends leave it behind, batches and reads bring it up to date. */
  readonly tasks: TaskTable;
  /** The reservations not released, kept in the same transaction as every append (local or remote). */
  readonly reservations: ReservationProjection;
}

const isReservationEvent = (e: { type: string }): boolean => (RESERVATION_TYPES as readonly string[]).includes(e.type);

/** Opens both projections over the core's file and hooks them to its commits: the task table, then the reservations. */
export function attachProjections(core: StoreCore, options: TaskCatchUpOptions = {}): Projections {
  const tasks = new TaskTable(core.db, options);
  const reservations = new ReservationProjection(core.db, () => core.topSeq());
  core.onCommit((events: readonly LogEvent[]) => {
    tasks.appended(events.length);
    reservations.apply(events.filter(isReservationEvent));
  });
  core.onCommitted(() => tasks.committed());
  return { tasks, reservations };
}
