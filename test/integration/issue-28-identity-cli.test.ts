// Issue 28 through the CLI and `palace mcp` stdio, against a real hub (port 0): `palace agent`
// registers and rotates secrets (stored only as a hash, 0600); the README's delegation runs verbatim
// with registered agents (PALACE_AGENT_TOKEN in each agent's environment); `palace patch apply` applies
// only the live claim's patch (a substituted one, a planted .git symlink and a peer's patch are refused);
// retiring an agent releases what it held; `palace mcp` forwards the agent's secret.

import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, writeFileSync, existsSync, lstatSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import type { LogEvent } from '../../hub/src/core/types.js';
import type { Hub } from '../../hub/src/server.js';
import { callJson, childEnv, makeHubDirs, PALACE_BIN, startTestHub, waitUntil, type HubDirs } from '../helpers/hub.js';
import { closeSessions, stdioSession, toolError } from '../helpers/stdio-client.js';
import { writePeers } from '../helpers/sync.js';

const dirsList: HubDirs[] = [];
const hubs: Hub[] = [];

afterEach(async () => {
  await closeSessions();
  await Promise.all(hubs.splice(0).map((h) => h.close()));
  for (const d of dirsList.splice(0)) d.cleanup();
});

async function hub(env: Record<string, string> = {}): Promise<{ hub: Hub; dirs: HubDirs }> {
  const dirs = makeHubDirs('palace-identity-cli-');
  dirsList.push(dirs);
  const h = await startTestHub(dirs, { env });
  hubs.push(h);
  return { hub: h, dirs };
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `palace --palace P ...args` in `cwd` with extra environment (an agent's PALACE_AGENT_TOKEN). */
function palace(dirs: HubDirs, args: readonly string[], env: Record<string, string> = {}, cwd?: string): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [PALACE_BIN, '--palace', dirs.palace, ...args], { cwd: cwd ?? dirs.root, env: childEnv(dirs, env) });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.once('close', (code) => resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }));
  });
}

async function addAgent(dirs: HubDirs, name: string, ...extra: string[]): Promise<string> {
  const r = await palace(dirs, ['agent', 'add', name, '--json', ...extra]);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { secret: string }).secret;
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.com', ...args], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/** A requester repository with one commit, and the worker's clone of it. */
function repos(dirs: HubDirs): { requester: string; worker: string; base: string } {
  const requester = join(dirs.root, 'requester');
  const worker = join(dirs.root, 'worker');
  mkdirSync(requester);
  git(requester, 'init', '--quiet', '--initial-branch=main');
  writeFileSync(join(requester, 'login.ts'), 'export const login = () => "broken";\n');
  git(requester, 'add', '.');
  git(requester, 'commit', '--quiet', '-m', 'base');
  git(dirs.root, 'clone', '--quiet', requester, worker);
  return { requester, worker, base: git(requester, 'rev-parse', 'HEAD').trim() };
}

const SYMLINK_PATCH = ['diff --git a/hooklink b/hooklink', 'new file mode 120000', 'index 0000000..1111111', '--- /dev/null', '+++ b/hooklink', '@@ -0,0 +1 @@', '+.git/hooks', '\\ No newline at end of file', ''].join('\n');

describe('palace agent', () => {
  it('registers with a secret shown once and stored only as its hash (0600); rotate and revoke end the old secret', async () => {
    const { hub: h, dirs } = await hub();
    const r = await palace(dirs, ['agent', 'add', 'laptop-codex', '--can', 'write,bash', '--harness', 'codex']);
    expect(r.code, r.stderr).toBe(0);
    const secret = /\b(pat_[A-Za-z0-9_-]{20,})/.exec(r.stdout)?.[1] as string;
    expect(secret).toBeTruthy();
    const file = join(dirs.palace, 'agents.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8')).not.toContain(secret);
    expect((await palace(dirs, ['agent', 'add', 'hub'])).code).not.toBe(0);
    const list = JSON.parse((await palace(dirs, ['agent', 'list', '--json'])).stdout) as { agents: Array<{ name: string; capabilities: string[]; harness: string; state: string }> };
    expect(list.agents).toEqual([expect.objectContaining({ name: 'laptop-codex', capabilities: ['write', 'bash'], harness: 'codex', state: 'active' })]);
    const probe = (token: string) =>
      fetch(`${h.url}/mcp`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', Authorization: `Bearer ${token}` },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      }).then((res) => res.status);
    expect(await probe(secret)).toBe(200);
    const rotated = JSON.parse((await palace(dirs, ['agent', 'rotate', 'laptop-codex', '--json'])).stdout) as { secret: string };
    expect(await probe(secret)).toBe(401);
    expect(await probe(rotated.secret)).toBe(200);
    expect((await palace(dirs, ['agent', 'revoke', 'laptop-codex'])).code).toBe(0);
    expect(await probe(rotated.secret)).toBe(401);
  });
});

