// POST /cypher on an in-process hub whose backend is pgvector on a real Postgres engine (PGlite with
// Apache AGE, over the wire): the knowledge graph is mirrored and queried read-only; write verbs
// are 403 with SQLSTATE 25006; the embedded backend answers that Cypher needs pgvector with AGE.

import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { cypherServiceOf } from '../../hub/src/http/routes/cypher.js';
import type { Hub } from '../../hub/src/server.js';
import { makeHubDirs, startTestHub, type HubDirs } from '../helpers/hub.js';
import { freshNamespace, startPgliteServer, type PgliteServer } from '../helpers/pglite-server.js';

interface CypherBody {
  graph?: string;
  columns?: string[];
  rows?: Array<Record<string, unknown>>;
  count?: number;
  error?: { code: string; message: string; data?: { sqlstate?: string } };
}

async function cypher(hub: Hub, body: unknown): Promise<{ status: number; body: CypherBody }> {
  const res = await fetch(`${hub.url}/cypher`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as CypherBody };
}

describe('POST /cypher on the pgvector backend (Apache AGE)', () => {
  let server: PgliteServer;
  let dirs: HubDirs;
  let hub: Hub;
  let namespace: string;

  beforeAll(async () => {
    server = await startPgliteServer();
    dirs = makeHubDirs();
    namespace = freshNamespace('cy');
    hub = await startTestHub(dirs, { env: { PALACE_BACKEND: 'pgvector', PALACE_PGVECTOR_DSN: server.dsn, PALACE_BACKEND_NAMESPACE: namespace } });
    const kg = hub.services.kg.get();
    kg.add({ subject: 'Alice', predicate: 'works_on', object: 'palace', subject_type: 'person', object_type: 'project', valid_from: '2026-01-01' });
    kg.add({ subject: 'Bob', predicate: 'works_on', object: 'palace', subject_type: 'person', object_type: 'project' });
    kg.add({ subject: "O'Brien $palace_cypher$ x", predicate: 'reviews', object: 'palace' });
    kg.add({ subject: 'Alice', predicate: 'mentors', object: 'Bob', valid_to: '2025-12-31' });
  }, 60_000);

  afterAll(async () => {
    await cypherServiceOf(hub.services).close();
    await hub.close();
    dirs.cleanup();
    await server.stop();
  });

  it('answers reads over the mirrored knowledge graph with named columns', async () => {
    const res = await cypher(hub, {
      graph: `${namespace}kg`,
      cypher: 'MATCH (p:Entity)-[r:works_on]->(x:Entity) RETURN p.name AS person, x.name, r.valid_from ORDER BY p.name',
    });
    expect(res.body.error).toBeUndefined();
    expect(res.status).toBe(200);
    expect(res.body.columns).toEqual(['person', 'x.name', 'r.valid_from']);
    expect(res.body.rows).toEqual([
      { person: 'Alice', 'x.name': 'palace', 'r.valid_from': '2026-01-01' },
      { person: 'Bob', 'x.name': 'palace', 'r.valid_from': null },
    ]);
    expect(res.body.count).toBe(2);
  });

  it('defaults to the knowledge-graph graph, keeps odd text as data, and follows new facts', async () => {
    const res = await cypher(hub, { cypher: "MATCH (a)-[:reviews]->(b) RETURN a.name, a.id" });
    expect(res.status).toBe(200);
    expect(res.body.graph).toBe(`${namespace}kg`);
    expect(res.body.rows).toEqual([{ 'a.name': "O'Brien $palace_cypher$ x", 'a.id': "obrien_$palace_cypher$_x" }]);
    hub.services.kg.get().add({ subject: 'Carol', predicate: 'reviews', object: 'palace' });
    const again = await cypher(hub, { cypher: 'MATCH (a)-[:reviews]->(b) RETURN count(a) AS reviewers' });
    expect(again.body.rows).toEqual([{ reviewers: 2 }]);
    const closed = await cypher(hub, { cypher: "MATCH (a)-[r:mentors]->(b) RETURN r.current AS current, r.valid_to AS until" });
    expect(closed.body.rows).toEqual([{ current: false, until: '2025-12-31' }]);
  });

  it.each([
    ['CREATE', "CREATE (n:Entity {name: 'mallory'}) RETURN n"],
    ['MERGE', "MERGE (n:Entity {name: 'mallory'}) RETURN n"],
    ['SET', "MATCH (n:Entity {name: 'Alice'}) SET n.name = 'Eve' RETURN n"],
    ['DELETE', 'MATCH (n:Entity) DETACH DELETE n'],
    ['REMOVE', "MATCH (n:Entity {name: 'Alice'}) REMOVE n.type RETURN n"],
  ])('refuses %s with 403 and SQLSTATE 25006, changing nothing', async (_verb, query) => {
    const res = await cypher(hub, { cypher: query });
    expect(res.status).toBe(403);
    expect(res.body.error?.code).toBe('cypher.write_refused');
    expect(res.body.error?.data?.sqlstate).toBe('25006');
    const names = await cypher(hub, { cypher: 'MATCH (n:Entity) RETURN n.name AS name ORDER BY n.name' });
    expect(names.body.rows?.map((r) => r.name)).toEqual(['Alice', 'Bob', 'Carol', "O'Brien $palace_cypher$ x", 'palace']);
  });

  it('queries another graph on the same server, and names a missing graph and bad input clearly', async () => {
    const client = new pg.Client({ connectionString: server.dsn });
    await client.connect();
    try {
      await client.query(`LOAD 'age'`);
      await client.query(`SET search_path = ag_catalog, "$user", public`);
      await client.query(`SELECT create_graph('city_graph')`);
      await client.query(`SELECT * FROM cypher('city_graph', $$ CREATE (:City {name: 'Lyon'})-[:NEAR {km: 110}]->(:City {name: 'Grenoble'}) $$) AS (r agtype)`);
    } finally {
      await client.end();
    }
    const res = await cypher(hub, { graph: 'city_graph', cypher: 'MATCH (a:City)-[e:NEAR]->(b:City) RETURN a.name, e.km, b' });
    expect(res.status).toBe(200);
    expect(res.body.rows?.[0]).toMatchObject({ 'a.name': 'Lyon', 'e.km': 110, b: { label: 'City', properties: { name: 'Grenoble' } } });

    const missing = await cypher(hub, { graph: 'no_such_graph', cypher: 'MATCH (n) RETURN n' });
    expect(missing.status).toBe(400);
    expect(missing.body.error?.message).toContain('no_such_graph');
    expect((await cypher(hub, { graph: 'x; DROP', cypher: 'MATCH (n) RETURN n' })).body.error?.code).toBe('input.invalid');
    expect((await cypher(hub, { graph: 'city_graph' })).status).toBe(400);
    const syntax = await cypher(hub, { graph: 'city_graph', cypher: 'MATCH (n RETURN n' });
    expect(syntax.status).toBe(400);
    expect(syntax.body.error?.code).toBe('cypher.failed');
  });
});

