// A StoredDrawer read back from an untyped record (a Postgres row, a Qdrant payload): each plain field
// coerced to its type, an absent one defaulted. Where the id, metadata and vector live is the caller's.

import type { StoredDrawer } from './vector-store.js';

/** The drawer whose plain fields are in `r`; `id`, `metadata` and `vector` as the backend stores them. */
export function drawerFromRecord(
  r: Record<string, unknown>,
  id: unknown,
  metadata: Record<string, unknown>,
  vector: Float32Array,
): StoredDrawer {
  return {
    id: String(id ?? ''),
    wing: String(r.wing ?? ''),
    room: String(r.room ?? ''),
    tags: Array.isArray(r.tags) ? r.tags.map(String) : [],
    content: String(r.content ?? ''),
    source_file: typeof r.source_file === 'string' ? r.source_file : null,
    chunk_index: Number(r.chunk_index ?? 0),
    parent_id: typeof r.parent_id === 'string' ? r.parent_id : null,
    filed_at: String(r.filed_at ?? ''),
    added_by: String(r.added_by ?? ''),
    useful: typeof r.useful === 'boolean' ? r.useful : null,
    metadata,
    embedder: String(r.embedder ?? ''),
    vector,
  };
}
