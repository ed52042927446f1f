// Navigation on one real hub (bundled embedder, one load): explicit and inferred tunnels, hallways
// (delete refused without --confirm off a terminal, remembered once deleted), traverse and walk,
// wing overlap, why a drawer sits where it does, the AAAK spec and compress; through MCP and the CLI.

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Hallway } from '../../hub/src/memory/navigation/hallways.js';
import type { WalkNode } from '../../hub/src/memory/navigation/palace-walk.js';
import type { ExplicitTunnel, Tunnel } from '../../hub/src/memory/navigation/tunnels.js';
import type { Hub } from '../../hub/src/server.js';
import { PALACE_BIN, parseJson, startCli, type CliResult } from '../helpers/cli.js';
import { callJson, childEnv, connectHttpClient, makeHubDirs, resultJson, startTestHub, type HubDirs } from '../helpers/hub.js';

let dirs: HubDirs;
let hub: Hub;
let client: Client;
const ids: Record<string, string> = {};
let project: string;

const STORE_TEXT = 'The Logstream keeps every event in SQLite. We decided that Alice owns the Logstream schema and its WAL settings.\n';

function cli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return startCli(['--palace', dirs.palace, ...args], childEnv(dirs, env)).done;
}

async function file(wing: string, room: string, content: string, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await callJson<{ drawer_id: string; filed: boolean }>(client, 'palace_add_drawer', { wing, room, content, force: true, added_by: 'box-claude', ...extra }, 60_000);
  expect(r.filed).toBe(true);
  return r.drawer_id;
}

/** The error envelope of a refused tool call. */
async function refused(name: string, args: Record<string, unknown>): Promise<{ code: string; field?: string; message: string }> {
  const r = await client.callTool({ name, arguments: args });
  expect(r.isError, `${name} should be refused`).toBe(true);
  return resultJson<{ error: { code: string; field?: string; message: string } }>(r).error;
}

async function minedId(wing: string, room: string): Promise<string> {
  const list = await callJson<{ drawers: Array<{ drawer_id: string; room: string }> }>(client, 'palace_list_drawers', { wing, room });
  const id = list.drawers[0]?.drawer_id;
  expect(id).toBeDefined();
  return id as string;
}

function child(node: WalkNode | undefined, wing: string, room: string): WalkNode | undefined {
  return node?.children.find((c) => c.wing === wing && c.room === room);
}

beforeAll(async () => {
  dirs = makeHubDirs('palace-nav-more-');
  project = join(dirs.root, 'atlas');
  for (const sub of ['src', 'docs', 'ops']) mkdirSync(join(project, sub), { recursive: true });
  writeFileSync(join(project, 'src', 'store.md'), STORE_TEXT);
  writeFileSync(join(project, 'docs', 'durability.md'), 'Durability notes: the Logstream relies on SQLite fsync, and the WAL file is checkpointed by Alice.\n');
  writeFileSync(join(project, 'ops', 'deploy.md'), 'Deploy with Docker Compose to the staging host every night after the backups finish.\n');
  writeFileSync(join(project, 'README.md'), 'Atlas is a small project used to exercise the palace navigation tools end to end.\n');
  hub = await startTestHub(dirs);
  client = await connectHttpClient(hub.url, { name: 'nav-more-test' });
  const mined = await callJson<{ drawers_filed: number; wing: string }>(client, 'palace_mine', { source: project }, 120_000);
  expect(mined).toMatchObject({ wing: 'atlas', drawers_filed: 4 });
  ids.webDocs = await file('website', 'docs', 'The website docs explain how the Logstream stores events in SQLite for every agent.');
  ids.webBlog = await file('website', 'blog', 'A blog post about the Logstream: why SQLite was the right store for the coordination log.');
  ids.webCopy = await file('website', 'blog', STORE_TEXT);
  ids.release = await file('mobile', 'release', 'The mobile release train ships on Thursdays through the same deploy pipeline.');
}, 180_000);

