// Coordination reads served from stored projections equal a full scan of the log: the reservations in
// force (reservations table), the ready queue and blocked_by (task table), after any mix of local
// appends (requests with depends_on, acks, replies, reservations, releases of reservations held on either
// hub), pulled sync pages, raw imports replayed twice, a reservations table lost and rebuilt in slices
// while appends go on, a log from before the table (schema 3), and a writer SIGKILLed mid-batch.

import { join } from 'node:path';

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { globsOverlap, pathMatches } from '../../hub/src/core/globs.js';
import { jsonBody, projectTasks, reservationOf, type Reservation, type TaskState } from '../../hub/src/core/task-state.js';
import type { EventStatus, LogEvent } from '../../hub/src/core/types.js';
import { HubError } from '../../hub/src/errors.js';
import { LOGSTREAM_FILE, Logstream } from '../../hub/src/logstream/logstream.js';
import { RESERVATIONS_BUILT_SEQ_KEY } from '../../hub/src/logstream/reservation-projection.js';
import type { SqliteEventStore } from '../../hub/src/logstream/sqlite-event-store.js';
import { newEvent } from '../helpers/fixtures.js';
import { allEvents, killWriterMidBatch, propertyStores, pullRound, syncCommands } from '../helpers/projection-props.js';

const NOW = new Date('2026-06-01T00:00:00.000Z');
const CORRS = ['task_a', 'task_b', 'task_c', 'task_d'];
const AGENTS = ['agent-0', 'agent-1', 'agent-2'];
const STREAMS = ['project/p0', 'project/p1'];
const PATHS = ['src/a.ts', 'src/**', 'docs/*.md', 'test/x.test.ts'];
const EXPIRIES = ['2026-05-01T00:00:00.000Z', '2026-07-01T00:00:00.000Z', NOW.toISOString()];
const STATUSES: EventStatus[] = ['open', 'claimed', 'ready', 'applied', 'failed'];

type Spec =
  | { type: 'task.request'; corr: number; agent: number; to: number; deps: number[]; stream: number }
  | { type: 'event.ack' | 'task.reply'; corr: number; agent: number; status: number }
  | { type: 'file.reserved'; corr: number; agent: number; stream: number; paths: number[]; exclusive: boolean; expiry: number; bad: boolean }
  | { type: 'file.released'; pick: number; agent: number; stream: number };

const corr = fc.integer({ min: 0, max: CORRS.length }); // CORRS.length: none
const spec: fc.Arbitrary<Spec> = fc.oneof(
  fc.record({
    type: fc.constant('task.request' as const),
    corr: fc.integer({ min: 0, max: CORRS.length - 1 }),
    agent: fc.nat({ max: 2 }),
    to: fc.nat({ max: 3 }), // 3: '*'
    deps: fc.array(fc.nat({ max: CORRS.length }), { maxLength: 2 }), // CORRS.length: a task never seen
    stream: fc.nat({ max: 1 }),
  }),
  fc.record({
    type: fc.constantFrom('event.ack' as const, 'task.reply' as const),
    corr: fc.integer({ min: 0, max: CORRS.length - 1 }),
    agent: fc.nat({ max: 2 }),
    status: fc.nat({ max: STATUSES.length - 1 }),
  }),
  fc.record({
    type: fc.constant('file.reserved' as const),
    corr,
    agent: fc.nat({ max: 2 }),
    stream: fc.nat({ max: 1 }),
    paths: fc.array(fc.nat({ max: PATHS.length - 1 }), { minLength: 1, maxLength: 2 }),
    exclusive: fc.boolean(),
    expiry: fc.nat({ max: EXPIRIES.length - 1 }),
    bad: fc.boolean().map((b) => b && Math.random() < 0.2),
  }),
  fc.record({ type: fc.constant('file.released' as const), pick: fc.nat({ max: 40 }), agent: fc.nat({ max: 2 }), stream: fc.nat({ max: 1 }) }),
);

const command = syncCommands(spec, 5, fc.record({ kind: fc.constant('lose' as const), slices: fc.nat({ max: 3 }) }));

const { openStore, tempDir } = propertyStores();

// ---- the full-scan answers (no projection table involved) ----

function scanTasks(events: readonly LogEvent[]): Map<string, TaskState> {
  return new Map(projectTasks(events).map((t) => [t.correlation_id, t]));
}

