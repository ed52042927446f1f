// The memory service: verbatim drawers in wings and rooms, hybrid search (vector + BM25 candidates
// fused into one score, core/fusion.ts), duplicate detection, ratings. Owns the embedder and the vector store handles.

import { createHash } from 'node:crypto';

import { chunkText, joinChunks } from '../../core/chunk.js';
import { countBy, dict } from '../../core/dict.js';
import { sanitizeQuery } from '../../core/sanitize-query.js';
import { isoSeconds } from '../../core/ids.js';
import { invalid, HubError, toHubError } from '../../errors.js';
import type { EmbedWorkersStatus, Embedder, EmbedderInfo } from '../../embed/embedder.js';
import { embedderKey } from '../../embed/embedder.js';
import { nearestEach, type DrawerFilter, type DrawerPatch, type NearestRow, type ScanOptions, type StoredDrawer, type VectorStore } from '../../vector/vector-store.js';
import { hitPresentation, type HitLocation, type HitSnippet } from '../../search/snippet.js';
import { DECISIONS_ROOM, DIARY_ROOM } from './room-names.js';
import { CensusVectorStore, type PlacementCounts, type RowStamp } from './placement-census.js';
import { assertContentSize, drawerContent, drawerId, MEMORY_LIMITS, optionalPlace, placeName, tagList } from './drawer-input.js';
import { AssociationIndex, backfillAssociations } from '../../search/association-index.js';
import type { AssociationStore } from '../../search/association-store.js';
import type { Expander } from '../../search/expand.js';
import { analyzeQuery } from '../../search/query.js';
import { embeddingInput } from './embedding-input.js';
import { rankedSearch, SEARCH_DEFAULTS, type SearchPlan } from '../../search/candidates.js';
import type { MinedFile } from '../../search/path-scan.js';
import { provenanceChecker, type MinedEntry } from '../../search/stale.js';
import type { Replicator } from '../replication/replicator.js';

export const DUPLICATE_THRESHOLD = 0.9;
const EMBED_BATCH = 64;
/** Chunks embedded per step of a duplicate check (it stops at the first chunk without a match). */
const DUPLICATE_CHECK_BATCH = 8;
const UPSERT_BATCH = 1000;
/** Moves remembered per drawer row in metadata.placement_history (oldest dropped first). */
export const PLACEMENT_HISTORY_MAX = 20;

/** One chunk of a source file, with its position in the file's (normalized) text. */
export interface SourceChunk {
  index: number;
  start: number;
  end: number;
  text: string;
  metadata?: Record<string, unknown>;
}

/** One source file to file: placement, provenance, chunks and their vectors (same order). */
export interface SourceFiling {
  source_file: string;
  wing: string;
  room: string;
  tags: string[];
  added_by: string;
  metadata: Record<string, unknown>;
  chunks: readonly SourceChunk[];
  vectors: readonly Float32Array[];
  /** The file was filed before: delete its drawers first (otherwise checked cheaply). */
  replace: boolean;
}

/** Id of chunk `index` of a mined source file: stable across re-mines. */
export function sourceDrawerId(sourceFile: string, index: number): string {
  return `drawer_${hash24('mined', sourceFile, String(index))}`;
}

/** Parent id shared by a mined file's chunks (`palace drawer get` on it returns the whole text). */
export function sourceParentId(sourceFile: string): string {
  return `drawer_${hash24('mined-file', sourceFile)}`;
}

/** A drawer as tools and the CLI show it. */
export interface DrawerView {
  drawer_id: string;
  wing: string;
  room: string;
  tags: string[];
  content: string;
  source_file: string | null;
  filed_at: string;
  /** Who filed it (the spec's name). */
  created_by: string;
  /** Deprecated alias of created_by (MemPalace's name), still returned for one release; read created_by. */
  added_by: string;
  useful: boolean | null;
  chunk_index: number;
  parent_id: string | null;
  metadata: Record<string, unknown>;
  embedder: string;
}

/** What a hit's fused score is made of: each list's normalised score in [0, 1], null when absent from it. */
export interface ScoreComponents {
  vector: number | null;
  text: number | null;
  [k: string]: number | null;
}

export interface SearchHit extends Omit<DrawerView, 'metadata' | 'embedder'> {
  /** One fused score in [0, 1] (x0.5 rated not useful, x1.1 useful); never increases down the list. */
  score: number;
  score_components: ScoreComponents;
  /** Cosine similarity to the query when known (any hit of a search that embedded the query). */
  similarity: number | null;
  matched: string[];
  /** The drawer's file (relative to the mined root when known) and lines; null when unknown (snippet.ts). */
  location: HitLocation | null;
  /** The best-matching few whole lines for the query, terms marked (snippet.ts). */
  snippet: HitSnippet;
  /** For a hit from a mined file: the file's content hash when mined, and when (null otherwise). */
  mined: { sha256: string; at: string } | null;
  /** The mined file has changed or gone since it was mined (re-mining refreshes it). */
  stale: boolean;
  /** For a drawer replicated from another hub: that hub's replica id (docs/memory-replication.md). */
  replicated_from?: string;
}

export interface AddDrawerInput {
  wing?: unknown;
  room?: unknown;
  content?: unknown;
  tags?: unknown;
  source_file?: unknown;
  added_by?: unknown;
  metadata?: Record<string, unknown>;
  force?: unknown;
  /** Near-duplicate similarity threshold (default 0.9); checkpoint passes its dedup_threshold. */
  threshold?: number;
  /** Check and validate only: nothing is written (the result says what would happen). */
  dry_run?: boolean;
}

