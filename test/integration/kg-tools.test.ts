// The knowledge graph through MCP on a real hub and through the CLI (in-process and via the live
// hub): add, as-of queries before and after an invalidation, atomic supersede, timeline paging.
// No embedder is loaded here: the KG lives in its own SQLite file.

import { existsSync } from 'node:fs';
import { join } from 'node:path';

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { KgFact } from '../../hub/src/kg/knowledge-graph.js';
import type { Hub } from '../../hub/src/server.js';
import { parseJson, startCli, type CliResult } from '../helpers/cli.js';
import { callJson, childEnv, connectHttpClient, makeHubDirs, resultJson, startTestHub, type HubDirs } from '../helpers/hub.js';

let dirs: HubDirs;
let hub: Hub;
let client: Client;

beforeAll(async () => {
  dirs = makeHubDirs('palace-kg-');
  hub = await startTestHub(dirs);
  client = await connectHttpClient(hub.url, { name: 'kg-test' });
});

afterAll(async () => {
  await client.close();
  await hub.close();
  dirs.cleanup();
});

type Query = { facts: Array<KgFact & { direction: string }>; count: number };

function objects(q: Query): string[] {
  return q.facts.map((f) => f.object).sort();
}

async function callError(name: string, args: Record<string, unknown>): Promise<{ code: string; field?: string }> {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError).toBe(true);
  return resultJson<{ error: { code: string; field?: string } }>(result).error;
}

function cli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return startCli(['--palace', dirs.palace, ...args], childEnv(dirs, env)).done;
}

