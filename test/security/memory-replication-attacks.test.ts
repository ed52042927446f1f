// Memory replication across three hubs and against a hostile peer (issue 34): full mesh and gossip
// through a common peer converge on the shared wing and never see an unshared one; a peer offering a
// wing not shared with it, altered records, a record filing into another wing, and a feed relabelled
// under another origin's name are each refused with a stable code and a clear reason, nothing written.

import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { LOGSTREAM_FILE } from '../../hub/src/core/palace-files.js';
import { keyPathFor, loadSigningKey } from '../../hub/src/logstream/signing-key.js';
import { memoryRequestHeaders } from '../../hub/src/sync/memory-sync.js';
import type { MemoryPageMessage } from '../../hub/src/sync/protocol.js';
import { createHttpPeerTransport } from '../../hub/src/sync/http-peer-transport.js';
import type { PeerTransport } from '../../hub/src/sync/peer-transport.js';
import { placements, round, share, startReplNode, stopReplNodes, type ReplNode } from '../helpers/memory-replication.js';

const nodes: ReplNode[] = [];
afterAll(() => stopReplNodes(nodes));

async function node(name: string): Promise<ReplNode> {
  const n = await startReplNode(name);
  nodes.push(n);
  return n;
}

describe('three hubs', () => {
  let a: ReplNode;
  let b: ReplNode;
  let c: ReplNode;
  let d: ReplNode;
  beforeAll(async () => {
    [a, b, c, d] = await Promise.all([node('a'), node('b'), node('c'), node('d')]);
  }, 90_000);

  it('gossip through a common peer: C gets A\'s drawers from B, verified with A\'s key, and never the unshared wing', async () => {
    // A and C are not peers; both share 'team' with B. B is pinned by both, so it may vouch for A's key.
    share(a, [{ peer: b, wings: ['team'] }]);
    share(b, [
      { peer: a, wings: ['team'] },
      { peer: c, wings: ['team'] },
    ]);
    share(c, [{ peer: b, wings: ['team'] }]);
    const filed = await a.memory.addDrawer({ wing: 'team', room: 'decisions', content: 'Every hub signs its memory feed with the same key as its event log.' });
    await a.memory.addDrawer({ wing: 'secret', room: 'notes', content: 'The surprise party is on the ninth.' });
    await c.memory.addDrawer({ wing: 'team', room: 'ops', content: 'The on-call rotation changes every Monday at noon.' });
    await round(b);
    const r = await round(c);
    expect(r.results[0]).toMatchObject({ ok: true });
    await round(a);
    for (const n of [a, b, c]) expect(await n.memory.countDrawers({ wing: 'team' }), n.name).toBe(2);
    for (const n of [b, c]) expect(await n.memory.countDrawers({ wing: 'secret' }), n.name).toBe(0);
    expect((await c.memory.getDrawer(filed.drawer_id)).metadata.replicated_from).toBe(a.replicaId);
    expect(await placements(a, 'team')).toEqual(await placements(c, 'team'));
  }, 60_000);

  it('a full mesh of three converges on a delete and a move made on different hubs', async () => {
    share(a, [
      { peer: b, wings: ['mesh'] },
      { peer: d, wings: ['mesh'] },
    ]);
    share(b, [
      { peer: a, wings: ['mesh'] },
      { peer: d, wings: ['mesh'] },
    ]);
    share(d, [
      { peer: a, wings: ['mesh'] },
      { peer: b, wings: ['mesh'] },
    ]);
    const x = await a.memory.addDrawer({ wing: 'mesh', room: 'r1', content: 'Backups run nightly and are restored monthly as a drill.' });
    const y = await b.memory.addDrawer({ wing: 'mesh', room: 'r1', content: 'Secrets are kept in the vault, never in the repository.' });
    for (const n of [a, b, d]) await round(n);
    await d.memory.deleteDrawer(x.drawer_id);
    await a.memory.relocate(y.drawer_id, { room: 'security' });
    for (let i = 0; i < 2; i++) for (const n of [a, b, d]) await round(n);
    for (const n of [a, b, d]) {
      const p = await placements(n, 'mesh');
      expect(p.map((q) => q.id), n.name).toEqual([y.drawer_id]);
      expect(p[0]?.room, n.name).toBe('security');
    }
  }, 60_000);
});

