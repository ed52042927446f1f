// The hub's peer sync: every PALACE_SYNC_INTERVAL seconds each peer of peers.json is pulled, each on
// its own schedule so one hanging peer never delays the others. peers.json is re-read every tick and
// at once when it changes (fs.watch); a malformed file is reported once per change and skipped,
// never a crash. Keeps the per-peer status behind the mesh estate. stop() aborts in-flight rounds.

import { watch, type FSWatcher } from 'node:fs';
import { dirname } from 'node:path';

import { HubError, toHubError } from '../errors.js';
import type { Logger } from '../log.js';
import type { ReplicaStore } from '../logstream/replica-store.js';
import { createHttpPeerTransport, DEFAULT_REQUEST_TIMEOUT_MS } from './http-peer-transport.js';
import { REJECTED_KEPT, buildEstate, freshStatus, type PeerStatus } from './mesh-estate.js';
import type { PeerTransport } from './peer-transport.js';
import {
  PEERS_FILE,
  isShared,
  parsePeersFile,
  peersFilePath,
  readPeersText,
  type PeerEntry,
} from './peers-file.js';
import { PROTOCOL_VERSION, type MeshMessage, type PeerRoundResult, type RoundMessage } from './protocol.js';
import { emptyReport, pullFromPeer, type PullReport } from './pull-round.js';
import type { MemoryPullReport, MemorySync } from './memory-sync.js';

export interface SyncServiceOptions {
  replica: ReplicaStore;
  /** The palace directory (where peers.json lives). */
  palacePath: string;
  /** This hub's name in the mesh (the host name). */
  name: string;
  /** Seconds between rounds; 0 or less disables the background loop (explicit rounds still work). */
  intervalSeconds: number;
  log: Logger;
  fetch?: typeof fetch;
  now?: () => Date;
  requestTimeoutMs?: number;
  /** Builds the transport for a peer (default: HTTP with the injected fetch). */
  transportFor?: (peer: PeerEntry) => PeerTransport;
  /** Watch peers.json for changes between ticks (default true). */
  watchFile?: boolean;
  /** Events per page (default 500). */
  pageLimit?: number;
  /** Check origin signatures (default true; PALACE_SYNC_VERIFY=0 turns it off for benchmarks only). */
  verify?: boolean;
  /** Memory replication of shared wings, pulled after the log in each round (docs/memory-replication.md). */
  memory?: MemorySync;
  /** Cut off an artifact body that sends nothing for this long, ms (PALACE_SYNC_STALL_MS; default 15000). */
  stallMs?: number;
}

const STOP_GRACE_MS = 5_000;

export class SyncService {
  readonly name: string;
  readonly intervalSeconds: number;
  readonly peersPath: string;
  private readonly replica: ReplicaStore;
  private readonly log: Logger;
  private readonly now: () => Date;
  private readonly transportFor: (peer: PeerEntry) => PeerTransport;
  private readonly watchFile: boolean;
  private readonly pageLimit: number | undefined;
  private readonly verify: boolean;
  private readonly memory: MemorySync | undefined;
  private peers: PeerEntry[] = [];
  private fileText: string | null | undefined = undefined;
  private fileError: string | null = null;
  private readonly status = new Map<string, PeerStatus>();
  private readonly inflight = new Map<string, Promise<PeerRoundResult>>();
  private readonly abort = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private kick: NodeJS.Timeout | undefined;
  private watcher: FSWatcher | undefined;
  private running = false;
  private stopped = false;

  constructor(options: SyncServiceOptions) {
    this.replica = options.replica;
    this.name = options.name;
    this.intervalSeconds = options.intervalSeconds;
    this.peersPath = peersFilePath(options.palacePath);
    this.log = options.log;
    this.now = options.now ?? (() => new Date());
    this.watchFile = options.watchFile ?? true;
    this.pageLimit = options.pageLimit;
    this.verify = options.verify ?? true;
    this.memory = options.memory;
    if (!this.verify)
      this.log.warn('PALACE_SYNC_VERIFY=0: origin signatures are NOT checked; for benchmarking only, never in use');
    const doFetch = options.fetch ?? fetch;
    const timeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.transportFor =
      options.transportFor ??
      ((peer) =>
        createHttpPeerTransport({
          url: peer.url,
          token: peer.token,
          name: peer.name,
          fetch: doFetch,
          timeoutMs,
          ...(options.stallMs === undefined ? {} : { stallMs: options.stallMs }),
        }));
  }

