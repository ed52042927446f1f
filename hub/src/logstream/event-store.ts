// The EventStore interface: the logstream's storage in our own terms. Append-only: there is no
// update and no delete. Adapters: sqlite-event-store.ts (the only one today).

import type { HubError } from '../errors.js';
import type { Artifact, ArtifactMeta, EventPage, EventQuery, LogEvent, NewArtifact, NewEvent } from '../core/types.js';

export interface EventStore {
  /** This log's replica identity, minted once with the log and never rotated. */
  readonly replicaId: string;
  /** Appends a batch in one transaction; each event succeeds or fails alone (its error in its slot). */
  append(batch: readonly NewEvent[]): Array<LogEvent | HubError>;
  /** Events matching a query, in append order (or reversed for `order: desc`). */
  query(query: EventQuery): EventPage;
  /** One event by id, or undefined. */
  getEvent(id: string): LogEvent | undefined;
  /** Stores an artifact; returns its metadata. */
  putArtifact(artifact: NewArtifact): ArtifactMeta;
  /** One artifact with its content, or undefined. */
  getArtifact(id: string): Artifact | undefined;
  getArtifactBytes(id: string): { meta: ArtifactMeta; bytes: Buffer } | undefined;
  /** A number that changes whenever any process commits to the log (for cross-process wake-ups). */
  changeToken(): number;
}
