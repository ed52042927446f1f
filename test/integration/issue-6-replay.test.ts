// Issue 6: a crash between accepting a drawer (journaled) and indexing it loses nothing. The real CLI
// dies by SIGKILL at the PALACE_FAULT_INJECT=memory.after-journal test hook; `palace replay` (or the
// next open of the memory) applies the journaled write, and the drawer is then found.

import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { DrawerView, SearchHit } from '../../hub/src/memory/drawers/memory.js';
import type { ReplayReport } from '../../hub/src/memory/drawers/journaled-vector-store.js';
import { makeTempPalace, parseJson, type CliResult, type TempPalace } from '../helpers/cli.js';

const CRASH = { PALACE_FAULT_INJECT: 'memory.after-journal' };
const FIRST = 'The release checklist lives in docs/RELEASE.md and is owned by the platform team.';
const SECOND = 'Our staging database is refreshed from a production snapshot every Sunday night.';

function ok(result: CliResult): CliResult {
  if (result.code !== 0) throw new Error(`exit ${String(result.code)}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
  return result;
}

describe('issue 6: crash between accept and index, then replay', { timeout: 180_000 }, () => {
  let palace: TempPalace;

  beforeAll(() => {
    palace = makeTempPalace('palace-replay-');
  });
  afterAll(async () => {
    await palace.cleanup();
  });

  it('the write dies after the journal; replay --dry-run lists it; replay applies it; the drawer is found', async () => {
    const crashed = await palace.run(['drawer', 'add', '--json', '--wing', 'ops', '--room', 'release', '--content', FIRST], { env: CRASH });
    expect(crashed.signal).toBe('SIGKILL');
    expect(crashed.code).toBeNull();
    expect(existsSync(join(palace.dir, 'memory-journal.sqlite3'))).toBe(true);

    const dry = parseJson<ReplayReport>(ok(await palace.run(['replay', '--dry-run', '--json'])));
    expect(dry).toMatchObject({ pending: 1, replayed: 1, dry_run: true });
    const id = dry.entries[0]?.drawer_ids?.[0];
    expect(id).toMatch(/^drawer_[0-9a-f]{24}$/);
    // A dry run changed nothing: the write is still pending.
    expect(parseJson<ReplayReport>(ok(await palace.run(['replay', '--dry-run', '--json']))).pending).toBe(1);

    const replayed = parseJson<ReplayReport>(ok(await palace.run(['replay', '--json'])));
    expect(replayed).toMatchObject({ pending: 1, replayed: 1, dry_run: false });
    expect(replayed.entries[0]).toMatchObject({ op: 'upsert', drawer_ids: [id] });

    const drawer = parseJson<DrawerView>(ok(await palace.run(['drawer', 'get', String(id), '--json'])));
    expect(drawer).toMatchObject({ drawer_id: id, wing: 'ops', room: 'release', content: FIRST });
    const found = parseJson<{ results: SearchHit[] }>(ok(await palace.run(['search', 'who owns the release checklist', '--json'])));
    expect(found.results.map((r) => r.drawer_id)).toContain(id);

    // Idempotent: nothing is left to replay.
    expect(parseJson<ReplayReport>(ok(await palace.run(['replay', '--json'])))).toMatchObject({ pending: 0, replayed: 0 });
  });

  it('the next open of the memory replays a crashed write by itself', async () => {
    const crashed = await palace.run(['drawer', 'add', '--json', '--wing', 'ops', '--room', 'databases', '--content', SECOND], { env: CRASH });
    expect(crashed.signal).toBe('SIGKILL');

    const search = ok(await palace.run(['search', 'when is staging refreshed from production', '--json', '--wing', 'ops']));
    const hits = parseJson<{ results: SearchHit[] }>(search).results;
    expect(hits.find((h) => h.content === SECOND)).toMatchObject({ room: 'databases' });
    expect(search.stderr).toMatch(/replayed 1 memory write/);

    expect(parseJson<ReplayReport>(ok(await palace.run(['replay', '--json'])))).toMatchObject({ pending: 0 });
    // A normal write is acknowledged only after it is indexed, and leaves nothing pending.
    ok(await palace.run(['drawer', 'add', '--json', '--wing', 'ops', '--room', 'misc', '--content', 'The office plants are watered on Mondays by whoever arrives first.']));
    expect(parseJson<ReplayReport>(ok(await palace.run(['replay', '--dry-run', '--json']))).pending).toBe(0);
  });
});
