// The mine's walk in slices (mine/walk.ts listFilesSliced): the same files, in the same order, as the
// synchronous walk (gitignore rules and skipped folders included), and the event loop gets turns
// between folders, so a hub answers other requests while it walks a large tree.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { listFiles, listFilesSliced, PROJECT_EXTENSIONS } from '../../hub/src/mine/walk.js';
import { makeTmpDir, type TmpDir } from '../helpers/tmp-dir.js';
import { countLoopTurns } from '../helpers/loop-turns.js';

describe('sliced walk', () => {
  let tmp: TmpDir | undefined;
  afterEach(() => tmp?.cleanup());

  it('lists what listFiles lists, handing the loop back between folders', async () => {
    tmp = makeTmpDir('palace-walk-sliced-');
    const root = tmp.path;
    writeFileSync(join(root, '.gitignore'), 'pkg-3/\n*.gen.ts\n');
    for (let p = 0; p < 12; p++) {
      mkdirSync(join(root, `pkg-${p}`, 'src'), { recursive: true });
      for (let f = 0; f < 5; f++) writeFileSync(join(root, `pkg-${p}`, 'src', `m${f}.ts`), `export const x${f} = ${f};\n`);
      writeFileSync(join(root, `pkg-${p}`, 'src', 'out.gen.ts'), '// generated\n');
    }
    mkdirSync(join(root, 'node_modules', 'dep'), { recursive: true });
    writeFileSync(join(root, 'node_modules', 'dep', 'index.js'), 'module.exports = 1;\n');
    const options = { extensions: PROJECT_EXTENSIONS, gitignore: true };
    const loop = countLoopTurns();
    const sliced = await listFilesSliced(root, options, 0);
    loop.stop();
    const plain = listFiles(root, options);
    expect(sliced).toEqual(plain);
    expect(plain.length).toBe(11 * 5);
    expect(plain.some((f) => f.includes('pkg-3') || f.endsWith('.gen.ts') || f.includes('node_modules'))).toBe(false);
    // 11 package folders and their src folders read: a turn after each.
    expect(loop.count).toBeGreaterThanOrEqual(22);
  });
});
