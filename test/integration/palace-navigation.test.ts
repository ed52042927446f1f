// Diaries, wake-up, rooms/taxonomy/tunnels and the fast daemon endpoints on one real hub (one
// embedder load), through MCP, raw HTTP and the CLI, including the refusal paths.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { DiaryEntry } from '../../hub/src/memory/drawers/diary.js';
import type { Hub } from '../../hub/src/server.js';
import { parseJson, startCli, type CliResult } from '../helpers/cli.js';
import { callJson, childEnv, connectHttpClient, makeHubDirs, rawRequest, resultJson, startTestHub, type HubDirs } from '../helpers/hub.js';

let dirs: HubDirs;
let hub: Hub;
let client: Client;
const ids: Record<string, string> = {};

function cli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return startCli(['--palace', dirs.palace, ...args], childEnv(dirs, env)).done;
}

async function file(wing: string, room: string, content: string, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await callJson<{ drawer_id: string; filed: boolean }>(client, 'palace_add_drawer', { wing, room, content, force: true, ...extra }, 60_000);
  expect(r.filed).toBe(true);
  return r.drawer_id;
}

function patch(id: string, body: string, headers: Record<string, string> = { 'content-type': 'application/json' }) {
  return rawRequest(hub.url, { method: 'PATCH', path: `/memory/${id}`, headers, body });
}

beforeAll(async () => {
  dirs = makeHubDirs('palace-nav-');
  writeFileSync(join(dirs.palaceHome, 'identity.txt'), 'I am box-claude, a careful coding agent for the palace project.\n');
  hub = await startTestHub(dirs, { env: { PALACE_AGENT_NAME: 'hub-default-agent' } });
  client = await connectHttpClient(hub.url, { name: 'nav-test' });
  ids.decision = await file('palace', 'decisions', 'We chose SQLite in WAL mode for the coordination log because it survives crashes.');
  ids.arch = await file('palace', 'architecture', 'The hub is the single writer; stdio proxies forward every call to it.');
  ids.other = await file('website', 'decisions', 'The website is built with a static site generator and deployed nightly.');
  ids.trivia = await file('palace', 'trivia', 'The mascot of the project is a small owl drawn in pencil.');
}, 120_000);

afterAll(async () => {
  await client.close();
  await hub.close();
  dirs.cleanup();
});

describe('diaries', () => {
  it('writes entries as drawers in the agent wing (room diary, type diary_entry) that search finds', async () => {
    const w = await callJson<{ entry_id: string; wing: string; agent: string }>(client, 'palace_diary_write', {
      agent_name: 'box-claude',
      entry: 'Fixed the flaky watcher test by waiting for the WAL file before appending.',
      topic: 'testing',
    });
    expect(w).toMatchObject({ agent: 'box-claude', wing: 'box-claude' });
    const drawer = await callJson<{ wing: string; room: string; metadata: Record<string, unknown> }>(client, 'palace_get_drawer', { drawer_id: w.entry_id });
    expect(drawer).toMatchObject({ wing: 'box-claude', room: 'diary', metadata: { type: 'diary_entry', agent: 'box-claude', topic: 'testing' } });
    const found = await callJson<{ results: Array<{ drawer_id: string }> }>(client, 'palace_search', { query: 'flaky watcher test WAL file', wing: 'box-claude' });
    expect(found.results.map((r) => r.drawer_id)).toContain(w.entry_id);

    await callJson(client, 'palace_diary_write', { agent_name: 'box-claude', entry: 'Reviewed the sync patch from laptop-codex; asked for a test.' });
    const read = await callJson<{ entries: DiaryEntry[]; total: number }>(client, 'palace_diary_read', { agent_name: 'box-claude' });
    expect(read.total).toBe(2);
    expect(read.entries.map((e) => e.content).sort()).toEqual([
      'Fixed the flaky watcher test by waiting for the WAL file before appending.',
      'Reviewed the sync patch from laptop-codex; asked for a test.',
    ]);
    const one = await callJson<{ entries: DiaryEntry[] }>(client, 'palace_diary_read', { agent_name: 'box-claude', last_n: 1 });
    expect(one.entries).toHaveLength(1);
    // Without agent_name the hub's PALACE_AGENT_NAME is used.
    const dflt = await callJson<{ agent: string; wing: string }>(client, 'palace_diary_write', { entry: 'Default agent entry.' });
    expect(dflt).toMatchObject({ agent: 'hub-default-agent', wing: 'hub-default-agent' });
  });

  it('CLI diary write|read take the agent from --agent or PALACE_AGENT_NAME, and refuse without one', async () => {
    const w = await cli(['diary', 'write', '--agent', 'laptop-codex', '--entry', 'Started on the export command.', '--json']);
    expect(w.code).toBe(0);
    expect(parseJson<{ wing: string }>(w).wing).toBe('laptop-codex');
    // The entry may be given positionally; given two ways it is refused and nothing is written.
    expect((await cli(['diary', 'write', '--agent', 'laptop-codex', 'Export command: CSV first, then JSON.', '--json'])).code).toBe(0);
    const twice = await cli(['diary', 'write', '--agent', 'laptop-codex', 'one', '--entry', 'two']);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain('not the entry text and --entry');
    const r = await cli(['diary', 'read', '--json'], { PALACE_AGENT_NAME: 'laptop-codex' });
    expect(r.code).toBe(0);
    expect(parseJson<{ entries: DiaryEntry[] }>(r).entries.map((e) => e.content)).toEqual(['Export command: CSV first, then JSON.', 'Started on the export command.']);
    const none = await cli(['diary', 'read']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/--agent/);
  });
});

