// The spec audit's probes through a real hub's MCP endpoint (official SDK client over HTTP): an open
// artifact kind, created_by on drawers and KG facts, acks refused when they skip the task order, and
// to_agent required (one identity or '*') on the addressed event types. Each failed on the old code.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { LogEvent } from '../../hub/src/core/types.js';
import type { Hub } from '../../hub/src/server.js';
import { parseJson, startCli } from '../helpers/cli.js';
import { callJson, childEnv, connectHttpClient, makeHubDirs, resultJson, startTestHub, type HubDirs } from '../helpers/hub.js';

let dirs: HubDirs;
let hub: Hub;
let client: Client;

beforeAll(async () => {
  dirs = makeHubDirs('palace-spec-');
  hub = await startTestHub(dirs);
  client = await connectHttpClient(hub.url, { name: 'spec-audit' });
});

afterAll(async () => {
  await client.close();
  await hub.close();
  dirs.cleanup();
});

async function toolError(name: string, args: Record<string, unknown>): Promise<{ code: string; field?: string; message: string; data?: Record<string, unknown> }> {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError, JSON.stringify(result.content)).toBe(true);
  return resultJson<{ error: { code: string; field?: string; message: string; data?: Record<string, unknown> } }>(result).error;
}

const REQUESTER = 'laptop-claude';
const WORKER = 'desktop-codex';
let taskSeq = 0;

async function request(extra: Record<string, unknown> = {}): Promise<LogEvent> {
  taskSeq += 1;
  return callJson<LogEvent>(client, 'palace_event_append', {
    type: 'task.request',
    stream: 'project/spec',
    room: 'delegation',
    from_agent: REQUESTER,
    to_agent: WORKER,
    correlation_id: `task_spec_${taskSeq}`,
    status: 'open',
    body: 'goal: the audit',
    ...extra,
  });
}

describe('artifact kind is open (spec: "other kinds include generated files, test logs, JSON reports")', () => {
  it('stores kind test-log through palace_artifact_put and refuses a malformed kind naming the rule', async () => {
    const stored = await callJson<{ id: string; kind: string }>(client, 'palace_artifact_put', {
      kind: 'test-log',
      created_by: WORKER,
      content: '12 passed\n',
    });
    expect(stored.kind).toBe('test-log');
    expect(await callJson<{ kind: string }>(client, 'palace_artifact_get', { artifact_id: stored.id })).toMatchObject({ kind: 'test-log' });
    const bad = await toolError('palace_artifact_put', { kind: 'Test Log', created_by: WORKER, content: 'x' });
    expect(bad).toMatchObject({ code: 'input.invalid', field: 'kind' });
  });
});

describe('created_by is returned under the spec name', () => {
  it('palace_get_drawer and palace_kg_query show created_by (added_by kept as a deprecated alias)', async () => {
    const added = await callJson<{ drawer_id: string }>(
      client,
      'palace_add_drawer',
      { wing: 'spec', room: 'audit', content: 'The audit found created_by returned as added_by.', created_by: WORKER },
      60_000,
    );
    const drawer = await callJson<Record<string, unknown>>(client, 'palace_get_drawer', { drawer_id: added.drawer_id });
    expect(drawer.created_by).toBe(WORKER);
    expect(drawer.added_by).toBe(WORKER);

    await callJson(client, 'palace_kg_add', { subject: 'audit', predicate: 'found', object: 'added_by', created_by: REQUESTER });
    const facts = await callJson<{ facts: Array<Record<string, unknown>> }>(client, 'palace_kg_query', { entity: 'audit' });
    expect(facts.facts[0]).toMatchObject({ created_by: REQUESTER, added_by: REQUESTER });
  }, 90_000);
});

