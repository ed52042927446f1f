// scripts/app.mjs (`npm run app`): with Electron's binary missing (npm ci skips its download), one line
// naming the command that fetches it and what to run instead; with it present, its path.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

// @ts-expect-error: a plain .mjs script, no declarations
import { electronBinary, MISSING } from '../../scripts/app.mjs';
import { makeTmpDir } from '../helpers/tmp-dir.js';

const find = electronBinary as (root?: string) => string | undefined;
let cleanup: (() => void) | undefined;
afterEach(() => cleanup?.());

describe('npm run app', () => {
  it('finds the binary only when electron/path.txt names a file that exists', () => {
    const tmp = makeTmpDir('app-');
    cleanup = tmp.cleanup;
    const dir = join(tmp.path, 'node_modules', 'electron');
    mkdirSync(join(dir, 'dist'), { recursive: true });
    expect(find(tmp.path)).toBeUndefined();
    writeFileSync(join(dir, 'path.txt'), 'electron');
    expect(find(tmp.path)).toBeUndefined(); // named, never downloaded
    writeFileSync(join(dir, 'dist', 'electron'), '#!/bin/sh\n');
    chmodSync(join(dir, 'dist', 'electron'), 0o755);
    expect(find(tmp.path)).toBe(join(dir, 'dist', 'electron'));
  });

  it.skipIf(find() !== undefined)('without the binary, says so in one line with the install command and the browser road, exit 1', () => {
    const r = spawnSync(process.execPath, ['scripts/app.mjs'], { encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`${MISSING as string}\n`);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain('node node_modules/electron/install.js');
    expect(r.stderr).toContain('npm start');
    expect(r.stderr).toContain('/ui/');
  });
});
