// One error shape (issue 33): a schema violation comes back as the same isError result carrying
// {"error":{"code":"input.invalid","message","field"}} as every other tool failure, on every road:
// HTTP /mcp directly, through the lean profile's palace_call, through `palace mcp` over stdio
// (forwarded to a hub and answered in-process) and the CLI's in-process road. The official SDK
// client drives each; no tools.listChanged is advertised (the hub never sends it).

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { HubClientError } from '../../hub/src/client/hub-client.js';
import type { Hub } from '../../hub/src/server.js';
import { connectInProcess } from '../../hub/src/mcp/server/in-process.js';
import {
  connectStdioClient,
  killChildren,
  makeHubDirs,
  startChildHub,
  startTestHub,
  type HubDirs,
} from '../helpers/hub.js';
import { toolError } from '../helpers/stdio-client.js';

/** palace_event_append with `type` a number: the schema refuses it before the handler runs. */
const BAD_APPEND = { type: 42, stream: 's', room: 'r', from_agent: 'typo-agent', body: 'x' };

let dirs: HubDirs;
let hub: Hub;
const clients: Client[] = [];

beforeAll(async () => {
  dirs = makeHubDirs('palace-errshape-');
  hub = await startTestHub(dirs);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await hub.close();
  await killChildren();
  dirs.cleanup();
});

async function http(query = ''): Promise<Client> {
  const client = new Client({ name: 'error-shape-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${hub.url}/mcp${query}`)));
  clients.push(client);
  return client;
}

function expectSchemaError(result: unknown, field: string): void {
  const error = toolError(result) as { code: string; message: string; field?: string };
  expect(error.code).toBe('input.invalid');
  expect(error.field).toBe(field);
  expect(error.message).toMatch(/palace_event_append/);
  expect(error.message).toContain(field);
}

describe('one error shape', () => {
  it('answers a schema violation over HTTP /mcp as the documented isError JSON', async () => {
    const client = await http();
    expectSchemaError(await client.callTool({ name: 'palace_event_append', arguments: BAD_APPEND }), 'type');
    // A missing required argument names it too.
    const missing = toolError(await client.callTool({ name: 'palace_event_ack', arguments: { from_agent: 'a', status: 'claimed' } }));
    expect(missing).toMatchObject({ code: 'input.invalid', field: 'event_id' });
  });

  it('answers an unknown tool in the same shape', async () => {
    const client = await http();
    expect(toolError(await client.callTool({ name: 'palace_no_such_tool', arguments: {} }))).toMatchObject({
      code: 'input.invalid',
      field: 'name',
    });
  });

  it('gives the same answer through palace_call on the lean profile', async () => {
    const client = await http('?profile=lean');
    const direct = toolError(await client.callTool({ name: 'palace_event_append', arguments: BAD_APPEND }));
    const called = toolError(
      await client.callTool({ name: 'palace_call', arguments: { name: 'palace_event_append', arguments: BAD_APPEND } }),
    );
    expect(called).toEqual(direct);
    expect(called).toMatchObject({ code: 'input.invalid', field: 'type' });
  });

  it('advertises no tools.listChanged (the hub never sends it)', async () => {
    const client = await http();
    const caps = client.getServerCapabilities();
    expect(caps?.tools).toBeDefined();
    expect(caps?.tools?.listChanged).toBeUndefined();
  });

  it('gives the same answer on the in-process CLI road', async () => {
    const server = await connectInProcess(hub.services);
    try {
      const error = await server.client.callAny('palace_event_append', BAD_APPEND).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(error).toBeInstanceOf(HubClientError);
      expect((error as HubClientError).code).toBe('input.invalid');
      expect((error as HubClientError).field).toBe('type');
    } finally {
      await server.close();
    }
  });
});

describe('one error shape over stdio', () => {
  it('answers in-process (no hub) and forwarded to a hub the same way', async () => {
    const own = makeHubDirs('palace-errshape-stdio-');
    try {
      const local = await connectStdioClient(own);
      clients.push(local.client);
      const alone = toolError(await local.client.callTool({ name: 'palace_event_append', arguments: BAD_APPEND }));
      expect(alone).toMatchObject({ code: 'input.invalid', field: 'type' });
      await local.client.close();

      const child = await startChildHub(own);
      const forwarded = await connectStdioClient(own);
      clients.push(forwarded.client);
      const viaHub = toolError(await forwarded.client.callTool({ name: 'palace_event_append', arguments: BAD_APPEND }));
      expect(viaHub).toEqual(alone);
      await forwarded.client.close();
      await child.stop(5_000);
    } finally {
      own.cleanup();
    }
  });
});
