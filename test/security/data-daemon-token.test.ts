// `palace daemon start --host 0.0.0.0` with no token: the generated token is printed once, to the
// terminal that ran the command, and never reaches the daemon's log (~/.palace/logs/hub.log), which
// holds the hub's banner and everything it writes later.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { canonicalPalace, isPidAlive, readLiveRegistration, tokenPath } from '../../hub/src/registration.js';
import { PALACE_BIN, childEnv, healthy, killChildren, makeHubDirs, spawnNode, waitUntil, type HubDirs } from '../helpers/hub.js';

let dirs: HubDirs | undefined;

afterEach(async () => {
  await killChildren();
  if (!dirs) return;
  const live = readLiveRegistration(dirs.palaceHome, dirs.palace);
  if (live) {
    process.kill(live.pid, 'SIGTERM');
    await waitUntil(() => !isPidAlive(live.pid), 'the daemon to stop', 10_000).catch(() => process.kill(live.pid, 'SIGKILL'));
  }
  dirs.cleanup();
  dirs = undefined;
});

async function palace(d: HubDirs, args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = spawnNode(PALACE_BIN, ['--palace', d.palace, ...args], childEnv(d), 60_000);
  const exit = await proc.exited;
  return { code: exit.code, stdout: proc.stdout(), stderr: proc.stderr() };
}

function occurrences(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

describe('palace daemon start on a network address', () => {
  it('prints the generated token once to the terminal and never writes it to the log', async () => {
    const d = (dirs = makeHubDirs('palace-daemon-token-'));
    const started = await palace(d, ['daemon', 'start', '--host', '0.0.0.0', '--port', '0']);
    expect(started.code, started.stderr).toBe(0);
    const token = readFileSync(tokenPath(d.palaceHome, canonicalPalace(d.palace)), 'utf8').trim();
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(occurrences(started.stdout, token), started.stdout).toBe(1);
    expect(started.stderr).not.toContain(token);

    const live = readLiveRegistration(d.palaceHome, d.palace);
    expect(live).toBeDefined();
    const url = `http://127.0.0.1:${live?.port}`;
    expect(await healthy(url)).toBe(true);
    // The hub runs with that token: a call without it is refused, with it answered.
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
    expect((await fetch(`${url}/mcp`, { method: 'POST', headers, body })).status).toBe(401);
    const authed = await fetch(`${url}/mcp`, { method: 'POST', headers: { ...headers, Authorization: `Bearer ${token}` }, body });
    expect(authed.status).toBe(200);

    // A second start finds the running hub and shows no token.
    const again = await palace(d, ['daemon', 'start', '--host', '0.0.0.0', '--port', '0']);
    expect(again.code).toBe(0);
    expect(again.stdout).not.toContain(token);

    const stopped = await palace(d, ['daemon', 'stop']);
    expect(stopped.code).toBe(0);
    const log = readFileSync(join(d.palaceHome, 'logs', 'hub.log'), 'utf8');
    expect(log).toContain('palace hub'); // the banner did go to the log
    expect(log).not.toContain(token);
  }, 60_000);
});
