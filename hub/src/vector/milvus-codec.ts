// How drawers look in Milvus: the collection schema (VARCHAR primary key = drawer id, an ARRAY of
// tags, JSON metadata), rows, and our DrawerFilter as a Milvus boolean expression, strings escaped.

import { HubError } from '../errors.js';
import { textTokens } from './text-fallback.js';
import type { DrawerFilter, StoredDrawer } from './vector-store.js';

/** Milvus VARCHAR holds at most this many bytes. */
export const MILVUS_VARCHAR_MAX = 65_535;

/** A Milvus string literal: double-quoted, with backslash, quote and control characters escaped. */
export function milvusString(value: string): string {
  // eslint-disable-next-line no-control-regex
  const escaped = value.replace(/[\\"\u0000-\u001f\u007f]/g, (c) => {
    if (c === '\\') return '\\\\';
    if (c === '"') return '\\"';
    if (c === '\n') return '\\n';
    if (c === '\r') return '\\r';
    if (c === '\t') return '\\t';
    return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
  return `"${escaped}"`;
}

const list = (values: readonly string[]): string => `[${values.map(milvusString).join(', ')}]`;

/** Always true for stored drawers (ids are never empty); Milvus wants a filter on every query. */
export const MATCH_ALL = 'id != ""';

/** The boolean expression for a DrawerFilter; null when it can match nothing (an empty id list). */
export function milvusFilter(filter: DrawerFilter): string | null {
  if (filter.ids && filter.ids.length === 0) return null;
  const parts: string[] = [];
  if (filter.ids) parts.push(`id in ${list(filter.ids)}`);
  if (filter.wing !== undefined) parts.push(`wing == ${milvusString(filter.wing)}`);
  if (filter.room !== undefined) parts.push(`room == ${milvusString(filter.room)}`);
  if (filter.source_file !== undefined) parts.push(`source_file == ${milvusString(filter.source_file)}`);
  if (filter.parent_id !== undefined) parts.push(`parent_id == ${milvusString(filter.parent_id)}`);
  if (filter.tags && filter.tags.length > 0) parts.push(`array_contains_any(tags, ${list(filter.tags)})`);
  return parts.length > 0 ? parts.join(' and ') : MATCH_ALL;
}

/** The full-text prefilter: any query word among the drawer's words (a space-delimited word list). */
export function wordsPrefilter(terms: readonly string[]): string {
  return `(${terms.map((t) => `words like ${milvusString(`% ${t} %`)}`).join(' or ')})`;
}

/** ` word1 word2 … ` (distinct lower-case words, space-delimited), capped at the VARCHAR limit. */
export function wordList(content: string): string {
  let out = ' ';
  for (const word of new Set(textTokens(content))) {
    if (Buffer.byteLength(out, 'utf8') + Buffer.byteLength(word, 'utf8') + 1 > MILVUS_VARCHAR_MAX) break;
    out += `${word} `;
  }
  return out;
}

const varchar = (fieldName: string, max: number, isPrimary = false) => ({
  fieldName,
  dataType: 'VarChar',
  ...(isPrimary ? { isPrimary: true } : {}),
  elementTypeParams: { max_length: max },
});

/** The drawer collection schema for `dimensions`-d vectors. */
export function drawerSchema(dimensions: number): Record<string, unknown> {
  return {
    autoId: false,
    enableDynamicField: false,
    fields: [
      varchar('id', 512, true),
      varchar('wing', 512),
      varchar('room', 512),
      { fieldName: 'tags', dataType: 'Array', elementDataType: 'VarChar', elementTypeParams: { max_capacity: 64, max_length: 256 } },
      varchar('content', MILVUS_VARCHAR_MAX),
      varchar('words', MILVUS_VARCHAR_MAX),
      varchar('source_file', 4096),
      { fieldName: 'chunk_index', dataType: 'Int32' },
      varchar('parent_id', 512),
      varchar('filed_at', 64),
      varchar('added_by', 512),
      { fieldName: 'useful', dataType: 'Int8' },
      { fieldName: 'metadata', dataType: 'JSON' },
      varchar('embedder', 512),
      { fieldName: 'vector', dataType: 'FloatVector', elementTypeParams: { dim: String(dimensions) } },
    ],
  };
}

/** The claim collection: one row per claimed drawer collection (Milvus needs a vector field). */
export const CLAIM_SCHEMA = {
  autoId: false,
  enableDynamicField: false,
  fields: [
    varchar('collection', 512, true),
    varchar('holder', 2048),
    varchar('host', 512),
    { fieldName: 'pid', dataType: 'Int64' },
    { fieldName: 'heartbeat', dataType: 'Int64' },
    { fieldName: 'v', dataType: 'FloatVector', elementTypeParams: { dim: '2' } },
  ],
};

export const SCALAR_FIELDS = ['id', 'wing', 'room', 'tags', 'content', 'source_file', 'chunk_index', 'parent_id', 'filed_at', 'added_by', 'useful', 'metadata', 'embedder'];

export type Row = Record<string, unknown>;

/** A drawer as a Milvus row. Null source_file / parent_id are stored as "" and rating null as -1. */
export function toRow(d: StoredDrawer): Row {
  if (Buffer.byteLength(d.content, 'utf8') > MILVUS_VARCHAR_MAX)
    throw new HubError('input.too_large', `drawer ${d.id}: the Milvus backend stores at most ${MILVUS_VARCHAR_MAX} bytes of content per drawer; split it`, { field: 'content' });
  return {
    id: d.id,
    wing: d.wing,
    room: d.room,
    tags: [...d.tags],
    content: d.content,
    words: wordList(d.content),
    source_file: d.source_file ?? '',
    chunk_index: d.chunk_index,
    parent_id: d.parent_id ?? '',
    filed_at: d.filed_at,
    added_by: d.added_by,
    useful: d.useful === null ? -1 : d.useful ? 1 : 0,
    metadata: d.metadata,
    embedder: d.embedder,
    vector: Array.from(d.vector),
  };
}

export function fromRow(r: Row): StoredDrawer {
  let metadata: unknown = r.metadata;
  if (typeof metadata === 'string') {
    try {
      metadata = JSON.parse(metadata) as unknown;
    } catch {
      metadata = {};
    }
  }
  const useful = Number(r.useful ?? -1);
  return {
    id: String(r.id ?? ''),
    wing: String(r.wing ?? ''),
    room: String(r.room ?? ''),
    tags: Array.isArray(r.tags) ? r.tags.map(String) : [],
    content: String(r.content ?? ''),
    source_file: typeof r.source_file === 'string' && r.source_file !== '' ? r.source_file : null,
    chunk_index: Number(r.chunk_index ?? 0),
    parent_id: typeof r.parent_id === 'string' && r.parent_id !== '' ? r.parent_id : null,
    filed_at: String(r.filed_at ?? ''),
    added_by: String(r.added_by ?? ''),
    useful: useful === 1 ? true : useful === 0 ? false : null,
    metadata: metadata && typeof metadata === 'object' && !Array.isArray(metadata) ? (metadata as Record<string, unknown>) : {},
    embedder: String(r.embedder ?? ''),
    vector: Array.isArray(r.vector) ? Float32Array.from(r.vector.map(Number)) : new Float32Array(0),
  };
}
