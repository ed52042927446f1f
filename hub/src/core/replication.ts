// Replication in our own terms: version vectors, the replicated form of events and artifacts, and
// the checks a remote record passes before it is stored. Pure: no I/O, no hashing, no storage.

import { HubError } from '../errors.js';
import { parseHlc } from './hlc.js';
import { REPLICA_ID_PATTERN } from './ids.js';
import type { Artifact, LogEvent, NewEvent } from './types.js';
import {
  artifactContent,
  artifactKind,
  eventBody,
  eventStatus,
  eventType,
  metadataJson,
  requiredField,
  routingField,
} from './validate.js';

/** Highest origin_seq held per origin replica. Absent origin = nothing held (0). */
export type VersionVector = Record<string, number>;

/** An event as it travels between hubs: everything but the receiver-local `seq`. */
export type ReplicatedEvent = Omit<LogEvent, 'seq' | 'body_truncated' | 'body_length'>;

/** An artifact as it travels between hubs (content included; sha256 is re-checked on arrival). */
export type ReplicatedArtifact = Artifact;

/** A remote event validated and normalized for storage, with its origin stamps kept. */
export interface RemoteEventRecord extends NewEvent {
  origin_replica: string;
  origin_seq: number;
  hlc: string;
}

/** The outcome of applying a batch of remote events in order. */
export interface ApplyResult {
  /** Events stored by this call (each got a new local seq). */
  applied: number;
  /** Events already held (same id, or same origin and origin_seq), or authored here. */
  duplicates: number;
  /** Highest origin_seq among applied or duplicate events (0 when none). */
  lastOriginSeq: number;
  /** The first event that could not be applied; nothing after it was applied. */
  failed?: { event_id: string; error: HubError };
}

const ISO_SECONDS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

export function isReplicaId(value: string): boolean {
  return REPLICA_ID_PATTERN.test(value);
}

/** The wire form of a stored event. */
export function toReplicatedEvent(event: LogEvent): ReplicatedEvent {
  const { seq: _seq, body_truncated: _t, body_length: _l, ...rest } = event;
  return rest;
}

function bad(eventId: string, message: string): HubError {
  return new HubError('sync.bad_message', `remote event ${eventId}: ${message}`);
}

/**
 * Validates a remote event with the same rules a local append passes (so an honest peer always
 * passes) and normalizes metadata to its canonical JSON. Throws `sync.bad_message`.
 */
export function remoteEventRecord(e: ReplicatedEvent): RemoteEventRecord {
  const id = String(e.id);
  try {
    if (!/^evt_\d{8}T\d{6}_[0-9a-f]{12}$/.test(id)) throw new Error(`id '${id}' is not an event id`);
    if (!isReplicaId(e.origin_replica))
      throw new Error(`origin_replica '${e.origin_replica}' is not a replica id`);
    if (!Number.isSafeInteger(e.origin_seq) || e.origin_seq < 1)
      throw new Error(`origin_seq ${e.origin_seq} is not a positive integer`);
    if (!parseHlc(e.hlc)) throw new Error(`hlc '${e.hlc}' is not a clock stamp`);
    if (!ISO_SECONDS.test(e.created_at))
      throw new Error(`created_at '${e.created_at}' is not a UTC timestamp`);
    return {
      id,
      type: eventType(e.type),
      stream: requiredField('stream', e.stream),
      room: requiredField('room', e.room),
      from_agent: requiredField('from_agent', e.from_agent),
      to_agent: routingField('to_agent', e.to_agent),
      correlation_id: routingField('correlation_id', e.correlation_id),
      branch: routingField('branch', e.branch),
      base_commit: routingField('base_commit', e.base_commit),
      status: eventStatus(e.status),
      artifact_ids: e.artifact_ids.map((a) => requiredField('artifact_ids', a)),
      body: eventBody(e.body),
      metadata_json: metadataJson(e.metadata),
      created_at: e.created_at,
      origin_replica: e.origin_replica,
      origin_seq: e.origin_seq,
      hlc: e.hlc,
    };
  } catch (err) {
    throw bad(id, (err as Error).message);
  }
}

/** Default bound on how far ahead of the local clock a remote stamp may be (PALACE_SYNC_MAX_SKEW_MS). */
export const DEFAULT_MAX_SKEW_MS = 300_000;

/**
 * A remote stamp must name its origin and be at most `maxSkewMs` ahead of `nowMs`: a stamp from the
 * far future would otherwise drag this hub's clock (and every later local stamp) along with it.
 */
export function checkRemoteClock(e: { id: string; hlc: string; origin_replica: string }, nowMs: number, maxSkewMs: number): void {
  const stamp = parseHlc(e.hlc);
  if (!stamp) throw new HubError('sync.bad_message', `remote event ${e.id}: hlc '${e.hlc}' is not a clock stamp`);
  if (stamp.replica !== e.origin_replica)
    throw new HubError('sync.bad_message', `remote event ${e.id}: hlc '${e.hlc}' was not stamped by its origin ${e.origin_replica}`);
  if (stamp.ms > nowMs + maxSkewMs)
    throw new HubError(
      'sync.clock_skew',
      `remote event ${e.id}: hlc ${e.hlc} is ${Math.round((stamp.ms - nowMs) / 1000)} s ahead of this hub's clock (the bound is ${Math.round(maxSkewMs / 1000)} s, PALACE_SYNC_MAX_SKEW_MS); refused`,
      { data: { event_id: e.id } },
    );
}

/** Validates a remote artifact's fields (not its hash: that needs the content hashed by the caller). */
export function checkRemoteArtifact(a: ReplicatedArtifact): { bytes: number; metadata_json: string } {
  try {
    if (!/^art_\d{8}T\d{6}_[0-9a-f]{12}$/.test(a.id)) throw new Error(`id '${a.id}' is not an artifact id`);
    if (!isReplicaId(a.origin_replica))
      throw new Error(`origin_replica '${a.origin_replica}' is not a replica id`);
    if (!/^[0-9a-f]{64}$/.test(a.sha256)) throw new Error('sha256 is not 64 lowercase hex characters');
    if (!ISO_SECONDS.test(a.created_at))
      throw new Error(`created_at '${a.created_at}' is not a UTC timestamp`);
    artifactKind(a.kind);
    requiredField('created_by', a.created_by);
    const { bytes } = artifactContent(a.content);
    return { bytes, metadata_json: metadataJson(a.metadata) };
  } catch (err) {
    throw new HubError('sync.bad_message', `remote artifact ${a.id}: ${(err as Error).message}`);
  }
}

/** One origin to pull from a peer: everything after `after`, up to the peer's `top`. */
export interface PullTarget {
  origin: string;
  after: number;
  top: number;
}

/** What a peer holds that we do not, origin by origin (sorted), never our own origin. */
export function pullPlan(local: VersionVector, remote: VersionVector, self: string): PullTarget[] {
  return Object.keys(remote)
    .sort()
    .filter((origin) => origin !== self)
    .map((origin) => ({ origin, after: local[origin] ?? 0, top: remote[origin] ?? 0 }))
    .filter((t) => t.top > t.after);
}

/** Whether `a` holds at least everything `b` holds. */
export function covers(a: VersionVector, b: VersionVector): boolean {
  return Object.entries(b).every(([origin, seq]) => (a[origin] ?? 0) >= seq);
}