export interface AddDrawerResult {
  drawer_id: string;
  wing: string;
  room: string;
  chunk_ids?: string[];
  duplicate_of?: string;
  similarity?: number;
  filed: boolean;
  dry_run?: true;
}

/** Runs one write step; the hub runs it under its global request lock (see ToolDef.stepLocked). */
export type WriteStep = <T>(fn: () => Promise<T>) => Promise<T>;

export interface AddDrawerOptions {
  /**
   * Given by callers outside the hub's request lock (palace_add_drawer): the drawer is embedded
   * outside any lock and joins the next group commit, which checks and writes every drawer that
   * arrived meanwhile in one step. Without it the drawer is checked and written at once.
   */
  step?: WriteStep;
}

/** A validated, embedded drawer waiting for its commit. */
interface PendingDrawer {
  id: string;
  wing: string;
  room: string;
  tags: string[];
  addedBy: string;
  sourceFile: string | null;
  chunks: ReturnType<typeof chunkText>;
  vectors: Float32Array[];
  metadata: Record<string, unknown>;
  force: boolean;
  threshold: number;
  resolve: (result: AddDrawerResult) => void;
  reject: (err: unknown) => void;
}

/** A drawer row as export writes and import reads it: everything but the vector and embedder key. */
export type PortableDrawer = Omit<StoredDrawer, 'vector' | 'embedder'>;

/** One entry of metadata.placement_history: where a drawer moved from and to, when, and by what. */
export interface PlacementRecord {
  from: { wing: string; room: string };
  to: { wing: string; room: string };
  at: string;
  via: string;
}

export const PLACEMENT_HISTORY_KEY = 'placement_history';
const ID_BATCH = 500;

function view(d: StoredDrawer): DrawerView {
  return {
    drawer_id: d.id,
    wing: d.wing,
    room: d.room,
    tags: d.tags,
    content: d.content,
    source_file: d.source_file,
    filed_at: d.filed_at,
    created_by: d.added_by,
    added_by: d.added_by,
    useful: d.useful,
    chunk_index: d.chunk_index,
    parent_id: d.parent_id,
    metadata: d.metadata,
    embedder: d.embedder,
  };
}

/** A drawer id that is not one chunk of a longer drawer: moving or deleting a chunk would tear the drawer. */
function wholeDrawerId(raw: unknown): string {
  const id = drawerId(raw);
  const chunk = /^(drawer_[0-9a-f]{24})_c\d+$/.exec(id);
  if (chunk) throw invalid('drawer_id', `'${id}' is one chunk of drawer ${chunk[1]}; move or delete the whole drawer by that id`);
  return id;
}

/** Id of a drawer's first row: the drawer itself, or its chunk 0 when it is chunked. */
function firstChunkId(id: string, chunks: number): string {
  return chunks === 1 ? id : `${id}_c0`;
}

/** A mined project file's path relative to its root (the miner's `rel_path`); undefined for other drawers. */
export function projectPath(d: StoredDrawer): string | undefined {
  return d.metadata.mode === 'projects' && typeof d.metadata.rel_path === 'string' ? d.metadata.rel_path : undefined;
}

function round(x: number, digits: number): number {
  return Number(x.toFixed(digits));
}

function roundOrNull(x: number | null | undefined): number | null {
  return x === null || x === undefined ? null : round(x, 4);
}

/** Cosine similarity of two unit vectors. */
function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] ?? 0) * (b[i] ?? 0);
  return sum;
}

function hash24(...parts: string[]): string {
  return createHash('sha256').update(parts.join('\u0000')).digest('hex').slice(0, 24);
}

function limitOf(value: unknown, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MEMORY_LIMITS.searchMax)
    throw invalid('limit', `limit must be a whole number from 1 to ${MEMORY_LIMITS.searchMax}`);
  return value;
}

export interface MemoryOptions {
  store: VectorStore;
  embedder: Embedder;
  now?: () => Date;
  /** Called once after the first drawer is stored (binds the palace to its embedder). */
  onFirstWrite?: (() => void) | undefined;
  /** The mined project files (from the palace's mined-files manifest): search's path scan and stale hits. */
  minedFiles?: () => readonly MinedFile[];
  /** Which candidate sources and ranking rules search runs (the bench varies it; default SEARCH_DEFAULTS). */
  searchPlan?: Readonly<SearchPlan>;
  /** A mined file's manifest entry (hash, time, size, mtime): search marks hits of changed files stale. */
  minedEntry?: (sourceFile: string) => MinedEntry | undefined;
  /** Loads the mined files (manifest and path index) without holding the event loop; search awaits it first. */
  minedFilesReady?: () => Promise<unknown>;
  /**
   * The palace's persistent term associations (search/association-store.ts): kept up to date by
   * fileSources and removeSources, read by search. Without it, search builds them in memory.
   */
  associations?: AssociationStore;
}

export class Memory {
  private readonly store: CensusVectorStore;
  private readonly embedder: Embedder;
  private readonly now: () => Date;
  private readonly key: string;
  private onFirstWrite: (() => void) | undefined;
  private readonly minedFiles: (() => readonly MinedFile[]) | undefined;
  private readonly minedEntry: ((sourceFile: string) => MinedEntry | undefined) | undefined;
  private readonly minedFilesReady: (() => Promise<unknown>) | undefined;
  /** Term associations of the mined code, for query expansion (warmed when a hub opens memory; a search that expands waits for it). */
  private readonly associationIndex: AssociationIndex | undefined;
  /** The persistent term associations, when the palace keeps them (then there is no associationIndex). */
  private readonly associationStore: AssociationStore | undefined;
  private backfill: Promise<unknown> | undefined;
  private closing = false;
  /** Which candidate sources and ranking rules search runs. */
  searchPlan: Readonly<SearchPlan>;
  /** Memory replication of shared wings (set by openMemory when the palace replicates; docs/memory-replication.md). */
  replicator: Replicator | undefined;
  /** Drawers embedded and waiting for the running group commit to finish (see addDrawer). */
  private pending: PendingDrawer[] = [];
  private committing = false;

