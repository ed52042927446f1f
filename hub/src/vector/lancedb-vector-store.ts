// The embedded default VectorStore: LanceDB in `<palace>/vectors/`, one connection and one table
// handle per process (a second handle can miss deletes). Cosine distance; BM25 full-text indexes on
// content, on `keywords` (symbols and path tokens), on `identifiers` (the parts of the compound
// identifiers a code drawer uses) and on `context` (its file's leading comment), all derived in
// core/search-keywords.ts, and on `doc` (signatures and doc comments of a code chunk's definitions); an ANN index is built in the background only past ~50k rows (flat search is fast below).
// The table is created in a staging directory and renamed into place, so a full disk never leaves
// a half-created table; one left by an older build (no committed version) is removed on open.

import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import * as lancedb from '@lancedb/lancedb';
import { Field, FixedSizeList, Float32, Int32, Int8, Schema, Utf8 } from 'apache-arrow';

import { docWords, fileContext, identifierWords, searchKeywords } from '../core/search-keywords.js';
import { HubError } from '../errors.js';
import type { Logger } from '../log.js';
import { checkDimensions, drawerFromRecord, metadataFromJson } from './drawer-record.js';
import { countPlaces, packMarked } from './arrow-census.js';
import { arrowTable } from './arrow-rows.js';
import { IdFilter } from './id-filter.js';
import { packScan, type PackedScan } from './packed-scan.js';
import {
  CENSUS_COLUMNS,
  unpackPlacementSummary,
  type DrawerFilter,
  type DrawerPatch,
  type FullTextOptions,
  type NearestRow,
  type PackedPlacementSummary,
  type PlacementSummary,
  type ScanOptions,
  type StoredDrawer,
  type VectorStore,
} from './vector-store.js';

const TABLE = 'drawers';
/** Columns a table written by an older build gets in place when opened (no rebuild needed). */
export const IN_PLACE_COLUMNS: readonly string[] = ['keywords', 'identifiers', 'context', 'doc'];
/** Columns with a BM25 index that full-text search matches (any may match; the scores add up). */
const FTS_COLUMNS = ['content', 'keywords', 'identifiers', 'context', 'doc'] as const;
/** Rows re-derived per write while filling the `identifiers` of a table written before it existed. */
const BACKFILL_BATCH = 500;
const ANN_THRESHOLD = 50_000;
/**
 * From this many rows a B-tree index on `id` is kept: lookups by id (wake-up, drawer get, the census's
 * reads of the rows a write touches) and mergeInsert's match stop scanning the whole table.
 */
const ID_INDEX_THRESHOLD = 10_000;
/** Up to this many rows an upsert first looks its ids up, to append them when none is stored (upsert). */
const APPEND_LOOKUP_MAX = 1000;

/** Errno texts of a full disk or a file-size limit as LanceDB (Rust std::io) reports them. */
const FULL_DISK = /No space left on device|os error 28\b|File too large|os error 27\b|Disk quota exceeded|os error 122\b/i;

/** A LanceDB failure as a HubError: a full disk is `store.full` (with a clean message); others pass. */
export function lanceError(err: unknown): unknown {
  if (err instanceof HubError) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (FULL_DISK.test(message))
    return new HubError('store.full', 'the disk is full (or a file-size limit was reached) under the vector store; free space and retry, nothing was stored', {
      cause: err,
    });
  return err;
}

async function guarded<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw lanceError(err);
  }
}

/** Runs a LanceDB commit again when it lost a race with another commit on the table (up to 5 tries, backing off). */
export async function retryOnCommitConflict<T>(run: () => Promise<T>, tries = 5, delayMs = 50): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (err) {
      if (attempt >= tries || !/retryable commit conflict/i.test((err as Error).message ?? '')) throw err;
      await new Promise((resolve) => setTimeout(resolve, delayMs * attempt));
    }
  }
}

/**
 * Whether `<vectors>/drawers.lance` exists without one committed version: what a first write that
 * failed part-way (a full disk) left in older builds. Such a directory holds no data (a table's
 * first version is its empty schema) and LanceDB refuses to open it for good.
 */
