// scripts/build-if-stale.mjs (what `npm start` and the test setup run): a copy of the script in a temp
// tree says whether dist/ was built from exactly the current inputs, by content, never by mtime.

import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { makeTmpDir } from '../helpers/tmp-dir.js';

const SCRIPT = fileURLToPath(new URL('../../scripts/build-if-stale.mjs', import.meta.url));
const OUTPUTS = ['dist/cli/main.js', 'dist/cli/palace.bundle.cjs', 'dist/hub/src/main.js', 'dist/ui/index.html', 'dist/main/preload.cjs'];

let root: string;
let cleanup: () => void;

function run(...args: string[]): string {
  return execFileSync(process.execPath, [join(root, 'scripts/build-if-stale.mjs'), ...args], {
    encoding: 'utf8',
  }).trim();
}

function write(path: string, text: string): void {
  mkdirSync(join(root, path, '..'), { recursive: true });
  writeFileSync(join(root, path), text);
}

/** What `npm run build` does around its steps: --begin, the outputs, --end. */
function build(): void {
  run('--begin');
  for (const output of OUTPUTS) write(output, '// built\n');
  run('--end');
}

beforeEach(() => {
  ({ path: root, cleanup } = makeTmpDir('build-stale-'));
  mkdirSync(join(root, 'scripts'));
  copyFileSync(SCRIPT, join(root, 'scripts/build-if-stale.mjs'));
  write('hub/src/a.ts', 'export const a = 1;\n');
  write('renderer/src/app.tsx', 'export {};\n');
  write('package.json', '{"name":"x"}\n');
});
afterEach(() => cleanup());

describe('build-if-stale', () => {
  it('is stale before any build and current right after one', () => {
    expect(run('--check')).toBe('stale');
    build();
    expect(run('--check')).toBe('current');
  });

  it('goes stale when an input changes, an input is added, or an output is missing', () => {
    build();
    write('hub/src/a.ts', 'export const a = 2;\n');
    expect(run('--check')).toBe('stale');
    build();
    write('cli/new-command.ts', 'export {};\n');
    expect(run('--check')).toBe('stale');
    build();
    rmSync(join(root, 'dist/ui/index.html'));
    expect(run('--check')).toBe('stale');
  });

  it('stays current when a file is only touched (a checkout of the same content rebuilds nothing)', () => {
    build();
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(root, 'hub/src/a.ts'), later, later);
    expect(run('--check')).toBe('current');
  });

  it('never trusts a build that began and did not end (failed or interrupted)', () => {
    build();
    write('hub/src/a.ts', 'export const a = 3;\n');
    run('--begin'); // the build then fails: no --end
    expect(run('--check')).toBe('stale');
    write('hub/src/a.ts', 'export const a = 1;\n'); // back to the content of the last good build
    expect(run('--check')).toBe('stale');
  });
});

describe('build-if-stale progress (issue 31: a first `npm start` was 29 s of silence)', () => {
  it('says on stderr what a build compiles when it begins and that dist/ is built when it ends', () => {
    const begin = spawnSync(process.execPath, [join(root, 'scripts/build-if-stale.mjs'), '--begin'], { encoding: 'utf8' });
    expect(begin.stdout).toBe('');
    expect(begin.stderr).toMatch(/^build: compiling TypeScript \(tsc\), then the CLI bundle, the dashboard and the tray preload/);
    for (const output of OUTPUTS) write(output, '// built\n');
    const end = spawnSync(process.execPath, [join(root, 'scripts/build-if-stale.mjs'), '--end'], { encoding: 'utf8' });
    expect(end.stderr).toMatch(/^build: dist\/ is built \(\d+\.\d s\)\n$/);
    const current = spawnSync(process.execPath, [join(root, 'scripts/build-if-stale.mjs')], { encoding: 'utf8' });
    expect(current.stderr).toBe('build: dist/ is current, nothing to rebuild\n');
  });
});
