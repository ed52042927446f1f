// What the vector adapters do alike with a StoredDrawer: refuse one whose vector has the wrong
// dimension, and read one back from an untyped record (a LanceDB or Postgres row, a Qdrant payload).

import { HubError } from '../errors.js';
import type { StoredDrawer } from './vector-store.js';

/** Throws memory.embedder_mismatch, naming the first drawer whose vector is not `dimensions` long. */
export function checkDimensions(drawers: readonly StoredDrawer[], dimensions: number): void {
  for (const d of drawers)
    if (d.vector.length !== dimensions)
      throw new HubError('memory.embedder_mismatch', `drawer ${d.id} has a ${d.vector.length}-d vector; the store holds ${dimensions}-d`);
}

/** Metadata stored as JSON text: parsed; {} when the column is not text or not JSON. */
export function metadataFromJson(text: unknown): Record<string, unknown> {
  if (typeof text !== 'string') return {};
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return {};
  }
}

/** The fields each backend stores its own way, decoded by the adapter. */
export interface DecodedFields {
  /** The drawer id as stored (coerced to a string). */
  id: unknown;
  metadata: Record<string, unknown>;
  vector: Float32Array;
  /** When the backend does not store tags as a list. */
  tags?: string[];
  /** When the backend does not store the rating as a boolean. */
  useful?: boolean | null;
}

/**
 * The drawer whose plain fields are in `r`, each coerced to its type and an absent one defaulted;
 * the rest as the adapter decoded them.
 */
export function drawerFromRecord(r: Record<string, unknown>, decoded: DecodedFields): StoredDrawer {
  return {
    id: String(decoded.id ?? ''),
    wing: String(r.wing ?? ''),
    room: String(r.room ?? ''),
    tags: decoded.tags ?? (Array.isArray(r.tags) ? r.tags.map(String) : []),
    content: String(r.content ?? ''),
    source_file: typeof r.source_file === 'string' ? r.source_file : null,
    chunk_index: Number(r.chunk_index ?? 0),
    parent_id: typeof r.parent_id === 'string' ? r.parent_id : null,
    filed_at: String(r.filed_at ?? ''),
    added_by: String(r.added_by ?? ''),
    useful: decoded.useful !== undefined ? decoded.useful : typeof r.useful === 'boolean' ? r.useful : null,
    metadata: decoded.metadata,
    embedder: String(r.embedder ?? ''),
    vector: decoded.vector,
  };
}
