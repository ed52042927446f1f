// What the Qdrant adapter sends, checked against Qdrant's documented REST API on a recording
// loopback server (no Qdrant can run here): the api-key header, paths, point and filter shapes,
// the claim record, and the clear errors for an unreachable server, a refused key and bad answers.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { QdrantVectorStore } from '../../hub/src/vector/qdrant-vector-store.js';
import { pointId, toPayload } from '../../hub/src/vector/qdrant-codec.js';
import { axisVector, storedDrawer } from '../contract/vector-store.contract.js';
import { rejectedHubError } from '../helpers/errors.js';
import { closedPort, startRecordingServer, type RecordedRequest, type RecordingServer, type Reply } from '../helpers/recording-server.js';

const ok = (result: unknown): Reply => ({ body: { result, status: 'ok', time: 0.001 } });
const collectionInfo = (size: number): Reply => ok({ status: 'green', points_count: 0, config: { params: { vectors: { size, distance: 'Cosine' } } } });

/** A Qdrant that has the collections in `existing` and answers writes as documented. */
function qdrantLike(state: { existing: Set<string>; size: number; claim?: Record<string, unknown> | undefined; extra?: (r: RecordedRequest) => Reply | undefined }) {
  return (r: RecordedRequest): Reply | undefined => {
    const extra = state.extra?.(r);
    if (extra) return extra;
    const path = r.url.split('?')[0] ?? '';
    const m = /^\/collections\/([^/]+)(\/.*)?$/.exec(path);
    if (!m) return undefined;
    const [, name = '', rest = ''] = m;
    if (rest === '' && r.method === 'GET') return state.existing.has(name) ? collectionInfo(name.endsWith('claims') ? 1 : state.size) : { status: 404, body: { status: { error: `Not found: Collection \`${name}\` doesn't exist!` }, time: 0 } };
    if (rest === '' && r.method === 'PUT') {
      state.existing.add(name);
      return ok(true);
    }
    if (rest === '/index') return ok({ operation_id: 1, status: 'completed' });
    if (rest.startsWith('/points/') && r.method === 'GET')
      return state.claim ? ok({ id: rest.slice('/points/'.length), payload: state.claim }) : { status: 404, body: { status: { error: 'Not found: No point with id' }, time: 0 } };
    if (rest === '/points' && r.method === 'PUT') return ok({ operation_id: 2, status: 'completed' });
    if (rest === '/points/count') return ok({ count: 3 });
    if (rest === '/points/delete' || rest === '/points/payload') return ok({ operation_id: 3, status: 'completed' });
    return undefined;
  };
}

const settings = (url: string, extra: Partial<{ qdrantApiKey: string; namespace: string }> = {}) => ({
  qdrantUrl: url,
  qdrantApiKey: undefined as string | undefined,
  namespace: 'palace_',
  timeoutSeconds: 5,
  ...extra,
});

