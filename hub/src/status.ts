// The palace's status, built in one place: the palace_status tool (and so `palace status`), the
// hub's /statusz, and the `status` block of /stats and palace_stats. Each view is assembled here from
// the same blocks; the HTTP server only hands over what it alone knows (HubRuntime). No I/O of its own.

import { readEmbedderRecord } from './embed/select.js';
import { toHubError } from './errors.js';
import type { StdioCommand } from './launcher.js';
import type { Memory } from './memory/drawers/memory.js';
import { canonicalPalace } from './registration.js';
import type { HubServices } from './services.js';
import { PALACE_VERSION } from './version.js';

/** Who may write this palace from this process: a hub (writer or read-only, with its lease) or the local road. */
export type WriterStatus =
  | { mode: 'writer' | 'read_only'; lease: { path: string; pid: number } }
  | { mode: 'local' };

/** HubServices.describe(): the writer block, and where a hub listens (null before it does). */
export interface ServiceDescription {
  writer: WriterStatus;
  listen?: string | null;
}

/** What only the running HTTP server knows, for /statusz. */
export interface HubRuntime {
  /** The listening address, once bound. */
  bound: { host: string; port: number; scheme: 'http' | 'https' } | undefined;
  /** The last quick_check verdict of the log ('ok', 'checking', or the problem found). */
  sqliteIntegrity: string;
  /** Whether that verdict means healthy. */
  integrityOk: boolean;
  requests: {
    total: number;
    mcp: number;
    by_status: Record<string, number>;
    lock_pending: number;
    waits: { active: number; max: number; refused: number };
  };
  sseClients: number;
  recentClients: ReturnType<HubServices['stats']['recentClients']>;
  /** How a client starts `palace mcp` for this palace (launcher.ts), when known. */
  stdioCommand?: StdioCommand | undefined;
}

const uptime = (hub: HubServices): number => Math.round((Date.now() - hub.startedAt.getTime()) / 1000);

/** The status block of /stats and palace_stats. */
export function hubStatus(hub: HubServices) {
  return {
    version: hub.version,
    role: hub.role,
    uptime_seconds: uptime(hub),
    read_only: hub.readOnly,
    palace: hub.config.palacePath,
  };
}

/** Memory counts when memory is loaded (or `load` asks for it); otherwise what the palace records, cheaply. */
async function memoryStatus(hub: HubServices, load: boolean) {
  try {
    if (!hub.memory.isOpen() && !load)
      return { loaded: false as const, embedder_record: readEmbedderRecord(hub.config.palacePath) ?? null, hint: 'pass include_memory: true for counts' };
    const memory = await hub.memory.get();
    return {
      loaded: true as const,
      ...(await memory.counts()),
      embedder: memory.embedderInfo(),
      // Worker threads embedding for this palace: size, and each live worker's state, batches and own memory.
      embed_workers: memory.embedWorkers(),
      backend: hub.config.backend,
    };
  } catch (err) {
    return { loaded: false as const, error: toHubError(err).toJSON() };
  }
}

/** Memory replication: the wings shared with each peer (peers.json "wings"), the feeds held, re-embedding progress. */
function replicationStatus(hub: HubServices) {
  if (!hub.memorySync) return null;
  try {
    const progress = hub.memory.peek()?.replicator?.progress;
    const waiting = progress ? progress.waiting : hub.memorySync.reembedWaiting();
    // "re-embedding N of M replicated drawers": N done since the hub started, M = N + what waits.
    const reembedding = progress ? { ...progress, total: progress.reembedded + progress.waiting } : waiting > 0 ? { reembedded: 0, waiting, total: waiting, running: false, last_error: null } : null;
    return { ...hub.memorySync.status(), reembedding };
  } catch (err) {
    return { error: toHubError(err).toJSON() };
  }
}

/** palace_status: what this palace is and how the process serving it is doing. */
export async function palaceStatus(hub: HubServices, options: { includeMemory?: boolean | undefined } = {}) {
  // Counted in the task projection table; a cold projection is first built in slices.
  const tasks = await hub.logstream.taskCounts();
  const described: ServiceDescription = hub.describe();
  return {
    palace_path: hub.config.palacePath,
    version: hub.version,
    role: hub.role,
    read_only: hub.readOnly,
    uptime_seconds: uptime(hub),
    logstream: {
      replica_id: hub.logstream.replicaId,
      events: hub.logstream.store.countEvents(),
      latest_event_id: hub.logstream.tipId(),
      open_tasks: tasks.active,
      tasks: tasks.all,
      tasks_by_status: tasks.by_status,
    },
    memory: await memoryStatus(hub, options.includeMemory === true),
    replication: replicationStatus(hub),
    // open (unregistered names believed) or enforced, and how many agents hold a secret (docs/identity.md).
    identity: hub.identity.describe(),
    writer: described.writer,
    ...(described.listen === undefined ? {} : { listen: described.listen }),
  };
}

/** The embedder's block of /statusz once memory is open: model, and its workers with their own RSS. */
function embeddingStatus(memory: Memory | undefined) {
  if (!memory) return {};
  const info = memory.embedderInfo();
  const pool = memory.embedWorkers();
  return {
    embedding: {
      model: info.model,
      device: info.device,
      ...(pool
        ? {
            workers_max: pool.size,
            workers_running: pool.workers.length,
            workers_busy: pool.workers.filter((w) => w.state === 'busy').length,
            idle_release_seconds: pool.idle_release_seconds,
            queued_texts: pool.queued_texts,
            workers: pool.workers.map((w) => ({ worker: w.worker, state: w.state, rss_mb: w.memory_mb, batches: w.batches })),
          }
        : {}),
    },
  };
}

/** GET /statusz: the hub's health for the dashboard, the tray and monitoring. */
export function statusz(hub: HubServices, runtime: HubRuntime) {
  const { bound } = runtime;
  return {
    // Not ok only once a check has found a problem (or failed to run).
    ok: runtime.integrityOk,
    server: {
      name: 'palace',
      version: PALACE_VERSION,
      transport: 'http' as const,
      scheme: bound?.scheme,
      host: bound?.host,
      port: bound?.port,
      pid: process.pid,
      started_at: hub.startedAt.toISOString(),
      uptime_seconds: uptime(hub),
    },
    palace: {
      path: canonicalPalace(hub.config.palacePath),
      backend: hub.config.backend,
      sqlite_integrity: runtime.sqliteIntegrity,
      ...(runtime.stdioCommand ? { stdio_command: runtime.stdioCommand } : {}),
    },
    writer: hub.describe().writer,
    identity: hub.identity.describe(),
    requests: runtime.requests,
    logstream: { replica_id: hub.logstream.replicaId, events: hub.logstream.store.countEvents(), sse_clients: runtime.sseClients },
    clients: { recent: runtime.recentClients },
    ...embeddingStatus(hub.memory.peek()),
  };
}

export type PalaceStatus = Awaited<ReturnType<typeof palaceStatus>>;
export type Statusz = ReturnType<typeof statusz>;
