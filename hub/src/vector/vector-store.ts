// The VectorStore interface: drawers with their vectors, in our own terms. Adapters are named for
// their technology (lancedb-vector-store.ts; networked ones later) and pass one contract suite.
// Eight methods rather than six: relocation and rating must not re-embed, so `patch` is its own.

import type { PackedScan } from './packed-scan.js';

/** One stored drawer row: verbatim content, placement, provenance and its vector. */
export interface StoredDrawer {
  id: string;
  wing: string;
  room: string;
  tags: string[];
  content: string;
  source_file: string | null;
  chunk_index: number;
  /** Id shared by the chunks of one long addition or one source file. */
  parent_id: string | null;
  filed_at: string;
  added_by: string;
  /** Boolean usefulness rating; null = not rated. */
  useful: boolean | null;
  metadata: Record<string, unknown>;
  /** The embedder the vector came from (`model/dimensions`). */
  embedder: string;
  vector: Float32Array;
}

/** Filters shared by every read; all given conditions must hold; arrays mean "any of". */
export interface DrawerFilter {
  ids?: readonly string[];
  wing?: string;
  room?: string;
  tags?: readonly string[];
  source_file?: string;
  parent_id?: string;
}

/** Fields that can change without re-embedding. Content never changes here. */
export interface DrawerPatch {
  wing?: string;
  room?: string;
  tags?: string[];
  useful?: boolean | null;
}

export type DrawerColumn = Exclude<keyof StoredDrawer, 'vector'>;

export interface ScanOptions {
  limit?: number;
  offset?: number;
  /** Return only these columns (the rest come back empty); vectors only when asked. */
  columns?: readonly DrawerColumn[];
  withVectors?: boolean;
}

export interface FullTextOptions {
  /** 'all' (default): content and every derived field; 'names': symbols and path words only. */
  fields?: 'all' | 'names';
  /** Further words matched beside the query's own, each weighing `weight` (< 1) of a query word (query expansion, search/expand.ts). Backends without weighted queries may ignore it. */
  expansion?: { words: readonly string[]; weight: number };
}

/** The nearest stored row to one query vector, as the near-duplicate check reads it. */
export interface NearestRow {
  id: string;
  parent_id: string | null;
  wing: string;
  room: string;
  /** Cosine distance (0 = same direction). */
  distance: number;
}

/** A store's nearestEach, or one search per vector when it has none (same rows, same order). */
export async function nearestEach(store: Pick<VectorStore, 'search' | 'nearestEach'>, vectors: readonly Float32Array[]): Promise<Array<NearestRow | undefined>> {
  if (vectors.length === 0) return [];
  if (store.nearestEach) return store.nearestEach(vectors);
  return Promise.all(
    vectors.map(async (v) => {
      const [hit] = await store.search(v, {}, 1);
      return hit && { id: hit.drawer.id, parent_id: hit.drawer.parent_id, wing: hit.drawer.wing, room: hit.drawer.room, distance: hit.distance };
    }),
  );
}

/** A store's fullTextScores, or its fullText's ids and scores when it has none. */
export function fullTextScores(
  store: Pick<VectorStore, 'fullText' | 'fullTextScores'>,
  query: string,
  filter: DrawerFilter,
  limit: number,
  options?: FullTextOptions,
): Promise<Array<{ id: string; score: number }>> {
  return store.fullTextScores
    ? store.fullTextScores(query, filter, limit, options)
    : store.fullText(query, filter, limit, options).then((hits) => hits.map((h) => ({ id: h.drawer.id, score: h.score })));
}

export interface VectorStore {
  /** Inserts or replaces drawers by id. */
  upsert(drawers: readonly StoredDrawer[]): Promise<void>;
  /** Changes placement, tags or rating of matching drawers; returns how many changed. */
  patch(filter: DrawerFilter, patch: DrawerPatch): Promise<number>;
  /** Deletes matching drawers; returns how many went. */
  delete(filter: DrawerFilter): Promise<number>;
  /** Drawers matching a filter, in a stable order (filed_at, id). */
  scan(filter: DrawerFilter, options?: ScanOptions): Promise<StoredDrawer[]>;
  /** Nearest drawers by cosine distance (0 = same direction, 2 = opposite). */
  search(vector: Float32Array, filter: DrawerFilter, limit: number): Promise<Array<{ drawer: StoredDrawer; distance: number }>>;
  /**
   * Full-text (BM25) matches on content; higher score is better. `options.fields: 'names'` matches
   * only a drawer's names (the symbols its chunk defines and its file path's words) where the backend
   * indexes them apart (LanceDB); a backend without such a field returns [] for it.
   */
  fullText(query: string, filter: DrawerFilter, limit: number, options?: FullTextOptions): Promise<Array<{ drawer: StoredDrawer; score: number }>>;
  /**
   * fullText's scores alone (same query, same order), without reading the rows: hybrid search's BM25 of
   * the candidates the keyword list did not return (search/candidates.ts). Optional: callers fall back
   * to fullText (fullTextScores below).
   */
  fullTextScores?(query: string, filter: DrawerFilter, limit: number, options?: FullTextOptions): Promise<Array<{ id: string; score: number }>>;
  /**
   * The nearest row (top 1, no filter) to each vector, with only the columns the near-duplicate check
   * reads, in one query where the backend can (LanceDB: one multi-vector query instead of one search
   * per vector). Optional: callers fall back to search (nearestEach above).
   */
  nearestEach?(vectors: readonly Float32Array[]): Promise<Array<NearestRow | undefined>>;
  /** How many drawers match. */
  count(filter?: DrawerFilter): Promise<number>;
  /**
   * What the palace census (memory/drawers/placement-census.ts) loads, computed where the rows are: rows per
   * wing and room, and the rows in `rooms` or rated useful (census columns only). Optional (and
   * undefined from a wrapper over a store without it): the census then scans every row, which on a
   * store in another process means every row's fields crossing the process boundary (seconds at
   * 200k drawers).
   */
  placementSummary?(rooms: readonly string[]): Promise<PlacementSummary | undefined>;
  /** placementSummary packed for a process boundary (packPlacementSummary); a store in another process asks its child for this. */
  placementSummaryPacked?(rooms: readonly string[]): Promise<PackedPlacementSummary | undefined>;
  /** scan of a few string columns packed for a process boundary (packed-scan.ts); a store in another process asks its child for this. */
  scanPacked?(filter: DrawerFilter, options: ScanOptions): Promise<PackedScan>;
  close(): Promise<void>;
}

