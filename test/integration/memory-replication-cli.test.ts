// `palace sync share <wing> --with <peer>` and `palace sync share --kg --with <peer>` (issue 34):
// opting a wing (or the knowledge graph) in and out of replication with a peer edits that peer's
// "wings" (or "kg") in peers.json (mode 0600, validated before it is written); an unknown
// peer is a clear error; `palace status` says what replicates where. Real CLI processes.

import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { makeTempPalace, parseJson, type TempPalace } from '../helpers/cli.js';

let palace: TempPalace;
beforeAll(() => {
  palace = makeTempPalace('palace-share-cli-');
  mkdirSync(palace.dir, { recursive: true });
  writeFileSync(join(palace.dir, 'peers.json'), JSON.stringify({ peers: [{ name: 'laptop', url: 'http://127.0.0.1:7777' }] }), { mode: 0o600 });
});
afterAll(() => palace.cleanup());

function wings(): unknown {
  return (JSON.parse(readFileSync(join(palace.dir, 'peers.json'), 'utf8')) as { peers: Array<{ wings?: string[] }> }).peers[0]?.wings;
}

describe('palace sync share', () => {
  it('opts a wing in and out with a peer, and refuses an unknown peer naming the known ones', async () => {
    const on = await palace.run(['sync', 'share', 'team', '--with', 'laptop', '--json']);
    expect(on.code, on.stderr).toBe(0);
    expect(parseJson(on)).toMatchObject({ peer: 'laptop', wing: 'team', shared: true, wings: ['team'], changed: true });
    expect(wings()).toEqual(['team']);
    if (process.platform !== 'win32') expect(statSync(join(palace.dir, 'peers.json')).mode & 0o077).toBe(0);

    const status = await palace.run(['status']);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/replicas team with laptop/);

    const off = await palace.run(['sync', 'share', 'team', '--with', 'laptop', '--stop']);
    expect(off.code, off.stderr).toBe(0);
    expect(off.stdout).toMatch(/no longer replicates/);
    expect(wings()).toBeUndefined();

    const unknown = await palace.run(['sync', 'share', 'team', '--with', 'desktop']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no peer 'desktop'.*peers: laptop/);
  }, 60_000);

  it('--kg shares the knowledge graph with a peer ("kg": true) and --stop takes it back; a wing or --kg is required', async () => {
    const entry = (): Record<string, unknown> | undefined => (JSON.parse(readFileSync(join(palace.dir, 'peers.json'), 'utf8')) as { peers: Array<Record<string, unknown>> }).peers[0];
    const on = await palace.run(['sync', 'share', '--kg', '--with', 'laptop', '--json']);
    expect(on.code, on.stderr).toBe(0);
    expect(parseJson(on)).toMatchObject({ peer: 'laptop', shared: true, kg: true, wings: [], changed: true });
    expect(entry()?.kg).toBe(true);
    const status = await palace.run(['status']);
    expect(status.stdout).toMatch(/replicas the knowledge graph with laptop/);

    const again = await palace.run(['sync', 'share', '--kg', '--with', 'laptop']);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/The knowledge graph replicates with 'laptop' \(already did\)/);

    const off = await palace.run(['sync', 'share', '--kg', '--with', 'laptop', '--stop', '--json']);
    expect(off.code, off.stderr).toBe(0);
    expect(parseJson(off)).toMatchObject({ shared: false, kg: false, changed: true });
    expect(entry()).not.toHaveProperty('kg');

    const neither = await palace.run(['sync', 'share', '--with', 'laptop']);
    expect(neither.code).toBe(2);
    expect(neither.stderr).toMatch(/name the wing to share.*or pass --kg/);
    const hash = await palace.run(['sync', 'share', '#kg', '--with', 'laptop']);
    expect(hash.code).toBe(2);
    expect(hash.stderr).toMatch(/not a wing name.*pass --kg/);
  }, 60_000);
});
