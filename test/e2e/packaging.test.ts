// Packaging smoke test: electron-builder --dir with a stub electronDist (Electron's binary cannot be
// downloaded here) and without the native rebuild (it needs Electron's headers). It checks the
// configuration, what lands inside and outside app.asar, that devDependencies stay out, and that
// the unpacked hub starts and serves its dashboard from the unpacked files.

import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { extractFile, listPackage } from '@electron/asar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  REPO_ROOT,
  healthy,
  killChildren,
  makeHubDirs,
  spawnNode,
  waitUntil,
  childEnv,
  type HubDirs,
} from '../helpers/hub.js';
import { readLiveRegistration } from '../../hub/src/registration.js';
import { makeTmpDir, type TmpDir } from '../helpers/tmp-dir.js';

const BUILDER = join(REPO_ROOT, 'node_modules', 'electron-builder', 'cli.js');

describe.skipIf(!existsSync(BUILDER))('electron-builder --dir (stub Electron)', { timeout: 240_000 }, () => {
  let tmp: TmpDir;
  let resources: string;
  let output: string;

  beforeAll(() => {
    tmp = makeTmpDir('palace-pack-');
    const stub = join(tmp.path, 'electron-dist');
    mkdirSync(stub, { recursive: true });
    writeFileSync(join(stub, 'electron'), '#!/bin/sh\necho "stub electron"\n');
    chmodSync(join(stub, 'electron'), 0o755);
    const out = join(tmp.path, 'out');
    const result = spawnSync(
      process.execPath,
      [
        BUILDER,
        '--dir',
        '--linux',
        '--x64',
        '--config',
        'electron-builder.yml',
        `-c.electronDist=${stub}`,
        '-c.npmRebuild=false',
        `-c.directories.output=${out}`,
      ],
      {
        cwd: REPO_ROOT,
        encoding: 'utf8',
        env: { ...process.env, ELECTRON_SKIP_BINARY_DOWNLOAD: '1', CI: 'true' },
        timeout: 200_000,
      },
    );
    output = `${result.stdout}\n${result.stderr}`;
    if (result.status !== 0)
      throw new Error(`electron-builder failed (${String(result.status)}):\n${output}`);
    resources = join(out, 'linux-unpacked', 'resources');
    // The describe's timeout covers the tests, not this hook (vitest's hookTimeout, 30 s): packaging
    // took 25-28 s in clean-clone runs and passed 30 s in one, under the suite's load.
  }, 240_000);

  afterAll(async () => {
    await killChildren();
    tmp?.cleanup();
  });

  it('packs main, preload and assets into app.asar with the Electron entry point', () => {
    expect(existsSync(join(tmp.path, 'out', 'linux-unpacked', 'palace'))).toBe(true);
    const asar = join(resources, 'app.asar');
    const files = new Set(listPackage(asar, { isPack: false }).map((f) => f.replace(/\\/g, '/')));
    for (const f of [
      '/package.json',
      '/dist/main/main.js',
      '/dist/main/preload.cjs',
      '/dist/main/supervisor.js',
      '/assets/icon.png',
      '/assets/tray/tray-running.png',
    ])
      expect(files.has(f), f).toBe(true);
    const pkg = JSON.parse(extractFile(asar, 'package.json').toString('utf8')) as { main: string };
    expect(pkg.main).toBe('dist/main/main.js');
    for (const f of files)
      expect(f, 'no source maps, tests or benchmarks').not.toMatch(/\.map$|^\/test\/|^\/dist\/bench\//);
  });

  it('unpacks the hub, the dashboard and the native modules, and leaves devDependencies out', () => {
    const unpacked = join(resources, 'app.asar.unpacked');
    for (const f of [
      'bin/palace.js',
      'dist/hub/src/main.js',
      'dist/cli/main.js',
      'dist/ui/index.html',
      'node_modules/better-sqlite3/build/Release/better_sqlite3.node',
      'node_modules/koa/package.json',
      'node_modules/chokidar/package.json',
    ])
      expect(existsSync(join(unpacked, f)), f).toBe(true);
    for (const dev of [
      'react',
      'react-dom',
      'vite',
      'electron',
      'electron-builder',
      'playwright-core',
      'vitest',
      'typescript',
    ])
      expect(existsSync(join(unpacked, 'node_modules', dev)), dev).toBe(false);
  });

  it('runs the unpacked hub, which serves the unpacked dashboard at /ui', async () => {
    const dirs: HubDirs = makeHubDirs('palace-pack-hub-');
    try {
      const bin = join(resources, 'app.asar.unpacked', 'bin', 'palace.js');
      const proc = spawnNode(bin, ['--palace', dirs.palace, 'serve', '--port', '0'], childEnv(dirs));
      const reg = await waitUntil(
        async () => {
          if (!proc.isRunning()) throw new Error(`the packed hub exited: ${proc.stderr()}`);
          const r = readLiveRegistration(dirs.palaceHome, dirs.palace);
          return r && r.pid === proc.pid && (await healthy(`http://127.0.0.1:${r.port}`)) ? r : undefined;
        },
        'the packed hub to answer',
        30_000,
      );
      const ui = await fetch(`http://127.0.0.1:${reg.port}/ui/`);
      expect(ui.status).toBe(200);
      expect(await ui.text()).toBe(
        readFileSync(join(resources, 'app.asar.unpacked', 'dist', 'ui', 'index.html'), 'utf8'),
      );
      await proc.stop();
    } finally {
      dirs.cleanup();
    }
  });
});
