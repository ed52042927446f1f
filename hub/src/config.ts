// Every environment variable and config-file read of palace happens here, once: defaults, then
// ~/.palace/config.json, then PALACE_* variables, then flags. Bad values fail fast naming the variable.

import { mkdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

import { writeFileAtomic } from './atomic-file.js';
import { HubError } from './errors.js';

/** How hard a logstream commit waits for the disk; see docs "Durability". */
export type Durability = 'normal' | 'full';

export type EmbeddingDevice = 'cpu' | 'cuda' | 'dml' | 'coreml' | 'auto';

export const BACKENDS = ['lancedb', 'pgvector', 'qdrant', 'milvus'] as const;
export type BackendName = (typeof BACKENDS)[number];
export const MILVUS_CONSISTENCY_LEVELS = ['Strong', 'Bounded', 'Session', 'Eventually'] as const;
export type MilvusConsistencyLevel = (typeof MILVUS_CONSISTENCY_LEVELS)[number];

/** Settings of the networked vector-store backends (read whatever the backend; checked for the chosen one). */
export interface BackendSettings {
  /** Prefix of table, collection and graph names (PALACE_BACKEND_NAMESPACE, default `palace_`). */
  namespace: string;
  /** Per-request timeout in seconds; for Postgres also the statement timeout (PALACE_BACKEND_TIMEOUT). */
  timeoutSeconds: number;
  pgvectorDsn: string | undefined;
  /** Overrides the database named in the DSN. */
  pgvectorDatabase: string | undefined;
  /** Connections per Postgres pool (PALACE_PGVECTOR_POOL, default 4; 1 for a server that serves one session at a time). */
  pgvectorPool?: number;
  qdrantUrl: string;
  qdrantApiKey: string | undefined;
  milvusUri: string;
  milvusToken: string | undefined;
  milvusDbName: string | undefined;
  milvusConsistencyLevel: MilvusConsistencyLevel;
}

/** The validated, frozen configuration every part of palace is handed. */
export interface PalaceConfig {
  /** ~/.palace (state directory). */
  home: string;
  /** The palace directory. */
  palacePath: string;
  backend: BackendName;
  backendSettings: BackendSettings;
  durability: Durability;
  httpToken: string | undefined;
  extraAllowedHosts: string[];
  idleHours: number;
  sseMaxClients: number;
  /**
   * A /logstream/stream client whose socket takes nothing for this many ms while the hub has a frame
   * for it gets a last `event: error` frame and is closed (PALACE_SSE_STALL_MS, default 30000).
   */
  sseStallMs: number;
  /** Concurrent palace_event_wait calls; more are refused with http.busy (PALACE_WAIT_MAX_CONCURRENT, default 256). */
  waitMaxConcurrent: number;
  /**
   * A hub runs LanceDB in a child process and replaces it once it has grown this many MB
   * (PALACE_LANCEDB_RECYCLE_MB, default 256); 0 keeps LanceDB in the hub's own process.
   */
  lancedbRecycleMb: number;
  syncIntervalSeconds: number;
  /** How often a pending palace_event_wait sends a progress notification (PALACE_WAIT_PROGRESS_MS, default 10000). */
  waitProgressMs: number;
  /** How far ahead of the local clock a pulled event's stamp may be, in ms (PALACE_SYNC_MAX_SKEW_MS, default 300000). */
  syncMaxSkewMs: number;
  /** Check origin signatures on pulled pages (PALACE_SYNC_VERIFY, default on; off only for benchmarks). */
  syncVerify: boolean;
  /** A pulled artifact body that sends nothing for this long is cut off, in ms (PALACE_SYNC_STALL_MS, default 15000). */
  syncStallMs: number;
  hubForward: boolean;
  /** The tool profile `palace mcp` serves unless --profile says otherwise (PALACE_MCP_PROFILE, default full). */
  mcpProfile: 'full' | 'lean';
  embeddingDevice: EmbeddingDevice;
  embeddingModel: string | undefined;
  /** bundled | onnx | openai-compat; undefined = the palace's record, else onnx when its model is present, else bundled. */
  embeddingProvider: 'bundled' | 'onnx' | 'openai-compat' | undefined;
  embeddingApiUrl: string | undefined;
  embeddingApiKey: string | undefined;
  /** Embedding worker threads at most (PALACE_EMBED_WORKERS); undefined = cores minus one, at least one (two on two cores). */
  embedWorkers: number | undefined;
  /** An embedding worker idle this long is ended, freeing its model (PALACE_EMBED_IDLE_SECONDS, default 120; 0 = never). */
  embedIdleSeconds: number;
  agentName: string | undefined;
  /** This agent's own secret (PALACE_AGENT_TOKEN): sent to the hub by `palace mcp` and the CLI; never logged. */
  agentToken: string | undefined;
  /** PALACE_IDENTITY_MODE: open | enforced; undefined = enforced on a network bind, open on loopback (docs/identity.md). */
  identityMode: 'open' | 'enforced' | undefined;
  /** The lease a `claimed` ack gets unless it asks for one (PALACE_CLAIM_LEASE_MS, default 1800000 = 30 min). */
  claimLeaseMs: number;
  /** The longest lease (or reservation TTL) an agent may ask for (PALACE_CLAIM_LEASE_MAX_MS, default 86400000 = 24 h). */
  claimLeaseMaxMs: number;
  /**
   * Directories palace_mine may read (PALACE_MINE_ROOTS, path-delimited; `~` expanded); undefined =
   * the default (the home directory minus credential folders; nothing on a network-exposed hub).
   */
  mineRoots: readonly string[] | undefined;
  /**
   * Test hook, never set in production (PALACE_FAULT_INJECT): a named point where the process kills
   * itself with SIGKILL, so crash tests can die exactly there. `memory.after-journal` = after a drawer
   * write is journaled, before the vector store applies it.
   */
  faultInject: FaultPoint | undefined;
}

/** The crash points PALACE_FAULT_INJECT can name (a test hook). */
export const FAULT_POINTS = ['memory.after-journal', 'memfeed.after-ingest'] as const;
export type FaultPoint = (typeof FAULT_POINTS)[number];

export type Env = Readonly<Record<string, string | undefined>>;

/** Flags that override config and environment. */
export interface ConfigOverrides {
  palace?: string | undefined;
  backend?: string | undefined;
}

function bad(name: string, message: string): HubError {
  return new HubError('hub.config', `${name}: ${message}`, { field: name });
}

function number(env: Env, name: string, fallback: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) throw bad(name, `must be a number ≥ ${min}, got '${raw}'`);
  return n;
}

