// What the Milvus adapter sends, checked against the documented RESTful API v2 on a recording
// loopback server (no Milvus can run here): Bearer token, dbName, the schema, filter expressions
// with escaped strings, the consistency level (Strong by default), the claim row, and clear errors.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { MilvusVectorStore } from '../../hub/src/vector/milvus-vector-store.js';
import { toRow } from '../../hub/src/vector/milvus-codec.js';
import { axisVector, storedDrawer } from '../contract/vector-store.contract.js';
import { rejectedHubError } from '../helpers/errors.js';
import { closedPort, startRecordingServer, type RecordedRequest, type RecordingServer, type Reply } from '../helpers/recording-server.js';

const ok = (data: unknown): Reply => ({ body: { code: 0, cost: 0, data } });
type Body = Record<string, unknown>;

interface MilvusState {
  existing: Set<string>;
  dim: number;
  claim?: Body | undefined;
  extra?: (r: RecordedRequest, body: Body) => Reply | undefined;
}

/** A Milvus that has the collections in `existing` and answers as the v2 REST reference shows. */
function milvusLike(state: MilvusState) {
  return (r: RecordedRequest): Reply | undefined => {
    const body = (r.body ?? {}) as Body;
    const extra = state.extra?.(r, body);
    if (extra) return extra;
    const name = String(body.collectionName ?? '');
    switch (r.url) {
      case '/v2/vectordb/collections/has':
        return ok({ has: state.existing.has(name) });
      case '/v2/vectordb/collections/create':
        state.existing.add(name);
        return ok({});
      case '/v2/vectordb/collections/describe':
        return ok({ collectionName: name, fields: [{ name: 'id', type: 'VarChar', primaryKey: true }, { name: name.endsWith('claims') ? 'v' : 'vector', type: 'FloatVector', params: [{ key: 'dim', value: String(name.endsWith('claims') ? 2 : state.dim) }] }] });
      case '/v2/vectordb/collections/load':
      case '/v2/vectordb/entities/delete':
        return ok({});
      case '/v2/vectordb/entities/search':
        return ok([]);
      case '/v2/vectordb/entities/upsert':
        if (name.endsWith('claims')) state.claim = (body.data as Body[])[0];
        return ok({ upsertCount: (body.data as unknown[]).length, upsertIds: [] });
      case '/v2/vectordb/entities/query':
        if (name.endsWith('claims')) return ok(state.claim ? [state.claim] : []);
        if (Array.isArray(body.outputFields) && body.outputFields[0] === 'count(*)') return ok([{ 'count(*)': 2 }]);
        return ok([]);
      default:
        return undefined;
    }
  };
}

const settings = (url: string, extra: Partial<{ milvusToken: string; milvusDbName: string; milvusConsistencyLevel: 'Strong' | 'Bounded' | 'Session' | 'Eventually' }> = {}) => ({
  milvusUri: url,
  milvusToken: undefined as string | undefined,
  milvusDbName: undefined as string | undefined,
  milvusConsistencyLevel: 'Strong' as const,
  namespace: 'palace_',
  timeoutSeconds: 5,
  ...extra,
});

