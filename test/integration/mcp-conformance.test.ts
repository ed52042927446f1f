// The official MCP conformance suite (@modelcontextprotocol/conformance) against a real hub, in every
// protocol era the suite covers (2025-06-18, 2025-11-25), on the full and the lean tool profile.
// The suite needs Node >= 22 (fs.globSync) and palace supports Node 20: the suite and a Node 22 from
// the npm registry (the `node` package) are installed once into a cached directory under the temp dir
// (PALACE_CONFORMANCE_CACHE to move it). Scenarios that need the suite's own fixture tools are the
// baseline in test/fixtures/mcp-conformance/expected-failures.yml (docs/mcp.md says why); any other
// failure or warning, or a baseline entry that starts passing, fails this test.

import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Hub } from '../../hub/src/server.js';
import { makeHubDirs, REPO_ROOT, startTestHub, type HubDirs } from '../helpers/hub.js';

const run = promisify(execFile);

const SUITE_VERSION = '0.1.16';
const NODE_VERSION = '22.23.3';
const ERAS = ['2025-06-18', '2025-11-25'] as const;
const BASELINE = join(REPO_ROOT, 'test', 'fixtures', 'mcp-conformance', 'expected-failures.yml');

const cache = process.env.PALACE_CONFORMANCE_CACHE ?? join(tmpdir(), `palace-mcp-conformance-${SUITE_VERSION}-node${NODE_VERSION}`);
const suiteEntry = join(cache, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');

/** A node that can run the suite: this one when new enough, else the npm `node` package's binary. */
function nodeBinary(): string {
  return Number(process.versions.node.split('.')[0]) >= 22 ? process.execPath : join(cache, 'node_modules', 'node', 'bin', 'node');
}

async function install(): Promise<void> {
  const node = nodeBinary();
  if (existsSync(suiteEntry) && existsSync(node)) return;
  mkdirSync(cache, { recursive: true });
  if (!existsSync(join(cache, 'package.json'))) writeFileSync(join(cache, 'package.json'), '{"name":"palace-conformance-cache","private":true}\n');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const pkgs = [`@modelcontextprotocol/conformance@${SUITE_VERSION}`, ...(node === process.execPath ? [] : [`node@${NODE_VERSION}`])];
  await run(npm, ['install', '--no-audit', '--no-fund', '--no-save', '--loglevel=error', ...pkgs], { cwd: cache, timeout: 240_000 });
}

let dirs: HubDirs;
let hub: Hub;

beforeAll(async () => {
  await install();
  dirs = makeHubDirs('palace-conformance-');
  hub = await startTestHub(dirs);
}, 300_000);
afterAll(async () => {
  await hub?.close();
  dirs?.cleanup();
});

async function conformance(url: string, era: string): Promise<{ code: number; out: string }> {
  try {
    const { stdout, stderr } = await run(
      nodeBinary(),
      [suiteEntry, 'server', '--url', url, '--spec-version', era, '--expected-failures', BASELINE],
      { timeout: 120_000, maxBuffer: 16 * 1024 * 1024 },
    );
    return { code: 0, out: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : 1, out: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

/** The SUMMARY lines (one per scenario) and the baseline verdict, for the assertion message. */
function summary(out: string): string {
  return out
    .split('\n')
    .filter((l) => /^[✓✗~] |Baseline|Unexpected|Stale|^\s+[✗~] /.test(l.trim()) || l.includes('passed,'))
    .join('\n');
}

describe('official MCP conformance suite', () => {
  for (const era of ERAS)
    for (const profile of ['full', 'lean'] as const)
      it(`passes every applicable server scenario of ${era} (${profile} profile)`, async () => {
        const url = `${hub.url}/mcp${profile === 'lean' ? '?profile=lean' : ''}`;
        const { code, out } = await conformance(url, era);
        expect(out).toMatch(/server-initialize: \d+ passed, 0 failed/);
        if (era === '2025-11-25') expect(out).toMatch(/dns-rebinding-protection: \d+ passed, 0 failed/);
        expect(code, summary(out)).toBe(0);
        expect(out).toContain('Baseline check passed');
      }, 150_000);
});
