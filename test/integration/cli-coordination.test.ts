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
