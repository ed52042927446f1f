// The task table behind a watermark (issue 30): an append commits its event (and chain) only; the
// events it leaves pending are projected in batches, many per transaction, so the task rows, their
// indexes and the counts are written once per batch instead of once per commit. A batch is projected
// inside the append transaction that makes it `batch` events long (no commit of its own), else
// `flushMs` after the last append, else by the first read that needs it. Every read stays exact:
// reads of one task fold its pending events onto its row in memory (nothing written), reads that span
// tasks (pages, counts, the ready queue, the lease sweeper) catch the table up first, in an immediate
// transaction that re-reads the watermark, so two processes never project an event twice.
// docs/decisions.md ("The task projection lags its log").

import type Database from 'better-sqlite3';

import { finishTask, foldTaskEvent, newTaskFold, projectTask, type TaskState } from '../core/task-state.js';
import type { EventStatus } from '../core/types.js';
import { EVENT_COLUMNS, toEvent, type EventRow } from './sqlite-rows.js';
import { PROJECTED_SEQ_KEY, TaskProjection, foldFromRow } from './task-projection.js';

/** Pending events that make an append project them in its own transaction. */
export const PROJECTION_BATCH = 256;
/** How long pending events wait for a batch or a read before they are projected on their own. */
export const PROJECTION_FLUSH_MS = 25;

export interface TaskCatchUpOptions {
  batch?: number;
  flushMs?: number;
}

export class TaskTable extends TaskProjection {
  /** Events this connection stored since it last projected (others' appends are counted by them). */
  private pending = 0;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly batch: number;
  private readonly flushMs: number;
  private readonly statusesInSnapshot: Database.Transaction<(ids: readonly string[]) => Map<string, { status: EventStatus | null; done: boolean }>>;

  constructor(db: Database.Database, options: TaskCatchUpOptions = {}) {
    super(db);
    this.batch = options.batch ?? PROJECTION_BATCH;
    this.flushMs = options.flushMs ?? PROJECTION_FLUSH_MS;
    this.statusesInSnapshot = db.transaction((ids: readonly string[]) => this.statusesWithPending(ids));
  }

  /** Inside the transaction that stored `count` events: projects the backlog there once it is a batch. */
  appended(count: number): void {
    this.pending += count;
    if (this.pending >= this.batch) this.projectPending();
  }

