// The EventStore interface: the logstream's storage in our own terms. Append-only: there is no
// update and no delete. Adapters: sqlite-event-store.ts (the only one today). A LogFile is an
// EventStore with what the Logstream service also runs on: the replica port, the projections.

import type { HubError } from '../errors.js';
import type { Artifact, ArtifactMeta, EventPage, EventQuery, LogEvent, NewArtifact, NewEvent } from '../core/types.js';
import type { Projections } from './projections.js';
import type { ReplicaStore } from './replica-store.js';

export interface EventStore {
  /** This log's replica identity, minted once with the log and never rotated. */
  readonly replicaId: string;
  /** Appends a batch in one transaction; each event succeeds or fails alone (its error in its slot). */
  append(batch: readonly NewEvent[]): Array<LogEvent | HubError>;
  /** Events matching a query, in append order (or reversed for `order: desc`). */
  query(query: EventQuery): EventPage;
  /** One event by id, or undefined. */
  getEvent(id: string): LogEvent | undefined;
  /** The id of the newest event, or null on an empty log. */
  tipId(): string | null;
  /** Number of events in the log. */
  countEvents(): number;
  /** Stores an artifact; returns its metadata. */
  putArtifact(artifact: NewArtifact): ArtifactMeta;
  /** One artifact with its content, or undefined. */
  getArtifact(id: string): Artifact | undefined;
  getArtifactBytes(id: string): { meta: ArtifactMeta; bytes: Buffer } | undefined;
  /** A number that changes whenever any process commits to the log (for cross-process wake-ups). */
  changeToken(): number;
  /** Calls `listener` after every commit through this store that stored events (local or remote). */
  onCommitted(listener: () => void): void;
  close(): void;
}

/** One log file: its events, its replica side (peer sync), its projections, and its integrity check. */
export interface LogFile extends EventStore, Projections {
  /** The file (or `:memory:`). */
  readonly path: string;
  /** This replica's Ed25519 public key (raw, base64url). */
  readonly publicKey: string;
  /** What peer sync reads and applies; applying wakes what onCommitted wakes. */
  readonly replica: ReplicaStore;
  /** SQLite's own verdict on the file: 'ok' or the first problems it found. */
  integrityCheck(): string;
}
