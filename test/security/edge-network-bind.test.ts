// Issue 17 item 14, network binds: the banner's auth line on an insecure network hub, the client
// configuration a network hub prints (a name remote clients can dial, which the hub then accepts),
// and the Host allowlist, enforced on every bind (Spec Auth §7), not only on loopback.

import { hostname, networkInterfaces } from 'node:os';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { Hub } from '../../hub/src/server.js';
import { killChildren, makeHubDirs, rawRequest, startChildHub, startTestHub, type HubDirs } from '../helpers/hub.js';

const TOKEN = '5a'.repeat(32);

let dirs: HubDirs;
let hubs: Hub[];

beforeEach(() => {
  dirs = makeHubDirs('palace-edge-bind-');
  hubs = [];
});

afterEach(async () => {
  for (const hub of hubs) await hub.close();
  await killChildren();
  dirs.cleanup();
});

/** A non-internal IPv4 address of this machine, if it has one. */
function lanAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces()))
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  return undefined;
}

describe('palace serve on 0.0.0.0', () => {
  it('with --allow-insecure says auth is none because of --allow-insecure, not "(loopback)"', async () => {
    const hub = await startChildHub(dirs, { args: ['--host', '0.0.0.0', '--port', '0', '--allow-insecure'] });
    const banner = hub.stdout();
    expect(banner).toMatch(/auth\s*:\s*NONE \(--allow-insecure/);
    expect(banner).not.toMatch(/auth\s*:\s*none \(loopback\)/);
    expect(banner).toMatch(/listening: .*\(network-exposed\)/);
    await hub.stop();
  });

  it("prints client configuration with the machine's host name, which the hub accepts as Host", async () => {
    const hub = await startChildHub(dirs, {
      args: ['--host', '0.0.0.0', '--port', '0'],
      env: { PALACE_MCP_HTTP_TOKEN: TOKEN },
    });
    const printed = hub.stdout();
    const remote = `http://${hostname().toLowerCase()}:${hub.port}`;
    expect(printed).toContain(`claude mcp add --transport http palace ${remote}/mcp`);
    expect(printed).toContain(`url = "${remote}/mcp"`);
    expect(printed).not.toContain(`127.0.0.1:${hub.port}/mcp`);
    // The printed address works: the hub accepts that Host (and refuses a name it does not own).
    const ok = await rawRequest(hub.url, {
      path: '/statusz',
      headers: { host: `${hostname()}:${hub.port}`, Authorization: `Bearer ${TOKEN}` },
    });
    expect(ok.status, ok.body).toBe(200);
    await hub.stop();
  });
});

describe('Host allowlist on a non-loopback bind', () => {
  it('refuses a foreign Host on 0.0.0.0 even with the right token (DNS rebinding onto a LAN hub)', async () => {
    const hub = await startTestHub(dirs, { host: '0.0.0.0', token: TOKEN });
    hubs.push(hub);
    const auth = { Authorization: `Bearer ${TOKEN}` };
    for (const host of ['evil.example', `evil.example:${hub.port}`, `attacker.test:${hub.port}`]) {
      const res = await rawRequest(hub.url, { path: '/statusz', headers: { ...auth, host } });
      expect(res.status, host).toBe(403);
      expect(JSON.parse(res.body)).toMatchObject({ error: { code: 'auth.forbidden' } });
      const health = await rawRequest(hub.url, { path: '/healthz', headers: { host } });
      expect(health.status, `healthz ${host}`).toBe(403);
    }
    const own = [`127.0.0.1:${hub.port}`, `localhost:${hub.port}`, `${hostname()}:${hub.port}`];
    const lan = lanAddress();
    if (lan) own.push(`${lan}:${hub.port}`);
    for (const host of own) {
      const res = await rawRequest(hub.url, { path: '/statusz', headers: { ...auth, host } });
      expect(res.status, host).toBe(200);
    }
  });

  it('accepts a proxy name listed in PALACE_MCP_EXTRA_ALLOWED_HOSTS on 0.0.0.0', async () => {
    const hub = await startTestHub(dirs, {
      host: '0.0.0.0',
      token: TOKEN,
      env: { PALACE_MCP_EXTRA_ALLOWED_HOSTS: 'palace.example.com' },
    });
    hubs.push(hub);
    const res = await rawRequest(hub.url, {
      path: '/statusz',
      headers: { host: 'palace.example.com', Authorization: `Bearer ${TOKEN}` },
    });
    expect(res.status).toBe(200);
  });

  it('on a bind to one LAN address, accepts that address and the host name, not loopback names', async () => {
    const lan = lanAddress();
    if (!lan) return; // no LAN interface on this machine: nothing to bind to
    const hub = await startTestHub(dirs, { host: lan, token: TOKEN });
    hubs.push(hub);
    const url = `http://${lan}:${hub.port}`;
    const auth = { Authorization: `Bearer ${TOKEN}` };
    expect((await rawRequest(url, { path: '/statusz', headers: { ...auth, host: `${lan}:${hub.port}` } })).status).toBe(200);
    expect((await rawRequest(url, { path: '/statusz', headers: { ...auth, host: `${hostname()}:${hub.port}` } })).status).toBe(200);
    expect((await rawRequest(url, { path: '/statusz', headers: { ...auth, host: 'evil.example' } })).status).toBe(403);
    expect((await rawRequest(url, { path: '/statusz', headers: { ...auth, host: `localhost:${hub.port}` } })).status).toBe(403);
  });
});
