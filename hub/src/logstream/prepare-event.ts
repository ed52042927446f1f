// Validation of one append before anything is stored: every field checked (a HubError naming it),
// depends_on and requires folded into metadata, a reply or patch addressed to its task's requester,
// and the event's id and time assigned.

import { randomBytes } from 'node:crypto';

import { invalid } from '../errors.js';
import { eventIdHex, makeIdFromIso } from '../core/ids.js';
import { capabilityList } from '../core/capabilities.js';
import type { LogEvent, NewEvent } from '../core/types.js';
import { artifactIds, eventBody, eventStatus, eventToAgent, eventType, metadataJson, requiredField, routingField } from '../core/validate.js';
import type { AppendInput } from './append-input.js';
import { dependsOnField } from './coordination.js';

/** Random hex from a pool refilled 4 KiB at a time: one CSPRNG call per ~680 ids instead of one per id. */
export function pooledRandomHex(): (bytes: number) => string {
  let pool = Buffer.alloc(0);
  let offset = 0;
  return (bytes) => {
    if (offset + bytes > pool.length) {
      pool = randomBytes(4096);
      offset = 0;
    }
    offset += bytes;
    return pool.toString('hex', offset - bytes, offset);
  };
}

/** What validation reads: the clock, id randomness, and a task's first request (for a reply's recipient). */
export interface PrepareContext {
  now: Date;
  randomHex: (bytes: number) => string;
  requestOf: (correlationId: string) => LogEvent | undefined;
}

/** Validates an append; throws a HubError naming the field, before anything is stored. */
export function prepareEvent(raw: AppendInput, ctx: PrepareContext): NewEvent {
  const now = ctx.now;
  const dependsOn = dependsOnField(raw.depends_on);
  if (dependsOn !== undefined) {
    if (raw.type !== 'task.request') throw invalid('depends_on', 'depends_on is only for a task.request');
    const extra = raw.metadata === undefined || raw.metadata === null ? {} : (JSON.parse(metadataJson(raw.metadata)) as object);
    raw = { ...raw, metadata: { ...extra, depends_on: dependsOn } };
  }
  if (raw.requires !== undefined && raw.requires !== null) {
    if (raw.type !== 'task.request') throw invalid('requires', 'requires is only for a task.request');
    const requires = capabilityList('requires', raw.requires);
    const extra = raw.metadata === undefined || raw.metadata === null ? {} : (JSON.parse(metadataJson(raw.metadata)) as object);
    raw = { ...raw, metadata: { ...extra, ...(requires.length > 0 ? { requires } : {}) } };
  }
  const type = eventType(raw.type);
  const correlationId = routingField('correlation_id', raw.correlation_id);
  let toAgent = raw.to_agent;
  // A reply or a patch with no recipient goes to the task's requester (the spec's table addresses them so).
  if ((toAgent === undefined || toAgent === null || toAgent === '') && correlationId !== null && (type === 'task.reply' || type === 'patch.ready'))
    toAgent = ctx.requestOf(correlationId)?.from_agent;
  const iso = now.toISOString(); // once, for the id and created_at (isoSeconds)
  return {
    id: makeIdFromIso('evt', iso, eventIdHex(now, ctx.randomHex)),
    type,
    stream: requiredField('stream', raw.stream),
    room: requiredField('room', raw.room),
    from_agent: requiredField('from_agent', raw.from_agent),
    to_agent: eventToAgent(type, toAgent),
    correlation_id: correlationId,
    branch: routingField('branch', raw.branch),
    base_commit: routingField('base_commit', raw.base_commit),
    status: eventStatus(raw.status),
    artifact_ids: artifactIds(raw.artifact_ids),
    body: eventBody(raw.body),
    metadata_json: metadataJson(raw.metadata),
    created_at: iso.slice(0, 19) + 'Z',
  };
}
