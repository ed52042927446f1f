// One pull round against one peer: read its identity and version vector, admit it (pinned key or
// trust on first use), then for every origin it holds beyond what we hold verified (never our own)
// page through that origin's events in origin_seq order. Each page ends at a checkpoint signed by the
// origin; it is verified (chain, positions, clocks, artifact hashes, signature) and applied all or
// nothing, so what we hold of any origin is always a verified prefix of its log and a refused page
// changes nothing. Then artifacts no event references are listed and pulled, each signed by its
// origin. Idempotent: replaying a round changes nothing.

import { createHash, type KeyObject } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { checkpointBytes } from '../core/chain.js';
import { isArtifactId } from '../core/ids.js';
import { fingerprint, publicKeyFromRaw, verifyBytes } from '../logstream/signatures.js';
import type { QuarantineRecord } from '../logstream/sync-evidence.js';
import type { ReplicatedArtifact } from '../core/replication.js';
import { checkRemoteArtifact, checkRemoteClock, pullPlan, remoteEventRecord, type VersionVector } from '../core/replication.js';
import { LIMITS } from '../core/validate.js';
import { HubError, toHubError } from '../errors.js';
import { MAX_PAGE_EVENTS, type ReplicaStore } from '../logstream/replica-store.js';
import type { PeerTransport } from './peer-transport.js';
import type { PeerEntry } from './peers-file.js';
import type { OpsMessage } from './protocol.js';
import { checkHeads, equivocationError } from './equivocation.js';
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
  /** Replica ids peers.json pins for other peers (peer name by id): an unpinned peer may not claim them. */
  pinnedElsewhere?: ReadonlyMap<string, string>;
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
  /** Set when a late pin quarantined what an impostor had given under the peer's replica id. */
  quarantined?: QuarantineRecord;
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

/** Most artifact bytes one page may bring (spooled on disk until the page verifies). */
export const MAX_PAGE_ARTIFACT_BYTES = 256 * 1024 * 1024;
/** Most artifact bytes one round brings; past it the round stops and the next one goes on. */
export const MAX_ROUND_ARTIFACT_BYTES = 1024 * 1024 * 1024;
/** Most distinct artifacts one page may make this hub fetch. */
export const MAX_PAGE_ARTIFACTS = 1_000;
/** Listing pages (`/sync/artifacts`) read per round; the cursor is kept, the next round goes on. */
export const MAX_LISTING_PAGES = 20;
/** Notes kept per round; later ones are only counted. */
export const MAX_NOTES = 20;

/** A round's bounds as it runs: artifact bytes spooled so far, notes kept and skipped. */
interface RoundBudget {
  artifactBytes: number;
  skippedNotes: number;
}

function note(report: PullReport, budget: RoundBudget, text: string, always = false): void {
  if (always || report.notes.length < MAX_NOTES) report.notes.push(text);
  else budget.skippedNotes++;
}

/** A page over the round's artifact budget: not a fault of the peer, the next round goes on. */
class BudgetSpent extends Error {}

/**
 * Every check a page allows before any artifact is fetched (a page may pass the asked limit: it ends
 * at its origin's next checkpoint, and the response cap bounds it): each event's fields
 * (ids, origin, clock, as a local append passes them), origin_seq ascending within the checkpoint,
 * artifact ids well-formed and within the local per-event limit, the number of artifacts to fetch,
 * and the checkpoint's signature. Throws `sync.bad_message` / `sync.bad_signature` / `sync.clock_skew`.
 */
