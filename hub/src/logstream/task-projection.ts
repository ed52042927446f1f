// The `tasks` table of logstream.sqlite3: one row per correlation_id holding projectTask's output (as
// JSON) plus the columns reads filter and count on. Kept inside the append's own transaction (the
// commit hook) by stepping each task's stored fold; built in slices for a log that predates it; checked
// against the reducer over the whole log. Its reads are task-table-reads.ts.

import type Database from 'better-sqlite3';

import { finishTask, foldTask, foldTaskEvent, newTaskFold, projectTask, type TaskFold, type TaskState } from '../core/task-state.js';
import type { LogEvent } from '../core/types.js';
import { BuildMarker } from './build-marker.js';
import { PROJECTED_SEQ_KEY, coverRoutes, rebuildRoutes, verifyRoutes, type RouteCheck } from './event-routes.js';
import { EVENT_COLUMNS, toEvent, type EventRow } from './sqlite-rows.js';
import { TaskTableReads } from './task-table-reads.js';

export type { TaskCounts, TaskFilter, TaskPage, TaskPageQuery } from './task-table-reads.js';

/** meta key present while the table is being built: events with seq above it are not projected yet. */
export const BUILT_SEQ_KEY = 'tasks_built_seq';

/** The projection's watermark (event-routes.ts): every event up to it is in the task table and the routing tables. */
export { PROJECTED_SEQ_KEY } from './event-routes.js';

/** Pending events read per statement while catching up (all in the caller's one transaction). */
const CATCH_UP_ROWS = 2_000;

/**
 * The table and its first indexes, as schema migration 3 created them (never edited since: later
 * indexes come with their own migration, tasks_ready_idx with 4 and tasks_quiet_idx with 5).
 */
export const TASKS_DDL = `
  CREATE TABLE tasks (
    correlation_id TEXT PRIMARY KEY,
    first_seq INTEGER NOT NULL,
    last_seq INTEGER NOT NULL,
    status TEXT,
    done INTEGER NOT NULL,
    requester TEXT,
    worker TEXT,
    to_agent TEXT,
    stream TEXT NOT NULL,
    created_at TEXT,
    last_event_at TEXT,
    state_json TEXT NOT NULL
  ) STRICT;
  CREATE INDEX tasks_first_idx ON tasks(first_seq);
  CREATE INDEX tasks_done_idx ON tasks(done, first_seq);
  CREATE INDEX tasks_status_idx ON tasks(status, first_seq);
  -- How many tasks are in each (status, done): kept with every row change, so unfiltered counts
  -- (palace_status, the dashboard) read a handful of rows instead of counting the table.
  CREATE TABLE task_counts (status TEXT NOT NULL, done INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (status, done)) STRICT;
`;

/**
 * The index "quiet since" reads go through: claimed tasks only, by their last event's time (schema
 * migration 7; 5 had every task, status first). The stalled count is the read it serves; other statuses
 * with last_event_before read tasks_status_idx. Only claims and their events move it.
 */
export const TASKS_QUIET_INDEX = "tasks_quiet_idx ON tasks(last_event_at) WHERE status = 'claimed'";

/** The index a stream-filtered task page reads (schema migration 6): a stream's tasks in first_seq order. */
export const TASKS_STREAM_INDEX = 'tasks_stream_idx ON tasks(stream, first_seq)';

/** The ready queue's index (schema migration 6; 4 had it on every task, status first): open tasks only. */
export const TASKS_READY_INDEX = "tasks_ready_idx ON tasks(to_agent, created_at, first_seq) WHERE status = 'open'";

/** One difference between the table and a full scan of the log. */
export interface TaskDiff {
  correlation_id: string;
  problem: 'missing' | 'extra' | 'different';
}

/** What a check of the table against a full scan found. */
export interface TaskCheck {
  tasks: number;
  differences: TaskDiff[];
  /** Buckets of the kept counts that differ from a count of the table. */
  count_drift: string[];
  /** The routing tables against the log (rows missing or extra). */
  routes: RouteCheck;
}

/** The indexed columns of a stored row, as they were before a write. */
type Before = { status: string | null; done: number; to_agent: string | null; created_at: string | null; last_event_at: string | null; stream: string };

/** The columns of a task row that some index holds (an UPDATE names them only when they move). */
const INDEXED_COLUMNS = ['status', 'done', 'to_agent', 'created_at', 'last_event_at', 'stream'] as const;

