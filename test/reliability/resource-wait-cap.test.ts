// Concurrent long-polls are capped (issue 17, item 7): with PALACE_WAIT_MAX_CONCURRENT=3, three
// palace_event_wait calls wait, a fourth is refused at once with the retryable http.busy naming the
// cap, and once the waits end a new one is admitted. A real hub on port 0, the official MCP SDK client.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Hub } from '../../hub/src/server.js';
import {
  callJson,
  connectHttpClient,
  makeHubDirs,
  rawRequest,
  resultJson,
  startTestHub,
  waitUntil,
  type HubDirs,
} from '../helpers/hub.js';

const CAP = 3;

let dirs: HubDirs;
let hub: Hub;
let client: Client;

beforeAll(async () => {
  dirs = makeHubDirs();
  hub = await startTestHub(dirs, { env: { PALACE_WAIT_MAX_CONCURRENT: String(CAP) } });
  client = await connectHttpClient(hub.url);
});

afterAll(async () => {
  await client?.close();
  await hub?.close();
  dirs?.cleanup();
});

async function waitsActive(): Promise<number> {
  const status = JSON.parse((await rawRequest(hub.url, { path: '/statusz' })).body) as {
    requests: { waits?: { active: number } };
  };
  return status.requests.waits?.active ?? -1;
}

describe('palace_event_wait past PALACE_WAIT_MAX_CONCURRENT', () => {
  it('refuses the wait over the cap with a retryable error, then admits again', async () => {
    const args = { stream: 'project/cap', timeout_ms: 20_000 };
    const pending = Array.from({ length: CAP }, () =>
      client.callTool({ name: 'palace_event_wait', arguments: args }, undefined, { timeout: 30_000 }),
    );
    for (const p of pending) p.catch(() => undefined); // awaited below; no unhandled rejection if the test fails first
    await waitUntil(async () => (await waitsActive()) === CAP, `${CAP} waits admitted`);

    const over = (await client.callTool({ name: 'palace_event_wait', arguments: args }, undefined, {
      timeout: 30_000,
    })) as CallToolResult;
    expect(over.isError).toBe(true);
    const { error } = resultJson<{
      error: { code: string; message: string; data?: { retry_after_ms?: number } };
    }>(over);
    expect(error.code).toBe('http.busy');
    expect(error.message).toContain(`PALACE_WAIT_MAX_CONCURRENT=${CAP}`);
    expect(error.data?.retry_after_ms).toBeGreaterThan(0);

    // A list is never refused by the wait cap.
    await callJson(client, 'palace_event_list', { stream: 'project/cap' });

    const event = await hub.services.logstream.append({
      type: 'status',
      stream: 'project/cap',
      room: 'r',
      from_agent: 'a',
      to_agent: '*',
    });
    const woken = (await Promise.all(pending)) as CallToolResult[];
    for (const r of woken)
      expect(resultJson<{ events: { id: string }[] }>(r).events.map((e) => e.id)).toEqual([event.id]);
    await waitUntil(async () => (await waitsActive()) === 0, 'the waits released');

    const again = await callJson<{ timed_out: boolean }>(client, 'palace_event_wait', {
      ...args,
      since_event_id: event.id,
      timeout_ms: 10,
    });
    expect(again.timed_out).toBe(true);
    const status = JSON.parse((await rawRequest(hub.url, { path: '/statusz' })).body) as {
      requests: { waits: { active: number; max: number; refused: number } };
    };
    expect(status.requests.waits).toMatchObject({ active: 0, max: CAP, refused: 1 });
  });

  it('a bad PALACE_WAIT_MAX_CONCURRENT fails at start-up naming the variable', async () => {
    const bad = makeHubDirs();
    try {
      await expect(startTestHub(bad, { env: { PALACE_WAIT_MAX_CONCURRENT: 'lots' } })).rejects.toThrow(
        /PALACE_WAIT_MAX_CONCURRENT/,
      );
    } finally {
      bad.cleanup();
    }
  });
});
