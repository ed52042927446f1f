// Bulk ingest through a real hub: concurrent palace_add_drawer calls from several MCP clients share
// embedding batches and vector-store commits (group commit), keep the near-duplicate check between
// drawers of the same commit, and palace_add_drawers files a list with per-item results.

import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { EmbedWorkersStatus } from '../../hub/src/embed/embedder.js';
import type { AddDrawerResult } from '../../hub/src/memory/drawers/memory.js';
import type { Hub } from '../../hub/src/server.js';
import { callJson, connectHttpClient, makeHubDirs, startTestHub, type HubDirs } from '../helpers/hub.js';

const CLIENTS = 8;
const PER_CLIENT = 3;
const TOPICS = ['parser', 'scheduler', 'cache', 'router', 'lease', 'journal', 'tokenizer', 'dashboard'];
const SUBJECTS = ['the build', 'our release train', 'the on-call rota', 'the billing export', 'customer onboarding', 'the data retention policy', 'laptop provisioning', 'the design review'];

/** Table versions LanceDB wrote under `<palace>/vectors` (one per commit until compaction, after 100 writes). */
function tableVersions(palace: string): number {
  let n = 0;
  const walk = (dir: string): void => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const path = join(dir, entry.name);
      if (entry.name === '_versions') n += readdirSync(path).filter((f) => f.endsWith('.manifest')).length;
      else walk(path);
    }
  };
  walk(join(palace, 'vectors'));
  return n;
}

