// The CLI's one road (issue 18): with a live hub, `palace logstream append|ack` and `artifact put|get`
// go through the hub over MCP. The CLI child runs with a module hook that makes better-sqlite3
// unloadable, so it cannot touch SQLite itself; a hub palace_event_wait waiter is woken by its append.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { Hub } from '../../hub/src/server.js';
import { startCli } from '../helpers/cli.js';
import { callJson, childEnv, connectHttpClient, makeHubDirs, startTestHub, waitUntil, type HubDirs } from '../helpers/hub.js';

let dirs: HubDirs;
let hub: Hub | undefined;
let client: Client | undefined;
let noSqlite: string;

beforeEach(() => {
  dirs = makeHubDirs('palace-cli-road-');
  // A module hook for the CLI child: importing better-sqlite3 throws, so no direct SQLite access is possible.
  noSqlite = join(dirs.root, 'no-sqlite.mjs');
  const hook = "export async function resolve(s, c, next) { if (s === 'better-sqlite3') throw new Error('TEST-HOOK: better-sqlite3 refused'); return next(s, c); }";
  writeFileSync(noSqlite, `import { register } from 'node:module';\nregister(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)});\n`);
});

afterEach(async () => {
  await client?.close();
  client = undefined;
  await hub?.close();
  hub = undefined;
  dirs.cleanup();
});

/** Runs the CLI with the better-sqlite3 hook against this palace. */
async function cli(args: string[], stdin?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = childEnv(dirs, { NODE_OPTIONS: `--import ${pathToFileURL(noSqlite).href}` });
  const r = await startCli(['--palace', dirs.palace, ...args], env, stdin === undefined ? {} : { stdin }).done;
  return { code: r.code, stdout: r.stdout, stderr: r.stderr };
}

const APPEND = ['logstream', 'append', '--type', 'task.request', '--stream', 'project/road', '--room', 'delegation', '--from-agent', 'road-a', '--to-agent', 'road-b', '--correlation-id', 'task_road', '--status', 'open', '--body', 'do it', '--json'];

describe('the CLI with a live hub', () => {
  it('the hook is real: with no hub the same append needs SQLite in-process and fails on the hook', async () => {
    const r = await cli(APPEND);
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toContain('TEST-HOOK');
  }, 60_000);

  it('appends, acks and stores artifacts through the hub with no SQLite of its own', async () => {
    hub = await startTestHub(dirs);
    const before = hub.services.stats.mcpRequests;
    const appended = await cli(APPEND);
    expect(appended.stderr).toBe('');
    expect(appended.code).toBe(0);
    const event = JSON.parse(appended.stdout) as { id: string; seq: number };
    expect(hub.services.logstream.list({ correlation_id: 'task_road' }).events.map((e) => e.id)).toEqual([event.id]);

    const ack = await cli(['logstream', 'ack', event.id, '--from-agent', 'road-b', '--status', 'claimed', '--json']);
    expect(ack.code).toBe(0);
    expect(JSON.parse(ack.stdout)).toMatchObject({ type: 'event.ack', to_agent: 'road-a' });

    const put = await cli(['artifact', 'put', '--kind', 'note', '--created-by', 'road-b', '--json'], 'exact bytes\n');
    expect(put.code).toBe(0);
    const { id } = JSON.parse(put.stdout) as { id: string };
    const got = await cli(['artifact', 'get', id]);
    expect(got.code).toBe(0);
    expect(got.stdout).toBe('exact bytes\n');

    const listed = await cli(['logstream', 'list', '--correlation-id', 'task_road', '--json']);
    expect((JSON.parse(listed.stdout) as { events: unknown[] }).events).toHaveLength(2);
    // Every one of those five commands was an MCP request to the hub.
    expect(hub.services.stats.mcpRequests - before).toBe(5);
    // Bad input is refused by the hub's tool schema with the same exit code and a named field.
    const bad = await cli(['logstream', 'append', '--type', 'status', '--stream', 's', '--room', 'r', '--from-agent', 'a', '--status', 'nonsense', '--json']);
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stdout)).toMatchObject({ error: { code: 'input.invalid', field: 'status' } });
  }, 90_000);

  it('wakes a palace_event_wait waiter on the hub with a CLI append', async () => {
    hub = await startTestHub(dirs);
    client = await connectHttpClient(hub.url, { name: 'road-waiter' });
    const tip = await callJson<{ cursor: string | null }>(client, 'palace_event_list', { order: 'desc', limit: 1 });
    const waiting = callJson<{ timed_out: boolean; events: Array<{ id: string; body: string }> }>(
      client,
      'palace_event_wait',
      { to_agent: 'road-b', timeout_ms: 60_000, ...(tip.cursor ? { since_event_id: tip.cursor } : {}) },
      70_000,
    );
    const stats = hub.services.stats;
    await waitUntil(() => stats.waits.active === 1, 'the hub to hold the wait');
    const appended = await cli(APPEND);
    expect(appended.code).toBe(0);
    const event = JSON.parse(appended.stdout) as { id: string };
    const woke = await waiting;
    expect(woke.timed_out).toBe(false);
    expect(woke.events.map((e) => e.id)).toEqual([event.id]);
  }, 90_000);
});
