// Fuzzing every MCP tool of the registry through the official SDK client against a real child hub:
// arguments generated from each tool's zod shape, then broken (wrong types, huge strings, control
// characters, lone surrogates, unicode edge cases, missing and extra fields); plus malformed
// JSON-RPC over raw HTTP. Every call gets a valid result or a clear error, the hub stays up, and
// the log holds exactly the events whose writes were acknowledged, each one valid.
// PALACE_FUZZ_RUNS (default 25 per tool) raises the count for soak runs.

import { createHash } from 'node:crypto';
import { join } from 'node:path';

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode as RpcErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  eventBody,
  eventStatus,
  eventType,
  metadataJson,
  requiredField,
  routingField,
} from '../../hub/src/core/validate.js';
import { ERROR_CODES } from '../../hub/src/errors.js';
import { HUB_AGENT } from '../../hub/src/logstream/lease-sweeper.js';
import { Logstream } from '../../hub/src/logstream/logstream.js';
import { coordinationTools } from '../../hub/src/mcp/tools/coordination-tools.js';
import { logstreamTools } from '../../hub/src/mcp/tools/logstream-tools.js';
import { TOOLS } from '../../hub/src/mcp/tools/registry.js';
import {
  connectHttpClient,
  healthy,
  killChildren,
  makeHubDirs,
  rawRequest,
  startChildHub,
  type ChildHub,
  type HubDirs,
} from '../helpers/hub.js';
import { allEvents } from '../helpers/sync.js';

const RUNS = Number(process.env.PALACE_FUZZ_RUNS ?? 25);
const SEED = process.env.PALACE_FUZZ_SEED === undefined ? undefined : Number(process.env.PALACE_FUZZ_SEED);
const OMIT = Symbol('omit');

/** The part of a zod 4 schema's definition the generator reads. */
interface ZodLike {
  _zod: {
    def: {
      type: string;
      innerType?: ZodLike;
      element?: ZodLike;
      options?: ZodLike[];
      entries?: Record<string, string>;
      valueType?: ZodLike;
    };
  };
}

const HUGE = 'x'.repeat(1024 * 1024);
const HUGE_MULTIBYTE = 'é'.repeat(140 * 1024); // under 256 Ki characters, over 256 KiB of UTF-8

/** Strings that have broken parsers before: control characters, surrogates, bidi, SQL, paths, sizes. */
const nastyString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ maxLength: 24 }) },
  { weight: 2, arbitrary: fc.stringMatching(/^[a-z][a-z0-9._-]{0,20}$/) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 24 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      '*',
      '\u0000',
      'nul\u0000inside',
      '\u0007bell',
      'line\nbreak',
      '\r\n',
      '\uD800',
      'lone \uDC00 low',
      '💥🧨',
      'e\u0301',
      '\u202Eevil',
      '\uFEFFbom',
      'ｆｕｌｌｗｉｄｔｈ',
      '%s%n%x',
      '../../../../etc/passwd',
      "'; DROP TABLE events; --",
      '{"jsonrpc":"2.0"}',
      'evt_20200101T000000_000000000000',
      'art_20200101T000000_000000000000',
      'task.request',
      'project/fuzz',
      'a'.repeat(257),
      'b'.repeat(5000),
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom(HUGE, HUGE_MULTIBYTE) },
);

/** A value of the wrong JSON type for whatever the field expects (or the right one, by chance). */
const wrongType: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 6 }), fc.integer(), { maxKeys: 3 }),
  fc.constant([[[[[[]]]]]]),
);

