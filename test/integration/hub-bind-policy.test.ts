// Non-loopback binds: refused without a token (startHub), allowed with --allow-insecure, and `palace
// serve` and `palace-mcp --transport http` (the entry serve wraps, same behaviour) generating a 64-hex token stored 0600 under
// $PALACE_HOME/server/<key>/token, printed once with client config and reused silently afterwards.

import { existsSync, readFileSync, statSync } from 'node:fs';
import { hostname } from 'node:os';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { leasePath } from '../../hub/src/lease.js';
import { registrationPath, serverDir, tokenPath } from '../../hub/src/registration.js';
import { rejectedHubError } from '../helpers/errors.js';
import {
  connectHttpClient,
  healthy,
  killChildren,
  makeHubDirs,
  startChildHub,
  startTestHub,
  type HubDirs,
} from '../helpers/hub.js';

let dirs: HubDirs;

beforeEach(() => {
  dirs = makeHubDirs();
});

afterEach(async () => {
  await killChildren();
  dirs.cleanup();
});

describe('non-loopback bind without a token', () => {
  it('makes startHub reject with hub.config and leaves nothing behind', async () => {
    const error = await rejectedHubError(startTestHub(dirs, { host: '0.0.0.0' }));
    expect(error.code).toBe('hub.config');
    expect(error.message).toMatch(/token/i);
    expect(error.message).toMatch(/--allow-insecure/);
    expect(existsSync(registrationPath(dirs.palaceHome, dirs.palace))).toBe(false);
    expect(existsSync(leasePath(dirs.palace))).toBe(false);
    // Nothing holds the palace: a normal hub starts right after.
    const hub = await startTestHub(dirs);
    expect(await healthy(hub.url)).toBe(true);
    await hub.close();
  });

  it('`palace-mcp --transport http --host 0.0.0.0` behaves as `palace serve`: it generates, stores and enforces a token', async () => {
    const hub = await startChildHub(dirs, { command: 'palace-mcp-http', args: ['--host', '0.0.0.0', '--port', '0'] });
    const path = tokenPath(dirs.palaceHome, dirs.palace);
    expect(existsSync(path)).toBe(true);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const token = readFileSync(path, 'utf8').trim();
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(hub.stdout()).toContain(`Authorization: Bearer ${token}`);
    expect((await fetch(`${hub.url}/statusz`)).status).toBe(401);
    expect((await fetch(`${hub.url}/statusz`, { headers: { Authorization: `Bearer ${token}` } })).status).toBe(200);
    expect((await hub.stop()).code).toBe(0);
  });

  it('starts `palace-mcp --transport http` with --allow-insecure and serves without a token', async () => {
    const hub = await startChildHub(dirs, {
      command: 'palace-mcp-http',
      args: ['--host', '0.0.0.0', '--port', '0', '--allow-insecure'],
    });
    expect(hub.registration.host).toBe('0.0.0.0');
    expect((await fetch(`${hub.url}/statusz`)).status).toBe(200);
    expect(existsSync(tokenPath(dirs.palaceHome, dirs.palace))).toBe(false);
    await hub.stop();
  });
});

describe('palace serve on a non-loopback bind', () => {
  it('generates, stores and prints a token once, then reuses it silently', async () => {
    const first = await startChildHub(dirs, { args: ['--host', '0.0.0.0', '--port', '0'] });
    const path = tokenPath(dirs.palaceHome, dirs.palace);
    expect(path.startsWith(serverDir(dirs.palaceHome, dirs.palace))).toBe(true);
    expect(existsSync(path)).toBe(true);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(serverDir(dirs.palaceHome, dirs.palace)).mode & 0o777).toBe(0o700);
    const token = readFileSync(path, 'utf8').trim();
    expect(token).toMatch(/^[0-9a-f]{64}$/);

    const printed = first.stdout();
    expect(printed.split(token).length - 1).toBeGreaterThanOrEqual(1);
    expect(printed).toContain(path);
    // Remote clients get the machine's name, not 127.0.0.1.
    expect(printed).toContain(`http://${hostname().toLowerCase()}:${first.port}/mcp`);
    expect(printed).toMatch(/claude mcp add --transport http palace/);
    expect(printed).toContain(`Authorization: Bearer ${token}`);
    expect(printed).toMatch(/mcpServers/);

    // The token is enforced, and it never leaks into /statusz or the registration file.
    expect((await fetch(`${first.url}/statusz`)).status).toBe(401);
    const status = await fetch(`${first.url}/statusz`, { headers: { Authorization: `Bearer ${token}` } });
    expect(status.status).toBe(200);
    expect(await status.text()).not.toContain(token);
    expect(readFileSync(first.registrationPath, 'utf8')).not.toContain(token);
    const client = await connectHttpClient(first.url, { token });
    expect((await client.listTools()).tools.length).toBeGreaterThanOrEqual(8);
    await client.close();
    expect((await first.stop()).code).toBe(0);

    const second = await startChildHub(dirs, { args: ['--host', '0.0.0.0', '--port', '0'] });
    expect(readFileSync(path, 'utf8').trim()).toBe(token);
    expect(second.stdout()).toMatch(/auth\s*:\s*bearer token/);
    expect(second.stdout()).not.toContain(token);
    expect(second.stderr()).not.toContain(token);
    expect(
      (await fetch(`${second.url}/statusz`, { headers: { Authorization: `Bearer ${token}` } })).status,
    ).toBe(200);
    expect((await fetch(`${second.url}/statusz`)).status).toBe(401);
    await second.stop();
  });

  it('uses PALACE_MCP_HTTP_TOKEN instead of generating one', async () => {
    const token = '12'.repeat(32);
    const hub = await startChildHub(dirs, {
      args: ['--host', '0.0.0.0', '--port', '0'],
      env: { PALACE_MCP_HTTP_TOKEN: token },
    });
    expect(existsSync(tokenPath(dirs.palaceHome, dirs.palace))).toBe(false);
    expect(hub.stdout()).not.toContain(token);
    expect(
      (await fetch(`${hub.url}/statusz`, { headers: { Authorization: `Bearer ${token}` } })).status,
    ).toBe(200);
    await hub.stop();
  });

  it('generates no token for a loopback bind', async () => {
    const hub = await startChildHub(dirs);
    expect(existsSync(tokenPath(dirs.palaceHome, dirs.palace))).toBe(false);
    expect((await fetch(`${hub.url}/statusz`)).status).toBe(200);
    expect(hub.stdout()).toMatch(/auth\s*:\s*none/);
    await hub.stop();
  });
});
