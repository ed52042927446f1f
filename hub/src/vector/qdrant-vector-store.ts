// The Qdrant VectorStore over its REST API (global fetch, no driver): collection `<namespace>drawers`
// with cosine distance, keyword payload indexes for the filters, a full-text index on content (the
// documented BM25 fallback: server prefilter + term-frequency scoring here), and a claim record.

import type { BackendSettings } from '../config.js';
import { HubError } from '../errors.js';
import { checkDimensions } from './drawer-record.js';
import { createBackendHttp, serverMessage, type BackendHttp, type FetchFn } from './backend-http.js';
import { takeClaim, type ClaimIo, type ClaimRecord, type HeldClaim } from './collection-claim.js';
import {
  fromPayload,
  KEYWORD_FIELDS,
  payloadSelector,
  pointId,
  qdrantFilter,
  TEXT_INDEX,
  toPayload,
  type Payload,
  type QdrantFilter,
} from './qdrant-codec.js';
import { byFiledAtThenId, queryTerms, rankByTerms, TEXT_CANDIDATES } from './text-fallback.js';
import type { DrawerFilter, DrawerPatch, ScanOptions, StoredDrawer, VectorStore, FullTextOptions } from './vector-store.js';

const PAGE = 256;

export interface QdrantOptions {
  settings: Pick<BackendSettings, 'qdrantUrl' | 'qdrantApiKey' | 'namespace' | 'timeoutSeconds'>;
  dimensions: number;
  /** Claims the collection for this holder (a hub); a second holder is refused while the claim is live. */
  claimAs?: string | undefined;
  /** Injected for tests; the global fetch otherwise. */
  fetch?: FetchFn | undefined;
}

interface Point {
  id: unknown;
  score?: number;
  payload?: Payload;
}

export class QdrantVectorStore implements VectorStore {
  private claim: HeldClaim | undefined;

  private constructor(
    private readonly http: BackendHttp,
    private readonly collection: string,
    private readonly claims: string,
    private readonly dimensions: number,
  ) {}

  static async open(options: QdrantOptions): Promise<QdrantVectorStore> {
    const { settings } = options;
    const http = createBackendHttp({
      backend: 'Qdrant',
      baseUrl: settings.qdrantUrl.replace(/\/+$/, ''),
      headers: settings.qdrantApiKey ? { 'api-key': settings.qdrantApiKey } : {},
      timeoutSeconds: settings.timeoutSeconds,
      credentialVar: 'PALACE_QDRANT_API_KEY',
      fetch: options.fetch,
    });
    const store = new QdrantVectorStore(http, `${settings.namespace}drawers`, `${settings.namespace}claims`, options.dimensions);
    await store.ensureCollection(store.collection, options.dimensions, true);
    if (options.claimAs !== undefined) {
      await store.ensureCollection(store.claims, 1, false);
      store.claim = await takeClaim(store.claimIo(), { collection: store.collection, holder: options.claimAs, where: http.where });
    }
    return store;
  }

  private path(collection: string, rest = ''): string {
    return `/collections/${encodeURIComponent(collection)}${rest}`;
  }

  /** `result` of a Qdrant response envelope `{ result, status, time }`. */
  private async call(method: string, path: string, body?: unknown): Promise<unknown> {
    const envelope = await this.http.ok(method, path, body);
    if (!envelope || typeof envelope !== 'object' || !('result' in envelope)) throw this.http.malformed(path, 'no `result`');
    return (envelope as { result: unknown }).result;
  }

