// The peer-sync wire protocol, version 2 (trusted sync: signed checkpoints, origin keys; version 1
// carried no signatures and is refused): every message is a union member on `type` carrying
// `protocol`, checked with a zod schema at the edge (parseMessage). The puller names its version in
// the Palace-Sync-Protocol header of its first request (GET /sync/version_vector); a hub that does not
// speak it answers 409 `sync.version_mismatch` listing what it supports. No I/O here.

import { z } from 'zod';

import type { Checkpoint } from '../core/chain.js';
import { REPLICA_ID_PATTERN } from '../core/ids.js';
import type { ReplicatedArtifact, ReplicatedEvent, VersionVector } from '../core/replication.js';
import { EVENT_STATUSES } from '../core/types.js';
import { isArtifactKind } from '../core/validate.js';
import { HubError } from '../errors.js';
import { PROTOCOL_VERSION } from './protocol-version.js';

export { PROTOCOL_VERSION };
/** Versions this hub serves and understands, newest first. */
export const SUPPORTED_PROTOCOLS: readonly number[] = [PROTOCOL_VERSION];
/** Request header naming the protocol version the puller speaks. */
export const PROTOCOL_HEADER = 'Palace-Sync-Protocol';

const replicaId = z.string().regex(REPLICA_ID_PATTERN, 'expected a replica id rep_<12 hex>');
const text = z.string().max(1024);
const nullableText = text.nullable();
const timestamp = z.string().max(64).nullable();

const versionVectorSchema = z.record(replicaId, z.number().int().nonnegative());
const publicKey = z.string().regex(/^[A-Za-z0-9_-]{43}$/, 'expected a raw Ed25519 public key (base64url)');
const signature = z.string().regex(/^[A-Za-z0-9_-]{86}$/, 'expected an Ed25519 signature (base64url)');

const checkpointSchema = z.object({
  origin: replicaId,
  seq: z.number().int().positive(),
  pos: z.number().int().positive(),
  chain: z.string().regex(/^[0-9a-f]{64}$/),
  sig: signature,
});

const keyStatementSchema = z.object({ replica_id: replicaId, public_key: publicKey, vouch: signature });

const rejectedPageSchema = z.object({
  at: z.string(),
  origin: z.string().nullable(),
  code: z.string(),
  reason: z.string(),
});

const eventSchema = z.object({
  id: text,
  type: text,
  stream: text,
  room: text,
  from_agent: text,
  to_agent: nullableText,
  correlation_id: nullableText,
  branch: nullableText,
  base_commit: nullableText,
  status: z.enum(EVENT_STATUSES).nullable(),
  artifact_ids: z.array(text).max(1000),
  body: z.string(),
  metadata: z.record(z.string(), z.unknown()),
  created_at: text,
  origin_replica: replicaId,
  origin_seq: z.number().int().positive(),
  hlc: text,
});

const artifactSchema = z.object({
  id: text,
  kind: z.string().refine(isArtifactKind, 'expected an artifact kind: lowercase words joined by dashes'),
  created_by: text,
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  size_bytes: z.number().int().nonnegative(),
  created_at: text,
  origin_replica: replicaId,
  metadata: z.record(z.string(), z.unknown()),
  content: z.string(),
});

const errorSchema = z.object({ code: z.string(), message: z.string() });

const peerEstateSchema = z.object({
  name: z.string(),
  url: z.string(),
  replica_id: replicaId.nullable(),
  reachable: z.boolean().nullable(),
  in_flight: z.boolean(),
  last_attempt_at: timestamp,
  last_success_at: timestamp,
  last_error: z.string().nullable(),
  last_error_code: z.string().nullable(),
  last_error_at: timestamp,
  last_pulled_events: z.number().int().nonnegative(),
  last_pulled_artifacts: z.number().int().nonnegative(),
  pulled_events_total: z.number().int().nonnegative(),
  pulled_artifacts_total: z.number().int().nonnegative(),
  remote_version_vector: versionVectorSchema.nullable(),
  /** The key the peer presented (or the one pinned for it), as a fingerprint. */
  public_key_fingerprint: z.string().nullable(),
  /** 'pinned': its key is in peers.json; 'tofu': trusted on first use (no key in peers.json). */
  trust: z.enum(['pinned', 'tofu']).nullable(),
  /** Pages refused from this peer, newest first (at most 10). */
  rejected_pages: z.array(rejectedPageSchema),
  /** Wings whose memory replicates with this peer (peers.json "wings"; docs/memory-replication.md). */
  memory_wings: z.array(z.string()).optional(),
  /** The knowledge graph's facts replicate with this peer (peers.json "kg": true). */
  memory_kg: z.literal(true).optional(),
});