describe('Qdrant adapter requests (recording loopback server)', () => {
  let server: RecordingServer;
  let state: Parameters<typeof qdrantLike>[0];

  beforeEach(async () => {
    state = { existing: new Set(), size: 8 };
    server = await startRecordingServer(qdrantLike(state));
  });

  afterEach(async () => {
    await server.stop();
  });

  it('creates `<namespace>drawers` with cosine distance and the vector size, and indexes the filter fields and content', async () => {
    const store = await QdrantVectorStore.open({ settings: settings(server.url, { qdrantApiKey: 'sekret' }), dimensions: 8 });
    await store.close();
    expect(server.find('PUT', '/collections/palace_drawers')[0]?.body).toEqual({ vectors: { size: 8, distance: 'Cosine' } });
    const indexes = server.find('PUT', '/collections/palace_drawers/index').map((r) => r.body as { field_name: string; field_schema: unknown });
    expect(indexes.filter((i) => i.field_schema === 'keyword').map((i) => i.field_name).sort()).toEqual(['drawer_id', 'parent_id', 'room', 'source_file', 'tags', 'wing']);
    expect(indexes.find((i) => i.field_name === 'content')?.field_schema).toMatchObject({ type: 'text', tokenizer: 'word', lowercase: true });
    expect(server.find('PUT', '/collections/palace_drawers/index').every((r) => r.url.endsWith('?wait=true'))).toBe(true);
    // The API key goes in the `api-key` header of every request, and never in the URL.
    expect(server.requests.length).toBeGreaterThan(3);
    for (const r of server.requests) {
      expect(r.headers['api-key']).toBe('sekret');
      expect(r.url).not.toContain('sekret');
    }
  });

  it('sends no api-key header when no key is configured, and refuses a collection of another size by name', async () => {
    state.existing.add('palace_drawers');
    state.size = 16;
    const err = await rejectedHubError(QdrantVectorStore.open({ settings: settings(server.url), dimensions: 8 }));
    expect(err.code).toBe('memory.embedder_mismatch');
    expect(err.message).toContain('16 dimensions');
    expect(server.requests.every((r) => r.headers['api-key'] === undefined)).toBe(true);
  });

  it('upserts points with deterministic UUID ids, the vector, and the drawer id in the payload, waiting for the write', async () => {
    const store = await QdrantVectorStore.open({ settings: settings(server.url), dimensions: 8 });
    const drawer = storedDrawer({ wing: 'alpha', tags: ['db'], vector: axisVector(2) });
    await store.upsert([drawer, { ...drawer, room: 'later' }]);
    const [write] = server.find('PUT', '/collections/palace_drawers/points');
    expect(write?.url).toBe('/collections/palace_drawers/points?wait=true');
    const points = (write?.body as { points: Array<{ id: string; vector: number[]; payload: Record<string, unknown> }> }).points;
    expect(points).toHaveLength(1); // last write wins within a batch
    expect(points[0]?.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(points[0]?.id).toBe(pointId(drawer.id));
    expect(points[0]?.vector).toEqual(Array.from(axisVector(2)));
    expect(points[0]?.payload).toMatchObject({ drawer_id: drawer.id, wing: 'alpha', room: 'later', tags: ['db'], source_file: null, useful: null });
    await store.close();
  });

  it('turns filters into `filter.must` conditions and the cosine score into a distance', async () => {
    const hit = storedDrawer({ wing: 'alpha', content: 'near', vector: axisVector(0) });
    state.extra = (r) => (r.url === '/collections/palace_drawers/points/search' ? ok([{ id: pointId(hit.id), version: 3, score: 0.75, payload: toPayload(hit) }]) : undefined);
    const store = await QdrantVectorStore.open({ settings: settings(server.url), dimensions: 8 });
    const hits = await store.search(axisVector(0), { wing: 'alpha', tags: ['db', 'ops'], ids: [hit.id] }, 3);
    expect(hits.map((h) => h.drawer.id)).toEqual([hit.id]);
    expect(hits[0]?.distance).toBeCloseTo(0.25, 6);
    expect(Array.from(hits[0]?.drawer.vector ?? [])).toEqual(Array.from(axisVector(0)));
    expect(server.find('POST', '/collections/palace_drawers/points/search')[0]?.body).toEqual({
      vector: Array.from(axisVector(0)),
      filter: { must: [{ has_id: [pointId(hit.id)] }, { key: 'wing', match: { value: 'alpha' } }, { key: 'tags', match: { any: ['db', 'ops'] } }] },
      limit: 3,
      with_payload: true,
      with_vector: false,
    });
    // An empty id list matches nothing and asks the server nothing.
    const before = server.requests.length;
    expect(await store.search(axisVector(0), { ids: [] }, 3)).toEqual([]);
    expect(await store.count({ ids: [] })).toBe(0);
    expect(server.requests.length).toBe(before);
    await store.close();
  });

  it('counts exactly, deletes and patches by filter, and ranks full-text candidates client-side', async () => {
    const both = storedDrawer({ content: 'pnpm and LanceDB, pnpm again' });
    const one = storedDrawer({ content: 'only LanceDB here' });
    state.extra = (r) =>
      r.url === '/collections/palace_drawers/points/scroll' ? ok({ points: [one, both].map((d) => ({ id: pointId(d.id), payload: toPayload(d) })), next_page_offset: null }) : undefined;
    const store = await QdrantVectorStore.open({ settings: settings(server.url), dimensions: 8 });
    expect(await store.count({ room: 'r' })).toBe(3);
    expect(server.find('POST', '/collections/palace_drawers/points/count').at(-1)?.body).toEqual({ filter: { must: [{ key: 'room', match: { value: 'r' } }] }, exact: true });
    expect(await store.delete({ parent_id: 'p' })).toBe(3);
    expect(server.find('POST', '/collections/palace_drawers/points/delete')[0]).toMatchObject({ url: '/collections/palace_drawers/points/delete?wait=true', body: { filter: { must: [{ key: 'parent_id', match: { value: 'p' } }] } } });
    expect(await store.patch({ wing: 'w' }, { room: 'moved', useful: null })).toBe(3);
    expect(server.find('POST', '/collections/palace_drawers/points/payload')[0]?.body).toEqual({ payload: { room: 'moved', useful: null }, filter: { must: [{ key: 'wing', match: { value: 'w' } }] } });

    const hits = await store.fullText('PNPM lancedb', { wing: 'w' }, 10);
    expect(hits.map((h) => h.drawer.id)).toEqual([both.id, one.id]);
    expect(hits[0]?.score ?? 0).toBeGreaterThan(hits[1]?.score ?? 0);
    const scroll = server.find('POST', '/collections/palace_drawers/points/scroll').at(-1)?.body as Record<string, unknown>;
    expect(scroll).toMatchObject({
      filter: { must: [{ key: 'wing', match: { value: 'w' } }], should: [{ key: 'content', match: { text: 'pnpm' } }, { key: 'content', match: { text: 'lancedb' } }] },
      with_payload: { exclude: ['vector_b64'] },
    });
    await store.close();
  });

  it('claims the collection with a claim point, and a second hub is refused naming the holder', async () => {
    state.existing.add('palace_drawers');
    state.claim = { collection: 'palace_drawers', holder: 'other-box:/srv/palace', host: 'other-box', pid: 4242, heartbeat: Date.now() };
    const err = await rejectedHubError(QdrantVectorStore.open({ settings: settings(server.url), dimensions: 8, claimAs: 'this-box:/home/me/palace' }));
    expect(err.code).toBe('lease.held');
    expect(err.message).toContain('other-box:/srv/palace');
    expect(err.message).toContain('palace_drawers');
    expect(server.find('PUT', '/collections/palace_claims')[0]?.body).toEqual({ vectors: { size: 1, distance: 'Cosine' } });
    expect(server.find('PUT', '/collections/palace_claims/points')).toEqual([]);

    // A claim whose heartbeat stopped long ago is taken over.
    state.claim = { ...state.claim, heartbeat: Date.now() - 10 * 60_000 };
    let written: Record<string, unknown> | undefined;
    state.extra = (r) => {
      if (r.method === 'PUT' && r.url.startsWith('/collections/palace_claims/points')) {
        written = (r.body as { points: Array<{ payload: Record<string, unknown> }> }).points[0]?.payload;
        state.claim = written;
        return ok({ operation_id: 9, status: 'completed' });
      }
      return undefined;
    };
    const store = await QdrantVectorStore.open({ settings: settings(server.url), dimensions: 8, claimAs: 'this-box:/home/me/palace' });
    expect(written).toMatchObject({ collection: 'palace_drawers', holder: 'this-box:/home/me/palace', pid: process.pid });
    await store.close();
    expect(server.find('POST', '/collections/palace_claims/points/delete')[0]?.body).toEqual({ points: [pointId('claim:palace_drawers')] });
  });

  it('reports a closed port as backend.unreachable naming the URL', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const err = await rejectedHubError(QdrantVectorStore.open({ settings: settings(url), dimensions: 8 }));
    expect(err.code).toBe('backend.unreachable');
    expect(err.message).toContain(url);
    expect(err.message).not.toMatch(/\n\s+at /);
  });

  it('reports a refused API key as backend.auth naming the variable, never the key', async () => {
    server.handle(() => ({ status: 401, body: 'Invalid api-key' }));
    const err = await rejectedHubError(QdrantVectorStore.open({ settings: settings(server.url, { qdrantApiKey: 'wrong-key' }), dimensions: 8 }));
    expect(err.code).toBe('backend.auth');
    expect(err.message).toContain('HTTP 401');
    expect(err.message).toContain('PALACE_QDRANT_API_KEY');
    expect(err.message).not.toContain('wrong-key');
  });

  it('reports malformed answers and server errors as backend.failed with the server message', async () => {
    server.handle(() => ({ status: 200, body: '<html>proxy login</html>' }));
    const malformed = await rejectedHubError(QdrantVectorStore.open({ settings: settings(server.url), dimensions: 8 }));
    expect(malformed.code).toBe('backend.failed');
    expect(malformed.message).toContain('malformed');

    server.handle(qdrantLike(state));
    const store = await QdrantVectorStore.open({ settings: settings(server.url), dimensions: 8 });
    server.handle((r) => (r.url.endsWith('/points/count') ? ok({ total: 'x' }) : { status: 500, body: { status: { error: 'Service internal error: disk full' }, time: 0 } }));
    expect((await rejectedHubError(store.count())).message).toContain('malformed');
    const failed = await rejectedHubError(store.upsert([storedDrawer()]));
    expect(failed.code).toBe('backend.failed');
    expect(failed.message).toContain('disk full');
    await store.close();
  });
});
