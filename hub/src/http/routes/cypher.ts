// POST /cypher {cypher, graph}: read-only Cypher over the knowledge graph mirrored into Apache AGE
// on the pgvector backend's Postgres. Write verbs get 403 (SQLSTATE 25006) whatever the backend: the verb
// is checked before the backend (the spec's rule); a read on another backend gets a clear 501.

import type Router from '@koa/router';

import { cypherWriteVerb } from '../../core/cypher-verbs.js';
import { HubError, invalid } from '../../errors.js';
import type { CypherService } from '../../kg/cypher-service.js';
import type { HubServices } from '../../services.js';
import { bodyError, readJsonBody } from '../read-body.js';

const BODY_LIMIT = 256 * 1024;
export const CYPHER_ALLOW: Record<string, string[]> = { '/cypher': ['POST'] };

/** The hub's Cypher service (one Postgres pool per palace, held by its services). */
export function cypherServiceOf(hub: HubServices): CypherService {
  return hub.cypher();
}

export function cypherRoutes(router: Router, hub: HubServices): void {
  router.post('/cypher', async (ctx) => {
    const body = await readJsonBody(ctx.req, BODY_LIMIT);
    if (!body.ok) throw bodyError(body, BODY_LIMIT, 'the body is not JSON');
    const value = body.value as { cypher?: unknown; graph?: unknown } | null;
    if (!value || typeof value !== 'object' || Array.isArray(value)) throw invalid('body', 'send a JSON object {cypher, graph}');
    if (typeof value.cypher !== 'string' || value.cypher.trim() === '') throw invalid('cypher', 'cypher must be a non-empty string');
    if (value.graph !== undefined && value.graph !== null && typeof value.graph !== 'string') throw invalid('graph', 'graph must be a string');
    const verb = cypherWriteVerb(value.cypher);
    if (verb !== null)
      throw new HubError('cypher.write_refused', `Cypher is read-only here; the query writes (${verb}) (read-only transaction, SQLSTATE 25006)`, {
        data: { sqlstate: '25006', verb },
      });
    ctx.body = await cypherServiceOf(hub).query({ cypher: value.cypher, graph: typeof value.graph === 'string' ? value.graph : undefined });
  });
}
