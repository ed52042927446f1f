// Schema migration 7 (issue 30, fewer index pages per append) on a real file: a palace at schema 6
// (full to_agent and correlation indexes, the quiet index on every task) is opened by this palace; the
// indexes become partial, hold exactly the rows they should, and every read that goes through them
// answers as before the upgrade.

import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';

import { Logstream, LOGSTREAM_FILE } from '../../hub/src/logstream/logstream.js';
import { SCHEMA_VERSION } from '../../hub/src/logstream/schema.js';
import { makeTmpDir, type TmpDir } from '../helpers/tmp-dir.js';

const NOW = new Date('2026-11-27T12:00:00Z');
const QUIET = '2026-11-27T12:10:00Z';

/** Every read the changed indexes serve, as plain data. */
function reads(ls: Logstream): unknown {
  return {
    inbox: ls.list({ to_agent: 'agent-1', limit: 500 }).events.map((e) => e.id),
    broadcast: ls.list({ to_agent: '*', limit: 500 }).events.map((e) => e.id),
    history: ls.eventsOf('task-3').map((e) => e.id),
    tasks: ls.list({ correlation_id: ['task-1', 'task-4'], limit: 500 }).events.map((e) => e.id),
    stalled: ls.store.tasks.page({ status: ['claimed'], last_event_before: QUIET, order: 'asc', limit: 2 }),
    openQuiet: ls.store.tasks.page({ status: ['open'], last_event_before: QUIET, order: 'asc', limit: 50 }),
  };
}

describe('logstream schema migration 7', () => {
  let dir: TmpDir;
  afterAll(() => dir?.cleanup());

  it('makes a schema 6 palace index only events with a recipient or a task and only claimed tasks by quiet time, reads unchanged', () => {
    dir = makeTmpDir('palace-schema-7-');
    const ls = Logstream.open(dir.path, { now: () => NOW });
    for (let i = 0; i < 12; i++) {
      const request = ls.appendNow({ type: 'task.request', stream: 's', room: 'r', from_agent: 'lead', to_agent: i % 3 === 0 ? '*' : `agent-${i % 4}`, correlation_id: `task-${i}`, body: `do ${i}` });
      if (i % 2 === 0) ls.ack({ event_id: request.id, from_agent: `agent-${i % 4}`, status: 'claimed' });
      ls.appendNow({ type: 'note', stream: 's', room: 'r', from_agent: 'agent-1', body: 'no recipient, no task' });
      ls.appendNow({ type: 'note', stream: 's', room: 'r', from_agent: 'agent-2', to_agent: 'agent-1', body: 'a recipient, no task' });
    }
    const before = reads(ls);
    ls.close();

    // Back to schema 6 as it shipped.
    const file = join(dir.path, LOGSTREAM_FILE);
    const raw = new Database(file);
    raw.exec(`
      DROP TABLE event_routes_agent; DROP TABLE event_routes_task;
      CREATE INDEX events_to_agent_idx ON events(to_agent, seq);
      CREATE INDEX events_correlation_idx ON events(correlation_id, seq);
      DROP INDEX tasks_quiet_idx; CREATE INDEX tasks_quiet_idx ON tasks(status, last_event_at);
      PRAGMA user_version = 6;`);
    // Entries an index holds: the cells of its leaf pages (dbstat reads the b-tree itself).
    const entries = (db: Database.Database, index: string): number =>
      db.prepare(`SELECT coalesce(sum(ncell), 0) FROM dbstat WHERE name = ? AND pagetype = 'leaf'`).pluck().get(index) as number;
    const events = raw.prepare('SELECT count(*) FROM events').pluck().get() as number;
    raw.close();

    const upgraded = Logstream.open(dir.path, { now: () => NOW });
    try {
      const db = upgraded.store.db;
      expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
      expect(SCHEMA_VERSION).toBe(9);
      const sql = (name: string): string => db.prepare('SELECT sql FROM sqlite_master WHERE name = ?').pluck().get(name) as string;
      // Migration 9 then moved both event indexes into routing tables (event-routes.ts) with the same rows.
      expect(sql('events_to_agent_idx')).toBeUndefined();
      expect(sql('events_correlation_idx')).toBeUndefined();
      expect(sql('tasks_quiet_idx')).toMatch(/ON tasks\(last_event_at\) WHERE status = 'claimed'$/);
      // The indexes hold just the rows with a value (and the claimed tasks), not one entry per event or task.
      const count = (where: string, table = 'events'): number => db.prepare(`SELECT count(*) FROM ${table} WHERE ${where}`).pluck().get() as number;
      expect(count('to_agent IS NULL')).toBe(12);
      expect(count('correlation_id IS NULL')).toBe(24);
      expect(entries(db, 'event_routes_agent')).toBe(events - 12);
      expect(entries(db, 'event_routes_task')).toBe(events - 24);
      expect(entries(db, 'tasks_quiet_idx')).toBe(count("status = 'claimed'", 'tasks'));
      expect(count("status = 'claimed'", 'tasks')).toBe(6);
      expect(reads(upgraded)).toEqual(before);
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      upgraded.close();
    }
  });
});