  constructor(options: MemoryOptions) {
    this.onFirstWrite = options.onFirstWrite;
    this.minedFiles = options.minedFiles;
    this.minedEntry = options.minedEntry;
    this.minedFilesReady = options.minedFilesReady;
    this.searchPlan = options.searchPlan ?? SEARCH_DEFAULTS;
    // Every write goes through the census, so counts by wing and room never need a scan.
    this.store = options.store instanceof CensusVectorStore ? options.store : new CensusVectorStore(options.store, new Set([DECISIONS_ROOM, DIARY_ROOM]));
    this.associationStore = options.associations;
    this.associationIndex = !options.associations && options.minedFiles ? new AssociationIndex(this.store, options.minedFiles, sourceDrawerId) : undefined;
    this.embedder = options.embedder;
    this.now = options.now ?? (() => new Date());
    this.key = embedderKey(options.embedder.info());
  }

  /**
   * Starts building search's term associations (query expansion) off the request path, so the first
   * search of a long-running hub seldom waits for it (search/association-index.ts).
   */
  warmSearch(onError: (err: unknown) => void): void {
    const ready = this.minedFilesReady?.() ?? Promise.resolve();
    if (!this.searchPlan.expand) return;
    this.associationIndex?.warm(onError);
    // A palace mined before its associations were kept on disk gets them once, in the background.
    const counts = this.associationStore;
    const minedFiles = this.minedFiles;
    if (counts && minedFiles && !this.backfill && !counts.complete())
      this.backfill = ready
        .then(() => backfillAssociations(counts, this.store, minedFiles, sourceDrawerId, { stopped: () => this.closing }))
        .catch(onError)
        .finally(() => (this.backfill = undefined));
  }

  /** Search's term associations for a query: the persistent counts with its stems read, or the in-memory index once built. */
  private async expander(query: string): Promise<Expander | undefined> {
    const counts = this.associationStore;
    if (!counts) return this.associationIndex?.current();
    await counts.prepare(analyzeQuery(query).stems);
    return counts;
  }

  embedderInfo(): EmbedderInfo {
    return this.embedder.info();
  }

  /** The embedder's worker threads (null when it runs in-process). */
  embedWorkers(): EmbedWorkersStatus | null {
    return this.embedder.workers?.() ?? null;
  }

  /** Starts the embedder's workers ahead of a long job (a mine), so its first batch does not wait for them. */
  warmEmbedder(): Promise<void> {
    return this.embedder.warm?.() ?? Promise.resolve();
  }

  private filterOf(raw: { wing?: unknown; room?: unknown; tags?: unknown; source_file?: unknown }): DrawerFilter {
    const filter: DrawerFilter = {};
    const wing = optionalPlace('wing', raw.wing);
    const room = optionalPlace('room', raw.room);
    const tags = tagList(raw.tags);
    if (wing !== undefined) filter.wing = wing;
    if (room !== undefined) filter.room = room;
    if (tags.length > 0) filter.tags = tags;
    if (typeof raw.source_file === 'string' && raw.source_file !== '') filter.source_file = raw.source_file;
    return filter;
  }

  /**
   * Files verbatim content; near-duplicates (cosine ≥ 0.9) return the existing drawer unless forced.
   * With `options.step`, concurrent calls share embedding batches and one group commit (addDrawer's
   * checks run in the commit step, in arrival order, against the store and the drawers before them).
   */
  async addDrawer(input: AddDrawerInput, options: AddDrawerOptions = {}): Promise<AddDrawerResult> {
    if (input.dry_run !== true) {
      const [result] = await this.addDrawers([input], options);
      if (result instanceof Error) throw result;
      if (!result) throw new HubError('internal', 'no result for the drawer');
      return result;
    }
    const d = this.prepareDrawer(input);
    const [same] = await this.store.scan({ ids: [firstChunkId(d.id, d.chunks.length)] }, { columns: ['id'] });
    if (same) return { drawer_id: d.id, wing: d.wing, room: d.room, duplicate_of: d.id, similarity: 1, filed: false };
    const vectors = await this.embedder.embed(d.chunks.map((c) => c.text), 'document');
    if (!d.force) {
      const dup = await this.nearestDuplicate(vectors, d.threshold, []);
      if (dup) return { drawer_id: dup.id, wing: dup.wing, room: dup.room, duplicate_of: dup.id, similarity: dup.similarity, filed: false };
    }
    return { drawer_id: d.id, wing: d.wing, room: d.room, ...(d.chunks.length > 1 ? { chunk_ids: d.chunks.map((_c, i) => `${d.id}_c${i}`) } : {}), filed: false, dry_run: true };
  }

