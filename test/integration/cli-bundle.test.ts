// The CLI bundle and its code cache (bin/palace.js, scripts/build-cli-bundle.mjs): the everyday commands
// run from dist/cli/palace.bundle.cjs with a V8 code cache beside it. Each test runs a copy of the launcher
// and of dist/cli in a temp tree (the built hub and node_modules linked), so the repo's cache is untouched.

import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { REPO_ROOT } from '../helpers/cli.js';
import { makeTmpDir, type TmpDir } from '../helpers/tmp-dir.js';

let tmp: TmpDir;
let tree: string;
let bundle: string;
let cache: string;
let env: NodeJS.ProcessEnv;

beforeEach(() => {
  tmp = makeTmpDir('palace-cli-bundle-');
  tree = join(tmp.path, 'tree');
  mkdirSync(join(tree, 'dist'), { recursive: true });
  cpSync(join(REPO_ROOT, 'package.json'), join(tree, 'package.json'));
  cpSync(join(REPO_ROOT, 'bin'), join(tree, 'bin'), { recursive: true }); // the launchers and their package.json
  cpSync(join(REPO_ROOT, 'dist', 'cli'), join(tree, 'dist', 'cli'), {
    recursive: true,
    preserveTimestamps: true,
    filter: (src) => !src.endsWith('cache'),
  });
  symlinkSync(join(REPO_ROOT, 'dist', 'hub'), join(tree, 'dist', 'hub'));
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(tree, 'node_modules'));
  bundle = join(tree, 'dist', 'cli', 'palace.bundle.cjs');
  cache = `${bundle}.cache`;
  const home = join(tmp.path, 'home');
  mkdirSync(join(home, '.palace'), { recursive: true });
  env = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('PALACE_') && key !== 'NODE_OPTIONS') env[key] = value;
  Object.assign(env, { HOME: home, PALACE_HOME: join(home, '.palace'), PALACE_PALACE_PATH: join(tmp.path, 'palace'), NO_COLOR: '1' });
});
afterEach(() => tmp.cleanup());

/** Runs `node <script> ...args` in the temp tree: the launcher by default, or the compiled CLI. */
function run(args: readonly string[], script = join(tree, 'bin', 'palace.js')): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [script, ...args], { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const APPEND = ['logstream', 'append', '--type', 'status', '--stream', 'project/b', '--room', 'status', '--from-agent', 'a', '--body', 'hello', '--json'];
const LIST = ['logstream', 'list', '--limit', '5', '--json'];

describe('the CLI bundle', () => {
  it('runs an everyday command from the bundle, saves a code cache, and the next run uses it as is', () => {
    expect(existsSync(cache)).toBe(false);
    const appended = run(APPEND);
    expect(appended.code).toBe(0);
    expect(appended.stderr).toBe('');
    const id = (JSON.parse(appended.stdout) as { id: string }).id;
    // Only the bundle road writes a cache, keyed by the bundle's content hash (its first line).
    const hash = /^\/\/ palace-bundle ([0-9a-f]{64})\n/.exec(readFileSync(bundle, 'latin1'))?.[1];
    expect(hash).toBeDefined();
    const saved = readFileSync(cache);
    expect(saved.subarray(0, 100).toString('latin1')).toContain(`palace-cache 1 ${hash} `);
    const listed = run(LIST);
    expect(listed.code).toBe(0);
    expect((JSON.parse(listed.stdout) as { events: { id: string }[] }).events.map((e) => e.id)).toEqual([id]);
    expect(readFileSync(cache).equals(saved)).toBe(true); // accepted, not rewritten
  });

  it('runs the memory commands from the bundle too: a no-hub wings writes the code cache', () => {
    expect(existsSync(cache)).toBe(false);
    const wings = run(['wings', '--json']);
    expect(wings.code, wings.stderr).toBe(0);
    expect(JSON.parse(wings.stdout)).toEqual({ wings: {} });
    // Only the bundle road writes a cache; the compiled CLI never does.
    expect(existsSync(cache)).toBe(true);
  }, 60_000);

  it('ignores a damaged cache or one made by another node, answers the same, and replaces it', () => {
    expect(run(APPEND).code).toBe(0);
    const reference = run(LIST);
    const good = readFileSync(cache);
    const header = good.subarray(0, good.indexOf(0x0a) + 1).toString('latin1');
    const damaged = Buffer.concat([Buffer.from(header, 'latin1'), Buffer.alloc(4096, 0x5a)]);
    const foreign = Buffer.concat([Buffer.from(header.replace(process.version, 'v0.0.1'), 'latin1'), good.subarray(header.length)]);
    for (const bad of [damaged, foreign, Buffer.from('not a cache')]) {
      writeFileSync(cache, bad);
      const r = run(LIST);
      expect(r).toEqual(reference);
      const now = readFileSync(cache);
      expect(now.equals(bad)).toBe(false);
      expect(now.subarray(0, header.length).toString('latin1')).toBe(header);
    }
  });

  it('gives the same output and exit codes as the compiled CLI', () => {
    const main = join(tree, 'dist', 'cli', 'main.js');
    expect(run(APPEND).code).toBe(0);
    const cases: string[][] = [
      LIST,
      ['logstream', 'append', '--type', 'status', '--stream', 's', '--room', 'r', '--from-agent', 'a', '--status', 'nonsense', '--json'],
      ['logstream', 'list', '--no-such-option'],
      ['artifact', 'get', 'art_missing'],
      // The memory commands run from the bundle too (LanceDB, arrow and the embedder stay external).
      ['wings', '--json'],
      ['--version'],
    ];
    const codes = new Set<number | null>();
    // A log line's time stamp is the one thing two runs may not share.
    const untimed = (r: ReturnType<typeof run>): ReturnType<typeof run> => ({ ...r, stderr: r.stderr.replace(/^\d{4}-\d\d-\d\dT[\d:.]+Z /gm, '') });
    for (const args of cases) {
      const bundled = untimed(run(args));
      expect(bundled, args.join(' ')).toEqual(untimed(run(args, main)));
      codes.add(bundled.code);
    }
    expect([...codes].sort()).toEqual([0, 1, 2]);
  }, 60_000); // twelve CLI runs, two of them opening LanceDB and the embedder

  it('runs the compiled CLI when there is no bundle, or one older than the compiled CLI', () => {
    const main = join(tree, 'dist', 'cli', 'main.js');
    // tsc ran after the bundle was built: the bundle is stale and not used (no cache is written).
    utimesSync(bundle, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    utimesSync(main, new Date(), new Date());
    const stale = run(APPEND);
    expect(stale.code).toBe(0);
    expect(JSON.parse(stale.stdout)).toHaveProperty('id');
    expect(existsSync(cache)).toBe(false);
    rmSync(bundle);
    const r = run(APPEND);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toHaveProperty('id');
    expect(existsSync(cache)).toBe(false);
  });
});
