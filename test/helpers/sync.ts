// Helpers for peer-sync tests: peers.json writing, reading a hub's whole log, an in-process
// PeerTransport over another store (the real serve functions and schemas, JSON round-tripped), and
// a TCP proxy the test controls (pass, drop, delay, cut mid-response) for partition tests.

import { renameSync, writeFileSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { join } from 'node:path';

import type { LogEvent } from '../../hub/src/core/types.js';
import { HubError } from '../../hub/src/errors.js';
import type { Logstream } from '../../hub/src/logstream/logstream.js';
import type { ReplicaStore } from '../../hub/src/logstream/replica-store.js';
import type { PeerTransport } from '../../hub/src/sync/peer-transport.js';
import type { PeerEntry } from '../../hub/src/sync/peers-file.js';
import { parseMessage } from '../../hub/src/sync/protocol.js';
import { artifactMessage, artifactsMessage, opsMessage, versionVectorMessage } from '../../hub/src/sync/serve.js';

export interface PeerSpec {
  name?: string;
  url: string;
  token?: string;
  /** The peer's pinned public key (raw base64url). */
  public_key?: string;
}

/** A peers.json entry for an in-process peer, its key pinned (so it may also relay other origins). */
export function pinnedPeer(peer: ReplicaStore, name = 'peer'): PeerEntry {
  return { name, url: `http://${name}.invalid`, token: undefined, publicKey: peer.publicKey };
}

/** Writes `<palace>/peers.json` atomically (tmp + rename), as a careful editor would. */
export function writePeers(palace: string, peers: readonly PeerSpec[]): void {
  const path = join(palace, 'peers.json');
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, JSON.stringify({ peers }, null, 2) + '\n', { mode: 0o600 });
  renameSync(tmp, path);
}

/** Every event of a log in append order. */
export function allEvents(log: Logstream): LogEvent[] {
  const out: LogEvent[] = [];
  let since: string | undefined;
  for (;;) {
    const page = log.list({ since_event_id: since, limit: 500 });
    out.push(...page.events);
    if (!page.has_more) return out;
    since = page.events.at(-1)?.id;
  }
}

/** The sorted ids of every event in a log. */
export function eventIds(log: Logstream): string[] {
  return allEvents(log)
    .map((e) => e.id)
    .sort();
}

let counter = 0;

/** Appends `n` status events from `agent` through the service (group commit) and returns them. */
export async function appendMany(
  log: Logstream,
  n: number,
  agent: string,
  extra: Record<string, unknown> = {},
): Promise<LogEvent[]> {
  const out: LogEvent[] = [];
  for (let i = 0; i < n; i++)
    out.push(
      await log.append({
        type: 'status',
        stream: 'project/sync',
        room: 'status',
        from_agent: agent,
        to_agent: '*',
        body: `event ${++counter} from ${agent}`,
        ...extra,
      }),
    );
  return out;
}

/**
 * A PeerTransport that answers from another store in-process, through the same serve functions and
 * wire schemas as HTTP (every message is JSON round-tripped and parsed at the edge).
 */
export function inProcessTransport(peer: ReplicaStore, name = 'peer'): PeerTransport {
  const wire = <T>(build: () => T): T => JSON.parse(JSON.stringify(build())) as T;
  return {
    versionVector: async () =>
      parseMessage(
        'version_vector',
        wire(() => versionVectorMessage(peer, name)),
      ),
    ops: async (origin, after, limit) =>
      parseMessage(
        'ops',
        wire(() => opsMessage(peer, { origin, after, limit })),
      ),
    artifact: async (id) => {
      try {
        return parseMessage(
          'artifact',
          wire(() => artifactMessage(peer, id)),
        );
      } catch (err) {
        if (err instanceof HubError) throw err;
        throw new HubError('internal', String(err));
      }
    },
    artifacts: async (after, limit) =>
      parseMessage(
        'artifacts',
        wire(() => artifactsMessage(peer, { after, limit })),
      ),
  };
}

export type ProxyMode =
  | { kind: 'pass' }
  | { kind: 'drop' }
  | { kind: 'delay'; ms: number }
  /** Forwards the request, then cuts the connection after `bytes` bytes of the response. */
  | { kind: 'cut'; bytes: number };

/** A TCP proxy in front of a peer whose behaviour the test switches at will. */
export interface TcpProxy {
  url: string;
  port: number;
  mode: ProxyMode;
  target: { host: string; port: number } | undefined;
  /** Bytes sent from the peer back to the client (what crossed the wire), since start. */
  bytesDown: number;
  bytesUp: number;
  connections: number;
  close(): Promise<void>;
}

/**
 * Starts a proxy; give `target` now or set it later (a hub behind it must allow the proxy's
 * host:port in PALACE_MCP_EXTRA_ALLOWED_HOSTS, so the proxy often has to exist first).
 */
export async function startProxy(initial?: { host: string; port: number }): Promise<TcpProxy> {
  let target = initial;
  const sockets = new Set<Socket>();
  const track = (s: Socket): void => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => s.destroy());
  };
  const state = { mode: { kind: 'pass' } as ProxyMode, bytesDown: 0, bytesUp: 0, connections: 0 };
  const server: Server = createServer((client) => {
    track(client);
    state.connections++;
    const mode = state.mode;
    if (mode.kind === 'drop') {
      client.destroy();
      return;
    }
    if (!target) {
      client.destroy();
      return;
    }
    const upstream = connect(target.port, target.host);
    track(upstream);
    let sent = 0;
    let chain = Promise.resolve();
    client.on('data', (chunk: Buffer) => {
      state.bytesUp += chunk.length;
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (mode.kind === 'cut') {
        const room = mode.bytes - sent;
        if (room <= 0) return;
        const part = chunk.subarray(0, room);
        sent += part.length;
        state.bytesDown += part.length;
        client.write(part, () => {
          if (sent >= mode.bytes) {
            client.destroy();
            upstream.destroy();
          }
        });
        return;
      }
      if (mode.kind === 'delay') {
        // Every chunk of the response arrives `ms` late, in order.
        chain = chain
          .then(() => new Promise((resolve) => setTimeout(resolve, mode.ms)))
          .then(() => {
            state.bytesDown += chunk.length;
            if (!client.destroyed) client.write(chunk);
          });
        return;
      }
      state.bytesDown += chunk.length;
      client.write(chunk);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => void chain.then(() => client.destroy()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const proxy: TcpProxy = {
    url: `http://127.0.0.1:${port}`,
    port,
    get mode() {
      return state.mode;
    },
    /** Switching mode also cuts every open connection, so pooled keep-alive sockets follow it too. */
    set mode(m: ProxyMode) {
      state.mode = m;
      for (const s of sockets) s.destroy();
    },
    get target() {
      return target;
    },
    set target(t: { host: string; port: number } | undefined) {
      target = t;
    },
    get bytesDown() {
      return state.bytesDown;
    },
    get bytesUp() {
      return state.bytesUp;
    },
    get connections() {
      return state.connections;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return proxy;
}
