// kill -9 during a replicated memory page (issue 34): a real `palace serve` child pulls a shared
// wing's feed from an in-process hub and is SIGKILLed by the fault hook right after the verified
// page is stored and before it is applied to the memory. Restarted, it applies what was stored,
// holds every drawer exactly once, and another round pulls and applies nothing.

import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';

import type { Hub } from '../../hub/src/server.js';
import { callJson, connectHttpClient, killChildren, makeHubDirs, startChildHub, startTestHub, waitUntil, type HubDirs } from '../helpers/hub.js';
import { writePeers } from '../helpers/sync.js';

const DRAWERS = 40;

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  await killChildren();
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

function feedCounts(dirs: HubDirs): { records: number; pending: number } {
  try {
    const db = new Database(join(dirs.palace, 'memory-feed.sqlite3'), { readonly: true, fileMustExist: true });
    try {
      return db.prepare('SELECT count(*) AS records, coalesce(sum(applied = 0), 0) AS pending FROM records').get() as { records: number; pending: number };
    } finally {
      db.close();
    }
  } catch {
    return { records: 0, pending: 0 };
  }
}

describe('kill -9 during a replicated memory page', () => {
  it('loses nothing, duplicates nothing, and a re-pull is idempotent', async () => {
    const srcDirs = makeHubDirs('palace-memrep-crash-src-');
    cleanups.push(() => srcDirs.cleanup());
    const source: Hub = await startTestHub(srcDirs, { env: { PALACE_SYNC_INTERVAL: '0' } });
    cleanups.push(() => source.close());
    const memory = await source.services.memory.get();
    const results = await memory.addDrawers(
      Array.from({ length: DRAWERS }, (_, i) => ({ wing: 'team', room: `r${i % 4}`, content: `Shared note ${i}: the build for module ${i} runs its tests before it packs.`, force: true })),
    );
    expect(results.every((r) => !(r instanceof Error) && r.filed)).toBe(true);

    const victimDirs = makeHubDirs('palace-memrep-crash-victim-');
    cleanups.push(() => victimDirs.cleanup());
    // A first start mints the victim's identity, which the source's peers.json then names.
    const first = await startChildHub(victimDirs, { env: { PALACE_SYNC_INTERVAL: '0' } });
    const vv = (await (await fetch(`${first.url}/sync/version_vector`)).json()) as { replica_id: string; public_key: string };
    await first.stop(5_000);
    writePeers(srcDirs.palace, [{ name: 'victim', url: 'http://127.0.0.1:9', public_key: vv.public_key, replica_id: vv.replica_id, wings: ['team'] } as never]);
    writePeers(victimDirs.palace, [
      { name: 'src', url: source.url, public_key: source.services.logstream.store.replica.publicKey, replica_id: source.services.logstream.replicaId, wings: ['team'] } as never,
    ]);

    const crashing = await startChildHub(victimDirs, { env: { PALACE_SYNC_INTERVAL: '0.2', PALACE_FAULT_INJECT: 'memfeed.after-ingest' } });
    const exit = await crashing.exited;
    expect(exit.signal).toBe('SIGKILL');
    const stored = feedCounts(victimDirs);
    expect(stored.records).toBe(DRAWERS); // the whole verified page was stored ...
    expect(stored.pending).toBe(DRAWERS); // ... and none of it applied when the process died

    const victim = await startChildHub(victimDirs, { env: { PALACE_SYNC_INTERVAL: '0.2' } });
    await waitUntil(() => feedCounts(victimDirs).pending === 0 || undefined, 'the stored page to be applied after the restart', 60_000);
    const client = await connectHttpClient(victim.url);
    cleanups.push(() => client.close());
    const wings = await callJson<{ wings: Record<string, number> }>(client, 'palace_list_wings');
    expect(wings.wings).toEqual({ team: DRAWERS });
    const res = await fetch(`${victim.url}/sync/round`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    const round = (await res.json()) as { results: Array<{ ok: boolean; memory?: { applied: number; records: number } }> };
    expect(round.results[0]).toMatchObject({ ok: true, memory: { applied: 0, records: 0 } });
    expect(feedCounts(victimDirs)).toEqual({ records: DRAWERS, pending: 0 });
    const hit = await callJson<{ results: Array<{ content: string }> }>(client, 'palace_search', { query: 'module 17 build tests', limit: 1 });
    expect(hit.results[0]?.content).toContain('module 17');
    await victim.stop(5_000);
  }, 180_000);
});