/** Values shaped by a zod schema, including its edges (empty, negative, over the max). */
function valuesFor(schema: ZodLike): fc.Arbitrary<unknown> {
  const def = schema._zod.def;
  switch (def.type) {
    case 'string':
      return nastyString;
    case 'number':
      return fc.oneof(
        fc.integer({ min: -3, max: 600 }),
        fc.constantFrom(0, -1, 1e9, 0.5, Number.MAX_SAFE_INTEGER),
        fc.double(),
      );
    case 'boolean':
      return fc.boolean();
    case 'enum':
      return fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom(...Object.values(def.entries ?? { x: 'x' })) },
        { weight: 1, arbitrary: nastyString },
      );
    case 'array':
      return fc.array(def.element ? valuesFor(def.element) : fc.anything(), { maxLength: 4 });
    case 'optional':
    case 'nullable':
    case 'default':
      return def.innerType ? valuesFor(def.innerType) : fc.anything();
    case 'union':
      return fc.oneof(...(def.options ?? []).map(valuesFor));
    case 'record':
      return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 });
    default:
      return fc.anything();
  }
}

/** Arguments for a tool: each field shaped, wrong-typed or omitted; now and then extra fields. */
function argsFor(input: Record<string, unknown>): fc.Arbitrary<Record<string, unknown>> {
  const fields: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [key, schema] of Object.entries(input))
    fields[key] = fc.oneof(
      { weight: 6, arbitrary: valuesFor(schema as ZodLike) },
      { weight: 1, arbitrary: wrongType },
      { weight: 1, arbitrary: fc.constant(OMIT) },
    );
  const extras = fc.option(
    fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }),
    { freq: 4 },
  );
  return fc.tuple(fc.record(fields), extras).map(([shaped, extra]) => {
    const out: Record<string, unknown> = { ...(extra ?? {}) };
    for (const [key, value] of Object.entries(shaped)) if (value !== OMIT) out[key] = value;
    return out;
  });
}

/** Keeps fuzzed calls away from the real filesystem and from minute-long waits. */
function tame(name: string, args: Record<string, unknown>, root: string): Record<string, unknown> {
  const out = { ...args };
  if (name === 'palace_mine' && typeof out.source === 'string')
    // hex, not encodeURIComponent: a lone surrogate (which the fuzzer makes) throws URIError there.
    out.source = join(root, 'nowhere', Buffer.from(out.source, 'utf8').toString('hex').slice(0, 100));
  if (name === 'palace_mine' && out.adapter !== undefined) delete out.adapter; // adapters have default roots
  // A 1 MiB check_duplicate whose chunks all match stored drawers (the fuzzer files huge repeated
  // strings too) embeds every chunk: tens of seconds on 2 cores, so kept out of the CI run's time
  // budget; PALACE_FUZZ_RUNS soak runs keep the full size.
  if (
    name === 'palace_check_duplicate' &&
    RUNS <= 50 &&
    typeof out.content === 'string' &&
    out.content.length > 65_536
  )
    out.content = out.content.slice(0, 65_536);
  if (name === 'palace_event_wait' && (typeof out.timeout_ms !== 'number' || out.timeout_ms > 50))
    out.timeout_ms = typeof out.timeout_ms === 'number' ? 20 : (out.timeout_ms ?? 20);
  return out;
}

/** Events the hub acknowledged writing (event ids in the results of successful mutating log tools). */
const acknowledged = new Set<string>();
/** Every tool that appends events: the mutating logstream and coordination tools (reserve, release, renew, ...). */
const WRITES_EVENTS = new Set<string>([...logstreamTools, ...coordinationTools].filter((t) => t.mutating).map((t) => t.name));

function collectEventIds(value: unknown, into: Set<string>): void {
  if (typeof value === 'string' && /^evt_[0-9A-Za-z_]+$/.test(value)) into.add(value);
  else if (Array.isArray(value)) for (const v of value) collectEventIds(v, into);
  else if (value && typeof value === 'object') for (const v of Object.values(value as Record<string, unknown>)) collectEventIds(v, into);
}

const STACK = /\n\s+at .+\(.*:\d+:\d+\)/;

