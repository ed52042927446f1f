// Group commit of concurrent drawer writes (memory.ts addDrawer with a write step), on the stack a
// hub opens: a real LanceDB table under the census and the SQLite write journal. The embedder is a
// deterministic bag-of-words hash (a real Embedder: same text, same unit vector), which hands a
// broken vector (wrong size) for a text that asks for one: a drawer the store refuses.
// - a drawer the store refuses fails alone; the others of its group are filed (and a neighbour that
//   was a near-copy of it is checked again);
// - identical drawers in one group get exactly the results they get filed one after another;
// - each drawer is searchable when its call returns;
// - the store's one-query nearest rows and its append path match search and mergeInsert.

import { afterEach, describe, expect, it } from 'vitest';

import { HubError } from '../../hub/src/errors.js';
import type { Embedder } from '../../hub/src/embed/embedder.js';
import { silentLogger } from '../../hub/src/log.js';
import { JournaledVectorStore } from '../../hub/src/memory/drawers/journaled-vector-store.js';
import { Memory, type AddDrawerInput, type AddDrawerResult, type WriteStep } from '../../hub/src/memory/drawers/memory.js';
import { MemoryJournal } from '../../hub/src/memory/drawers/memory-journal.js';
import { CensusVectorStore } from '../../hub/src/memory/drawers/placement-census.js';
import { LanceDbVectorStore } from '../../hub/src/vector/lancedb-vector-store.js';
import type { StoredDrawer } from '../../hub/src/vector/vector-store.js';
import { makeTmpDir, type TmpDir } from '../helpers/tmp-dir.js';
import { wordVector as wordVectorOf } from '../helpers/word-vector.js';

const DIM = 64;
const BROKEN = 'BROKEN-VECTOR';

const wordVector = (text: string): Float32Array => wordVectorOf(text, DIM);

/** The hash embedder, counting the texts it embedded; a text containing BROKEN gets a vector one short. */
function testEmbedder(): Embedder & { embedded: number } {
  const e = {
    embedded: 0,
    info: () => ({ provider: 'test', model: 'bag-of-words-hash', dimensions: DIM, device: 'cpu' }),
    embed: async (texts: readonly string[]) => {
      e.embedded += texts.length;
      return texts.map((t) => (t.includes(BROKEN) ? wordVector(t).slice(1) : wordVector(t)));
    },
    close: async () => undefined,
  };
  return e;
}

interface Palace {
  memory: Memory;
  embedder: ReturnType<typeof testEmbedder>;
  journal: MemoryJournal;
  store: LanceDbVectorStore;
}

const open: Array<{ palace: Palace; dir: TmpDir }> = [];

/**
 * The store stack openMemory builds (census over journal over LanceDB), with the test embedder;
 * `idFilter` as a hub's LanceDB process keeps it (lookups of ids never written skip the table).
 */
async function openPalace(idFilter: boolean): Promise<Palace> {
  const dir = makeTmpDir('palace-group-commit-');
  const store = await LanceDbVectorStore.open({ palacePath: dir.path, dimensions: DIM, log: silentLogger, idFilter });
  const journal = MemoryJournal.open(dir.path);
  const embedder = testEmbedder();
  const memory = new Memory({ store: new CensusVectorStore(new JournaledVectorStore(store, journal), new Set()), embedder });
  const palace = { memory, embedder, journal, store };
  open.push({ palace, dir });
  return palace;
}

afterEach(async () => {
  for (const { palace, dir } of open.splice(0)) {
    await palace.memory.close();
    dir.cleanup();
  }
});

/** A one-at-a-time write step (the hub's request lock), which counts the steps it ran. */
function lockStep(): { step: WriteStep; runs: () => number; hold: () => () => void } {
  let chain: Promise<unknown> = Promise.resolve();
  let gate: Promise<void> = Promise.resolve();
  let runs = 0;
  const step: WriteStep = (fn) => {
    const next = chain.then(() => gate).then(() => {
      runs++;
      return fn();
    });
    chain = next.catch(() => undefined);
    return next;
  };
  const hold = (): (() => void) => {
    let open!: () => void;
    gate = new Promise<void>((resolve) => (open = resolve));
    return open;
  };
  return { step, runs: () => runs, hold };
}

/**
 * Files `inputs` concurrently as ONE group commit: the step is held until every drawer is embedded
 * (so all wait in the group), then released. Each entry is the call's result or its error.
 */
