// The Milvus VectorStore over the RESTful API v2 (`/v2/vectordb/...`) with global fetch: no gRPC
// driver, so a default install stays lean. Cosine search, filters as boolean expressions, the
// consistency level on every read, a documented full-text fallback, and a claim row.

import type { BackendSettings, MilvusConsistencyLevel } from '../config.js';
import { HubError } from '../errors.js';
import { checkDimensions } from './drawer-record.js';
import { createBackendHttp, type BackendHttp, type FetchFn } from './backend-http.js';
import { takeClaim, type ClaimIo, type HeldClaim } from './collection-claim.js';
import { CLAIM_SCHEMA, drawerSchema, fromRow, MATCH_ALL, milvusFilter, milvusString, SCALAR_FIELDS, toRow, wordsPrefilter, type Row } from './milvus-codec.js';
import { byFiledAtThenId, queryTerms, rankByTerms, TEXT_CANDIDATES } from './text-fallback.js';
import type { DrawerFilter, DrawerPatch, ScanOptions, StoredDrawer, VectorStore, FullTextOptions } from './vector-store.js';

/** Milvus caps offset + limit of one query at 16384. */
const QUERY_PAGE = 16_384;
const WRITE_BATCH = 256;
const ID_BATCH = 1000;

export interface MilvusOptions {
  settings: Pick<BackendSettings, 'milvusUri' | 'milvusToken' | 'milvusDbName' | 'milvusConsistencyLevel' | 'namespace' | 'timeoutSeconds'>;
  dimensions: number;
  claimAs?: string | undefined;
  fetch?: FetchFn | undefined;
}

export class MilvusVectorStore implements VectorStore {
  private claim: HeldClaim | undefined;

  private constructor(
    private readonly http: BackendHttp,
    private readonly collection: string,
    private readonly claims: string,
    private readonly dbName: string | undefined,
    private readonly consistency: MilvusConsistencyLevel,
    private readonly dimensions: number,
  ) {}

  static async open(options: MilvusOptions): Promise<MilvusVectorStore> {
    const { settings } = options;
    const http = createBackendHttp({
      backend: 'Milvus',
      baseUrl: settings.milvusUri.replace(/\/+$/, ''),
      headers: settings.milvusToken ? { authorization: `Bearer ${settings.milvusToken}` } : {},
      timeoutSeconds: settings.timeoutSeconds,
      credentialVar: 'PALACE_MILVUS_TOKEN',
      fetch: options.fetch,
    });
    const store = new MilvusVectorStore(
      http,
      `${settings.namespace}drawers`,
      `${settings.namespace}claims`,
      settings.milvusDbName,
      settings.milvusConsistencyLevel,
      options.dimensions,
    );
    await store.ensureCollection(store.collection, drawerSchema(options.dimensions), 'vector', options.dimensions);
    if (options.claimAs !== undefined) {
      await store.ensureCollection(store.claims, CLAIM_SCHEMA, 'v', 2);
      store.claim = await takeClaim(store.claimIo(), { collection: store.collection, holder: options.claimAs, where: http.where });
    }
    return store;
  }

  /** `data` of a Milvus envelope `{ code, data, message }`; a non-zero code is the server's error. */
  private async call(path: string, body: Record<string, unknown>): Promise<unknown> {
    const full = `/v2/vectordb${path}`;
    const envelope = (await this.http.ok('POST', full, { ...(this.dbName ? { dbName: this.dbName } : {}), ...body })) as { code?: unknown; message?: unknown; data?: unknown } | undefined;
    if (!envelope || typeof envelope !== 'object' || typeof envelope.code !== 'number') throw this.http.malformed(full, 'no `code`');
    if (envelope.code !== 0 && envelope.code !== 200) {
      const message = typeof envelope.message === 'string' ? envelope.message : 'no message';
      // Milvus answers HTTP 200 with code 1800 (or a permission message) when the token is refused.
      if (envelope.code === 1800 || /authenticat|credential|permission denied|unauthori/i.test(message))
        throw new HubError('backend.auth', `Milvus at ${this.http.where} refused the request (code ${envelope.code}: ${message}); check PALACE_MILVUS_TOKEN`, {
          data: { backend: 'milvus', code: envelope.code },
        });
      throw new HubError('backend.failed', `Milvus at ${this.http.where} failed ${path} (code ${envelope.code}): ${message}`, { data: { backend: 'milvus', code: envelope.code, path } });
    }
    return envelope.data;
  }

