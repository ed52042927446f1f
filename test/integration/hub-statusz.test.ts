// GET /statusz over real HTTP: version, uptime, request counters, SQLite integrity, writer mode and
// the MCP clients recently seen (named from the SDK client's initialize clientInfo). The integrity
// check starts once the hub is quiet (no memory open running, no request but health probes for a
// second) and /statusz never waits for it, nor starts it: 'checking' until its verdict is in.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { quickCheckOffThread } from '../../hub/src/logstream/integrity-check.js';
import type { LogFile } from '../../hub/src/logstream/event-store.js';
import type { Hub } from '../../hub/src/server.js';
import { PALACE_VERSION } from '../../hub/src/version.js';
import { request as httpRequest } from 'node:http';

import { startCli } from '../helpers/cli.js';
import { callJson, childEnv, connectHttpClient, makeHubDirs, startTestHub, type HubDirs } from '../helpers/hub.js';

interface Statusz {
  ok: boolean;
  server: {
    name: string;
    version: string;
    uptime_seconds: number;
    port: number;
    pid: number;
    started_at: string;
  };
  palace: { path: string; sqlite_integrity: string };
  writer: { mode: string };
  requests: { total: number; mcp: number; by_status: Record<string, number> };
  logstream: { events: number };
  clients: {
    recent: { name: string | null; names?: string[]; version: string | null; user_agent: string | null; requests: number; last_method: string | null }[];
  };
}

let dirs: HubDirs;
let hubs: Hub[];

beforeEach(() => {
  dirs = makeHubDirs();
  hubs = [];
});

afterEach(async () => {
  for (const hub of hubs) await hub.close();
  dirs.cleanup();
});

async function statusz(hub: Hub, token?: string): Promise<Statusz> {
  const res = await fetch(`${hub.url}/statusz`, {
    headers: token ? { Authorization: `Bearer ${token}` } : {},
  });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/application\/json/);
  return (await res.json()) as Statusz;
}