describe('hostile or misconfigured peers', () => {
  let victim: ReplNode;
  let peer: ReplNode;
  beforeAll(async () => {
    [victim, peer] = await Promise.all([node('victim'), node('peer')]);
    // The victim shares only 'team'; the peer (misconfigured, or hostile) serves 'team' and 'private'.
    share(victim, [{ peer, wings: ['team'] }]);
    share(peer, [{ peer: victim, wings: ['team', 'private'] }]);
    await peer.memory.addDrawer({ wing: 'team', room: 'a', content: 'Pull requests need one review from a code owner.' });
    await peer.memory.addDrawer({ wing: 'private', room: 'b', content: 'Planting this drawer where it was never shared.' });
  }, 90_000);

  it('refuses a feed of a wing it does not share with the peer, naming the wing, and takes the shared one', async () => {
    const r = await round(victim);
    const result = r.results[0];
    expect(result?.ok).toBe(false);
    expect(result?.error?.code).toBe('sync.not_shared');
    expect(result?.error?.message).toMatch(/wing 'private'.*does not share with it/);
    expect(await victim.memory.countDrawers({ wing: 'private' })).toBe(0);
    expect(await victim.memory.countDrawers({ wing: 'team' })).toBe(1);
    const estate = victim.hub.services.sync?.estate();
    expect(estate?.peers[0]?.rejected_pages[0]).toMatchObject({ code: 'sync.not_shared' });
  }, 60_000);

  function tampered(edit: (page: MemoryPageMessage) => MemoryPageMessage): PeerTransport {
    const t = createHttpPeerTransport({ url: peer.hub.url, name: 'peer' });
    return {
      ...t,
      memoryPage: async (origin, wing, after, limit, signal, headers) => edit(await t.memoryPage!(origin, wing, after, limit, signal, headers)),
    };
  }

  async function pullWith(transport: PeerTransport) {
    const sync = victim.hub.services.memorySync;
    if (!sync) throw new Error('no memory sync');
    const entry = { name: 'peer', url: peer.hub.url, token: undefined, publicKey: peer.hub.services.logstream.store.replica.publicKey, replicaId: peer.replicaId, wings: ['team', 'more'] };
    return sync.pull(entry, transport, { replicaId: peer.replicaId, trust: 'pinned', fingerprint: 'x' });
  }

  it('refuses altered records, a record filing into another wing, and a feed relabelled under another origin', async () => {
    share(peer, [{ peer: victim, wings: ['team', 'more'] }]);
    const added = await peer.memory.addDrawer({ wing: 'more', room: 'c', content: 'Release notes are written by the person who merges the last change.' });
    const before = await victim.memory.countDrawers({ wing: 'more' });
    expect(before).toBe(0);

    const altered = await pullWith(
      tampered((p) => ({ ...p, records: p.records.map((r) => ({ ...r, body: r.body.replace('Release notes', 'Release NOTES') })) })),
    );
    expect(altered?.refused.map((x) => x.error.code)).toContain('sync.hash_mismatch');

    const elsewhere = await pullWith(tampered((p) => ({ ...p, records: p.records.map((r) => ({ ...r, body: r.body.replace('"wing":"more"', '"wing":"private"') })) })));
    const wrongWing = elsewhere?.refused.find((x) => x.error.code === 'sync.bad_message');
    expect(wrongWing?.error.message).toMatch(/not the feed's wing 'more'/);

    // The peer serves its own feed of 'more' relabelled as the feed of hub A, whose key the victim holds.
    const a = nodes[0];
    if (!a) throw new Error('hub a');
    victim.hub.services.logstream.store.replica.rememberOriginKey({ origin: a.replicaId, publicKey: a.hub.services.logstream.store.replica.publicKey, source: 'pinned', vouchedBy: null }, null, true);
    const real = createHttpPeerTransport({ url: peer.hub.url, name: 'peer' });
    const forged = await pullWith({
      ...real,
      memoryHeads: async (forReplica, signal, headers) => {
        const h = await real.memoryHeads!(forReplica, signal, headers);
        return { ...h, feeds: h.feeds.map((f) => (f.wing === 'more' ? { ...f, origin: a.replicaId } : f)) };
      },
      memoryPage: async (origin, wing, after, limit, signal, headers) => {
        if (origin !== a.replicaId) return real.memoryPage!(origin, wing, after, limit, signal, headers);
        // The hostile peer answers a request for A's feed with its own (asked here as the victim would ask it).
        const own = { origin: peer.replicaId, wing, after: String(after), limit: String(limit) };
        const key = loadSigningKey(keyPathFor(join(victim.dirs.palace, LOGSTREAM_FILE)), false).privateKey;
        const asked = memoryRequestHeaders({ puller: victim.replicaId, server: peer.replicaId, key, path: '/sync/memory/page', params: own });
        const page = await real.memoryPage!(peer.replicaId, wing, after, limit, signal, asked);
        // Every stamp renamed too, so only the origin's signature can tell.
        const records = page.records.map((r) => ({ ...r, hlc: r.hlc.replace(peer.replicaId, a.replicaId) }));
        return { ...page, origin: a.replicaId, records, checkpoint: page.checkpoint ? { ...page.checkpoint, origin: a.replicaId } : null };
      },
    });
    expect(forged?.refused.map((x) => x.error.code)).toEqual(['sync.bad_signature']);
    expect(forged?.refused[0]?.error.message).toMatch(/not signed by .*key/);
    expect(await victim.memory.countDrawers({ wing: 'more' })).toBe(0);
    expect(await victim.memory.countDrawers({ wing: 'private' })).toBe(0);

    // Untampered, the same feed applies.
    const clean = await pullWith(createHttpPeerTransport({ url: peer.hub.url, name: 'peer' }));
    expect(clean?.refused).toEqual([]);
    expect((await victim.memory.getDrawer(added.drawer_id)).wing).toBe('more');
  }, 60_000);
});
