// Starts a hub: opens the palace through the composition root (openPalace, role 'hub': writer lease,
// logstream, memory, sync), then only listens (http or https), writes the registration file and arms
// the idle timer. close() undoes all of it. Never exits the process, never generates tokens.

import { existsSync, readFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { hostname, networkInterfaces } from 'node:os';

import type { PalaceConfig } from './config.js';
import { createBackgroundGate } from './background-gate.js';
import { HubError } from './errors.js';
import { createApp } from './http/app.js';
import { McpSessions } from './http/routes/mcp-sessions.js';
import { allowedHosts, hubNames, isLoopbackHost, type MachineNames } from './http/middleware/host-guard.js';
import { ownOrigins } from './http/middleware/request-guard.js';
import type { Logger } from './log.js';
import { startLeaseSweeper } from './logstream/lease-sweeper.js';
import { INTEGRITY_CHECKING, INTEGRITY_CUT_SHORT, quickCheckOffThread } from './logstream/integrity-check.js';
import type { LogFile } from './logstream/event-store.js';
import { openPalace } from './palace.js';
import {
  canonicalPalace,
  dialUrl,
  removeRegistration,
  writeRegistration,
  type Registration,
} from './registration.js';
import { createRequestLock } from './request-lock.js';
import { SyncService } from './sync/sync-service.js';
import type { HubServices } from './services.js';
import { stdioCommand } from './launcher.js';
import { statusz } from './status.js';
import { PALACE_VERSION } from './version.js';

/** How long close() lets MCP responses in flight finish before it cuts their connections. */
const SHUTDOWN_DRAIN_MS = 3_000;

/** No request (health probes aside) for this long, and no memory open or lease seed running: the hub is quiet. */
const QUIET_MS = 1_000;
/** A hub that is never quiet still checks its log: the first check starts this long after listening at the latest. */
const CHECK_DEADLINE_MS = 60_000;
/**
 * The lease sweeper's start waits this long at most per page for the foreground: a hub that is never
 * idle still learns every lease (a page of 100 claimed tasks a second at least).
 */
const SEED_PAGE_WAIT_MS = 1_000;
/** Requests that never make the hub busy (health probes, polled back to back by monitors and the dashboard). */
const PROBE_PATHS = new Set(['/healthz', '/statusz']);

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
  /** The names a non-loopback bind answers to (default: machineNames()). */
  machine?: MachineNames;
  /** SQLite's check of the log behind /statusz's `sqlite_integrity` (default: quick_check on a worker thread). */
  integrityCheck?: (store: LogFile, signal: AbortSignal) => Promise<string>;
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

/** This machine's host name and interface addresses (what remote clients may call a wildcard bind). */
export function machineNames(): MachineNames {
  const addresses: string[] = [];
  for (const list of Object.values(networkInterfaces()))
    for (const a of list ?? []) if (!(a.family === 'IPv6' && a.scopeid)) addresses.push(a.address);
  return { hostname: hostname(), addresses };
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

  const palace = openPalace(config, { role: 'hub', log, readOnly, networkExposed: !isLoopbackHost(host), hubToken: token !== undefined, syncService: SyncService });
  const { services } = palace;
  const { logstream, stats, startedAt } = services;
  const lock = createRequestLock();
  // Replicated rows are written under the same lock as the memory tools, so a local move or rating
  // never interleaves with a row being applied or re-embedded (memory/replication/replicator.ts).
  services.memorySync?.setWriteLock((fn) => lock.run(fn));
  const sse = { clients: 0 };
  /** How a client starts `palace mcp` for this hub's palace, absolute (launcher.ts); the dashboard prints it. */
  const launcher = stdioCommand();
  const listening: { bound?: { host: string; port: number; scheme: 'http' | 'https' } } = {};
  let integrity: { at: number; verdict: string } | undefined;
  // Background readers (the integrity check, the lease sweeper's start) wait for the foreground: a
  // memory open, then a quiet moment (background-gate.ts; on a cold page cache they took the disk and
  // a core while memory opened).
  const gate = createBackgroundGate();
  gate.addForeground(() => services.memory.opening());
  // quick_check runs on a worker thread (integrity-check.ts), one at a time, once the hub is quiet
  // (no memory open or lease seed running, no request for QUIET_MS; at the latest CHECK_DEADLINE_MS
  // after it is asked for). /statusz never waits for it: it answers the last verdict ('checking'
  // before the first one is in) and, when the verdict is older than 60 s, asks for a fresh check.
  // The log is read ahead at a bounded rate first, pausing while the foreground is busy (integrity-check.ts).
  const check = options.integrityCheck ?? ((store: LogFile, signal: AbortSignal) => quickCheckOffThread(store, signal, { busy: () => gate.busy() }));
  const stopChecks = new AbortController();
  let checking: Promise<string> | undefined;
  let seeded: Promise<void> = Promise.resolve();
  const recheck = (): Promise<string> =>
    (checking ??= gate
      .whenQuiet({ quietMs: QUIET_MS, maxWaitMs: CHECK_DEADLINE_MS, after: [seeded], signal: stopChecks.signal })
      .then((outcome) => (outcome === 'aborted' ? INTEGRITY_CUT_SHORT : check(logstream.store, stopChecks.signal)))
      .catch((err: unknown) => `check failed: ${(err as Error).message}`)
      .then((verdict) => {
        integrity = { at: Date.now(), verdict };
        checking = undefined;
        return verdict;
      }));
  const sqliteIntegrity = (): string => {
    if (!integrity) return INTEGRITY_CHECKING;
    if (Date.now() - integrity.at > 60_000) void recheck();
    return integrity.verdict;
  };

  // MCP sessions (subscriptions, log level; http/routes/mcp-sessions.ts): one registry per hub.
  const sessions = new McpSessions(services);
  let hostAllow: ReadonlySet<string> = new Set();
  let origins: ReadonlySet<string> = new Set();
  const app = createApp({
    hub: services,
    token,
    allowedHosts: () => hostAllow,
    ownOrigins: () => origins,
    sse,
    sessions,
    server: { withLock: (fn) => lock.run(fn) },
    ...(options.uiDirs ? { uiDirs: options.uiDirs } : {}),
    // /statusz is assembled in status.ts (with palace_status); the server hands over what only it knows.
    status: () => {
      const verdict = sqliteIntegrity();
      return statusz(services, {
        bound: listening.bound,
        sqliteIntegrity: verdict,
        integrityOk: verdict === 'ok' || verdict === INTEGRITY_CHECKING,
        requests: { total: stats.total, mcp: stats.mcpRequests, by_status: stats.byStatus, lock_pending: lock.pending, waits: { active: stats.waits.active, max: config.waitMaxConcurrent, refused: stats.waits.refused } },
        sseClients: sse.clients,
        recentClients: stats.recentClients(),
        stdioCommand: launcher,
      });
    },
  });

  const handler = app.callback();
  const server: Server = tls ? createHttpsServer({ ...tls, minVersion: 'TLSv1.2' }, handler) : createHttpServer(handler);
  // MCP responses still being written: close() lets them finish (bounded) before cutting connections.
  const mcpInFlight = new Set<ServerResponse>();
  let drained: (() => void) | undefined;
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    // Any request but a health probe or an event stream (open for as long as a client listens: GET
    // with Accept: text/event-stream) keeps background readers waiting while it is served.
    const stream = req.method === 'GET' && (req.headers.accept ?? '').includes('text/event-stream');
    if (!stream && !PROBE_PATHS.has(req.url?.split('?')[0] ?? '')) res.once('close', gate.request());
    // A session's notification stream (GET /mcp) stays open: close() cuts it without waiting.
    if (!req.url?.startsWith('/mcp') || req.method !== 'POST') return;
    mcpInFlight.add(res);
    res.once('close', () => {
      mcpInFlight.delete(res);
      if (mcpInFlight.size === 0) drained?.();
    });
  });
  server.keepAliveTimeout = 5_000;
  server.requestTimeout = 0; // long-polls may legitimately take 5 minutes
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 8765, host, () => resolve());
    });
  } catch (err) {
    await palace.close();
    const e = err as NodeJS.ErrnoException;
    const where = `${host}:${options.port ?? 8765}`;
    if (e.code === 'EADDRINUSE')
      throw new HubError(
        'hub.config',
        `cannot listen on ${where}: the port is in use (another hub or program holds it). Pick another with --port (e.g. palace serve --port 8766) or PALACE_PORT=8766 (also for npm start); --port 0 takes any free port`,
        { cause: err, field: '--port' },
      );
    throw new HubError('hub.config', `cannot listen on ${where}: ${e.code ?? e.message}`, { cause: err });
  }
  const port = (server.address() as AddressInfo).port;
  const scheme = tls ? 'https' : 'http';
  const bound = { host, port, scheme } as const;
  listening.bound = bound;
  const names = hubNames(host, options.machine ?? machineNames());
  hostAllow = allowedHosts(names, port, config.extraAllowedHosts);
  origins = ownOrigins(scheme, names, port);
  const url = dialUrl(bound);
  palace.setListening(url);
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
  const registrationPath = writeRegistration(config.home, registration);

  let idleTimer: NodeJS.Timeout | undefined;
  const idleMs = config.idleHours * 3_600_000;
  if (idleMs > 0 && options.onIdle) {
    const every = Math.max(50, Math.min(60_000, idleMs / 4));
    idleTimer = setInterval(() => {
      // A client subscribed on an open notification stream is waiting to be told: not idle.
      if (Date.now() - stats.lastMcpAt >= idleMs && sessions.listening === 0) {
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
      stopChecks.abort();
      await checking;
      removeRegistration(config.home, palacePath);
      // Pending long-polls are answered (hub.shutting_down, with their cursor) rather than cut, and
      // MCP responses in flight get SHUTDOWN_DRAIN_MS to reach their clients; then connections close.
      logstream.endWaits('the hub is shutting down');
      sessions.closeAll();
      await services.sync?.stop();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, SHUTDOWN_DRAIN_MS);
        drained = () => {
          clearTimeout(timer);
          resolve();
        };
        if (mcpInFlight.size === 0) drained();
      });
      server.closeAllConnections();
      await closed;
      await palace.close();
    })();
    return closing;
  };
  // A read-only hub serves its log to pullers but never pulls (it must not write).
  if (!readOnly) services.sync?.start();
  // Stops when the logstream closes; its start reads no page while a memory open or a request runs.
  if (!readOnly)
    seeded = startLeaseSweeper(services.logstream, {
      log: log.child('leases'),
      beforeSeedPage: () => gate.whenQuiet({ quietMs: 0, maxWaitMs: SEED_PAGE_WAIT_MS, signal: stopChecks.signal }),
    }).seeded;
  // The first verdict is on its way before anyone asks (a 1 GB log takes ~1.5 s to check warm, many
  // seconds from a cold disk), started once the hub is quiet: its thread's CPU and its reads of the
  // whole log slowed a memory open and the requests beside it on a 2-core machine.
  void recheck();
  // An older log's reservations table is built in slices in the background; reads scan the log until then.
  if (!readOnly)
    services.logstream.ensureReservations().catch((err: unknown) => log.warn('building the reservations table failed', { error: (err as Error).message }));
  log.info(`hub listening on ${url}`, { palace: palacePath, read_only: readOnly });
  return { url, host, port, scheme, token, services, registrationPath, close };
}
