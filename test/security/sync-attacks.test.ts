// Adversarial peer sync (issue 16): a real victim hub pulls from a fake peer "mallory" (a node:http
// server in the test, its key pinned by the victim) that relays the honest origin B's pages with one
// change each: a forged origin, a wrong key, no signature, a gap, a jump, a far-future clock, a
// tampered body or artifact, a replayed page. Each is refused with a clear reason recorded in the
// mesh estate, and the victim's log, vectors and clock stay as they were; the honest relay works.

import { generateKeyPairSync, sign } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { parseHlc } from '../../hub/src/core/hlc.js';
import type { Logstream } from '../../hub/src/logstream/logstream.js';
import type { Hub } from '../../hub/src/server.js';
import { artifactMessage, artifactsMessage, opsMessage, versionVectorMessage } from '../../hub/src/sync/serve.js';
import { makeHubDirs, startTestHub, type HubDirs } from '../helpers/hub.js';
import { appendMany, eventIds, writePeers } from '../helpers/sync.js';

type Json = Record<string, unknown>;
type Page = Json & { events: Array<Json & { origin_seq: number }>; checkpoint?: Json | null; after: number };

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function hubAt(): Promise<{ hub: Hub; dirs: HubDirs }> {
  const dirs = makeHubDirs('palace-attack-');
  cleanups.push(() => dirs.cleanup());
  const hub = await startTestHub(dirs, { env: { PALACE_SYNC_INTERVAL: '0' } });
  cleanups.push(() => hub.close());
  return { hub, dirs };
}

async function fakePeer(handler: (res: ServerResponse, url: URL, req: IncomingMessage) => void): Promise<string> {
  const server: Server = createServer((req, res) => handler(res, new URL(req.url ?? '/', 'http://x'), req));
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

function json(res: ServerResponse, value: unknown, status = 200): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(value));
}

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/** Signs a checkpoint body the way an origin does, with any key (the attacker's own, here). */
function signCheckpoint(cp: Json, privateKey: ReturnType<typeof generateKeyPairSync>['privateKey']): string {
  const bytes = Buffer.from(`palace-checkpoint-v1\n${String(cp.origin)}\n${String(cp.seq)}\n${String(cp.pos)}\n${String(cp.chain)}`);
  return sign(null, bytes, privateKey).toString('base64url');
}

interface World {
  victim: Hub;
  victimDirs: HubDirs;
  b: Hub;
  bLog: Logstream;
  mallory: Logstream;
  /** How mallory changes the honest pages, vector and artifacts (reset per test). */
  tamper: {
    page?: (page: Page) => Page;
    vector?: (v: Record<string, number>) => Record<string, number>;
    artifact?: (m: Json & { artifact: Json }) => Json;
  };
  url: string;
}

let w: World;

beforeEach(async () => {
  const victim = await hubAt();
  const b = await hubAt();
  const m = await hubAt(); // mallory's identity and key (a real log), served by the fake peer below
  const bLog = b.hub.services.logstream;
  // B writes 3 events the victim gets honestly, then 3 (one with a patch) that mallory relays.
  await appendMany(bLog, 3, 'b-claude');
  writePeers(victim.dirs.palace, [{ name: 'b', url: b.hub.url, public_key: bLog.store.publicKey }]);
  const first = await victim.hub.services.sync?.runRound();
  expect(first?.results[0]?.ok).toBe(true);
  await appendMany(bLog, 1, 'b-claude');
  bLog.submitPatch({ stream: 'project/sync', from_agent: 'b-claude', to_agent: 'a', content: 'diff --git a/x b/x\n+honest\n' });
  await appendMany(bLog, 1, 'b-claude');

  const tamper: World['tamper'] = {};
  const url = await fakePeer((res, u) => {
    const replica = bLog.store.replica;
    if (u.pathname === '/sync/version_vector') {
      const own = versionVectorMessage(m.hub.services.logstream.store.replica, 'mallory');
      const vector = { ...own.version_vector, ...versionVectorMessage(replica, 'b').version_vector };
      return json(res, { ...own, version_vector: tamper.vector ? tamper.vector(vector) : vector });
    }
    if (u.pathname === '/sync/ops') {
      const page = opsMessage(replica, Object.fromEntries(u.searchParams)) as unknown as Page;
      return json(res, tamper.page ? tamper.page(clone(page)) : page);
    }
    if (u.pathname === '/sync/artifact') {
      try {
        const message = artifactMessage(replica, u.searchParams.get('id')) as unknown as Json & { artifact: Json };
        return json(res, tamper.artifact ? tamper.artifact(clone(message)) : message);
      } catch {
        return json(res, { error: { code: 'artifact.not_found', message: 'no such artifact' } }, 404);
      }
    }
    if (u.pathname === '/sync/artifacts') return json(res, artifactsMessage(replica, Object.fromEntries(u.searchParams)));
    json(res, { error: { code: 'http.not_found', message: 'no' } }, 404);
  });
  writePeers(victim.dirs.palace, [{ name: 'mallory', url, public_key: m.hub.services.logstream.store.publicKey }]);
  w = { victim: victim.hub, victimDirs: victim.dirs, b: b.hub, bLog, mallory: m.hub.services.logstream, tamper, url };
});

