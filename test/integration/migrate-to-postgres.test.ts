// `palace migrate-to-postgres` end to end on a real Postgres engine (PGlite with pgvector and AGE,
// over the wire): drawers filed into a LanceDB palace through the CLI are copied with their vectors,
// a second run resumes without duplicates, search on PALACE_BACKEND=pgvector gives the same top
// results, the knowledge graph answers Cypher through the hub, and a live hub blocks the copy.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { loadConfig } from '../../hub/src/config.js';
import { cypherServiceOf } from '../../hub/src/http/routes/cypher.js';
import { silentLogger } from '../../hub/src/log.js';
import type { MigrateReport } from '../../hub/src/memory/curation/migrate-to-postgres.js';
import { startHub } from '../../hub/src/server.js';
import { makeTempPalace, parseJson, type CliResult, type ErrorJson, type TempPalace } from '../helpers/cli.js';
import { freshNamespace, startPgliteServer, type PgliteServer } from '../helpers/pglite-server.js';

const DRAWERS = [
  'We chose LanceDB as the embedded vector store because it runs in-process and needs no separate server.',
  'The CI pipeline runs on GitHub Actions with a matrix of Node 20 and Node 22.',
  'Alice prefers tabs over spaces and wants 100-character lines in TypeScript files.',
  'The staging database is restored from the nightly production snapshot every Monday.',
  'Our on-call rotation changes every Wednesday at 10:00 UTC.',
];

interface SearchJson {
  results: Array<{ drawer_id: string; content: string; similarity: number | null }>;
}

