// The coordination CLI as separate processes on a temp palace, and the git pre-commit guard in real
// git repositories: refusing a commit that touches another agent's exclusive reservation (naming
// holder and task), the PALACE_GUARD=off override, and never blocking when no palace log exists.

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { makeTempPalace, parseJson, type TempPalace } from '../helpers/cli.js';

const palaces: TempPalace[] = [];
const roots: string[] = [];

afterEach(async () => {
  for (const p of palaces.splice(0)) await p.cleanup();
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

function palace(): TempPalace {
  const p = makeTempPalace('palace-coord-cli-');
  palaces.push(p);
  return p;
}

function gitEnv(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('PALACE_') && !k.startsWith('GIT_')) env[k] = v;
  return { ...env, HOME: home, GIT_CONFIG_NOSYSTEM: '1', ...extra };
}

/** A fresh git repository with one commit. */
function repo(home: string): string {
  const root = mkdtempSync(join(tmpdir(), 'palace-guard-repo-'));
  roots.push(root);
  const git = (...args: string[]) => {
    const r = spawnSync('git', args, { cwd: root, env: gitEnv(home), encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  };
  git('init', '-q', '-b', 'main');
  git('config', 'user.name', 'Test');
  git('config', 'user.email', 'test@example.invalid');
  writeFileSync(join(root, 'README.md'), 'hello\n');
  git('add', '.');
  git('commit', '-q', '-m', 'initial');
  return root;
}

function commit(root: string, home: string, file: string, env: Record<string, string> = {}): { status: number | null; stderr: string } {
  mkdirSync(join(root, file, '..'), { recursive: true });
  writeFileSync(join(root, file), `${file} ${Math.random()}\n`);
  spawnSync('git', ['add', file], { cwd: root, env: gitEnv(home) });
  const r = spawnSync('git', ['commit', '-q', '-m', `change ${file}`], { cwd: root, env: gitEnv(home, env), encoding: 'utf8' });
  return { status: r.status, stderr: r.stderr };
}

describe('palace guard (git pre-commit hook)', () => {
  it('refuses a commit touching another agent\'s exclusive reservation, names holder and task, and honours the override', async () => {
    const p = palace();
    const append = await p.run([
      'logstream', 'append', '--type', 'task.request', '--stream', 'project/g', '--room', 'delegation',
      '--from-agent', 'laptop-claude', '--to-agent', 'desk-codex', '--correlation-id', 'task_guard', '--json',
    ]);
    expect(append.code, append.stderr).toBe(0);
    const reserved = await p.run(['reserve', 'src/auth/**', '--stream', 'project/g', '--from-agent', 'desk-codex', '--exclusive', '--task', 'task_guard', '--ttl', '1h', '--json']);
    expect(reserved.code, reserved.stderr).toBe(0);
    const conflict = await p.run(['reserve', 'src/auth/login.ts', '--stream', 'project/g', '--from-agent', 'pi-gemini']);
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toContain('desk-codex holds exclusive src/auth/**');

    const root = repo(p.home);
    // A foreign pre-commit hook is not replaced without --force.
    writeFileSync(join(root, '.git', 'hooks', 'pre-commit'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    const refusedInstall = await p.run(['guard', 'install', '--repo', root]);
    expect(refusedInstall.code).toBe(2);
    expect(refusedInstall.stderr).toContain('--force');
    const installed = await p.run(['guard', 'install', '--repo', root, '--force', '--json']);
    expect(installed.code, installed.stderr).toBe(0);
    expect(parseJson<{ hook: string }>(installed).hook).toBe(join(root, '.git', 'hooks', 'pre-commit'));
    expect(readFileSync(join(root, '.git', 'hooks', 'pre-commit.before-palace'), 'utf8')).toContain('exit 0');

    const refused = commit(root, p.home, 'src/auth/login.ts', { PALACE_AGENT_NAME: 'pi-gemini' });
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toContain('commit refused');
    expect(refused.stderr).toContain('src/auth/login.ts: desk-codex holds exclusive src/auth/**');
    expect(refused.stderr).toContain('task task_guard');
    expect(refused.stderr).toContain('PALACE_GUARD=off');

    expect(commit(root, p.home, 'src/auth/login.ts', { PALACE_AGENT_NAME: 'pi-gemini', PALACE_GUARD: 'off' }).status).toBe(0);
    expect(commit(root, p.home, 'docs/notes.md', { PALACE_AGENT_NAME: 'pi-gemini' }).status).toBe(0);
    expect(commit(root, p.home, 'src/auth/session.ts', { PALACE_AGENT_NAME: 'desk-codex' }).status).toBe(0); // its own

    // Released: nobody is blocked any more.
    const id = parseJson<{ reservation: { reservation_id: string } }>(reserved).reservation.reservation_id;
    expect((await p.run(['release', id, '--from-agent', 'desk-codex'])).code).toBe(0);
    expect(commit(root, p.home, 'src/auth/token.ts', { PALACE_AGENT_NAME: 'pi-gemini' }).status).toBe(0);
  });

  it('never blocks a commit when the palace has no log (it warns)', async () => {
    const p = palace();
    const root = repo(p.home);
    const installed = await p.run(['--palace', join(p.root, 'no-such-palace'), 'guard', 'install', '--repo', root], { noPalaceFlag: true });
    expect(installed.code, installed.stderr).toBe(0);
    const result = commit(root, p.home, 'src/a.ts', { PALACE_AGENT_NAME: 'pi-gemini' });
    expect(result.status).toBe(0);
    expect(result.stderr).toContain('commit not checked');
  });
});

describe('coordination commands', () => {
  it('depends_on, ready, task text with blocked-by and lease, renew and release from the shell', async () => {
    const p = palace();
    const req = (corr: string, ...extra: string[]) =>
      p.run(['logstream', 'append', '--type', 'task.request', '--stream', 'project/c', '--room', 'delegation', '--from-agent', 'laptop-claude', '--to-agent', 'desk-codex', '--correlation-id', corr, '--json', ...extra]);
    const a = parseJson<{ id: string }>(await req('task_one'));
    expect((await req('task_two', '--depends-on', 'task_one')).code).toBe(0);
    const cycle = await req('task_one_again', '--depends-on', 'task_one_again');
    expect(cycle.code).toBe(2);
    expect(cycle.stdout).toContain('task.dependency_cycle');
    expect(cycle.stdout).toContain('cannot depend on itself');

    const ready = parseJson<{ tasks: Array<{ correlation_id: string }> }>(await p.run(['logstream', 'ready', '--agent', 'desk-codex', '--json']));
    expect(ready.tasks.map((t) => t.correlation_id)).toEqual(['task_one']);
    const blocked = await p.run(['logstream', 'task', 'task_two']);
    expect(blocked.stdout).toContain('blocked by: task_one');

    const claim = await p.run(['logstream', 'ack', a.id, '--from-agent', 'desk-codex', '--status', 'claimed', '--lease', '20m']);
    expect(claim.code, claim.stderr).toBe(0);
    const lost = await p.run(['logstream', 'ack', a.id, '--from-agent', 'pi-gemini', '--status', 'claimed']);
    expect(lost.code).toBe(1);
    expect(lost.stdout).toContain('not claimed: task_one is claimed by desk-codex');
    const shown = await p.run(['logstream', 'task', 'task_one']);
    expect(shown.stdout).toMatch(/lease: +until \S+ \((19m5\d|20m00)s left\)/);
    expect((await p.run(['logstream', 'tasks'])).stdout).toMatch(/task_one +claimed .*lease=(19m5\d|20m00)s left/);

    const renewed = await p.run(['logstream', 'renew', 'task_one', '--from-agent', 'desk-codex', '--lease', '2h', '--json']);
    expect(renewed.code, renewed.stderr).toBe(0);
    expect(parseJson<{ type: string }>(renewed).type).toBe('claim.renewed');
    const released = await p.run(['logstream', 'release', 'task_one', '--from-agent', 'laptop-claude', '--reason', 'stale', '--json']);
    expect(released.code, released.stderr).toBe(0);
    expect(JSON.parse(parseJson<{ body: string }>(released).body)).toMatchObject({ reason: 'stale', worker: 'desk-codex' });
    const task = parseJson<{ status: string; lease_expired: boolean }>(await p.run(['logstream', 'task', 'task_one', '--json']));
    expect(task).toMatchObject({ status: 'open', lease_expired: true });
  });
});

describe('the work order where the worker looks (issue 31)', () => {
  it('ready and task show goal, branch and base commit; the claim hint runs as printed; append and ack honour PALACE_AGENT_NAME', async () => {
    const p = palace();
    const asRequester = { env: { PALACE_AGENT_NAME: 'laptop-claude' } };
    const body = 'Goal: fix the login redirect.\nDefinition of done: test/login.test.ts passes.\n\u001b[31mred\u001b[0m and \u001b]0;title\u0007 stripped';
    const filed = await p.run(
      ['logstream', 'append', '--type', 'task.request', '--stream', 'project/w', '--room', 'delegation', '--to-agent', 'desk-codex',
        '--correlation-id', 'task_login', '--status', 'open', '--branch', 'fix/login', '--base-commit', 'abc1234', '--body', body, '--json'],
      asRequester,
    );
    expect(filed.code, filed.stderr).toBe(0);
    const request = parseJson<{ id: string; from_agent: string }>(filed);
    expect(request.from_agent).toBe('laptop-claude');

    const asWorker = { env: { PALACE_AGENT_NAME: 'desk-codex' } };
    const ready = await p.run(['logstream', 'ready'], asWorker);
    expect(ready.code, ready.stderr).toBe(0);
    expect(ready.stdout).toContain('branch:      fix/login   base commit: abc1234   stream: project/w/delegation');
    expect(ready.stdout).toContain('> Goal: fix the login redirect.');
    expect(ready.stdout).toContain('> Definition of done: test/login.test.ts passes.');
    expect(ready.stdout).toContain('> red and  stripped');
    expect(ready.stdout).not.toContain('\u001b');
    const hint = /claim it: +(palace logstream ack .*)$/m.exec(ready.stdout)?.[1];
    expect(hint).toBe(`palace logstream ack ${request.id} --status claimed --from-agent desk-codex`);

    const json = parseJson<{ tasks: Array<{ request: { body: string; branch: string; base_commit: string } }> }>(await p.run(['logstream', 'ready', '--json'], asWorker));
    expect(json.tasks[0]?.request).toMatchObject({ body, branch: 'fix/login', base_commit: 'abc1234' });

    // The hint, word for word, with no PALACE_AGENT_NAME set.
    const claimed = await p.run(hint!.split(' ').slice(1));
    expect(claimed.code, claimed.stderr).toBe(0);
    expect(claimed.stdout).toContain('desk-codex');

    // ack without --from-agent writes as PALACE_AGENT_NAME; with neither it names both ways.
    const note = await p.run(['logstream', 'ack', request.id, '--body', 'on it', '--json'], asWorker);
    expect(note.code, note.stderr).toBe(0);
    expect(parseJson<{ from_agent: string }>(note).from_agent).toBe('desk-codex');
    const nobody = await p.run(['logstream', 'ack', request.id, '--json']);
    expect(nobody.code).toBe(2);
    expect(nobody.stdout).toContain('PALACE_AGENT_NAME');

    const task = await p.run(['logstream', 'task', 'task_login']);
    expect(task.stdout).toContain('branch:      fix/login   base commit: abc1234');
    expect(task.stdout).toContain('> Goal: fix the login redirect.');
  });
});
