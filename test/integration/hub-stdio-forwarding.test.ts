// `palace mcp` (the stdio server) driven by the official SDK client over a real child process: it
// forwards each request to the live hub of its palace, follows a restarted hub on a new port without
// reconnecting, answers locally with no hub (or with PALACE_HUB_FORWARD=0), and a long wait from one
// client never holds up another client's list.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { EventPage, LogEvent, WaitResult } from '../../hub/src/core/types.js';
import {
  callJson,
  connectStdioClient,
  killChildren,
  makeHubDirs,
  sleep,
  startChildHub,
  type HubDirs,
} from '../helpers/hub.js';

interface Status {
  role: 'hub' | 'local';
  listen?: string | null;
  logstream: { events: number; latest_event_id: string | null };
}

let dirs: HubDirs;
let clients: Client[];

async function stdioClient(env: Record<string, string> = {}): Promise<Client> {
  const { client } = await connectStdioClient(dirs, { env });
  clients.push(client);
  return client;
}

function statusEvent(from: string, body: string): Record<string, unknown> {
  return { type: 'status', stream: 'project/demo', room: 'status', from_agent: from, to_agent: '*', body };
}

beforeEach(() => {
  dirs = makeHubDirs();
  clients = [];
});

afterEach(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await killChildren();
  dirs.cleanup();
});

