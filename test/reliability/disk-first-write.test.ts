// A palace whose disk fills up before its first drawer (a real 4 MiB tmpfs under a real child hub):
// the write answers `store.full` with a clean message, no half-created vectors table and no
// temporary file is left behind, and once space is freed the same hub, a restarted hub and
// `palace repair` all work. A palace already left with a half-created table (the state older
// builds left: `drawers.lance/` with empty `_versions/`) is repaired, not stuck for good.

import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { PALACE_BIN, childEnv, killChildren, makeHubDirs, spawnNode, startChildHub, type HubDirs } from '../helpers/hub.js';
import { callOverHttp, canMountTmpfs, type ToolAnswer } from '../helpers/faults.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
  await killChildren();
});

/** A palace on its own small tmpfs. */
function palaceOnTmpfs(prefix: string, size = '4m'): HubDirs {
  const dirs = makeHubDirs(prefix);
  cleanups.push(() => dirs.cleanup());
  rmSync(dirs.palace, { recursive: true, force: true });
  mkdirSync(dirs.palace);
  expect(spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dirs.palace]).status).toBe(0);
  cleanups.push(() => void spawnSync('umount', ['-l', dirs.palace]));
  return dirs;
}

/** Fills the file system under `dir` to the last byte; returns the filler's path. */
function fillDisk(dir: string): string {
  const filler = join(dir, 'filler.bin');
  try {
    writeFileSync(filler, Buffer.alloc(64 * 1024 * 1024));
  } catch (err) {
    expect((err as { code?: string }).code).toBe('ENOSPC');
  }
  return filler;
}

function expectStoreFull(answer: ToolAnswer): void {
  expect(answer.ok, JSON.stringify(answer.value)).toBe(false);
  const error = answer.value.error as { code: string; message: string };
  expect(error.code).toBe('store.full');
  expect(error.message).toMatch(/full/i);
  // A clean message: no Rust source paths, no stack.
  expect(error.message).not.toMatch(/cargo|\.rs:\d+|\n\s+at /);
}

function leftovers(palace: string): string[] {
  const found: string[] = [];
  const visit = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, e.name);
      if (/\.tmp$|staging/.test(e.name)) found.push(path);
      if (e.isDirectory()) visit(path);
    }
  };
  visit(palace);
  return found;
}

const DRAWER = { wing: 'disk', room: 'first', content: 'The very first drawer of this palace, filed on a full disk.' };

describe.skipIf(!canMountTmpfs())('the disk fills up before the first drawer', () => {
  it('store.full, nothing half-made, and the same hub, a restart and repair work once space is freed', async () => {
    const dirs = palaceOnTmpfs('palace-first-write-');
    const hub = await startChildHub(dirs);
    const filler = fillDisk(dirs.palace);

    expectStoreFull(await callOverHttp(hub.url, 'palace_add_drawer', DRAWER));
    expectStoreFull(await callOverHttp(hub.url, 'palace_rooms_add', { wing: 'disk', room: 'declared' }));
    expect(leftovers(dirs.palace)).toEqual([]);
    // No table directory that a later open would take for a table.
    expect(readdirSync(join(dirs.palace, 'vectors'))).toEqual([]);

    rmSync(filler);
    const filed = await callOverHttp(hub.url, 'palace_add_drawer', DRAWER);
    expect(filed.ok, JSON.stringify(filed.value)).toBe(true);
    const added = await callOverHttp(hub.url, 'palace_rooms_add', { wing: 'disk', room: 'declared' });
    expect(added.ok, JSON.stringify(added.value)).toBe(true);
    await hub.stop();

    const repair = spawnNode(PALACE_BIN, ['--palace', dirs.palace, 'repair', '--json'], childEnv(dirs), 60_000);
    const exit = await repair.exited;
    expect(exit.code, repair.stderr()).toBe(0);
    expect(JSON.parse(repair.stdout())).toMatchObject({ drawers: 1, ok: true });

    const again = await startChildHub(dirs);
    const got = await callOverHttp(again.url, 'palace_get_drawer', { drawer_id: filed.value.drawer_id });
    expect(got.ok, JSON.stringify(got.value)).toBe(true);
    expect(got.value.content).toBe(DRAWER.content);
    await again.stop();
  }, 90_000);
});

describe('a palace left with a half-created vectors table', () => {
  /** The exact state a first write that hit ENOSPC left behind in older builds. */
  function halfCreated(dirs: HubDirs): void {
    const table = join(dirs.palace, 'vectors', 'drawers.lance');
    mkdirSync(join(table, '_versions'), { recursive: true });
    mkdirSync(join(table, '_transactions'), { recursive: true });
  }

  it('`palace repair` fixes it and memory works again', async () => {
    const dirs = makeHubDirs('palace-half-table-');
    cleanups.push(() => dirs.cleanup());
    halfCreated(dirs);
    const repair = spawnNode(PALACE_BIN, ['--palace', dirs.palace, 'repair', '--json'], childEnv(dirs), 60_000);
    const exit = await repair.exited;
    expect(exit.code, repair.stderr()).toBe(0);
    expect(JSON.parse(repair.stdout())).toMatchObject({ drawers: 0, ok: true });

    const hub = await startChildHub(dirs);
    const filed = await callOverHttp(hub.url, 'palace_add_drawer', DRAWER);
    expect(filed.ok, JSON.stringify(filed.value)).toBe(true);
    await hub.stop();
  }, 60_000);

  it('a hub heals it on the first memory call instead of failing every call', async () => {
    const dirs = makeHubDirs('palace-half-table-hub-');
    cleanups.push(() => dirs.cleanup());
    halfCreated(dirs);
    const hub = await startChildHub(dirs);
    const filed = await callOverHttp(hub.url, 'palace_add_drawer', DRAWER);
    expect(filed.ok, JSON.stringify(filed.value)).toBe(true);
    const status = await callOverHttp(hub.url, 'palace_repair_status', {});
    expect(status.value).toMatchObject({ drawers: 1, ok: true });
    await hub.stop();
  }, 60_000);
});
