// The tray's hub supervisor with real child processes: a crash loop backs off exponentially up to
// its cap, the backoff resets only after a hub stayed up, a clean exit (the idle shutdown) is
// restarted too and the new address is followed through the registration file, a live hub is
// adopted, and stop() ends the child and cancels restarts. The hub's output lands in a rotating log.

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import {
  isPidAlive,
  readLiveRegistration,
  registrationPath,
  type Registration,
} from '../../hub/src/registration.js';
import { watchHubFiles, type HubFileWatcher } from '../../main/file-watchers.js';
import { createRotatingLog } from '../../main/rotating-log.js';
import { HubSupervisor, type SupervisorStatus } from '../../main/supervisor.js';
import {
  PALACE_BIN,
  childEnv,
  killChildren,
  makeHubDirs,
  sleep,
  startChildHub,
  waitUntil,
  type HubDirs,
} from '../helpers/hub.js';
import { makeTmpDir, type TmpDir } from '../helpers/tmp-dir.js';

let cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
  await killChildren();
});

function track(supervisor: HubSupervisor): SupervisorStatus[] {
  const seen: SupervisorStatus[] = [];
  supervisor.onChange((s) => seen.push(s));
  cleanups.push(() => supervisor.stop());
  return seen;
}

/** The delays of the restarts scheduled so far, in order. */
function delays(seen: SupervisorStatus[]): number[] {
  return seen
    .filter((s) => s.state === 'error' && s.nextRestartMs !== null)
    .map((s) => s.nextRestartMs as number);
}

/**
 * A stand-in hub: a real Node process that reads a run counter, and on the runs listed in `healthyRuns`
 * serves /healthz and writes a registration for `stayMs` before exiting with code 1; other runs die at once.
 */
function fakeHub(
  tmp: TmpDir,
  healthyRuns: number[],
  stayMs: number,
): { args: string[]; registration: () => Registration | undefined } {
  const counter = join(tmp.path, 'runs');
  const regFile = join(tmp.path, 'serverinfo.json');
  writeFileSync(counter, '0');
  const script = `
    const fs = require('node:fs');
    const run = Number(fs.readFileSync(${JSON.stringify(counter)}, 'utf8')) + 1;
    fs.writeFileSync(${JSON.stringify(counter)}, String(run));
    if (!${JSON.stringify(healthyRuns)}.includes(run)) { console.error('palace: crash number ' + run); process.exit(1); }
    const server = require('node:http').createServer((req, res) => res.end('ok'));
    server.listen(0, '127.0.0.1', () => {
      const reg = { pid: process.pid, host: '127.0.0.1', port: server.address().port, scheme: 'http' };
      fs.writeFileSync(${JSON.stringify(regFile)}, JSON.stringify(reg));
      setTimeout(() => process.exit(1), ${stayMs});
    });`;
  return {
    args: ['-e', script],
    registration: () => {
      try {
        const r = JSON.parse(readFileSync(regFile, 'utf8')) as Registration;
        return isPidAlive(r.pid) ? r : undefined;
      } catch {
        return undefined;
      }
    },
  };
}

