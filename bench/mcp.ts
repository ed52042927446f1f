// `npm run bench -- mcp`: the MCP surface's size and push latency. Bytes of the initialize result and
// of tools/list per protocol era and tool profile (the JSON-RPC message a client receives, SSE
// framing excluded), and the push-wake budget: from the commit of an append (stamped by a change
// listener in this process, as the hub suite does) to `notifications/resources/updated` for a
// subscribed inbox handed to the session's GET stream (ResourceWatch.onPush), p50/p99; and, for
// context, to the SDK client having it. The reference for the push is the wake of a pending
// palace_event_wait measured the same way in the same run. The 2026-07-28 era: server/discover (its
// initialize) and tools/list bytes, and the push to a v2 SDK client on subscriptions/listen.

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';

import { loadConfig } from '../hub/src/config.js';
import { silentLogger } from '../hub/src/log.js';
import { startHub } from '../hub/src/server.js';
import type { Figure, Suite, SuiteContext, SuiteResult } from './figure.js';
import { CommitClock } from './hub-harness.js';
import { sdkCall } from './hub-clients.js';
import { percentile, sleep } from './stats.js';

const ERAS = ['2025-06-18', '2025-11-25'] as const;
const PROFILES = ['full', 'lean'] as const;
const PUSHES = 300;
const WARMUP = 20;

/** The JSON-RPC message bytes of one POST's answer (the data of its SSE frame, or the JSON body). */
async function messageBytes(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ bytes: number; session: string | null }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  const data = text
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => l.slice(6))
    .join('');
  return { bytes: Buffer.byteLength(data || text), session: res.headers.get('mcp-session-id') };
}

async function sizeFigures(hubUrl: string): Promise<Figure[]> {
  const figures: Figure[] = [];
  for (const era of ERAS)
    for (const profile of PROFILES) {
      const url = `${hubUrl}/mcp${profile === 'lean' ? '?profile=lean' : ''}`;
      const init = await messageBytes(url, {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: era, capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
      });
      const list = await messageBytes(url, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, { 'MCP-Protocol-Version': era });
      figures.push({ name: `initialize result, ${era}, ${profile} profile`, value: init.bytes, unit: 'bytes' });
      figures.push({
        name: `tools/list result, ${era}, ${profile} profile`,
        value: list.bytes,
        unit: 'bytes',
        ...(profile === 'lean' ? { target: { op: '<=', value: 10 * 1024, note: 'issue 18: lean tools/list under 10 KB' } } : {}),
      });
    }
  // 2026-07-28: no initialize; server/discover is the first exchange, every request carries _meta.
  const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} };
  for (const profile of PROFILES) {
    const url = `${hubUrl}/mcp${profile === 'lean' ? '?profile=lean' : ''}`;
    const headers = { 'MCP-Protocol-Version': '2026-07-28' };
    const discover = await messageBytes(url, { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: meta } }, headers);
    const list = await messageBytes(url, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: meta } }, headers);
    figures.push({ name: `server/discover result, 2026-07-28, ${profile} profile`, value: discover.bytes, unit: 'bytes' });
    figures.push({ name: `tools/list result, 2026-07-28, ${profile} profile`, value: list.bytes, unit: 'bytes' });
    if (profile === 'lean') {
      // 2026 wraps the same tools in fields every result must carry (resultType, ttlMs, cacheScope) and
      // serverInfo; the budget is on what the agent reads, the tool listing, as the profile test checks it.
      const body = (await (
        await fetch(url, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json', ...headers }, body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list', params: { _meta: meta } }) })
      ).json()) as { result: { tools: unknown[] } };
      figures.push({
        name: 'tools/list {tools} part, 2026-07-28, lean profile',
        value: Buffer.byteLength(JSON.stringify({ tools: body.result.tools })),
        unit: 'bytes',
        target: { op: '<=', value: 10 * 1024, note: 'issue 18: lean tools/list under 10 KB (the tools; 2026 adds ~145 bytes of required result fields around them)' },
      });
    }
  }
  return figures;
}