function checkPageBeforeFetch(
  replica: ReplicaStore,
  page: OpsMessage,
  origin: string,
  after: number,
  key: KeyObject | null,
): string[] {
  const bad = (message: string): HubError => new HubError('sync.bad_message', `origin ${origin}: ${message}`, { data: { origin } });
  const checkpoint = page.checkpoint;
  if (!checkpoint) throw new HubError('sync.bad_signature', `the peer served ${page.events.length} event(s) without a signed checkpoint`);
  if (checkpoint.origin !== origin) throw bad(`the page's checkpoint is for origin ${checkpoint.origin}`);
  let last = after;
  const wanted = new Set<string>();
  const nowMs = Date.now();
  for (const event of page.events) {
    const record = remoteEventRecord(event);
    if (record.origin_replica !== origin) throw bad(`event ${record.id} names origin ${record.origin_replica}: a forged origin`);
    if (record.origin_seq <= last) throw bad(`event ${record.id} has origin_seq ${record.origin_seq}, not after ${last}`);
    if (record.origin_seq > checkpoint.seq)
      throw bad(`event ${record.id} jumps to origin_seq ${record.origin_seq}, past the signed checkpoint at ${checkpoint.seq}`);
    checkRemoteClock(record, nowMs, replica.maxSkewMs);
    last = record.origin_seq;
    if (record.artifact_ids.length > LIMITS.artifactIds)
      throw bad(`event ${record.id} names ${record.artifact_ids.length} artifacts; the limit is ${LIMITS.artifactIds}`);
    for (const id of record.artifact_ids) {
      if (!isArtifactId(id)) throw bad(`event ${record.id} names '${id.slice(0, 80)}', which is not an artifact id`);
      if (!replica.hasArtifact(id)) wanted.add(id);
    }
    if (wanted.size > MAX_PAGE_ARTIFACTS)
      throw bad(`the page names more than ${MAX_PAGE_ARTIFACTS} artifacts this hub does not hold`);
  }
  if (key && !verifyBytes(key, checkpointBytes(checkpoint), checkpoint.sig))
    throw new HubError('sync.bad_signature', `origin ${origin}: the checkpoint at origin_seq ${checkpoint.seq} is not signed by ${origin}'s key`, {
      data: { origin },
    });
  return [...wanted];
}

/** A folder for one page's artifact bodies; removed once the page is applied or refused. */
function spoolDir(): string {
  return mkdtempSync(join(tmpdir(), 'palace-sync-spool-'));
}

/**
 * One artifact fetched into the file `path`: streamed there by the transport when it can (the content
 * is hashed on the way and never held whole), else read whole and written out. Checked on arrival
 * (fields, size, sha256). The artifact returned reads its content back from the file when asked.
 */
async function fetchToSpool(
  transport: PeerTransport,
  id: string,
  path: string,
  signal: AbortSignal | undefined,
): Promise<{ artifact: ReplicatedArtifact; signature: string | null; bytes: number }> {
  let meta: Omit<ReplicatedArtifact, 'content'>;
  let signature: string | null;
  let bytes: number;
  let sha256: string;
  if (transport.artifactToFile) {
    const streamed = await transport.artifactToFile(id, path, signal);
    const { content: _empty, ...rest } = streamed.message.artifact;
    void _empty;
    meta = rest;
    signature = streamed.message.signature;
    bytes = streamed.bytes;
    sha256 = streamed.sha256;
    if (meta.id !== id) throw new HubError('sync.bad_message', `asked for artifact ${id}, the peer served ${meta.id}`);
    if (bytes === 0) throw new HubError('sync.bad_message', `remote artifact ${id}: content must not be empty`);
    checkRemoteArtifact({ ...meta, content: ' ' }); // its fields (the content was checked while it streamed)
  } else {
    const message = await transport.artifact(id, signal);
    const a = message.artifact;
    if (a.id !== id) throw new HubError('sync.bad_message', `asked for artifact ${id}, the peer served ${a.id}`);
    bytes = checkRemoteArtifact(a).bytes; // fields, and content within the local 4 MiB limit
    sha256 = createHash('sha256').update(a.content, 'utf8').digest('hex');
    writeFileSync(path, a.content, 'utf8');
    const { content: _content, ...rest } = a;
    void _content;
    meta = rest;
    signature = message.signature;
  }
  if (sha256 !== meta.sha256)
    throw new HubError('sync.hash_mismatch', `remote artifact ${id} failed hash verification; refused`, { data: { artifact_id: id } });
  const artifact = Object.defineProperty({ ...meta, content: '' }, 'content', {
    enumerable: true,
    get: () => readFileSync(path, 'utf8'),
  });
  return { artifact, signature, bytes };
}

