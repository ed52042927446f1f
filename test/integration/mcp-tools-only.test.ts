// A POST that only calls or lists tools is served by a one-request server without resources,
// prompts or completions (building those was most of a stateless tools/call's cost); a POST that
// needs them, alone or in a batch beside a tools/call, still gets them. Real hub on port 0, raw
// JSON-RPC over fetch, and the per-request server driven in-memory by the official SDK client.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { buildServer } from '../../hub/src/mcp/server/build-server.js';
import { toolsOnlyRequest } from '../../hub/src/mcp/server/tool-server.js';
import type { Hub } from '../../hub/src/server.js';
import { makeHubDirs, startTestHub, type HubDirs } from '../helpers/hub.js';

let dirs: HubDirs;
let hub: Hub;

beforeAll(async () => {
  dirs = makeHubDirs('palace-tools-only-');
  hub = await startTestHub(dirs);
});
afterAll(async () => {
  await hub.close();
  dirs.cleanup();
});

interface RpcReply {
  id: number;
  result?: { prompts?: unknown[]; resourceTemplates?: unknown[]; content?: Array<{ text: string }>; isError?: boolean };
  error?: { code: number; message: string };
}

/** POST /mcp with `body`; the JSON-RPC replies (the data lines of the SSE answer, or the JSON body). */
async function post(body: unknown): Promise<RpcReply[]> {
  const res = await fetch(`${hub.url}/mcp`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'MCP-Protocol-Version': '2025-06-18' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  const text = await res.text();
  if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) return [JSON.parse(text) as RpcReply].flat();
  return text
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => JSON.parse(l.slice(6)) as RpcReply);
}

const append = (id: number) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'palace_event_append', arguments: { type: 'note', stream: 'proj', room: 'core', from_agent: 'alice-cli', body: `note ${id}` } },
});

describe('which requests get a tools-only server', () => {
  it('tools/call, tools/list, ping and notifications only; anything else (or nothing known) gets the whole server', () => {
    expect(toolsOnlyRequest([{ method: 'tools/call' }])).toBe(true);
    expect(toolsOnlyRequest([{ method: 'tools/list' }, { method: 'ping' }, { method: 'notifications/cancelled' }])).toBe(true);
    expect(toolsOnlyRequest([{ method: 'tools/call' }, { method: 'prompts/list' }])).toBe(false);
    for (const method of ['initialize', 'resources/read', 'resources/templates/list', 'prompts/get', 'completion/complete', 'resources/subscribe', 'logging/setLevel'])
      expect(toolsOnlyRequest([{ method }])).toBe(false);
    expect(toolsOnlyRequest([{}])).toBe(false);
  });

  it('a tools-only server answers tools and has no prompts or resources; the whole server has both', async () => {
    const connect = async (toolsOnly: boolean): Promise<Client> => {
      const server = buildServer(hub.services, { toolsOnly });
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await server.connect(serverSide);
      const client = new Client({ name: 'tools-only-test', version: '1.0.0' });
      await client.connect(clientSide);
      return client;
    };
    const lean = await connect(true);
    const full = await connect(false);
    try {
      expect((await lean.listTools()).tools.some((t) => t.name === 'palace_event_append')).toBe(true);
      await expect(lean.listPrompts()).rejects.toThrow(/Method not found/);
      await expect(lean.listResourceTemplates()).rejects.toThrow(/Method not found/);
      expect((await full.listPrompts()).prompts.length).toBeGreaterThan(0);
      expect((await full.listResourceTemplates()).resourceTemplates.length).toBeGreaterThan(0);
    } finally {
      await Promise.all([lean.close(), full.close()]);
    }
  });
});

describe('over HTTP', () => {
  it('a tools/call POST is answered', async () => {
    const [reply] = await post(append(1));
    expect(reply?.result?.isError).toBeUndefined();
    expect(JSON.parse(reply?.result?.content?.[0]?.text ?? '{}')).toMatchObject({ type: 'note', body: 'note 1' });
  });

  it('prompts/list and resources/templates/list are answered, alone and batched beside a tools/call', async () => {
    const [prompts] = await post({ jsonrpc: '2.0', id: 2, method: 'prompts/list', params: {} });
    expect(prompts?.result?.prompts?.length).toBeGreaterThan(0);
    const batch = await post([append(3), { jsonrpc: '2.0', id: 4, method: 'resources/templates/list', params: {} }, { jsonrpc: '2.0', id: 5, method: 'prompts/list', params: {} }]);
    const byId = new Map(batch.map((r) => [r.id, r]));
    expect(JSON.parse(byId.get(3)?.result?.content?.[0]?.text ?? '{}')).toMatchObject({ body: 'note 3' });
    expect(byId.get(4)?.result?.resourceTemplates?.length).toBeGreaterThan(0);
    expect(byId.get(5)?.result?.prompts?.length).toBeGreaterThan(0);
  });
});
