// The task table applies each event to the stored fold of its task (O(1) per event) instead of
// re-running projectTask over the task's history. Property: whatever the events (claims competing
// across replicas by HLC stamp, renewals before and after an expiry, expiries with stale lease ends,
// late patches, reservations and releases, terminal statuses and re-opening replies), however they are
// cut into transactions (local group commits and pulled remote batches), and with rows from before
// the fold column (schema 5, fold_json NULL) mixed in, every stored row equals projectTask over that
// task's events, byte for byte as JSON, and the kept counts match the table.

import { join } from 'node:path';

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { formatHlc } from '../../hub/src/core/hlc.js';
import { isoSeconds, makeId } from '../../hub/src/core/ids.js';
import type { ReplicatedEvent } from '../../hub/src/core/replication.js';
import { projectTask } from '../../hub/src/core/task-state.js';
import type { EventStatus, NewEvent } from '../../hub/src/core/types.js';
import { SCHEMA_VERSION } from '../../hub/src/logstream/schema.js';
import { newEvent } from '../helpers/fixtures.js';
import { propertyStores } from '../helpers/projection-props.js';

const CORRS = ['task_a', 'task_b'];
const AGENTS = ['agent-0', 'agent-1', 'agent-2'];
const ORIGINS = ['rep_aaaaaaaaaaaa', 'rep_bbbbbbbbbbbb'];
const BASE = Date.parse('2026-06-01T00:00:00Z');
const LEASES = ['2026-06-01T00:10:00.000Z', '2026-06-01T00:20:00.000Z', '2026-06-01T00:30:00.000Z'];
const STATUSES: EventStatus[] = ['open', 'claimed', 'ready', 'applied', 'failed', 'blocked', 'superseded'];
const KINDS = ['request', 'claim', 'ack', 'renew', 'expire', 'patch', 'reply', 'reserve', 'release', 'note'] as const;

interface Spec {
  kind: (typeof KINDS)[number];
  corr: number;
  agent: number;
  /** Which earlier event of the task a renewal, expiry or release names (modulo their count). */
  ref: number;
  lease: number;
  status: number;
  /** Remote (pulled from an origin, with its own clock) or a local append. */
  remote: boolean;
  origin: number;
  /** The remote stamp's ms offset: remote stamps are not in log order, so concurrent claims compete. */
  clock: number;
}

const spec: fc.Arbitrary<Spec> = fc.record({
  kind: fc.constantFrom(...KINDS),
  corr: fc.nat({ max: CORRS.length - 1 }),
  agent: fc.nat({ max: AGENTS.length - 1 }),
  ref: fc.nat({ max: 50 }),
  lease: fc.nat({ max: LEASES.length - 1 }),
  status: fc.nat({ max: STATUSES.length - 1 }),
  remote: fc.boolean(),
  origin: fc.nat({ max: ORIGINS.length - 1 }),
  clock: fc.nat({ max: 100_000 }),
});

type Command = { kind: 'batch'; specs: Spec[] } | { kind: 'forget' };
const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('batch' as const), specs: fc.array(spec, { minLength: 1, maxLength: 5 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('forget' as const) }) },
);

const { openStore, tempDir } = propertyStores();

let hex = 0;
const nextId = (): string => makeId('evt', new Date(BASE), (hex++).toString(16).padStart(12, '0'));

