// The CLI's one road (issue 18): with a live hub, `palace logstream append|ack`, `artifact put|get`,
// `reserve|reservations|release`, `guard check`, `patch submit|apply`, `hook inbox` and
// `logstream tasks|task|watch` go through the hub over MCP. The CLI child runs with a module hook that makes better-sqlite3
// unloadable, so it cannot touch SQLite itself; a hub palace_event_wait waiter is woken by its append.

import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { registrationPath } from '../../hub/src/registration.js';
import type { Hub } from '../../hub/src/server.js';
import { startCli } from '../helpers/cli.js';
import { callJson, childEnv, connectHttpClient, makeHubDirs, startTestHub, waitUntil, type HubDirs } from '../helpers/hub.js';

let dirs: HubDirs;
let hub: Hub | undefined;
let client: Client | undefined;
let noSqlite: string;

beforeEach(() => {
  dirs = makeHubDirs('palace-cli-road-');
  // A module hook for the CLI child: loading better-sqlite3 throws, so no direct SQLite access is possible.
  // Both roads are closed: an ESM import (resolve hook) and a CommonJS require (the CLI bundle's road).
  noSqlite = join(dirs.root, 'no-sqlite.mjs');
  const hook = "export async function resolve(s, c, next) { if (s === 'better-sqlite3') throw new Error('TEST-HOOK: better-sqlite3 refused'); return next(s, c); }";
  const refuseRequire = [
    'const load = Module._load;',
    "Module._load = function (request, ...rest) { if (request === 'better-sqlite3') throw new Error('TEST-HOOK: better-sqlite3 refused'); return load.call(this, request, ...rest); };",
  ].join('\n');
  writeFileSync(
    noSqlite,
    `import Module, { register } from 'node:module';\nregister(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)});\n${refuseRequire}\n`,
  );
});

afterEach(async () => {
  await client?.close();
  client = undefined;
  await hub?.close();
  hub = undefined;
  dirs.cleanup();
});

/** Runs the CLI with the better-sqlite3 hook against this palace. */
async function cli(args: string[], stdin?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = childEnv(dirs, { NODE_OPTIONS: `--import ${pathToFileURL(noSqlite).href}` });
  const r = await startCli(['--palace', dirs.palace, ...args], env, stdin === undefined ? {} : { stdin }).done;
  return { code: r.code, stdout: r.stdout, stderr: r.stderr };
}

const APPEND = ['logstream', 'append', '--type', 'task.request', '--stream', 'project/road', '--room', 'delegation', '--from-agent', 'road-a', '--to-agent', 'road-b', '--correlation-id', 'task_road', '--status', 'open', '--body', 'do it', '--json'];

