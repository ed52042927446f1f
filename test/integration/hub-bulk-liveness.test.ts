// A real hub over a large log (60k events, 15k tasks) whose task projection is cold (a palace from
// before the projection existed): while palace_status waits for the projection to be built, /healthz
// and a pending palace_event_wait still answer. The build runs in slices; nothing blocks the loop.
// Likewise the SQLite integrity check of the whole file (from the hub's start, behind /statusz) runs off the main thread.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { join } from 'node:path';

import { LOGSTREAM_FILE, Logstream } from '../../hub/src/logstream/logstream.js';
import type { NewEvent } from '../../hub/src/core/types.js';
import { callJson, connectHttpClient, killChildren, makeHubDirs, startChildHub, type ChildHub, type HubDirs } from '../helpers/hub.js';

const TASKS = 15_000;

/** Fills the palace through the store's batch append: per task a request, a claim, a note and (every 3rd) a failure. */
function fillPalace(palace: string): { open: number; total: number } {
  const ls = Logstream.open(palace);
  let batch: NewEvent[] = [];
  let open = 0;
  const flush = (): void => {
    ls.store.append(batch);
    batch = [];
  };
  for (let i = 0; i < TASKS; i++) {
    const corr = `task_bulk_${i}`;
    const base = { stream: 'project/bulk', room: 'delegation', correlation_id: corr };
    const request = ls.prepareEvent({ ...base, type: 'task.request', status: 'open', from_agent: 'lead', to_agent: `worker-${i % 7}`, body: `do ${i}` });
    batch.push(request);
    batch.push(ls.prepareEvent({ ...base, type: 'event.ack', status: 'claimed', from_agent: `worker-${i % 7}`, to_agent: 'lead', metadata: { ack_of: request.id } }));
    batch.push(ls.prepareEvent({ ...base, type: 'status', from_agent: `worker-${i % 7}`, to_agent: '*', body: 'working' }));
    if (i % 3 === 0) batch.push(ls.prepareEvent({ ...base, type: 'task.reply', status: 'failed', from_agent: `worker-${i % 7}`, to_agent: 'lead' }));
    else open++;
    if (batch.length >= 4_000) flush();
  }
  flush();
  ls.close();
  // A palace from before the task projection: no projection table (nor the reservations table of
  // schema 4, which the hub then builds in the background), schema version 2.
  const db = new Database(join(palace, LOGSTREAM_FILE));
  const hasTable = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'tasks'`).get() !== undefined;
  if (hasTable) {
    db.exec(`DROP TABLE tasks; DROP TABLE IF EXISTS task_counts; DELETE FROM meta WHERE key LIKE 'tasks_%';
      DROP TABLE IF EXISTS reservations; DROP TABLE IF EXISTS released_reservations; DELETE FROM meta WHERE key LIKE 'reservations_%'`);
    db.pragma('user_version = 2');
  }
  db.close();
  return { open, total: TASKS };
}

describe('a bulk operation does not block the hub', () => {
  let dirs: HubDirs;
  let hub: ChildHub;
  let expected: { open: number; total: number };

  beforeAll(async () => {
    dirs = makeHubDirs('palace-bulk-');
    expected = fillPalace(dirs.palace);
    hub = await startChildHub(dirs);
  }, 60_000);

  afterAll(async () => {
    await killChildren();
    dirs.cleanup();
  });

  it('answers /healthz and wakes a pending wait while palace_status waits for a cold projection', async () => {
    const reader = await connectHttpClient(hub.url, { name: 'reader' });
    const writer = await connectHttpClient(hub.url, { name: 'writer' });
    const tip = (await callJson<{ events: Array<{ id: string }> }>(writer, 'palace_event_list', { order: 'desc', limit: 1 })).events[0]?.id;
    const waiting = callJson<{ count: number; timed_out: boolean }>(reader, 'palace_event_wait', {
      to_agent: 'watcher-x',
      since_event_id: tip,
      timeout_ms: 60_000,
    }, 90_000);
    // Give the wait time to register before the bulk work starts.
    await callJson(writer, 'palace_event_list', { limit: 1 });

    let statusDone = false;
    const status = callJson<{ logstream: { open_tasks: number; tasks: number } }>(writer, 'palace_status', {}, 90_000).finally(() => {
      statusDone = true;
    });
    let waitBeforeStatus: boolean | undefined;
    void waiting.then(() => {
      waitBeforeStatus = !statusDone;
    });
    const poster = await connectHttpClient(hub.url, { name: 'poster' });
    let healthzBeforeStatus = 0;
    let appended = false;
    while (!statusDone) {
      const res = await fetch(`${hub.url}/healthz`);
      expect(res.status).toBe(200);
      await res.text();
      if (!statusDone) healthzBeforeStatus++;
      if (!appended && healthzBeforeStatus >= 2) {
        appended = true;
        void callJson(poster, 'palace_event_append', { type: 'status', stream: 'project/bulk', room: 'status', from_agent: 'poster', to_agent: 'watcher-x', body: 'wake up' });
      }
    }
    const result = await status;
    expect(healthzBeforeStatus).toBeGreaterThanOrEqual(3);
    const woke = await waiting;
    expect(woke.count).toBe(1);
    expect(waitBeforeStatus).toBe(true);
    expect(result.logstream.open_tasks).toBe(expected.open);
    expect(result.logstream.tasks).toBe(expected.total);
    await Promise.all([reader.close(), writer.close(), poster.close()]);
  }, 60_000);

  it('answers /statusz and /healthz while the SQLite integrity check of the log runs, then gives its verdict', async () => {
    // The check starts once the hub is quiet, on a worker thread; /statusz answers 'checking' until it is done.
    for (;;) {
      const body = (await fetch(`${hub.url}/statusz`).then((res) => res.json())) as { ok: boolean; palace: { sqlite_integrity: string } };
      expect((await fetch(`${hub.url}/healthz`)).status).toBe(200);
      if (body.palace.sqlite_integrity === 'checking') {
        expect(body.ok).toBe(true);
        await new Promise((resolve) => setTimeout(resolve, 5));
        continue;
      }
      expect(body.palace.sqlite_integrity).toBe('ok');
      expect(body.ok).toBe(true);
      break;
    }
  });
});
