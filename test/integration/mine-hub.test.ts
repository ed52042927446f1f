// Mining with a live hub: the CLI hands the mine to the hub over HTTP while a long palace_event_wait
// is pending (coordination is not blocked); with PALACE_HUB_FORWARD=0 direct mining is refused; the
// save hook hands a transcript to the hub and returns at once, or logs and exits 0 with no hub.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { MineReport } from '../../hub/src/mine/miner.js';
import { manifestPath } from '../../hub/src/mine/manifest.js';
import { isPidAlive } from '../../hub/src/registration.js';
import { makeTempPalace, parseJson, type CliResult, type ErrorJson, type TempPalace } from '../helpers/cli.js';
import { callJson, connectHttpClient, waitUntil } from '../helpers/hub.js';
import { TRANSCRIPTS, writeTree } from '../helpers/transcripts.js';

const SLOW = { timeout: 180_000 };

function ok(result: CliResult): CliResult {
  if (result.code !== 0) throw new Error(`exit ${String(result.code)}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
  return result;
}

function corpus(files: number): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < files; i++)
    out[`pkg${i % 20}/file${i}.md`] = `# Note ${i}\n\nModule ${i} handles request ${i * 7} for tenant ${i % 13}; it retries ${i % 5} times.\n`;
  return out;
}

describe('mining with a live hub', SLOW, () => {
  let palace: TempPalace;
  let hub: { url: string; pid: number };
  let client: Client;

  beforeAll(async () => {
    palace = makeTempPalace('palace-mine-hub-');
    hub = parseJson<{ url: string; pid: number }>(ok(await palace.run(['daemon', 'start', '--port', '0', '--json'])));
    client = await connectHttpClient(hub.url);
  }, SLOW.timeout);

  afterAll(async () => {
    await client.close().catch(() => undefined);
    await palace.run(['daemon', 'stop']);
    if (isPidAlive(hub.pid)) process.kill(hub.pid, 'SIGKILL');
    await palace.cleanup();
  });

  it('hands the mine to the hub while a long event wait is pending; coordination keeps answering', async () => {
    const dir = join(palace.root, 'big');
    writeTree(dir, corpus(600));
    const waiter = await connectHttpClient(hub.url, { name: 'waiter' });
    const wait = callJson<{ timed_out: boolean; events: Array<{ body: string }> }>(
      waiter,
      'palace_event_wait',
      { to_agent: 'worker-b', timeout_ms: 120_000 },
      150_000,
    );
    const mining = palace.start(['mine', dir, '--wing', 'big', '--json'], { killAfterMs: 170_000 });
    let mineDone = false;
    void mining.done.then(() => (mineDone = true));
    // The first batch is committed: the hub is mid-mine.
    await waitUntil(() => existsSync(manifestPath(palace.dir)), 'the hub to commit its first batch', 120_000);
    const listed = await callJson<{ count: number }>(client, 'palace_event_list', { limit: 5 });
    const appended = await callJson<{ id: string }>(client, 'palace_event_append', {
      type: 'task.request',
      stream: 's',
      room: 'r',
      from_agent: 'worker-a',
      to_agent: 'worker-b',
      body: 'go',
    });
    const woke = await wait;
    const stillMining = !mineDone;
    expect(listed.count).toBeGreaterThanOrEqual(0);
    expect(woke.timed_out).toBe(false);
    expect(woke.events.map((e) => e.body)).toEqual(['go']);
    expect(appended.id).toMatch(/^evt_/);
    expect(stillMining).toBe(true);

    const report = parseJson<MineReport>(ok(await mining.done));
    expect(report).toMatchObject({ files_mined: 600, drawers_filed: 600 });
    const status = (await (await fetch(`${hub.url}/statusz`)).json()) as { requests: { mcp: number } };
    expect(status.requests.mcp).toBeGreaterThan(0);
    const mined = await callJson<{ total_files: number }>(client, 'palace_mined', { wing: 'big', limit: 0 });
    expect(mined.total_files).toBe(600);
    await waiter.close();
  });

  it('refuses direct mining with PALACE_HUB_FORWARD=0 while the hub holds the lease', async () => {
    const dir = join(palace.root, 'small');
    writeTree(dir, { 'a.md': '# A\n\nSomething worth keeping about the deploy.\n' });
    const refused = await palace.run(['mine', dir, '--json'], { env: { PALACE_HUB_FORWARD: '0' } });
    expect(refused.code).toBe(1);
    expect(parseJson<ErrorJson>(refused).error.code).toBe('lease.held');
    const mined = await callJson<{ total_files: number }>(client, 'palace_mined', { source: dir, limit: 0 });
    expect(mined.total_files).toBe(0);
  });

  it('the stop hook hands the transcript to the hub, returns, and the hub files it', async () => {
    const dir = join(palace.root, 'sessions');
    writeTree(dir, { 'abc.jsonl': TRANSCRIPTS['claude-code/session.jsonl'] ?? '' });
    const transcript = join(dir, 'abc.jsonl');
    const res = ok(
      await palace.run(['hook', 'run', '--hook', 'stop', '--harness', 'claude-code'], {
        stdin: JSON.stringify({ session_id: 'abc', transcript_path: transcript, cwd: '/work/acme-app', hook_event_name: 'Stop' }),
      }),
    );
    expect(res.stdout).toBe('');
    expect(readFileSync(join(palace.stateDir, 'logs', 'hooks.log'), 'utf8')).toContain(`stop: handed ${transcript} to the hub`);
    const filed = await waitUntil(async () => {
      const m = await callJson<{ files: Array<{ source_file: string; wing: string; room: string; drawers: number }> }>(client, 'palace_mined', { source: dir });
      return m.files[0];
    }, 'the hub to file the transcript');
    expect(filed).toMatchObject({ source_file: transcript, wing: 'acme-app', room: 'claude-code', drawers: 2 });
  });
});

describe('the save hook without a hub', SLOW, () => {
  it('exits 0 at once and logs that nothing was filed', async () => {
    const palace = makeTempPalace('palace-hook-nohub-');
    try {
      writeTree(palace.root, { 't.jsonl': TRANSCRIPTS['claude-code/session.jsonl'] ?? '' });
      const res = await palace.run(['hook', 'run', '--hook', 'precompact', '--transcript', join(palace.root, 't.jsonl')]);
      expect(res.code).toBe(0);
      expect(res.stdout).toBe('');
      expect(readFileSync(join(palace.stateDir, 'logs', 'hooks.log'), 'utf8')).toContain('precompact: no live hub');
      expect(existsSync(join(palace.dir, 'vectors'))).toBe(false);
    } finally {
      await palace.cleanup();
    }
  });

  it('exits 0 silently on a payload that is not JSON, on a missing transcript and on a non-filing hook', async () => {
    const palace = makeTempPalace('palace-hook-bad-');
    try {
      const garbage = await palace.run(['hook', 'run', '--hook', 'stop', '--harness', 'claude-code'], { stdin: 'not json {' });
      expect(garbage).toMatchObject({ code: 0, stdout: '', stderr: '' });
      const missing = await palace.run(['hook', 'run', '--hook', 'stop'], { stdin: JSON.stringify({ transcript_path: join(palace.root, 'gone.jsonl') }) });
      expect(missing).toMatchObject({ code: 0, stdout: '', stderr: '' });
      const start = await palace.run(['hook', 'run', '--hook', 'session-start'], { stdin: '{}' });
      expect(start).toMatchObject({ code: 0, stdout: '', stderr: '' });
      const log = readFileSync(join(palace.stateDir, 'logs', 'hooks.log'), 'utf8').trim().split('\n');
      expect(log).toHaveLength(2);
      expect(log[0]).toContain('stop: no transcript to file (none given)');
      expect(log[1]).toContain(`stop: no transcript to file (${join(palace.root, 'gone.jsonl')})`);
      expect(existsSync(join(palace.dir, 'vectors'))).toBe(false);
    } finally {
      await palace.cleanup();
    }
  });
});
