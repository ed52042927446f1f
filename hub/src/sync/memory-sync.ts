// Memory replication inside the sync round (docs/memory-replication.md). Opt-in per wing and per
// peer: a peers.json entry's "wings" lists the wings whose memory replicates with that peer, both
// ways. A hub serves, to a puller it can name (replica_id pinned, or the key it holds for that
// replica equals the entry's pinned key), the feeds of the wings shared with it: its own, and other
// origins' it holds verified (gossip). A puller refuses a feed of a wing it does not share with the
// serving peer (`sync.not_shared`), verifies every page against the origin's signed checkpoint with
// the key the log's trust rules gave it, stores it and applies it by last-writer-wins.

import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';

import { LOGSTREAM_FILE } from '../core/palace-files.js';
import { isReplicaId } from '../core/replication.js';
import { routingField } from '../core/validate.js';
import { HubError, invalid, toHubError } from '../errors.js';
import type { KeyObject } from 'node:crypto';

import { publicKeyFromRaw, signBytes, verifyBytes } from '../logstream/signatures.js';
import { keyPathFor, loadSigningKey, type SigningKey } from '../logstream/signing-key.js';
import type { ReplicaStore } from '../logstream/replica-store.js';
import { checkFeedRecord } from '../memory/replication/check-record.js';
import { FEED_FILE, FeedStore, MAX_FEED_PAGE } from '../memory/replication/feed-store.js';
import type { ReplicationContext } from '../memory/replication/replicator.js';
import type { Memory } from '../memory/drawers/memory.js';
import type { KgFact, KnowledgeGraph } from '../kg/knowledge-graph.js';
import { KG_FEED, memoryRequestBytes } from '../core/memory-feed.js';
import type { PeerTransport } from './peer-transport.js';
import { loadPeers, peersFilePath, type PeerEntry } from './peers-file.js';
import type { MemoryHeadsMessage, MemoryPageMessage } from './protocol.js';
import { PROTOCOL_VERSION } from './protocol-version.js';
import { originKeyFor } from './trust.js';

/** The headers a memory request is signed with: the puller's replica id, the time (ms) and the signature. */
export const MEMORY_AUTH = { replica: 'x-palace-replica', at: 'x-palace-request-time', sig: 'x-palace-request-sig' } as const;

/** Headers signing one memory request with the puller's log key, for the hub `server` only. */
export function memoryRequestHeaders(input: {
  puller: string;
  server: string;
  key: KeyObject;
  path: string;
  params: Readonly<Record<string, string | undefined>>;
  now?: number;
}): Record<string, string> {
  const at = String(input.now ?? Date.now());
  return {
    [MEMORY_AUTH.replica]: input.puller,
    [MEMORY_AUTH.at]: at,
    [MEMORY_AUTH.sig]: signBytes(input.key, memoryRequestBytes(input.puller, input.server, input.path, input.params, at)),
  };
}

/** A memory request as the route saw it: its parameters and headers (lower-case names). */
export interface MemoryRequest {
  params: Record<string, string | undefined>;
  headers: Record<string, string | string[] | undefined>;
}

/** What one memory pull from one peer did. */
export interface MemoryPullReport {
  records: number;
  applied: number;
  refused: Array<{ origin: string | null; error: HubError }>;
  notes: string[];
}

export interface MemorySyncOptions {
  palacePath: string;
  replica: ReplicaStore;
  /** The palace memory (opened on first use). */
  memory: () => Promise<Memory>;
  /** Check signatures (default true). */
  verify?: boolean;
  /** The knowledge graph (opened on first use): facts replicate with peers whose entry says "kg": true. */
  kg?: () => KnowledgeGraph;
  /** Test hook (PALACE_FAULT_INJECT=memfeed.after-ingest): SIGKILL once a pulled page is stored, before it is applied. */
  faultPoint?: string | undefined;
}

/** How the round admitted the peer (pull-round.ts): its trust and the replica it presented. */
export interface AdmittedPeer {
  replicaId: string;
  trust: 'pinned' | 'tofu';
  fingerprint: string;
}