/**
 * Fetches the artifacts a page needs, one at a time, each streamed into `dir` and checked on arrival;
 * what the page holds is their metadata with a `content` read back from disk when the store asks for
 * it, so a page never holds its artifacts in memory.
 */
async function pageArtifacts(
  transport: PeerTransport,
  event: (id: string) => string,
  ids: readonly string[],
  dir: string,
  budget: RoundBudget,
  signal: AbortSignal | undefined,
): Promise<ReplicatedArtifact[]> {
  const out: ReplicatedArtifact[] = [];
  let pageBytes = 0;
  for (const id of ids) {
    let fetched;
    try {
      fetched = await fetchToSpool(transport, id, join(dir, `${out.length}`), signal);
    } catch (err) {
      const e = toHubError(err);
      if (e.code === 'artifact.not_found')
        throw new HubError('sync.bad_message', `the peer served event ${event(id)} but not its artifact ${id}`);
      throw e;
    }
    pageBytes += fetched.bytes;
    budget.artifactBytes += fetched.bytes;
    if (pageBytes > MAX_PAGE_ARTIFACT_BYTES)
      throw new HubError('sync.bad_message', `the page's artifacts pass ${MAX_PAGE_ARTIFACT_BYTES} bytes; refused`);
    if (budget.artifactBytes > MAX_ROUND_ARTIFACT_BYTES) throw new BudgetSpent();
    out.push(fetched.artifact);
  }
  return out;
}

export async function pullFromPeer(
  replica: ReplicaStore,
  transport: PeerTransport,
  options: PullOptions = {},
): Promise<PullReport> {
  const report = emptyReport();
  const budget: RoundBudget = { artifactBytes: 0, skippedNotes: 0 };
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
    trust = admitPeer(replica, peer, remote, options.pinnedElsewhere);
  } catch (err) {
    const e = toHubError(err);
    report.errors.push(e);
    report.rejected.push({ origin: null, error: e });
    return report;
  }
  report.trust = { trust: trust.trust, fingerprint: trust.fingerprint, firstUse: trust.firstUse };
  if (trust.quarantined) {
    const q = trust.quarantined;
    report.quarantined = q;
    note(
      report,
      budget,
      `late pin: ${q.events} event(s) held as origin ${q.origin} were signed by key ${fingerprint(q.public_key)} (trusted on first use), not by the pinned key; they are quarantined as ${q.held_as} (kept, not served, not ${q.origin}'s) and ${q.origin}'s own events are pulled from the start`,
      true,
    );
  }
  const equivocating = new Set<string>();
  if (verify)
    for (const e of checkHeads(replica, remote.heads ?? [], peer.name)) {
      const origin = (e.data?.origin as string | undefined) ?? null;
      if (origin) equivocating.add(origin);
      report.errors.push(e);
      report.rejected.push({ origin, error: e });
    }

  const plan = pullPlan(replica.verifiedVector(), remote.version_vector, replica.replicaId).filter(
    (t) => t.origin === remote.replica_id || !options.skipOrigins?.has(t.origin),
  );
  for (const target of plan) {
    const { origin, top } = target;
    let after = target.after;
    let prefetched: { after: number; page: Promise<OpsMessage> } | undefined;
    try {
      if (equivocating.has(origin)) continue; // reported above
      if (replica.evidence.isEquivocating(origin))
        throw equivocationError(origin, 'proven earlier: see the equivocations in /sync/peers');
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
          note(report, budget, `the peer's vector promised ${origin} up to ${top} but it served nothing after ${after}`);
          break;
        }
        const wanted = checkPageBeforeFetch(replica, page, origin, after, key);
        const checkpoint = page.checkpoint;
        if (!checkpoint) break; // checked above
        if (checkpoint.seq < top && page.has_more) {
          // Ask for the next page now, so the peer prepares it while this one is being verified.
          const next = transport.ops(origin, checkpoint.seq, pageLimit, signal);
          next.catch(() => undefined); // awaited (or dropped) later; never an unhandled rejection
          prefetched = { after: checkpoint.seq, page: next };
        }
        const dir = spoolDir();
        let result;
        let artifacts: ReplicatedArtifact[];
        try {
          const eventOf = (id: string): string => page.events.find((e) => e.artifact_ids.includes(id))?.id ?? '?';
          artifacts = await pageArtifacts(transport, eventOf, wanted, dir, budget, signal);
          result = replica.applyRemotePage({ origin, after, events: page.events, checkpoint, artifacts, key });
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
        report.pulledEvents += result.applied;
        report.duplicates += result.duplicates;
        if (result.applied > 0) report.perOrigin[origin] = (report.perOrigin[origin] ?? 0) + result.applied;
        report.pulledArtifacts += artifacts.length;
        after = checkpoint.seq;
        if (!page.has_more) break;
      }
    } catch (err) {
      if (err instanceof BudgetSpent) {
        prefetched?.page.catch(() => undefined);
        note(report, budget, `this round's artifact budget (${MAX_ROUND_ARTIFACT_BYTES} bytes) is spent; the next round goes on`, true);
        break;
      }
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
  if (budget.artifactBytes <= MAX_ROUND_ARTIFACT_BYTES)
    await pullLooseArtifacts(replica, transport, remote.replica_id, verify, report, budget, signal);
  if (budget.skippedNotes > 0) report.notes.push(`${budget.skippedNotes} more note(s) this round, not listed`);
  return report;
}

