// Validation of every logstream input: each failure names the field and nothing is stored.
// Pure functions from untrusted values (MCP JSON or CLI strings) to normalized records.

import { dict } from './dict.js';
import { invalid, HubError } from '../errors.js';
import {
  ACK_STATUSES,
  ARTIFACT_KINDS,
  ARTIFACT_KIND_MAX,
  ARTIFACT_KIND_PATTERN,
  EVENT_STATUSES,
  type AckStatus,
  type ArtifactKind,
  type EventQuery,
  type EventStatus,
} from './types.js';

export const LIMITS = {
  routingFieldChars: 256,
  bodyBytes: 256 * 1024,
  metadataBytes: 64 * 1024,
  artifactBytes: 4 * 1024 * 1024,
  listDefault: 50,
  listMax: 500,
  waitDefaultMs: 60_000,
  waitMaxMs: 300_000,
  previewChars: 200,
  /** Values per list filter of a query (to_agent, type, stream, ...). */
  filterValues: 64,
  /** Artifact ids one event references. */
  artifactIds: 64,
} as const;

const TYPE_PATTERN = /^[a-z0-9][a-z0-9_.-]{0,63}$/;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const encoder = new TextEncoder();

export function utf8Length(text: string): number {
  return encoder.encode(text).length;
}

/** Whether `text` is over `limit` UTF-8 bytes, without encoding it when its length already decides. */
function overBytes(text: string, limit: number): number | undefined {
  if (text.length * 3 <= limit) return undefined; // a UTF-16 unit is at most 3 UTF-8 bytes
  const bytes = utf8Length(text);
  return bytes > limit ? bytes : undefined;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** A text value that must be valid Unicode (no lone surrogates) and free of NUL bytes. */
function checkText(field: string, value: string): void {
  if (value.includes('\u0000')) throw invalid(field, `${field} contains a NUL byte; only UTF-8 text is accepted`);
  if (LONE_SURROGATE.test(value)) throw invalid(field, `${field} is not valid Unicode (lone surrogate)`);
}

/**
 * A routing field (agent names, stream, room, ids): trimmed, at most 256 characters, no control
 * characters. Absent, null or empty gives null unless `required`.
 */
export function routingField(field: string, value: unknown, required = false): string | null {
  if (value === undefined || value === null || value === '') {
    if (required) throw invalid(field, `${field} is required`);
    return null;
  }
  if (typeof value !== 'string') throw invalid(field, `${field} must be a string, not ${describe(value)}`);
  const trimmed = value.trim();
  if (trimmed === '') throw invalid(field, `${field} must not be blank`);
  if (trimmed.length > LIMITS.routingFieldChars && [...trimmed].length > LIMITS.routingFieldChars)
    throw invalid(field, `${field} is longer than ${LIMITS.routingFieldChars} characters`);
  if (CONTROL.test(trimmed)) throw invalid(field, `${field} contains control characters`);
  checkText(field, trimmed);
  return trimmed;
}

/**
 * Event types addressed to someone: their to_agent is required, one agent identity or `*` (a
 * broadcast). Any other type (a status note, claim.renewed, claim.expired, file.reserved, your own
 * dotted type) may omit it: it is then in no one's inbox and is read by filters other than to_agent.
 * event.ack gets the acked event's writer from the hub; task.reply and patch.ready default to the
 * task's requester (Logstream.prepareEvent) before this check.
 */
export const ADDRESSED_EVENT_TYPES: readonly string[] = ['task.request', 'task.reply', 'patch.ready', 'event.ack'];

/**
 * An event's to_agent: one agent identity (no spaces, commas or `*` inside) or `*` for everyone;
 * required for ADDRESSED_EVENT_TYPES. Identity rules beyond this shape compose on top of it.
 */
export function eventToAgent(type: string, value: unknown): string | null {
  const to = routingField('to_agent', value);
  if (to === null) {
    if (ADDRESSED_EVENT_TYPES.includes(type))
      throw invalid(
        'to_agent',
        `to_agent is required for ${type} events: one agent identity, or '*' for everyone (${ADDRESSED_EVENT_TYPES.join(', ')} are addressed; other types may omit it)`,
      );
    return null;
  }
  if (to !== '*' && /[\s,*]/.test(to))
    throw invalid('to_agent', `to_agent must be one agent identity or '*' for everyone; got ${JSON.stringify(to)} (send one event per recipient)`);
  return to;
}

export function requiredField(field: string, value: unknown): string {
  return routingField(field, value, true) as string;
}

export function eventType(value: unknown, field = 'type'): string {
  const t = requiredField(field, value);
  if (!TYPE_PATTERN.test(t))
    throw invalid(
      field,
      `${field} '${t}' is not a valid event type: lowercase letters, digits, '.', '_' and '-', starting with a letter or digit, at most 64 characters`,
    );
  return t;
}

export function eventStatus(value: unknown, field = 'status'): EventStatus | null {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string' || !(EVENT_STATUSES as readonly string[]).includes(value))
    throw invalid(field, `${field} must be one of ${EVENT_STATUSES.join(', ')}; got ${JSON.stringify(value)}`);
  return value as EventStatus;
}

export function ackStatus(value: unknown): AckStatus | null {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string' || !(ACK_STATUSES as readonly string[]).includes(value))
    throw invalid('status', `an ack status must be one of ${ACK_STATUSES.join(', ')}; got ${JSON.stringify(value)}`);
  return value as AckStatus;
}

export function eventBody(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw invalid('body', `body must be a string, not ${describe(value)}`);
  checkText('body', value);
  const bytes = overBytes(value, LIMITS.bodyBytes);
  if (bytes !== undefined)
    throw new HubError(
      'input.too_large',
      `body is ${bytes} bytes; the maximum is ${LIMITS.bodyBytes} bytes. Store large content as an artifact and reference it`,
      { field: 'body' },
    );
  return value;
}

/** Metadata: a JSON object, serialized with sorted keys, at most 64 KiB. */
export function metadataJson(value: unknown): string {
  if (value === undefined || value === null) return '{}';
  if (typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0) return '{}';
  if (typeof value !== 'object' || Array.isArray(value))
    throw invalid('metadata', `metadata must be a JSON object, not ${describe(value)}`);
  let json: string;
  try {
    json = JSON.stringify(sortKeys(value));
  } catch (err) {
    throw invalid('metadata', `metadata is not JSON-serializable: ${(err as Error).message}`);
  }
  checkText('metadata', json);
  const bytes = overBytes(json, LIMITS.metadataBytes);
  if (bytes !== undefined)
    throw new HubError('input.too_large', `metadata is ${bytes} bytes; the maximum is ${LIMITS.metadataBytes}`, {
      field: 'metadata',
    });
  return json;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') {
    const out = dict<unknown>(); // a key named __proto__ stays a key
    for (const key of Object.keys(value).sort()) out[key] = sortKeys((value as Record<string, unknown>)[key]);
    return out;
  }
  return value;
}

