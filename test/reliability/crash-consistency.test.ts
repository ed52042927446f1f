// Crash consistency: a hub under concurrent appends from several MCP clients is killed with SIGKILL
// at a random moment, many times; after each restart every acknowledged event is present exactly
// once, artifacts still match their sha256, and SQLite's integrity check passes.

import { createHash } from 'node:crypto';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';

import { killChildren, makeHubDirs, startChildHub, type ChildHub, type HubDirs } from '../helpers/hub.js';

const ROUNDS = Number(process.env.PALACE_CRASH_ROUNDS ?? 4);
const APPENDERS = 6;

interface RpcResult {
  result?: { content?: Array<{ text?: string }>; isError?: boolean };
}

/** One tools/call over plain HTTP; resolves with the parsed tool result, or undefined if the hub died. */
async function callTool(url: string, name: string, args: Record<string, unknown>): Promise<Record<string, unknown> | undefined> {
  let text: string;
  try {
    const res = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
    });
    text = await res.text();
  } catch {
    return undefined; // refused or reset: the hub is gone and the call was not acknowledged
  }
  const data = text.startsWith('{') ? text : (text.split('\n').find((l) => l.startsWith('data: ')) ?? '').slice(6);
  if (data === '') return undefined; // the response was cut off by the kill: not acknowledged
  const message = JSON.parse(data) as RpcResult;
  if (message.result?.isError) throw new Error(message.result.content?.[0]?.text ?? 'tool error');
  return JSON.parse(message.result?.content?.[0]?.text ?? 'null') as Record<string, unknown>;
}

interface Acked {
  events: Map<string, string>;
  artifacts: Map<string, string>;
}

/** Appends (and now and then stores an artifact) until the hub stops answering. */
async function appender(hub: ChildHub, agent: string, acked: Acked): Promise<void> {
  for (let i = 0; ; i++) {
    if (i % 10 === 0) {
      const content = `diff --git a/f b/f\n+${agent} ${i} ${'x'.repeat(200)}\n`;
      const art = await callTool(hub.url, 'palace_artifact_put', { kind: 'patch', created_by: agent, content });
      if (!art) return;
      acked.artifacts.set(String(art.id), createHash('sha256').update(content).digest('hex'));
    }
    const body = `${agent} event ${i}`;
    const event = await callTool(hub.url, 'palace_event_append', { type: 'status', stream: 'project/crash', room: 'load', from_agent: agent, to_agent: '*', body });
    if (!event) return;
    acked.events.set(String(event.id), body);
  }
}

describe('crash consistency under SIGKILL', () => {
  let dirs: HubDirs | undefined;
  afterEach(async () => {
    await killChildren();
    dirs?.cleanup();
  });

  it(`loses no acknowledged event or artifact across ${ROUNDS} kill -9 rounds`, async () => {
    dirs = makeHubDirs('palace-crash-');
    const acked: Acked = { events: new Map(), artifacts: new Map() };
    for (let round = 0; round < ROUNDS; round++) {
      const hub = await startChildHub(dirs);
      const writers = Array.from({ length: APPENDERS }, (_, i) => appender(hub, `host${i}-agent`, acked));
      // Let the load build up, then kill at a random moment.
      const target = acked.events.size + 50 + Math.floor(Math.random() * 150);
      while (acked.events.size < target) await new Promise((r) => setTimeout(r, 5));
      await new Promise((r) => setTimeout(r, Math.random() * 30));
      hub.child.kill('SIGKILL');
      await hub.exited;
      await Promise.all(writers);
    }
    expect(acked.events.size).toBeGreaterThan(ROUNDS * 50);

    const db = new Database(join(dirs.palace, 'logstream.sqlite3'), { readonly: true });
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      const rows = db.prepare('SELECT id, body FROM events').all() as Array<{ id: string; body: string }>;
      const counts = new Map<string, number>();
      for (const r of rows) counts.set(r.id, (counts.get(r.id) ?? 0) + 1);
      for (const [id, body] of acked.events) {
        expect(counts.get(id), `acknowledged ${id} present once`).toBe(1);
        expect(rows.find((r) => r.id === id)?.body).toBe(body);
      }
      const seqs = db.prepare('SELECT seq FROM events ORDER BY seq').all() as Array<{ seq: number }>;
      expect(new Set(seqs.map((s) => s.seq)).size).toBe(seqs.length);
      for (const [id, sha] of acked.artifacts) {
        const a = db.prepare('SELECT content, sha256 FROM artifacts WHERE id = ?').get(id) as { content: string; sha256: string } | undefined;
        expect(a?.sha256).toBe(sha);
        expect(createHash('sha256').update(a?.content ?? '').digest('hex')).toBe(sha);
      }
    } finally {
      db.close();
    }
    // And a hub starts on the crashed palace (stale lease and registration are taken over).
    const hub = await startChildHub(dirs);
    const list = await callTool(hub.url, 'palace_event_list', { stream: 'project/crash', limit: 1, order: 'desc' });
    expect((list?.events as unknown[]).length).toBe(1);
  }, 180_000);
});