  /** Validates one drawer (throws the HubError naming the bad field) and works out its id and chunks. */
  private prepareDrawer(input: AddDrawerInput): Omit<PendingDrawer, 'vectors' | 'resolve' | 'reject'> {
    const wing = placeName('wing', input.wing);
    const room = placeName('room', input.room);
    const content = drawerContent(input.content);
    const tags = tagList(input.tags);
    const addedBy = typeof input.added_by === 'string' && input.added_by.trim() ? input.added_by.trim() : 'unknown';
    const sourceFile = typeof input.source_file === 'string' && input.source_file ? input.source_file : null;
    const chunks = chunkText(content);
    const id = `drawer_${hash24(wing, room, sourceFile ?? '', content)}`;
    return { id, wing, room, tags, addedBy, sourceFile, chunks, metadata: input.metadata ?? {}, force: input.force === true, threshold: input.threshold ?? DUPLICATE_THRESHOLD };
  }

  /**
   * Files several drawers, each as addDrawer would, checked in list order (a near-duplicate of an
   * earlier item is not filed). Returns one result per item, or the error that refused it; the
   * others are filed all the same. Their chunks are embedded in one request and written in one commit.
   */
  async addDrawers(inputs: readonly AddDrawerInput[], options: AddDrawerOptions = {}): Promise<Array<AddDrawerResult | HubError>> {
    const out: Array<AddDrawerResult | HubError | undefined> = inputs.map(() => undefined);
    const prepared: Array<{ at: number; d: ReturnType<Memory['prepareDrawer']> }> = [];
    inputs.forEach((input, at) => {
      try {
        prepared.push({ at, d: this.prepareDrawer(input) });
      } catch (err) {
        out[at] = toHubError(err);
      }
    });
    // Whether a drawer is stored already (the same content in the same place: filing it again, even
    // forced, must not overwrite its rating, filed_at and added_by) is decided by the commit, once per
    // group: a lookup per call here cost a store query per drawer and saved nothing (it ran beside the
    // embedding, so an exact re-filing paid its embedding anyway).
    const embedded = prepared.length === 0 ? [] : await this.embedder.embed(prepared.flatMap((p) => p.d.chunks.map((c) => c.text)), 'document');
    let at0 = 0;
    const fresh: Array<{ at: number; d: ReturnType<Memory['prepareDrawer']>; vectors: Float32Array[] }> = [];
    for (const { at, d } of prepared) {
      fresh.push({ at, d, vectors: embedded.slice(at0, at0 + d.chunks.length) });
      at0 += d.chunks.length;
    }
    const group: PendingDrawer[] = [];
    const waits = fresh.map(
      ({ at, d, vectors: own }) =>
        new Promise<void>((resolve) => {
          const answer = (r: AddDrawerResult | HubError): void => {
            out[at] ??= r;
            resolve();
          };
          group.push({ ...d, vectors: own, resolve: answer, reject: (err) => answer(toHubError(err)) });
        }),
    );
    if (group.length > 0 && !options.step) await this.commitDrawers(group).catch(() => undefined);
    else if (group.length > 0 && options.step) {
      this.pending.push(...group);
      if (!this.committing) void this.groupCommits(options.step);
    }
    await Promise.all(waits);
    return out.map((r) => r ?? new HubError('internal', 'no result for the drawer'));
  }

  /** Commits the waiting drawers, a group at a time, until none waits (one commit runs at a time). */
  private async groupCommits(step: WriteStep): Promise<void> {
    this.committing = true;
    try {
      while (this.pending.length > 0) {
        // The group is taken once the step runs: whatever arrived while waiting for the lock joins it.
        await step(() => {
          const group = this.pending;
          this.pending = [];
          return this.commitDrawers(group);
        }).catch(() => undefined);
      }
    } finally {
      this.committing = false;
    }
  }

  /**
   * Checks a group of embedded drawers in order (already stored? a near-duplicate of a stored drawer
   * or of one filed before it in the group?) and writes the ones to file in one upsert; then each
   * caller hears its own result. If the group's write (or a check) fails, the group is committed
   * again one drawer at a time, in order, so each hears what filing it alone gives: a drawer the
   * store refuses fails by itself, and a neighbour that was a near-copy of it is checked again.
   */
  private async commitDrawers(group: readonly PendingDrawer[]): Promise<void> {
    let decided: Awaited<ReturnType<Memory['checkGroup']>>;
    try {
      decided = await this.checkGroup(group);
      await this.store.upsert(decided.rows);
    } catch (err) {
      if (group.length === 1) {
        group[0]?.reject(err);
        throw err;
      }
      for (const d of group) await this.commitDrawers([d]).catch(() => undefined);
      return;
    }
    if (decided.rows.length > 0) {
      this.onFirstWrite?.();
      this.onFirstWrite = undefined;
    }
    for (const [i, d] of group.entries()) d.resolve(decided.results[i] as AddDrawerResult);
  }

