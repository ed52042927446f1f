// `PALACE_HUB_FORWARD=0 palace mcp` beside a live hub: the stdio server must not write the palace's
// memory behind the hub's back (the hub would then serve stale data). Memory, knowledge-graph and
// mining writes, and logstream writes (one hub serializes every write), are refused with `lease.held`
// naming the holder, exactly as the CLI refuses them; reads are answered locally.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { LogEvent } from '../../hub/src/core/types.js';
import { callJson, connectHttpClient, killChildren, makeHubDirs, startChildHub, type HubDirs } from '../helpers/hub.js';
import { closeSessions, stdioSession, toolError } from '../helpers/stdio-client.js';

let dirs: HubDirs;
let clients: Client[];

beforeEach(() => {
  dirs = makeHubDirs();
  clients = [];
});

afterEach(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await closeSessions();
  await killChildren();
  dirs.cleanup();
});

describe('palace mcp (stdio) with PALACE_HUB_FORWARD=0 beside a live hub', () => {
  it('refuses memory and mining writes with lease.held naming the hub, and writes nothing', async () => {
    const hub = await startChildHub(dirs);
    const session = stdioSession(dirs, { PALACE_HUB_FORWARD: '0' });
    await session.connect();
    const local = session.client;

    const added = toolError(
      await local.callTool({ name: 'palace_add_drawer', arguments: { wing: 'demo', room: 'decisions', content: 'written behind the hub' } }),
    );
    expect(added.code).toBe('lease.held');
    expect(added.message).toContain(`pid ${hub.pid}`);
    expect(added.message).toContain(hub.url);
    expect(added.message).toContain('PALACE_HUB_FORWARD');
    expect(added.data).toMatchObject({ holder: { pid: hub.pid, address: hub.url } });

    const source = join(dirs.root, 'project');
    mkdirSync(source);
    writeFileSync(join(source, 'notes.md'), '# Notes\n\nA decision worth mining.\n');
    const mined = toolError(await local.callTool({ name: 'palace_mine', arguments: { source, wing: 'demo' } }));
    expect(mined.code).toBe('lease.held');

    // Nothing reached the palace: the hub (the writer) has no drawer, and no wing was recorded.
    const http = await connectHttpClient(hub.url);
    clients.push(http);
    const wings = await callJson<Record<string, unknown>>(http, 'palace_list_wings');
    expect(JSON.stringify(wings)).not.toContain('demo');
    const found = await callJson<{ results: unknown[] }>(http, 'palace_search', { query: 'written behind the hub' });
    expect(found.results).toEqual([]);

    // Logstream writes are refused the same way (one hub serializes every write); reads are answered locally.
    expect((await callJson<{ role: string }>(local, 'palace_status')).role).toBe('local');
    const appended = toolError(
      await local.callTool({
        name: 'palace_event_append',
        arguments: { type: 'status', stream: 'project/demo', room: 'status', from_agent: 'box-codex', body: 'a local append beside the hub' },
      }),
    );
    expect(appended.code).toBe('lease.held');
    expect(appended.message).toBe(added.message.replace('palace_add_drawer', 'palace_event_append'));
    const put = toolError(await local.callTool({ name: 'palace_artifact_put', arguments: { kind: 'log', created_by: 'box-codex', content: 'x\n' } }));
    expect(put.code).toBe('lease.held');
    expect((await callJson<{ events: LogEvent[] }>(http, 'palace_event_list', {})).events).toEqual([]);
    expect((await callJson<{ events: LogEvent[] }>(local, 'palace_event_list', {})).events).toEqual([]);
  });

  it('writes directly once no hub holds the lease', async () => {
    const hub = await startChildHub(dirs);
    const session = stdioSession(dirs, { PALACE_HUB_FORWARD: '0' });
    await session.connect();
    expect((await hub.stop()).code).toBe(0);
    const added = await callJson<{ drawer_id?: string; id?: string }>(session.client, 'palace_add_drawer', {
      wing: 'demo',
      room: 'decisions',
      content: 'written with no hub running',
    }, 60_000);
    expect(added.drawer_id ?? added.id).toMatch(/^drawer_/);
  });
});
