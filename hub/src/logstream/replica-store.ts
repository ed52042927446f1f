// The ReplicaStore interface: what peer sync needs from a log, in our own terms. Like the log it is
// append-only. Adapters: SqliteEventStore (and Logstream.replica, which also wakes waiters).

import type { Artifact } from '../core/types.js';
import type { ApplyResult, ReplicatedArtifact, ReplicatedEvent, VersionVector } from '../core/replication.js';

/** Most events one `eventsAfter` call returns (the wire page limit). */
export const MAX_PAGE_EVENTS = 500;

export interface ReplicaStore {
  /** This log's replica identity, minted once with the log; never synced, never rotated. */
  readonly replicaId: string;
  /** The highest origin_seq held for every origin (this replica included). */
  versionVector(): VersionVector;
  /** Events authored by `origin` with origin_seq > `after`, ascending by origin_seq, at most `limit` (≤ 500). */
  eventsAfter(origin: string, after: number, limit: number): ReplicatedEvent[];
  /** One artifact with its content, or undefined. */
  getArtifact(id: string): Artifact | undefined;
  /** Whether the artifact is stored here. */
  hasArtifact(id: string): boolean;
  /** Stores a remote artifact once its sha256 checks out (`sync.hash_mismatch` otherwise); false when already held. */
  applyRemoteArtifact(artifact: ReplicatedArtifact): boolean;
  /** Applies remote events in order, each once, with a new local seq; stops at the first that cannot be applied. */
  applyRemoteEvents(events: readonly ReplicatedEvent[]): ApplyResult;
}
