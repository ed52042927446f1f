// `palace sync` as a real child process: against peers.json or --peer with PALACE_SYNC_PEER_TOKEN,
// per-peer results, exit 1 when a peer failed (2 with nothing to sync from), tokens never printed;
// directly on the palace without a hub, through POST /sync/round with a live hub; `--status`.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import type { Hub } from '../../hub/src/server.js';
import type { MeshMessage, RoundMessage } from '../../hub/src/sync/protocol.js';
import {
  PALACE_BIN,
  childEnv,
  killChildren,
  makeHubDirs,
  spawnNode,
  startChildHub,
  startTestHub,
  type HubDirs,
} from '../helpers/hub.js';
import { appendMany, writePeers } from '../helpers/sync.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  await killChildren();
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

const PEER_TOKEN = 'peer-token-5f0e1d2c3b4a';

async function peerHub(): Promise<Hub> {
  const dirs = makeHubDirs('palace-sync-peer-');
  cleanups.push(() => dirs.cleanup());
  const hub = await startTestHub(dirs, { token: PEER_TOKEN, env: { PALACE_SYNC_INTERVAL: '0' } });
  cleanups.push(() => hub.close());
  await appendMany(hub.services.logstream, 4, 'peer-claude');
  hub.services.logstream.submitPatch({
    stream: 'project/sync',
    from_agent: 'peer-claude',
    to_agent: 'me',
    content: 'diff\n',
  });
  return hub;
}

function local(): HubDirs {
  const dirs = makeHubDirs('palace-sync-cli-');
  cleanups.push(() => dirs.cleanup());
  return dirs;
}

async function palace(
  dirs: HubDirs,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = spawnNode(PALACE_BIN, ['--palace', dirs.palace, ...args], childEnv(dirs, env), 60_000);
  const { code } = await proc.exited;
  return { code, stdout: proc.stdout(), stderr: proc.stderr() };
}

