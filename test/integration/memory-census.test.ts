// The placement census (hub/src/memory/drawers/placement-census.ts) against the truth: after every kind of
// write (add, forced re-add, delete by id and by filter, move, retag, rate, re-mine of a source file)
// the census-backed counts, wings, rooms, taxonomy, useful ids, the newest rows of the decisions
// room and of the useful rows (wake-up's reads) and every page of /list by wing (listDrawers, whose
// wing order the census keeps) equal a fresh scan of the store.

import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadConfig } from '../../hub/src/config.js';
import { silentLogger } from '../../hub/src/log.js';
import type { Memory } from '../../hub/src/memory/drawers/memory.js';
import { openMemory } from '../../hub/src/memory/drawers/open-memory.js';
import { palaceShape } from '../../hub/src/memory/navigation/palace-graph.js';
import { listDrawers } from '../../hub/src/memory/navigation/palace-views.js';
import { makeTmpDir, type TmpDir } from '../helpers/tmp-dir.js';

/** wing → room → rows, and useful ids, counted from a full scan (what the census must equal). */
async function truth(memory: Memory): Promise<{ taxonomy: Record<string, Record<string, number>>; useful: string[] }> {
  const rows = await memory.scanDrawers({}, { columns: ['id', 'wing', 'room', 'useful', 'filed_at', 'chunk_index'] });
  const taxonomy: Record<string, Record<string, number>> = {};
  for (const r of rows) {
    const rooms = (taxonomy[r.wing] ??= {});
    rooms[r.room] = (rooms[r.room] ?? 0) + 1;
  }
  return { taxonomy, useful: rows.filter((r) => r.useful === true).map((r) => r.drawer_id).sort() };
}

/** (filed_at, id) ascending by code unit: /list's order ("newest last"). */
function sortedIds(rows: ReadonlyArray<{ drawer_id: string; filed_at: string }>): string[] {
  const key = (r: { drawer_id: string; filed_at: string }): string => `${r.filed_at}\u0000${r.drawer_id}`;
  return [...rows].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0)).map((r) => r.drawer_id);
}

/** Every page of listDrawers (what GET /list answers) by wing, and by wing and room, against a full sort of a fresh scan. */
async function expectListRight(memory: Memory, step: string, pageSize: number): Promise<void> {
  const rows = await memory.scanDrawers({}, { columns: ['id', 'wing', 'room', 'filed_at'] });
  const places = new Set(rows.map((r) => `${r.wing}/${r.room}`));
  const queries = [...new Set(rows.map((r) => r.wing))].map((wing) => ({ wing, room: undefined as string | undefined }));
  for (const place of places) {
    const [wing = '', room] = place.split('/');
    queries.push({ wing, room });
  }
  queries.push({ wing: 'no-such-wing', room: undefined });
  for (const q of queries) {
    const want = sortedIds(rows.filter((r) => r.wing === q.wing && (q.room === undefined || r.room === q.room)));
    const got: string[] = [];
    for (let offset = 0; ; offset += pageSize) {
      const page = await listDrawers(memory, { wing: q.wing, room: q.room, limit: pageSize, offset });
      expect(page.total, `${step}: total of ${q.wing}/${q.room ?? '*'}`).toBe(want.length);
      expect(page.drawers.every((d) => d.wing === q.wing && (q.room === undefined || d.room === q.room)), `${step}: placement of ${q.wing}/${q.room ?? '*'}`).toBe(true);
      got.push(...page.drawers.map((d) => d.drawer_id));
      if (page.drawers.length < pageSize) break;
    }
    expect(got, `${step}: pages of ${q.wing}/${q.room ?? '*'}`).toEqual(want);
  }
}