/** Artifacts the peer holds that no pulled event brought: each must carry its origin's signature. */
async function pullLooseArtifacts(
  replica: ReplicaStore,
  transport: PeerTransport,
  peerReplica: string,
  verify: boolean,
  report: PullReport,
  budget: RoundBudget,
  signal: AbortSignal | undefined,
): Promise<void> {
  let cursor = replica.artifactCursor(peerReplica);
  let spool: string | undefined;
  let spooled = 0;
  try {
    for (let pages = 0; ; pages++) {
      signal?.throwIfAborted();
      if (pages >= MAX_LISTING_PAGES) {
        note(report, budget, `the peer lists more artifacts than ${MAX_LISTING_PAGES} pages a round; the next round goes on from here`, true);
        return;
      }
      const listing = await transport.artifacts(cursor, MAX_PAGE_EVENTS, signal);
      if (listing.has_more && listing.next <= cursor)
        throw new HubError('sync.bad_message', `the peer's artifact listing does not advance (next ${listing.next} after ${cursor}) yet says has_more`);
      for (const item of listing.items) {
        if (item.origin_replica === replica.replicaId || replica.hasArtifact(item.id)) continue;
        if (!isArtifactId(item.id)) throw new HubError('sync.bad_message', `the peer lists '${item.id.slice(0, 80)}', which is not an artifact id`);
        const known = replica.originKey(item.origin_replica);
        if (verify && !known) {
          note(report, budget, `artifact ${item.id} of origin ${item.origin_replica} skipped: no key is known for its origin`);
          continue;
        }
        spool ??= spoolDir();
        const path = join(spool, `${spooled++}`);
        let fetched;
        try {
          fetched = await fetchToSpool(transport, item.id, path, signal);
          const key = verify && known ? (publicKeyFromRaw(known.publicKey) ?? null) : null;
          budget.artifactBytes += fetched.bytes;
          if (replica.applySignedArtifact(fetched.artifact, fetched.signature, key)) report.pulledArtifacts++;
        } finally {
          rmSync(path, { force: true });
        }
        if (budget.artifactBytes > MAX_ROUND_ARTIFACT_BYTES) {
          note(report, budget, `this round's artifact budget (${MAX_ROUND_ARTIFACT_BYTES} bytes) is spent; the next round goes on`, true);
          return;
        }
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
  } finally {
    if (spool) rmSync(spool, { recursive: true, force: true });
  }
}
