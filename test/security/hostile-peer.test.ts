// Issue 29: a real victim hub (port 0) against a fake peer (a node:http server in the test) built to
// exhaust or mislead it: a round aimed at an unknown URL by a tokenless local request, a page whose
// signed events name huge artifacts (the hub used to fetch and hold them all before any check), an
// endless artifact listing (notes grew without bound), and an impostor claiming the replica id of a
// hub already pinned in peers.json. Each is refused or bounded with a clear reason, and the victim's
// log, vectors and clock stay as they were.

import { generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterEach, describe, expect, it } from 'vitest';

import { checkpointBytes } from '../../hub/src/core/chain.js';
import { formatHlc } from '../../hub/src/core/hlc.js';
import { isoSeconds, makeId } from '../../hub/src/core/ids.js';
import { rawPublicKey } from '../../hub/src/logstream/signatures.js';
import type { Hub } from '../../hub/src/server.js';
import { makeHubDirs, startTestHub, type HubDirs } from '../helpers/hub.js';
import { eventIds, writePeers } from '../helpers/sync.js';

type Json = Record<string, unknown>;

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function victimHub(): Promise<{ hub: Hub; dirs: HubDirs }> {
  const dirs = makeHubDirs('palace-hostile-');
  cleanups.push(() => dirs.cleanup());
  const hub = await startTestHub(dirs, { env: { PALACE_SYNC_INTERVAL: '0' } });
  cleanups.push(() => hub.close());
  return { hub, dirs };
}

interface FakePeer {
  url: string;
  /** Requests seen, by path. */
  hits: Record<string, number>;
  /** Bytes written in artifact bodies (including ones the hub hung up on). */
  artifactBytes: { sent: number };
}

async function fakePeer(handler: (res: ServerResponse, url: URL, req: IncomingMessage, peer: FakePeer) => void): Promise<FakePeer> {
  const peer: FakePeer = { url: '', hits: {}, artifactBytes: { sent: 0 } };
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    peer.hits[url.pathname] = (peer.hits[url.pathname] ?? 0) + 1;
    handler(res, url, req, peer);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  peer.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return peer;
}

function json(res: ServerResponse, value: unknown, status = 200): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(value));
}

/** An attacker identity: its own replica id and Ed25519 key (it can sign its own checkpoints). */
function attacker(): { replica: string; publicKey: string; privateKey: KeyObject } {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return { replica: `rep_${randomBytes(6).toString('hex')}`, publicKey: rawPublicKey(publicKey), privateKey };
}

/** Well-formed events of `origin` (each naming `artifacts`) ending at a checkpoint the attacker signs. */
function signedPage(who: ReturnType<typeof attacker>, count: number, artifacts: (i: number) => string[]): Json {
  const now = Date.now();
  const events = Array.from({ length: count }, (_, i) => ({
    id: makeId('evt', new Date(now), randomBytes(6).toString('hex')),
    type: 'status',
    stream: 'project/x',
    room: 'status',
    from_agent: 'mallory',
    to_agent: null,
    correlation_id: null,
    branch: null,
    base_commit: null,
    status: null,
    artifact_ids: artifacts(i),
    body: `event ${i}`,
    metadata: {},
    created_at: isoSeconds(new Date(now)),
    origin_replica: who.replica,
    origin_seq: i + 1,
    hlc: formatHlc({ ms: now, counter: i }, who.replica),
  }));
  const cp = { origin: who.replica, seq: count, pos: count, chain: randomBytes(32).toString('hex') };
  const sig = sign(null, checkpointBytes(cp), who.privateKey).toString('base64url');
  return { type: 'ops', protocol: 2, origin: who.replica, after: 0, events, count, has_more: false, checkpoint: { ...cp, sig } };
}

function vector(who: ReturnType<typeof attacker>, top: number): Json {
  return {
    type: 'version_vector',
    protocol: 2,
    replica_id: who.replica,
    name: 'mallory',
    version_vector: top > 0 ? { [who.replica]: top } : {},
    public_key: who.publicKey,
    keys: [],
  };
}

