// Knowledge-graph facts replicated between hubs (issue 34): with "kg": true on both sides, a fact
// stated on one hub reaches the others (through a common peer too); a supersede on any hub closes the
// old fact's interval everywhere and opens the new one; facts stated before sharing are seeded once;
// a hub that does not share the graph with a peer gets none of its facts.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { KnowledgeGraph } from '../../hub/src/kg/knowledge-graph.js';
import { round, share, startReplNode, stopReplNodes, type ReplNode } from '../helpers/memory-replication.js';

const nodes: ReplNode[] = [];
afterAll(() => stopReplNodes(nodes));

function kg(n: ReplNode): KnowledgeGraph {
  return n.hub.services.kg.get();
}

function worksAt(n: ReplNode): Array<{ object: string; current: boolean; valid_to: string | null }> {
  return kg(n)
    .query({ entity: 'Alice', direction: 'outgoing' })
    .facts.filter((f) => f.predicate === 'works_at')
    .map((f) => ({ object: f.object, current: f.current, valid_to: f.valid_to }))
    .sort((x, y) => x.object.localeCompare(y.object));
}

describe('knowledge-graph facts across hubs', () => {
  let a: ReplNode;
  let b: ReplNode;
  let c: ReplNode;
  let d: ReplNode;
  beforeAll(async () => {
    [a, b, c, d] = await Promise.all([startReplNode('a'), startReplNode('b'), startReplNode('c'), startReplNode('d')]);
    nodes.push(a, b, c, d);
  }, 90_000);

  it('a fact reaches every sharing hub, and a supersede on one hub closes the old fact on all', async () => {
    kg(a).add({ subject: 'Alice', predicate: 'works_at', object: 'Acme', valid_from: '2024-01-01' }); // before sharing: seeded
    share(a, [{ peer: b, wings: [], kg: true }, { peer: d, wings: ['team'] }]);
    share(b, [{ peer: a, wings: [], kg: true }, { peer: c, wings: [], kg: true }]);
    share(c, [{ peer: b, wings: [], kg: true }]);
    share(d, [{ peer: a, wings: ['team'] }]);
    await round(b);
    await round(c);
    await round(d);
    for (const n of [b, c]) expect(worksAt(n), n.name).toEqual([{ object: 'Acme', current: true, valid_to: null }]);
    expect(worksAt(d)).toEqual([]); // d shares a wing with a, not the graph

    // The supersede happens on c (two hops from a); every sharing hub closes Acme and opens Globex.
    kg(c).supersede({ subject: 'Alice', predicate: 'works_at', old_object: 'Acme', new_object: 'Globex', at: '2025-06-01T00:00:00Z' });
    await round(b);
    await round(a);
    for (const n of [a, b, c]) {
      const facts = worksAt(n);
      expect(facts.map((f) => [f.object, f.current]), n.name).toEqual([
        ['Acme', false],
        ['Globex', true],
      ]);
      expect(facts[0]?.valid_to, n.name).toBe('2025-06-01T00:00:00Z');
    }
    // Again: nothing changes (idempotent).
    const again = await round(a);
    expect(again.results.find((r) => r.peer_name === 'b')?.memory).toMatchObject({ applied: 0, records: 0 });
    expect(worksAt(d)).toEqual([]);
  }, 90_000);
});
