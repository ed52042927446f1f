// `palace patch submit|apply` as real child processes against real git repositories in temp dirs:
// a diff that applies is filed (artifact + patch.ready) and applied on the requester's side (acked
// applied); a diff that does not apply to the base commit is refused with git's words and files
// nothing; a requester tree that moved on acks failed with git's error as the body.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import {
  appendEvent,
  makeTempPalace,
  parseJson,
  type ErrorJson,
  type EventJson,
  type TempPalace,
} from '../helpers/cli.js';

let palace: TempPalace;
let requesterRepo: string;
let workerRepo: string;
let base: string;

const REQUESTER = 'laptop-claude';
const WORKER = 'laptop-codex';
const TASK = 'task_fix_greeting';
const ORIGINAL = ['export function greet(name: string): string {', '  return "hello " + name;', '}', ''].join(
  '\n',
);

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

beforeEach(async () => {
  palace = makeTempPalace('palace-patch-');
  requesterRepo = join(palace.root, 'requester');
  workerRepo = join(palace.root, 'worker');
  mkdirSync(requesterRepo);
  git(requesterRepo, 'init', '--quiet', '--initial-branch=main');
  writeFileSync(join(requesterRepo, 'greet.ts'), ORIGINAL);
  git(requesterRepo, 'add', '.');
  git(requesterRepo, 'commit', '--quiet', '-m', 'base');
  base = git(requesterRepo, 'rev-parse', 'HEAD').trim();
  git(palace.root, 'clone', '--quiet', requesterRepo, workerRepo);
  await appendEvent(palace, {
    type: 'task.request',
    from: REQUESTER,
    to: WORKER,
    correlationId: TASK,
    status: 'open',
    body: 'Goal: greet with a capital H.',
    extra: ['--branch', 'main', '--base-commit', base],
  });
});

afterEach(async () => {
  await palace.cleanup();
});

const submit = (...extra: string[]) =>
  palace.run([
    'patch',
    'submit',
    '--task',
    TASK,
    '--agent',
    WORKER,
    '--repo',
    workerRepo,
    '--json',
    ...extra,
  ]);
const apply = (ref: string, ...extra: string[]) =>
  palace.run(['patch', 'apply', ref, '--repo', requesterRepo, '--agent', REQUESTER, '--json', ...extra]);

async function events(type: string): Promise<EventJson[]> {
  const r = await palace.run(['logstream', 'list', '--correlation-id', TASK, '--type', type, '--json']);
  return parseJson<{ events: EventJson[] }>(r).events;
}

async function taskStatus(): Promise<string> {
  return parseJson<{ status: string }>(await palace.run(['logstream', 'task', TASK, '--json'])).status;
}

function worktrees(repo: string): number {
  return git(repo, 'worktree', 'list', '--porcelain')
    .split('\n')
    .filter((l) => l.startsWith('worktree ')).length;
}