/**
 * The palace's memory replication: the feed store, the wings shared per peer (from peers.json), the
 * /sync/memory/* answers and the pull of one peer's feeds.
 */
export class MemorySync implements ReplicationContext {
  private store: FeedStore | undefined;
  private key: SigningKey | undefined;
  private cache: { stamp: string; peers: PeerEntry[] } | undefined;

  constructor(private readonly options: MemorySyncOptions) {}

  private signingKey(): KeyObject {
    this.key ??= loadSigningKey(keyPathFor(join(this.options.palacePath, LOGSTREAM_FILE)), false);
    return this.key.privateKey;
  }

  feed(): FeedStore {
    this.store ??= new FeedStore(this.options.palacePath, this.options.replica.replicaId, () => this.signingKey());
    return this.store;
  }

  /**
   * The peer a memory request comes from, authenticated: the request is signed (MEMORY_AUTH headers)
   * with the key this hub pinned for that peer (peers.json "public_key", else the key its log holds
   * for that replica), for this hub, these parameters, and within the clock-skew bound.
   */
  private authenticate(path: string, request: MemoryRequest): PeerEntry {
    const header = (name: string): string | undefined => {
      const v = request.headers[name];
      return typeof v === 'string' ? v : undefined;
    };
    const untrusted = (message: string): HubError => new HubError('sync.untrusted', `${path}: ${message}`);
    const puller = header(MEMORY_AUTH.replica);
    const at = header(MEMORY_AUTH.at);
    const sig = header(MEMORY_AUTH.sig);
    if (!puller || !at || !sig)
      throw untrusted(`memory is served only to a peer it is shared with, on a request signed with that peer's key (headers ${MEMORY_AUTH.replica}, ${MEMORY_AUTH.at}, ${MEMORY_AUTH.sig}); this request is not signed`);
    if (!isReplicaId(puller)) throw untrusted(`${MEMORY_AUTH.replica} must be a replica id rep_<12 hex>`);
    const peer = this.peerFor(puller);
    if (!peer) throw new HubError('sync.not_shared', `${path}: replica ${puller} is not a peer of this hub that memory is shared with (peers.json)`);
    const held = peer.publicKey ?? this.options.replica.originKey(puller)?.publicKey;
    const key = held ? publicKeyFromRaw(held) : undefined;
    if (!key) throw untrusted(`this hub holds no key for peer '${peer.name}' (${puller}): pin it (palace sync trust <url> --pin)`);
    const ms = /^\d{1,16}$/.test(at) ? Number(at) : NaN;
    if (!Number.isFinite(ms)) throw untrusted(`${MEMORY_AUTH.at} must be a time in milliseconds`);
    const skew = this.options.replica.maxSkewMs;
    if (Math.abs(Date.now() - ms) > skew)
      throw new HubError('sync.clock_skew', `${path}: the request of peer '${peer.name}' was signed ${Math.round((Date.now() - ms) / 1000)} s from this hub's clock (the bound is ${Math.round(skew / 1000)} s, PALACE_SYNC_MAX_SKEW_MS); refused`);
    if (!verifyBytes(key, memoryRequestBytes(puller, this.options.replica.replicaId, path, request.params, at), sig))
      throw untrusted(`the request is not signed by the key pinned for peer '${peer.name}' (${puller}) for this hub and these parameters: refused`);
    return peer;
  }

  private writeLock: (<T>(fn: () => Promise<T>) => Promise<T>) | undefined;

  /** The hub's request lock: replicated rows are written under it (set by the hub; the CLI has none). */
  setWriteLock(lock: <T>(fn: () => Promise<T>) => Promise<T>): void {
    this.writeLock = lock;
  }

  withWriteLock<T>(fn: () => Promise<T>): Promise<T> {
    return this.writeLock ? this.writeLock(fn) : fn();
  }

  feedExists(): boolean {
    return this.store !== undefined || existsSync(join(this.options.palacePath, FEED_FILE));
  }

  /** Replicated rows waiting to be re-embedded here (read from the feed store; 0 when there is none). */
  reembedWaiting(): number {
    return this.feedExists() ? this.feed().reembedWaiting() : 0;
  }