describe('Milvus adapter requests (recording loopback server)', () => {
  let server: RecordingServer;
  let state: MilvusState;

  beforeEach(async () => {
    state = { existing: new Set(), dim: 8 };
    server = await startRecordingServer(milvusLike(state));
  });

  afterEach(async () => {
    await server.stop();
  });

  it('creates the collection with a VARCHAR key, the vector dimension and a COSINE index, in the configured database, with the Bearer token', async () => {
    const store = await MilvusVectorStore.open({ settings: settings(server.url, { milvusToken: 'root:Milvus', milvusDbName: 'team' }), dimensions: 8 });
    await store.close();
    const create = server.find('POST', '/v2/vectordb/collections/create')[0]?.body as Body;
    expect(create).toMatchObject({ dbName: 'team', collectionName: 'palace_drawers', indexParams: [{ fieldName: 'vector', metricType: 'COSINE' }] });
    const fields = (create.schema as { fields: Body[] }).fields;
    expect(fields.find((f) => f.fieldName === 'id')).toEqual({ fieldName: 'id', dataType: 'VarChar', isPrimary: true, elementTypeParams: { max_length: 512 } });
    expect(fields.find((f) => f.fieldName === 'vector')).toEqual({ fieldName: 'vector', dataType: 'FloatVector', elementTypeParams: { dim: '8' } });
    expect(fields.find((f) => f.fieldName === 'tags')).toMatchObject({ dataType: 'Array', elementDataType: 'VarChar' });
    expect(fields.find((f) => f.fieldName === 'metadata')).toMatchObject({ dataType: 'JSON' });
    expect(server.find('POST', '/v2/vectordb/collections/load')).toHaveLength(1);
    for (const r of server.requests) {
      expect(r.headers.authorization).toBe('Bearer root:Milvus');
      expect((r.body as Body).dbName).toBe('team');
    }
  });

  it('omits the token and dbName when not configured, and refuses a collection of another dimension', async () => {
    state.existing.add('palace_drawers');
    state.dim = 384;
    const err = await rejectedHubError(MilvusVectorStore.open({ settings: settings(server.url), dimensions: 8 }));
    expect(err.code).toBe('memory.embedder_mismatch');
    expect(err.message).toContain('384 dimensions');
    expect(server.find('POST', '/v2/vectordb/collections/create')).toEqual([]);
    for (const r of server.requests) {
      expect(r.headers.authorization).toBeUndefined();
      expect((r.body as Body).dbName).toBeUndefined();
    }
  });

  it('reads with consistency level Strong by default and the configured level otherwise', async () => {
    const strong = await MilvusVectorStore.open({ settings: settings(server.url), dimensions: 8 });
    expect(await strong.count()).toBe(2);
    await strong.scan({ wing: 'w' });
    await strong.search(axisVector(1), {}, 2);
    await strong.close();
    const reads = [...server.find('POST', '/v2/vectordb/entities/query'), ...server.find('POST', '/v2/vectordb/entities/search')];
    expect(reads.length).toBe(3);
    for (const r of reads) expect((r.body as Body).consistencyLevel).toBe('Strong');

    server.requests.length = 0;
    const bounded = await MilvusVectorStore.open({ settings: settings(server.url, { milvusConsistencyLevel: 'Bounded' }), dimensions: 8 });
    await bounded.count({ room: 'r' });
    await bounded.search(axisVector(1), {}, 2);
    await bounded.close();
    expect(server.find('POST', '/v2/vectordb/entities/query')[0]?.body).toEqual({ collectionName: 'palace_drawers', filter: 'room == "r"', outputFields: ['count(*)'], consistencyLevel: 'Bounded' });
    expect((server.find('POST', '/v2/vectordb/entities/search')[0]?.body as Body).consistencyLevel).toBe('Bounded');
  });

  it('builds boolean expressions with escaped strings and array_contains_any for tags', async () => {
    const store = await MilvusVectorStore.open({ settings: settings(server.url), dimensions: 8 });
    await store.count({ wing: 'O\'Brien "the" \\ wing', tags: ['a"b', 'c'], ids: ['d1', 'd"2'], source_file: 'line\nbreak' });
    expect((server.find('POST', '/v2/vectordb/entities/query').at(-1)?.body as Body).filter).toBe(
      'id in ["d1", "d\\"2"] and wing == "O\'Brien \\"the\\" \\\\ wing" and source_file == "line\\nbreak" and array_contains_any(tags, ["a\\"b", "c"])',
    );
    await store.count();
    expect((server.find('POST', '/v2/vectordb/entities/query').at(-1)?.body as Body).filter).toBe('id != ""');
    const before = server.requests.length;
    expect(await store.delete({ ids: [] })).toBe(0);
    expect(server.requests.length).toBe(before);
    await store.close();
  });

  it('searches by COSINE with the vector field and maps the similarity to a distance; upserts whole rows', async () => {
    const hit = storedDrawer({ wing: 'alpha', useful: false, vector: axisVector(3) });
    state.extra = (r) => (r.url === '/v2/vectordb/entities/search' ? ok([{ ...toRow(hit), distance: 0.9 }]) : undefined);
    const store = await MilvusVectorStore.open({ settings: settings(server.url), dimensions: 8 });
    const hits = await store.search(axisVector(3), { wing: 'alpha' }, 4);
    expect(hits[0]?.drawer).toMatchObject({ id: hit.id, wing: 'alpha', useful: false, source_file: null, parent_id: null });
    expect(hits[0]?.distance).toBeCloseTo(0.1, 6);
    expect(server.find('POST', '/v2/vectordb/entities/search')[0]?.body).toMatchObject({
      collectionName: 'palace_drawers',
      data: [Array.from(axisVector(3))],
      annsField: 'vector',
      filter: 'wing == "alpha"',
      limit: 4,
      searchParams: { metricType: 'COSINE' },
    });
    await store.upsert([storedDrawer({ id: 'drawer_x', content: 'Pnpm and pnpm, LanceDB!', tags: ['t'], vector: axisVector(1) })]);
    const row = (server.find('POST', '/v2/vectordb/entities/upsert')[0]?.body as { data: Body[] }).data[0];
    expect(row).toMatchObject({ id: 'drawer_x', tags: ['t'], words: ' pnpm and lancedb ', source_file: '', parent_id: '', useful: -1, vector: Array.from(axisVector(1)) });
    await store.close();
  });

  it('prefilters full text by words and ranks client-side', async () => {
    const both = storedDrawer({ content: 'pnpm and LanceDB' });
    const one = storedDrawer({ content: 'LanceDB only' });
    state.extra = (r, body) => (r.url === '/v2/vectordb/entities/query' && String(body.filter).includes('words like') ? ok([toRow(one), toRow(both)]) : undefined);
    const store = await MilvusVectorStore.open({ settings: settings(server.url), dimensions: 8 });
    const hits = await store.fullText("PNPM lancedb O'Brien", { room: 'r' }, 5);
    expect(hits.map((h) => h.drawer.id)).toEqual([both.id, one.id]);
    expect((server.find('POST', '/v2/vectordb/entities/query').at(-1)?.body as Body).filter).toBe(
      '(room == "r") and (words like "% pnpm %" or words like "% lancedb %" or words like "% o\'brien %")',
    );
    await store.close();
  });

  it('claims the collection with a claim row, and a second hub is refused naming the holder', async () => {
    state.claim = { collection: 'palace_drawers', holder: 'other-box:/srv/palace', host: 'other-box', pid: 77, heartbeat: Date.now() };
    const err = await rejectedHubError(MilvusVectorStore.open({ settings: settings(server.url), dimensions: 8, claimAs: 'me:/p' }));
    expect(err.code).toBe('lease.held');
    expect(err.message).toContain('other-box:/srv/palace');
    const claimQuery = server.find('POST', '/v2/vectordb/entities/query').find((r) => (r.body as Body).collectionName === 'palace_claims');
    expect((claimQuery?.body as Body).filter).toBe('collection == "palace_drawers"');

    state.claim = undefined;
    const store = await MilvusVectorStore.open({ settings: settings(server.url), dimensions: 8, claimAs: 'me:/p' });
    expect(state.claim).toMatchObject({ collection: 'palace_drawers', holder: 'me:/p', pid: process.pid, v: [1, 0] });
    await store.close();
    expect(server.find('POST', '/v2/vectordb/entities/delete').at(-1)?.body).toEqual({ collectionName: 'palace_claims', filter: 'collection == "palace_drawers"' });
  });

  it('reports a closed port as backend.unreachable naming the URI', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const err = await rejectedHubError(MilvusVectorStore.open({ settings: settings(url), dimensions: 8 }));
    expect(err.code).toBe('backend.unreachable');
    expect(err.message).toContain(url);
  });

  it('reports a refused token (HTTP 401 or code 1800) as backend.auth naming the variable, never the token', async () => {
    server.handle(() => ({ status: 401, body: { code: 401, message: 'Unauthorized' } }));
    const http401 = await rejectedHubError(MilvusVectorStore.open({ settings: settings(server.url, { milvusToken: 'root:wrong' }), dimensions: 8 }));
    expect(http401.code).toBe('backend.auth');
    expect(http401.message).toContain('PALACE_MILVUS_TOKEN');
    expect(http401.message).not.toContain('root:wrong');
    server.handle(() => ({ body: { code: 1800, message: "user hasn't authenticated" } }));
    const code1800 = await rejectedHubError(MilvusVectorStore.open({ settings: settings(server.url, { milvusToken: 'root:wrong' }), dimensions: 8 }));
    expect(code1800.code).toBe('backend.auth');
    expect(code1800.message).toContain("user hasn't authenticated");
  });

  it('reports malformed answers and server errors as backend.failed with the server message', async () => {
    server.handle(() => ({ body: { data: { has: true } } }));
    const malformed = await rejectedHubError(MilvusVectorStore.open({ settings: settings(server.url), dimensions: 8 }));
    expect(malformed.code).toBe('backend.failed');
    expect(malformed.message).toContain('malformed');
    server.handle(() => ({ body: { code: 100, message: 'collection not found[database=default][collection=palace_drawers]' } }));
    const failed = await rejectedHubError(MilvusVectorStore.open({ settings: settings(server.url), dimensions: 8 }));
    expect(failed.code).toBe('backend.failed');
    expect(failed.message).toContain('collection not found');
  });
});
