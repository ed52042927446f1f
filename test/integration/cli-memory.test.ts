// The memory commands of the real CLI (`node bin/palace.js`, one process per command, temp HOME):
// file and find by paraphrase, wings, tags, rating, relocation, deletion and duplicate exit codes,
// first on the palace directly and then through a live daemon hub (and refused to write around it).

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { recordPath } from '../../hub/src/embed/select.js';
import type { DrawerView, SearchHit } from '../../hub/src/memory/drawers/memory.js';
import { isPidAlive, readLiveRegistration } from '../../hub/src/registration.js';
import {
  makeTempPalace,
  parseJson,
  type CliResult,
  type ErrorJson,
  type TempPalace,
} from '../helpers/cli.js';
import { waitUntil } from '../helpers/hub.js';

const DECISION =
  'We chose LanceDB as the embedded vector store because it runs in-process and needs no separate server.';
const PARAPHRASE = 'which vector database did we pick for local storage?';
const OTHERS = [
  'The CI pipeline runs on GitHub Actions with a matrix of Node 20 and Node 22.',
  'Alice prefers tabs over spaces and wants 100-character lines in TypeScript files.',
  'The team lunch is on Fridays at the Italian place around the corner.',
];

interface AddJson {
  drawer_id: string;
  filed: boolean;
  duplicate_of?: string;
}

interface SearchJson {
  query: string;
  sanitized_query?: string;
  results: SearchHit[];
}