function pgvectorPool(env: Env): number {
  const raw = env.PALACE_PGVECTOR_POOL;
  if (raw === undefined || raw.trim() === '') return DEFAULT_PG_POOL;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 64) throw bad('PALACE_PGVECTOR_POOL', `must be a whole number from 1 to 64, got '${raw}'`);
  return n;
}

/** Connections per Postgres pool unless PALACE_PGVECTOR_POOL says otherwise. */
export const DEFAULT_PG_POOL = 4;

function embedWorkers(env: Env): number | undefined {
  const raw = env.PALACE_EMBED_WORKERS;
  if (raw === undefined || raw.trim() === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 64) throw bad('PALACE_EMBED_WORKERS', `must be a whole number from 1 to 64, got '${raw}'`);
  return n;
}

function oneOf<T extends string>(env: Env, name: string, values: readonly T[], fallback: T): T {
  const raw = env[name]?.trim().toLowerCase();
  if (!raw) return fallback;
  if (!(values as readonly string[]).includes(raw)) throw bad(name, `must be one of ${values.join(', ')}, got '${raw}'`);
  return raw as T;
}

function text(env: Env, name: string): string | undefined {
  return env[name]?.trim() || undefined;
}

function httpUrl(name: string, raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw bad(name, `must be an http(s) URL, got '${raw}'`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw bad(name, `must be an http(s) URL, got '${raw}'`);
  return raw.replace(/\/+$/, '');
}

function backendName(raw: string, name: string): BackendName {
  const value = raw.trim().toLowerCase();
  if (!(BACKENDS as readonly string[]).includes(value)) throw bad(name, `must be one of ${BACKENDS.join(', ')}, got '${raw}'`);
  return value as BackendName;
}

function readBackendSettings(env: Env, backend: BackendName): BackendSettings {
  const namespace = env.PALACE_BACKEND_NAMESPACE?.trim() ?? 'palace_';
  if (!/^[a-z_][a-z0-9_]{0,39}$/.test(namespace))
    throw bad('PALACE_BACKEND_NAMESPACE', `must be lower-case letters, digits and _ (at most 40, not starting with a digit), got '${namespace}'`);
  const consistencyRaw = text(env, 'PALACE_MILVUS_CONSISTENCY_LEVEL') ?? 'Strong';
  const consistency = MILVUS_CONSISTENCY_LEVELS.find((l) => l.toLowerCase() === consistencyRaw.toLowerCase());
  if (!consistency) throw bad('PALACE_MILVUS_CONSISTENCY_LEVEL', `must be one of ${MILVUS_CONSISTENCY_LEVELS.join(', ')}, got '${consistencyRaw}'`);
  const pgvectorDsn = text(env, 'PALACE_PGVECTOR_DSN');
  if (backend === 'pgvector' && !pgvectorDsn)
    throw bad('PALACE_PGVECTOR_DSN', 'the pgvector backend needs a Postgres DSN, e.g. postgres://palace@db.internal:5432/palace');
  if (pgvectorDsn && !/^postgres(ql)?:\/\//.test(pgvectorDsn))
    throw bad('PALACE_PGVECTOR_DSN', 'must be a postgres:// or postgresql:// URL');
  const milvusDbName = text(env, 'PALACE_MILVUS_DB_NAME');
  if (milvusDbName !== undefined && !/^[A-Za-z_][A-Za-z0-9_]{0,254}$/.test(milvusDbName))
    throw bad('PALACE_MILVUS_DB_NAME', `must be letters, digits and _, got '${milvusDbName}'`);
  return {
    namespace,
    timeoutSeconds: number(env, 'PALACE_BACKEND_TIMEOUT', 30, 1),
    pgvectorDsn,
    pgvectorDatabase: text(env, 'PALACE_PGVECTOR_DATABASE'),
    pgvectorPool: pgvectorPool(env),
    qdrantUrl: httpUrl('PALACE_QDRANT_URL', text(env, 'PALACE_QDRANT_URL') ?? 'http://localhost:6333'),
    qdrantApiKey: text(env, 'PALACE_QDRANT_API_KEY'),
    milvusUri: httpUrl('PALACE_MILVUS_URI', text(env, 'PALACE_MILVUS_URI') ?? 'http://localhost:19530'),
    milvusToken: text(env, 'PALACE_MILVUS_TOKEN'),
    milvusDbName,
    milvusConsistencyLevel: consistency,
  };
}

function claimLeases(env: Env): { claimLeaseMs: number; claimLeaseMaxMs: number } {
  const claimLeaseMaxMs = Math.floor(number(env, 'PALACE_CLAIM_LEASE_MAX_MS', 86_400_000, 1_000));
  const claimLeaseMs = Math.floor(number(env, 'PALACE_CLAIM_LEASE_MS', Math.min(1_800_000, claimLeaseMaxMs), 1_000));
  if (claimLeaseMs > claimLeaseMaxMs)
    throw bad('PALACE_CLAIM_LEASE_MS', `must not exceed PALACE_CLAIM_LEASE_MAX_MS (${claimLeaseMaxMs}), got ${claimLeaseMs}`);
  return { claimLeaseMs, claimLeaseMaxMs };
}

/** The lease bounds coordination calls take (claims, renewals, reservation TTLs). */
export function leaseBounds(config: Pick<PalaceConfig, 'claimLeaseMs' | 'claimLeaseMaxMs'>): { defaultMs: number; maxMs: number } {
  return { defaultMs: config.claimLeaseMs, maxMs: config.claimLeaseMaxMs };
}

function readConfigFile(home: string): Record<string, unknown> {
  const path = join(home, 'config.json');
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return {};
  }
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // fall through to the error below
  }
  throw new HubError('hub.config', `${path} is not a JSON object; fix or remove it`, { field: 'config.json' });
}