  /** What a group commit writes (rows) and answers (one result per drawer), from one id lookup and one nearest-row query. */
  private async checkGroup(group: readonly PendingDrawer[]): Promise<{ rows: StoredDrawer[]; results: AddDrawerResult[] }> {
    const filed: PendingDrawer[] = [];
    const rows: StoredDrawer[] = [];
    const results: AddDrawerResult[] = [];
    // The group's stored ids, and each drawer's nearest stored row for its first chunk, looked up
    // together (the checks below run in order and look further only when that one is a match).
    const checked = group.filter((d) => !d.force && d.vectors[0]);
    const [storedRows, nearest] = await Promise.all([
      this.store.scan({ ids: group.map((d) => firstChunkId(d.id, d.chunks.length)) }, { columns: ['id'] }),
      nearestEach(this.store, checked.map((d) => d.vectors[0] as Float32Array)),
    ]);
    const stored = new Set(storedRows.map((r) => r.id));
    const firstHits = new Map(checked.map((d, i) => [d, nearest[i]]));
    const filedAt = isoSeconds(this.now());
    for (const d of group) {
      const { id, wing, room, chunks } = d;
      if (stored.has(firstChunkId(id, chunks.length)) || filed.some((f) => f.id === id)) {
        results.push({ drawer_id: id, wing, room, duplicate_of: id, similarity: 1, filed: false });
        continue;
      }
      if (!d.force) {
        const dup = await this.nearestDuplicate(d.vectors, d.threshold, filed, firstHits.get(d) ?? null);
        if (dup) {
          results.push({ drawer_id: dup.id, wing: dup.wing, room: dup.room, duplicate_of: dup.id, similarity: dup.similarity, filed: false });
          continue;
        }
      }
      filed.push(d);
      results.push({ drawer_id: id, wing, room, ...(chunks.length > 1 ? { chunk_ids: chunks.map((_c, i) => `${id}_c${i}`) } : {}), filed: true });
      rows.push(
        ...chunks.map((c, i) => ({
          id: chunks.length === 1 ? id : `${id}_c${i}`,
          wing,
          room,
          tags: d.tags,
          content: c.text,
          source_file: d.sourceFile,
          chunk_index: i,
          parent_id: chunks.length === 1 ? null : id,
          filed_at: filedAt,
          added_by: d.addedBy,
          useful: null,
          metadata: { ...d.metadata, ...(chunks.length === 1 ? {} : { char_start: c.start, char_end: c.end, chunks: chunks.length }) },
          embedder: this.key,
          vector: d.vectors[i] ?? new Float32Array(0),
        })),
      );
    }
    return { rows, results };
  }

  /**
   * The drawer every new chunk is a near-copy of, if any: the nearest stored drawer, or one of
   * `earlier` (filed before it in the same group commit, not yet searchable), whichever is closer.
   * `firstHit`: the first chunk's nearest stored row when already looked up (null: none stored).
   */
  private async nearestDuplicate(
    vectors: Float32Array[],
    threshold: number,
    earlier: readonly PendingDrawer[],
    firstHit?: NearestRow | null,
  ): Promise<{ id: string; wing: string; room: string; similarity: number } | undefined> {
    let first: { id: string; wing: string; room: string; similarity: number } | undefined;
    for (const [i, vector] of vectors.entries()) {
      const hit = i === 0 && firstHit !== undefined ? firstHit : (await nearestEach(this.store, [vector]))[0];
      let best = hit ? { id: hit.parent_id ?? hit.id, wing: hit.wing, room: hit.room, similarity: 1 - hit.distance } : undefined;
      for (const e of earlier)
        for (const v of e.vectors) {
          const similarity = dot(vector, v);
          if (!best || similarity > best.similarity) best = { id: e.id, wing: e.wing, room: e.room, similarity };
        }
      if (!best || best.similarity < threshold) return undefined;
      first ??= { ...best, similarity: Number(best.similarity.toFixed(4)) };
    }
    return first;
  }

  /** One drawer; a chunked drawer's parent id returns the whole verbatim text rebuilt from its chunks. */
  async getDrawer(rawId: unknown): Promise<DrawerView & { chunk_ids?: string[] }> {
    const id = drawerId(rawId);
    const [direct] = await this.store.scan({ ids: [id] });
    if (direct) return view(direct);
    const chunks = (await this.store.scan({ parent_id: id })).sort((a, b) => a.chunk_index - b.chunk_index);
    const head = chunks[0];
    if (!head) throw new HubError('memory.not_found', `drawer '${id}' not found`, { field: 'drawer_id' });
    const content = joinChunks(chunks.map((c) => ({ start: Number(c.metadata.char_start ?? 0), text: c.content })));
    const { char_start: _s, char_end: _e, ...metadata } = head.metadata;
    return { ...view(head), drawer_id: id, content, chunk_index: 0, parent_id: null, metadata, chunk_ids: chunks.map((c) => c.id) };
  }

  private idFilter(id: string): Promise<DrawerFilter> {
    return this.store.scan({ ids: [id] }, { columns: ['id'] }).then((rows) => (rows.length > 0 ? { ids: [id] } : { parent_id: id }));
  }

  async deleteDrawer(rawId: unknown): Promise<{ drawer_id: string; deleted: number }> {
    const id = wholeDrawerId(rawId);
    const deleted = await this.store.delete(await this.idFilter(id));
    if (deleted === 0) throw new HubError('memory.not_found', `drawer '${id}' not found`, { field: 'drawer_id' });
    return { drawer_id: id, deleted };
  }

  /** Moves or retags a drawer; its verbatim content is never touched. */
  async relocate(rawId: unknown, raw: { wing?: unknown; room?: unknown; tags?: unknown }): Promise<DrawerView & { chunk_ids?: string[] }> {
    const id = wholeDrawerId(rawId);
    const wing = optionalPlace('wing', raw.wing);
    const room = optionalPlace('room', raw.room);
    const tags = raw.tags === undefined ? undefined : tagList(raw.tags);
    if (wing === undefined && room === undefined && tags === undefined) throw invalid('wing', 'give a wing, a room or tags to change');
    const changed = await this.patchDrawers(
      await this.idFilter(id),
      { ...(wing === undefined ? {} : { wing }), ...(room === undefined ? {} : { room }), ...(tags === undefined ? {} : { tags }) },
      'move',
    );
    if (changed === 0) throw new HubError('memory.not_found', `drawer '${id}' not found`, { field: 'drawer_id' });
    return this.getDrawer(id);
  }

