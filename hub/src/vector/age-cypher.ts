// Read-only Cypher over Apache AGE on the pgvector backend's Postgres, and the mirror of the
// knowledge graph into an AGE graph. Queries run in a READ ONLY transaction, so any write verb
// fails in Postgres itself (SQLSTATE 25006) and is answered as cypher.write_refused.

import { createHash, randomBytes } from 'node:crypto';

import type { Pool, PoolClient } from 'pg';

import { HubError, invalid } from '../errors.js';
import { pgError } from './postgres-pool.js';

export const GRAPH_NAME = /^[A-Za-z_][A-Za-z0-9_]{2,62}$/;

export interface CypherResult {
  graph: string;
  columns: string[];
  rows: Array<Record<string, unknown>>;
  count: number;
}

/** One KG fact as the mirror needs it (the shape of KnowledgeGraph facts). */
export interface MirrorFact {
  triple_id: string;
  subject: string;
  subject_id: string;
  subject_type: string;
  predicate: string;
  object: string;
  object_id: string;
  object_type: string;
  valid_from: string | null;
  valid_to: string | null;
  current: boolean;
  confidence: number;
  source_file: string | null;
  source_drawer_id: string | null;
  added_by: string | null;
  created_at: string;
}

/** `text` dollar-quoted with a tag it does not contain, so no text can end the quote early. */
export function dollarQuote(text: string): string {
  let tag = '$cypher$';
  while (text.includes(tag)) tag = `$c${randomBytes(6).toString('hex')}$`;
  return `${tag}${text}${tag}`;
}

/** Splits `text` at top level (outside strings and brackets), calling `visit` per top-level index. */
function scanTopLevel(text: string, visit: (index: number) => boolean | void): void {
  let depth = 0;
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = undefined;
      continue;
    }
    if (c === "'" || c === '"' || c === '`') quote = c;
    else if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth--;
    else if (depth === 0 && visit(i) === true) return;
  }
}

function keywordAt(text: string, i: number, word: string): boolean {
  const before = i === 0 ? ' ' : (text[i - 1] as string);
  const after = text[i + word.length] ?? ' ';
  return /[^A-Za-z0-9_]/.test(before) && /[^A-Za-z0-9_]/.test(after) && text.slice(i, i + word.length).toUpperCase() === word;
}