describe('the CLI with a live hub', () => {
  it('the hook is real: with no hub the same append needs SQLite in-process and fails on the hook', async () => {
    const r = await cli(APPEND);
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toContain('TEST-HOOK');
  }, 60_000);

  it('appends, acks and stores artifacts through the hub with no SQLite of its own', async () => {
    hub = await startTestHub(dirs);
    const before = hub.services.stats.mcpRequests;
    const appended = await cli(APPEND);
    expect(appended.stderr).toBe('');
    expect(appended.code).toBe(0);
    const event = JSON.parse(appended.stdout) as { id: string; seq: number };
    expect(hub.services.logstream.list({ correlation_id: 'task_road' }).events.map((e) => e.id)).toEqual([event.id]);

    const ack = await cli(['logstream', 'ack', event.id, '--from-agent', 'road-b', '--status', 'claimed', '--json']);
    expect(ack.code).toBe(0);
    expect(JSON.parse(ack.stdout)).toMatchObject({ type: 'event.ack', to_agent: 'road-a' });

    const put = await cli(['artifact', 'put', '--kind', 'note', '--created-by', 'road-b', '--json'], 'exact bytes\n');
    expect(put.code).toBe(0);
    const { id } = JSON.parse(put.stdout) as { id: string };
    const got = await cli(['artifact', 'get', id]);
    expect(got.code).toBe(0);
    expect(got.stdout).toBe('exact bytes\n');

    const listed = await cli(['logstream', 'list', '--correlation-id', 'task_road', '--json']);
    expect((JSON.parse(listed.stdout) as { events: unknown[] }).events).toHaveLength(2);
    // Every one of those five commands was an MCP request to the hub.
    expect(hub.services.stats.mcpRequests - before).toBe(5);
    // Bad input is refused by the hub's tool schema with the same exit code and a named field.
    const bad = await cli(['logstream', 'append', '--type', 'status', '--stream', 's', '--room', 'r', '--from-agent', 'a', '--status', 'nonsense', '--json']);
    expect(bad.code).toBe(2);
    expect(JSON.parse(bad.stdout)).toMatchObject({ error: { code: 'input.invalid', field: 'status' } });
  }, 90_000);

  it('wakes a palace_event_wait waiter on the hub with a CLI append', async () => {
    hub = await startTestHub(dirs);
    client = await connectHttpClient(hub.url, { name: 'road-waiter' });
    const tip = await callJson<{ cursor: string | null }>(client, 'palace_event_list', { order: 'desc', limit: 1 });
    const waiting = callJson<{ timed_out: boolean; events: Array<{ id: string; body: string }> }>(
      client,
      'palace_event_wait',
      { to_agent: 'road-b', timeout_ms: 60_000, ...(tip.cursor ? { since_event_id: tip.cursor } : {}) },
      70_000,
    );
    const stats = hub.services.stats;
    await waitUntil(() => stats.waits.active === 1, 'the hub to hold the wait');
    const appended = await cli(APPEND);
    expect(appended.code).toBe(0);
    const event = JSON.parse(appended.stdout) as { id: string };
    const woke = await waiting;
    expect(woke.timed_out).toBe(false);
    expect(woke.events.map((e) => e.id)).toEqual([event.id]);
  }, 90_000);

  it('reserves, lists, guards and releases through the hub with no SQLite of its own', async () => {
    hub = await startTestHub(dirs);
    const before = hub.services.stats.mcpRequests;
    const reserved = await cli(['reserve', 'src/auth/**', '--stream', 'project/road', '--from-agent', 'road-b', '--exclusive', '--ttl', '1h', '--json']);
    expect(reserved.stderr).toBe('');
    expect(reserved.code).toBe(0);
    const { reservation } = JSON.parse(reserved.stdout) as { reservation: { reservation_id: string } };
    expect(hub.services.logstream.reservations({}).map((r) => r.reservation_id)).toEqual([reservation.reservation_id]);

    const conflict = await cli(['reserve', 'src/auth/login.ts', '--stream', 'project/road', '--from-agent', 'road-a', '--exclusive', '--json']);
    expect(conflict.code).not.toBe(0);
    expect(JSON.parse(conflict.stdout)).toMatchObject({ error: { code: 'reservation.conflict' } });

    const listed = await cli(['reservations', '--json']);
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toMatchObject({ count: 1 });

    const refused = await cli(['guard', 'check', 'src/auth/login.ts', '--agent', 'road-a']);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('road-b holds exclusive src/auth/**');
    const allowed = await cli(['guard', 'check', 'src/auth/login.ts', '--agent', 'road-b']);
    expect(allowed.code).toBe(0);

    const released = await cli(['release', reservation.reservation_id, '--from-agent', 'road-b', '--json']);
    expect(released.code).toBe(0);
    expect(JSON.parse(released.stdout)).toMatchObject({ type: 'file.released' });
    expect(hub.services.logstream.reservations({})).toEqual([]);
    expect(hub.services.stats.mcpRequests - before).toBe(6);
  }, 90_000);

  it('submits and applies a patch through the hub with no SQLite of its own', async () => {
    const git = (cwd: string, ...args: string[]): string =>
      execFileSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@example.com', ...args], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const requester = join(dirs.root, 'requester');
    const worker = join(dirs.root, 'worker');
    mkdirSync(requester);
    git(requester, 'init', '--quiet', '--initial-branch=main');
    writeFileSync(join(requester, 'a.txt'), 'one\n');
    git(requester, 'add', '.');
    git(requester, 'commit', '--quiet', '-m', 'base');
    const base = git(requester, 'rev-parse', 'HEAD').trim();
    git(dirs.root, 'clone', '--quiet', requester, worker);
    writeFileSync(join(worker, 'a.txt'), 'two\n');

    hub = await startTestHub(dirs);
    const request = await cli([...APPEND.slice(0, -1), '--base-commit', base, '--json']);
    expect(request.code).toBe(0);
    const submitted = await cli(['patch', 'submit', '--task', 'task_road', '--agent', 'road-b', '--repo', worker, '--json']);
    expect(submitted.stderr).toBe('');
    expect(submitted.code).toBe(0);
    const filed = JSON.parse(submitted.stdout) as { artifact: { id: string }; event: { id: string; type: string; to_agent: string } };
    expect(filed.event).toMatchObject({ type: 'patch.ready', to_agent: 'road-a' });
    expect(hub.services.logstream.getArtifact(filed.artifact.id).content).toContain('+two');

    const applied = await cli(['patch', 'apply', filed.event.id, '--agent', 'road-a', '--repo', requester, '--json']);
    expect(applied.stderr).toBe('');
    expect(applied.code).toBe(0);
    expect(JSON.parse(applied.stdout)).toMatchObject({ status: 'applied', patch_event_id: filed.event.id });
    expect(readFileSync(join(requester, 'a.txt'), 'utf8')).toBe('two\n');
    expect(hub.services.logstream.task('task_road').status).toBe('applied');
  }, 90_000);

  it('reads the hook inbox through the hub with no SQLite of its own, each item once', async () => {
    hub = await startTestHub(dirs);
    expect((await cli(APPEND)).code).toBe(0);
    const state = join(dirs.root, 'inbox-state.json');
    const inbox = ['hook', 'inbox', '--agent', 'road-b', '--format', 'text', '--event', 'UserPromptSubmit', '--state-file', state];
    const first = await cli(inbox);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('palace inbox for road-b (1 new, first look');
    expect(first.stdout).toContain('new task task_road from road-a');
    const before = hub.services.stats.mcpRequests;
    const again = await cli(inbox);
    expect(again.stdout).toBe('');
    expect(hub.services.stats.mcpRequests - before).toBeGreaterThan(0);

    const request = hub.services.logstream.list({ correlation_id: 'task_road' }).events[0];
    expect((await cli(['logstream', 'ack', request?.id ?? '', '--from-agent', 'road-b', '--status', 'claimed', '--json'])).code).toBe(0);
    const requester = ['hook', 'inbox', '--agent', 'road-a', '--format', 'text', '--event', 'X', '--state-file', join(dirs.root, 'a.json')];
    expect((await cli(requester)).stdout).toBe('');
    await cli(['logstream', 'append', '--type', 'task.reply', '--stream', 'project/road', '--room', 'delegation', '--from-agent', 'road-b', '--correlation-id', 'task_road', '--status', 'blocked', '--body', 'need a key', '--json']);
    const news = await cli(requester);
    expect(news.stdout).toContain('task.reply blocked on task_road from road-b');
  }, 90_000);

  it('lists tasks, shows one task and watches (one-shot and --follow) through the hub with no SQLite of its own', async () => {
    hub = await startTestHub(dirs);
    const request = await cli(APPEND);
    expect(request.code).toBe(0);
    const requestId = (JSON.parse(request.stdout) as { id: string }).id;

    const tasks = await cli(['logstream', 'tasks', '--open', '--json']);
    expect(tasks.stderr).toBe('');
    expect(tasks.code).toBe(0);
    expect(JSON.parse(tasks.stdout)).toMatchObject({ count: 1, tasks: [{ correlation_id: 'task_road', status: 'open', requester: 'road-a' }] });
    const text = await cli(['logstream', 'tasks', '--stream', 'project/road']);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('1 task(s):\n  task_road  open');

    const one = await cli(['logstream', 'task', 'task_road']);
    expect(one.stderr).toBe('');
    expect(one.code).toBe(0);
    expect(one.stdout).toContain('Task task_road: open');
    expect(one.stdout).toContain(`(task.request ${requestId})`);
    const missing = await cli(['logstream', 'task', 'task_nowhere', '--json']);
    expect(missing.code).not.toBe(0);
    expect(JSON.parse(missing.stdout)).toMatchObject({ error: { code: 'log.event_not_found', field: 'correlation_id' } });

    // One-shot: the request is already there for road-b from the start of the log.
    const once = await cli(['logstream', 'watch', '--agent', 'road-b', '--from-start', '--state-file', '', '--json']);
    expect(once.stderr).toBe('');
    expect(once.code).toBe(0);
    expect((JSON.parse(once.stdout) as { events: Array<{ id: string }> }).events.map((e) => e.id)).toEqual([requestId]);

    // --follow from the tip: the hub holds its wait, and a CLI append wakes it.
    const env = childEnv(dirs, { NODE_OPTIONS: `--import ${pathToFileURL(noSqlite).href}` });
    const args = ['--palace', dirs.palace, 'logstream', 'watch', '--agent', 'road-b', '--follow', '--state-file', '', '--idle-exit-ms', '60000', '--json'];
    const follow = startCli(args, env);
    try {
      const stats = hub.services.stats;
      await waitUntil(() => stats.waits.active === 1, 'the watcher to hold a wait on the hub');
      const reply = await cli(['logstream', 'append', '--type', 'status', '--stream', 'project/road', '--room', 'status', '--from-agent', 'road-a', '--to-agent', 'road-b', '--body', 'ping', '--json']);
      expect(reply.code).toBe(0);
      const pingId = (JSON.parse(reply.stdout) as { id: string }).id;
      await follow.waitForStdout(pingId, 30_000);
      const batch = JSON.parse(follow.stdoutSoFar().trim().split('\n')[0] ?? '') as { events: Array<{ id: string }>; cursor: string };
      expect(batch.events.map((e) => e.id)).toEqual([pingId]);
      expect(batch.cursor).toBe(pingId);
    } finally {
      follow.child.kill('SIGINT');
    }
    const ended = await follow.done;
    expect(ended.stderr).not.toContain('TEST-HOOK');
    expect(ended.code).toBe(130);
  }, 90_000);

  it('a watch --follow whose hub shuts down takes the road again (in-process) from the same cursor', async () => {
    hub = await startTestHub(dirs);
    // This watcher may open SQLite: once the hub is gone, its road is the in-process server.
    const args = ['--palace', dirs.palace, 'logstream', 'watch', '--agent', 'road-b', '--follow', '--state-file', '', '--idle-exit-ms', '60000', '--json'];
    const follow = startCli(args, childEnv(dirs));
    try {
      const stats = hub.services.stats;
      await waitUntil(() => stats.waits.active === 1, 'the watcher to hold a wait on the hub');
      await hub.close();
      hub = undefined;
      const appended = await startCli(['--palace', dirs.palace, ...APPEND], childEnv(dirs)).done;
      expect(appended.code).toBe(0);
      const id = (JSON.parse(appended.stdout) as { id: string }).id;
      await follow.waitForStdout(id, 30_000);
      expect((JSON.parse(follow.stdoutSoFar().trim().split('\n')[0] ?? '') as { events: Array<{ id: string }> }).events.map((e) => e.id)).toEqual([id]);
    } finally {
      follow.child.kill('SIGINT');
    }
    const ended = await follow.done;
    expect(ended.stderr).not.toContain('Error');
    expect(ended.code).toBe(130);
  }, 90_000);

  it('a watch --follow turned away by a hub at its wait cap (http.busy) retries and then receives', async () => {
    hub = await startTestHub(dirs, { env: { PALACE_WAIT_MAX_CONCURRENT: '1' } });
    client = await connectHttpClient(hub.url, { name: 'road-holder' });
    const stats = hub.services.stats;
    // Another agent holds the hub's only wait slot until an event for it is appended.
    const holding = callJson<{ timed_out: boolean }>(client, 'palace_event_wait', { to_agent: 'road-x', timeout_ms: 60_000 }, 70_000);
    await waitUntil(() => stats.waits.active === 1, 'the hub to hold the other wait');
    const args = ['--palace', dirs.palace, 'logstream', 'watch', '--agent', 'road-b', '--from-start', '--follow', '--state-file', '', '--idle-exit-ms', '60000', '--json'];
    const env = childEnv(dirs, { NODE_OPTIONS: `--import ${pathToFileURL(noSqlite).href}` });
    const follow = startCli(args, env);
    try {
      const busyBefore = stats.waits.refused;
      await waitUntil(() => stats.waits.refused > busyBefore, 'the hub to turn the watcher away');
      const freed = await cli(['logstream', 'append', '--type', 'status', '--stream', 'project/road', '--room', 'status', '--from-agent', 'road-a', '--to-agent', 'road-x', '--body', 'free the slot', '--json']);
      expect(freed.code).toBe(0);
      expect((await holding).timed_out).toBe(false);
      const appended = await cli(APPEND);
      expect(appended.code).toBe(0);
      const id = (JSON.parse(appended.stdout) as { id: string }).id;
      await follow.waitForStdout(id, 30_000);
    } finally {
      follow.child.kill('SIGINT');
    }
    const ended = await follow.done;
    expect(ended.stdout).not.toContain('http.busy');
    expect(ended.code).toBe(130);
  }, 90_000);

  it('guard check lets the commit through with a warning when the registered hub cannot be reached', async () => {
    hub = await startTestHub(dirs);
    expect((await cli(['reserve', 'src/**', '--stream', 'project/road', '--from-agent', 'road-b', '--exclusive', '--json'])).code).toBe(0);
    // The hub goes away but its registration stays (a live pid, a closed port): the CLI dials it and fails.
    const registration = readFileSync(registrationPath(dirs.palaceHome, dirs.palace), 'utf8');
    await hub.close();
    hub = undefined;
    writeFileSync(registrationPath(dirs.palaceHome, dirs.palace), registration);
    const r = await cli(['guard', 'check', 'src/a.ts', '--agent', 'road-a']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('unreachable');
    expect(r.stderr).toContain('commit not checked');
  }, 90_000);
});