afterAll(async () => {
  await client.close();
  await hub.close();
  dirs.cleanup();
});

describe('tool list', () => {
  it('serves every navigation tool; a read-only hub hides the mutating ones and keeps the readers', async () => {
    const readers = ['palace_list_tunnels', 'palace_list_hallways', 'palace_traverse', 'palace_walk_palace', 'palace_wing_overlap', 'palace_why', 'palace_get_aaak_spec'];
    const writers = ['palace_create_tunnel', 'palace_delete_tunnel', 'palace_delete_hallway', 'palace_compress'];
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining([...readers, ...writers]));
    const roDirs = makeHubDirs('palace-nav-ro-');
    const ro = await startTestHub(roDirs, { readOnly: true });
    const roClient = await connectHttpClient(ro.url, { name: 'nav-read-only' });
    try {
      const roNames = (await roClient.listTools()).tools.map((t) => t.name);
      expect(roNames).toEqual(expect.arrayContaining(readers));
      for (const w of writers) expect(roNames).not.toContain(w);
      expect((await callJson<{ aaak_spec: string }>(roClient, 'palace_get_aaak_spec', {})).aaak_spec).toContain('AAAK');
    } finally {
      await roClient.close();
      await ro.close();
      roDirs.cleanup();
    }
  });
});

describe('tunnels: explicit and inferred', () => {
  it('palace_list_tunnels marks each tunnel; create is idempotent by endpoint pair; bad input names the field', async () => {
    const before = await callJson<{ tunnels: Tunnel[]; explicit: number; inferred: number }>(client, 'palace_list_tunnels', {});
    expect(before.explicit).toBe(0);
    expect(before.tunnels).toEqual([expect.objectContaining({ kind: 'inferred', room: 'docs', wings: ['atlas', 'website'] })]);

    const made = await callJson<{ created: boolean; tunnel: ExplicitTunnel }>(client, 'palace_create_tunnel', {
      source_wing: 'atlas',
      source_room: 'ops',
      target_wing: 'mobile',
      target_room: 'release',
      label: 'shared deploy pipeline',
    });
    expect(made.created).toBe(true);
    expect(made.tunnel).toMatchObject({ kind: 'explicit', source: { wing: 'atlas', room: 'ops' }, target: { wing: 'mobile', room: 'release' }, label: 'shared deploy pipeline' });
    ids.tunnel = made.tunnel.tunnel_id;
    // The same pair named the other way round is the same tunnel.
    const again = await callJson<{ created: boolean; tunnel: ExplicitTunnel }>(client, 'palace_create_tunnel', {
      source_wing: 'mobile',
      source_room: 'release',
      target_wing: 'atlas',
      target_room: 'ops',
    });
    expect(again).toMatchObject({ created: false, tunnel: { tunnel_id: ids.tunnel, label: 'shared deploy pipeline' } });
    const stored = JSON.parse(readFileSync(join(dirs.palace, 'tunnels.json'), 'utf8')) as { tunnels: ExplicitTunnel[] };
    expect(stored.tunnels.map((t) => t.tunnel_id)).toEqual([ids.tunnel]);

    expect(await refused('palace_create_tunnel', { source_wing: 'atlas', source_room: 'src', target_wing: 'atlas', target_room: 'docs' })).toMatchObject({
      code: 'input.invalid',
      field: 'target_wing',
    });
    expect(await refused('palace_create_tunnel', { source_wing: 'atlas', source_room: 'nowhere', target_wing: 'mobile', target_room: 'release' })).toMatchObject({
      code: 'memory.not_found',
      field: 'source_room',
    });
    expect(await refused('palace_list_tunnels', { kind: 'secret' })).toMatchObject({ code: 'input.invalid', field: 'kind' });
    const explicit = await callJson<{ tunnels: Tunnel[] }>(client, 'palace_list_tunnels', { kind: 'explicit', wing: 'mobile' });
    expect(explicit.tunnels.map((t) => t.tunnel_id)).toEqual([ids.tunnel]);
  });

  it('CLI tunnels shows explicit and inferred, --passive only inferred; add and delete round-trip', async () => {
    const all = await cli(['tunnels', '--json']);
    expect(all.code).toBe(0);
    expect(parseJson<{ tunnels: Tunnel[] }>(all).tunnels.map((t) => t.kind)).toEqual(['explicit', 'inferred']);
    const passive = await cli(['tunnels', '--passive', '--json']);
    expect(parseJson<{ tunnels: Tunnel[] }>(passive).tunnels).toEqual([expect.objectContaining({ kind: 'inferred', room: 'docs' })]);
    const text = await cli(['tunnels']);
    expect(text.stdout).toContain('atlas/ops ↔ mobile/release');
    expect(text.stdout).toContain('docs: atlas ↔ website');
    expect((await cli(['tunnels', '--passive'])).stdout).not.toContain('mobile/release');

    const added = await cli(['tunnels', 'add', 'website/blog', 'mobile/release', '--label', 'launch posts', '--json']);
    expect(added.code).toBe(0);
    const blogTunnel = parseJson<{ created: boolean; tunnel: ExplicitTunnel }>(added);
    expect(blogTunnel.created).toBe(true);
    expect((await cli(['tunnels', 'add', 'website', 'mobile/release'])).code).toBe(2);
    const del = await cli(['tunnels', 'delete', blogTunnel.tunnel.tunnel_id, '--json']);
    expect(del.code).toBe(0);
    expect(parseJson(del)).toMatchObject({ deleted: true, tunnel_id: blogTunnel.tunnel.tunnel_id });
    const gone = await cli(['tunnels', 'delete', blogTunnel.tunnel.tunnel_id]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/no explicit tunnel/);
    const inferredId = parseJson<{ tunnels: Tunnel[] }>(passive).tunnels[0]?.tunnel_id as string;
    expect((await cli(['tunnels', 'delete', inferredId])).code).toBe(1);
    expect((await cli(['tunnels', 'delete', 'tunnel_nothex'])).code).toBe(2);
    const left = await callJson<{ tunnels: Tunnel[] }>(client, 'palace_list_tunnels', { kind: 'explicit' });
    expect(left.tunnels.map((t) => t.tunnel_id)).toEqual([ids.tunnel]);
  });
});

