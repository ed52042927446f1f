// One pull round against one peer: read its identity and version vector, admit it (pinned key or
// trust on first use), then for every origin it holds beyond what we hold verified (never our own)
// page through that origin's events in origin_seq order. Each page ends at a checkpoint signed by the
// origin; it is verified (chain, positions, clocks, artifact hashes, signature) and applied all or
// nothing, so what we hold of any origin is always a verified prefix of its log and a refused page
// changes nothing. Then artifacts no event references are listed and pulled, each signed by its
// origin. Idempotent: replaying a round changes nothing.

import type { KeyObject } from 'node:crypto';

import { publicKeyFromRaw } from '../logstream/signatures.js';
import type { ReplicatedArtifact } from '../core/replication.js';
import { pullPlan, type VersionVector } from '../core/replication.js';
import { HubError, toHubError } from '../errors.js';
import { MAX_PAGE_EVENTS, type ReplicaStore } from '../logstream/replica-store.js';
import type { PeerTransport } from './peer-transport.js';
import type { PeerEntry } from './peers-file.js';
import type { OpsMessage } from './protocol.js';
import { admitPeer, originKeyFor, type PeerTrust } from './trust.js';

export interface PullOptions {
  signal?: AbortSignal;
  /** Events asked for per page (1-500, default 500). */
  pageLimit?: number;
  /**
   * Origins not to pull from this peer: the caller pulls them from their own hub, which is a healthy
   * direct peer (in a full mesh this keeps every event from crossing the wire twice).
   */
  skipOrigins?: ReadonlySet<string>;
  /** The peers.json entry (its pinned key); default: an unpinned peer. */
  peer?: PeerEntry;
  /** Check signatures (default true); false only for the benchmark's unverified run. */
  verify?: boolean;
}

/** A page (or a peer) refused, with the reason. */
export interface Rejection {
  origin: string | null;
  error: HubError;
}

/** What one round against one peer did. */
export interface PullReport {
  /** Whether the peer answered its version vector (it was reachable and spoke our protocol). */
  reached: boolean;
  peerReplica: string | null;
  remoteVector: VersionVector | null;
  /** How the peer's key is trusted, and its fingerprint (null when it was not reached or refused). */
  trust: { trust: 'pinned' | 'tofu'; fingerprint: string; firstUse: boolean } | null;
  pulledEvents: number;
  pulledArtifacts: number;
  duplicates: number;
  /** Events applied per origin this round. */
  perOrigin: Record<string, number>;
  /** Failures; an empty list means the round completed. */
  errors: HubError[];
  /** Pages and identities refused this round (a subset of the failures). */
  rejected: Rejection[];
  /** Things worth knowing that are not failures (e.g. a vector that promised more than was served). */
  notes: string[];
}

export function emptyReport(): PullReport {
  return {
    reached: false,
    peerReplica: null,
    remoteVector: null,
    trust: null,
    pulledEvents: 0,
    pulledArtifacts: 0,
    duplicates: 0,
    perOrigin: {},
    errors: [],
    rejected: [],
    notes: [],
  };
}

/** Whether an error is about reaching the peer (end the whole round) rather than about one origin's data. */
function isTransportFailure(err: HubError): boolean {
  return err.code === 'sync.peer_failed' || err.code === 'sync.version_mismatch';
}

/** Refusals of what the peer served (as opposed to failing to reach it). */
function isRejection(err: HubError): boolean {
  return !isTransportFailure(err) && err.code !== 'store.failed' && err.code !== 'store.busy';
}

/** Fetches the artifacts a page's events reference that this hub does not hold (kept in memory until verified). */
async function pageArtifacts(
  replica: ReplicaStore,
  transport: PeerTransport,
  page: OpsMessage,
  signal: AbortSignal | undefined,
): Promise<ReplicatedArtifact[]> {
  const out = new Map<string, ReplicatedArtifact>();
  for (const event of page.events)
    for (const id of event.artifact_ids) {
      if (out.has(id) || replica.hasArtifact(id)) continue;
      let message;
      try {
        message = await transport.artifact(id, signal);
      } catch (err) {
        const e = toHubError(err);
        if (e.code === 'artifact.not_found')
          throw new HubError('sync.bad_message', `the peer served event ${event.id} but not its artifact ${id}`);
        throw e;
      }
      if (message.artifact.id !== id)
        throw new HubError('sync.bad_message', `asked for artifact ${id}, the peer served ${message.artifact.id}`);
      out.set(id, message.artifact);
    }
  return [...out.values()];
}