  private async ensureCollection(name: string, schema: Record<string, unknown>, vectorField: string, dimensions: number): Promise<void> {
    const has = (await this.call('/collections/has', { collectionName: name })) as { has?: unknown } | undefined;
    if (has?.has !== true) {
      await this.call('/collections/create', {
        collectionName: name,
        schema,
        indexParams: [{ fieldName: vectorField, indexName: `${vectorField}_idx`, metricType: 'COSINE', params: { index_type: 'AUTOINDEX' } }],
      });
    }
    const described = (await this.call('/collections/describe', { collectionName: name })) as { fields?: Array<{ name?: unknown; params?: unknown }> } | undefined;
    const field = described?.fields?.find((f) => f.name === vectorField);
    const dim = Array.isArray(field?.params) ? (field.params as Array<{ key?: unknown; value?: unknown }>).find((p) => p.key === 'dim')?.value : undefined;
    if (dim !== undefined && Number(dim) !== dimensions)
      throw new HubError(
        'memory.embedder_mismatch',
        `the palace's vectors in ${name} have ${String(dim)} dimensions but the embedder makes ${dimensions}; run \`palace set-embedder --force\` and rebuild the index`,
      );
    await this.call('/collections/load', { collectionName: name });
  }

  private claimIo(): ClaimIo {
    const key = `collection == ${milvusString(this.collection)}`;
    return {
      read: async () => {
        const rows = (await this.call('/entities/query', {
          collectionName: this.claims,
          filter: key,
          outputFields: ['holder', 'host', 'pid', 'heartbeat'],
          limit: 1,
          consistencyLevel: 'Strong',
        })) as Row[] | undefined;
        const row = Array.isArray(rows) ? rows[0] : undefined;
        return row ? { holder: String(row.holder), host: String(row.host), pid: Number(row.pid), heartbeat: Number(row.heartbeat) } : undefined;
      },
      write: async (record) => {
        await this.call('/entities/upsert', { collectionName: this.claims, data: [{ collection: this.collection, ...record, v: [1, 0] }] });
      },
      remove: async () => {
        await this.call('/entities/delete', { collectionName: this.claims, filter: key });
      },
    };
  }

  private async query(filter: string, outputFields: string[], limit: number): Promise<Row[]> {
    const rows = await this.call('/entities/query', { collectionName: this.collection, filter, outputFields, limit, consistencyLevel: this.consistency });
    if (!Array.isArray(rows)) throw this.http.malformed('/v2/vectordb/entities/query', 'no row list');
    return rows as Row[];
  }

  /**
   * Every row matching `filter`, paged by primary key (`id > last`): one page holds up to 16384
   * rows, and past that we rely on Milvus returning a limited query's rows by ascending key.
   */
  private async queryAll(filter: string, outputFields: string[]): Promise<Row[]> {
    const all: Row[] = [];
    let cursor: string | undefined;
    for (;;) {
      const expr = cursor === undefined ? filter : `(${filter}) and id > ${milvusString(cursor)}`;
      const page = await this.query(expr, outputFields, QUERY_PAGE);
      all.push(...page);
      if (page.length < QUERY_PAGE) return all;
      cursor = page.map((r) => String(r.id)).reduce((a, b) => (a > b ? a : b));
    }
  }

  private async rowsByIds(ids: readonly string[], outputFields: string[]): Promise<Row[]> {
    const rows: Row[] = [];
    for (let i = 0; i < ids.length; i += ID_BATCH) {
      const chunk = ids.slice(i, i + ID_BATCH);
      rows.push(...(await this.query(milvusFilter({ ids: chunk }) ?? MATCH_ALL, outputFields, chunk.length)));
    }
    return rows;
  }

  private async write(rows: Row[]): Promise<void> {
    for (let i = 0; i < rows.length; i += WRITE_BATCH) await this.call('/entities/upsert', { collectionName: this.collection, data: rows.slice(i, i + WRITE_BATCH) });
  }

  async upsert(drawers: readonly StoredDrawer[]): Promise<void> {
    checkDimensions(drawers, this.dimensions);
    await this.write([...new Map(drawers.map((d) => [d.id, toRow(d)])).values()]);
  }

