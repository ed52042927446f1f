// Row shapes of logstream.sqlite3 and their mapping to our types. Only logstream/ imports this.

import type { ReplicatedEvent } from '../core/replication.js';
import type { Artifact, ArtifactMeta, EventStatus, LogEvent, NewEvent } from '../core/types.js';
import { LIMITS } from '../core/validate.js';

export interface EventRow {
  seq: number;
  id: string;
  type: string;
  stream: string;
  room: string;
  from_agent: string;
  to_agent: string | null;
  correlation_id: string | null;
  branch: string | null;
  base_commit: string | null;
  status: string | null;
  artifact_ids: string;
  body: string;
  metadata_json: string;
  created_at: string;
  origin_replica: string;
  origin_seq: number;
  hlc: string;
}

export interface ArtifactRow {
  id: string;
  kind: string;
  sha256: string;
  size_bytes: number;
  content?: string;
  created_by: string;
  created_at: string;
  metadata_json: string;
  origin_replica: string;
}

export const EVENT_COLUMNS =
  'seq, id, type, stream, room, from_agent, to_agent, correlation_id, branch, base_commit, status, artifact_ids, body, metadata_json, created_at, origin_replica, origin_seq, hlc';

export function parseObject(json: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(json);
    return value && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/** A row in its wire form for peer sync (no local seq), built directly: pages hold 500 of them. */
export function toReplicated(row: EventRow): ReplicatedEvent {
  return {
    id: row.id,
    type: row.type,
    stream: row.stream,
    room: row.room,
    from_agent: row.from_agent,
    to_agent: row.to_agent,
    correlation_id: row.correlation_id,
    branch: row.branch,
    base_commit: row.base_commit,
    status: row.status as EventStatus | null,
    artifact_ids: row.artifact_ids === '[]' ? [] : (JSON.parse(row.artifact_ids) as string[]),
    body: row.body,
    metadata: row.metadata_json === '{}' ? {} : parseObject(row.metadata_json),
    created_at: row.created_at,
    origin_replica: row.origin_replica,
    origin_seq: row.origin_seq,
    hlc: row.hlc,
  };
}

export function toEvent(row: EventRow): LogEvent {
  return {
    id: row.id,
    seq: row.seq,
    type: row.type,
    stream: row.stream,
    room: row.room,
    from_agent: row.from_agent,
    to_agent: row.to_agent,
    correlation_id: row.correlation_id,
    branch: row.branch,
    base_commit: row.base_commit,
    status: row.status as EventStatus | null,
    artifact_ids: JSON.parse(row.artifact_ids) as string[],
    body: row.body,
    metadata: parseObject(row.metadata_json),
    created_at: row.created_at,
    origin_replica: row.origin_replica,
    origin_seq: row.origin_seq,
    hlc: row.hlc,
  };
}

/** A stored event from the fields it was inserted with and the local seq it got (no read back). */
export function storedEvent(e: NewEvent & { origin_replica: string; origin_seq: number; hlc: string }, seq: number): LogEvent {
  return {
    id: e.id,
    seq,
    type: e.type,
    stream: e.stream,
    room: e.room,
    from_agent: e.from_agent,
    to_agent: e.to_agent,
    correlation_id: e.correlation_id,
    branch: e.branch,
    base_commit: e.base_commit,
    status: e.status,
    artifact_ids: [...e.artifact_ids],
    body: e.body,
    metadata: e.metadata_json === '{}' ? {} : parseObject(e.metadata_json),
    created_at: e.created_at,
    origin_replica: e.origin_replica,
    origin_seq: e.origin_seq,
    hlc: e.hlc,
  };
}

export function toArtifactMeta(row: ArtifactRow): ArtifactMeta {
  return {
    id: row.id,
    kind: row.kind as ArtifactMeta['kind'],
    created_by: row.created_by,
    sha256: row.sha256,
    size_bytes: row.size_bytes,
    created_at: row.created_at,
    origin_replica: row.origin_replica,
    metadata: parseObject(row.metadata_json),
  };
}

/** Shortens a body to the preview length on a code-point boundary and says so. */
export function previewEvent(event: LogEvent): LogEvent {
  const points = [...event.body];
  const truncated = points.length > LIMITS.previewChars;
  return {
    ...event,
    body: truncated ? points.slice(0, LIMITS.previewChars).join('') : event.body,
    body_truncated: truncated,
    body_length: points.length,
  };
}

/** A full artifact row (content included) as an Artifact. */
export function toArtifact(row: ArtifactRow): Artifact {
  return { ...toArtifactMeta(row), content: row.content ?? '' };
}