  private async ensureCollection(name: string, size: number, drawers: boolean): Promise<void> {
    let info = await this.http.send('GET', this.path(name));
    if (info.status === 404) {
      const created = await this.http.send('PUT', this.path(name), { vectors: { size, distance: 'Cosine' } });
      info = await this.http.send('GET', this.path(name));
      // Another hub may have created it meanwhile (our PUT then fails but the GET finds it).
      if (info.status !== 200)
        throw new HubError('backend.failed', `Qdrant at ${this.http.where} could not create collection ${name} (HTTP ${created.status}): ${serverMessage(created.body) ?? 'no message'}`, {
          data: { backend: 'qdrant', collection: name },
        });
    } else if (info.status !== 200) {
      await this.http.ok('GET', this.path(name));
    }
    const stored = (info.body as { result?: { config?: { params?: { vectors?: { size?: unknown } } } } } | undefined)?.result?.config?.params?.vectors?.size;
    if (typeof stored === 'number' && stored !== size)
      throw new HubError(
        'memory.embedder_mismatch',
        `the palace's vectors in ${name} have ${stored} dimensions but the embedder makes ${size}; run \`palace set-embedder --force\` and rebuild the index`,
      );
    if (!drawers) return;
    for (const field of KEYWORD_FIELDS) await this.call('PUT', `${this.path(name, '/index')}?wait=true`, { field_name: field, field_schema: 'keyword' });
    await this.call('PUT', `${this.path(name, '/index')}?wait=true`, { field_name: 'content', field_schema: TEXT_INDEX });
  }

  private claimIo(): ClaimIo {
    const id = pointId(`claim:${this.collection}`);
    return {
      read: async () => {
        const res = await this.http.send('GET', this.path(this.claims, `/points/${id}`));
        if (res.status === 404) return undefined;
        const payload = (res.body as { result?: { payload?: Partial<ClaimRecord> } } | undefined)?.result?.payload;
        if (res.status !== 200 || !payload) throw this.http.malformed(this.path(this.claims, `/points/${id}`), `HTTP ${res.status}`);
        return { holder: String(payload.holder), host: String(payload.host), pid: Number(payload.pid), heartbeat: Number(payload.heartbeat) };
      },
      write: async (record) => {
        await this.call('PUT', `${this.path(this.claims, '/points')}?wait=true`, { points: [{ id, vector: [1], payload: { collection: this.collection, ...record } }] });
      },
      remove: async () => {
        await this.call('POST', `${this.path(this.claims, '/points/delete')}?wait=true`, { points: [id] });
      },
    };
  }

  async upsert(drawers: readonly StoredDrawer[]): Promise<void> {
    checkDimensions(drawers, this.dimensions);
    const rows = [...new Map(drawers.map((d) => [d.id, d])).values()];
    for (let i = 0; i < rows.length; i += PAGE) {
      const points = rows.slice(i, i + PAGE).map((d) => ({ id: pointId(d.id), vector: Array.from(d.vector), payload: toPayload(d) }));
      await this.call('PUT', `${this.path(this.collection, '/points')}?wait=true`, { points });
    }
  }

  async patch(filter: DrawerFilter, patch: DrawerPatch): Promise<number> {
    const payload: Payload = {};
    if (patch.wing !== undefined) payload.wing = patch.wing;
    if (patch.room !== undefined) payload.room = patch.room;
    if (patch.tags !== undefined) payload.tags = [...patch.tags];
    if (patch.useful !== undefined) payload.useful = patch.useful;
    const where = qdrantFilter(filter);
    if (where === null || Object.keys(payload).length === 0) return 0;
    const n = await this.countWhere(where);
    if (n > 0) await this.call('POST', `${this.path(this.collection, '/points/payload')}?wait=true`, { payload, filter: where });
    return n;
  }

  async delete(filter: DrawerFilter): Promise<number> {
    const where = qdrantFilter(filter);
    if (where === null) return 0;
    const n = await this.countWhere(where);
    if (n > 0) await this.call('POST', `${this.path(this.collection, '/points/delete')}?wait=true`, { filter: where });
    return n;
  }

  /** Every point matching `where` (paged by Qdrant's offset cursor), at most `max`. */
  private async scroll(where: QdrantFilter, withPayload: unknown, max = Number.MAX_SAFE_INTEGER): Promise<Point[]> {
    const points: Point[] = [];
    let offset: unknown = undefined;
    do {
      const body = { filter: where, limit: Math.min(PAGE, max - points.length), with_payload: withPayload, with_vector: false, ...(offset === undefined ? {} : { offset }) };
      const result = (await this.call('POST', this.path(this.collection, '/points/scroll'), body)) as { points?: Point[]; next_page_offset?: unknown };
      if (!Array.isArray(result?.points)) throw this.http.malformed(this.path(this.collection, '/points/scroll'), 'no `points`');
      points.push(...result.points);
      offset = result.next_page_offset ?? undefined;
    } while (offset !== undefined && offset !== null && points.length < max);
    return points;
  }

