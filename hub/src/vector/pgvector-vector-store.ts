// The pgvector VectorStore: one table `<namespace>drawers` on a Postgres server with the `vector`
// extension. Exact cosine search (`<=>`), full text by tsvector/ts_rank (the documented BM25
// fallback), and a claim row so only one hub serves the table.

import { hostname } from 'node:os';

import type { Pool } from 'pg';

import type { BackendSettings } from '../config.js';
import { HubError } from '../errors.js';
import { checkDimensions, drawerFromRecord, metadataFromJson } from './drawer-record.js';
import { createPgPool, pgError } from './postgres-pool.js';
import type { DrawerFilter, DrawerPatch, ScanOptions, StoredDrawer, VectorStore, FullTextOptions } from './vector-store.js';

/** A claim whose heartbeat is older than this is taken over (the holder died without releasing it). */
const CLAIM_STALE_SECONDS = 60;
const HEARTBEAT_MS = 15_000;

export interface PgVectorOptions {
  settings: Pick<BackendSettings, 'pgvectorDsn' | 'pgvectorDatabase' | 'timeoutSeconds' | 'namespace' | 'pgvectorPool'>;
  dimensions: number;
  /** Claims the table for this holder (a hub); a second holder is refused while the claim is live. */
  claimAs?: string;
  maxConnections?: number;
}

/** `"<namespace><name>"`, a quoted identifier (the namespace is validated by the config). */
export function pgTable(namespace: string, name: string): string {
  return `"${`${namespace}${name}`.replace(/"/g, '""')}"`;
}

function vectorText(v: Float32Array): string {
  return `[${Array.from(v).join(',')}]`;
}

function parseVector(text: unknown): Float32Array {
  if (typeof text !== 'string' || text.length < 2) return new Float32Array(0);
  const inner = text.slice(1, -1).trim();
  return inner === '' ? new Float32Array(0) : Float32Array.from(inner.split(',').map(Number));
}

interface Where {
  sql: string;
  params: unknown[];
}

/** WHERE clause with numbered parameters starting after `offset` existing ones. */
export function pgFilter(filter: DrawerFilter, offset = 0): Where {
  const parts: string[] = [];
  const params: unknown[] = [];
  const param = (value: unknown): string => {
    params.push(value);
    return `$${offset + params.length}`;
  };
  if (filter.ids) parts.push(filter.ids.length === 0 ? 'false' : `id = ANY(${param([...filter.ids])}::text[])`);
  if (filter.wing !== undefined) parts.push(`wing = ${param(filter.wing)}`);
  if (filter.room !== undefined) parts.push(`room = ${param(filter.room)}`);
  if (filter.source_file !== undefined) parts.push(`source_file = ${param(filter.source_file)}`);
  if (filter.parent_id !== undefined) parts.push(`parent_id = ${param(filter.parent_id)}`);
  if (filter.tags && filter.tags.length > 0) parts.push(`tags && ${param([...filter.tags])}::text[]`);
  return { sql: parts.length > 0 ? parts.join(' AND ') : 'true', params };
}

const COLUMNS = 'id, wing, room, tags, content, source_file, chunk_index, parent_id, filed_at, added_by, useful, metadata_json, embedder';

type Row = Record<string, unknown>;

function fromRow(row: Row): StoredDrawer {
  return drawerFromRecord(row, { id: row.id, metadata: metadataFromJson(row.metadata_json), vector: parseVector(row.vector_text) });
}

export class PgVectorStore implements VectorStore {
  private heartbeat: NodeJS.Timeout | undefined;

  private constructor(
    private readonly pool: Pool,
    private readonly where: string,
    private readonly table: string,
    private readonly claims: string,
    private readonly collection: string,
    private readonly dimensions: number,
    private readonly holder: string | undefined,
  ) {}

  static async open(options: PgVectorOptions): Promise<PgVectorStore> {
    const { namespace } = options.settings;
    const { pool, where } = await createPgPool({ settings: options.settings, ...(options.maxConnections ? { maxConnections: options.maxConnections } : {}) });
    const store = new PgVectorStore(
      pool,
      where,
      pgTable(namespace, 'drawers'),
      pgTable(namespace, 'claims'),
      `${namespace}drawers`,
      options.dimensions,
      options.claimAs,
    );
    try {
      await store.ensureSchema();
      if (options.claimAs !== undefined) await store.claim();
    } catch (err) {
      await pool.end().catch(() => undefined);
      throw pgError(err, where);
    }
    return store;
  }

  /** The Postgres pool (shared with the Cypher endpoint and migration). */
  get connection(): Pool {
    return this.pool;
  }

  private async run(sql: string, params: unknown[] = []): Promise<{ rows: Row[]; rowCount: number }> {
    try {
      const result = await this.pool.query(sql, params);
      return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
    } catch (err) {
      throw pgError(err, this.where);
    }
  }

