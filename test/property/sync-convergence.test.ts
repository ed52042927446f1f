// The convergence property of peer sync (CONVENTIONS 23; must stay enabled): any interleaving of
// appends on 3 replicas and any order of pull rounds — concurrent ones included, interleaved at every
// transport call by fast-check's scheduler — ends, once the replicas pull along a chain, with the same
// event set everywhere, each event once, every origin held as a prefix of its log at all times.
// Real SqliteEventStores (in-memory files) and the real pull round; the transport calls the other
// store in-process through the same serve functions and wire schemas as HTTP. Every peer is pinned
// (its key known), so origins relayed through a common peer are verified against their own keys.

import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';

import { HubError } from '../../hub/src/errors.js';
import type { ReplicaStore } from '../../hub/src/logstream/replica-store.js';
import { SqliteEventStore } from '../../hub/src/logstream/sqlite-event-store.js';
import type { PeerTransport } from '../../hub/src/sync/peer-transport.js';
import { pullFromPeer } from '../../hub/src/sync/pull-round.js';
import { newArtifact, newEvent, nextHex } from '../helpers/fixtures.js';
import { inProcessTransport, pinnedPeer } from '../helpers/sync.js';

type Command =
  | { kind: 'append'; at: number; count: number; withArtifact: boolean }
  | { kind: 'pull'; into: number; from: number; pageLimit: number };

const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({
    kind: fc.constant('append' as const),
    at: fc.integer({ min: 0, max: 2 }),
    count: fc.integer({ min: 1, max: 4 }),
    withArtifact: fc.boolean(),
  }),
  fc
    .record({
      kind: fc.constant('pull' as const),
      into: fc.integer({ min: 0, max: 2 }),
      step: fc.integer({ min: 1, max: 2 }),
      pageLimit: fc.integer({ min: 1, max: 4 }),
    })
    .map(({ kind, into, step, pageLimit }) => ({ kind, into, from: (into + step) % 3, pageLimit })),
);

const opened: SqliteEventStore[] = [];
afterEach(() => {
  for (const s of opened.splice(0)) s.close();
});

function replicas(): SqliteEventStore[] {
  return [0, 1, 2].map(() => {
    const store = new SqliteEventStore(':memory:', { mintReplicaId: () => `rep_${nextHex()}` });
    opened.push(store);
    return store;
  });
}

function append(store: SqliteEventStore, count: number, withArtifact: boolean): void {
  const artifactIds: string[] = [];
  if (withArtifact) artifactIds.push(store.putArtifact(newArtifact(`patch ${nextHex()}\n`)).id);
  const results = store.append(
    Array.from({ length: count }, (_, i) =>
      newEvent({ artifact_ids: i === 0 ? artifactIds : [], body: `from ${store.replicaId}` }),
    ),
  );
  for (const r of results) if (r instanceof HubError) throw r;
}

/** Every call's answer is computed only when the scheduler lets it run, at an arbitrary point. */
function scheduled(s: fc.Scheduler, peer: ReplicaStore, label: string): PeerTransport {
  const inner = inProcessTransport(peer);
  const later = <T>(what: string, run: () => Promise<T>): Promise<T> =>
    s.schedule(Promise.resolve(), `${label} ${what}`).then(run);
  return {
    versionVector: () => later('version_vector', () => inner.versionVector()),
    ops: (origin, after, limit) => later(`ops ${after}`, () => inner.ops(origin, after, limit)),
    artifact: (id) => later('artifact', () => inner.artifact(id)),
    artifacts: (after, limit) => later(`artifacts ${after}`, () => inner.artifacts(after, limit)),
  };
}

/** origin_seqs a store holds of `origin`, in origin order. */
function heldOf(store: SqliteEventStore, origin: string): number[] {
  return store.replica.eventsAfter(origin, 0, 500).map((e) => e.origin_seq);
}

/** What each store holds of every origin is a prefix of that origin's own log. */
function expectPrefixes(stores: SqliteEventStore[]): void {
  for (const origin of stores) {
    const own = heldOf(origin, origin.replicaId);
    for (const store of stores) {
      const held = heldOf(store, origin.replicaId);
      expect(held).toEqual(own.slice(0, held.length));
    }
  }
}

function idsOf(store: SqliteEventStore): string[] {
  return store.db
    .prepare('SELECT id FROM events ORDER BY id')
    .all()
    .map((r) => (r as { id: string }).id);
}

describe('sync convergence (property)', () => {
  it('any interleaving of appends and pull rounds converges to the same event set, each event once', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(command, { minLength: 1, maxLength: 30 }),
        fc.scheduler(),
        async (commands, s) => {
          const stores = replicas();
          let appended = 0;
          const running: Promise<unknown>[] = [];
          for (const c of commands) {
            if (c.kind === 'append') {
              appended += c.count;
              const store = stores[c.at];
              if (!store) throw new Error('no store');
              // Appends also land at arbitrary points between the pulls' transport calls.
              running.push(
                s
                  .schedule(Promise.resolve(), `append ${c.at}`)
                  .then(() => append(store, c.count, c.withArtifact)),
              );
            } else {
              const into = stores[c.into];
              const from = stores[c.from];
              if (!into || !from) throw new Error('no store');
              running.push(
                pullFromPeer(into.replica, scheduled(s, from.replica, `${c.from}->${c.into}`), {
                  pageLimit: c.pageLimit,
                  peer: pinnedPeer(from.replica),
                }).then((report) => {
                  expect(report.errors.map((e) => e.message)).toEqual([]);
                }),
              );
            }
          }
          // Release scheduled calls one at a time, in the order fast-check picks, until every task is done.
          await s.waitFor(Promise.all(running));
          expectPrefixes(stores);

          // Heal along a chain 0 - 1 - 2 (0 and 2 never talk): 1 gathers everything, then hands it out.
          const [a, b, c] = stores as [SqliteEventStore, SqliteEventStore, SqliteEventStore];
          for (const [into, from] of [
            [b, a],
            [b, c],
            [a, b],
            [c, b],
          ] as const)
            expect(
              (await pullFromPeer(into.replica, inProcessTransport(from.replica), { pageLimit: 3, peer: pinnedPeer(from.replica) })).errors,
            ).toEqual([]);

          const ids = idsOf(a);
          expect(ids).toHaveLength(appended);
          expect(new Set(ids).size).toBe(appended);
          expect(idsOf(b)).toEqual(ids);
          expect(idsOf(c)).toEqual(ids);
          expect(b.replica.versionVector()).toEqual(a.replica.versionVector());
          expect(c.replica.versionVector()).toEqual(a.replica.versionVector());
          expectPrefixes(stores);

          // Converged replicas have nothing left to give each other.
          for (const into of stores)
            for (const from of stores)
              if (into !== from)
                expect(
                  (await pullFromPeer(into.replica, inProcessTransport(from.replica), { peer: pinnedPeer(from.replica) })).pulledEvents,
                ).toBe(0);
        },
      ),
      { numRuns: 150 },
    );
  }, 180_000);
});
