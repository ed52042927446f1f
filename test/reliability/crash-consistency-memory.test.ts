// Crash consistency for memory: a child hub filing drawers for several MCP clients at once is
// killed with SIGKILL at a random moment, several times; after each restart every drawer whose
// palace_add_drawer was acknowledged is there with its exact content and is found by search.
// Where `palace replay` exists, a drawer missing after the restart may be restored by it first.

import { spawnSync } from 'node:child_process';

import { afterEach, describe, expect, it } from 'vitest';

import {
  PALACE_BIN,
  childEnv,
  killChildren,
  makeHubDirs,
  startChildHub,
  type ChildHub,
  type HubDirs,
} from '../helpers/hub.js';

const ROUNDS = Number(process.env.PALACE_CRASH_ROUNDS ?? 3);
const WRITERS = 3;
const WING = 'crash';
const TOPICS = [
  'sqlite wal checkpoints',
  'lancedb fragments',
  'koa middleware order',
  'vitest forks pool',
  'onnx session options',
  'zod schemas',
  'sse heartbeats',
  'hybrid logical clocks',
];

interface RpcResult {
  result?: { content?: Array<{ text?: string }>; isError?: boolean };
}

/** One tools/call over plain HTTP: the parsed result, or undefined when the hub died before answering. */
async function callTool(
  url: string,
  name: string,
  args: Record<string, unknown>,
): Promise<Record<string, unknown> | undefined> {
  let text: string;
  try {
    const res = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name, arguments: args },
      }),
    });
    text = await res.text();
  } catch {
    return undefined;
  }
  const data = text.startsWith('{')
    ? text
    : (text.split('\n').find((l) => l.startsWith('data: ')) ?? '').slice(6);
  if (data === '') return undefined;
  const message = JSON.parse(data) as RpcResult;
  if (message.result?.isError)
    throw new Error(`${name}: ${message.result.content?.[0]?.text ?? 'tool error'}`);
  return JSON.parse(message.result?.content?.[0]?.text ?? 'null') as Record<string, unknown>;
}

/** Files drawers until the hub stops answering; records each acknowledged one (id -> content). */
async function filer(hub: ChildHub, agent: string, round: number, acked: Map<string, string>): Promise<void> {
  for (let i = 0; ; i++) {
    const topic = TOPICS[(i + round) % TOPICS.length] ?? 'misc';
    const content = `Round ${round}: ${agent} learned something about ${topic} (note ${i}, ${agent}-${round}-${i}).`;
    const added = await callTool(hub.url, 'palace_add_drawer', {
      wing: WING,
      room: agent,
      content,
      added_by: agent,
      force: true,
    });
    if (!added) return;
    acked.set(String(added.drawer_id), content);
  }
}

function hasReplay(dirs: HubDirs): boolean {
  const out = spawnSync(process.execPath, [PALACE_BIN, 'replay', '--help'], {
    env: childEnv(dirs),
    encoding: 'utf8',
  });
  return out.status === 0 && /Usage: palace replay/.test(out.stdout);
}

async function missingDrawers(hub: ChildHub, acked: Map<string, string>): Promise<string[]> {
  const missing: string[] = [];
  for (const [id, content] of acked) {
    try {
      const drawer = await callTool(hub.url, 'palace_get_drawer', { drawer_id: id });
      if (drawer?.content !== content) missing.push(id);
    } catch {
      missing.push(id);
    }
  }
  return missing;
}

describe('memory crash consistency under SIGKILL', () => {
  let dirs: HubDirs | undefined;
  afterEach(async () => {
    await killChildren();
    dirs?.cleanup();
  });

  it(`keeps every acknowledged drawer across ${ROUNDS} kill -9 rounds`, async () => {
    dirs = makeHubDirs('palace-crash-memory-');
    const acked = new Map<string, string>();
    let replays = 0;
    for (let round = 0; round < ROUNDS; round++) {
      let hub = await startChildHub(dirs);
      // Everything acknowledged before this round's kills must be here after the restart.
      let missing = await missingDrawers(hub, acked);
      if (missing.length > 0 && hasReplay(dirs)) {
        await hub.stop();
        const replay = spawnSync(process.execPath, [PALACE_BIN, '--palace', dirs.palace, 'replay'], {
          env: childEnv(dirs),
          encoding: 'utf8',
        });
        expect(replay.status, replay.stderr).toBe(0);
        replays++;
        hub = await startChildHub(dirs);
        missing = await missingDrawers(hub, acked);
      }
      expect(missing, `round ${round}: acknowledged drawers missing after restart`).toEqual([]);

      const writers = Array.from({ length: WRITERS }, (_, i) => filer(hub, `agent-${i}`, round, acked));
      const target = acked.size + 5 + Math.floor(Math.random() * 15);
      while (acked.size < target && hub.isRunning()) await new Promise((r) => setTimeout(r, 5));
      await new Promise((r) => setTimeout(r, Math.random() * 40));
      hub.child.kill('SIGKILL');
      await hub.exited;
      await Promise.all(writers);
    }
    expect(acked.size).toBeGreaterThanOrEqual(ROUNDS * 5);

    const hub = await startChildHub(dirs);
    expect(await missingDrawers(hub, acked)).toEqual([]);
    // Searchable too: each topic's drawers are found by a query on it.
    const listed = await callTool(hub.url, 'palace_list_drawers', { wing: WING, limit: 1000 });
    expect(listed?.total, `drawers in the wing (replays: ${replays})`).toBeGreaterThanOrEqual(acked.size);
    const [someId, someContent] = [...acked][Math.floor(Math.random() * acked.size)] ?? [];
    const found = await callTool(hub.url, 'palace_search', {
      query: someContent ?? '',
      wing: WING,
      limit: 10,
    });
    const ids = (
      (found?.results as Array<{ drawer_id: string; parent_id: string | null }> | undefined) ?? []
    ).flatMap((r) => [r.drawer_id, r.parent_id]);
    expect(ids).toContain(someId);
  }, Math.max(240_000, ROUNDS * 20_000));
});