const peerRoundSchema = z.object({
  peer_name: z.string(),
  peer_url: z.string(),
  ok: z.boolean(),
  peer_replica: replicaId.nullable(),
  pulled_events: z.number().int().nonnegative(),
  pulled_artifacts: z.number().int().nonnegative(),
  duplicates: z.number().int().nonnegative(),
  per_origin: z.record(z.string(), z.number().int().nonnegative()),
  remote_version_vector: versionVectorSchema.nullable(),
  error: errorSchema.nullable(),
  notes: z.array(z.string()),
  /** Memory replication this round: records applied, and feed pages refused (absent when nothing replicates with the peer). */
  memory: z.object({ applied: z.number().int().nonnegative(), records: z.number().int().nonnegative(), refused: z.number().int().nonnegative() }).optional(),
});

const protocol = z.number().int().positive();

const versionVectorMessage = z.object({
  type: z.literal('version_vector'),
  protocol,
  replica_id: replicaId,
  name: z.string(),
  /** Per origin, the highest origin_seq this hub can serve under a signed checkpoint. */
  version_vector: versionVectorSchema,
  public_key: publicKey,
  /** Origin keys this hub trusts, each vouched for by its own signature. */
  keys: z.array(keyStatementSchema).max(10_000),
  /** Per origin the newest checkpoint held (its own head signed now): compared to detect equivocation. */
  heads: z.array(checkpointSchema).max(10_000).optional(),
});

const opsMessage = z.object({
  type: z.literal('ops'),
  protocol,
  origin: replicaId,
  after: z.number().int().nonnegative(),
  events: z.array(eventSchema),
  count: z.number().int().nonnegative(),
  /** The serving hub holds more events of this origin after the last one in `events`. */
  has_more: z.boolean(),
  /** The origin's signed checkpoint at the last event of the page (null for an empty page). */
  checkpoint: checkpointSchema.nullable(),
});

const artifactMessage = z.object({
  type: z.literal('artifact'),
  protocol,
  artifact: artifactSchema,
  /** The origin's signature over the artifact's fields; null when unsigned (then only an event can vouch for it). */
  signature: signature.nullable(),
});

const artifactsMessage = z.object({
  type: z.literal('artifacts'),
  protocol,
  after: z.number().int().nonnegative(),
  next: z.number().int().nonnegative(),
  items: z.array(z.object({ id: text, origin_replica: replicaId })).max(1000),
  has_more: z.boolean(),
});

const wingName = z.string().min(1).max(128);

/** Memory replication (docs/memory-replication.md): the feeds a hub serves to one puller. */
const memoryHeadsMessage = z.object({
  type: z.literal('memory_heads'),
  protocol,
  replica_id: replicaId,
  feeds: z.array(z.object({ origin: replicaId, wing: wingName, seq: z.number().int().nonnegative() })).max(10_000),
});

const feedCheckpointSchema = z.object({
  origin: replicaId,
  wing: wingName,
  seq: z.number().int().positive(),
  chain: z.string().regex(/^[0-9a-f]{64}$/),
  sig: signature,
});

/** One page of one (origin, wing) memory feed, ending at a checkpoint signed by the origin. */
const memoryPageMessage = z.object({
  type: z.literal('memory_page'),
  protocol,
  origin: replicaId,
  wing: wingName,
  after: z.number().int().nonnegative(),
  records: z.array(z.object({ seq: z.number().int().positive(), hlc: text, body: z.string() })).max(500),
  has_more: z.boolean(),
  checkpoint: feedCheckpointSchema.nullable(),
});

const meshMessage = z.object({
  type: z.literal('mesh'),
  protocol,
  self: z.object({
    replica_id: replicaId,
    name: z.string(),
    version_vector: versionVectorSchema,
    public_key: z.string(),
    public_key_fingerprint: z.string(),
    max_skew_ms: z.number().int().nonnegative(),
    /** Events held of other origins that no checkpoint of their origin covers yet (legacy), per origin. */
    unverified_events: z.record(z.string(), z.number().int().nonnegative()),
  }),
  /** Origin keys this hub trusts and how it learned them. */
  origin_keys: z.array(
    z.object({
      replica_id: z.string(),
      public_key_fingerprint: z.string(),
      source: z.enum(['self', 'pinned', 'tofu', 'vouched']),
      vouched_by: z.string().nullable(),
    }),
  ),
  peers: z.array(peerEstateSchema),
  /** Events a pin showed were signed by an impostor's key: held under a quarantine origin, never served. */
  quarantined: z.array(
    z.object({
      origin: z.string(),
      held_as: z.string(),
      events: z.number().int().nonnegative(),
      public_key_fingerprint: z.string(),
      reason: z.string(),
      quarantined_at: z.string(),
    }),
  ),
  /** Origins caught signing two chains at one position (both statements kept); no longer accepted. */
  equivocations: z.array(
    z.object({
      origin: z.string(),
      pos: z.number().int().positive(),
      ours_chain: z.string(),
      theirs_chain: z.string(),
      public_key_fingerprint: z.string(),
      via_peer: z.string().nullable(),
      detected_at: z.string(),
    }),
  ),
  /** Origins this hub holds events of that are neither itself nor a peer named in peers.json. */
  gossip_origins: z.array(replicaId),
  sync_interval_s: z.number().nonnegative(),
  sync_enabled: z.boolean(),
  peers_file: z.object({
    path: z.string(),
    peers: z.number().int().nonnegative(),
    error: z.string().nullable(),
  }),
  /** 'hub': live state of the running hub's sync loop; 'local': read from disk, no hub running. */
  estate_source: z.enum(['hub', 'local']),
  generated_at: z.string(),
});

