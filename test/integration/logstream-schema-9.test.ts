// Schema migration 9 (issue 30, event-routes.ts) on a real file: a palace at schema 8 (the partial
// to_agent and correlation indexes on events, events pending above the projection's watermark) is opened
// by this palace; the routing tables hold exactly the events up to the watermark, the two indexes are
// gone, every read answers as the schema 8 file did (read through its indexes by a read-only connection,
// which does not migrate), and the pending events join the tables when they are projected. Reopening
// does not run it again.

import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';

import { Logstream, LOGSTREAM_FILE } from '../../hub/src/logstream/logstream.js';
import { SCHEMA_VERSION } from '../../hub/src/logstream/schema.js';
import { SqliteEventStore } from '../../hub/src/logstream/sqlite-event-store.js';
import { PROJECTED_SEQ_KEY } from '../../hub/src/logstream/task-projection.js';
import { makeTmpDir, type TmpDir } from '../helpers/tmp-dir.js';

const NOW = new Date('2026-11-28T12:00:00Z');

/** Every read the routing tables serve, as plain data. */
function reads(store: SqliteEventStore): unknown {
  const ls = new Logstream(store, { now: () => NOW });
  const ids = (raw: Record<string, unknown>): string[] => ls.list({ limit: 500, ...raw }).events.map((e) => e.id);
  const mid = ls.list({ limit: 500 }).events[30]?.id;
  return {
    inbox: ids({ to_agent: 'agent-1' }),
    inboxDesc: ids({ to_agent: ['agent-2', 'agent-3'], order: 'desc' }),
    inboxSince: ids({ to_agent: 'agent-1', since_event_id: mid }),
    inboxBefore: ids({ to_agent: 'agent-1', before_event_id: mid, order: 'desc', limit: 3 }),
    broadcast: ids({ to_agent: '*' }),
    tasks: ids({ correlation_id: ['task-1', 'task-4'] }),
    taskNotes: ids({ correlation_id: 'task-2', type: 'note', order: 'desc' }),
    history: store.tasks.eventsOf('task-3').map((e) => e.id),
    has: [store.tasks.hasEvents('task-5'), store.tasks.hasEvents('task-none')],
  };
}

const routeRows = (db: Database.Database, table: string, column: string): unknown[] => db.prepare(`SELECT ${column} AS v, seq FROM ${table} ORDER BY 1, 2`).all();
const wanted = (db: Database.Database, column: string, w: number): unknown[] =>
  db.prepare(`SELECT ${column} AS v, seq FROM events WHERE ${column} IS NOT NULL AND seq <= ? ORDER BY 1, 2`).all(w);

describe('logstream schema migration 9 (routing tables)', () => {
  let dir: TmpDir;
  afterAll(() => dir?.cleanup());

  it('fills the routing tables of a schema 8 palace up to its watermark, drops the two indexes, reads unchanged, once', () => {
    dir = makeTmpDir('palace-schema-9-');
    const file = join(dir.path, LOGSTREAM_FILE);
    // A writer that projects only when told: 40 events projected, then 9 left pending above the watermark.
    const writer = new SqliteEventStore(file, { mintReplicaId: () => 'rep_000000000009', projection: { batch: 1_000_000, flushMs: 1_000_000_000 } });
    const ls = new Logstream(writer, { now: () => NOW });
    const add = (i: number): void => {
      ls.appendNow({ type: 'task.request', stream: 's', room: 'r', from_agent: 'lead', to_agent: i % 4 === 0 ? '*' : `agent-${i % 4}`, correlation_id: `task-${i % 6}`, body: `do ${i}` });
      ls.appendNow({ type: 'note', stream: 's', room: 'r', from_agent: 'agent-1', correlation_id: `task-${i % 6}`, body: 'no recipient' });
      if (i % 3 === 0) ls.appendNow({ type: 'note', stream: 's', room: 'r', from_agent: 'agent-2', to_agent: 'agent-1', body: 'no task' });
    };
    for (let i = 0; i < 16; i++) add(i);
    writer.tasks.catchUp();
    for (let i = 16; i < 20; i++) add(i);
    const top = writer.topSeq();
    writer.db.close(); // as a killed writer leaves it: the last events pending above the watermark

    // Back to schema 8 as it shipped: the partial indexes, no routing tables.
    const raw = new Database(file);
    raw.exec(`
      DROP TABLE event_routes_agent; DROP TABLE event_routes_task;
      CREATE INDEX events_to_agent_idx ON events(to_agent, seq) WHERE to_agent IS NOT NULL;
      CREATE INDEX events_correlation_idx ON events(correlation_id, seq) WHERE correlation_id IS NOT NULL;
      PRAGMA user_version = 8;`);
    const w = Number(raw.prepare('SELECT value FROM meta WHERE key = ?').pluck().get(PROJECTED_SEQ_KEY));
    expect(w).toBeLessThan(top);
    raw.close();

    // The reads as schema 8 answers them: a read-only connection does not migrate, and reads through the indexes.
    const old = new SqliteEventStore(file, { mintReplicaId: () => 'rep_unused', readonly: true });
    const before = reads(old);
    old.close();

    const upgraded = new SqliteEventStore(file, { mintReplicaId: () => 'rep_unused' });
    try {
      const db = upgraded.db;
      expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
      expect(SCHEMA_VERSION).toBe(9);
      expect(db.prepare(`SELECT name FROM sqlite_master WHERE name IN ('events_to_agent_idx', 'events_correlation_idx')`).all()).toEqual([]);
      // Exactly the events up to the watermark; the pending ones are not in yet, and reads still see them.
      expect(Number(db.prepare('SELECT value FROM meta WHERE key = ?').pluck().get(PROJECTED_SEQ_KEY))).toBe(w);
      expect(routeRows(db, 'event_routes_agent', 'to_agent')).toEqual(wanted(db, 'to_agent', w));
      expect(routeRows(db, 'event_routes_task', 'correlation_id')).toEqual(wanted(db, 'correlation_id', w));
      expect(reads(upgraded)).toEqual(before);
      upgraded.tasks.catchUp();
      expect(routeRows(db, 'event_routes_agent', 'to_agent')).toEqual(wanted(db, 'to_agent', top));
      expect(routeRows(db, 'event_routes_task', 'correlation_id')).toEqual(wanted(db, 'correlation_id', top));
      expect(reads(upgraded)).toEqual(before);
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      // A marker row: a migration run again would empty the table.
      db.prepare(`INSERT INTO event_routes_agent (to_agent, seq) VALUES ('marker', 0)`).run();
    } finally {
      upgraded.close();
    }
    const again = new SqliteEventStore(file, { mintReplicaId: () => 'rep_unused' });
    try {
      expect(again.db.prepare(`SELECT count(*) FROM event_routes_agent WHERE to_agent = 'marker'`).pluck().get()).toBe(1);
    } finally {
      again.close();
    }
  });
});
