// The writer lease (<palace>/hub.lock) and the registration file (~/.palace/server/<key>/serverinfo.json)
// with real processes: a second hub on the same palace is refused naming the holder, a lease left by
// a dead pid is taken over, and the registration is private, complete, removed on close and ignored
// once its pid is dead.

import { existsSync, statSync, writeFileSync } from 'node:fs';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { leasePath } from '../../hub/src/lease.js';
import {
  readLiveRegistration,
  registrationPath,
  serverDir,
  writeRegistration,
  type Registration,
} from '../../hub/src/registration.js';
import type { Hub } from '../../hub/src/server.js';
import { PALACE_VERSION } from '../../hub/src/version.js';
import { rejectedHubError } from '../helpers/errors.js';
import {
  deadPid,
  healthy,
  killChildren,
  makeHubDirs,
  readJson,
  startChildHub,
  startTestHub,
  type HubDirs,
} from '../helpers/hub.js';

let dirs: HubDirs;
let hubs: Hub[];

beforeEach(() => {
  dirs = makeHubDirs();
  hubs = [];
});

afterEach(async () => {
  for (const hub of hubs) await hub.close();
  await killChildren();
  dirs.cleanup();
});

async function hub(options: Parameters<typeof startTestHub>[1] = {}): Promise<Hub> {
  const h = await startTestHub(dirs, options);
  hubs.push(h);
  return h;
}

describe('writer lease', () => {
  it('refuses a second hub on a palace served by another process, naming its pid', async () => {
    const child = await startChildHub(dirs);
    const holder = readJson<{ pid: number; address: string | null; role: string }>(leasePath(dirs.palace));
    expect(holder).toMatchObject({ pid: child.pid, address: child.url, role: 'hub' });

    const error = await rejectedHubError(startTestHub(dirs));
    expect(error.code).toBe('lease.held');
    expect(error.message).toContain(`pid ${child.pid}`);
    // The refused start left the running hub alone.
    expect(await healthy(child.url)).toBe(true);
    expect(readLiveRegistration(dirs.palaceHome, dirs.palace)?.pid).toBe(child.pid);

    // And through the CLI: a second `palace serve` exits non-zero with the holder in its message.
    const second = await startChildHub(dirs).then(
      () => undefined,
      (err: unknown) => err as Error,
    );
    expect(second?.message).toMatch(new RegExp(`pid ${child.pid}`));
  });

  it('refuses a second hub on the same palace within one process', async () => {
    const first = await hub();
    const error = await rejectedHubError(startTestHub(dirs));
    expect(error.code).toBe('lease.held');
    expect(error.message).toContain(`pid ${process.pid}`);
    expect(await healthy(first.url)).toBe(true);
    expect(existsSync(leasePath(dirs.palace))).toBe(true);
  });

  it('takes over a lease left by a dead pid', async () => {
    const pid = await deadPid();
    writeFileSync(
      leasePath(dirs.palace),
      JSON.stringify({
        pid,
        address: 'http://127.0.0.1:1',
        acquired_at: '2026-01-01T00:00:00Z',
        role: 'hub',
      }),
    );
    const h = await hub();
    expect(readJson<{ pid: number; address: string }>(leasePath(dirs.palace))).toMatchObject({
      pid: process.pid,
      address: h.url,
    });
    await h.close();
    expect(existsSync(leasePath(dirs.palace))).toBe(false);
  });

  it('refuses a read-only hub beside the writer (one server per palace; see test/security/edge-one-server.test.ts)', async () => {
    const writer = await startChildHub(dirs);
    await expect(startTestHub(dirs, { readOnly: true })).rejects.toThrow(/already served by/);
    expect(readJson<{ pid: number }>(leasePath(dirs.palace)).pid).toBe(writer.pid);
    // The writer stays the registered hub.
    expect(readLiveRegistration(dirs.palaceHome, dirs.palace)).toMatchObject({
      pid: writer.pid,
      port: writer.port,
      read_only: false,
    });
  });
});

describe('registration file', () => {
  it('is written 0600 in a 0700 directory with the hub facts, and removed on clean close', async () => {
    const h = await hub();
    expect(h.registrationPath).toBe(registrationPath(dirs.palaceHome, dirs.palace));
    expect(statSync(h.registrationPath).mode & 0o777).toBe(0o600);
    expect(statSync(serverDir(dirs.palaceHome, dirs.palace)).mode & 0o777).toBe(0o700);
    const record = readJson<Registration>(h.registrationPath);
    expect(record).toMatchObject({
      pid: process.pid,
      host: '127.0.0.1',
      port: h.port,
      scheme: 'http',
      read_only: false,
      version: PALACE_VERSION,
      palace_path: dirs.palace,
    });
    expect(readLiveRegistration(dirs.palaceHome, dirs.palace)).toEqual(record);
    await h.close();
    expect(existsSync(h.registrationPath)).toBe(false);
    expect(readLiveRegistration(dirs.palaceHome, dirs.palace)).toBeUndefined();
  });

  it('is written by a child hub and removed when it stops on SIGTERM', async () => {
    const child = await startChildHub(dirs);
    expect(child.registration).toMatchObject({
      pid: child.pid,
      port: child.port,
      read_only: false,
      palace_path: dirs.palace,
    });
    expect(statSync(child.registrationPath).mode & 0o777).toBe(0o600);
    const exit = await child.stop();
    expect(exit.code).toBe(0);
    expect(existsSync(child.registrationPath)).toBe(false);
    expect(existsSync(leasePath(dirs.palace))).toBe(false);
  });

  it('is ignored by readLiveRegistration when its pid is dead', async () => {
    const pid = await deadPid();
    const path = writeRegistration(dirs.palaceHome, {
      pid,
      host: '127.0.0.1',
      port: 1,
      scheme: 'http',
      read_only: false,
      version: PALACE_VERSION,
      palace_path: dirs.palace,
      started_at: new Date().toISOString(),
    });
    expect(existsSync(path)).toBe(true);
    expect(readLiveRegistration(dirs.palaceHome, dirs.palace)).toBeUndefined();
    // A new hub replaces the stale record with its own.
    const h = await hub();
    expect(readLiveRegistration(dirs.palaceHome, dirs.palace)?.port).toBe(h.port);
  });

  it('ignores an unreadable registration', () => {
    const path = registrationPath(dirs.palaceHome, dirs.palace);
    writeRegistration(dirs.palaceHome, {
      pid: process.pid,
      host: '127.0.0.1',
      port: 1,
      scheme: 'http',
      read_only: false,
      version: '0',
      palace_path: dirs.palace,
      started_at: '',
    });
    writeFileSync(path, '{not json');
    expect(readLiveRegistration(dirs.palaceHome, dirs.palace)).toBeUndefined();
  });
});