describe('acks that skip the task order are refused (docs/decisions.md)', () => {
  it('refuses applied on a task never claimed with task.out_of_order, appends nothing, and the task stays open', async () => {
    const req = await request();
    const before = hub.services.logstream.store.countEvents();
    const err = await toolError('palace_event_ack', { event_id: req.id, from_agent: REQUESTER, status: 'applied' });
    expect(err.code).toBe('task.out_of_order');
    expect(err.field).toBe('status');
    expect(err.message).toContain('open');
    expect(err.data).toMatchObject({ status: 'open', ack: 'applied', allowed: ['claimed', 'failed', 'blocked'] });
    expect(hub.services.logstream.store.countEvents()).toBe(before);
    const tasks = await callJson<{ tasks: Array<{ status: string; event_count: number }> }>(client, 'palace_tasks', { correlation_id: req.correlation_id });
    expect(tasks.tasks[0]).toMatchObject({ status: 'open', event_count: 1 });

    // The same ack written by hand as an event.ack append is refused too: raw acks are hub-only
    // (issue 28, they go through palace_event_ack and its checks), and nothing is appended.
    const byHand = await toolError('palace_event_append', {
      type: 'event.ack',
      stream: 'project/spec',
      room: 'delegation',
      from_agent: REQUESTER,
      to_agent: WORKER,
      correlation_id: req.correlation_id,
      status: 'applied',
    });
    expect(byHand.code).toBe('event.hub_only');
    expect(hub.services.logstream.store.countEvents()).toBe(before);
  });

  it('accepts the order the spec shows: claimed, ready (patch), applied; and refuses a claim on a done task', async () => {
    const req = await request();
    const claim = await callJson<LogEvent & { claim?: { won: boolean } }>(client, 'palace_event_ack', { event_id: req.id, from_agent: WORKER, status: 'claimed' });
    expect(claim.status).toBe('claimed');
    // Ready before a patch is out of order too: applied needs ready.
    expect((await toolError('palace_event_ack', { event_id: req.id, from_agent: REQUESTER, status: 'applied' })).code).toBe('task.out_of_order');
    const patch = await callJson<{ event: LogEvent }>(client, 'palace_patch_submit', {
      content: 'diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n',
      from_agent: WORKER,
      correlation_id: req.correlation_id,
    });
    const applied = await callJson<LogEvent>(client, 'palace_event_ack', { event_id: patch.event.id, from_agent: REQUESTER, status: 'applied' });
    expect(applied.status).toBe('applied');
    const late = await toolError('palace_event_ack', { event_id: req.id, from_agent: 'other-agent', status: 'claimed' });
    expect(late).toMatchObject({ code: 'task.out_of_order', data: { status: 'applied' } });
    // A plain ack (no status) never moves a task: always accepted.
    expect((await callJson<LogEvent>(client, 'palace_event_ack', { event_id: req.id, from_agent: WORKER, body: 'thanks' })).status).toBeNull();
  });

  it('blocked and failed straight from open stay accepted (the state table allows them)', async () => {
    const a = await request();
    expect((await callJson<LogEvent>(client, 'palace_event_ack', { event_id: a.id, from_agent: WORKER, status: 'blocked', body: 'no key' })).status).toBe('blocked');
    const b = await request();
    expect((await callJson<LogEvent>(client, 'palace_event_ack', { event_id: b.id, from_agent: WORKER, status: 'failed' })).status).toBe('failed');
  });
});

describe('to_agent: one identity or "*" on addressed types; others may omit it', () => {
  it('refuses a task.request without to_agent, naming the field and the types that need it', async () => {
    const err = await toolError('palace_event_append', {
      type: 'task.request',
      stream: 'project/spec',
      room: 'delegation',
      from_agent: REQUESTER,
      correlation_id: 'task_spec_unaddressed',
      body: 'goal',
    });
    expect(err).toMatchObject({ code: 'input.invalid', field: 'to_agent' });
    expect(err.message).toMatch(/task\.request/);
    expect(err.message).toMatch(/'\*'/);
  });

  it.each(['laptop-claude, desktop-codex', 'laptop-claude desktop-codex', '*,desktop-codex', '**'])(
    'refuses the to_agent %j (not one identity)',
    async (toAgent) => {
      const err = await toolError('palace_event_append', {
        type: 'status',
        stream: 'project/spec',
        room: 'status',
        from_agent: REQUESTER,
        to_agent: toAgent,
      });
      expect(err).toMatchObject({ code: 'input.invalid', field: 'to_agent' });
    },
  );

  it('lets a status note omit to_agent, and addresses a task.reply without one to the requester', async () => {
    const note = await callJson<LogEvent>(client, 'palace_event_append', { type: 'status', stream: 'project/spec', room: 'status', from_agent: REQUESTER, body: 'watching' });
    expect(note.to_agent).toBeNull();
    const req = await request();
    const reply = await callJson<LogEvent>(client, 'palace_event_append', {
      type: 'task.reply',
      stream: 'project/spec',
      room: 'delegation',
      from_agent: WORKER,
      correlation_id: req.correlation_id,
      status: 'blocked',
      body: 'need a key',
    });
    expect(reply.to_agent).toBe(REQUESTER);
    const orphan = await toolError('palace_event_append', {
      type: 'task.reply',
      stream: 'project/spec',
      room: 'delegation',
      from_agent: WORKER,
      correlation_id: 'task_spec_no_request',
      status: 'blocked',
    });
    expect(orphan).toMatchObject({ code: 'input.invalid', field: 'to_agent' });
  });
});

describe('the CLI says whether it sent a token when the hub answers 401', () => {
  it('"needs a token" when none was sent, "refused the token" when one was', async () => {
    const own = makeHubDirs('palace-spec-401-');
    const guarded = await startTestHub(own, { token: 'ab'.repeat(32) });
    try {
      const none = await startCli(['--palace', own.palace, 'logstream', 'list', '--json'], childEnv(own)).done;
      expect(none.code).toBe(1);
      const noneError = parseJson<{ error: { code: string; message: string } }>(none).error;
      expect(noneError.code).toBe('auth.unauthorized');
      expect(noneError.message).toContain('needs a token');
      expect(noneError.message).not.toContain('refused the token');
      expect(noneError.message).toContain('PALACE_MCP_HTTP_TOKEN');

      const wrong = await startCli(['--palace', own.palace, 'logstream', 'list', '--json'], childEnv(own, { PALACE_MCP_HTTP_TOKEN: 'cd'.repeat(32) })).done;
      expect(wrong.code).toBe(1);
      expect(parseJson<{ error: { message: string } }>(wrong).error.message).toContain('refused the token');
    } finally {
      await guarded.close();
      own.cleanup();
    }
  }, 60_000);
});