/** One fuzzed call: a valid result, or a clear error (our {error:{code,message}}, schema violations included). */
async function checkCall(client: Client, name: string, args: Record<string, unknown>): Promise<void> {
  let result: CallToolResult;
  try {
    // A 1 MiB drawer (~1,300 chunks) takes ~100 s to embed on 2 cores with the bundled model.
    result = (await client.callTool({ name, arguments: args }, undefined, {
      timeout: 300_000,
    })) as CallToolResult;
  } catch (err) {
    if (err instanceof McpError && err.code === RpcErrorCode.InvalidParams) return;
    if (!hub.isRunning()) throw new Error(`${name}: the hub is gone: ${hub.describeExit()}`, { cause: err });
    throw err;
  }
  const first = result.content[0];
  expect(first?.type, `${name}: text content`).toBe('text');
  const text = first?.type === 'text' ? first.text : '';
  expect(text, `${name}: no stack trace`).not.toMatch(STACK);
  if (result.isError) {
    const body = JSON.parse(text) as { error?: { code?: string; message?: string } };
    const code = body.error?.code ?? '';
    expect(Object.keys(ERROR_CODES), `${name}: stable code in ${text.slice(0, 300)}`).toContain(code);
    expect(code, `${name}: not an internal error: ${text.slice(0, 300)}`).not.toBe('internal');
    expect(body.error?.message, `${name}: a message`).toMatch(/\S/);
    return;
  }
  const value: unknown = JSON.parse(text);
  if (WRITES_EVENTS.has(name)) {
    // An id the call was given (an event it acks or points at) may be echoed in its result: that is
    // not a write the hub acknowledged, only the ids it returned that the input did not name.
    const given = new Set<string>();
    collectEventIds(args, given);
    const returned = new Set<string>();
    collectEventIds(value, returned);
    for (const id of returned) if (!given.has(id)) acknowledged.add(id);
  }
}

let dirs: HubDirs;
let hub: ChildHub;
let client: Client;

/** Per tool: a 1 MiB drawer (~1,300 chunks) embeds in ~100 s on 2 cores, and a run may file several. */
const TOOL_TIMEOUT_MS = Math.max(120_000, RUNS * 10_000);

beforeAll(async () => {
  dirs = makeHubDirs('palace-fuzz-');
  // The hang guard covers the whole file: every tool's budget plus the raw JSON-RPC cases.
  hub = await startChildHub(dirs, { killAfterMs: TOOL_TIMEOUT_MS * TOOLS.length + 600_000 });
  client = await connectHttpClient(hub.url, { name: 'fuzzer' });
}, 60_000);

afterAll(async () => {
  await client?.close();
  await killChildren();
  dirs?.cleanup();
});

describe('fuzzed tool calls', () => {
  for (const tool of TOOLS) {
    it(
      `${tool.name}: valid result or clear error, never a crash`,
      async () => {
        await fc.assert(
          fc.asyncProperty(argsFor(tool.input), async (args) => {
            await checkCall(client, tool.name, tame(tool.name, args, dirs.root));
          }),
          { numRuns: RUNS, ...(SEED === undefined ? {} : { seed: SEED }), endOnFailure: true },
        );
        expect(hub.isRunning(), hub.describeExit()).toBe(true);
      },
      TOOL_TIMEOUT_MS,
    );
  }

  it('an unknown tool and non-object arguments are clear errors', async () => {
    await checkCall(client, 'palace_no_such_tool', {});
    for (const args of [[1, 2], 'text', 42, null]) {
      const res = await fetch(`${hub.url}/mcp`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 9,
          method: 'tools/call',
          params: { name: 'palace_event_append', arguments: args },
        }),
      });
      expect(res.status).toBeLessThan(500);
      const text = await res.text();
      expect(text).not.toMatch(STACK);
      expect(text).toMatch(/error|isError/);
    }
  });
});