/** Peak RSS growth while `run` runs (sampled every 10 ms), in bytes. */
async function peakRssGrowth<T>(run: () => Promise<T>): Promise<{ value: T; growth: number }> {
  const base = process.memoryUsage.rss();
  let peak = base;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 10);
  try {
    const value = await run();
    peak = Math.max(peak, process.memoryUsage.rss());
    return { value, growth: peak - base };
  } finally {
    clearInterval(timer);
  }
}

function snapshot(hub: Hub): { ids: string[]; vector: Record<string, number> } {
  const log = hub.services.logstream;
  return { ids: eventIds(log), vector: log.store.replica.versionVector() };
}

const MiB = 1024 * 1024;

describe('sync against a peer built to exhaust or mislead the hub', () => {
  it('a tokenless local request cannot aim the hub at a URL outside peers.json', async () => {
    const { hub } = await victimHub();
    const peer = await fakePeer((res) => json(res, { error: { code: 'x', message: 'should never be asked' } }, 500));
    const res = await fetch(`${hub.url}/sync/round`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ peer: { url: peer.url } }),
    });
    expect(res.status).toBe(403);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('sync.untrusted');
    expect(body.error.message).toMatch(/not in peers\.json/);
    expect(peer.hits).toEqual({});
    // Listed in peers.json, the same URL is pulled (with the file's entry).
    writePeers(hub.services.config.palacePath, [{ name: 'listed', url: peer.url }]);
    const listed = await fetch(`${hub.url}/sync/round`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ peer: { url: peer.url } }),
    });
    expect(listed.status).toBe(200);
    expect(((await listed.json()) as { results: Array<{ peer_name: string }> }).results[0]?.peer_name).toBe('listed');
    expect(peer.hits['/sync/version_vector']).toBe(1);
  });

  it('checks a page before fetching its artifacts, and never holds an oversized artifact', { timeout: 60_000 }, async () => {
    const { hub, dirs } = await victimHub();
    const who = attacker();
    const ids = Array.from({ length: 10 }, () => makeId('art', new Date(), randomBytes(6).toString('hex')));
    const HUGE = 20 * MiB;
    const peer = await fakePeer((res, u, _req, p) => {
      if (u.pathname === '/sync/version_vector') return json(res, vector(who, 10));
      if (u.pathname === '/sync/ops') return json(res, signedPage(who, 10, (i) => [ids[i] ?? '']));
      if (u.pathname === '/sync/artifact') {
        // 20 MiB of content, streamed a MiB at a time (the fake peer holds almost nothing itself).
        res.writeHead(200, { 'Content-Type': 'application/json' });
        const id = u.searchParams.get('id') ?? '';
        res.write(
          `{"type":"artifact","protocol":2,"signature":null,"artifact":{"id":"${id}","kind":"file","created_by":"mallory","sha256":"${'0'.repeat(64)}","size_bytes":${HUGE},"created_at":"${isoSeconds(new Date())}","origin_replica":"${who.replica}","metadata":{},"content":"`,
        );
        const chunk = 'A'.repeat(MiB);
        let sent = 0;
        const pump = (): void => {
          while (sent < HUGE / MiB) {
            sent++;
            p.artifactBytes.sent += MiB;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end('"}}');
        };
        res.on('error', () => undefined);
        return pump();
      }
      json(res, { type: 'artifacts', protocol: 2, after: 0, next: 0, items: [], has_more: false });
    });
    writePeers(dirs.palace, [{ name: 'mallory', url: peer.url }]);
    const before = snapshot(hub);
    const { value: round, growth } = await peakRssGrowth(async () => hub.services.sync?.runRound());
    const result = round?.results[0];
    expect(result?.ok).toBe(false);
    expect(result?.pulled_events).toBe(0);
    expect(result?.error?.message).toMatch(/content passes \d+ bytes \(the local artifact limit\); cut off while streaming/);
    // One artifact was started, then cut off at the cap; the other nine were never asked for.
    expect(peer.hits['/sync/artifact']).toBe(1);
    expect(growth).toBeLessThan(100 * MiB);
    expect(snapshot(hub)).toEqual(before);
  });

  it('refuses a page with a malformed artifact id before fetching anything', async () => {
    const { hub, dirs } = await victimHub();
    const who = attacker();
    const peer = await fakePeer((res, u) => {
      if (u.pathname === '/sync/version_vector') return json(res, vector(who, 3));
      if (u.pathname === '/sync/ops') return json(res, signedPage(who, 3, () => ['art_../../etc/passwd']));
      json(res, { error: { code: 'artifact.not_found', message: 'no' } }, 404);
    });
    writePeers(dirs.palace, [{ name: 'mallory', url: peer.url }]);
    const result = (await hub.services.sync?.runRound())?.results[0];
    expect(result?.error?.code).toBe('sync.bad_message');
    expect(result?.error?.message).toMatch(/not an artifact id/);
    expect(peer.hits['/sync/artifact']).toBeUndefined();
  });

  it('bounds an endless artifact listing: pages per round and notes are capped, skipped items counted', { timeout: 60_000 }, async () => {
    const { hub, dirs } = await victimHub();
    const who = attacker();
    const stranger = `rep_${randomBytes(6).toString('hex')}`;
    const peer = await fakePeer((res, u) => {
      if (u.pathname === '/sync/version_vector') return json(res, vector(who, 0));
      if (u.pathname === '/sync/artifacts') {
        const after = Number(u.searchParams.get('after') ?? '0');
        // Always more (a safety stop at 200 pages keeps the old code's run finite).
        const items = Array.from({ length: 500 }, () => ({ id: makeId('art', new Date(), randomBytes(6).toString('hex')), origin_replica: stranger }));
        return json(res, { type: 'artifacts', protocol: 2, after, next: after + 500, items, has_more: after < 100_000 });
      }
      json(res, { error: { code: 'x', message: 'no' } }, 404);
    });
    writePeers(dirs.palace, [{ name: 'mallory', url: peer.url }]);
    const before = snapshot(hub);
    const round = await hub.services.sync?.runRound();
    const result = round?.results[0];
    expect(peer.hits['/sync/artifacts']).toBeLessThanOrEqual(20);
    expect(result?.notes.length).toBeLessThanOrEqual(22); // 20 kept, the budget note, the count of the rest
    expect(result?.notes.join('\n')).toMatch(/more note\(s\) this round, not listed/);
    expect(result?.notes.join('\n')).toMatch(/the next round goes on/);
    expect(snapshot(hub)).toEqual(before);
  });

  it('a trust-on-first-use peer cannot claim the replica id of a hub pinned in peers.json', async () => {
    const { hub, dirs } = await victimHub();
    const real = attacker(); // the real hub A's identity, pinned (its hub is not reachable yet)
    const impostor = attacker();
    impostor.replica = real.replica;
    const peer = await fakePeer((res, u) => {
      if (u.pathname === '/sync/version_vector') return json(res, vector(impostor, 3));
      if (u.pathname === '/sync/ops') return json(res, signedPage(impostor, 3, () => []));
      json(res, { type: 'artifacts', protocol: 2, after: 0, next: 0, items: [], has_more: false });
    });
    writePeers(dirs.palace, [
      { name: 'a', url: 'http://127.0.0.1:9', public_key: real.publicKey, replica_id: real.replica } as never,
      { name: 'mallory', url: peer.url },
    ]);
    const before = snapshot(hub);
    const round = await hub.services.sync?.runRound();
    const result = round?.results.find((r) => r.peer_name === 'mallory');
    expect(result?.ok).toBe(false);
    expect(result?.error?.code).toBe('sync.untrusted');
    expect(result?.error?.message).toMatch(/claims replica .* peers\.json pins it for peer 'a'/);
    expect(peer.hits['/sync/ops']).toBeUndefined();
    expect(snapshot(hub)).toEqual(before);
    expect(hub.services.logstream.store.replica.originKey(real.replica)).toBeUndefined();
  });
});
