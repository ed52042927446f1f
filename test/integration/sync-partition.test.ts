// Partitions between two real hubs through TCP proxies the test controls: connections dropped,
// responses delayed, and responses cut mid-body. Whatever happens on the wire, once the link heals
// both hubs hold every event exactly once (no loss, no duplicates) and every artifact intact.

import { afterEach, describe, expect, it } from 'vitest';

import type { Hub } from '../../hub/src/server.js';
import { makeHubDirs, startTestHub, waitUntil, type HubDirs } from '../helpers/hub.js';
import { allEvents, appendMany, eventIds, startProxy, writePeers, type TcpProxy } from '../helpers/sync.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

/** A hub behind its own proxy: pullers reach it only through the proxy, whose Host it allows. */
async function hubBehindProxy(): Promise<{ hub: Hub; dirs: HubDirs; proxy: TcpProxy }> {
  const proxy = await startProxy();
  cleanups.push(() => proxy.close());
  const dirs = makeHubDirs('palace-partition-');
  cleanups.push(() => dirs.cleanup());
  const h = await startTestHub(dirs, {
    env: { PALACE_SYNC_INTERVAL: '0.1', PALACE_MCP_EXTRA_ALLOWED_HOSTS: `127.0.0.1:${proxy.port}` },
  });
  cleanups.push(() => h.close());
  proxy.target = { host: '127.0.0.1', port: h.port };
  return { hub: h, dirs, proxy };
}

function errorOf(h: Hub): string | null {
  return h.services.sync?.estate().peers[0]?.last_error ?? null;
}

describe('peer sync through partitions', () => {
  it('loses nothing and duplicates nothing across drops, delays and cut responses', async () => {
    const a = await hubBehindProxy();
    const b = await hubBehindProxy();
    const toB = b.proxy; // A pulls B through this
    const toA = a.proxy; // B pulls A through this
    writePeers(a.dirs.palace, [{ name: 'b', url: toB.url }]);
    writePeers(b.dirs.palace, [{ name: 'a', url: toA.url }]);
    const la = a.hub.services.logstream;
    const lb = b.hub.services.logstream;

    await appendMany(la, 20, 'a-claude');
    await appendMany(lb, 20, 'b-claude');
    await waitUntil(
      () => la.store.countEvents() === 40 && lb.store.countEvents() === 40,
      'the first exchange',
    );

    // Drop: every connection is closed at once.
    toA.mode = toB.mode = { kind: 'drop' };
    await appendMany(lb, 600, 'b-claude'); // more than a page
    for (let i = 0; i < 5; i++)
      lb.submitPatch({
        stream: 'project/sync',
        from_agent: 'b-claude',
        to_agent: 'a-claude',
        content: `patch ${i}\n`.repeat(200),
      });
    await appendMany(la, 30, 'a-claude');
    // waitUntil takes any value but undefined/false as done, so a null error must become undefined.
    const dropped = await waitUntil(() => {
      const ea = errorOf(a.hub);
      return ea !== null && errorOf(b.hub) !== null ? ea : undefined;
    }, 'both hubs to report the dropped link');
    expect(dropped).toMatch(/unreachable|lost|closed|terminated/);

    // Cut: responses stop after 1,500 bytes; a page is never half-applied.
    const droppedErrorsAt = toB.connections;
    toA.mode = toB.mode = { kind: 'cut', bytes: 1_500 };
    await waitUntil(() => toB.connections > droppedErrorsAt + 3, 'several cut attempts');
    await waitUntil(
      () => /lost mid-response|terminated|unreachable/.test(errorOf(a.hub) ?? '') || undefined,
      'the cut to be reported',
    );
    const heldOfB = allEvents(la)
      .filter((e) => e.origin_replica === lb.replicaId)
      .map((e) => e.origin_seq);
    // Whatever A holds of B is a prefix of B's log: no holes left by a cut page.
    const bSeqs = allEvents(lb)
      .filter((e) => e.origin_replica === lb.replicaId)
      .map((e) => e.origin_seq);
    expect(heldOfB).toEqual(bSeqs.slice(0, heldOfB.length));

    // Delay: every response chunk arrives late, but it arrives.
    toA.mode = toB.mode = { kind: 'delay', ms: 20 };
    await appendMany(la, 5, 'a-claude');
    await waitUntil(() => lb.store.countEvents() >= 40 + 30 + 5, "A's writes to cross the slow link", 60_000);

    // Heal.
    toA.mode = toB.mode = { kind: 'pass' };
    const total = 40 + 600 + 5 + 30 + 5;
    await waitUntil(
      () => la.store.countEvents() === total && lb.store.countEvents() === total,
      'both hubs to converge after healing',
      60_000,
    );

    const idsA = eventIds(la);
    expect(idsA).toEqual(eventIds(lb));
    expect(new Set(idsA).size).toBe(total);
    expect(la.store.replica.versionVector()).toEqual(lb.store.replica.versionVector());
    for (const e of allEvents(lb).filter((x) => x.artifact_ids.length > 0))
      for (const id of e.artifact_ids) expect(la.getArtifact(id).sha256).toBe(lb.getArtifact(id).sha256);
    await waitUntil(
      () => errorOf(a.hub) === null && errorOf(b.hub) === null,
      'the errors to clear after healing',
    );
  });
});
