// Progress of a long palace_event_wait reaches a stdio client while the wait runs: `palace mcp`
// streams each SSE frame of the hub's answer to stdout as it arrives, so the SDK client's
// resetTimeoutOnProgress keeps a wait longer than its request timeout alive (issue 17, item 2).

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import type { LogEvent, WaitResult } from '../../hub/src/core/types.js';
import { callJson, killChildren, makeHubDirs, resultJson, startChildHub, type HubDirs } from '../helpers/hub.js';
import { closeSessions, stdioSession } from '../helpers/stdio-client.js';

let dirs: HubDirs;

beforeEach(() => {
  dirs = makeHubDirs();
});

afterEach(async () => {
  await closeSessions();
  await killChildren();
  dirs.cleanup();
});

async function connected(): Promise<Client> {
  const session = stdioSession(dirs);
  await session.connect();
  return session.client;
}

describe('palace mcp (stdio) progress', () => {
  it('streams progress notifications before the result, so a wait outlives the request timeout', async () => {
    // Progress every 300 ms; the client times a request out after 3 s without progress; the wait is 6 s.
    await startChildHub(dirs, { env: { PALACE_WAIT_PROGRESS_MS: '300' } });
    const client = await connected();
    const start = await callJson<LogEvent>(client, 'palace_event_append', {
      type: 'status',
      stream: 'project/demo',
      room: 'status',
      from_agent: 'box-claude',
      body: 'cursor',
    });

    const progress: number[] = [];
    let progressAtResult = -1;
    const result = await client
      .callTool(
        { name: 'palace_event_wait', arguments: { to_agent: 'box-codex', since_event_id: start.id, timeout_ms: 6_000 } },
        undefined,
        { timeout: 3_000, resetTimeoutOnProgress: true, onprogress: (p) => progress.push(p.progress) },
      )
      .then((r) => {
        progressAtResult = progress.length;
        return r;
      });
    const waited = resultJson<WaitResult>(result);
    expect(waited).toMatchObject({ timed_out: true, events: [] });
    // Notifications arrived while the wait ran, before its result, with growing elapsed times.
    expect(progressAtResult).toBeGreaterThanOrEqual(3);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    expect(progress.at(-1)).toBeLessThanOrEqual(6_000);
  });

  it('rejects a bad PALACE_WAIT_PROGRESS_MS at start-up, naming the variable', async () => {
    await expect(startChildHub(dirs, { env: { PALACE_WAIT_PROGRESS_MS: 'often' } })).rejects.toThrow(/PALACE_WAIT_PROGRESS_MS/);
  });
});
