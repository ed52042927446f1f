// Issue 29, items 3 and 4: an impostor that took a replica id by trust on first use, then the user
// pins the real hub's key (the impostor's events are quarantined, kept as evidence, never served, and
// the real events 1..n arrive); and one origin key that signs chain "one" for hub E and chain "two"
// for hub F (after an E⇄F round both hubs prove the equivocation, keep both statements, stop
// accepting that origin and show it in /sync/peers and `palace sync --status`). Real hubs on port 0,
// a real fake peer (node:http) with a real Ed25519 key and valid chains.

import { afterEach, describe, expect, it } from 'vitest';

import { fakeIdentity, fakeLog, serveFakeOrigin, type FakeLog } from '../../bench/fake-origin.js';
import type { Hub } from '../../hub/src/server.js';
import type { MeshMessage } from '../../hub/src/sync/protocol.js';
import { opsMessage, versionVectorMessage } from '../../hub/src/sync/serve.js';
import { PALACE_BIN, childEnv, killChildren, makeHubDirs, spawnNode, startTestHub, type HubDirs } from '../helpers/hub.js';
import { allEvents, appendMany, writePeers } from '../helpers/sync.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  await killChildren();
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function hubAt(prefix: string): Promise<{ hub: Hub; dirs: HubDirs }> {
  const dirs = makeHubDirs(prefix);
  cleanups.push(() => dirs.cleanup());
  const hub = await startTestHub(dirs, { env: { PALACE_SYNC_INTERVAL: '0' } });
  cleanups.push(() => hub.close());
  return { hub, dirs };
}

/** Ids of the events a hub holds of `origin`, in origin_seq order. */
function idsOf(hub: Hub, origin: string): string[] {
  return allEvents(hub.services.logstream)
    .filter((e) => e.origin_replica === origin)
    .sort((a, b) => a.origin_seq - b.origin_seq)
    .map((e) => e.id);
}

describe('late pin after a trust-on-first-use impostor', () => {
  it('quarantines the impostor events, pulls the real origin from 1, and serves none of the forgeries', { timeout: 60_000 }, async () => {
    const a = await hubAt('palace-latepin-a-');
    const b = await hubAt('palace-latepin-b-');
    const aLog = a.hub.services.logstream;
    await appendMany(aLog, 3, 'a-claude');
    const bLog = b.hub.services.logstream;
    await appendMany(bLog, 2, 'b-claude'); // the victim's own events, which must stay as they are
    const ownBefore = idsOf(b.hub, bLog.replicaId);

    // The impostor claims A's replica id with its own key and serves 3 forged (validly chained) events.
    const impostor = fakeIdentity(aLog.replicaId);
    const forged = fakeLog(impostor, 3, (i) => `APPROVED BY USER ${i}`);
    const fake = await serveFakeOrigin(impostor, () => forged);
    cleanups.push(() => fake.close());
    writePeers(b.dirs.palace, [{ name: 'mallory', url: fake.url }]);
    const first = await b.hub.services.sync?.runRound();
    expect(first?.results[0]).toMatchObject({ ok: true, pulled_events: 3 }); // first use: nothing to compare with
    expect(idsOf(b.hub, aLog.replicaId)).toEqual(forged.events.map((e) => e.id));

    // The user pins the real A (as `palace sync trust --pin` writes it); mallory stays in the file.
    writePeers(b.dirs.palace, [
      { name: 'a', url: a.hub.url, public_key: aLog.store.publicKey, replica_id: aLog.replicaId } as never,
      { name: 'mallory', url: fake.url },
    ]);
    const round = await b.hub.services.sync?.runRound();
    const viaA = round?.results.find((r) => r.peer_name === 'a');
    expect(viaA?.ok, JSON.stringify(viaA)).toBe(true);
    expect(viaA?.pulled_events).toBe(3);
    expect(viaA?.notes.join('\n')).toMatch(/late pin: 3 event\(s\) held as origin rep_\w+ were signed by key SHA256:.* quarantined as rep_/);
    const viaMallory = round?.results.find((r) => r.peer_name === 'mallory');
    expect(viaMallory?.error?.code).toBe('sync.untrusted');

    // The real events 1..3 arrived under A's name; the forgeries are kept, under the quarantine origin.
    expect(idsOf(b.hub, aLog.replicaId)).toEqual(idsOf(a.hub, aLog.replicaId));
    const estate = b.hub.services.sync?.estate() as MeshMessage;
    expect(estate.quarantined).toHaveLength(1);
    const q = estate.quarantined[0];
    expect(q).toMatchObject({ origin: aLog.replicaId, events: 3 });
    expect(idsOf(b.hub, q?.held_as ?? '')).toEqual(forged.events.map((e) => e.id));
    expect(estate.self.unverified_events[q?.held_as ?? '']).toBeUndefined();
    expect(estate.gossip_origins).not.toContain(q?.held_as);
    // Never served onward: not in B's vector or heads, and no page of it.
    const served = versionVectorMessage(bLog.store.replica, 'b');
    expect(served.version_vector[q?.held_as ?? '']).toBeUndefined();
    expect(served.heads?.some((h) => h.origin === q?.held_as)).toBe(false);
    expect(opsMessage(bLog.store.replica, { origin: q?.held_as, after: 0 }).events).toEqual([]);
    // The victim's own log is as it was.
    expect(idsOf(b.hub, bLog.replicaId)).toEqual(ownBefore);

    // A's next event arrives normally (the issue saw "altered, reordered or forged" here).
    await appendMany(aLog, 1, 'a-claude');
    const next = await b.hub.services.sync?.runRound([{ name: 'a', url: a.hub.url, token: undefined, publicKey: aLog.store.publicKey, replicaId: aLog.replicaId }]);
    expect(next?.results[0]).toMatchObject({ ok: true, pulled_events: 1 });
    expect(idsOf(b.hub, aLog.replicaId)).toEqual(idsOf(a.hub, aLog.replicaId));
  });
});

