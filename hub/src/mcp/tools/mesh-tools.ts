// palace_mesh_peers: the mesh estate, the same payload as GET /sync/peers. Read-only, lock-free.

import { hostname } from 'node:os';

import { localEstate } from '../../sync/mesh-estate.js';
import { defineTool } from './tool.js';

export const meshPeersTool = defineTool({
  name: 'palace_mesh_peers',
  title: 'Mesh peers',
  description:
    "The peer-sync mesh as this hub sees it: its own replica id, name and version vector; every peer of peers.json with reachable, last_success_at, last_error (and when), the peer's version vector and how many events and artifacts were pulled; the origins known only through gossip (gossip_origins); and the sync interval. Compare a peer's remote_version_vector with self.version_vector to see who is behind. Tokens never appear.",
  input: {},
  mutating: false,
  lockFree: true,
  handler: (_args, hub) =>
    hub.sync?.estate() ??
    localEstate(hub.logstream.store.replica, {
      palacePath: hub.config.palacePath,
      name: hostname(),
      intervalSeconds: hub.config.syncIntervalSeconds,
    }),
});