describe('HubSupervisor', () => {
  it('restarts a crash loop with exponential backoff capped at maxMs, and says why', async () => {
    const tmp = makeTmpDir('palace-sup-');
    cleanups.push(() => tmp.cleanup());
    const hub = fakeHub(tmp, [], 0);
    const supervisor = new HubSupervisor({
      command: process.execPath,
      args: hub.args,
      readRegistration: hub.registration,
      backoff: { initialMs: 20, maxMs: 80 },
    });
    const seen = track(supervisor);
    supervisor.start();
    await waitUntil(() => delays(seen).length >= 6, 'six scheduled restarts');
    expect(delays(seen).slice(0, 6)).toEqual([20, 40, 80, 80, 80, 80]);
    const last = seen.filter((s) => s.state === 'error').at(-1) as SupervisorStatus;
    expect(last.lastExit).toEqual({ code: 1, signal: null });
    expect(last.message).toMatch(/exited with code 1: palace: crash number \d+; restarting in \d+ ms/);
    expect(supervisor.status().restarts).toBeGreaterThanOrEqual(5);

    await supervisor.stop();
    expect(supervisor.status()).toMatchObject({ state: 'stopped', nextRestartMs: null, pid: null });
    const runs = Number(readFileSync(join(tmp.path, 'runs'), 'utf8'));
    await sleep(300); // longer than any pending backoff: nothing may start after stop()
    expect(Number(readFileSync(join(tmp.path, 'runs'), 'utf8'))).toBe(runs);
  });

  it('resets the backoff only after the hub stayed up for stableAfterMs', async () => {
    const tmp = makeTmpDir('palace-sup-');
    cleanups.push(() => tmp.cleanup());
    // Runs 1-3 crash at once, run 4 is healthy for 1.5 s then crashes, runs 5+ crash at once.
    const hub = fakeHub(tmp, [4], 1_500);
    const supervisor = new HubSupervisor({
      command: process.execPath,
      args: hub.args,
      readRegistration: hub.registration,
      backoff: { initialMs: 20, maxMs: 1_000 },
      stableAfterMs: 300,
      healthEveryMs: 100,
    });
    const seen = track(supervisor);
    supervisor.start();
    await waitUntil(() => delays(seen).length >= 6, 'six scheduled restarts', 30_000);
    // 20, 40, 80 for the quick crashes; run 4 was up long enough, so its exit starts again at 20.
    expect(delays(seen).slice(0, 6)).toEqual([20, 40, 80, 20, 40, 80]);
    expect(seen.some((s) => s.state === 'running' && s.url !== null)).toBe(true);
  });

  it('restarts a hub that exits cleanly (idle shutdown) and follows it to its new address', async () => {
    const dirs: HubDirs = makeHubDirs('palace-sup-hub-');
    cleanups.push(() => dirs.cleanup());
    const log = createRotatingLog({ path: join(dirs.palaceHome, 'logs', 'hub.log') });
    cleanups.push(() => log.close());
    const readRegistration = (): Registration | undefined =>
      readLiveRegistration(dirs.palaceHome, dirs.palace);
    const moves: (Registration | undefined)[] = [];
    const regWatcher: HubFileWatcher = await watchHubFiles({
      registrationPath: registrationPath(dirs.palaceHome, dirs.palace),
      peersPath: join(dirs.palace, 'peers.json'),
      readRegistration,
      onHubMoved: (r) => moves.push(r),
      onPeersChanged: () => undefined,
    });
    cleanups.push(() => regWatcher.close());

    // About one second without an MCP request and the hub exits with code 0.
    const supervisor = new HubSupervisor({
      command: process.execPath,
      args: [PALACE_BIN, '--palace', dirs.palace, 'serve', '--port', '0'],
      env: childEnv(dirs, { PALACE_MCP_IDLE_HOURS: '0.0003' }),
      readRegistration,
      log,
      backoff: { initialMs: 50, maxMs: 500 },
      healthEveryMs: 100,
    });
    const seen = track(supervisor);
    supervisor.start();
    const first = await waitUntil(() => seen.find((s) => s.state === 'running'), 'the hub to run', 30_000);
    const cleanExit = await waitUntil(() => seen.find((s) => s.state === 'error'), 'the idle exit', 30_000);
    expect(cleanExit.lastExit).toEqual({ code: 0, signal: null });
    expect(cleanExit.message).toContain('exited cleanly');
    const second = await waitUntil(
      () => seen.find((s) => s.state === 'running' && s.pid !== first.pid),
      'the restarted hub to run',
      30_000,
    );
    const reg = readRegistration();
    expect(reg?.pid).toBe(second.pid);
    expect(second.url).toBe(`http://127.0.0.1:${reg?.port}`);
    expect(second.restarts).toBe(1);
    // The file watcher saw the new hub too, with the same address.
    await waitUntil(() => moves.some((m) => m?.pid === second.pid), 'the watcher to report the new hub');
    expect(moves.find((m) => m?.pid === second.pid)?.port).toBe(reg?.port);

    await supervisor.stop();
    expect(isPidAlive(second.pid as number)).toBe(false);
    expect(readRegistration()).toBeUndefined();
    const text = readFileSync(log.path, 'utf8');
    expect(text).toContain('starting hub');
    expect(text).toContain('hub listening on');
    expect(text).toMatch(/hub exited \(code 0/);
  });

  it('adopts a hub that already serves the palace, and stops it on request', async () => {
    const dirs = makeHubDirs('palace-sup-adopt-');
    cleanups.push(() => dirs.cleanup());
    const running = await startChildHub(dirs);
    const supervisor = new HubSupervisor({
      command: process.execPath,
      args: [PALACE_BIN, '--palace', dirs.palace, 'serve', '--port', '0'],
      env: childEnv(dirs),
      readRegistration: () => readLiveRegistration(dirs.palaceHome, dirs.palace),
      healthEveryMs: 100,
    });
    track(supervisor);
    supervisor.start();
    expect(supervisor.status()).toMatchObject({
      state: 'running',
      adopted: true,
      pid: running.pid,
      url: running.url,
    });
    await supervisor.stop();
    await running.exited;
    expect(running.isRunning()).toBe(false);
    expect(supervisor.status().state).toBe('stopped');
  });
});