describe('walk and traverse', () => {
  it('palace_walk_palace follows hallways and tunnels within the depth; follow tunnels skips hallways', async () => {
    type Walk = { roots: WalkNode[]; rooms_reached: number };
    const d1 = await callJson<Walk>(client, 'palace_walk_palace', { wing: 'atlas', room: 'src', follow: 'palace', depth: 1 });
    expect(d1.roots).toHaveLength(1);
    const docs1 = child(d1.roots[0], 'atlas', 'docs');
    expect(docs1?.via).toMatchObject({ kind: 'hallway' });
    expect(docs1?.via?.label).toContain('Logstream');
    expect(docs1?.children).toEqual([]);
    expect(d1.rooms_reached).toBe(1);

    const d2 = await callJson<Walk>(client, 'palace_walk_palace', { wing: 'atlas', room: 'src', follow: 'palace', depth: 2 });
    const web = child(child(d2.roots[0], 'atlas', 'docs'), 'website', 'docs');
    expect(web?.via).toMatchObject({ kind: 'inferred_tunnel', label: 'docs' });

    const d0 = await callJson<Walk>(client, 'palace_walk_palace', { wing: 'atlas', room: 'src', depth: 0 });
    expect(d0.roots[0]?.children).toEqual([]);

    const tunnelsOnly = await callJson<Walk>(client, 'palace_walk_palace', { wing: 'atlas', room: 'src', follow: 'tunnels', depth: 3 });
    expect(tunnelsOnly.roots[0]?.children).toEqual([]);
    const fromOps = await callJson<Walk>(client, 'palace_walk_palace', { wing: 'atlas', room: 'ops', follow: 'tunnels', depth: 2 });
    expect(child(fromOps.roots[0], 'mobile', 'release')?.via).toMatchObject({ kind: 'tunnel', id: ids.tunnel, label: 'shared deploy pipeline' });

    expect(await refused('palace_walk_palace', { wing: 'atlas', room: 'src', follow: 'sideways' })).toMatchObject({ code: 'input.invalid', field: 'follow' });
    expect(await refused('palace_walk_palace', { wing: 'atlas', room: 'src', depth: 9 })).toMatchObject({ code: 'input.invalid', field: 'depth' });
    expect(await refused('palace_walk_palace', {})).toMatchObject({ code: 'input.invalid', field: 'room' });
    expect(await refused('palace_walk_palace', { wing: 'atlas', room: 'attic' })).toMatchObject({ code: 'memory.not_found' });
  });

  it('palace_traverse lists reachable rooms with hop and connected_via, bounded by max_hops', async () => {
    type Trav = { rooms: Array<{ wing: string; room: string; hop: number; connected_via: { kind: string; from: string } }> };
    const one = await callJson<Trav>(client, 'palace_traverse', { start_room: 'src', max_hops: 1 });
    expect(one.rooms).toEqual([expect.objectContaining({ wing: 'atlas', room: 'docs', hop: 1, connected_via: expect.objectContaining({ kind: 'hallway', from: 'atlas/src' }) })]);
    const two = await callJson<Trav>(client, 'palace_traverse', { start_room: 'src' });
    expect(two.rooms).toContainEqual(
      expect.objectContaining({ wing: 'website', room: 'docs', hop: 2, connected_via: expect.objectContaining({ kind: 'inferred_tunnel', from: 'atlas/docs' }) }),
    );
    expect(two.rooms.every((r) => r.hop <= 2)).toBe(true);
    expect(await refused('palace_traverse', { start_room: 'attic' })).toMatchObject({ code: 'memory.not_found', field: 'start_room' });
    expect(await refused('palace_traverse', { start_room: 'src', max_hops: 0 })).toMatchObject({ code: 'input.invalid', field: 'max_hops' });
  });

  it('CLI walk prints a tree limited by --depth; bad --follow or no start exits 2', async () => {
    const d1 = await cli(['walk', '--wing', 'atlas', '--room', 'src', '--follow', 'palace', '--depth', '1']);
    expect(d1.code).toBe(0);
    expect(d1.stdout).toMatch(/^atlas\/src \(1\)\n└─ atlas\/docs \(1\) {2}via hallway: /);
    expect(d1.stdout).not.toContain('website/docs');
    const d2 = await cli(['walk', '--wing', 'atlas', '--room', 'src', '--depth', '2']);
    expect(d2.stdout).toContain('   └─ website/docs (1)  via inferred tunnel: docs');
    const tunnels = await cli(['walk', '--wing', 'atlas', '--room', 'ops', '--follow', 'tunnels', '--json']);
    expect(parseJson<{ roots: WalkNode[] }>(tunnels).roots[0]?.children.map((c) => `${c.wing}/${c.room}`)).toEqual(['mobile/release']);
    expect((await cli(['walk', '--wing', 'atlas', '--follow', 'sideways'])).code).toBe(2);
    expect((await cli(['walk'])).code).toBe(2);
  });
});

