// Issue 16 item 4: a web page on another local port must not trigger a pull (or any write) nor read
// the log. Requests are shaped exactly as a browser's "simple" cross-origin request (no preflight:
// text/plain, Origin and Sec-Fetch-* headers) and sent over real sockets to a real tokenless hub.

import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Hub } from '../../hub/src/server.js';
import { makeHubDirs, rawRequest, startTestHub, type HubDirs } from '../helpers/hub.js';

/** What Chromium sends for `fetch(url, {method: 'POST', body: '...'})` from http://localhost:3000. */
function browserSimplePost(origin: string, mode: 'cors' | 'no-cors'): Record<string, string> {
  return {
    Accept: '*/*',
    'Accept-Language': 'en-US,en;q=0.9',
    'Content-Type': 'text/plain;charset=UTF-8',
    Origin: origin,
    Referer: `${origin}/`,
    'Sec-Fetch-Dest': 'empty',
    'Sec-Fetch-Mode': mode,
    'Sec-Fetch-Site': 'same-site',
    'User-Agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36',
  };
}

/** What Chromium sends for a cross-origin `fetch(url)` GET or `new EventSource(url)`. */
function browserGet(origin: string | undefined, site: string, accept = '*/*'): Record<string, string> {
  return {
    Accept: accept,
    ...(origin ? { Origin: origin } : {}),
    'Sec-Fetch-Dest': 'empty',
    'Sec-Fetch-Mode': origin ? 'cors' : 'no-cors',
    'Sec-Fetch-Site': site,
    'User-Agent': 'Mozilla/5.0 Chrome/126.0',
  };
}

const ATTACKER = 'http://localhost:3000';

let dirs: HubDirs;
let hub: Hub;
let peer: Server;
let peerUrl: string;
const peerHits: string[] = [];

beforeAll(async () => {
  dirs = makeHubDirs('palace-edge-origin-');
  hub = await startTestHub(dirs);
  // A "server of the attacker's choice": it records every request the hub makes to it.
  peer = createServer((req: IncomingMessage, res) => {
    peerHits.push(`${req.method} ${req.url}`);
    res.writeHead(500, { 'Content-Type': 'application/json' });
    res.end('{"error":{"code":"internal","message":"no"}}');
  });
  await new Promise<void>((resolve) => peer.listen(0, '127.0.0.1', resolve));
  peerUrl = `http://127.0.0.1:${(peer.address() as AddressInfo).port}`;
}, 60_000);

afterAll(async () => {
  await hub?.close();
  await new Promise<void>((resolve) => (peer ? peer.close(() => resolve()) : resolve()));
  dirs?.cleanup();
});

describe('a page on another localhost port', () => {
  it('cannot make the hub pull from a server of its choice (POST /sync/round as a simple request)', async () => {
    const body = JSON.stringify({ peer: { url: peerUrl } });
    for (const mode of ['cors', 'no-cors'] as const) {
      const res = await rawRequest(hub.url, {
        method: 'POST',
        path: '/sync/round',
        headers: { ...browserSimplePost(ATTACKER, mode), 'Content-Length': String(Buffer.byteLength(body)) },
        body,
      });
      expect(res.status, `${mode}: ${res.body}`).toBe(403);
      expect(JSON.parse(res.body)).toMatchObject({ error: { code: 'auth.forbidden' } });
    }
    expect(peerHits).toEqual([]);
  });

  it('cannot append to the log through POST /mcp as a simple request', async () => {
    const before = hub.services.logstream.store.countEvents();
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'palace_event_append', arguments: { type: 'status', stream: 's', room: 'r', from_agent: 'page' } },
    });
    for (const origin of [ATTACKER, 'http://127.0.0.1:5500', 'http://[::1]:8080']) {
      const res = await rawRequest(hub.url, { method: 'POST', path: '/mcp', headers: browserSimplePost(origin, 'no-cors'), body });
      expect(res.status, origin).toBe(403);
    }
    expect(hub.services.logstream.store.countEvents()).toBe(before);
  });

  it('cannot read the log, the status or the sync surface (Origin sent)', async () => {
    for (const path of ['/statusz', '/logstream/stream', '/sync/version_vector', '/sync/ops?origin=x&after=0', '/sync/peers', '/healthz']) {
      const res = await rawRequest(hub.url, { path, headers: browserGet(ATTACKER, 'same-site') });
      expect(res.status, path).toBe(403);
      expect(JSON.parse(res.body), path).toMatchObject({ error: { code: 'auth.forbidden' } });
    }
  });

  it('is refused on Sec-Fetch-Site cross-site/same-site when no Origin is sent (no-cors GET, <script>, <img>)', async () => {
    for (const site of ['same-site', 'cross-site']) {
      for (const path of ['/statusz', '/sync/peers', '/logstream/stream']) {
        const res = await rawRequest(hub.url, { path, headers: browserGet(undefined, site) });
        expect(res.status, `${site} ${path}`).toBe(403);
      }
      // Framing the dashboard from another site is refused as well.
      const framed = await rawRequest(hub.url, {
        path: '/ui/',
        headers: { 'Sec-Fetch-Site': site, 'Sec-Fetch-Mode': 'navigate', 'Sec-Fetch-Dest': 'iframe' },
      });
      expect(framed.status, `${site} iframe`).toBe(403);
    }
  });
});