function expandHome(path: string): string {
  if (path === '~') return homedir();
  if (path.startsWith('~/')) return join(homedir(), path.slice(2));
  return isAbsolute(path) ? path : resolve(path);
}

function mineRoots(raw: string | undefined): readonly string[] | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  const roots = raw
    .split(delimiter)
    .map((r) => r.trim())
    .filter(Boolean);
  for (const r of roots)
    if (!isAbsolute(r) && r !== '~' && !r.startsWith('~/')) throw bad('PALACE_MINE_ROOTS', `each root must be an absolute path (or start with ~/), got '${r}'`);
  return Object.freeze(roots.map(expandHome));
}

/**
 * The mining roots recorded in `<home>/config.json` (`mine_roots`, absolute paths or `~/…`), read at
 * every call so a root `palace init` records reaches a running hub without a restart. [] when none.
 */
export function fileMineRoots(home: string): string[] {
  const raw = readConfigFile(home).mine_roots;
  if (raw === undefined) return [];
  const where = `${join(home, 'config.json')} mine_roots`;
  if (!Array.isArray(raw) || raw.some((r) => typeof r !== 'string'))
    throw new HubError('hub.config', `${where} must be a list of absolute paths`, { field: 'config.json' });
  for (const r of raw as string[])
    if (!isAbsolute(r) && r !== '~' && !r.startsWith('~/'))
      throw new HubError('hub.config', `${where}: each root must be an absolute path (or start with ~/), got '${r}'`, { field: 'config.json' });
  return (raw as string[]).map(expandHome);
}

/** Adds `dir` (absolute) to `mine_roots` in `<home>/config.json`, keeping every other setting; false when it was there. */
export function addFileMineRoot(home: string, dir: string): boolean {
  const file = readConfigFile(home);
  const roots = fileMineRoots(home);
  if (roots.includes(dir)) return false;
  mkdirSync(home, { recursive: true, mode: 0o700 });
  writeFileAtomic(join(home, 'config.json'), `${JSON.stringify({ ...file, mine_roots: [...((file.mine_roots as string[] | undefined) ?? []), dir] }, null, 2)}\n`);
  return true;
}