describe('malformed JSON-RPC over raw HTTP', () => {
  const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
  const bodies: Array<[string, string]> = [
    ['not JSON', '{"jsonrpc": "2.0", "id": 1, "method": '],
    ['empty body', ''],
    ['a JSON string', '"tools/call"'],
    ['a number', '42'],
    ['null', 'null'],
    ['empty batch', '[]'],
    ['junk batch', '[1, "two", null, {"jsonrpc": "2.0"}]'],
    ['wrong jsonrpc version', '{"jsonrpc": "1.0", "id": 1, "method": "tools/list"}'],
    ['no method', '{"jsonrpc": "2.0", "id": 1}'],
    ['method not a string', '{"jsonrpc": "2.0", "id": 1, "method": 7}'],
    ['unknown method', '{"jsonrpc": "2.0", "id": 1, "method": "palace/explode"}'],
    ['params a string', '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": "x"}'],
    ['id an object', '{"jsonrpc": "2.0", "id": {"a": 1}, "method": "tools/list"}'],
    ['deep nesting', '['.repeat(5000) + ']'.repeat(5000)],
    [
      'lone surrogate escape',
      '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "\\ud800", "arguments": {}}}',
    ],
  ];

  for (const [label, body] of bodies) {
    it(`${label}: a clear client error, the hub stays up`, async () => {
      const res = await rawRequest(hub.url, { method: 'POST', path: '/mcp', headers, body });
      expect(res.status, `${label}: ${res.body.slice(0, 300)}`).toBeGreaterThanOrEqual(200);
      expect(res.status, `${label}: ${res.body.slice(0, 300)}`).toBeLessThan(500);
      expect(res.body).not.toMatch(STACK);
      if (res.status !== 202) expect(res.body, label).toMatch(/"error"|"result"/);
      expect(await healthy(hub.url)).toBe(true);
    });
  }

  it('a body over 16 MiB gets 413, declared or streamed', async () => {
    const big = Buffer.alloc(16 * 1024 * 1024 + 10, 0x20);
    const declared = await rawRequest(hub.url, {
      method: 'POST',
      path: '/mcp',
      headers: { ...headers, 'Content-Length': String(big.length) },
      body: big,
    });
    expect(declared.status).toBe(413);
    expect(await healthy(hub.url)).toBe(true);
  });
});

describe('after the fuzzing', () => {
  it('the hub is up, the log is intact, and holds exactly the acknowledged events, each valid', async () => {
    expect(await healthy(hub.url)).toBe(true);
    await client.close();
    const exit = await hub.stop();
    expect(exit.signal).toBeNull();
    const db = new Database(join(dirs.palace, 'logstream.sqlite3'), { readonly: true });
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      const artifacts = db.prepare('SELECT id, content, sha256 FROM artifacts').all() as Array<{
        id: string;
        content: string;
        sha256: string;
      }>;
      for (const a of artifacts)
        expect(createHash('sha256').update(a.content).digest('hex'), a.id).toBe(a.sha256);
    } finally {
      db.close();
    }
    const log = Logstream.open(dirs.palace);
    try {
      const events = allEvents(log);
      const stored = new Set(events.map((e) => e.id));
      // The hub's own lease sweeper may expire a fuzzed claim (leases can be as short as 1 s).
      const hubExpiry = (e: (typeof events)[number]): boolean => e.type === 'claim.expired' && e.from_agent === HUB_AGENT;
      expect(events.filter((e) => !acknowledged.has(e.id) && !hubExpiry(e)).map((e) => `${e.type} from ${e.from_agent}: ${e.id}`), 'stored, never acknowledged').toEqual([]);
      expect([...acknowledged].filter((id) => !stored.has(id)), 'acknowledged, not stored').toEqual([]);
      for (const e of events) {
        expect(eventType(e.type)).toBe(e.type);
        for (const field of ['stream', 'room', 'from_agent'] as const)
          expect(requiredField(field, e[field])).toBe(e[field]);
        for (const field of ['to_agent', 'correlation_id', 'branch', 'base_commit'] as const)
          expect(routingField(field, e[field])).toBe(e[field] ?? null);
        expect(eventStatus(e.status)).toBe(e.status ?? null);
        expect(eventBody(e.body)).toBe(e.body);
        expect(() => metadataJson(e.metadata)).not.toThrow();
      }
    } finally {
      log.close();
    }
  }, 60_000);
});
