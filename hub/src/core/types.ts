// The logstream's data shapes in our own terms: events, artifacts, inputs and queries.
// Pure types; no I/O and no storage details.

export const EVENT_STATUSES = ['open', 'claimed', 'ready', 'applied', 'blocked', 'failed', 'superseded'] as const;
export type EventStatus = (typeof EVENT_STATUSES)[number];

/** Statuses an `event.ack` may carry. */
export const ACK_STATUSES = ['claimed', 'applied', 'failed', 'blocked'] as const;
export type AckStatus = (typeof ACK_STATUSES)[number];

/**
 * The kinds agents commonly use. The kind is open (the spec: "other kinds include generated files,
 * test logs, JSON reports"): any lowercase words joined by dashes, at most ARTIFACT_KIND_MAX
 * characters (ARTIFACT_KIND_PATTERN), e.g. `test-log`. Only `patch` means something to the hub.
 */
export const ARTIFACT_KINDS = ['patch', 'file', 'log', 'json', 'note', 'report'] as const;
export const ARTIFACT_KIND_MAX = 32;
/** Lowercase words (a letter, then letters and digits) joined by single dashes. */
export const ARTIFACT_KIND_PATTERN = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;
export type ArtifactKind = string;

/** An immutable logstream event as returned to clients. */
export interface LogEvent {
  id: string;
  seq: number;
  type: string;
  stream: string;
  room: string;
  from_agent: string;
  to_agent: string | null;
  correlation_id: string | null;
  branch: string | null;
  base_commit: string | null;
  status: EventStatus | null;
  artifact_ids: string[];
  body: string;
  metadata: Record<string, unknown>;
  created_at: string;
  origin_replica: string;
  origin_seq: number;
  hlc: string;
  body_truncated?: boolean;
  body_length?: number;
}

/** A validated event ready to be stored; the store assigns seq, origin and clock. */
export interface NewEvent {
  id: string;
  type: string;
  stream: string;
  room: string;
  from_agent: string;
  to_agent: string | null;
  correlation_id: string | null;
  branch: string | null;
  base_commit: string | null;
  status: EventStatus | null;
  artifact_ids: string[];
  body: string;
  metadata_json: string;
  created_at: string;
}

/** Artifact metadata (everything but the content). */
export interface ArtifactMeta {
  id: string;
  kind: ArtifactKind;
  created_by: string;
  sha256: string;
  size_bytes: number;
  created_at: string;
  origin_replica: string;
  metadata: Record<string, unknown>;
}

export interface Artifact extends ArtifactMeta {
  content: string;
}

/** A validated artifact ready to be stored. */
export interface NewArtifact {
  id: string;
  kind: ArtifactKind;
  created_by: string;
  sha256: string;
  size_bytes: number;
  content: string;
  metadata_json: string;
  created_at: string;
}

/**
 * A validated read query. Array filters mean "any of"; `to_agent` also matches broadcasts (`*`).
 * Cursors are event ids; the store resolves them and fails on unknown ones.
 */
export interface EventQuery {
  to_agent: string[];
  exclude_from_agent: string[];
  from_agent: string[];
  type: string[];
  status: EventStatus[];
  correlation_id: string[];
  stream: string[];
  room: string[];
  since_event_id: string | null;
  before_event_id: string | null;
  since_created_at: string | null;
  limit: number;
  order: 'asc' | 'desc';
  preview: boolean;
}

/** The list envelope. `cursor` is where to resume (ascending reads only): every event up to it was examined. */
export interface EventPage {
  events: LogEvent[];
  count: number;
  has_more: boolean;
  cursor: string | null;
}

export interface WaitResult extends EventPage {
  timed_out: boolean;
}