  /** After that transaction committed: what is still pending is projected soon, unless a read comes first. */
  committed(): void {
    if (this.pending === 0 || this.timer !== undefined || this.closed) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      try {
        this.catchUp();
      } catch {
        // Busy or closed: the events stay pending, and the next read (here or in any process) projects them.
      }
    }, this.flushMs);
    this.timer.unref();
  }

  override projectPending(): number {
    const n = super.projectPending();
    this.pending = 0;
    return n;
  }

  /**
   * Projects every pending event now: inside the caller's write transaction, or in an immediate one of
   * its own that re-reads the watermark (another process may have caught up meanwhile). A read-only
   * connection cannot; its reads of one task still fold the pending events in.
   */
  catchUp(): void {
    if (!this.db.open || this.db.readonly) return;
    if (this.db.inTransaction) {
      this.projectPending();
      return;
    }
    if (!this.behind()) {
      this.pending = 0;
      return;
    }
    this.db.transaction(() => this.projectPending()).immediate();
  }

  /** Whether any event is above the watermark (two probes, no write). */
  private behind(): boolean {
    const row = this.stmt(`SELECT (SELECT value FROM meta WHERE key = ?) AS w, (SELECT coalesce(max(seq), 0) FROM events) AS top`).get(PROJECTED_SEQ_KEY) as {
      w: string | null;
      top: number;
    };
    return row.w !== null && Number(row.w) < row.top;
  }

  protected override fresh(): void {
    if (!this.db.inTransaction) this.catchUp();
  }

  /**
   * One task now: its row with the task's pending events folded on, in memory. The row and the
   * watermark are read by one statement (one snapshot: the row holds exactly the events up to it);
   * the pending events are read after, so a later commit only makes the answer newer, never wrong.
   */
  override get(id: string): TaskState | undefined {
    const row = this.stmt(
      'SELECT m.value AS w, t.state_json, t.fold_json FROM meta m LEFT JOIN tasks t ON t.correlation_id = ? WHERE m.key = ?',
    ).get(id, PROJECTED_SEQ_KEY) as { w: string; state_json: string | null; fold_json: string | null } | undefined;
    if (!row) return this.storedState(id); // a log without a watermark: nothing lags
    const pending = this.pendingOf(id, Number(row.w));
    if (pending.length === 0) return row.state_json === null ? undefined : (JSON.parse(row.state_json) as TaskState);
    // A row from before fold_json (schema 5): the reducer over all its events, as a catch-up would.
    if (row.state_json !== null && row.fold_json === null) return projectTask(id, this.eventsOf(id));
    const fold = row.state_json === null || row.fold_json === null ? newTaskFold(id) : foldFromRow(row.state_json, row.fold_json);
    for (const event of pending) foldTaskEvent(fold, event);
    return finishTask(fold);
  }

  override requestId(id: string): string | null | undefined {
    return this.get(id)?.request_event_id;
  }

  /** The status of each of these tasks, those with pending events folded in; one snapshot. */
  override statuses(ids: readonly string[]): Map<string, { status: EventStatus | null; done: boolean }> {
    // A few (an ack's order check reads one): each through get(), exact without a transaction of its own.
    if (ids.length > 4) return this.statusesInSnapshot(ids);
    const out = new Map<string, { status: EventStatus | null; done: boolean }>();
    for (const id of ids) {
      // The row's columns and the watermark in one snapshot; only a task with pending events is folded.
      const row = this.stmt(
        'SELECT m.value AS w, t.correlation_id AS id, t.status, t.done FROM meta m LEFT JOIN tasks t ON t.correlation_id = ? WHERE m.key = ?',
      ).get(id, PROJECTED_SEQ_KEY) as { w: string; id: string | null; status: EventStatus | null; done: number | null } | undefined;
      if (row && this.stmt('SELECT 1 FROM events WHERE correlation_id = ? AND seq > ? LIMIT 1').get(id, Number(row.w)) === undefined) {
        if (row.id !== null) out.set(id, { status: row.status, done: row.done === 1 });
        continue;
      }
      const state = this.get(id);
      if (state) out.set(id, { status: state.status, done: state.done });
    }
    return out;
  }

  private statusesWithPending(ids: readonly string[]): Map<string, { status: EventStatus | null; done: boolean }> {
    const out = super.statuses(ids);
    const w = this.projectedSeq();
    if (w === null) return out;
    // The tasks among them with events above the watermark (the pending tail is at most a batch or so).
    const tail = new Set(this.stmt('SELECT DISTINCT correlation_id FROM events WHERE seq > ? AND correlation_id IS NOT NULL').pluck().all(w) as string[]);
    const lagging = ids.filter((id) => tail.has(id));
    for (const id of lagging) {
      const state = this.get(id);
      if (state) out.set(id, { status: state.status, done: state.done });
    }
    return out;
  }

  /** The events of one task above the watermark, in seq order (a rowid range: the pending tail is about a batch). */
  private pendingOf(id: string, after: number): ReturnType<typeof toEvent>[] {
    return (this.stmt(`SELECT ${EVENT_COLUMNS} FROM events WHERE correlation_id = ? AND seq > ? ORDER BY seq`).all(id, after) as EventRow[]).map(toEvent);
  }

  /** Stops the timer and projects what this connection left pending (a reopen would catch up anyway). */
  close(): void {
    this.closed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.pending === 0) return;
    try {
      this.catchUp();
    } catch {
      // Left pending: the next reader of the file projects it.
    }
  }
}
