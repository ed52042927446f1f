// A hub that goes away while a stdio client's palace_event_wait is pending: SIGTERM and idle exit
// answer the wait with `hub.shutting_down` (and a cursor to resume from) before the hub exits; a
// hub killed with SIGKILL cuts the stream, and `palace mcp` answers the request with a JSON-RPC error
// saying the hub went away. In every case the client gets an answer long before its own timeout.

import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { LogEvent } from '../../hub/src/core/types.js';
import { callJson, killChildren, makeHubDirs, startChildHub, waitUntil, type ChildHub, type HubDirs } from '../helpers/hub.js';
import { closeSessions, stdioSession, toolError, type StdioSession } from '../helpers/stdio-client.js';

let dirs: HubDirs;

beforeEach(() => {
  dirs = makeHubDirs();
});

afterEach(async () => {
  await closeSessions();
  await killChildren();
  dirs.cleanup();
});

/**
 * Waits pending in the hub's handler. (Counting MCP requests is not enough: the client's
 * notifications/initialized can reach the hub after connect() resolves and be mistaken for the wait;
 * a SIGTERM sent while the wait is still on its way then meets a keep-alive connection being closed.)
 */
async function activeWaits(hub: ChildHub): Promise<number> {
  const statusz = (await fetch(`${hub.url}/statusz`).then((r) => r.json())) as { requests: { waits: { active: number } } };
  return statusz.requests.waits.active;
}

/** Appends a cursor event, then starts a wait the hub can only end by its (long) timeout. */
async function pendingWait(
  session: StdioSession,
  onprogress?: () => void,
): Promise<{ cursor: string; wait: Promise<unknown> }> {
  const start = await callJson<LogEvent>(session.client, 'palace_event_append', {
    type: 'status',
    stream: 'project/demo',
    room: 'status',
    from_agent: 'box-claude',
    body: 'cursor',
  });
  const wait = session.client
    .callTool(
      { name: 'palace_event_wait', arguments: { to_agent: 'box-codex', since_event_id: start.id, timeout_ms: 120_000 } },
      undefined,
      { timeout: 15_000, ...(onprogress ? { onprogress } : {}) },
    )
    .then(
      (result) => ({ result }),
      (error: unknown) => ({ error }),
    );
  return { cursor: start.id, wait };
}

describe('a hub that goes away while a stdio wait is pending', () => {
  it('SIGTERM: the wait is answered with hub.shutting_down and a cursor, then the hub exits 0', async () => {
    const hub = await startChildHub(dirs);
    const session = stdioSession(dirs);
    await session.connect();
    const { cursor, wait } = await pendingWait(session);
    await waitUntil(async () => (await activeWaits(hub)) === 1, 'the wait to be pending in the hub');

    hub.child.kill('SIGTERM');
    const outcome = (await wait) as { result?: unknown; error?: unknown };
    expect(outcome.error).toBeUndefined();
    const error = toolError(outcome.result);
    expect(error.code).toBe('hub.shutting_down');
    expect(error.data).toMatchObject({ cursor });
    expect((await hub.exited).code).toBe(0);
  });

  it('idle exit: the wait is answered with hub.shutting_down', async () => {
    // Connect first (answered locally), so the hub's 3.6 s idle clock starts with the wait itself.
    const session = stdioSession(dirs);
    await session.connect();
    const hub = await startChildHub(dirs, { env: { PALACE_MCP_IDLE_HOURS: '0.001' } });
    const { wait } = await pendingWait(session);
    const outcome = (await wait) as { result?: unknown; error?: unknown };
    expect(outcome.error).toBeUndefined();
    expect(toolError(outcome.result).code).toBe('hub.shutting_down');
    expect((await hub.exited).code).toBe(0);
  });

  it('SIGKILL mid-stream: the stream ends without a result and the proxy answers that id with "the hub went away"', async () => {
    // Progress every 200 ms: the hub's SSE answer has started (headers and frames sent) when it dies.
    const hub = await startChildHub(dirs, { env: { PALACE_WAIT_PROGRESS_MS: '200' } });
    const session = stdioSession(dirs);
    await session.connect();
    let progress = 0;
    const { wait } = await pendingWait(session, () => progress++);
    await waitUntil(() => progress > 0, 'a progress notification of the wait');

    hub.child.kill('SIGKILL');
    const outcome = (await wait) as { result?: unknown; error?: unknown };
    expect(outcome.error).toBeInstanceOf(McpError);
    expect((outcome.error as McpError).message).toMatch(/hub .*went away/);
    expect((outcome.error as McpError).data).toMatchObject({ code: 'hub.unreachable' });

    // The same stdio process keeps serving: once the hub is gone it answers locally.
    await hub.exited;
    expect((await callJson<{ role: string }>(session.client, 'palace_status')).role).toBe('local');
  });

  it('SIGKILL before the answer started: the request reached the hub, so it is answered "went away", not rerun here', async () => {
    const hub = await startChildHub(dirs);
    const session = stdioSession(dirs);
    await session.connect();
    const { wait } = await pendingWait(session);
    await waitUntil(async () => (await activeWaits(hub)) === 1, 'the wait to be pending in the hub');

    hub.child.kill('SIGKILL');
    const outcome = (await wait) as { result?: unknown; error?: unknown };
    expect(outcome.error).toBeInstanceOf(McpError);
    expect((outcome.error as McpError).message).toMatch(/hub .*went away/);
  });
});