function scanReservations(
  events: readonly LogEvent[],
  f: { stream?: string; agent?: string; path?: string; correlation_id?: string },
): Reservation[] {
  const tasks = scanTasks(events);
  const released = new Set(events.filter((e) => e.type === 'file.released').map((e) => jsonBody(e)?.reservation_id));
  const out: Reservation[] = [];
  for (const e of events) {
    if (e.type !== 'file.reserved' || released.has(e.id)) continue;
    const r = reservationOf(e);
    if (!r || r.expires_at <= NOW.toISOString()) continue;
    if (e.correlation_id && tasks.get(e.correlation_id)?.done) continue;
    if (f.stream && e.stream !== f.stream) continue;
    if (f.agent && r.agent !== f.agent) continue;
    if (f.correlation_id && e.correlation_id !== f.correlation_id) continue;
    if (f.path && !r.paths.some((p) => pathMatches(f.path as string, p) || globsOverlap(f.path as string, p))) continue;
    out.push({ ...r, correlation_id: e.correlation_id, created_at: e.created_at });
  }
  return out;
}

function scanBlockedBy(tasks: Map<string, TaskState>, t: TaskState): string[] {
  return t.depends_on.filter((id) => tasks.get(id)?.status !== 'applied');
}

function scanReady(events: readonly LogEvent[], agent: string, stream?: string): string[] {
  const tasks = scanTasks(events);
  const streamOf = (id: string): string | undefined =>
    (events.find((e) => e.correlation_id === id && e.type === 'task.request') ?? events.find((e) => e.correlation_id === id))?.stream;
  const inStream = (t: TaskState): boolean => !stream || streamOf(t.correlation_id) === stream;
  // The agent's own claims in flight come first (resume before new work: issue 28), then what it may take.
  const own = [...tasks.values()].filter((t) => t.status === 'claimed' && t.worker === agent && inStream(t));
  const open = [...tasks.values()]
    .filter((t) => t.status === 'open' && (t.to_agent === agent || t.to_agent === '*') && inStream(t))
    .filter((t) => scanBlockedBy(tasks, t).length === 0);
  return [...own, ...open].map((t) => t.correlation_id); // created_at is the same everywhere: first appearance decides
}

/** Every read the hub serves from the projections, against the full scan. */
function expectReadsMatch(store: SqliteEventStore): void {
  const ls = new Logstream(store, { now: () => NOW });
  const events = allEvents(store);
  for (const f of [{}, ...STREAMS.map((stream) => ({ stream })), ...AGENTS.map((agent) => ({ agent })), { path: 'src/a.ts' }, { correlation_id: 'task_b' }])
    expect(ls.reservations(f), JSON.stringify(f)).toEqual(scanReservations(events, f));
  for (const agent of AGENTS) {
    expect(ls.ready({ agent }).map((t) => t.correlation_id), agent).toEqual(scanReady(events, agent));
    expect(ls.ready({ agent, stream: STREAMS[1] }).map((t) => t.correlation_id)).toEqual(scanReady(events, agent, STREAMS[1]));
    expect(ls.ready({ agent, limit: 1 }).map((t) => t.correlation_id)).toEqual(scanReady(events, agent).slice(0, 1));
  }
  const tasks = scanTasks(events);
  for (const t of ls.tasks()) expect(t.blocked_by, t.correlation_id).toEqual(scanBlockedBy(tasks, tasks.get(t.correlation_id) as TaskState));
}

async function expectTablesMatch(store: SqliteEventStore): Promise<void> {
  if (!store.reservations.ready()) return;
  const check = await store.reservations.verify(7, () => Promise.resolve());
  expect(check.differences).toEqual([]);
}

