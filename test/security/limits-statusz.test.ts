// /statusz keeps bounded request data (issue 17, item 8): huge JSON-RPC `method` strings and many
// distinct User-Agents sent to POST /mcp over real sockets leave /statusz small, answering 200, with
// every kept field truncated and at most REQUEST_STATS_LIMITS.clients clients listed.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { REQUEST_STATS_LIMITS } from '../../hub/src/request-stats.js';
import type { Hub } from '../../hub/src/server.js';
import { makeHubDirs, rawRequest, startTestHub, type HubDirs } from '../helpers/hub.js';

let dirs: HubDirs;
let hub: Hub;

beforeAll(async () => {
  dirs = makeHubDirs();
  hub = await startTestHub(dirs);
});

afterAll(async () => {
  await hub?.close();
  dirs?.cleanup();
});

interface StatusClient {
  client_id: string;
  name: string | null;
  version: string | null;
  user_agent: string | null;
  last_method: string | null;
}

describe('/statusz under huge request data', () => {
  it('keeps truncated fields for a bounded number of clients', async () => {
    const method = 'm'.repeat(256 * 1024);
    const clients = REQUEST_STATS_LIMITS.clients + 10;
    for (let i = 0; i < clients; i++) {
      const userAgent = `agent-${i}-${'u'.repeat(4_000)}`;
      const init = {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'n'.repeat(50_000), version: 'v'.repeat(50_000) },
        },
      };
      const batch = JSON.stringify([init, { jsonrpc: '2.0', id: 2, method }]);
      const res = await rawRequest(hub.url, {
        method: 'POST',
        path: '/mcp',
        body: batch,
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          'User-Agent': userAgent,
        },
      });
      expect(res.status).toBeLessThan(500);
    }
    const res = await rawRequest(hub.url, { path: '/statusz' });
    expect(res.status, res.body.slice(0, 300)).toBe(200);
    expect(res.body.length).toBeLessThan(64 * 1024);
    const status = JSON.parse(res.body) as { clients: { recent: StatusClient[] } };
    const recent = status.clients.recent;
    expect(recent.length).toBe(REQUEST_STATS_LIMITS.clients);
    for (const c of recent) {
      expect(c.last_method?.length ?? 0).toBeLessThanOrEqual(REQUEST_STATS_LIMITS.methodChars);
      expect(c.last_method).toMatch(/^m+…$/);
      expect(c.user_agent?.length ?? 0).toBeLessThanOrEqual(REQUEST_STATS_LIMITS.userAgentChars);
      expect(c.client_id.length).toBeLessThanOrEqual(REQUEST_STATS_LIMITS.userAgentChars + 64);
      expect(c.name?.length ?? 0).toBeLessThanOrEqual(100);
      expect(c.version?.length ?? 0).toBeLessThanOrEqual(50);
    }
    // The most recent clients are the ones kept.
    expect(recent.some((c) => c.user_agent?.startsWith(`agent-${clients - 1}-`))).toBe(true);
    expect(recent.some((c) => c.user_agent?.startsWith('agent-0-'))).toBe(false);
  });

  it('counts a huge batch without keeping its methods', async () => {
    const before = hub.services.stats.mcpRequests;
    const batch = JSON.stringify(
      Array.from({ length: 2_000 }, (_, i) => ({
        jsonrpc: '2.0',
        id: i,
        method: `x${'y'.repeat(1_000)}${i}`,
      })),
    );
    const res = await rawRequest(hub.url, {
      method: 'POST',
      path: '/mcp',
      body: batch,
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'User-Agent': 'batcher',
      },
    });
    expect(res.status).toBeLessThan(500);
    expect(hub.services.stats.mcpRequests - before).toBe(2_000);
    const status = JSON.parse((await rawRequest(hub.url, { path: '/statusz' })).body) as {
      clients: { recent: StatusClient[] };
    };
    const batcher = status.clients.recent.find((c) => c.user_agent === 'batcher');
    expect(batcher?.last_method?.length).toBeLessThanOrEqual(REQUEST_STATS_LIMITS.methodChars);
  });
});
