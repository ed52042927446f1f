// The hub's LanceDB store in a child process: the whole VectorStore contract through the process
// boundary, then what only it does: the child is replaced once it has grown (nothing lost, calls made
// during the swap wait and succeed), a killed child fails its call clearly and the next call gets a
// new one, and errors keep their codes across the boundary.

import { afterEach, describe, expect, it } from 'vitest';

import { silentLogger } from '../../hub/src/log.js';
import { LanceDbProcessStore } from '../../hub/src/vector/lancedb-process-store.js';
import { rejectedHubError } from '../helpers/errors.js';
import { waitUntil } from '../helpers/hub.js';
import { makeTmpDir, type TmpDir } from '../helpers/tmp-dir.js';
import { axisVector, closingFixture, CONTRACT_DIMENSIONS, runVectorStoreContract, storedDrawer } from './vector-store.contract.js';

const NEVER = Number.MAX_SAFE_INTEGER;

runVectorStoreContract('LanceDbProcessStore (LanceDB in a child process)', async (dimensions) => {
  const dir = makeTmpDir('palace-lance-proc-');
  const store = await LanceDbProcessStore.open({ palacePath: dir.path, dimensions, log: silentLogger, recycleBytes: NEVER });
  return closingFixture(store, { dispose: () => dir.cleanup() });
}, { placementSummary: true });

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('LanceDbProcessStore', () => {
  let dir: TmpDir;
  let store: LanceDbProcessStore | undefined;

  afterEach(async () => {
    await store?.close();
    store = undefined;
    dir?.cleanup();
  });

  it('replaces a child that has grown, keeping every write, and calls made during the swap succeed', async () => {
    dir = makeTmpDir('palace-lance-proc-');
    // 1 byte: every answer after a write past the child's opening RSS triggers a replacement.
    store = await LanceDbProcessStore.open({ palacePath: dir.path, dimensions: CONTRACT_DIMENSIONS, log: silentLogger, recycleBytes: 1 });
    const firstPid = store.pid;
    const seed = storedDrawer({ id: 'drawer_ffffffffffffffffffffffff', content: 'seed', vector: axisVector(0) });
    const ids: string[] = [seed.id];
    await store.upsert([seed]);
    for (let i = 0; i < 12; i++) {
      const drawers = [0, 1, 2].map((k) =>
        storedDrawer({ id: `drawer_${String(i * 3 + k).padStart(24, '0')}`, content: `note ${i}-${k}`, vector: axisVector((i + k) % CONTRACT_DIMENSIONS) }),
      );
      ids.push(...drawers.map((d) => d.id));
      // A write and reads at once, so some of them land while the child is being replaced.
      const [, count, hits] = await Promise.all([
        store.upsert(drawers),
        store.count(),
        store.search(axisVector(0), {}, 3),
      ]);
      expect(count).toBeGreaterThanOrEqual(1 + i * 3);
      expect(hits.length).toBeGreaterThan(0);
    }
    expect(store.recycles).toBeGreaterThan(0);
    expect(store.pid).not.toBe(firstPid);
    expect(isAlive(firstPid ?? -1)).toBe(false);
    expect(await store.count()).toBe(37);
    const back = await store.scan({ ids }, { withVectors: true });
    expect(back.map((d) => d.id).sort()).toEqual([...ids].sort());
    expect(back[0]?.vector).toBeInstanceOf(Float32Array);
    expect(back[0]?.vector).toHaveLength(CONTRACT_DIMENSIONS);
  });

  it('a child killed mid-life fails its call with store.failed; the next call gets a new child with the data', async () => {
    dir = makeTmpDir('palace-lance-proc-');
    store = await LanceDbProcessStore.open({ palacePath: dir.path, dimensions: CONTRACT_DIMENSIONS, log: silentLogger, recycleBytes: NEVER });
    await store.upsert([storedDrawer({ id: 'drawer_000000000000000000000001', content: 'kept', vector: axisVector(1) })]);
    const pid = store.pid ?? -1;
    const call = store.scan({});
    process.kill(pid, 'SIGKILL');
    // The scan may have been answered before the signal landed; if not, it fails by name.
    const outcome = await call.then(
      () => 'answered',
      (err: unknown) => (err as { code?: string }).code,
    );
    expect(['answered', 'store.failed']).toContain(outcome);
    await waitUntil(() => !isAlive(pid), 'the killed child to be gone');
    expect(await store.count()).toBe(1);
    expect(store.pid).not.toBe(pid);
  });

  it('errors keep their code across the process boundary, and a closed store refuses calls', async () => {
    dir = makeTmpDir('palace-lance-proc-');
    store = await LanceDbProcessStore.open({ palacePath: dir.path, dimensions: CONTRACT_DIMENSIONS, log: silentLogger, recycleBytes: NEVER });
    const wrong = storedDrawer({ id: 'drawer_000000000000000000000002', vector: new Float32Array(CONTRACT_DIMENSIONS + 1) });
    expect((await rejectedHubError(store.upsert([wrong]))).code).toBe('memory.embedder_mismatch');
    const pid = store.pid ?? -1;
    await store.close();
    await waitUntil(() => !isAlive(pid), 'the child to exit after close');
    expect((await rejectedHubError(store.count())).code).toBe('store.failed');
  });
});