/** Builds the configuration from an environment (default: this process's) and flag overrides. */
export function loadConfig(overrides: ConfigOverrides = {}, env: Env = process.env): Readonly<PalaceConfig> {
  const home = env.PALACE_HOME ? resolve(env.PALACE_HOME) : join(homedir(), '.palace');
  const file = readConfigFile(home);
  const filePalace = typeof file.palace_path === 'string' ? file.palace_path : undefined;
  const palaceRaw = overrides.palace ?? env.PALACE_PALACE_PATH ?? filePalace ?? join(home, 'palace');
  const fileBackend = typeof file.backend === 'string' ? file.backend : undefined;
  const forward = env.PALACE_HUB_FORWARD?.trim().toLowerCase();
  const backendSource = overrides.backend !== undefined ? '--backend' : env.PALACE_BACKEND ? 'PALACE_BACKEND' : 'config.json backend';
  const backend = backendName(overrides.backend ?? (env.PALACE_BACKEND || undefined) ?? fileBackend ?? 'lancedb', backendSource);
  return Object.freeze({
    home,
    palacePath: resolve(expandHome(palaceRaw)),
    backend,
    backendSettings: Object.freeze(readBackendSettings(env, backend)),
    durability: oneOf(env, 'PALACE_LOG_DURABILITY', ['normal', 'full'] as const, 'normal'),
    httpToken: env.PALACE_MCP_HTTP_TOKEN?.trim() || undefined,
    extraAllowedHosts: (env.PALACE_MCP_EXTRA_ALLOWED_HOSTS ?? '')
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean),
    idleHours: number(env, 'PALACE_MCP_IDLE_HOURS', 8),
    sseMaxClients: Math.floor(number(env, 'PALACE_SSE_MAX_CLIENTS', 8)),
    sseStallMs: Math.floor(number(env, 'PALACE_SSE_STALL_MS', 30_000, 1)),
    waitMaxConcurrent: Math.floor(number(env, 'PALACE_WAIT_MAX_CONCURRENT', 256, 1)),
    lancedbRecycleMb: number(env, 'PALACE_LANCEDB_RECYCLE_MB', 256),
    syncIntervalSeconds: number(env, 'PALACE_SYNC_INTERVAL', 15),
    waitProgressMs: number(env, 'PALACE_WAIT_PROGRESS_MS', 10_000, 100),
    syncMaxSkewMs: Math.floor(number(env, 'PALACE_SYNC_MAX_SKEW_MS', 300_000)),
    syncVerify: oneOf(env, 'PALACE_SYNC_VERIFY', ['1', '0'] as const, '1') === '1',
    syncStallMs: Math.floor(number(env, 'PALACE_SYNC_STALL_MS', 15_000, 1)),
    hubForward: !(forward && ['0', 'false', 'no', 'off'].includes(forward)),
    mcpProfile: oneOf(env, 'PALACE_MCP_PROFILE', ['full', 'lean'] as const, 'full'),
    embeddingDevice: oneOf(env, 'PALACE_EMBEDDING_DEVICE', ['cpu', 'cuda', 'dml', 'coreml', 'auto'] as const, 'cpu'),
    embeddingModel: env.PALACE_EMBEDDING_MODEL?.trim() || undefined,
    embeddingProvider: env.PALACE_EMBEDDING_PROVIDER?.trim()
      ? oneOf(env, 'PALACE_EMBEDDING_PROVIDER', ['bundled', 'onnx', 'openai-compat'] as const, 'bundled')
      : undefined,
    embeddingApiUrl: env.PALACE_EMBEDDING_API_URL?.trim() || undefined,
    embeddingApiKey: env.PALACE_EMBEDDING_API_KEY?.trim() || undefined,
    embedWorkers: embedWorkers(env),
    embedIdleSeconds: number(env, 'PALACE_EMBED_IDLE_SECONDS', 120),
    agentName: env.PALACE_AGENT_NAME?.trim() || undefined,
    agentToken: env.PALACE_AGENT_TOKEN?.trim() || undefined,
    identityMode: env.PALACE_IDENTITY_MODE?.trim() ? oneOf(env, 'PALACE_IDENTITY_MODE', ['open', 'enforced'] as const, 'open') : undefined,
    ...claimLeases(env),
    mineRoots: mineRoots(env.PALACE_MINE_ROOTS),
    faultInject: env.PALACE_FAULT_INJECT?.trim() ? oneOf(env, 'PALACE_FAULT_INJECT', FAULT_POINTS, FAULT_POINTS[0]) : undefined,
  });
}
