// The task projection table equals a full scan (projectTasks over every event, in append order)
// after any mix of local appends (acks, patches, replies, notes, corrections), replicated events
// (pages pulled through the real pull round, and raw imports replayed twice), a projection lost
// mid-build and rebuilt after a reopen, and a writer process SIGKILLed in the middle of its batches.

import { join } from 'node:path';

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { projectTasks, type TaskState } from '../../hub/src/core/task-state.js';
import { EVENT_STATUSES, type EventStatus } from '../../hub/src/core/types.js';
import { HubError } from '../../hub/src/errors.js';
import { LOGSTREAM_FILE, Logstream } from '../../hub/src/logstream/logstream.js';
import type { SqliteEventStore } from '../../hub/src/logstream/sqlite-event-store.js';
import { BUILT_SEQ_KEY } from '../../hub/src/logstream/task-projection.js';
import { newEvent } from '../helpers/fixtures.js';
import { allEvents, killWriterMidBatch, propertyStores, pullRound, syncCommands } from '../helpers/projection-props.js';

const CORRS = ['task_a', 'task_b', 'task_c', 'task_d'];
const TYPES = ['task.request', 'event.ack', 'patch.ready', 'task.reply', 'status'] as const;

interface Spec {
  corr: number;
  type: (typeof TYPES)[number];
  status: EventStatus | null;
  agent: number;
}

const spec: fc.Arbitrary<Spec> = fc.record({
  corr: fc.integer({ min: 0, max: CORRS.length }), // CORRS.length: no correlation id
  type: fc.constantFrom(...TYPES),
  status: fc.option(fc.constantFrom(...EVENT_STATUSES), { nil: null }),
  agent: fc.integer({ min: 0, max: 2 }),
});

const command = syncCommands(spec, 4, fc.record({ kind: fc.constant('crash' as const), keep: fc.nat({ max: 20 }) }));

const { openStore, tempDir } = propertyStores();

function buildAll(store: SqliteEventStore): void {
  while (!store.tasks.buildSlice(3));
}

/** The stored table, oldest first, against the reducer over a full scan. */
function expectConsistent(store: SqliteEventStore): void {
  buildAll(store);
  const stored: TaskState[] = store.tasks.page({ order: 'asc', limit: null }).tasks;
  expect(stored).toEqual(projectTasks(allEvents(store)));
  const counts = store.tasks.counts();
  expect(counts.all).toBe(stored.length);
  expect(counts.active).toBe(stored.filter((t) => !t.done).length);
  for (const [status, n] of Object.entries(counts.by_status))
    expect(n, status).toBe(stored.filter((t) => (t.status ?? 'none') === status).length);
  expect(store.tasks.countDrift()).toEqual([]);
  // A page filtered by status and open alone takes its total from the kept counts: the rows' count.
  const statusLists: Array<readonly EventStatus[] | undefined> = [undefined, ['claimed'], ['open', 'claimed', 'ready']];
  for (const open of [undefined, true, false])
    for (const status of statusLists) {
      const want = stored.filter((t) => (open === undefined || t.done !== open) && (status === undefined || (t.status !== null && status.includes(t.status)))).length;
      const page = store.tasks.page({ order: 'asc', limit: 1, ...(open === undefined ? {} : { open }), ...(status ? { status } : {}) });
      expect(page.total, `open ${String(open)}, status ${String(status)}`).toBe(want);
    }
}

function append(store: SqliteEventStore, specs: readonly Spec[]): void {
  const results = store.append(
    specs.map((s) =>
      newEvent({
        type: s.type,
        status: s.type === 'status' ? null : s.status,
        correlation_id: CORRS[s.corr] ?? null,
        from_agent: `agent-${s.agent}`,
        to_agent: s.type === 'task.request' ? (s.agent === 0 ? '*' : `agent-${s.agent}`) : null,
        stream: `project/p${s.agent}`,
      }),
    ),
  );
  for (const r of results) if (r instanceof HubError) throw r;
}

describe('the task projection table', () => {
  it('equals a full scan after appends, pulls, replayed imports and a lost build', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 25 }), async (commands) => {
        const dir = tempDir('palace-proj-');
        const path = join(dir, LOGSTREAM_FILE);
        let a = openStore(path);
        const b = openStore(':memory:');
        for (const c of commands) {
          if (c.kind === 'append') append(c.at === 0 ? a : b, c.events);
          else if (c.kind === 'pull') await pullRound(a, b, c.pageLimit);
          else if (c.kind === 'import') {
            // Raw replication (imports): applying the same events twice changes nothing.
            const events = b.replica.eventsAfter(b.replicaId, 0, 500);
            a.replica.applyRemoteEvents(events);
            expectConsistent(a);
            const before = a.tasks.page({ order: 'asc', limit: null }).tasks;
            expect(a.replica.applyRemoteEvents(events).applied).toBe(0);
            expect(a.tasks.page({ order: 'asc', limit: null }).tasks).toEqual(before);
          } else {
            // Projection updates lost after seq S (a build cut short, or a store from before the
            // table): tasks first seen after S are missing, later ones stale, the build marker at S.
            const top = a.topSeq();
            const s = top === 0 ? 0 : c.keep % (top + 1);
            a.db.prepare('DELETE FROM tasks WHERE first_seq > ?').run(s);
            a.db.prepare(`UPDATE tasks SET state_json = '{"stale":true}', status = NULL, done = 0 WHERE last_seq > ?`).run(s);
            a.db.prepare(`INSERT INTO meta (key, value) VALUES ('${BUILT_SEQ_KEY}', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`).run(String(s));
            // The kept counts matched those rows (they change in the same transaction).
            a.db.exec(`DELETE FROM task_counts; INSERT INTO task_counts SELECT coalesce(status, ''), done, count(*) FROM tasks GROUP BY 1, 2`);
            a.close();
            a = openStore(path);
          }
          expectConsistent(a);
          expectConsistent(b);
        }
        // Replay of the whole build is idempotent too.
        const settled = a.tasks.page({ order: 'asc', limit: null }).tasks;
        a.tasks.reset();
        buildAll(a);
        expect(a.tasks.page({ order: 'asc', limit: null }).tasks).toEqual(settled);
      }),
      { numRuns: 40 },
    );
  }, 60_000);

  it('is consistent after a writer process is SIGKILLed mid-batch', async () => {
    const dir = tempDir('palace-proj-kill-');
    // A real writer: batches of appends on a few tasks, forever, until it is killed.
    await killWriterMidBatch(dir, {
      batch: `
        const batch = [];
        for (let i = 0; i < 200; i++, n++) {
          const corr = 'task_k' + (n % 37);
          const type = ['task.request', 'event.ack', 'patch.ready', 'task.reply', 'status'][n % 5];
          const status = type === 'status' ? undefined : ['open', 'claimed', 'ready', 'applied', 'failed'][(n >> 2) % 5];
          batch.push(ls.prepareEvent({ type, status, stream: 'project/k', room: 'r', from_agent: 'w' + (n % 3), to_agent: 'lead', correlation_id: corr }));
        }
        ls.store.append(batch);`,
    });

    const ls = Logstream.open(dir);
    try {
      expect(ls.store.countEvents()).toBeGreaterThanOrEqual(2000);
      const check = await ls.verifyTasks();
      expect(check.differences).toEqual([]);
      expect(check.count_drift).toEqual([]);
      expect(check.tasks).toBe(37);
      expect(ls.store.tasks.page({ order: 'asc', limit: null }).tasks).toEqual(projectTasks(allEvents(ls.store)));
    } finally {
      ls.close();
    }
  }, 30_000);
});