  async scan(filter: DrawerFilter, options: ScanOptions = {}): Promise<StoredDrawer[]> {
    const where = qdrantFilter(filter);
    if (where === null) return [];
    // Qdrant orders a scroll by point id (our UUIDs), so the stable (filed_at, id) order is made here:
    // read the sort keys of every match, sort, page, then fetch the page's payloads by id.
    const keys = (await this.scroll(where, ['drawer_id', 'filed_at'])).map((p) => ({ id: String(p.payload?.drawer_id ?? ''), filed_at: String(p.payload?.filed_at ?? '') }));
    keys.sort(byFiledAtThenId);
    const start = options.offset ?? 0;
    const page = keys.slice(start, options.limit === undefined ? undefined : start + options.limit);
    if (page.length === 0) return [];
    const byId = new Map<string, StoredDrawer>();
    for (let i = 0; i < page.length; i += PAGE) {
      const ids = page.slice(i, i + PAGE).map((k) => pointId(k.id));
      const got = await this.call('POST', this.path(this.collection, '/points'), { ids, with_payload: payloadSelector(options), with_vector: false });
      if (!Array.isArray(got)) throw this.http.malformed(this.path(this.collection, '/points'), 'no point list');
      for (const p of got as Point[]) {
        const drawer = fromPayload(p.payload ?? {});
        byId.set(drawer.id, drawer);
      }
    }
    return page.map((k) => byId.get(k.id)).filter((d): d is StoredDrawer => d !== undefined);
  }

  async search(vector: Float32Array, filter: DrawerFilter, limit: number): Promise<Array<{ drawer: StoredDrawer; distance: number }>> {
    const where = qdrantFilter(filter);
    if (where === null || limit <= 0) return [];
    const body = { vector: Array.from(vector), filter: where, limit, with_payload: true, with_vector: false };
    const hits = await this.call('POST', this.path(this.collection, '/points/search'), body);
    if (!Array.isArray(hits)) throw this.http.malformed(this.path(this.collection, '/points/search'), 'no hit list');
    // Qdrant's cosine score is the similarity; the interface speaks cosine distance.
    return (hits as Point[]).map((h) => ({ drawer: fromPayload(h.payload ?? {}), distance: 1 - Number(h.score ?? 0) }));
  }

  async fullText(query: string, filter: DrawerFilter, limit: number, options: FullTextOptions = {}): Promise<Array<{ drawer: StoredDrawer; score: number }>> {
    // No separate names field here: the names-only list is left out of fusion.
    if (options.fields === 'names') return [];
    const where = qdrantFilter(filter);
    const terms = queryTerms(query);
    if (where === null || terms.length === 0 || limit <= 0) return [];
    // Any query word may match (OR, like BM25); Qdrant tokenizes each word as it indexed content.
    const candidates = await this.scroll({ ...where, should: terms.map((text) => ({ key: 'content', match: { text } })) }, { exclude: ['vector_b64'] }, TEXT_CANDIDATES);
    return rankByTerms(candidates.map((p) => fromPayload(p.payload ?? {})), query, limit);
  }

  private async countWhere(where: QdrantFilter): Promise<number> {
    const result = (await this.call('POST', this.path(this.collection, '/points/count'), { filter: where, exact: true })) as { count?: unknown } | null;
    if (typeof result?.count !== 'number') throw this.http.malformed(this.path(this.collection, '/points/count'), 'no `count`');
    return result.count;
  }

  async count(filter: DrawerFilter = {}): Promise<number> {
    const where = qdrantFilter(filter);
    return where === null ? 0 : this.countWhere(where);
  }

  /** Drops the drawer collection (tests). */
  async dropAll(): Promise<void> {
    await this.http.send('DELETE', this.path(this.collection));
  }

  async close(): Promise<void> {
    const claim = this.claim;
    this.claim = undefined;
    await claim?.release();
  }
}