  /** Records whether a drawer was useful; a not-useful drawer ranks lower but is never hidden. */
  async rate(rawId: unknown, useful: unknown): Promise<{ drawer_id: string; useful: boolean }> {
    const id = drawerId(rawId);
    if (typeof useful !== 'boolean') throw invalid('useful', 'useful must be true or false');
    const changed = await this.store.patch(await this.idFilter(id), { useful });
    if (changed === 0) throw new HubError('memory.not_found', `drawer '${id}' not found`, { field: 'drawer_id' });
    return { drawer_id: id, useful };
  }

  /** Hybrid search: vector and full-text candidates fused into one score (core/fusion.ts), content quoted verbatim. */
  async search(raw: { query?: unknown; wing?: unknown; room?: unknown; tags?: unknown; source_file?: unknown; limit?: unknown; mode?: unknown }) {
    if (typeof raw.query !== 'string' || raw.query.trim() === '') throw invalid('query', 'query must be a non-empty string');
    const { query, changed } = sanitizeQuery(raw.query);
    const limit = limitOf(raw.limit, 5);
    const mode = raw.mode ?? 'hybrid';
    if (mode !== 'hybrid' && mode !== 'vector' && mode !== 'text') throw invalid('mode', "mode must be 'hybrid', 'vector' or 'text'");
    const filter = this.filterOf(raw);
    // The query's embedding and the term associations (built once per mined-files list) at the same time.
    const [[vector], associations] = await Promise.all([
      mode === 'text' ? [undefined] : this.embedder.embed([query], 'query'),
      this.searchPlan.expand && mode !== 'vector' ? this.expander(query) : undefined,
      this.minedFilesReady?.(),
    ]);
    // Candidates on a fixed window whatever the limit, fused, the test-file prior and the ranking rules (search/candidates.ts).
    const { hits, similarity } = await rankedSearch(
      { store: this.store, minedFiles: this.minedFiles, relPath: projectPath, chunkId: sourceDrawerId, associations: () => associations },
      { query, filter, limit, mode, vector },
      this.searchPlan,
    );
    const fused = hits.slice(0, limit);
    const provenance = provenanceChecker(this.minedEntry);
    const results: SearchHit[] = fused.map(({ item, score, components, ranks }) => {
      const { metadata: _m, embedder: _e, ...rest } = view(item);
      // A hit found by full text alone still has a similarity when its vector came back with it.
      const sim = similarity.get(item.id) ?? (vector && item.vector?.length === vector.length ? dot(vector, item.vector) : undefined);
      return {
        ...rest,
        score: round(score, 6),
        score_components: {
          vector: roundOrNull(components.vector),
          text: roundOrNull(components.text),
          ...Object.fromEntries(Object.entries(components).filter(([k]) => k !== 'vector' && k !== 'text').map(([k, v]) => [k, roundOrNull(v)])),
        },
        similarity: sim === undefined ? null : round(sim, 4),
        matched: Object.keys(ranks),
        ...hitPresentation(item, query),
        ...provenance(item.source_file),
        ...(typeof item.metadata.replicated_from === 'string' ? { replicated_from: item.metadata.replicated_from } : {}),
      };
    });
    return { query: raw.query.length > 500 ? `${raw.query.slice(0, 500)}…` : raw.query, ...(changed ? { sanitized_query: query } : {}), filters: filter, mode, results };
  }

  /**
   * Would this content be refused as a near-duplicate? Judged like palace_add_drawer: chunk by chunk,
   * a duplicate only when every chunk has a stored match at `threshold`. Chunks are embedded a few at
   * a time and the check stops at the first chunk without a match, so a long, new text costs one
   * small embedding rather than the whole text's.
   */
  async checkDuplicate(raw: { content?: unknown; threshold?: unknown }) {
    if (typeof raw.content !== 'string' || raw.content.trim() === '') throw invalid('content', 'content must be a non-empty string');
    assertContentSize(raw.content);
    const threshold = raw.threshold ?? DUPLICATE_THRESHOLD;
    if (typeof threshold !== 'number' || threshold <= 0 || threshold > 1) throw invalid('threshold', 'threshold must be a number in (0, 1]');
    const chunks = chunkText(raw.content).map((c) => c.text);
    const none = { is_duplicate: false, threshold, matches: [] };
    let matches: Array<{ drawer_id: string; wing: string; room: string; similarity: number; content: string }> = [];
    for (let i = 0; i < chunks.length; i += DUPLICATE_CHECK_BATCH) {
      const vectors = await this.embedder.embed(chunks.slice(i, i + DUPLICATE_CHECK_BATCH), 'document');
      for (const vector of vectors) {
        const hits = (await this.store.search(vector, {}, 5))
          .map((h) => ({ drawer_id: h.drawer.id, wing: h.drawer.wing, room: h.drawer.room, similarity: Number((1 - h.distance).toFixed(4)), content: h.drawer.content }))
          .filter((m) => m.similarity >= threshold);
        if (hits.length === 0) return none;
        if (matches.length === 0) matches = hits;
      }
    }
    return { is_duplicate: matches.length > 0, threshold, matches };
  }

  /** Drawer rows per wing and room (kept by the census: no scan after the first). */
  placements(): Promise<PlacementCounts> {
    return this.store.placements();
  }

  /** Ids of the drawer rows rated useful (kept by the census). */
  usefulIds(): Promise<string[]> {
    return this.store.usefulIds();
  }

