// Reads of the events table: filtered pages (each in one snapshot), one event by id, the tip. A page
// filtered by recipient or task reads its routing table (event-routes.ts) up to the projection's
// watermark and the pending tail of `events` above it, in one read transaction.

import { HubError } from '../errors.js';
import type { EventPage, EventQuery, LogEvent } from '../core/types.js';
import { AGENT_ROUTE, E_COLUMNS, E_REST, TASK_ROUTE, WATERMARK_SQL, hasRoutes, type Route } from './event-routes.js';
import { previewEvent, toEvent, type EventRow } from './sqlite-rows.js';
import type { StoreCore } from './store-core.js';

/** Filters of one page, as SQL over `events e`. */
interface Terms {
  where: string[];
  params: unknown[];
}

export class EventQueries {
  /** The file has the routing tables (not a read-only connection to a log from before them). */
  private readonly routed: boolean;

  constructor(private readonly core: StoreCore) {
    this.routed = hasRoutes(core.db);
  }

  /** Events matching a query, in append order (or reversed for `order: desc`). */
  query(q: EventQuery): EventPage {
    return this.core.db.transaction(() => this.queryInSnapshot(q))();
  }

  private queryInSnapshot(q: EventQuery): EventPage {
    const terms: Terms = { where: [], params: [] };
    const inList = (column: string, values: readonly string[], negate = false): void => {
      if (values.length === 0) return;
      terms.where.push(`e.${column} ${negate ? 'NOT IN' : 'IN'} (${values.map(() => '?').join(',')})`);
      terms.params.push(...values);
    };
    const toAgent = q.to_agent.length > 0 ? (q.to_agent.includes('*') ? q.to_agent : [...q.to_agent, '*']) : [];
    // The routing table a page is read through: the tasks' when it names some (a task has few events), else the recipients'.
    const route: { route: Route; values: readonly string[] } | undefined = !this.routed
      ? undefined
      : q.correlation_id.length > 0
        ? { route: TASK_ROUTE, values: q.correlation_id }
        : toAgent.length > 0
          ? { route: AGENT_ROUTE, values: toAgent }
          : undefined;
    if (route?.route !== AGENT_ROUTE) inList('to_agent', toAgent);
    inList('from_agent', q.exclude_from_agent, true);
    inList('from_agent', q.from_agent);
    inList('type', q.type);
    inList('status', q.status);
    if (route?.route !== TASK_ROUTE) inList('correlation_id', q.correlation_id);
    inList('stream', q.stream);
    inList('room', q.room);
    if (q.since_created_at) {
      terms.where.push('e.created_at >= ?');
      terms.params.push(q.since_created_at);
    }
    const after = q.since_event_id ? this.seqOf('since_event_id', q.since_event_id) : undefined;
    const before = q.before_event_id ? this.seqOf('before_event_id', q.before_event_id) : undefined;
    const rows = route ? this.routedRows(q, terms, route, after, before) : this.scan(q, terms, after, before, q.limit + 1);
    const hasMore = rows.length > q.limit;
    const events = rows.slice(0, q.limit).map((row) => (q.preview ? previewEvent(toEvent(row)) : toEvent(row)));
    let cursor: string | null = null;
    if (q.order === 'asc' && !q.before_event_id) {
      // Every event up to the tip was examined when nothing more matched, so the tip is a safe resume point.
      cursor = hasMore ? (events.at(-1)?.id ?? null) : this.tipId() ?? q.since_event_id;
    }
    return { events, count: events.length, has_more: hasMore, cursor };
  }

