// Concurrent writers through one real hub: several MCP clients over HTTP, several `palace mcp`
// stdio proxies (real CLI children forwarding to the hub) and the direct CLI `palace logstream
// append` (its own SQLite connection on the same file, racing the hub) all append events with
// unique markers, and the MCP clients file drawers. Afterwards every acknowledged write is present
// exactly once, nothing unacknowledged appeared, and SQLite's integrity check passes.

import { join } from 'node:path';

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';

import type { LogEvent } from '../../hub/src/core/types.js';
import { Logstream } from '../../hub/src/logstream/logstream.js';
import type { AddDrawerResult, DrawerView } from '../../hub/src/memory/drawers/memory.js';
import { startCli } from '../helpers/cli.js';
import {
  callJson,
  childEnv,
  connectHttpClient,
  connectStdioClient,
  killChildren,
  makeHubDirs,
  startChildHub,
  type HubDirs,
} from '../helpers/hub.js';
import { allEvents } from '../helpers/sync.js';

const SCALE = Number(process.env.PALACE_CONCURRENCY_SCALE ?? 1);
const HTTP_CLIENTS = 3;
const STDIO_CLIENTS = 2;
const CLI_LANES = 2;
const EVENTS_PER_MCP_CLIENT = 30 * SCALE;
const CLI_APPENDS_PER_LANE = 6 * SCALE;
const DRAWER_EVERY = 10;
const STREAM = 'project/concurrency';
const WING = 'concurrency';

const TOPICS = ['sqlite', 'lancedb', 'koa', 'vitest', 'electron', 'onnx', 'fast-check', 'zod', 'sse', 'hlc'];

interface Acked {
  /** marker -> event id */
  events: Map<string, string>;
  /** marker -> drawer id */
  drawers: Map<string, string>;
}

async function mcpWriter(client: Client, name: string, acked: Acked): Promise<void> {
  for (let i = 0; i < EVENTS_PER_MCP_CLIENT; i++) {
    const marker = `${name}#${i}`;
    const event = await callJson<LogEvent>(client, 'palace_event_append', {
      type: 'status',
      stream: STREAM,
      room: 'load',
      from_agent: name,
      to_agent: '*',
      body: marker,
    });
    acked.events.set(marker, event.id);
    if (i % DRAWER_EVERY === 0) {
      const topic = TOPICS[(i / DRAWER_EVERY) % TOPICS.length] ?? 'misc';
      const content = `Writer ${name} round ${i} notes that ${topic} behaved well under concurrent load (${marker}).`;
      const drawer = await callJson<AddDrawerResult>(client, 'palace_add_drawer', {
        wing: WING,
        room: name.replace(/[^a-z0-9-]/g, '-'),
        content,
        added_by: name,
        force: true,
      });
      expect(drawer.filed).toBe(true);
      acked.drawers.set(marker, drawer.drawer_id);
    }
  }
}

async function cliWriter(dirs: HubDirs, lane: number, acked: Acked): Promise<void> {
  for (let i = 0; i < CLI_APPENDS_PER_LANE; i++) {
    const marker = `cli-${lane}#${i}`;
    const args = [
      '--palace',
      dirs.palace,
      'logstream',
      'append',
      '--json',
      '--type',
      'status',
      '--stream',
      STREAM,
    ];
    args.push('--room', 'load', '--from-agent', `cli-${lane}`, '--to-agent', '*', '--body', marker);
    const result = await startCli(args, childEnv(dirs)).done;
    if (result.code !== 0) throw new Error(`cli append failed (${String(result.code)}): ${result.stderr}`);
    acked.events.set(marker, (JSON.parse(result.stdout) as LogEvent).id);
  }
}

describe('concurrent writers through one hub', () => {
  let dirs: HubDirs | undefined;
  const clients: Client[] = [];
  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    await killChildren();
    dirs?.cleanup();
  });

  it('HTTP, stdio and direct-CLI writers lose nothing and duplicate nothing', async () => {
    dirs = makeHubDirs('palace-concurrent-');
    const hub = await startChildHub(dirs);
    const acked: Acked = { events: new Map(), drawers: new Map() };
    const writers: Array<{ name: string; client: Client }> = [];
    for (let i = 0; i < HTTP_CLIENTS; i++)
      writers.push({ name: `http-${i}`, client: await connectHttpClient(hub.url, { name: `http-${i}` }) });
    for (let i = 0; i < STDIO_CLIENTS; i++)
      writers.push({
        name: `stdio-${i}`,
        client: (await connectStdioClient(dirs, { name: `stdio-${i}` })).client,
      });
    clients.push(...writers.map((w) => w.client));
    // Load the embedder once so the race is between writers, not against a cold start.
    await callJson(writers[0]!.client, 'palace_search', { query: 'warm up', limit: 1 }, 60_000);

    await Promise.all([
      ...writers.map((w) => mcpWriter(w.client, w.name, acked)),
      ...Array.from({ length: CLI_LANES }, (_, lane) => cliWriter(dirs!, lane, acked)),
    ]);
    const expectedEvents =
      (HTTP_CLIENTS + STDIO_CLIENTS) * EVENTS_PER_MCP_CLIENT + CLI_LANES * CLI_APPENDS_PER_LANE;
    expect(acked.events.size).toBe(expectedEvents);

    // Drawers: each acknowledged one is there, with its content, exactly once in the wing.
    const reader = writers[0]!.client;
    for (const [marker, id] of acked.drawers) {
      const drawer = await callJson<DrawerView>(reader, 'palace_get_drawer', { drawer_id: id });
      expect(drawer.content, marker).toContain(`(${marker})`);
    }
    const listed = await callJson<{ total: number; drawers: Array<{ drawer_id: string; preview: string }> }>(
      reader,
      'palace_list_drawers',
      { wing: WING, limit: 1000 },
    );
    expect(listed.total).toBe(acked.drawers.size);
    expect(new Set(listed.drawers.map((d) => d.drawer_id))).toEqual(new Set(acked.drawers.values()));

    for (const c of clients.splice(0)) await c.close();
    const exit = await hub.stop();
    expect(exit.signal).toBeNull();

    const db = new Database(join(dirs.palace, 'logstream.sqlite3'), { readonly: true });
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      db.close();
    }
    const log = Logstream.open(dirs.palace);
    try {
      const events = allEvents(log).filter((e) => e.stream === STREAM);
      const byMarker = new Map<string, LogEvent[]>();
      for (const e of events) byMarker.set(e.body, [...(byMarker.get(e.body) ?? []), e]);
      for (const [marker, id] of acked.events) {
        expect(
          byMarker.get(marker)?.map((e) => e.id),
          marker,
        ).toEqual([id]);
      }
      expect(events.length, 'no event beyond the acknowledged ones').toBe(acked.events.size);
      expect(new Set(events.map((e) => e.seq)).size).toBe(events.length);
    } finally {
      log.close();
    }
  }, 240_000);
});
