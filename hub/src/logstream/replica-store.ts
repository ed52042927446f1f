// The ReplicaStore interface: what peer sync needs from a log, in our own terms. Like the log it is
// append-only. Adapter: SqliteReplica (replica-serve.ts, replica-apply.ts), a LogFile's `replica`; its commits wake the Logstream's waiters. Trusted
// sync (docs/sync-trust.md): pages end at signed checkpoints, origin keys are remembered here.

import type { KeyObject } from 'node:crypto';

import type { Checkpoint } from '../core/chain.js';
import type { Artifact } from '../core/types.js';
import type { SyncEvidence } from './sync-evidence.js';
import type { ApplyResult, ReplicatedArtifact, ReplicatedEvent, VersionVector } from '../core/replication.js';

/** Most events one `eventsAfter` call returns (the wire page limit). */
export const MAX_PAGE_EVENTS = 500;

/** How this hub came to trust an origin's key. */
export type OriginKeySource = 'self' | 'pinned' | 'tofu' | 'vouched';

export interface OriginKey {
  origin: string;
  /** Raw Ed25519 public key, base64url. */
  publicKey: string;
  source: OriginKeySource;
  /** The replica whose signed statement introduced this key (source 'vouched'). */
  vouchedBy: string | null;
}

/** A page to serve: events of one origin, ending at a checkpoint its origin signed. */
export interface OpsPage {
  events: ReplicatedEvent[];
  checkpoint: Checkpoint | null;
  hasMore: boolean;
}

/** A page pulled from a peer, to verify and apply all or nothing. */
export interface RemotePage {
  origin: string;
  after: number;
  events: readonly ReplicatedEvent[];
  checkpoint: Checkpoint;
  /** Artifacts the page's events reference that this hub did not hold, as the peer served them. */
  artifacts: readonly ReplicatedArtifact[];
  /** The origin's public key; null skips the signature check (PALACE_SYNC_VERIFY=0, benchmarks only). */
  key: KeyObject | null;
}

export interface SignedArtifact {
  artifact: Artifact;
  /** The origin's signature over the artifact's fields, or null when unsigned (held from before signing). */
  signature: string | null;
}

export interface ArtifactListing {
  items: Array<{ id: string; origin_replica: string }>;
  /** The cursor to ask with next. */
  next: number;
  hasMore: boolean;
}

export interface ReplicaStore {
  /** This log's replica identity, minted once with the log; never synced, never rotated. */
  readonly replicaId: string;
  /** This replica's Ed25519 public key (raw, base64url). */
  readonly publicKey: string;
  /** How far ahead of the local clock a remote stamp may be, in ms. */
  readonly maxSkewMs: number;
  /** The highest origin_seq held for every origin (this replica included). */
  versionVector(): VersionVector;
  /** Per origin, the highest origin_seq covered by a checkpoint signed by that origin (own: the head). */
  verifiedVector(): VersionVector;
  /** Events held of other origins that no checkpoint covers yet (legacy), per origin. */
  unverifiedCounts(): Record<string, number>;
  /** Events authored by `origin` with origin_seq > `after`, ascending by origin_seq, at most `limit` (≤ 500). */
  eventsAfter(origin: string, after: number, limit: number): ReplicatedEvent[];
  /** One page to serve, ending at a signed checkpoint. */
  opsPage(origin: string, after: number, limit: number, byteBudget: number): OpsPage;
  /** One artifact with its content, or undefined. */
  getArtifact(id: string): Artifact | undefined;
  /** One artifact with its origin's signature, or undefined. */
  signedArtifact(id: string): SignedArtifact | undefined;
  /** Artifacts that can travel, after a local cursor. */
  artifactsAfter(after: number, limit: number): ArtifactListing;
  artifactCursor(peerReplica: string): number;
  setArtifactCursor(peerReplica: string, rowid: number): void;
  /** Whether the artifact is stored here. */
  hasArtifact(id: string): boolean;
  /** Stores a remote artifact once its sha256 checks out (`sync.hash_mismatch` otherwise); false when already held. No signature check. */
  applyRemoteArtifact(artifact: ReplicatedArtifact): boolean;
  /** Stores an artifact that travels alone: its origin's signature must verify (unless key is null). */
  applySignedArtifact(artifact: ReplicatedArtifact, signature: string | null, key: KeyObject | null): boolean;
  /** Applies remote events in order without signature checks (imports, tests); stops at the first that cannot be applied. */
  applyRemoteEvents(events: readonly ReplicatedEvent[]): ApplyResult;
  /** Verifies one pulled page against its origin's signed checkpoint and applies it, all or nothing; throws why not. */
  applyRemotePage(page: RemotePage): ApplyResult;
  originKey(origin: string): OriginKey | undefined;
  rememberOriginKey(key: OriginKey, vouch: string | null, replace?: boolean): void;
  /** Every non-TOFU origin key held, vouched for by this hub's signature. */
  keyStatements(): Array<{ replica_id: string; public_key: string; vouch: string }>;
  /** Per origin the newest signed statement held (own head signed now), exchanged to detect equivocation. */
  signedHeads(): Checkpoint[];
  /** Quarantined impostor events and equivocation proofs. */
  readonly evidence: SyncEvidence;
}
