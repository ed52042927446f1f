// Issue 17 item 15, errors at the edge: a bad environment value on `serve` is an ordinary error
// (`Error: …`, exit 2, no stack), `duplicate --json` without a vector index prints the promised
// {"error": …} JSON, and a near-duplicate refused by `drawer add` exits non-zero.

import { mkdirSync, writeFileSync } from 'node:fs';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { recordPath } from '../../hub/src/embed/select.js';
import { makeTempPalace, parseJson, type ErrorJson, type TempPalace } from '../helpers/cli.js';
import { PALACE_MCP_BIN, childEnv, makeHubDirs, spawnNode } from '../helpers/hub.js';

let palace: TempPalace;

beforeEach(() => {
  palace = makeTempPalace('palace-edge-cli-');
});

afterEach(async () => {
  await palace.cleanup();
});

describe('start-up errors', () => {
  it('`palace serve` with PALACE_SSE_MAX_CLIENTS=lots prints `Error: …` and exits 2, no stack trace', async () => {
    for (const [name, value] of [
      ['PALACE_SSE_MAX_CLIENTS', 'lots'],
      ['PALACE_MCP_IDLE_HOURS', 'forever'],
    ] as const) {
      const result = await palace.run(['serve', '--port', '0'], { env: { [name]: value }, killAfterMs: 30_000 });
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toMatch(/^Error: /);
      expect(result.stderr).toContain(name);
      expect(result.stderr).not.toMatch(/\n\s+at /);
      expect(result.stderr).not.toContain('HubError');
    }
  });

  it('`palace-mcp --transport http` reports the same way', async () => {
    const dirs = makeHubDirs('palace-edge-mcp-');
    try {
      const proc = spawnNode(
        PALACE_MCP_BIN,
        ['--transport', 'http', '--palace', dirs.palace, '--port', '0'],
        childEnv(dirs, { PALACE_SSE_MAX_CLIENTS: 'lots' }),
      );
      const exit = await proc.exited;
      expect(exit.code, proc.stderr()).toBe(2);
      expect(proc.stderr()).toMatch(/^Error: .*PALACE_SSE_MAX_CLIENTS/);
      expect(proc.stderr()).not.toMatch(/\n\s+at /);
    } finally {
      dirs.cleanup();
    }
  });
});

describe('palace duplicate --json without a vector index', () => {
  it('prints {"error": {code, message}} on stdout and exits 2', async () => {
    mkdirSync(palace.dir, { recursive: true });
    writeFileSync(
      recordPath(palace.dir),
      JSON.stringify({ provider: 'bundled', model: 'all-MiniLM-L6-v2', dimensions: 384, recorded_at: '2026-01-01T00:00:00.000Z' }),
    );
    for (const extra of [[], ['--fail-on-duplicate']]) {
      const result = await palace.run(['duplicate', '--content', 'anything', '--json', ...extra]);
      expect(result.code, result.stderr).toBe(2);
      const json = parseJson<ErrorJson>(result);
      expect(json.error.code).toMatch(/^memory\./);
      expect(json.error.message).toContain('the vector index is not available');
      expect(result.stderr).toBe('');
    }
  });
});

describe('palace drawer add of a near-duplicate', () => {
  it('exits 1 when the drawer is not filed (text and --json), 0 with --force', { timeout: 120_000 }, async () => {
    const text = 'We keep the coordination log in its own SQLite file so a memory rebuild never touches it.';
    const first = await palace.run(['drawer', 'add', '--wing', 'acme', '--room', 'decisions', '--content', text, '--json']);
    expect(first.code, first.stderr).toBe(0);
    const original = parseJson<{ drawer_id: string; filed: boolean }>(first);
    expect(original.filed).toBe(true);

    const near = `${text} `;
    const refused = await palace.run(['drawer', 'add', '--wing', 'acme', '--room', 'copies', '--content', near]);
    expect(refused.code, refused.stdout).toBe(1);
    expect(refused.stdout).toMatch(/^Not filed: near-duplicate of /);

    const refusedJson = await palace.run(['drawer', 'add', '--wing', 'acme', '--room', 'copies', '--content', near, '--json']);
    expect(refusedJson.code).toBe(1);
    expect(parseJson<{ filed: boolean; duplicate_of: string }>(refusedJson)).toMatchObject({
      filed: false,
      duplicate_of: original.drawer_id,
    });

    const forced = await palace.run(['drawer', 'add', '--wing', 'acme', '--room', 'copies', '--content', near, '--force', '--json']);
    expect(forced.code, forced.stderr).toBe(0);
  });
});
