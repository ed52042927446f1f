// The lease sweeper of a running hub learns the leases of a log it did not watch being written on a
// worker thread: the hub's own connection reads no page of claimed tasks (on a year-old palace with
// a cold page cache each such page held the event loop 170-1,460 ms), and the leases it learns that
// way are expired exactly as those read in passes, including tasks that changed while it read them.

import Database from 'better-sqlite3';
import { readFileSync, readdirSync } from 'node:fs';
import { getPriority } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

import type { NewEvent } from '../../hub/src/core/types.js';
import { BACKGROUND_NICE, quickCheckOffThread } from '../../hub/src/logstream/integrity-check.js';
import { readClaimedLeasesOffThread, SEED_PAGE } from '../../hub/src/logstream/lease-seed.js';
import { startLeaseSweeper } from '../../hub/src/logstream/lease-sweeper.js';
import { Logstream } from '../../hub/src/logstream/logstream.js';
import { makeHubDirs, type HubDirs } from '../helpers/hub.js';

const TASKS = 2_550; // more claimed tasks than one page of the worker (SEED_PAGE), and not a multiple of it

let made: HubDirs[] = [];
let logs: Logstream[] = [];

afterEach(() => {
  for (const log of logs) log.close();
  for (const d of made) d.cleanup();
  made = [];
  logs = [];
});

