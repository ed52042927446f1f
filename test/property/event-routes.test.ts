// The routing tables under the projection's watermark (issue 30, event-routes.ts): every page filtered by
// recipient or task, read on a writer, on a second writer that projects in small batches and on a
// read-only connection that cannot catch up, equals a filter of the whole log computed in JS, with the
// watermark anywhere (events pending above it, from local appends, group commits, raw imports and pulled
// pages of another replica), and the tables always hold exactly the events up to the watermark. Then the
// same after a real writer process is SIGKILLed in the middle of its batches.

import { join } from 'node:path';

import Database from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import type { EventPage } from '../../hub/src/core/types.js';
import { eventQuery, type RawQuery } from '../../hub/src/core/validate.js';
import { HubError } from '../../hub/src/errors.js';
import { LOGSTREAM_FILE } from '../../hub/src/logstream/logstream.js';
import { SqliteEventStore } from '../../hub/src/logstream/sqlite-event-store.js';
import { PROJECTED_SEQ_KEY } from '../../hub/src/logstream/task-projection.js';
import { newEvent, nextHex } from '../helpers/fixtures.js';
import { killWriterMidBatch, propertyStores, pullRound } from '../helpers/projection-props.js';

const { openStore, tempDir } = propertyStores();

const AGENTS = ['agent-0', 'agent-1', 'agent-2', '*'];
const CORRS = ['task_1', 'task_2', 'task_3'];
const TYPES = ['note', 'status', 'task.request'];

interface Spec {
  to: number; // AGENTS index; AGENTS.length: no recipient
  corr: number; // CORRS index; CORRS.length: no task
  type: number;
  from: number;
}
const spec: fc.Arbitrary<Spec> = fc.record({
  to: fc.nat({ max: AGENTS.length }),
  corr: fc.nat({ max: CORRS.length }),
  type: fc.nat({ max: TYPES.length - 1 }),
  from: fc.nat({ max: 2 }),
});

interface Read {
  conn: 0 | 1 | 2;
  to: readonly string[];
  corr: readonly string[];
  type: readonly string[];
  from: readonly string[];
  since: number | null;
  /** When set, the since cursor is the event this far from the watermark instead (the edge the reads split at). */
  near: number | null;
  before: number | null;
  order: 'asc' | 'desc';
  limit: number;
}
const read: fc.Arbitrary<Read> = fc.record({
  conn: fc.constantFrom(0 as const, 1 as const, 2 as const),
  // Mostly routed (a recipient, a task, or both), sometimes not.
  to: fc.oneof({ weight: 3, arbitrary: fc.subarray(AGENTS, { minLength: 1, maxLength: 2 }) }, { weight: 2, arbitrary: fc.constant<string[]>([]) }),
  corr: fc.oneof({ weight: 2, arbitrary: fc.subarray([...CORRS, 'task_none'], { minLength: 1, maxLength: 2 }) }, { weight: 3, arbitrary: fc.constant<string[]>([]) }),
  type: fc.oneof({ weight: 3, arbitrary: fc.constant<string[]>([]) }, { weight: 1, arbitrary: fc.subarray(TYPES, { minLength: 1, maxLength: 2 }) }),
  from: fc.oneof({ weight: 3, arbitrary: fc.constant<string[]>([]) }, { weight: 1, arbitrary: fc.constant(['agent-1']) }),
  since: fc.option(fc.nat(), { nil: null }),
  near: fc.option(fc.integer({ min: -3, max: 2 }), { nil: null }),
  before: fc.option(fc.nat(), { nil: null }),
  order: fc.constantFrom('asc' as const, 'desc' as const),
  limit: fc.integer({ min: 1, max: 6 }),
});

type Command =
  | { kind: 'append'; at: 0 | 1; events: Spec[] }
  | { kind: 'remote'; events: Spec[] }
  | { kind: 'import' }
  | { kind: 'pull'; pageLimit: number }
  | { kind: 'catchUp' }
  | { kind: 'rebuild' }
  | { kind: 'read'; reads: Read[] };
