// MCP 2025-11-25 and 2026-07-28 side by side (issue 33), each driven by its own official SDK client:
// the v1 `@modelcontextprotocol/sdk` client (initialize, session, GET stream, resources/subscribe) and
// the v2 `@modelcontextprotocol/client` (server/discover, per-request _meta, subscriptions/listen),
// over HTTP /mcp and through `palace mcp` over stdio (forwarded to a hub, and answered in-process).
// Each road: an inbox subscription notified on a new task, a prompt listed and filled in, an agent
// name completed, a schema violation in the documented JSON form (directly and through palace_call).
// The Tasks extension is driven by `@modelcontextprotocol/ext-tasks`: a delegation becomes an MCP
// Task, followed to completion through its review (tasks/update), and another one cancelled.

import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from '@modelcontextprotocol/client';
import { StdioClientTransport as StdioV2 } from '@modelcontextprotocol/client/stdio';
import { createTaskSessionFromClient } from '@modelcontextprotocol/ext-tasks/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as StdioV1 } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as HttpV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Hub } from '../../hub/src/server.js';
import { childEnv, killChildren, makeHubDirs, PALACE_BIN, REPO_ROOT, startChildHub, startTestHub, waitUntil, type HubDirs } from '../helpers/hub.js';
import { registerAgent } from '../helpers/identity-hubs.js';

const MODERN = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';
const BAD_APPEND = { type: 42, stream: 's', room: 'r', from_agent: 'typo-agent', body: 'x' };

interface ToolResult {
  content?: Array<{ type: string; text?: string }>;
  isError?: boolean;
}

/** What each road is asked to do, the same way whatever the client's era. */
interface EraClient {
  callTool(name: string, args: Record<string, unknown>): Promise<ToolResult>;
  prompts(): Promise<string[]>;
  tools(): Promise<unknown[]>;
  prompt(name: string, args: Record<string, string>): Promise<string>;
  completeAgent(prefix: string): Promise<string[]>;
  /** Subscribes to `uri` (2025: resources/subscribe; 2026: subscriptions/listen) and collects updates. */
  watch(uri: string): Promise<{ updates: string[]; stop: () => Promise<void> }>;
  version(): string | undefined;
  close(): Promise<void>;
}

function v1(client: ClientV1): EraClient {
  const updates = new Map<string, string[]>();
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    updates.get(n.params.uri)?.push(n.params.uri);
  });
  return {
    callTool: async (name, args) => (await client.callTool({ name, arguments: args })) as ToolResult,
    prompts: async () => (await client.listPrompts()).prompts.map((p) => p.name),
    tools: async () => (await client.listTools()).tools,
    prompt: async (name, args) => {
      const m = (await client.getPrompt({ name, arguments: args })).messages[0];
      return m?.content.type === 'text' ? m.content.text : '';
    },
    completeAgent: async (prefix) =>
      (await client.complete({ ref: { type: 'ref/prompt', name: 'next_task' }, argument: { name: 'agent', value: prefix } })).completion.values,
    watch: async (uri) => {
      const seen: string[] = [];
      updates.set(uri, seen);
      await client.subscribeResource({ uri });
      return { updates: seen, stop: async () => void (await client.unsubscribeResource({ uri })) };
    },
    version: () => client.transport && 'protocolVersion' in client.transport ? (client.transport as { protocolVersion?: string }).protocolVersion : undefined,
    close: () => client.close(),
  };
}

function v2(client: ClientV2): EraClient {
  const seen: string[] = [];
  client.setNotificationHandler('notifications/resources/updated', (n) => {
    seen.push(n.params.uri);
  });
  return {
    callTool: async (name, args) => (await client.callTool({ name, arguments: args })) as ToolResult,
    prompts: async () => (await client.listPrompts()).prompts.map((p) => p.name),
    tools: async () => (await client.listTools()).tools,
    prompt: async (name, args) => {
      const m = (await client.getPrompt({ name, arguments: args })).messages[0];
      return m?.content.type === 'text' ? m.content.text : '';
    },
    completeAgent: async (prefix) =>
      (await client.complete({ ref: { type: 'ref/prompt', name: 'next_task' }, argument: { name: 'agent', value: prefix } })).completion.values,
    watch: async (uri) => {
      const subscription = await client.listen({ resourceSubscriptions: [uri] });
      expect(subscription.honoredFilter.resourceSubscriptions).toEqual([uri]);
      return { updates: seen, stop: () => subscription.close() };
    },
    version: () => client.getNegotiatedProtocolVersion(),
    close: () => client.close(),
  };
}