  /** The newest first-chunk rows of the decisions or diary room, newest first (kept by the census). */
  newestInRoom(room: string, wing: string | undefined, n: number): Promise<RowStamp[]> {
    return this.store.newestInRoom(room, wing, n);
  }

  /**
   * One page of a wing's drawer rows (optionally one room of it) in (filed_at, id) order and how many
   * there are: the census keeps the order of the wings listed lately, so a page needs no scan.
   */
  wingPage(wing: string, room: string | undefined, offset: number, limit: number): Promise<{ ids: string[]; total: number }> {
    return this.store.orderedPage(wing, room, offset, limit);
  }

  /** The newest rows rated useful, newest first (kept by the census). */
  newestUseful(wing: string | undefined, n: number): Promise<RowStamp[]> {
    return this.store.newestUseful(wing, n);
  }

  async listWings(): Promise<{ wings: Record<string, number> }> {
    const wings = dict<number>();
    for (const [wing, rooms] of await this.placements()) wings[wing] = [...rooms.values()].reduce((a, b) => a + b, 0);
    return { wings };
  }

  async listRooms(rawWing?: unknown): Promise<{ wing: string | null; rooms: Record<string, number> }> {
    const wing = optionalPlace('wing', rawWing);
    const rooms = dict<number>();
    for (const [w, byRoom] of await this.placements()) if (!wing || w === wing) for (const [room, n] of byRoom) rooms[room] = (rooms[room] ?? 0) + n;
    return { wing: wing ?? null, rooms };
  }

