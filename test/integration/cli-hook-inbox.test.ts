// `palace hook inbox` as real child processes on a temp palace: it prints each new item for the
// agent once (tasks addressed to it, acks and patches on its tasks, expired claims), nothing when
// nothing is new, the Claude Code / Codex hook JSON by default, never creates a palace, and returns
// even when the harness keeps stdin open. `palace instructions hooks` prints both settings.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { Logstream } from '../../hub/src/logstream/logstream.js';
import { appendEvent, makeTempPalace, PALACE_BIN, REPO_ROOT, type TempPalace } from '../helpers/cli.js';

const REQUESTER = 'laptop-claude';
const WORKER = 'laptop-codex';
let palace: TempPalace;

beforeEach(() => {
  palace = makeTempPalace('palace-inbox-');
});
afterEach(async () => {
  await palace.cleanup();
});

const inbox = (agent: string, ...extra: string[]) =>
  palace.run(['hook', 'inbox', '--agent', agent, '--format', 'text', ...extra]);

const request = (cid: string, to: string, body = `Goal: ${cid}`) =>
  appendEvent(palace, {
    type: 'task.request',
    from: REQUESTER,
    to,
    correlationId: cid,
    status: 'open',
    body,
  });

describe('palace hook inbox', () => {
  it('prints nothing and creates no palace when there is no log', async () => {
    const r = await inbox(WORKER);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(existsSync(palace.dir)).toBe(false);
  });

  it('shows each item once: open tasks on the first look, then only what is new', async () => {
    const done = await request('task_old', WORKER);
    await palace.run(['logstream', 'ack', done.id, '--from-agent', WORKER, '--status', 'claimed']);
    await palace.run(['logstream', 'ack', done.id, '--from-agent', REQUESTER, '--status', 'failed']);
    const open = await request('task_login', WORKER, 'Fix the login bug\nDetails follow');

    const first = await inbox(WORKER);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('task_login');
    expect(first.stdout).toContain(open.id);
    expect(first.stdout).toContain('Fix the login bug');
    expect(first.stdout).not.toContain('task_old');
    expect((await inbox(WORKER)).stdout).toBe(''); // nothing new: nothing printed

    // The worker claims and delivers; the requester's inbox gets both, once.
    expect((await inbox(REQUESTER)).stdout).toBe(''); // first look: no open task is addressed to the requester
    const claim = await palace.run([
      'logstream',
      'ack',
      open.id,
      '--from-agent',
      WORKER,
      '--status',
      'claimed',
      '--json',
    ]);
    expect(claim.code).toBe(0);
    await appendEvent(palace, {
      type: 'patch.ready',
      from: WORKER,
      to: REQUESTER,
      correlationId: 'task_login',
      status: 'ready',
      room: 'patches',
    });
    const other = await request('task_more', WORKER);
    const [w1, r1] = [await inbox(WORKER), await inbox(REQUESTER)];
    expect(w1.stdout).toContain(other.id);
    expect(w1.stdout).not.toContain('task_login'); // its own claim is not news to the worker
    expect(r1.stdout).toContain('claimed on task_login by laptop-codex');
    expect(r1.stdout).toMatch(/patch ready on task_login from laptop-codex .*palace patch apply evt_/);
    expect(r1.stdout).not.toContain('task_more'); // the requester's own request is not news to it

    await palace.run(['logstream', 'ack', other.id, '--from-agent', WORKER, '--status', 'claimed']);
    // The hub's sweeper writes claim.expired (no client may append it raw: issue 28), here straight
    // into the palace's log as the hub would.
    const log = Logstream.open(palace.dir);
    try {
      log.appendNow({
        type: 'claim.expired',
        stream: other.stream,
        room: other.room,
        from_agent: 'hub',
        to_agent: WORKER,
        correlation_id: 'task_more',
        body: JSON.stringify({ reason: 'lease lapsed', claimed_event_id: other.id, worker: WORKER }),
      });
    } finally {
      log.close();
    }
    const r2 = await inbox(REQUESTER);
    expect(r2.stdout).toContain('claimed on task_more by laptop-codex');
    expect(r2.stdout).toContain('claim expired on task_more');
    const w2 = await inbox(WORKER);
    expect(w2.stdout).toContain('claim expired on task_more (worker laptop-codex)');
    expect((await inbox(REQUESTER)).stdout).toBe('');
    expect((await inbox(WORKER)).stdout).toBe('');
  });

  it('answers in the hook JSON Claude Code and Codex read, naming the event from the payload', async () => {
    await request('task_json', WORKER);
    const r = await palace.run(['hook', 'inbox', '--agent', WORKER], {
      stdin: JSON.stringify({ hook_event_name: 'SessionStart', session_id: 's1', cwd: '/tmp' }),
    });
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as {
      hookSpecificOutput: { hookEventName: string; additionalContext: string };
    };
    expect(out.hookSpecificOutput.hookEventName).toBe('SessionStart');
    expect(out.hookSpecificOutput.additionalContext).toContain('task_json');
  });

  it('returns when the harness keeps stdin open', async () => {
    await request('task_stdin', WORKER);
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('PALACE_')) env[k] = v;
    const child = spawn(
      process.execPath,
      [PALACE_BIN, '--palace', palace.dir, 'hook', 'inbox', '--agent', WORKER],
      {
        cwd: REPO_ROOT,
        env: { ...env, HOME: palace.home },
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    clearTimeout(killer);
    child.stdin.destroy();
    expect(code).toBe(0);
    expect(stdout).toContain('task_stdin');
  });
});

describe('palace instructions hooks', () => {
  it('prints the Claude Code and Codex settings with the inbox and save hooks', async () => {
    const r = await palace.run(['instructions', 'hooks', '--agent', 'box-claude']);
    expect(r.code).toBe(0);
    const blocks = r.stdout.split('\n# ').filter((b) => b.includes('{'));
    const parsed = blocks.map(
      (b) => JSON.parse(b.slice(b.indexOf('{'))) as { hooks: Record<string, unknown[]> },
    );
    expect(parsed).toHaveLength(2);
    for (const settings of parsed) {
      expect(JSON.stringify(settings.hooks.SessionStart)).toContain(
        'palace hook inbox --agent box-claude --event SessionStart',
      );
      expect(JSON.stringify(settings.hooks.UserPromptSubmit)).toContain('--event UserPromptSubmit');
    }
    expect(existsSync(join(palace.dir, 'logstream.sqlite3'))).toBe(false);
  });
});