  /** peers.json's peers (read again when the file changes; a malformed file shares nothing). */
  peers(): PeerEntry[] {
    const path = peersFilePath(this.options.palacePath);
    let stamp = 'none';
    try {
      const st = statSync(path);
      stamp = `${st.ino}:${st.size}:${st.mtimeMs}`;
    } catch {
      // no file: no peers
    }
    if (this.cache?.stamp !== stamp) {
      let peers: PeerEntry[];
      try {
        peers = loadPeers(path);
      } catch {
        peers = [];
      }
      this.cache = { stamp, peers };
    }
    return this.cache.peers;
  }

  sharedWings(): ReadonlySet<string> {
    return new Set(this.peers().flatMap((p) => p.wings ?? []));
  }

  /** The feeds replicated with one peer: its wings, and the knowledge graph's when it says "kg": true. */
  private feedsFor(peer: PeerEntry | undefined): Set<string> {
    const out = new Set(peer?.wings ?? []);
    if (peer?.kg && this.options.kg) out.add(KG_FEED);
    return out;
  }

  private sharesKg(): boolean {
    return this.options.kg !== undefined && this.peers().some((p) => p.kg === true);
  }

  /** Facts this hub stated or closed itself go into its knowledge-graph feed when any peer shares it. */
  captureFacts(facts: readonly KgFact[]): void {
    if (facts.length === 0 || !this.sharesKg()) return;
    this.seedFacts();
    this.feed().appendLocal(facts.map((f) => ({ wing: KG_FEED, body: { k: 'fact' as const, id: f.triple_id, fact: factRecord(f) } })));
  }

  /** The facts held before the knowledge graph was first shared go into its feed once. */
  private seedFacts(): void {
    const feed = this.feed();
    const kg = this.options.kg?.();
    if (!kg || feed.isSeeded(KG_FEED)) return;
    feed.markSeeded(KG_FEED);
    for (let offset = 0; ; offset += 500) {
      const { facts } = kg.exportFacts(offset, 500);
      feed.appendLocal(facts.map((f) => ({ wing: KG_FEED, body: { k: 'fact' as const, id: f.triple_id, fact: factRecord(f) } })), true);
      if (facts.length < 500) break;
    }
  }

  applyFacts(facts: ReadonlyArray<{ fact: Record<string, unknown>; feedOrigin: string }>): number {
    const kg = this.options.kg?.();
    if (!kg) return 0;
    let changed = 0;
    for (const { fact, feedOrigin } of facts) {
      // A fact's origin is the hub it was first stated on: named in the record when a hub relays or
      // closes another's fact (signed by the feed's origin), else the feed's origin itself.
      const origin = typeof fact.origin === 'string' && isReplicaId(fact.origin) ? fact.origin : feedOrigin;
      try {
        if (kg.applyReplicatedFact(fact as unknown as KgFact, origin) !== 'same') changed++;
      } catch {
        // a fact this graph refuses (checked on arrival; a later rule change) is skipped, never retried forever
      }
    }
    return changed;
  }

  /** The peers.json entry a puller presenting `replica` is: its pinned replica_id, or its pinned key held for that replica. */
  peerFor(replica: string): PeerEntry | undefined {
    const held = this.options.replica.originKey(replica)?.publicKey;
    return this.peers().find((p) => p.replicaId === replica || (p.publicKey !== undefined && p.publicKey === held));
  }

  /** What replicates where: per peer its wings; per wing the feeds held (status, dashboard). */
  status(): { peers: Array<{ name: string; wings: string[]; kg?: true }>; feeds: Array<{ origin: string; wing: string; records: number; pending: number }> } {
    const peers = this.peers()
      .filter((p) => (p.wings ?? []).length > 0 || p.kg === true)
      .map((p) => ({ name: p.name, wings: p.wings ?? [], ...(p.kg === true ? { kg: true as const } : {}) }));
    return { peers, feeds: peers.length > 0 || this.store ? this.feed().summary() : [] };
  }