  async listTags(raw: { wing?: unknown; room?: unknown; min_count?: unknown } = {}): Promise<{ tags: Record<string, number> }> {
    const min = raw.min_count ?? 1;
    if (typeof min !== 'number' || !Number.isInteger(min) || min < 1) throw invalid('min_count', 'min_count must be a whole number ≥ 1');
    const rows = await this.store.scan(this.filterOf({ wing: raw.wing, room: raw.room }), { columns: ['tags'] });
    const tags = Object.fromEntries(Object.entries(countBy(rows, (r) => r.tags)).filter(([, n]) => n >= min).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])));
    return { tags };
  }

  /** Drawer rows (metadata and verbatim chunk text, no vectors) in stable order (filed_at, id). */
  async scanDrawers(filter: DrawerFilter, options: Omit<ScanOptions, 'withVectors'> = {}): Promise<DrawerView[]> {
    return (await this.store.scan(filter, options)).map(view);
  }

  async countDrawers(filter: DrawerFilter = {}): Promise<number> {
    return this.store.count(filter);
  }

  /**
   * Moves or retags every matching drawer row (never its content); returns how many matched. A move
   * goes through relocateRows, which records it in metadata.placement_history.
   */
  async patchDrawers(filter: DrawerFilter, patch: Pick<DrawerPatch, 'wing' | 'room' | 'tags'>, via = 'patch'): Promise<number> {
    const { tags, ...place } = patch;
    if (place.wing === undefined && place.room === undefined) return this.store.patch(filter, patch);
    const matched = await this.store.count(filter);
    if (matched === 0) return 0;
    if (tags !== undefined) await this.store.patch(filter, { tags });
    await this.relocateRows(filter, place, via);
    return matched;
  }

  /**
   * Moves matching rows to a wing and/or room without re-embedding and without touching content: each
   * row is rewritten whole with its own vector, and {from, to, at, via} is appended to its
   * metadata.placement_history (newest last, capped). Rows already there are left alone.
   * Returns how many rows moved.
   */
  async relocateRows(filter: DrawerFilter, target: { wing?: string; room?: string }, via: string): Promise<number> {
    const ids = (await this.store.scan(filter, { columns: ['id', 'wing', 'room'] }))
      .filter((r) => (target.wing !== undefined && r.wing !== target.wing) || (target.room !== undefined && r.room !== target.room))
      .map((r) => r.id);
    const at = isoSeconds(this.now());
    let moved = 0;
    for (let i = 0; i < ids.length; i += ID_BATCH) {
      const rows = await this.store.scan({ ids: ids.slice(i, i + ID_BATCH) }, { withVectors: true });
      const next = rows.map((r) => {
        const to = { wing: target.wing ?? r.wing, room: target.room ?? r.room };
        const prior = r.metadata[PLACEMENT_HISTORY_KEY];
        const record: PlacementRecord = { from: { wing: r.wing, room: r.room }, to, at, via };
        const history = [...(Array.isArray(prior) ? prior : []), record].slice(-PLACEMENT_HISTORY_MAX);
        return { ...r, ...to, metadata: { ...r.metadata, [PLACEMENT_HISTORY_KEY]: history } };
      });
      await this.store.upsert(next);
      moved += next.length;
    }
    return moved;
  }

  /**
   * Files drawers brought from elsewhere (palace import, migrate --from-mempalace) as they were: ids,
   * placement, metadata and filed_at kept, content re-embedded with this palace's embedder. Ids
   * already stored are skipped, so importing the same rows twice changes nothing. Content is
   * validated by the caller.
   */
  async restoreDrawers(rows: readonly PortableDrawer[]): Promise<{ imported: string[]; skipped: string[] }> {
    const imported: string[] = [];
    const skipped: string[] = [];
    for (let i = 0; i < rows.length; i += ID_BATCH) {
      const batch = rows.slice(i, i + ID_BATCH);
      const present = new Set((await this.store.scan({ ids: batch.map((r) => r.id) }, { columns: ['id'] })).map((r) => r.id));
      const fresh = batch.filter((r) => !present.has(r.id));
      skipped.push(...batch.filter((r) => present.has(r.id)).map((r) => r.id));
      if (fresh.length === 0) continue;
      const vectors = await this.embedDocuments(fresh.map((r) => embeddingInput(r.content, r.metadata)));
      await this.store.upsert(fresh.map((r, j) => ({ ...r, embedder: this.key, vector: vectors[j] ?? new Float32Array(0) })));
      imported.push(...fresh.map((r) => r.id));
      this.onFirstWrite?.();
      this.onFirstWrite = undefined;
    }
    return { imported, skipped };
  }

  /** Rows matching `from` whose nearest row matching `to` is at least `threshold` similar (cosine). */
  async crossDuplicates(from: DrawerFilter, to: DrawerFilter, threshold: number, maxRows: number) {
    const rows = await this.store.scan(from, { withVectors: true, limit: maxRows });
    const pairs: Array<{ drawer_id: string; room: string; match_id: string; match_room: string; similarity: number }> = [];
    for (const d of rows) {
      const [hit] = await this.store.search(d.vector, to, 1);
      const similarity = hit ? 1 - hit.distance : 0;
      if (hit && similarity >= threshold)
        pairs.push({ drawer_id: d.id, room: d.room, match_id: hit.drawer.id, match_room: hit.drawer.room, similarity: Number(similarity.toFixed(4)) });
    }
    return { pairs, scanned: rows.length };
  }

  /** Deletes every matching drawer row; returns how many went. */
  async deleteDrawers(filter: DrawerFilter): Promise<number> {
    return this.store.delete(filter);
  }

  async counts(): Promise<{ drawers: number; wings: number; rooms: number }> {
    const places = await this.placements();
    let drawers = 0;
    let rooms = 0;
    for (const byRoom of places.values()) {
      rooms += byRoom.size;
      for (const n of byRoom.values()) drawers += n;
    }
    return { drawers, wings: places.size, rooms };
  }

  /** Embeds document texts in batches of 64 (the embedder coalesces the concurrent calls). */
  async embedDocuments(texts: readonly string[]): Promise<Float32Array[]> {
    const batches: Array<Promise<Float32Array[]>> = [];
    for (let i = 0; i < texts.length; i += EMBED_BATCH) batches.push(this.embedder.embed(texts.slice(i, i + EMBED_BATCH), 'document'));
    return (await Promise.all(batches)).flat();
  }

  /**
   * Files whole source files: each file's previous drawers are replaced by its new chunks in one
   * upsert (ids stable by file + position, so re-mining is idempotent); no near-duplicate check.
   */
  async fileSources(files: readonly SourceFiling[]): Promise<{ filed: number; removed: number }> {
    if (files.length === 0) return { filed: 0, removed: 0 };
    const unknown = files.filter((f) => !f.replace);
    const firstIds = unknown.map((f) => sourceDrawerId(f.source_file, 0));
    const present = firstIds.length === 0 ? [] : await this.store.scan({ ids: firstIds }, { columns: ['id', 'source_file'] });
    const again = new Set(present.map((d) => d.source_file));
    let removed = 0;
    for (const f of files) if (f.replace || again.has(f.source_file)) removed += await this.store.delete({ source_file: f.source_file });
    const filedAt = isoSeconds(this.now());
    const drawers: StoredDrawer[] = files.flatMap((f) =>
      f.chunks.map((c, i) => ({
        id: sourceDrawerId(f.source_file, c.index),
        wing: f.wing,
        room: f.room,
        tags: f.tags,
        content: c.text,
        source_file: f.source_file,
        chunk_index: c.index,
        parent_id: sourceParentId(f.source_file),
        filed_at: filedAt,
        added_by: f.added_by,
        useful: null,
        metadata: { ...f.metadata, ...(c.metadata ?? {}), char_start: c.start, char_end: c.end, chunks: f.chunks.length },
        embedder: this.key,
        vector: f.vectors[i] ?? new Float32Array(0),
      })),
    );
    for (let i = 0; i < drawers.length; i += UPSERT_BATCH) await this.store.upsert(drawers.slice(i, i + UPSERT_BATCH));
    // The term associations follow, file by file: the old chunks' counts out, the new ones in.
    if (this.associationStore) {
      const bySource = new Map<string, StoredDrawer[]>(files.map((f) => [f.source_file, []]));
      for (const d of drawers) if (d.source_file) bySource.get(d.source_file)?.push(d);
      this.associationStore.replaceFiles([...bySource].map(([source_file, own]) => ({ source_file, drawers: own })));
    }
    if (drawers.length > 0) {
      this.onFirstWrite?.();
      this.onFirstWrite = undefined;
    }
    return { filed: drawers.length, removed };
  }

  /** Deletes every drawer mined from these source files; returns how many went. */
  async removeSources(sourceFiles: readonly string[]): Promise<number> {
    let removed = 0;
    for (const sourceFile of sourceFiles) removed += await this.store.delete({ source_file: sourceFile });
    this.associationStore?.removeFiles(sourceFiles);
    return removed;
  }

  /** Drawer counts per embedder key, against the key this memory embeds with (repair-status). */
  async embedderCensus(): Promise<{ drawers: number; current: string; by_embedder: Record<string, number> }> {
    const rows = await this.store.scan({}, { columns: ['embedder'] });
    return { drawers: rows.length, current: this.key, by_embedder: countBy(rows, (r) => r.embedder) };
  }

  async close(): Promise<void> {
    this.closing = true;
    await this.backfill;
    this.associationStore?.close();
    await this.replicator?.stop();
    await this.store.close();
    await this.embedder.close();
  }
}
