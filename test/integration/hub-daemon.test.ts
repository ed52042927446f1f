// `palace daemon start|status|stop` with real processes: a detached hub comes up on port 0,
// status reports it (exit 0), stop ends it cleanly, and status afterwards exits 1.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { leasePath } from '../../hub/src/lease.js';
import { isPidAlive, readLiveRegistration, registrationPath } from '../../hub/src/registration.js';
import {
  PALACE_BIN,
  childEnv,
  healthy,
  killChildren,
  makeHubDirs,
  spawnNode,
  waitUntil,
  type HubDirs,
} from '../helpers/hub.js';

let dirs: HubDirs;

async function palace(
  args: readonly string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = spawnNode(PALACE_BIN, ['--palace', dirs.palace, ...args], childEnv(dirs), 60_000);
  const exit = await proc.exited;
  return { code: exit.code, stdout: proc.stdout(), stderr: proc.stderr() };
}

beforeEach(() => {
  dirs = makeHubDirs();
});

afterEach(async () => {
  await killChildren();
  // The daemon is detached from the test: end it by its registered pid if a test failed midway.
  const live = readLiveRegistration(dirs.palaceHome, dirs.palace);
  if (live) {
    process.kill(live.pid, 'SIGTERM');
    await waitUntil(() => !isPidAlive(live.pid), 'the daemon to stop', 10_000).catch(() =>
      process.kill(live.pid, 'SIGKILL'),
    );
  }
  dirs.cleanup();
});

describe('palace daemon', () => {
  it('starts a background hub, reports it, stops it, and reports it gone', async () => {
    const started = await palace(['daemon', 'start', '--port', '0', '--json']);
    expect(started.code, started.stderr).toBe(0);
    const info = JSON.parse(started.stdout) as { running: boolean; url: string; pid: number; log: string };
    expect(info.running).toBe(true);
    expect(info.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(info.log).toBe(join(dirs.palaceHome, 'logs', 'hub.log'));
    expect(isPidAlive(info.pid)).toBe(true);
    expect(await healthy(info.url)).toBe(true);
    expect(readLiveRegistration(dirs.palaceHome, dirs.palace)).toMatchObject({ pid: info.pid });

    // A second start finds it rather than starting another.
    const again = await palace(['daemon', 'start', '--port', '0', '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ running: true, already: true, pid: info.pid });

    const status = await palace(['daemon', 'status', '--json']);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({
      running: true,
      healthy: true,
      url: info.url,
      pid: info.pid,
      read_only: false,
    });
    const human = await palace(['daemon', 'status']);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(info.url);

    const stopped = await palace(['daemon', 'stop', '--json']);
    expect(stopped.code).toBe(0);
    expect(JSON.parse(stopped.stdout)).toMatchObject({ running: false, stopped: info.pid });
    expect(isPidAlive(info.pid)).toBe(false);
    expect(existsSync(registrationPath(dirs.palaceHome, dirs.palace))).toBe(false);
    expect(existsSync(leasePath(dirs.palace))).toBe(false);
    expect(await healthy(info.url)).toBe(false);
    expect(readFileSync(info.log, 'utf8')).toMatch(/hub listening on/);

    const after = await palace(['daemon', 'status', '--json']);
    expect(after.code).toBe(1);
    expect(JSON.parse(after.stdout)).toMatchObject({ running: false });

    const stopAgain = await palace(['daemon', 'stop']);
    expect(stopAgain.code).toBe(0);
    expect(stopAgain.stdout).toMatch(/Not running/);
  });

  it('reports status exit 1 when no hub was ever started', async () => {
    const status = await palace(['daemon', 'status']);
    expect(status.code).toBe(1);
    expect(status.stdout).toMatch(/Not running/);
  });
});