/** What must not change when a page is refused. */
function snapshot(): { ids: string[]; vector: Record<string, number>; verified: Record<string, number> } {
  const log = w.victim.services.logstream;
  return { ids: eventIds(log), vector: log.store.replica.versionVector(), verified: log.store.replica.verifiedVector() };
}

/** Runs one round against mallory and checks the refusal: code, reason, estate, nothing changed, clock sane. */
async function expectRefused(code: string, reason: RegExp): Promise<void> {
  const before = snapshot();
  const round = await w.victim.services.sync?.runRound();
  const result = round?.results[0];
  expect(result?.ok).toBe(false);
  expect(result?.pulled_events).toBe(0);
  expect(result?.error?.code).toBe(code);
  expect(result?.error?.message).toMatch(reason);
  expect(snapshot()).toEqual(before);
  const peer = w.victim.services.sync?.estate().peers.find((p) => p.name === 'mallory');
  expect(peer?.rejected_pages.some((r) => r.code === code && reason.test(r.reason))).toBe(true);
  expect(peer?.last_error_code).toBe(code);
  // The victim's clock did not move: its next own stamp is close to the wall clock.
  const next = w.victim.services.logstream.appendNow({ type: 'status', stream: 's', room: 'r', from_agent: 'victim', body: 'after' });
  expect((parseHlc(next.hlc)?.ms ?? Infinity) - Date.now()).toBeLessThan(60_000);
}

const bOrigin = (): string => w.bLog.replicaId;

