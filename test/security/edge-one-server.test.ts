// Issue 17 item 16: two server processes never point at one palace (spec, "What the service does"
// §4), a read-only one included: a read-only hub takes the palace lease like a writer, so it is
// refused beside a live writer, and a writer is refused beside a live read-only hub.

import { existsSync } from 'node:fs';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { leaseHolder, leasePath } from '../../hub/src/lease.js';
import { readLiveRegistration } from '../../hub/src/registration.js';
import { rejectedHubError } from '../helpers/errors.js';
import { healthy, killChildren, makeHubDirs, startChildHub, startTestHub, type HubDirs } from '../helpers/hub.js';
import { makeTempPalace } from '../helpers/cli.js';

let dirs: HubDirs;

beforeEach(() => {
  dirs = makeHubDirs('palace-edge-one-');
});

afterEach(async () => {
  await killChildren();
  dirs.cleanup();
});

describe('one server per palace, read-only or not', () => {
  it('refuses a read-only hub beside a live writer (lease.held naming the writer), and leaves the writer alone', async () => {
    const writer = await startChildHub(dirs);
    const error = await rejectedHubError(startTestHub(dirs, { readOnly: true }));
    expect(error.code).toBe('lease.held');
    expect(error.message).toContain(`pid ${writer.pid}`);
    expect(leaseHolder(dirs.palace)?.pid).toBe(writer.pid);
    expect(readLiveRegistration(dirs.palaceHome, dirs.palace)).toMatchObject({ pid: writer.pid, read_only: false });
    expect(await healthy(writer.url)).toBe(true);
    expect((await writer.stop()).code).toBe(0);
  });

  it('refuses a writer beside a live read-only hub; the read-only hub holds the lease and gives it back', async () => {
    const reader = await startTestHub(dirs, { readOnly: true });
    try {
      expect(leaseHolder(dirs.palace)).toMatchObject({ pid: process.pid, role: 'hub-read-only', address: reader.url });
      const error = await rejectedHubError(startTestHub(dirs));
      expect(error.code).toBe('lease.held');
      expect(error.message).toMatch(/hub-read-only/);
      expect(await healthy(reader.url)).toBe(true);
    } finally {
      await reader.close();
    }
    expect(existsSync(leasePath(dirs.palace))).toBe(false);
    // Once it is gone a writer starts.
    const writer = await startTestHub(dirs);
    await writer.close();
  });

  it('`palace serve --read-only` beside a running hub exits 1 with `Error: … already served by pid …`', async () => {
    const palace = makeTempPalace('palace-edge-one-cli-');
    try {
      const hubDirs = { ...dirs, home: palace.home, palaceHome: palace.stateDir, palace: palace.dir };
      const writer = await startChildHub(hubDirs);
      const result = await palace.run(['serve', '--read-only', '--port', '0'], { killAfterMs: 30_000 });
      expect(result.code, result.stderr).toBe(1);
      expect(result.stderr).toMatch(new RegExp(`^Error: .*already served by pid ${writer.pid}`));
      expect(await healthy(writer.url)).toBe(true);
      await writer.stop();
    } finally {
      await palace.cleanup();
    }
  });
});