describe('hallways', () => {
  it('palace_list_hallways joins rooms of one wing that share entities, paged, with label and strength', async () => {
    type List = { hallways: Hallway[]; total: number; count: number; offset: number; limit: number };
    const atlas = await callJson<List>(client, 'palace_list_hallways', { wing: 'atlas' });
    expect(atlas).toMatchObject({ total: 1, count: 1, offset: 0, limit: 100 });
    const h = atlas.hallways[0] as Hallway;
    expect(h).toMatchObject({ wing: 'atlas', rooms: ['docs', 'src'] });
    expect(h.shared).toEqual(expect.arrayContaining(['Logstream', 'SQLite', 'WAL']));
    expect(h.strength).toBeGreaterThanOrEqual(2);
    ids.atlasHallway = h.hallway_id;
    const all = await callJson<List>(client, 'palace_list_hallways', {});
    expect(all.hallways.map((x) => `${x.wing}:${x.rooms.join('+')}`).sort()).toEqual(['atlas:docs+src', 'website:blog+docs']);
    const page = await callJson<List>(client, 'palace_list_hallways', { limit: 1, offset: 1 });
    expect(page).toMatchObject({ total: 2, count: 1, offset: 1, limit: 1 });
    expect(await refused('palace_list_hallways', { limit: 501 })).toMatchObject({ code: 'input.invalid', field: 'limit' });
    // The same rooms, the same id: derived deterministically, not stored.
    expect((await callJson<List>(client, 'palace_list_hallways', { wing: 'atlas' })).hallways[0]?.hallway_id).toBe(ids.atlasHallway);
  });

  it('CLI hallways and hallway list show them; delete without a terminal and without --confirm exits 2 and keeps it', async () => {
    const listed = await cli(['hallways', '--wing', 'atlas', '--json']);
    expect(listed.code).toBe(0);
    expect(parseJson<{ hallways: Hallway[] }>(listed).hallways.map((h) => h.hallway_id)).toEqual([ids.atlasHallway]);
    const text = await cli(['hallway', 'list', '--limit', '10']);
    expect(text.stdout).toContain(`${ids.atlasHallway}  atlas: docs ↔ src`);

    const refusedDelete = await cli(['hallway', 'delete', ids.atlasHallway as string]);
    expect(refusedDelete.code).toBe(2);
    expect(refusedDelete.stderr).toMatch(/--confirm/);
    const still = await callJson<{ hallways: Hallway[] }>(client, 'palace_list_hallways', { wing: 'atlas' });
    expect(still.hallways.map((h) => h.hallway_id)).toEqual([ids.atlasHallway]);
    expect(existsSync(join(dirs.palace, 'hallways.json'))).toBe(false);
  });

  // util-linux `script` gives the CLI a real terminal (a pty) for stdin, as a person at a shell has.
  it.skipIf(!existsSync('/usr/bin/script'))('at a terminal, hallway delete without --confirm asks y/N; no keeps it', async () => {
    const command = [process.execPath, PALACE_BIN, '--palace', dirs.palace, 'hallway', 'delete', ids.atlasHallway as string].join(' ');
    const tty = spawn('/usr/bin/script', ['-qec', command, '/dev/null'], { env: childEnv(dirs), stdio: ['pipe', 'pipe', 'pipe'] });
    let output = '';
    tty.stdout.on('data', (b: Buffer) => (output += b.toString('utf8')));
    tty.stdin.end('n\n');
    const code = await new Promise<number | null>((resolve) => tty.on('close', resolve));
    expect(code).toBe(0);
    expect(output).toContain('Delete hallway atlas: docs ↔ src');
    expect(output).toContain('[y/N]');
    expect(output).toContain('Not deleted.');
    const still = await callJson<{ hallways: Hallway[] }>(client, 'palace_list_hallways', { wing: 'atlas' });
    expect(still.hallways.map((h) => h.hallway_id)).toEqual([ids.atlasHallway]);
  });

  it('hallway delete --confirm removes it for good: not inferred again, even when its rooms share more', async () => {
    const del = await cli(['hallway', 'delete', ids.atlasHallway as string, '--confirm', '--json']);
    expect(del.code).toBe(0);
    expect(parseJson(del)).toMatchObject({ deleted: true, hallway_id: ids.atlasHallway });
    await file('atlas', 'docs', 'More about the Logstream: SQLite checkpoints, WAL growth and what Alice measured.');
    const after = await callJson<{ hallways: Hallway[] }>(client, 'palace_list_hallways', { wing: 'atlas', min_count: 1 });
    expect(after.hallways.map((h) => h.hallway_id)).not.toContain(ids.atlasHallway);
    expect((await cli(['hallways', '--wing', 'atlas'])).stdout).toContain('No hallways.');
    expect((await cli(['hallway', 'delete', ids.atlasHallway as string, '--confirm'])).code).toBe(1);
    expect((await cli(['hallway', 'delete', 'hallway_x', '--confirm'])).code).toBe(2);

    // The MCP tool deletes the other one.
    const web = (await callJson<{ hallways: Hallway[] }>(client, 'palace_list_hallways', { wing: 'website' })).hallways[0] as Hallway;
    expect(await callJson(client, 'palace_delete_hallway', { hallway_id: web.hallway_id })).toMatchObject({ deleted: true });
    expect(await refused('palace_delete_hallway', { hallway_id: web.hallway_id })).toMatchObject({ code: 'memory.not_found', field: 'hallway_id' });
    expect((await callJson<{ total: number }>(client, 'palace_list_hallways', {})).total).toBe(0);
  });
});

