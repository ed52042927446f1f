// The knowledge graph's copy in Postgres (`<namespace>kg_entities`, `<namespace>kg_triples`),
// written by `palace migrate-to-postgres`. Upserts by id, so running it again changes nothing.

import type { Pool } from 'pg';

import type { MirrorFact } from './age-cypher.js';
import { pgTable } from './pgvector-vector-store.js';
import { pgError } from './postgres-pool.js';

const BATCH = 200;

export interface PgKgTables {
  entities: string;
  triples: string;
}

export function pgKgTables(namespace: string): PgKgTables {
  return { entities: pgTable(namespace, 'kg_entities'), triples: pgTable(namespace, 'kg_triples') };
}

export async function ensurePgKg(pool: Pool, where: string, tables: PgKgTables): Promise<void> {
  try {
    await pool.query(`CREATE TABLE IF NOT EXISTS ${tables.entities} (id text PRIMARY KEY, name text NOT NULL, type text NOT NULL)`);
    await pool.query(`CREATE TABLE IF NOT EXISTS ${tables.triples} (
      id text PRIMARY KEY, subject_id text NOT NULL, predicate text NOT NULL, object_id text NOT NULL,
      valid_from text, valid_to text, current boolean NOT NULL, confidence double precision NOT NULL,
      source_file text, source_drawer_id text, added_by text, created_at text NOT NULL)`);
  } catch (err) {
    throw pgError(err, where);
  }
}

async function insertRows(pool: Pool, table: string, columns: readonly string[], rows: unknown[][]): Promise<void> {
  for (let i = 0; i < rows.length; i += BATCH) {
    const batch = rows.slice(i, i + BATCH);
    const params: unknown[] = [];
    const values = batch.map((row) => `(${row.map((v) => (params.push(v), `$${params.length}`)).join(', ')})`);
    const updates = columns.filter((c) => c !== 'id').map((c) => `${c} = EXCLUDED.${c}`);
    await pool.query(`INSERT INTO ${table} (${columns.join(', ')}) VALUES ${values.join(', ')} ON CONFLICT (id) DO UPDATE SET ${updates.join(', ')}`, params);
  }
}

/** Upserts the entities and triples of `facts`; returns what the tables then hold. */
export async function copyFactsToPg(pool: Pool, where: string, tables: PgKgTables, facts: readonly MirrorFact[]): Promise<{ entities: number; triples: number }> {
  const entities = new Map<string, unknown[]>();
  for (const f of facts) {
    entities.set(f.subject_id, [f.subject_id, f.subject, f.subject_type]);
    entities.set(f.object_id, [f.object_id, f.object, f.object_type]);
  }
  const triples = facts.map((f) => [
    f.triple_id, f.subject_id, f.predicate, f.object_id, f.valid_from, f.valid_to, f.current, f.confidence, f.source_file, f.source_drawer_id, f.added_by, f.created_at,
  ]);
  try {
    await insertRows(pool, tables.entities, ['id', 'name', 'type'], [...entities.values()]);
    await insertRows(
      pool,
      tables.triples,
      ['id', 'subject_id', 'predicate', 'object_id', 'valid_from', 'valid_to', 'current', 'confidence', 'source_file', 'source_drawer_id', 'added_by', 'created_at'],
      triples,
    );
    return countPgKg(pool, where, tables);
  } catch (err) {
    throw pgError(err, where);
  }
}

export async function countPgKg(pool: Pool, where: string, tables: PgKgTables): Promise<{ entities: number; triples: number }> {
  try {
    const e = await pool.query(`SELECT count(*)::int AS n FROM ${tables.entities}`);
    const t = await pool.query(`SELECT count(*)::int AS n FROM ${tables.triples}`);
    return { entities: Number((e.rows[0] as { n: number }).n), triples: Number((t.rows[0] as { n: number }).n) };
  } catch (err) {
    throw pgError(err, where);
  }
}
