// The lease sweeper started on a log that already holds claims (a hub restarting on a year-old
// palace): it learns the leases from the task projection, a page per pass, and follows the log from
// its tip, so it expires exactly the lapsed leases this replica owns, including those changed while
// it was still reading them in, without reading the log from its first event.

import { afterEach, describe, expect, it } from 'vitest';

import type { NewEvent } from '../../hub/src/core/types.js';
import { startLeaseSweeper } from '../../hub/src/logstream/lease-sweeper.js';
import { Logstream } from '../../hub/src/logstream/logstream.js';
import { makeHubDirs, type HubDirs } from '../helpers/hub.js';

const TASKS = 4_500; // more claimed tasks than the sweeper reads from the projection in one pass

let made: HubDirs[] = [];
let logs: Logstream[] = [];

afterEach(() => {
  for (const log of logs) log.close();
  for (const d of made) d.cleanup();
  made = [];
  logs = [];
});

describe('lease sweeper start', () => {
  it('expires every lapsed lease of a log it did not watch being written, and only those', () => {
    const d = makeHubDirs('palace-sweeper-start-');
    made.push(d);
    let now = new Date('2026-05-01T09:00:00.000Z');
    const log = Logstream.open(d.palace, { now: () => now });
    logs.push(log);
    // Per task: a request and a claim whose lease ends at a different minute; every 5th task then
    // fails (its claim ends), every 7th has no lease at all (a claim without lease metadata).
    const batch: NewEvent[] = [];
    const leased = new Map<string, number>();
    for (let i = 0; i < TASKS; i++) {
      const base = { stream: 'project/start', room: 'delegation', correlation_id: `task_start_${i}` };
      batch.push(log.prepareEvent({ ...base, type: 'task.request', status: 'open', from_agent: 'lead', to_agent: 'worker', body: `task ${i}` }));
      const end = new Date(now.getTime() + ((i % 60) + 1) * 60_000).toISOString();
      batch.push(log.prepareEvent({ ...base, type: 'event.ack', status: 'claimed', from_agent: 'worker', to_agent: 'lead', ...(i % 7 === 0 ? {} : { metadata: { lease_expires_at: end } }) }));
      if (i % 5 === 0) batch.push(log.prepareEvent({ ...base, type: 'task.reply', status: 'failed', from_agent: 'worker', to_agent: 'lead' }));
      else if (i % 7 !== 0) leased.set(base.correlation_id, (i % 60) + 1);
    }
    log.store.append(batch);
    expect(log.task('task_start_1').status).toBe('claimed');
    expect(log.task('task_start_5').status).toBe('failed');

    const sweeper = startLeaseSweeper(log, { manual: true });
    // While the sweeper is still reading the leases in, one task fails and one is claimed anew.
    expect(sweeper.tick()).toEqual([]);
    const failedLate = [...leased.keys()].at(-1) as string;
    log.store.append([log.prepareEvent({ stream: 'project/start', room: 'delegation', correlation_id: failedLate, type: 'task.reply', status: 'failed', from_agent: 'worker', to_agent: 'lead' })]);
    leased.delete(failedLate);
    const fresh = 'task_start_fresh';
    log.store.append([
      log.prepareEvent({ stream: 'project/start', room: 'delegation', correlation_id: fresh, type: 'task.request', status: 'open', from_agent: 'lead', to_agent: 'worker' }),
      log.prepareEvent({ stream: 'project/start', room: 'delegation', correlation_id: fresh, type: 'event.ack', status: 'claimed', from_agent: 'worker', to_agent: 'lead', metadata: { lease_expires_at: new Date(now.getTime() + 90 * 60_000).toISOString() } }),
    ]);
    // The seed reads 250 claimed tasks per pass: enough passes to read them all.
    for (let pass = 0; pass < Math.ceil(TASKS / 250) + 1; pass++) expect(sweeper.tick()).toEqual([]);

    // Half an hour on: the leases ending in the first 30 minutes have lapsed, and nothing else.
    now = new Date(now.getTime() + 30 * 60_000 + 1_000);
    const expired = new Set(sweeper.tick());
    const due = [...leased].filter(([, minute]) => minute <= 30).map(([id]) => id);
    expect(expired.size).toBe(due.length);
    expect([...expired].sort()).toEqual(due.sort());
    for (const id of due.slice(0, 20)) expect(log.task(id)).toMatchObject({ status: 'open', lease_expired: true });
    expect(sweeper.tick()).toEqual([]);

    // Past every lease: the rest lapse too, the task claimed meanwhile among them; the one failed meanwhile does not.
    now = new Date(now.getTime() + 90 * 60_000);
    const rest = new Set(sweeper.tick());
    expect(rest.has(fresh)).toBe(true);
    expect(rest.has(failedLate)).toBe(false);
    expect(rest.size).toBe(leased.size - due.length + 1);
    sweeper.stop();
  });
});