  private async replicator() {
    const memory = await this.options.memory();
    const r = memory.replicator;
    if (!r) throw new HubError('internal', 'the memory was opened without replication');
    return r;
  }

  /** GET /sync/memory/heads?for=<replica>: the feeds of the wings shared with that puller (signed as it). */
  async heads(request: MemoryRequest): Promise<MemoryHeadsMessage> {
    const forReplica = routingField('for', request.params.for, true) as string;
    if (!isReplicaId(forReplica)) throw invalid('for', `for must be a replica id rep_<12 hex>; got '${forReplica}'`);
    const peer = this.authenticate('/sync/memory/heads', request);
    if (request.headers[MEMORY_AUTH.replica] !== forReplica)
      throw new HubError('sync.untrusted', `/sync/memory/heads: the request is signed by peer '${peer.name}', not by ${forReplica}`);
    const wings = this.feedsFor(peer);
    if ((peer?.wings ?? []).length > 0) await (await this.replicator()).seed();
    if (wings.has(KG_FEED)) this.seedFacts();
    const feeds = wings.size > 0 ? this.feed().heads(wings).filter((f) => f.origin !== forReplica) : [];
    return { type: 'memory_heads', protocol: PROTOCOL_VERSION, replica_id: this.options.replica.replicaId, feeds };
  }

  /** GET /sync/memory/page?origin=&wing=&after=&limit=: one page of a feed of a wing shared with the (signed) puller. */
  page(request: MemoryRequest): MemoryPageMessage {
    const query = request.params;
    const origin = routingField('origin', query.origin, true) as string;
    if (!isReplicaId(origin)) throw invalid('origin', `origin must be a replica id rep_<12 hex>; got '${origin}'`);
    const wing = routingField('wing', query.wing, true) as string;
    const peer = this.authenticate('/sync/memory/page', request);
    if (!this.feedsFor(peer).has(wing))
      throw new HubError('sync.not_shared', `wing '${wing}' is not shared with this peer (${peer.name}) (peers.json "wings"${wing === KG_FEED ? ', "kg"' : ''}): refused`, { field: 'wing' });
    const after = wholeNumber('after', query.after, 0);
    const limit = Math.max(1, Math.min(wholeNumber('limit', query.limit, MAX_FEED_PAGE), MAX_FEED_PAGE));
    const page = this.feed().page(origin, wing, after, limit);
    return { type: 'memory_page', protocol: PROTOCOL_VERSION, origin, wing, after, records: page.records, has_more: page.hasMore, checkpoint: page.checkpoint };
  }

