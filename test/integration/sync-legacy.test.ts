// Signed sync's one-time treatment of a log written before it (schema 1: no keys, no chains), and
// artifacts that no event references. Real SqliteEventStore files and the real pull round over the
// in-process transport (same serve functions and wire schemas as HTTP).

import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { SqliteEventStore } from '../../hub/src/logstream/sqlite-event-store.js';
import { pullFromPeer } from '../../hub/src/sync/pull-round.js';
import { newArtifact, newEvent, nextHex } from '../helpers/fixtures.js';
import { inProcessTransport, pinnedPeer } from '../helpers/sync.js';
import { makeTmpDir, type TmpDir } from '../helpers/tmp-dir.js';

let dir: TmpDir;
const open: SqliteEventStore[] = [];
beforeEach(() => {
  dir = makeTmpDir('palace-sync-legacy-');
});
afterEach(() => {
  for (const s of open.splice(0)) s.close();
  dir.cleanup();
});

function store(name: string): SqliteEventStore {
  const s = new SqliteEventStore(join(dir.path, `${name}.sqlite3`), { mintReplicaId: () => `rep_${nextHex()}` });
  open.push(s);
  return s;
}

function close(s: SqliteEventStore): void {
  s.close();
  open.splice(open.indexOf(s), 1);
}

/** Turns a log back into what a palace wrote before signed sync: schema 1, no key file. */
function downgradeToSchema1(name: string): void {
  const file = join(dir.path, `${name}.sqlite3`);
  const db = new Database(file);
  db.exec(`
    DROP TABLE checkpoints; DROP TABLE origin_keys; DROP TABLE sync_cursors;
    ALTER TABLE events DROP COLUMN chain; ALTER TABLE events DROP COLUMN origin_pos;
    ALTER TABLE artifacts DROP COLUMN sig;
    DELETE FROM meta WHERE key = 'public_key';
    DROP TABLE tasks; DROP TABLE task_counts; DELETE FROM meta WHERE key = 'tasks_built_seq';
    DROP TABLE reservations; DROP TABLE released_reservations; DELETE FROM meta WHERE key = 'reservations_built_seq';
    PRAGMA user_version = 1;
  `);
  db.close();
  rmSync(join(dir.path, `${name}.key`));
}

function appendTo(s: SqliteEventStore, n: number): void {
  const results = s.append(Array.from({ length: n }, () => newEvent({ body: `from ${s.replicaId}` })));
  for (const r of results) if (r instanceof Error) throw r;
}

describe('legacy events (written before signed sync)', () => {
  it('chains them on migration: own ones are served signed, others stay unverified until their origin signs them', async () => {
    const a = store('a');
    let b = store('b');
    appendTo(a, 3);
    appendTo(b, 2);
    expect((await pullFromPeer(b.replica, inProcessTransport(a.replica), { peer: pinnedPeer(a.replica) })).pulledEvents).toBe(3);
    close(b);
    downgradeToSchema1('b');

    b = store('b'); // migration 2 runs: a new key, every event chained
    expect(existsSync(join(dir.path, 'b.key'))).toBe(true);
    expect(b.replica.unverifiedCounts()).toEqual({ [a.replicaId]: 3 });
    expect(b.replica.verifiedVector()).toEqual({ [b.replicaId]: b.replica.versionVector()[b.replicaId] });

    // C trusts B: it gets B's own (legacy, now signed) events, not A's unverified ones.
    const c = store('c');
    const first = await pullFromPeer(c.replica, inProcessTransport(b.replica), { peer: pinnedPeer(b.replica) });
    expect(first.errors).toEqual([]);
    expect(first.perOrigin).toEqual({ [b.replicaId]: 2 });

    // B meets A again: its held copies chain to A's signed checkpoint and become verified in place.
    const again = await pullFromPeer(b.replica, inProcessTransport(a.replica), { peer: pinnedPeer(a.replica) });
    expect(again.errors).toEqual([]);
    expect(again).toMatchObject({ pulledEvents: 0, duplicates: 3 });
    expect(b.replica.unverifiedCounts()).toEqual({});
    // ...and now B relays them to C.
    expect((await pullFromPeer(c.replica, inProcessTransport(b.replica), { peer: pinnedPeer(b.replica) })).perOrigin).toEqual({ [a.replicaId]: 3 });
  });

  it('refuses, visibly and for good, a legacy copy the origin never wrote', async () => {
    const a = store('a');
    let b = store('b');
    appendTo(a, 3);
    await pullFromPeer(b.replica, inProcessTransport(a.replica), { peer: pinnedPeer(a.replica) });
    close(b);
    downgradeToSchema1('b');
    const db = new Database(join(dir.path, 'b.sqlite3'));
    db.prepare(`UPDATE events SET body = 'forged before signed sync' WHERE origin_replica = ? AND origin_seq = 2`).run(a.replicaId);
    db.close();
    b = store('b');
    const report = await pullFromPeer(b.replica, inProcessTransport(a.replica), { peer: pinnedPeer(a.replica) });
    expect(report.errors[0]?.code).toBe('sync.bad_signature');
    expect(report.errors[0]?.message).toMatch(/this hub's copy of origin_seq 2 differs from the served event/);
    expect(b.replica.unverifiedCounts()).toEqual({ [a.replicaId]: 3 });
  });
});

describe('artifacts that no event references', () => {
  it('replicate with their origin signature, through a relay too, and a forged signature is refused', async () => {
    const a = store('a');
    const b = store('b');
    const c = store('c');
    const loose = a.putArtifact(newArtifact('a note nobody references\n'));
    const report = await pullFromPeer(b.replica, inProcessTransport(a.replica), { peer: pinnedPeer(a.replica) });
    expect(report.errors).toEqual([]);
    expect(report.pulledArtifacts).toBe(1);
    expect(b.getArtifact(loose.id)?.content).toBe('a note nobody references\n');
    // The relay keeps the origin's signature and re-serves it: C (pinning only B) verifies it with A's key.
    appendTo(a, 1); // so C learns A's key through B's vouching while pulling A's events
    await pullFromPeer(b.replica, inProcessTransport(a.replica), { peer: pinnedPeer(a.replica) });
    const relayed = await pullFromPeer(c.replica, inProcessTransport(b.replica), { peer: pinnedPeer(b.replica) });
    expect(relayed.errors).toEqual([]);
    expect(c.getArtifact(loose.id)?.sha256).toBe(loose.sha256);

    // A forged signature on a loose artifact: refused, nothing stored.
    const other = a.putArtifact(newArtifact('second note\n'));
    const d = store('d');
    const lying = inProcessTransport(a.replica);
    const forged = {
      ...lying,
      artifact: async (id: string) => {
        const m = await lying.artifact(id);
        return { ...m, signature: 'A'.repeat(86) };
      },
    };
    const refused = await pullFromPeer(d.replica, forged, { peer: pinnedPeer(a.replica) });
    expect(refused.errors.map((e) => e.code)).toContain('sync.bad_signature');
    expect(d.replica.hasArtifact(other.id)).toBe(false);
  });
});
