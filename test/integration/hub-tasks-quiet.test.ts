// palace_tasks' "quiet since" filter (last_event_before) through the official MCP client against a
// real hub on port 0: on a log of claimed tasks of mixed ages (events written with chosen created_at),
// the total of status claimed + last_event_before is exact, read on tasks_quiet_idx, pages hold exactly
// those tasks, counts stay those of every status, and a bad time is refused naming the field. Then a
// palace at schema 4 (no quiet index) gets the index on open, its tasks unchanged.

import { join } from 'node:path';

import Database from 'better-sqlite3';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { NewEvent } from '../../hub/src/core/types.js';
import { Logstream, LOGSTREAM_FILE } from '../../hub/src/logstream/logstream.js';
import { SCHEMA_VERSION } from '../../hub/src/logstream/schema.js';
import type { TaskPage } from '../../hub/src/logstream/task-projection.js';
import type { Hub } from '../../hub/src/server.js';
import { preparedDuring } from '../helpers/prepared-sql.js';
import { callJson, connectHttpClient, makeHubDirs, resultJson, startTestHub, type HubDirs } from '../helpers/hub.js';

/** A palace_tasks result, as the tool returns the projection's page. */
type Page = TaskPage;

const NOW = Date.parse('2026-11-26T12:00:00Z');
const iso = (minutesAgo: number): string => new Date(NOW - minutesAgo * 60_000).toISOString().slice(0, 19) + 'Z';
const CUTOFF = iso(10);

describe('palace_tasks last_event_before (quiet since)', () => {
  let dirs: HubDirs;
  let hub: Hub;
  let mcp: Client;
  /** The claimed tasks whose last event is older than CUTOFF, in order of first appearance. */
  const stalled: string[] = [];
  let claimed = 0;
  let all = 0;
  /** Open or failed tasks, all quiet for hours. */
  let oldOthers = 0;

  beforeAll(async () => {
    dirs = makeHubDirs('palace-tasks-quiet-');
    hub = await startTestHub(dirs);
    mcp = await connectHttpClient(hub.url);
    const ls = hub.services.logstream;
    const batch: NewEvent[] = [];
    const at = (minutesAgo: number, e: NewEvent): void => void batch.push({ ...e, created_at: iso(minutesAgo) });
    // Ages in minutes of each task's events: claimed long ago and quiet since (stalled), claimed
    // recently, claimed long ago but with a recent status note, claimed exactly at the cutoff (not
    // older), and open or failed ones that are old (not claimed).
    for (let i = 0; i < 130; i++) {
      const kind = i % 6;
      const id = `task_q${String(i).padStart(3, '0')}`;
      const base = { stream: 'project/quiet', room: 'delegation', correlation_id: id };
      const request = ls.prepareEvent({ ...base, type: 'task.request', status: 'open', from_agent: 'lead', to_agent: 'worker', body: `task ${i}` });
      const claim = (): NewEvent => ls.prepareEvent({ ...base, type: 'event.ack', status: 'claimed', from_agent: 'worker', to_agent: 'lead' });
      const note = (): NewEvent => ls.prepareEvent({ ...base, type: 'status', from_agent: 'worker', to_agent: '*', body: 'working' });
      all++;
      if (kind === 0 || kind === 1) {
        at(300 + i, request);
        at(120 + (i % 50), claim());
        stalled.push(id);
        claimed++;
      } else if (kind === 2) {
        at(30, request);
        at(3, claim());
        claimed++;
      } else if (kind === 3) {
        at(600, request);
        at(500, claim());
        at(2, note());
        claimed++;
      } else if (kind === 4) {
        at(60, request);
        at(10, claim()); // last event at the cutoff itself: quiet for exactly 10 minutes, not longer
        claimed++;
      } else {
        oldOthers++;
        at(900, request);
        if (i % 2 === 0) at(800, ls.prepareEvent({ ...base, type: 'task.reply', status: 'failed', from_agent: 'worker', to_agent: 'lead' }));
      }
    }
    ls.store.append(batch);
  });

  afterAll(async () => {
    await mcp?.close();
    await hub?.close();
    dirs?.cleanup();
  });

  it('counts exactly the claimed tasks quiet since the cutoff, and pages exactly those', async () => {
    expect(stalled.length).toBeGreaterThan(40);
    const first = await callJson<Page>(mcp, 'palace_tasks', { status: 'claimed', last_event_before: CUTOFF, limit: 1 });
    expect(first.total).toBe(stalled.length);
    // Counts are those of every status (the state filters aside), as for status alone.
    const unfiltered = await callJson<Page>(mcp, 'palace_tasks', { limit: 1 });
    expect(first.counts).toEqual(unfiltered.counts);
    expect(first.counts.by_status.claimed).toBe(claimed);
    expect(first.counts.all).toBe(all);

    const seen: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await callJson<Page>(mcp, 'palace_tasks', { status: 'claimed', last_event_before: CUTOFF, limit: 7, ...(cursor ? { cursor } : {}) });
      expect(page.total).toBe(stalled.length);
      for (const t of page.tasks) {
        expect(t.status).toBe('claimed');
        expect((t.last_event_at ?? '') < CUTOFF).toBe(true);
      }
      seen.push(...page.tasks.map((t) => t.correlation_id));
      if (!page.has_more) break;
      cursor = page.cursor ?? undefined;
    }
    expect(seen).toEqual(stalled);
    // One big page reads them on the quiet index and sorts (small pages follow first_seq instead): same rows.
    for (const order of ['asc', 'desc'] as const) {
      const whole = await callJson<Page>(mcp, 'palace_tasks', { status: 'claimed', last_event_before: CUTOFF, limit: 500, order });
      expect(whole.tasks.map((t) => t.correlation_id)).toEqual(order === 'asc' ? stalled : [...stalled].reverse());
      expect(whole.has_more).toBe(false);
    }

    // Without a status: every task quiet since then (open and failed ones too).
    const quiet = await callJson<Page>(mcp, 'palace_tasks', { last_event_before: CUTOFF, limit: 1 });
    expect(quiet.total).toBe(stalled.length + oldOthers);
    // A date means the start of that day: nothing is older than the day before the log began.
    expect((await callJson<Page>(mcp, 'palace_tasks', { status: 'claimed', last_event_before: '2026-11-20', limit: 1 })).total).toBe(0);
  });

  it('reads the count on the quiet index, not by visiting every claimed task', () => {
    // The count as the store runs it, on a second connection (its statement cache empty): caught as it is prepared, then explained.
    const fresh = Logstream.open(dirs.palace);
    const db = fresh.store.db;
    const seen = preparedDuring(db, () => fresh.store.tasks.page({ status: ['claimed'], last_event_before: CUTOFF, order: 'asc', limit: 1 }));
    const count = seen.find((sql) => /^SELECT count\(\*\) FROM tasks/.test(sql)) ?? '';
    const plan = db.prepare(`EXPLAIN QUERY PLAN ${count}`).all(CUTOFF) as Array<{ detail: string }>;
    fresh.close();
    expect(plan.map((p) => p.detail).join('\n')).toMatch(/USING COVERING INDEX tasks_quiet_idx \(last_event_at<\?\)/);
  });

  it('refuses a bad time, naming the field', async () => {
    for (const bad of ['ten minutes ago', '2026-11-26T12:00:00', '2026-02-30']) {
      const res = await mcp.callTool({ name: 'palace_tasks', arguments: { status: 'claimed', last_event_before: bad } });
      expect(res.isError).toBe(true);
      const err = resultJson<{ error: { code: string; message: string } }>(res).error;
      expect(err.code).toBe('input.invalid');
      expect(err.message).toContain('last_event_before must be YYYY-MM-DD or an ISO 8601 time with a zone');
    }
    // Not a string at all: refused by the tool's input schema, naming the field.
    const numeric = await mcp.callTool({ name: 'palace_tasks', arguments: { last_event_before: NOW } });
    expect(numeric.isError).toBe(true);
    expect(JSON.stringify(numeric.content)).toContain('last_event_before');
  });
});

