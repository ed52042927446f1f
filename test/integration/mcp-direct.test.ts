// A POST whose body is one JSON-RPC request is served without the SDK's HTTP transport
// (hub/src/http/routes/mcp-direct.ts). It must answer as that transport does: the same response
// (as a JSON body when nothing precedes it, which the spec lets a server choose), progress before the
// result in the SDK's SSE frames, the handler aborted when the client goes away, and every request the
// SDK transport refuses still refused by it. Real hub on port 0, raw fetch and the
// official SDK client over Streamable HTTP.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { LogEvent, WaitResult } from '../../hub/src/core/types.js';
import type { Hub } from '../../hub/src/server.js';
import { callJson, makeHubDirs, resultJson, startTestHub, type HubDirs } from '../helpers/hub.js';

let dirs: HubDirs;
let hub: Hub;

beforeAll(async () => {
  dirs = makeHubDirs('palace-mcp-direct-');
  hub = await startTestHub(dirs, { env: { PALACE_WAIT_PROGRESS_MS: '100' } });
});
afterAll(async () => {
  await hub.close();
  dirs.cleanup();
});

const HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': '2025-06-18' };

interface Reply {
  status: number;
  headers: Headers;
  text: string;
  /** The JSON-RPC messages in the SSE data lines (or the JSON body). */
  messages: Array<{ id?: number; method?: string; result?: { content: Array<{ text: string }>; isError?: boolean }; error?: { code: number; message: string } }>;
}

async function post(body: unknown, headers: Record<string, string> = HEADERS, signal?: AbortSignal): Promise<Reply> {
  const res = await fetch(`${hub.url}/mcp`, { method: 'POST', headers, body: JSON.stringify(body), ...(signal ? { signal } : {}) });
  const text = await res.text();
  const sse = (res.headers.get('content-type') ?? '').includes('text/event-stream');
  const messages = sse
    ? text
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => JSON.parse(l.slice(6)) as Reply['messages'][number])
    : ([JSON.parse(text)].flat() as Reply['messages']);
  return { status: res.status, headers: res.headers, text, messages };
}

const call = (id: number, name: string, args: Record<string, unknown>, meta?: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) },
});

const note = (body: string) => ({ type: 'note', stream: 'proj', room: 'core', from_agent: 'alice-cli', body });

describe('one JSON-RPC request per POST, served without the SDK transport', () => {
  it('answers with the same JSON-RPC response as the SDK transport (a batch of one), as a JSON body when nothing precedes it', async () => {
    const direct = await post(call(1, 'palace_event_list', { stream: ['nothing-here'] }));
    const viaSdk = await post([call(1, 'palace_event_list', { stream: ['nothing-here'] })]);
    expect(direct.status).toBe(200);
    expect(viaSdk.status).toBe(200);
    expect(viaSdk.headers.get('content-type')).toBe('text/event-stream');
    expect(direct.headers.get('content-type')).toBe('application/json');
    expect(Number(direct.headers.get('content-length'))).toBe(Buffer.byteLength(direct.text));
    expect(direct.messages).toEqual(viaSdk.messages);
    expect(JSON.parse(direct.messages[0]?.result?.content[0]?.text ?? '')).toMatchObject({ events: [], count: 0 });
  });

  it('writes a tool error and an unknown method as the SDK does (isError result; JSON-RPC -32601)', async () => {
    const bad = await post(call(2, 'palace_event_append', { type: 'note' }));
    expect(bad.messages).toHaveLength(1);
    expect(bad.messages[0]?.result?.isError).toBe(true);
    expect(JSON.parse(bad.messages[0]?.result?.content[0]?.text ?? '')).toMatchObject({ error: { code: 'input.invalid' } });
    const unknown = await post({ jsonrpc: '2.0', id: 3, method: 'no/such/method' });
    const unknownSdk = await post([{ jsonrpc: '2.0', id: 3, method: 'no/such/method' }]);
    expect(unknown.messages).toEqual(unknownSdk.messages);
    expect(unknown.messages[0]?.error?.code).toBe(-32601);
  });

  it('streams progress notifications before the result', async () => {
    const appended = await post(call(4, 'palace_event_append', note('cursor')));
    const tip = (JSON.parse(appended.messages[0]?.result?.content[0]?.text ?? '') as LogEvent).id;
    const waited = await post(call(5, 'palace_event_wait', { to_agent: 'nobody', since_event_id: tip, timeout_ms: 450 }, { progressToken: 'p1' }));
    // Notifications first: the reply is the SDK transport's SSE stream (its headers), the response last.
    expect(waited.headers.get('content-type')).toBe('text/event-stream');
    expect(waited.headers.get('cache-control')).toBe('no-cache, no-transform');
    expect(waited.text.startsWith('event: message\ndata: ')).toBe(true);
    const methods = waited.messages.map((m) => m.method ?? 'response');
    expect(methods.at(-1)).toBe('response');
    expect(methods.filter((m) => m === 'notifications/progress').length).toBeGreaterThanOrEqual(2);
    expect(JSON.parse(waited.messages.at(-1)?.result?.content[0]?.text ?? '')).toMatchObject({ timed_out: true });
  });

  it('ends the wait (its handler aborted, its slot freed) when the client goes away', async () => {
    const controller = new AbortController();
    const pending = post(call(6, 'palace_event_wait', { to_agent: 'nobody', timeout_ms: 60_000, since_event_id: hub.services.logstream.tipId() ?? undefined }), HEADERS, controller.signal).catch(
      (err: Error) => err,
    );
    await expect.poll(() => hub.services.stats.waits.active, { timeout: 5_000 }).toBe(1);
    controller.abort();
    expect(await pending).toBeInstanceOf(Error);
    await expect.poll(() => hub.services.stats.waits.active, { timeout: 5_000 }).toBe(0);
  });

  it('leaves to the SDK transport what it refuses: Accept, protocol version, a message its schema rejects', async () => {
    const accept = await post(call(7, 'palace_event_list', {}), { ...HEADERS, Accept: 'application/json' });
    expect(accept.status).toBe(406);
    const version = await post(call(8, 'palace_event_list', {}), { ...HEADERS, 'MCP-Protocol-Version': '1999-01-01' });
    expect(version.status).toBe(400);
    expect(version.text).toMatch(/Unsupported protocol version/);
    const extraKey = await post({ ...call(9, 'palace_event_list', {}), extra: true });
    expect(extraKey.status).toBe(400);
    expect(extraKey.messages[0]?.error?.code).toBe(-32700);
  });

  it('serves the official SDK client (a wait woken by an append from another client)', async () => {
    const connect = async (): Promise<Client> => {
      const client = new Client({ name: 'direct-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${hub.url}/mcp`)));
      return client;
    };
    const [waiter, appender] = [await connect(), await connect()];
    try {
      const tip = hub.services.logstream.tipId() ?? undefined;
      const waiting = waiter.callTool({ name: 'palace_event_wait', arguments: { to_agent: 'bob-cli', since_event_id: tip, timeout_ms: 10_000 } });
      await expect.poll(() => hub.services.stats.waits.active, { timeout: 5_000 }).toBe(1);
      const sent = await callJson<LogEvent>(appender, 'palace_event_append', { ...note('for bob'), to_agent: 'bob-cli' });
      const woken = resultJson<WaitResult>(await waiting);
      expect(woken.timed_out).toBe(false);
      expect(woken.events.map((e) => e.id)).toEqual([sent.id]);
    } finally {
      await Promise.all([waiter.close(), appender.close()]);
    }
  });
});
