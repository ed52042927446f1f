// MCP palace_event_append over HTTP: sequential calls through the official SDK client and through a
// hand-built JSON-RPC POST (fetch, no SDK), against a bare node:http POST that does one JSON.parse
// and one SQLite INSERT. The three run in alternating rounds, then Logstream.append in-process alone.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

import { createAgentRegistry } from '../hub/src/identity/agent-registry.js';
import { HUB_ONLY_TYPES } from '../hub/src/identity/names.js';
import { buildServer } from '../hub/src/mcp/server/build-server.js';
import { trafficBatch } from './event-fixtures.js';
import type { Figure, Reference, SuiteContext } from './figure.js';
import { postJson, RawMcp, sdkCall, toolArgs, type ToolArgs } from './hub-clients.js';
import type { AppendReply, HubBench } from './hub-harness.js';
import { percentile } from './stats.js';

const CALLS = 2_000;
const WARMUP = 200;
const ROUNDS = 4;

async function timeCalls(
  inputs: readonly ToolArgs[],
  call: (args: ToolArgs) => Promise<AppendReply>,
): Promise<number[]> {
  const out: number[] = [];
  for (const args of inputs) {
    const t0 = performance.now();
    const reply = await call(args);
    out.push(performance.now() - t0);
    if (!reply.id) throw new Error('an append returned no id');
  }
  return out;
}

function chunks<T>(items: readonly T[], count: number): T[][] {
  const size = Math.ceil(items.length / count);
  return Array.from({ length: count }, (_, i) => items.slice(i * size, (i + 1) * size));
}

export async function appendOverHttpFigures(
  ctx: SuiteContext,
  bench: HubBench,
  client: Client,
): Promise<{ figures: Figure[]; notes: string[] }> {
  const { hub, bare } = bench;
  const raw = new RawMcp(hub.url);
  // Identity (issue 28): the same raw POST from a registered agent presenting its secret, writing under
  // its own name (the hub resolves the secret and binds from_agent), against the unchanged open path.
  const { secret } = createAgentRegistry(hub.services.config.palacePath).add('bench-agent');
  const proven = new RawMcp(hub.url, { 'X-Palace-Agent-Token': secret });
  const variants: Array<{ key: 'sdk' | 'raw' | 'agent' | 'bare'; call: (args: ToolArgs) => Promise<AppendReply> }> = [
    { key: 'sdk', call: (args) => sdkCall<AppendReply>(client, 'palace_event_append', args) },
    { key: 'raw', call: (args) => raw.call<AppendReply>('palace_event_append', args) },
    { key: 'agent', call: (args) => proven.call<AppendReply>('palace_event_append', { ...args, from_agent: 'bench-agent' }) },
    { key: 'bare', call: (args) => postJson<AppendReply>(`${bare.url}/append`, args) },
  ];
  // Raw event.ack appends are refused since issue 28 (acks go through palace_event_ack): the mix keeps
  // the requests, notes, patches and updates of the same traffic.
  const inputs = trafficBatch(Math.ceil((WARMUP + CALLS) * 1.5), 7)
    .filter((e) => !HUB_ONLY_TYPES.has(String(e.type)))
    .slice(0, WARMUP + CALLS)
    .map(toolArgs);
  ctx.progress(`append: ${WARMUP} warm-up calls per variant (SDK, raw POST, raw POST as an agent, bare POST)`);
  for (const v of variants) await timeCalls(inputs.slice(0, WARMUP), v.call);

  ctx.progress(`append: ${CALLS} sequential calls per variant in ${ROUNDS} alternating rounds`);
  const samples = { sdk: [] as number[], raw: [] as number[], agent: [] as number[], bare: [] as number[] };
  for (const batch of chunks(inputs.slice(WARMUP), ROUNDS))
    for (const v of variants) samples[v.key].push(...(await timeCalls(batch, v.call)));

  // The logstream's own share: the same appends through Logstream.append on the hub's log, no HTTP.
  const log = hub.services.logstream;
  const inProcess: number[] = [];
  for (const args of inputs.slice(WARMUP, WARMUP + 500)) {
    const t0 = performance.now();
    await log.append(args);
    inProcess.push(performance.now() - t0);
  }

  // One cost of the stateless design, alone: the McpServer (all tools registered) built per request.
  const builds: number[] = [];
  for (let i = 0; i < 500; i++) {
    const t0 = performance.now();
    buildServer(hub.services);
    builds.push(performance.now() - t0);
  }

  const bareRef = (p: 50 | 99): Reference => ({
    value: percentile(samples.bare, p),
    label: 'bare node:http POST via fetch: JSON.parse + 1 SQLite INSERT (palace schema), same process',
    measured: true,
  });
  const figure = (name: string, key: 'sdk' | 'raw', p: 50 | 99, target?: number): Figure => ({
    name: `${name} p${p}`,
    value: percentile(samples[key], p),
    unit: 'ms',
    reference: bareRef(p),
    ...(target === undefined ? {} : { target: { op: '<=' as const, value: target } }),
  });
  const p50 = (xs: number[]): string => `${percentile(xs, 50).toFixed(3)} ms`;
  return {
    figures: [
      figure('MCP palace_event_append, SDK client over HTTP', 'sdk', 50, 3),
      figure('MCP palace_event_append, SDK client over HTTP', 'sdk', 99),
      figure('MCP palace_event_append, raw JSON-RPC POST (fetch, no SDK)', 'raw', 50),
      figure('MCP palace_event_append, raw JSON-RPC POST (fetch, no SDK)', 'raw', 99),
      {
        // Target: at most 10% over the open path measured in the same rounds (issue 28).
        name: 'MCP palace_event_append, raw POST as a registered agent (secret checked, from_agent bound) p50',
        value: percentile(samples.agent, 50),
        unit: 'ms',
        reference: { value: percentile(samples.raw, 50), label: 'the same raw POST from an unregistered name (open mode), same rounds', measured: true },
        target: { op: '<=' as const, value: percentile(samples.raw, 50) * 1.1 },
      },
    ],
    notes: [
      `Append over HTTP: ${CALLS.toLocaleString('en-US')} sequential calls per variant after ${WARMUP} warm-up calls,` +
        ` SDK / raw / bare alternating in ${ROUNDS} rounds; realistic traffic (~200-byte bodies, metadata; no raw event.ack, refused since issue 28).` +
        ' Client, hub and bare server share this one Node process (its event loop), as the hub is started with startHub.',
      `Append p50 split: Logstream.append in-process (validation, group commit, no HTTP) ${p50(inProcess)};` +
        ` bare POST ${p50(samples.bare)}; raw MCP POST ${p50(samples.raw)}; SDK client ${p50(samples.sdk)}.` +
        ' Raw minus bare is the hub (Koa middleware, a fresh McpServer + transport per stateless request, zod, logstream);' +
        ' SDK minus raw is the client SDK.' +
        ` A registered agent's raw POST (X-Palace-Agent-Token: sha256 of the secret, a map lookup, the writer bound) p50 ${p50(samples.agent)}.` +
        ` Building the per-request McpServer alone (buildServer, all tools registered) takes p50 ${p50(builds)}.`,
    ],
  };
}
