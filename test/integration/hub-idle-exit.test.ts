// Idle exit of a real hub process: with PALACE_MCP_IDLE_HOURS=0.0003 (about 1 s) it exits 0 and
// removes its registration; /healthz probes do not keep it alive, MCP requests do.

import { existsSync } from 'node:fs';

import { afterAll, describe, it } from 'vitest';

import { leasePath } from '../../hub/src/lease.js';
import { isPidAlive } from '../../hub/src/registration.js';
import {
  callJson,
  connectHttpClient,
  healthy,
  killChildren,
  makeHubDirs,
  sleep,
  startChildHub,
  type HubDirs,
} from '../helpers/hub.js';

const IDLE_HOURS = '0.0003'; // 1.08 s
// The keep-alive case gets a little more room so a slow spawn cannot use up the first idle period.
const KEEP_ALIVE_IDLE_HOURS = '0.0005'; // 1.8 s
const KEEP_ALIVE_IDLE_MS = 0.0005 * 3_600_000;

// The three cases mostly wait out idle periods: they run at once, each on its own directories and
// hub (so no case's hub can be kept up, or stopped, by another's requests).
const made: HubDirs[] = [];
const freshDirs = (): HubDirs => {
  const dirs = makeHubDirs();
  made.push(dirs);
  return dirs;
};

afterAll(async () => {
  await killChildren();
  for (const dirs of made) dirs.cleanup();
});

/** Resolves with the exit, or rejects after a generous bound so a broken idle timer cannot hang. */
function exitWithin<T>(exited: Promise<T>, ms: number): Promise<T> {
  return Promise.race([
    exited,
    new Promise<T>((_, reject) =>
      setTimeout(() => reject(new Error(`hub did not exit within ${ms} ms`)), ms),
    ),
  ]);
}

describe.concurrent('idle exit', () => {
  it('exits 0 after the idle time and removes its registration and lease; probes do not count', async ({ expect }) => {
    const dirs = freshDirs();
    const hub = await startChildHub(dirs, { env: { PALACE_MCP_IDLE_HOURS: IDLE_HOURS } });
    let probes = 0;
    let probing = true;
    const prober = (async () => {
      while (probing && hub.isRunning()) {
        if (await healthy(hub.url)) probes++;
        await sleep(100);
      }
    })();
    const exit = await exitWithin(hub.exited, 20_000);
    probing = false;
    await prober;
    expect(exit.code).toBe(0);
    expect(probes).toBeGreaterThan(0);
    expect(existsSync(hub.registrationPath)).toBe(false);
    expect(existsSync(leasePath(dirs.palace))).toBe(false);
    expect(isPidAlive(hub.pid)).toBe(false);
    expect(hub.stderr()).toMatch(/no MCP request/);
  });

  it('stays up while MCP requests keep coming, then exits once they stop', async ({ expect }) => {
    const dirs = freshDirs();
    const hub = await startChildHub(dirs, { env: { PALACE_MCP_IDLE_HOURS: KEEP_ALIVE_IDLE_HOURS } });
    const client = await connectHttpClient(hub.url, { name: 'keep-alive' });
    const started = Date.now();
    let calls = 0;
    try {
      // Requests spaced well under the idle time, for more than three idle periods.
      while (Date.now() - started < KEEP_ALIVE_IDLE_MS * 3) {
        await callJson(client, 'palace_status');
        calls++;
        expect(hub.isRunning()).toBe(true);
        await sleep(KEEP_ALIVE_IDLE_MS / 5);
      }
      await callJson(client, 'palace_event_list', {});
      expect(hub.isRunning()).toBe(true);
    } finally {
      await client.close();
    }
    expect(calls).toBeGreaterThanOrEqual(3);
    const exit = await exitWithin(hub.exited, 20_000);
    expect(exit.code).toBe(0);
    expect(existsSync(hub.registrationPath)).toBe(false);
  });

  it('stays up while a client is subscribed on its notification stream (issue 33), then exits once it leaves', async ({ expect }) => {
    const dirs = freshDirs();
    const hub = await startChildHub(dirs, { env: { PALACE_MCP_IDLE_HOURS: KEEP_ALIVE_IDLE_HOURS } });
    const client = await connectHttpClient(hub.url, { name: 'subscriber' });
    await client.subscribeResource({ uri: 'palace://inbox/idle-agent' });
    await sleep(KEEP_ALIVE_IDLE_MS * 3);
    expect(hub.isRunning()).toBe(true);
    await client.close();
    const exit = await exitWithin(hub.exited, 20_000);
    expect(exit.code).toBe(0);
  });
});
