// The LanceDB adapter on a real directory: the VectorStore contract, plus what only an embedded
// store has: data survives reopening, and a store of another dimension is refused by name.

import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { silentLogger } from '../../hub/src/log.js';
import { LanceDbVectorStore } from '../../hub/src/vector/lancedb-vector-store.js';
import { rejectedHubError } from '../helpers/errors.js';
import { makeTmpDir, type TmpDir } from '../helpers/tmp-dir.js';
import {
  axisVector,
  closingFixture,
  CONTRACT_DIMENSIONS,
  runVectorStoreContract,
  storedDrawer,
} from './vector-store.contract.js';

runVectorStoreContract('LanceDbVectorStore on a real directory', async (dimensions) => {
  const dir = makeTmpDir('palace-lance-');
  const store = await LanceDbVectorStore.open({ palacePath: dir.path, dimensions, log: silentLogger });
  return closingFixture(store, { dispose: () => dir.cleanup() });
}, { placementSummary: true });

describe('LanceDbVectorStore on disk', () => {
  let dir: TmpDir;
  const opened: LanceDbVectorStore[] = [];

  const open = async (dimensions = CONTRACT_DIMENSIONS): Promise<LanceDbVectorStore> => {
    const store = await LanceDbVectorStore.open({ palacePath: dir.path, dimensions, log: silentLogger });
    opened.push(store);
    return store;
  };

  beforeEach(() => {
    dir = makeTmpDir('palace-lance-');
  });

  afterEach(async () => {
    for (const store of opened.splice(0)) await store.close();
    dir.cleanup();
  });

  it('lives in <palace>/vectors', async () => {
    await open();
    expect(existsSync(join(dir.path, 'vectors'))).toBe(true);
  });

  it('keeps drawers, patches, deletes and the full-text index across reopen', async () => {
    const first = await open();
    const kept = storedDrawer({
      wing: 'alpha',
      tags: ['x'],
      content: 'the archipelago migration notes',
      vector: axisVector(2),
    });
    const gone = storedDrawer({ wing: 'alpha', content: 'archipelago scratch', vector: axisVector(3) });
    await first.upsert([kept, gone]);
    expect(await first.fullText('archipelago', {}, 5)).toHaveLength(2); // builds the FTS index
    await first.patch({ ids: [kept.id] }, { room: 'moved', useful: true });
    await first.delete({ ids: [gone.id] });
    await first.close();
    opened.splice(0);

    const second = await open();
    expect(await second.count()).toBe(1);
    const [row] = await second.scan({}, { withVectors: true });
    expect(row).toMatchObject({
      id: kept.id,
      room: 'moved',
      useful: true,
      tags: ['x'],
      content: kept.content,
    });
    expect(Array.from(row?.vector ?? [])).toEqual(Array.from(kept.vector));
    expect((await second.search(axisVector(2), {}, 1))[0]?.drawer.id).toBe(kept.id);
    expect((await second.fullText('archipelago', {}, 5)).map((h) => h.drawer.id)).toEqual([kept.id]);
  });

  it('refuses to open a store of another dimension with memory.embedder_mismatch naming both sizes', async () => {
    const first = await open(CONTRACT_DIMENSIONS);
    await first.upsert([storedDrawer()]);
    await first.close();
    opened.splice(0);

    const err = await rejectedHubError(
      LanceDbVectorStore.open({ palacePath: dir.path, dimensions: 16, log: silentLogger }),
    );
    expect(err.code).toBe('memory.embedder_mismatch');
    expect(err.message).toContain(`${CONTRACT_DIMENSIONS} dimensions`);
    expect(err.message).toContain('16');
    expect(err.message).toContain('set-embedder --force');

    // The refusal changed nothing: the original store still opens with its data.
    const again = await open(CONTRACT_DIMENSIONS);
    expect(await again.count()).toBe(1);
  });

  it('builds a missing ANN index when a large table is opened, not only after the next write', async () => {
    // A table past the threshold without its index: the build was cut short, or every row was rewritten.
    const dimensions = 32;
    const random = (i: number): Float32Array =>
      Float32Array.from({ length: dimensions }, (_, k) => {
        const x = Math.sin((i + 1) * 12.9898 + (k + 1) * 78.233) * 43758.5453;
        return x - Math.floor(x) - 0.5;
      });
    const small = await LanceDbVectorStore.open({ palacePath: dir.path, dimensions, log: silentLogger, annThreshold: 1e9 });
    await small.upsert(Array.from({ length: 600 }, (_, i) => storedDrawer({ content: `drawer ${i}`, vector: random(i) })));
    await small.indexesSettled();
    await small.close();
    const lance = await import('@lancedb/lancedb');
    const indexed = async (): Promise<string[]> => {
      const db = await lance.connect(join(dir.path, 'vectors'));
      try {
        return (await (await db.openTable('drawers')).listIndices()).flatMap((i) => i.columns);
      } finally {
        db.close();
      }
    };
    expect(await indexed()).not.toContain('vector');

    // Opened and only read: the index is built in the background all the same.
    const reopened = await LanceDbVectorStore.open({ palacePath: dir.path, dimensions, log: silentLogger, annThreshold: 500 });
    opened.push(reopened);
    await reopened.indexesSettled();
    expect(await indexed()).toContain('vector');
    expect((await reopened.search(random(42), {}, 1))[0]?.drawer.content).toBe('drawer 42');
  });

  it('refuses a vector of the wrong size on upsert and stores nothing', async () => {
    const store = await open();
    const bad = storedDrawer({ vector: new Float32Array(CONTRACT_DIMENSIONS + 1) });
    const err = await rejectedHubError(store.upsert([storedDrawer(), bad]));
    expect(err.code).toBe('memory.embedder_mismatch');
    expect(await store.count()).toBe(0);
  });
});
