// Mining and ranking rules of code search (issue 19), end to end with the real CLI, LanceDB and the
// bundled embedder: project text files without a code extension (systemd units, config templates,
// container files) are mined while a real `.env` is not; and a test file that repeats the words of
// the code it tests ranks below that code unless the question asks about tests.

import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { SearchHit } from '../../hub/src/memory/drawers/memory.js';
import type { MineReport } from '../../hub/src/mine/miner.js';
import { makeTempPalace, parseJson, type CliResult, type TempPalace } from '../helpers/cli.js';

const SLOW = { timeout: 120_000 };

function ok(result: CliResult): CliResult {
  if (result.code !== 0) throw new Error(`exit ${String(result.code)}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
  return result;
}

const SOURCE = `// Token-bucket throttling of incoming requests per client.

/** Refills the bucket of a client and takes one token; false when the client is over its rate. */
export function takeToken(buckets: Map<string, number>, client: string, now: number): boolean {
  const tokens = Math.min(10, (buckets.get(client) ?? 10) + now / 1000);
  if (tokens < 1) return false;
  buckets.set(client, tokens - 1);
  return true;
}
`;

// The test names every word of the question, several times: plain keyword and vector ranking put it first.
const TEST = `import { takeToken } from '../src/throttle.js';

describe('request throttling per client', () => {
  it('throttles requests of a client over its rate: the client bucket runs out of tokens', () => {
    const buckets = new Map<string, number>();
    for (let i = 0; i < 10; i++) takeToken(buckets, 'client', 0);
    expect(takeToken(buckets, 'client', 0)).toBe(false); // requests throttled, client over rate
  });
  it('refills the client bucket so throttled requests pass again', () => {
    expect(takeToken(new Map([['client', 0]]), 'client', 5000)).toBe(true);
  });
});
`;

const FILES: Record<string, string> = {
  'src/throttle.ts': SOURCE,
  'test/throttle.test.ts': TEST,
  'deploy/widget.service': '[Unit]\nDescription=Widget daemon keeps the gizmo queue drained\n\n[Service]\nExecStart=/usr/bin/widgetd --serve\nRestart=on-failure\n',
  '.env.example': '# Copy to .env; the port the widget daemon listens on\nWIDGET_PORT=8080\n',
  '.env': 'WIDGET_PORT=9090\n',
  'Containerfile': 'FROM node:22-slim\nCOPY . /app\nCMD ["node", "/app/widgetd.js"]\n',
};

describe('mining and ranking rules of code search', SLOW, () => {
  let palace: TempPalace;
  let report: MineReport;
  const search = async (query: string): Promise<SearchHit[]> =>
    parseJson<{ results: SearchHit[] }>(ok(await palace.run(['search', query, '--json', '--limit', '5']))).results;

  beforeAll(async () => {
    palace = makeTempPalace('palace-priors-');
    const project = join(palace.root, 'widget');
    for (const [path, text] of Object.entries(FILES)) {
      mkdirSync(dirname(join(project, path)), { recursive: true });
      writeFileSync(join(project, path), text);
    }
    // A binary file with a config extension is refused by the content sniff, not mined.
    writeFileSync(join(project, 'deploy', 'blob.conf'), Buffer.from([0x41, 0x00, 0x42, 0x00]));
    report = parseJson<MineReport>(ok(await palace.run(['mine', project, '--dry-run', '--json'])));
    ok(await palace.run(['mine', project, '--json']));
  });
  afterAll(async () => palace.cleanup());

  it('mines systemd units, config templates and container files, never a real .env or a binary', () => {
    const files = (report.files ?? []).map((f) => f.file.replace(/\\/g, '/').split('/widget/')[1]);
    expect(files).toEqual(expect.arrayContaining(['deploy/widget.service', '.env.example', 'Containerfile', 'src/throttle.ts']));
    expect(files).not.toContain('.env');
    expect(files).not.toContain('deploy/blob.conf');
  });

  it('finds the systemd unit by what it does', async () => {
    const hits = await search('how is the widget daemon restarted when it fails?');
    expect(hits[0]?.location?.path ?? hits[0]?.source_file).toMatch(/widget\.service$/);
  });

  it('ranks the code above the test that repeats its words, unless the question asks about tests', async () => {
    const code = await search('how are requests of a client throttled when over its rate?');
    const paths = code.map((h) => h.location?.path);
    expect(paths.indexOf('src/throttle.ts'), JSON.stringify(paths)).toBeGreaterThanOrEqual(0);
    expect(paths.indexOf('src/throttle.ts'), JSON.stringify(paths)).toBeLessThan(paths.indexOf('test/throttle.test.ts'));
    // Scores still never increase down the list.
    for (let i = 1; i < code.length; i++) expect(code[i]!.score).toBeLessThanOrEqual(code[i - 1]!.score);
    const tests = await search('which test checks that requests of a client are throttled over its rate?');
    expect(tests[0]?.location?.path).toBe('test/throttle.test.ts');
  });
});
