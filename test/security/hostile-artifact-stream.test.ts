// Issue 29: artifact bodies pulled by sync stream straight to disk, their sha256 computed on the way.
// A real victim hub (port 0) against a fake peer (node:http) whose artifact body stalls mid-way or
// whose content passes the local 4 MiB limit: each is cut off while streaming with a reason naming
// it, nothing is stored. Plus the streaming parser itself: escapes, multi-byte characters and
// surrogate pairs split across chunks, a lone surrogate, a content past the limit (the source is
// cancelled, not drained), and an honest artifact that arrives intact through a real round.

import { createHash, randomBytes, sign } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { fakeIdentity, type FakeIdentity } from '../../bench/fake-origin.js';
import { canonicalEvent, checkpointBytes } from '../../hub/src/core/chain.js';
import { formatHlc } from '../../hub/src/core/hlc.js';
import { isoSeconds, makeId } from '../../hub/src/core/ids.js';
import { remoteEventRecord, type ReplicatedEvent } from '../../hub/src/core/replication.js';
import { GENESIS_CHAIN, nextChain } from '../../hub/src/logstream/signatures.js';
import type { Hub } from '../../hub/src/server.js';
import { readArtifactStream } from '../../hub/src/sync/artifact-stream.js';
import { makeHubDirs, startTestHub, type HubDirs } from '../helpers/hub.js';
import { eventIds, writePeers } from '../helpers/sync.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const MiB = 1024 * 1024;

async function victimHub(env: Record<string, string> = {}): Promise<{ hub: Hub; dirs: HubDirs }> {
  const dirs = makeHubDirs('palace-artstream-');
  cleanups.push(() => dirs.cleanup());
  const hub = await startTestHub(dirs, { env: { PALACE_SYNC_INTERVAL: '0', ...env } });
  cleanups.push(() => hub.close());
  return { hub, dirs };
}

/** One event of `who` naming artifact `artId` (whose content hashes to `sha`), validly chained and signed. */
function pageWithArtifact(who: FakeIdentity, artId: string, sha: string): Record<string, unknown> {
  const now = Date.now();
  const event: ReplicatedEvent = {
    id: makeId('evt', new Date(now), randomBytes(6).toString('hex')),
    type: 'status',
    stream: 'project/x',
    room: 'status',
    from_agent: 'origin-agent',
    to_agent: null,
    correlation_id: null,
    branch: null,
    base_commit: null,
    status: null,
    artifact_ids: [artId],
    body: 'see the artifact',
    metadata: {},
    created_at: isoSeconds(new Date(now)),
    origin_replica: who.replica,
    origin_seq: 1,
    hlc: formatHlc({ ms: now, counter: 0 }, who.replica),
  };
  const chain = nextChain(GENESIS_CHAIN, canonicalEvent(remoteEventRecord(event), [sha])).toString('hex');
  const cp = { origin: who.replica, seq: 1, pos: 1, chain };
  const checkpoint = { ...cp, sig: sign(null, checkpointBytes(cp), who.privateKey).toString('base64url') };
  return { type: 'ops', protocol: 2, origin: who.replica, after: 0, events: [event], count: 1, has_more: false, checkpoint };
}

function json(res: ServerResponse, value: unknown): void {
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(value));
}

/**
 * A fake origin whose one event names one artifact; `body` writes that artifact's response.
 * Returns the peer's URL.
 */