/**
 * Refuses a list longer than `max` before any per-item work, naming the field and the limit. Every
 * list input goes through it (or a zod .max() in the tool schema), so no request pays for a huge list.
 */
export function assertListSize(field: string, list: readonly unknown[], max: number): void {
  if (list.length > max) throw invalid(field, `${field} has ${list.length} values; it takes at most ${max}`);
}

/** The distinct values of `items` in first-seen order (linear: a Set, never includes() per item). */
export function distinct<T>(items: Iterable<T>): T[] {
  return [...new Set(items)];
}

export function artifactIds(value: unknown, field = 'artifact_ids'): string[] {
  if (value === undefined || value === null) return [];
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list)) throw invalid(field, `${field} must be a list of artifact ids`);
  assertListSize(field, list, LIMITS.artifactIds);
  return distinct(list.map((item) => requiredField(field, item)));
}

/** Whether a kind is well formed (the hub's rule; the sync protocol checks peers' artifacts with it too). */
export function isArtifactKind(kind: string): boolean {
  return kind.length <= ARTIFACT_KIND_MAX && ARTIFACT_KIND_PATTERN.test(kind);
}

/** An artifact kind: open, e.g. patch, file, log, json, note, report, test-log; only `patch` is special. */
export function artifactKind(value: unknown): ArtifactKind {
  const kind = requiredField('kind', value);
  if (!isArtifactKind(kind))
    throw invalid(
      'kind',
      `kind '${kind}' is not well formed: lowercase words joined by dashes (a letter first, letters and digits), at most ${ARTIFACT_KIND_MAX} characters, e.g. ${ARTIFACT_KINDS.join(', ')} or test-log`,
    );
  return kind;
}

