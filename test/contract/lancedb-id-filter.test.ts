// The LanceDB store with its id filter (a hub's LanceDB process): the VectorStore contract holds, an
// id never written is answered without a query, and no stored id is ever taken for a new one (a
// deleted id, an id written while the stored ids were being read, an id filed twice).

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { silentLogger } from '../../hub/src/log.js';
import { idHash, IdFilter } from '../../hub/src/vector/id-filter.js';
import { LanceDbVectorStore } from '../../hub/src/vector/lancedb-vector-store.js';
import { makeTmpDir, type TmpDir } from '../helpers/tmp-dir.js';
import { axisVector, closingFixture, CONTRACT_DIMENSIONS, runVectorStoreContract, storedDrawer } from './vector-store.contract.js';

runVectorStoreContract('LanceDbVectorStore with its id filter', async (dimensions) => {
  const dir = makeTmpDir('palace-lance-ids-');
  const store = await LanceDbVectorStore.open({ palacePath: dir.path, dimensions, log: silentLogger, idFilter: true });
  return closingFixture(store, { dispose: () => dir.cleanup() });
});

/** Counts the queries the store sends to its table (white box: the table handle is private). */
function countQueries(store: LanceDbVectorStore): { n: number } {
  const counter = { n: 0 };
  const table = (store as unknown as { table: { query: () => unknown } }).table;
  const query = table.query.bind(table);
  table.query = () => {
    counter.n++;
    return query();
  };
  return counter;
}

describe('LanceDbVectorStore id filter', () => {
  let dir: TmpDir;
  let store: LanceDbVectorStore;

  beforeEach(async () => {
    dir = makeTmpDir('palace-lance-ids-');
    store = await LanceDbVectorStore.open({ palacePath: dir.path, dimensions: CONTRACT_DIMENSIONS, log: silentLogger, idFilter: true });
  });

  afterEach(async () => {
    await store.close();
    dir.cleanup();
  });

  it('answers a lookup of ids never written without a query, and finds the stored ones among them', async () => {
    const stored = Array.from({ length: 5 }, (_, i) => storedDrawer({ vector: axisVector(i % CONTRACT_DIMENSIONS) }));
    await store.upsert(stored);
    await store.indexesSettled(); // the stored ids are read once, after the first write
    const queries = countQueries(store);
    const fresh = Array.from({ length: 20 }, () => storedDrawer().id);
    expect(await store.scan({ ids: fresh }, { columns: ['id'] })).toEqual([]);
    expect(queries.n).toBe(0);
    const mixed = [...fresh.slice(0, 3), stored[1]?.id ?? '', stored[3]?.id ?? ''];
    expect((await store.scan({ ids: mixed }, { columns: ['id'] })).map((d) => d.id).sort()).toEqual([stored[1]?.id, stored[3]?.id].sort());
    expect(queries.n).toBe(1);
  });

  it('still finds ids stored before the store opened, and a deleted id is looked up (and absent)', async () => {
    const before = storedDrawer({ vector: axisVector(1) });
    await store.upsert([before]);
    await store.close();
    store = await LanceDbVectorStore.open({ palacePath: dir.path, dimensions: CONTRACT_DIMENSIONS, log: silentLogger, idFilter: true });
    const other = storedDrawer({ vector: axisVector(2) });
    await store.upsert([other]); // starts the read of the stored ids
    await store.indexesSettled();
    expect((await store.scan({ ids: [before.id, other.id] }, { columns: ['id'] })).map((d) => d.id).sort()).toEqual([before.id, other.id].sort());
    await store.delete({ ids: [before.id] });
    expect(await store.scan({ ids: [before.id] })).toEqual([]);
    await store.upsert([{ ...before, content: 'filed again' }]);
    expect((await store.scan({ ids: [before.id] })).map((d) => d.content)).toEqual(['filed again']);
  });

  it('never appends a second row for an id already stored (filed twice, or written during the read of the ids)', async () => {
    const a = storedDrawer({ vector: axisVector(0) });
    const b = storedDrawer({ vector: axisVector(1) });
    // b is written while the first write's read of the stored ids may still run.
    await Promise.all([store.upsert([a]), store.upsert([b])]);
    await store.indexesSettled();
    await store.upsert([{ ...a, content: 'a again' }]);
    await store.upsert([{ ...b, content: 'b again' }]);
    expect(await store.count()).toBe(2);
    expect((await store.scan({ ids: [a.id, b.id] })).map((d) => d.content).sort()).toEqual(['a again', 'b again']);
  });
});

describe('IdFilter', () => {
  it('says absent only once loaded, and only for ids it never saw (loaded or added)', async () => {
    const filter = new IdFilter();
    filter.add(['drawer_added']);
    expect(filter.absent('drawer_new')).toBe(false); // not loaded: it cannot tell
    let finish: (ids: string[]) => void = () => undefined;
    filter.load(() => new Promise<string[]>((resolve) => (finish = resolve)), () => undefined);
    filter.add(['drawer_during']); // written while the stored ids are read
    finish(['drawer_stored']);
    await filter.settled();
    expect(filter.ready()).toBe(true);
    for (const id of ['drawer_added', 'drawer_during', 'drawer_stored']) expect(filter.absent(id)).toBe(false);
    expect(filter.absent('drawer_new')).toBe(true);
  });

  it('stays unloaded (answering nothing) when the read fails', async () => {
    const filter = new IdFilter();
    const errors: unknown[] = [];
    filter.load(() => Promise.reject(new Error('disk gone')), (err) => errors.push(err));
    await filter.settled();
    expect(errors).toHaveLength(1);
    expect(filter.ready()).toBe(false);
    expect(filter.absent('drawer_x')).toBe(false);
  });

  it('hashes to small non-negative integers', () => {
    for (const id of ['', 'drawer_0', 'drawer_ffffffffffffffffffffffff_c12', 'ü'.repeat(100)]) {
      const h = idHash(id);
      expect(Number.isInteger(h) && h >= 0 && h < 2 ** 30).toBe(true);
    }
  });
});