describe('sync against a hostile peer', () => {
  it('relays B honestly through pinned mallory (the baseline every attack changes one thing of)', async () => {
    const round = await w.victim.services.sync?.runRound();
    expect(round?.results[0]).toMatchObject({ ok: true, pulled_events: 3, pulled_artifacts: 1 });
    expect(eventIds(w.victim.services.logstream)).toEqual(eventIds(w.bLog));
  });

  it('refuses a forged origin: events claiming B, signed by a key that is not B\'s', async () => {
    const { privateKey } = generateKeyPairSync('ed25519');
    w.tamper.page = (page) => {
      if (page.checkpoint) page.checkpoint.sig = signCheckpoint(page.checkpoint, privateKey);
      return page;
    };
    await expectRefused('sync.bad_signature', /not signed by rep_[0-9a-f]{12}'s key/);
  });

  it('refuses events of mallory\'s own replica relabelled as B (forged origin_replica)', async () => {
    const own = await appendMany(w.mallory, 3, 'mallory');
    w.tamper.page = (page) => {
      page.events = page.events.map((e, i) => ({
        ...e,
        id: own[i]?.id ?? e.id,
        body: own[i]?.body ?? e.body,
      }));
      return page;
    };
    await expectRefused('sync.bad_signature', /do not hash to the origin's checkpoint/);
  });

  it('refuses an origin nobody vouches for, and keeps pulling the others', async () => {
    const stranger = await hubAt();
    await appendMany(stranger.hub.services.logstream, 2, 'stranger');
    const sLog = stranger.hub.services.logstream;
    w.tamper.vector = (v) => ({ ...v, [sLog.replicaId]: 2 });
    // Mallory serves the stranger's (validly self-signed) events but the victim knows no key for it.
    w.tamper.page = (page) => (page.origin === sLog.replicaId ? (opsMessage(sLog.store.replica, { origin: sLog.replicaId }) as unknown as Page) : page);
    const round = await w.victim.services.sync?.runRound();
    const refused = round?.results[0];
    expect(refused?.ok).toBe(false);
    expect(JSON.stringify(refused)).toMatch(/unknown origin key/);
    expect(w.victim.services.logstream.store.replica.versionVector()[sLog.replicaId]).toBeUndefined();
    // B's own pages still came through: one refused origin does not block the others.
    expect(refused?.per_origin[bOrigin()]).toBe(3);
    const peer = w.victim.services.sync?.estate().peers.find((p) => p.name === 'mallory');
    expect(peer?.rejected_pages.some((r) => r.origin === sLog.replicaId && r.code === 'sync.untrusted')).toBe(true);
  });

  it('refuses a peer whose key is not the one pinned for it', async () => {
    writePeers(w.victimDirs.palace, [{ name: 'mallory', url: w.url, public_key: w.bLog.store.publicKey }]);
    await expectRefused('sync.untrusted', /presented key SHA256:.* but peers.json pins/);
  });

  it('refuses an unsigned page', async () => {
    w.tamper.page = (page) => ({ ...page, checkpoint: null });
    await expectRefused('sync.bad_signature', /without a signed checkpoint/);
  });

  it('refuses a gap: an event left out of the page', async () => {
    w.tamper.page = (page) => ({ ...page, events: page.events.filter((_, i) => i !== 0) });
    await expectRefused('sync.bad_message', /a gap: the origin signed 3 event\(s\) after origin_seq \d+, the page holds 2/);
  });

  it('refuses a jump in origin_seq (the blackhole: 2^53-1)', async () => {
    w.tamper.vector = (v) => ({ ...v, [bOrigin()]: Number.MAX_SAFE_INTEGER });
    w.tamper.page = (page) => {
      const last = page.events.at(-1);
      if (last) last.origin_seq = Number.MAX_SAFE_INTEGER;
      return page;
    };
    await expectRefused('sync.bad_message', /jumps to origin_seq 9007199254740991, past the signed checkpoint/);
    expect(w.victim.services.logstream.store.replica.verifiedVector()[bOrigin()]).toBe(3);
  });

  it('refuses a stamp far in the future, and the victim clock never follows it', async () => {
    w.tamper.page = (page) => {
      const first = page.events[0];
      if (first) first.hlc = `9999999999999-ffffff-${bOrigin()}`;
      return page;
    };
    await expectRefused('sync.clock_skew', /ahead of this hub's clock \(the bound is 300 s/);
  });

  it('refuses a tampered body', async () => {
    w.tamper.page = (page) => {
      const first = page.events[0];
      if (first) first.body = 'rm -rf / # tampered';
      return page;
    };
    await expectRefused('sync.bad_signature', /do not hash to the origin's checkpoint/);
  });

  it('refuses a tampered artifact, even with its sha256 recomputed', async () => {
    const { createHash } = await import('node:crypto');
    w.tamper.artifact = (m) => {
      const content = 'rm -rf / # tampered\n';
      return { ...m, artifact: { ...m.artifact, content, sha256: createHash('sha256').update(content).digest('hex') } };
    };
    await expectRefused('sync.bad_signature', /do not hash to the origin's checkpoint/);
  });

  it('refuses a replayed page (an old page served for a later cursor)', async () => {
    const old = opsMessage(w.bLog.store.replica, { origin: bOrigin(), after: 0 }) as unknown as Page;
    w.tamper.page = () => clone(old);
    await expectRefused('sync.bad_message', /asked for events after 3, the peer served a page after 0/);
    // The same page relabelled with the asked-for cursor still cannot pass.
    w.tamper.page = (page) => ({ ...clone(old), after: page.after });
    await expectRefused('sync.bad_message', /has origin_seq 1, not after 3/);
  });
});