describe('wake-up', () => {
  it('returns identity and the most important drawers grouped by room, bounded in size', async () => {
    const vital = await file('palace', 'decisions', 'Never store tokens in the palace: secrets are refused at filing time.');
    await callJson(client, 'palace_rate_memory', { drawer_id: vital, useful: true });
    await callJson(client, 'palace_rate_memory', { drawer_id: ids.trivia, useful: false });
    const w = await callJson<{ text: string; l0: string; l1: string; identity_configured: boolean; drawers_shown: number; chars: number }>(client, 'palace_wakeup', { wing: 'palace' });
    expect(w.identity_configured).toBe(true);
    expect(w.l0).toContain('I am box-claude');
    expect(w.l1).toContain('[palace/decisions]');
    expect(w.l1).not.toContain('website');
    // Rated useful ranks first; rated not useful ranks last.
    const lines = w.l1.split('\n').filter((l) => l.startsWith('- '));
    expect(lines[0]).toContain(vital);
    expect(lines.at(-1)).toContain(ids.trivia);
    expect(w.l1.length).toBeLessThanOrEqual(3_200);
    expect(w.text.length).toBe(w.chars);

    const viaCli = await cli(['wake-up', '--wing', 'website']);
    expect(viaCli.code).toBe(0);
    expect(viaCli.stdout).toContain('## L0 — IDENTITY');
    expect(viaCli.stdout).toContain('static site generator');
    expect(viaCli.stdout).not.toContain('WAL mode');
  });
});