describe('logstream schema migration 5', () => {
  let dirs: HubDirs;
  afterAll(() => dirs?.cleanup());

  it('gives a palace at schema 4 the quiet index, its tasks unchanged', async () => {
    dirs = makeHubDirs('palace-tasks-quiet-mig-');
    const ls = Logstream.open(dirs.palace, { now: () => new Date(NOW) });
    for (let i = 0; i < 5; i++) {
      const req = ls.appendNow({ type: 'task.request', status: 'open', stream: 's', room: 'r', from_agent: 'lead', to_agent: 'w', correlation_id: `task_m${i}` });
      if (i % 2 === 0) ls.appendNow({ type: 'event.ack', status: 'claimed', stream: 's', room: 'r', from_agent: 'w', to_agent: 'lead', correlation_id: req.correlation_id ?? '' });
    }
    const rows = (db: Database.Database): unknown[] => db.prepare('SELECT * FROM tasks ORDER BY first_seq').all();
    ls.store.tasks.catchUp(); // the rows as a reader sees them (appends leave the table behind)
    const before = rows(ls.store.db);
    ls.close();
    // Back to schema 4: no quiet index.
    const file = join(dirs.palace, LOGSTREAM_FILE);
    const raw = new Database(file);
    raw.exec('DROP INDEX tasks_quiet_idx; PRAGMA user_version = 4;');
    expect(raw.prepare(`SELECT name FROM sqlite_master WHERE name = 'tasks_quiet_idx'`).get()).toBeUndefined();
    raw.close();

    Logstream.open(dirs.palace).close();
    const check = new Database(file, { readonly: true });
    try {
      expect(check.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
      expect(SCHEMA_VERSION).toBe(9);
      expect(check.prepare(`SELECT sql FROM sqlite_master WHERE name = 'tasks_quiet_idx'`).pluck().get()).toMatch(/ON tasks\(last_event_at\) WHERE status = .claimed./);
      expect(rows(check)).toEqual(before);
      expect(check.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      check.close();
    }
  });
});
