// `palace cypher "<query>"`: read-only Cypher over the knowledge graph through the live hub's
// POST /cypher (in-process when no hub serves the palace). `--limit` only trims what is shown.

import type { Command } from 'commander';

import type { PalaceConfig } from '../../hub/src/config.js';
import { HubError, invalid, type ErrorCode } from '../../hub/src/errors.js';
import { createCypherService } from '../../hub/src/kg/cypher-service.js';
import { createKgHandle } from '../../hub/src/kg/knowledge-graph.js';
import type { CypherResult } from '../../hub/src/vector/age-cypher.js';
import { canonicalPalace, dialUrl, hubTokens, readLiveRegistration } from '../../hub/src/registration.js';
import { action } from '../context.js';
import { unauthorized } from '../hub-auth.js';

async function viaHub(config: Readonly<PalaceConfig>, base: string, body: { cypher: string; graph?: string }): Promise<CypherResult> {
  const [token] = hubTokens(config.home, canonicalPalace(config.palacePath), config.httpToken);
  let response: Response;
  try {
    response = await fetch(`${base}/cypher`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
  } catch (err) {
    throw new HubError('hub.unreachable', `the hub at ${base} is unreachable: ${(err as Error).message}`);
  }
  if (response.status === 401) throw unauthorized(base, token !== undefined);
  const value = (await response.json().catch(() => ({}))) as CypherResult & { error?: { code?: string; message?: string; data?: Record<string, unknown> } };
  if (value.error) throw new HubError((value.error.code as ErrorCode | undefined) ?? 'internal', value.error.message ?? `HTTP ${response.status}`, value.error.data ? { data: value.error.data } : {});
  if (!response.ok) throw new HubError('hub.unreachable', `the hub at ${base} answered HTTP ${response.status}`);
  return value;
}

async function locally(config: Readonly<PalaceConfig>, body: { cypher: string; graph?: string }): Promise<CypherResult> {
  const kg = createKgHandle(canonicalPalace(config.palacePath));
  const service = createCypherService(config, () => kg.get());
  try {
    return await service.query(body);
  } finally {
    await service.close();
    kg.close();
  }
}

function cell(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

export function registerCypher(program: Command): void {
  program
    .command('cypher <query>')
    .description('read-only Cypher over the knowledge graph (pgvector backend with Apache AGE)')
    .option('--graph <name>', 'graph to query (default: the knowledge graph mirror, <namespace>kg)')
    .option('--limit <n>', 'show at most n rows (advisory: the hub statement timeout is the real ceiling)')
    .action(
      action(async (ctx, query: string) => {
        const limitRaw = ctx.opts.limit;
        const limit = limitRaw === undefined ? undefined : Number(limitRaw);
        if (limit !== undefined && (!Number.isInteger(limit) || limit < 1)) throw invalid('limit', '--limit must be a positive integer');
        const body = { cypher: query, ...(typeof ctx.opts.graph === 'string' ? { graph: ctx.opts.graph } : {}) };
        const hub = ctx.config.hubForward ? readLiveRegistration(ctx.config.home, canonicalPalace(ctx.config.palacePath)) : undefined;
        const result = hub && hub.pid !== process.pid ? await viaHub(ctx.config, dialUrl(hub), body) : await locally(ctx.config, body);
        const shown = limit === undefined ? result.rows : result.rows.slice(0, limit);
        ctx.out.result({ ...result, rows: shown, count: shown.length, total: result.count }, () =>
          [result.columns.join('\t'), ...shown.map((row) => result.columns.map((c) => cell(row[c])).join('\t'))].join('\n'),
        );
        if (shown.length < result.count) ctx.out.note(`(${shown.length} of ${result.count} rows shown; --limit is advisory)`);
      }),
    );
}