describe('daemon endpoints', () => {
  it('GET /list pages drawer metadata with previews; bad arguments are 400', async () => {
    const all = await fetch(`${hub.url}/list?wing=palace&limit=2&offset=0`).then((r) => r.json() as Promise<{ drawers: Array<{ drawer_id: string; wing: string; preview: string }>; total: number }>);
    expect(all.drawers).toHaveLength(2);
    expect(all.total).toBeGreaterThanOrEqual(4);
    expect(all.drawers.every((d) => d.wing === 'palace')).toBe(true);
    const next = await fetch(`${hub.url}/list?wing=palace&limit=2&offset=2`).then((r) => r.json() as Promise<{ drawers: Array<{ drawer_id: string }> }>);
    expect(next.drawers.map((d) => d.drawer_id)).not.toContain(all.drawers[0]?.drawer_id);
    expect((await fetch(`${hub.url}/list?limit=zero`)).status).toBe(400);
  });

  it('PATCH /memory/{id} moves wing/room only; empty, unknown-key and non-JSON bodies are 400 and change nothing', async () => {
    for (const body of ['', '{}', '{"content":"rewritten"}', '{"wing":"palace","content":"x"}', '[1]', 'not json']) {
      const res = await patch(ids.arch as string, body);
      expect(res.status, body).toBe(400);
      expect(JSON.parse(res.body).error.code).toBe('input.invalid');
    }
    const before = await callJson<{ wing: string; room: string; content: string }>(client, 'palace_get_drawer', { drawer_id: ids.arch });
    expect(before).toMatchObject({ wing: 'palace', room: 'architecture' });
    const moved = await patch(ids.arch as string, JSON.stringify({ room: 'design' }));
    expect(moved.status).toBe(200);
    expect(JSON.parse(moved.body)).toMatchObject({ drawer_id: ids.arch, wing: 'palace', room: 'design' });
    const after = await callJson<{ room: string; content: string }>(client, 'palace_get_drawer', { drawer_id: ids.arch });
    expect(after).toMatchObject({ room: 'design', content: before.content });
    expect((await patch('drawer_000000000000000000000000', '{"room":"x"}')).status).toBe(404);
  });

  it('GET /graph, /stats and /status/fast answer their shapes; every one needs the token when set', async () => {
    await callJson(client, 'palace_kg_add', { subject: 'palace', predicate: 'uses', object: 'sqlite' });
    type Graph = {
      counts: Record<string, number>;
      tunnels: Array<{ room: string; wings: string[] }>;
      kg: { stats: { triples: number }; top_entities: Array<{ entity: string }>; sample_triples: Array<Record<string, unknown>> };
    };
    const graph = await fetch(`${hub.url}/graph?limit=5`).then((r) => r.json() as Promise<Graph>);
    expect(graph.counts).toMatchObject({ wings: expect.any(Number), tunnels: 1 });
    expect(graph.tunnels[0]).toMatchObject({ room: 'decisions', wings: ['palace', 'website'] });
    expect(graph.kg.stats.triples).toBe(1);
    expect(graph.kg.top_entities.map((e) => e.entity)).toContain('palace');
    expect(graph.kg.sample_triples[0]).toMatchObject({ subject: 'palace', object: 'sqlite' });
    const stats = await fetch(`${hub.url}/stats`).then((r) => r.json() as Promise<{ status: { version: string } }>);
    expect(Object.keys(stats).sort()).toEqual(['graph', 'kg', 'status']);
    expect(stats.status.version).toBe(hub.services.version);
    const fast = await fetch(`${hub.url}/status/fast`).then((r) => r.json() as Promise<{ memory_loaded: boolean; wings: Record<string, number>; total_drawers: number }>);
    expect(fast.memory_loaded).toBe(true);
    expect(fast.wings.website).toBe(1);
    expect(fast.total_drawers).toBe(Object.values(fast.wings).reduce((a, b) => a + b, 0));
    expect((await fetch(`${hub.url}/list`, { method: 'POST' })).status).toBe(405);
  });
});

