// The hub's sliced read of the mined-files manifest (mine/manifest.ts readManifestSliced): the same
// object JSON.parse makes, whatever the paths hold (commas, braces, quotes, escapes, non-ASCII),
// handing the event loop back while it parses a large one, and cached for the synchronous readers;
// then the mined files and their path index built ahead of search (search/path-scan.ts).

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { commitManifest, manifestPath, readManifest, readManifestSliced, type MinedFileEntry } from '../../hub/src/mine/manifest.js';
import { minedProjectFiles, pathScan, warmMinedFiles } from '../../hub/src/search/path-scan.js';
import { makeTmpDir, type TmpDir } from '../helpers/tmp-dir.js';
import { countLoopTurns } from '../helpers/loop-turns.js';

function entry(i: number, mode = 'projects'): MinedFileEntry {
  return { mtime_ms: 1_700_000_000_000 + i + 0.25, size: i, sha256: 'ab'.repeat(32), wing: `w${i % 3}`, room: 'src', mode, root: '/r', drawers: (i % 4) + 1, mined_at: '2026-01-01T00:00:00Z', chunker: 2 };
}

describe('sliced manifest read', () => {
  let tmp: TmpDir | undefined;
  afterEach(() => tmp?.cleanup());

  it('parses to the same object as JSON.parse, with awkward paths, and caches it for readManifest', async () => {
    tmp = makeTmpDir('palace-manifest-sliced-');
    const manifest: Record<string, MinedFileEntry> = {};
    const awkward = ['/r/a,b.ts', '/r/{x}/y.ts', '/r/q"uote.ts', '/r/back\\slash.ts', '/r/ünï/çødé.ts', '/r/[arr]/z.ts', '/r/new\nline.ts', '/r/"},{"x.ts'];
    awkward.forEach((p, i) => (manifest[p] = entry(i)));
    for (let i = 0; i < 3000; i++) manifest[`/r/pkg-${i % 20}/mod-${i}.ts`] = entry(i, i % 10 === 0 ? 'convos' : 'projects');
    writeFileSync(manifestPath(tmp.path), JSON.stringify(manifest));
    const loop = countLoopTurns();
    const sliced = await readManifestSliced(tmp.path, 0);
    loop.stop();
    expect(sliced).toEqual(manifest);
    // 3,008 entries, cut every 500 and a yield at each cut when the slice is 0 ms.
    expect(loop.count).toBeGreaterThanOrEqual(5);
    // The synchronous reader finds the very object (no second parse).
    expect(readManifest(tmp.path)).toBe(sliced);
  });

  it('the warmed mined files and path index are the ones search reads, and match a cold build', async () => {
    tmp = makeTmpDir('palace-manifest-sliced-');
    const changes = new Map<string, MinedFileEntry>();
    for (let i = 0; i < 1200; i++) changes.set(`/r/${['auth', 'net', 'store'][i % 3]}/handler-${i}.ts`, entry(i));
    commitManifest(tmp.path, changes);
    const manifest = await readManifestSliced(tmp.path, 0);
    const warmed = await warmMinedFiles(manifest, 0);
    expect(minedProjectFiles(manifest)).toBe(warmed);
    expect(warmed).toHaveLength(1200);
    const cold = minedProjectFiles(JSON.parse(JSON.stringify(manifest)) as typeof manifest);
    expect(cold).toEqual(warmed);
    expect(pathScan(warmed, ['auth', 'handler'], 10)).toEqual(pathScan(cold, ['auth', 'handler'], 10));
    expect(pathScan(warmed, ['auth'], 10).length).toBe(10);
  });

  it('a manifest that is not JSON reads as the synchronous reader reads it (empty)', async () => {
    tmp = makeTmpDir('palace-manifest-sliced-');
    writeFileSync(join(tmp.path, 'mined-files.json'), '{"a": {"unterminated": ');
    expect(await readManifestSliced(tmp.path, 0)).toEqual({});
  });
});
