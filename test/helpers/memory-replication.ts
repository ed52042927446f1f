// Helpers for memory-replication tests (issue 34): real in-process hubs on port 0 over their own
// palaces, peers.json with pinned keys and shared "wings", explicit rounds, placements read back.

import type { Memory } from '../../hub/src/memory/drawers/memory.js';
import type { Hub } from '../../hub/src/server.js';
import { makeHubDirs, startTestHub, type HubDirs } from './hub.js';
import { writePeers } from './sync.js';

export interface ReplNode {
  name: string;
  dirs: HubDirs;
  hub: Hub;
  memory: Memory;
  replicaId: string;
}

/** A hub with its loop off (rounds are run by the test), its memory opened. */
export async function startReplNode(name: string, env: Record<string, string> = {}): Promise<ReplNode> {
  const dirs = makeHubDirs(`palace-memrep-${name}-`);
  const hub = await startTestHub(dirs, { env: { PALACE_SYNC_INTERVAL: '0', ...env } });
  return { name, dirs, hub, memory: await hub.services.memory.get(), replicaId: hub.services.logstream.replicaId };
}

export async function stopReplNodes(nodes: ReplNode[]): Promise<void> {
  for (const n of nodes.splice(0)) {
    await n.hub.close();
    n.dirs.cleanup();
  }
}

/** peers.json of `node`: each peer pinned (key and replica id) with the wings shared with it. */
export function share(node: ReplNode, peers: Array<{ peer: ReplNode; wings: string[]; kg?: boolean }>): void {
  writePeers(
    node.dirs.palace,
    peers.map(({ peer, wings, kg }) => ({
      name: peer.name,
      url: peer.hub.url,
      public_key: peer.hub.services.logstream.store.replica.publicKey,
      replica_id: peer.replicaId,
      wings,
      ...(kg ? { kg: true } : {}),
    })) as never,
  );
}

export async function round(node: ReplNode) {
  const sync = node.hub.services.sync;
  if (!sync) throw new Error('no sync service');
  return sync.runRound();
}

export async function placements(node: ReplNode, wing: string): Promise<Array<{ id: string; room: string; useful: boolean | null }>> {
  return (await node.memory.scanDrawers({ wing }))
    .map((d) => ({ id: d.drawer_id, room: d.room, useful: d.useful }))
    .sort((a, b) => a.id.localeCompare(b.id));
}