describe('equivocation', () => {
  it('one key signing two chains is detected on both hubs after an E⇄F round', { timeout: 90_000 }, async () => {
    const e = await hubAt('palace-equiv-e-');
    const f = await hubAt('palace-equiv-f-');
    const origin = fakeIdentity();
    const at = Date.now();
    const one = fakeLog(origin, 3, (i) => `one ${i}`, undefined, at);
    const ids = one.events.map((ev) => ev.id);
    const two = fakeLog(origin, 3, (i) => `two ${i}`, ids, at);
    let oneNow: FakeLog = one;
    const fake = await serveFakeOrigin(origin, (req) => (req.headers.authorization === 'Bearer for-e' ? oneNow : two));
    cleanups.push(() => fake.close());
    writePeers(e.dirs.palace, [{ name: 'origin', url: fake.url, token: 'for-e' }]);
    writePeers(f.dirs.palace, [{ name: 'origin', url: fake.url, token: 'for-f' }]);
    expect((await e.hub.services.sync?.runRound())?.results[0]).toMatchObject({ ok: true, pulled_events: 3 });
    expect((await f.hub.services.sync?.runRound())?.results[0]).toMatchObject({ ok: true, pulled_events: 3 });
    // Same ids and origin_seq, different bodies: the two hubs hold different versions of "the same" events.
    expect(idsOf(e.hub, origin.replica)).toEqual(idsOf(f.hub, origin.replica));
    const eIdsBefore = allEvents(e.hub.services.logstream).map((ev) => ev.id);
    const fIdsBefore = allEvents(f.hub.services.logstream).map((ev) => ev.id);

    const eKey = e.hub.services.logstream.store.publicKey;
    const fKey = f.hub.services.logstream.store.publicKey;
    writePeers(e.dirs.palace, [
      { name: 'origin', url: fake.url, token: 'for-e' },
      { name: 'f', url: f.hub.url, public_key: fKey },
    ]);
    writePeers(f.dirs.palace, [
      { name: 'origin', url: fake.url, token: 'for-f' },
      { name: 'e', url: e.hub.url, public_key: eKey },
    ]);
    const eRound = await e.hub.services.sync?.runRound();
    const fRound = await f.hub.services.sync?.runRound();
    for (const [round, peer] of [
      [eRound, 'f'],
      [fRound, 'e'],
    ] as const) {
      const r = round?.results.find((x) => x.peer_name === peer);
      expect(r?.ok).toBe(false);
      expect(r?.error?.code).toBe('sync.equivocation');
      expect(r?.error?.message).toMatch(new RegExp(`origin ${origin.replica} signed two different chains .*at position 3`));
    }
    for (const hub of [e.hub, f.hub]) {
      const estate = hub.services.sync?.estate() as MeshMessage;
      expect(estate.equivocations).toHaveLength(1);
      const proof = estate.equivocations[0];
      expect(proof).toMatchObject({ origin: origin.replica, pos: 3 });
      expect(proof?.ours_chain).not.toBe(proof?.theirs_chain);
      // Both statements kept, each a valid signature by the origin's key over its own chain.
      const kept = hub.services.logstream.store.replica.evidence.equivocations()[0];
      expect([kept?.ours.checkpoint.chain, kept?.theirs.chain].sort()).toEqual(
        [one.checkpoints[2]?.chain, two.checkpoints[2]?.chain].sort(),
      );
      const peer = estate.peers.find((p) => p.name === 'e' || p.name === 'f');
      expect(peer?.rejected_pages.some((p) => p.code === 'sync.equivocation')).toBe(true);
      // Also over HTTP.
      const http = (await (await fetch(`${hub.url}/sync/peers`)).json()) as MeshMessage;
      expect(http.equivocations[0]?.origin).toBe(origin.replica);
    }
    // Logs unchanged by the detection.
    expect(allEvents(e.hub.services.logstream).map((ev) => ev.id)).toEqual(eIdsBefore);
    expect(allEvents(f.hub.services.logstream).map((ev) => ev.id)).toEqual(fIdsBefore);

    // The origin is no longer accepted, even its next event from itself.
    oneNow = fakeLog(origin, 4, (i) => `one ${i}`, ids, at); // ids 1-3 as before, a fresh 4th
    const later = await e.hub.services.sync?.runRound([{ name: 'origin', url: fake.url, token: 'for-e' }]);
    expect(later?.results[0]?.error?.code).toBe('sync.equivocation');
    expect(allEvents(e.hub.services.logstream).map((ev) => ev.id)).toEqual(eIdsBefore);

    // `palace sync --status` shows it.
    const proc = spawnNode(PALACE_BIN, ['--palace', e.dirs.palace, 'sync', '--status'], childEnv(e.dirs, {}), 60_000);
    await proc.exited;
    expect(proc.stdout()).toMatch(new RegExp(`EQUIVOCATION: origin ${origin.replica} signed two chains at position 3`));
  });
});