function ok(result: CliResult): CliResult {
  if (result.code !== 0)
    throw new Error(`exit ${String(result.code)}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
  return result;
}

async function addDrawer(
  palace: TempPalace,
  args: readonly string[],
  options: { stdin?: string; env?: Record<string, string> } = {},
): Promise<AddJson> {
  return parseJson<AddJson>(ok(await palace.run(['drawer', 'add', '--json', ...args], options)));
}

// Every command is a fresh Node process that loads the model: allow for a loaded machine.
const SLOW = { timeout: 120_000 };

describe('palace memory commands on the palace directly', SLOW, () => {
  let palace: TempPalace;
  let decisionId: string;

  beforeAll(async () => {
    palace = makeTempPalace('palace-cli-mem-');
    // Three ways in: --content, --file and stdin.
    const file = join(palace.root, 'decision.md');
    writeFileSync(file, DECISION);
    const added = await addDrawer(palace, [
      '--wing',
      'acme',
      '--room',
      'architecture',
      '--file',
      file,
      '--tag',
      'adr',
      '--tag',
      'storage',
    ]);
    expect(added.filed).toBe(true);
    decisionId = added.drawer_id;
    await addDrawer(palace, ['--wing', 'acme', '--room', 'ops', '--tag', 'ci', '--tag', 'storage'], {
      stdin: OTHERS[0],
    });
    for (const content of OTHERS.slice(1))
      await addDrawer(palace, ['--wing', 'people', '--room', 'prefs', '--content', content, '--tag', 'team']);
  }, SLOW.timeout);

  afterAll(async () => {
    await palace?.cleanup();
  });

  it('drawer add says what it filed', async () => {
    const result = ok(
      await palace.run([
        'drawer',
        'add',
        '--wing',
        'acme',
        '--room',
        'ops',
        '--content',
        'Payroll runs on the last business day of each month.',
      ]),
    );
    expect(result.stdout).toMatch(/^Filed drawer_[0-9a-f]{24}\n$/);
  });

  it('search finds the drawer by a paraphrase, as text and as JSON', async () => {
    // Read-only calls, independent of each other: run at once (each is still its own CLI process).
    const [textRun, jsonRun] = await Promise.all([
      palace.run(['search', PARAPHRASE]),
      palace.run(['search', PARAPHRASE, '--json', '--limit', '2']),
    ]);
    const text = ok(textRun);
    const first = text.stdout.split('\n\n')[0] ?? '';
    // A drawer filed by hand has no file location: its place heads the hit; the id follows.
    expect(first).toMatch(new RegExp(`^\\[1\\] acme/architecture  score \\d\\.\\d{3}\\n    acme/architecture  ${decisionId}  filed`));
    expect(first).toContain(`    ${DECISION}`);
    expect(first).toMatch(/filed \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ by cli/);

    const json = parseJson<SearchJson>(ok(jsonRun));
    expect(json.query).toBe(PARAPHRASE);
    expect(json.results).toHaveLength(2);
    expect(json.results[0]).toMatchObject({
      drawer_id: decisionId,
      content: DECISION,
      wing: 'acme',
      room: 'architecture',
      tags: ['adr', 'storage'],
    });
  });

  it('search honours --wing and --room, and says when nothing matches', async () => {
    const [inWing, nowhere] = await Promise.all([
      palace.run(['search', PARAPHRASE, '--wing', 'people', '--json']),
      palace.run(['search', PARAPHRASE, '--wing', 'acme', '--room', 'nowhere']),
    ]);
    const json = parseJson<SearchJson>(ok(inWing));
    expect(json.results.map((r) => r.wing)).toEqual(['people', 'people']);
    const none = ok(nowhere);
    expect(none.stdout).toBe('No matching drawers.\n');
  });

  it('wings lists wings with counts', async () => {
    const [textRun, jsonRun] = await Promise.all([palace.run(['wings']), palace.run(['wings', '--json'])]);
    const text = ok(textRun);
    expect(text.stdout).toMatch(/^ {2}acme {4}\d+$/m);
    expect(text.stdout).toMatch(/^ {2}people {2}2$/m);
    const json = parseJson<{ wings: Record<string, number> }>(ok(jsonRun));
    expect(json.wings.people).toBe(2);
    expect(json.wings.acme).toBeGreaterThanOrEqual(2);
  });

  it('tags --min-count keeps only tags used that often', async () => {
    const [allRun, commonRun, inWingRun, noneRun] = await Promise.all([
      palace.run(['tags', '--json']),
      palace.run(['tags', '--min-count', '2', '--json']),
      palace.run(['tags', '--wing', 'people', '--min-count', '2']),
      palace.run(['tags', '--min-count', '9']),
    ]);
    const all = parseJson<{ tags: Record<string, number> }>(ok(allRun));
    expect(all.tags).toEqual({ storage: 2, team: 2, adr: 1, ci: 1 });
    const common = parseJson<{ tags: Record<string, number> }>(ok(commonRun));
    expect(common.tags).toEqual({ storage: 2, team: 2 });
    const inWing = ok(inWingRun);
    expect(inWing.stdout).toBe('  team  2\n');
    expect(ok(noneRun).stdout).toBe('No tags.\n');
  });

  it('rate --not-useful records the rating, keeps the drawer in results, and refuses an ambiguous rating', async () => {
    const rated = ok(await palace.run(['rate', decisionId, '--not-useful']));
    expect(rated.stdout).toBe(`Rated ${decisionId} not useful.\n`);
    // The reads after the rating, and the two refused ratings (usage errors: they write nothing), at once.
    const [getRun, jsonRun, textRun, both, neither] = await Promise.all([
      palace.run(['drawer', 'get', decisionId, '--json']),
      palace.run(['search', PARAPHRASE, '--json', '--limit', '10']),
      palace.run(['search', PARAPHRASE, '--limit', '10']),
      palace.run(['rate', decisionId, '--useful', '--not-useful']),
      palace.run(['rate', decisionId]),
    ]);
    const drawer = parseJson<DrawerView>(ok(getRun));
    expect(drawer.useful).toBe(false);
    const json = parseJson<SearchJson>(ok(jsonRun));
    expect(json.results.find((r) => r.drawer_id === decisionId)?.useful).toBe(false);
    const text = ok(textRun);
    expect(text.stdout).toContain('[rated not useful]');

    expect(both.code).toBe(2);
    expect(neither.code).toBe(2);
    ok(await palace.run(['rate', decisionId, '--useful']));
  });

  it('drawer update --room moves the drawer and keeps its content verbatim', async () => {
    const before = parseJson<DrawerView>(ok(await palace.run(['drawer', 'get', decisionId, '--json'])));
    const updated = ok(await palace.run(['drawer', 'update', decisionId, '--room', 'decisions']));
    expect(updated.stdout).toBe(`Updated ${decisionId}: now acme/decisions tags adr, storage\n`);
    const [afterRun, textRun, nothing] = await Promise.all([
      palace.run(['drawer', 'get', decisionId, '--json']),
      palace.run(['drawer', 'get', decisionId]),
      palace.run(['drawer', 'update', decisionId]), // no change named: a usage error, nothing written
    ]);
    const after = parseJson<DrawerView>(ok(afterRun));
    expect(after).toMatchObject({ ...before, room: 'decisions' });
    expect(after.content).toBe(DECISION);
    const text = ok(textRun);
    expect(text.stdout).toContain(`${decisionId}  acme/decisions  tags: adr, storage`);
    expect(text.stdout.endsWith(`\n\n${DECISION}\n`)).toBe(true);
    expect(nothing.code).toBe(2);
  });

  it('duplicate: exit 0 when no duplicate, non-zero with --fail-on-duplicate when there is one', async () => {
    const near =
      'We chose LanceDB as our embedded vector store because it runs in process and needs no separate server.';
    // `duplicate` only reads: the four checks run at once.
    const [fresh, reported, failing, viaStdin] = await Promise.all([
      palace.run(['duplicate', '--content', 'Penguins huddle together to survive the Antarctic winter.', '--fail-on-duplicate']),
      palace.run(['duplicate', '--content', near]),
      palace.run(['duplicate', '--content', near, '--fail-on-duplicate', '--json']),
      palace.run(['duplicate', '--fail-on-duplicate'], { stdin: near }),
    ]);
    expect(fresh.code).toBe(0);
    expect(fresh.stdout).toBe('No duplicate.\n');

    expect(reported.code).toBe(0);
    expect(reported.stdout).toContain(`Duplicate of:\n  ${decisionId}`);

    expect(failing.code).toBe(1);
    expect(
      parseJson<{ is_duplicate: boolean; matches: Array<{ drawer_id: string }> }>(failing),
    ).toMatchObject({
      is_duplicate: true,
      matches: [{ drawer_id: decisionId }],
    });

    expect(viaStdin.code).toBe(1);
  });

  it('drawer add of a near-copy is not filed unless --force', async () => {
    const near =
      'We chose LanceDB as our embedded vector store because it runs in process and needs no separate server.';
    const refused = await palace.run(['drawer', 'add', '--wing', 'acme', '--room', 'copies', '--content', near]);
    expect(refused.code, 'a refused near-duplicate exits 1').toBe(1);
    expect(refused.stdout).toMatch(
      new RegExp(`^Not filed: near-duplicate of ${decisionId} \\(similarity 0\\.9\\d+\\); use --force`),
    );
    const forced = await addDrawer(palace, [
      '--wing',
      'acme',
      '--room',
      'copies',
      '--content',
      near,
      '--force',
    ]);
    expect(forced.filed).toBe(true);
    ok(await palace.run(['drawer', 'delete', forced.drawer_id]));
  });

  it('drawer add refuses a secret with exit 2 and files nothing', async () => {
    const before = parseJson<{ wings: Record<string, number> }>(ok(await palace.run(['wings', '--json'])));
    const result = await palace.run([
      'drawer',
      'add',
      '--wing',
      'acme',
      '--room',
      'ops',
      '--content',
      `token ${'ghp_'}${'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8'}`,
    ]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /^Error: content looks like it contains a credential \(GitHub token, line 1\)/,
    );
    expect(result.stderr).not.toContain('a1B2c3D4');
    expect(parseJson<{ wings: Record<string, number> }>(ok(await palace.run(['wings', '--json'])))).toEqual(
      before,
    );
  });

  it('drawer delete removes it; getting it afterwards exits 1 with memory.not_found', async () => {
    const added = await addDrawer(palace, [
      '--wing',
      'scratch',
      '--room',
      'tmp',
      '--content',
      'Temporary: the coffee machine on floor 3 is broken.',
    ]);
    const deleted = ok(await palace.run(['drawer', 'delete', added.drawer_id]));
    expect(deleted.stdout).toBe(`Deleted ${added.drawer_id} (1 row).\n`);
    const [gone, again] = await Promise.all([
      palace.run(['drawer', 'get', added.drawer_id, '--json']),
      palace.run(['drawer', 'delete', added.drawer_id]), // nothing left to delete: writes nothing
    ]);
    expect(gone.code).toBe(1);
    expect(parseJson<ErrorJson>(gone).error.code).toBe('memory.not_found');
    expect(again.code).toBe(1);
  });

  it('status reports drawers, wings and the embedder', async () => {
    const [jsonRun, textRun] = await Promise.all([palace.run(['status', '--json']), palace.run(['status'])]);
    const json = parseJson<{
      role: string;
      memory: { loaded: boolean; drawers: number; embedder: { model: string } };
    }>(ok(jsonRun));
    expect(json.role).toBe('local');
    expect(json.memory).toMatchObject({ loaded: true, embedder: { model: 'use-lite-en' } });
    expect(json.memory.drawers).toBeGreaterThanOrEqual(4);
    const text = ok(textRun);
    expect(text.stdout).toContain('served   directly (no hub running)');
    // Opened on its own, the palace reads its vector space from embedder.json and loads no model to report it.
    expect(text.stdout).toContain('embedder use-lite-en (512-d, model not loaded yet)');
  });
});

describe('palace duplicate when the vector index is unavailable', SLOW, () => {
  let palace: TempPalace;

  beforeEach(() => {
    palace = makeTempPalace('palace-cli-dup-');
  });

  afterEach(async () => {
    await palace.cleanup();
  });

  it('exits 2 when the palace records another embedder, even with --fail-on-duplicate', async () => {
    mkdirSync(palace.dir, { recursive: true });
    writeFileSync(
      recordPath(palace.dir),
      JSON.stringify({
        provider: 'bundled',
        model: 'all-MiniLM-L6-v2',
        dimensions: 384,
        recorded_at: '2026-01-01T00:00:00.000Z',
      }),
    );
    // The first call opens (creates) the palace alone; the next two only read it, at once.
    const plain = await palace.run(['duplicate', '--content', 'anything']);
    const [failing, search] = await Promise.all([
      palace.run(['duplicate', '--content', 'anything', '--fail-on-duplicate']),
      palace.run(['search', 'anything', '--json']),
    ]);
    for (const result of [plain, failing]) {
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toContain('the vector index is not available');
      expect(result.stderr).toContain('set-embedder');
    }
    // Other commands report the mismatch as an ordinary error.
    expect(search.code).toBe(1);
    expect(parseJson<ErrorJson>(search).error.code).toBe('memory.embedder_mismatch');
  });
});

describe('palace memory commands with a live hub', SLOW, () => {
  let palace: TempPalace;
  let hub: { url: string; pid: number };

  const mcpRequests = async (): Promise<number> => {
    const res = await fetch(`${hub.url}/statusz`);
    expect(res.status).toBe(200);
    return ((await res.json()) as { requests: { mcp: number } }).requests.mcp;
  };

  // Each test gets its own fresh palace and daemon; both are started at once, before the first test.
  const TESTS = 2;
  let fresh: Array<Promise<{ palace: TempPalace; hub: { url: string; pid: number } }>> = [];
  const used: Array<{ palace: TempPalace; hub: { url: string; pid: number } }> = [];

  const startDaemon = async (): Promise<{ palace: TempPalace; hub: { url: string; pid: number } }> => {
    const p = makeTempPalace('palace-cli-memhub-');
    const started = ok(await p.run(['daemon', 'start', '--port', '0', '--json']));
    const h = parseJson<{ url: string; pid: number }>(started);
    used.push({ palace: p, hub: h });
    return { palace: p, hub: h };
  };

  const stopDaemon = async (p: TempPalace, h: { pid: number }): Promise<void> => {
    try {
      await p.run(['daemon', 'stop']);
      // The daemon is detached from the test: make sure it is gone before its files are removed.
      const live = readLiveRegistration(p.stateDir, p.dir);
      const pid = live?.pid ?? h.pid;
      if (isPidAlive(pid)) {
        process.kill(pid, 'SIGTERM');
        await waitUntil(() => !isPidAlive(pid), 'the daemon to stop', 10_000).catch(() =>
          process.kill(pid, 'SIGKILL'),
        );
      }
    } finally {
      await p.cleanup();
    }
  };

  beforeAll(() => {
    fresh = Array.from({ length: TESTS }, () => startDaemon());
    // A failed start is reported by the test that takes it.
    for (const f of fresh) f.catch(() => undefined);
  });

  beforeEach(async () => {
    const next = fresh.shift();
    if (!next) throw new Error(`more than ${TESTS} tests: raise TESTS`);
    ({ palace, hub } = await next);
  }, SLOW.timeout);

  afterAll(async () => {
    await Promise.allSettled(fresh);
    await Promise.all(used.map(({ palace: p, hub: h }) => stopDaemon(p, h)));
  }, SLOW.timeout);

  it('goes through the hub for drawer add and search (the hub counts the MCP requests)', async () => {
    const before = await mcpRequests();
    const added = await addDrawer(palace, [
      '--wing',
      'acme',
      '--room',
      'architecture',
      '--content',
      DECISION,
    ]);
    expect(added.filed).toBe(true);
    for (const content of OTHERS)
      await addDrawer(palace, ['--wing', 'acme', '--room', 'misc', '--content', content]);
    expect(await mcpRequests()).toBe(before + 1 + OTHERS.length);

    const [jsonRun, textRun] = await Promise.all([palace.run(['search', PARAPHRASE, '--json']), palace.run(['search', PARAPHRASE])]);
    const json = parseJson<SearchJson>(ok(jsonRun));
    expect(json.results[0]).toMatchObject({ drawer_id: added.drawer_id, content: DECISION });
    // Through MCP too, a hit carries its location (none: filed by hand) and its snippet with marks.
    const [hit] = json.results as unknown as SearchHit[];
    expect(hit?.location).toBeNull();
    expect(hit?.snippet.text).toBe(DECISION);
    expect(hit?.snippet.marks.map(([a, b]) => DECISION.slice(a, b).toLowerCase())).toEqual(['vector']);
    const text = ok(textRun);
    expect(text.stdout).toMatch(new RegExp(`^\\[1\\] acme/architecture  score \\d\\.\\d{3}\\n    acme/architecture  ${added.drawer_id}  filed`));
    expect(await mcpRequests()).toBe(before + 3 + OTHERS.length);

    const status = parseJson<{ role: string; memory: { drawers: number } }>(
      ok(await palace.run(['status', '--json'])),
    );
    expect(status.role).toBe('hub');
    expect(status.memory.drawers).toBe(1 + OTHERS.length);
  });

  it('with PALACE_HUB_FORWARD=0 refuses a direct drawer add (naming the hub pid) but still searches', async () => {
    const added = await addDrawer(palace, [
      '--wing',
      'acme',
      '--room',
      'architecture',
      '--content',
      DECISION,
    ]);
    const before = await mcpRequests();
    const direct = { env: { PALACE_HUB_FORWARD: '0' } };

    // Three refused writes and a search, each its own process around the hub, at once.
    const [refused, refusedJson, append, search] = await Promise.all([
      palace.run(['drawer', 'add', '--wing', 'acme', '--room', 'misc', '--content', OTHERS[0] ?? ''], direct),
      palace.run(['rate', added.drawer_id, '--not-useful', '--json'], direct),
      // A logstream write too: one hub serializes every write.
      palace.run(
        ['logstream', 'append', '--type', 'status', '--stream', 's', '--room', 'r', '--from-agent', 'a', '--body', 'behind the hub', '--json'],
        direct,
      ),
      palace.run(['search', PARAPHRASE, '--json'], direct),
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`pid ${hub.pid}`);
    expect(refused.stderr).toContain('PALACE_HUB_FORWARD=0');
    expect(refusedJson.code).toBe(1);
    expect(parseJson<ErrorJson>(refusedJson).error.code).toBe('lease.held');
    expect(append.code).toBe(1);
    expect(parseJson<ErrorJson>(append).error.code).toBe('lease.held');

    const found = parseJson<SearchJson>(ok(search));
    expect(found.results.map((r) => r.drawer_id)).toEqual([added.drawer_id]);
    expect(await mcpRequests()).toBe(before);

    // Nothing was written around the hub.
    const [wingsRun, getRun] = await Promise.all([
      palace.run(['wings', '--json']),
      palace.run(['drawer', 'get', added.drawer_id, '--json']),
    ]);
    const wings = parseJson<{ wings: Record<string, number> }>(ok(wingsRun));
    expect(wings.wings).toEqual({ acme: 1 });
    expect(parseJson<DrawerView>(ok(getRun)).useful).toBeNull();
  });
});