function append(store: SqliteEventStore, specs: readonly Spec[], reservationIds: string[]): void {
  const results = store.append(
    specs.map((s) => {
      const from = AGENTS[s.agent] as string;
      if (s.type === 'task.request')
        return newEvent({
          type: s.type,
          status: 'open',
          correlation_id: CORRS[s.corr] as string,
          from_agent: from,
          to_agent: s.to === 3 ? '*' : (AGENTS[s.to] as string),
          stream: STREAMS[s.stream] as string,
          metadata_json: JSON.stringify(s.deps.length > 0 ? { depends_on: s.deps.map((d) => CORRS[d] ?? 'task_never') } : {}),
        });
      if (s.type === 'file.reserved')
        return newEvent({
          type: s.type,
          correlation_id: CORRS[s.corr] ?? null,
          from_agent: from,
          stream: STREAMS[s.stream] as string,
          body: s.bad
            ? '{"paths": "not a list"}'
            : JSON.stringify({ paths: [...new Set(s.paths.map((p) => PATHS[p]))], exclusive: s.exclusive, expires_at: EXPIRIES[s.expiry] }),
        });
      if (s.type !== 'file.released')
        return newEvent({ type: s.type, status: STATUSES[s.status] as EventStatus, correlation_id: CORRS[s.corr] as string, from_agent: from });
      // A release of a reservation held on either hub (maybe not yet synced here), or of no reservation.
      return newEvent({
        type: s.type,
        from_agent: from,
        stream: STREAMS[s.stream] as string,
        body: JSON.stringify({ reservation_id: reservationIds[s.pick] ?? `evt_unknown_${s.pick}` }),
      });
    }),
  );
  for (const r of results) {
    if (r instanceof HubError) throw r;
    if (r.type === 'file.reserved') reservationIds.push(r.id);
  }
}

