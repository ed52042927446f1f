// Peer sync between real hubs on loopback port 0 with temp palaces: an exchange both ways, a chain
// A-B-C where A and C never talk, a hub stopped / written to elsewhere / restarted, replayed rounds,
// and synced events waking a pending palace_event_wait with new local seqs after since_event_id.

import { afterEach, describe, expect, it } from 'vitest';

import type { LogEvent } from '../../hub/src/core/types.js';
import { Logstream } from '../../hub/src/logstream/logstream.js';
import type { Hub } from '../../hub/src/server.js';
import {
  callJson,
  connectHttpClient,
  makeHubDirs,
  startTestHub,
  waitUntil,
  type HubDirs,
} from '../helpers/hub.js';
import { allEvents, appendMany, eventIds, writePeers } from '../helpers/sync.js';

const FAST = { PALACE_SYNC_INTERVAL: '0.2' };

const dirsList: HubDirs[] = [];
const hubs: Hub[] = [];

async function hubWith(
  env: Record<string, string> = FAST,
  dirs?: HubDirs,
): Promise<{ hub: Hub; dirs: HubDirs }> {
  const d = dirs ?? makeHubDirs('palace-sync-');
  if (!dirs) dirsList.push(d);
  const hub = await startTestHub(d, { env });
  hubs.push(hub);
  return { hub, dirs: d };
}

afterEach(async () => {
  await Promise.all(hubs.splice(0).map((h) => h.close()));
  for (const d of dirsList.splice(0)) d.cleanup();
});

function log(hub: Hub): Logstream {
  return hub.services.logstream;
}

async function converged(nodes: readonly Hub[], expected: number, what: string): Promise<void> {
  await waitUntil(() => nodes.every((h) => log(h).store.countEvents() === expected), what, 30_000);
}