describe('the README delegation with registered agents, and patch apply', () => {
  it('runs verbatim; apply takes only the live claim patch, refuses a substituted one and a .git symlink, and says whose it is', { timeout: 90_000 }, async () => {
    const { hub: h, dirs } = await hub();
    const { requester, worker, base } = repos(dirs);
    const claude = { PALACE_AGENT_TOKEN: await addAgent(dirs, 'laptop-claude') };
    const codex = { PALACE_AGENT_TOKEN: await addAgent(dirs, 'laptop-codex', '--can', 'write,bash') };
    const mallory = { PALACE_AGENT_TOKEN: await addAgent(dirs, 'mallory') };
    const ok = (r: Run): Run => {
      expect(r.code, `${r.stderr}\n${r.stdout}`).toBe(0);
      return r;
    };
    ok(await palace(dirs, ['logstream', 'append', '--type', 'task.request', '--stream', 'project/demo', '--room', 'delegation', '--from-agent', 'laptop-claude', '--to-agent', 'laptop-codex', '--correlation-id', 'task_fix_login', '--status', 'open', '--branch', 'main', '--base-commit', base, '--body', 'Goal: ... Definition of done: ...'], claude, requester));
    const ready = JSON.parse(ok(await palace(dirs, ['logstream', 'ready', '--agent', 'laptop-codex', '--json'], codex, worker)).stdout) as { tasks: Array<{ request_event_id: string }> };
    const requestId = ready.tasks[0]?.request_event_id as string;
    ok(await palace(dirs, ['logstream', 'ack', requestId, '--from-agent', 'laptop-codex', '--status', 'claimed'], codex, worker));
    writeFileSync(join(worker, 'login.ts'), 'export const login = () => "fixed";\n');
    ok(await palace(dirs, ['patch', 'submit', '--task', 'task_fix_login', '--agent', 'laptop-codex'], codex, worker));
    // The attack: mallory files a patch after the worker's, planting a symlink into .git.
    const planted = await callJson<{ event: LogEvent }>(
      await (async () => {
        const s = stdioSession(dirs, mallory);
        await s.connect();
        return s.client;
      })(),
      'palace_patch_submit',
      { correlation_id: 'task_fix_login', content: SYMLINK_PATCH },
    );
    expect(planted.event.from_agent).toBe('mallory');
    expect(planted.event.metadata.stale_attempt).toBeTruthy();
    // Someone else's name with mallory's secret: refused.
    expect((await palace(dirs, ['logstream', 'append', '--type', 'status', '--stream', 'project/demo', '--room', 'status', '--from-agent', 'laptop-codex', '--body', 'x'], mallory)).stderr).toMatch(/identity\.mismatch|you are 'mallory'/);

    const applied = ok(await palace(dirs, ['patch', 'apply', 'task_fix_login', '--agent', 'laptop-claude'], claude, requester));
    expect(applied.stderr).toMatch(/by laptop-codex, origin hub rep_[0-9a-f]+ \(the claim's hub\), attempt evt_/);
    expect(applied.stderr).toContain(`skipped ${planted.event.id} by mallory`);
    expect(readFileSync(join(requester, 'login.ts'), 'utf8')).toContain('fixed');
    expect(existsSync(join(requester, 'hooklink'))).toBe(false);
    const task = JSON.parse(ok(await palace(dirs, ['logstream', 'task', 'task_fix_login', '--json'], claude)).stdout) as { status: string; stale_attempts: Array<{ by: string }> };
    expect(task.status).toBe('applied');
    expect(task.stale_attempts.map((s) => s.by)).toEqual(['mallory']);

    // Naming mallory's event is refused without the flag, and with it the .git symlink is still refused.
    const named = await palace(dirs, ['patch', 'apply', planted.event.id, '--agent', 'laptop-claude', '--json'], claude, requester);
    expect(named.code).toBe(3);
    expect((JSON.parse(named.stdout || named.stderr) as { error: { code: string } }).error.code).toBe('patch.foreign');
    const forced = await palace(dirs, ['patch', 'apply', planted.event.id, '--accept-foreign', '--agent', 'laptop-claude', '--json'], claude, requester);
    expect(forced.code).toBe(3);
    expect((JSON.parse(forced.stdout || forced.stderr) as { error: { code: string; message: string } }).error).toMatchObject({ code: 'patch.unsafe_path', message: expect.stringMatching(/hooklink: a symlink to \.git\/hooks/) });
    expect(() => lstatSync(join(requester, 'hooklink'))).toThrow();
    expect(h.services.logstream.task('task_fix_login').status).toBe('applied');
  });

  it("refuses a peer's patch.ready for a local task (pulled by sync) until the real worker files", { timeout: 90_000 }, async () => {
    const a = await hub({ PALACE_SYNC_INTERVAL: '0.2' });
    const b = await hub({ PALACE_SYNC_INTERVAL: '0.2' });
    const { requester, base } = repos(a.dirs);
    const logA = a.hub.services.logstream;
    const req = logA.appendNow({ type: 'task.request', stream: 'project/demo', room: 'delegation', from_agent: 'laptop-claude', to_agent: 'worker-codex', correlation_id: 'task_peer', status: 'open', base_commit: base, body: 'Goal' });
    logA.ack({ event_id: req.id, from_agent: 'worker-codex', status: 'claimed' });
    // The unpinned peer serves its own patch for A's task, under the worker's name.
    const change = ['diff --git a/login.ts b/login.ts', '--- a/login.ts', '+++ b/login.ts', '@@ -1 +1 @@', '-export const login = () => "broken";', '+export const login = () => "peer";', ''].join('\n');
    const forged = b.hub.services.logstream.submitPatch({ stream: 'project/demo', from_agent: 'worker-codex', to_agent: 'laptop-claude', correlation_id: 'task_peer', content: change });
    writePeers(a.dirs.palace, [{ name: 'b', url: b.hub.url }]);
    await waitUntil(() => logA.store.getEvent(forged.event.id), 'A to pull the peer patch', 30_000);
    await waitUntil(() => { try { return logA.getArtifact(forged.artifact.id); } catch { return undefined; } }, 'A to pull its artifact', 30_000);
    const refused = await palace(a.dirs, ['patch', 'apply', 'task_peer', '--agent', 'laptop-claude', '--json'], {}, requester);
    expect(refused.code, refused.stderr).toBe(3);
    expect((JSON.parse(refused.stdout || refused.stderr) as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'patch.foreign',
      message: expect.stringMatching(/attempt is missing[\s\S]*comes from hub rep_/),
    });
    expect(readFileSync(join(requester, 'login.ts'), 'utf8')).toContain('broken');
    // The real worker files on A: that one applies.
    logA.submitPatch({ from_agent: 'worker-codex', correlation_id: 'task_peer', content: change.replace('"peer"', '"worker"') });
    const ok = await palace(a.dirs, ['patch', 'apply', 'task_peer', '--agent', 'laptop-claude'], {}, requester);
    expect(ok.code, ok.stderr).toBe(0);
    expect(readFileSync(join(requester, 'login.ts'), 'utf8')).toContain('worker');
  });
});

describe('retiring an agent and palace mcp', () => {
  it('retire releases its claims and reservations, revokes its secret and records who retired it', async () => {
    const { hub: h, dirs } = await hub();
    const secret = await addAgent(dirs, 'crashed-codex', '--can', 'write');
    const s = stdioSession(dirs, { PALACE_AGENT_TOKEN: secret });
    await s.connect();
    const log = h.services.logstream;
    const req = log.appendNow({ type: 'task.request', stream: 'project/demo', room: 'delegation', from_agent: 'laptop-claude', to_agent: '*', correlation_id: 'task_held', status: 'open', body: 'Goal' });
    await callJson(s.client, 'palace_event_ack', { event_id: req.id, status: 'claimed' });
    await callJson(s.client, 'palace_reserve', { paths: ['src/**'], stream: 'project/demo', exclusive: true });
    expect(log.reservations({ agent: 'crashed-codex' })).toHaveLength(1);
    const r = await palace(dirs, ['agent', 'retire', 'crashed-codex', '--reason', 'the session crashed', '--json']);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { retired_by: string; released_claims: string[]; released_reservations: string[] };
    expect(out).toMatchObject({ retired_by: 'human', released_claims: ['task_held'] });
    expect(out.released_reservations).toHaveLength(1);
    expect(log.task('task_held')).toMatchObject({ status: 'open', worker: null });
    expect(log.reservations({ agent: 'crashed-codex' })).toHaveLength(0);
    const [event] = log.list({ type: 'agent.retired' }).events;
    expect(event?.from_agent).toBe('human');
    expect(JSON.parse(event?.body ?? '{}')).toMatchObject({ agent: 'crashed-codex', retired_by: 'human', reason: 'the session crashed' });
    // Its secret no longer works through palace mcp.
    await expect(s.client.callTool({ name: 'palace_event_append', arguments: { type: 'status', stream: 's', room: 'r', body: 'x' } })).rejects.toThrow(
      /refused this agent's secret \(PALACE_AGENT_TOKEN; HTTP 401, identity\.unproven\)/,
    );
  });

  it('palace mcp forwards PALACE_AGENT_TOKEN: writes are bound to the agent, another name is refused', async () => {
    const { hub: h, dirs } = await hub();
    const secret = await addAgent(dirs, 'box-codex');
    const s = stdioSession(dirs, { PALACE_AGENT_TOKEN: secret });
    await s.connect();
    const event = await callJson<LogEvent>(s.client, 'palace_event_append', { type: 'status', stream: 'project/demo', room: 'status', to_agent: '*', body: 'watching' });
    expect(event.from_agent).toBe('box-codex');
    const before = h.services.logstream.store.countEvents();
    const mismatch = toolError(await s.client.callTool({ name: 'palace_event_append', arguments: { type: 'status', stream: 'project/demo', room: 'status', from_agent: 'laptop-claude', body: 'x' } }));
    expect(mismatch.code).toBe('identity.mismatch');
    // Without the secret, the registered name is refused.
    const anon = stdioSession(dirs);
    await anon.connect();
    expect(toolError(await anon.client.callTool({ name: 'palace_event_append', arguments: { type: 'status', stream: 'p', room: 'r', from_agent: 'box-codex', body: 'x' } })).code).toBe('identity.unproven');
    expect(h.services.logstream.store.countEvents()).toBe(before);
  });
});
