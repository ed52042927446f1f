// A mine that opens the memory starts every embedding worker with it: through createMemoryHandle (the
// hub's own) with the bundled model and a pool of two processes, get({warmEmbedder: true}) resolves
// with both workers started (the second loading while the vector store opened), where a plain get()
// starts one. palace_mine opens the memory that way (mine-tools.ts).

import { afterEach, describe, expect, it } from 'vitest';

import { loadConfig } from '../../hub/src/config.js';
import { silentLogger } from '../../hub/src/log.js';
import { createMemoryHandle, type MemoryHandle } from '../../hub/src/memory/drawers/open-memory.js';
import { makeHubDirs, type HubDirs } from '../helpers/hub.js';

const SLOW = { timeout: 120_000 };
let dirs: HubDirs | undefined;
let handle: MemoryHandle | undefined;

afterEach(async () => {
  await handle?.close();
  handle = undefined;
  dirs?.cleanup();
  dirs = undefined;
});

function open(): MemoryHandle {
  dirs = makeHubDirs('palace-open-warm-');
  const config = loadConfig({}, { ...dirs.env, PALACE_EMBED_WORKERS: '2' });
  handle = createMemoryHandle(config, config.palacePath, silentLogger);
  return handle;
}

describe('opening the memory for a mine', SLOW, () => {
  it('starts every embedding worker with it when asked (warmEmbedder)', async () => {
    const memory = await open().get({ warmEmbedder: true });
    const pool = memory.embedWorkers();
    expect(pool).toMatchObject({ size: 2, started: 2 });
    expect(pool?.workers).toHaveLength(2);
    // A later get() is the same memory; nothing more is started.
    expect(await handle?.get({ warmEmbedder: true })).toBe(memory);
    expect(memory.embedWorkers()?.started).toBe(2);
  });

  it('starts the first worker only on a plain get() (search, a drawer: the pool grows on demand)', async () => {
    const memory = await open().get();
    expect(memory.embedWorkers()).toMatchObject({ size: 2, started: 1 });
  });
});