describe('knowledge graph over MCP', () => {
  it('stores triples with entity types in <palace>/knowledge_graph.sqlite3 and answers queries by direction', async () => {
    const added = await callJson<{ triple_id: string; fact: KgFact; existing: boolean }>(client, 'palace_kg_add', {
      subject: 'Alice',
      predicate: 'works on',
      object: 'palace',
      subject_type: 'person',
      object_type: 'project',
      valid_from: '2024-01-01',
    });
    expect(added.existing).toBe(false);
    expect(added.triple_id).toMatch(/^t_[0-9a-f]{16}$/);
    expect(added.fact).toMatchObject({ subject: 'Alice', subject_type: 'person', predicate: 'works_on', object: 'palace', object_type: 'project', valid_from: '2024-01-01', valid_to: null, current: true });
    expect(existsSync(join(dirs.palace, 'knowledge_graph.sqlite3'))).toBe(true);

    const again = await callJson<{ triple_id: string; existing: boolean }>(client, 'palace_kg_add', { subject: 'alice', predicate: 'works_on', object: 'Palace' });
    expect(again).toMatchObject({ triple_id: added.triple_id, existing: true });

    await callJson(client, 'palace_kg_add', { subject: 'bob', predicate: 'mentors', object: 'alice' });
    const both = await callJson<Query>(client, 'palace_kg_query', { entity: 'ALICE' });
    expect(both.facts.map((f) => `${f.direction}:${f.subject}-${f.predicate}-${f.object}`).sort()).toEqual(['incoming:bob-mentors-Alice', 'outgoing:Alice-works_on-palace']);
    const out = await callJson<Query>(client, 'palace_kg_query', { entity: 'alice', direction: 'outgoing' });
    expect(objects(out)).toEqual(['palace']);
    const inc = await callJson<Query>(client, 'palace_kg_query', { entity: 'alice', direction: 'incoming' });
    expect(inc.facts.map((f) => f.subject)).toEqual(['bob']);
  });

  it('invalidate closes a fact without deleting it: as-of before still sees it, after does not', async () => {
    await callJson(client, 'palace_kg_add', { subject: 'carol', predicate: 'uses', object: 'vim', valid_from: '2023-01-01' });
    const closed = await callJson<{ facts: KgFact[]; ended: string }>(client, 'palace_kg_invalidate', { subject: 'carol', predicate: 'uses', object: 'vim', ended: '2023-06-30' });
    expect(closed.ended).toBe('2023-06-30');
    expect(closed.facts[0]).toMatchObject({ valid_to: '2023-06-30', current: false });

    expect(objects(await callJson<Query>(client, 'palace_kg_query', { entity: 'carol', as_of: '2023-03-15' }))).toEqual(['vim']);
    // A date-only end covers that whole day; the next day it is gone.
    expect(objects(await callJson<Query>(client, 'palace_kg_query', { entity: 'carol', as_of: '2023-06-30' }))).toEqual(['vim']);
    expect(objects(await callJson<Query>(client, 'palace_kg_query', { entity: 'carol', as_of: '2023-07-01' }))).toEqual([]);
    expect(objects(await callJson<Query>(client, 'palace_kg_query', { entity: 'carol', as_of: '2022-12-31' }))).toEqual([]);
    // Without as_of the closed fact is still there, marked not current.
    const all = await callJson<Query>(client, 'palace_kg_query', { entity: 'carol' });
    expect(all.facts).toHaveLength(1);
    expect(all.facts[0]?.current).toBe(false);

    // Nothing open is left to close.
    expect((await callError('palace_kg_invalidate', { subject: 'carol', predicate: 'uses', object: 'vim' })).code).toBe('kg.not_found');
    // An end before the start is refused and changes nothing.
    await callJson(client, 'palace_kg_add', { subject: 'carol', predicate: 'uses', object: 'emacs', valid_from: '2024-01-01' });
    expect(await callError('palace_kg_invalidate', { subject: 'carol', predicate: 'uses', object: 'emacs', ended: '2023-01-01' })).toMatchObject({ code: 'input.invalid', field: 'ended' });
    expect(objects(await callJson<Query>(client, 'palace_kg_query', { entity: 'carol', as_of: '2025-01-01' }))).toEqual(['emacs']);
  });

  it('supersede closes the old object and opens the new one at exactly one instant', async () => {
    await callJson(client, 'palace_kg_add', { subject: 'dave', predicate: 'lives_in', object: 'Paris', valid_from: '2020-01-01' });
    const r = await callJson<{ at: string; invalidated: KgFact[]; added: KgFact }>(client, 'palace_kg_supersede', {
      subject: 'dave',
      predicate: 'lives_in',
      old_object: 'Paris',
      new_object: 'Berlin',
      at: '2024-05-01T12:00:00Z',
    });
    expect(r.at).toBe('2024-05-01T12:00:00Z');
    expect(r.invalidated[0]).toMatchObject({ object: 'Paris', valid_to: '2024-05-01T12:00:00Z' });
    expect(r.added).toMatchObject({ object: 'Berlin', valid_from: '2024-05-01T12:00:00Z', valid_to: null, current: true });
    const at = (as_of: string) => callJson<Query>(client, 'palace_kg_query', { entity: 'dave', as_of }).then(objects);
    expect(await at('2024-05-01T11:59:59Z')).toEqual(['Paris']);
    expect(await at('2024-05-01T12:00:00Z')).toEqual(['Berlin']);
    expect(await at('2026-01-01')).toEqual(['Berlin']);
    // Superseding a fact that is not open changes nothing (the transaction rolls back).
    expect((await callError('palace_kg_supersede', { subject: 'dave', predicate: 'lives_in', old_object: 'Rome', new_object: 'Oslo' })).code).toBe('kg.not_found');
    expect(objects(await callJson<Query>(client, 'palace_kg_query', { entity: 'dave' }))).toEqual(['Berlin', 'Paris']);
  });

  it('timeline is chronological, pages with a cursor, honours as_of and caps a page at 100', async () => {
    for (const [year, tool] of [['2019', 'make'], ['2017', 'ant'], ['2021', 'bazel'], ['2018', 'maven']] as const)
      await callJson(client, 'palace_kg_add', { subject: 'erin', predicate: 'builds_with', object: tool, valid_from: `${year}-01-01` });
    type Page = { timeline: KgFact[]; count: number; total: number; next_cursor: string | null };
    const first = await callJson<Page>(client, 'palace_kg_timeline', { entity: 'erin', limit: 3 });
    expect(first.timeline.map((f) => f.object)).toEqual(['ant', 'maven', 'make']);
    expect(first.total).toBe(4);
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = await callJson<Page>(client, 'palace_kg_timeline', { entity: 'erin', limit: 3, cursor: first.next_cursor });
    expect(second.timeline.map((f) => f.object)).toEqual(['bazel']);
    expect(second.next_cursor).toBeNull();
    const asOf = await callJson<Page>(client, 'palace_kg_timeline', { entity: 'erin', as_of: '2018-12-31' });
    expect(asOf.timeline.map((f) => f.object)).toEqual(['ant', 'maven']);
    // More than 100 per call is refused at the schema; a forged cursor is refused by name.
    const tooMany = await client.callTool({ name: 'palace_kg_timeline', arguments: { limit: 101 } });
    expect(tooMany.isError).toBe(true);
    expect((await callError('palace_kg_timeline', { cursor: 'nonsense' })).field).toBe('cursor');

    const stats = await callJson<{ entities: number; triples: number; current_facts: number; expired_facts: number; relationship_types: Record<string, number> }>(client, 'palace_kg_stats', {});
    expect(stats.relationship_types.builds_with).toBe(4);
    expect(stats.expired_facts).toBeGreaterThanOrEqual(2);
    expect(stats.current_facts + stats.expired_facts).toBe(stats.triples);
  });

  it('bad dates and empty entities are refused by field', async () => {
    expect(await callError('palace_kg_add', { subject: 'x', predicate: 'p', object: 'y', valid_from: 'last tuesday' })).toMatchObject({ code: 'input.invalid', field: 'valid_from' });
    expect(await callError('palace_kg_add', { subject: '  ', predicate: 'p', object: 'y' })).toMatchObject({ code: 'input.invalid', field: 'subject' });
    expect(await callError('palace_kg_add', { subject: 'x', predicate: 'p', object: 'y', valid_from: '2024-02-01', valid_to: '2024-01-01' })).toMatchObject({ field: 'valid_to' });
  });
});

