// The two routing tables of logstream.sqlite3 (issue 30): which events are addressed to an agent
// (event_routes_agent) and which carry a task's correlation id (event_routes_task), one row per event
// that has the value. They replace two indexes on `events` that every append wrote (~2 of the ~6 pages
// of an own-transaction commit): the task projection writes them in its batches, in the transaction that
// moves its watermark (PROJECTED_SEQ_KEY), so they hold exactly the events up to it. A read takes the
// table up to the watermark plus the pending tail above it (a rowid range of `events`, normally under a
// batch), both in one snapshot. docs/decisions.md ("Routing tables under the projection's watermark").

import type Database from 'better-sqlite3';

import { statementCache, type StatementCache } from '../sqlite-statements.js';
import { EVENT_COLUMNS } from './sqlite-rows.js';

/**
 * meta key of the projection's watermark (schema migration 8): every event up to this seq is in the
 * task table and the routing tables; those above it are pending (task-catch-up.ts). It moves in the
 * transaction that projects them, so a reader or a reopen after a crash takes over from it.
 */
export const PROJECTED_SEQ_KEY = 'tasks_projected_seq';

/** The tables (schema migration 9 creates them; IF NOT EXISTS: a copy restored over a newer file has them). */
export const ROUTES_DDL = `
  CREATE TABLE IF NOT EXISTS event_routes_agent (to_agent TEXT NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (to_agent, seq)) STRICT, WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS event_routes_task (correlation_id TEXT NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (correlation_id, seq)) STRICT, WITHOUT ROWID;
`;

/** One routed column: its table and the column of `events` it copies. */
export interface Route {
  table: 'event_routes_agent' | 'event_routes_task';
  column: 'to_agent' | 'correlation_id';
}

export const AGENT_ROUTE: Route = { table: 'event_routes_agent', column: 'to_agent' };
export const TASK_ROUTE: Route = { table: 'event_routes_task', column: 'correlation_id' };
export const ROUTES: readonly Route[] = [AGENT_ROUTE, TASK_ROUTE];

/**
 * The watermark as an SQL expression, for reads that take it in the same statement (one snapshot). A
 * log without one (never, after migration 8) counts as covering nothing: every event is then read from
 * `events` itself, which is right, only slower.
 */
export const WATERMARK_SQL = `coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = '${PROJECTED_SEQ_KEY}'), 0)`;

/** The event columns qualified by the alias `e` (the routed side of a read joins events as e). */
export const E_COLUMNS = EVENT_COLUMNS.split(',')
  .map((c) => `e.${c.trim()}`)
  .join(', ');

/** E_COLUMNS but seq (which the routed side takes from its routing row: the order it is read in). */
export const E_REST = E_COLUMNS.replace(/^e\.seq, /, '');

/**
 * Fills both tables for the events in (from, to] from their own rows, inside the caller's transaction.
 * One statement per table, so a batch's rows of one agent or task land on the same leaf together.
 */
export function coverRoutes(stmt: StatementCache, from: number, to: number): void {
  if (to <= from) return;
  for (const r of ROUTES)
    stmt(`INSERT OR IGNORE INTO ${r.table} (${r.column}, seq) SELECT ${r.column}, seq FROM events WHERE seq > ? AND seq <= ? AND ${r.column} IS NOT NULL`).run(from, to);
}

/** Empties both tables and fills them again for every event up to `to` (a rebuild), inside the caller's transaction. */
export function rebuildRoutes(stmt: StatementCache, to: number): void {
  for (const r of ROUTES) {
    stmt(`DELETE FROM ${r.table}`).run();
    // In key order, so the b-tree is filled leaf after leaf.
    stmt(`INSERT INTO ${r.table} (${r.column}, seq) SELECT ${r.column}, seq FROM events WHERE seq <= ? AND ${r.column} IS NOT NULL ORDER BY 1, 2`).run(to);
  }
}

/** Whether this file has the routing tables (a read-only connection to a log from before them does not). */
export function hasRoutes(db: Database.Database): boolean {
  return db.prepare(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('event_routes_agent', 'event_routes_task')`).pluck().get() === 2;
}

/** One row of a routing table that does not match the log. */
export interface RouteDiff {
  route: Route['column'];
  value: string;
  seq: number;
  /** missing: an event up to the watermark has no row; extra: a row with no such event, or above the watermark. */
  problem: 'missing' | 'extra';
}

export interface RouteCheck {
  missing: number;
  extra: number;
  /** The first differences found (at most 100). */
  differences: RouteDiff[];
}

const LISTED = 100;

/**
 * Compares both tables with the log, in slices of `rows` (each one statement, so one snapshot that reads
 * the watermark too), yielding between them: every event up to the watermark with a value has its row,
 * and every row is such an event.
 */
export async function verifyRoutes(db: Database.Database, rows: number, yieldNow: () => Promise<void>): Promise<RouteCheck> {
  const stmt: StatementCache = statementCache(db);
  const check: RouteCheck = { missing: 0, extra: 0, differences: [] };
  const note = (route: Route, value: string, seq: number, problem: RouteDiff['problem']): void => {
    check[problem]++;
    if (check.differences.length < LISTED) check.differences.push({ route: route.column, value, seq, problem });
  };
  const top = stmt('SELECT coalesce(max(seq), 0) FROM events').pluck().get() as number;
  for (const r of ROUTES) {
    for (let from = 0; from < top; from += rows) {
      const missing = stmt(
        `SELECT e.${r.column} AS value, e.seq FROM events e
          WHERE e.seq > ? AND e.seq <= min(?, ${WATERMARK_SQL}) AND e.${r.column} IS NOT NULL
            AND NOT EXISTS (SELECT 1 FROM ${r.table} x WHERE x.${r.column} = e.${r.column} AND x.seq = e.seq)`,
      ).all(from, from + rows) as Array<{ value: string; seq: number }>;
      for (const m of missing) note(r, m.value, m.seq, 'missing');
      await yieldNow();
    }
    let after: { value: string; seq: number } | undefined;
    for (;;) {
      const slice = stmt(
        `SELECT x.${r.column} AS value, x.seq, (x.seq > ${WATERMARK_SQL} OR e.seq IS NULL OR e.${r.column} IS NOT x.${r.column}) AS bad
           FROM (SELECT ${r.column}, seq FROM ${r.table} WHERE (${r.column}, seq) > (?, ?) ORDER BY ${r.column}, seq LIMIT ?) x
           LEFT JOIN events e ON e.seq = x.seq ORDER BY x.${r.column}, x.seq`,
      ).all(after?.value ?? '', after?.seq ?? -1, rows) as Array<{ value: string; seq: number; bad: number }>;
      for (const row of slice) if (row.bad) note(r, row.value, row.seq, 'extra');
      if (slice.length < rows) break;
      const last = slice.at(-1) as { value: string; seq: number };
      after = { value: last.value, seq: last.seq };
      await yieldNow();
    }
  }
  return check;
}
