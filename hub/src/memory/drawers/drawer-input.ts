// Validation of memory inputs (wing, room, tags, content, ids): clear errors naming the field.

import { invalid, HubError } from '../../errors.js';
import { findSecret } from '../../core/secrets.js';
import { assertListSize, routingField, requiredField } from '../../core/validate.js';

export const MEMORY_LIMITS = { contentBytes: 1024 * 1024, tags: 32, tagChars: 64, searchMax: 100 } as const;

export function placeName(field: 'wing' | 'room', value: unknown): string {
  const name = requiredField(field, value);
  if (name.length > 128) throw invalid(field, `${field} is longer than 128 characters`);
  return name;
}

export function optionalPlace(field: 'wing' | 'room', value: unknown): string | undefined {
  return value === undefined || value === null || value === '' ? undefined : placeName(field, value);
}

export function tagList(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  const list = typeof value === 'string' ? value.split(',') : value;
  if (!Array.isArray(list)) throw invalid('tags', 'tags must be a list of strings');
  // Repeats count: the limit applies to the list as given, before any per-tag work.
  assertListSize('tags', list, MEMORY_LIMITS.tags);
  const out = new Set<string>();
  for (const raw of list) {
    const tag = routingField('tags', typeof raw === 'string' ? raw.toLowerCase() : raw);
    if (tag === null) continue;
    if (tag.length > MEMORY_LIMITS.tagChars || tag.includes('|'))
      throw invalid('tags', `tag '${tag}' must be at most ${MEMORY_LIMITS.tagChars} characters without '|'`);
    out.add(tag);
  }
  return [...out];
}

/** Verbatim content: non-empty text, at most 1 MiB, and never a credential. */
/** Content of one drawer (or one duplicate check) is at most MEMORY_LIMITS.contentBytes of UTF-8. */
export function assertContentSize(value: string): void {
  if (Buffer.byteLength(value, 'utf8') > MEMORY_LIMITS.contentBytes)
    throw new HubError('input.too_large', `content is over ${MEMORY_LIMITS.contentBytes} bytes; split it or mine the file`, { field: 'content' });
}

export function drawerContent(value: unknown): string {
  if (typeof value !== 'string') throw invalid('content', 'content must be a string');
  if (value.trim().length === 0) throw invalid('content', 'content must not be empty');
  if (value.includes('\u0000')) throw invalid('content', 'content contains a NUL byte');
  assertContentSize(value);
  const secret = findSecret(value);
  if (secret)
    throw new HubError(
      'memory.secret_refused',
      `content looks like it contains a credential (${secret.kind}, line ${secret.line}); secrets are never filed: remove it and file the rest`,
      { field: 'content' },
    );
  return value;
}

/** Ids of drawers imported from MemPalace (`drawer_<wing>_<room>_<hash>`, `diary_...`), kept as they were. */
export const IMPORTED_DRAWER_ID = /^(?:drawer|diary)_[\p{L}\p{N}_.:@+ -]{1,240}$/u;

export function drawerId(value: unknown): string {
  const id = requiredField('drawer_id', value);
  if (!/^drawer_[0-9a-f]{24}(_c\d+)?$/.test(id) && !IMPORTED_DRAWER_ID.test(id))
    throw invalid('drawer_id', `'${id}' is not a drawer id (drawer_<24 hex>, or an id imported from MemPalace)`);
  return id;
}