async function expectCensusRight(memory: Memory, step: string): Promise<void> {
  await expectListRight(memory, step, 2);
  const want = await truth(memory);
  const shape = await palaceShape(memory);
  expect(shape.taxonomy, step).toEqual(want.taxonomy);
  const drawers = Object.values(want.taxonomy).reduce((n, rooms) => n + Object.values(rooms).reduce((a, b) => a + b, 0), 0);
  const rooms = Object.values(want.taxonomy).reduce((n, r) => n + Object.keys(r).length, 0);
  expect(await memory.counts(), step).toEqual({ drawers, wings: Object.keys(want.taxonomy).length, rooms });
  const wings = (await memory.listWings()).wings;
  expect(wings, step).toEqual(Object.fromEntries(Object.entries(want.taxonomy).map(([w, r]) => [w, Object.values(r).reduce((a, b) => a + b, 0)])));
  for (const wing of Object.keys(want.taxonomy)) {
    expect((await memory.listRooms(wing)).rooms, `${step}: rooms of ${wing}`).toEqual(want.taxonomy[wing]);
    expect(await memory.countDrawers({ wing }), `${step}: count of ${wing}`).toBe(wings[wing]);
  }
  expect((await memory.usefulIds()).sort(), step).toEqual(want.useful);
  // Newest first by (filed_at, id), as a scan in the store's (filed_at, id) order reversed.
  const all = (await memory.scanDrawers({}, { columns: ['id', 'wing', 'room', 'useful', 'filed_at', 'chunk_index'] })).reverse();
  for (const wing of [undefined, ...Object.keys(want.taxonomy)]) {
    const decisions = all.filter((r) => r.room === 'decisions' && r.chunk_index === 0 && (wing === undefined || r.wing === wing)).map((r) => r.drawer_id);
    expect((await memory.newestInRoom('decisions', wing, 3)).map((r) => r.id), `${step}: newest decisions of ${wing ?? 'all'}`).toEqual(decisions.slice(0, 3));
    const useful = all.filter((r) => r.useful === true && (wing === undefined || r.wing === wing)).map((r) => r.drawer_id);
    expect((await memory.newestUseful(wing, 100)).map((r) => r.id), `${step}: newest useful of ${wing ?? 'all'}`).toEqual(useful);
  }
}

