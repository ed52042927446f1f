// The security matrix: every HTTP route the hub's Koa router serves (enumerated from the router
// itself, so a new route without a row here fails) x {no token, wrong token, foreign Host, foreign
// Origin, another local origin, cross-site fetch without Origin, non-JSON body, right token}, on a
// writer hub and a read-only hub; and every tool of the registry on the read-only hub (mutating ones
// hidden from tools/list and refused) and without a token (401).

import { request as httpRequest, type OutgoingHttpHeaders } from 'node:http';

import type Router from '@koa/router';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { createApp } from '../../hub/src/http/app.js';
import type { Hub } from '../../hub/src/server.js';
import { MUTATING_TOOLS, TOOLS } from '../../hub/src/mcp/tools/registry.js';
import { connectHttpClient, makeHubDirs, startTestHub, type HubDirs } from '../helpers/hub.js';

const TOKEN = 'a1b2c3d4'.repeat(8);
const WRONG = 'f0e1d2c3'.repeat(8);

/** How a route answers: public routes need no token; mutating ones are refused on a read-only hub. */
interface RouteRow {
  public?: boolean;
  mutating?: boolean;
  body?: string;
  headers?: Record<string, string>;
}

const MCP_INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'matrix', version: '0' } },
});
const MCP_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
const JSON_HEADERS = { 'Content-Type': 'application/json' };

/** One row per METHOD + router path. Keep it in step with hub/src/http/: the test below enforces it. */
const ROUTES: Record<string, RouteRow> = {
  'GET /healthz': { public: true },
  'GET /statusz': {},
  'POST /mcp': { body: MCP_INIT, headers: MCP_HEADERS },
  // A session's notification stream and its end (issue 33); without a session id both answer 405.
  'GET /mcp': { headers: { Accept: 'text/event-stream' } },
  'DELETE /mcp': {},
  'GET /logstream/stream': { headers: { Accept: 'text/event-stream' } },
  'GET /sync/version_vector': {},
  'GET /sync/ops': {},
  'GET /sync/artifact': {},
  'GET /sync/artifacts': {},
  // Memory replication feeds (issue 34): a hub's shared-wing heads for a puller, and one feed's page.
  'GET /sync/memory/heads': {},
  'GET /sync/memory/page': {},
  'GET /sync/peers': {},
  'POST /sync/round': { mutating: true, body: '{}', headers: JSON_HEADERS },
  'POST /cypher': { body: JSON.stringify({ cypher: 'MATCH (n) RETURN n LIMIT 1' }), headers: JSON_HEADERS },
  'GET /list': {},
  'PATCH /memory/:id': { mutating: true, body: JSON.stringify({ wing: 'moved' }), headers: JSON_HEADERS },
  'GET /graph': {},
  'GET /stats': {},
  'GET /status/fast': {},
};

/** Paths served by middleware outside the router, probed as well. */
const EXTRA_PATHS: Record<string, RouteRow> = {
  'GET /ui/': { public: true },
  'PUT /mcp': {},
  'PATCH /mcp': {},
  'GET /no-such-route': {},
};

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** METHOD + path of every layer of the hub's Koa router (HEAD and exotic verbs left out). */
function routerRoutes(hub: Hub): string[] {
  const app = createApp({
    hub: hub.services,
    token: TOKEN,
    allowedHosts: () => new Set(),
    ownOrigins: () => new Set(),
    status: () => ({}),
    sse: { clients: 0 },
  });
  const dispatch = app.middleware.find((mw) => (mw as { router?: Router }).router);
  const router = (dispatch as { router?: Router } | undefined)?.router;
  if (!router) throw new Error('the hub app has no @koa/router dispatch middleware');
  const out: string[] = [];
  for (const layer of router.stack)
    for (const method of layer.methods)
      if (METHODS.includes(method)) out.push(`${method} ${String(layer.path)}`);
  return out;
}

interface Answer {
  status: number;
  body: string;
  wwwAuthenticate: string | undefined;
}

/** Sends one request and resolves on the response head (+ a short body; SSE streams are cut off). */
function probe(url: string, key: string, row: RouteRow, headers: OutgoingHttpHeaders): Promise<Answer> {
  const [method, rawPath] = key.split(' ') as [string, string];
  const path = rawPath.replace(':id', 'drawer_does_not_exist');
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.hostname,
        port: Number(target.port),
        method,
        path,
        headers: { ...row.headers, ...headers },
        setHost: headers.host === undefined,
      },
      (res) => {
        const chunks: Buffer[] = [];
        const done = (): void => {
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
            wwwAuthenticate: res.headers['www-authenticate'],
          });
          req.destroy();
        };
        if (String(res.headers['content-type']).startsWith('text/event-stream')) return done();
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', done);
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.setTimeout(30_000, () => req.destroy(new Error(`${key} timed out`)));
    if (row.body !== undefined) req.write(row.body);
    req.end();
  });
}

