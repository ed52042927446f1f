// The delegation protocol end to end through the hub's MCP endpoint, between two official SDK
// clients (requester and worker) over real HTTP: request, wait, claim, patch, verify, apply.

import { createHash } from 'node:crypto';

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { LogEvent, WaitResult } from '../../hub/src/core/types.js';
import type { Hub } from '../../hub/src/server.js';
import {
  callJson,
  connectHttpClient,
  makeHubDirs,
  resultJson,
  startTestHub,
  type HubDirs,
} from '../helpers/hub.js';

const REQUESTER = 'laptop-claude';
const WORKER = 'desktop-codex';
const TASK = 'task_fix_greeting_1a2b3c4d';
const PATCH =
  'diff --git a/hello.txt b/hello.txt\n--- a/hello.txt\n+++ b/hello.txt\n@@ -1 +1 @@\n-helo\n+hello\n';

const LOGSTREAM_TOOLS = [
  'palace_event_append',
  'palace_event_list',
  'palace_event_wait',
  'palace_event_ack',
  'palace_artifact_put',
  'palace_artifact_get',
  'palace_patch_submit',
];

let dirs: HubDirs;
let hub: Hub;
let clients: Client[];

async function client(name: string): Promise<Client> {
  const c = await connectHttpClient(hub.url, { name });
  clients.push(c);
  return c;
}

beforeEach(async () => {
  dirs = makeHubDirs();
  hub = await startTestHub(dirs);
  clients = [];
});

afterEach(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await hub.close();
  dirs.cleanup();
});

