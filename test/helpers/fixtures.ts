// Builders for events and artifacts used across unit and contract tests. Pure data, no storage.

import { createHash } from 'node:crypto';

import { isoSeconds, makeId } from '../../hub/src/core/ids.js';
import type { EventQuery, LogEvent, NewArtifact, NewEvent } from '../../hub/src/core/types.js';

let counter = 0;

/** 12 lowercase hex characters, unique within this test process. */
export function nextHex(): string {
  counter += 1;
  return counter.toString(16).padStart(12, '0');
}

const BASE_DATE = new Date('2026-01-31T12:00:00Z');

/** A NewEvent with sensible defaults; override any field. */
export function newEvent(overrides: Partial<NewEvent> = {}): NewEvent {
  return {
    id: makeId('evt', BASE_DATE, nextHex()),
    type: 'status',
    stream: 'project/demo',
    room: 'status',
    from_agent: 'box-claude',
    to_agent: null,
    correlation_id: null,
    branch: null,
    base_commit: null,
    status: null,
    artifact_ids: [],
    body: '',
    metadata_json: '{}',
    created_at: isoSeconds(BASE_DATE),
    ...overrides,
  };
}

/** A NewArtifact whose sha256 and size are computed from its content. */
export function newArtifact(content: string, overrides: Partial<NewArtifact> = {}): NewArtifact {
  return {
    id: makeId('art', BASE_DATE, nextHex()),
    kind: 'patch',
    created_by: 'box-codex',
    sha256: createHash('sha256').update(content, 'utf8').digest('hex'),
    size_bytes: Buffer.byteLength(content, 'utf8'),
    content,
    metadata_json: '{}',
    created_at: isoSeconds(BASE_DATE),
    ...overrides,
  };
}

/** A full EventQuery with the defaults a client gets when it passes nothing. */
export function eventQueryOf(overrides: Partial<EventQuery> = {}): EventQuery {
  return {
    to_agent: [],
    exclude_from_agent: [],
    from_agent: [],
    type: [],
    status: [],
    correlation_id: [],
    stream: [],
    room: [],
    since_event_id: null,
    before_event_id: null,
    since_created_at: null,
    limit: 50,
    order: 'asc',
    preview: false,
    ...overrides,
  };
}

let seq = 0;

/** A stored-looking LogEvent for pure projection tests; seq and id increase with each call. */
export function logEvent(overrides: Partial<LogEvent> = {}): LogEvent {
  seq += 1;
  return {
    id: makeId('evt', BASE_DATE, seq.toString(16).padStart(12, '0')),
    seq,
    type: 'status',
    stream: 'project/demo',
    room: 'delegation',
    from_agent: 'box-claude',
    to_agent: null,
    correlation_id: 'task_demo',
    branch: null,
    base_commit: null,
    status: null,
    artifact_ids: [],
    body: '',
    metadata: {},
    created_at: `2026-01-31T12:00:${String(seq % 60).padStart(2, '0')}Z`,
    origin_replica: 'rep_000000000001',
    origin_seq: seq,
    hlc: `${String(1_700_000_000_000 + seq).padStart(13, '0')}-000000-rep_000000000001`,
    ...overrides,
  };
}
