// Reads of the events table: filtered pages (each in one snapshot), one event by id, the tip.

import { HubError } from '../errors.js';
import type { EventPage, EventQuery, LogEvent } from '../core/types.js';
import { EVENT_COLUMNS, previewEvent, toEvent, type EventRow } from './sqlite-rows.js';
import type { StoreCore } from './store-core.js';

export class EventQueries {
  constructor(private readonly core: StoreCore) {}

  /** Events matching a query, in append order (or reversed for `order: desc`). */
  query(q: EventQuery): EventPage {
    return this.core.db.transaction(() => this.queryInSnapshot(q))();
  }

  private queryInSnapshot(q: EventQuery): EventPage {
    const where: string[] = [];
    const params: unknown[] = [];
    const inList = (column: string, values: readonly string[], negate = false): void => {
      if (values.length === 0) return;
      where.push(`${column} ${negate ? 'NOT IN' : 'IN'} (${values.map(() => '?').join(',')})`);
      params.push(...values);
    };
    if (q.to_agent.length > 0) inList('to_agent', q.to_agent.includes('*') ? q.to_agent : [...q.to_agent, '*']);
    inList('from_agent', q.exclude_from_agent, true);
    inList('from_agent', q.from_agent);
    inList('type', q.type);
    inList('status', q.status);
    inList('correlation_id', q.correlation_id);
    inList('stream', q.stream);
    inList('room', q.room);
    if (q.since_event_id) {
      where.push('seq > ?');
      params.push(this.seqOf('since_event_id', q.since_event_id));
    }
    if (q.before_event_id) {
      where.push('seq < ?');
      params.push(this.seqOf('before_event_id', q.before_event_id));
    }
    if (q.since_created_at) {
      where.push('created_at >= ?');
      params.push(q.since_created_at);
    }
    const sql =
      `SELECT ${EVENT_COLUMNS} FROM events` +
      (where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '') +
      ` ORDER BY seq ${q.order === 'desc' ? 'DESC' : 'ASC'} LIMIT ?`;
    const rows = this.core.stmt(sql).all(...params, q.limit + 1) as EventRow[];
    const hasMore = rows.length > q.limit;
    const events = rows.slice(0, q.limit).map((row) => (q.preview ? previewEvent(toEvent(row)) : toEvent(row)));
    let cursor: string | null = null;
    if (q.order === 'asc' && !q.before_event_id) {
      // Every event up to the tip was examined when nothing more matched, so the tip is a safe resume point.
      cursor = hasMore ? (events.at(-1)?.id ?? null) : this.tipId() ?? q.since_event_id;
    }
    return { events, count: events.length, has_more: hasMore, cursor };
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
    const row = this.core.stmt(`SELECT ${EVENT_COLUMNS} FROM events WHERE id = ?`).get(id) as EventRow | undefined;
    return row ? toEvent(row) : undefined;
  }
}