describe('palace patch submit', () => {
  it('files the working-tree diff after checking it applies to the base commit; apply acks applied', async () => {
    writeFileSync(join(workerRepo, 'greet.ts'), ORIGINAL.replace('"hello "', '"Hello "'));
    const r = await submit('--body', 'capitalised');
    expect(r.code, r.stderr).toBe(0);
    const filed = parseJson<{ artifact: { id: string; sha256: string }; event: EventJson }>(r);
    expect(filed.event.type).toBe('patch.ready');
    expect(filed.event.to_agent).toBe(REQUESTER);
    expect(filed.event.artifact_ids).toEqual([filed.artifact.id]);
    expect(worktrees(workerRepo)).toBe(1); // the temporary check worktree is gone

    const a = await apply(TASK, '--note', 'tests pass');
    expect(a.code, a.stderr).toBe(0);
    const applied = parseJson<{ status: string; ack: EventJson }>(a);
    expect(applied.status).toBe('applied');
    expect(applied.ack.status).toBe('applied');
    expect(applied.ack.body).toBe('tests pass');
    expect(readFileSync(join(requesterRepo, 'greet.ts'), 'utf8')).toContain('"Hello "');
    expect(await taskStatus()).toBe('applied');
  });

  it('includes new untracked files (not ignored ones) without touching the repository index', async () => {
    writeFileSync(join(workerRepo, '.gitignore'), 'build/\n');
    mkdirSync(join(workerRepo, 'build'));
    writeFileSync(join(workerRepo, 'build', 'out.js'), 'generated\n');
    writeFileSync(join(workerRepo, 'farewell.ts'), 'export const bye = "bye";\n');
    writeFileSync(join(workerRepo, 'greet.ts'), ORIGINAL.replace('"hello "', '"Hello "'));
    const before = git(workerRepo, 'status', '--porcelain');
    const r = await submit();
    expect(r.code, r.stderr).toBe(0);
    expect(git(workerRepo, 'status', '--porcelain')).toBe(before); // untracked stays untracked
    const a = await apply(TASK);
    expect(a.code, a.stderr).toBe(0);
    expect(readFileSync(join(requesterRepo, 'farewell.ts'), 'utf8')).toBe('export const bye = "bye";\n');
    expect(readFileSync(join(requesterRepo, '.gitignore'), 'utf8')).toBe('build/\n');
    expect(existsSync(join(requesterRepo, 'build'))).toBe(false);
  });

  it("refuses a diff that does not apply to the base commit, with git's message, and files nothing", async () => {
    // The worker built on a commit the requester never had: the line the diff touches differs at base.
    writeFileSync(join(workerRepo, 'greet.ts'), ORIGINAL.replace('"hello "', '"hi "'));
    git(workerRepo, 'commit', '--quiet', '-am', 'local change');
    writeFileSync(join(workerRepo, 'greet.ts'), ORIGINAL.replace('"hello "', '"Hi "'));
    const r = await submit();
    expect(r.code).toBe(1);
    const err = parseJson<ErrorJson>(r).error;
    expect(err.code).toBe('patch.does_not_apply');
    expect(err.message).toMatch(/patch does not apply|patch failed/);
    expect(await events('patch.ready')).toEqual([]);
    expect(worktrees(workerRepo)).toBe(1);
    const arts = new Database(join(palace.dir, 'logstream.sqlite3'), { readonly: true });
    try {
      expect(arts.prepare('SELECT count(*) FROM artifacts').pluck().get()).toBe(0);
    } finally {
      arts.close();
    }
  });

  it('refuses an empty working tree and an unknown base commit, filing nothing', async () => {
    const empty = await submit();
    expect(empty.code).toBe(2);
    expect(parseJson<ErrorJson>(empty).error.message).toContain('no changes');
    const other = join(palace.root, 'other');
    mkdirSync(other);
    git(other, 'init', '--quiet');
    writeFileSync(join(other, 'greet.ts'), 'x\n');
    git(other, 'add', '.');
    git(other, 'commit', '--quiet', '-m', 'unrelated');
    writeFileSync(join(other, 'greet.ts'), 'y\n');
    const unknown = await palace.run([
      'patch',
      'submit',
      '--task',
      TASK,
      '--agent',
      WORKER,
      '--repo',
      other,
      '--json',
    ]);
    expect(unknown.code).toBe(2);
    expect(parseJson<ErrorJson>(unknown).error.message).toContain(base);
    expect(await events('patch.ready')).toEqual([]);
  });
});

describe('palace patch apply', () => {
  it("acks failed with git's error as the body when the requester's tree moved on", async () => {
    writeFileSync(join(workerRepo, 'greet.ts'), ORIGINAL.replace('"hello "', '"Hello "'));
    const filed = parseJson<{ event: EventJson }>(await submit());
    writeFileSync(join(requesterRepo, 'greet.ts'), ORIGINAL.replace('"hello "', '"howdy "'));
    const a = await apply(filed.event.id);
    expect(a.code).toBe(1);
    const out = parseJson<{ status: string; ack: EventJson; git_error: string }>(a);
    expect(out.status).toBe('failed');
    expect(out.ack.status).toBe('failed');
    expect(out.ack.body).toMatch(/patch does not apply|patch failed/);
    expect(out.ack.body).toBe(out.git_error);
    expect(readFileSync(join(requesterRepo, 'greet.ts'), 'utf8')).toContain('"howdy "');
    expect(await taskStatus()).toBe('failed');
  });

  it('acks failed without applying when the stored sha256 does not match the content', async () => {
    writeFileSync(join(workerRepo, 'greet.ts'), ORIGINAL.replace('"hello "', '"Hello "'));
    const filed = parseJson<{ artifact: { id: string } }>(await submit());
    const db = new Database(join(palace.dir, 'logstream.sqlite3'));
    try {
      db.prepare('UPDATE artifacts SET sha256 = ? WHERE id = ?').run('0'.repeat(64), filed.artifact.id);
    } finally {
      db.close();
    }
    const a = await apply(TASK);
    expect(a.code).toBe(1);
    const out = parseJson<{ ack: EventJson }>(a);
    expect(out.ack.status).toBe('failed');
    expect(out.ack.body).toContain('sha256 mismatch');
    expect(readFileSync(join(requesterRepo, 'greet.ts'), 'utf8')).toBe(ORIGINAL);
  });

  it('names what is wrong with a reference that is not a patch', async () => {
    const request = (await events('task.request'))[0];
    const r = await apply(request?.id ?? '');
    expect(r.code).toBe(2);
    expect(parseJson<ErrorJson>(r).error.message).toContain('not a patch.ready');
    const none = await apply('task_nothing_here');
    expect(none.code).toBe(1);
    expect(parseJson<ErrorJson>(none).error.code).toBe('log.event_not_found');
    const missing = await apply('evt_20260101T000000_0123456789ab');
    expect(missing.code).toBe(1);
    expect(parseJson<ErrorJson>(missing).error).toMatchObject({ code: 'log.event_not_found', field: 'event' });
    expect(parseJson<ErrorJson>(missing).error.message).toContain('evt_20260101T000000_0123456789ab');
  });
});
