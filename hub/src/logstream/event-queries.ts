// Reads of the events table: filtered pages (each in one snapshot), one event by id, the tip. A page
// filtered by recipient or task reads its routing table (event-routes.ts) up to the projection's
// watermark and the pending tail of `events` above it, in one read transaction.

import { HubError } from '../errors.js';
import type { EventPage, EventQuery, LogEvent } from '../core/types.js';
import { AGENT_ROUTE, E_COLUMNS, TASK_ROUTE, WATERMARK_SQL, hasRoutes, type Route } from './event-routes.js';
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
   * A page through a routing table: its rows up to the watermark W, then the events above W (the
   * pending tail, a rowid range), or the other way round for `desc`. The two parts are disjoint and each
   * is read in seq order with its own LIMIT, so a page stops early, and both run in the caller's read
   * transaction (one snapshot, the W they split at included). Two statements rather than one compound
   * SELECT: each stays a plain plan (the route's (value, seq) key, then a rowid range), and the second
   * is skipped when the first fills the page. Not `seq IN (subquery)`: SQLite would materialise every
   * routed seq of the agent before the LIMIT.
   */
  private routedRows(q: EventQuery, terms: Terms, r: { route: Route; values: readonly string[] }, after?: number, before?: number): EventRow[] {
    const w = this.core.stmt(`SELECT ${WATERMARK_SQL}`).pluck().get() as number;
    const tail: Terms = {
      where: [`e.${r.route.column} IN (${r.values.map(() => '?').join(',')})`, ...terms.where],
      params: [...r.values, ...terms.params],
    };
    const want = q.limit + 1;
    const fromRoute = (n: number): EventRow[] => {
      if ((after !== undefined && after >= w) || n <= 0) return [];
      const where = [`r.${r.route.column} IN (${r.values.map(() => '?').join(',')})`, 'r.seq <= ?'];
      const params: unknown[] = [...r.values, w];
      if (after !== undefined) {
        where.push('r.seq > ?');
        params.push(after);
      }
      if (before !== undefined) {
        where.push('r.seq < ?');
        params.push(before);
      }
      // CROSS JOIN: the routing table is the outer loop (its key order is the page's), events a rowid probe per row.
      return this.core
        .stmt(
          `SELECT ${E_COLUMNS} FROM ${r.route.table} r CROSS JOIN events e ON e.seq = r.seq WHERE ${[...where, ...terms.where].join(' AND ')} ORDER BY r.seq ${q.order === 'desc' ? 'DESC' : 'ASC'} LIMIT ?`,
        )
        .all(...params, ...terms.params, n) as EventRow[];
    };
    const fromTail = (n: number): EventRow[] =>
      (before !== undefined && before <= w + 1) || n <= 0 ? [] : this.scan(q, tail, Math.max(after ?? 0, w), before, n);
    if (q.order === 'desc') {
      const newer = fromTail(want);
      return [...newer, ...fromRoute(want - newer.length)];
    }
    const older = fromRoute(want);
    return [...older, ...fromTail(want - older.length)];
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