describe('palace sync', () => {
  it('works directly on the palace with --peer and PALACE_SYNC_PEER_TOKEN, exiting 1 on a refused token', async () => {
    const peer = await peerHub();
    const dirs = local();

    const none = await palace(dirs, ['sync', '--json']);
    expect(none.code).toBe(2);
    expect(JSON.parse(none.stdout).error.code).toBe('sync.no_peers');

    const refused = await palace(dirs, ['sync', '--peer', peer.url, '--json'], {
      PALACE_SYNC_PEER_TOKEN: 'not-the-token-9999',
    });
    expect(refused.code).toBe(1);
    const refusedRound = JSON.parse(refused.stdout) as RoundMessage;
    expect(refusedRound.results[0]).toMatchObject({ ok: false, pulled_events: 0 });
    expect(refusedRound.results[0]?.error?.message).toMatch(/401/);
    expect(refused.stdout + refused.stderr).not.toContain('not-the-token-9999');

    const ok = await palace(dirs, ['sync', '--peer', peer.url, '--name', 'office', '--json'], {
      PALACE_SYNC_PEER_TOKEN: PEER_TOKEN,
    });
    expect(ok.code, ok.stderr).toBe(0);
    const round = JSON.parse(ok.stdout) as RoundMessage;
    expect(round).toMatchObject({ type: 'round', source: 'direct' });
    expect(round.results[0]).toMatchObject({
      peer_name: 'office',
      ok: true,
      pulled_events: 5,
      pulled_artifacts: 1,
      peer_replica: peer.services.logstream.replicaId,
    });
    expect(ok.stdout).not.toContain(PEER_TOKEN);

    const listed = await palace(dirs, ['logstream', 'list', '--json', '--limit', '500']);
    expect(JSON.parse(listed.stdout).events).toHaveLength(5);

    // Once more: nothing new, still success.
    const again = await palace(dirs, ['logstream', 'sync', '--peer', peer.url, '--json'], {
      PALACE_SYNC_PEER_TOKEN: PEER_TOKEN,
    });
    expect(again.code).toBe(0);
    expect((JSON.parse(again.stdout) as RoundMessage).results[0]?.pulled_events).toBe(0);
  });

  it('reports every peer of peers.json in text mode and exits 1 when one is down', async () => {
    const peer = await peerHub();
    const dirs = local();
    writePeers(dirs.palace, [
      { name: 'office', url: peer.url, token: PEER_TOKEN },
      { name: 'gone', url: 'http://127.0.0.1:9' },
    ]);
    const result = await palace(dirs, ['sync']);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      new RegExp(`office \\(${peer.services.logstream.replicaId}\\): \\+5 events, \\+1 artifacts`),
    );
    expect(result.stdout).toMatch(/gone: ERROR .*unreachable/);
    expect(result.stdout + result.stderr).not.toContain(PEER_TOKEN);
  });

  it('asks a live hub to run the round, so the hub records it in its mesh estate', async () => {
    const peer = await peerHub();
    const dirs = local();
    writePeers(dirs.palace, [{ name: 'office', url: peer.url, token: PEER_TOKEN }]);
    const hub = await startChildHub(dirs, { env: { PALACE_SYNC_INTERVAL: '0' } });

    const result = await palace(dirs, ['sync', '--json']);
    expect(result.code, result.stderr).toBe(0);
    const round = JSON.parse(result.stdout) as RoundMessage;
    expect(round).toMatchObject({ source: 'hub' });
    expect(round.results[0]).toMatchObject({ ok: true, pulled_events: 5 });

    const status = await palace(dirs, ['sync', '--status', '--json']);
    const estate = JSON.parse(status.stdout) as MeshMessage;
    expect(estate).toMatchObject({ estate_source: 'hub', sync_enabled: false });
    expect(estate.peers[0]).toMatchObject({ name: 'office', reachable: true, pulled_events_total: 5 });
    expect(status.stdout).not.toContain(PEER_TOKEN);

    const text = await palace(dirs, ['sync', '--status']);
    expect(text.stdout).toMatch(/office .*reachable/);

    // `palace logstream` keeps working beside the syncing hub, and what it writes is served to peers.
    const appended = await palace(dirs, [
      'logstream',
      'append',
      '--type',
      'status',
      '--stream',
      'project/sync',
      '--room',
      'status',
      '--from-agent',
      'me-cli',
      '--json',
    ]);
    expect(appended.code, appended.stderr).toBe(0);
    const id = (JSON.parse(appended.stdout) as { id: string }).id;
    const back = await peer.services.sync?.runRound([{ name: 'me', url: hub.url, token: undefined }]);
    expect(back?.results[0]).toMatchObject({ ok: true, pulled_events: 1 });
    expect(peer.services.logstream.store.getEvent(id)?.from_agent).toBe('me-cli');
    await hub.stop();
  });

  it('trust <url> prints the peer key and fingerprint, --pin writes it to peers.json, and the pin is then enforced', async () => {
    const peer = await peerHub();
    const dirs = local();
    const env = { PALACE_SYNC_PEER_TOKEN: PEER_TOKEN };
    const shown = await palace(dirs, ['sync', 'trust', peer.url], env);
    expect(shown.code).toBe(0);
    const key = peer.services.logstream.store.publicKey;
    expect(shown.stdout).toContain(key);
    expect(shown.stdout).toMatch(/fingerprint SHA256:[A-Za-z0-9+/]{43}/);
    expect(existsSync(join(dirs.palace, 'peers.json'))).toBe(false); // printing pins nothing
    expect(shown.stdout + shown.stderr).not.toContain(PEER_TOKEN);

    const pinned = await palace(dirs, ['sync', 'trust', peer.url, '--pin', '--name', 'p', '--json'], env);
    expect(pinned.code).toBe(0);
    expect(JSON.parse(pinned.stdout)).toMatchObject({ public_key: key, replica_id: peer.services.logstream.replicaId, pinned: true });
    const file = JSON.parse(readFileSync(join(dirs.palace, 'peers.json'), 'utf8')) as { peers: Array<Record<string, unknown>> };
    expect(file.peers).toEqual([{ name: 'p', url: peer.url, public_key: key, replica_id: peer.services.logstream.replicaId }]);

    // Add the token and sync: pinned, it works; a different pinned key is refused.
    writePeers(dirs.palace, [{ name: 'p', url: peer.url, token: PEER_TOKEN, public_key: key }]);
    const ok = await palace(dirs, ['sync', '--json']);
    expect(ok.code).toBe(0);
    expect((JSON.parse(ok.stdout) as RoundMessage).results[0]).toMatchObject({ ok: true, pulled_events: 5 });
    writePeers(dirs.palace, [{ name: 'p', url: peer.url, token: PEER_TOKEN, public_key: 'A'.repeat(43) }]);
    const refused = await palace(dirs, ['sync', '--json']);
    expect(refused.code).toBe(1);
    expect((JSON.parse(refused.stdout) as RoundMessage).results[0]?.error?.code).toBe('sync.untrusted');
  }, 60_000);
});
