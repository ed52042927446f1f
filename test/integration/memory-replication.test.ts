// Memory replicated between a user's hubs (issue 34; docs/memory-replication.md): real hubs on real
// ports (in-process, port 0), real LanceDB palaces, the bundled embedder, rounds over HTTP with
// peers.json pinning and "wings" opt-in. Two hubs converge on a shared wing and never see an unshared
// one; moves, deletes and ratings follow the convergence rules; a hostile feed is refused.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { placements, round, share, startReplNode, stopReplNodes, type ReplNode } from '../helpers/memory-replication.js';

type Node = ReplNode;
const nodes: Node[] = [];

async function startNode(name: string): Promise<Node> {
  const node = await startReplNode(name);
  nodes.push(node);
  return node;
}

afterAll(() => stopReplNodes(nodes));

describe('memory replication between two hubs', () => {
  let a: Node;
  let b: Node;
  beforeAll(async () => {
    a = await startNode('a');
    b = await startNode('b');
    share(a, [{ peer: b, wings: ['team'] }]);
    share(b, [{ peer: a, wings: ['team'] }]);
  }, 60_000);

  it('a shared wing converges (drawers found by meaning on the other hub); an unshared wing never leaves', async () => {
    const filed = await a.memory.addDrawer({ wing: 'team', room: 'decisions', content: 'We keep the coordination log in its own SQLite file so memory rebuilds never block agents.' });
    await a.memory.addDrawer({ wing: 'team', room: 'ops', content: 'Deploys happen on Tuesdays after the staging soak passes.' });
    await a.memory.addDrawer({ wing: 'private', room: 'notes', content: 'My dentist appointment is on Friday morning.' });
    const r = await round(b);
    expect(r.results[0]).toMatchObject({ ok: true });
    expect(r.results[0]?.memory?.applied).toBe(2);
    expect((await placements(b, 'team')).map((d) => d.id)).toEqual((await placements(a, 'team')).map((d) => d.id));
    expect(await b.memory.countDrawers({ wing: 'private' })).toBe(0);
    const hits = await b.memory.search({ query: 'why is the log a separate database file?', limit: 1 });
    expect(hits.results[0]?.drawer_id).toBe(filed.drawer_id);
    expect(hits.results[0]?.replicated_from).toBe(a.replicaId);
    const got = await b.memory.getDrawer(filed.drawer_id);
    expect(got.metadata.replicated_from).toBe(a.hub.services.logstream.replicaId);
    // What replicates where: the mesh estate (Peers view, palace sync --status) and palace_status.
    expect(b.hub.services.sync?.estate().peers[0]?.memory_wings).toEqual(['team']);
    expect(b.hub.services.memorySync?.status().peers).toEqual([{ name: 'a', wings: ['team'] }]);
    // Re-pulling is idempotent.
    const again = await round(b);
    expect(again.results[0]?.memory).toMatchObject({ applied: 0, records: 0 });
  }, 60_000);

  it('a move, a rating and a delete on one hub reach the other; a re-pull never resurrects the deleted drawer', async () => {
    const moved = await b.memory.addDrawer({ wing: 'team', room: 'inbox', content: 'The release checklist lives in docs/release.md and is owned by the on-call engineer.' });
    const doomed = await b.memory.addDrawer({ wing: 'team', room: 'inbox', content: 'Temporary note: the staging database password rotation is scheduled.' });
    await round(a);
    expect((await placements(a, 'team')).map((d) => d.id)).toContain(doomed.drawer_id);
    await a.memory.relocate(moved.drawer_id, { room: 'process' });
    await a.memory.rate(moved.drawer_id, true);
    await a.memory.deleteDrawer(doomed.drawer_id);
    await round(b);
    const onB = await placements(b, 'team');
    expect(onB.find((d) => d.id === moved.drawer_id)).toMatchObject({ room: 'process', useful: true });
    expect(onB.find((d) => d.id === doomed.drawer_id)).toBeUndefined();
    // B pulls again, and A pulls B's older put of the deleted drawer: the tombstone wins on both.
    await round(b);
    await round(a);
    expect((await placements(a, 'team')).find((d) => d.id === doomed.drawer_id)).toBeUndefined();
    expect((await placements(b, 'team')).find((d) => d.id === doomed.drawer_id)).toBeUndefined();
    expect(await placements(a, 'team')).toEqual(await placements(b, 'team'));
  }, 60_000);

  it('the same content filed on both hubs is one drawer on both, not two', async () => {
    const text = 'Both machines noted that the nightly backup job must finish before 04:00 UTC.';
    const onA = await a.memory.addDrawer({ wing: 'team', room: 'ops', content: text });
    const onB = await b.memory.addDrawer({ wing: 'team', room: 'ops', content: text });
    expect(onB.drawer_id).toBe(onA.drawer_id);
    await round(a);
    await round(b);
    for (const n of [a, b]) {
      const same = (await n.memory.scanDrawers({ wing: 'team' })).filter((d) => d.content === text);
      expect(same.map((d) => d.drawer_id), n.name).toEqual([onA.drawer_id]);
    }
    expect(await placements(a, 'team')).toEqual(await placements(b, 'team'));
  }, 60_000);

  it('a move made on both hubs at once resolves the same way on both, the loser kept in placement history', async () => {
    const d = await a.memory.addDrawer({ wing: 'team', room: 'triage', content: 'Flaky tests are quarantined within a day and fixed within a week.' });
    await round(b);
    await a.memory.relocate(d.drawer_id, { room: 'testing' });
    await b.memory.relocate(d.drawer_id, { room: 'quality' });
    await round(a);
    await round(b);
    await round(a);
    const onA = (await placements(a, 'team')).find((x) => x.id === d.drawer_id);
    const onB = (await placements(b, 'team')).find((x) => x.id === d.drawer_id);
    expect(['testing', 'quality']).toContain(onA?.room);
    expect(onB?.room).toBe(onA?.room);
    const loser = onA?.room === 'testing' ? 'quality' : 'testing';
    for (const n of [a, b]) {
      const history = (await n.memory.getDrawer(d.drawer_id)).metadata.placement_history as Array<{ from: { room: string }; to: { room: string }; via: string }>;
      expect(history.some((h) => h.from.room === loser || h.to.room === loser), `${n.name} keeps the losing move to ${loser}`).toBe(true);
    }
  }, 60_000);
});