/** The columns the census reads of a row. */
export const CENSUS_COLUMNS = ['id', 'wing', 'room', 'useful', 'filed_at', 'chunk_index'] as const satisfies readonly DrawerColumn[];

export interface PlacementSummary {
  /** Rows per (wing, room), each place with at least one row once. */
  places: Array<{ wing: string; room: string; rows: number }>;
  /** The rows in the asked rooms or rated useful, with CENSUS_COLUMNS filled. */
  marked: StoredDrawer[];
}

/**
 * A PlacementSummary as it crosses a process boundary: the marked rows' census columns as a few
 * strings and a number list, not tens of thousands of drawer objects (at 200k drawers ~24k marked
 * rows; deserializing them as objects held the hub's event loop ~200-370 ms under load).
 */
export interface PackedPlacementSummary {
  places: PlacementSummary['places'];
  /** Per column, the rows' values joined by NUL. */
  ids: string;
  wings: string;
  rooms: string;
  filedAt: string;
  /** Per row: '1' useful, '0' not useful, '-' unrated. */
  useful: string;
  chunkIndex: number[];
}

export function packPlacementSummary(s: PlacementSummary): PackedPlacementSummary {
  const m = s.marked;
  return {
    places: s.places,
    ids: m.map((d) => d.id).join('\u0000'),
    wings: m.map((d) => d.wing).join('\u0000'),
    rooms: m.map((d) => d.room).join('\u0000'),
    filedAt: m.map((d) => d.filed_at).join('\u0000'),
    useful: m.map((d) => (d.useful === true ? '1' : d.useful === false ? '0' : '-')).join(''),
    chunkIndex: m.map((d) => d.chunk_index),
  };
}

export function unpackPlacementSummary(p: PackedPlacementSummary): PlacementSummary {
  const { columns, marked } = unpackStart(p);
  for (let i = 0; i < p.chunkIndex.length; i++) marked.push(unpackRow(p, columns, i));
  return { places: p.places, marked };
}

/** Rows unpacked between two checks of the clock (unpackPlacementSummarySliced). */
const UNPACK_STEP = 1_000;

/**
 * As unpackPlacementSummary, handing the event loop back every `sliceMs`: at 200k drawers the ~24k
 * marked rows took 26-39 ms in one go while a hub opened its memory (docs/evidence.md, "scale: /healthz").
 */
export async function unpackPlacementSummarySliced(p: PackedPlacementSummary, sliceMs = 8): Promise<PlacementSummary> {
  const { columns, marked } = unpackStart(p);
  let slice = performance.now();
  for (let i = 0; i < p.chunkIndex.length; i++) {
    marked.push(unpackRow(p, columns, i));
    if (i % UNPACK_STEP === UNPACK_STEP - 1 && performance.now() - slice >= sliceMs) {
      await new Promise((resolve) => setImmediate(resolve));
      slice = performance.now();
    }
  }
  return { places: p.places, marked };
}

function unpackStart(p: PackedPlacementSummary): { columns: string[][]; marked: StoredDrawer[] } {
  const n = p.chunkIndex.length;
  return { columns: n === 0 ? [] : [p.ids, p.wings, p.rooms, p.filedAt].map((s) => s.split('\u0000')), marked: [] };
}

/** Rows read without their vector carry this one zero-length array (it has no element to write). */
export const NO_VECTOR = new Float32Array(0);

function unpackRow(p: PackedPlacementSummary, [ids, wings, rooms, filed]: string[][], i: number): StoredDrawer {
  const u = p.useful[i];
  return {
    id: ids?.[i] ?? '',
    wing: wings?.[i] ?? '',
    room: rooms?.[i] ?? '',
    tags: [],
    content: '',
    source_file: null,
    chunk_index: p.chunkIndex[i] ?? 0,
    parent_id: null,
    filed_at: filed?.[i] ?? '',
    added_by: '',
    useful: u === '1' ? true : u === '0' ? false : null,
    metadata: {},
    embedder: '',
    vector: NO_VECTOR,
  };
}