describe('palace mcp (stdio)', () => {
  it('forwards to the live hub, follows a restarted hub on a new port, and falls back to local', async () => {
    const first = await startChildHub(dirs);
    const client = await stdioClient();
    expect(client.getServerVersion()?.name).toBe('palace');
    expect(client.getInstructions()).toContain('task.request');

    const viaFirst = await callJson<Status>(client, 'palace_status');
    expect(viaFirst.role).toBe('hub');
    expect(viaFirst.listen).toBe(first.url);
    const early = await callJson<LogEvent>(
      client,
      'palace_event_append',
      statusEvent('box-claude', 'written through the first hub'),
    );

    expect((await first.stop()).code).toBe(0);
    const second = await startChildHub(dirs);
    expect(second.pid).not.toBe(first.pid);
    expect(second.port).not.toBe(first.port);

    // Same client, same stdio process, no reconnect.
    const viaSecond = await callJson<Status>(client, 'palace_status');
    expect(viaSecond.role).toBe('hub');
    expect(viaSecond.listen).toBe(second.url);
    const listed = await callJson<EventPage>(client, 'palace_event_list', {});
    expect(listed.events.map((e) => e.id)).toEqual([early.id]);
    const later = await callJson<LogEvent>(
      client,
      'palace_event_append',
      statusEvent('box-claude', 'written through the second hub'),
    );
    expect(
      (await fetch(`${second.url}/statusz`).then((r) => r.json())) as { logstream: { events: number } },
    ).toMatchObject({
      logstream: { events: 2 },
    });

    expect((await second.stop()).code).toBe(0);
    const local = await callJson<Status>(client, 'palace_status');
    expect(local.role).toBe('local');
    expect(local.logstream).toMatchObject({ events: 2, latest_event_id: later.id });
    const localList = await callJson<EventPage>(client, 'palace_event_list', {});
    expect(localList.events.map((e) => e.id)).toEqual([early.id, later.id]);
    const localWrite = await callJson<LogEvent>(
      client,
      'palace_event_append',
      statusEvent('box-claude', 'written locally'),
    );

    // A hub started later serves what the local server wrote.
    const third = await startChildHub(dirs);
    const viaThird = await callJson<Status>(client, 'palace_status');
    expect(viaThird).toMatchObject({
      role: 'hub',
      listen: third.url,
      logstream: { events: 3, latest_event_id: localWrite.id },
    });
  });

  it('answers locally after the hub crashed (stale registration), and a new hub takes over', async () => {
    const crashed = await startChildHub(dirs);
    const client = await stdioClient();
    expect((await callJson<Status>(client, 'palace_status')).role).toBe('hub');
    crashed.child.kill('SIGKILL');
    await crashed.exited;
    // The registration file is left behind, but its pid is dead.
    const local = await callJson<Status>(client, 'palace_status');
    expect(local.role).toBe('local');
    const event = await callJson<LogEvent>(
      client,
      'palace_event_append',
      statusEvent('box-claude', 'after the crash'),
    );
    const next = await startChildHub(dirs);
    const status = await callJson<Status>(client, 'palace_status');
    expect(status).toMatchObject({ role: 'hub', listen: next.url, logstream: { latest_event_id: event.id } });
  });

  it('answers reads locally with PALACE_HUB_FORWARD=0 while a hub is live, and refuses its writes (lease.held)', async () => {
    const hub = await startChildHub(dirs);
    const client = await stdioClient({ PALACE_HUB_FORWARD: '0' });
    const status = await callJson<Status>(client, 'palace_status');
    expect(status.role).toBe('local');
    const refused = await client.callTool({ name: 'palace_event_append', arguments: statusEvent('box-codex', 'local write, hub live') });
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toContain('lease.held');
    const forwarded = await stdioClient();
    const event = await callJson<LogEvent>(forwarded, 'palace_event_append', statusEvent('box-codex', 'through the hub'));
    // Same log file: the local server reads what the hub wrote, and the hub saw no MCP request from it.
    const page = await callJson<EventPage>(client, 'palace_event_list', {});
    expect(page.events.map((e) => e.id)).toEqual([event.id]);
    const statusz = (await fetch(`${hub.url}/statusz`).then((r) => r.json())) as { logstream: { events: number } };
    expect(statusz.logstream.events).toBe(1);
    expect((await callJson<Status>(forwarded, 'palace_status')).role).toBe('hub');
  });

  it('names the MCP client it forwards for in its User-Agent, so /statusz keys each proxied client apart', async () => {
    const hub = await startChildHub(dirs);
    const one = await connectStdioClient(dirs, { name: 'client-one' });
    const two = await connectStdioClient(dirs, { name: 'client-two' });
    clients.push(one.client, two.client);
    await callJson(one.client, 'palace_status');
    await callJson(two.client, 'palace_status');
    const statusz = (await fetch(`${hub.url}/statusz`).then((r) => r.json())) as {
      clients: { recent: Array<{ name: string | null; user_agent: string | null; last_method: string | null }> };
    };
    for (const name of ['client-one', 'client-two']) {
      const record = statusz.clients.recent.find((c) => c.name === name);
      expect(record?.user_agent).toMatch(new RegExp(`^palace-mcp/\\S+ \\(${name}/`));
      expect(record?.last_method).toBe('tools/call palace_status');
    }
  });

  it('does not let a pending long wait from one client delay another client', async () => {
    const hub = await startChildHub(dirs);
    const waiter = await stdioClient();
    const lister = await stdioClient();
    const start = await callJson<LogEvent>(
      lister,
      'palace_event_append',
      statusEvent('box-claude', 'cursor'),
    );

    let waitSettled = false;
    const pendingWait = callJson<WaitResult>(
      waiter,
      'palace_event_wait',
      { to_agent: 'box-codex', since_event_id: start.id, timeout_ms: 60_000 },
      90_000,
    ).finally(() => (waitSettled = true));
    // Let the wait reach the hub (it is forwarded as soon as the stdio server reads the frame).
    await sleep(300);
    const listed = await callJson<EventPage>(lister, 'palace_event_list', {});
    expect(listed.events.map((e) => e.id)).toEqual([start.id]);
    expect(waitSettled).toBe(false);
    // The same holds inside one stdio process: its frames are handled concurrently.
    expect((await callJson<Status>(waiter, 'palace_status')).role).toBe('hub');
    expect(waitSettled).toBe(false);

    const wake = await callJson<LogEvent>(lister, 'palace_event_append', {
      ...statusEvent('box-claude', 'for codex'),
      to_agent: 'box-codex',
    });
    const result = await pendingWait;
    expect(result.timed_out).toBe(false);
    expect(result.events.map((e) => e.id)).toEqual([wake.id]);
    expect(hub.isRunning()).toBe(true);
  });
});
