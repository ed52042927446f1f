// The moving parts of the sync benchmark: real hub child processes (`palace serve`), each behind a
// byte-counting TCP proxy that its peers dial, so every byte of sync traffic is counted on the wire.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { canonicalPalace, readLiveRegistration } from '../hub/src/registration.js';
import { sleep } from './stats.js';

const PALACE_BIN = fileURLToPath(new URL('../../bin/palace.js', import.meta.url));

/** A TCP proxy counting the bytes that cross it in both directions. */
export interface CountingProxy {
  port: number;
  target: number | undefined;
  bytes(): number;
  close(): Promise<void>;
}

export async function countingProxy(): Promise<CountingProxy> {
  let total = 0;
  let target: number | undefined;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    if (target === undefined) return void client.destroy();
    const upstream = connect(target, '127.0.0.1');
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => upstream.destroy());
    client.on('data', (c: Buffer) => {
      total += c.length;
      upstream.write(c);
    });
    upstream.on('data', (c: Buffer) => {
      total += c.length;
      client.write(c);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    get target() {
      return target;
    },
    set target(t: number | undefined) {
      target = t;
    },
    bytes: () => total,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** One hub of the mesh: its palace, the child process, and the proxy its peers dial. */
export interface MeshHub {
  name: string;
  palace: string;
  home: string;
  /** The hub's own address. */
  url: string;
  /** What peers dial (the proxy). */
  proxyUrl: string;
  proxy: CountingProxy;
  child: ChildProcess;
  stderr(): string;
}

/** Starts `palace serve` for a fresh palace under `root`, behind a counting proxy. */
export async function startMeshHub(
  root: string,
  name: string,
  intervalSeconds: number,
  extraEnv: Record<string, string> = {},
): Promise<MeshHub> {
  const home = join(root, name, 'home');
  const palace = join(root, name, 'palace');
  mkdirSync(home, { recursive: true });
  mkdirSync(palace, { recursive: true });
  const proxy = await countingProxy();
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env))
    if (v !== undefined && !k.startsWith('PALACE_')) env[k] = v;
  Object.assign(env, {
    HOME: home,
    PALACE_HOME: join(home, '.palace'),
    PALACE_SYNC_INTERVAL: String(intervalSeconds),
    PALACE_MCP_IDLE_HOURS: '0',
    PALACE_MCP_EXTRA_ALLOWED_HOSTS: `127.0.0.1:${proxy.port}`,
    ...extraEnv,
  });
  const child = spawn(process.execPath, [PALACE_BIN, '--palace', palace, 'serve', '--port', '0'], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const err: Buffer[] = [];
  child.stderr?.on('data', (c: Buffer) => err.push(c));
  const deadline = Date.now() + 30_000;
  for (;;) {
    const r = readLiveRegistration(join(home, '.palace'), canonicalPalace(palace));
    if (r && r.pid === child.pid) {
      proxy.target = r.port;
      return {
        name,
        palace,
        home,
        url: `http://127.0.0.1:${r.port}`,
        proxyUrl: `http://127.0.0.1:${proxy.port}`,
        proxy,
        child,
        stderr: () => Buffer.concat(err).toString('utf8'),
      };
    }
    if (child.exitCode !== null || Date.now() > deadline)
      throw new Error(`hub ${name} did not start: ${Buffer.concat(err).toString('utf8')}`);
    await sleep(50);
  }
}

/** Writes a hub's peers.json; with `keys` (peer name → public key) every peer is pinned. */
export function writePeersFile(
  hub: MeshHub,
  peers: readonly MeshHub[],
  keys?: ReadonlyMap<string, string>,
): void {
  writeFileSync(
    join(hub.palace, 'peers.json'),
    JSON.stringify(
      {
        peers: peers.map((p) => ({
          name: p.name,
          url: p.proxyUrl,
          ...(keys?.get(p.name) ? { public_key: keys.get(p.name) } : {}),
        })),
      },
      null,
      2,
    ),
    { mode: 0o600 },
  );
}

export async function stopMeshHub(hub: MeshHub): Promise<void> {
  if (hub.child.exitCode === null) {
    const exited = new Promise((resolve) => hub.child.once('exit', resolve));
    hub.child.kill('SIGTERM');
    const timer = setTimeout(() => hub.child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
  await hub.proxy.close();
}