describe('why a drawer sits where it does', () => {
  type Why = {
    origin: string;
    wing: string;
    room: string;
    moved: boolean;
    reasons: string[];
    source_file: string | null;
    added_by: string;
    placement_history: Array<{ from: { wing: string; room: string }; to: { wing: string; room: string }; via: string }>;
    tunnels: Tunnel[];
    mined: { root: string } | null;
  };

  it('a mined drawer: wing from the folder name, room from the first sub-folder, tunnels of its room', async () => {
    const id = await minedId('atlas', 'ops');
    const why = await callJson<Why>(client, 'palace_why', { drawer_id: id });
    expect(why).toMatchObject({ origin: 'mined', wing: 'atlas', room: 'ops', moved: false, source_file: join(project, 'ops', 'deploy.md'), mined: { root: project } });
    expect(why.reasons[0]).toContain("wing 'atlas' is the name of the mined folder");
    expect(why.reasons[1]).toContain("room 'ops' is the first sub-folder");
    expect(why.tunnels.map((t) => t.tunnel_id)).toEqual([ids.tunnel]);
    const top = await callJson<Why>(client, 'palace_why', { drawer_id: await minedId('atlas', 'general') });
    expect(top.reasons[1]).toContain('sits at the top of the mined folder');
    const viaCli = await cli(['why', id]);
    expect(viaCli.code).toBe(0);
    expect(viaCli.stdout).toContain(`${id} is in atlas/ops (mined)`);
    expect(viaCli.stdout).toContain('atlas/ops ↔ mobile/release');
  });

  it('an added drawer names who filed it; a moved one keeps every move in placement_history, content untouched', async () => {
    const added = await callJson<Why>(client, 'palace_why', { drawer_id: ids.webBlog });
    expect(added).toMatchObject({ origin: 'added', added_by: 'box-claude', moved: false, placement_history: [] });
    expect(added.reasons[0]).toContain("the caller chose wing 'website' and room 'blog'");

    const before = parseJson<{ content: string }>(await cli(['drawer', 'get', ids.webBlog as string, '--json']));
    expect((await cli(['move', ids.webBlog as string, '--room', 'archive'])).code).toBe(0);
    await callJson(client, 'palace_rooms_rename', { wing: 'website', room: 'archive', new_room: 'old-posts' });
    const moved = parseJson<Why>(await cli(['why', ids.webBlog as string, '--json']));
    expect(moved).toMatchObject({ origin: 'added', room: 'old-posts', moved: true });
    expect(moved.placement_history).toEqual([
      expect.objectContaining({ from: { wing: 'website', room: 'blog' }, to: { wing: 'website', room: 'archive' }, via: 'move' }),
      expect.objectContaining({ from: { wing: 'website', room: 'archive' }, to: { wing: 'website', room: 'old-posts' }, via: 'rooms rename' }),
    ]);
    expect(moved.reasons[0]).toContain("room 'blog'");
    expect(moved.reasons.slice(1).join('\n')).toMatch(/moved from website\/blog to website\/archive[\s\S]*moved from website\/archive to website\/old-posts/);
    const after = parseJson<{ content: string }>(await cli(['drawer', 'get', ids.webBlog as string, '--json']));
    expect(after.content).toBe(before.content);
    // A drawer moved and found again by search still has its vector.
    const found = await callJson<{ results: Array<{ drawer_id: string; similarity: number }> }>(client, 'palace_search', {
      query: 'A blog post about the Logstream: why SQLite was the right store for the coordination log.',
      wing: 'website',
      mode: 'vector',
    });
    expect(found.results[0]).toMatchObject({ drawer_id: ids.webBlog });
    expect(found.results[0]?.similarity).toBeGreaterThan(0.99);
  });

  it('an unknown drawer is a not-found error (exit 1); a malformed id exits 2', async () => {
    expect(await refused('palace_why', { drawer_id: 'drawer_000000000000000000000000' })).toMatchObject({ code: 'memory.not_found' });
    const unknown = await cli(['why', 'drawer_000000000000000000000000']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/not found/);
    expect((await cli(['why', 'nope'])).code).toBe(2);
  });
});

