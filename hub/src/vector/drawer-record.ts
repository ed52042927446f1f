// What the vector adapters do alike with a StoredDrawer: refuse one whose vector has the wrong
// dimension, and read one back from an untyped record (a Postgres row, a Qdrant payload).

import { HubError } from '../errors.js';
import type { StoredDrawer } from './vector-store.js';

/** Throws memory.embedder_mismatch, naming the first drawer whose vector is not `dimensions` long. */
export function checkDimensions(drawers: readonly StoredDrawer[], dimensions: number): void {
  for (const d of drawers)
    if (d.vector.length !== dimensions)
      throw new HubError('memory.embedder_mismatch', `drawer ${d.id} has a ${d.vector.length}-d vector; the store holds ${dimensions}-d`);
}

/**
 * The drawer whose plain fields are in `r`, each coerced to its type and an absent one defaulted;
 * `id`, `metadata` and `vector` as the backend stores them.
 */
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