/** Artifact content: non-empty UTF-8 text, at most 4 MiB. Returns the byte length. */
export function artifactContent(value: unknown): { content: string; bytes: number } {
  if (typeof value !== 'string') throw invalid('content', `content must be a string, not ${describe(value)}`);
  if (value.length === 0) throw invalid('content', 'content must not be empty');
  checkText('content', value);
  const bytes = utf8Length(value);
  if (bytes > LIMITS.artifactBytes)
    throw new HubError(
      'input.too_large',
      `content is ${bytes} bytes; the maximum artifact size is ${LIMITS.artifactBytes} bytes (4 MiB)`,
      { field: 'content' },
    );
  return { content: value, bytes };
}

/** Advisory warnings for a patch whose bytes would break `git apply`. The content is never changed. */
export function patchWarnings(kind: ArtifactKind, content: string): string[] {
  if (kind !== 'patch') return [];
  const warnings: string[] = [];
  if (!content.endsWith('\n'))
    warnings.push(
      'patch does not end with a newline: git apply will reject the last hunk as corrupt; store the diff again byte-exactly, including its final newline',
    );
  if (content.includes('\r'))
    warnings.push(
      'patch contains carriage returns (CRLF line endings): git apply usually rejects them; generate the diff with LF line endings and store it again',
    );
  return warnings;
}

/** `YYYY-MM-DD` or an ISO 8601 timestamp with a zone, normalized to `YYYY-MM-DDTHH:MM:SSZ`. */
export function createdAtBound(value: unknown, field = 'since_created_at'): string | null {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string') throw invalid(field, `${field} must be a string date`);
  const text = value.trim();
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(text);
  const full = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(text);
  const ms = Date.parse(dateOnly ? `${text}T00:00:00Z` : text);
  // Date.parse rolls impossible days over (2026-02-30 becomes March 2); the calendar date must survive a round trip.
  const day = Date.parse(`${text.slice(0, 10)}T00:00:00Z`);
  const realDay = !Number.isNaN(day) && new Date(day).toISOString().slice(0, 10) === text.slice(0, 10);
  if (!(dateOnly || full) || Number.isNaN(ms) || !realDay)
    throw invalid(field, `${field} must be YYYY-MM-DD or an ISO 8601 time with a zone, e.g. 2026-01-31T12:00:00Z`);
  return new Date(ms).toISOString().slice(0, 19) + 'Z';
}

function positiveInt(field: string, value: unknown, fallback: number, max: number): number {
  if (value === undefined || value === null || value === '') return fallback;
  const n = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > max)
    throw invalid(field, `${field} must be a whole number from 1 to ${max}; got ${JSON.stringify(value)}`);
  return n;
}

/** A wait timeout in ms: default 60 s, at most 300 s. */
export function waitTimeout(value: unknown): number {
  if (value === undefined || value === null || value === '') return LIMITS.waitDefaultMs;
  const n = typeof value === 'string' && /^\d+(\.\d+)?$/.test(value.trim()) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isFinite(n) || n < 0 || n > LIMITS.waitMaxMs)
    throw invalid(
      'timeout_ms',
      `timeout_ms must be a number of milliseconds from 0 to ${LIMITS.waitMaxMs}; got ${JSON.stringify(value)}`,
    );
  return Math.floor(n);
}

function manyOf<T>(field: string, value: unknown, one: (field: string, v: unknown) => T | null): T[] {
  if (value === undefined || value === null || value === '') return [];
  const list = Array.isArray(value) ? value : [value];
  assertListSize(field, list, LIMITS.filterValues);
  const out = new Set<T>();
  for (const item of list) {
    const v = one(field, item);
    if (v !== null) out.add(v);
  }
  return [...out];
}

function flag(field: string, value: unknown): boolean {
  if (value === undefined || value === null) return false;
  if (typeof value === 'boolean') return value;
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw invalid(field, `${field} must be true or false`);
}

/** Raw query fields as they arrive from a tool call, an HTTP query string or CLI flags. */
export type RawQuery = Partial<Record<keyof EventQuery, unknown>>;

