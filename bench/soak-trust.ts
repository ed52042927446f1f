// Issue 29 trust attacks for the hostile soak, one pass at a time against a running hub (fresh
// identities each pass): a trust-on-first-use impostor that takes a replica id, then the user pins the
// real origin (the round must pull the real events and say it quarantined the forgeries), and an
// origin that signs two chains, the second shown by a relay in its signed heads (the round must
// refuse it as equivocation). Fake peers are node:http servers with real keys (fake-origin.ts).

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { fakeIdentity, fakeLog, serveFakeOrigin, type FakeOriginPeer } from './fake-origin.js';

export interface TrustCounts {
  /** Late pins after which the round pulled the real events and reported the quarantine. */
  latePins: number;
  /** Equivocations the round refused with sync.equivocation. */
  equivocations: number;
}

interface PeerSpec {
  name: string;
  url: string;
  token?: string;
  public_key?: string;
  replica_id?: string;
}

interface RoundResult {
  peer_name: string;
  ok: boolean;
  pulled_events: number;
  notes: string[];
  error: { code: string; message: string } | null;
}

async function round(hubUrl: string, peerUrl: string): Promise<RoundResult | undefined> {
  const res = await fetch(`${hubUrl}/sync/round`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ peer: { url: peerUrl } }),
    signal: AbortSignal.timeout(120_000),
  });
  const body = (await res.json()) as { results?: RoundResult[] };
  return body.results?.[0];
}

/**
 * One pass of both attacks. `base` are the peers.json entries to keep (the other hostile peer);
 * `pass` numbers the fake peers. Returns what it saw; failures name what the hub did wrong.
 */
export async function trustAttackPass(
  hubUrl: string,
  palace: string,
  base: readonly PeerSpec[],
  pass: number,
  counts: TrustCounts,
  failures: string[],
): Promise<void> {
  const peersFile = join(palace, 'peers.json');
  const write = (extra: PeerSpec[]): void => writeFileSync(peersFile, JSON.stringify({ peers: [...base, ...extra] }), { mode: 0o600 });
  const servers: FakeOriginPeer[] = [];
  try {
    // Late pin.
    const real = fakeIdentity();
    const impostor = fakeIdentity(real.replica);
    const realLog = fakeLog(real, 3, (i) => `real ${pass}.${i}`);
    const forged = fakeLog(impostor, 3, (i) => `APPROVED BY USER ${pass}.${i}`);
    const realPeer = await serveFakeOrigin(real, () => realLog);
    const impPeer = await serveFakeOrigin(impostor, () => forged);
    servers.push(realPeer, impPeer);
    write([{ name: `impostor-${pass}`, url: impPeer.url }]);
    await round(hubUrl, impPeer.url);
    write([
      { name: `impostor-${pass}`, url: impPeer.url },
      { name: `real-${pass}`, url: realPeer.url, public_key: real.publicKey, replica_id: real.replica },
    ]);
    const pinned = await round(hubUrl, realPeer.url);
    if (pinned?.ok && pinned.pulled_events === 3 && pinned.notes.some((n) => n.startsWith('late pin:'))) counts.latePins++;
    else failures.push(`late pin pass ${pass}: ${JSON.stringify(pinned).slice(0, 300)}`);

    // Equivocation: the origin gives this hub chain one; a relay shows chain two's signed head.
    const origin = fakeIdentity();
    const at = Date.now();
    const one = fakeLog(origin, 3, (i) => `one ${pass}.${i}`, undefined, at);
    const two = fakeLog(origin, 3, (i) => `two ${pass}.${i}`, one.events.map((e) => e.id), at);
    const originPeer = await serveFakeOrigin(origin, () => one);
    const relay = fakeIdentity();
    const relayPeer = await serveFakeOrigin(relay, () => ({ events: [], checkpoints: [] }), [two.checkpoints[2]].filter((c) => c !== undefined));
    servers.push(originPeer, relayPeer);
    write([
      { name: `origin-${pass}`, url: originPeer.url },
      { name: `relay-${pass}`, url: relayPeer.url },
    ]);
    await round(hubUrl, originPeer.url);
    const relayed = await round(hubUrl, relayPeer.url);
    if (relayed?.error?.code === 'sync.equivocation') counts.equivocations++;
    else failures.push(`equivocation pass ${pass}: ${JSON.stringify(relayed).slice(0, 300)}`);
  } catch (err) {
    failures.push(`trust attack pass ${pass}: ${(err as Error).message.slice(0, 200)}`);
  } finally {
    write([]);
    for (const s of servers) await s.close();
  }
}
