// Reads of the `tasks` table (task-projection.ts keeps it): one task, statuses, the ready queue's
// candidates, the lease sweeper's claimed tasks, and pages with true totals and counts by status.

import type Database from 'better-sqlite3';

import type { TaskState } from '../core/task-state.js';
import { EVENT_STATUSES, type EventStatus, type LogEvent } from '../core/types.js';
import { statementCache, type StatementCache } from '../sqlite-statements.js';
import { E_COLUMNS, WATERMARK_SQL, hasRoutes } from './event-routes.js';
import { EVENT_COLUMNS, toEvent, type EventRow } from './sqlite-rows.js';

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
   * since. A state filter like status: counts ignore it. With status claimed alone, read through tasks_quiet_idx.
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

type Row = { correlation_id: string; first_seq: number; state_json: string };

function emptyCounts(): TaskCounts {
  const by = Object.fromEntries([...EVENT_STATUSES, 'none'].map((s) => [s, 0])) as Record<EventStatus | 'none', number>;
  return { all: 0, active: 0, done: 0, by_status: by };
}

/** The read side of the task table; TaskProjection adds the writes, the build and the check. */
export class TaskTableReads {
  protected readonly stmt: StatementCache;
  /** The file has the routing tables (not a read-only connection to a log from before them). */
  private readonly routed: boolean;

  constructor(protected readonly db: Database.Database) {
    this.stmt = statementCache(db);
    this.routed = hasRoutes(db);
  }

  /**
   * The events of one correlation id (those up to seq `upTo`, when given), in append order: its rows of
   * event_routes_task up to the watermark, then the pending events above it (a rowid range), in one
   * statement (one snapshot). A compound SELECT with ORDER BY: SQLite merges its two arms, each already
   * in seq order. A read-only connection to a log from before the routing tables reads `events` itself.
   */
  eventsOf(correlationId: string, upTo = Number.MAX_SAFE_INTEGER): LogEvent[] {
    const rows = (
      this.routed
        ? this.stmt(
            `SELECT ${E_COLUMNS} FROM event_routes_task r CROSS JOIN events e ON e.seq = r.seq
              WHERE r.correlation_id = ? AND r.seq <= min(?, ${WATERMARK_SQL})
             UNION ALL
             SELECT ${EVENT_COLUMNS} FROM events WHERE seq > ${WATERMARK_SQL} AND seq <= ? AND correlation_id = ?
             ORDER BY seq`,
          ).all(correlationId, upTo, upTo, correlationId)
        : this.stmt(`SELECT ${EVENT_COLUMNS} FROM events WHERE correlation_id = ? AND seq <= ? ORDER BY seq`).all(correlationId, upTo)
    ) as EventRow[];
    return rows.map(toEvent);
  }

  /**
   * Brings the table up to its log before a read that spans many tasks (task-catch-up.ts: appends
   * leave the projection behind by design); nothing here, and nothing inside a transaction.
   */
  protected fresh(): void {}

  /**
   * The claimed tasks in first_seq order after `after`, at most `limit` (a page costs `limit` rows
   * however few hold a lease): each one's lease end and the replica its claim came from, null when it
   * has none. What the lease sweeper tracks, read at its start instead of the whole log.
   */
  claimedLeases(after: number, limit: number): Array<{ correlation_id: string; first_seq: number; lease_expires_at: string | null; origin_replica: string | null }> {
    this.fresh();
    return this.stmt(
      `SELECT t.correlation_id, t.first_seq, t.lease_expires_at, e.origin_replica
       FROM (SELECT correlation_id, first_seq, json_extract(state_json, '$.lease_expires_at') AS lease_expires_at,
               json_extract(state_json, '$.claim_event_id') AS claim_event_id
             FROM tasks WHERE status = 'claimed' AND first_seq > ? ORDER BY first_seq LIMIT ?) t
       LEFT JOIN events e ON t.lease_expires_at IS NOT NULL AND e.id = t.claim_event_id
       ORDER BY t.first_seq`,
    ).all(after, limit) as Array<{ correlation_id: string; first_seq: number; lease_expires_at: string | null; origin_replica: string | null }>;
  }

  /** One task as stored, or undefined. */
  get(correlationId: string): TaskState | undefined {
    return this.storedState(correlationId);
  }

