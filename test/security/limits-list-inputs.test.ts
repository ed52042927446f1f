// Oversized list inputs (issue 17, item 5): every list argument of every tool has a count limit that
// applies before any work (zod .max() in the tool schema, so the SDK refuses it with -32602 naming
// the field and the limit), and the validators behind the CLI and HTTP routes refuse an oversized
// list with input.invalid before de-duplicating it. Real hubs on port 0, the official MCP SDK client.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { artifactIds, eventQuery, LIMITS } from '../../hub/src/core/validate.js';
import { MEMORY_LIMITS, tagList } from '../../hub/src/memory/drawers/drawer-input.js';
import type { Hub } from '../../hub/src/server.js';
import { TOOLS } from '../../hub/src/mcp/tools/registry.js';
import { catchHubError } from '../helpers/errors.js';
import { connectHttpClient, makeHubDirs, rawRequest, startTestHub, type HubDirs } from '../helpers/hub.js';

const FILTERS = [
  'to_agent',
  'exclude_from_agent',
  'from_agent',
  'type',
  'status',
  'correlation_id',
  'stream',
  'room',
] as const;

const names = (n: number, prefix = 'agent'): string[] =>
  Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

function errorText(result: unknown): string {
  const r = result as CallToolResult;
  const first = r.content[0];
  return first && first.type === 'text' ? first.text : JSON.stringify(r.content);
}

let dirs: HubDirs;
let readerDirs: HubDirs;
let hub: Hub;
let reader: Hub;
let client: Client;
let readerClient: Client;

beforeAll(async () => {
  dirs = makeHubDirs();
  readerDirs = makeHubDirs();
  hub = await startTestHub(dirs);
  reader = await startTestHub(readerDirs, { readOnly: true });
  client = await connectHttpClient(hub.url);
  readerClient = await connectHttpClient(reader.url);
});

afterAll(async () => {
  await client?.close();
  await readerClient?.close();
  await hub?.close();
  await reader?.close();
  dirs?.cleanup();
  readerDirs?.cleanup();
});

async function refused(
  c: Client,
  name: string,
  args: Record<string, unknown>,
  field: string,
  limit: number,
): Promise<void> {
  const result = await c.callTool({ name, arguments: args });
  const text = errorText(result);
  expect(result.isError, `${name} ${field}: ${text.slice(0, 300)}`).toBe(true);
  // The schema refuses it before the handler runs, in the one error shape: input.invalid naming the field.
  const error = (JSON.parse(text) as { error: { code: string; field: string } }).error;
  expect(error.code).toBe('input.invalid');
  expect(error.field.split('.')[0]).toBe(field);
  expect(text).toContain(field);
  expect(text).toContain(`at most ${limit}`);
}

describe('list inputs over their limit are refused before any work', () => {
  it('palace_event_list: 1,000 to_agent values answer input.invalid naming the limit', async () => {
    await refused(client, 'palace_event_list', { to_agent: names(1_000) }, 'to_agent', LIMITS.filterValues);
  });

  it('palace_event_list and palace_event_wait: every filter list, one value over', async () => {
    for (const tool of ['palace_event_list', 'palace_event_wait'])
      for (const field of FILTERS) {
        const values =
          field === 'status'
            ? Array.from({ length: LIMITS.filterValues + 1 }, () => 'open')
            : names(LIMITS.filterValues + 1, 'x');
        await refused(client, tool, { [field]: values, timeout_ms: 0 }, field, LIMITS.filterValues);
      }
  });

  it('palace_event_append: artifact_ids over the limit, nothing appended', async () => {
    const before = hub.services.logstream.store.countEvents();
    await refused(
      client,
      'palace_event_append',
      {
        type: 'status',
        stream: 's',
        room: 'r',
        from_agent: 'a',
        artifact_ids: names(LIMITS.artifactIds + 1, 'art'),
      },
      'artifact_ids',
      LIMITS.artifactIds,
    );
    expect(hub.services.logstream.store.countEvents()).toBe(before);
  });

  it('palace_search on a read-only hub: tags over the limit', async () => {
    await refused(
      readerClient,
      'palace_search',
      { query: 'x', tags: names(1_000, 'tag') },
      'tags',
      MEMORY_LIMITS.tags,
    );
  });

  it('every array argument of every tool has a count limit in its schema', () => {
    const unbounded: string[] = [];
    const visit = (path: string, schema: unknown): void => {
      const def = (schema as { _zod?: { def?: Record<string, unknown> } })._zod?.def;
      if (!def) return;
      const type = def.type as string;
      if (type === 'optional' || type === 'nullable' || type === 'default') return visit(path, def.innerType);
      if (type === 'union') return (def.options as unknown[]).forEach((o) => visit(path, o));
      if (type === 'object')
        return Object.entries(def.shape as Record<string, unknown>).forEach(([k, v]) =>
          visit(`${path}.${k}`, v),
        );
      if (type === 'array') {
        const checks = (def.checks as { _zod: { def: { check: string } } }[] | undefined) ?? [];
        if (!checks.some((c) => c._zod.def.check === 'max_length')) unbounded.push(path);
        visit(`${path}[]`, def.element);
      }
    };
    for (const tool of TOOLS)
      for (const [key, schema] of Object.entries(tool.input)) visit(`${tool.name}.${key}`, schema);
    expect(unbounded).toEqual([]);
  });
});

describe('the validators refuse an oversized list before de-duplicating it', () => {
  it('eventQuery, artifactIds and tagList name the field and the limit', () => {
    const many = names(10_000);
    for (const field of FILTERS) {
      const err = catchHubError(() =>
        eventQuery({ [field]: field === 'status' ? many.map(() => 'open') : many }),
      );
      expect(err.code).toBe('input.invalid');
      expect(err.field).toBe(field);
      expect(err.message).toContain(`at most ${LIMITS.filterValues}`);
    }
    const art = catchHubError(() => artifactIds(many));
    expect([art.code, art.field]).toEqual(['input.invalid', 'artifact_ids']);
    expect(art.message).toContain(`at most ${LIMITS.artifactIds}`);
    const tags = catchHubError(() => tagList(many));
    expect([tags.code, tags.field]).toEqual(['input.invalid', 'tags']);
    expect(tags.message).toContain(`at most ${MEMORY_LIMITS.tags}`);
  });

  it('a list at the limit with repeats is accepted and de-duplicated in order', () => {
    const q = eventQuery({
      to_agent: [...names(LIMITS.filterValues / 2), ...names(LIMITS.filterValues / 2)],
    });
    expect(q.to_agent).toEqual(names(LIMITS.filterValues / 2));
  });

  it('GET /logstream/stream with a filter repeated past the limit is a 400 naming it', async () => {
    const qs = names(LIMITS.filterValues + 1)
      .map((n) => `to_agent=${n}`)
      .join('&');
    const res = await rawRequest(hub.url, {
      path: `/logstream/stream?${qs}`,
      headers: { Accept: 'text/event-stream' },
    });
    expect(res.status, res.body.slice(0, 200)).toBe(400);
    const body = JSON.parse(res.body) as { error: { code: string; field: string; message: string } };
    expect(body.error).toMatchObject({ code: 'input.invalid', field: 'to_agent' });
    expect(body.error.message).toContain(`at most ${LIMITS.filterValues}`);
  });
});