let dirs: HubDirs;
let lonely: HubDirs;
let hub: Hub;
const open: EraClient[] = [];

beforeAll(async () => {
  dirs = makeHubDirs('palace-eras-');
  lonely = makeHubDirs('palace-eras-nohub-');
  hub = await startTestHub(dirs);
});
afterAll(async () => {
  await Promise.all(open.map((c) => c.close().catch(() => undefined)));
  await hub.close();
  dirs.cleanup();
  lonely.cleanup();
});

type Road = 'http' | 'stdio via hub' | 'stdio in-process';
type Era = '2025-11-25' | typeof MODERN;

async function connect(era: Era, road: Road, lean = false): Promise<EraClient> {
  let client: EraClient;
  const info = { name: `eras-${era}-${road}`, version: '1.0.0' };
  const stdio = (d: HubDirs) => ({
    command: process.execPath,
    args: [PALACE_BIN, '--palace', d.palace, 'mcp', ...(lean ? ['--profile', 'lean'] : [])],
    env: childEnv(d),
    cwd: REPO_ROOT,
    stderr: 'pipe' as const,
  });
  const url = new URL(`${hub.url}/mcp${lean ? '?profile=lean' : ''}`);
  const target = road === 'stdio in-process' ? lonely : dirs;
  if (era === MODERN) {
    const c = new ClientV2(info, { versionNegotiation: { mode: 'auto' } });
    await c.connect(road === 'http' ? new HttpV2(url) : new StdioV2(stdio(target)));
    client = v2(c);
  } else {
    const c = new ClientV1(info);
    await c.connect(road === 'http' ? new HttpV1(url) : new StdioV1(stdio(target)));
    client = v1(c);
  }
  open.push(client);
  return client;
}

function errorOf(result: ToolResult): { code: string; field?: string; message: string } {
  expect(result.isError).toBe(true);
  return (JSON.parse(result.content?.[0]?.text ?? '{}') as { error: { code: string; field?: string; message: string } }).error;
}

const ROADS: Road[] = ['http', 'stdio via hub', 'stdio in-process'];
const ERAS: Era[] = ['2025-11-25', MODERN];

describe.each(ERAS)('MCP %s', (era) => {
  describe.each(ROADS)('over %s', (road) => {
    let client: EraClient;
    const slug = `${era === MODERN ? 'v2' : 'v1'}-${road.replace(/\W+/g, '')}`;
    const agent = `bob-${slug}`;
    beforeAll(async () => {
      client = await connect(era, road);
    }, 60_000);

    it('negotiates its own era', () => {
      if (era === MODERN) expect(client.version()).toBe(MODERN);
      else expect(client.version()).not.toBe(MODERN);
    });

    it('notifies an inbox subscription of a new task', async () => {
      const uri = `palace://inbox/${agent}`;
      const watch = await client.watch(uri);
      const appended = await client.callTool('palace_event_append', {
        type: 'task.request',
        status: 'open',
        stream: 'proj',
        room: 'core',
        from_agent: `alice-${slug}`,
        to_agent: agent,
        correlation_id: `task_${slug}`,
        body: 'goal',
      });
      expect(appended.isError).toBeFalsy();
      await waitUntil(() => watch.updates.includes(uri), `resources/updated for ${uri}`, 10_000);
      await watch.stop();
    });

    it('lists the prompts and fills one in', async () => {
      expect(await client.prompts()).toEqual(expect.arrayContaining(['delegate', 'next_task', 'review_patch', 'wake_up', 'file_decision']));
      const text = await client.prompt('delegate', {
        goal: `ship ${slug}`,
        definition_of_done: 'tests pass',
        base_commit: 'abc1234',
        recipient: agent,
        from_agent: `alice-${slug}`,
      });
      expect(text).toContain(`ship ${slug}`);
      expect(text).toContain(agent);
    });

    it('completes an agent name', async () => {
      expect(await client.completeAgent(`bob-${slug.slice(0, 4)}`)).toContain(agent);
    });

    it('answers a schema violation in the documented JSON form', async () => {
      const error = errorOf(await client.callTool('palace_event_append', BAD_APPEND));
      expect(error).toMatchObject({ code: 'input.invalid', field: 'type' });
      expect(error.message).toContain('palace_event_append');
    });
  });

  it('answers a schema violation through palace_call (lean profile) in the same JSON form', async () => {
    for (const road of ['http', 'stdio via hub'] as const) {
      const lean = await connect(era, road, true);
      const error = errorOf(await lean.callTool('palace_call', { name: 'palace_event_append', arguments: BAD_APPEND }));
      expect(error).toMatchObject({ code: 'input.invalid', field: 'type' });
      // The lean list stays under 10 KB in both eras (2026 adds only resultType, cache hints and serverInfo around it).
      expect(Buffer.byteLength(JSON.stringify({ tools: await lean.tools() }))).toBeLessThanOrEqual(10 * 1024);
    }
  }, 60_000);
});