describe('placement census', () => {
  let dir: TmpDir;
  let memory: Memory;
  const config = (): ReturnType<typeof loadConfig> => loadConfig({}, { PALACE_HOME: join(dir.path, 'home'), PALACE_PALACE_PATH: join(dir.path, 'palace') });

  beforeAll(async () => {
    dir = makeTmpDir('palace-census-');
    memory = await openMemory(config(), config().palacePath, silentLogger);
  }, 60_000);

  afterAll(async () => {
    await memory.close();
    dir.cleanup();
  });

  it('stays equal to a full scan through adds, moves, ratings, deletes and re-mines', async () => {
    await expectCensusRight(memory, 'empty');
    const a = await memory.addDrawer({ wing: 'acme', room: 'ops', content: 'The deploy runs every night at two.', added_by: 't' });
    const b = await memory.addDrawer({ wing: 'acme', room: 'people', content: 'Alice owns the billing service and its alerts.', added_by: 't' });
    await expectCensusRight(memory, 'two drawers (census loaded)');
    const c = await memory.addDrawer({ wing: 'zeta', room: 'ops', content: 'Zeta keeps its backups in a separate region for safety.', added_by: 't' });
    // Filing the same content in the same place again changes nothing.
    await memory.addDrawer({ wing: 'zeta', room: 'ops', content: 'Zeta keeps its backups in a separate region for safety.', added_by: 't', force: true });
    const long = await memory.addDrawer({ wing: 'zeta', room: 'notes', content: `${'A long note about the sync protocol and its peers. '.repeat(60)}`, added_by: 't', force: true });
    expect(long.chunk_ids?.length ?? 0).toBeGreaterThan(1);
    await expectCensusRight(memory, 'adds');

    await memory.relocate(a.drawer_id, { wing: 'zeta', room: 'ops' });
    await memory.relocate(long.drawer_id, { room: 'protocol' });
    await expectCensusRight(memory, 'moves');

    await memory.rate(b.drawer_id, true);
    await memory.rate(c.drawer_id, true);
    await expectCensusRight(memory, 'rated useful');
    const d1 = await memory.addDrawer({ wing: 'acme', room: 'decisions', content: 'We chose Postgres for the billing ledger.', added_by: 't' });
    await memory.addDrawer({ wing: 'zeta', room: 'decisions', content: 'Backups move to a second region in March.', added_by: 't' });
    await expectCensusRight(memory, 'decisions filed');
    await memory.relocate(c.drawer_id, { room: 'decisions' });
    await memory.relocate(d1.drawer_id, { wing: 'zeta' });
    await expectCensusRight(memory, 'moved into and within decisions');
    await memory.rate(c.drawer_id, false);
    await memory.relocate(b.drawer_id, { tags: ['people'] });
    await expectCensusRight(memory, 'rated not useful, retagged');

    await memory.fileSources([
      { source_file: '/src/app.ts', wing: 'code', room: 'src', tags: [], added_by: 't', metadata: {}, chunks: [0, 1, 2].map((index) => ({ index, start: index * 10, end: index * 10 + 10, text: `function part${index}() { return ${index}; }` })), vectors: (await memory.embedDocuments(['x', 'y', 'z'])), replace: false },
    ]);
    await expectCensusRight(memory, 'mined three chunks');
    await memory.fileSources([
      { source_file: '/src/app.ts', wing: 'code', room: 'lib', tags: [], added_by: 't', metadata: {}, chunks: [{ index: 0, start: 0, end: 10, text: 'function whole() {}' }], vectors: await memory.embedDocuments(['w']), replace: true },
    ]);
    await expectCensusRight(memory, 're-mined into one chunk in another room');

    await memory.patchDrawers({ wing: 'zeta' }, { wing: 'omega' }, 'test');
    await expectCensusRight(memory, 'bulk move of a wing');
    await memory.deleteDrawer(b.drawer_id);
    await expectCensusRight(memory, 'deleted the useful drawer');
    expect(await memory.deleteDrawers({ room: 'protocol' })).toBeGreaterThan(1);
    await memory.removeSources(['/src/app.ts']);
    await expectCensusRight(memory, 'deleted by filter and by source');

    // Concurrent writes and reads: the census still agrees once they settle.
    await Promise.all([
      ...Array.from({ length: 6 }, (_, i) => memory.addDrawer({ wing: `w${i % 3}`, room: `r${i % 2}`, content: `Concurrent note ${i}: the quick brown fox ${i} jumps.`, added_by: 't', force: true })),
      memory.counts(),
      memory.listWings(),
    ]);
    await expectCensusRight(memory, 'concurrent adds');
  }, 120_000);

  it('pages of a wing stay a full sort through restores with old filing times, moves, re-mines and deletes', async () => {
    // Rows filed at scattered times (an import keeps filed_at), so new rows land inside the order, not only at its end.
    const stamp = (i: number): string => new Date(Date.UTC(2025, 0, 1) + ((i * 7919) % 97) * 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z');
    const portable = (i: number, wing: string, room: string) => ({
      id: `drawer_${(1_000_000 + i * 7).toString(16).padStart(24, '0')}`,
      wing,
      room,
      tags: [],
      content: `Imported note ${i} about the ledger and its nightly export.`,
      source_file: null,
      chunk_index: 0,
      parent_id: null,
      filed_at: stamp(i),
      added_by: 'import',
      useful: null,
      metadata: {},
    });
    await memory.restoreDrawers(Array.from({ length: 30 }, (_, i) => portable(i, 'ledger', i % 3 === 0 ? 'exports' : 'notes')));
    await expectListRight(memory, 'restored', 4);
    await memory.restoreDrawers(Array.from({ length: 12 }, (_, i) => portable(100 + i, i % 2 === 0 ? 'ledger' : 'archive', 'notes')));
    await expectListRight(memory, 'restored more, inside the order', 5);
    await memory.relocate(portable(3, '', '').id, { wing: 'archive' });
    await memory.relocate(portable(4, '', '').id, { room: 'exports' });
    await memory.patchDrawers({ wing: 'ledger', room: 'exports' }, { room: 'reports' }, 'test');
    await expectListRight(memory, 'moved between and within wings', 3);
    await memory.fileSources([
      { source_file: '/src/ledger.ts', wing: 'ledger', room: 'src', tags: [], added_by: 't', metadata: {}, chunks: [0, 1].map((index) => ({ index, start: index * 10, end: index * 10 + 10, text: `function ledger${index}() {}` })), vectors: await memory.embedDocuments(['a', 'b']), replace: false },
    ]);
    await memory.fileSources([
      { source_file: '/src/ledger.ts', wing: 'ledger', room: 'lib', tags: [], added_by: 't', metadata: {}, chunks: [{ index: 0, start: 0, end: 10, text: 'function ledgerAll() {}' }], vectors: await memory.embedDocuments(['c']), replace: true },
    ]);
    await expectListRight(memory, 're-mined', 4);
    await memory.deleteDrawer(portable(9, '', '').id);
    await memory.deleteDrawers({ wing: 'ledger', room: 'reports' });
    await memory.patchDrawers({ wing: 'archive' }, { wing: 'ledger' }, 'test');
    await expectListRight(memory, 'deleted and merged a wing into another', 7);
  }, 120_000);

  it('a freshly opened memory loads the same census from the store', async () => {
    const before = await palaceShape(memory);
    await memory.close();
    memory = await openMemory(config(), config().palacePath, silentLogger);
    expect((await palaceShape(memory)).taxonomy).toEqual(before.taxonomy);
    await expectCensusRight(memory, 'reopened');
  }, 60_000);
});