export function halfCreatedTable(vectorsDir: string): boolean {
  const table = join(vectorsDir, `${TABLE}.lance`);
  if (!existsSync(table)) return false;
  const versions = join(table, '_versions');
  if (!existsSync(versions)) return true;
  return !readdirSync(versions).some((name) => name.endsWith('.manifest'));
}

/** Creates the empty table in a staging directory beside `dir`, then renames it into place. */
async function createTableAtomically(dir: string, dimensions: number): Promise<void> {
  const staging = join(dir, `.staging-${process.pid}-${Date.now()}`);
  try {
    mkdirSync(staging, { mode: 0o700 });
    const db = await lancedb.connect(staging);
    try {
      (await db.createEmptyTable(TABLE, schemaFor(dimensions))).close();
    } finally {
      db.close();
    }
    renameSync(join(staging, `${TABLE}.lance`), join(dir, `${TABLE}.lance`));
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/** Whether two schemas have the same fields in the same order (names, types, nullability). */
function sameFields(a: Schema, b: { fields: ReadonlyArray<{ name: string; nullable: boolean; type: { toString(): string } }> }): boolean {
  return a.fields.length === b.fields.length && a.fields.every((f, i) => f.name === b.fields[i]?.name && f.nullable === b.fields[i]?.nullable && String(f.type) === String(b.fields[i]?.type));
}

/** SQL string literal for LanceDB filters. */
function lit(value: string): string {
  return `'${value.replace(/'/g, "''")}'`;
}

/** Tags are stored as `|a|b|` so one tag is matched with LIKE '%|a|%'. */
function encodeTags(tags: readonly string[]): string {
  return tags.length === 0 ? '' : `|${tags.join('|')}|`;
}

function decodeTags(text: unknown): string[] {
  return typeof text === 'string' && text.length > 0 ? text.split('|').filter(Boolean) : [];
}

function likeEscape(value: string): string {
  return value.replace(/[\\%_]/g, (c) => `\\${c}`);
}

export function filterSql(filter: DrawerFilter): string | undefined {
  const parts: string[] = [];
  if (filter.ids) parts.push(filter.ids.length === 0 ? 'false' : `id IN (${filter.ids.map(lit).join(', ')})`);
  if (filter.wing !== undefined) parts.push(`wing = ${lit(filter.wing)}`);
  if (filter.room !== undefined) parts.push(`room = ${lit(filter.room)}`);
  if (filter.source_file !== undefined) parts.push(`source_file = ${lit(filter.source_file)}`);
  if (filter.parent_id !== undefined) parts.push(`parent_id = ${lit(filter.parent_id)}`);
  if (filter.tags && filter.tags.length > 0)
    parts.push(`(${filter.tags.map((t) => `tags LIKE ${lit(`%|${likeEscape(t)}|%`)} ESCAPE '\\'`).join(' OR ')})`);
  return parts.length > 0 ? parts.join(' AND ') : undefined;
}

export function schemaFor(dimensions: number): Schema {
  return new Schema([
    new Field('id', new Utf8(), false),
    new Field('wing', new Utf8(), false),
    new Field('room', new Utf8(), false),
    new Field('tags', new Utf8(), false),
    new Field('content', new Utf8(), false),
    new Field('source_file', new Utf8(), true),
    new Field('chunk_index', new Int32(), false),
    new Field('parent_id', new Utf8(), true),
    new Field('filed_at', new Utf8(), false),
    new Field('added_by', new Utf8(), false),
    new Field('useful', new Int8(), true),
    new Field('metadata_json', new Utf8(), false),
    new Field('embedder', new Utf8(), false),
    new Field('vector', new FixedSizeList(dimensions, new Field('item', new Float32(), true)), false),
    // Symbols and path tokens, derived from metadata on every write; full-text indexed beside content.
    new Field('keywords', new Utf8(), true),
    // Parts of the compound identifiers of a code drawer's content ('' otherwise), full-text indexed;
    // NULL only in rows written before the column existed, until the backfill derives them.
    new Field('identifiers', new Utf8(), true),
    // The leading comment of the file a code drawer was cut from ('' otherwise), full-text indexed.
    new Field('context', new Utf8(), true),
    // Chunk enrichment (issue 32), derived from metadata the miner records: the signatures and doc
    // comments of a code chunk's definitions; '' otherwise.
    new Field('doc', new Utf8(), true),
  ]);
}

type Row = Record<string, unknown>;

function toRow(d: StoredDrawer): Row {
  return {
    id: d.id,
    wing: d.wing,
    room: d.room,
    tags: encodeTags(d.tags),
    content: d.content,
    source_file: d.source_file,
    chunk_index: d.chunk_index,
    parent_id: d.parent_id,
    filed_at: d.filed_at,
    added_by: d.added_by,
    useful: d.useful === null ? null : d.useful ? 1 : 0,
    metadata_json: JSON.stringify(d.metadata),
    embedder: d.embedder,
    vector: d.vector,
    keywords: searchKeywords(d.metadata),
    identifiers: identifierWords(d.content, d.metadata),
    context: fileContext(d.metadata),
    doc: docWords(d.metadata),
  };
}

function fromRow(row: Row): StoredDrawer {
  const vector = row.vector as { toArray?: () => Float32Array } | number[] | undefined;
  return drawerFromRecord(row, {
    id: row.id,
    metadata: metadataFromJson(row.metadata_json),
    tags: decodeTags(row.tags),
    useful: row.useful === null || row.useful === undefined ? null : Number(row.useful) === 1,
    vector:
      vector === undefined || vector === null
        ? new Float32Array(0)
        : Array.isArray(vector)
          ? Float32Array.from(vector)
          : Float32Array.from(vector.toArray?.() ?? []),
  });
}

export interface LanceDbOptions {
  /** The palace directory; the store lives in `<palace>/vectors`. */
  palacePath: string;
  dimensions: number;
  log: Logger;
  /** Rows from which the ANN index is built (default 50,000; tests use a small table). */
  annThreshold?: number;
  /**
   * Keep an IdFilter (a long-running hub's LanceDB process): lookups by id and upserts skip the
   * query for ids never written. Its ids are read once, in the background, at the first write.
   */
  idFilter?: boolean;
}

/** Compaction cadence and version retention (see afterWrite). */
const OPTIMIZE_ROWS = 1000;
const OPTIMIZE_WRITES = 20;
const VERSION_RETENTION_MS = 60 * 60_000;
/**
 * Cache bounds of the LanceDB session. Its defaults (6 GB of index cache, 1 GB of metadata) are sized
 * for a database server, not a hub beside an editor; these hold an IVF-PQ index of a few hundred
 * thousand drawers and the metadata of a compacted table.
 */
const INDEX_CACHE_BYTES = 256n * 1024n * 1024n;
const METADATA_CACHE_BYTES = 64n * 1024n * 1024n;

export class LanceDbVectorStore implements VectorStore {
  private ftsReady = false;
  private ftsBuild: Promise<boolean> | undefined;
  private annStarted = false;
  private idIndexStarted = false;
  private maintenance: Promise<void> = Promise.resolve();
  private pendingJobs = 0;
  private rowsSinceOptimize = 0;
  private writesSinceOptimize = 0;
  /** Upserts run one at a time: an append decided on "no id is stored yet" must not race another. */
  private upserts: Promise<unknown> = Promise.resolve();
  /** Bumped as each write (upsert, patch, delete) starts and again as it ends. */
  private writeGen = 0;
  private writesInFlight = 0;
  /**
   * The ids the last id-only scan asked for and did not find, with the write generation it started
   * at (no write in flight): an upsert of just those ids with no write since needs no second lookup
   * (the memory's group commit scans its ids right before writing them).
   */
  private absentIds: { gen: number; ids: Set<string> } | undefined;
  /** The ids that may be stored (idFilter option): a group commit's id checks need no query for new ids. */
  private readonly ids: IdFilter | undefined;
  /** The schema writes are built in, when the table's own is exactly it (set at open; else rows go as objects). */
  private arrowSchema: Schema | undefined;

  private constructor(
    private readonly db: lancedb.Connection,
    private readonly table: lancedb.Table,
    private readonly dimensions: number,
    private readonly log: Logger,
    private readonly annThreshold: number = ANN_THRESHOLD,
    idFilter = false,
  ) {
    this.ids = idFilter ? new IdFilter() : undefined;
  }

  static async open(options: LanceDbOptions): Promise<LanceDbVectorStore> {
    return guarded(() => LanceDbVectorStore.openUnguarded(options));
  }

  private static async openUnguarded(options: LanceDbOptions): Promise<LanceDbVectorStore> {
    const dir = join(options.palacePath, 'vectors');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    for (const name of readdirSync(dir)) if (name.startsWith('.staging-')) rmSync(join(dir, name), { recursive: true, force: true });
    if (halfCreatedTable(dir)) {
      options.log.warn('removing a half-created vectors table (no committed version, so no data): a first write failed part-way, e.g. on a full disk', {
        path: join(dir, `${TABLE}.lance`),
      });
      rmSync(join(dir, `${TABLE}.lance`), { recursive: true, force: true });
    }
    if (!existsSync(join(dir, `${TABLE}.lance`))) await createTableAtomically(dir, options.dimensions);
    const db = await lancedb.connect(dir, {}, new lancedb.Session(INDEX_CACHE_BYTES, METADATA_CACHE_BYTES));
    const table = await db.openTable(TABLE);
    const vectorField = (await table.schema()).fields.find((f) => f.name === 'vector');
    const stored = (vectorField?.type as { listSize?: number } | undefined)?.listSize;
    if (stored !== undefined && stored !== options.dimensions)
      throw new HubError(
        'memory.embedder_mismatch',
        `the palace's vectors have ${stored} dimensions but the embedder makes ${options.dimensions}; run \`palace set-embedder --force\` and rebuild the index`,
      );
    // Tables written before the keywords column get it in place (empty; re-mining fills it).
    if (!(await table.schema()).fields.some((f) => f.name === 'keywords')) await table.addColumns([{ name: 'keywords', valueSql: "CAST('' AS STRING)" }]);
    // Tables written before the identifiers column get it in place as NULL (= not derived yet).
    if (!(await table.schema()).fields.some((f) => f.name === 'identifiers')) await table.addColumns([{ name: 'identifiers', valueSql: 'CAST(NULL AS STRING)' }]);
    // The context column is derived from metadata only drawers mined since carry: '' until re-mined.
    if (!(await table.schema()).fields.some((f) => f.name === 'context')) await table.addColumns([{ name: 'context', valueSql: "CAST('' AS STRING)" }]);
    // So is the enrichment column (doc): '' until the file is re-mined.
    if (!(await table.schema()).fields.some((f) => f.name === 'doc')) await table.addColumns([{ name: 'doc', valueSql: "CAST('' AS STRING)" }]);
    const store = new LanceDbVectorStore(db, table, options.dimensions, options.log, options.annThreshold, options.idFilter === true);
    const expected = schemaFor(options.dimensions);
    if (sameFields(expected, await table.schema())) store.arrowSchema = expected;
    const indices = await table.listIndices();
    store.ftsReady = FTS_COLUMNS.every((c) => indices.some((i) => i.columns.includes(c)));
    store.annStarted = indices.some((i) => i.columns.includes('vector'));
    store.idIndexStarted = indices.some((i) => i.columns.includes('id'));
    // Its full-text index is built only after every row has its identifiers, so a missing index is
    // what says a fill may be due (also one a crash cut short); with the index there, nothing is read.
    if (!indices.some((i) => i.columns.includes('identifiers'))) await store.fillIdentifiers();
    // A palace that grew past the threshold before this index existed gets it in the background.
    if (!store.idIndexStarted) store.ensureIdIndex();
    // So does a large table without its ANN index: one whose build a stopped process cut short, or
    // one whose rows were all rewritten (the identifiers fill); otherwise only the next write would
    // start it, and a palace that is only read would search flat for good (200k drawers: ~210 ms).
    if (!store.annStarted) store.ensureAnnIndex();
    return store;
  }

  /**
   * Derives `identifiers` (and `keywords`, which a table older than that column left empty) for the
   * rows written before the column existed (NULL), in batches, before the store is handed out: no
   * other write can interleave. Resumable: each batch commits on its own, a fill cut short continues
   * on the next open.
   */
  private async fillIdentifiers(): Promise<void> {
    const pending = await this.table.countRows('identifiers IS NULL');
    if (pending === 0) return;
    this.log.info(`deriving the identifier words of ${pending} drawers written by an older build (once)`);
    let filled = 0;
    for (;;) {
      const rows = (await this.table.query().where('identifiers IS NULL').limit(BACKFILL_BATCH).toArray()) as Row[];
      if (rows.length === 0) break;
      await guarded(() => this.table.mergeInsert('id').whenMatchedUpdateAll().execute(this.data(rows.map((r) => toRow(fromRow(r))))));
      filled += rows.length;
    }
    // One compaction after the fill (not one per batch racing the next batch's write).
    this.afterWrite(filled);
  }

  /**
   * Inserts or replaces by id. Rows whose ids are all new (a drawer filed once: the usual write) are
   * appended: a lookup of the ids plus an append cost about half of mergeInsert's join, whatever the
   * batch size (measured: ~7 ms of CPU against ~16 ms on a small table); the lookup is skipped when
   * the last id-only scan found none of them and nothing was written since (absentIds). Any id
   * already stored takes mergeInsert as before.
   */
  async upsert(drawers: readonly StoredDrawer[]): Promise<void> {
    if (drawers.length === 0) return;
    checkDimensions(drawers, this.dimensions);
    // An id given twice is written once, as its last occurrence (mergeInsert would insert both).
    const byId = new Map(drawers.map((d) => [d.id, d]));
    const rows = [...byId.values()].map(toRow);
    // Decided before the ids are recorded as (maybe) stored, which is before their write starts.
    const fresh = this.ids?.ready() === true && [...byId.keys()].every((id) => this.ids?.absent(id));
    this.ids?.add(byId.keys());
    this.ids?.load(
      () => this.allIds(),
      (err) => this.log.warn('reading the stored ids failed; lookups by id query the table', { message: (err as Error).message }),
    );
    const run = async (): Promise<void> => {
      const known = this.absentIds;
      const seen = fresh || (known !== undefined && known.gen === this.writeGen && this.writesInFlight === 0 && [...byId.keys()].every((id) => known.ids.has(id)));
      this.writeGen++;
      this.writesInFlight++;
      try {
        await this.write(rows, seen || (byId.size <= APPEND_LOOKUP_MAX && (await this.table.query().where(filterSql({ ids: [...byId.keys()] }) ?? 'false').select(['id']).limit(1).toArray()).length === 0));
      } finally {
        this.writesInFlight--;
        this.writeGen++;
      }
    };
    const next = this.upserts.then(run, run);
    this.upserts = next.catch(() => undefined);
    await next;
    this.afterWrite(drawers.length);
  }

  /** Appends `rows` (`fresh`: none of their ids is stored) or merges them by id. */
  private async write(rows: Row[], fresh: boolean): Promise<void> {
    const data = this.data(rows);
    // A commit that loses a race with a background compaction is tried again (compaction runs every 20 writes).
    if (fresh) await guarded(() => retryOnCommitConflict(() => this.table.add(data)));
    else await guarded(() => retryOnCommitConflict(() => this.table.mergeInsert('id').whenMatchedUpdateAll().whenNotMatchedInsertAll().execute(data)));
  }

  /**
   * Rows as LanceDB takes them: one Arrow batch of the table's schema (no per-value type inference,
   * vectors copied once), or, for a table whose schema is not exactly this build's, row objects.
   */
  private data(rows: Row[]): lancedb.Data {
    if (this.arrowSchema) return arrowTable(this.arrowSchema, rows);
    return rows.map((r) => ({ ...r, vector: Array.from(r.vector as Float32Array) }));
  }

  /** Runs a patch or delete with the write generation bumped around it (see absentIds). */
  private async counted<T>(fn: () => Promise<T>): Promise<T> {
    this.writeGen++;
    this.writesInFlight++;
    try {
      return await fn();
    } finally {
      this.writesInFlight--;
      this.writeGen++;
    }
  }

  async patch(filter: DrawerFilter, patch: DrawerPatch): Promise<number> {
    const values: Record<string, string> = {};
    if (patch.wing !== undefined) values.wing = lit(patch.wing);
    if (patch.room !== undefined) values.room = lit(patch.room);
    if (patch.tags !== undefined) values.tags = lit(encodeTags(patch.tags));
    if (patch.useful !== undefined) values.useful = patch.useful === null ? 'NULL' : patch.useful ? '1' : '0';
    if (Object.keys(values).length === 0) return 0;
    const where = filterSql(filter);
    const result = await this.counted(() => guarded(() => retryOnCommitConflict(() => this.table.update({ valuesSql: values, ...(where ? { where } : {}) }))));
    this.afterWrite(1);
    return Number((result as { rowsUpdated?: number }).rowsUpdated ?? 0);
  }

  async delete(filter: DrawerFilter): Promise<number> {
    const where = filterSql(filter) ?? 'true';
    const before = await this.table.countRows(where === 'true' ? undefined : where);
    if (before === 0) return 0;
    await this.counted(() => guarded(() => retryOnCommitConflict(() => this.table.delete(where))));
    this.afterWrite(1);
    return before;
  }

  async scan(filter: DrawerFilter, options: ScanOptions = {}): Promise<StoredDrawer[]> {
    const idsOnly = filter.ids !== undefined && Object.entries(filter).every(([k, v]) => k === 'ids' || v === undefined);
    const gen = idsOnly && this.writesInFlight === 0 ? this.writeGen : undefined;
    // Ids the filter knows were never written are not looked up; none left, no query at all.
    const maybe = idsOnly && this.ids?.ready() ? filter.ids?.filter((id) => !this.ids?.absent(id)) : undefined;
    if (maybe?.length === 0) {
      if (gen !== undefined && gen === this.writeGen) this.absentIds = { gen, ids: new Set(filter.ids) };
      return [];
    }
    let query = this.table.query();
    const where = filterSql(maybe ? { ids: maybe } : filter);
    if (where) query = query.where(where);
    const columns = options.columns
      ? [...options.columns, ...(options.withVectors ? ['vector'] : [])].map((c) => (c === 'metadata' ? 'metadata_json' : c))
      : undefined;
    if (columns) query = query.select(columns);
    else if (!options.withVectors)
      query = query.select(['id', 'wing', 'room', 'tags', 'content', 'source_file', 'chunk_index', 'parent_id', 'filed_at', 'added_by', 'useful', 'metadata_json', 'embedder']);
    const rows = (await query.toArray()) as Row[];
    // (filed_at, id) by code unit, as the census orders a wing (placement-census.ts byFiledAt).
    const drawers = rows.map(fromRow).sort((a, b) => (a.filed_at < b.filed_at ? -1 : a.filed_at > b.filed_at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    if (gen !== undefined && gen === this.writeGen) {
      const found = new Set(drawers.map((d) => d.id));
      this.absentIds = { gen, ids: new Set((filter.ids ?? []).filter((id) => !found.has(id))) };
    }
    const offset = options.offset ?? 0;
    return drawers.slice(offset, options.limit === undefined ? undefined : offset + options.limit);
  }

  /** Every stored id (the IdFilter's load): the id column alone, read as Arrow. */
  private async allIds(): Promise<string[]> {
    const table = await this.table.query().select(['id']).toArrow();
    const ids: string[] = [];
    for (const id of table.getChild('id') ?? []) ids.push(String(id));
    return ids;
  }

  /** scan, its few string columns packed (the process store's wing orders cross as strings). */
  async scanPacked(filter: DrawerFilter, options: ScanOptions): Promise<PackedScan> {
    return packScan(await this.scan(filter, options), options.columns ?? []);
  }

  async search(vector: Float32Array, filter: DrawerFilter, limit: number): Promise<Array<{ drawer: StoredDrawer; distance: number }>> {
    let query = this.refined(this.table.vectorSearch(Array.from(vector)).distanceType('cosine')).limit(limit);
    const where = filterSql(filter);
    if (where) query = query.where(where);
    const rows = (await query.toArray()) as Row[];
    return rows.map((row) => ({ drawer: fromRow(row), distance: Number(row._distance) }));
  }

  /**
   * refineFactor re-ranks ANN candidates by exact distance. A flat search (no ANN index yet) has
   * exact distances already and gains nothing from it but an extra step (~0.1-0.9 ms of a ~3-14 ms
   * query on a small table, measured), so it is asked for once the index build has started.
   */
  private refined(query: lancedb.VectorQuery): lancedb.VectorQuery {
    return this.annStarted ? query.refineFactor(4) : query;
  }

  /** One multi-vector query for all of them (top 1 each, the columns the near-duplicate check reads). */
  async nearestEach(vectors: readonly Float32Array[]): Promise<Array<NearestRow | undefined>> {
    const [first, ...rest] = vectors;
    if (!first) return [];
    let query = this.table.vectorSearch(first);
    for (const v of rest) query = query.addQueryVector(v);
    const rows = (await this.refined(query.distanceType('cosine')).select(['id', 'parent_id', 'wing', 'room', '_distance']).limit(1).toArray()) as Row[];
    const out: Array<NearestRow | undefined> = vectors.map(() => undefined);
    for (const row of rows) {
      // A single query vector carries no query_index; several do, one row (at most) per vector.
      const at = rest.length === 0 ? 0 : Number(row.query_index);
      const distance = Number(row._distance);
      const seen = out[at];
      if (seen && seen.distance <= distance) continue;
      out[at] = { id: String(row.id), parent_id: row.parent_id === null || row.parent_id === undefined ? null : String(row.parent_id), wing: String(row.wing), room: String(row.room), distance };
    }
    return out;
  }

  async fullText(text: string, filter: DrawerFilter, limit: number, options: FullTextOptions = {}): Promise<Array<{ drawer: StoredDrawer; score: number }>> {
    const rows = await this.fullTextRows(text, filter, limit, options, undefined);
    return rows.map((row) => ({ drawer: fromRow(row), score: Number(row._score) }));
  }

  /** The same query as fullText, reading only the id column (no content, vector or metadata). */
  async fullTextScores(text: string, filter: DrawerFilter, limit: number, options: FullTextOptions = {}): Promise<Array<{ id: string; score: number }>> {
    const rows = await this.fullTextRows(text, filter, limit, options, ['id', '_score']);
    return rows.map((row) => ({ id: String(row.id), score: Number(row._score) }));
  }

  private async fullTextRows(text: string, filter: DrawerFilter, limit: number, options: FullTextOptions, select: string[] | undefined): Promise<Row[]> {
    if (!(await this.ensureFts())) return [];
    const columns = options.fields === 'names' ? ['keywords'] : [...FTS_COLUMNS];
    const words = options.expansion?.words.filter((w) => /^[\p{L}\p{N}_$]+$/u.test(w)) ?? [];
    // Expansion words as a second, down-weighted clause: a drawer matching either counts, the scores add.
    const fts: lancedb.FullTextQuery =
      words.length > 0 && options.expansion
        ? new lancedb.BooleanQuery([
            // Boosts below 1 act as 0 in LanceDB 0.37 (measured): the query's own words are boosted by
            // 1 / weight instead, which gives the same ranking.
            [lancedb.Occur.Should, new lancedb.MultiMatchQuery(text, columns, { boosts: columns.map(() => 1 / Math.min(1, Math.max(0.1, options.expansion?.weight ?? 1))) })],
            [lancedb.Occur.Should, new lancedb.MultiMatchQuery(words.join(' '), columns)],
          ])
        : new lancedb.MultiMatchQuery(text, columns);
    let query = this.table.query().fullTextSearch(fts, {}).limit(limit);
    const where = filterSql(filter);
    if (where) query = query.where(where);
    if (select) query = query.select(select);
    return (await query.toArray()) as Row[];
  }

  async count(filter: DrawerFilter = {}): Promise<number> {
    return this.table.countRows(filterSql(filter));
  }

  /**
   * The census's load, summed here: two narrow reads, read column by column (arrow-census.ts), and
   * only ~a place per wing and room plus the marked rows go back.
   */
  async placementSummaryPacked(rooms: readonly string[]): Promise<PackedPlacementSummary | undefined> {
    const places = countPlaces(await this.table.query().select(['wing', 'room']).toArrow());
    const marked = rooms.length > 0 ? `room IN (${rooms.map(lit).join(', ')}) OR useful = 1` : 'useful = 1';
    return packMarked(places, await this.table.query().where(marked).select([...CENSUS_COLUMNS]).toArrow());
  }

  async placementSummary(rooms: readonly string[]): Promise<PlacementSummary | undefined> {
    const packed = await this.placementSummaryPacked(rooms);
    return packed && unpackPlacementSummary(packed);
  }

  /**
   * Builds the FTS index once: concurrent first searches share one build (two would conflict). A
   * build that loses a race with a background compaction (LanceDB: "Retryable commit conflict") is
   * tried again, a few times, rather than leaving that search without its keyword half. It is not
   * queued behind maintenance: a search must not wait out an ANN index build.
   */
  private ensureFts(): Promise<boolean> {
    if (this.ftsReady) return Promise.resolve(true);
    this.ftsBuild ??= (async () => {
      if ((await this.table.countRows()) === 0) return false;
      const present = await this.table.listIndices();
      for (const column of FTS_COLUMNS)
        if (!present.some((i) => i.columns.includes(column)))
          await guarded(() => retryOnCommitConflict(() => this.table.createIndex(column, { config: lancedb.Index.fts(), replace: true })));
      this.ftsReady = true;
      return true;
    })().finally(() => {
      this.ftsBuild = undefined;
    });
    return this.ftsBuild;
  }

  /**
   * Background maintenance, one job at a time (LanceDB refuses a compaction and an index build that
   * race each other): fold new rows into the indexes now and then, and build the ANN index once the
   * table is large.
   */
  private maintain(job: () => Promise<void>, what: string): void {
    this.pendingJobs += 1;
    this.maintenance = this.maintenance
      .then(job)
      .catch((err: unknown) => this.log.warn(`${what} failed`, { message: (err as Error).message }))
      .finally(() => {
        this.pendingJobs -= 1;
      });
  }

  /** Whether background maintenance (compaction, an index build) is queued or running. */
  maintaining(): boolean {
    return this.pendingJobs > 0;
  }

  /**
   * Every write is a new table version with its own fragment; left alone they pile up, and each
   * search and write then walks (and keeps in memory) all of them: one drawer per call grew a hub by
   * ~350 KB per drawer and halved its write rate. So compaction runs after 100 writes or 1,000 rows,
   * whichever comes first, and drops versions older than an hour (this process is the only writer:
   * the palace lease; the hour covers a reader still on an old version).
   */
  /** Builds the `id` B-tree index in the background once the table has ID_INDEX_THRESHOLD rows. */
  private ensureIdIndex(): void {
    this.maintain(async () => {
      if (this.idIndexStarted) return;
      if ((await this.table.countRows()) < ID_INDEX_THRESHOLD) return;
      this.idIndexStarted = true;
      try {
        await this.table.createIndex('id', { config: lancedb.Index.btree() });
      } catch (err) {
        this.idIndexStarted = false;
        throw err;
      }
    }, 'id index build');
  }

  private afterWrite(rows: number): void {
    if (!this.idIndexStarted) this.ensureIdIndex();
    this.rowsSinceOptimize += rows;
    this.writesSinceOptimize += 1;
    if (this.rowsSinceOptimize >= OPTIMIZE_ROWS || this.writesSinceOptimize >= OPTIMIZE_WRITES) {
      this.rowsSinceOptimize = 0;
      this.writesSinceOptimize = 0;
      this.maintain(async () => void (await this.table.optimize({ cleanupOlderThan: new Date(Date.now() - VERSION_RETENTION_MS) })), 'vector optimize');
    }
    if (!this.annStarted) this.ensureAnnIndex();
  }

  /** Builds the ANN index in the background once the table has annThreshold rows (until then a flat search is fast). */
  private ensureAnnIndex(): void {
    this.maintain(async () => {
      if (this.annStarted) return;
      const rows = await this.table.countRows();
      if (rows < this.annThreshold) return;
      this.annStarted = true;
      this.log.info(`building the ANN index in the background (${rows} drawers)`);
      try {
        await this.table.createIndex('vector', { config: lancedb.Index.ivfPq({ distanceType: 'cosine' }) });
      } catch (err) {
        this.annStarted = false;
        throw err;
      }
      this.log.info('ANN index ready');
    }, 'ANN index build');
  }

  /** Resolves when background maintenance (the id read included) has finished and every row is indexed. */
  async indexesSettled(): Promise<void> {
    await this.ids?.settled();
    await this.maintenance;
    if (this.annStarted) await this.table.optimize();
  }

  async close(): Promise<void> {
    await this.maintenance;
    await this.ids?.settled();
    this.table.close();
    this.db.close();
  }
}