/** A task's row being rewritten: its fold and the columns that are not the state's. */
interface TaskWrite {
  fold: TaskFold;
  before: Before | undefined;
  firstSeq: number;
  lastSeq: number;
  /** The request's stream, else the first event's. */
  stream: string;
}

/**
 * What the fold holds beyond the finished state (fold_json): the reducer's between-event memory, and
 * the lease and reservations where finishTask hid them (a task no longer claimed, or done). Small.
 */
function foldExtras(fold: TaskFold, finished: TaskState): string {
  const extras: Record<string, unknown> = { h: fold.claimHlc, s: fold.claimStep, x: fold.expired, w: fold.expiredWorkers };
  if (fold.state.lease_expires_at !== finished.lease_expires_at) extras.l = fold.state.lease_expires_at;
  if (fold.state.reservations !== finished.reservations) extras.r = fold.state.reservations;
  return JSON.stringify(extras);
}

/** A fold back from the stored finished state and its fold_json. */
export function foldFromRow(stateJson: string, foldJson: string): TaskFold {
  const state = JSON.parse(stateJson) as TaskState;
  const x = JSON.parse(foldJson) as { h: string; s: number; x: TaskFold['expired']; w: string[]; l?: string | null; r?: TaskState['reservations'] };
  if (x.l !== undefined) state.lease_expires_at = x.l;
  if (x.r !== undefined) state.reservations = x.r;
  return { state, claimHlc: x.h, claimStep: x.s, expired: x.x, expiredWorkers: x.w };
}

export class TaskProjection extends TaskTableReads {
  private readonly built: BuildMarker;
  /** The row UPDATE of each shape (which indexed columns move), by its bit mask: built and looked up once. */
  private readonly updates: Database.Statement[] = [];

  constructor(db: Database.Database) {
    super(db);
    this.built = new BuildMarker(db, BUILT_SEQ_KEY);
  }

  /**
   * Applies stored events (in seq order, inside the caller's transaction) to their tasks: each task's
   * row is read once, its fold stepped by each of its events and written once, so the cost is that of
   * the events, not of the task's history. While the table is still being built, and for a row from
   * before fold_json (schema 5), the task is re-projected from all its events instead.
   */
  apply(events: readonly LogEvent[], upTo = Number.MAX_SAFE_INTEGER): void {
    const touched = new Map<string, TaskWrite | null>();
    const ready = this.ready();
    for (const event of events) {
      const id = event.correlation_id;
      if (!id) continue;
      let entry = touched.get(id);
      if (entry === undefined) {
        entry = ready ? this.load(id, event) : null;
        touched.set(id, entry);
      }
      if (entry === null) continue; // re-projected below
      foldTaskEvent(entry.fold, event);
      entry.lastSeq = event.seq;
      if (entry.fold.state.request_event_id === event.id) entry.stream = event.stream;
    }
    for (const [id, entry] of touched) {
      if (entry === null) this.refresh([id], upTo);
      else this.write(id, entry);
    }
  }

  /** The stored fold of a task about to get `next` (a new one when it has no row); null: re-project it. */
  private load(id: string, next: LogEvent): TaskWrite | null {
    const row = this.stmt(
      'SELECT first_seq, last_seq, status, done, to_agent, created_at, last_event_at, stream, state_json, fold_json FROM tasks WHERE correlation_id = ?',
    ).get(id) as (Before & { first_seq: number; last_seq: number; state_json: string; fold_json: string | null }) | undefined;
    if (!row) return { fold: newTaskFold(id), before: undefined, firstSeq: next.seq, lastSeq: next.seq, stream: next.stream };
    if (row.fold_json === null) return null;
    return { fold: foldFromRow(row.state_json, row.fold_json), before: row, firstSeq: row.first_seq, lastSeq: row.last_seq, stream: row.stream };
  }

