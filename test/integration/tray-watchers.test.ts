// The tray's watchers on real files and a real hub: chokidar follows the registration file (a hub
// restarted on another port) and peers.json; the task watcher reports task.requests for this
// machine's agents once, never for history, and counts the unclaimed ones; the hub log rotates.

import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { createHubClient } from '../../hub/src/client/hub-client.js';
import type { LogEvent } from '../../hub/src/core/types.js';
import { readLiveRegistration, writeRegistration, type Registration } from '../../hub/src/registration.js';
import { isLocalAgent } from '../../main/config.js';
import { watchHubFiles } from '../../main/file-watchers.js';
import { createRotatingLog } from '../../main/rotating-log.js';
import { TaskWatcher } from '../../main/task-watcher.js';
import { makeHubDirs, startTestHub, waitUntil, type HubDirs } from '../helpers/hub.js';
import { makeTmpDir } from '../helpers/tmp-dir.js';

let cleanups: (() => Promise<void> | void)[] = [];

afterEach(async () => {
  for (const c of cleanups.reverse()) await c();
  cleanups = [];
});

function registration(dirs: HubDirs, port: number): Registration {
  return {
    pid: process.pid,
    host: '127.0.0.1',
    port,
    scheme: 'http',
    read_only: false,
    version: 'test',
    palace_path: dirs.palace,
    started_at: new Date().toISOString(),
  };
}

describe('watchHubFiles', () => {
  it('reports a hub that registers, moves to another port, and goes away; and every peers.json change', async () => {
    const dirs = makeHubDirs('palace-watch-');
    cleanups.push(() => dirs.cleanup());
    const regPath = writeRegistration(dirs.palaceHome, registration(dirs, 40001));
    rmSync(regPath);
    const moves: (Registration | undefined)[] = [];
    let peerChanges = 0;
    const watcher = await watchHubFiles({
      registrationPath: regPath,
      peersPath: join(dirs.palace, 'peers.json'),
      readRegistration: () => readLiveRegistration(dirs.palaceHome, dirs.palace),
      onHubMoved: (r) => moves.push(r),
      onPeersChanged: () => peerChanges++,
      peersDebounceMs: 20,
    });
    cleanups.push(() => watcher.close());

    writeRegistration(dirs.palaceHome, registration(dirs, 40001));
    await waitUntil(() => moves.length === 1, 'the first registration');
    expect(moves[0]?.port).toBe(40001);

    writeRegistration(dirs.palaceHome, registration(dirs, 40002));
    await waitUntil(() => moves.length === 2, 'the move to another port');
    expect(moves[1]?.port).toBe(40002);

    rmSync(regPath);
    await waitUntil(() => moves.length === 3, 'the hub going away');
    expect(moves[2]).toBeUndefined();

    writeFileSync(
      join(dirs.palace, 'peers.json'),
      JSON.stringify({ peers: [{ name: 'desk', url: 'http://10.0.0.2:8765', token: 't' }] }),
    );
    await waitUntil(() => peerChanges === 1, 'peers.json created');
    writeFileSync(join(dirs.palace, 'peers.json'), JSON.stringify({ peers: [] }));
    await waitUntil(() => peerChanges === 2, 'peers.json changed');
    // The busy files of the palace directory are not peers.json.
    writeFileSync(join(dirs.palace, 'logstream.sqlite3-wal'), 'x');
    writeFileSync(join(dirs.palace, 'peers.json.tmp'), 'x');
    rmSync(join(dirs.palace, 'peers.json'));
    await waitUntil(() => peerChanges === 3, 'peers.json removed');
    expect(moves).toHaveLength(3);
  });
});