describe('overlap between wings', () => {
  it('ranks every pair; one pair shows shared rooms, entities and near-duplicate drawers', async () => {
    type Pairs = { pairs: Array<{ wings: string[]; shared_rooms: string[]; shared_entities: string[]; score: number }> };
    const ranked = await callJson<Pairs>(client, 'palace_wing_overlap', {});
    expect(ranked.pairs[0]).toMatchObject({ wings: ['atlas', 'website'], shared_rooms: ['docs'] });
    expect(ranked.pairs[0]?.shared_entities).toEqual(expect.arrayContaining(['Logstream', 'SQLite']));
    expect(ranked.pairs.map((p) => p.score)).toEqual([...ranked.pairs.map((p) => p.score)].sort((a, b) => b - a));

    const storeId = await minedId('atlas', 'src');
    type Pair = { wings: string[]; shared_rooms: string[]; near_duplicates: Array<Record<string, { drawer_id: string }> & { similarity: number }> };
    const pair = await callJson<Pair>(client, 'palace_wing_overlap', { wing_a: 'atlas', wing_b: 'website' });
    expect(pair.shared_rooms).toEqual(['docs']);
    const copy = pair.near_duplicates.find((d) => d.atlas?.drawer_id === storeId);
    expect(copy?.website?.drawer_id).toBe(ids.webCopy);
    expect(copy?.similarity).toBeGreaterThanOrEqual(0.9);
    // Related but different drawers are not near-duplicates.
    expect(pair.near_duplicates.map((d) => d.atlas?.drawer_id)).not.toContain(await minedId('atlas', 'ops'));

    const viaCli = await cli(['overlap', 'atlas', 'website']);
    expect(viaCli.code).toBe(0);
    expect(viaCli.stdout).toContain(`near-duplicate drawers: ${pair.near_duplicates.length}`);
    expect(viaCli.stdout).toContain(`${storeId} (atlas/src) ≈ ${ids.webCopy}`);
    const all = await cli(['overlap', '--json']);
    expect(parseJson<Pairs>(all).pairs[0]?.wings).toEqual(['atlas', 'website']);
    expect((await cli(['overlap', 'atlas', 'nowhere'])).code).toBe(1);
    expect((await cli(['overlap', 'atlas', 'atlas'])).code).toBe(2);
  });
});

