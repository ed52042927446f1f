// Peer sync when things go wrong, against real hubs and tiny node:http peers: a wrong token (401)
// reported in the mesh while other peers sync on, a tampered artifact refused by its sha256 (its
// event not applied), a hanging peer that stalls no one, peers.json edited (and broken) while the
// hub runs, protocol version negotiation, and the /sync endpoints' auth, validation and gzip.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { loadConfig } from '../../hub/src/config.js';
import { makeLogger } from '../../hub/src/log.js';
import { Logstream } from '../../hub/src/logstream/logstream.js';
import { startHub, type Hub } from '../../hub/src/server.js';
import { PROTOCOL_VERSION, type MeshMessage } from '../../hub/src/sync/protocol.js';
import { artifactMessage, artifactsMessage, opsMessage, versionVectorMessage } from '../../hub/src/sync/serve.js';
import {
  callJson,
  connectHttpClient,
  makeHubDirs,
  rawRequest,
  sleep,
  startTestHub,
  waitUntil,
  type HubDirs,
} from '../helpers/hub.js';
import { appendMany, eventIds, writePeers } from '../helpers/sync.js';

const FAST = { PALACE_SYNC_INTERVAL: '0.2' };

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function hubWith(
  options: { env?: Record<string, string>; token?: string; readOnly?: boolean; logLines?: string[] } = {},
): Promise<{ hub: Hub; dirs: HubDirs }> {
  const dirs = makeHubDirs('palace-sync-');
  cleanups.push(() => dirs.cleanup());
  const config = loadConfig({}, { ...dirs.env, ...(options.env ?? FAST) });
  const lines = options.logLines;
  const hub = await startHub({
    config,
    log: makeLogger('test', { level: 'debug', write: (line) => lines?.push(line) }),
    host: '127.0.0.1',
    port: 0,
    token: options.token,
    readOnly: options.readOnly ?? false,
  });
  cleanups.push(() => hub.close());
  return { hub, dirs };
}

/** A tiny HTTP server in the test; `handler` decides every answer. */
async function fakePeer(
  handler: (req: IncomingMessage, res: ServerResponse, url: URL) => void,
): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => handler(req, res, new URL(req.url ?? '/', 'http://x')));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

function json(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(value));
}

function estateOf(hub: Hub): MeshMessage {
  const estate = hub.services.sync?.estate();
  if (!estate) throw new Error('no sync service');
  return estate;
}

