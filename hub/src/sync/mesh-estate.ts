// The mesh estate (GET /sync/peers and palace_mesh_peers): this hub's identity and vector, each peer
// of peers.json with what the last rounds learned about it, and the origins known only through
// gossip, with key fingerprints, how each key is trusted and the pages refused. Built from plain
// state; tokens are not part of any input, so they can never leak here.

import { fingerprint } from '../logstream/signatures.js';
import type { VersionVector } from '../core/replication.js';
import type { HubError } from '../errors.js';
import type { ReplicaStore } from '../logstream/replica-store.js';
import { loadPeers, peersFilePath, type PeerEntry } from './peers-file.js';
import { PROTOCOL_VERSION, type MeshMessage, type PeerEstate, type RejectedPage } from './protocol.js';

/** How many refused pages the estate keeps per peer. */
export const REJECTED_KEPT = 10;

/** What the sync loop remembers about one peer (keyed by name). */
export interface PeerStatus {
  url: string;
  replicaId: string | null;
  reachable: boolean | null;
  lastAttemptAt: string | null;
  lastSuccessAt: string | null;
  lastError: HubError | null;
  lastErrorAt: string | null;
  lastPulledEvents: number;
  lastPulledArtifacts: number;
  pulledEventsTotal: number;
  pulledArtifactsTotal: number;
  remoteVector: VersionVector | null;
  keyFingerprint: string | null;
  trust: 'pinned' | 'tofu' | null;
  /** Newest first. */
  rejected: RejectedPage[];
}

export function freshStatus(url: string): PeerStatus {
  return {
    url,
    replicaId: null,
    reachable: null,
    lastAttemptAt: null,
    lastSuccessAt: null,
    lastError: null,
    lastErrorAt: null,
    lastPulledEvents: 0,
    lastPulledArtifacts: 0,
    pulledEventsTotal: 0,
    pulledArtifactsTotal: 0,
    remoteVector: null,
    keyFingerprint: null,
    trust: null,
    rejected: [],
  };
}

export interface EstateInput {
  replica: ReplicaStore;
  name: string;
  peers: readonly PeerEntry[];
  status: (name: string) => PeerStatus | undefined;
  inFlight: (name: string) => boolean;
  peersFile: { path: string; error: string | null };
  intervalSeconds: number;
  enabled: boolean;
  source: MeshMessage['estate_source'];
  now: Date;
}

function peerEstate(peer: PeerEntry, s: PeerStatus | undefined, inFlight: boolean): PeerEstate {
  const st = s && s.url === peer.url ? s : freshStatus(peer.url);
  return {
    name: peer.name,
    url: peer.url,
    replica_id: st.replicaId,
    reachable: st.reachable,
    in_flight: inFlight,
    last_attempt_at: st.lastAttemptAt,
    last_success_at: st.lastSuccessAt,
    last_error: st.lastError?.message ?? null,
    last_error_code: st.lastError?.code ?? null,
    last_error_at: st.lastErrorAt,
    last_pulled_events: st.lastPulledEvents,
    last_pulled_artifacts: st.lastPulledArtifacts,
    pulled_events_total: st.pulledEventsTotal,
    pulled_artifacts_total: st.pulledArtifactsTotal,
    remote_version_vector: st.remoteVector,
    public_key_fingerprint: st.keyFingerprint ?? (peer.publicKey ? fingerprint(peer.publicKey) : null),
    trust: st.trust ?? (peer.publicKey ? 'pinned' : null),
    rejected_pages: st.rejected,
    ...(peer.wings && peer.wings.length > 0 ? { memory_wings: [...peer.wings] } : {}),
    ...(peer.kg === true ? { memory_kg: true as const } : {}),
  };
}

export function buildEstate(input: EstateInput): MeshMessage {
  const vector = input.replica.versionVector();
  const self = input.replica.replicaId;
  const peers = input.peers.map((p) => peerEstate(p, input.status(p.name), input.inFlight(p.name)));
  const named = new Set(peers.map((p) => p.replica_id).filter((id): id is string => id !== null));
  const quarantined = input.replica.evidence.quarantined();
  const heldAs = new Set(quarantined.map((q) => q.held_as));
  const unverified = Object.fromEntries(Object.entries(input.replica.unverifiedCounts()).filter(([origin]) => !heldAs.has(origin)));
  return {
    type: 'mesh',
    protocol: PROTOCOL_VERSION,
    self: {
      replica_id: self,
      name: input.name,
      version_vector: vector,
      public_key: input.replica.publicKey,
      public_key_fingerprint: input.replica.publicKey ? fingerprint(input.replica.publicKey) : '',
      max_skew_ms: input.replica.maxSkewMs,
      unverified_events: unverified,
    },
    origin_keys: Object.keys(vector)
      .concat(peers.map((p) => p.replica_id).filter((id): id is string => id !== null))
      .filter((origin, i, all) => all.indexOf(origin) === i)
      .sort()
      .flatMap((origin) => {
        const k = input.replica.originKey(origin);
        return k
          ? [{ replica_id: origin, public_key_fingerprint: fingerprint(k.publicKey), source: k.source, vouched_by: k.vouchedBy }]
          : [];
      }),
    peers,
    quarantined: quarantined.map((q) => ({
      origin: q.origin,
      held_as: q.held_as,
      events: q.events,
      public_key_fingerprint: fingerprint(q.public_key),
      reason: q.reason,
      quarantined_at: q.quarantined_at,
    })),
    equivocations: input.replica.evidence.equivocations().map((e) => ({
      origin: e.origin,
      pos: e.pos,
      ours_chain: e.ours.chain_at_pos,
      theirs_chain: e.theirs.chain,
      public_key_fingerprint: fingerprint(e.public_key),
      via_peer: e.via_peer,
      detected_at: e.detected_at,
    })),
    gossip_origins: Object.keys(vector)
      .filter((origin) => origin !== self && !named.has(origin) && !heldAs.has(origin))
      .sort(),
    sync_interval_s: input.intervalSeconds,
    sync_enabled: input.enabled,
    peers_file: { path: input.peersFile.path, peers: input.peers.length, error: input.peersFile.error },
    estate_source: input.source,
    generated_at: input.now.toISOString(),
  };
}

/** The estate answered without a running hub (stdio server, CLI): peers.json as it is, nothing tried yet. */
export function localEstate(
  replica: ReplicaStore,
  options: { palacePath: string; name: string; intervalSeconds: number; now?: Date },
): MeshMessage {
  const path = peersFilePath(options.palacePath);
  let peers: PeerEntry[] = [];
  let error: string | null = null;
  try {
    peers = loadPeers(path);
  } catch (err) {
    error = (err as Error).message;
  }
  return buildEstate({
    replica,
    name: options.name,
    peers,
    status: () => undefined,
    inFlight: () => false,
    peersFile: { path, error },
    intervalSeconds: options.intervalSeconds,
    enabled: false,
    source: 'local',
    now: options.now ?? new Date(),
  });
}
