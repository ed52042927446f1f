// A narrow scan (id, wing, room, filed_at: a wing's order for /list) crosses the process boundary
// packed, one string per column: what the hub gets is what the store itself returns for the same scan
// (columns, filter, order, offset and limit), read back in-process from the same files.

import { afterEach, describe, expect, it } from 'vitest';

import { silentLogger } from '../../hub/src/log.js';
import { LanceDbProcessStore } from '../../hub/src/vector/lancedb-process-store.js';
import { LanceDbVectorStore } from '../../hub/src/vector/lancedb-vector-store.js';
import type { DrawerFilter, ScanOptions } from '../../hub/src/vector/vector-store.js';
import { makeTmpDir, type TmpDir } from '../helpers/tmp-dir.js';
import { axisVector, storedDrawer } from './vector-store.contract.js';

const DIMENSIONS = 8;
const NEVER = Number.MAX_SAFE_INTEGER;

describe('LanceDbProcessStore narrow scans', () => {
  let dir: TmpDir | undefined;

  afterEach(() => {
    dir?.cleanup();
    dir = undefined;
  });

  it('gives the same drawers as the store in-process, for packed columns with filters, offsets and limits', async () => {
    const tmp = (dir = makeTmpDir('palace-lance-packed-'));
    const proc = await LanceDbProcessStore.open({ palacePath: tmp.path, dimensions: DIMENSIONS, log: silentLogger, recycleBytes: NEVER });
    const drawers = Array.from({ length: 300 }, (_, i) =>
      storedDrawer({
        wing: `proj-${i % 3}`,
        room: ['src', 'docs', 'decisions'][i % 4 === 0 ? 2 : i % 2] as string,
        filed_at: `2026-0${1 + (i % 7)}-0${1 + (i % 5)}T10:00:00Z`,
        tags: i % 3 === 0 ? ['a', 'b'] : [],
        metadata: { n: i },
        useful: i % 5 === 0 ? true : null,
        vector: axisVector(i % DIMENSIONS, DIMENSIONS),
      }),
    );
    await proc.upsert(drawers);
    const asks: Array<[DrawerFilter, ScanOptions]> = [
      [{ wing: 'proj-1' }, { columns: ['id', 'room', 'filed_at'] }],
      [{}, { columns: ['id', 'wing', 'room', 'filed_at'] }],
      [{ wing: 'proj-2', room: 'src' }, { columns: ['id'], offset: 10, limit: 25 }],
      [{ wing: 'proj-0' }, { columns: ['room', 'filed_at'], limit: 5 }],
      [{ wing: 'nowhere' }, { columns: ['id', 'room', 'filed_at'] }],
      // Not packable (tags, vectors): the rows cross as objects, as before.
      [{ wing: 'proj-1' }, { columns: ['id', 'tags'] }],
    ];
    const viaProcess = [];
    for (const [filter, options] of asks) viaProcess.push(await proc.scan(filter, options));
    await proc.close();

    const inProcess = await LanceDbVectorStore.open({ palacePath: tmp.path, dimensions: DIMENSIONS, log: silentLogger });
    try {
      for (const [i, [filter, options]] of asks.entries()) expect(viaProcess[i]).toEqual(await inProcess.scan(filter, options));
    } finally {
      await inProcess.close();
    }
    expect(viaProcess[0]?.length).toBe(100);
    const srcOfProj2 = drawers.filter((d) => d.wing === 'proj-2' && d.room === 'src').length;
    expect(srcOfProj2).toBeGreaterThan(10);
    expect(viaProcess[2]?.length).toBe(Math.min(25, srcOfProj2 - 10));
  });
});