function errorCode(answer: Answer): string | undefined {
  try {
    return (JSON.parse(answer.body) as { error?: { code?: string } }).error?.code;
  } catch {
    return undefined;
  }
}

let writerDirs: HubDirs;
let readerDirs: HubDirs;
let writer: Hub;
let reader: Hub;

beforeAll(async () => {
  writerDirs = makeHubDirs('palace-matrix-');
  readerDirs = makeHubDirs('palace-matrix-ro-');
  writer = await startTestHub(writerDirs, { token: TOKEN });
  reader = await startTestHub(readerDirs, { token: TOKEN, readOnly: true });
}, 60_000);

afterAll(async () => {
  await writer?.close();
  await reader?.close();
  writerDirs?.cleanup();
  readerDirs?.cleanup();
});

describe('HTTP route matrix', () => {
  it('has a row for every route the router serves, and no stale rows', () => {
    expect(new Set(routerRoutes(writer))).toEqual(new Set(Object.keys(ROUTES)));
  });

  const rows = { ...ROUTES, ...EXTRA_PATHS };
  for (const which of ['writer', 'read-only'] as const) {
    const hubOf = (): Hub => (which === 'writer' ? writer : reader);

    it(`${which} hub: no token and a wrong token get 401 (public paths excepted)`, async () => {
      for (const [key, row] of Object.entries(rows)) {
        for (const auth of [undefined, `Bearer ${WRONG}`, WRONG, `Bearer ${TOKEN.slice(0, -1)}`]) {
          const answer = await probe(hubOf().url, key, row, auth ? { Authorization: auth } : {});
          const label = `${key} with ${auth ?? 'no token'}`;
          if (row.public) {
            expect(answer.status, label).toBe(200);
          } else {
            expect(answer.status, label).toBe(401);
            expect(errorCode(answer), label).toBe('auth.unauthorized');
            expect(answer.wwwAuthenticate, label).toMatch(/^Bearer/);
          }
        }
      }
    }, 120_000);

    it(`${which} hub: a foreign Host or a foreign Origin gets 403, with or without the right token`, async () => {
      const auth = { Authorization: `Bearer ${TOKEN}` };
      for (const [key, row] of Object.entries(rows)) {
        for (const [label, headers] of [
          ['foreign Host + token', { ...auth, host: `evil.example:${hubOf().port}` }],
          ['foreign Host, no token', { host: 'evil.example' }],
          ['foreign Origin + token', { ...auth, Origin: 'http://evil.example' }],
          ['unparsable Origin + token', { ...auth, Origin: 'null' }],
          ['foreign Origin, no token', { Origin: 'https://attacker.test' }],
        ] as const) {
          const answer = await probe(hubOf().url, key, row, headers);
          expect(answer.status, `${key}: ${label}`).toBe(403);
          expect(errorCode(answer), `${key}: ${label}`).toBe('auth.forbidden');
        }
      }
    }, 120_000);

    it(`${which} hub: a page of another origin (another local port, same host on another port, or a cross-site fetch without Origin) gets 403, even with the right token`, async () => {
      const auth = { Authorization: `Bearer ${TOKEN}` };
      const port = hubOf().port;
      for (const [key, row] of Object.entries(rows)) {
        for (const [label, headers] of [
          ['Origin http://localhost:3000', { ...auth, Origin: 'http://localhost:3000', 'Sec-Fetch-Site': 'same-site' }],
          ['Origin of the next port', { ...auth, Origin: `http://127.0.0.1:${port + 1}` }],
          ['Origin https on the same port', { ...auth, Origin: `https://127.0.0.1:${port}` }],
          ['no Origin, Sec-Fetch-Site cross-site', { ...auth, 'Sec-Fetch-Site': 'cross-site', 'Sec-Fetch-Mode': 'no-cors' }],
          ['no Origin, Sec-Fetch-Site same-site', { ...auth, 'Sec-Fetch-Site': 'same-site', 'Sec-Fetch-Mode': 'cors' }],
        ] as const) {
          const answer = await probe(hubOf().url, key, row, headers);
          expect(answer.status, `${key}: ${label}`).toBe(403);
          expect(errorCode(answer), `${key}: ${label}`).toBe('auth.forbidden');
        }
      }
    }, 120_000);

    it(`${which} hub: every state-changing route refuses a non-JSON body with 415; reads ignore the type`, async () => {
      const auth = { Authorization: `Bearer ${TOKEN}`, Origin: `http://localhost:${hubOf().port}` };
      for (const [key, row] of Object.entries(rows)) {
        for (const type of ['text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=b', undefined]) {
          const headers = { ...row.headers, ...auth };
          delete (headers as Record<string, string>)['Content-Type'];
          const answer = await probe(hubOf().url, key, { ...row, headers }, type ? { 'Content-Type': type } : {});
          const label = `${key} with ${type ?? 'no Content-Type'}`;
          if (key === 'DELETE /mcp' && type === undefined) {
            // MCP's end of session is a DELETE with no body and no type: it reaches the route (405 without a session id).
            expect(answer.status, label).toBe(405);
          } else if (key in ROUTES && !key.startsWith('GET ')) {
            expect(answer.status, label).toBe(415);
            expect(errorCode(answer), label).toBe('http.unsupported_media_type');
          } else {
            expect(answer.status, label).not.toBe(415);
            expect([401, 403, 500], `${label} -> ${answer.status}`).not.toContain(answer.status);
          }
        }
      }
    }, 120_000);

    it(`${which} hub: the right token passes the guards${which === 'read-only' ? '; mutating routes are refused' : ''}`, async () => {
      const auth = { Authorization: `Bearer ${TOKEN}`, Origin: `http://127.0.0.1:${hubOf().port}` };
      for (const [key, row] of Object.entries(rows)) {
        const answer = await probe(hubOf().url, key, row, auth);
        if (which === 'read-only' && row.mutating) {
          expect(answer.status, key).toBe(403);
          expect(errorCode(answer), key).toBe('hub.read_only');
        } else {
          expect([401, 403], `${key} -> ${answer.status} ${answer.body.slice(0, 200)}`).not.toContain(
            answer.status,
          );
          expect(answer.status, `${key} never an internal error`).not.toBe(500);
        }
      }
    }, 120_000);
  }
});

