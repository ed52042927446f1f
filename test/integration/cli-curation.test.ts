// Curation on a real hub (in-process, real port, official MCP SDK client) and through the real CLI
// (one process per command, against that hub and against palaces opened directly): checkpoint,
// bulk-move, purge, prune, rename-wing, export/import and a bounded wake-up, refusal paths included.

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { DrawerView } from '../../hub/src/memory/drawers/memory.js';
import type { Hub } from '../../hub/src/server.js';
import { makeTempPalace, parseJson, startCli, type CliResult, type ErrorJson, type TempPalace } from '../helpers/cli.js';
import { callJson, childEnv, connectHttpClient, makeHubDirs, resultJson, startTestHub, type HubDirs } from '../helpers/hub.js';

// Every CLI command without a hub is a fresh Node process that loads the model: allow for a loaded machine.
const SLOW = { timeout: 180_000 };

/** Content whose bytes must survive every relocation: CRLF, tabs, trailing spaces, non-ASCII, no final newline. */
const TRICKY = 'Release checklist:\r\n\t1. bump the version   \r\n\t2. tag it — ünïcödé 🦉\n\n```js\nconst x = 1;\n```\nlast line  ';

function fakeId(label: string): string {
  return `drawer_${createHash('sha256').update(label).digest('hex').slice(0, 24)}`;
}

function row(label: string, fields: Record<string, unknown>): Record<string, unknown> {
  return {
    id: fakeId(label),
    wing: 'legacy',
    room: 'notes',
    tags: [],
    content: `Legacy note ${label}: ${label.repeat(3)} was recorded for the old tracker.`,
    source_file: null,
    chunk_index: 0,
    parent_id: null,
    filed_at: '2020-01-01T00:00:00Z',
    added_by: 'importer',
    useful: null,
    metadata: {},
    ...fields,
  };
}