/** Column names of the query's final RETURN (aliases, else the expression); one `result` if none. */
export function returnColumns(cypher: string): string[] {
  let start = -1;
  scanTopLevel(cypher, (i) => {
    if (keywordAt(cypher, i, 'RETURN')) start = i + 'RETURN'.length;
  });
  if (start < 0) return ['result'];
  let end = cypher.length;
  scanTopLevel(cypher.slice(start), (i) => {
    const rest = cypher.slice(start);
    if (['ORDER', 'SKIP', 'LIMIT', 'UNION'].some((w) => keywordAt(rest, i, w))) {
      end = start + i;
      return true;
    }
    return false;
  });
  let body = cypher.slice(start, end).trim();
  if (/^DISTINCT\b/i.test(body)) body = body.slice('DISTINCT'.length).trim();
  if (body === '*' || body === '') throw invalid('cypher', 'name the returned columns (RETURN * is not supported over AGE)');
  const items: string[] = [];
  let from = 0;
  scanTopLevel(body, (i) => {
    if (body[i] === ',') {
      items.push(body.slice(from, i).trim());
      from = i + 1;
    }
  });
  items.push(body.slice(from).trim());
  return items.map((item) => {
    const alias = /\s+AS\s+(`[^`]+`|[A-Za-z_][A-Za-z0-9_]*)\s*$/i.exec(item)?.[1];
    return alias ? alias.replace(/^`|`$/g, '') : item;
  });
}

/** An agtype value as JSON: vertices, edges and paths lose their `::type` suffix. */
export function parseAgtype(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value.replace(/::(vertex|edge|path)/g, ''));
  } catch {
    return value;
  }
}

async function prepareAge(client: PoolClient): Promise<void> {
  await client.query(`LOAD 'age'`);
  await client.query(`SET LOCAL search_path = ag_catalog, "$user", public`);
}

/** Runs a Cypher query read-only; the statement timeout is the ceiling. */
export async function runReadOnlyCypher(
  pool: Pool,
  where: string,
  input: { graph: string; cypher: string; timeoutSeconds: number },
): Promise<CypherResult> {
  const { graph, cypher } = input;
  if (!GRAPH_NAME.test(graph)) throw invalid('graph', 'graph must be 3-63 letters, digits or _, not starting with a digit');
  if (cypher.trim() === '') throw invalid('cypher', 'cypher must be a non-empty query');
  const columns = returnColumns(cypher);
  const client = await pool.connect().catch((err: unknown) => {
    throw pgError(err, where);
  });
  try {
    await client.query('BEGIN READ ONLY');
    await client.query(`SET LOCAL statement_timeout = ${Math.round(input.timeoutSeconds * 1000)}`);
    await prepareAge(client);
    const exists = await client.query(`SELECT 1 FROM ag_catalog.ag_graph WHERE name = $1`, [graph]);
    if (exists.rowCount === 0) throw new HubError('cypher.failed', `graph '${graph}' does not exist on the backend`, { field: 'graph' });
    const defs = columns.map((_, i) => `c${i} agtype`).join(', ');
    const result = await client.query(`SELECT * FROM cypher('${graph}', ${dollarQuote(cypher)}) AS (${defs})`);
    const rows = (result.rows as Array<Record<string, unknown>>).map((row) => Object.fromEntries(columns.map((name, i) => [name, parseAgtype(row[`c${i}`])])));
    return { graph, columns, rows, count: rows.length };
  } catch (err) {
    throw cypherError(err, where);
  } finally {
    await client.query('ROLLBACK').catch(() => undefined);
    client.release();
  }
}

function cypherError(err: unknown, where: string): HubError {
  if (err instanceof HubError) return err;
  const e = err as { code?: string; message?: string };
  if (e.code === '25006')
    return new HubError('cypher.write_refused', `Cypher is read-only here; the query tried to write (${e.message ?? 'read-only transaction'})`, {
      cause: err,
      data: { sqlstate: '25006' },
    });
  if (e.code === '57014') return new HubError('cypher.failed', `the query hit the statement timeout: ${e.message ?? ''}`, { cause: err, data: { sqlstate: e.code } });
  if (typeof e.code === 'string' && /^(22|42|3F|XX)/.test(e.code))
    return new HubError('cypher.failed', `the Cypher query failed: ${e.message ?? String(err)}`, { cause: err, data: { sqlstate: e.code } });
  return pgError(err, where);
}

/** A Cypher literal (strings escaped, so mirrored text never becomes syntax). */
export function cypherLiteral(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  return `'${String(value).replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function cypherMap(props: Record<string, unknown>): string {
  return `{${Object.entries(props)
    .map(([k, v]) => `${k}: ${cypherLiteral(v)}`)
    .join(', ')}}`;
}

/** An edge label for a predicate: letters, digits and _ only. */
export function edgeLabel(predicate: string): string {
  const label = predicate.replace(/[^A-Za-z0-9_]/g, '_');
  return /^[A-Za-z_]/.test(label) ? label : `_${label}`;
}

/**
 * Makes `graph` hold exactly these facts: entities as `:Entity {id, name, type}` vertices, each fact
 * an edge labelled by its predicate. Skipped when the facts are unchanged since the last mirror.
 */
export async function mirrorKnowledgeGraph(pool: Pool, where: string, graph: string, mirrorTable: string, facts: readonly MirrorFact[]): Promise<boolean> {
  if (!GRAPH_NAME.test(graph)) throw invalid('graph', 'graph must be 3-63 letters, digits or _');
  const fingerprint = createHash('sha256').update(JSON.stringify(facts)).digest('hex');
  const client = await pool.connect().catch((err: unknown) => {
    throw pgError(err, where);
  });
  try {
    await client.query(`CREATE TABLE IF NOT EXISTS ${mirrorTable} (graph text PRIMARY KEY, fingerprint text NOT NULL, mirrored_at timestamptz NOT NULL DEFAULT now())`);
    const seen = await client.query(`SELECT fingerprint FROM ${mirrorTable} WHERE graph = $1`, [graph]);
    if ((seen.rows[0] as { fingerprint?: string } | undefined)?.fingerprint === fingerprint) return false;
    await client.query('BEGIN');
    await client.query('CREATE EXTENSION IF NOT EXISTS age');
    await prepareAge(client);
    const exists = await client.query(`SELECT 1 FROM ag_catalog.ag_graph WHERE name = $1`, [graph]);
    if ((exists.rowCount ?? 0) > 0) await client.query(`SELECT drop_graph($1, true)`, [graph]);
    await client.query(`SELECT create_graph($1)`, [graph]);
    const entities = new Map<string, { id: string; name: string; type: string }>();
    for (const f of facts) {
      entities.set(f.subject_id, { id: f.subject_id, name: f.subject, type: f.subject_type });
      entities.set(f.object_id, { id: f.object_id, name: f.object, type: f.object_type });
    }
    const all = [...entities.values()];
    for (let i = 0; i < all.length; i += 100) {
      const creates = all.slice(i, i + 100).map((e) => `(:Entity ${cypherMap(e)})`);
      await client.query(`SELECT * FROM cypher('${graph}', ${dollarQuote(`CREATE ${creates.join(', ')}`)}) AS (r agtype)`);
    }
    for (const f of facts) {
      const props = cypherMap({
        triple_id: f.triple_id,
        predicate: f.predicate,
        valid_from: f.valid_from,
        valid_to: f.valid_to,
        current: f.current,
        confidence: f.confidence,
        source_file: f.source_file,
        source_drawer_id: f.source_drawer_id,
        added_by: f.added_by,
        created_at: f.created_at,
      });
      await client.query(
        `SELECT * FROM cypher('${graph}', ${dollarQuote(
          `MATCH (a:Entity {id: ${cypherLiteral(f.subject_id)}}), (b:Entity {id: ${cypherLiteral(f.object_id)}}) CREATE (a)-[:${edgeLabel(f.predicate)} ${props}]->(b)`,
        )}) AS (r agtype)`,
      );
    }
    await client.query(
      `INSERT INTO ${mirrorTable} (graph, fingerprint) VALUES ($1, $2) ON CONFLICT (graph) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, mirrored_at = now()`,
      [graph, fingerprint],
    );
    await client.query('COMMIT');
    return true;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw pgError(err, where);
  } finally {
    client.release();
  }
}
