// Conflicting current facts across hubs (issue 34): two hubs that state different current objects for
// one subject and predicate both keep both facts after sync, each marked `conflicting: true` with the
// hub it was stated on (`origin`), in palace_kg_query and the timeline; a predicate one hub itself uses
// with two objects is multi-valued and marks nothing; agreeing facts mark nothing. Once one hub
// supersedes, sync closes the loser everywhere and the mark clears on every hub.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { KnowledgeGraph } from '../../hub/src/kg/knowledge-graph.js';
import { callJson, connectHttpClient } from '../helpers/hub.js';
import { round, share, startReplNode, stopReplNodes, type ReplNode } from '../helpers/memory-replication.js';

const nodes: ReplNode[] = [];
const clients: Client[] = [];
afterAll(async () => {
  for (const c of clients.splice(0)) await c.close();
  await stopReplNodes(nodes);
});

interface Fact {
  predicate: string;
  object: string;
  current: boolean;
  origin?: string;
  conflicting?: boolean;
}

function kg(n: ReplNode): KnowledgeGraph {
  return n.hub.services.kg.get();
}

async function aliceFacts(client: Client, predicate: string): Promise<Array<Pick<Fact, 'object' | 'current' | 'origin' | 'conflicting'>>> {
  const r = await callJson<{ facts: Fact[] }>(client, 'palace_kg_query', { entity: 'Alice', direction: 'outgoing' });
  return r.facts
    .filter((f) => f.predicate === predicate)
    .map((f) => ({ object: f.object, current: f.current, ...(f.origin ? { origin: f.origin } : {}), ...(f.conflicting !== undefined ? { conflicting: f.conflicting } : {}) }))
    .sort((x, y) => x.object.localeCompare(y.object) || String(x.current).localeCompare(String(y.current)));
}

describe('conflicting current facts across hubs', () => {
  let a: ReplNode;
  let b: ReplNode;
  let ca: Client;
  let cb: Client;
  beforeAll(async () => {
    [a, b] = await Promise.all([startReplNode('a'), startReplNode('b')]);
    nodes.push(a, b);
    share(a, [{ peer: b, wings: [], kg: true }]);
    share(b, [{ peer: a, wings: [], kg: true }]);
    ca = await connectHttpClient(a.hub.url);
    cb = await connectHttpClient(b.hub.url);
    clients.push(ca, cb);
  }, 60_000);

  it('both hubs keep both facts, marked conflicting with their origin; multi-valued and agreeing facts are not marked', async () => {
    kg(a).add({ subject: 'Alice', predicate: 'works_at', object: 'Acme' });
    kg(b).add({ subject: 'Alice', predicate: 'works_at', object: 'Globex' });
    // Agreement: the same object stated on both hubs is no conflict.
    kg(a).add({ subject: 'Alice', predicate: 'lives_in', object: 'Paris' });
    kg(b).add({ subject: 'Alice', predicate: 'lives_in', object: 'Paris' });
    // Multi-valued: hub a itself knows two people, so b's third is no conflict.
    kg(a).add({ subject: 'Alice', predicate: 'knows', object: 'Bob' });
    kg(a).add({ subject: 'Alice', predicate: 'knows', object: 'Carol' });
    kg(b).add({ subject: 'Alice', predicate: 'knows', object: 'Dave' });
    await round(a);
    await round(b);
    // The Peers view shows the graph replicating with the peer.
    expect(a.hub.services.sync?.estate().peers[0]).toMatchObject({ name: 'b', memory_kg: true });
    for (const [n, c] of [
      [a, ca],
      [b, cb],
    ] as const) {
      expect(await aliceFacts(c, 'works_at'), n.name).toEqual([
        { object: 'Acme', current: true, origin: a.replicaId, conflicting: true },
        { object: 'Globex', current: true, origin: b.replicaId, conflicting: true },
      ]);
      expect((await aliceFacts(c, 'lives_in')).map((f) => f.conflicting), n.name).toEqual([undefined, undefined]);
      expect((await aliceFacts(c, 'knows')).map((f) => [f.object, f.conflicting]), n.name).toEqual([
        ['Bob', undefined],
        ['Carol', undefined],
        ['Dave', undefined],
      ]);
      const timeline = await callJson<{ timeline: Fact[] }>(c, 'palace_kg_timeline', { entity: 'Alice' });
      expect(
        timeline.timeline.filter((f) => f.predicate === 'works_at').map((f) => [f.object, f.conflicting, f.origin]).sort(),
        n.name,
      ).toEqual([
        ['Acme', true, a.replicaId],
        ['Globex', true, b.replicaId],
      ]);
    }
  }, 60_000);

  it('once one hub supersedes, both show the survivor alone as current and no conflict', async () => {
    kg(b).supersede({ subject: 'Alice', predicate: 'works_at', old_object: 'Acme', new_object: 'Globex' });
    await round(a);
    await round(b);
    for (const [n, c] of [
      [a, ca],
      [b, cb],
    ] as const) {
      const facts = await aliceFacts(c, 'works_at');
      expect(facts.filter((f) => f.current).map((f) => f.object), n.name).toEqual(['Globex']);
      expect(facts.some((f) => f.conflicting), n.name).toBe(false);
      const timeline = await callJson<{ timeline: Fact[] }>(c, 'palace_kg_timeline', { entity: 'Alice' });
      expect(timeline.timeline.some((f) => f.conflicting), n.name).toBe(false);
    }
    // The replicated fact still names where it was stated; a's own (closed) fact shows no origin on a.
    expect((await aliceFacts(ca, 'works_at')).find((f) => f.object === 'Globex')?.origin).toBe(b.replicaId);
    expect((await aliceFacts(ca, 'works_at')).find((f) => f.object === 'Acme')?.origin).toBeUndefined();
  }, 60_000);
});