describe('peer sync failures', () => {
  it('reports a peer answering 401 in the mesh while the other peers sync, and recovers once the token is fixed', async () => {
    const a = await hubWith();
    const good = await hubWith();
    const guarded = await hubWith({ token: 'right-token-0123456789' });
    await appendMany(good.hub.services.logstream, 3, 'good-claude');
    await appendMany(guarded.hub.services.logstream, 2, 'guarded-claude');
    writePeers(a.dirs.palace, [
      { name: 'guarded', url: guarded.hub.url, token: 'wrong-token-secret-value' },
      { name: 'good', url: good.hub.url },
    ]);

    await waitUntil(
      () => estateOf(a.hub).peers.find((p) => p.name === 'guarded')?.last_error ?? undefined,
      'the 401 to be reported',
    );
    await waitUntil(() => a.hub.services.logstream.store.countEvents() === 3, "the good peer's events");
    // The round ends after the events (it still lists loose artifacts): wait for it to be recorded.
    await waitUntil(
      () => estateOf(a.hub).peers.find((p) => p.name === 'good')?.last_success_at ?? undefined,
      "the good peer's round to be recorded",
    );
    const estate = estateOf(a.hub);
    const guardedPeer = estate.peers.find((p) => p.name === 'guarded');
    expect(guardedPeer).toMatchObject({
      reachable: false,
      last_error_code: 'sync.peer_failed',
      last_success_at: null,
    });
    expect(guardedPeer?.last_error).toMatch(/401/);
    expect(estate.peers.find((p) => p.name === 'good')).toMatchObject({ reachable: true, last_error: null });
    const text = JSON.stringify(estate);
    expect(text).not.toContain('wrong-token-secret-value');

    writePeers(a.dirs.palace, [
      { name: 'guarded', url: guarded.hub.url, token: 'right-token-0123456789' },
      { name: 'good', url: good.hub.url },
    ]);
    await waitUntil(
      () => a.hub.services.logstream.store.countEvents() === 5,
      'the guarded events after the token fix',
    );
    await waitUntil(
      () => estateOf(a.hub).peers.find((p) => p.name === 'guarded')?.last_error === null,
      'the error to clear',
    );
    expect(JSON.stringify(estateOf(a.hub))).not.toContain('right-token-0123456789');
  });

  it('refuses a tampered artifact by its sha256 and applies nothing of the page that references it', async () => {
    // The honest data comes from a real log; the fake peer serves it but changes the artifact's content.
    const source = makeHubDirs('palace-sync-src-');
    cleanups.push(() => source.cleanup());
    const origin = Logstream.open(source.palace);
    cleanups.push(() => origin.close());
    const before = origin.appendNow({
      type: 'status',
      stream: 'project/x',
      room: 'status',
      from_agent: 'evil-claude',
      body: 'before',
    });
    const { artifact, event } = origin.submitPatch({
      stream: 'project/x',
      from_agent: 'evil-claude',
      to_agent: 'a-codex',
      content: 'good patch\n',
    });
    const after = origin.appendNow({
      type: 'status',
      stream: 'project/x',
      room: 'status',
      from_agent: 'evil-claude',
      body: 'after',
    });
    let tamper = true;
    const peer = await fakePeer((_req, res, url) => {
      const replica = origin.store.replica;
      if (url.pathname === '/sync/version_vector')
        return json(res, 200, versionVectorMessage(replica, 'evil'));
      if (url.pathname === '/sync/ops')
        return json(res, 200, opsMessage(replica, Object.fromEntries(url.searchParams)));
      if (url.pathname === '/sync/artifact') {
        const message = artifactMessage(replica, url.searchParams.get('id'));
        if (tamper) message.artifact.content = 'rm -rf / # tampered\n';
        return json(res, 200, message);
      }
      if (url.pathname === '/sync/artifacts')
        return json(res, 200, artifactsMessage(replica, Object.fromEntries(url.searchParams)));
      json(res, 404, { error: { code: 'http.not_found', message: 'no' } });
    });
    const a = await hubWith({ env: { PALACE_SYNC_INTERVAL: '0' } });
    writePeers(a.dirs.palace, [{ name: 'evil', url: peer.url }]);
    const sync = a.hub.services.sync;
    if (!sync) throw new Error('no sync');

    const round = await sync.runRound();
    // A page is verified and applied all or nothing: the event before the tampered one is not kept either.
    expect(round.results[0]).toMatchObject({ ok: false, pulled_events: 0, pulled_artifacts: 0 });
    expect(round.results[0]?.error?.code).toBe('sync.hash_mismatch');
    expect(round.results[0]?.error?.message).toMatch(/failed hash verification/);
    const log = a.hub.services.logstream;
    expect(log.store.getEvent(before.id)).toBeUndefined();
    expect(log.store.getEvent(event.id)).toBeUndefined();
    expect(log.store.getEvent(after.id)).toBeUndefined(); // never skipped past: the origin stops there
    expect(log.store.getArtifact(artifact.id)).toBeUndefined();
    expect(estateOf(a.hub).peers[0]).toMatchObject({
      last_error_code: 'sync.hash_mismatch',
      reachable: true,
    });

    // The next round retries from the same point: nothing is lost once the peer serves honest bytes.
    tamper = false;
    const healed = await sync.runRound();
    expect(healed.results[0]).toMatchObject({ ok: true, pulled_events: 3, pulled_artifacts: 1 });
    expect(log.getArtifact(artifact.id).content).toBe('good patch\n');
    expect(eventIds(log)).toEqual([before.id, event.id, after.id].sort());
  });

  it('never lets a hanging peer stall the others, and closes cleanly while a request hangs', async () => {
    const hanging: ServerResponse[] = [];
    const stuck = await fakePeer((_req, res) => {
      hanging.push(res); // never answers
    });
    const good = await hubWith();
    const a = await hubWith();
    writePeers(a.dirs.palace, [
      { name: 'stuck', url: stuck.url },
      { name: 'good', url: good.hub.url },
    ]);
    await appendMany(good.hub.services.logstream, 2, 'good-claude');
    await waitUntil(
      () => a.hub.services.logstream.store.countEvents() === 2,
      'the first events despite the stuck peer',
    );
    await appendMany(good.hub.services.logstream, 3, 'good-claude');
    await waitUntil(
      () => a.hub.services.logstream.store.countEvents() === 5,
      'later rounds with the good peer',
    );
    const estate = estateOf(a.hub);
    expect(estate.peers.find((p) => p.name === 'stuck')).toMatchObject({ in_flight: true, reachable: null });
    expect(hanging.length).toBe(1); // one request outstanding, not one per tick
    await a.hub.close(); // must not wait for the hanging request's timeout
  });

  it('picks up peers.json edits without a restart and reports a malformed file once per change', async () => {
    const lines: string[] = [];
    const a = await hubWith({ logLines: lines });
    const b = await hubWith();
    const c = await hubWith();
    await appendMany(b.hub.services.logstream, 2, 'b-claude');
    await appendMany(c.hub.services.logstream, 2, 'c-claude');
    expect(estateOf(a.hub).peers).toEqual([]);

    writePeers(a.dirs.palace, [{ name: 'b', url: b.hub.url }]);
    await waitUntil(() => a.hub.services.logstream.store.countEvents() === 2, 'B to join the mesh');

    const file = join(a.dirs.palace, 'peers.json');
    const writeRaw = (text: string): void => {
      writeFileSync(`${file}.tmp`, text);
      renameSync(`${file}.tmp`, file); // atomic, so no tick reads a half-written file
    };
    writeRaw('{"peers": [ {"url": ');
    await waitUntil(() => estateOf(a.hub).peers_file.error ?? undefined, 'the malformed file to be reported');
    expect(estateOf(a.hub).peers_file.error).toMatch(/peers\.json is malformed/);
    await sleep(1_000); // several ticks re-read the same broken file
    const malformed = () => lines.filter((l) => l.includes('malformed')).length;
    expect(malformed()).toBe(1);
    writeRaw('{"peers": {"url": "x"}}');
    await waitUntil(() => malformed() === 2, 'a different problem to be reported once more');
    expect(estateOf(a.hub).peers_file.error).toMatch(/"peers" must be a list/);
    expect((await fetch(`${a.hub.url}/healthz`)).status).toBe(200);

    writePeers(a.dirs.palace, [{ name: 'c', url: c.hub.url }]);
    await waitUntil(() => a.hub.services.logstream.store.countEvents() === 4, 'C to join after the fix');
    expect(estateOf(a.hub).peers.map((p) => p.name)).toEqual(['c']);
    expect(estateOf(a.hub).peers_file.error).toBeNull();
    expect(lines.join('\n')).toContain('valid again');
  });

  it('negotiates the protocol version: a newer puller gets 409, a peer speaking another version is reported', async () => {
    const a = await hubWith({ env: { PALACE_SYNC_INTERVAL: '0' } });
    const res = await rawRequest(a.hub.url, {
      path: '/sync/version_vector',
      headers: { 'Palace-Sync-Protocol': '99' },
    });
    expect(res.status).toBe(409);
    expect(JSON.parse(res.body).error).toMatchObject({
      code: 'sync.version_mismatch',
      data: { supported: [PROTOCOL_VERSION] },
    });

    // A newer hub, and a hub of protocol 1 (before signed sync), are both reported as version mismatches.
    for (const protocol of [PROTOCOL_VERSION + 1, 1]) {
      const other = await fakePeer((_req, res2) =>
        json(res2, 200, {
          type: 'version_vector',
          protocol,
          replica_id: 'rep_00000000000f',
          name: 'other',
          version_vector: {},
        }),
      );
      writePeers(a.dirs.palace, [{ name: `v${protocol}`, url: other.url }]);
      const round = await a.hub.services.sync?.runRound();
      expect(round?.results[0]?.error?.code).toBe('sync.version_mismatch');
      expect(round?.results[0]?.error?.message).toContain(`sync protocol ${protocol} is not supported`);
    }
  });

  it('serves /sync/* behind the bearer token, validates parameters, gzips when asked, and matches palace_mesh_peers', async () => {
    const token = 'hub-token-abcdef0123456789';
    const a = await hubWith({ token, env: { PALACE_SYNC_INTERVAL: '0' } });
    const auth = { Authorization: `Bearer ${token}` };
    await appendMany(a.hub.services.logstream, 30, 'a-claude');
    const self = a.hub.services.logstream.replicaId;

    for (const path of [
      '/sync/version_vector',
      `/sync/ops?origin=${self}`,
      '/sync/artifact?id=art_x',
      '/sync/peers',
    ])
      expect((await rawRequest(a.hub.url, { path })).status).toBe(401);
    expect((await rawRequest(a.hub.url, { path: '/sync/round', method: 'POST' })).status).toBe(401);

    const vv = await rawRequest(a.hub.url, { path: '/sync/version_vector', headers: auth });
    expect(JSON.parse(vv.body)).toMatchObject({
      type: 'version_vector',
      protocol: PROTOCOL_VERSION,
      replica_id: self,
      version_vector: { [self]: 30 },
    });

    const bad = await rawRequest(a.hub.url, { path: '/sync/ops?origin=nope', headers: auth });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).error).toMatchObject({ code: 'input.invalid', field: 'origin' });
    expect(
      (await rawRequest(a.hub.url, { path: `/sync/ops?origin=${self}&after=-1`, headers: auth })).status,
    ).toBe(400);
    const missing = await rawRequest(a.hub.url, {
      path: '/sync/artifact?id=art_20260101T000000_000000000000',
      headers: auth,
    });
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.body).error.code).toBe('artifact.not_found');

    const page = await rawRequest(a.hub.url, {
      path: `/sync/ops?origin=${self}&after=10&limit=5`,
      headers: auth,
    });
    const ops = JSON.parse(page.body);
    expect(ops).toMatchObject({ type: 'ops', origin: self, after: 10, count: 5, has_more: true });
    expect(ops.events.map((e: { origin_seq: number }) => e.origin_seq)).toEqual([11, 12, 13, 14, 15]);
    expect(ops.events[0]).not.toHaveProperty('seq');

    const zipped = await rawRequest(a.hub.url, {
      path: `/sync/ops?origin=${self}`,
      headers: { ...auth, 'Accept-Encoding': 'gzip' },
    });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    const plain = await rawRequest(a.hub.url, { path: `/sync/ops?origin=${self}`, headers: auth });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(Number(zipped.headers['content-length'])).toBeLessThan(Number(plain.headers['content-length']));

    const notAllowed = await rawRequest(a.hub.url, {
      path: '/sync/version_vector',
      method: 'POST',
      headers: auth,
    });
    expect(notAllowed.status).toBe(405);
    expect(notAllowed.headers.allow).toContain('GET');

    const client = await connectHttpClient(a.hub.url, { token });
    try {
      const viaTool = await callJson<MeshMessage>(client, 'palace_mesh_peers');
      const viaHttp = JSON.parse(
        (await rawRequest(a.hub.url, { path: '/sync/peers', headers: auth })).body,
      ) as MeshMessage;
      expect({ ...viaTool, generated_at: '' }).toEqual({ ...viaHttp, generated_at: '' });
      expect(viaTool).toMatchObject({
        type: 'mesh',
        estate_source: 'hub',
        sync_enabled: false,
        sync_interval_s: 0,
        peers: [],
      });
    } finally {
      await client.close();
    }
  });

  it('a read-only hub serves sync but refuses to pull', async () => {
    const writer = await hubWith({ env: { PALACE_SYNC_INTERVAL: '0' } });
    await appendMany(writer.hub.services.logstream, 2, 'w-claude');
    const dirs = makeHubDirs('palace-sync-ro-');
    cleanups.push(() => dirs.cleanup());
    const seeded = Logstream.open(dirs.palace);
    seeded.appendNow({ type: 'status', stream: 'p', room: 'r', from_agent: 'ro-claude' });
    seeded.close();
    const ro = await startTestHub(dirs, { readOnly: true, env: FAST });
    cleanups.push(() => ro.close());
    writePeers(dirs.palace, [{ name: 'w', url: writer.hub.url }]);
    const refused = await rawRequest(ro.url, {
      path: '/sync/round',
      method: 'POST',
      body: '{}',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body).error.code).toBe('hub.read_only');
    expect(ro.services.sync?.estate().sync_enabled).toBe(false);
    // The writer can still pull from the read-only hub.
    writePeers(writer.dirs.palace, [{ name: 'ro', url: ro.url }]);
    const round = await writer.hub.services.sync?.runRound();
    expect(round?.results[0]).toMatchObject({ ok: true, pulled_events: 1 });
  });
});
