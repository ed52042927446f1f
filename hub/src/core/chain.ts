// The canonical bytes of trusted sync (docs/sync-trust.md): what an origin's hash chain covers of an
// event, what its signatures cover of a checkpoint, an artifact and a key statement. Pure: the hashing
// and the signatures over these bytes live in logstream/signatures.ts.

import type { NewEvent } from './types.js';

/** The fields of an event that its origin's chain (and so its signature) covers: a stored event's. */
export type ChainedEventFields = Readonly<Omit<NewEvent, 'status' | 'artifact_ids'>> & {
  status: string | null;
  artifact_ids: readonly string[];
  origin_replica: string;
  origin_seq: number;
  hlc: string;
};

/**
 * The canonical encoding of an event's immutable fields: a JSON array in a fixed order, with the
 * sha256 of every referenced artifact (in artifact_ids order). Equal on every hub for equal events.
 */
export function canonicalEvent(e: ChainedEventFields, artifactSha256: readonly string[]): Buffer {
  return Buffer.from(canonicalEventText(e, artifactSha256), 'utf8');
}

/** canonicalEvent as a string (its UTF-8 bytes are the canonical bytes): hashed without a Buffer copy. */
export function canonicalEventText(e: ChainedEventFields, artifactSha256: readonly string[]): string {
  return JSON.stringify([
    'palace-event-v1',
    e.id,
    e.type,
    e.stream,
    e.room,
    e.from_agent,
    e.to_agent,
    e.correlation_id,
    e.branch,
    e.base_commit,
    e.status,
    e.artifact_ids,
    artifactSha256,
    e.body,
    e.metadata_json,
    e.created_at,
    e.origin_replica,
    e.origin_seq,
    e.hlc,
  ]);
}

/** A signed point of an origin's chain: after its event `seq` (the `pos`-th of that origin), the chain is `chain`. */
export interface Checkpoint {
  origin: string;
  seq: number;
  pos: number;
  /** Hex sha256 chain value. */
  chain: string;
  /** Base64url Ed25519 signature by the origin's key over checkpointBytes. */
  sig: string;
}

export function checkpointBytes(c: Omit<Checkpoint, 'sig'>): Buffer {
  return Buffer.from(`palace-checkpoint-v1\n${c.origin}\n${c.seq}\n${c.pos}\n${c.chain}`, 'utf8');
}

/** The artifact fields its origin signs (content through its sha256). */
export interface SignedArtifactFields {
  id: string;
  kind: string;
  created_by: string;
  sha256: string;
  size_bytes: number;
  created_at: string;
  origin_replica: string;
  metadata_json: string;
}

export function artifactBytes(a: SignedArtifactFields): Buffer {
  return Buffer.from(
    JSON.stringify([
      'palace-artifact-v1',
      a.id,
      a.kind,
      a.created_by,
      a.sha256,
      a.size_bytes,
      a.created_at,
      a.origin_replica,
      a.metadata_json,
    ]),
    'utf8',
  );
}

/** What a hub signs to introduce an origin's key to its pullers (gossip of keys). */
export function vouchBytes(voucher: string, subject: string, subjectKey: string): Buffer {
  return Buffer.from(`palace-vouch-v1\n${voucher}\n${subject}\n${subjectKey}`, 'utf8');
}