export async function pullFromPeer(
  replica: ReplicaStore,
  transport: PeerTransport,
  options: PullOptions = {},
): Promise<PullReport> {
  const report = emptyReport();
  const pageLimit = Math.max(1, Math.min(MAX_PAGE_EVENTS, Math.floor(options.pageLimit ?? MAX_PAGE_EVENTS)));
  const { signal } = options;
  const verify = options.verify ?? true;
  const peer: PeerEntry = options.peer ?? { name: 'peer', url: 'peer', token: undefined };
  let remote;
  try {
    remote = await transport.versionVector(signal);
  } catch (err) {
    report.errors.push(toHubError(err));
    return report;
  }
  report.reached = true;
  report.peerReplica = remote.replica_id;
  report.remoteVector = remote.version_vector;
  if (remote.replica_id === replica.replicaId) {
    report.errors.push(
      new HubError(
        'sync.peer_failed',
        `the peer has this hub's own replica id ${remote.replica_id}: a copied palace, or this hub listed as its own peer; give the copy a fresh logstream`,
      ),
    );
    return report;
  }
  let trust: PeerTrust;
  try {
    trust = admitPeer(replica, peer, remote);
  } catch (err) {
    const e = toHubError(err);
    report.errors.push(e);
    report.rejected.push({ origin: null, error: e });
    return report;
  }
  report.trust = { trust: trust.trust, fingerprint: trust.fingerprint, firstUse: trust.firstUse };

  const plan = pullPlan(replica.verifiedVector(), remote.version_vector, replica.replicaId).filter(
    (t) => t.origin === remote.replica_id || !options.skipOrigins?.has(t.origin),
  );
  for (const target of plan) {
    const { origin, top } = target;
    let after = target.after;
    let prefetched: { after: number; page: Promise<OpsMessage> } | undefined;
    try {
      const key: KeyObject | null = verify
        ? originKeyFor(replica, origin, { name: peer.name, replicaId: remote.replica_id, trust }, remote)
        : null;
      while (after < top) {
        signal?.throwIfAborted();
        // Another peer's round may have brought this origin further meanwhile: ask only for the rest.
        after = Math.max(after, replica.verifiedVector()[origin] ?? 0);
        if (after >= top) break;
        const request =
          prefetched?.after === after ? prefetched.page : transport.ops(origin, after, pageLimit, signal);
        prefetched = undefined;
        const page = await request;
        if (page.origin !== origin)
          throw new HubError('sync.bad_message', `asked for origin ${origin}, the peer served ${page.origin}`);
        if (page.after !== after)
          throw new HubError('sync.bad_message', `asked for events after ${after}, the peer served a page after ${page.after}`);
        if (page.events.length === 0) {
          report.notes.push(
            `the peer's vector promised ${origin} up to ${top} but it served nothing after ${after}`,
          );
          break;
        }
        const checkpoint = page.checkpoint;
        if (!checkpoint)
          throw new HubError('sync.bad_signature', `the peer served ${page.events.length} event(s) without a signed checkpoint`);
        if (checkpoint.seq < top && page.has_more) {
          // Ask for the next page now, so the peer prepares it while this one is being verified.
          const next = transport.ops(origin, checkpoint.seq, pageLimit, signal);
          next.catch(() => undefined); // awaited (or dropped) later; never an unhandled rejection
          prefetched = { after: checkpoint.seq, page: next };
        }
        const artifacts = await pageArtifacts(replica, transport, page, signal);
        const result = replica.applyRemotePage({ origin, after, events: page.events, checkpoint, artifacts, key });
        report.pulledEvents += result.applied;
        report.duplicates += result.duplicates;
        if (result.applied > 0) report.perOrigin[origin] = (report.perOrigin[origin] ?? 0) + result.applied;
        report.pulledArtifacts += artifacts.filter((a) => replica.hasArtifact(a.id)).length;
        after = checkpoint.seq;
        if (!page.has_more) break;
      }
    } catch (err) {
      const e = toHubError(err);
      if (signal?.aborted) {
        report.errors.push(
          new HubError('sync.peer_failed', 'the round was stopped (the hub is closing)', { cause: err }),
        );
        return report;
      }
      const named = isTransportFailure(e)
        ? e
        : new HubError(e.code, e.message.includes(origin) ? e.message : `origin ${origin}: ${e.message}`, {
            cause: e,
            data: { ...(e.data ?? {}), origin },
          });
      report.errors.push(named);
      if (isRejection(e)) report.rejected.push({ origin, error: named });
      if (isTransportFailure(e)) return report;
    }
  }
  await pullLooseArtifacts(replica, transport, remote.replica_id, verify, report, signal);
  return report;
}

/** Artifacts the peer holds that no pulled event brought: each must carry its origin's signature. */
async function pullLooseArtifacts(
  replica: ReplicaStore,
  transport: PeerTransport,
  peerReplica: string,
  verify: boolean,
  report: PullReport,
  signal: AbortSignal | undefined,
): Promise<void> {
  let cursor = replica.artifactCursor(peerReplica);
  try {
    for (;;) {
      signal?.throwIfAborted();
      const listing = await transport.artifacts(cursor, MAX_PAGE_EVENTS, signal);
      for (const item of listing.items) {
        if (item.origin_replica === replica.replicaId || replica.hasArtifact(item.id)) continue;
        const known = replica.originKey(item.origin_replica);
        if (verify && !known) {
          report.notes.push(`artifact ${item.id} of origin ${item.origin_replica} skipped: no key is known for its origin`);
          continue;
        }
        const message = await transport.artifact(item.id, signal);
        if (message.artifact.id !== item.id)
          throw new HubError('sync.bad_message', `asked for artifact ${item.id}, the peer served ${message.artifact.id}`);
        const key = verify && known ? (publicKeyFromRaw(known.publicKey) ?? null) : null;
        if (replica.applySignedArtifact(message.artifact, message.signature, key)) report.pulledArtifacts++;
      }
      if (listing.next !== cursor) replica.setArtifactCursor(peerReplica, listing.next);
      cursor = listing.next;
      if (!listing.has_more) return;
    }
  } catch (err) {
    const e = toHubError(err);
    if (signal?.aborted) return;
    report.errors.push(e);
    if (isRejection(e)) report.rejected.push({ origin: null, error: e });
  }
}
