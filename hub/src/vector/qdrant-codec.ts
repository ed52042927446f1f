// How drawers look in Qdrant: point ids (UUIDs derived from drawer ids, since Qdrant takes only
// unsigned integers or UUIDs), payloads, and our DrawerFilter as a Qdrant `filter`.

import { createHash } from 'node:crypto';

import { drawerFromRecord } from './drawer-record.js';
import type { DrawerColumn, DrawerFilter, StoredDrawer } from './vector-store.js';

/** A stable UUID (version-5 layout over SHA-1) for a drawer id; the drawer id stays in the payload. */
export function pointId(drawerId: string): string {
  const hash = createHash('sha1').update(`palace-drawer:${drawerId}`, 'utf8').digest();
  hash[6] = ((hash[6] as number) & 0x0f) | 0x50;
  hash[8] = ((hash[8] as number) & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

/** Raw float32 bytes, base64: Qdrant normalises cosine vectors it stores, so the exact vector rides along. */
export function encodeVector(v: Float32Array): string {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
}

export function decodeVector(text: unknown): Float32Array {
  if (typeof text !== 'string' || text === '') return new Float32Array(0);
  const bytes = Buffer.from(text, 'base64');
  const copy = new Uint8Array(bytes.length - (bytes.length % 4));
  copy.set(bytes.subarray(0, copy.length));
  return new Float32Array(copy.buffer);
}

export type Payload = Record<string, unknown>;

export function toPayload(d: StoredDrawer): Payload {
  return {
    drawer_id: d.id,
    wing: d.wing,
    room: d.room,
    tags: [...d.tags],
    content: d.content,
    source_file: d.source_file,
    chunk_index: d.chunk_index,
    parent_id: d.parent_id,
    filed_at: d.filed_at,
    added_by: d.added_by,
    useful: d.useful,
    metadata: d.metadata,
    embedder: d.embedder,
    vector_b64: encodeVector(d.vector),
  };
}

export function fromPayload(p: Payload): StoredDrawer {
  const metadata = p.metadata && typeof p.metadata === 'object' && !Array.isArray(p.metadata) ? (p.metadata as Record<string, unknown>) : {};
  return drawerFromRecord(p, { id: p.drawer_id, metadata, vector: decodeVector(p.vector_b64) });
}

/** The payload fields to fetch: the asked-for columns, everything but the vector, or everything. */
export function payloadSelector(options: { columns?: readonly DrawerColumn[] | undefined; withVectors?: boolean | undefined }): unknown {
  if (options.columns) {
    const fields = options.columns.map((c) => (c === 'id' ? 'drawer_id' : c));
    return options.withVectors ? [...fields, 'vector_b64'] : fields;
  }
  return options.withVectors ? true : { exclude: ['vector_b64'] };
}

export interface QdrantFilter {
  must: unknown[];
  should?: unknown[];
}

/** The Qdrant filter for a DrawerFilter; null when it can match nothing (an empty id list). */
export function qdrantFilter(filter: DrawerFilter): QdrantFilter | null {
  if (filter.ids && filter.ids.length === 0) return null;
  const must: unknown[] = [];
  if (filter.ids) must.push({ has_id: filter.ids.map(pointId) });
  const exact = (key: string, value: string | undefined): void => {
    if (value !== undefined) must.push({ key, match: { value } });
  };
  exact('wing', filter.wing);
  exact('room', filter.room);
  exact('source_file', filter.source_file);
  exact('parent_id', filter.parent_id);
  if (filter.tags && filter.tags.length > 0) must.push({ key: 'tags', match: { any: [...filter.tags] } });
  return { must };
}

/** Payload fields with a keyword index (filters), and the full-text index on content. */
export const KEYWORD_FIELDS = ['drawer_id', 'wing', 'room', 'tags', 'source_file', 'parent_id'] as const;
export const TEXT_INDEX = { type: 'text', tokenizer: 'word', lowercase: true, min_token_len: 1, max_token_len: 40 } as const;
