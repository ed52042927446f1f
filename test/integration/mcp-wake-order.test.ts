// A write's reply leaves the hub after the wake-ups its commit caused: with a palace_event_wait
// pending, the hub writes the woken wait's reply before the palace_event_append reply that woke it
// (observed at the hub's own responses, real hub on port 0, raw JSON-RPC over fetch), and both
// calls still get their full results.

import diagnostics from 'node:diagnostics_channel';
import type { IncomingMessage } from 'node:http';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { LogEvent, WaitResult } from '../../hub/src/core/types.js';
import type { Hub } from '../../hub/src/server.js';
import { makeHubDirs, startTestHub, type HubDirs } from '../helpers/hub.js';

let dirs: HubDirs;
let hub: Hub;
/** Who each finished /mcp response was for, in the order the hub finished them. */
const finished: string[] = [];
const onFinish = (message: unknown): void => {
  const who = (message as { request?: IncomingMessage }).request?.headers['x-test-who'];
  if (typeof who === 'string') finished.push(who);
};

beforeAll(async () => {
  dirs = makeHubDirs('palace-wake-order-');
  hub = await startTestHub(dirs);
  diagnostics.subscribe('http.server.response.finish', onFinish);
});
afterAll(async () => {
  diagnostics.unsubscribe('http.server.response.finish', onFinish);
  await hub.close();
  dirs.cleanup();
});

async function call<T>(who: string, name: string, args: Record<string, unknown>): Promise<T> {
  const res = await fetch(`${hub.url}/mcp`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'X-Test-Who': who },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  const text = await res.text();
  const reply = JSON.parse(text.startsWith('{') ? text : (text.split('\n').find((l) => l.startsWith('data: ')) ?? '').slice(6)) as {
    result: { content: Array<{ text: string }>; isError?: boolean };
  };
  expect(reply.result.isError).not.toBe(true);
  return JSON.parse(reply.result.content[0]?.text ?? '') as T;
}

describe('a write and the waits it wakes', () => {
  it('answers the woken palace_event_wait before the palace_event_append that woke it, every time', async () => {
    let tip = (await call<LogEvent>('setup', 'palace_event_append', { type: 'note', stream: 'p', room: 'r', from_agent: 'alice-cli', body: 'start' })).id;
    for (let round = 0; round < 5; round++) {
      finished.length = 0;
      const waiting = call<WaitResult>('waiter', 'palace_event_wait', { to_agent: 'bob-cli', since_event_id: tip, timeout_ms: 10_000 });
      await expect.poll(() => hub.services.stats.waits.active, { timeout: 5_000 }).toBe(1);
      const sent = await call<LogEvent>('appender', 'palace_event_append', { type: 'task.request', stream: 'p', room: 'r', from_agent: 'alice-cli', to_agent: 'bob-cli', body: `job ${round}` });
      const woken = await waiting;
      expect(woken.events.map((e) => e.id)).toEqual([sent.id]);
      expect(finished).toEqual(['waiter', 'appender']);
      tip = sent.id;
    }
  });
});
