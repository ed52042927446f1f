// What a hub serves to its pullers, as protocol messages built from a ReplicaStore: its version
// vector, pages of one origin's events (every origin it holds, so peers converge through it) and
// single artifacts with their origin's signature, and the list of artifacts that can travel. Pages
// end at a checkpoint signed by the origin. Validates query parameters; knows nothing of HTTP.

import { isReplicaId } from '../core/replication.js';
import { routingField } from '../core/validate.js';
import { HubError, invalid } from '../errors.js';
import { MAX_PAGE_EVENTS, type ReplicaStore } from '../logstream/replica-store.js';
import {
  PROTOCOL_VERSION,
  type ArtifactMessage,
  type ArtifactsMessage,
  type OpsMessage,
  type VersionVectorMessage,
} from './protocol.js';

/** A page stops growing past about this many bytes of event text (at least one event is sent). */
export const PAGE_BYTE_BUDGET = 4 * 1024 * 1024;

export function versionVectorMessage(replica: ReplicaStore, name: string): VersionVectorMessage {
  return {
    type: 'version_vector',
    protocol: PROTOCOL_VERSION,
    replica_id: replica.replicaId,
    name,
    version_vector: replica.verifiedVector(),
    public_key: replica.publicKey,
    keys: replica.keyStatements(),
    heads: replica.signedHeads(),
  };
}

function nonNegativeInt(field: string, value: unknown, fallback: number): number {
  if (value === undefined || value === null || value === '') return fallback;
  const n = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0)
    throw invalid(field, `${field} must be a whole number ≥ 0; got ${JSON.stringify(value)}`);
  return n;
}

/** Raw `/sync/ops` parameters: origin (required), after (default 0), limit (default and cap 500). */
export interface OpsQuery {
  origin?: unknown;
  after?: unknown;
  limit?: unknown;
}

export function opsMessage(replica: ReplicaStore, query: OpsQuery): OpsMessage {
  const origin = routingField('origin', query.origin, true) as string;
  if (!isReplicaId(origin))
    throw invalid('origin', `origin must be a replica id rep_<12 hex>; got '${origin}'`);
  const after = nonNegativeInt('after', query.after, 0);
  const asked = nonNegativeInt('limit', query.limit, MAX_PAGE_EVENTS);
  if (asked < 1) throw invalid('limit', 'limit must be at least 1');
  const limit = Math.min(asked, MAX_PAGE_EVENTS); // a larger ask is served in pages of 500
  const page = replica.opsPage(origin, after, limit, PAGE_BYTE_BUDGET);
  return {
    type: 'ops',
    protocol: PROTOCOL_VERSION,
    origin,
    after,
    events: page.events,
    count: page.events.length,
    has_more: page.hasMore,
    checkpoint: page.checkpoint,
  };
}

export function artifactMessage(replica: ReplicaStore, rawId: unknown): ArtifactMessage {
  const id = routingField('id', rawId, true) as string;
  const found = replica.signedArtifact(id);
  if (!found) throw new HubError('artifact.not_found', `artifact '${id}' not found`, { field: 'id' });
  return { type: 'artifact', protocol: PROTOCOL_VERSION, artifact: found.artifact, signature: found.signature };
}

/** `/sync/artifacts?after=<cursor>&limit=`: ids of artifacts that can travel (so unreferenced ones replicate too). */
export function artifactsMessage(replica: ReplicaStore, query: { after?: unknown; limit?: unknown }): ArtifactsMessage {
  const after = nonNegativeInt('after', query.after, 0);
  const limit = Math.max(1, Math.min(nonNegativeInt('limit', query.limit, MAX_PAGE_EVENTS), MAX_PAGE_EVENTS));
  const listing = replica.artifactsAfter(after, limit);
  return {
    type: 'artifacts',
    protocol: PROTOCOL_VERSION,
    after,
    next: listing.next,
    items: listing.items,
    has_more: listing.hasMore,
  };
}
