// Code search end to end (issue 19): `palace mine` of a committed fixture project (koa's lib files,
// koa-compose, a Python and a Go file) with the real CLI, LanceDB and the bundled embedder, then
// questions a developer asks; the right function, with its lines, must be in the top 3.

import { cpSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { SearchHit } from '../../hub/src/memory/drawers/memory.js';
import type { MineReport } from '../../hub/src/mine/miner.js';
import { REPO_ROOT, makeTempPalace, parseJson, type CliResult, type TempPalace } from '../helpers/cli.js';

const SLOW = { timeout: 180_000 };
const FIXTURE = join(REPO_ROOT, 'test', 'fixtures', 'koa-app');
const APP = 'koa/lib/application.js';

function ok(result: CliResult): CliResult {
  if (result.code !== 0) throw new Error(`exit ${String(result.code)}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
  return result;
}

/** 1-based number of the line of `file` (in the fixture) that contains `needle`. */
function lineOf(file: string, needle: string): number {
  const index = readFileSync(join(FIXTURE, file), 'utf8')
    .split('\n')
    .findIndex((l) => l.includes(needle));
  if (index < 0) throw new Error(`${needle} not in ${file}`);
  return index + 1;
}

describe('code search over a mined project', SLOW, () => {
  let palace: TempPalace;
  let report: MineReport;
  const search = async (query: string, ...extra: string[]): Promise<SearchHit[]> =>
    parseJson<{ results: SearchHit[] }>(ok(await palace.run(['search', query, '--json', '--limit', '5', ...extra]))).results;

  beforeAll(async () => {
    palace = makeTempPalace('palace-code-search-');
    // A copy under the temporary HOME: the default mining roots admit only folders there.
    const project = join(palace.root, 'koa-app');
    cpSync(FIXTURE, project, { recursive: true });
    report = parseJson<MineReport>(ok(await palace.run(['mine', project, '--json'])));
  });
  afterAll(async () => palace.cleanup());

  it('mines every source file of the fixture', () => {
    expect(report.errors).toEqual([]);
    expect(report.files_mined).toBeGreaterThanOrEqual(7);
  });

  /** The hit among the top 3 that holds `needle` inside the function whose header is `header`. */
  const expectInTop3 = (hits: SearchHit[], header: string, needle: string): SearchHit => {
    const top = hits.slice(0, 3);
    const hit = top.find((h) => h.content.includes(header) && h.content.includes(needle));
    expect(hit, `top 3: ${JSON.stringify(top.map((h) => [h.location ?? h.source_file, h.content.slice(0, 80)]))}`).toBeDefined();
    // Its lines: the location names the file relative to the mined root and spans both lines.
    expect(hit?.location?.path).toBe(APP);
    const want = [lineOf(APP, header), lineOf(APP, needle)];
    for (const line of want) {
      expect(hit?.location?.line_start).toBeLessThanOrEqual(line);
      expect(hit?.location?.line_end).toBeGreaterThanOrEqual(line);
    }
    return hit!;
  };

  it('"how does koa compose the middleware stack?" finds callback() and compose(this.middleware)', async () => {
    const hits = await search('how does koa compose the middleware stack?');
    const hit = expectInTop3(hits, 'callback () {', 'this.compose(this.middleware)');
    // The snippet shows the matching line, with "compose" and "middleware" marked.
    expect(hit.snippet.text).toContain('compose(this.middleware)');
    const marked = hit.snippet.marks.map(([s, e]) => hit.snippet.text.slice(s, e).toLowerCase());
    expect(marked).toEqual(expect.arrayContaining(['compose', 'middleware']));
    expect(hit.snippet.line_start).toBeGreaterThanOrEqual(hit.location!.line_start);
  });

  it('"how is the HTTP server created when the app starts listening?" finds listen() and http.createServer(this.callback())', async () => {
    const hits = await search('how is the HTTP server created when the app starts listening?');
    expectInTop3(hits, 'listen (...args) {', 'http.createServer(this.callback())');
  });

  it('prints path:lines, the score and the highlighted best lines; --full prints the whole chunk', async () => {
    const text = ok(await palace.run(['search', 'how does koa compose the middleware stack?', '--limit', '3'])).stdout;
    const line = lineOf(APP, 'this.compose(this.middleware)');
    expect(text).toMatch(new RegExp(`\\[\\d\\] ${APP.replace(/\./g, '\\.')}:\\d+-\\d+  score \\d\\.\\d{3}`));
    expect(text).toContain(`${line} │     const fn = this.compose(this.middleware)`);
    expect(text).not.toContain('\u001b['); // not a terminal: plain
    const full = ok(await palace.run(['search', 'how does koa compose the middleware stack?', '--limit', '3', '--full'])).stdout;
    expect(full).toContain('callback () {');
    expect(full.length).toBeGreaterThan(text.length);
  });
});