describe('CLI list, move, graph, stats against the live hub', () => {
  it('take the same road as every other command: one MCP request each, no REST route (issue 33)', async () => {
    const commands = [
      ['list', '--wing', 'palace', '--json'],
      ['move', ids.trivia as string, '--room', 'trivia', '--json'],
      ['graph', '--json'],
      ['stats', '--section', 'status', '--json'],
    ];
    for (const args of commands) {
      const before = { total: hub.services.stats.total, mcp: hub.services.stats.mcpRequests };
      const r = await cli(args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      // Every request this command made was a POST /mcp (the old road was GET /list, PATCH /memory/:id, GET /graph, GET /stats).
      expect({ total: hub.services.stats.total - before.total, mcp: hub.services.stats.mcpRequests - before.mcp }, args[0]).toEqual({ total: 1, mcp: 1 });
    }
  });

  it('list and move go through the tools; an unusable move exits 2, an unknown drawer 1', async () => {
    const list = await cli(['list', '--wing', 'website', '--json']);
    expect(list.code).toBe(0);
    expect(parseJson<{ drawers: Array<{ drawer_id: string }> }>(list).drawers.map((d) => d.drawer_id)).toEqual([ids.other]);
    const move = await cli(['move', ids.other as string, '--wing', 'web', '--json']);
    expect(move.code).toBe(0);
    expect(parseJson(move)).toMatchObject({ drawer_id: ids.other, wing: 'web', room: 'decisions' });
    expect((await cli(['move', ids.other as string])).code).toBe(2);
    expect((await cli(['move', 'not-a-drawer', '--room', 'x'])).code).toBe(2);
    expect((await cli(['move', 'drawer_000000000000000000000000', '--room', 'x'])).code).toBe(1);
    expect((await cli(['list', '--limit', 'many'])).code).toBe(2);
  });

  it('graph and stats (--section, --tags) print the hub blocks; a bad section exits 2', async () => {
    const graph = parseJson<{ counts: { tunnels: number } }>(await cli(['graph', '--json']));
    expect(graph.counts.tunnels).toBe(1);
    const kg = parseJson<Record<string, unknown>>(await cli(['stats', '--section', 'kg', '--tags', '--json']));
    expect(Object.keys(kg).sort()).toEqual(['kg', 'tags']);
    expect((await cli(['stats', '--section', 'nope'])).code).toBe(2);
  });

  it('a wrong token is exit 1 (401) for the daemon commands', async () => {
    const secured = makeHubDirs('palace-nav-auth-');
    const locked = await startTestHub(secured, { token: 'a'.repeat(64) });
    try {
      const r = await startCli(['--palace', secured.palace, 'list'], childEnv(secured, { PALACE_MCP_HTTP_TOKEN: 'b'.repeat(64) })).done;
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/401/);
      expect((await fetch(`${locked.url}/status/fast`)).status).toBe(401);
    } finally {
      await locked.close();
      secured.cleanup();
    }
  });
});

describe('taxonomy, rooms and tunnels tools', () => {
  it('taxonomy shows declared empty rooms; rename moves drawers; remove refuses a room with drawers', async () => {
    const added = await callJson<{ created: boolean }>(client, 'palace_rooms_add', { wing: 'palace', room: 'roadmap' });
    expect(added.created).toBe(true);
    const tax = await callJson<{ taxonomy: Record<string, Record<string, number>> }>(client, 'palace_get_taxonomy', {});
    expect(tax.taxonomy.palace?.roadmap).toBe(0);
    const renamed = await callJson<{ moved_drawers: number }>(client, 'palace_rooms_rename', { wing: 'palace', room: 'trivia', new_room: 'lore' });
    expect(renamed.moved_drawers).toBe(1);
    expect(await callJson(client, 'palace_get_drawer', { drawer_id: ids.trivia })).toMatchObject({ room: 'lore' });
    const refused = await client.callTool({ name: 'palace_rooms_remove', arguments: { wing: 'palace', room: 'lore' } });
    expect(refused.isError).toBe(true);
    expect(resultJson<{ error: { code: string } }>(refused).error.code).toBe('input.invalid');
    expect(await callJson(client, 'palace_rooms_remove', { wing: 'palace', room: 'roadmap' })).toMatchObject({ removed: true });
    const rooms = await callJson<{ rooms: Array<{ room: string }> }>(client, 'palace_rooms_list', { wing: 'palace' });
    expect(rooms.rooms.map((r) => r.room)).not.toContain('roadmap');
    await file('web', 'architecture', 'The website has no server; pages are static files on a CDN.');
    const tunnels = await callJson<{ tunnels: Array<{ room: string; wings: string[] }> }>(client, 'palace_list_tunnels', { wing: 'web' });
    expect(tunnels.tunnels.map((t) => t.room).sort()).toEqual(['decisions']);
  });
});
