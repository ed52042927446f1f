// kill -9 during a signed pull: a real `palace serve` child pulls a few thousand signed events (and
// patches) through a slow proxy and is SIGKILLed mid-pull, twice. After each restart it resumes
// from its verified prefix; at the end it holds every event exactly once, each origin fully covered
// by a checkpoint signed by its origin, SQLite's check passes, and another round pulls nothing.

import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';

import type { Hub } from '../../hub/src/server.js';
import { SqliteEventStore } from '../../hub/src/logstream/sqlite-event-store.js';
import { killChildren, makeHubDirs, startChildHub, startTestHub, waitUntil, type HubDirs } from '../helpers/hub.js';
import { appendMany, eventIds, startProxy, writePeers, type TcpProxy } from '../helpers/sync.js';

const EVENTS = 2_000;

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  await killChildren();
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

function countIn(dirs: HubDirs): number {
  try {
    const db = new Database(join(dirs.palace, 'logstream.sqlite3'), { readonly: true, fileMustExist: true });
    try {
      return (db.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n;
    } finally {
      db.close();
    }
  } catch {
    return 0;
  }
}

describe('kill -9 during a signed pull', () => {
  it('loses nothing, duplicates nothing and resumes from the verified prefix', async () => {
    const proxy: TcpProxy = await startProxy();
    cleanups.push(() => proxy.close());
    const srcDirs = makeHubDirs('palace-sync-crash-src-');
    cleanups.push(() => srcDirs.cleanup());
    const source: Hub = await startTestHub(srcDirs, {
      env: { PALACE_SYNC_INTERVAL: '0', PALACE_MCP_EXTRA_ALLOWED_HOSTS: `127.0.0.1:${proxy.port}` },
    });
    cleanups.push(() => source.close());
    const log = source.services.logstream;
    for (let i = 0; i < 10; i++) {
      await appendMany(log, EVENTS / 10 - 1, 'src-claude');
      log.submitPatch({ stream: 'project/sync', from_agent: 'src-claude', to_agent: 'v', content: `diff --git a/f${i} b/f${i}\n+${i}\n` });
    }
    const port = Number(new URL(source.url).port);
    proxy.target = { host: '127.0.0.1', port };
    proxy.mode = { kind: 'delay', ms: 40 };

    const victimDirs = makeHubDirs('palace-sync-crash-victim-');
    cleanups.push(() => victimDirs.cleanup());
    writePeers(victimDirs.palace, [{ name: 'src', url: proxy.url, public_key: log.store.publicKey }]);
    const env = { PALACE_SYNC_INTERVAL: '0.2' };
    let seen = 0;
    for (let crash = 0; crash < 2; crash++) {
      const victim = await startChildHub(victimDirs, { env });
      await waitUntil(() => countIn(victimDirs) > seen || undefined, 'the pull to make progress', 60_000, 5);
      victim.child.kill('SIGKILL');
      await victim.exited;
      seen = countIn(victimDirs);
      expect(seen).toBeLessThan(EVENTS); // killed mid-pull
    }
    proxy.mode = { kind: 'pass' };
    const victim = await startChildHub(victimDirs, { env });
    await waitUntil(() => countIn(victimDirs) === EVENTS || undefined, 'the pull to finish after the restarts', 60_000);
    const res = await fetch(`${victim.url}/sync/round`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    const round = (await res.json()) as { results: Array<{ ok: boolean; pulled_events: number }> };
    expect(round.results[0]).toMatchObject({ ok: true, pulled_events: 0 });
    await victim.stop(5_000);

    const store = new SqliteEventStore(join(victimDirs.palace, 'logstream.sqlite3'), {
      mintReplicaId: () => 'rep_000000000000',
      readonly: true,
    });
    cleanups.push(() => store.close());
    const ids = store.db.prepare('SELECT id FROM events ORDER BY id').pluck().all() as string[];
    expect(new Set(ids).size).toBe(EVENTS);
    expect(ids).toEqual(eventIds(log));
    expect(store.replica.verifiedVector()[log.replicaId]).toBe(log.store.replica.versionVector()[log.replicaId]);
    expect(store.replica.unverifiedCounts()).toEqual({});
    expect(store.integrityCheck()).toBe('ok');
  }, 180_000);
});
