// A fake origin for sync attacks (issue 29), shared by the attack tests and the hostile soak: an
// Ed25519 identity that writes its own well-formed events with a valid hash chain and signs their
// checkpoints exactly as a hub does, and a node:http peer serving such a log (protocol 2). With it an
// attacker can claim any replica id (an impostor) or sign two different chains (an equivocator).

import { generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { canonicalEvent, checkpointBytes, type Checkpoint } from '../hub/src/core/chain.js';
import { formatHlc } from '../hub/src/core/hlc.js';
import { isoSeconds, makeId } from '../hub/src/core/ids.js';
import { remoteEventRecord, type ReplicatedEvent } from '../hub/src/core/replication.js';
import { GENESIS_CHAIN, nextChain, rawPublicKey } from '../hub/src/logstream/signatures.js';

export interface FakeIdentity {
  replica: string;
  /** Raw Ed25519 public key, base64url. */
  publicKey: string;
  privateKey: KeyObject;
}

export function fakeIdentity(replica = `rep_${randomBytes(6).toString('hex')}`): FakeIdentity {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return { replica, publicKey: rawPublicKey(publicKey), privateKey };
}

/** A log of `who`'s events (no artifacts), chained, with the checkpoint after each event signed. */
export interface FakeLog {
  events: ReplicatedEvent[];
  checkpoints: Checkpoint[];
}

/**
 * `count` events of `who`, origin_seq 1..count. `ids` fixes the event ids (two chains with the same
 * ids and seqs differ only in their bodies, which `body` sets).
 */
export function fakeLog(
  who: FakeIdentity,
  count: number,
  body: (i: number) => string,
  ids?: readonly string[],
  now = Date.now(),
): FakeLog {
  let chain = GENESIS_CHAIN;
  const events: ReplicatedEvent[] = [];
  const checkpoints: Checkpoint[] = [];
  for (let i = 0; i < count; i++) {
    const event: ReplicatedEvent = {
      id: ids?.[i] ?? makeId('evt', new Date(now), randomBytes(6).toString('hex')),
      type: 'status',
      stream: 'project/x',
      room: 'status',
      from_agent: 'origin-agent',
      to_agent: null,
      correlation_id: null,
      branch: null,
      base_commit: null,
      status: null,
      artifact_ids: [],
      body: body(i),
      metadata: {},
      created_at: isoSeconds(new Date(now)),
      origin_replica: who.replica,
      origin_seq: i + 1,
      hlc: formatHlc({ ms: now, counter: i }, who.replica),
    };
    chain = nextChain(chain, canonicalEvent(remoteEventRecord(event), []));
    const cp = { origin: who.replica, seq: i + 1, pos: i + 1, chain: chain.toString('hex') };
    checkpoints.push({ ...cp, sig: sign(null, checkpointBytes(cp), who.privateKey).toString('base64url') });
    events.push(event);
  }
  return { events, checkpoints };
}

export interface FakeOriginPeer {
  url: string;
  /** Requests seen, by path. */
  hits: Record<string, number>;
  close(): Promise<void>;
}

function json(res: ServerResponse, value: unknown, status = 200): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(value));
}

/**
 * Serves `log` as `who` over the sync protocol (its version vector, its pages ending at its signed
 * checkpoints, an empty artifact listing). `logFor` may serve a different log per request (e.g. per
 * puller), chosen from the request's headers by the caller. `heads`: signed heads it shows in its
 * version vector (of other origins: a relay's statement about them).
 */
export async function serveFakeOrigin(
  who: FakeIdentity,
  logFor: (req: { headers: Record<string, unknown> }) => FakeLog,
  heads: readonly Checkpoint[] = [],
): Promise<FakeOriginPeer> {
  const hits: Record<string, number> = {};
  const server: Server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    hits[u.pathname] = (hits[u.pathname] ?? 0) + 1;
    res.on('error', () => undefined);
    const log = logFor({ headers: req.headers });
    if (u.pathname === '/sync/version_vector')
      return json(res, {
        type: 'version_vector',
        protocol: 2,
        replica_id: who.replica,
        name: 'fake-origin',
        version_vector: log.events.length > 0 ? { [who.replica]: log.events.length } : {},
        public_key: who.publicKey,
        keys: [],
        ...(heads.length > 0 ? { heads } : {}),
      });
    if (u.pathname === '/sync/ops') {
      const after = Number(u.searchParams.get('after') ?? '0');
      const events = log.events.slice(after);
      const checkpoint = log.checkpoints.at(-1) ?? null;
      return json(res, { type: 'ops', protocol: 2, origin: who.replica, after, events, count: events.length, has_more: false, checkpoint: events.length > 0 ? checkpoint : null });
    }
    if (u.pathname === '/sync/artifacts') return json(res, { type: 'artifacts', protocol: 2, after: 0, next: 0, items: [], has_more: false });
    json(res, { error: { code: 'artifact.not_found', message: 'no such thing here' } }, 404);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
