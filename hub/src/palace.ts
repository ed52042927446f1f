// The composition root: openPalace() builds a palace's services once (logstream, memory, knowledge
// graph, Cypher, background mines, request stats, and for a hub the writer lease and peer sync) and
// closes them together. The HTTP hub (server.ts) and the in-process CLI / stdio server both use it.

import { hostname } from 'node:os';

import type { PalaceConfig } from './config.js';
import { HubError } from './errors.js';
import { acquireLease, type Lease } from './lease.js';
import type { Logger } from './log.js';
import { Logstream } from './logstream/logstream.js';
import { ResourceWatch } from './logstream/resource-watch.js';
import { createCypherService, type CypherService } from './kg/cypher-service.js';
import { createKgHandle } from './kg/knowledge-graph.js';
import { createMemoryHandle } from './memory/drawers/open-memory.js';
import { MineJobs } from './mine/jobs.js';
import { readManifest, readManifestSliced, type MinedFileEntry } from './mine/manifest.js';
import { canonicalPalace } from './registration.js';
import { RequestStats } from './request-stats.js';
import { minedProjectFiles, warmMinedFiles } from './search/path-scan.js';
import type { HubServices } from './services.js';
import { createIdentityService } from './identity/identity.js';
import type { SyncService } from './sync/sync-service.js';
import { MemorySync } from './sync/memory-sync.js';
import { PALACE_VERSION } from './version.js';

export interface OpenPalaceOptions {
  /** 'hub': the HTTP hub (takes the writer lease, runs peer sync, memory long-running); 'local': a process answering tools itself. */
  role: 'hub' | 'local';
  log: Logger;
  /** A read-only hub: takes the lease as hub-read-only and never pulls from peers. */
  readOnly?: boolean;
  /** The hub listens on a non-loopback address. */
  networkExposed?: boolean;
  /** The hub has a bearer token (identity: an anonymous caller cannot reach it). */
  hubToken?: boolean;
  /**
   * Peer sync's service (sync/sync-service.ts), which the hub role needs: passed in by the hub
   * (server.ts) so a local process (the CLI) never loads the sync protocol's schemas.
   */
  syncService?: typeof SyncService;
}

export interface Palace {
  readonly services: HubServices;
  readonly palacePath: string;
  /** The writer lease (hub role only). */
  readonly lease: Lease | undefined;
  /** Records where the hub listens: the lease names it and describe() reports it. */
  setListening(url: string): void;
  close(): Promise<void>;
}

export function openPalace(config: Readonly<PalaceConfig>, options: OpenPalaceOptions): Palace {
  const { role, log } = options;
  const readOnly = options.readOnly ?? false;
  const Sync = role === 'hub' ? options.syncService : undefined;
  if (role === 'hub' && !Sync) throw new HubError('internal', 'openPalace: the hub role needs options.syncService');
  const palacePath = canonicalPalace(config.palacePath);
  // A read-only hub takes the lease too: two servers never point at one palace (a reader beside the
  // writer would serve a stale vector index and could run journal recovery behind its back).
  const lease = role === 'hub' ? acquireLease(palacePath, readOnly ? 'hub-read-only' : 'hub') : undefined;
  let logstream: Logstream;
  try {
    logstream = Logstream.open(palacePath, { durability: config.durability, maxSkewMs: config.syncMaxSkewMs });
  } catch (err) {
    lease?.release();
    throw err;
  }
  // Search's path scan (and stale hits) read the mined files from the manifest, parsed once per change.
  const minedFiles = (): ReturnType<typeof minedProjectFiles> => minedProjectFiles(readManifest(palacePath));
  const minedEntry = (file: string): MinedFileEntry | undefined => readManifest(palacePath)[file];
  // A hub parses the manifest and indexes its paths in slices before a search needs them (megabytes
  // of JSON at a year old: one synchronous parse held the event loop for hundreds of ms).
  let warming: Promise<unknown> | undefined;
  const minedFilesReady = (): Promise<unknown> =>
    (warming ??= readManifestSliced(palacePath)
      .then((manifest) => warmMinedFiles(manifest))
      .catch(() => undefined)
      .finally(() => (warming = undefined)));
  // Memory replication: local writes to shared wings feed this hub's memory feeds (docs/memory-replication.md).
  const memorySync: MemorySync = new MemorySync({
    palacePath,
    replica: logstream.store.replica,
    memory: () => memory.get(),
    verify: config.syncVerify,
    faultPoint: config.faultInject,
    kg: () => kg.get(),
  });
  const memory = createMemoryHandle(config, palacePath, role === 'hub' ? log.child('memory') : log, { ...(role === 'hub' ? { longRunning: true, minedFilesReady } : {}), minedFiles, minedEntry, replication: memorySync });
  const kg = createKgHandle(palacePath, { onChange: (facts) => memorySync.captureFacts(facts), origin: logstream.replicaId });
  let cypher: CypherService | undefined;
  let listen: string | null = null;
  const services: HubServices = {
    config,
    logstream,
    memory,
    memorySync,
    kg,
    log,
    version: PALACE_VERSION,
    startedAt: new Date(),
    readOnly,
    role,
    ...(options.networkExposed !== undefined ? { networkExposed: options.networkExposed } : {}),
    stats: new RequestStats(),
    identity: createIdentityService({
      palacePath,
      mode: config.identityMode ?? (options.networkExposed ? 'enforced' : 'open'),
      hubToken: options.hubToken ?? false,
    }),
    mineJobs: new MineJobs(log),
    resourceWatch: new ResourceWatch(logstream, log.child('mcp')),
    cypher: () => (cypher ??= createCypherService(config, () => kg.get())),
    describe: () =>
      lease
        ? { writer: { mode: readOnly ? 'read_only' : 'writer', lease: { path: lease.path, pid: lease.holder.pid } }, listen }
        : { writer: { mode: 'local' } },
  };
  if (Sync)
    services.sync = new Sync({
      replica: logstream.store.replica,
      palacePath,
      name: hostname(),
      intervalSeconds: config.syncIntervalSeconds,
      log: log.child('sync'),
      verify: config.syncVerify,
      memory: memorySync,
      stallMs: config.syncStallMs,
    });

  let closing: Promise<void> | undefined;
  return {
    services,
    palacePath,
    lease,
    setListening(url) {
      listen = url;
      lease?.update(url);
    },
    close() {
      closing ??= (async () => {
        await services.sync?.stop();
        await cypher?.close();
        await memory.close();
        memorySync.close();
        kg.close();
        logstream.close();
        lease?.release();
      })();
      return closing;
    },
  };
}
