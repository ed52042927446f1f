// The VectorStore acceptance suite: every adapter (LanceDB now; Qdrant, Milvus, pgvector later) must
// pass it unchanged. It uses only the VectorStore interface, 8-d unit vectors chosen so that the
// expected nearest neighbours are exact, and a fresh, empty store per test from `setup`.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { CENSUS_COLUMNS, type DrawerFilter, type StoredDrawer, type VectorStore } from '../../hub/src/vector/vector-store.js';

export const CONTRACT_DIMENSIONS = 8;

export interface VectorStoreFixture {
  store: VectorStore;
  /** Closes the store (if the test has not) and removes whatever setup created. */
  cleanup: () => Promise<void>;
}

/** Makes a fresh, empty store holding `dimensions`-d vectors. */
export type VectorStoreSetup = (dimensions: number) => Promise<VectorStoreFixture>;

/**
 * A fixture whose cleanup closes the store only if the test did not (some tests close it
 * themselves), then runs `dispose` (drop tables, remove directories): `beforeClose` runs only while
 * the store is still open.
 */
export function closingFixture(store: VectorStore, hooks: { beforeClose?: () => Promise<void>; dispose?: () => void | Promise<void> } = {}): VectorStoreFixture {
  let closed = false;
  const close = store.close.bind(store);
  store.close = async () => {
    closed = true;
    await close();
  };
  return {
    store,
    cleanup: async () => {
      if (!closed) {
        await hooks.beforeClose?.();
        await store.close();
      }
      await hooks.dispose?.();
    },
  };
}

/** A unit vector along axis `axis`, optionally tilted towards axis `towards` by `tilt` (0..1). */
export function axisVector(axis: number, towards?: number, tilt = 0): Float32Array {
  const v = new Float32Array(CONTRACT_DIMENSIONS);
  v[axis] = 1;
  if (towards !== undefined) {
    v[axis] = Math.cos(tilt * (Math.PI / 2));
    v[towards] = Math.sin(tilt * (Math.PI / 2));
  }
  return v;
}

let serial = 0;

/** A drawer with sensible defaults; ids sort in creation order within one filed_at second. */
export function storedDrawer(overrides: Partial<StoredDrawer> = {}): StoredDrawer {
  serial += 1;
  return {
    id: `drawer_${serial.toString(16).padStart(24, '0')}`,
    wing: 'project-alpha',
    room: 'decisions',
    tags: [],
    content: `drawer number ${serial}`,
    source_file: null,
    chunk_index: 0,
    parent_id: null,
    filed_at: '2026-02-01T10:00:00Z',
    added_by: 'box-claude',
    useful: null,
    metadata: {},
    embedder: 'contract-model/8',
    vector: axisVector(0),
    ...overrides,
  };
}

const ids = (rows: ReadonlyArray<{ id: string }>): string[] => rows.map((r) => r.id);
const sortedIds = (rows: ReadonlyArray<{ id: string }>): string[] => ids(rows).sort();

/** What an adapter offers beyond the interface's required methods (and so must be checked). */
export interface ContractOptions {
  /** It sums the census's load itself (VectorStore.placementSummary). */
  placementSummary?: boolean;
}

