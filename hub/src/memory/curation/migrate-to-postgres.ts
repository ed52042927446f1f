// `palace migrate-to-postgres`: copies a palace's drawers (with their vectors, or re-embedded) from
// its embedded LanceDB store and its knowledge graph into Postgres (pgvector + AGE mirror).
// Resumable: a drawer already there with the same fields is skipped. Never writes the palace.

import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import type { Pool } from 'pg';

import type { PalaceConfig } from '../../config.js';
import { readEmbedderRecord } from '../../embed/select.js';
import { HubError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { mirrorKnowledgeGraph } from '../../vector/age-cypher.js';
import { LanceDbVectorStore } from '../../vector/lancedb-vector-store.js';
import { claimHolder } from '../../vector/open-vector-store.js';
import { copyFactsToPg, ensurePgKg, pgKgTables } from '../../vector/pg-knowledge-graph.js';
import { PgVectorStore, pgTable } from '../../vector/pgvector-vector-store.js';
import { createPgPool, redactDsn } from '../../vector/postgres-pool.js';
import type { StoredDrawer } from '../../vector/vector-store.js';
import { kgGraphName, toMirrorFacts } from '../../kg/cypher-service.js';
import { KG_FILE, KnowledgeGraph } from '../../kg/knowledge-graph.js';
import { embeddingInput } from '../drawers/embedding-input.js';

const BATCH = 128;

export interface Reembedder {
  /** `model/dimensions` recorded on each re-embedded drawer. */
  key: string;
  dimensions: number;
  embed(texts: string[]): Promise<Float32Array[]>;
}

export interface MigrateProgress {
  phase: 'drawers' | 'knowledge graph';
  done: number;
  total: number;
}

export interface MigrateInput {
  config: Readonly<PalaceConfig>;
  palacePath: string;
  dsn: string;
  reembed?: Reembedder | undefined;
  dryRun?: boolean;
  log: Logger;
  onProgress?: (p: MigrateProgress) => void;
}

export interface MigrateReport {
  palace: string;
  dsn: string;
  namespace: string;
  dry_run: boolean;
  reembedded: boolean;
  drawers: { source: number; copied: number; skipped: number; destination: number | null };
  knowledge_graph: { entities: number; triples: number; destination_entities: number | null; destination_triples: number | null; cypher_graph: string; mirrored: boolean | null; mirror_error?: string };
  verified: boolean | null;
}

/** What must match for a copied drawer to count as already there (everything but the vector). */
function fingerprint(d: StoredDrawer): string {
  const fields = [d.id, d.wing, d.room, d.tags, d.content, d.source_file, d.chunk_index, d.parent_id, d.filed_at, d.added_by, d.useful, d.metadata, d.embedder];
  return createHash('sha256').update(JSON.stringify(fields)).digest('hex');
}

async function openSource(palacePath: string, log: Logger): Promise<LanceDbVectorStore | undefined> {
  if (!existsSync(join(palacePath, 'vectors'))) return undefined;
  const record = readEmbedderRecord(palacePath);
  if (!record)
    throw new HubError('memory.embedder_missing', `${palacePath} has vectors but no embedder record (embedder.json); run \`palace repair --mode rebuild\` first`);
  return LanceDbVectorStore.open({ palacePath, dimensions: record.dimensions, log });
}

function readFacts(palacePath: string): { facts: ReturnType<typeof toMirrorFacts>; entities: number; triples: number } {
  if (!existsSync(join(palacePath, KG_FILE))) return { facts: [], entities: 0, triples: 0 };
  const kg = new KnowledgeGraph(palacePath);
  try {
    const stats = kg.stats();
    return { facts: toMirrorFacts(kg.recentFacts(Number.MAX_SAFE_INTEGER)), entities: stats.entities, triples: stats.triples };
  } finally {
    kg.close();
  }
}

export async function migrateToPostgres(input: MigrateInput): Promise<MigrateReport> {
  const { config, palacePath, log } = input;
  const settings = { ...config.backendSettings, pgvectorDsn: input.dsn };
  const progress = input.onProgress ?? (() => undefined);
  const kg = readFacts(palacePath);
  const source = await openSource(palacePath, log);
  try {
    const sourceCount = source ? await source.count() : 0;
    const report: MigrateReport = {
      palace: palacePath,
      dsn: redactDsn(input.dsn),
      namespace: settings.namespace,
      dry_run: input.dryRun === true,
      reembedded: input.reembed !== undefined,
      drawers: { source: sourceCount, copied: 0, skipped: 0, destination: null },
      knowledge_graph: { entities: kg.entities, triples: kg.triples, destination_entities: null, destination_triples: null, cypher_graph: kgGraphName(config), mirrored: null },
      verified: null,
    };
    if (input.dryRun) return report;
    const dimensions = input.reembed?.dimensions ?? readEmbedderRecord(palacePath)?.dimensions ?? 0;
    if (source && dimensions <= 0) throw new HubError('memory.embedder_missing', `cannot tell the vector size of ${palacePath}`);
    // One connection: the copy is sequential, and it keeps PGlite-style single-session servers happy.
    const dest = dimensions > 0 ? await PgVectorStore.open({ settings, dimensions, claimAs: claimHolder(palacePath), maxConnections: 1 }) : undefined;
    const bare = dest ? undefined : await createPgPool({ settings, maxConnections: 1 });
    const pool = dest?.connection ?? (bare as { pool: Pool }).pool;
    try {
      for (let offset = 0; source && dest && offset < sourceCount; offset += BATCH) {
        const batch = await source.scan({}, { limit: BATCH, offset, withVectors: input.reembed === undefined });
        const wanted = input.reembed ? batch.map((d) => ({ ...d, embedder: input.reembed?.key ?? d.embedder })) : batch;
        const present = new Map((await dest.scan({ ids: wanted.map((d) => d.id) })).map((d) => [d.id, fingerprint(d)]));
        let todo = wanted.filter((d) => present.get(d.id) !== fingerprint(d));
        if (input.reembed && todo.length > 0) {
          const vectors = await input.reembed.embed(todo.map((d) => embeddingInput(d.content, d.metadata)));
          todo = todo.map((d, i) => ({ ...d, vector: vectors[i] ?? new Float32Array(0) }));
        }
        await dest.upsert(todo);
        report.drawers.copied += todo.length;
        report.drawers.skipped += batch.length - todo.length;
        progress({ phase: 'drawers', done: Math.min(offset + batch.length, sourceCount), total: sourceCount });
      }
      report.drawers.destination = dest ? await dest.count() : 0;

      const where = report.dsn;
      const tables = pgKgTables(settings.namespace);
      await ensurePgKg(pool, where, tables);
      const copied = await copyFactsToPg(pool, where, tables, kg.facts);
      report.knowledge_graph.destination_entities = copied.entities;
      report.knowledge_graph.destination_triples = copied.triples;
      progress({ phase: 'knowledge graph', done: kg.triples, total: kg.triples });
      try {
        await mirrorKnowledgeGraph(pool, where, report.knowledge_graph.cypher_graph, pgTable(settings.namespace, 'kg_mirror'), kg.facts);
        report.knowledge_graph.mirrored = true;
      } catch (err) {
        // Without Apache AGE the drawers and KG tables still serve; only Cypher is unavailable.
        report.knowledge_graph.mirrored = false;
        report.knowledge_graph.mirror_error = (err as Error).message;
        log.warn(`the knowledge graph was copied but not mirrored into Apache AGE: ${(err as Error).message}`);
      }
    } finally {
      await dest?.close();
      await bare?.pool.end().catch(() => undefined);
    }
    report.verified = report.drawers.destination === sourceCount && report.knowledge_graph.destination_triples === kg.triples;
    return report;
  } finally {
    await source?.close();
  }
}