describe('incremental task projection', () => {
  it('equals projectTask over each task after any events, batches and pre-fold rows', () => {
    fc.assert(
      fc.property(fc.array(command, { minLength: 1, maxLength: 12 }), (commands) => {
        const store = openStore(join(tempDir('palace-fold-'), 'logstream.sqlite3'));
        const ids: Record<string, string[]> = Object.fromEntries(CORRS.map((c) => [c, []]));
        // The claims of each task and their authors: renewals and expiries mostly name one of them.
        const claims: Record<string, Array<{ id: string; agent: string }>> = Object.fromEntries(CORRS.map((c) => [c, []]));
        const originSeq = ORIGINS.map(() => 0);
        const fields = (s: Spec): Omit<NewEvent, 'id' | 'created_at'> & { id: string; created_at: string } => {
          const corr = CORRS[s.corr] as string;
          const earlier = ids[corr] ?? [];
          const taskClaims = claims[corr] ?? [];
          const claimed = taskClaims.length > 0 && s.ref % 4 !== 0 ? taskClaims[s.ref % taskClaims.length] : undefined;
          const ref = claimed?.id ?? (earlier.length === 0 ? 'evt_none' : (earlier[s.ref % earlier.length] as string));
          // A renewal mostly comes from the claim's author.
          const agent = s.kind === 'renew' && claimed && s.agent !== 2 ? claimed.agent : (AGENTS[s.agent] as string);
          const lease = LEASES[s.lease] as string;
          const base = newEvent({ id: nextId(), correlation_id: corr, from_agent: agent, created_at: isoSeconds(new Date(BASE + s.clock)) });
          switch (s.kind) {
            case 'request':
              return { ...base, type: 'task.request', to_agent: s.agent === 2 ? '*' : agent, status: 'open', stream: `s${s.lease}` };
            case 'claim':
              return { ...base, type: 'event.ack', status: 'claimed', metadata_json: JSON.stringify({ lease_expires_at: lease }) };
            case 'ack':
              return { ...base, type: 'event.ack', status: STATUSES[s.status] ?? null };
            case 'renew':
              return { ...base, type: 'claim.renewed', metadata_json: JSON.stringify({ claim_event_id: ref, lease_expires_at: lease }) };
            case 'expire':
              return { ...base, type: 'claim.expired', body: JSON.stringify({ claimed_event_id: ref, lease_expires_at: lease }) };
            case 'patch':
              return { ...base, type: 'patch.ready', status: 'ready' };
            case 'reply':
              return { ...base, type: 'task.reply', status: STATUSES[s.status] ?? null };
            case 'reserve':
              return { ...base, type: 'file.reserved', body: JSON.stringify({ paths: [`src/${s.ref % 3}.ts`], expires_at: lease, exclusive: s.status % 2 === 0 }) };
            case 'release':
              return { ...base, type: 'file.released', body: JSON.stringify({ reservation_id: ref }) };
            case 'note':
              return { ...base, type: 'status', body: 'progress' };
          }
        };
        for (const c of commands) {
          if (c.kind === 'forget') {
            // Rows as schema 5 left them: no fold; the next event of each re-projects it once.
            store.db.prepare('UPDATE tasks SET fold_json = NULL').run();
            continue;
          }
          const local: NewEvent[] = [];
          const remote: ReplicatedEvent[] = [];
          for (const s of c.specs) {
            const e = fields(s);
            ids[e.correlation_id as string]?.push(e.id);
            if (e.type === 'event.ack' && e.status === 'claimed') claims[e.correlation_id as string]?.push({ id: e.id, agent: e.from_agent });
            if (!s.remote) {
              local.push(e);
              continue;
            }
            const origin = ORIGINS[s.origin] as string;
            const seq = (originSeq[s.origin] ?? 0) + 1;
            originSeq[s.origin] = seq;
            const { metadata_json: metadata, ...rest } = e;
            remote.push({ ...rest, metadata: JSON.parse(metadata) as Record<string, unknown>, origin_replica: origin, origin_seq: seq, hlc: formatHlc({ ms: BASE + s.clock, counter: 0 }, origin) });
          }
          if (local.length > 0) expect(store.append(local).every((r) => !(r instanceof Error))).toBe(true);
          if (remote.length > 0) expect(store.replica.applyRemoteEvents(remote).failed).toBeUndefined();
        }
        for (const corr of CORRS) {
          const events = store.tasks.eventsOf(corr);
          const stored = store.tasks.get(corr);
          if (events.length === 0) expect(stored).toBeUndefined();
          else expect(JSON.stringify(stored)).toBe(JSON.stringify(projectTask(corr, events)));
        }
        expect(store.tasks.countDrift()).toEqual([]);
      }),
      { numRuns: 150 },
    );
  });

  it('keeps what the reducer remembers between transactions: a renewal made before its author saw the expiry revives the claim', () => {
    const store = openStore(join(tempDir('palace-fold-'), 'logstream.sqlite3'));
    const at = (s: number): string => isoSeconds(new Date(BASE + s * 1000));
    const request = newEvent({ id: nextId(), type: 'task.request', correlation_id: 'task_r', from_agent: 'lead', to_agent: 'agent-0', status: 'open', created_at: at(0) });
    const claim = newEvent({ id: nextId(), type: 'event.ack', status: 'claimed', correlation_id: 'task_r', from_agent: 'agent-0', metadata_json: JSON.stringify({ lease_expires_at: LEASES[0] }), created_at: at(1) });
    const expiry = newEvent({ id: nextId(), type: 'claim.expired', correlation_id: 'task_r', from_agent: 'hub', body: JSON.stringify({ claimed_event_id: claim.id, lease_expires_at: LEASES[0] }), created_at: at(2) });
    const renewal = newEvent({ id: nextId(), type: 'claim.renewed', correlation_id: 'task_r', from_agent: 'agent-0', metadata_json: JSON.stringify({ claim_event_id: claim.id, lease_expires_at: LEASES[2] }), created_at: at(3) });
    const late = newEvent({ id: nextId(), type: 'patch.ready', status: 'ready', correlation_id: 'task_r', from_agent: 'agent-0', created_at: at(4) });
    // One transaction each: every step reads the fold the previous one stored.
    // Each projected in its own transaction (catchUp): the fold the previous step stored, not one batch.
    for (const e of [request, claim, expiry]) {
      store.append([e]);
      store.tasks.catchUp();
    }
    expect(store.tasks.get('task_r')).toMatchObject({ status: 'open', lease_expired: true });
    store.append([renewal]);
    store.tasks.catchUp();
    expect(store.tasks.get('task_r')).toMatchObject({ status: 'claimed', worker: 'agent-0', claim_event_id: claim.id, lease_expires_at: LEASES[2] });
    store.append([late]);
    const events = store.tasks.eventsOf('task_r');
    expect(JSON.stringify(store.tasks.get('task_r'))).toBe(JSON.stringify(projectTask('task_r', events)));
  });

  it('remembers an expired worker across transactions: their later patch is flagged late', () => {
    const store = openStore(join(tempDir('palace-fold-'), 'logstream.sqlite3'));
    const request = newEvent({ id: nextId(), type: 'task.request', correlation_id: 'task_l', from_agent: 'lead', to_agent: '*', status: 'open' });
    const claim = newEvent({ id: nextId(), type: 'event.ack', status: 'claimed', correlation_id: 'task_l', from_agent: 'agent-1', metadata_json: JSON.stringify({ lease_expires_at: LEASES[0] }) });
    const expiry = newEvent({ id: nextId(), type: 'claim.expired', correlation_id: 'task_l', from_agent: 'hub', body: JSON.stringify({ claimed_event_id: claim.id, lease_expires_at: LEASES[1] }) });
    const patch = newEvent({ id: nextId(), type: 'patch.ready', status: 'ready', correlation_id: 'task_l', from_agent: 'agent-1' });
    for (const e of [request, claim, expiry, patch]) {
      store.append([e]);
      store.tasks.catchUp();
    }
    expect(store.tasks.get('task_l')).toMatchObject({ status: 'ready', late_patch: true });
  });

  it('upgrades a schema 5 log: rows without a fold are re-projected at their next event, the ready index holds open tasks only', () => {
    const path = join(tempDir('palace-fold-'), 'logstream.sqlite3');
    const old = openStore(path);
    const request = (corr: string): NewEvent => newEvent({ id: nextId(), type: 'task.request', correlation_id: corr, from_agent: 'lead', to_agent: 'agent-0', status: 'open' });
    old.append([request('task_x'), request('task_y')]);
    old.append([newEvent({ id: nextId(), type: 'event.ack', status: 'claimed', correlation_id: 'task_x', from_agent: 'agent-0', metadata_json: JSON.stringify({ lease_expires_at: LEASES[1] }) })]);
    old.tasks.catchUp(); // a schema 5 log kept its table in step with every append
    // Back to schema 5 as it shipped: no fold column, no stream index, the ready index on every task.
    old.db.exec(`ALTER TABLE tasks DROP COLUMN fold_json; DROP INDEX tasks_stream_idx; DROP INDEX tasks_ready_idx;
      CREATE INDEX tasks_ready_idx ON tasks(status, to_agent, created_at, first_seq); PRAGMA user_version = 5;`);
    old.close();

    const store = openStore(path);
    expect(store.db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    expect(store.db.prepare(`SELECT sql FROM sqlite_master WHERE name = 'tasks_ready_idx'`).pluck().get()).toMatch(/WHERE status = 'open'/);
    expect(store.db.prepare(`SELECT sql FROM sqlite_master WHERE name = 'tasks_stream_idx'`).pluck().get()).toMatch(/\(stream, first_seq\)/);
    expect(store.db.prepare('SELECT count(*) FROM tasks WHERE fold_json IS NULL').pluck().get()).toBe(2);
    expect(store.tasks.openFor('agent-0', null, 10).tasks.map((t) => t.correlation_id)).toEqual(['task_y']);
    store.append([newEvent({ id: nextId(), type: 'claim.expired', correlation_id: 'task_x', from_agent: 'hub', body: '{}' }), newEvent({ id: nextId(), type: 'status', correlation_id: 'task_y', from_agent: 'lead' })]);
    store.tasks.catchUp(); // the batch that projects them (appends leave the table behind)
    expect(store.db.prepare('SELECT count(*) FROM tasks WHERE fold_json IS NULL').pluck().get()).toBe(0);
    for (const corr of ['task_x', 'task_y'])
      expect(JSON.stringify(store.tasks.get(corr))).toBe(JSON.stringify(projectTask(corr, store.tasks.eventsOf(corr))));
    expect(store.tasks.countDrift()).toEqual([]);
    expect(store.integrityCheck()).toBe('ok');
  });
});
