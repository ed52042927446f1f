// The `tasks` table of logstream.sqlite3: one row per correlation_id holding projectTask's output (as
// JSON) plus the columns reads filter and count on. Refreshed inside the append's own transaction by
// re-running the reducer over that correlation's events; built in slices for a log that predates it.

import type Database from 'better-sqlite3';

import { finishTask, foldTask, foldTaskEvent, newTaskFold, projectTask, type TaskFold, type TaskState } from '../core/task-state.js';
import { EVENT_STATUSES, type EventStatus, type LogEvent } from '../core/types.js';
import { statementCache, type StatementCache } from '../sqlite-statements.js';
import { BuildMarker } from './build-marker.js';
import { EVENT_COLUMNS, toEvent, type EventRow } from './sqlite-rows.js';

/** meta key present while the table is being built: events with seq above it are not projected yet. */
export const BUILT_SEQ_KEY = 'tasks_built_seq';

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

/** The index "quiet since" reads go through (schema migration 5): status first, then the last event's time. */
export const TASKS_QUIET_INDEX = 'tasks_quiet_idx ON tasks(status, last_event_at)';

/** The index a stream-filtered task page reads (schema migration 6): a stream's tasks in first_seq order. */
export const TASKS_STREAM_INDEX = 'tasks_stream_idx ON tasks(stream, first_seq)';

/** The ready queue's index (schema migration 6; 4 had it on every task, status first): open tasks only. */
export const TASKS_READY_INDEX = "tasks_ready_idx ON tasks(to_agent, created_at, first_seq) WHERE status = 'open'";

/** Filters of a task read; every list means "any of". */
export interface TaskFilter {
  status?: readonly EventStatus[];
  /** true: only tasks not done; false: only done ones. */
  open?: boolean;
  stream?: readonly string[];
  requester?: readonly string[];
  worker?: readonly string[];
  to_agent?: readonly string[];
  /** Only these tasks (correlation ids). */
  correlation_id?: readonly string[];
  /** Only tasks with an event after this local seq. */
  after_seq?: number;
  /**
   * Only tasks whose last event is older than this (`created_at` form, YYYY-MM-DDTHH:MM:SSZ): quiet
   * since. A state filter like status: counts ignore it. With one status, read through tasks_quiet_idx.
   */
  last_event_before?: string;
}

export interface TaskPageQuery extends TaskFilter {
  order: 'asc' | 'desc';
  /** null: every matching task. */
  limit: number | null;
  /** The first_seq to continue after (a page's cursor). */
  cursor?: number;
}

/** Task counts: every task matching the filters (status filter aside), by status. */
export interface TaskCounts {
  all: number;
  /** Not done: open, claimed or ready (or no status yet). */
  active: number;
  done: number;
  by_status: Record<EventStatus | 'none', number>;
}

export interface TaskPage {
  tasks: TaskState[];
  count: number;
  /** How many tasks match every filter (across all pages). */
  total: number;
  counts: TaskCounts;
  has_more: boolean;
  /** Pass as `cursor` for the next page; null on the last. */
  cursor: string | null;
}

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
}

type Row = { correlation_id: string; first_seq: number; state_json: string };

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
function foldFromRow(stateJson: string, foldJson: string): TaskFold {
  const state = JSON.parse(stateJson) as TaskState;
  const x = JSON.parse(foldJson) as { h: string; s: number; x: TaskFold['expired']; w: string[]; l?: string | null; r?: TaskState['reservations'] };
  if (x.l !== undefined) state.lease_expires_at = x.l;
  if (x.r !== undefined) state.reservations = x.r;
  return { state, claimHlc: x.h, claimStep: x.s, expired: x.x, expiredWorkers: x.w };
}

function emptyCounts(): TaskCounts {
  const by = Object.fromEntries([...EVENT_STATUSES, 'none'].map((s) => [s, 0])) as Record<EventStatus | 'none', number>;
  return { all: 0, active: 0, done: 0, by_status: by };
}

export class TaskProjection {
  private readonly stmt: StatementCache;
  private readonly built: BuildMarker;

  constructor(private readonly db: Database.Database) {
    this.stmt = statementCache(db);
    this.built = new BuildMarker(db, BUILT_SEQ_KEY);
  }