  async patch(filter: DrawerFilter, patch: DrawerPatch): Promise<number> {
    const where = milvusFilter(filter);
    if (where === null || Object.values(patch).every((v) => v === undefined)) return 0;
    // No partial update over REST on every Milvus version: read the whole rows, change, upsert.
    const rows = (await this.queryAll(where, [...SCALAR_FIELDS, 'vector'])).map(fromRow);
    await this.write(
      rows.map((d) =>
        toRow({
          ...d,
          ...(patch.wing !== undefined ? { wing: patch.wing } : {}),
          ...(patch.room !== undefined ? { room: patch.room } : {}),
          ...(patch.tags !== undefined ? { tags: [...patch.tags] } : {}),
          ...(patch.useful !== undefined ? { useful: patch.useful } : {}),
        }),
      ),
    );
    return rows.length;
  }

  async delete(filter: DrawerFilter): Promise<number> {
    const where = milvusFilter(filter);
    if (where === null) return 0;
    const n = await this.countWhere(where);
    if (n > 0) await this.call('/entities/delete', { collectionName: this.collection, filter: where });
    return n;
  }

  async scan(filter: DrawerFilter, options: ScanOptions = {}): Promise<StoredDrawer[]> {
    const where = milvusFilter(filter);
    if (where === null) return [];
    const keys = (await this.queryAll(where, ['id', 'filed_at'])).map((r) => ({ id: String(r.id), filed_at: String(r.filed_at ?? '') }));
    keys.sort(byFiledAtThenId);
    const start = options.offset ?? 0;
    const page = keys.slice(start, options.limit === undefined ? undefined : start + options.limit);
    if (page.length === 0) return [];
    const fields = options.withVectors ? [...SCALAR_FIELDS, 'vector'] : SCALAR_FIELDS;
    const byId = new Map((await this.rowsByIds(page.map((k) => k.id), fields)).map((r) => [String(r.id), fromRow(r)]));
    return page.map((k) => byId.get(k.id)).filter((d): d is StoredDrawer => d !== undefined);
  }

  async search(vector: Float32Array, filter: DrawerFilter, limit: number): Promise<Array<{ drawer: StoredDrawer; distance: number }>> {
    const where = milvusFilter(filter);
    if (where === null || limit <= 0) return [];
    const hits = await this.call('/entities/search', {
      collectionName: this.collection,
      data: [Array.from(vector)],
      annsField: 'vector',
      filter: where,
      limit,
      outputFields: [...SCALAR_FIELDS, 'vector'],
      searchParams: { metricType: 'COSINE', params: {} },
      consistencyLevel: this.consistency,
    });
    if (!Array.isArray(hits)) throw this.http.malformed('/v2/vectordb/entities/search', 'no hit list');
    // With the COSINE metric Milvus's `distance` is the similarity; the interface speaks cosine distance.
    return (hits as Row[]).map((h) => ({ drawer: fromRow(h), distance: 1 - Number(h.distance ?? 0) }));
  }

  async fullText(query: string, filter: DrawerFilter, limit: number, options: FullTextOptions = {}): Promise<Array<{ drawer: StoredDrawer; score: number }>> {
    // No separate names field here: the names-only list is left out of fusion.
    if (options.fields === 'names') return [];
    const where = milvusFilter(filter);
    const terms = queryTerms(query);
    if (where === null || terms.length === 0 || limit <= 0) return [];
    const candidates = await this.query(`(${where}) and ${wordsPrefilter(terms)}`, SCALAR_FIELDS, TEXT_CANDIDATES);
    return rankByTerms(candidates.map(fromRow), query, limit);
  }

  private async countWhere(where: string): Promise<number> {
    const rows = await this.call('/entities/query', { collectionName: this.collection, filter: where, outputFields: ['count(*)'], consistencyLevel: this.consistency });
    const n = Array.isArray(rows) ? (rows[0] as Row | undefined)?.['count(*)'] : undefined;
    if (n === undefined || !Number.isFinite(Number(n))) throw this.http.malformed('/v2/vectordb/entities/query', 'no `count(*)`');
    return Number(n);
  }

  async count(filter: DrawerFilter = {}): Promise<number> {
    const where = milvusFilter(filter);
    return where === null ? 0 : this.countWhere(where);
  }

  /** Drops the drawer collection (tests). */
  async dropAll(): Promise<void> {
    await this.call('/collections/drop', { collectionName: this.collection });
  }

  async close(): Promise<void> {
    const claim = this.claim;
    this.claim = undefined;
    await claim?.release();
  }
}