describe('lease sweeper start off the main thread', () => {
  it('reads no claimed-task page on the hub connection, and expires exactly the lapsed leases it owns', async () => {
    const d = makeHubDirs('palace-sweeper-offthread-');
    made.push(d);
    let now = new Date('2026-05-01T09:00:00.000Z');
    const log = Logstream.open(d.palace, { now: () => now });
    logs.push(log);
    const batch: NewEvent[] = [];
    const leased = new Map<string, number>();
    for (let i = 0; i < TASKS; i++) {
      const base = { stream: 'project/offthread', room: 'delegation', correlation_id: `task_off_${i}` };
      batch.push(log.prepareEvent({ ...base, type: 'task.request', status: 'open', from_agent: 'lead', to_agent: 'worker', body: `task ${i}` }));
      const end = new Date(now.getTime() + ((i % 60) + 1) * 60_000).toISOString();
      batch.push(log.prepareEvent({ ...base, type: 'event.ack', status: 'claimed', from_agent: 'worker', to_agent: 'lead', ...(i % 7 === 0 ? {} : { metadata: { lease_expires_at: end } }) }));
      if (i % 5 === 0) batch.push(log.prepareEvent({ ...base, type: 'task.reply', status: 'failed', from_agent: 'worker', to_agent: 'lead' }));
      else if (i % 7 !== 0) leased.set(base.correlation_id, (i % 60) + 1);
    }
    log.store.append(batch);

    // Every page of claimed tasks read on this (the hub's) connection is counted (the one-row probe
    // of whether there is any claimed task at all is not a page).
    let pagesOnMain = 0;
    const tasks = log.store.tasks;
    const claimedLeases = tasks.claimedLeases.bind(tasks);
    tasks.claimedLeases = (after, limit) => {
      if (limit > 1) pagesOnMain++;
      return claimedLeases(after, limit);
    };

    const sweeper = startLeaseSweeper(log, { manual: true, offThread: true });
    // While the worker reads: one leased task fails, one lease-less task fails, one task is claimed anew.
    const failedLate = [...leased.keys()].at(-1) as string;
    log.store.append([log.prepareEvent({ stream: 'project/offthread', room: 'delegation', correlation_id: failedLate, type: 'task.reply', status: 'failed', from_agent: 'worker', to_agent: 'lead' })]);
    leased.delete(failedLate);
    const fresh = 'task_off_fresh';
    log.store.append([
      log.prepareEvent({ stream: 'project/offthread', room: 'delegation', correlation_id: fresh, type: 'task.request', status: 'open', from_agent: 'lead', to_agent: 'worker' }),
      log.prepareEvent({ stream: 'project/offthread', room: 'delegation', correlation_id: fresh, type: 'event.ack', status: 'claimed', from_agent: 'worker', to_agent: 'lead', metadata: { lease_expires_at: new Date(now.getTime() + 90 * 60_000).toISOString() } }),
    ]);
    expect(sweeper.tick()).toEqual([]);
    await sweeper.seeded;
    for (let pass = 0; pass < 3; pass++) expect(sweeper.tick()).toEqual([]);
    expect(pagesOnMain).toBe(0);

    // Half an hour on: the leases ending in the first 30 minutes have lapsed, and nothing else.
    now = new Date(now.getTime() + 30 * 60_000 + 1_000);
    const expired = new Set(sweeper.tick());
    const due = [...leased].filter(([, minute]) => minute <= 30).map(([id]) => id);
    expect(due.length).toBeGreaterThan(500); // more than one of the worker's pages
    expect([...expired].sort()).toEqual(due.sort());
    for (const id of due.slice(0, 20)) expect(log.task(id)).toMatchObject({ status: 'open', lease_expired: true });
    expect(sweeper.tick()).toEqual([]);

    // Past every lease: the rest lapse too, the task claimed meanwhile among them; the one failed meanwhile does not.
    now = new Date(now.getTime() + 90 * 60_000);
    const rest = new Set(sweeper.tick());
    expect(rest.has(fresh)).toBe(true);
    expect(rest.has(failedLate)).toBe(false);
    expect(rest.size).toBe(leased.size - due.length + 1);
    expect(pagesOnMain).toBe(0);
    sweeper.stop();
  });

  it('a log with no claimed task starts no worker, and a claim made afterwards still expires', async () => {
    const d = makeHubDirs('palace-sweeper-offthread-empty-');
    made.push(d);
    let now = new Date('2026-05-01T09:00:00.000Z');
    const log = Logstream.open(d.palace, { now: () => now });
    logs.push(log);
    const base = { stream: 'project/empty', room: 'delegation', correlation_id: 'task_empty_done' };
    log.store.append([log.prepareEvent({ ...base, type: 'task.request', status: 'open', from_agent: 'lead', to_agent: 'worker' })]);
    const reads: number[] = [];
    const tasks = log.store.tasks;
    const claimedLeases = tasks.claimedLeases.bind(tasks);
    tasks.claimedLeases = (after, limit) => {
      reads.push(limit);
      return claimedLeases(after, limit);
    };
    const sweeper = startLeaseSweeper(log, { manual: true, offThread: true });
    await sweeper.seeded;
    expect(reads).toEqual([1]); // the one-row probe, then nothing
    const late = { stream: 'project/empty', room: 'delegation', correlation_id: 'task_empty_late' };
    log.store.append([
      log.prepareEvent({ ...late, type: 'task.request', status: 'open', from_agent: 'lead', to_agent: 'worker' }),
      log.prepareEvent({ ...late, type: 'event.ack', status: 'claimed', from_agent: 'worker', to_agent: 'lead', metadata: { lease_expires_at: new Date(now.getTime() + 60_000).toISOString() } }),
    ]);
    expect(sweeper.tick()).toEqual([]);
    now = new Date(now.getTime() + 61_000);
    expect(sweeper.tick()).toEqual(['task_empty_late']);
    expect(reads).toEqual([1]);
    sweeper.stop();
  });

  it('a hub closing while the worker reads ends it: the start settles, nothing is expired after', async () => {
    const d = makeHubDirs('palace-sweeper-offthread-close-');
    made.push(d);
    const log = Logstream.open(d.palace);
    const batch: NewEvent[] = [];
    for (let i = 0; i < 1_500; i++) {
      const base = { stream: 'project/close', room: 'delegation', correlation_id: `task_close_${i}` };
      batch.push(log.prepareEvent({ ...base, type: 'task.request', status: 'open', from_agent: 'lead', to_agent: 'worker' }));
      batch.push(log.prepareEvent({ ...base, type: 'event.ack', status: 'claimed', from_agent: 'worker', to_agent: 'lead', metadata: { lease_expires_at: '2020-01-01T00:00:00.000Z' } }));
    }
    log.store.append(batch);
    // Not manual: the sweeper runs on its own timer, as in a hub; every lease has lapsed long ago.
    const sweeper = startLeaseSweeper(log);
    log.close(); // stops the sweeper, which ends its worker
    await sweeper.seeded;
    const reopened = Logstream.open(d.palace);
    logs.push(reopened);
    expect(reopened.task('task_close_0').status).toBe('claimed');
    expect(reopened.task('task_close_1499').status).toBe('claimed');
  });

  it('reads no page while the hub holds it back (a memory open), then the rest', async () => {
    const d = makeHubDirs('palace-sweeper-offthread-held-');
    made.push(d);
    const log = Logstream.open(d.palace);
    logs.push(log);
    const batch: NewEvent[] = [];
    for (let i = 0; i < TASKS; i++) {
      const base = { stream: 'project/held', room: 'delegation', correlation_id: `task_held_${i}` };
      batch.push(log.prepareEvent({ ...base, type: 'task.request', status: 'open', from_agent: 'lead', to_agent: 'worker' }));
      batch.push(log.prepareEvent({ ...base, type: 'event.ack', status: 'claimed', from_agent: 'worker', to_agent: 'lead', metadata: { lease_expires_at: '2099-01-01T00:00:00.000Z' } }));
    }
    log.store.append(batch);
    const events: string[] = [];
    let release: () => void = () => undefined;
    const memoryOpen = new Promise<void>((resolve) => (release = resolve));
    let asks = 0;
    let rows = 0;
    const read = readClaimedLeasesOffThread(
      log.store.path,
      (page) => {
        events.push(`page of ${page.length}`);
        rows += page.length;
      },
      undefined,
      // The worker's start goes ahead; the second page waits for the open.
      () => (++asks === 2 ? memoryOpen : Promise.resolve()),
    );
    while (rows === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    // Time enough for the other pages (a few ms each here) to come if nothing held them.
    await new Promise((resolve) => setTimeout(resolve, 300));
    events.push('memory opened');
    release();
    await read;
    const pages = Math.ceil(TASKS / SEED_PAGE);
    expect(events).toEqual([`page of ${SEED_PAGE}`, 'memory opened', ...Array.from({ length: pages - 2 }, () => `page of ${SEED_PAGE}`), `page of ${TASKS % SEED_PAGE}`]);
    expect(rows).toBe(TASKS);
  });

  it("the integrity check reads the log only while the hub's foreground is not busy", async () => {
    const d = makeHubDirs('palace-integrity-busy-');
    made.push(d);
    const path = join(d.palace, 'small.sqlite3');
    const db = new Database(path);
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)');
    db.prepare('INSERT INTO t (v) VALUES (?)').run('row');
    db.close();
    let busy = true; // e.g. a memory open
    const events: string[] = [];
    const verdict = quickCheckOffThread({ path, integrityCheck: () => 'unused' }, undefined, { busy: () => busy, maxHoldMs: 60_000 }).then((v) => events.push(`verdict ${v}`));
    // Time enough for the check of a one-row file to end if nothing held it.
    await new Promise((resolve) => setTimeout(resolve, 300));
    events.push('foreground done');
    busy = false;
    await verdict;
    expect(events).toEqual(['foreground done', 'verdict ok']);
    // A hub that is never idle still gets a verdict: each chunk of the read-ahead waits a bounded time.
    expect(await quickCheckOffThread({ path, integrityCheck: () => 'unused' }, undefined, { busy: () => true, maxHoldMs: 20 })).toBe('ok');
  });

  // Background readers yield the core to the event loop: on Linux the nice value is per thread.
  const linux = process.platform === 'linux';

  it.skipIf(!linux)('reads at the lowest priority on its own thread; the hub thread keeps its own', async () => {
    const d = makeHubDirs('palace-sweeper-offthread-nice-');
    made.push(d);
    const log = Logstream.open(d.palace);
    logs.push(log);
    const base = { stream: 'project/nice', room: 'delegation', correlation_id: 'task_nice' };
    log.store.append([
      log.prepareEvent({ ...base, type: 'task.request', status: 'open', from_agent: 'lead', to_agent: 'worker' }),
      log.prepareEvent({ ...base, type: 'event.ack', status: 'claimed', from_agent: 'worker', to_agent: 'lead', metadata: { lease_expires_at: '2099-01-01T00:00:00.000Z' } }),
    ]);
    const before = getPriority();
    const rows: string[] = [];
    const read = await readClaimedLeasesOffThread(log.store.path, (page) => rows.push(...page.map((r) => r.correlation_id)));
    expect(rows).toEqual(['task_nice']);
    expect(read.nice).toBe(BACKGROUND_NICE);
    expect(getPriority()).toBe(before);
  });

  it.skipIf(!linux)("the log's integrity check runs on a thread at the lowest priority, never the hub's", async () => {
    const d = makeHubDirs('palace-integrity-nice-');
    made.push(d);
    const path = join(d.palace, 'big.sqlite3');
    const db = new Database(path);
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT); CREATE INDEX t_v ON t(v)');
    const insert = db.prepare('INSERT INTO t (v) VALUES (?)');
    db.transaction(() => {
      for (let i = 0; i < 150_000; i++) insert.run(`row ${i} ${'x'.repeat(100)} ${(i * 7919) % 150_000}`);
    })();
    db.close();
    const niceOf = (tid: string): number => Number(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]?.split(' ')[16]);
    const seen = new Set<number>();
    const poll = setInterval(() => {
      for (const tid of readdirSync('/proc/self/task')) {
        try {
          seen.add(niceOf(tid));
        } catch {
          // the thread ended between the listing and the read
        }
      }
    }, 1);
    const before = getPriority();
    const verdict = await quickCheckOffThread({ path, integrityCheck: () => 'unused' });
    clearInterval(poll);
    expect(verdict).toBe('ok');
    expect(seen.has(BACKGROUND_NICE)).toBe(true);
    expect(getPriority()).toBe(before);
  });
});