  private async ensureSchema(): Promise<void> {
    const has = await this.pool.query(`SELECT 1 FROM pg_extension WHERE extname = 'vector'`);
    if (has.rowCount === 0) {
      try {
        await this.pool.query('CREATE EXTENSION IF NOT EXISTS vector');
      } catch (err) {
        throw new HubError('backend.failed', `Postgres at ${this.where} has no pgvector extension and it cannot be created: ${(err as Error).message}`, {
          cause: err,
          data: { backend: 'pgvector' },
        });
      }
    }
    await this.pool.query(`CREATE TABLE IF NOT EXISTS ${this.table} (
      id text PRIMARY KEY,
      wing text NOT NULL,
      room text NOT NULL,
      tags text[] NOT NULL DEFAULT '{}',
      content text NOT NULL,
      source_file text,
      chunk_index integer NOT NULL DEFAULT 0,
      parent_id text,
      filed_at text NOT NULL,
      added_by text NOT NULL,
      useful boolean,
      metadata_json text NOT NULL DEFAULT '{}',
      embedder text NOT NULL,
      vector vector(${this.dimensions}) NOT NULL,
      tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', content)) STORED
    )`);
    const base = this.collection;
    await this.pool.query(`CREATE INDEX IF NOT EXISTS "${base}_wing_room_idx" ON ${this.table} (wing, room)`);
    await this.pool.query(`CREATE INDEX IF NOT EXISTS "${base}_parent_idx" ON ${this.table} (parent_id)`);
    await this.pool.query(`CREATE INDEX IF NOT EXISTS "${base}_source_idx" ON ${this.table} (source_file)`);
    await this.pool.query(`CREATE INDEX IF NOT EXISTS "${base}_tags_idx" ON ${this.table} USING gin (tags)`);
    await this.pool.query(`CREATE INDEX IF NOT EXISTS "${base}_tsv_idx" ON ${this.table} USING gin (tsv)`);
    const typmod = await this.pool.query(
      `SELECT a.atttypmod AS dims FROM pg_attribute a WHERE a.attrelid = to_regclass($1) AND a.attname = 'vector'`,
      [this.table],
    );
    const stored = Number((typmod.rows[0] as Row | undefined)?.dims ?? this.dimensions);
    if (stored > 0 && stored !== this.dimensions)
      throw new HubError(
        'memory.embedder_mismatch',
        `the palace's vectors in ${this.collection} have ${stored} dimensions but the embedder makes ${this.dimensions}; run \`palace set-embedder --force\` and rebuild the index`,
      );
  }