const roundMessage = z.object({
  type: z.literal('round'),
  protocol,
  source: z.enum(['hub', 'direct']),
  replica_id: replicaId,
  results: z.array(peerRoundSchema),
});

const SCHEMAS = {
  version_vector: versionVectorMessage,
  ops: opsMessage,
  artifact: artifactMessage,
  artifacts: artifactsMessage,
  memory_heads: memoryHeadsMessage,
  memory_page: memoryPageMessage,
  mesh: meshMessage,
  round: roundMessage,
} as const;

export type VersionVectorMessage = z.infer<typeof versionVectorMessage>;
export type OpsMessage = z.infer<typeof opsMessage>;
export type ArtifactMessage = z.infer<typeof artifactMessage>;
export type ArtifactsMessage = z.infer<typeof artifactsMessage>;
export type RejectedPage = z.infer<typeof rejectedPageSchema>;
export type MeshMessage = z.infer<typeof meshMessage>;
export type MemoryHeadsMessage = z.infer<typeof memoryHeadsMessage>;
export type MemoryPageMessage = z.infer<typeof memoryPageMessage>;
export type RoundMessage = z.infer<typeof roundMessage>;
export type PeerEstate = z.infer<typeof peerEstateSchema>;
export type PeerRoundResult = z.infer<typeof peerRoundSchema>;
export type SyncMessage =
  | VersionVectorMessage
  | OpsMessage
  | ArtifactMessage
  | ArtifactsMessage
  | MemoryHeadsMessage
  | MemoryPageMessage
  | MeshMessage
  | RoundMessage;
export type SyncMessageType = SyncMessage['type'];
export type MessageOf<T extends SyncMessageType> = Extract<SyncMessage, { type: T }>;

// The wire shapes and our own types must not drift apart.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const wireMatches: [
  Same<z.infer<typeof eventSchema>, ReplicatedEvent>,
  Same<z.infer<typeof artifactSchema>, ReplicatedArtifact>,
  Same<z.infer<typeof versionVectorSchema>, VersionVector>,
  Same<z.infer<typeof checkpointSchema>, Checkpoint>,
] = [true, true, true, true];
void wireMatches;

export function isSupportedProtocol(version: unknown): boolean {
  return typeof version === 'number' && SUPPORTED_PROTOCOLS.includes(version);
}

/** The protocol version a request names in its header; undefined when it names none. */
export function requestedProtocol(header: string | undefined): number | undefined {
  if (header === undefined || header.trim() === '') return undefined;
  const n = Number(header.trim());
  return Number.isInteger(n) ? n : NaN;
}

export function versionMismatch(theirs: unknown): HubError {
  return new HubError(
    'sync.version_mismatch',
    `sync protocol ${String(theirs)} is not supported here; this hub speaks ${SUPPORTED_PROTOCOLS.join(', ')}: upgrade the older hub`,
    { data: { supported: [...SUPPORTED_PROTOCOLS] } },
  );
}

function summarize(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((i) => `${i.path.join('.') || '(message)'}: ${i.message}`)
    .join('; ');
}

/** Checks an incoming message against its schema; throws sync.version_mismatch or sync.bad_message. */
export function parseMessage<T extends SyncMessageType>(type: T, value: unknown): MessageOf<T> {
  const version = (value as { protocol?: unknown } | null)?.protocol;
  if (value && typeof value === 'object' && version !== undefined && !isSupportedProtocol(version))
    throw versionMismatch(version);
  const parsed = SCHEMAS[type].safeParse(value);
  if (!parsed.success)
    throw new HubError('sync.bad_message', `malformed ${type} message: ${summarize(parsed.error)}`);
  return parsed.data as MessageOf<T>;
}

/** Type guard: a well-formed message of this type. */
export function isMessage<T extends SyncMessageType>(type: T, value: unknown): value is MessageOf<T> {
  return SCHEMAS[type].safeParse(value).success;
}