export function runVectorStoreContract(name: string, setup: VectorStoreSetup, options: ContractOptions = {}): void {
  describe(`VectorStore contract: ${name}`, () => {
    let fixture: VectorStoreFixture;
    let store: VectorStore;

    beforeEach(async () => {
      fixture = await setup(CONTRACT_DIMENSIONS);
      store = fixture.store;
    });

    afterEach(async () => {
      await fixture.cleanup();
    });

    describe('upsert and scan', () => {
      it('starts empty', async () => {
        expect(await store.count()).toBe(0);
        expect(await store.scan({})).toEqual([]);
      });

      it('stores every field and gives it back as written, vector included', async () => {
        const drawer = storedDrawer({
          tags: ['adr', 'storage'],
          content: 'We chose LanceDB as the embedded default.\r\nSecond line, verbatim.\n',
          source_file: '/repo/docs/adr-007.md',
          chunk_index: 2,
          parent_id: 'drawer_aaaaaaaaaaaaaaaaaaaaaaaa',
          useful: true,
          metadata: { char_start: 1600, nested: { ok: true }, list: [1, 'two'] },
          vector: axisVector(1, 2, 0.3),
        });
        await store.upsert([drawer]);
        const [plain] = await store.scan({ ids: [drawer.id] });
        const { vector, ...rest } = drawer;
        expect(plain).toMatchObject(rest);
        const [withVector] = await store.scan({ ids: [drawer.id] }, { withVectors: true });
        expect(Array.from(withVector?.vector ?? [])).toEqual(Array.from(vector));
      });

      it('keeps null source_file, parent_id and rating as null, and false as false', async () => {
        const unrated = storedDrawer();
        const notUseful = storedDrawer({ useful: false });
        await store.upsert([unrated, notUseful]);
        const rows = await store.scan({});
        expect(rows.find((r) => r.id === unrated.id)).toMatchObject({
          source_file: null,
          parent_id: null,
          useful: null,
        });
        expect(rows.find((r) => r.id === notUseful.id)?.useful).toBe(false);
      });

      it('is idempotent by id: the same drawer twice is one row, a changed one replaces it', async () => {
        const drawer = storedDrawer({ content: 'first version' });
        await store.upsert([drawer]);
        await store.upsert([drawer]);
        expect(await store.count()).toBe(1);
        await store.upsert([
          { ...drawer, content: 'second version', room: 'outcomes', vector: axisVector(3) },
        ]);
        expect(await store.count()).toBe(1);
        const [row] = await store.scan({ ids: [drawer.id] }, { withVectors: true });
        expect(row).toMatchObject({ content: 'second version', room: 'outcomes' });
        expect(Array.from(row?.vector ?? [])).toEqual(Array.from(axisVector(3)));
      });

      it('accepts an empty batch', async () => {
        await store.upsert([]);
        expect(await store.count()).toBe(0);
      });

      it('stores quotes, backslashes, unicode and SQL-looking text verbatim and filters on them safely', async () => {
        const tricky = storedDrawer({
          wing: "O'Brien",
          room: 'it\'s "quoted"',
          content: "Robert'); DROP TABLE drawers;-- \\ 100% naïve 🙂 O'Brien",
          source_file: "/home/o'brien/notes.md",
        });
        const other = storedDrawer({ wing: 'OBrien' });
        await store.upsert([tricky, other]);
        expect(ids(await store.scan({ wing: "O'Brien" }))).toEqual([tricky.id]);
        expect(ids(await store.scan({ room: 'it\'s "quoted"' }))).toEqual([tricky.id]);
        expect(ids(await store.scan({ source_file: "/home/o'brien/notes.md" }))).toEqual([tricky.id]);
        expect(ids(await store.scan({ ids: ["drawer_' OR '1'='1"] }))).toEqual([]);
        expect((await store.scan({ ids: [tricky.id] }))[0]?.content).toBe(tricky.content);
        expect(await store.count({ wing: "O'Brien" })).toBe(1);
        expect(await store.count()).toBe(2);
      });
    });

    describe('scan filters', () => {
      let a: StoredDrawer;
      let b: StoredDrawer;
      let c: StoredDrawer;
      let d: StoredDrawer;
      let e: StoredDrawer;

      beforeEach(async () => {
        a = storedDrawer({
          wing: 'alpha',
          room: 'decisions',
          tags: ['db', '100%'],
          source_file: '/src/a.ts',
        });
        b = storedDrawer({ wing: 'alpha', room: 'outcomes', tags: ['a_b'], source_file: '/src/a.ts' });
        c = storedDrawer({
          wing: 'beta',
          room: 'decisions',
          tags: ['axb', '1000'],
          parent_id: 'drawer_parent00000000000000001',
        });
        d = storedDrawer({
          wing: 'beta',
          room: 'decisions',
          tags: ['dbx', 'back\\slash'],
          parent_id: 'drawer_parent00000000000000001',
        });
        e = storedDrawer({ wing: 'gamma', room: 'misc', tags: [] });
        await store.upsert([a, b, c, d, e]);
      });

      it('by ids (any of), and an empty id list matches nothing', async () => {
        expect(sortedIds(await store.scan({ ids: [a.id, c.id, 'drawer_missing000000000000000'] }))).toEqual(
          [a.id, c.id].sort(),
        );
        expect(await store.scan({ ids: [] })).toEqual([]);
        expect(await store.count({ ids: [] })).toBe(0);
      });

      it('by wing, room, and both together', async () => {
        expect(sortedIds(await store.scan({ wing: 'alpha' }))).toEqual([a.id, b.id].sort());
        expect(sortedIds(await store.scan({ room: 'decisions' }))).toEqual([a.id, c.id, d.id].sort());
        expect(ids(await store.scan({ wing: 'alpha', room: 'decisions' }))).toEqual([a.id]);
        expect(await store.scan({ wing: 'nowhere' })).toEqual([]);
      });

      it('by tags: any of, whole tags only', async () => {
        expect(sortedIds(await store.scan({ tags: ['db'] }))).toEqual([a.id]);
        expect(sortedIds(await store.scan({ tags: ['db', 'dbx'] }))).toEqual([a.id, d.id].sort());
        expect(await store.scan({ tags: ['d'] })).toEqual([]);
        expect(sortedIds(await store.scan({ tags: [] }))).toEqual([a.id, b.id, c.id, d.id, e.id].sort());
      });

      it('by tags holding LIKE and regex special characters, matched literally', async () => {
        expect(ids(await store.scan({ tags: ['100%'] }))).toEqual([a.id]);
        expect(ids(await store.scan({ tags: ['a_b'] }))).toEqual([b.id]);
        expect(ids(await store.scan({ tags: ['back\\slash'] }))).toEqual([d.id]);
        for (const pattern of ['%', '_', '10%', 'a%', '_xb', 'a.b', '.*', '[ab]', '1000|axb', '^db$'])
          expect(ids(await store.scan({ tags: [pattern] })), pattern).toEqual([]);
      });

      it('by source_file and parent_id', async () => {
        expect(sortedIds(await store.scan({ source_file: '/src/a.ts' }))).toEqual([a.id, b.id].sort());
        expect(sortedIds(await store.scan({ parent_id: 'drawer_parent00000000000000001' }))).toEqual(
          [c.id, d.id].sort(),
        );
        expect(await store.scan({ source_file: '/src/a' })).toEqual([]);
      });

      it('combines conditions with AND', async () => {
        expect(ids(await store.scan({ wing: 'beta', tags: ['1000', 'db'] }))).toEqual([c.id]);
        expect(ids(await store.scan({ wing: 'alpha', source_file: '/src/a.ts', room: 'outcomes' }))).toEqual([
          b.id,
        ]);
        expect(await store.scan({ wing: 'gamma', tags: ['db'] })).toEqual([]);
      });

      it('counts with the same filters', async () => {
        expect(await store.count()).toBe(5);
        expect(await store.count({})).toBe(5);
        expect(await store.count({ wing: 'beta' })).toBe(2);
        expect(await store.count({ tags: ['a_b', '100%'] })).toBe(2);
        expect(await store.count({ parent_id: 'drawer_parent00000000000000001', tags: ['dbx'] })).toBe(1);
        expect(await store.count({ room: 'nowhere' })).toBe(0);
      });
    });

    describe('scan order and paging', () => {
      it('orders by filed_at then id, and pages with limit/offset without gaps or repeats', async () => {
        const drawers = [
          storedDrawer({ id: 'drawer_000000000000000000000003', filed_at: '2026-02-01T10:00:02Z' }),
          storedDrawer({ id: 'drawer_000000000000000000000001', filed_at: '2026-02-01T10:00:02Z' }),
          storedDrawer({ id: 'drawer_000000000000000000000009', filed_at: '2026-01-15T08:00:00Z' }),
          storedDrawer({ id: 'drawer_000000000000000000000002', filed_at: '2026-03-01T00:00:00Z' }),
          storedDrawer({ id: 'drawer_000000000000000000000005', filed_at: '2026-02-01T10:00:02Z' }),
        ];
        // Written in two batches so the rows are not stored in their sorted order.
        await store.upsert(drawers.slice(3));
        await store.upsert(drawers.slice(0, 3));
        const expected = [
          'drawer_000000000000000000000009',
          'drawer_000000000000000000000001',
          'drawer_000000000000000000000003',
          'drawer_000000000000000000000005',
          'drawer_000000000000000000000002',
        ];
        expect(ids(await store.scan({}))).toEqual(expected);
        const paged: string[] = [];
        for (let offset = 0; offset < 6; offset += 2)
          paged.push(...ids(await store.scan({}, { limit: 2, offset })));
        expect(paged).toEqual(expected);
        expect(ids(await store.scan({}, { limit: 3 }))).toEqual(expected.slice(0, 3));
        expect(ids(await store.scan({}, { offset: 4 }))).toEqual(expected.slice(4));
        expect(await store.scan({}, { offset: 10 })).toEqual([]);
        expect(ids(await store.scan({}))).toEqual(expected); // stable across calls
      });

      it('returns only the asked-for columns when told to', async () => {
        const drawer = storedDrawer({ wing: 'alpha', room: 'notes', tags: ['x'] });
        await store.upsert([drawer]);
        const [row] = await store.scan({}, { columns: ['id', 'wing', 'tags'] });
        expect(row).toMatchObject({ id: drawer.id, wing: 'alpha', tags: ['x'] });
      });
    });

    describe.runIf(options.placementSummary)('placement summary (the census load)', () => {
      it('gives the rows per wing and room, and the rows in the asked rooms or rated useful, as a scan does', async () => {
        const rooms = ['decisions', "o'brien"];
        const drawers = [
          storedDrawer({ wing: 'alpha', room: 'decisions', useful: null, filed_at: '2026-01-01T00:00:01Z' }),
          storedDrawer({ wing: 'alpha', room: 'notes', useful: true, chunk_index: 2 }),
          storedDrawer({ wing: 'alpha', room: 'notes', useful: false }),
          storedDrawer({ wing: 'beta', room: "o'brien", useful: false }),
          storedDrawer({ wing: 'beta', room: 'notes', useful: null }),
          storedDrawer({ wing: 'beta', room: 'notes', useful: null }),
          storedDrawer({ wing: "it's", room: 'decisions OR 1=1', useful: null }),
        ];
        await store.upsert(drawers);
        await store.patch({ ids: [drawers[4]?.id ?? ''] }, { useful: true });
        const rows = await store.scan({}, { columns: [...CENSUS_COLUMNS] });
        const places = new Map<string, number>();
        for (const r of rows) places.set(`${r.wing}/${r.room}`, (places.get(`${r.wing}/${r.room}`) ?? 0) + 1);
        const marked = rows.filter((r) => rooms.includes(r.room) || r.useful === true);
        expect(marked.map((r) => r.id).sort()).toHaveLength(4);

        const summary = await store.placementSummary?.(rooms);
        if (!summary) throw new Error(`${name} has no placementSummary`);
        expect(new Map(summary.places.map((p) => [`${p.wing}/${p.room}`, p.rows]))).toEqual(places);
        expect(summary.places).toHaveLength(places.size);
        const pick = (r: StoredDrawer): Partial<StoredDrawer> => ({ id: r.id, wing: r.wing, room: r.room, useful: r.useful, filed_at: r.filed_at, chunk_index: r.chunk_index });
        const byId = (a: Partial<StoredDrawer>, b: Partial<StoredDrawer>): number => String(a.id).localeCompare(String(b.id));
        expect(summary.marked.map(pick).sort(byId)).toEqual(marked.map(pick).sort(byId));
        // No room asked: the useful rows alone.
        expect((await store.placementSummary?.([]))?.marked.map((r) => r.id).sort()).toEqual(rows.filter((r) => r.useful === true).map((r) => r.id).sort());
      });

      it('is empty on an empty store', async () => {
        expect(await store.placementSummary?.(['decisions'])).toEqual({ places: [], marked: [] });
      });

      it('counts places written in several batches, runs of one place and names of one length alike', async () => {
        // Runs of one place, then places that alternate row by row; names of equal byte length that
        // differ (a byte compare must tell them apart), and non-ASCII names.
        const names: Array<[string, string]> = [['ab', 'xy'], ['ba', 'xy'], ['ab', 'yx'], ['wïng', 'rööm'], ['wing', 'room'], ['é', 'e1']];
        for (let batch = 0; batch < 3; batch++) {
          const drawers: StoredDrawer[] = [];
          for (let i = 0; i < 40; i++) {
            const [wing, room] = names[i < 20 ? batch % names.length : i % names.length] as [string, string];
            drawers.push(storedDrawer({ wing, room }));
          }
          await store.upsert(drawers);
        }
        const rows = await store.scan({}, { columns: ['wing', 'room'] });
        expect(rows).toHaveLength(120);
        const places = new Map<string, number>();
        for (const r of rows) places.set(`${r.wing}/${r.room}`, (places.get(`${r.wing}/${r.room}`) ?? 0) + 1);
        const summary = await store.placementSummary?.([]);
        expect(new Map(summary?.places.map((p) => [`${p.wing}/${p.room}`, p.rows]))).toEqual(places);
        expect(summary?.places).toHaveLength(names.length);
      });
    });

    describe('patch', () => {
      it('changes wing, room, tags and rating without touching content, vector or other fields', async () => {
        const drawer = storedDrawer({
          wing: 'alpha',
          room: 'inbox',
          tags: ['old'],
          content: 'verbatim text that must never change\n',
          source_file: '/notes/x.md',
          metadata: { k: 'v' },
          vector: axisVector(4, 5, 0.2),
        });
        const bystander = storedDrawer({ wing: 'alpha', room: 'inbox' });
        await store.upsert([drawer, bystander]);
        expect(
          await store.patch(
            { ids: [drawer.id] },
            { wing: 'beta', room: 'decisions', tags: ['new', '50%_off'], useful: false },
          ),
        ).toBe(1);
        const [row] = await store.scan({ ids: [drawer.id] }, { withVectors: true });
        expect(row).toMatchObject({
          wing: 'beta',
          room: 'decisions',
          tags: ['new', '50%_off'],
          useful: false,
          content: drawer.content,
          source_file: drawer.source_file,
          filed_at: drawer.filed_at,
          added_by: drawer.added_by,
          metadata: drawer.metadata,
          embedder: drawer.embedder,
        });
        expect(Array.from(row?.vector ?? [])).toEqual(Array.from(drawer.vector));
        expect((await store.scan({ ids: [bystander.id] }))[0]).toMatchObject({
          wing: 'alpha',
          room: 'inbox',
          useful: null,
        });
        expect(ids(await store.scan({ tags: ['50%_off'] }))).toEqual([drawer.id]);
      });

      it('changes only the fields given, can clear a rating, and can empty the tags', async () => {
        const drawer = storedDrawer({ wing: 'alpha', room: 'inbox', tags: ['keep'] });
        await store.upsert([drawer]);
        expect(await store.patch({ ids: [drawer.id] }, { useful: true })).toBe(1);
        expect((await store.scan({ ids: [drawer.id] }))[0]).toMatchObject({
          wing: 'alpha',
          room: 'inbox',
          tags: ['keep'],
          useful: true,
        });
        expect(await store.patch({ ids: [drawer.id] }, { useful: null, tags: [] })).toBe(1);
        expect((await store.scan({ ids: [drawer.id] }))[0]).toMatchObject({ tags: [], useful: null });
        expect(await store.scan({ tags: ['keep'] })).toEqual([]);
      });

      it('patches every row a filter matches and reports how many', async () => {
        const parent = 'drawer_parent00000000000000002';
        const chunks = [0, 1, 2].map((i) =>
          storedDrawer({ parent_id: parent, chunk_index: i, room: 'inbox' }),
        );
        const other = storedDrawer({ room: 'inbox' });
        await store.upsert([...chunks, other]);
        expect(await store.patch({ parent_id: parent }, { room: 'archive' })).toBe(3);
        expect(sortedIds(await store.scan({ room: 'archive' }))).toEqual(sortedIds(chunks));
        expect(ids(await store.scan({ room: 'inbox' }))).toEqual([other.id]);
      });

      it('reports 0 when nothing matches and changes nothing', async () => {
        const drawer = storedDrawer({ room: 'inbox' });
        await store.upsert([drawer]);
        expect(await store.patch({ ids: ['drawer_000000000000000000000abc'] }, { room: 'elsewhere' })).toBe(
          0,
        );
        expect(await store.patch({ ids: [] }, { room: 'elsewhere' })).toBe(0);
        expect((await store.scan({}))[0]?.room).toBe('inbox');
      });

      it("takes quotes in new values safely (O'Brien)", async () => {
        const drawer = storedDrawer();
        await store.upsert([drawer]);
        expect(
          await store.patch({ ids: [drawer.id] }, { wing: "O'Brien", room: "it's", tags: ["o'brien"] }),
        ).toBe(1);
        expect((await store.scan({ wing: "O'Brien", room: "it's", tags: ["o'brien"] }))[0]?.id).toBe(
          drawer.id,
        );
      });
    });

    describe('delete', () => {
      it('deletes what a filter matches and returns the count', async () => {
        const parent = 'drawer_parent00000000000000003';
        const chunks = [0, 1].map((i) => storedDrawer({ parent_id: parent, chunk_index: i }));
        const single = storedDrawer({ wing: "O'Brien" });
        const kept = storedDrawer({ wing: 'kept' });
        await store.upsert([...chunks, single, kept]);
        expect(await store.delete({ parent_id: parent })).toBe(2);
        expect(await store.delete({ wing: "O'Brien" })).toBe(1);
        expect(await store.count()).toBe(1);
        expect(ids(await store.scan({}))).toEqual([kept.id]);
      });

      it('returns 0 for no match and never treats an empty id list as "everything"', async () => {
        await store.upsert([storedDrawer(), storedDrawer()]);
        expect(await store.delete({ ids: ['drawer_000000000000000000000abc'] })).toBe(0);
        expect(await store.delete({ ids: [] })).toBe(0);
        expect(await store.count()).toBe(2);
      });

      it('removes the drawer from vector and full-text results', async () => {
        const gone = storedDrawer({ content: 'zeppelin maintenance schedule', vector: axisVector(6) });
        const kept = storedDrawer({ content: 'zeppelin hangar location', vector: axisVector(6, 7, 0.1) });
        await store.upsert([gone, kept]);
        expect(ids((await store.fullText('zeppelin', {}, 10)).map((h) => h.drawer))).toContain(gone.id);
        expect(await store.delete({ ids: [gone.id] })).toBe(1);
        expect(ids((await store.search(axisVector(6), {}, 10)).map((h) => h.drawer))).toEqual([kept.id]);
        expect(ids((await store.fullText('zeppelin', {}, 10)).map((h) => h.drawer))).toEqual([kept.id]);
      });
    });

    describe('vector search', () => {
      let exact: StoredDrawer;
      let near: StoredDrawer;
      let far: StoredDrawer;
      let opposite: StoredDrawer;

      beforeEach(async () => {
        const minusAxis0 = axisVector(0).map((x) => -x);
        exact = storedDrawer({ wing: 'alpha', room: 'r1', tags: ['t1'], vector: axisVector(0) });
        near = storedDrawer({ wing: 'alpha', room: 'r2', tags: ['t2'], vector: axisVector(0, 1, 0.2) });
        far = storedDrawer({ wing: 'beta', room: 'r1', tags: ['t1', 't3'], vector: axisVector(0, 1, 0.7) });
        opposite = storedDrawer({ wing: 'beta', room: 'r2', tags: ['t3'], vector: minusAxis0 });
        await store.upsert([far, opposite, exact, near]);
      });

      it('returns nearest first by cosine distance: ~0 for the same direction, ~2 for the opposite', async () => {
        const hits = await store.search(axisVector(0), {}, 10);
        expect(ids(hits.map((h) => h.drawer))).toEqual([exact.id, near.id, far.id, opposite.id]);
        expect(hits[0]?.distance ?? 1).toBeCloseTo(0, 5);
        expect(hits[3]?.distance ?? 0).toBeCloseTo(2, 5);
        const distances = hits.map((h) => h.distance);
        expect([...distances].sort((x, y) => x - y)).toEqual(distances);
        expect(hits[1]?.distance ?? 0).toBeCloseTo(1 - Math.cos(0.2 * (Math.PI / 2)), 4);
      });

      it('measures cosine, not length: a scaled query finds the same distances', async () => {
        const scaled = axisVector(0).map((x) => x * 7.5);
        const hits = await store.search(scaled, {}, 1);
        expect(hits[0]?.drawer.id).toBe(exact.id);
        expect(hits[0]?.distance ?? 1).toBeCloseTo(0, 5);
      });

      it('honours the limit and returns whole drawers', async () => {
        const hits = await store.search(axisVector(0), {}, 2);
        expect(ids(hits.map((h) => h.drawer))).toEqual([exact.id, near.id]);
        expect(hits[0]?.drawer).toMatchObject({
          wing: 'alpha',
          room: 'r1',
          tags: ['t1'],
          content: exact.content,
        });
      });

      it.each<[string, DrawerFilter, () => string[]]>([
        ['wing', { wing: 'beta' }, () => [far.id, opposite.id]],
        ['room', { room: 'r2' }, () => [near.id, opposite.id]],
        ['tags (any of)', { tags: ['t2', 't3'] }, () => [near.id, far.id, opposite.id]],
        ['wing and tag', { wing: 'beta', tags: ['t1'] }, () => [far.id]],
        ['ids', { ids: [] }, () => []],
      ])(
        'filters by %s before ranking (a filtered-out nearer drawer never takes a slot)',
        async (_what, filter, expected) => {
          expect(ids((await store.search(axisVector(0), filter, 10)).map((h) => h.drawer))).toEqual(
            expected(),
          );
          const [first] = await store.search(axisVector(0), filter, 1);
          expect(first?.drawer.id).toBe(expected()[0]);
        },
      );
    });

    describe('full-text search', () => {
      let pnpm: StoredDrawer;
      let lance: StoredDrawer;
      let both: StoredDrawer;

      beforeEach(async () => {
        pnpm = storedDrawer({
          wing: 'alpha',
          room: 'tooling',
          tags: ['build'],
          content: 'We switched the monorepo to pnpm workspaces in March.',
        });
        lance = storedDrawer({
          wing: 'alpha',
          room: 'storage',
          tags: ['db'],
          content: 'LanceDB stores the vectors next to the palace.',
        });
        both = storedDrawer({
          wing: 'beta',
          room: 'tooling',
          tags: ['db', 'build'],
          content: 'The CI image caches pnpm and the LanceDB native module.',
        });
        await store.upsert([
          pnpm,
          lance,
          both,
          storedDrawer({ wing: 'gamma', content: 'Unrelated note about lunch.' }),
        ]);
      });

      it('finds drawers containing the keyword, with a positive score, best first', async () => {
        const hits = await store.fullText('pnpm', {}, 10);
        expect(sortedIds(hits.map((h) => h.drawer))).toEqual([pnpm.id, both.id].sort());
        for (const h of hits) expect(h.score).toBeGreaterThan(0);
        expect(hits.map((h) => h.score)).toEqual([...hits.map((h) => h.score)].sort((x, y) => y - x));
        expect(hits.find((h) => h.drawer.id === pnpm.id)?.drawer.content).toBe(pnpm.content);
      });

      it('gives fullText\'s ids and scores from fullTextScores (hybrid search\'s by-id BM25), when the store has it', async () => {
        const filter = { ids: [pnpm.id, lance.id, both.id] };
        const full = (await store.fullText('pnpm LanceDB', filter, 3)).map((h) => ({ id: h.drawer.id, score: h.score }));
        expect(full.length).toBeGreaterThan(0);
        if (store.fullTextScores) expect(await store.fullTextScores('pnpm LanceDB', filter, 3)).toEqual(full);
      });

      it('ranks a drawer matching more query terms above one matching fewer', async () => {
        const hits = await store.fullText('pnpm LanceDB', {}, 10);
        expect(hits[0]?.drawer.id).toBe(both.id);
        expect(sortedIds(hits.map((h) => h.drawer))).toEqual([pnpm.id, lance.id, both.id].sort());
      });

      it('is case-insensitive and returns nothing for an absent word', async () => {
        expect(sortedIds((await store.fullText('LANCEDB', {}, 10)).map((h) => h.drawer))).toEqual(
          [lance.id, both.id].sort(),
        );
        expect(await store.fullText('kubernetes', {}, 10)).toEqual([]);
      });

      it('respects wing, room and tag filters and the limit', async () => {
        expect(ids((await store.fullText('pnpm', { wing: 'beta' }, 10)).map((h) => h.drawer))).toEqual([
          both.id,
        ]);
        expect(ids((await store.fullText('lancedb', { room: 'storage' }, 10)).map((h) => h.drawer))).toEqual([
          lance.id,
        ]);
        expect(ids((await store.fullText('pnpm', { tags: ['db'] }, 10)).map((h) => h.drawer))).toEqual([
          both.id,
        ]);
        expect(await store.fullText('pnpm', { wing: 'gamma' }, 10)).toEqual([]);
        expect(await store.fullText('pnpm', {}, 1)).toHaveLength(1);
      });

      it('finds drawers written after earlier full-text searches, and follows patches', async () => {
        expect(await store.fullText('quokka', {}, 10)).toEqual([]);
        const late = storedDrawer({ wing: 'alpha', content: 'A quokka visited the office.' });
        await store.upsert([late]);
        expect(ids((await store.fullText('quokka', {}, 10)).map((h) => h.drawer))).toEqual([late.id]);
        await store.patch({ ids: [late.id] }, { wing: 'delta' });
        expect(ids((await store.fullText('quokka', { wing: 'delta' }, 10)).map((h) => h.drawer))).toEqual([
          late.id,
        ]);
        expect(await store.fullText('quokka', { wing: 'alpha' }, 10)).toEqual([]);
      });

      it('answers concurrent first full-text searches all alike (no index-build race)', async () => {
        const results = await Promise.all(Array.from({ length: 8 }, () => store.fullText('pnpm', {}, 10)));
        for (const hits of results)
          expect(sortedIds(hits.map((h) => h.drawer))).toEqual([pnpm.id, both.id].sort());
      });

      it('treats quotes and query-syntax characters in the query as text, never as an error', async () => {
        const obrien = storedDrawer({ content: "O'Brien approved the pnpm migration." });
        await store.upsert([obrien]);
        for (const q of [
          "O'Brien",
          '"pnpm',
          'pnpm AND (',
          'pnpm:*',
          'pnpm OR',
          "'; DROP TABLE drawers; --",
        ]) {
          const hits = await store.fullText(q, {}, 10);
          expect(Array.isArray(hits), q).toBe(true);
        }
        expect(ids((await store.fullText("O'Brien", {}, 10)).map((h) => h.drawer))).toContain(obrien.id);
      });
    });

    describe('on an empty store', () => {
      it('search, full-text, scan, patch and delete all answer with nothing', async () => {
        expect(await store.search(axisVector(0), {}, 5)).toEqual([]);
        expect(await store.fullText('anything', {}, 5)).toEqual([]);
        expect(await store.scan({ wing: 'x' })).toEqual([]);
        expect(await store.patch({ wing: 'x' }, { room: 'y' })).toBe(0);
        expect(await store.delete({ wing: 'x' })).toBe(0);
        expect(await store.count({ tags: ['x'] })).toBe(0);
      });
    });
  });
}
