// palace_tasks through the official MCP client against a real hub on port 0: pages by cursor with
// true totals and counts by status, filters (status, open, stream, requester, worker, to_agent,
// correlation_id), the same counts in palace_status, and bad input refused with a named field.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { TaskPage } from '../../hub/src/logstream/task-projection.js';
import type { Hub } from '../../hub/src/server.js';
import { callJson, connectHttpClient, makeHubDirs, resultJson, startTestHub, type HubDirs } from '../helpers/hub.js';

/** A palace_tasks result, as the tool returns the projection's page. */
type Page = TaskPage;

describe('palace_tasks', () => {
  let dirs: HubDirs;
  let hub: Hub;
  let mcp: Client;

  beforeAll(async () => {
    dirs = makeHubDirs('palace-tasks-tool-');
    hub = await startTestHub(dirs);
    mcp = await connectHttpClient(hub.url);
    for (let i = 0; i < 12; i++) {
      const request = await callJson<{ id: string }>(mcp, 'palace_event_append', {
        type: 'task.request',
        status: 'open',
        stream: i % 2 === 0 ? 'project/even' : 'project/odd',
        room: 'delegation',
        from_agent: i < 6 ? 'lead-a' : 'lead-b',
        to_agent: `worker-${i % 3}`,
        correlation_id: `task_t${String(i).padStart(2, '0')}`,
        body: `task ${i}`,
      });
      if (i % 3 === 0) await callJson(mcp, 'palace_event_ack', { event_id: request.id, from_agent: `worker-${i % 3}`, status: 'claimed' });
      if (i % 4 === 0)
        await callJson(mcp, 'palace_event_append', {
          type: 'task.reply', status: 'failed', stream: 'project/x', room: 'delegation', from_agent: 'worker-0', correlation_id: `task_t${String(i).padStart(2, '0')}`,
        });
    }
  });

  afterAll(async () => {
    await mcp?.close();
    await hub?.close();
    dirs?.cleanup();
  });

  it('pages every task by cursor with true totals', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    for (;;) {
      const page = await callJson<Page>(mcp, 'palace_tasks', { limit: 5, ...(cursor ? { cursor } : {}) });
      expect(page.total).toBe(12);
      expect(page.counts).toEqual({
        all: 12,
        active: 9,
        done: 3,
        by_status: { open: 6, claimed: 3, ready: 0, applied: 0, blocked: 0, failed: 3, superseded: 0, none: 0 },
      });
      seen.push(...page.tasks.map((t) => t.correlation_id));
      pages++;
      if (!page.has_more) {
        expect(page.cursor).toBeNull();
        break;
      }
      cursor = page.cursor ?? undefined;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual(Array.from({ length: 12 }, (_, i) => `task_t${String(i).padStart(2, '0')}`));
    const newest = await callJson<Page>(mcp, 'palace_tasks', { order: 'desc', limit: 2 });
    expect(newest.tasks.map((t) => t.correlation_id)).toEqual(['task_t11', 'task_t10']);
  });

  it('filters by status, open, stream, requester, worker and recipient', async () => {
    const ids = async (args: Record<string, unknown>): Promise<[string[], number]> => {
      const page = await callJson<Page>(mcp, 'palace_tasks', { limit: 500, ...args });
      return [page.tasks.map((t) => t.correlation_id), page.total];
    };
    expect(await ids({ status: 'failed' })).toEqual([['task_t00', 'task_t04', 'task_t08'], 3]);
    expect((await ids({ status: ['claimed', 'failed'] }))[1]).toBe(6);
    expect((await ids({ open: true }))[1]).toBe(9);
    expect((await ids({ open: false }))[1]).toBe(3);
    expect((await ids({ stream: 'project/odd' }))[1]).toBe(6);
    expect((await ids({ requester: 'lead-b', open: true }))[0]).toEqual(['task_t06', 'task_t07', 'task_t09', 'task_t10', 'task_t11']);
    expect((await ids({ worker: 'worker-0', status: 'claimed' }))[0]).toEqual(['task_t03', 'task_t06', 'task_t09']);
    expect((await ids({ to_agent: 'worker-2' }))[0]).toEqual(['task_t02', 'task_t05', 'task_t08', 'task_t11']);
    // Counts ignore the status filter: the chips of every status stay true whichever is shown.
    const failed = await callJson<Page>(mcp, 'palace_tasks', { status: 'failed', stream: 'project/even' });
    expect(failed.total).toBe(3);
    expect(failed.counts.all).toBe(6);
  });

  it('filters by correlation_id: one task with its history, a list of them, or none', async () => {
    const one = await callJson<Page>(mcp, 'palace_tasks', { correlation_id: 'task_t04' });
    expect(one.tasks.map((t) => t.correlation_id)).toEqual(['task_t04']);
    expect(one.total).toBe(1);
    // task_t04: requested, claimed (4 % 3 = 1: no), failed (4 % 4 = 0): its history has every transition.
    expect(one.tasks[0]?.history.map((h) => h.to)).toEqual(['open', 'failed']);
    const two = await callJson<Page>(mcp, 'palace_tasks', { correlation_id: ['task_t09', 'task_t01'], status: 'claimed' });
    expect(two.tasks.map((t) => t.correlation_id)).toEqual(['task_t09']);
    const none = await callJson<Page>(mcp, 'palace_tasks', { correlation_id: 'task_nowhere' });
    expect(none).toMatchObject({ tasks: [], count: 0, total: 0 });
  });

  it('reports the same counts in palace_status', async () => {
    const status = await callJson<{ logstream: { open_tasks: number; tasks: number; tasks_by_status: Record<string, number> } }>(mcp, 'palace_status');
    expect(status.logstream).toMatchObject({ open_tasks: 9, tasks: 12 });
    expect(status.logstream.tasks_by_status.failed).toBe(3);
  });

  it('refuses a bad cursor or an unknown since_event_id, naming the field', async () => {
    const bad = await mcp.callTool({ name: 'palace_tasks', arguments: { cursor: 'page-two' } });
    expect(bad.isError).toBe(true);
    expect(resultJson<{ error: { code: string; field?: string } }>(bad).error).toMatchObject({ code: 'input.invalid' });
    expect(JSON.stringify(bad.content)).toContain('cursor');
    const unknown = await mcp.callTool({ name: 'palace_tasks', arguments: { since_event_id: 'evt_20260101T000000_000000000000' } });
    expect(unknown.isError).toBe(true);
    expect(resultJson<{ error: { code: string } }>(unknown).error.code).toBe('log.unknown_cursor');
  });
});