async function artifactPeer(who: FakeIdentity, artId: string, sha: string, body: (res: ServerResponse) => void): Promise<string> {
  const server: Server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    res.on('error', () => undefined);
    if (u.pathname === '/sync/version_vector')
      return json(res, { type: 'version_vector', protocol: 2, replica_id: who.replica, name: 'o', version_vector: { [who.replica]: 1 }, public_key: who.publicKey, keys: [] });
    if (u.pathname === '/sync/ops') return json(res, pageWithArtifact(who, artId, sha));
    if (u.pathname === '/sync/artifact') return body(res);
    json(res, { type: 'artifacts', protocol: 2, after: 0, next: 0, items: [], has_more: false });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function artifactHead(who: FakeIdentity, artId: string, sha: string, size: number): string {
  return `{"type":"artifact","protocol":2,"signature":null,"artifact":{"id":"${artId}","kind":"file","created_by":"origin-agent","sha256":"${sha}","size_bytes":${size},"created_at":"${isoSeconds(new Date())}","origin_replica":"${who.replica}","metadata":{},"content":"`;
}

describe('artifact bodies pulled by sync stream to disk', () => {
  it('cuts off a body that stalls mid-way, naming it', { timeout: 60_000 }, async () => {
    const { hub, dirs } = await victimHub({ PALACE_SYNC_STALL_MS: '500' });
    const who = fakeIdentity();
    const artId = makeId('art', new Date(), randomBytes(6).toString('hex'));
    const url = await artifactPeer(who, artId, '0'.repeat(64), (res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write(artifactHead(who, artId, '0'.repeat(64), MiB));
      res.write('A'.repeat(64 * 1024)); // then nothing, the connection held open
    });
    writePeers(dirs.palace, [{ name: 'slow', url }]);
    const before = eventIds(hub.services.logstream);
    const result = (await hub.services.sync?.runRound())?.results[0];
    expect(result?.ok).toBe(false);
    expect(result?.error?.code).toBe('sync.bad_message');
    expect(result?.error?.message).toMatch(/the body stalled \(no bytes for 0\.5 s after \d+ bytes\); cut off/);
    expect(eventIds(hub.services.logstream)).toEqual(before);
    expect(hub.services.logstream.store.replica.hasArtifact(artId)).toBe(false);
  });

  it('cuts off a content past the 4 MiB limit while it streams, naming it', { timeout: 60_000 }, async () => {
    const { hub, dirs } = await victimHub();
    const who = fakeIdentity();
    const artId = makeId('art', new Date(), randomBytes(6).toString('hex'));
    const url = await artifactPeer(who, artId, '0'.repeat(64), (res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write(artifactHead(who, artId, '0'.repeat(64), 6 * MiB));
      let sent = 0;
      const pump = (): void => {
        while (sent < 6 * 16) {
          sent++;
          if (!res.write('B'.repeat(64 * 1024))) return void res.once('drain', pump);
        }
        res.end('"}}');
      };
      pump();
    });
    writePeers(dirs.palace, [{ name: 'big', url }]);
    const result = (await hub.services.sync?.runRound())?.results[0];
    expect(result?.ok).toBe(false);
    expect(result?.error?.message).toMatch(/content passes 4194304 bytes \(the local artifact limit\); cut off while streaming/);
    expect(hub.services.logstream.store.replica.hasArtifact(artId)).toBe(false);
  });

  it('an honest 3 MiB artifact arrives intact, hashed on the way', { timeout: 60_000 }, async () => {
    const { hub, dirs } = await victimHub();
    const who = fakeIdentity();
    const artId = makeId('art', new Date(), randomBytes(6).toString('hex'));
    const content = 'line é 😀 "quoted" \\ back\n'.repeat(100_000);
    const sha = createHash('sha256').update(content, 'utf8').digest('hex');
    const message = JSON.stringify({
      type: 'artifact',
      protocol: 2,
      signature: null,
      artifact: { id: artId, kind: 'file', created_by: 'origin-agent', sha256: sha, size_bytes: Buffer.byteLength(content), created_at: isoSeconds(new Date()), origin_replica: who.replica, metadata: { a: [1, 2, { b: null }] }, content },
    });
    const url = await artifactPeer(who, artId, sha, (res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(message);
    });
    writePeers(dirs.palace, [{ name: 'honest', url }]);
    const result = (await hub.services.sync?.runRound())?.results[0];
    expect(result, JSON.stringify(result)).toMatchObject({ ok: true, pulled_events: 1, pulled_artifacts: 1 });
    expect(hub.services.logstream.store.getArtifact(artId)?.content).toBe(content);
  });
});

describe('readArtifactStream', () => {
  const dir = (): string => {
    const d = mkdtempSync(join(tmpdir(), 'palace-artstream-unit-'));
    cleanups.push(() => rmSync(d, { recursive: true, force: true }));
    return d;
  };
  /** A stream of `parts` (each its own chunk); counts how many were pulled. */
  function source(parts: Uint8Array[]): { reader: ReadableStreamDefaultReader<Uint8Array>; pulled: () => number; cancelled: () => boolean } {
    let i = 0;
    let cancelled = false;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = parts[i++];
        if (next) controller.enqueue(next);
        else controller.close();
      },
      cancel() {
        cancelled = true;
      },
    }, { highWaterMark: 0 });
    return { reader: stream.getReader(), pulled: () => i, cancelled: () => cancelled };
  }
  const bytes = (s: string): Uint8Array => Buffer.from(s, 'utf8');

  it('decodes escapes, multi-byte characters and surrogate pairs split across chunks', async () => {
    const content = 'a\n"é"\t😀\\/\u0001z';
    const text = JSON.stringify({ type: 'artifact', artifact: { id: 'x', content, metadata: { k: [true, false, null, -1.5e3] } }, signature: null });
    // Split every byte into its own chunk: every boundary is exercised.
    const raw = Buffer.from(text, 'utf8');
    const parts = Array.from(raw, (b) => Uint8Array.of(b));
    const path = join(dir(), 'c');
    const out = await readArtifactStream(source(parts).reader, { path, what: 't', maxResponseBytes: 1 * MiB, stallMs: 5_000 });
    expect(readFileSync(path, 'utf8')).toBe(content);
    expect(out.sha256).toBe(createHash('sha256').update(content, 'utf8').digest('hex'));
    expect(out.bytes).toBe(Buffer.byteLength(content));
    expect(JSON.parse(JSON.stringify(out.message))).toEqual(JSON.parse(text.replace(JSON.stringify(content), '""')));
    // The \u escaped form of a surrogate pair, split inside the escape.
    const escaped = '{"artifact":{"content":"x\\ud83d\\ude00y"}}';
    const p2 = join(dir(), 'd');
    await readArtifactStream(source([bytes(escaped.slice(0, 29)), bytes(escaped.slice(29))]).reader, { path: p2, what: 't', maxResponseBytes: MiB, stallMs: 5_000 });
    expect(readFileSync(p2, 'utf8')).toBe('x😀y');
  });

  it('refuses a lone surrogate, a NUL, invalid UTF-8 and malformed JSON', async () => {
    const cases: Array<[string | Uint8Array, RegExp]> = [
      ['{"artifact":{"content":"a\\ud83dz"}}', /lone surrogate/],
      ['{"artifact":{"content":"a\\u0000"}}', /NUL/],
      [Uint8Array.from([...bytes('{"artifact":{"content":"'), 0xc3, 0x28, ...bytes('"}}')]), /not valid UTF-8/],
      ['{"artifact":{"content":"a"}', /ended mid-message/],
      ['{"artifact":{"content":"a"}}}', /data after the JSON value|malformed/],
      ['{"artifact":{"content":"a","content":"b"}}', /names its content twice/],
    ];
    for (const [input, reason] of cases) {
      const chunk = typeof input === 'string' ? bytes(input) : input;
      await expect(
        readArtifactStream(source([chunk]).reader, { path: join(dir(), 'x'), what: 't', maxResponseBytes: MiB, stallMs: 5_000 }),
      ).rejects.toThrow(reason);
    }
  });

  it('stops reading at the content limit: the rest of the body is never pulled', async () => {
    const parts = [bytes('{"artifact":{"content":"'), ...Array.from({ length: 100 }, () => bytes('C'.repeat(64 * 1024))), bytes('"}}')];
    const src = source(parts);
    await expect(
      readArtifactStream(src.reader, { path: join(dir(), 'big'), what: 't', maxResponseBytes: 64 * MiB, maxContentBytes: MiB, stallMs: 5_000 }),
    ).rejects.toThrow(/content passes 1048576 bytes/);
    expect(src.pulled()).toBeLessThan(20); // 1 MiB is 16 chunks of 64 KiB
  });
});
