// Faults: a hub that runs out of room (a file-size limit through `ulimit -f`, and a really full
// tmpfs where mounting one is allowed) answers with a clear storage error, keeps serving reads,
// loses no acknowledged event and leaves SQLite intact; and a peer that hangs mid-response (headers
// and half a body, then silence) stalls neither the sync loop nor the other peers.

import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';

import { Logstream } from '../../hub/src/logstream/logstream.js';
import { readLiveRegistration } from '../../hub/src/registration.js';
import {
  PALACE_BIN,
  REPO_ROOT,
  childEnv,
  healthy,
  killChildren,
  makeHubDirs,
  startChildHub,
  startTestHub,
  waitUntil,
  type HubDirs,
} from '../helpers/hub.js';
import { callOverHttp, canMountTmpfs } from '../helpers/faults.js';
import { allEvents, appendMany, writePeers } from '../helpers/sync.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
  await killChildren();
});

/** A hub started through bash so a shell limit applies to it (SIGXFSZ ignored: writes fail with EFBIG). */
async function startLimitedHub(
  dirs: HubDirs,
  fileLimitKiB: number,
): Promise<{ url: string; stop: () => Promise<void>; stderr: () => string }> {
  const script = `ulimit -f ${fileLimitKiB}; trap '' XFSZ; exec "${process.execPath}" "${PALACE_BIN}" --palace "${dirs.palace}" serve --port 0`;
  const child = spawn('bash', ['-c', script], {
    cwd: REPO_ROOT,
    env: childEnv(dirs),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
  child.stdout.resume();
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  cleanups.push(stop);
  const url = await waitUntil(async () => {
    if (child.exitCode !== null) throw new Error(`limited hub exited: ${err}`);
    const r = readLiveRegistration(dirs.palaceHome, dirs.palace);
    if (!r || r.pid !== child.pid) return undefined;
    const u = `http://127.0.0.1:${r.port}`;
    return (await healthy(u)) ? u : undefined;
  }, 'the limited hub to come up');
  return { url, stop, stderr: () => err };
}

const BODY = 'y'.repeat(16 * 1024);

/** Appends 16 KiB events until one fails; returns the acknowledged ids and the first failure. */
async function fillUntilRefused(
  url: string,
  max = 2_000,
): Promise<{ acked: Map<string, string>; failure: Record<string, unknown> }> {
  const acked = new Map<string, string>();
  for (let i = 0; i < max; i++) {
    const body = `${i} ${BODY}`;
    const answer = await callOverHttp(url, 'palace_event_append', {
      type: 'status',
      stream: 'project/full',
      room: 'disk',
      from_agent: 'filler',
      body,
    });
    if (!answer.ok) return { acked, failure: answer.value };
    acked.set(String(answer.value.id), body);
  }
  throw new Error(`no append was refused within ${max} appends`);
}

function expectClearStorageError(failure: Record<string, unknown>, codes: readonly string[]): void {
  const error = failure.error as { code: string; message: string };
  expect(codes).toContain(error.code);
  expect(error.message).toMatch(/disk|full|limit/i);
  expect(error.message).not.toMatch(/\n\s+at /);
}

/** Integrity check, then every acknowledged event present exactly once with its body. */
function expectIntact(palace: string, acked: Map<string, string>): void {
  const db = new Database(join(palace, 'logstream.sqlite3'));
  try {
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
  } finally {
    db.close();
  }
  const log = Logstream.open(palace);
  try {
    const events = allEvents(log);
    const counts = new Map<string, number>();
    for (const e of events) counts.set(e.id, (counts.get(e.id) ?? 0) + 1);
    for (const [id, body] of acked) {
      expect(counts.get(id), id).toBe(1);
      expect(events.find((e) => e.id === id)?.body).toBe(body);
    }
  } finally {
    log.close();
  }
}

describe('running out of room', () => {
  it('a file-size limit: a clear storage error, reads keep working, nothing acknowledged is lost', async () => {
    const dirs = makeHubDirs('palace-fsize-');
    cleanups.push(() => dirs.cleanup());
    const limited = await startLimitedHub(dirs, 2048);
    const { acked, failure } = await fillUntilRefused(limited.url);
    expect(acked.size).toBeGreaterThan(10);
    expectClearStorageError(failure, ['store.full', 'store.failed']);
    // Further writes keep failing cleanly; the hub stays up and serves reads.
    for (let i = 0; i < 3; i++) {
      const again = await callOverHttp(limited.url, 'palace_event_append', {
        type: 'status',
        stream: 'project/full',
        room: 'disk',
        from_agent: 'filler',
        body: BODY,
      });
      expect(again.ok).toBe(false);
    }
    expect(await healthy(limited.url)).toBe(true);
    const listed = await callOverHttp(limited.url, 'palace_event_list', {
      stream: 'project/full',
      limit: 5,
      order: 'desc',
    });
    expect(listed.ok).toBe(true);
    expect((listed.value.events as unknown[]).length).toBe(5);
    await limited.stop();
    expect(limited.stderr()).not.toMatch(/\n\s+at .+:\d+:\d+/);

    // Without the limit: intact, every acknowledged event once, and appends work again.
    expectIntact(dirs.palace, acked);
    const hub = await startChildHub(dirs);
    const after = await callOverHttp(hub.url, 'palace_event_append', {
      type: 'status',
      stream: 'project/full',
      room: 'disk',
      from_agent: 'filler',
      body: 'room again',
    });
    expect(after.ok).toBe(true);
    await hub.stop();
    expectIntact(dirs.palace, acked);
  }, 120_000);

  it.skipIf(!canMountTmpfs())(
    'a full tmpfs: store.full, recovery in the same process once space is freed',
    async () => {
      const dirs = makeHubDirs('palace-enospc-');
      cleanups.push(() => dirs.cleanup());
      // The palace lives on a 4 MiB tmpfs; a filler file leaves ~1.5 MiB of room.
      rmSync(dirs.palace, { recursive: true, force: true });
      mkdirSync(dirs.palace);
      expect(spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', dirs.palace]).status).toBe(0);
      cleanups.push(() => void spawnSync('umount', ['-l', dirs.palace]));
      const filler = join(dirs.palace, 'filler.bin');
      writeFileSync(filler, Buffer.alloc(2_500 * 1024));
      const hub = await startChildHub(dirs);
      const { acked, failure } = await fillUntilRefused(hub.url);
      expectClearStorageError(failure, ['store.full']);
      expect(await healthy(hub.url)).toBe(true);

      rmSync(filler);
      const after = await callOverHttp(hub.url, 'palace_event_append', {
        type: 'status',
        stream: 'project/full',
        room: 'disk',
        from_agent: 'filler',
        body: 'room again',
      });
      expect(after.ok, JSON.stringify(after.value)).toBe(true);
      acked.set(String(after.value.id), 'room again');
      await hub.stop();
      expectIntact(dirs.palace, acked);
    },
    120_000,
  );
});

describe('a peer that hangs mid-response', () => {
  it('stalls neither the sync loop nor the other peers, and the hub still closes promptly', async () => {
    const hanging: ServerResponse[] = [];
    const stuck = createServer((_req, res) => {
      // Headers and the start of a JSON body, then silence.
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '4096' });
      res.write('{"type":"version_vector","protocol":1,"vector":{');
      hanging.push(res);
    });
    await new Promise<void>((resolve) => stuck.listen(0, '127.0.0.1', resolve));
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          stuck.closeAllConnections();
          stuck.close(() => resolve());
        }),
    );
    const env = { PALACE_SYNC_INTERVAL: '0.2' };
    const goodDirs = makeHubDirs('palace-good-peer-');
    const aDirs = makeHubDirs('palace-puller-');
    cleanups.push(
      () => goodDirs.cleanup(),
      () => aDirs.cleanup(),
    );
    const good = await startTestHub(goodDirs, { env });
    cleanups.push(() => good.close());
    const a = await startTestHub(aDirs, { env });
    let closed = false;
    cleanups.push(() => (closed ? undefined : a.close()));
    writePeers(aDirs.palace, [
      { name: 'stuck', url: `http://127.0.0.1:${(stuck.address() as AddressInfo).port}` },
      { name: 'good', url: good.url },
    ]);
    await appendMany(good.services.logstream, 3, 'good-claude');
    await waitUntil(
      () => a.services.logstream.store.countEvents() === 3,
      'the good peer events despite the stuck one',
    );
    await appendMany(good.services.logstream, 4, 'good-claude');
    await waitUntil(() => a.services.logstream.store.countEvents() === 7, 'later rounds with the good peer');
    expect(hanging.length, 'one request outstanding, not one per round').toBe(1);
    const estate = a.services.sync?.estate();
    expect(estate?.peers.find((p) => p.name === 'stuck')).toMatchObject({ in_flight: true });
    // MCP and HTTP stay responsive while the request hangs.
    expect(await healthy(a.url)).toBe(true);
    await a.close();
    closed = true;
  }, 60_000);
});
