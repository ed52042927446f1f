// Starts a hub: takes the writer lease, opens the logstream, listens (http or https), writes the
// registration file, and arms the idle timer. Returns a handle whose close() undoes all of it.
// Never exits the process and never generates tokens (that is `palace serve`'s job).

import { existsSync, readFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { hostname } from 'node:os';

import type { PalaceConfig } from './config.js';
import { HubError } from './errors.js';
import { createApp } from './http/app.js';
import { allowedHosts, isLoopbackHost } from './http/middleware/host-guard.js';
import { RequestStats } from './http/request-stats.js';
import { acquireLease, type Lease } from './lease.js';
import type { Logger } from './log.js';
import { Logstream } from './logstream/logstream.js';
import { createKgHandle } from './memory/kg/knowledge-graph.js';
import { createMemoryHandle } from './memory/open-memory.js';
import {
  canonicalPalace,
  dialUrl,
  readLiveRegistration,
  registrationPath as registrationFile,
  removeRegistration,
  writeRegistration,
  type Registration,
} from './registration.js';
import { createRequestLock } from './request-lock.js';
import type { HubServices } from './services.js';
import { SyncService } from './sync/sync-service.js';
import { PALACE_VERSION } from './version.js';

export interface HubOptions {
  config: Readonly<PalaceConfig>;
  log: Logger;
  host?: string;
  port?: number;
  token?: string | undefined;
  readOnly?: boolean;
  allowInsecure?: boolean;
  tlsCert?: string | undefined;
  tlsKey?: string | undefined;
  /** Called once when no MCP request arrived for PALACE_MCP_IDLE_HOURS; the caller decides to exit. */
  onIdle?: () => void;
  /** Where the dashboard build may live (default: dist/ui beside the hub). */
  uiDirs?: readonly string[];
}

export interface Hub {
  url: string;
  host: string;
  port: number;
  scheme: 'http' | 'https';
  token: string | undefined;
  services: HubServices;
  registrationPath: string;
  close(): Promise<void>;
}

function tlsMaterial(cert: string | undefined, key: string | undefined): { cert: Buffer; key: Buffer } | undefined {
  if (!cert && !key) return undefined;
  if (!cert || !key) throw new HubError('hub.config', '--tls-cert and --tls-key must be given together');
  for (const [flag, path] of [['--tls-cert', cert], ['--tls-key', key]] as const)
    if (!existsSync(path)) throw new HubError('hub.config', `${flag} file not found: ${path}`, { field: flag });
  return { cert: readFileSync(cert), key: readFileSync(key) };
}

/** Refuses the insecure combination: a non-loopback bind with no token and no --allow-insecure. */
export function checkBindPolicy(host: string, token: string | undefined, allowInsecure: boolean): void {
  if (!isLoopbackHost(host) && !token && !allowInsecure)
    throw new HubError(
      'hub.config',
      `refusing to bind ${host} without a token: set PALACE_MCP_HTTP_TOKEN (or --token), or pass --allow-insecure only behind a trusted proxy that authenticates`,
    );
}

export async function startHub(options: HubOptions): Promise<Hub> {
  const { config, log } = options;
  const host = options.host ?? '127.0.0.1';
  const readOnly = options.readOnly ?? false;
  const token = options.token ?? config.httpToken;
  checkBindPolicy(host, token, options.allowInsecure ?? false);
  const tls = tlsMaterial(options.tlsCert, options.tlsKey);
  const palacePath = canonicalPalace(config.palacePath);

  const lease: Lease | undefined = readOnly ? undefined : acquireLease(palacePath, 'hub');
  let logstream: Logstream | undefined;
  try {
    logstream = Logstream.open(palacePath, { durability: config.durability, maxSkewMs: config.syncMaxSkewMs });
  } catch (err) {
    lease?.release();
    throw err;
  }
  const memory = createMemoryHandle(config, palacePath, log.child('memory'), { longRunning: true });
  const kg = createKgHandle(palacePath);
  const stats = new RequestStats();
  const startedAt = new Date();
  const lock = createRequestLock();
  const sse = { clients: 0 };
  const listening: { bound?: { host: string; port: number; scheme: 'http' | 'https' } } = {};
  let integrity: { at: number; verdict: string } | undefined;
  const services: HubServices = {
    config,
    logstream,
    memory,
    kg,
    log,
    version: PALACE_VERSION,
    startedAt,
    readOnly,
    role: 'hub',
    stats,
    describe: () => ({
      writer: { mode: readOnly ? 'read_only' : 'writer', lease: lease ? { path: lease.path, pid: lease.holder.pid } : null },
      listen: listening.bound ? dialUrl(listening.bound) : null,
    }),
  };
  services.sync = new SyncService({
    replica: logstream.replica,
    palacePath,
    name: hostname(),
    intervalSeconds: config.syncIntervalSeconds,
    log: log.child('sync'),
    verify: config.syncVerify,
  });
  const sqliteIntegrity = (): string => {
    if (!integrity || Date.now() - integrity.at > 60_000) integrity = { at: Date.now(), verdict: logstream.store.integrityCheck() };
    return integrity.verdict;
  };

  let hostAllow: ReadonlySet<string> = new Set();
  const app = createApp({
    hub: services,
    token,
    pinHost: isLoopbackHost(host),
    allowedHosts: () => hostAllow,
    sse,
    server: { withLock: (fn) => lock.run(fn) },
    ...(options.uiDirs ? { uiDirs: options.uiDirs } : {}),
    status: () => {
      const verdict = sqliteIntegrity();
      return {
        ok: verdict === 'ok',
        server: {
          name: 'palace',
          version: PALACE_VERSION,
          transport: 'http',
          scheme: listening.bound?.scheme,
          host: listening.bound?.host,
          port: listening.bound?.port,
          pid: process.pid,
          started_at: startedAt.toISOString(),
          uptime_seconds: Math.round((Date.now() - startedAt.getTime()) / 1000),
        },
        palace: { path: palacePath, backend: config.backend, sqlite_integrity: verdict },
        writer: services.describe().writer,
        requests: { total: stats.total, mcp: stats.mcpRequests, by_status: stats.byStatus, lock_pending: lock.pending },
        logstream: { replica_id: logstream.replicaId, events: logstream.store.countEvents(), sse_clients: sse.clients },
        clients: { recent: stats.recentClients() },
      };
    },
  });

  const handler = app.callback();
  const server: Server = tls ? createHttpsServer({ ...tls, minVersion: 'TLSv1.2' }, handler) : createHttpServer(handler);
  server.keepAliveTimeout = 5_000;
  server.requestTimeout = 0; // long-polls may legitimately take 5 minutes
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 8765, host, () => resolve());
    });
  } catch (err) {
    logstream.close();
    lease?.release();
    const e = err as NodeJS.ErrnoException;
    throw new HubError('hub.config', `cannot listen on ${host}:${options.port ?? 8765}: ${e.code ?? e.message}`, { cause: err });
  }
  const port = (server.address() as AddressInfo).port;
  const scheme = tls ? 'https' : 'http';
  const bound = { host, port, scheme } as const;
  listening.bound = bound;
  hostAllow = allowedHosts(host, port, config.extraAllowedHosts);
  const url = dialUrl(bound);
  lease?.update(url);
  const registration: Registration = {
    pid: process.pid,
    host,
    port,
    scheme,
    read_only: readOnly,
    version: PALACE_VERSION,
    palace_path: palacePath,
    started_at: startedAt.toISOString(),
  };
  // A read-only hub beside a live one (the writer) must not take over its registration: stdio
  // proxies would then forward mutating calls to a hub that refuses them.
  const live = readOnly ? readLiveRegistration(config.home, palacePath) : undefined;
  const registrationPath =
    live && live.pid !== process.pid ? registrationFile(config.home, palacePath) : writeRegistration(config.home, registration);
  if (live && live.pid !== process.pid) log.warn(`a hub (pid ${live.pid}) already serves this palace; not registering this read-only hub`);

  let idleTimer: NodeJS.Timeout | undefined;
  const idleMs = config.idleHours * 3_600_000;
  if (idleMs > 0 && options.onIdle) {
    const every = Math.max(50, Math.min(60_000, idleMs / 4));
    idleTimer = setInterval(() => {
      if (Date.now() - stats.lastMcpAt >= idleMs) {
        clearInterval(idleTimer);
        log.info(`no MCP request for ${config.idleHours} h; shutting down to release the palace`);
        options.onIdle?.();
      }
    }, every);
    idleTimer.unref();
  }

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= (async () => {
      if (idleTimer) clearInterval(idleTimer);
      removeRegistration(config.home, palacePath);
      await services.sync?.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      await memory.close();
      kg.close();
      logstream.close();
      lease?.release();
    })();
    return closing;
  };
  // A read-only hub serves its log to pullers but never pulls (it must not write).
  if (!readOnly) services.sync.start();
  log.info(`hub listening on ${url}`, { palace: palacePath, read_only: readOnly });
  return { url, host, port, scheme, token, services, registrationPath, close };
}