  /** Whether the background loop runs (an interval above 0, started, not stopped). */
  get enabled(): boolean {
    return this.running && !this.stopped;
  }

  /** Starts the background loop: a first tick at once, then one every interval. */
  start(): void {
    if (this.running || this.stopped) return;
    if (!(this.intervalSeconds > 0)) {
      this.log.info('peer sync loop disabled (PALACE_SYNC_INTERVAL=0); `palace sync` still runs rounds');
      return;
    }
    this.running = true;
    this.timer = setInterval(() => this.tick(), Math.max(10, this.intervalSeconds * 1000));
    this.timer.unref();
    this.schedule(0);
    if (this.watchFile) this.watchPeersFile();
  }

  /** Stops the loop and aborts rounds in flight; resolves once they have ended (at most ~5 s). */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    if (this.kick) clearTimeout(this.kick);
    this.watcher?.close();
    this.abort.abort();
    const pending = Promise.allSettled([...this.inflight.values()]);
    let grace: NodeJS.Timeout | undefined;
    await Promise.race([pending, new Promise((resolve) => (grace = setTimeout(resolve, STOP_GRACE_MS)))]);
    if (grace) clearTimeout(grace);
  }

  private schedule(delayMs: number): void {
    if (this.kick || this.stopped) return;
    this.kick = setTimeout(() => {
      this.kick = undefined;
      this.tick();
    }, delayMs);
    this.kick.unref();
  }

  private watchPeersFile(): void {
    try {
      this.watcher = watch(dirname(this.peersPath), { persistent: false }, (_event, filename) => {
        if (filename && filename.toString() !== PEERS_FILE) return;
        // Editors write in steps; a short pause lets the file settle before it is read.
        this.schedule(25);
      });
      this.watcher.on('error', () => {
        this.watcher?.close();
        this.watcher = undefined; // per-tick re-reads still pick up changes
      });
    } catch {
      this.watcher = undefined;
    }
  }

  /** One tick: re-read peers.json, then start a pull for every peer that has none in flight. */
  private tick(): void {
    if (this.stopped) return;
    this.reloadPeers();
    for (const peer of this.peers) if (!this.inflight.has(peer.name)) this.pullOnTick(peer);
  }

  /** Re-reads peers.json; reports a malformed file once per distinct content. Returns whether it changed. */
  private reloadPeers(): boolean {
    let text: string | null;
    try {
      text = readPeersText(this.peersPath);
    } catch (err) {
      return this.fileFailed(undefined, toHubError(err).message);
    }
    if (text === this.fileText) return false;
    this.fileText = text;
    let peers: PeerEntry[];
    try {
      peers = text === null ? [] : parsePeersFile(text, this.peersPath);
    } catch (err) {
      return this.fileFailed(text, toHubError(err).message);
    }
    const was = this.fileError;
    this.fileError = null;
    this.peers = peers;
    for (const name of [...this.status.keys()])
      if (!peers.some((p) => p.name === name && p.url === this.status.get(name)?.url))
        this.status.delete(name);
    if (was) this.log.info(`${PEERS_FILE} is valid again; syncing with ${peers.length} peer(s)`);
    else if (text !== null)
      this.log.info(`${PEERS_FILE}: ${peers.length} peer(s)`, { peers: peers.map((p) => p.name) });
    if (text !== null && peers.some((p) => p.token) && isShared(this.peersPath))
      this.log.warn(`${this.peersPath} holds tokens but other users can read it; chmod 600 it`);
    return true;
  }

  private fileFailed(text: string | null | undefined, message: string): boolean {
    const changed = message !== this.fileError;
    if (text !== undefined) this.fileText = text;
    this.fileError = message;
    this.peers = [];
    if (changed)
      this.log.warn(`${PEERS_FILE} is malformed; skipping peer sync until it is fixed: ${message}`);
    return changed;
  }

  /**
   * A tick's pull of one peer. A round that brought events is followed at once by one more, which
   * picks up what was written (or gossiped to the peer) while it ran, instead of a whole interval later.
   */
  private pullOnTick(peer: PeerEntry): void {
    this.track(
      peer,
      (async () => {
        const first = await this.pullOnce(peer, true);
        if (first.pulled_events === 0 || this.stopped || !this.isListed(peer)) return first;
        return this.pullOnce(peer, true);
      })(),
    );
  }

  /** Registers a pull in flight for `peer` until it settles. */
  private track(peer: PeerEntry, run: Promise<PeerRoundResult>): Promise<PeerRoundResult> {
    this.inflight.set(peer.name, run);
    void run.finally(() => {
      if (this.inflight.get(peer.name) === run) this.inflight.delete(peer.name);
    });
    return run;
  }

  private isListed(peer: PeerEntry): boolean {
    return this.peers.some(
      (p) => p.name === peer.name && p.url === peer.url && p.token === peer.token && p.publicKey === peer.publicKey,
    );
  }

  /**
   * Replica ids of the other peers in peers.json whose last round succeeded: their own events come
   * straight from them, so `peer` is not asked for them too. A peer that fails drops out of this set
   * and its events flow through the others again.
   */
  private directOrigins(peer: PeerEntry): Set<string> {
    const out = new Set<string>();
    for (const other of this.peers) {
      if (other.name === peer.name) continue;
      const s = this.status.get(other.name);
      if (s && s.url === other.url && s.replicaId && s.lastSuccessAt && !s.lastError) out.add(s.replicaId);
    }
    return out;
  }

  /** Replica ids peers.json pins (replica_id, or the replica a pinned key was seen with) for peers other than `peer`. */
  private pinnedReplicas(peer: PeerEntry): Map<string, string> {
    const out = new Map<string, string>();
    for (const other of this.peers) {
      if (other.name === peer.name || !other.publicKey) continue;
      const seen = this.status.get(other.name)?.replicaId;
      const id = other.replicaId ?? seen;
      if (id) out.set(id, other.name);
    }
    return out;
  }

  /** Pulls one peer once; with `record`, its outcome updates the peer's status in the estate. */
  private async pullOnce(peer: PeerEntry, record: boolean): Promise<PeerRoundResult> {
    const startedAt = this.now().toISOString();
    let report;
    let memory: MemoryPullReport | undefined;
    const transport = this.transportFor(peer);
    try {
      report = await pullFromPeer(this.replica, transport, {
        signal: this.abort.signal,
        skipOrigins: this.directOrigins(peer),
        pinnedElsewhere: this.pinnedReplicas(peer),
        peer,
        verify: this.verify,
        ...(this.pageLimit ? { pageLimit: this.pageLimit } : {}),
      });
      // The peer was admitted (its key pinned or trusted on first use): its memory feeds come next.
      if (this.memory && report.trust && report.peerReplica && ((peer.wings ?? []).length > 0 || peer.kg === true) && !this.abort.signal.aborted) {
        try {
          const admitted = { replicaId: report.peerReplica, trust: report.trust.trust, fingerprint: report.trust.fingerprint };
          memory = await this.memory.pull(peer, transport, admitted, this.abort.signal);
        } catch (err) {
          memory = { records: 0, applied: 0, refused: [{ origin: null, error: toHubError(err) }], notes: [] };
        }
        for (const r of memory?.refused ?? []) {
          report.errors.push(r.error);
          if (r.error.code !== 'sync.peer_failed' && r.error.code !== 'store.failed') report.rejected.push(r);
        }
        report.notes.push(...(memory?.notes ?? []));
      }
    } catch (err) {
      report = { ...emptyReport(), errors: [toHubError(err)] };
    }
    const error = report.errors[0];
    if (record && !this.stopped) this.remember(peer, report, error, startedAt);
    return {
      peer_name: peer.name,
      peer_url: peer.url,
      ok: report.errors.length === 0,
      peer_replica: report.peerReplica,
      pulled_events: report.pulledEvents,
      pulled_artifacts: report.pulledArtifacts,
      duplicates: report.duplicates,
      per_origin: report.perOrigin,
      remote_version_vector: report.remoteVector,
      error: error ? { code: error.code, message: error.message } : null,
      notes: [...report.notes, ...report.errors.slice(1).map((e) => e.message)],
      ...(memory ? { memory: { applied: memory.applied, records: memory.records, refused: memory.refused.length } } : {}),
    };
  }

  private remember(
    peer: PeerEntry,
    report: PullReport,
    error: HubError | undefined,
    startedAt: string,
  ): void {
    if (!this.peers.some((p) => p.name === peer.name && p.url === peer.url)) return; // left the file meanwhile
    const previous = this.status.get(peer.name);
    const s = previous && previous.url === peer.url ? previous : freshStatus(peer.url);
    const at = this.now().toISOString();
    s.lastAttemptAt = startedAt;
    s.reachable = report.reached;
    if (report.peerReplica) s.replicaId = report.peerReplica;
    if (report.remoteVector) s.remoteVector = report.remoteVector;
    if (report.trust) {
      s.keyFingerprint = report.trust.fingerprint;
      s.trust = report.trust.trust;
      if (report.trust.firstUse)
        this.log.warn(
          `peer '${peer.name}' has no public_key in peers.json: trusting its key ${report.trust.fingerprint} on first use (it may give only its own events); check it with \`palace sync trust ${peer.url}\` and pin it`,
        );
    }
    if (report.quarantined)
      this.log.warn(
        `peer '${peer.name}': ${report.quarantined.events} event(s) held as origin ${report.quarantined.origin} were signed by a key trusted on first use, not the pinned one; quarantined as ${report.quarantined.held_as}`,
      );
    for (const r of report.rejected) {
      s.rejected.unshift({ at, origin: r.origin, code: r.error.code, reason: r.error.message });
      this.log.warn(`refused a page from peer '${peer.name}': ${r.error.message}`);
    }
    s.rejected.splice(REJECTED_KEPT);
    s.lastPulledEvents = report.pulledEvents;
    s.lastPulledArtifacts = report.pulledArtifacts;
    s.pulledEventsTotal += report.pulledEvents;
    s.pulledArtifactsTotal += report.pulledArtifacts;
    if (error) {
      if (s.lastError?.message !== error.message)
        this.log.warn(`sync with peer '${peer.name}' failed: ${error.message}`);
      s.lastError = error;
      s.lastErrorAt = at;
    } else {
      if (s.lastError) this.log.info(`sync with peer '${peer.name}' works again`);
      s.lastError = null;
      s.lastSuccessAt = at;
    }
    if (report.pulledEvents > 0)
      this.log.debug(`pulled ${report.pulledEvents} event(s) from '${peer.name}'`, {
        per_origin: report.perOrigin,
      });
    this.status.set(peer.name, s);
  }

  /**
   * One round now against `peers` (default: peers.json, re-read), every peer concurrently. A peer with
   * a round in flight is pulled again once that round ends. Throws when there is nothing to pull from.
   */
  async runRound(peers?: readonly PeerEntry[]): Promise<RoundMessage> {
    if (this.stopped) throw new HubError('sync.peer_failed', 'the sync service is stopped');
    let targets: readonly PeerEntry[];
    if (peers) targets = peers;
    else {
      this.reloadPeers();
      if (this.fileError) throw new HubError('sync.peers_file', this.fileError, { field: PEERS_FILE });
      targets = this.peers;
    }
    if (targets.length === 0)
      throw new HubError('sync.no_peers', `no peers configured (${this.peersPath}) and no --peer given`);
    const results = await Promise.all(
      targets.map(async (peer) => {
        await this.inflight.get(peer.name)?.catch(() => undefined);
        return this.isListed(peer) ? this.track(peer, this.pullOnce(peer, true)) : this.pullOnce(peer, false);
      }),
    );
    return {
      type: 'round',
      protocol: PROTOCOL_VERSION,
      source: 'hub',
      replica_id: this.replica.replicaId,
      results,
    };
  }

  /** The peers.json entry (re-read) with this base URL, if any. */
  listedPeer(url: string): PeerEntry | undefined {
    this.reloadPeers();
    return this.peers.find((p) => p.url === url);
  }

  /** The mesh estate: GET /sync/peers and palace_mesh_peers. */
  estate(): MeshMessage {
    this.reloadPeers(); // cheap, and the estate then shows peers.json as it is now, loop or not
    return buildEstate({
      replica: this.replica,
      name: this.name,
      peers: this.peers,
      status: (name) => this.status.get(name),
      inFlight: (name) => this.inflight.has(name),
      peersFile: { path: this.peersPath, error: this.fileError },
      intervalSeconds: this.intervalSeconds,
      enabled: this.enabled,
      source: 'hub',
      now: this.now(),
    });
  }
}