/**
 * The filters palace_event_list, palace_event_wait and GET /logstream/stream share (cursors, page size
 * and order apart). The stream reads exactly these from its query string, so a filter added here
 * reaches every reader at once.
 */
export const EVENT_FILTER_KEYS = [
  'to_agent',
  'exclude_from_agent',
  'from_agent',
  'type',
  'status',
  'correlation_id',
  'stream',
  'room',
  'since_created_at',
  'preview',
] as const satisfies readonly (keyof EventQuery)[];
export type EventFilterKey = (typeof EVENT_FILTER_KEYS)[number];

/**
 * The shared event filters out of an HTTP query string (a repeated key is a list, which means any);
 * absent or empty values are left out. Validation is eventQuery's, as for a tool call.
 */
export function eventFiltersFromParams(params: Readonly<Record<string, unknown>>): RawQuery {
  const raw: RawQuery = {};
  for (const key of EVENT_FILTER_KEYS) {
    const value = params[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  return raw;
}

export function eventQuery(raw: RawQuery): EventQuery {
  const order = raw.order ?? 'asc';
  if (order !== 'asc' && order !== 'desc') throw invalid('order', `order must be 'asc' or 'desc'`);
  return {
    to_agent: manyOf('to_agent', raw.to_agent, routingField),
    exclude_from_agent: manyOf('exclude_from_agent', raw.exclude_from_agent, routingField),
    from_agent: manyOf('from_agent', raw.from_agent, routingField),
    type: manyOf('type', raw.type, (f, v) => eventType(v, f)),
    status: manyOf('status', raw.status, (f, v) => eventStatus(v, f)),
    correlation_id: manyOf('correlation_id', raw.correlation_id, routingField),
    stream: manyOf('stream', raw.stream, routingField),
    room: manyOf('room', raw.room, routingField),
    since_event_id: routingField('since_event_id', raw.since_event_id),
    before_event_id: routingField('before_event_id', raw.before_event_id),
    since_created_at: createdAtBound(raw.since_created_at),
    limit: positiveInt('limit', raw.limit, LIMITS.listDefault, LIMITS.listMax),
    order,
    preview: flag('preview', raw.preview),
  };
}

/** A validated task read (palace_tasks): filters, order and a page. */
export interface TaskQueryInput {
  status: EventStatus[];
  /** true: only tasks not done; false: only done ones; null: both. */
  open: boolean | null;
  stream: string[];
  requester: string[];
  worker: string[];
  to_agent: string[];
  correlation_id: string[];
  since_event_id: string | null;
  /** Only tasks whose last event is older than this (normalized to YYYY-MM-DDTHH:MM:SSZ). */
  last_event_before: string | null;
  order: 'asc' | 'desc';
  limit: number;
  /** A previous page's cursor (the first_seq to continue after). */
  cursor: number | null;
}

export type RawTaskQuery = Partial<Record<keyof TaskQueryInput, unknown>>;

export function taskQuery(raw: RawTaskQuery): TaskQueryInput {
  const order = raw.order ?? 'asc';
  if (order !== 'asc' && order !== 'desc') throw invalid('order', `order must be 'asc' or 'desc'`);
  const cursor = raw.cursor === undefined || raw.cursor === null || raw.cursor === '' ? null : String(raw.cursor);
  if (cursor !== null && !/^\d{1,15}$/.test(cursor))
    throw invalid('cursor', `cursor must be the cursor a previous palace_tasks page returned; got ${JSON.stringify(raw.cursor)}`);
  return {
    status: manyOf('status', raw.status, (f, v) => eventStatus(v, f)),
    open: raw.open === undefined || raw.open === null ? null : flag('open', raw.open),
    stream: manyOf('stream', raw.stream, routingField),
    requester: manyOf('requester', raw.requester, routingField),
    worker: manyOf('worker', raw.worker, routingField),
    to_agent: manyOf('to_agent', raw.to_agent, routingField),
    correlation_id: manyOf('correlation_id', raw.correlation_id, routingField),
    since_event_id: routingField('since_event_id', raw.since_event_id),
    last_event_before: createdAtBound(raw.last_event_before, 'last_event_before'),
    order,
    limit: positiveInt('limit', raw.limit, LIMITS.listDefault, LIMITS.listMax),
    cursor: cursor === null ? null : Number(cursor),
  };
}