describe('palace migrate-to-postgres (PGlite over the wire)', () => {
  let pg: PgliteServer;
  let palace: TempPalace;
  let namespace: string;
  let pgEnv: Record<string, string>;

  beforeAll(async () => {
    pg = await startPgliteServer();
    palace = makeTempPalace('palace-migrate-');
    namespace = freshNamespace('mig');
    // PGlite serves one session at a time: concurrent queries on several connections interleave and can
    // hang it (electric-sql/pglite#1046), so the palace's pools keep to one connection here.
    pgEnv = { PALACE_BACKEND: 'pgvector', PALACE_PGVECTOR_DSN: pg.dsn, PALACE_BACKEND_NAMESPACE: namespace, PALACE_PGVECTOR_POOL: '1' };
    for (const [i, content] of DRAWERS.entries()) {
      const added = await palace.run(['drawer', 'add', '--wing', 'proj', '--room', i % 2 ? 'ops' : 'decisions', '--content', content, '--json']);
      expect(added.code, added.stderr).toBe(0);
    }
    for (const args of [
      ['Alice', 'works_on', 'palace', '--subject-type', 'person', '--object-type', 'project'],
      ['Bob', 'works_on', 'palace', '--subject-type', 'person'],
      ['Alice', 'mentors', 'Bob', '--valid-to', '2025-12-31'],
    ]) {
      const added = await palace.run(['kg', 'add', ...args, '--json']);
      expect(added.code, added.stderr).toBe(0);
    }
  }, 180_000);

  afterAll(async () => {
    await palace.cleanup();
    await pg.stop();
  });

  it('dry run only counts', async () => {
    const res = await palace.run(['migrate-to-postgres', '--dsn', pg.dsn, '--dry-run', '--json'], { env: { PALACE_BACKEND_NAMESPACE: namespace } });
    expect(res.code, res.stderr).toBe(0);
    const report = parseJson<MigrateReport>(res);
    expect(report).toMatchObject({ dry_run: true, drawers: { source: 5, copied: 0, destination: null }, knowledge_graph: { triples: 3, entities: 3 } });
  });

  it('copies drawers and the knowledge graph, verifies the counts and says how to switch', async () => {
    const res = await palace.run(['migrate-to-postgres', '--dsn', pg.dsn, '--json'], { env: { PALACE_BACKEND_NAMESPACE: namespace } });
    expect(res.code, res.stderr).toBe(0);
    const report = parseJson<MigrateReport>(res);
    expect(report.drawers).toEqual({ source: 5, copied: 5, skipped: 0, destination: 5 });
    expect(report.knowledge_graph).toMatchObject({ triples: 3, destination_triples: 3, destination_entities: 3, mirrored: true, cypher_graph: `${namespace}kg` });
    expect(report.verified).toBe(true);
    // Not a TTY: progress comes as parseable lines on stderr.
    expect(res.stderr).toMatch(/^progress drawers 5\/5$/m);

    const text = await palace.run(['migrate-to-postgres', '--dsn', pg.dsn], { env: { PALACE_BACKEND_NAMESPACE: namespace } });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain('PALACE_BACKEND=pgvector');
    expect(text.stdout).toContain('0 copied, 5 already there');
  });

  it('resumes: a second run copies nothing and leaves no duplicates', async () => {
    const res = await palace.run(['migrate-to-postgres', '--json'], { env: { PALACE_BACKEND_NAMESPACE: namespace, PALACE_PGVECTOR_DSN: pg.dsn } });
    expect(res.code, res.stderr).toBe(0);
    const report = parseJson<MigrateReport>(res);
    expect(report.drawers).toEqual({ source: 5, copied: 0, skipped: 5, destination: 5 });
    expect(report.knowledge_graph.destination_triples).toBe(3);
  });

  it('serves the same search results from pgvector as from the embedded store', async () => {
    const queries = ['which vector database did we pick and why', 'when does the on-call rotation change', 'code style preferences'];
    // The embedded searches only read the LanceDB palace: all six at once. The pgvector ones stay one
    // after another (PGlite serves one session at a time), running beside them.
    const embeddedRuns = Promise.all(
      queries.map((query) =>
        Promise.all([palace.run(['search', query, '--mode', 'vector', '--limit', '5', '--json']), palace.run(['search', query, '--json'])]),
      ),
    );
    const networkedRuns: Array<[CliResult, CliResult]> = [];
    for (const query of queries)
      networkedRuns.push([
        await palace.run(['search', query, '--mode', 'vector', '--limit', '5', '--json'], { env: pgEnv }),
        await palace.run(['search', query, '--json'], { env: pgEnv }),
      ]);
    const embeddedResults = await embeddedRuns;
    for (const [q, [vectorRun, hybridRun]] of embeddedResults.entries()) {
      const [networkedVectorRun, networkedHybridRun] = networkedRuns[q] as [CliResult, CliResult];
      const embedded = parseJson<SearchJson>(vectorRun);
      const networked = parseJson<SearchJson>(networkedVectorRun);
      expect(networked.results.map((r) => r.drawer_id)).toEqual(embedded.results.map((r) => r.drawer_id));
      networked.results.forEach((r, i) => expect(r.similarity ?? 0).toBeCloseTo(embedded.results[i]?.similarity ?? 1, 3));
      const hybridEmbedded = parseJson<SearchJson>(hybridRun);
      const hybridNetworked = parseJson<SearchJson>(networkedHybridRun);
      expect(hybridNetworked.results[0]?.drawer_id).toBe(hybridEmbedded.results[0]?.drawer_id);
    }
  }, 120_000);

  it('answers read-only Cypher over the migrated knowledge graph, and refuses to migrate while the hub holds the palace', async () => {
    const config = loadConfig({}, { PALACE_HOME: palace.stateDir, PALACE_PALACE_PATH: palace.dir, PALACE_MCP_IDLE_HOURS: '0', ...pgEnv });
    const hub = await startHub({ config, log: silentLogger, host: '127.0.0.1', port: 0 });
    try {
      const res = await fetch(`${hub.url}/cypher`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ cypher: 'MATCH (p:Entity)-[:works_on]->(x:Entity) RETURN p.name AS person, x.name AS project ORDER BY p.name' }),
      });
      const body = (await res.json()) as { rows?: unknown[]; error?: unknown };
      expect(body.error).toBeUndefined();
      expect(body.rows).toEqual([
        { person: 'Alice', project: 'palace' },
        { person: 'Bob', project: 'palace' },
      ]);

      const blocked = await palace.run(['migrate-to-postgres', '--dsn', pg.dsn, '--json'], { env: { PALACE_BACKEND_NAMESPACE: namespace } });
      expect(blocked.code).toBe(1);
      expect(parseJson<ErrorJson>(blocked).error.code).toBe('lease.held');
    } finally {
      await cypherServiceOf(hub.services).close();
      await hub.close();
    }
  });

  it('names the missing DSN', async () => {
    const res = await palace.run(['migrate-to-postgres', '--json']);
    expect(res.code).toBe(2);
    expect(parseJson<ErrorJson>(res).error.field).toBe('--dsn');
  });
});