describe('TaskWatcher', () => {
  it('notifies each new task.request for a local agent once, and counts the unclaimed ones', async () => {
    const dirs = makeHubDirs('palace-taskwatch-');
    cleanups.push(() => dirs.cleanup());
    const hub = await startTestHub(dirs);
    cleanups.push(() => hub.close());
    const log = hub.services.logstream;
    const request = (to: string, id: string): Promise<LogEvent> =>
      log.append({
        type: 'task.request',
        stream: 'project/x',
        room: 'delegation',
        from_agent: 'desk-claude',
        to_agent: to,
        correlation_id: id,
        body: `Goal: ${id}`,
      });
    const old = await request('box-codex', 'task_old');

    const notified: LogEvent[] = [];
    const waiting: number[] = [];
    const watcher = new TaskWatcher({
      isLocalAgent: (name) => isLocalAgent({ agents: ['ci-runner'], agentPrefix: 'box-' }, name),
      onRequest: (e) => notified.push(e),
      onWaiting: (n) => waiting.push(n),
    });
    cleanups.push(() => watcher.stop());
    await watcher.start(createHubClient({ baseUrl: hub.url }));
    expect(waiting).toEqual([1]); // the old request is waiting, but history is never notified

    const fresh = await request('box-codex', 'task_new');
    await waitUntil(() => notified.length === 1, 'the notification');
    expect(notified[0]?.id).toBe(fresh.id);
    await waitUntil(() => waiting.at(-1) === 2, 'two waiting');

    await request('desk-cursor', 'task_elsewhere');
    const listed = await request('ci-runner', 'task_listed');
    await waitUntil(() => notified.length === 2, 'the listed agent');
    expect(notified.map((e) => e.id)).toEqual([fresh.id, listed.id]);

    await log.ack({ event_id: old.id, from_agent: 'box-codex', status: 'claimed' });
    await waitUntil(() => waiting.at(-1) === 2, 'the claimed one to leave the count');
    expect(waiting).toEqual([1, 2, 3, 2]);
    expect(notified.map((e) => e.id)).not.toContain(old.id);
  });

  it('notifies each new patch on a task a local agent (the human at the desk) requested, once', async () => {
    const dirs = makeHubDirs('palace-taskwatch-patch-');
    cleanups.push(() => dirs.cleanup());
    const hub = await startTestHub(dirs);
    cleanups.push(() => hub.close());
    const log = hub.services.logstream;
    const request = (from: string, id: string): Promise<LogEvent> =>
      log.append({
        type: 'task.request',
        stream: 'project/x',
        room: 'delegation',
        from_agent: from,
        to_agent: 'box-codex',
        correlation_id: id,
      });
    const patch = (id: string) =>
      log.submitPatch({
        correlation_id: id,
        from_agent: 'box-codex',
        content: '--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n',
      });
    await request('human', 'task_mine_old');
    patch('task_mine_old'); // history: never notified

    const patches: LogEvent[] = [];
    const watcher = new TaskWatcher({
      isLocalAgent: (name) => isLocalAgent({ agents: ['human'], agentPrefix: 'box-' }, name),
      onRequest: () => undefined,
      onPatch: (e) => patches.push(e),
      onWaiting: () => undefined,
    });
    cleanups.push(() => watcher.stop());
    await watcher.start(createHubClient({ baseUrl: hub.url }));
    await request('human', 'task_mine');
    await request('elsewhere-claude', 'task_theirs');
    patch('task_theirs');
    const mine = patch('task_mine').event;
    await waitUntil(() => patches.length === 1, 'the patch notification');
    const later = patch('task_mine_old').event; // a new patch on an old task of ours
    await waitUntil(() => patches.length === 2, 'the second patch notification');
    expect(patches.map((e) => e.id)).toEqual([mine.id, later.id]);
  });
});

describe('createRotatingLog', () => {
  it('rotates by size and keeps a bounded number of old files', () => {
    const tmp = makeTmpDir('palace-log-');
    const path = join(tmp.path, 'logs', 'hub.log');
    mkdirSync(dirname(path), { recursive: true });
    const log = createRotatingLog({ path, maxBytes: 100, keep: 2 });
    for (let i = 0; i < 12; i++) log.write(`line ${String(i).padStart(2, '0')} ${'x'.repeat(30)}\n`);
    log.close();
    expect(existsSync(`${path}.1`)).toBe(true);
    expect(existsSync(`${path}.2`)).toBe(true);
    expect(existsSync(`${path}.3`)).toBe(false);
    for (const f of [path, `${path}.1`, `${path}.2`]) expect(statSync(f).size).toBeLessThanOrEqual(100);
    expect(readFileSync(path, 'utf8')).toContain('line 11');
    expect(readFileSync(`${path}.2`, 'utf8')).not.toContain('line 00');
    tmp.cleanup();
  });
});