describe('POST /cypher on the embedded backend', () => {
  let dirs: HubDirs;
  let hub: Hub;

  beforeAll(async () => {
    dirs = makeHubDirs();
    hub = await startTestHub(dirs);
  });

  afterAll(async () => {
    await hub.close();
    dirs.cleanup();
  });

  it('answers that Cypher needs the pgvector backend with Apache AGE', async () => {
    const res = await cypher(hub, { cypher: 'MATCH (n) RETURN n', graph: 'palace_kg' });
    expect(res.status).toBe(501);
    expect(res.body.error?.code).toBe('cypher.unavailable');
    expect(res.body.error?.message).toContain('needs the pgvector backend with Apache AGE');
  });

  // The spec: write verbs give 403 whatever the backend; the verb is checked before the backend.
  it.each(["CREATE (n:Entity {name: 'mallory'}) RETURN n", 'MATCH (n) DETACH DELETE n', "MATCH (n) SET n.x = 1"])(
    'refuses the write %j with 403 and SQLSTATE 25006, not 501',
    async (query) => {
      const res = await cypher(hub, { cypher: query, graph: 'palace_kg' });
      expect(res.status).toBe(403);
      expect(res.body.error?.code).toBe('cypher.write_refused');
      expect(res.body.error?.data?.sqlstate).toBe('25006');
    },
  );

  it('answers only POST', async () => {
    const res = await fetch(`${hub.url}/cypher`);
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
  });
});