async function fileAsOneGroup(palace: Palace, inputs: readonly AddDrawerInput[]): Promise<Array<AddDrawerResult | HubError>> {
  const lock = lockStep();
  const release = lock.hold();
  const before = palace.embedder.embedded;
  const calls = inputs.map((input) => palace.memory.addDrawer(input, { step: lock.step }).catch((err: unknown) => err as HubError));
  while (palace.embedder.embedded - before < inputs.length) await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
  release();
  const results = await Promise.all(calls);
  expect(lock.runs()).toBe(1); // one commit step took them all
  return results;
}

async function fileOneByOne(palace: Palace, inputs: readonly AddDrawerInput[]): Promise<Array<AddDrawerResult | HubError>> {
  const lock = lockStep();
  const out: Array<AddDrawerResult | HubError> = [];
  for (const input of inputs) out.push(await palace.memory.addDrawer(input, { step: lock.step }).catch((err: unknown) => err as HubError));
  return out;
}

const SUBJECTS = ['parser', 'scheduler', 'cache', 'router', 'lease', 'journal', 'tokenizer', 'dashboard'];
const note = (i: number): string => `The ${SUBJECTS[i % SUBJECTS.length]} team decided in week ${i} that deploys wait for the staging soak number ${i * 7}.`;

describe.each([{ idFilter: false }, { idFilter: true }])('group commit of concurrent drawer writes (id filter: $idFilter)', ({ idFilter }) => {
  it('a drawer the store refuses fails alone: the others of its group are filed and found', async () => {
    const palace = await openPalace(idFilter);
    const inputs: AddDrawerInput[] = [
      { wing: 'w', room: 'a', content: 'Releases are cut on Thursdays after the freeze, by the release captain.' },
      { wing: 'w', room: 'b', content: `${BROKEN} the billing export runs nightly at two in the morning` },
      { wing: 'w', room: 'c', content: 'Releases are cut on Thursdays after the freeze, by the release captain!' },
      { wing: 'w', room: 'd', content: `${BROKEN} forced: the on-call rota changes on Mondays`, force: true },
      { wing: 'w', room: 'e', content: 'Laptop provisioning goes through the IT portal, never by email.' },
    ];
    const [first, broken, near, brokenForced, last] = await fileAsOneGroup(palace, inputs);
    expect(first).toMatchObject({ filed: true, room: 'a' });
    // The near-copy of the first drawer still names it: checked again after the group's write failed.
    expect(near).toMatchObject({ filed: false, duplicate_of: (first as AddDrawerResult).drawer_id });
    expect(last).toMatchObject({ filed: true, room: 'e' });
    expect(broken).toBeInstanceOf(Error);
    expect(brokenForced).toBeInstanceOf(HubError);
    expect((brokenForced as HubError).code).toBe('memory.embedder_mismatch');
    for (const ok of [first, last] as AddDrawerResult[]) expect((await palace.memory.getDrawer(ok.drawer_id)).room).toBe(ok.room);
    expect((await palace.memory.counts()).drawers).toBe(2);
  });

  it('identical drawers in one group get the results they get filed one after another', async () => {
    const same = 'Deploys to production happen on Tuesdays after the staging soak passes, never on Fridays.';
    const other = 'Code review needs two approvals for anything touching the payment service.';
    const inputs: AddDrawerInput[] = [
      { wing: 'w', room: 'r1', content: same, added_by: 'a' },
      { wing: 'w', room: 'r1', content: same, added_by: 'b' }, // the same drawer (same place, same text)
      { wing: 'w', room: 'r2', content: same }, // a near-copy elsewhere
      { wing: 'w', room: 'r1', content: other },
      { wing: 'w', room: 'r3', content: other, force: true }, // a near-copy, forced: filed
      { wing: 'w', room: 'r1', content: same, force: true }, // an exact re-filing, even forced: not filed
      { wing: 'w', room: 'r3', content: other, force: true }, // the forced one again: now stored
    ];
    const sequential = await openPalace(idFilter);
    const grouped = await openPalace(idFilter);
    const one = await fileOneByOne(sequential, inputs);
    const all = await fileAsOneGroup(grouped, inputs);
    expect(all).toEqual(one);
    expect(one.map((r) => (r as AddDrawerResult).filed)).toEqual([true, false, false, true, true, false, false]);
    const rows = async (p: Palace): Promise<Array<Partial<StoredDrawer>>> =>
      (await p.store.scan({})).map((d) => ({ id: d.id, room: d.room, added_by: d.added_by })).sort((x, y) => String(x.id).localeCompare(String(y.id)));
    expect(await rows(grouped)).toEqual(await rows(sequential));
    expect(await rows(grouped)).toHaveLength(3);
  });

  it('every drawer is searchable when its call returns', async () => {
    const palace = await openPalace(idFilter);
    const lock = lockStep();
    const seen: string[] = [];
    await Promise.all(
      Array.from({ length: 8 }, async (_, i) => {
        const content = note(i);
        const r = await palace.memory.addDrawer({ wing: 'w', room: `r${i}`, content, force: true }, { step: lock.step });
        // Before any other call is awaited: the drawer must already be in the store and its index.
        const [hit] = (await palace.memory.search({ query: content, mode: 'vector', limit: 1 })).results;
        expect(hit?.drawer_id).toBe(r.drawer_id);
        expect((await palace.memory.getDrawer(r.drawer_id)).content).toBe(content);
        seen.push(r.drawer_id);
      }),
    );
    expect(new Set(seen).size).toBe(8);
    expect(lock.runs()).toBeLessThan(8); // some calls shared a commit
  });

  it('leaves nothing pending in the write journal once the calls return', async () => {
    const palace = await openPalace(idFilter);
    await fileAsOneGroup(palace, [0, 1, 2, 3].map((i) => ({ wing: 'w', room: 'r', content: note(i), force: true })));
    expect(palace.journal.pendingCount()).toBe(0);
  });
});