async function run(ctx: SuiteContext): Promise<SuiteResult> {
  const root = mkdtempSync(join(tmpdir(), 'palace-bench-mcp-'));
  const home = join(root, 'home');
  mkdirSync(home, { recursive: true });
  const config = loadConfig({ palace: join(root, 'palace') }, { PALACE_HOME: home, PALACE_MCP_IDLE_HOURS: '0' });
  const hub = await startHub({ config, log: silentLogger, port: 0 });
  const clients: Client[] = [];
  const connect = async (name: string): Promise<Client> => {
    const client = new Client({ name, version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${hub.url}/mcp`)));
    clients.push(client);
    return client;
  };
  try {
    ctx.progress('sizes per era and profile');
    const figures = await sizeFigures(hub.url);

    ctx.progress(`push latency: ${PUSHES} appends to a subscribed inbox`);
    const log = hub.services.logstream;
    const subscriber = await connect('bench-subscriber');
    const waiter = await connect('bench-waiter');
    let received: (() => void) | undefined;
    subscriber.setNotificationHandler(ResourceUpdatedNotificationSchema, () => received?.());
    // The commit stamp's listener goes first on the change feed (listeners run in order), so it is
    // stamped before the watcher (subscribed next) reads the new events and sends.
    const clock = new CommitClock(log);
    await subscriber.subscribeResource({ uri: 'palace://inbox/bench-agent' });
    const watch = hub.services.resourceWatch;
    let sentAt = 0;
    watch.onPush = (t) => {
      if (t.uri === 'palace://inbox/bench-agent') sentAt = t.sentAt;
    };
    const toSent: number[] = [];
    const toClient: number[] = [];
    const toWaiter: number[] = [];
    for (let i = 0; i < WARMUP + PUSHES; i++) {
      // Push: an append (in this process, as a tool would) to the subscribed agent.
      clock.arm();
      sentAt = 0;
      const got = new Promise<void>((resolve) => (received = resolve));
      await log.append({ type: 'task.request', status: 'open', stream: 'bench', room: 'mcp', from_agent: 'bench-requester', to_agent: 'bench-agent', correlation_id: `task_push_${i}`, body: 'x' });
      await got;
      const clientAt = performance.now();
      if (i >= WARMUP) {
        toSent.push(sentAt - clock.read());
        toClient.push(clientAt - clock.read());
      }
      // Reference: a pending palace_event_wait woken by the same kind of append.
      const tip = log.tipId();
      const pending = sdkCall(waiter, 'palace_event_wait', { to_agent: 'bench-waiter', since_event_id: tip ?? undefined, timeout_ms: 10_000 }, 15_000);
      await sleep(2);
      clock.arm();
      await log.append({ type: 'task.request', status: 'open', stream: 'bench', room: 'mcp', from_agent: 'bench-requester', to_agent: 'bench-waiter', correlation_id: `task_wait_${i}`, body: 'x' });
      await pending;
      if (i >= WARMUP) toWaiter.push(performance.now() - clock.read());
    }
    // 2026-07-28: a v2 SDK client on subscriptions/listen, the same appends to its inbox.
    ctx.progress(`push latency (2026-07-28 subscriptions/listen): ${PUSHES} appends`);
    const modern = new ClientV2({ name: 'bench-listen', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await modern.connect(new HttpV2(new URL(`${hub.url}/mcp`)));
    let heard: (() => void) | undefined;
    modern.setNotificationHandler('notifications/resources/updated', () => heard?.());
    const listening = await modern.listen({ resourceSubscriptions: ['palace://inbox/bench-agent-26'] });
    let sent26 = 0;
    watch.onPush = (t) => {
      if (t.uri === 'palace://inbox/bench-agent-26') sent26 = t.sentAt;
    };
    const toSent26: number[] = [];
    const toClient26: number[] = [];
    for (let i = 0; i < WARMUP + PUSHES; i++) {
      clock.arm();
      sent26 = 0;
      const got = new Promise<void>((resolve) => (heard = resolve));
      await log.append({ type: 'task.request', status: 'open', stream: 'bench', room: 'mcp', from_agent: 'bench-requester', to_agent: 'bench-agent-26', correlation_id: `task_listen_${i}`, body: 'x' });
      await got;
      const clientAt = performance.now();
      if (i >= WARMUP) {
        toSent26.push(sent26 - clock.read());
        toClient26.push(clientAt - clock.read());
      }
    }
    await listening.close();
    await modern.close();
    clock.close();
    watch.onPush = undefined;
    const waitP50 = percentile(toWaiter, 50);
    figures.push(
      { name: 'push: commit -> resources/updated sent, p50', value: percentile(toSent, 50), unit: 'ms' },
      {
        name: 'push: commit -> resources/updated sent, p99',
        value: percentile(toSent, 99),
        unit: 'ms',
        target: { op: '<=', value: 10, note: 'push-wake budget (issue 33)' },
      },
      {
        name: 'push: commit -> SDK client has the notification, p50',
        value: percentile(toClient, 50),
        unit: 'ms',
        reference: { value: waitP50, label: 'commit -> a pending palace_event_wait answered to its SDK client, p50, same run', measured: true },
      },
      { name: 'push: commit -> SDK client has the notification, p99', value: percentile(toClient, 99), unit: 'ms' },
      { name: 'push (2026 listen): commit -> resources/updated sent, p50', value: percentile(toSent26, 50), unit: 'ms' },
      {
        name: 'push (2026 listen): commit -> resources/updated sent, p99',
        value: percentile(toSent26, 99),
        unit: 'ms',
        target: { op: '<=', value: 10, note: 'push-wake budget (issue 33)' },
      },
      { name: 'push (2026 listen): commit -> v2 SDK client has the notification, p50', value: percentile(toClient26, 50), unit: 'ms' },
      { name: 'push (2026 listen): commit -> v2 SDK client has the notification, p99', value: percentile(toClient26, 99), unit: 'ms' },
    );
    return {
      figures,
      notes: [
        `Hub: startHub in this process on 127.0.0.1 port 0, no token; one SDK client subscribed to palace://inbox/bench-agent over the session's GET stream; ${PUSHES} appends after ${WARMUP} warm-up.`,
        'Bytes: the JSON-RPC message of the answer (SSE framing excluded); for 2026-07-28 server/discover stands in for initialize (no handshake). The 2026 push: a v2 SDK client (@modelcontextprotocol/client) on subscriptions/listen, no session.',
      ],
    };
  } finally {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await hub.close();
    rmSync(root, { recursive: true, force: true });
  }
}

export const mcpSuite: Suite = { name: 'mcp', title: 'MCP surface: sizes per era and profile, push latency', run };