describe('concurrent palace_add_drawer calls on a live hub', () => {
  let dirs: HubDirs;
  let hub: Hub;
  let clients: Client[] = [];

  beforeAll(async () => {
    dirs = makeHubDirs('palace-embed-ingest-');
    hub = await startTestHub(dirs, { env: { PALACE_EMBED_WORKERS: '2' } });
    clients = await Promise.all(Array.from({ length: CLIENTS }, (_, i) => connectHttpClient(hub.url, { name: `agent-${i}` })));
    // Memory opens with the first drawer (model load, table creation); the counts below start after.
    await callJson<AddDrawerResult>(clients[0] as Client, 'palace_add_drawer', { wing: 'ingest', room: 'setup', content: 'The ingest test palace is ready.' });
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await hub?.close();
    dirs?.cleanup();
  });

  it('files every drawer, in fewer vector-store commits than drawers', async () => {
    const before = tableVersions(dirs.palace);
    expect(before).toBeGreaterThan(0);
    const results = await Promise.all(
      clients.map(async (client, c) => {
        const out: AddDrawerResult[] = [];
        for (let i = 0; i < PER_CLIENT; i++)
          out.push(
            await callJson<AddDrawerResult>(client, 'palace_add_drawer', {
              wing: 'ingest',
              room: `agent-${c}`,
              content: `Agent ${c} decided in round ${i} that ${SUBJECTS[c]} keeps the ${TOPICS[(c + i) % TOPICS.length]} change behind a flag until week ${c * 10 + i}.`,
              added_by: `agent-${c}`,
              force: true,
            }),
          );
        return out;
      }),
    );
    const all = results.flat();
    expect(all.every((r) => r.filed)).toBe(true);
    expect(new Set(all.map((r) => r.drawer_id)).size).toBe(CLIENTS * PER_CLIENT);
    const commits = tableVersions(dirs.palace) - before;
    expect(commits).toBeGreaterThan(0);
    expect(commits).toBeLessThan(CLIENTS * PER_CLIENT);
    const wings = await callJson<{ wings: Record<string, number> }>(clients[1] as Client, 'palace_list_wings');
    expect(wings.wings.ingest).toBe(1 + CLIENTS * PER_CLIENT);
    const status = await callJson<{ memory: { embed_workers: EmbedWorkersStatus } }>(clients[2] as Client, 'palace_status');
    expect(status.memory.embed_workers.size).toBe(2);
    expect(status.memory.embed_workers.workers.length).toBeGreaterThan(0);
    // The dashboard's Status view reads the same from /statusz: each worker with its own RSS.
    const statusz = (await (await fetch(`${hub.url}/statusz`)).json()) as { embedding?: { workers_max: number; workers: Array<{ state: string; rss_mb: number }> } };
    expect(statusz.embedding?.workers_max).toBe(2);
    expect(statusz.embedding?.workers.length).toBeGreaterThan(0);
    // A worker still starting has reported no memory yet (0); every loaded one reports its own.
    const loaded = (statusz.embedding?.workers ?? []).filter((w) => w.state !== 'starting');
    expect(loaded.length).toBeGreaterThan(0);
    for (const w of loaded) expect(w.rss_mb).toBeGreaterThan(10);
  });

  it('files one of several duplicates sent at once; the others name it', async () => {
    // The same text filed in eight rooms at once: eight drawer ids, one vector.
    const content = 'Deploys to production happen on Tuesdays after the staging soak passes, never on Fridays.';
    const results = await Promise.all(
      clients.map((client, c) => callJson<AddDrawerResult>(client, 'palace_add_drawer', { wing: 'ingest', room: `deploys-${c}`, content })),
    );
    const filed = results.filter((r) => r.filed);
    expect(filed).toHaveLength(1);
    const kept = filed[0]?.drawer_id;
    for (const r of results.filter((x) => !x.filed)) {
      expect(r.duplicate_of).toBe(kept);
      expect(r.similarity).toBeGreaterThanOrEqual(0.9);
    }
  });

  it('palace_add_drawers files a list in order with one result per item, refusing only the bad ones', async () => {
    const reply = await callJson<{ filed: number; results: Array<AddDrawerResult | { error: { code: string; field?: string } }> }>(clients[3] as Client, 'palace_add_drawers', {
      items: [
        { wing: 'ingest', room: 'batch', content: 'The staging database is restored from the nightly snapshot every Monday morning.' },
        { wing: 'ingest', room: 'batch', content: '   ' },
        { wing: 'ingest', room: 'batch', content: 'The staging database is restored from the nightly snapshot every Monday morning!' },
        { wing: 'ingest', room: 'batch', content: 'aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' },
        { wing: 'ingest', room: 'batch', content: 'Code review needs two approvals for anything touching the payment service.' },
      ],
    });
    const [first, empty, near, secret, last] = reply.results;
    expect(reply.filed).toBe(2);
    expect(first).toMatchObject({ filed: true });
    expect(empty).toMatchObject({ error: { code: 'input.invalid', field: 'content' } });
    expect(near).toMatchObject({ filed: false, duplicate_of: (first as AddDrawerResult).drawer_id });
    expect(secret).toMatchObject({ error: { code: 'memory.secret_refused' } });
    expect(last).toMatchObject({ filed: true });
    const again = await callJson<{ results: AddDrawerResult[] }>(clients[4] as Client, 'palace_add_drawers', {
      items: [{ wing: 'ingest', room: 'batch', content: 'Code review needs two approvals for anything touching the payment service.', force: true }],
    });
    expect(again.results[0]).toMatchObject({ filed: false, duplicate_of: (last as AddDrawerResult).drawer_id, similarity: 1 });
    const big = 'x'.repeat(600_000);
    const tooMuch = await (clients[5] as Client).callTool({ name: 'palace_add_drawers', arguments: { items: [{ wing: 'ingest', room: 'big', content: big }, { wing: 'ingest', room: 'big', content: `${big}y` }] } });
    expect(tooMuch.isError).toBe(true);
    expect(JSON.stringify(tooMuch.content)).toContain('input.too_large');
    const rooms = await callJson<{ wings: Record<string, number> }>(clients[5] as Client, 'palace_list_wings');
    expect(rooms.wings.ingest).toBe(1 + CLIENTS * PER_CLIENT + 1 + 2);
  });
});