/** A raw 2026 request to the hub (the ext-tasks raw dispatch, and the protocol edge cases below). */
async function post(body: Record<string, unknown>, headers: Record<string, string> = {}, url = `${hub.url}/mcp`): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
}

const envelope = (extra: Record<string, unknown> = {}) => ({
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientCapabilities': {},
  ...extra,
});

describe('MCP 2026-07-28 on the wire', () => {
  it('answers server/discover with every version, the Tasks extension and cache hints; results carry resultType', async () => {
    const discover = (await (await post({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: envelope() } })).json()) as {
      result: Record<string, unknown> & { supportedVersions: string[]; capabilities: { extensions: Record<string, unknown> } };
    };
    expect(discover.result.supportedVersions).toEqual(expect.arrayContaining([MODERN, '2025-11-25', '2025-06-18']));
    expect(discover.result.capabilities.extensions[TASKS]).toEqual({});
    expect(discover.result).toMatchObject({ resultType: 'complete', ttlMs: 300_000, cacheScope: 'public' });
    expect(String(discover.result.instructions)).toContain('Tool profile: full');
    const list = (await (await post({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: envelope() } })).json()) as { result: Record<string, unknown> };
    expect(list.result).toMatchObject({ resultType: 'complete', ttlMs: 300_000, cacheScope: 'public' });
    expect((list.result._meta as Record<string, unknown>)['io.modelcontextprotocol/serverInfo']).toMatchObject({ name: 'palace' });
  });

  it('refuses an unserved version with -32022 and the supported list, a removed method with -32601, a header that disagrees with -32020', async () => {
    const unserved = (await (await post({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: envelope({ 'io.modelcontextprotocol/protocolVersion': '2099-01-01' }) } })).json()) as {
      error: { code: number; data: { supported: string[]; requested: string } };
    };
    expect(unserved.error.code).toBe(-32022);
    expect(unserved.error.data).toMatchObject({ requested: '2099-01-01' });
    expect(unserved.error.data.supported).toContain(MODERN);
    for (const method of ['ping', 'logging/setLevel', 'resources/subscribe']) {
      const removed = (await (await post({ jsonrpc: '2.0', id: 2, method, params: { _meta: envelope(), uri: 'palace://inbox/x', level: 'debug' } })).json()) as { error: { code: number; message: string } };
      expect(removed.error.code, method).toBe(-32601);
      expect(removed.error.message).toContain(MODERN);
    }
    const mismatch = (await (await post({ jsonrpc: '2.0', id: 3, method: 'tools/list', params: { _meta: envelope() } }, { 'MCP-Protocol-Version': '2027-01-01' })).json()) as { error: { code: number } };
    expect(mismatch.error.code).toBe(-32020);
    const noCaps = (await (await post({ jsonrpc: '2.0', id: 4, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN } } })).json()) as {
      error: { code: number; data: { field: string } };
    };
    expect(noCaps.error).toMatchObject({ code: -32602, data: { field: '_meta.io.modelcontextprotocol/clientCapabilities' } });
  });

  it('sends log messages only at the level the request asks for, before its result, on an SSE answer', async () => {
    const call = (level?: string) =>
      post({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'palace_event_list', arguments: { limit: 1 }, _meta: envelope(level ? { 'io.modelcontextprotocol/logLevel': level } : {}) },
      });
    const withLevel = await call('debug');
    expect(withLevel.headers.get('content-type')).toContain('text/event-stream');
    const frames = (await withLevel.text()).split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as { method?: string; params?: { data?: { tool?: string } } });
    expect(frames[0]).toMatchObject({ method: 'notifications/message', params: { data: { tool: 'palace_event_list' } } });
    expect(frames.at(-1)).toMatchObject({ id: 7, result: { resultType: 'complete' } });
    const without = await call();
    expect(without.headers.get('content-type')).toContain('application/json');
  });

  it('a 2025 client offering 2026-07-28 in initialize still gets the 2025-11-25 counter-offer', async () => {
    const res = await post({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: MODERN, capabilities: {}, clientInfo: { name: 'old', version: '1' } } });
    const text = await res.text();
    expect(text).toContain('"protocolVersion":"2025-11-25"');
  });

  it('refuses a listen filter too large to check on every commit, before acknowledging it', async () => {
    const many = Array.from({ length: 257 }, (_, i) => `palace://inbox/agent-${i}`);
    const res = await post({ jsonrpc: '2.0', id: 'listen:big', method: 'subscriptions/listen', params: { notifications: { resourceSubscriptions: many }, _meta: envelope() } });
    const text = await res.text();
    expect(text).not.toContain('subscriptions/acknowledged');
    const frame = JSON.parse(text.split('\n').find((l) => l.startsWith('data: '))?.slice(6) ?? text) as { id: string; error: { code: number; data: { field: string } } };
    expect(frame).toMatchObject({ id: 'listen:big', error: { code: -32602, data: { field: 'notifications.resourceSubscriptions' } } });
  });

  it('a missing resource is -32602 with its uri (2026), not -32002', async () => {
    const body = (await (await post({ jsonrpc: '2.0', id: 1, method: 'resources/read', params: { uri: 'palace://task/task_nope', _meta: envelope() } })).json()) as {
      error: { code: number; data: { uri: string } };
    };
    expect(body.error.code).toBe(-32602);
    expect(body.error.data.uri).toBe('palace://task/task_nope');
  });
});

