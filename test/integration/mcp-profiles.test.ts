// Tool profiles (issue 18): /mcp serves the spec's full set by default; /mcp?profile=lean (and
// `palace mcp` with PALACE_MCP_PROFILE=lean) lists the everyday tools plus palace_tools/palace_call,
// in at most 10 KB of tools/list, and still reaches every tool, validated like a direct call.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Hub } from '../../hub/src/server.js';
import { LEAN_TOOLS } from '../../hub/src/mcp/server/profiles.js';
import { TOOLS } from '../../hub/src/mcp/tools/registry.js';
import { killChildren, makeHubDirs, resultJson, sha256Hex, startChildHub, startTestHub, type HubDirs } from '../helpers/hub.js';
import { closeSessions, stdioSession, toolError } from '../helpers/stdio-client.js';

const LEAN_LIST_MAX_BYTES = 10 * 1024;

let dirs: HubDirs;
let hub: Hub;
const clients: Client[] = [];

async function connect(path: string): Promise<Client> {
  const client = new Client({ name: 'profile-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${hub.url}${path}`)));
  clients.push(client);
  return client;
}

/** The bytes of the tools/list result as a client receives it. */
async function listBytes(client: Client): Promise<{ names: string[]; bytes: number }> {
  const { tools } = await client.listTools();
  return { names: tools.map((t) => t.name), bytes: Buffer.byteLength(JSON.stringify({ tools })) };
}

beforeAll(async () => {
  dirs = makeHubDirs('palace-profile-');
  hub = await startTestHub(dirs);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await hub.close();
  dirs.cleanup();
});

describe('tool profiles over HTTP', () => {
  it('serves every tool by default and says so in the instructions', async () => {
    const client = await connect('/mcp');
    const { names } = await listBytes(client);
    expect(names.sort()).toEqual(TOOLS.map((t) => t.name).sort());
    expect(client.getInstructions()).toMatch(/Tool profile: full/);
  });

  it('lists at most 10 KB on the lean profile: the everyday tools plus palace_tools and palace_call', async () => {
    const client = await connect('/mcp?profile=lean');
    const { names, bytes } = await listBytes(client);
    expect(names.sort()).toEqual([...LEAN_TOOLS, 'palace_call', 'palace_tools'].sort());
    expect(bytes).toBeLessThanOrEqual(LEAN_LIST_MAX_BYTES);
    expect(client.getInstructions()).toMatch(/Tool profile: lean/);
  });

  it('reaches every other tool from the lean profile: discover, then call, validated like a direct call', async () => {
    const client = await connect('/mcp?profile=lean');
    const listed = resultJson<{ tools: Array<{ name: string; writes: boolean }> }>(
      await client.callTool({ name: 'palace_tools', arguments: {} }),
    );
    expect(listed.tools.map((t) => t.name).sort()).toEqual(TOOLS.map((t) => t.name).sort());
    const described = resultJson<{ input_schema: { properties: Record<string, unknown> } }>(
      await client.callTool({ name: 'palace_tools', arguments: { name: 'palace_artifact_put' } }),
    );
    expect(Object.keys(described.input_schema.properties)).toContain('content');

    const content = 'diff --git a/x b/x\n+lean\n';
    const put = resultJson<{ id: string; sha256: string }>(
      await client.callTool({
        name: 'palace_call',
        arguments: { name: 'palace_artifact_put', arguments: { kind: 'patch', created_by: 'lean-agent', content } },
      }),
    );
    expect(put.sha256).toBe(sha256Hex(content));
    const got = resultJson<{ content: string }>(
      await client.callTool({ name: 'palace_call', arguments: { name: 'palace_artifact_get', arguments: { artifact_id: put.id } } }),
    );
    expect(got.content).toBe(content);

    const bad = toolError(
      await client.callTool({ name: 'palace_call', arguments: { name: 'palace_artifact_put', arguments: { kind: 'patch' } } }),
    );
    expect(bad.code).toBe('input.invalid');
    expect(bad.message).toMatch(/palace_artifact_put/);
    const unknown = toolError(await client.callTool({ name: 'palace_call', arguments: { name: 'palace_nope' } }));
    expect(unknown.code).toBe('input.invalid');
    expect(unknown.message).toMatch(/palace_tools/);
  });

  it('refuses an unknown profile with a clear error naming the choices', async () => {
    const res = await fetch(`${hub.url}/mcp?profile=tiny`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('input.invalid');
    expect(body.error.message).toMatch(/full or lean/);
  });
});

describe('tool profiles over stdio', () => {
  afterAll(async () => {
    await closeSessions();
    await killChildren();
  });

  it('palace mcp forwards PALACE_MCP_PROFILE=lean to the live hub, and serves it in-process without one', async () => {
    const stdioDirs = makeHubDirs('palace-profile-stdio-');
    try {
      const local = stdioSession(stdioDirs, { PALACE_MCP_PROFILE: 'lean' });
      await local.connect();
      expect((await listBytes(local.client)).names).toContain('palace_call');
      expect(local.client.getInstructions()).toMatch(/Tool profile: lean/);
      await local.close();

      await startChildHub(stdioDirs);
      const forwarded = stdioSession(stdioDirs, { PALACE_MCP_PROFILE: 'lean' });
      await forwarded.connect();
      const { names, bytes } = await listBytes(forwarded.client);
      expect(names).toContain('palace_tools');
      expect(names).not.toContain('palace_kg_add');
      expect(bytes).toBeLessThanOrEqual(LEAN_LIST_MAX_BYTES);
      await forwarded.close();
    } finally {
      await killChildren();
      stdioDirs.cleanup();
    }
  });
});
