// Recall you can trust (issue 32): a hit from a mined file carries the file's content hash and the
// time it was mined; after the file is edited the same hit says `stale: true` (CLI JSON and text),
// and re-mining the file clears it. Real CLI, LanceDB and the bundled embedder.

import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { SearchHit } from '../../hub/src/memory/drawers/memory.js';
import { makeTempPalace, parseJson, type CliResult, type TempPalace } from '../helpers/cli.js';

const SLOW = { timeout: 180_000 };

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

describe('stale hits of mined files', SLOW, () => {
  let palace: TempPalace;
  let file: string;
  let project: string;
  const QUERY = 'how are requests of a client throttled when over its rate?';
  const hitIn = (result: CliResult): SearchHit | undefined => parseJson<{ results: SearchHit[] }>(ok(result)).results.find((h) => h.source_file === file);
  const hitOf = async (): Promise<SearchHit | undefined> => hitIn(await palace.run(['search', QUERY, '--json', '--limit', '5']));

  beforeAll(async () => {
    palace = makeTempPalace('palace-stale-');
    project = join(palace.root, 'throttle');
    mkdirSync(join(project, 'src'), { recursive: true });
    file = join(project, 'src', 'throttle.ts');
    writeFileSync(file, SOURCE);
    ok(await palace.run(['mine', project, '--json']));
  });
  afterAll(async () => palace.cleanup());

  it('a fresh hit names the hash and time it was mined and is not stale', async () => {
    const hit = await hitOf();
    expect(hit, 'the mined file is found').toBeDefined();
    expect(hit?.stale).toBe(false);
    expect(hit?.mined?.sha256).toBe(createHash('sha256').update(readFileSync(file)).digest('hex'));
    expect(Number.isNaN(Date.parse(hit?.mined?.at ?? ''))).toBe(false);
  });

  it('after the file changes the hit is stale (JSON and text), and re-mining clears it', async () => {
    const before = await hitOf();
    writeFileSync(file, SOURCE.replace('Math.min(10,', 'Math.min(20,'));
    // The same search as JSON and as text, two processes at once.
    const [jsonRun, textRun] = await Promise.all([palace.run(['search', QUERY, '--json', '--limit', '5']), palace.run(['search', QUERY, '--limit', '5'])]);
    const stale = hitIn(jsonRun);
    expect(stale?.stale).toBe(true);
    expect(stale?.mined?.sha256).toBe(before?.mined?.sha256);
    const text = ok(textRun).stdout;
    expect(text).toMatch(/src\/throttle\.ts:\d+-\d+ {2}score [\d.]+ {2}\[stale: the file changed since it was mined/);

    ok(await palace.run(['mine', project, '--json']));
    const fresh = await hitOf();
    expect(fresh?.stale).toBe(false);
    expect(fresh?.mined?.sha256).toBe(createHash('sha256').update(readFileSync(file)).digest('hex'));
    expect(fresh?.mined?.sha256).not.toBe(before?.mined?.sha256);
  });

  it('a file that is gone is stale too', async () => {
    writeFileSync(join(project, 'src', 'throttle.ts'), SOURCE);
    ok(await palace.run(['mine', project, '--json']));
    expect((await hitOf())?.stale).toBe(false);
    const { rmSync } = await import('node:fs');
    rmSync(file);
    expect((await hitOf())?.stale).toBe(true);
  });
});
