// The hub's HTTP defences over real sockets: bearer auth on /mcp, /statusz and /logstream/stream
// (not /healthz), the Host/Origin DNS-rebinding guard, 404/405 shapes, the 16 MiB body cap and
// JSON-RPC parse errors. Raw node:http is used where the Host header or Content-Length must lie.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { Hub } from '../../hub/src/server.js';
import {
  connectHttpClient,
  makeHubDirs,
  openStream,
  rawRequest,
  startTestHub,
  type HubDirs,
} from '../helpers/hub.js';

const TOKEN = 'c0ffee'.repeat(10) + 'beef';
const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
});
const MCP_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

let dirs: HubDirs;
let hubs: Hub[];

async function hubWith(options: Parameters<typeof startTestHub>[1] = {}): Promise<Hub> {
  const hub = await startTestHub(dirs, options);
  hubs.push(hub);
  return hub;
}

beforeEach(() => {
  dirs = makeHubDirs();
  hubs = [];
});

afterEach(async () => {
  for (const hub of hubs) await hub.close();
  dirs.cleanup();
});

describe('bearer token', () => {
  it('protects /statusz, /logstream/stream and /mcp, but not /healthz', async () => {
    const hub = await hubWith({ token: TOKEN });
    expect(TOKEN).toMatch(/^[0-9a-f]{64}$/);

    const health = await fetch(`${hub.url}/healthz`);
    expect(health.status).toBe(200);
    expect((await health.text()).trim()).toBe('ok');

    for (const auth of [undefined, 'Bearer wrong-token', `Bearer ${TOKEN}x`, TOKEN, `Basic ${TOKEN}`]) {
      const headers: Record<string, string> = auth ? { Authorization: auth } : {};
      const status = await fetch(`${hub.url}/statusz`, { headers });
      expect(status.status, `statusz with ${String(auth)}`).toBe(401);
      expect(status.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(await status.json()).toMatchObject({ error: { code: 'auth.unauthorized' } });

      const stream = await openStream(hub.url, { headers });
      expect(stream.status, `stream with ${String(auth)}`).toBe(401);
      await stream.response.body?.cancel();

      const mcp = await fetch(`${hub.url}/mcp`, {
        method: 'POST',
        headers: { ...MCP_HEADERS, ...headers },
        body: INIT,
      });
      expect(mcp.status, `mcp with ${String(auth)}`).toBe(401);
      await mcp.body?.cancel();
    }

    const good = { Authorization: `Bearer ${TOKEN}` };
    const status = await fetch(`${hub.url}/statusz`, { headers: good });
    expect(status.status).toBe(200);
    expect(await status.json()).toMatchObject({ server: { name: 'palace' } });

    const stream = await openStream(hub.url, { headers: good });
    expect(stream.status).toBe(200);
    await stream.reader?.close();

    const mcp = await fetch(`${hub.url}/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, ...good },
      body: INIT,
    });
    expect(mcp.status).toBe(200);
    expect(await mcp.text()).toContain('"serverInfo"');
  });

  it('lets the SDK client in only with the right token', async () => {
    const hub = await hubWith({ token: TOKEN });
    await expect(connectHttpClient(hub.url)).rejects.toThrow();
    await expect(connectHttpClient(hub.url, { token: 'nope' })).rejects.toThrow();
    const client = await connectHttpClient(hub.url, { token: TOKEN });
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('palace_status');
    } finally {
      await client.close();
    }
  });

  it('takes the token from PALACE_MCP_HTTP_TOKEN', async () => {
    const hub = await hubWith({ env: { PALACE_MCP_HTTP_TOKEN: TOKEN } });
    expect(hub.token).toBe(TOKEN);
    expect((await fetch(`${hub.url}/statusz`)).status).toBe(401);
    expect(
      (await fetch(`${hub.url}/statusz`, { headers: { Authorization: `Bearer ${TOKEN}` } })).status,
    ).toBe(200);
  });
});

describe('DNS-rebinding guard', () => {
  it('refuses a foreign Host header on a loopback bind and accepts loopback names', async () => {
    const hub = await hubWith();
    for (const path of ['/healthz', '/statusz']) {
      const evil = await rawRequest(hub.url, { path, headers: { host: 'evil.example' } });
      expect(evil.status, path).toBe(403);
      expect(JSON.parse(evil.body)).toMatchObject({ error: { code: 'auth.forbidden' } });
    }
    const evilWithPort = await rawRequest(hub.url, {
      path: '/healthz',
      headers: { host: `evil.example:${hub.port}` },
    });
    expect(evilWithPort.status).toBe(403);
    const evilMcp = await rawRequest(hub.url, {
      method: 'POST',
      path: '/mcp',
      headers: { host: 'evil.example', ...MCP_HEADERS },
      body: INIT,
    });
    expect(evilMcp.status).toBe(403);

    for (const host of [`localhost:${hub.port}`, `127.0.0.1:${hub.port}`, 'localhost', `[::1]:${hub.port}`]) {
      const ok = await rawRequest(hub.url, { path: '/healthz', headers: { host } });
      expect(ok.status, host).toBe(200);
      expect(ok.body.trim()).toBe('ok');
    }
  });

  it('accepts hosts listed in PALACE_MCP_EXTRA_ALLOWED_HOSTS', async () => {
    const hub = await hubWith({
      env: { PALACE_MCP_EXTRA_ALLOWED_HOSTS: 'palace.internal, proxy.example:8443' },
    });
    for (const host of [
      'palace.internal',
      `palace.internal:${hub.port}`,
      'PALACE.INTERNAL',
      'proxy.example:8443',
    ]) {
      const res = await rawRequest(hub.url, { path: '/healthz', headers: { host } });
      expect(res.status, host).toBe(200);
    }
    const mcp = await rawRequest(hub.url, {
      method: 'POST',
      path: '/mcp',
      headers: { host: 'palace.internal', ...MCP_HEADERS },
      body: INIT,
    });
    expect(mcp.status).toBe(200);
    // A host:port entry allows exactly that pair.
    expect((await rawRequest(hub.url, { path: '/healthz', headers: { host: 'proxy.example' } })).status).toBe(
      403,
    );
    expect((await rawRequest(hub.url, { path: '/healthz', headers: { host: 'other.example' } })).status).toBe(
      403,
    );
  });

  it("refuses every Origin but the hub's own (a page on another loopback port included)", async () => {
    const hub = await hubWith();
    const evil = await fetch(`${hub.url}/healthz`, { headers: { Origin: 'http://evil.example' } });
    expect(evil.status).toBe(403);
    expect(await evil.json()).toMatchObject({ error: { code: 'auth.forbidden' } });
    const evilMcp = await fetch(`${hub.url}/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, Origin: 'https://evil.example' },
      body: INIT,
    });
    expect(evilMcp.status).toBe(403);
    const garbage = await fetch(`${hub.url}/healthz`, { headers: { Origin: 'not a url' } });
    expect(garbage.status).toBe(403);

    for (const origin of ['http://localhost:1234', 'http://127.0.0.1', 'http://[::1]:9999']) {
      const other = await fetch(`${hub.url}/healthz`, { headers: { Origin: origin } });
      expect(other.status, origin).toBe(403);
    }
    for (const origin of [`http://localhost:${hub.port}`, `http://127.0.0.1:${hub.port}`, `http://[::1]:${hub.port}`]) {
      const ok = await fetch(`${hub.url}/mcp`, {
        method: 'POST',
        headers: { ...MCP_HEADERS, Origin: origin },
        body: INIT,
      });
      expect(ok.status, origin).toBe(200);
      await ok.body?.cancel();
    }
  });

  it("accepts an Origin named in PALACE_MCP_EXTRA_ALLOWED_HOSTS (a proxy's public name)", async () => {
    const hub = await hubWith({ env: { PALACE_MCP_EXTRA_ALLOWED_HOSTS: 'palace.example.com' } });
    const res = await fetch(`${hub.url}/statusz`, { headers: { Origin: 'https://palace.example.com' } });
    expect(res.status).toBe(200);
    await res.body?.cancel();
  });
});