/** /statusz once the first integrity verdict is in (every answer before it says 'checking'). */
async function settledStatusz(hub: Hub, token?: string): Promise<Statusz> {
  for (;;) {
    const body = await statusz(hub, token);
    if (body.palace.sqlite_integrity !== 'checking') return body;
    expect(body.ok).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Polls /statusz (a health probe: it never makes the hub busy) until `done()`. */
async function until(hub: Hub, done: () => boolean): Promise<void> {
  while (!done()) {
    expect((await statusz(hub)).palace.sqlite_integrity).toBe('checking');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The real quick_check, held back until `open()`; an abort (the hub closing) ends it at once. */
function gatedCheck(): { check: (store: LogFile, signal: AbortSignal) => Promise<string>; open: () => void; calls: () => number } {
  let open: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (open = resolve));
  let calls = 0;
  return {
    check: (store, signal) => {
      calls++;
      return new Promise<string>((resolve) => {
        signal.addEventListener('abort', () => resolve('cut short'), { once: true });
        void gate.then(() => resolve(quickCheckOffThread(store, signal)));
      });
    },
    open: () => open(),
    calls: () => calls,
  };
}

describe('GET /statusz', () => {
  it('answers at once while the first integrity check runs (checking, ok), then with its verdict', async () => {
    const gated = gatedCheck();
    const hub = await startTestHub(dirs, { integrityCheck: gated.check });
    hubs.push(hub);
    // The hub starts the check once it is quiet; asking while it runs does not start another.
    const first = await statusz(hub);
    expect(first.palace.sqlite_integrity).toBe('checking');
    expect(first.ok).toBe(true);
    expect(first.server.version).toBe(PALACE_VERSION);
    await until(hub, () => gated.calls() === 1);
    expect((await statusz(hub)).palace.sqlite_integrity).toBe('checking');
    expect(gated.calls()).toBe(1);
    gated.open();
    const settled = await settledStatusz(hub);
    expect(settled.palace.sqlite_integrity).toBe('ok');
    expect(settled.ok).toBe(true);
    expect(gated.calls()).toBe(1);
  });

  it('says not ok once a check reports a problem', async () => {
    const problem = '*** in database main ***\nPage 7: btreeInitPage() returns error code 11';
    const hub = await startTestHub(dirs, { integrityCheck: () => Promise.resolve(problem) });
    hubs.push(hub);
    const body = await settledStatusz(hub);
    expect(body.palace.sqlite_integrity).toBe(problem);
    expect(body.ok).toBe(false);
  });

  it('closes a hub whose first check is still running', async () => {
    const gated = gatedCheck();
    const hub = await startTestHub(dirs, { integrityCheck: gated.check });
    await until(hub, () => gated.calls() === 1);
    await hub.close();
    expect(gated.calls()).toBe(1);
  });

  it('a hub closing before its first check started never starts it', async () => {
    const gated = gatedCheck();
    const hub = await startTestHub(dirs, { integrityCheck: gated.check });
    expect((await statusz(hub)).palace.sqlite_integrity).toBe('checking');
    await hub.close();
    expect(gated.calls()).toBe(0);
  });

  it('the first check waits for a memory open: a /statusz during it does not start the check', async () => {
    // What the hub's memory looks like each time a check starts (the real quick_check follows).
    const seen: string[] = [];
    const hub = await startTestHub(dirs, {
      integrityCheck: (store, signal) => {
        seen.push(hub.services.memory.isOpen() ? 'memory open' : 'memory opening or closed');
        return quickCheckOffThread(store, signal);
      },
    });
    hubs.push(hub);
    // As palace_status with memory counts does on a fresh hub: the store, the census, the journal.
    const opening = hub.services.memory.get();
    expect((await statusz(hub)).palace.sqlite_integrity).toBe('checking');
    await opening;
    const settled = await settledStatusz(hub);
    expect(settled.palace.sqlite_integrity).toBe('ok');
    expect(seen).toEqual(['memory open']);
  });

  it('reports version, uptime, counters, integrity, writer mode and recent MCP clients', async () => {
    const hub = await startTestHub(dirs);
    hubs.push(hub);
    const before = await settledStatusz(hub);
    expect(before.ok).toBe(true);
    expect(before.server).toMatchObject({
      name: 'palace',
      version: PALACE_VERSION,
      port: hub.port,
      pid: process.pid,
    });
    expect(before.server.uptime_seconds).toBeGreaterThanOrEqual(0);
    expect(Number.isNaN(Date.parse(before.server.started_at))).toBe(false);
    expect(before.palace.sqlite_integrity).toBe('ok');
    expect(before.writer.mode).toBe('writer');
    expect(before.requests.mcp).toBe(0);
    expect(before.clients.recent).toEqual([]);

    const client = await connectHttpClient(hub.url, { name: 'statusz-probe-agent' });
    try {
      await callJson(client, 'palace_event_append', {
        type: 'status',
        stream: 's',
        room: 'r',
        from_agent: 'statusz-probe-agent',
      });
      await callJson(client, 'palace_status');
    } finally {
      await client.close();
    }
    await fetch(`${hub.url}/nope`);

    const after = await statusz(hub);
    // initialize, notifications/initialized and two tool calls at least.
    expect(after.requests.mcp).toBeGreaterThanOrEqual(4);
    expect(after.requests.total).toBeGreaterThan(before.requests.total + after.requests.mcp - 1);
    expect(after.requests.by_status['200']).toBeGreaterThanOrEqual(3);
    expect(after.requests.by_status['404']).toBe(1);
    expect(after.logstream.events).toBe(1);
    const seen = after.clients.recent.find((c) => c.name === 'statusz-probe-agent');
    expect(seen).toBeDefined();
    expect(seen?.version).toBe('1.0.0');
    expect(seen?.requests).toBeGreaterThanOrEqual(4);
    expect(seen?.last_method).toBe('tools/call palace_status');
  });

  it('keys clients properly: CLI traffic is never labelled with another client\'s clientInfo', async () => {
    const hub = await startTestHub(dirs);
    hubs.push(hub);
    // A client that sends no User-Agent (as many do) initializes as "claude-code" from 127.0.0.1.
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'claude-code', version: '9.9' } },
    });
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest(`${hub.url}/mcp`, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' } }, (res) => {
        res.resume();
        res.once('end', resolve);
      });
      req.once('error', reject);
      req.end(body);
    });
    // Then the CLI calls the hub from the same machine.
    const cli = await startCli(['--palace', dirs.palace, 'logstream', 'list', '--json'], childEnv(dirs)).done;
    expect(cli.code, cli.stderr).toBe(0);

    const recent = (await statusz(hub)).clients.recent;
    const claude = recent.filter((c) => c.name === 'claude-code');
    expect(claude).toHaveLength(1);
    expect(claude[0]?.requests).toBe(1);
    expect(claude[0]?.last_method).toBe('initialize');
    const fromCli = recent.find((c) => c.last_method === 'tools/call palace_event_list');
    expect(fromCli?.user_agent).toMatch(/^palace-cli\//);
    expect(fromCli?.name).not.toBe('claude-code');
  });

  it('never lets a second clientInfo on one key rename the first client: both names are listed', async () => {
    const hub = await startTestHub(dirs);
    hubs.push(hub);
    const one = await connectHttpClient(hub.url, { name: 'agent-one' });
    const two = await connectHttpClient(hub.url, { name: 'agent-two' });
    await one.close();
    await two.close();
    const shared = (await statusz(hub)).clients.recent.filter((c) => c.names?.includes('agent-one'));
    expect(shared).toHaveLength(1);
    expect(shared[0]?.names).toEqual(['agent-one', 'agent-two']);
    expect(shared[0]?.name).toBeNull(); // two clients share the key: no single name is claimed for its requests
  });

  it('reports read_only writer mode on a read-only hub and never shows the token', async () => {
    const token = 'ab'.repeat(32);
    const hub = await startTestHub(dirs, { readOnly: true, token });
    hubs.push(hub);
    await settledStatusz(hub, token);
    const res = await fetch(`${hub.url}/statusz`, { headers: { Authorization: `Bearer ${token}` } });
    const text = await res.text();
    expect(text).not.toContain(token);
    const body = JSON.parse(text) as Statusz;
    expect(body.writer.mode).toBe('read_only');
    expect(body.palace.sqlite_integrity).toBe('ok');
  });
});