describe('the MCP Tasks extension (2026-07-28, ext-tasks client)', () => {
  const framing = { protocolVersion: MODERN, clientInfo: { name: 'tasks-test', version: '1.0.0' }, clientCapabilities: { extensions: { [TASKS]: {} } } };
  // The host's own request coordinator (the SDK client's codecs refuse a `task` result): ids and framing are its job.
  let rawIds = 0;
  const rawDispatch = async (request: unknown) =>
    (await (await post({ jsonrpc: '2.0', id: `raw-${++rawIds}`, ...(request as Record<string, unknown>) }, { 'MCP-Protocol-Version': MODERN })).json()) as never;

  async function taskSession(review: { action: 'accept' | 'decline'; content?: Record<string, string> }) {
    const client = new ClientV2({ name: 'tasks-test', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' }, capabilities: { extensions: { [TASKS]: {} } } as never });
    await client.connect(new HttpV2(new URL(`${hub.url}/mcp`)));
    open.push(v2(client));
    const asked: unknown[] = [];
    const session = createTaskSessionFromClient(client, {
      endpointId: 'palace-eras-test',
      rawDispatch,
      v2RequestFraming: framing,
      onInputRequest: async (request) => {
        asked.push(request);
        return review as never;
      },
    });
    return { session, asked };
  }

  const delegate = (cid: string) => ({
    type: 'task.request',
    status: 'open',
    stream: 'proj',
    room: 'core',
    from_agent: 'alice-tasks',
    to_agent: 'bob-tasks',
    correlation_id: cid,
    body: `goal of ${cid}`,
  });

  /** The worker's side, through the hub's own tools: claim, then a patch.ready. */
  async function work(cid: string): Promise<void> {
    const worker = await connect('2025-11-25', 'http');
    const task = JSON.parse((await worker.callTool('palace_tasks', { correlation_id: cid })).content?.[0]?.text ?? '{}') as { tasks: Array<{ request_event_id: string }> };
    const requestId = task.tasks[0]?.request_event_id;
    expect((await worker.callTool('palace_event_ack', { event_id: requestId, from_agent: 'bob-tasks', status: 'claimed' })).isError).toBeFalsy();
    const ready = await worker.callTool('palace_event_append', { type: 'patch.ready', stream: 'proj', room: 'core', from_agent: 'bob-tasks', to_agent: 'alice-tasks', correlation_id: cid, body: 'done' });
    expect(ready.isError, JSON.stringify(ready)).toBeFalsy();
  }

  it('makes a delegation an MCP Task, follows it through review (tasks/update) to completed', async () => {
    const { session, asked } = await taskSession({ action: 'accept', content: { outcome: 'applied', notes: 'tests pass' } });
    const execution = await session.callTool('palace_event_append', delegate('task_mcp_done'));
    expect(execution.kind).toBe('task');
    expect(execution.handle?.taskId).toBe('task_mcp_done');
    const snapshot = await session.task(execution.handle!.taskId).snapshot();
    expect(snapshot.status).toBe('working');
    const settled = execution.settle();
    await work('task_mcp_done');
    const { outcome } = await settled;
    expect(outcome.status).toBe('completed');
    expect(asked).toHaveLength(1);
    const events = JSON.parse((await (await connect('2025-11-25', 'http')).callTool('palace_event_list', { correlation_id: 'task_mcp_done' })).content?.[0]?.text ?? '{}') as {
      events: Array<{ type: string; status: string; from_agent: string; body: string }>;
    };
    expect(events.events.at(-1)).toMatchObject({ type: 'event.ack', status: 'applied', from_agent: 'alice-tasks', body: 'tests pass' });
    await session.close();
  }, 60_000);

  it('cancels an MCP Task: tasks/cancel appends a superseding event, and the task reads cancelled', async () => {
    const { session } = await taskSession({ action: 'decline' });
    const execution = await session.callTool('palace_event_append', delegate('task_mcp_cancel'));
    expect(execution.kind).toBe('task');
    await execution.cancel();
    const snapshot = await session.task(execution.handle!.taskId).snapshot();
    expect(snapshot.status).toBe('cancelled');
    const events = JSON.parse((await (await connect('2025-11-25', 'http')).callTool('palace_event_list', { correlation_id: 'task_mcp_cancel' })).content?.[0]?.text ?? '{}') as {
      events: Array<{ type: string; status: string; from_agent: string; metadata: Record<string, unknown> }>;
    };
    expect(events.events.at(-1)).toMatchObject({ type: 'task.reply', status: 'superseded', metadata: { mcp_task_cancel: true } });
    await session.close();
  }, 60_000);

  it('a client that does not declare the extension gets the stored event, not a task', async () => {
    const plain = await connect(MODERN, 'http');
    const result = await plain.callTool('palace_event_append', delegate('task_mcp_plain'));
    expect(JSON.parse(result.content?.[0]?.text ?? '{}')).toMatchObject({ type: 'task.request', correlation_id: 'task_mcp_plain' });
  });

  it('pushes notifications/tasks for a task id on subscriptions/listen', async () => {
    const plain = await connect('2025-11-25', 'http');
    await plain.callTool('palace_event_append', delegate('task_mcp_push'));
    const controller = new AbortController();
    const res = await fetch(`${hub.url}/mcp`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 'listen:1', method: 'subscriptions/listen', params: { notifications: { taskIds: ['task_mcp_push', 'task_unknown'] }, _meta: envelope() } }),
      signal: controller.signal,
    });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const next = async (pattern: RegExp): Promise<void> => {
      while (!pattern.test(text)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended before ${pattern}: ${text}`);
        text += decoder.decode(value, { stream: true });
      }
    };
    await next(/subscriptions\/acknowledged/);
    expect(text).toContain('"taskIds":["task_mcp_push"]');
    expect(text).toContain('"io.modelcontextprotocol/subscriptionId":"listen:1"');
    await work('task_mcp_push');
    await next(/notifications\/tasks[^\n]*"status":"input_required"/);
    controller.abort();
  }, 30_000);
});

describe('subscriptions/listen and the hub lifecycle', () => {
  it('ends an open listen with an empty result (its subscription id) when the hub stops', async () => {
    const d = makeHubDirs('palace-eras-listen-');
    const h = await startTestHub(d);
    try {
      const res = await fetch(`${h.url}/mcp`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 'listen:stop', method: 'subscriptions/listen', params: { notifications: { resourceSubscriptions: ['palace://inbox/zed'] }, _meta: envelope() } }),
      });
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = '';
      while (!text.includes('subscriptions/acknowledged')) text += decoder.decode((await reader.read()).value, { stream: true });
      const closing = h.close();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        text += decoder.decode(value, { stream: true });
      }
      await closing;
      const last = text.split('\n').filter((l) => l.startsWith('data: ')).at(-1) ?? '';
      expect(JSON.parse(last.slice(6))).toMatchObject({ id: 'listen:stop', result: { _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen:stop' } } });
    } finally {
      await h.close().catch(() => undefined);
      d.cleanup();
    }
  });
});

describe('subscriptions/listen through palace mcp when the hub dies', () => {
  it('ends the forwarded listen with an empty result, so the v2 client sees a graceful end and can listen again', async () => {
    const d = makeHubDirs('palace-eras-kill-');
    const child = await startChildHub(d);
    const c = new ClientV2({ name: 'eras-kill', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    try {
      await c.connect(new StdioV2({ command: process.execPath, args: [PALACE_BIN, '--palace', d.palace, 'mcp'], env: childEnv(d), cwd: REPO_ROOT, stderr: 'pipe' }));
      expect(c.getNegotiatedProtocolVersion()).toBe(MODERN);
      const subscription = await c.listen({ resourceSubscriptions: ['palace://inbox/kim'] });
      child.child.kill('SIGKILL');
      expect(await subscription.closed).toBe('graceful');
    } finally {
      await c.close().catch(() => undefined);
      await child.stop(1_000).catch(() => undefined);
      await killChildren();
      d.cleanup();
    }
  }, 60_000);
});

describe('identity in the 2026 era', () => {
  it('tasks/cancel writes as the agent the token proves, never as clientInfo says', async () => {
    const d = makeHubDirs('palace-eras-identity-');
    const secret = await registerAgent(d, 'carol-cli');
    await registerAgent(d, 'alice-cli');
    const h = await startTestHub(d, { env: { PALACE_IDENTITY_MODE: 'enforced' } });
    try {
      const as = (body: Record<string, unknown>) =>
        post(body, { Authorization: `Bearer ${secret}` }, `${h.url}/mcp`).then((r) => r.json() as Promise<{ result?: Record<string, unknown>; error?: unknown }>);
      const meta = envelope({ 'io.modelcontextprotocol/clientInfo': { name: 'alice-cli', version: '1' } });
      const made = await as({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'palace_event_append', arguments: { ...delegate_('task_ident'), from_agent: 'carol-cli' }, _meta: meta } });
      expect(made.error).toBeUndefined();
      const cancelled = await as({ jsonrpc: '2.0', id: 2, method: 'tasks/cancel', params: { taskId: 'task_ident', _meta: meta } });
      expect(cancelled).toMatchObject({ result: { resultType: 'complete' } });
      const got = await as({ jsonrpc: '2.0', id: 3, method: 'tasks/get', params: { taskId: 'task_ident', _meta: meta } });
      expect(got.result).toMatchObject({ status: 'cancelled', statusMessage: 'superseded by carol-cli' });
    } finally {
      await h.close();
      d.cleanup();
    }
  });

  it('a read-only hub answers tasks/get but refuses tasks/cancel with hub.read_only, writing nothing', async () => {
    const d = makeHubDirs('palace-eras-ro-');
    const writer = await startTestHub(d);
    await post({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'palace_event_append', arguments: { ...delegate_('task_ro'), from_agent: 'alice-cli' }, _meta: envelope() } }, {}, `${writer.url}/mcp`);
    await writer.close();
    const h = await startTestHub(d, { readOnly: true });
    try {
      const call = (body: Record<string, unknown>) => post(body, {}, `${h.url}/mcp`).then((r) => r.json() as Promise<{ result?: Record<string, unknown>; error?: { code: number; data?: { code?: string } } }>);
      expect((await call({ jsonrpc: '2.0', id: 2, method: 'tasks/get', params: { taskId: 'task_ro', _meta: envelope() } })).result).toMatchObject({ status: 'working' });
      const refused = await call({ jsonrpc: '2.0', id: 3, method: 'tasks/cancel', params: { taskId: 'task_ro', _meta: envelope() } });
      expect(refused.error).toMatchObject({ code: -32010, data: { code: 'hub.read_only' } });
      expect((await call({ jsonrpc: '2.0', id: 4, method: 'tasks/get', params: { taskId: 'task_ro', _meta: envelope() } })).result).toMatchObject({ status: 'working' });
    } finally {
      await h.close();
      d.cleanup();
    }
  });
});

function delegate_(cid: string): Record<string, unknown> {
  return { type: 'task.request', status: 'open', stream: 'proj', room: 'core', to_agent: 'bob-cli', correlation_id: cid, body: 'goal' };
}
