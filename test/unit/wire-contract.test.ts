// The wire contract (hub/src/mcp/contract.ts, issue 33): every tool name maps to its argument type
// (from its zod schema) and its result type (from its handler), and the typed client checks both at
// compile time. The `@ts-expect-error` lines are the test: `tsc -p tsconfig.json` (npm run typecheck)
// fails if any of them compiles. The runtime half calls tools through the same client over the
// in-process JSON-RPC handler, on a real palace.

import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';

import { createToolClient, HubClientError, type RpcHandler, type ToolClient } from '../../hub/src/client/tool-client.js';
import { loadConfig } from '../../hub/src/config.js';
import { makeLogger } from '../../hub/src/log.js';
import type { ArgsOf, ResultOf, ToolName } from '../../hub/src/mcp/contract.js';
import { connectInProcess, type InProcessServer } from '../../hub/src/mcp/server/in-process.js';
import { TOOLS } from '../../hub/src/mcp/tools/registry.js';
import { TOOL_GROUP_OF } from '../../hub/src/mcp/tools/tool-groups.js';
import { openPalace, type Palace } from '../../hub/src/palace.js';
import type { PalaceStatus } from '../../hub/src/status.js';
import { makeHubDirs, type HubDirs } from '../helpers/hub.js';

type IsAny<T> = 0 extends 1 & T ? true : false;
/** Tools whose result type says nothing (any, unknown, or a bare string-keyed record): none. */
type Vague = {
  [N in ToolName]: IsAny<ResultOf<N>> extends true ? N : unknown extends ResultOf<N> ? N : string extends keyof ResultOf<N> ? N : never;
}[ToolName];

/** Compile-time checks only: never called. Each @ts-expect-error must be an error, or tsc fails. */
export async function shapesTheCompilerSees(client: ToolClient): Promise<void> {
  // @ts-expect-error: no such tool
  await client.call('palace_no_such_tool', {});
  // @ts-expect-error: `type` is a string, not a number
  await client.call('palace_event_append', { type: 1, stream: 's', room: 'r', from_agent: 'a' });
  // @ts-expect-error: `stream` is required
  await client.call('palace_event_append', { type: 'status', room: 'r', from_agent: 'a' });
  // @ts-expect-error: a misspelt argument name
  await client.call('palace_event_list', { to_agnet: 'x' });
  // @ts-expect-error: status is one of the event statuses
  await client.call('palace_tasks', { status: 'done-ish' });
  // A mutating tool's identity fields may be left out (a proven agent is bound by its token).
  const event = await client.call('palace_event_append', { type: 'status', stream: 's', room: 'r' });
  expectTypeOf(event.seq).toEqualTypeOf<number>();
  expectTypeOf(event.to_agent).toEqualTypeOf<string | null>();
  // @ts-expect-error: an event has `seq`, not `sequence`
  void event.sequence;
  const page = await client.call('palace_event_list', { limit: 5 });
  expectTypeOf(page.events).items.toHaveProperty('id');
  // @ts-expect-error: a page's cursor is a string or null, not a number
  const n: number = page.cursor;
  void n;
  const status = await client.call('palace_status', {});
  expectTypeOf(status).toEqualTypeOf<ResultOf<'palace_status'>>();
  expectTypeOf(status.logstream.events).toEqualTypeOf<number>();
}

describe('the wire contract (types)', () => {
  it('gives every tool a result type that says something', () => {
    expectTypeOf<Vague>().toEqualTypeOf<never>();
    expectTypeOf<ArgsOf<'palace_artifact_get'>>().toEqualTypeOf<{ artifact_id: string }>();
    // palace_status is built in one place (status.ts): the tool's result is that builder's type.
    expectTypeOf<ResultOf<'palace_status'>>().toEqualTypeOf<PalaceStatus>();
  });

  it('names exactly the tools of the registry', () => {
    // TOOL_GROUP_OF is typed Record<ToolName, ...>: a name missing from either side fails to compile.
    const names: ToolName[] = Object.keys(TOOL_GROUP_OF) as ToolName[];
    expect(new Set(names)).toEqual(new Set(TOOLS.map((t) => t.name)));
  });
});

describe('the typed client over the in-process JSON-RPC handler', () => {
  let dirs: HubDirs;
  let palace: Palace;
  let server: InProcessServer;

  beforeAll(async () => {
    dirs = makeHubDirs('palace-contract-');
    palace = openPalace(loadConfig({}, dirs.env), { role: 'local', log: makeLogger('palace') });
    server = await connectInProcess(palace.services);
  });

  afterAll(async () => {
    await server.close();
    await palace.close();
    dirs.cleanup();
  });

  it('calls tools with typed results; tool errors keep their code and field', async () => {
    const event = await server.client.call('palace_event_append', { type: 'status', stream: 'project/x', room: 'status', from_agent: 'box-a', body: 'hi' });
    expect(event).toMatchObject({ type: 'status', from_agent: 'box-a', body: 'hi' });
    const page = await server.client.call('palace_event_list', { from_agent: 'box-a' });
    expect(page.events.map((e) => e.id)).toEqual([event.id]);
    const status = await server.client.call('palace_status', {});
    expect(status.logstream.events).toBe(1);
    expect(status.writer).toEqual({ mode: 'local' });

    const bad = await server.client.callAny('palace_event_append', { type: 7 }).catch((err: unknown) => err);
    expect(bad).toBeInstanceOf(HubClientError);
    expect(bad).toMatchObject({ code: 'input.invalid', field: 'type' });
    const missing = await server.client.call('palace_artifact_get', { artifact_id: 'art_nope' }).catch((err: unknown) => err);
    expect(missing).toBeInstanceOf(HubClientError);
    expect((missing as HubClientError).code).toBe('artifact.not_found');
  });

  it('is one request in, one reply out: a handler answers JSON-RPC, notifications go to the caller', async () => {
    const reply = await server.handle({ jsonrpc: '2.0', id: 41, method: 'tools/list' }, {});
    expect(reply.id).toBe(41);
    expect((reply.result as { tools: { name: string }[] }).tools.map((t) => t.name)).toContain('palace_event_wait');
    const unknown = await server.handle({ jsonrpc: '2.0', id: 42, method: 'no/such/method' }, {});
    expect(unknown).toMatchObject({ id: 42, error: { code: -32601 } });

    // The same client over a handler of our own: what it sends is plain JSON-RPC.
    const seen: string[] = [];
    const spy: RpcHandler = (request, options) => {
      seen.push(`${request.method} ${String((request.params as { name?: string } | undefined)?.name ?? '')}`.trim());
      return server.handle(request, options);
    };
    const client = createToolClient(spy);
    expect(await client.listTools()).toContain('palace_status');
    await client.call('palace_tasks', { limit: 1 });
    expect(seen).toEqual(['tools/list', 'tools/call palace_tasks']);
  });

  it('an abort cancels the call in the server: a pending wait ends', async () => {
    const abort = new AbortController();
    const waiting = server.client.call('palace_event_wait', { to_agent: 'nobody-here', timeout_ms: 60_000 }, { signal: abort.signal });
    setTimeout(() => abort.abort(new Error('stop')), 50);
    await expect(waiting).rejects.toThrow('stop');
  });
});
