// Reading tasks: one task, pages with true totals and counts, from the stored projection (the reducer
// over one task's own events while a cold table is still being built in slices), the read-time
// enrichment, and the projection's build, check and rebuild. It is also coordination's read port.

import { HubError } from '../errors.js';
import { projectTask, type TaskState } from '../core/task-state.js';
import type { EventPage, LogEvent } from '../core/types.js';
import { eventQuery, requiredField, taskQuery, type RawQuery, type RawTaskQuery } from '../core/validate.js';
import { enrichTasks, type CoordinationReads, type TaskView } from './coordination.js';
import type { LogFile } from './event-store.js';
import type { ReservationCheck } from './reservation-projection.js';
import type { TaskCheck, TaskCounts, TaskFilter, TaskPage } from './task-projection.js';

/** Lets every pending I/O callback run before the next slice of bulk work. */
const yieldToLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** What task reads need of the log: events by id or query, and the two projection tables. */
export type TaskReadStore = Pick<LogFile, 'getEvent' | 'query' | 'tasks' | 'reservations'>;

export class TaskReads implements CoordinationReads {
  private building: Promise<void> | undefined;
  private buildingReservations: Promise<void> | undefined;
  private closed = false;

  /** `sliceRows`: events read per slice by bulk work; `now`: the service clock. */
  constructor(
    readonly store: TaskReadStore,
    private readonly sliceRows: number,
    private readonly now: () => Date,
  ) {}

  /** Stops starting slices of bulk work (the log is closing). */
  close(): void {
    this.closed = true;
  }

  list(raw: RawQuery): EventPage {
    return this.store.query(eventQuery(raw));
  }

  /** Every event of one correlation id, in append order. */
  eventsOf(correlationId: unknown): LogEvent[] {
    return this.store.tasks.eventsOf(requiredField('correlation_id', correlationId));
  }

  /**
   * Builds the task projection of a log that predates it (or was reset), in slices of `sliceRows`
   * events with the event loop running between them. Resolves at once when it is complete.
   */
  ensureTasks(): Promise<void> {
    if (this.store.tasks.ready()) return Promise.resolve();
    this.building ??= (async () => {
      try {
        while (!this.store.tasks.buildSlice(this.sliceRows)) await yieldToLoop();
      } finally {
        this.building = undefined;
      }
    })();
    return this.building;
  }

  /** One task's state: its row (kept with every append), or the reducer over its events while the table is being built. */
  stateOf(id: string): TaskState | undefined {
    if (this.store.tasks.ready()) return this.store.tasks.get(id);
    const events = this.store.tasks.eventsOf(id);
    return events.length === 0 ? undefined : projectTask(id, events);
  }

  /**
   * A task's first task.request: through its stored request id (one row, however long the task),
   * or a search of its events while a cold table is still being built.
   */
  requestOf(correlationId: string): LogEvent | undefined {
    if (this.store.tasks.ready()) {
      const id = this.store.tasks.requestId(correlationId);
      return id ? this.store.getEvent(id) : undefined;
    }
    return this.list({ correlation_id: correlationId, type: 'task.request', limit: 1 }).events[0];
  }

  /** Completes the task projection now if it is not (blocking: a CLI process has nobody else to answer; the ready queue reads it). */
  completeTasks(): void {
    while (!this.store.tasks.buildSlice(this.sliceRows));
  }

  /**
   * Builds the reservations table of a log that predates it (or was reset), in slices of `sliceRows`
   * seqs with the event loop running between them; until then reads scan the log. The hub starts it.
   */
  ensureReservations(): Promise<void> {
    if (this.closed || this.store.reservations.ready()) return Promise.resolve();
    this.buildingReservations ??= (async () => {
      try {
        while (!this.closed && !this.store.reservations.buildSlice(this.sliceRows)) await yieldToLoop();
      } finally {
        this.buildingReservations = undefined;
      }
    })();
    return this.buildingReservations;
  }

  /** THE read-time enrichment of projected tasks (blocked_by, lease time left, live reservations). */
  enrichTasks(tasks: readonly TaskState[]): TaskView[] {
    return enrichTasks(this, tasks, this.now());
  }

  /**
   * The current state of one task, from the projection table (while a cold table is still being
   * built, the reducer over that task's own events: the same answer, without waiting for the build).
   */
  task(correlationId: unknown): TaskView {
    const id = requiredField('correlation_id', correlationId);
    const task = this.stateOf(id);
    if (!task) throw new HubError('log.event_not_found', `no events with correlation_id '${id}'`, { field: 'correlation_id' });
    return this.enrichTasks([task])[0] as TaskView;
  }

  /**
   * Every task (every correlation id) in order of first appearance, from the projection table.
   * Filters: stream, since_event_id (tasks with an event after it), order. Blocks while building a
   * cold projection: the hub reads through taskPage instead.
   */
  tasks(raw: RawQuery = {}): TaskView[] {
    const q = eventQuery(raw);
    this.completeTasks();
    const filter: TaskFilter = { stream: q.stream, ...(q.since_event_id ? { after_seq: this.seqOf('since_event_id', q.since_event_id) } : {}) };
    return this.enrichTasks(this.store.tasks.page({ ...filter, order: q.order, limit: null }).tasks);
  }

  /**
   * One page of tasks with true totals and counts by status (palace_tasks, the dashboard). Waits for
   * a cold projection to be built in slices; never blocks the loop for long.
   */
  async taskPage(raw: RawTaskQuery): Promise<TaskPage> {
    const q = taskQuery(raw);
    const filter: TaskFilter = {
      status: q.status,
      stream: q.stream,
      requester: q.requester,
      worker: q.worker,
      to_agent: q.to_agent,
      correlation_id: q.correlation_id,
      ...(q.open === null ? {} : { open: q.open }),
      ...(q.since_event_id ? { after_seq: this.seqOf('since_event_id', q.since_event_id) } : {}),
      ...(q.last_event_before === null ? {} : { last_event_before: q.last_event_before }),
    };
    await this.ensureTasks();
    const page = this.store.tasks.page({ ...filter, order: q.order, limit: q.limit, ...(q.cursor === null ? {} : { cursor: q.cursor }) });
    return { ...page, tasks: this.enrichTasks(page.tasks) };
  }

  /** Task counts by status over the whole log (palace_status), once the projection is complete. */
  async taskCounts(): Promise<TaskCounts> {
    await this.ensureTasks();
    return this.store.tasks.counts();
  }

  /**
   * Checks the task projection and the reservations table against a full scan of the log (in slices);
   * lists every difference.
   */
  async verifyTasks(): Promise<TaskCheck & { reservations: ReservationCheck }> {
    await this.ensureTasks();
    await this.ensureReservations();
    const tasks = await this.store.tasks.verify(this.sliceRows, yieldToLoop);
    return { ...tasks, reservations: await this.store.reservations.verify(this.sliceRows, yieldToLoop) };
  }

  /** Drops the task projection and the reservations table and builds them again from the log, in slices. */
  async rebuildTasks(): Promise<void> {
    await this.building;
    await this.buildingReservations;
    this.store.tasks.reset();
    this.store.reservations.reset();
    await this.ensureTasks();
    await this.ensureReservations();
  }

  private seqOf(field: string, id: string): number {
    const event = this.store.getEvent(id);
    if (!event) throw new HubError('log.unknown_cursor', `${field} '${id}' is not an event in this log`, { field });
    return event.seq;
  }
}
