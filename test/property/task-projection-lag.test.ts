// Task reads stay exact while the projection lags its log (issue 30: local appends commit the event
// only; the task table is brought up to date in batches, and every read catches up first). Two
// Logstreams over one file (two connections, as a hub and a CLI beside it) interleave appends (claims
// through the coordination service, fenced replies and patches, releases, notes, group commits) with
// every kind of task read; each read must equal the reducer over every committed event.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';

import { projectTask, projectTasks, type TaskState } from '../../hub/src/core/task-state.js';
import { HubError } from '../../hub/src/errors.js';
import { LOGSTREAM_FILE, Logstream } from '../../hub/src/logstream/logstream.js';
import { SqliteEventStore } from '../../hub/src/logstream/sqlite-event-store.js';
import { allEvents } from '../helpers/projection-props.js';

const CORRS = ['task_a', 'task_b', 'task_c'];
const AGENTS = ['planner', 'codex-1', 'codex-2'];

type Op =
  | { kind: 'request'; at: number; corr: number; agent: number; to: number }
  | { kind: 'claim'; at: number; corr: number; agent: number }
  | { kind: 'reply'; at: number; corr: number; agent: number; status: 'ready' | 'failed' | 'applied'; named: boolean }
  | { kind: 'patch'; at: number; corr: number; agent: number }
  | { kind: 'release'; at: number; corr: number; agent: number }
  | { kind: 'note'; at: number; corr: number; agent: number }
  | { kind: 'group'; at: number; corrs: number[]; agent: number }
  | { kind: 'read'; at: number; what: 'state' | 'page' | 'counts' | 'open' | 'claimed' | 'statuses' | 'ready'; corr: number; agent: number };

const at = fc.nat({ max: 1 });
const corr = fc.nat({ max: CORRS.length - 1 });
const agent = fc.nat({ max: AGENTS.length - 1 });
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('request' as const), at, corr, agent, to: fc.nat({ max: AGENTS.length }) }),
  fc.record({ kind: fc.constant('claim' as const), at, corr, agent }),
  fc.record({ kind: fc.constant('reply' as const), at, corr, agent, status: fc.constantFrom('ready' as const, 'failed' as const, 'applied' as const), named: fc.boolean() }),
  fc.record({ kind: fc.constant('patch' as const), at, corr, agent }),
  fc.record({ kind: fc.constant('release' as const), at, corr, agent }),
  fc.record({ kind: fc.constant('note' as const), at, corr, agent }),
  fc.record({ kind: fc.constant('group' as const), at, corrs: fc.array(corr, { minLength: 1, maxLength: 6 }), agent }),
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('read' as const),
      at,
      what: fc.constantFrom('state' as const, 'page' as const, 'counts' as const, 'open' as const, 'claimed' as const, 'statuses' as const, 'ready' as const),
      corr,
      agent,
    }),
  },
);

/** Refusals the rules make (an ack out of order, a stale attempt, a release by a non-holder): expected, nothing stored. */
const REFUSALS = new Set(['task.out_of_order', 'task.stale_attempt', 'task.not_claimed', 'claim.not_yours', 'log.event_not_found']);

/** The first event of each task the test appended (what a claim acks). */
const firstOf = new Map<string, string>();

async function run(ls: Logstream, o: Exclude<Op, { kind: 'read' }>): Promise<void> {
  const id = CORRS['corr' in o ? o.corr : 0] as string;
  const from = AGENTS[o.agent] as string;
  const base = { stream: 'project/p', room: 'coordination', from_agent: from, correlation_id: id };
  try {
    if (o.kind === 'request') {
      const e = ls.appendNow({ ...base, type: 'task.request', status: 'open', to_agent: AGENTS[o.to] ?? '*', body: 'do it' });
      if (!firstOf.has(id)) firstOf.set(id, e.id);
    } else if (o.kind === 'claim') ls.ack({ event_id: firstOf.get(id) ?? id, from_agent: from, status: 'claimed', lease_ms: 600_000 });
    else if (o.kind === 'reply') {
      const claim = o.named ? ls.taskReads.stateOf(id)?.claim_event_id : undefined;
      ls.appendNow({ ...base, type: 'task.reply', status: o.status, to_agent: 'planner', body: 'done', ...(claim ? { attempt: claim } : {}) });
    } else if (o.kind === 'patch') ls.appendNow({ ...base, type: 'patch.ready', status: 'ready', to_agent: 'planner', body: 'patch' });
    else if (o.kind === 'release') ls.releaseClaim({ event_id: id, from_agent: from });
    else if (o.kind === 'note') ls.appendNow({ ...base, type: 'note', body: 'fyi' });
    else {
      // One group commit: notes and claim acks on several tasks, each settled alone.
      const results = await Promise.allSettled(
        o.corrs.map((c, i) =>
          ls.append({ ...base, correlation_id: CORRS[c], type: i % 2 === 0 ? 'note' : 'event.ack', ...(i % 2 === 0 ? {} : { status: 'claimed', to_agent: 'planner' }), body: 'batch' }),
        ),
      );
      for (const r of results) if (r.status === 'rejected' && !(r.reason instanceof HubError && REFUSALS.has(r.reason.code))) throw r.reason;
    }
  } catch (err) {
    if (!(err instanceof HubError && REFUSALS.has(err.code))) throw err;
  }
}