  /**
   * Re-projects these correlation ids from all their events (up to seq `upTo`: a catch-up stops
   * there, and folds later events on next) with the reference reducer; inside the caller's transaction.
   */
  refresh(ids: Iterable<string>, upTo?: number): void {
    for (const id of new Set(ids)) {
      const events = this.eventsOf(id, upTo);
      const before = this.stmt('SELECT status, done, to_agent, created_at, last_event_at, stream FROM tasks WHERE correlation_id = ?').get(id) as Before | undefined;
      if (events.length === 0) {
        if (before) this.bump(before.status, before.done, -1);
        this.stmt('DELETE FROM tasks WHERE correlation_id = ?').run(id);
        continue;
      }
      const fold = foldTask(id, events);
      const request = events.find((e) => e.id === fold.state.request_event_id);
      const first = events[0] as LogEvent;
      const last = events.at(-1) as LogEvent;
      this.write(id, { fold, before, firstSeq: first.seq, lastSeq: last.seq, stream: (request ?? first).stream });
    }
  }

  /** Stores a task's fold and its finished state, moving its count when its status changed. */
  private write(id: string, w: TaskWrite): void {
    const state = finishTask(w.fold);
    const { before } = w;
    const done = state.done ? 1 : 0;
    const stateJson = JSON.stringify(state);
    const foldJson = foldExtras(w.fold, state);
    if (before) {
      // SET names only the indexed columns whose value moves: SQLite rewrites an index entry for every
      // column named, changed or not, and most events leave all of them but last_event_at (often that
      // too, within one second) as they were. One prepared statement per shape (at most 2^6).
      const params: unknown[] = [w.lastSeq, state.requester, state.worker, stateJson, foldJson];
      const next: Record<keyof Before | 'stream', unknown> = {
        status: state.status,
        done,
        to_agent: state.to_agent,
        created_at: state.created_at,
        last_event_at: state.last_event_at,
        stream: w.stream,
      };
      let shape = 0; // bit i: INDEXED_COLUMNS[i] moves
      INDEXED_COLUMNS.forEach((column, i) => {
        if (before[column] === next[column]) return;
        shape |= 1 << i;
        params.push(next[column]);
      });
      params.push(id);
      const update = (this.updates[shape] ??= this.stmt(
        `UPDATE tasks SET last_seq = ?, requester = ?, worker = ?, state_json = ?, fold_json = ?${INDEXED_COLUMNS.filter((_, i) => shape & (1 << i))
          .map((c) => `, ${c} = ?`)
          .join('')} WHERE correlation_id = ?`,
      ));
      update.run(params);
    } else
      this.stmt(
        `INSERT INTO tasks (correlation_id, first_seq, last_seq, status, done, requester, worker, to_agent, stream, created_at, last_event_at, state_json, fold_json)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        id,
        w.firstSeq,
        w.lastSeq,
        state.status,
        done,
        state.requester,
        state.worker,
        state.to_agent,
        w.stream,
        state.created_at,
        state.last_event_at,
        stateJson,
        foldJson,
      );
    // first_seq never moves: events only ever get higher seqs. Counts move only on a change.
    if (before && (before.status !== state.status || before.done !== done)) this.bump(before.status, before.done, -1);
    if (!before || before.status !== state.status || before.done !== done) this.bump(state.status, done, 1);
  }

  /** Moves one task into (by +1) or out of (by -1) its (status, done) count; '' stands for no status. */
  private bump(status: string | null, done: number, by: 1 | -1): void {
    this.stmt(
      'INSERT INTO task_counts (status, done, n) VALUES (?, ?, ?) ON CONFLICT(status, done) DO UPDATE SET n = n + excluded.n',
    ).run(status ?? '', done, by);
  }

  /** The watermark: every event up to it is projected; null for a log without one (nothing lags). */
  projectedSeq(): number | null {
    const v = this.stmt('SELECT value FROM meta WHERE key = ?').pluck().get(PROJECTED_SEQ_KEY) as string | undefined;
    return v === undefined ? null : Number(v);
  }

  /**
   * Projects every event above the watermark, in seq order, and moves the watermark to the last;
   * inside the caller's write transaction (the one that stored them, or one of its own). The number projected.
   */
  projectPending(): number {
    let from = this.projectedSeq();
    if (from === null) return 0;
    let projected = 0;
    for (;;) {
      const rows = this.stmt(`SELECT ${EVENT_COLUMNS} FROM events WHERE seq > ? ORDER BY seq LIMIT ?`).all(from, CATCH_UP_ROWS) as EventRow[];
      if (rows.length === 0) break;
      const events = rows.map(toEvent);
      const last = (events.at(-1) as LogEvent).seq;
      this.apply(events, last);
      // The routing rows of the same events, in the same transaction: they hold what the watermark covers.
      coverRoutes(this.stmt, from, last);
      projected += events.length;
      from = last;
      if (rows.length < CATCH_UP_ROWS) break;
    }
    if (projected > 0) this.stmt('UPDATE meta SET value = ? WHERE key = ?').run(String(from), PROJECTED_SEQ_KEY);
    return projected;
  }

  /** The table is complete (not being built in slices). */
  ready(): boolean {
    return this.built.seq() === null;
  }

  /**
   * Projects the correlation ids of the next `rows` unbuilt events, in one transaction; true when the
   * table is complete. Appends made meanwhile refresh their own tasks, so slices may interleave with them.
   */
  buildSlice(rows: number): boolean {
    return this.built.buildSlice((from) => {
      // Pending appends first: the slice re-projects its tasks from every event, the pending ones included.
      this.projectPending();
      const slice = this.stmt('SELECT seq, correlation_id FROM events WHERE seq > ? ORDER BY seq LIMIT ?').all(from, rows) as Array<{
        seq: number;
        correlation_id: string | null;
      }>;
      this.refresh(slice.flatMap((r) => (r.correlation_id ? [r.correlation_id] : [])));
      return slice.length < rows ? null : (slice.at(-1)?.seq ?? from);
    });
  }

  /** Empties the table and marks it unbuilt from the first event (then build it in slices). */
  reset(): void {
    this.db
      .transaction(() => {
        this.stmt('DELETE FROM tasks').run();
        this.stmt('DELETE FROM task_counts').run();
        this.built.restart();
        // The build covers every event there is: none is pending for the fold, and the routing tables
        // are built again at once up to the same seq (2.4 s at 1M events: docs/tasks.md).
        const top = this.stmt('SELECT coalesce(max(seq), 0) FROM events').pluck().get() as number;
        rebuildRoutes(this.stmt, top);
        this.stmt('UPDATE meta SET value = ? WHERE key = ?').run(String(top), PROJECTED_SEQ_KEY);
      })
      .immediate();
  }

  /**
   * Compares the table with a full scan of the log: every correlation id found reading the whole log
   * (in slices of `rows` events), each re-projected from its events by the reducer, against the stored
   * row. Yields between slices; returns every difference.
   */
  async verify(rows: number, yieldNow: () => Promise<void>): Promise<TaskCheck> {
    this.fresh();
    const ids = new Set<string>();
    let after = 0;
    for (;;) {
      const slice = this.stmt('SELECT seq, correlation_id FROM events WHERE seq > ? ORDER BY seq LIMIT ?').all(after, rows) as Array<{
        seq: number;
        correlation_id: string | null;
      }>;
      for (const r of slice) if (r.correlation_id) ids.add(r.correlation_id);
      if (slice.length < rows) break;
      after = slice.at(-1)?.seq ?? after;
      await yieldNow();
    }
    const differences: TaskDiff[] = [];
    let done = 0;
    for (const id of ids) {
      const problem = this.compare(id);
      if (problem) differences.push({ correlation_id: id, problem });
      if (++done % rows === 0) await yieldNow();
    }
    for (const id of this.stmt('SELECT correlation_id FROM tasks').pluck().all() as string[])
      if (!ids.has(id)) differences.push({ correlation_id: id, problem: 'extra' });
    const routes = await verifyRoutes(this.db, rows, yieldNow);
    // Another process may have appended meanwhile: confirm each difference in one snapshot.
    return this.db.transaction((): TaskCheck => {
      const confirmed = differences.flatMap((d): TaskDiff[] => {
        const problem = this.compare(d.correlation_id);
        return problem ? [{ correlation_id: d.correlation_id, problem }] : [];
      });
      return { tasks: ids.size, differences: confirmed, count_drift: this.countDrift(), routes };
    })();
  }

  /**
   * How the stored row of one correlation id differs from the reducer over its events up to the
   * watermark (the row holds those; later ones are pending, not a difference), if it does.
   */
  private compare(id: string): TaskDiff['problem'] | null {
    const events = this.eventsOf(id, this.projectedSeq() ?? undefined);
    const stored = this.storedState(id);
    if (events.length === 0) return stored ? 'extra' : null;
    if (!stored) return 'missing';
    return JSON.stringify(stored) === JSON.stringify(projectTask(id, events)) ? null : 'different';
  }
}
