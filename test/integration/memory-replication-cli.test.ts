// `palace sync share <wing> --with <peer>` (issue 34): opting a wing in and out of replication with a
// peer edits that peer's "wings" in peers.json (mode 0600, validated before it is written); an unknown
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
});