describe('routes and bodies', () => {
  it('answers 404 JSON for an unknown route and 405 with Allow for a wrong method', async () => {
    const hub = await hubWith();
    const missing = await fetch(`${hub.url}/nope`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toMatch(/application\/json/);
    expect(await missing.json()).toMatchObject({ error: { code: 'http.not_found' } });

    const getMcp = await fetch(`${hub.url}/mcp`, { headers: { Accept: 'text/event-stream' } });
    expect(getMcp.status).toBe(405);
    expect(getMcp.headers.get('allow')).toBe('POST');
    expect(await getMcp.json()).toMatchObject({ error: { code: 'http.method_not_allowed' } });

    const deleteMcp = await fetch(`${hub.url}/mcp`, { method: 'DELETE' });
    expect(deleteMcp.status).toBe(405);
    expect(deleteMcp.headers.get('allow')).toBe('POST');

    const postStatus = await fetch(`${hub.url}/statusz`, { method: 'POST', body: '{}' });
    expect(postStatus.status).toBe(405);
    expect(postStatus.headers.get('allow')).toContain('GET');
  });

  it('refuses a declared body over 16 MiB with 413 before reading it', async () => {
    const hub = await hubWith();
    const res = await rawRequest(hub.url, {
      method: 'POST',
      path: '/mcp',
      headers: { ...MCP_HEADERS, 'Content-Length': String(16 * 1024 * 1024 + 1) },
      body: '{"jsonrpc":"2.0"',
      endBody: false,
    });
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
  });

  it('refuses a streamed (chunked) body that grows past 16 MiB with 413', async () => {
    const hub = await hubWith();
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    const body = Buffer.concat([
      Buffer.from('['),
      ...Array.from({ length: 17 }, () => chunk),
      Buffer.from(']'),
    ]);
    const res = await rawRequest(hub.url, {
      method: 'POST',
      path: '/mcp',
      headers: { ...MCP_HEADERS, 'Transfer-Encoding': 'chunked' },
      body,
    });
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toMatchObject({ error: { code: -32600 } });
  });

  it('answers malformed JSON with 400 and JSON-RPC -32700', async () => {
    const hub = await hubWith();
    const res = await fetch(`${hub.url}/mcp`, {
      method: 'POST',
      headers: MCP_HEADERS,
      body: '{"jsonrpc": "2.0", "id": 1, "method": ',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    // The hub is still fine afterwards.
    expect((await fetch(`${hub.url}/healthz`)).status).toBe(200);
  });

  it('answers a notification with 202 and no body', async () => {
    const hub = await hubWith();
    const res = await fetch(`${hub.url}/mcp`, {
      method: 'POST',
      headers: MCP_HEADERS,
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    expect(res.status).toBe(202);
    expect(await res.text()).toBe('');
  });
});