  /**
   * Pulls the feeds `peer` serves this hub, for the wings shared with it; the peer was admitted by the
   * round (its key pinned or trusted on first use). Each page is checked, verified and stored, then applied.
   */
  async pull(peer: PeerEntry, transport: PeerTransport, admitted: AdmittedPeer, signal?: AbortSignal): Promise<MemoryPullReport | undefined> {
    const wings = this.feedsFor(peer);
    if (wings.size === 0 || !transport.memoryHeads || !transport.memoryPage) return undefined;
    const report: MemoryPullReport = { records: 0, applied: 0, refused: [], notes: [] };
    const replicator = await this.replicator();
    await replicator.seed();
    if (wings.has(KG_FEED)) this.seedFacts();
    report.applied += (await replicator.applyPending()).applied; // what a crash left stored but not applied
    replicator.kickReembed(); // rows still waiting for their vector (a restart, a failed batch)
    const replica = this.options.replica;
    // Every request is signed with this hub's log key, for that peer only (it serves only what it shares with us).
    const signed = (path: string, params: Record<string, string>): Record<string, string> =>
      memoryRequestHeaders({ puller: replica.replicaId, server: admitted.replicaId, key: this.signingKey(), path, params });
    let heads: MemoryHeadsMessage;
    try {
      heads = await transport.memoryHeads(replica.replicaId, signal, signed('/sync/memory/heads', { for: replica.replicaId }));
    } catch (err) {
      report.refused.push({ origin: null, error: toHubError(err) });
      return report;
    }
    const feed = this.feed();
    for (const head of heads.feeds) {
      if (head.origin === replica.replicaId) continue;
      try {
        if (!wings.has(head.wing))
          throw new HubError(
            'sync.not_shared',
            `peer '${peer.name}' offers memory of wing '${head.wing}' (origin ${head.origin}), which this hub does not share with it (peers.json "wings" for '${peer.name}': ${[...wings].join(', ')}): refused`,
            { data: { origin: head.origin, wing: head.wing } },
          );
        const key = this.options.verify === false ? null : await this.originKey(head.origin, peer, transport, admitted, signal);
        let after = feed.head(head.origin, head.wing);
        while (after < head.seq) {
          signal?.throwIfAborted();
          const page = await transport.memoryPage(
            head.origin,
            head.wing,
            after,
            MAX_FEED_PAGE,
            signal,
            signed('/sync/memory/page', { origin: head.origin, wing: head.wing, after: String(after), limit: String(MAX_FEED_PAGE) }),
          );
          if (page.origin !== head.origin || page.wing !== head.wing || page.after !== after)
            throw new HubError('sync.bad_message', `asked for memory feed ${head.origin}/${head.wing} after ${after}, the peer served ${page.origin}/${page.wing} after ${page.after}`);
          if (page.records.length === 0 || !page.checkpoint) {
            report.notes.push(`peer '${peer.name}' promised memory feed ${head.origin}/${head.wing} up to ${head.seq} but served nothing after ${after}`);
            break;
          }
          const now = Date.now();
          for (const r of page.records) checkFeedRecord(head.origin, head.wing, r, now, replica.maxSkewMs);
          const fresh = feed.ingest(head.origin, head.wing, after, page.records, page.checkpoint, key);
          report.records += fresh.length;
          if (this.options.faultPoint === 'memfeed.after-ingest' && fresh.length > 0) process.kill(process.pid, 'SIGKILL');
          report.applied += (await replicator.applyPending()).applied;
          after = page.checkpoint.seq;
          if (!page.has_more) break;
        }
      } catch (err) {
        const e = toHubError(err);
        if (signal?.aborted) break;
        report.refused.push({ origin: head.origin, error: e });
      }
    }
    return report;
  }

  /**
   * The key an origin's feed must be signed with: the one the log's trust holds, else one the peer
   * vouches for (a pinned peer only), exactly as for events (sync/trust.ts). Throws `sync.untrusted`.
   */
  private async originKey(origin: string, peer: PeerEntry, transport: PeerTransport, admitted: AdmittedPeer, signal?: AbortSignal): Promise<KeyObject> {
    const replica = this.options.replica;
    const known = replica.originKey(origin);
    if (known) {
      const key = publicKeyFromRaw(known.publicKey);
      if (!key) throw new HubError('sync.untrusted', `the key held for origin ${origin} is malformed`);
      return key;
    }
    const remote = await transport.versionVector(signal);
    const peerKey = publicKeyFromRaw(remote.public_key);
    if (remote.replica_id !== admitted.replicaId || !peerKey)
      throw new HubError('sync.untrusted', `peer '${peer.name}' changed identity during the round (${admitted.replicaId} → ${remote.replica_id})`);
    return originKeyFor(replica, origin, { name: peer.name, replicaId: admitted.replicaId, trust: { ...admitted, key: peerKey, firstUse: false } }, remote);
  }

  close(): void {
    this.store?.close();
    this.store = undefined;
  }
}

function wholeNumber(field: string, value: unknown, fallback: number): number {
  if (value === undefined || value === null || value === '') return fallback;
  const n = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) throw invalid(field, `${field} must be a whole number ≥ 0; got ${JSON.stringify(value)}`);
  return n;
}

/** A fact as its feed carries it (without `current` and `conflicting`, which each hub computes for itself). */
function factRecord(f: KgFact): Record<string, unknown> {
  const { current: _current, conflicting: _conflicting, origin, ...rest } = f;
  void _current;
  void _conflicting;
  // The origin travels only as a replica id (a graph opened without one names local facts 'local').
  return origin !== undefined && isReplicaId(origin) ? { ...rest, origin } : rest;
}