  /** One task's row as stored (no catch-up), or undefined. */
  storedState(correlationId: string): TaskState | undefined {
    const json = this.stmt('SELECT state_json FROM tasks WHERE correlation_id = ?').pluck().get(correlationId) as string | undefined;
    return json === undefined ? undefined : (JSON.parse(json) as TaskState);
  }

  /** The id of a task's first task.request as stored, null without one, undefined when the task has no row. */
  requestId(correlationId: string): string | null | undefined {
    const row = this.stmt(`SELECT json_extract(state_json, '$.request_event_id') AS id FROM tasks WHERE correlation_id = ?`).get(correlationId) as
      | { id: string | null }
      | undefined;
    return row?.id;
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

  /** Whether any event carries this correlation id: a probe of its routing rows, else of the pending tail (one statement). */
  hasEvents(correlationId: string): boolean {
    if (!this.routed) return this.stmt('SELECT 1 FROM events WHERE correlation_id = ? LIMIT 1').get(correlationId) !== undefined;
    return (
      this.stmt(
        `SELECT EXISTS (SELECT 1 FROM event_routes_task WHERE correlation_id = ? AND seq <= ${WATERMARK_SQL})
             OR EXISTS (SELECT 1 FROM events WHERE seq > ${WATERMARK_SQL} AND correlation_id = ?)`,
      )
        .pluck()
        .get(correlationId, correlationId) === 1
    );
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
    this.fresh();
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
   * The tasks `worker` holds a claim on (optionally of one stream), oldest first, at most `limit`: the
   * head of its ready queue (claims to resume). Just the rows: no total or counts, which would count
   * every task of the worker (a whole-table scan, ~40 ms at 25k tasks, on every palace_task_ready).
   */
  claimedBy(worker: string, stream: string | null, limit: number): TaskState[] {
    this.fresh();
    const rows = this.stmt(
      `SELECT state_json FROM tasks WHERE status = 'claimed' AND worker = ?${stream === null ? '' : ' AND stream = ?'} ORDER BY first_seq LIMIT ?`,
    )
      .pluck()
      .all(worker, ...(stream === null ? [] : [stream]), limit) as string[];
    return rows.map((json) => JSON.parse(json) as TaskState);
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
    // The stalled read (claimed, quiet since) goes through tasks_quiet_idx, which holds claimed tasks
    // only: the status is written as the literal its WHERE names, and the index is named (left to
    // itself, on an unanalyzed table the planner prefers tasks_status_idx's equality and visits every claim).
    const stalled = withStatus && !quietByScan && f.last_event_before !== undefined && f.status?.length === 1 && f.status[0] === 'claimed';
    if (withStatus) {
      if (stalled) where.push("status = 'claimed'");
      else inList('status', f.status);
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
    return { sql: `${stalled ? ' INDEXED BY tasks_quiet_idx' : ''}${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''}`, params };
  }

  /** Counts by status of the tasks matching the filters (the status, open and last_event_before filters aside). */
  counts(f: TaskFilter = {}): TaskCounts {
    this.fresh();
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
    this.fresh();
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
    this.fresh();
    return this.db.transaction((): TaskPage => {
      const { sql, params } = this.where(q, true);
      const total = this.keptTotal(q) ?? ((this.stmt(`SELECT count(*) FROM tasks${sql}`).pluck().get(...params) as number) ?? 0);
      const counts = this.counts(q);
      const { sql: rowsWhere, params: rowParams } = this.quietByScan(q, total) ? this.where(q, true, true) : { sql, params };
      const keyset = q.cursor === undefined ? '' : `${rowsWhere ? ' AND' : ' WHERE'} first_seq ${q.order === 'desc' ? '<' : '>'} ?`;
      const limit = q.limit === null ? '' : ' LIMIT ?';
      const rows = this.stmt(
        `SELECT correlation_id, first_seq, state_json FROM tasks${rowsWhere}${keyset} ORDER BY first_seq ${q.order === 'desc' ? 'DESC' : 'ASC'}${limit}`,
      ).all(...rowParams, ...(q.cursor === undefined ? [] : [q.cursor]), ...(q.limit === null ? [] : [q.limit + 1])) as Row[];
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
}
