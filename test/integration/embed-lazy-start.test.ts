// A palace that records its vector space (embedder.json) opens its memory without loading the model:
// reading, listing and moving drawers start no embedding worker; the first embed starts the pool and
// checks the loaded model against the record. Real bundled model, real worker processes, real LanceDB.

import { afterEach, describe, expect, it } from 'vitest';

import { loadConfig } from '../../hub/src/config.js';
import { writeEmbedderRecord } from '../../hub/src/embed/select.js';
import { HubError } from '../../hub/src/errors.js';
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
  dirs ??= makeHubDirs('palace-lazy-embed-');
  const config = loadConfig({}, dirs.env);
  handle = createMemoryHandle(config, config.palacePath, silentLogger);
  return handle;
}

describe('opening a recorded palace', SLOW, () => {
  it('loads no model until something is embedded, then the real one', async () => {
    // A fresh palace has no record: the first open loads the model (it learns the vector space).
    const first = await open().get();
    expect(first.embedWorkers()?.started).toBe(1);
    await first.addDrawer({ wing: 'proj', room: 'notes', content: 'the session store purges expired tokens on read', added_by: 'test' });
    await handle?.close();

    const memory = await open().get();
    expect(memory.embedWorkers()?.started).toBe(0);
    expect(memory.embedderInfo()).toMatchObject({ provider: 'bundled', model: 'use-lite-en', dimensions: 512, device: 'not started' });
    // Reads and moves never embed.
    expect(await memory.listWings()).toEqual({ wings: { proj: 1 } });
    const [drawer] = await memory.scanDrawers({ wing: 'proj' });
    expect(drawer?.content).toContain('expired tokens');
    await memory.relocate(drawer?.drawer_id, { room: 'auth' });
    expect(memory.embedWorkers()?.started).toBe(0);

    const found = await memory.search({ query: 'expired tokens' });
    expect(found.results[0]?.content).toContain('expired tokens');
    expect(memory.embedWorkers()?.started).toBe(1);
    expect(memory.embedderInfo()).toMatchObject({ model: 'use-lite-en', dimensions: 512 });
    expect(memory.embedderInfo().device).not.toBe('not started');
  });

  it('fails every embed with memory.embedder_mismatch when the model loaded is not the one recorded', async () => {
    dirs = makeHubDirs('palace-lazy-embed-');
    // The record names the bundled model at a size it does not have: as if the file were from another build.
    writeEmbedderRecord(loadConfig({}, dirs.env).palacePath, { provider: 'bundled', model: 'use-lite-en', dimensions: 384 });
    const memory = await open().get();
    expect(memory.embedWorkers()?.started).toBe(0);
    const refused = await memory.search({ query: 'anything' }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(HubError);
    expect((refused as HubError).code).toBe('memory.embedder_mismatch');
    expect((refused as HubError).message).toMatch(/built with use-lite-en \(384-d\); the embedder loaded use-lite-en \(512-d\)/);
    // Nothing was written, and the next call hears the same.
    const again = await memory.addDrawer({ wing: 'w', room: 'r', content: 'a note', added_by: 'test' }).catch((err: unknown) => err);
    expect((again as HubError).code).toBe('memory.embedder_mismatch');
    expect(await memory.countDrawers()).toBe(0);
  });
});
