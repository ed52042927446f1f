// Serving scope of memory replication (issue 34): a hub serves a memory feed only to the peer it is
// shared with, authenticated as that peer. A request must be signed with the puller's log key (the
// key the serving hub pinned for it); an unsigned request naming another peer's replica, a request
// signed by one peer but naming another, a forged signature and a stale one are refused with
// `sync.untrusted`/`sync.clock_skew`; an authenticated peer asking for a wing shared with another peer
// (not with it) is refused with `sync.not_shared` naming the wing. Real hubs on port 0, real HTTP.

import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { LOGSTREAM_FILE } from '../../hub/src/core/palace-files.js';
import { keyPathFor, loadSigningKey } from '../../hub/src/logstream/signing-key.js';
import { memoryRequestHeaders } from '../../hub/src/sync/memory-sync.js';
import { PROTOCOL_HEADER, PROTOCOL_VERSION } from '../../hub/src/sync/protocol.js';
import { round, share, startReplNode, stopReplNodes, type ReplNode } from '../helpers/memory-replication.js';

const nodes: ReplNode[] = [];
afterAll(() => stopReplNodes(nodes));

async function get(server: ReplNode, path: string, params: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.hub.url}${path}?${new URLSearchParams(params).toString()}`, {
    headers: { [PROTOCOL_HEADER]: String(PROTOCOL_VERSION), Accept: 'application/json', ...headers },
  });
  const body = (await res.json()) as { feeds?: Array<{ wing: string }>; records?: unknown[]; error?: { code: string; message: string } };
  return { status: res.status, body };
}

/** Headers signing a memory request as `as` (with its own log key), addressed to `server`. */
function signedAs(as: ReplNode, server: ReplNode, path: string, params: Record<string, string>, at?: number): Record<string, string> {
  const key = loadSigningKey(keyPathFor(join(as.dirs.palace, LOGSTREAM_FILE)), false);
  return memoryRequestHeaders({ puller: as.replicaId, server: server.replicaId, key: key.privateKey, path, params, ...(at !== undefined ? { now: at } : {}) });
}

describe('memory feeds are served only to the peer they are shared with', () => {
  let a: ReplNode;
  let b: ReplNode;
  let c: ReplNode;
  const page = (wing: string) => ({ origin: '', wing, after: '0', limit: '500' });
  beforeAll(async () => {
    [a, b, c] = await Promise.all([startReplNode('a'), startReplNode('b'), startReplNode('c')]);
    nodes.push(a, b, c);
    // a shares 'team' with b only and 'ops' with c only.
    share(a, [
      { peer: b, wings: ['team'] },
      { peer: c, wings: ['ops'] },
    ]);
    share(b, [{ peer: a, wings: ['team'] }]);
    share(c, [{ peer: a, wings: ['ops'] }]);
    await a.memory.addDrawer({ wing: 'team', room: 'plans', content: 'The team plan for the quarter is to ship replication.' });
    await a.memory.addDrawer({ wing: 'ops', room: 'runbook', content: 'Restart the hub with palace serve after an upgrade.' });
    // The honest rounds still work, each peer getting its own wing only.
    expect((await round(b)).results[0]).toMatchObject({ ok: true, memory: { applied: 1, refused: 0 } });
    expect((await round(c)).results[0]).toMatchObject({ ok: true, memory: { applied: 1, refused: 0 } });
    expect(await b.memory.countDrawers({ wing: 'team' })).toBe(1);
    expect(await c.memory.countDrawers({ wing: 'team' })).toBe(0);
  }, 90_000);

  it('an unsigned request naming a peer is refused: no heads, no page of a shared wing', async () => {
    const heads = await get(a, '/sync/memory/heads', { for: b.replicaId });
    expect(heads.status).toBe(403);
    expect(heads.body.error?.code).toBe('sync.untrusted');
    expect(heads.body.feeds).toBeUndefined();
    const p = await get(a, '/sync/memory/page', { ...page('team'), origin: a.replicaId });
    expect(p.status).toBe(403);
    expect(p.body.error?.code).toBe('sync.untrusted');
    expect(p.body.error?.message).toMatch(/signed/);
    expect(p.body.records).toBeUndefined();
  });

  it('an authenticated peer asking for a wing shared with another peer is refused, naming the wing', async () => {
    const params = { ...page('team'), origin: a.replicaId };
    const p = await get(a, '/sync/memory/page', params, signedAs(c, a, '/sync/memory/page', params));
    expect(p.status).toBe(403);
    expect(p.body.error?.code).toBe('sync.not_shared');
    expect(p.body.error?.message).toMatch(/wing 'team' is not shared with this peer \(c\)/);
    expect(p.body.records).toBeUndefined();
    // Its own wing is served.
    const own = { ...page('ops'), origin: a.replicaId };
    const ok = await get(a, '/sync/memory/page', own, signedAs(c, a, '/sync/memory/page', own));
    expect(ok.status).toBe(200);
    expect(ok.body.records).toHaveLength(1);
    // Its heads list its wing only.
    const heads = await get(a, '/sync/memory/heads', { for: c.replicaId }, signedAs(c, a, '/sync/memory/heads', { for: c.replicaId }));
    expect(heads.status).toBe(200);
    expect(heads.body.feeds?.map((f) => f.wing)).toEqual(['ops']);
  });

  it('a peer signing as itself but naming another, a forged signature and a stale one are refused', async () => {
    // c signs, but claims to be b (to read b's wing).
    const params = { for: b.replicaId };
    const asC = signedAs(c, a, '/sync/memory/heads', params);
    const claimB = await get(a, '/sync/memory/heads', params, { ...asC, 'x-palace-replica': b.replicaId });
    expect(claimB.status).toBe(403);
    expect(claimB.body.error?.code).toBe('sync.untrusted');
    expect(claimB.body.feeds).toBeUndefined();
    // A signature over other parameters (c's wing) replayed for b's wing.
    const opsParams = { ...page('ops'), origin: a.replicaId };
    const replay = await get(a, '/sync/memory/page', { ...page('team'), origin: a.replicaId }, signedAs(b, a, '/sync/memory/page', opsParams));
    expect(replay.status).toBe(403);
    expect(replay.body.error?.code).toBe('sync.untrusted');
    // A signature addressed to another hub (b) is not accepted by a.
    const teamParams = { ...page('team'), origin: a.replicaId };
    const elsewhere = await get(a, '/sync/memory/page', teamParams, signedAs(b, c, '/sync/memory/page', teamParams));
    expect(elsewhere.status).toBe(403);
    // Stale: signed an hour ago.
    const stale = await get(a, '/sync/memory/page', teamParams, signedAs(b, a, '/sync/memory/page', teamParams, Date.now() - 3_600_000));
    expect(stale.status).toBe(422);
    expect(stale.body.error?.code).toBe('sync.clock_skew');
    // The same request, fresh and signed by b, is served.
    const fresh = await get(a, '/sync/memory/page', teamParams, signedAs(b, a, '/sync/memory/page', teamParams));
    expect(fresh.status).toBe(200);
    expect(fresh.body.records).toHaveLength(1);
  });
});
