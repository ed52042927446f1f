// The hub serves the built dashboard at /ui: public static files (no token) with a strict CSP, an
// app fallback for client routes, 404s for missing assets and for paths outside the build, the
// Host guard still in force, every data route still behind the token, and a clear 404 when the
// dashboard was never built. The bundle itself carries no Node built-ins.

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { NOT_BUILT } from '../../hub/src/http/routes/ui.js';
import type { Hub } from '../../hub/src/server.js';
import { REPO_ROOT, makeHubDirs, rawRequest, startTestHub, type HubDirs } from '../helpers/hub.js';
import { makeTmpDir } from '../helpers/tmp-dir.js';

const TOKEN = 'f0'.repeat(32);
const UI_DIR = join(REPO_ROOT, 'dist', 'ui');

describe('GET /ui (the dashboard)', () => {
  let dirs: HubDirs;
  let hub: Hub;

  beforeAll(async () => {
    dirs = makeHubDirs('palace-ui-');
    hub = await startTestHub(dirs, { token: TOKEN });
  });

  afterAll(async () => {
    await hub.close();
    dirs.cleanup();
  });

  it('serves index.html without a token, with a same-origin-only CSP', async () => {
    const res = await fetch(`${hub.url}/ui/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toContain("connect-src 'self'");
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('referrer-policy')).toBe('no-referrer');
    expect(res.headers.get('cache-control')).toBe('no-cache');
    const html = await res.text();
    expect(html).toBe(readFileSync(join(UI_DIR, 'index.html'), 'utf8'));
    expect(html).toContain('<div id="root"></div>');
  });

  it('redirects /ui to /ui/ so relative assets resolve', async () => {
    const res = await fetch(`${hub.url}/ui`, { redirect: 'manual' });
    expect(res.status).toBe(308);
    expect(res.headers.get('location')).toBe('/ui/');
  });

  it('serves hashed assets with their type and a long cache, byte for byte', async () => {
    const html = readFileSync(join(UI_DIR, 'index.html'), 'utf8');
    const script = /src="\.\/(assets\/[^"]+\.js)"/.exec(html)?.[1];
    const style = /href="\.\/(assets\/[^"]+\.css)"/.exec(html)?.[1];
    expect(script && style).toBeTruthy();
    const js = await fetch(`${hub.url}/ui/${script}`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(Buffer.from(await js.arrayBuffer()).equals(readFileSync(join(UI_DIR, script as string)))).toBe(
      true,
    );
    const css = await fetch(`${hub.url}/ui/${style}`);
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
  });

  it('answers client routes with the app and missing assets with 404', async () => {
    const route = await fetch(`${hub.url}/ui/tasks`);
    expect(route.status).toBe(200);
    expect(await route.text()).toContain('<div id="root"></div>');
    const missing = await fetch(`${hub.url}/ui/assets/nothing-here.js`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('http.not_found');
  });

  it('never serves a file outside the build directory', async () => {
    for (const path of [
      '/ui/..%2f..%2fpackage.json',
      '/ui/%2e%2e/%2e%2e/package.json',
      '/ui/../../package.json',
      '/ui/%00index.html',
    ]) {
      const res = await rawRequest(hub.url, { path });
      expect(res.status, path).not.toBe(200);
      expect(res.body, path).not.toContain('"name": "palace"');
    }
  });

  it('keeps the Host guard, refuses writes, and keeps every data route behind the token', async () => {
    const foreign = await rawRequest(hub.url, { path: '/ui/', headers: { host: 'evil.example' } });
    expect(foreign.status).toBe(403);
    const post = await fetch(`${hub.url}/ui/`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    for (const path of ['/statusz', '/logstream/stream', '/uix', '/sync/peers'])
      expect((await fetch(`${hub.url}${path}`)).status, path).toBe(401);
    const mcp = await fetch(`${hub.url}/mcp`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
    });
    expect(mcp.status).toBe(401);
  });
});

describe('GET /ui without a build', () => {
  it('answers 404 saying how to build the dashboard', async () => {
    const dirs = makeHubDirs('palace-ui-none-');
    const empty = makeTmpDir('palace-ui-empty-');
    const hub = await startTestHub(dirs, { uiDirs: [empty.path] });
    try {
      for (const path of ['/ui/', '/ui/assets/app.js']) {
        const res = await fetch(`${hub.url}${path}`);
        expect(res.status).toBe(404);
        expect(await res.json()).toEqual({ error: { code: 'http.not_found', message: NOT_BUILT } });
      }
      expect(NOT_BUILT).toBe('dashboard not built: run npm run build:ui');
    } finally {
      await hub.close();
      dirs.cleanup();
      empty.cleanup();
    }
  });
});

describe('the dashboard bundle', () => {
  it("imports no Node built-ins and none of the hub's native modules", () => {
    const assets = readdirSync(join(UI_DIR, 'assets')).filter((f) => f.endsWith('.js'));
    expect(assets.length).toBeGreaterThan(0);
    for (const file of assets) {
      const code = readFileSync(join(UI_DIR, 'assets', file), 'utf8');
      expect(code).not.toMatch(/from\s*["']node:|require\(["']node:|import\(["']node:/);
      expect(code).not.toMatch(/better-sqlite3|@lancedb|onnxruntime|koa/);
    }
  });
});
