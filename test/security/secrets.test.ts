// Secrets stay secret, against real child hubs: the bearer token (and a peer's sync token) never
// appears in the hub's log, /statusz, /sync/peers, tool results, error messages or any process's
// command line; a generated token is printed once, and the token and registration files are 0600
// in a 0700 directory.

import { readFileSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { tokenPath } from '../../hub/src/registration.js';
import {
  connectHttpClient,
  connectStdioClient,
  killChildren,
  makeHubDirs,
  startChildHub,
  waitUntil,
  type HubDirs,
} from '../helpers/hub.js';
import { writePeers } from '../helpers/sync.js';

const TOKEN = '5ec2e7'.repeat(10) + 'abcd';
const PEER_TOKEN = 'beefcafe'.repeat(8);
const MCP_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
  await killChildren();
});

function dirsFor(prefix: string): HubDirs {
  const dirs = makeHubDirs(prefix);
  cleanups.push(() => dirs.cleanup());
  return dirs;
}

function cmdline(pid: number): string {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
}

function mode(path: string): number {
  return statSync(path).mode & 0o777;
}

describe('secrets', () => {
  it('never shows the token or a peer token in logs, status, mesh, errors or command lines', async () => {
    const dirs = dirsFor('palace-secrets-');
    writePeers(dirs.palace, [{ name: 'far', url: 'http://127.0.0.1:9/', token: PEER_TOKEN }]);
    const hub = await startChildHub(dirs, {
      env: { PALACE_MCP_HTTP_TOKEN: TOKEN, PALACE_SYNC_INTERVAL: '0.2' },
    });
    const auth = { Authorization: `Bearer ${TOKEN}` };
    const seen: string[] = [];

    // Successful reads of every place that describes the hub.
    for (const path of ['/statusz', '/sync/peers', '/healthz']) {
      const res = await fetch(`${hub.url}${path}`, { headers: auth });
      expect(res.status, path).toBe(200);
      seen.push(`${path}: ${await res.text()}`);
    }
    // Failures: wrong token, token in the wrong scheme, a foreign Origin carrying the token.
    for (const headers of [
      { Authorization: `Bearer ${TOKEN.slice(0, -2)}zz` },
      { Authorization: `Basic ${TOKEN}` },
      { Authorization: TOKEN },
      { ...auth, Origin: 'http://evil.example' },
    ]) {
      for (const path of ['/statusz', '/sync/peers', '/mcp']) {
        const res = await fetch(`${hub.url}${path}`, {
          method: path === '/mcp' ? 'POST' : 'GET',
          headers: { ...MCP_HEADERS, ...headers },
          body: path === '/mcp' ? '{}' : undefined,
        });
        expect([401, 403], path).toContain(res.status);
        seen.push(`${path} ${res.status}: ${await res.text()}`);
      }
    }
    // Tool calls with bad arguments, and the tools that describe the hub.
    const client = await connectHttpClient(hub.url, { token: TOKEN, name: 'secrets-probe' });
    cleanups.push(() => client.close());
    for (const [name, args] of [
      ['palace_event_append', { type: 42, body: null }],
      ['palace_event_ack', { event_id: 'evt_nope', from_agent: 'x', status: 'claimed' }],
      ['palace_artifact_get', { artifact_id: 'art_20200101T000000_000000000000' }],
      ['palace_status', {}],
      ['palace_mesh_peers', {}],
      ['palace_no_such_tool', {}],
    ] as const) {
      try {
        const result = await client.callTool({ name, arguments: args });
        seen.push(`${name}: ${JSON.stringify(result)}`);
      } catch (err) {
        seen.push(`${name} threw: ${(err as Error).message}`);
      }
    }
    // The stdio proxy gets the token from the environment too, and forwards with it.
    const stdio = await connectStdioClient(dirs, { env: { PALACE_MCP_HTTP_TOKEN: TOKEN } });
    cleanups.push(() => stdio.client.close());
    const status = await stdio.client.callTool({ name: 'palace_status', arguments: {} });
    expect(status.isError ?? false).toBe(false);
    seen.push(`stdio palace_status: ${JSON.stringify(status)}`);
    const proxyPid = stdio.transport.pid;
    expect(proxyPid).toBeTypeOf('number');
    seen.push(`proxy cmdline: ${cmdline(proxyPid ?? -1)}`);
    // Let a few sync rounds against the unreachable peer fail and get logged.
    await waitUntil(async () => {
      const res = await fetch(`${hub.url}/sync/peers`, { headers: auth });
      const text = await res.text();
      return /"error"|reachable":false/.test(text) ? text : undefined;
    }, 'the unreachable peer to be reported');
    seen.push(`hub cmdline: ${cmdline(hub.pid)}`);
    seen.push(`proxy stderr: ${stdio.stderr()}`);
    await stdio.client.close();
    await client.close();
    await hub.stop();
    seen.push(`hub stderr: ${hub.stderr()}`, `hub stdout: ${hub.stdout()}`);

    const all = seen.join('\n');
    expect(all).toContain('/statusz');
    expect(all).not.toContain(TOKEN.slice(0, 32));
    expect(all).not.toContain(PEER_TOKEN);
  }, 120_000);

  it('prints a generated token once, and keeps it and the registration 0600 in a 0700 directory', async () => {
    const dirs = dirsFor('palace-token-file-');
    const first = await startChildHub(dirs, { args: ['--host', '0.0.0.0', '--port', '0'] });
    const file = tokenPath(dirs.palaceHome, first.registration.palace_path);
    const token = readFileSync(file, 'utf8').trim();
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(mode(file)).toBe(0o600);
    expect(mode(first.registrationPath)).toBe(0o600);
    expect(mode(dirname(file))).toBe(0o700);
    expect(dirname(first.registrationPath)).toBe(dirname(file));
    expect(cmdline(first.pid)).not.toContain(token);
    const statusz = await fetch(`${first.url}/statusz`, { headers: { Authorization: `Bearer ${token}` } });
    expect(statusz.status).toBe(200);
    expect(await statusz.text()).not.toContain(token);
    await first.stop();
    // Shown once: in the one startup banner on stdout (its token line and the ready-to-paste configs).
    expect(first.stdout().match(/^palace hub$/gm)).toHaveLength(1);
    expect(first.stdout().match(new RegExp(`token +: ${token}`, 'g'))).toHaveLength(1);
    expect(first.stderr()).not.toContain(token);

    // A restart reuses the stored token and does not print it again.
    const second = await startChildHub(dirs, { args: ['--host', '0.0.0.0', '--port', '0'] });
    const again = await fetch(`${second.url}/statusz`, { headers: { Authorization: `Bearer ${token}` } });
    expect(again.status).toBe(200);
    await again.body?.cancel();
    await second.stop();
    expect(second.stdout() + second.stderr()).not.toContain(token);
    expect(mode(file)).toBe(0o600);
    expect(mode(dirname(file))).toBe(0o700);
  }, 90_000);
});