describe('palace kg (CLI)', () => {
  it('add, invalidate, query --as-of and timeline work through the live hub', async () => {
    const add = await cli(['kg', 'add', 'frank', 'prefers', 'tabs', '--valid-from', '2022-01-01', '--subject-type', 'person', '--json']);
    expect(add.code).toBe(0);
    expect(parseJson<{ fact: KgFact }>(add).fact).toMatchObject({ subject: 'frank', subject_type: 'person', object: 'tabs' });
    const inv = await cli(['kg', 'invalidate', 'frank', 'prefers', 'tabs', '--ended', '2023-01-01']);
    expect(inv.code).toBe(0);
    expect(inv.stdout).toContain('Closed: frank —prefers→ tabs');
    const before = parseJson<Query>(await cli(['kg', 'query', 'frank', '--as-of', '2022-06-01', '--json']));
    expect(objects(before)).toEqual(['tabs']);
    const after = parseJson<Query>(await cli(['kg', 'query', 'frank', '--as-of', '2023-06-01', '--json']));
    expect(objects(after)).toEqual([]);
    // The hub served these: the fact is visible over MCP too.
    expect(objects(await callJson<Query>(client, 'palace_kg_query', { entity: 'frank' }))).toEqual(['tabs']);

    const sup = await cli(['kg', 'supersede', 'frank', 'uses', 'vim', 'helix']);
    expect(sup.code).toBe(1);
    expect(sup.stderr).toMatch(/no open fact/);

    const timeline = parseJson<{ timeline: KgFact[]; count: number }>(await cli(['kg', 'timeline', 'erin', '--limit', '2', '--all', '--json']));
    expect(timeline.timeline.map((f) => f.object)).toEqual(['ant', 'maven', 'make', 'bazel']);
    const tooBig = await cli(['kg', 'timeline', '--limit', '500']);
    expect(tooBig.code).toBe(2);
    const badDate = await cli(['kg', 'add', 'a', 'b', 'c', '--valid-from', 'soon']);
    expect(badDate.code).toBe(2);
  });

  it('works without a hub (in-process) on the same file', async () => {
    const solo = makeHubDirs('palace-kg-solo-');
    try {
      const run = (args: string[]) => startCli(['--palace', solo.palace, ...args], childEnv(solo)).done;
      expect((await run(['kg', 'add', 'gina', 'owns', 'repo-x'])).code).toBe(0);
      const q = parseJson<Query>(await run(['kg', 'query', 'gina', '--json']));
      expect(objects(q)).toEqual(['repo-x']);
      expect(existsSync(join(solo.palace, 'knowledge_graph.sqlite3'))).toBe(true);
    } finally {
      solo.cleanup();
    }
  });
});