describe('peer sync between hubs', () => {
  it('exchanges events and artifacts both ways, keeping ids, origin stamps, clocks and timestamps', async () => {
    const a = await hubWith();
    const b = await hubWith();
    const fromA = await appendMany(log(a.hub), 5, 'a-claude');
    const patch = log(a.hub).submitPatch({
      stream: 'project/sync',
      from_agent: 'a-claude',
      to_agent: 'b-codex',
      correlation_id: 'task_sync',
      content: 'diff --git a/x b/x\n+hello\n',
    });
    const fromB = await appendMany(log(b.hub), 4, 'b-codex');
    writePeers(a.dirs.palace, [{ name: 'b', url: b.hub.url }]);
    writePeers(b.dirs.palace, [{ name: 'a', url: a.hub.url }]);

    await converged([a.hub, b.hub], 10, 'both hubs to hold all 10 events');
    expect(eventIds(log(a.hub))).toEqual(eventIds(log(b.hub)));

    // Verbatim: everything but the local seq is the origin's.
    const strip = (e: LogEvent): Omit<LogEvent, 'seq'> => {
      const { seq: _seq, ...rest } = e;
      return rest;
    };
    for (const original of [...fromA, patch.event, ...fromB]) {
      const other = original.origin_replica === log(a.hub).replicaId ? b.hub : a.hub;
      const copy = log(other).store.getEvent(original.id);
      expect(copy && strip(copy)).toEqual(strip(original));
    }
    const artifact = log(b.hub).getArtifact(patch.artifact.id);
    expect(artifact.content).toBe('diff --git a/x b/x\n+hello\n');
    expect(artifact.sha256).toBe(patch.artifact.sha256);
    expect(artifact.origin_replica).toBe(log(a.hub).replicaId);

    // Each event exactly once, and vectors agree.
    const ids = allEvents(log(a.hub)).map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(log(a.hub).store.replica.versionVector()).toEqual(log(b.hub).store.replica.versionVector());

    // The mesh estate names the peer, its replica and vector, and never a token.
    const estate = a.hub.services.sync?.estate();
    expect(estate?.self.replica_id).toBe(log(a.hub).replicaId);
    expect(estate?.peers).toHaveLength(1);
    await waitUntil(
      () => a.hub.services.sync?.estate().peers[0]?.pulled_events_total === 4,
      'the estate to count pulled events',
    );
    const peer = a.hub.services.sync?.estate().peers[0];
    expect(peer).toMatchObject({
      name: 'b',
      url: b.hub.url,
      replica_id: log(b.hub).replicaId,
      reachable: true,
      last_error: null,
    });
    expect(peer?.remote_version_vector?.[log(b.hub).replicaId]).toBeGreaterThan(0);
    expect(peer?.last_success_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
  });

  it('converges a chain A-B-C in which A and C never talk, and lists gossip-only origins', async () => {
    const a = await hubWith();
    const b = await hubWith();
    const c = await hubWith();
    // Relaying needs pinned keys: a trust-on-first-use peer may give only its own events.
    const pin = (name: string, h: Hub) => ({ name, url: h.url, public_key: log(h).store.publicKey });
    writePeers(a.dirs.palace, [pin('b', b.hub)]);
    writePeers(b.dirs.palace, [pin('a', a.hub), pin('c', c.hub)]);
    writePeers(c.dirs.palace, [pin('b', b.hub)]);
    await appendMany(log(a.hub), 7, 'a-claude');
    await appendMany(log(b.hub), 3, 'b-claude');
    await appendMany(log(c.hub), 6, 'c-claude');

    await converged([a.hub, b.hub, c.hub], 16, 'all three hubs to hold all 16 events');
    const ids = eventIds(log(a.hub));
    expect(eventIds(log(b.hub))).toEqual(ids);
    expect(eventIds(log(c.hub))).toEqual(ids);
    // A knows C only through B.
    await waitUntil(
      () => a.hub.services.sync?.estate().gossip_origins.includes(log(c.hub).replicaId),
      'A to list C as gossip',
    );
    const estate = a.hub.services.sync?.estate();
    expect(estate?.gossip_origins).toEqual([log(c.hub).replicaId]);
    expect(Object.keys(estate?.self.version_vector ?? {}).sort()).toEqual(
      [log(a.hub).replicaId, log(b.hub).replicaId, log(c.hub).replicaId].sort(),
    );

    // Later writes still flow end to end.
    await appendMany(log(c.hub), 2, 'c-claude');
    await converged([a.hub, b.hub, c.hub], 18, 'the new C events to reach A through B');
  });

  it('in a full mesh pulls each origin from its own hub while that hub is healthy', async () => {
    const a = await hubWith();
    const b = await hubWith();
    const c = await hubWith();
    writePeers(a.dirs.palace, [
      { name: 'b', url: b.hub.url },
      { name: 'c', url: c.hub.url },
    ]);
    writePeers(b.dirs.palace, [
      { name: 'a', url: a.hub.url },
      { name: 'c', url: c.hub.url },
    ]);
    writePeers(c.dirs.palace, [
      { name: 'a', url: a.hub.url },
      { name: 'b', url: b.hub.url },
    ]);
    const healthy = (h: Hub): boolean =>
      h.services.sync?.estate().peers.every((p) => p.last_success_at !== null && p.last_error === null) ??
      false;
    await waitUntil(() => healthy(a.hub) && healthy(b.hub) && healthy(c.hub), 'the mesh to form');
    await appendMany(log(b.hub), 200, 'b-claude');
    await appendMany(log(c.hub), 300, 'c-claude');
    await converged([a.hub, b.hub, c.hub], 500, 'the full mesh to converge');
    const pulledBy = (h: Hub, name: string): number =>
      h.services.sync?.estate().peers.find((p) => p.name === name)?.pulled_events_total ?? -1;
    await waitUntil(
      () => pulledBy(a.hub, 'b') + pulledBy(a.hub, 'c') === 500,
      "A's estate to count every pull",
    );
    expect(pulledBy(a.hub, 'b')).toBe(200); // none of C's events came the long way round
    expect(pulledBy(a.hub, 'c')).toBe(300);
  });

  it('catches up a hub that was stopped while others wrote, and its offline writes reach them', async () => {
    const a = await hubWith();
    const b = await hubWith();
    writePeers(a.dirs.palace, [{ name: 'b', url: b.hub.url }]);
    writePeers(b.dirs.palace, [{ name: 'a', url: a.hub.url }]);
    await appendMany(log(a.hub), 3, 'a-claude');
    await converged([a.hub, b.hub], 3, 'the first exchange');

    // B goes down; A keeps writing, and a CLI-style writer appends to B's palace while it is down.
    await b.hub.close();
    hubs.splice(hubs.indexOf(b.hub), 1);
    await appendMany(log(a.hub), 520, 'a-claude'); // more than one page
    const offline = Logstream.open(b.dirs.palace);
    offline.appendNow({
      type: 'status',
      stream: 'project/sync',
      room: 'status',
      from_agent: 'b-cli',
      body: 'written while the hub was down',
    });
    offline.close();
    await waitUntil(
      () => a.hub.services.sync?.estate().peers[0]?.reachable === false,
      'A to notice B is down',
    );
    expect(a.hub.services.sync?.estate().peers[0]?.last_error).toMatch(/unreachable/);

    const b2 = await hubWith(FAST, b.dirs);
    writePeers(a.dirs.palace, [{ name: 'b', url: b2.hub.url }]); // new port after the restart
    await converged([a.hub, b2.hub], 524, 'B to re-pull the tail and A to get the offline write');
    expect(eventIds(log(a.hub))).toEqual(eventIds(log(b2.hub)));
  });

  it('replaying a round changes nothing', async () => {
    const a = await hubWith({ PALACE_SYNC_INTERVAL: '0' });
    const b = await hubWith({ PALACE_SYNC_INTERVAL: '0' });
    await appendMany(log(b.hub), 12, 'b-claude');
    writePeers(a.dirs.palace, [{ name: 'b', url: b.hub.url }]);
    const sync = a.hub.services.sync;
    if (!sync) throw new Error('hub has no sync service');

    const first = await sync.runRound();
    expect(first.results[0]).toMatchObject({
      ok: true,
      pulled_events: 12,
      peer_replica: log(b.hub).replicaId,
    });
    const before = allEvents(log(a.hub));
    const vector = log(a.hub).store.replica.versionVector();

    const second = await sync.runRound();
    expect(second.results[0]).toMatchObject({ ok: true, pulled_events: 0, pulled_artifacts: 0 });
    expect(allEvents(log(a.hub))).toEqual(before);
    expect(log(a.hub).store.replica.versionVector()).toEqual(vector);

    // Even forcing the same events in again applies none of them.
    const again = log(a.hub).store.replica.applyRemoteEvents(
      log(b.hub).store.replica.eventsAfter(log(b.hub).replicaId, 0, 500),
    );
    expect(again).toMatchObject({ applied: 0, duplicates: 12 });
    expect(allEvents(log(a.hub))).toEqual(before);
  });

  it('wakes a pending palace_event_wait with synced events that sort after since_event_id', async () => {
    const a = await hubWith();
    const b = await hubWith({ PALACE_SYNC_INTERVAL: '0' });
    const client = await connectHttpClient(a.hub.url);
    try {
      // A's local event is created after B's, yet B's arrives later and gets a higher local seq.
      const early = await appendMany(log(b.hub), 1, 'b-claude', {
        to_agent: 'a-codex',
        type: 'task.request',
        status: 'open',
        correlation_id: 'task_x',
      });
      const [cursor] = await appendMany(log(a.hub), 1, 'a-claude');
      if (!cursor || !early[0]) throw new Error('append failed');
      const waiting = callJson<{ events: LogEvent[]; timed_out: boolean }>(client, 'palace_event_wait', {
        to_agent: 'a-codex',
        since_event_id: cursor.id,
        timeout_ms: 60_000,
      });
      writePeers(a.dirs.palace, [{ name: 'b', url: b.hub.url }]);
      const woke = await waiting;
      expect(woke.timed_out).toBe(false);
      expect(woke.events.map((e) => e.id)).toEqual([early[0].id]);
      expect(woke.events[0]?.seq).toBeGreaterThan(cursor.seq);
      expect(woke.events[0]?.created_at).toBe(early[0].created_at);
      // A list from the same cursor (the watcher's resume point) sees it too.
      const listed = await callJson<{ events: LogEvent[] }>(client, 'palace_event_list', {
        since_event_id: cursor.id,
      });
      expect(listed.events.map((e) => e.id)).toEqual([early[0].id]);
    } finally {
      await client.close();
    }
  });
});