describe('MCP over Streamable HTTP', () => {
  it('hands every client the agent instructions in the initialize result', async () => {
    const c = await client('instructions-reader');
    const instructions = c.getInstructions() ?? '';
    expect(instructions).toContain('task.request');
    expect(instructions).toMatch(/claimed/);
    expect(instructions).toMatch(/sha256/);
    expect(instructions).toMatch(/applied, failed or blocked/);
    expect(instructions).toContain('since_event_id');
    expect(c.getServerVersion()).toMatchObject({ name: 'palace', version: hub.services.version });
  });

  it('lists the seven logstream tools and palace_status, each with an object input schema', async () => {
    const c = await client('lister');
    const { tools } = await c.listTools();
    const names = tools.map((t) => t.name);
    for (const name of [...LOGSTREAM_TOOLS, 'palace_status']) expect(names).toContain(name);
    for (const tool of tools) {
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.description?.length ?? 0).toBeGreaterThan(20);
    }
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(Object.keys(byName.get('palace_event_append')?.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining([
        'type',
        'stream',
        'room',
        'from_agent',
        'to_agent',
        'correlation_id',
        'status',
        'body',
        'artifact_ids',
      ]),
    );
    // from_agent is optional in the schema: an agent proven by its secret may leave it out (issue 28);
    // without a secret the handler still refuses an append with no from_agent.
    expect(byName.get('palace_event_append')?.inputSchema.required).toEqual(['type', 'stream', 'room']);
    expect(Object.keys(byName.get('palace_event_wait')?.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(['to_agent', 'since_event_id', 'timeout_ms', 'type', 'correlation_id']),
    );
    expect(byName.get('palace_event_ack')?.inputSchema.required).toEqual(['event_id']);
    expect(byName.get('palace_artifact_get')?.inputSchema.required).toEqual(['artifact_id']);
    expect(byName.get('palace_event_list')?.annotations?.readOnlyHint).toBe(true);
    expect(byName.get('palace_event_append')?.annotations?.readOnlyHint).toBe(false);
  });

  it('reports tool failures as isError results carrying {error: {code, field}}', async () => {
    const c = await client('error-maker');
    const badType = await c.callTool({
      name: 'palace_event_append',
      arguments: { type: 'Not A Type', stream: 'project/demo', room: 'delegation', from_agent: REQUESTER },
    });
    expect(badType.isError).toBe(true);
    expect(resultJson(badType)).toMatchObject({ error: { code: 'input.invalid', field: 'type' } });

    const missing = await c.callTool({
      name: 'palace_artifact_get',
      arguments: { artifact_id: 'art_20260101T000000_000000000000' },
    });
    expect(missing.isError).toBe(true);
    expect(resultJson(missing)).toMatchObject({ error: { code: 'artifact.not_found' } });

    const unknownCursor = await c.callTool({
      name: 'palace_event_list',
      arguments: { since_event_id: 'evt_20260101T000000_ffffffffffff' },
    });
    expect(unknownCursor.isError).toBe(true);
    expect(resultJson(unknownCursor)).toMatchObject({
      error: { code: 'log.unknown_cursor', field: 'since_event_id' },
    });

    const ackOfNothing = await c.callTool({
      name: 'palace_event_ack',
      arguments: { event_id: 'evt_20260101T000000_aaaaaaaaaaaa', from_agent: WORKER, status: 'claimed' },
    });
    expect(ackOfNothing.isError).toBe(true);
    expect(resultJson(ackOfNothing)).toMatchObject({
      error: { code: 'log.event_not_found', field: 'event_id' },
    });
    expect(hub.services.logstream.store.countEvents()).toBe(0);
  });

  it('runs a full delegation: request, wait wakes, claim, patch, verify sha256, apply', async () => {
    const requester = await client(REQUESTER);
    const worker = await client(WORKER);

    // The worker announces its watch; its cursor is that event.
    const announce = await callJson<LogEvent>(worker, 'palace_event_append', {
      type: 'status',
      stream: 'project/demo',
      room: 'status',
      from_agent: WORKER,
      to_agent: '*',
      body: `${WORKER} watching for task.request`,
    });
    const workerWait = callJson<WaitResult>(worker, 'palace_event_wait', {
      to_agent: WORKER,
      exclude_from_agent: WORKER,
      type: 'task.request',
      since_event_id: announce.id,
      timeout_ms: 20_000,
    });

    const request = await callJson<LogEvent>(requester, 'palace_event_append', {
      type: 'task.request',
      stream: 'project/demo',
      room: 'delegation',
      from_agent: REQUESTER,
      to_agent: WORKER,
      correlation_id: TASK,
      status: 'open',
      branch: 'fix/greeting',
      base_commit: 'abc1234',
      body: 'Goal: fix the greeting typo in hello.txt. Done when hello.txt says hello.',
    });
    expect(request.id).toMatch(/^evt_\d{8}T\d{6}_[0-9a-f]{12}$/);

    const woke = await workerWait;
    expect(woke.timed_out).toBe(false);
    expect(woke.events.map((e) => e.id)).toEqual([request.id]);
    expect(woke.events[0]).toMatchObject({
      type: 'task.request',
      correlation_id: TASK,
      status: 'open',
      body: request.body,
    });

    const claim = await callJson<LogEvent>(worker, 'palace_event_ack', {
      event_id: request.id,
      from_agent: WORKER,
      status: 'claimed',
    });
    expect(claim).toMatchObject({
      type: 'event.ack',
      status: 'claimed',
      to_agent: REQUESTER,
      correlation_id: TASK,
      metadata: { ack_of: request.id },
    });

    const requesterWait = callJson<WaitResult>(requester, 'palace_event_wait', {
      to_agent: REQUESTER,
      correlation_id: TASK,
      type: 'patch.ready',
      since_event_id: claim.id,
      timeout_ms: 20_000,
    });
    const submitted = await callJson<{
      artifact: { id: string; sha256: string; size_bytes: number; warnings?: string[] };
      event: LogEvent;
    }>(worker, 'palace_patch_submit', {
      content: PATCH,
      from_agent: WORKER,
      correlation_id: TASK,
      body: 'Fixed the typo; ran the greeting test.',
    });
    expect(submitted.artifact.warnings).toBeUndefined();
    expect(submitted.event).toMatchObject({
      type: 'patch.ready',
      status: 'ready',
      to_agent: REQUESTER,
      correlation_id: TASK,
      stream: 'project/demo',
      branch: 'fix/greeting',
      artifact_ids: [submitted.artifact.id],
    });

    const ready = await requesterWait;
    expect(ready.timed_out).toBe(false);
    expect(ready.events).toHaveLength(1);
    const patchEvent = ready.events[0] as LogEvent;
    expect(patchEvent.id).toBe(submitted.event.id);
    const artifactId = patchEvent.artifact_ids[0] as string;

    const artifact = await callJson<{
      id: string;
      content: string;
      sha256: string;
      size_bytes: number;
      kind: string;
      created_by: string;
    }>(requester, 'palace_artifact_get', { artifact_id: artifactId });
    expect(artifact).toMatchObject({
      id: artifactId,
      kind: 'patch',
      created_by: WORKER,
      size_bytes: Buffer.byteLength(PATCH),
    });
    expect(artifact.content).toBe(PATCH);
    const computed = createHash('sha256').update(Buffer.from(artifact.content, 'utf8')).digest('hex');
    expect(artifact.sha256).toBe(computed);

    const applied = await callJson<LogEvent>(requester, 'palace_event_ack', {
      event_id: patchEvent.id,
      from_agent: REQUESTER,
      status: 'applied',
      body: 'git apply ok; tests pass',
    });
    expect(applied).toMatchObject({
      type: 'event.ack',
      status: 'applied',
      to_agent: WORKER,
      correlation_id: TASK,
    });

    const status = await callJson<{
      role: string;
      read_only: boolean;
      logstream: { events: number; open_tasks: number; tasks: number; latest_event_id: string };
    }>(requester, 'palace_status');
    expect(status).toMatchObject({ role: 'hub', read_only: false });
    expect(status.logstream).toMatchObject({
      events: 5,
      open_tasks: 0,
      tasks: 1,
      latest_event_id: applied.id,
    });

    const task = hub.services.logstream.task(TASK);
    expect(task.status).toBe('applied');
    expect(task.done).toBe(true);
    expect(task.requester).toBe(REQUESTER);
    expect(task.worker).toBe(WORKER);
    expect(task.history.map((h) => h.to)).toEqual(['open', 'claimed', 'ready', 'applied']);
    expect(task.history.every((h) => h.expected)).toBe(true);

    const exchange = await callJson<{ events: LogEvent[] }>(requester, 'palace_event_list', {
      correlation_id: TASK,
    });
    expect(exchange.events.map((e) => e.type)).toEqual([
      'task.request',
      'event.ack',
      'patch.ready',
      'event.ack',
    ]);
    // The original request is never edited by the acks.
    expect(exchange.events[0]).toEqual(request);
  });

  it('times out a wait with timed_out true and no events, not an error', async () => {
    const c = await client('waiter');
    const first = await callJson<LogEvent>(c, 'palace_event_append', {
      type: 'status',
      stream: 's',
      room: 'r',
      from_agent: 'a',
    });
    const result = await callJson<WaitResult>(c, 'palace_event_wait', {
      since_event_id: first.id,
      timeout_ms: 200,
    });
    expect(result).toMatchObject({ timed_out: true, events: [], count: 0 });
  });
});