describe('state-changing routes need Content-Type: application/json', () => {
  it('refuses text/plain, form and multipart bodies with 415 even without an Origin (curl, old browsers)', async () => {
    const before = hub.services.logstream.store.countEvents();
    const append = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'palace_event_append', arguments: { type: 'status', stream: 's', room: 'r', from_agent: 'form' } },
    });
    const cases: [string, string, string][] = [
      ['/mcp', append, 'text/plain;charset=UTF-8'],
      ['/mcp', append, 'application/x-www-form-urlencoded'],
      ['/mcp', append, 'multipart/form-data; boundary=x'],
      ['/mcp', append, 'application/jsonx'],
      ['/sync/round', JSON.stringify({ peer: { url: peerUrl } }), 'text/plain'],
      ['/cypher', JSON.stringify({ cypher: 'MATCH (n) RETURN n LIMIT 1' }), 'text/plain'],
    ];
    for (const [path, body, type] of cases) {
      const res = await rawRequest(hub.url, { method: 'POST', path, headers: { 'Content-Type': type }, body });
      expect(res.status, `${path} ${type}: ${res.body}`).toBe(415);
      expect(JSON.parse(res.body), path).toMatchObject({ error: { code: 'http.unsupported_media_type' } });
    }
    const noType = await rawRequest(hub.url, { method: 'POST', path: '/sync/round', body: '{}' });
    expect(noType.status).toBe(415);
    const patch = await rawRequest(hub.url, {
      method: 'PATCH',
      path: '/memory/drawer_does_not_exist',
      headers: { 'Content-Type': 'text/plain' },
      body: '{"wing":"moved"}',
    });
    expect(patch.status).toBe(415);
    expect(hub.services.logstream.store.countEvents()).toBe(before);
    expect(peerHits).toEqual([]);
  });

  it('still answers 405 (not 415) for a method a path does not take', async () => {
    const res = await rawRequest(hub.url, { method: 'DELETE', path: '/mcp' });
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('POST');
    const post = await rawRequest(hub.url, { method: 'POST', path: '/statusz', headers: { 'Content-Type': 'text/plain' }, body: '{}' });
    expect(post.status).toBe(405);
  });
});

describe("the hub's own origin", () => {
  it('passes with JSON: the dashboard at /ui on 127.0.0.1 or localhost, same port', async () => {
    const init = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'ui', version: '0' } },
    });
    for (const origin of [`http://127.0.0.1:${hub.port}`, `http://localhost:${hub.port}`]) {
      const res = await rawRequest(hub.url, {
        method: 'POST',
        path: '/mcp',
        headers: {
          Origin: origin,
          'Sec-Fetch-Site': 'same-origin',
          'Sec-Fetch-Mode': 'cors',
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
        },
        body: init,
      });
      expect(res.status, origin).toBe(200);
      expect(res.body).toContain('serverInfo');
    }
    // Same-origin GETs carry no Origin, only Sec-Fetch-Site: same-origin; a typed URL is "none".
    for (const site of ['same-origin', 'none']) {
      const res = await rawRequest(hub.url, { path: '/statusz', headers: { 'Sec-Fetch-Site': site } });
      expect(res.status, site).toBe(200);
    }
    // A link followed from another site opens the dashboard as a top-level page.
    const link = await rawRequest(hub.url, {
      path: '/statusz',
      headers: { 'Sec-Fetch-Site': 'cross-site', 'Sec-Fetch-Mode': 'navigate', 'Sec-Fetch-Dest': 'document' },
    });
    expect(link.status).toBe(200);
  });

  it('is exact: the same host on another port or scheme is another origin', async () => {
    for (const origin of [`http://127.0.0.1:${hub.port + 1}`, `https://127.0.0.1:${hub.port}`, 'http://localhost', 'http://127.0.0.1']) {
      const res = await rawRequest(hub.url, { path: '/statusz', headers: { Origin: origin } });
      expect(res.status, origin).toBe(403);
    }
  });
});
