// The PeerTransport interface: how a pull round reaches one peer, in our own terms. Adapters:
// http-peer-transport.ts (fetch, injected) and, in tests, an in-process transport over a store.

import type { ArtifactMessage, ArtifactsMessage, MemoryHeadsMessage, MemoryPageMessage, OpsMessage, VersionVectorMessage } from './protocol.js';

export interface PeerTransport {
  /** The peer's replica id, name and version vector; the first message of a round (protocol check). */
  versionVector(signal?: AbortSignal): Promise<VersionVectorMessage>;
  /** One page of `origin`'s events after origin_seq `after`, ascending, at most `limit` (≤ 500). */
  ops(origin: string, after: number, limit: number, signal?: AbortSignal): Promise<OpsMessage>;
  /** One artifact with its content; rejects with `artifact.not_found` when the peer does not hold it. */
  artifact(id: string, signal?: AbortSignal): Promise<ArtifactMessage>;
  /**
   * One artifact, its content streamed to the new file `path` (never held whole), hashed on the way;
   * returns the message with an empty content, the content's UTF-8 size and sha256. Optional: a
   * transport without it is asked for `artifact` and the content written out.
   */
  artifactToFile?(id: string, path: string, signal?: AbortSignal): Promise<{ message: ArtifactMessage; bytes: number; sha256: string }>;
  /** Ids of the artifacts the peer can serve, after its local cursor `after`. */
  artifacts(after: number, limit: number, signal?: AbortSignal): Promise<ArtifactsMessage>;
  /** The memory feeds the peer serves to replica `forReplica` (docs/memory-replication.md). */
  memoryHeads?(forReplica: string, signal?: AbortSignal, headers?: Record<string, string>): Promise<MemoryHeadsMessage>;
  /** One page of the memory feed of `origin` for `wing` after record `after`. */
  memoryPage?(origin: string, wing: string, after: number, limit: number, signal?: AbortSignal, headers?: Record<string, string>): Promise<MemoryPageMessage>;
}