/** One read through `ls`, checked against the reducer over every committed event (read through `truth`). */
function checkRead(ls: Logstream<SqliteEventStore>, truth: SqliteEventStore, o: Extract<Op, { kind: 'read' }>): void {
  const expected = projectTasks(allEvents(truth));
  const byId = new Map(expected.map((t) => [t.correlation_id, t]));
  const id = CORRS[o.corr] as string;
  const tasks = ls.store.tasks;
  if (o.what === 'state') {
    expect(ls.taskReads.stateOf(id)).toEqual(byId.get(id));
    expect(tasks.get(id)).toEqual(byId.get(id));
    expect(tasks.requestId(id)).toEqual(byId.has(id) ? byId.get(id)?.request_event_id : undefined);
  } else if (o.what === 'page') expect(tasks.page({ order: 'asc', limit: null }).tasks).toEqual(expected);
  else if (o.what === 'counts') {
    const counts = tasks.counts();
    expect(counts.all).toBe(expected.length);
    expect(counts.done).toBe(expected.filter((t) => t.done).length);
    expect(tasks.countDrift()).toEqual([]);
  } else if (o.what === 'statuses') {
    const got = Object.fromEntries(tasks.statuses(CORRS));
    expect(got).toEqual(Object.fromEntries(expected.map((t) => [t.correlation_id, { status: t.status, done: t.done }])));
  } else if (o.what === 'open') {
    const who = AGENTS[o.agent] as string;
    const want = expected.filter((t) => t.status === 'open' && (t.to_agent === who || t.to_agent === '*'));
    expect(tasks.openFor(who, null, 100).tasks.map((t) => t.correlation_id).sort()).toEqual(want.map((t) => t.correlation_id).sort());
  } else if (o.what === 'claimed') {
    const who = AGENTS[o.agent] as string;
    expect(tasks.claimedBy(who, null, 100)).toEqual(expected.filter((t: TaskState) => t.status === 'claimed' && t.worker === who));
  } else {
    // The ready queue (own claims first, then open tasks), through the coordination service.
    const who = AGENTS[o.agent] as string;
    const ready = ls.ready({ agent: who }).map((t) => t.correlation_id);
    for (const rid of ready) expect(['open', 'claimed']).toContain(byId.get(rid)?.status);
  }
}

const dirs: string[] = [];
const opened: Array<Logstream<SqliteEventStore>> = [];
afterEach(() => {
  for (const ls of opened.splice(0)) ls.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('task reads while the projection lags its log', () => {
  it('equal the reducer over every committed event, on either of two connections', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 40 }), async (ops) => {
        firstOf.clear();
        const dir = mkdtempSync(join(tmpdir(), 'palace-lag-'));
        dirs.push(dir);
        // The second projects in batches of 3 inside its appends (the default batch is rarely reached here).
        const small = new SqliteEventStore(join(dir, LOGSTREAM_FILE), { mintReplicaId: () => 'rep_000000000000', projection: { batch: 3 } });
        const pair = [Logstream.open(dir), new Logstream(small)];
        opened.push(...pair);
        const [a] = pair as [Logstream<SqliteEventStore>];
        for (const o of ops) {
          const ls = pair[o.at] as Logstream<SqliteEventStore>;
          if (o.kind === 'read') checkRead(ls, a.store, o);
          else await run(ls, o);
        }
        // And at the end, every task on both connections, one by one.
        for (const ls of pair) {
          const events = allEvents(ls.store);
          for (const id of CORRS) {
            const own = events.filter((e) => e.correlation_id === id);
            expect(ls.taskReads.stateOf(id)).toEqual(own.length === 0 ? undefined : projectTask(id, own));
          }
          expect(ls.store.tasks.page({ order: 'asc', limit: null }).tasks).toEqual(projectTasks(events));
        }
      }),
      { numRuns: 40 },
    );
  }, 60_000);
});