  /**
   * A page through a routing table, in the caller's read transaction (one snapshot, the watermark W it
   * splits at included): a compound SELECT with one arm per routed value (its rows up to W, in the table's
   * (value, seq) key order, each joined to its event by rowid) and one arm for the pending tail (the
   * events above W, a rowid range), under ORDER BY seq and LIMIT. SQLite merges the arms, each already
   * in seq order, and stops at the LIMIT: a page of 50 reads about 50 rows of each arm. Not one arm with
   * `IN (values)`: its rows would be sorted in a temporary b-tree, every routed event of the agent
   * (195k for '*' on the scale palace) when the join defeats SQLite's IN-with-LIMIT early exit; not
   * `seq IN (subquery)` either, which SQLite materialises whole.
   */
  private routedRows(q: EventQuery, terms: Terms, r: { route: Route; values: readonly string[] }, after?: number, before?: number): EventRow[] {
    const tail: Terms = {
      where: [`e.${r.route.column} IN (${r.values.map(() => '?').join(',')})`, ...terms.where],
      params: [...r.values, ...terms.params],
    };
    // The watermark and the tip, read in the caller's read transaction: the snapshot the page is read in.
    const { w, top } = this.core.stmt(`SELECT ${WATERMARK_SQL} AS w, (SELECT coalesce(max(seq), 0) FROM events) AS top`).get() as { w: number; top: number };
    // A cursor at or above the watermark (an inbox sweep, a wait's re-read: the common case) reads the
    // tail alone, a rowid range from the cursor.
    if (after !== undefined && after >= w) return this.scan(q, tail, after, before, q.limit + 1);
    const arms: string[] = [];
    const params: unknown[] = [];
    for (const value of r.values) {
      // CROSS JOIN: the routing table is the outer loop (its key order is the page's), events a rowid probe
      // per row. One bound each way (W and the cursors folded into it), so the key range is the whole
      // constraint: with `seq <= W AND seq < before` SQLite ranges on one and filters the other.
      params.push(value, after ?? 0, Math.min(w, before === undefined ? w : before - 1), ...terms.params);
      arms.push(
        `SELECT r.seq AS seq, ${E_REST} FROM ${r.route.table} r CROSS JOIN events e ON e.seq = r.seq WHERE ${['r.' + r.route.column + ' = ?', 'r.seq > ?', 'r.seq <= ?', ...terms.where].join(' AND ')}`,
      );
    }
    // The pending tail, a rowid range above W (and the cursor): only when there is one the page can reach.
    if (top > w && (before === undefined || before > w + 1)) {
      const where = ['e.seq > ?', ...tail.where];
      params.push(Math.max(after ?? 0, w), ...tail.params);
      if (before !== undefined) {
        where.push('e.seq < ?');
        params.push(before);
      }
      arms.push(`SELECT ${E_COLUMNS} FROM events e WHERE ${where.join(' AND ')}`);
    }
    const sql = `${arms.join(' UNION ALL ')} ORDER BY 1 ${q.order === 'desc' ? 'DESC' : 'ASC'} LIMIT ?`;
    return this.core.stmt(sql).all(...params, q.limit + 1) as EventRow[];
  }

  /** Events in seq order (a rowid range from the cursors) matching `terms`, at most `n`. */
  private scan(q: EventQuery, terms: Terms, after: number | undefined, before: number | undefined, n: number): EventRow[] {
    const where = [...terms.where];
    const params = [...terms.params];
    if (after !== undefined) {
      where.push('e.seq > ?');
      params.push(after);
    }
    if (before !== undefined) {
      where.push('e.seq < ?');
      params.push(before);
    }
    const sql =
      `SELECT ${E_COLUMNS} FROM events e` +
      (where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '') +
      ` ORDER BY e.seq ${q.order === 'desc' ? 'DESC' : 'ASC'} LIMIT ?`;
    return this.core.stmt(sql).all(...params, n) as EventRow[];
  }

  private seqOf(field: string, id: string): number {
    const row = this.core.stmt('SELECT seq FROM events WHERE id = ?').get(id) as { seq: number } | undefined;
    if (!row)
      throw new HubError('log.unknown_cursor', `${field} '${id}' is not an event in this log`, { field });
    return row.seq;
  }

  /** The id of the newest event, or null on an empty log. */
  tipId(): string | null {
    const row = this.core.stmt('SELECT id FROM events ORDER BY seq DESC LIMIT 1').get() as { id: string } | undefined;
    return row?.id ?? null;
  }

  /** One event by id, or undefined. */
  getEvent(id: string): LogEvent | undefined {
    const row = this.core.stmt(`SELECT ${E_COLUMNS} FROM events e WHERE e.id = ?`).get(id) as EventRow | undefined;
    return row ? toEvent(row) : undefined;
  }
}