describe('tool matrix', () => {
  let readerClient: Client;
  let writerClient: Client;
  beforeAll(async () => {
    readerClient = await connectHttpClient(reader.url, { token: TOKEN, name: 'matrix-ro' });
    writerClient = await connectHttpClient(writer.url, { token: TOKEN, name: 'matrix-rw' });
  });
  afterAll(async () => {
    await readerClient?.close();
    await writerClient?.close();
  });

  it('lists every registry tool on the writer hub and only the non-mutating ones on the read-only hub', async () => {
    const all = new Set((await writerClient.listTools()).tools.map((t) => t.name));
    expect(all).toEqual(new Set(TOOLS.map((t) => t.name)));
    const kept = new Set((await readerClient.listTools()).tools.map((t) => t.name));
    expect(kept).toEqual(new Set(TOOLS.filter((t) => !t.mutating).map((t) => t.name)));
    expect(MUTATING_TOOLS.size).toBeGreaterThan(0);
  });

  it('refuses every mutating tool on the read-only hub with hub.read_only and writes nothing', async () => {
    const before = reader.services.logstream.store.countEvents();
    for (const name of MUTATING_TOOLS) {
      const res = await fetch(`${reader.url}/mcp`, {
        method: 'POST',
        headers: { ...MCP_HEADERS, Authorization: `Bearer ${TOKEN}` },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 7,
          method: 'tools/call',
          params: { name, arguments: {} },
        }),
      });
      // The one error shape (issue 33): an isError tool result, not a JSON-RPC error.
      const body = (await res.json()) as { id: unknown; result?: { isError?: boolean; content: Array<{ text: string }> } };
      expect(body.id, name).toBe(7);
      expect(body.result?.isError, name).toBe(true);
      expect((JSON.parse(body.result?.content[0]?.text ?? '{}') as { error?: { code?: string } }).error?.code, name).toBe('hub.read_only');
    }
    expect(reader.services.logstream.store.countEvents()).toBe(before);
  });

  it('answers 401 to every tools/call without the token or with a wrong one', async () => {
    for (const tool of TOOLS) {
      for (const headers of [{}, { Authorization: `Bearer ${WRONG}` }] as Record<string, string>[]) {
        const res = await fetch(`${writer.url}/mcp`, {
          method: 'POST',
          headers: { ...MCP_HEADERS, ...headers },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'tools/call',
            params: { name: tool.name, arguments: {} },
          }),
        });
        expect(res.status, tool.name).toBe(401);
        await res.body?.cancel();
      }
    }
  });
});