const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('append' as const), at: fc.constantFrom(0 as const, 1 as const), events: fc.array(spec, { minLength: 1, maxLength: 5 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('remote' as const), events: fc.array(spec, { minLength: 1, maxLength: 4 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('import' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('pull' as const), pageLimit: fc.integer({ min: 1, max: 4 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('catchUp' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('rebuild' as const) }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('read' as const), reads: fc.array(read, { minLength: 1, maxLength: 4 }) }) },
);

function append(store: SqliteEventStore, specs: readonly Spec[]): void {
  const results = store.append(
    specs.map((s) =>
      newEvent({
        type: TYPES[s.type] as string,
        to_agent: AGENTS[s.to] ?? null,
        correlation_id: CORRS[s.corr] ?? null,
        from_agent: `agent-${s.from}`,
        created_at: '2026-11-28T12:00:00Z',
      }),
    ),
  );
  for (const r of results) if (r instanceof HubError) throw r;
}

type Row = { seq: number; id: string; type: string; from_agent: string; to_agent: string | null; correlation_id: string | null };

/** The whole log, read on a connection of its own (not through the code under test). */
const logOf = (raw: Database.Database): Row[] => raw.prepare('SELECT seq, id, type, from_agent, to_agent, correlation_id FROM events ORDER BY seq').all() as Row[];

/** The page a query must return, by filtering every event in JS. */
function expectedPage(log: readonly Row[], raw: RawQuery, since: number | undefined, before: number | undefined): { ids: string[]; has_more: boolean; cursor: string | null } {
  const q = eventQuery(raw);
  const to = q.to_agent.length > 0 ? new Set([...q.to_agent, '*']) : null;
  const rows = log.filter(
    (e) =>
      (to === null || (e.to_agent !== null && to.has(e.to_agent))) &&
      (q.correlation_id.length === 0 || (e.correlation_id !== null && q.correlation_id.includes(e.correlation_id))) &&
      (q.type.length === 0 || q.type.includes(e.type)) &&
      (q.from_agent.length === 0 || q.from_agent.includes(e.from_agent)) &&
      (since === undefined || e.seq > since) &&
      (before === undefined || e.seq < before),
  );
  if (q.order === 'desc') rows.reverse();
  const page = rows.slice(0, q.limit);
  const hasMore = rows.length > q.limit;
  const cursor = q.order === 'asc' && before === undefined ? (hasMore ? (page.at(-1)?.id ?? null) : (log.at(-1)?.id ?? q.since_event_id)) : null;
  return { ids: page.map((e) => e.id), has_more: hasMore, cursor };
}

/** Runs one read on `store` and checks it against the JS filter over the log as it is now. */
function checkRead(store: SqliteEventStore, raw: Database.Database, r: Read): void {
  const log = logOf(raw);
  const at = (n: number | null): Row | undefined => (n === null || log.length === 0 ? undefined : log[n % log.length]);
  const w = Number(raw.prepare('SELECT value FROM meta WHERE key = ?').pluck().get(PROJECTED_SEQ_KEY));
  const since = r.near !== null && log.length > 0 ? log[Math.min(Math.max(w + r.near, 1), log.length) - 1] : at(r.since);
  const before = at(r.before);
  const query: RawQuery = {
    ...(r.to.length > 0 ? { to_agent: r.to } : {}),
    ...(r.corr.length > 0 ? { correlation_id: r.corr } : {}),
    ...(r.type.length > 0 ? { type: r.type } : {}),
    ...(r.from.length > 0 ? { from_agent: r.from } : {}),
    ...(since ? { since_event_id: since.id } : {}),
    ...(before ? { before_event_id: before.id } : {}),
    order: r.order,
    limit: r.limit,
  };
  const got: EventPage = store.query(eventQuery(query));
  expect({ ids: got.events.map((e) => e.id), has_more: got.has_more, cursor: got.cursor }, JSON.stringify(query)).toEqual(expectedPage(log, query, since?.seq, before?.seq));
  // Every returned event is whole (the routed side reads its columns through the join).
  for (const e of got.events) expect(e).toEqual(store.getEvent(e.id));
  for (const id of [...CORRS, 'task_none']) {
    const own = log.filter((e) => e.correlation_id === id).map((e) => e.id);
    expect(store.tasks.eventsOf(id).map((e) => e.id)).toEqual(own);
    expect(store.tasks.hasEvents(id)).toBe(own.length > 0);
  }
}

/** The tables hold exactly the events up to the watermark that have the value, and nothing else. */
function expectRoutesAtWatermark(raw: Database.Database): void {
  const w = Number(raw.prepare('SELECT value FROM meta WHERE key = ?').pluck().get(PROJECTED_SEQ_KEY));
  for (const [table, column] of [
    ['event_routes_agent', 'to_agent'],
    ['event_routes_task', 'correlation_id'],
  ] as const) {
    const want = raw.prepare(`SELECT ${column} AS v, seq FROM events WHERE ${column} IS NOT NULL AND seq <= ? ORDER BY 1, 2`).all(w);
    expect(raw.prepare(`SELECT ${column} AS v, seq FROM ${table} ORDER BY 1, 2`).all(), table).toEqual(want);
  }
}

describe('routed event reads under the projection watermark', () => {
  it('equal a JS filter of the whole log on every connection, the watermark anywhere', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 4, maxLength: 30 }), async (commands) => {
        const dir = tempDir('palace-routes-');
        const path = join(dir, LOGSTREAM_FILE);
        // a never projects on its own (only catchUp, a rebuild or b's batches move the watermark); a2 projects
        // in its appends every 2 events; ro cannot project at all.
        const never = { batch: 1_000_000, flushMs: 1_000_000_000 };
        const a = new SqliteEventStore(path, { mintReplicaId: () => `rep_${nextHex()}`, projection: never });
        const a2 = new SqliteEventStore(path, { mintReplicaId: () => 'rep_unused', projection: { batch: 2, flushMs: 1_000_000_000 } });
        const ro = new SqliteEventStore(path, { mintReplicaId: () => 'rep_unused', readonly: true });
        const b = openStore(':memory:');
        const raw = new Database(path, { readonly: true });
        try {
          for (const c of commands) {
            if (c.kind === 'append') append(c.at === 0 ? a : a2, c.events);
            else if (c.kind === 'remote') append(b, c.events);
            else if (c.kind === 'import') a.replica.applyRemoteEvents(b.replica.eventsAfter(b.replicaId, 0, 500));
            else if (c.kind === 'pull') await pullRound(a, b, c.pageLimit);
            else if (c.kind === 'catchUp') a.tasks.catchUp();
            else if (c.kind === 'rebuild') a.tasks.reset();
            else for (const r of c.reads) checkRead([a, a2, ro][r.conn] as SqliteEventStore, raw, r);
            expectRoutesAtWatermark(raw);
          }
        } finally {
          raw.close();
          for (const s of [ro, a2, a]) s.close();
        }
      }),
      { numRuns: 80 },
    );
  }, 120_000);

  it('after a writer process is SIGKILLed mid-batch: a read-only connection and a writer read the same pages as the JS filter', async () => {
    const dir = tempDir('palace-routes-kill-');
    await killWriterMidBatch(dir, {
      batch: `
        const batch = [];
        for (let i = 0; i < 150; i++, n++) {
          const to = ['lead', 'w1', '*', null][n % 4];
          const corr = n % 3 === 0 ? null : 'task_k' + (n % 29);
          batch.push(ls.prepareEvent({ type: 'note', stream: 'project/k', room: 'r', from_agent: 'w' + (n % 3), to_agent: to, correlation_id: corr }));
        }
        ls.store.append(batch);`,
    });
    const path = join(dir, LOGSTREAM_FILE);
    const raw = new Database(path, { readonly: true });
    const ro = new SqliteEventStore(path, { mintReplicaId: () => 'rep_unused', readonly: true });
    const writer = openStore(path);
    try {
      expectRoutesAtWatermark(raw);
      const reads: Read[] = [];
      for (const to of [['lead'], ['w1'], ['*'], []])
        for (const corr of [[], ['task_k1'], ['task_k2', 'task_k5']])
          for (const order of ['asc', 'desc'] as const)
            for (const [since, before] of [
              [null, null],
              [1500, null],
              [null, 1900],
              [100, 1999],
            ] as const)
              reads.push({ conn: 0, to, corr, type: [], from: [], since, near: null, before, order, limit: 7 });
      // Pending events above the watermark (if the kill left any) on the read-only connection, then both
      // again once the writer has caught up.
      for (const r of reads) checkRead(ro, raw, r);
      writer.tasks.catchUp();
      expectRoutesAtWatermark(raw);
      expect(Number(raw.prepare('SELECT value FROM meta WHERE key = ?').pluck().get(PROJECTED_SEQ_KEY))).toBe(writer.topSeq());
      for (const r of reads) {
        checkRead(ro, raw, r);
        checkRead(writer, raw, r);
      }
    } finally {
      ro.close();
      raw.close();
    }
  }, 60_000);
});