describe.each([{ idFilter: false }, { idFilter: true }])('the LanceDB store under the group commit (id filter: $idFilter)', ({ idFilter }) => {
  const row = (i: number, content = note(i)): StoredDrawer => ({
    id: `drawer_${i.toString(16).padStart(24, '0')}`,
    wing: 'w',
    room: `r${i % 3}`,
    tags: [],
    content,
    source_file: null,
    chunk_index: 0,
    parent_id: i % 4 === 0 ? `drawer_${'f'.repeat(24)}` : null,
    filed_at: '2026-11-28T00:00:00Z',
    added_by: 'test',
    useful: null,
    metadata: {},
    embedder: `bag-of-words-hash/${DIM}`,
    vector: wordVector(content),
  });

  it('nearestEach answers one query per vector with the row search ranks first', async () => {
    const { store } = await openPalace(idFilter);
    // Several commits (fragments), as one drawer per call leaves them between compactions.
    for (let i = 0; i < 40; i += 4) await store.upsert([row(i), row(i + 1), row(i + 2), row(i + 3)]);
    const queries = [3, 17, 22, 39, 5].map((i) => wordVector(`${note(i)} and more`));
    const many = await store.nearestEach(queries);
    expect(many).toHaveLength(queries.length);
    for (const [i, q] of queries.entries()) {
      const [top] = await store.search(q, {}, 1);
      expect(many[i]).toMatchObject({ id: top?.drawer.id, parent_id: top?.drawer.parent_id, wing: top?.drawer.wing, room: top?.drawer.room });
      expect(many[i]?.distance).toBeCloseTo(top?.distance ?? -1, 5);
    }
    expect(await store.nearestEach([])).toEqual([]);
  });

  it('upsert appends new ids and replaces stored ones: never two rows for an id', async () => {
    const { store } = await openPalace(idFilter);
    await store.upsert([row(1), row(2)]);
    await store.upsert([row(2, 'replaced two'), row(3)]); // one stored id, one new
    await store.upsert([row(4, 'first four'), row(4, 'second four')]); // an id repeated in one batch: the last wins
    await Promise.all([store.upsert([row(5, 'five a')]), store.upsert([row(5, 'five b')])]); // the same new id, concurrently
    // A scan that found the id absent lets the next upsert skip its lookup, once: not after a write.
    expect(await store.scan({ ids: [row(6).id] }, { columns: ['id'] })).toEqual([]);
    await store.upsert([row(6, 'six a')]);
    await store.upsert([row(6, 'six b')]);
    expect(await store.scan({ ids: [row(7).id] }, { columns: ['id'] })).toEqual([]);
    await Promise.all([store.upsert([row(7, 'seven a')]), store.upsert([row(7, 'seven b')])]);
    expect(await store.scan({ ids: [row(8).id] }, { columns: ['id'] })).toEqual([]);
    await Promise.all([store.patch({ ids: [row(1).id] }, { room: 'moved' }), store.upsert([row(8, 'eight')])]);
    const rows = await store.scan({});
    expect(rows.map((r) => r.id).sort()).toEqual([1, 2, 3, 4, 5, 6, 7, 8].map((i) => row(i).id));
    expect(rows.find((r) => r.id === row(6).id)?.content).toBe('six b');
    expect(rows.find((r) => r.id === row(7).id)?.content).toBe('seven b');
    expect(rows.find((r) => r.id === row(1).id)?.room).toBe('moved');
    expect(rows.find((r) => r.id === row(2).id)?.content).toBe('replaced two');
    expect(rows.find((r) => r.id === row(4).id)?.content).toBe('second four');
    expect(rows.find((r) => r.id === row(5).id)?.content).toBe('five b');
  });
});