  private async claim(): Promise<void> {
    await this.pool.query(`CREATE TABLE IF NOT EXISTS ${this.claims} (
      collection text PRIMARY KEY, holder text NOT NULL, host text NOT NULL, pid integer NOT NULL,
      claimed_at timestamptz NOT NULL DEFAULT now(), heartbeat timestamptz NOT NULL DEFAULT now())`);
    const won = await this.pool.query(
      `INSERT INTO ${this.claims} AS c (collection, holder, host, pid) VALUES ($1, $2, $3, $4)
       ON CONFLICT (collection) DO UPDATE SET holder = EXCLUDED.holder, host = EXCLUDED.host, pid = EXCLUDED.pid, claimed_at = now(), heartbeat = now()
       WHERE c.holder = EXCLUDED.holder OR c.heartbeat < now() - make_interval(secs => $5)
       RETURNING holder`,
      [this.collection, this.holder, hostname(), process.pid, CLAIM_STALE_SECONDS],
    );
    if (won.rowCount === 0) {
      const held = (await this.pool.query(`SELECT holder, host, pid, heartbeat FROM ${this.claims} WHERE collection = $1`, [this.collection])).rows[0] as Row | undefined;
      throw new HubError(
        'lease.held',
        `the backend collection ${this.collection} at ${this.where} is served by another hub (${String(held?.holder)} on ${String(held?.host)}, pid ${String(held?.pid)}); ` +
          'stop that hub or use another PALACE_BACKEND_NAMESPACE',
        { data: { collection: this.collection, holder: held?.holder, host: held?.host, pid: held?.pid } },
      );
    }
    this.heartbeat = setInterval(() => {
      this.pool.query(`UPDATE ${this.claims} SET heartbeat = now() WHERE collection = $1 AND holder = $2`, [this.collection, this.holder]).catch(() => undefined);
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  async upsert(drawers: readonly StoredDrawer[]): Promise<void> {
    if (drawers.length === 0) return;
    checkDimensions(drawers, this.dimensions);
    // Last write wins within one batch, as with repeated single upserts.
    const byId = new Map(drawers.map((d) => [d.id, d]));
    const rows = [...byId.values()];
    const cols = ['id', 'wing', 'room', 'tags', 'content', 'source_file', 'chunk_index', 'parent_id', 'filed_at', 'added_by', 'useful', 'metadata_json', 'embedder', 'vector'];
    for (let start = 0; start < rows.length; start += 500) {
      const batch = rows.slice(start, start + 500);
      const params: unknown[] = [];
      const values = batch.map((d) => {
        const base = params.length;
        params.push(d.id, d.wing, d.room, d.tags, d.content, d.source_file, d.chunk_index, d.parent_id, d.filed_at, d.added_by, d.useful, JSON.stringify(d.metadata), d.embedder, vectorText(d.vector));
        return `(${cols.map((c, i) => `$${base + i + 1}${c === 'tags' ? '::text[]' : c === 'vector' ? '::vector' : ''}`).join(', ')})`;
      });
      await this.run(
        `INSERT INTO ${this.table} (${cols.join(', ')}) VALUES ${values.join(', ')}
         ON CONFLICT (id) DO UPDATE SET ${cols.filter((c) => c !== 'id').map((c) => `${c} = EXCLUDED.${c}`).join(', ')}`,
        params,
      );
    }
  }

  async patch(filter: DrawerFilter, patch: DrawerPatch): Promise<number> {
    const sets: string[] = [];
    const params: unknown[] = [];
    const set = (column: string, value: unknown, cast = ''): void => {
      params.push(value);
      sets.push(`${column} = $${params.length}${cast}`);
    };
    if (patch.wing !== undefined) set('wing', patch.wing);
    if (patch.room !== undefined) set('room', patch.room);
    if (patch.tags !== undefined) set('tags', patch.tags, '::text[]');
    if (patch.useful !== undefined) set('useful', patch.useful, '::boolean');
    if (sets.length === 0) return 0;
    const where = pgFilter(filter, params.length);
    return (await this.run(`UPDATE ${this.table} SET ${sets.join(', ')} WHERE ${where.sql}`, [...params, ...where.params])).rowCount;
  }

  async delete(filter: DrawerFilter): Promise<number> {
    const where = pgFilter(filter);
    return (await this.run(`DELETE FROM ${this.table} WHERE ${where.sql}`, where.params)).rowCount;
  }

  async scan(filter: DrawerFilter, options: ScanOptions = {}): Promise<StoredDrawer[]> {
    const where = pgFilter(filter);
    const params = [...where.params];
    let paging = '';
    if (options.limit !== undefined) {
      params.push(options.limit);
      paging += ` LIMIT $${params.length}`;
    }
    if (options.offset) {
      params.push(options.offset);
      paging += ` OFFSET $${params.length}`;
    }
    const vector = options.withVectors ? ', vector::text AS vector_text' : '';
    const { rows } = await this.run(
      `SELECT ${COLUMNS}${vector} FROM ${this.table} WHERE ${where.sql} ORDER BY filed_at COLLATE "C", id COLLATE "C"${paging}`,
      params,
    );
    return rows.map(fromRow);
  }

  async search(vector: Float32Array, filter: DrawerFilter, limit: number): Promise<Array<{ drawer: StoredDrawer; distance: number }>> {
    const where = pgFilter(filter, 2);
    const { rows } = await this.run(
      `SELECT ${COLUMNS}, vector::text AS vector_text, vector <=> $1::vector AS distance FROM ${this.table}
       WHERE ${where.sql} ORDER BY distance, id COLLATE "C" LIMIT $2`,
      [vectorText(vector), limit, ...where.params],
    );
    return rows.map((row) => ({ drawer: fromRow(row), distance: Number(row.distance) }));
  }

  async fullText(query: string, filter: DrawerFilter, limit: number, options: FullTextOptions = {}): Promise<Array<{ drawer: StoredDrawer; score: number }>> {
    // No separate names field here: the names-only list is left out of fusion.
    if (options.fields === 'names') return [];
    // Any query word may match (OR), like BM25; each word is quoted so query syntax is just text.
    const where = pgFilter(filter, 2);
    const { rows } = await this.run(
      `WITH q AS (
         SELECT to_tsquery('simple', coalesce(string_agg(quote_literal(w), ' | '), '')) AS query
         FROM unnest(tsvector_to_array(to_tsvector('simple', $1))) AS w
       )
       SELECT ${COLUMNS}, ts_rank(tsv, q.query) AS score FROM ${this.table}, q
       WHERE tsv @@ q.query AND ${where.sql} ORDER BY score DESC, id COLLATE "C" LIMIT $2`,
      [query, limit, ...where.params],
    );
    return rows.map((row) => ({ drawer: fromRow(row), score: Number(row.score) }));
  }

  async count(filter: DrawerFilter = {}): Promise<number> {
    const where = pgFilter(filter);
    const { rows } = await this.run(`SELECT count(*)::int AS n FROM ${this.table} WHERE ${where.sql}`, where.params);
    return Number(rows[0]?.n ?? 0);
  }

  /** Drops the drawer table (tests and `migrate-to-postgres --fresh`). */
  async dropAll(): Promise<void> {
    await this.run(`DROP TABLE IF EXISTS ${this.table}`);
  }

  async close(): Promise<void> {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    if (this.holder !== undefined)
      await this.pool.query(`DELETE FROM ${this.claims} WHERE collection = $1 AND holder = $2`, [this.collection, this.holder]).catch(() => undefined);
    await this.pool.end().catch(() => undefined);
  }
}
