// Every index on the events, tasks and reservations tables pays for itself (issue 30): each is named
// in SQLite's query plan of a read the benchmark suites measure, run through the real API on a real
// file. The SQL is caught as the store prepares it, then explained with the same shape; an index that
// no read uses, or a read that stops using its index, fails here.

import { join } from 'node:path';

import type Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { Logstream } from '../../hub/src/logstream/logstream.js';
import { SqliteEventStore } from '../../hub/src/logstream/sqlite-event-store.js';
import { nextHex } from '../helpers/fixtures.js';
import { preparedDuring } from '../helpers/prepared-sql.js';
import { makeTmpDir, type TmpDir } from '../helpers/tmp-dir.js';

const NOW = new Date('2026-11-27T12:00:00Z');

/** The index a read must go through, and the read (through the public API) that is measured on it. */
const READS: Array<{ index: string; table: string; read: string; run: (ls: Logstream<SqliteEventStore>) => unknown }> = [
  { index: 'sqlite_autoindex_events_1', table: 'events', read: 'one event by id (ack target, cursors)', run: (ls) => ls.store.getEvent('evt_missing') },
  { index: 'events_origin_idx', table: 'events', read: 'a sync page of one origin (sync suite)', run: (ls) => ls.store.replica.eventsAfter(ls.replicaId, 0, 100) },
  // The routing tables (event-routes.ts, WITHOUT ROWID: their key is the primary key) in place of two event indexes.
  { index: 'USING PRIMARY KEY (to_agent=?', table: 'event_routes_agent', read: 'an agent inbox (list suite: to_agent rotates over 20 agents)', run: (ls) => ls.list({ to_agent: 'agent-3', limit: 50 }) },
  { index: 'USING PRIMARY KEY (correlation_id=?', table: 'event_routes_task', read: "a task's events (fencing, palace_task history)", run: (ls) => ls.eventsOf('task-1') },
  { index: 'USING PRIMARY KEY (correlation_id=?', table: 'event_routes_task', read: 'a page of one task (palace_list_events correlation_id)', run: (ls) => ls.list({ correlation_id: 'task-1', limit: 50 }) },
  { index: 'sqlite_autoindex_tasks_1', table: 'tasks', read: 'one task (palace_task, every append of a known task)', run: (ls) => ls.task('task-1') },
  { index: 'tasks_first_idx', table: 'tasks', read: 'the All list, oldest first (scale suite: palace_tasks page)', run: (ls) => ls.store.tasks.page({ order: 'asc', limit: 50 }) },
  { index: 'tasks_done_idx', table: 'tasks', read: 'the In flight list (scale suite: open: true)', run: (ls) => ls.store.tasks.page({ open: true, order: 'asc', limit: 50 }) },
  { index: 'tasks_status_idx', table: 'tasks', read: 'a status chip (scale suite: status filter)', run: (ls) => ls.store.tasks.page({ status: ['failed'], order: 'asc', limit: 50 }) },
  { index: 'tasks_quiet_idx', table: 'tasks', read: 'the stalled count (scale suite: claimed, quiet 10 min)', run: (ls) => ls.store.tasks.page({ status: ['claimed'], last_event_before: '2026-11-27T11:50:00Z', order: 'asc', limit: 1 }) },
  { index: 'tasks_stream_idx', table: 'tasks', read: 'a stream filter (palace_tasks stream)', run: (ls) => ls.store.tasks.page({ stream: ['s-2'], order: 'asc', limit: 50 }) },
  { index: 'tasks_ready_idx', table: 'tasks', read: 'the ready queue (coord suite)', run: (ls) => ls.ready({ agent: 'agent-3', limit: 10 }) },
  { index: 'reservations_expiry_idx', table: 'reservations', read: 'reservations in force (coord suite: reserve, conflicts)', run: (ls) => ls.reservations({}) },
  {
    index: 'sqlite_autoindex_reservations_1',
    table: 'reservations',
    read: 'a release finds its reservation (coord suite: release)',
    run: (ls) => ls.releaseReservation({ reservation_id: ls.reservations({})[0]?.reservation_id, from_agent: 'agent-1' }),
  },
];

/** The query plan of a statement's shape (every parameter bound to null: the plan does not depend on values here). */
function plan(db: Database.Database, sql: string): string {
  const params = (sql.match(/\?/g) ?? []).map(() => null);
  return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{ detail: string }>).map((r) => r.detail).join(' | ');
}

describe('logstream indexes: each is used by a measured read', () => {
  let dir: TmpDir;
  let ls: Logstream<SqliteEventStore>;
  const open = (): Logstream<SqliteEventStore> =>
    new Logstream(new SqliteEventStore(join(dir.path, 'logstream.sqlite3'), { mintReplicaId: () => `rep_${nextHex()}` }), { now: () => NOW });

  beforeAll(() => {
    dir = makeTmpDir('palace-index-plans-');
    ls = open();
    for (let i = 0; i < 60; i++) {
      const request = ls.appendNow({ type: 'task.request', stream: `s-${i % 4}`, room: 'r', from_agent: `agent-${i % 7}`, to_agent: i % 5 === 0 ? '*' : `agent-${i % 20}`, correlation_id: `task-${i}`, body: `do ${i}` });
      if (i % 3 === 0) ls.ack({ event_id: request.id, from_agent: `agent-${(i + 1) % 20}`, status: 'claimed' });
      if (i % 10 === 0) ls.appendNow({ type: 'note', stream: 's-0', room: 'r', from_agent: 'agent-1', body: 'unaddressed' });
    }
    ls.reserve({ paths: ['src/a.ts'], stream: 's-0', from_agent: 'agent-1' });
  });
  afterAll(() => {
    ls.close();
    dir.cleanup();
  });

  it.each(READS)('$index: $read', ({ index, table, run }) => {
    // A fresh connection: its statement caches are empty, so the read prepares every statement it runs.
    const fresh = open();
    try {
      const sql = preparedDuring(fresh.store.db, () => run(fresh)).filter((s) => new RegExp(`\\b(FROM|JOIN) ${table}\\b`).test(s));
      expect(sql.length).toBeGreaterThan(0);
      const plans = sql.map((s) => plan(fresh.store.db, s));
      expect(plans.some((p) => p.includes(index)), plans.join('\n')).toBe(true);
    } finally {
      fresh.close();
    }
  });

  it('lists every index of those tables above, so a new one must name the read it is for', () => {
    const indexes = ls.store.db
      .prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('events', 'tasks', 'reservations') ORDER BY name`)
      .pluck()
      .all() as string[];
    expect(indexes).toEqual(READS.filter((r) => ['events', 'tasks', 'reservations'].includes(r.table)).map((r) => r.index).sort());
  });
});