function ok(result: CliResult): CliResult {
  if (result.code !== 0) throw new Error(`exit ${String(result.code)}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
  return result;
}

function errorOf(result: unknown): { code: string; message: string; field?: string } {
  expect((result as { isError?: boolean }).isError).toBe(true);
  return resultJson<ErrorJson>(result).error;
}

describe('curation tools on a live hub, and the CLI through it', SLOW, () => {
  let dirs: HubDirs;
  let hub: Hub;
  let client: Client;

  const cli = (args: string[], stdin?: string): Promise<CliResult> =>
    startCli(['--palace', dirs.palace, ...args], childEnv(dirs), stdin === undefined ? {} : { stdin }).done;
  const file = async (wing: string, room: string, content: string, extra: Record<string, unknown> = {}): Promise<string> =>
    (await callJson<{ drawer_id: string }>(client, 'palace_add_drawer', { wing, room, content, force: true, ...extra }, 60_000)).drawer_id;
  const get = (id: string) => callJson<DrawerView & { chunk_ids?: string[] }>(client, 'palace_get_drawer', { drawer_id: id });
  const count = async (wing?: string): Promise<number> =>
    (await callJson<{ total: number }>(client, 'palace_list_drawers', { ...(wing ? { wing } : {}), limit: 1 })).total;

  beforeAll(async () => {
    dirs = makeHubDirs('palace-curate-');
    hub = await startTestHub(dirs, { env: { PALACE_AGENT_NAME: 'hub-agent' } });
    client = await connectHttpClient(hub.url, { name: 'curation-test' });
  }, 120_000);

  afterAll(async () => {
    await client?.close();
    await hub?.close();
    dirs?.cleanup();
  });

  it('palace_checkpoint files items, reports duplicates (stored and within the call) and bad items by index, and writes a diary entry', async () => {
    const stored = await file('cp', 'decisions', 'We deploy the hub as a single static binary built by the release workflow.');
    const items = [
      { wing: 'cp', room: 'decisions', content: 'The logstream keeps events forever; compaction is never automatic.' },
      { wing: 'cp', room: 'decisions', content: 'The logstream keeps events forever; compaction is never automatic!' },
      { wing: 'cp', room: 'decisions', content: 'We deploy the hub as a single static binary built by the release workflow.' },
      { wing: 'cp', room: 'secrets', content: 'the deploy key is ghp_abcdefghijklmnopqrstuvwxyz0123456789AB' },
      { room: 'nowhere', content: 'an item with no wing' },
      { wing: 'cp', room: 'people', content: 'Dana reviews every change to the sync protocol before it ships.', tags: ['review'] },
    ];
    const before = await count();
    const dry = await callJson<{ dry_run: boolean; added: Array<{ index: number }>; duplicates: Array<{ index: number }>; errors: Array<{ index: number; code: string }>; diary: { would_write?: boolean } }>(
      client,
      'palace_checkpoint',
      { items, diary: { agent: 'box-claude', entry: 'Checkpointed the design notes.' }, dry_run: true },
      60_000,
    );
    expect(dry.dry_run).toBe(true);
    expect(dry.added.map((a) => a.index)).toEqual([0, 5]);
    expect(dry.diary.would_write).toBe(true);
    expect(await count()).toBe(before);

    const r = await callJson<{
      added: Array<{ index: number; drawer_id: string }>;
      duplicates: Array<{ index: number; duplicate_of: string; similarity: number; within_call: boolean }>;
      errors: Array<{ index: number; code: string; field?: string }>;
      diary: { entry_id: string; agent: string; wing: string };
    }>(client, 'palace_checkpoint', { items, diary: { agent: 'box-claude', entry: 'Checkpointed the design notes.', topic: 'design' }, added_by: 'box-claude' }, 60_000);
    expect(r.added.map((a) => a.index)).toEqual([0, 5]);
    const first = r.added[0]?.drawer_id as string;
    expect(r.duplicates).toEqual([
      { index: 1, duplicate_of: first, similarity: expect.any(Number), within_call: true },
      { index: 2, duplicate_of: stored, similarity: 1, within_call: false },
    ]);
    expect(r.duplicates[0]?.similarity).toBeGreaterThanOrEqual(0.9);
    expect(r.errors.map((e) => [e.index, e.code])).toEqual([
      [3, 'memory.secret_refused'],
      [4, 'input.invalid'],
    ]);
    expect(r.errors[1]?.field).toBe('wing');
    expect(await count()).toBe(before + 3); // two items and the diary entry
    expect(await get(first)).toMatchObject({ wing: 'cp', room: 'decisions', added_by: 'box-claude', content: items[0]?.content });
    const diary = await callJson<{ entries: Array<{ entry_id: string; topic: string; content: string }> }>(client, 'palace_diary_read', { agent_name: 'box-claude' });
    expect(diary.entries).toEqual([expect.objectContaining({ entry_id: r.diary.entry_id, topic: 'design', content: 'Checkpointed the design notes.' })]);
    // A stricter threshold lets the near-copy through.
    const strict = await callJson<{ added: unknown[]; duplicates: unknown[] }>(client, 'palace_checkpoint', { items: [items[1]], dedup_threshold: 0.999, dry_run: true });
    expect(strict.added).toHaveLength(1);
    expect(errorOf(await client.callTool({ name: 'palace_checkpoint', arguments: { items: [] } })).field).toBe('items');
    // One call's contents are bounded like one drawer's (1 MiB): refused whole, nothing filed.
    const countBefore = await count();
    const big = Array.from({ length: 3 }, (_v, i) => ({ wing: 'cp', room: 'bulk', content: `${i} ${'x'.repeat(400 * 1024)}` }));
    const tooLarge = errorOf(await client.callTool({ name: 'palace_checkpoint', arguments: { items: big } }));
    expect(tooLarge).toMatchObject({ code: 'input.too_large', field: 'items' });
    expect(await count()).toBe(countBefore);
  });

  it('CLI checkpoint reads a JSON array or JSONL (stdin), --dry-run writes nothing, a refused item exits 2', async () => {
    const dir = join(dirs.root, 'cp');
    mkdirSync(dir, { recursive: true });
    const arrayFile = join(dir, 'items.json');
    writeFileSync(arrayFile, JSON.stringify([{ wing: 'cpcli', room: 'ops', content: 'Backups of the palace run nightly with restic to the NAS.' }]));
    const before = await count('cpcli');
    const dry = parseJson<{ dry_run: boolean; added: unknown[] }>(ok(await cli(['checkpoint', '--items-file', arrayFile, '--dry-run', '--json'])));
    expect(dry).toMatchObject({ dry_run: true, added: [expect.objectContaining({ index: 0 })] });
    expect(await count('cpcli')).toBe(before);
    const real = ok(await cli(['checkpoint', '--items-file', arrayFile, '--agent', 'box-codex', '--diary', 'Filed the backup note.']));
    expect(real.stdout).toContain('Filed 1, 0 duplicates, 0 errors.');
    expect(await count('cpcli')).toBe(1);
    expect(await count('box-codex')).toBe(1);

    const jsonl = [
      JSON.stringify({ wing: 'cpcli', room: 'ops', content: 'The staging hub restarts every Sunday at 03:00 UTC.' }),
      JSON.stringify({ wing: 'cpcli', room: 'ops', content: 'AKIAABCDEFGHIJKLMNOP is the old access key' }),
    ].join('\n');
    const mixed = await cli(['checkpoint', '--items-file', '-', '--json'], jsonl);
    expect(mixed.code).toBe(2);
    const body = parseJson<{ added: unknown[]; errors: Array<{ index: number; code: string }> }>(mixed);
    expect(body.added).toHaveLength(1);
    expect(body.errors).toEqual([expect.objectContaining({ index: 1, code: 'memory.secret_refused' })]);
    expect(await count('cpcli')).toBe(2);
    const broken = await cli(['checkpoint', '--items-file', '-', '--json'], '{"wing": "x"\n');
    expect(broken.code).toBe(2);
    expect(parseJson<ErrorJson>(broken).error.field).toBe('--items-file');
  });

  it('palace_bulk_move previews by default, then moves whole drawers (all chunks) without touching content and records placement_history', async () => {
    const tricky = await file('mv', 'inbox', TRICKY, { tags: ['release'] });
    const long = Array.from({ length: 12 }, (_v, i) => `Paragraph ${i}: the migration plan step ${i} moves table t${i} to the new schema and verifies row counts.`).join('\n\n');
    const chunked = await file('mv', 'inbox', long);
    const chunkIds = (await get(chunked)).chunk_ids as string[];
    expect(chunkIds.length).toBeGreaterThan(1);
    const stay = await file('mv', 'keep', 'This drawer stays where it is: the keep room is not selected.');

    const preview = await callJson<{ dry_run: boolean; drawers_to_move: number; rows_to_move: number }>(client, 'palace_bulk_move', { from_wing: 'mv', from_room: 'inbox', to_wing: 'archive' });
    expect(preview).toMatchObject({ dry_run: true, drawers_to_move: 2, rows_to_move: 1 + chunkIds.length });
    expect(await get(tricky)).toMatchObject({ wing: 'mv', room: 'inbox' });

    // Selecting one chunk by id moves its whole drawer.
    const byChunk = await callJson<{ moved_rows: number; drawers: Array<{ drawer_id: string }> }>(client, 'palace_bulk_move', { ids: [chunkIds[1]], to_room: 'plans', dry_run: false });
    expect(byChunk.moved_rows).toBe(chunkIds.length);
    expect(byChunk.drawers.map((d) => d.drawer_id)).toEqual([chunked]);
    const moved = await get(chunked);
    expect(moved).toMatchObject({ wing: 'mv', room: 'plans', content: long });
    expect(moved.metadata.placement_history).toEqual([{ from: { wing: 'mv', room: 'inbox' }, to: { wing: 'mv', room: 'plans' }, at: expect.any(String), via: 'bulk-move' }]);

    const byTag = await callJson<{ moved_drawers: number }>(client, 'palace_bulk_move', { tags: ['release'], to_wing: 'archive', to_room: 'releases', dry_run: false });
    expect(byTag.moved_drawers).toBe(1);
    const after = await get(tricky);
    expect(after).toMatchObject({ wing: 'archive', room: 'releases' });
    expect(Buffer.from(after.content, 'utf8').equals(Buffer.from(TRICKY, 'utf8'))).toBe(true);
    expect(await get(stay)).toMatchObject({ wing: 'mv', room: 'keep' });
    // Search still finds the moved drawer in its new place (same vector, no re-embedding).
    const found = await callJson<{ results: Array<{ drawer_id: string }> }>(client, 'palace_search', { query: 'release checklist bump the version', wing: 'archive' });
    expect(found.results.map((h) => h.drawer_id)).toContain(tricky);

    expect(errorOf(await client.callTool({ name: 'palace_bulk_move', arguments: { to_wing: 'x' } })).field).toBe('from_wing');
    expect(errorOf(await client.callTool({ name: 'palace_bulk_move', arguments: { from_wing: 'mv' } })).field).toBe('to_wing');
  });

  it('CLI bulk-move: dry run by default; unattended --apply without --yes exits 2 and moves nothing; --apply --yes moves', async () => {
    const id = await file('bm', 'todo', TRICKY.replace('Release', 'Hotfix'));
    const dry = ok(await cli(['bulk-move', '--from-wing', 'bm', '--to-wing', 'bm-done']));
    expect(dry.stdout).toContain('Would move 1 drawer');
    expect(dry.stdout).toContain(`${id}  bm/todo -> bm-done/todo`);
    expect(await get(id)).toMatchObject({ wing: 'bm' });

    const refused = await cli(['bulk-move', '--from-wing', 'bm', '--to-wing', 'bm-done', '--apply', '--json']);
    expect(refused.code).toBe(2);
    expect(parseJson<ErrorJson>(refused).error).toMatchObject({ code: 'input.invalid', field: '--yes' });
    expect(await get(id)).toMatchObject({ wing: 'bm', room: 'todo' });

    const applied = parseJson<{ moved_drawers: number }>(ok(await cli(['bulk-move', '--from-wing', 'bm', '--to-wing', 'bm-done', '--apply', '--yes', '--json'])));
    expect(applied.moved_drawers).toBe(1);
    const after = await get(id);
    expect(after.wing).toBe('bm-done');
    expect(Buffer.from(after.content).equals(Buffer.from(TRICKY.replace('Release', 'Hotfix')))).toBe(true);

    const [noSource, noTarget] = await Promise.all([cli(['bulk-move', '--to-wing', 'x']), cli(['bulk-move', '--from-wing', 'bm-done'])]);
    expect(noSource.code).toBe(2);
    expect(noTarget.code).toBe(2);
  });

  it('palace_purge and CLI purge: refused without a filter, preview by default, delete only what matches with --confirm', async () => {
    const a = await file('pg', 'logs', 'Mined build log line about the flaky integration job.', { source_file: '/src/build.log' });
    const b = await file('pg', 'logs', 'Another note kept in the logs room on purpose.');
    const c = await file('pg', 'other', 'Mined note from the same build log in another room.', { source_file: '/src/build.log' });

    expect(errorOf(await client.callTool({ name: 'palace_purge', arguments: {} })).field).toBe('source_file');
    const preview = await callJson<{ dry_run: boolean; drawers: number }>(client, 'palace_purge', { source_file: '/src/build.log' });
    expect(preview).toMatchObject({ dry_run: true, drawers: 2 });
    expect(await count('pg')).toBe(3);
    const gone = await callJson<{ deleted_drawers: number }>(client, 'palace_purge', { source_file: '/src/build.log', room: 'logs', dry_run: false });
    expect(gone.deleted_drawers).toBe(1);
    const left = await callJson<{ drawers: Array<{ drawer_id: string }> }>(client, 'palace_list_drawers', { wing: 'pg' });
    expect(left.drawers.map((d) => d.drawer_id).sort()).toEqual([b, c].sort());
    expect(left.drawers.map((d) => d.drawer_id)).not.toContain(a);

    // The refused purge and the preview write nothing: at once.
    const [unfiltered, dryRun] = await Promise.all([cli(['purge', '--json']), cli(['purge', '--wing', 'pg'])]);
    expect(unfiltered.code).toBe(2);
    expect(parseJson<ErrorJson>(unfiltered).error.field).toBe('--source-file');
    const dry = ok(dryRun);
    expect(dry.stdout).toContain('Would delete 2 drawers');
    expect(await count('pg')).toBe(2);
    const done = parseJson<{ deleted_drawers: number }>(ok(await cli(['purge', '--wing', 'pg', '--room', 'other', '--confirm', '--json'])));
    expect(done.deleted_drawers).toBe(1);
    expect(await count('pg')).toBe(1);
  });

  it('palace_prune and CLI prune: preview by default, --confirm removes only stale drawers, a drawer without a parseable filed_at is never pruned', async () => {
    const rows = [
      row('old-a', { wing: 'pr', filed_at: '2020-01-01T00:00:00Z' }),
      row('old-b', { wing: 'pr', filed_at: '2021-06-01' }),
      row('bad', { wing: 'pr', filed_at: 'sometime last spring' }),
      row('none', { wing: 'pr', filed_at: '' }),
      row('fresh', { wing: 'pr', filed_at: new Date().toISOString() }),
      row('old-elsewhere', { wing: 'pr-other', filed_at: '2020-01-01T00:00:00Z' }),
    ];
    const imported = await callJson<{ drawers: { imported: number } }>(client, 'palace_import', { drawers: rows }, 60_000);
    expect(imported.drawers.imported).toBe(6);

    const preview = await callJson<{ dry_run: boolean; stale: number; skipped_unparseable: number; skipped: Array<{ drawer_id: string }> }>(client, 'palace_prune', { stale_days: 30, wing: 'pr' });
    expect(preview).toMatchObject({ dry_run: true, stale: 2, skipped_unparseable: 2 });
    expect(preview.skipped.map((s) => s.drawer_id).sort()).toEqual([fakeId('bad'), fakeId('none')].sort());
    expect(await count('pr')).toBe(5);

    const dryCli = ok(await cli(['prune', '--stale-days', '30', '--wing', 'pr']));
    expect(dryCli.stdout).toContain('Would prune 2 of 5 drawers');
    expect(dryCli.stdout).toContain('Skipped 2 with no parseable filed_at');
    expect(await count('pr')).toBe(5);

    const confirmed = parseJson<{ pruned_drawers: number; drawers: Array<{ drawer_id: string }> }>(ok(await cli(['prune', '--stale-days', '30', '--wing', 'pr', '--confirm', '--json'])));
    expect(confirmed.pruned_drawers).toBe(2);
    const left = await callJson<{ drawers: Array<{ drawer_id: string }> }>(client, 'palace_list_drawers', { wing: 'pr' });
    expect(left.drawers.map((d) => d.drawer_id).sort()).toEqual([fakeId('bad'), fakeId('none'), fakeId('fresh')].sort());
    expect(await count('pr-other')).toBe(1);
    const [badDays, noDays] = await Promise.all([cli(['prune', '--stale-days', 'soon']), cli(['prune'])]);
    expect(badDays.code).toBe(2);
    expect(noDays.code).toBe(2);
  });

  it('palace_rename_wing and CLI rename-wing move every drawer and declared room; --dry-run changes nothing', async () => {
    const id = await file('oldname', 'design', 'The dashboard polls /statusz every two seconds while visible.');
    await callJson(client, 'palace_rooms_add', { wing: 'oldname', room: 'empty-room' });
    const dry = ok(await cli(['rename-wing', 'oldname', 'newname', '--dry-run']));
    expect(dry.stdout).toContain('Would move 1 drawer');
    expect(await get(id)).toMatchObject({ wing: 'oldname' });

    const done = parseJson<{ moved_rows: number; declared_rooms: string[] }>(ok(await cli(['rename-wing', 'oldname', 'newname', '--json'])));
    expect(done).toMatchObject({ moved_rows: 1, declared_rooms: ['empty-room'] });
    const after = await get(id);
    expect(after).toMatchObject({ wing: 'newname', room: 'design', content: 'The dashboard polls /statusz every two seconds while visible.' });
    expect(after.metadata.placement_history).toEqual([{ from: { wing: 'oldname', room: 'design' }, to: { wing: 'newname', room: 'design' }, at: expect.any(String), via: 'rename-wing' }]);
    const tax = await callJson<{ taxonomy: Record<string, Record<string, number>> }>(client, 'palace_get_taxonomy', {});
    expect(tax.taxonomy.newname).toEqual({ design: 1, 'empty-room': 0 });
    expect(tax.taxonomy.oldname).toBeUndefined();

    const missing = await client.callTool({ name: 'palace_rename_wing', arguments: { wing: 'no-such-wing', new_wing: 'x' } });
    expect(errorOf(missing).code).toBe('memory.not_found');
    expect((await cli(['rename-wing', 'newname', 'newname'])).code).toBe(2);
  });

  it('palace_export pages drawer rows and KG facts; palace_import refuses credentials row by row and is idempotent', async () => {
    await callJson(client, 'palace_kg_add', { subject: 'palace', predicate: 'uses', object: 'LanceDB', valid_from: '2024-01-01' });
    const first = await callJson<{ total: number; next_offset: number | null; drawers: Array<{ id: string }> }>(client, 'palace_export', { limit: 2 });
    expect(first.drawers).toHaveLength(2);
    expect(first.next_offset).toBe(2);
    const second = await callJson<{ drawers: Array<{ id: string }> }>(client, 'palace_export', { offset: 2, limit: 2 });
    expect(second.drawers.map((d) => d.id)).not.toContain(first.drawers[0]?.id);
    const kg = await callJson<{ facts: Array<{ triple_id: string; subject: string }> }>(client, 'palace_export', { part: 'kg' });
    expect(kg.facts.map((f) => f.subject)).toContain('palace');

    const rows = [row('imp-ok', { wing: 'imp' }), row('imp-secret', { wing: 'imp', content: 'key: sk-ant-abcdefghijklmnopqrstuvwxyz0123' })];
    const r1 = await callJson<{ drawers: { imported: number; skipped: number; refused: Array<{ index: number; code: string }> }; kg_facts: { skipped: number } }>(
      client,
      'palace_import',
      { drawers: rows, kg_facts: kg.facts },
      60_000,
    );
    expect(r1.drawers).toMatchObject({ imported: 1, skipped: 0, refused: [expect.objectContaining({ index: 1, code: 'memory.secret_refused' })] });
    expect(r1.kg_facts.skipped).toBe(kg.facts.length);
    const r2 = await callJson<{ drawers: { imported: number; skipped: number } }>(client, 'palace_import', { drawers: [rows[0]] });
    expect(r2.drawers).toMatchObject({ imported: 0, skipped: 1 });
  });

  it('wake-up stays bounded with many large, important drawers', async () => {
    // 25 drawers of ~2,000 characters: past the L1 caps (15 drawers, 2,400 characters) ten times over;
    // every one is embedded on import, so more only costs time.
    const many = Array.from({ length: 25 }, (_v, i) =>
      row(`wake-${i}`, {
        wing: 'wake',
        room: `room-${i % 7}`,
        content: `Important fact number ${i}. ${'The hub must stay responsive under load and never drop an acknowledged event. '.repeat(25)}`,
        filed_at: new Date().toISOString(),
        metadata: { importance: i === 17 ? 10 : 5 },
      }),
    );
    expect((await callJson<{ drawers: { imported: number } }>(client, 'palace_import', { drawers: many }, 120_000)).drawers.imported).toBe(many.length);
    const w = await callJson<{ l1: string; text: string; chars: number; drawers_shown: number }>(client, 'palace_wakeup', { wing: 'wake' });
    expect(w.l1.length).toBeLessThanOrEqual(3_200);
    expect(w.text.length).toBeLessThanOrEqual(3_200 + 1_200 + 100);
    expect(w.drawers_shown).toBeGreaterThan(0);
    expect(w.drawers_shown).toBeLessThanOrEqual(15);
    const lines = w.l1.split('\n').filter((l) => l.startsWith('- '));
    expect(lines).toHaveLength(w.drawers_shown);
    expect(lines[0]).toContain(fakeId('wake-17'));
    expect(w.l1.split('\n').every((l) => l.length <= 300)).toBe(true);
    const viaCli = ok(await cli(['wake-up', '--wing', 'wake']));
    expect(viaCli.stdout.length).toBeLessThanOrEqual(3_200 + 1_200 + 100);
    expect(viaCli.stdout).toContain(fakeId('wake-17'));
  });

  it('the curation writers are listed as mutating and hidden on a read-only hub; export stays', async () => {
    const writers = ['palace_checkpoint', 'palace_bulk_move', 'palace_purge', 'palace_prune', 'palace_rename_wing', 'palace_import'];
    const tools = (await client.listTools()).tools;
    for (const name of writers) expect(tools.find((t) => t.name === name)?.annotations?.readOnlyHint, name).toBe(false);
    expect(tools.find((t) => t.name === 'palace_export')?.annotations?.readOnlyHint).toBe(true);
    const roDirs = makeHubDirs('palace-curate-ro-');
    const ro = await startTestHub(roDirs, { readOnly: true });
    const roClient = await connectHttpClient(ro.url, { name: 'curation-ro' });
    try {
      const names = (await roClient.listTools()).tools.map((t) => t.name);
      for (const name of writers) expect(names).not.toContain(name);
      expect(names).toContain('palace_export');
    } finally {
      await roClient.close();
      await ro.close();
      roDirs.cleanup();
    }
  });
});

describe('export then import into a fresh palace', SLOW, () => {
  let source: TempPalace;
  let target: TempPalace;

  beforeAll(() => {
    source = makeTempPalace('palace-export-src-');
    target = makeTempPalace('palace-export-dst-');
  });

  afterAll(async () => {
    await source?.cleanup();
    await target?.cleanup();
  });

  it('round-trips every drawer byte for byte (ids, placement, metadata, filed_at), searchable, with browsable Markdown; re-import skips', async () => {
    const long = Array.from({ length: 10 }, (_v, i) => `Section ${i}: the replication protocol sends a version vector, then pages of events for origin ${i}.`).join('\n\n');
    const items = [
      { wing: 'exp', room: 'decisions', content: TRICKY, tags: ['release'] },
      { wing: 'exp', room: 'protocol', content: long },
      { wing: 'exp/odd name', room: '../escape', content: 'A room whose name would escape the export directory if used raw.' },
    ];
    const itemsFile = join(source.root, 'items.json');
    writeFileSync(itemsFile, JSON.stringify(items));
    const filed = parseJson<{ added: Array<{ drawer_id: string }> }>(ok(await source.run(['checkpoint', '--items-file', itemsFile, '--agent', 'box-claude', '--diary', 'Exported the palace.', '--json'])));
    expect(filed.added).toHaveLength(3);
    ok(await source.run(['kg', 'add', 'palace', 'exports', 'markdown', '--json']));

    const out = join(source.root, 'export');
    const exported = parseJson<{ drawer_rows: number; kg_facts: number; files: string[] }>(ok(await source.run(['export', out, '--json'])));
    expect(exported.kg_facts).toBe(1);
    for (const f of ['manifest.json', 'drawers.jsonl', 'kg_facts.jsonl', 'index.md', 'exp/decisions.md', 'exp/protocol.md', 'box-claude/diary.md']) expect(existsSync(join(out, f)), f).toBe(true);
    // Odd names become safe single path segments inside the export directory.
    expect(readdirSync(join(out, 'exp%2Fodd name'))).toEqual(['%2E.%2Fescape.md']);
    expect(existsSync(join(source.root, 'escape.md'))).toBe(false);
    const decisions = readFileSync(join(out, 'exp/decisions.md'), 'utf8');
    expect(decisions).toContain('# exp / decisions');
    expect(decisions).toContain(`- tags: release`);
    expect(decisions).toContain('````\n' + TRICKY + '\n````'); // a longer fence than the content's own
    expect(readFileSync(join(out, 'exp/protocol.md'), 'utf8')).toContain(long);
    const index = readFileSync(join(out, 'index.md'), 'utf8');
    expect(index).toContain('[decisions](exp/decisions.md)');
    // A second export into the same (non-empty) directory is refused; the import into the other palace
    // only reads that directory: both at once.
    const [refusedExport, importRun] = await Promise.all([source.run(['export', out]), target.run(['import', out, '--json'])]);
    expect(refusedExport.code).toBe(2);

    const imported = parseJson<{ drawers: { imported: number; skipped: number }; kg_facts: { imported: number } }>(ok(importRun));
    expect(imported.drawers).toMatchObject({ imported: exported.drawer_rows, skipped: 0 });
    expect(imported.kg_facts.imported).toBe(1);

    const dump = async (p: TempPalace) =>
      readFileSync(join(p.root, 'dump', 'drawers.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .sort((a, b) => String(a.id).localeCompare(String(b.id)));
    // Two palaces, two processes: at once.
    const dumps = await Promise.all([
      source.run(['export', join(source.root, 'dump'), '--format', 'jsonl']),
      target.run(['export', join(target.root, 'dump'), '--format', 'jsonl']),
    ]);
    dumps.forEach(ok);
    expect(existsSync(join(target.root, 'dump', 'index.md'))).toBe(false);
    const [a, b] = [await dump(source), await dump(target)];
    expect(b).toEqual(a);
    const tricky = b.find((d) => d.content === TRICKY);
    expect(tricky).toBeDefined();

    // A search and three imports that find nothing new to write (everything is skipped, or the path is
    // missing): at once.
    const [searchRun, againRun, kgRun, nopeRun] = await Promise.all([
      target.run(['search', 'which version vector does replication send', '--json']),
      target.run(['import', join(out, 'drawers.jsonl'), '--json']),
      target.run(['import', join(out, 'kg_facts.jsonl'), '--json']),
      target.run(['import', join(target.root, 'nope')]),
    ]);
    const found = parseJson<{ results: Array<{ content: string }> }>(ok(searchRun));
    expect(found.results[0]?.content).toContain('version vector');
    const again = parseJson<{ drawers: { imported: number; skipped: number }; kg_facts: { skipped: number } }>(ok(againRun));
    expect(again.drawers).toMatchObject({ imported: 0, skipped: exported.drawer_rows });
    const kgFile = ok(kgRun);
    expect(parseJson<{ kg_facts: { skipped: number } }>(kgFile).kg_facts.skipped).toBe(1);
    expect(nopeRun.code).toBe(2);
  });
});