describe('coordination reads from stored projections', () => {
  it('equal a full scan after appends, pulls, replayed imports and a reservations table rebuilt in slices', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 20 }), async (commands) => {
        const dir = tempDir('palace-coord-');
        const path = join(dir, LOGSTREAM_FILE);
        let a = openStore(path);
        const b = openStore(':memory:');
        const ids: string[] = [];
        for (const c of commands) {
          if (c.kind === 'append') append(c.at === 0 ? a : b, c.events, ids);
          else if (c.kind === 'pull') await pullRound(a, b, c.pageLimit);
          else if (c.kind === 'import') {
            const events = b.replica.eventsAfter(b.replicaId, 0, 500);
            a.replica.applyRemoteEvents(events);
            const before = a.reservations.held({});
            expect(a.replica.applyRemoteEvents(events).applied).toBe(0);
            expect(a.reservations.held({})).toEqual(before);
          } else {
            // The table lost (as after a reset, or a log from before it): reads scan the log, then a
            // build in slices of 3 seqs catches up while later commands keep appending.
            a.reservations.reset();
            a.close();
            a = openStore(path);
            for (let i = 0; i < c.slices; i++) a.reservations.buildSlice(3);
          }
          expectReadsMatch(a);
          expectReadsMatch(b);
          await expectTablesMatch(a);
          await expectTablesMatch(b);
          if (!a.reservations.ready()) a.reservations.buildSlice(3);
        }
        while (!a.reservations.buildSlice(3));
        expectReadsMatch(a);
        await expectTablesMatch(a);
      }),
      { numRuns: 25 },
    );
  }, 90_000);

  it('pages the ready queue in SQL: across pages, with ties and out-of-order created_at, and with a limit', () => {
    const store = openStore(':memory:');
    const ls = new Logstream(store, { now: () => NOW });
    const stamps = ['2026-01-31T12:00:03Z', '2026-01-31T12:00:01Z', '2026-01-31T12:00:02Z', '2026-01-31T12:00:01Z', '2026-01-31T12:00:00Z'];
    const results = store.append(
      Array.from({ length: 450 }, (_, i) =>
        newEvent({
          type: 'task.request',
          status: 'open',
          correlation_id: `task_q${i}`,
          from_agent: 'lead',
          to_agent: i % 5 === 0 ? '*' : i % 7 === 0 ? 'agent-2' : 'agent-1',
          created_at: stamps[(i * 7) % stamps.length] as string,
          // Every third waits for a task that never comes.
          metadata_json: JSON.stringify(i % 3 === 0 ? { depends_on: ['task_never'] } : {}),
        }),
      ),
    );
    for (const r of results) if (r instanceof HubError) throw r;
    const events = allEvents(store);
    const tasks = scanTasks(events);
    const expected = [...tasks.values()]
      .filter((t) => t.status === 'open' && (t.to_agent === 'agent-1' || t.to_agent === '*') && scanBlockedBy(tasks, t).length === 0)
      .sort((a, b) => ((a.created_at ?? '') < (b.created_at ?? '') ? -1 : (a.created_at ?? '') > (b.created_at ?? '') ? 1 : 0)) // stable: first appearance breaks ties
      .map((t) => t.correlation_id);
    expect(expected.length).toBeGreaterThan(200); // more than one page
    expect(ls.ready({ agent: 'agent-1' }).map((t) => t.correlation_id)).toEqual(expected);
    for (const limit of [1, 7, 150, 500]) expect(ls.ready({ agent: 'agent-1', limit }).map((t) => t.correlation_id)).toEqual(expected.slice(0, limit));
  });

  it('builds the table for a log from before it (schema 3), scanning until it is built', async () => {
    const dir = tempDir('palace-coord-mig-');
    const path = join(dir, LOGSTREAM_FILE);
    const first = openStore(path);
    const ids: string[] = [];
    append(first, [{ type: 'file.reserved', corr: 4, agent: 0, stream: 0, paths: [0], exclusive: true, expiry: 1, bad: false }], ids);
    append(first, [{ type: 'file.reserved', corr: 0, agent: 1, stream: 1, paths: [1], exclusive: false, expiry: 1, bad: false }], ids);
    append(first, [{ type: 'file.reserved', corr: 4, agent: 2, stream: 0, paths: [2], exclusive: false, expiry: 1, bad: false }], ids);
    append(first, [{ type: 'file.released', pick: 2, agent: 2, stream: 0 }], ids);
    // Back to schema 3: no reservations table, no ready, quiet or stream index, no fold column, no build marker.
    first.db.exec(`DROP TABLE reservations; DROP TABLE released_reservations; DROP INDEX tasks_ready_idx;
      DROP INDEX tasks_quiet_idx; DROP INDEX tasks_stream_idx; ALTER TABLE tasks DROP COLUMN fold_json;
      DELETE FROM meta WHERE key = '${RESERVATIONS_BUILT_SEQ_KEY}'; PRAGMA user_version = 3;`);
    first.close();

    const ls = new Logstream(openStore(path), { now: () => NOW, sliceRows: 1 });
    expect(ls.store.reservations.ready()).toBe(false);
    const expected = scanReservations(allEvents(ls.store), {});
    expect(expected.map((r) => r.reservation_id)).toEqual(ids.slice(0, 2));
    expect(ls.reservations()).toEqual(expected); // scanned
    await ls.ensureReservations();
    expect(ls.store.reservations.ready()).toBe(true);
    expect(ls.reservations()).toEqual(expected); // from the table
    expect((await ls.verifyTasks()).reservations).toEqual({ held: 2, differences: [] });
  });

  it('keeps the reservations table consistent when a writer process is SIGKILLed mid-batch', async () => {
    const dir = tempDir('palace-coord-kill-');
    await killWriterMidBatch(dir, {
      prelude: 'const held = [];',
      batch: `
        const batch = [];
        for (let i = 0; i < 200; i++, n++) {
          const kind = n % 4;
          const input = kind === 0 || kind === 1
            ? { type: 'file.reserved', body: JSON.stringify({ paths: ['src/f' + (n % 50) + '.ts'], exclusive: n % 3 === 0, expires_at: '2099-01-01T00:00:00.000Z' }), correlation_id: n % 5 === 0 ? 'task_k' + (n % 7) : undefined }
            : kind === 2 && held.length > 0
              ? { type: 'file.released', body: JSON.stringify({ reservation_id: held[(n * 7) % held.length] }) }
              : { type: 'task.reply', status: ['open', 'applied'][n % 2], to_agent: 'lead', correlation_id: 'task_k' + (n % 7) };
          batch.push(ls.prepareEvent({ stream: 'project/k', room: 'r', from_agent: 'w' + (n % 3), ...input }));
        }
        for (const r of ls.store.append(batch)) if (r.type === 'file.reserved') held.push(r.id);`,
    });

    const ls = Logstream.open(dir, { now: () => NOW });
    try {
      expect(ls.store.countEvents()).toBeGreaterThanOrEqual(2000);
      const check = await ls.verifyTasks();
      expect(check.reservations.differences).toEqual([]);
      expect(check.reservations.held).toBeGreaterThan(0);
      expect(ls.reservations()).toEqual(scanReservations(allEvents(ls.store), {}));
    } finally {
      ls.close();
    }
  }, 30_000);
});
