// Connects to the pgvector backend's Postgres with the optional `pg` driver (loaded on first use, so
// a default install stays lean) and turns driver and server failures into clear HubErrors.

import type * as PgModule from 'pg';
import type { Pool, PoolClient, PoolConfig } from 'pg';

import { DEFAULT_PG_POOL, type BackendSettings } from '../config.js';
import { HubError } from '../errors.js';

const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH']);

/** Loads `pg`, or explains which package to install. */
type PgDriver = typeof PgModule;

export async function loadPgDriver(): Promise<PgDriver> {
  try {
    const mod = (await import('pg')) as PgDriver & { default?: PgDriver };
    return mod.default ?? mod;
  } catch (err) {
    throw new HubError('backend.driver_missing', "the pgvector backend needs the optional package 'pg': run `npm install pg` next to palace", {
      cause: err,
      data: { package: 'pg' },
    });
  }
}

/** The DSN with its password hidden, for messages. */
export function redactDsn(dsn: string): string {
  return dsn.replace(/(\/\/[^:/@]+:)[^@]*@/, '$1***@');
}

/** The DSN with the database replaced when one is configured separately. */
export function effectiveDsn(settings: Pick<BackendSettings, 'pgvectorDsn' | 'pgvectorDatabase'>): string {
  const dsn = settings.pgvectorDsn;
  if (!dsn) throw new HubError('hub.config', 'PALACE_PGVECTOR_DSN: the pgvector backend needs a Postgres DSN', { field: 'PALACE_PGVECTOR_DSN' });
  if (!settings.pgvectorDatabase) return dsn;
  const url = new URL(dsn);
  url.pathname = `/${encodeURIComponent(settings.pgvectorDatabase)}`;
  return url.toString();
}

/** Any error from the driver or the server as a HubError naming the server. */
export function pgError(err: unknown, where: string): HubError {
  if (err instanceof HubError) return err;
  const e = err as { code?: string; message?: string };
  const message = e.message ?? String(err);
  if ((e.code && UNREACHABLE.has(e.code)) || /Connection terminated|timeout expired/i.test(message))
    return new HubError('backend.unreachable', `cannot reach Postgres at ${where}: ${message}`, { cause: err, data: { backend: 'pgvector' } });
  return new HubError('backend.failed', `Postgres at ${where} failed: ${message}`, {
    cause: err,
    data: { backend: 'pgvector', ...(e.code ? { sqlstate: e.code } : {}) },
  });
}

export interface PgPoolOptions {
  settings: Pick<BackendSettings, 'pgvectorDsn' | 'pgvectorDatabase' | 'timeoutSeconds' | 'pgvectorPool'>;
  /** Connections this pool needs at most (default: the configured pool size); never above PALACE_PGVECTOR_POOL. */
  maxConnections?: number;
}

/** A pool whose statements time out after the configured seconds; it never keeps the process alive. */
export async function createPgPool(options: PgPoolOptions): Promise<{ pool: Pool; where: string }> {
  const pg = await loadPgDriver();
  const dsn = effectiveDsn(options.settings);
  const timeoutMs = Math.round(options.settings.timeoutSeconds * 1000);
  const config: PoolConfig = {
    connectionString: dsn,
    // A search asks several queries at once (vector, keyword, by-id scores); a server that serves one
    // session at a time (PGlite over a socket, a pooler in session mode with one slot) needs 1 here.
    max: Math.min(options.maxConnections ?? Infinity, options.settings.pgvectorPool ?? DEFAULT_PG_POOL),
    connectionTimeoutMillis: timeoutMs,
    statement_timeout: timeoutMs,
    idleTimeoutMillis: 10_000,
    allowExitOnIdle: true,
  };
  const pool = new pg.Pool(config);
  // An idle client losing its server must not crash the hub; the next query reports it.
  pool.on('error', () => undefined);
  return { pool, where: redactDsn(dsn) };
}

/** Runs `fn` inside one transaction on one connection, rolling back on error. */
export async function inTransaction<T>(pool: Pool, begin: string, fn: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query(begin);
    try {
      const result = await fn(client);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    }
  } finally {
    client.release();
  }
}