describe('AAAK', () => {
  it('palace_get_aaak_spec and palace aaak give the dialect', async () => {
    const spec = await callJson<{ aaak_spec: string }>(client, 'palace_get_aaak_spec', {});
    for (const part of ['H|<wing>/<room>', 'Z|<CODES>', 'DECISION', 'lossy', 'characters / 3.8']) expect(spec.aaak_spec).toContain(part);
    const viaCli = await cli(['aaak']);
    expect(viaCli.code).toBe(0);
    expect(viaCli.stdout.trimEnd()).toBe(spec.aaak_spec);
  });

  it('compress writes summaries beside the drawers, never changes their content, and is idempotent', async () => {
    const storeId = await minedId('atlas', 'src');
    const before = (await cli(['drawer', 'get', storeId, '--json'])).stdout;
    const store = join(dirs.palace, 'aaak.json');
    const dry = parseJson<{ dry_run: boolean; written: number; drawers: number }>(await cli(['compress', '--dry-run', '--json']));
    expect(dry).toMatchObject({ dry_run: true });
    expect(dry.written).toBe(dry.drawers);
    expect(existsSync(store)).toBe(false);

    const first = await cli(['compress', '--json']);
    expect(first.code).toBe(0);
    const r1 = parseJson<{ written: number; drawers: number; unchanged: number; bytes_saved: number; source_bytes: number; summary_bytes: number }>(first);
    expect(r1.written).toBe(r1.drawers);
    expect(r1.bytes_saved).toBe(r1.source_bytes - r1.summary_bytes);
    const bytes1 = readFileSync(store);
    const summaries = (JSON.parse(bytes1.toString('utf8')) as { summaries: Record<string, { text: string; flags: string[]; entities: Array<{ code: string; name: string }> }> }).summaries;
    const s = summaries[storeId];
    expect(s?.text).toMatch(/^H\|atlas\/src\|\d{4}-\d{2}-\d{2}\|LOG\|The Logstream keeps every event in SQLite/);
    expect(s?.flags).toEqual(expect.arrayContaining(['DECISION']));
    expect(s?.entities).toContainEqual({ code: 'SQL', name: 'SQLite' });
    expect((await cli(['drawer', 'get', storeId, '--json'])).stdout).toBe(before);

    const second = parseJson<{ written: number; unchanged: number; drawers: number }>(await cli(['compress', '--json']));
    expect(second).toMatchObject({ written: 0, unchanged: r1.drawers });
    expect(readFileSync(store).equals(bytes1)).toBe(true);

    const scoped = await callJson<{ drawers: number; written: number; wing: string }>(client, 'palace_compress', { wing: 'mobile', dry_run: true });
    expect(scoped).toMatchObject({ wing: 'mobile', drawers: 1, written: 0 });
    expect(await refused('palace_compress', { wing: 'w'.repeat(200) })).toMatchObject({ code: 'input.invalid', field: 'wing' });
    const why = await callJson<{ aaak: string | null }>(client, 'palace_why', { drawer_id: storeId });
    expect(why.aaak).toBe(s?.text);
  });

  it('wake-up can show drawers by their AAAK line; without the flag it stays verbatim', async () => {
    const storeId = await minedId('atlas', 'src');
    const plain = await callJson<{ l1: string; aaak_lines: number }>(client, 'palace_wakeup', { wing: 'atlas' });
    expect(plain.aaak_lines).toBe(0);
    expect(plain.l1).toContain(`- The Logstream keeps every event in SQLite.`);
    const short = await callJson<{ l1: string; aaak_lines: number }>(client, 'palace_wakeup', { wing: 'atlas', aaak: true });
    expect(short.aaak_lines).toBeGreaterThan(0);
    expect(short.l1).toMatch(new RegExp(`- Z\\|LOG\\+[^\\n]*"[^"\\n]*"\\|\\d\\|[A-Z+-]+ \\(${storeId}\\)`));
    const viaCli = await cli(['wake-up', '--wing', 'atlas', '--aaak']);
    expect(viaCli.code).toBe(0);
    expect(viaCli.stdout).toContain(`(${storeId})`);
    expect(viaCli.stdout).toMatch(/- Z\|/);
  });
});