  /** The events of one correlation id, in append order (through events_correlation_idx). */
  eventsOf(correlationId: string): LogEvent[] {
    const rows = this.stmt(`SELECT ${EVENT_COLUMNS} FROM events WHERE correlation_id = ? ORDER BY seq`).all(correlationId) as EventRow[];
    return rows.map(toEvent);
  }

  /**
   * Applies stored events (in seq order, inside the caller's transaction) to their tasks: each task's
   * row is read once, its fold stepped by each of its events and written once, so the cost is that of
   * the events, not of the task's history. While the table is still being built, and for a row from
   * before fold_json (schema 5), the task is re-projected from all its events instead.
   */
  apply(events: readonly LogEvent[]): void {
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
      if (entry === null) this.refresh([id]);
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

  /** Re-projects these correlation ids from all their events (the reference reducer); inside the caller's transaction. */
  refresh(ids: Iterable<string>): void {
    for (const id of new Set(ids)) {
      const events = this.eventsOf(id);
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
      const moved: Array<[string, unknown]> = [];
      const next: Record<keyof Before | 'stream', unknown> = {
        status: state.status,
        done,
        to_agent: state.to_agent,
        created_at: state.created_at,
        last_event_at: state.last_event_at,
        stream: w.stream,
      };
      for (const column of INDEXED_COLUMNS) if (before[column] !== next[column]) moved.push([column, next[column]]);
      this.stmt(
        `UPDATE tasks SET last_seq = ?, requester = ?, worker = ?, state_json = ?, fold_json = ?${moved.map(([c]) => `, ${c} = ?`).join('')} WHERE correlation_id = ?`,
      ).run(w.lastSeq, state.requester, state.worker, stateJson, foldJson, ...moved.map(([, v]) => v), id);
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

  /**
   * The claimed tasks in first_seq order after `after`, at most `limit` (a page costs `limit` rows
   * however few hold a lease): each one's lease end and the replica its claim came from, null when it
   * has none. What the lease sweeper tracks, read at its start instead of the whole log.
   */
  claimedLeases(after: number, limit: number): Array<{ correlation_id: string; first_seq: number; lease_expires_at: string | null; origin_replica: string | null }> {
    return this.stmt(
      `SELECT t.correlation_id, t.first_seq, t.lease_expires_at, e.origin_replica
       FROM (SELECT correlation_id, first_seq, json_extract(state_json, '$.lease_expires_at') AS lease_expires_at,
               json_extract(state_json, '$.claim_event_id') AS claim_event_id
             FROM tasks WHERE status = 'claimed' AND first_seq > ? ORDER BY first_seq LIMIT ?) t
       LEFT JOIN events e ON t.lease_expires_at IS NOT NULL AND e.id = t.claim_event_id
       ORDER BY t.first_seq`,
    ).all(after, limit) as Array<{ correlation_id: string; first_seq: number; lease_expires_at: string | null; origin_replica: string | null }>;
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
      })
      .immediate();
  }

  /** One task as stored, or undefined. */
  get(correlationId: string): TaskState | undefined {
    const json = this.stmt('SELECT state_json FROM tasks WHERE correlation_id = ?').pluck().get(correlationId) as string | undefined;
    return json === undefined ? undefined : (JSON.parse(json) as TaskState);
  }

  /** The stored status (and whether done) of each of these tasks that has a row (none for an id with no events). */
  statuses(ids: readonly string[]): Map<string, { status: EventStatus | null; done: boolean }> {
    const out = new Map<string, { status: EventStatus | null; done: boolean }>();
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500);
      const rows = this.stmt(
        `SELECT correlation_id, status, done FROM tasks WHERE correlation_id IN (${chunk.map(() => '?').join(',')})`,
      ).all(...chunk) as Array<{ correlation_id: string; status: EventStatus | null; done: number }>;
      for (const r of rows) out.set(r.correlation_id, { status: r.status, done: r.done === 1 });
    }
    return out;
  }

  /** Whether any event carries this correlation id (one index probe). */
  hasEvents(correlationId: string): boolean {
    return this.stmt('SELECT 1 FROM events WHERE correlation_id = ? LIMIT 1').get(correlationId) !== undefined;
  }

  /**
   * Open tasks addressed to `agent` or to '*' (optionally of one stream), oldest first (created_at,
   * then first appearance), `limit` at a time after `after` (the previous page's last row): the ready
   * queue's candidates, read through tasks_ready_idx (open tasks only). (A row always has created_at: its first event's.)
   */
  openFor(
    agent: string,
    stream: string | null,
    limit: number,
    after?: { created_at: string; first_seq: number },
  ): { tasks: TaskState[]; last: { created_at: string; first_seq: number } | undefined } {
    const rows = this.stmt(
      `SELECT first_seq, created_at, state_json FROM tasks INDEXED BY tasks_ready_idx
        WHERE status = 'open' AND to_agent IN (?, '*')${stream === null ? '' : ' AND stream = ?'}
          ${after ? 'AND (created_at, first_seq) > (?, ?)' : ''}
        ORDER BY created_at, first_seq LIMIT ?`,
    ).all(agent, ...(stream === null ? [] : [stream]), ...(after ? [after.created_at, after.first_seq] : []), limit) as Array<{
      first_seq: number;
      created_at: string;
      state_json: string;
    }>;
    const lastRow = rows.at(-1);
    return {
      tasks: rows.map((r) => JSON.parse(r.state_json) as TaskState),
      last: lastRow ? { created_at: lastRow.created_at, first_seq: lastRow.first_seq } : undefined,
    };
  }

  /**
   * `quietByScan`: the last_event_before term is written so that SQLite cannot read it on
   * tasks_quiet_idx (a unary +), and filters rows met in first_seq order instead.
   */
  private where(f: TaskFilter, withStatus: boolean, quietByScan = false): { sql: string; params: unknown[] } {
    const where: string[] = [];
    const params: unknown[] = [];
    const inList = (column: string, values: readonly string[] | undefined): void => {
      if (!values || values.length === 0) return;
      where.push(`${column} IN (${values.map(() => '?').join(',')})`);
      params.push(...values);
    };
    if (withStatus) {
      inList('status', f.status);
      if (f.open !== undefined) where.push(f.open ? 'done = 0' : 'done = 1');
      if (f.last_event_before !== undefined) {
        where.push(quietByScan ? '+last_event_at < ?' : 'last_event_at < ?');
        params.push(f.last_event_before);
      }
    }
    inList('stream', f.stream);
    inList('requester', f.requester);
    inList('worker', f.worker);
    inList('to_agent', f.to_agent);
    inList('correlation_id', f.correlation_id);
    if (f.after_seq !== undefined) {
      where.push('last_seq > ?');
      params.push(f.after_seq);
    }
    return { sql: where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '', params };
  }

  /** Counts by status of the tasks matching the filters (the status, open and last_event_before filters aside). */
  counts(f: TaskFilter = {}): TaskCounts {
    const { sql, params } = this.where(f, false);
    // Unfiltered: the kept counts; filtered: counted in the table.
    const rows = (
      sql === ''
        ? this.stmt(`SELECT nullif(status, '') AS status, done, n FROM task_counts WHERE n != 0`).all()
        : this.stmt(`SELECT status, done, count(*) AS n FROM tasks${sql} GROUP BY status, done`).all(...params)
    ) as Array<{ status: EventStatus | null; done: number; n: number }>;
    const counts = emptyCounts();
    for (const r of rows) {
      counts.all += r.n;
      if (r.done) counts.done += r.n;
      else counts.active += r.n;
      counts.by_status[r.status ?? 'none'] += r.n;
    }
    return counts;
  }

  /** The kept counts against a count of the table: a description of each bucket that differs. */
  countDrift(): string[] {
    const kept = new Map(
      (this.stmt(`SELECT status, done, n FROM task_counts WHERE n != 0`).all() as Array<{ status: string; done: number; n: number }>).map((r) => [`${r.status}/${r.done}`, r.n]),
    );
    const real = new Map(
      (this.stmt(`SELECT coalesce(status, '') AS status, done, count(*) AS n FROM tasks GROUP BY 1, 2`).all() as Array<{ status: string; done: number; n: number }>).map((r) => [`${r.status}/${r.done}`, r.n]),
    );
    const drift: string[] = [];
    for (const key of new Set([...kept.keys(), ...real.keys()]))
      if ((kept.get(key) ?? 0) !== (real.get(key) ?? 0)) drift.push(`${key || 'none'}: kept ${kept.get(key) ?? 0}, counted ${real.get(key) ?? 0}`);
    return drift;
  }

  /** A page of tasks in order of first appearance (or newest first), with true totals. */
  page(q: TaskPageQuery): TaskPage {
    return this.db.transaction((): TaskPage => {
      const { sql, params } = this.where(q, true);
      const total = this.keptTotal(q) ?? ((this.stmt(`SELECT count(*) FROM tasks${sql}`).pluck().get(...params) as number) ?? 0);
      const counts = this.counts(q);
      const rowsWhere = this.quietByScan(q, total) ? this.where(q, true, true).sql : sql;
      const keyset = q.cursor === undefined ? '' : `${rowsWhere ? ' AND' : ' WHERE'} first_seq ${q.order === 'desc' ? '<' : '>'} ?`;
      const limit = q.limit === null ? '' : ' LIMIT ?';
      const rows = this.stmt(
        `SELECT correlation_id, first_seq, state_json FROM tasks${rowsWhere}${keyset} ORDER BY first_seq ${q.order === 'desc' ? 'DESC' : 'ASC'}${limit}`,
      ).all(...params, ...(q.cursor === undefined ? [] : [q.cursor]), ...(q.limit === null ? [] : [q.limit + 1])) as Row[];
      const hasMore = q.limit !== null && rows.length > q.limit;
      const kept = hasMore ? rows.slice(0, q.limit ?? undefined) : rows;
      return {
        tasks: kept.map((r) => JSON.parse(r.state_json) as TaskState),
        count: kept.length,
        total,
        counts,
        has_more: hasMore,
        cursor: hasMore ? String(kept.at(-1)?.first_seq) : null,
      };
    })();
  }

  /**
   * The total of a page filtered by status and open alone (the dashboard's In flight and All lists),
   * summed from the kept counts instead of counting the table (245k in-flight tasks: ~40 ms); undefined
   * when another filter applies.
   */
  private keptTotal(q: TaskFilter): number | undefined {
    if (q.last_event_before !== undefined || this.where(q, false).sql !== '') return undefined;
    const where = ['n != 0'];
    const params: string[] = [];
    if (q.status && q.status.length > 0) {
      where.push(`status IN (${q.status.map(() => '?').join(',')})`);
      params.push(...q.status);
    }
    if (q.open !== undefined) where.push(q.open ? 'done = 0' : 'done = 1');
    return this.stmt(`SELECT coalesce(sum(n), 0) FROM task_counts WHERE ${where.join(' AND ')}`).pluck().get(...params) as number;
  }

  /**
   * How a page with last_event_before and a status reads its rows in first_seq order. Through
   * tasks_quiet_idx it visits every match (`total`) and sorts them; along tasks_status_idx (first_seq
   * order) it stops after `limit` matches, having visited about limit x (tasks of the status / total)
   * rows. The cheaper one: on a year-old log where nearly every claim is stalled (105k), the scan
   * reads ~100 rows instead of sorting 105k (~200 ms); with few stalled, the index reads just them.
   */
  private quietByScan(q: TaskPageQuery, total: number): boolean {
    if (q.last_event_before === undefined || !q.status || q.status.length === 0 || q.limit === null) return false;
    const inStatus = this.keptTotal({ status: q.status }) ?? 0;
    return total > 0 && ((q.limit + 1) * inStatus) / total < total;
  }

  /**
   * Compares the table with a full scan of the log: every correlation id found reading the whole log
   * (in slices of `rows` events), each re-projected from its events by the reducer, against the stored
   * row. Yields between slices; returns every difference.
   */
  async verify(rows: number, yieldNow: () => Promise<void>): Promise<TaskCheck> {
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
    // Another process may have appended meanwhile: confirm each difference in one snapshot.
    return this.db.transaction((): TaskCheck => {
      const confirmed = differences.flatMap((d): TaskDiff[] => {
        const problem = this.compare(d.correlation_id);
        return problem ? [{ correlation_id: d.correlation_id, problem }] : [];
      });
      return { tasks: ids.size, differences: confirmed, count_drift: this.countDrift() };
    })();
  }

  /** How the stored row of one correlation id differs from the reducer over its events, if it does. */
  private compare(id: string): TaskDiff['problem'] | null {
    const events = this.eventsOf(id);
    const stored = this.get(id);
    if (events.length === 0) return stored ? 'extra' : null;
    if (!stored) return 'missing';
    return JSON.stringify(stored) === JSON.stringify(projectTask(id, events)) ? null : 'different';
  }
}
