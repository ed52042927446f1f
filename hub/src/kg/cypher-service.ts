// The hub's read-only Cypher service: on the pgvector backend it mirrors the knowledge graph into
// an Apache AGE graph (`<namespace>kg`) on the same Postgres and runs queries there, read-only.

import type { Pool } from 'pg';

import type { PalaceConfig } from '../config.js';
import { HubError } from '../errors.js';
import { mirrorKnowledgeGraph, runReadOnlyCypher, type CypherResult, type MirrorFact } from '../vector/age-cypher.js';
import { pgTable } from '../vector/pgvector-vector-store.js';
import { createPgPool } from '../vector/postgres-pool.js';
import { entityId, type KgFact } from './knowledge-graph.js';

/** Every fact the KG mirror copies (the timeline tool's page size does not apply here). */
const ALL_FACTS = Number.MAX_SAFE_INTEGER;

export interface CypherService {
  /** The graph the knowledge graph is mirrored into. */
  readonly kgGraph: string;
  query(input: { cypher: string; graph?: string | undefined }): Promise<CypherResult>;
  close(): Promise<void>;
}

export function toMirrorFacts(facts: readonly KgFact[]): MirrorFact[] {
  return facts.map((f) => ({ ...f, subject_id: entityId('subject', f.subject), object_id: entityId('object', f.object) }));
}

export function kgGraphName(config: Readonly<PalaceConfig>): string {
  return `${config.backendSettings.namespace}kg`;
}

/** The service, or the clear refusal an embedded-backend hub answers with. */
export function createCypherService(config: Readonly<PalaceConfig>, facts: () => { recentFacts(limit: number): KgFact[] }): CypherService {
  const kgGraph = kgGraphName(config);
  let opening: Promise<{ pool: Pool; where: string }> | undefined;
  const connect = (): Promise<{ pool: Pool; where: string }> => {
    if (config.backend !== 'pgvector')
      throw new HubError(
        'cypher.unavailable',
        `Cypher needs the pgvector backend with Apache AGE (PALACE_BACKEND=pgvector and a Postgres with the age extension); this hub uses ${config.backend}`,
        { data: { backend: config.backend } },
      );
    opening ??= createPgPool({ settings: config.backendSettings, maxConnections: 2 }).catch((err: unknown) => {
      opening = undefined;
      throw err;
    });
    return opening;
  };
  return {
    kgGraph,
    async query(input) {
      const { pool, where } = await connect();
      const graph = input.graph ?? kgGraph;
      if (graph === kgGraph)
        await mirrorKnowledgeGraph(pool, where, kgGraph, pgTable(config.backendSettings.namespace, 'kg_mirror'), toMirrorFacts(facts().recentFacts(ALL_FACTS)));
      return runReadOnlyCypher(pool, where, { graph, cypher: input.cypher, timeoutSeconds: config.backendSettings.timeoutSeconds });
    },
    async close() {
      const open = opening;
      opening = undefined;
      if (open) await (await open.catch(() => undefined))?.pool.end();
    },
  };
}
