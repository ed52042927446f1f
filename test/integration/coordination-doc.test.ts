// docs/coordination.md runs verbatim with registered agents (issue 28): every `palace ...` command the
// doc prints is read out of the doc itself (so the test fails when the doc drifts), its placeholders
// (X, S, <task|event>, ...) are filled in, and it is run as a separate process against a real hub on
// port 0, each agent with only its own secret in PALACE_AGENT_TOKEN (docs/identity.md), the git guard
// in a real git repository.

import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import type { Hub } from '../../hub/src/server.js';
import { childEnv, makeHubDirs, PALACE_BIN, REPO_ROOT, startTestHub, type HubDirs } from '../helpers/hub.js';

const DOC = readFileSync(join(REPO_ROOT, 'docs', 'coordination.md'), 'utf8');
/** Every `palace ...` (and `PALACE_GUARD=off git ...`) the doc prints in backticks, whitespace collapsed. */
const DOC_COMMANDS = [...DOC.matchAll(/`((?:palace|PALACE_GUARD=off git)\s[^`]+)`/g)].map((m) => (m[1] as string).replace(/\s+/g, ' ').trim());

/** The doc's command that starts with `prefix` (exactly one). */
function docCommand(prefix: string): string {
  const found = [...new Set(DOC_COMMANDS.filter((c) => c.startsWith(prefix)))];
  if (found.length !== 1) throw new Error(`docs/coordination.md: expected one command starting '${prefix}', found ${JSON.stringify(found)}`);
  return found[0] as string;
}

const PLACEHOLDER = /^(<.*>|[A-Z]+|\.\.\.)$/;

/**
 * The doc's command as argv: `[--opt value]` groups are kept when `--opt` is in `include`, placeholders
 * are replaced from `values` (an unfilled one throws, so a new placeholder in the doc fails the test).
 */
function instantiate(template: string, values: Record<string, string | string[]>, include: readonly string[] = []): string[] {
  const argv: string[] = [];
  for (const token of template.match(/\[[^\]]*\]|"[^"]*"|\S+/g) ?? []) {
    let parts = [token];
    if (token.startsWith('[')) {
      const inner = token.slice(1, -1).split(' ');
      if (!include.includes(inner[0] as string)) continue;
      parts = inner;
    }
    for (const part of parts) {
      const value = values[part];
      if (value !== undefined) argv.push(...(Array.isArray(value) ? value : [value]));
      else if (PLACEHOLDER.test(part)) throw new Error(`no value for placeholder ${part} in: ${template}`);
      else argv.push(part.replace(/^"(.*)"$/, '$1'));
    }
  }
  return argv;
}

const dirsList: HubDirs[] = [];
const hubs: Hub[] = [];

afterEach(async () => {
  await Promise.all(hubs.splice(0).map((h) => h.close()));
  for (const d of dirsList.splice(0)) d.cleanup();
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: readonly string[], env: Record<string, string>, cwd: string): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd, env });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.once('close', (code) => resolve({ code, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') }));
  });
}

const errorCode = (r: Run): string | undefined => (JSON.parse(r.stdout || r.stderr) as { error?: { code?: string } }).error?.code;

describe('docs/coordination.md with registered agents', () => {
  it('every documented command runs as printed, each agent proving itself with PALACE_AGENT_TOKEN only', { timeout: 60_000 }, async () => {
    const dirs = makeHubDirs('palace-coord-doc-');
    dirsList.push(dirs);
    const h = await startTestHub(dirs);
    hubs.push(h);
    const log = h.services.logstream;

    /** argv as the doc prints it (`palace ...`), run with the palace pinned and the agent's environment. */
    const palace = (argv: readonly string[], env: Record<string, string> = {}, cwd = dirs.root): Promise<Run> => {
      expect(argv[0]).toBe('palace');
      return run(process.execPath, [PALACE_BIN, '--palace', dirs.palace, ...argv.slice(1)], childEnv(dirs, env), cwd);
    };
    const ok = (r: Run): Run => {
      expect(r.code, `${r.stderr}\n${r.stdout}`).toBe(0);
      return r;
    };
    const addAgent = async (name: string, ...extra: string[]): Promise<Record<string, string>> => {
      const r = ok(await palace(['palace', 'agent', 'add', name, '--json', ...extra]));
      return { PALACE_AGENT_TOKEN: (JSON.parse(r.stdout) as { secret: string }).secret };
    };
    const claude = await addAgent('laptop-claude');
    const codex = await addAgent('laptop-codex', '--can', 'write,bash');
    const gemini = await addAgent('pi-gemini', '--can', 'write');

    const stream = 'project/demo';
    const request = log.appendNow({ type: 'task.request', stream, room: 'delegation', from_agent: 'laptop-claude', to_agent: 'laptop-codex', correlation_id: 'task_login', status: 'open', body: 'Goal: fix login' });

    // Ready: the task is offered to its addressee.
    const readyCmd = docCommand('palace logstream ready');
    const ready = ok(await palace([...instantiate(readyCmd, { X: 'laptop-codex', S: stream, N: '5' }, ['--stream', '--limit']), '--json'], codex));
    expect((JSON.parse(ready.stdout) as { tasks: Array<{ request_event_id: string }> }).tasks.map((t) => t.request_event_id)).toEqual([request.id]);
    // With the secret, --agent may be left out: the hub answers for the agent it proves.
    const mine = ok(await palace(['palace', 'logstream', 'ready'], codex));
    expect(mine.stdout).toContain(`claim it:    palace logstream ack ${request.id} --status claimed\n`);
    expect(ok(await palace(['palace', 'logstream', 'ready'], claude)).stdout).toContain('No task is ready.');

    // Claim: `palace logstream ack <request> --status claimed` names no agent; the secret says who.
    const ackCmd = docCommand('palace logstream ack <');
    ok(await palace(instantiate(ackCmd, { '<request>': request.id }), codex));
    expect(log.task('task_login')).toMatchObject({ status: 'claimed', worker: 'laptop-codex' });
    // A second claim by another agent while the claim is live loses and exits 1.
    const lost = await palace(instantiate(ackCmd, { '<request>': request.id }), gemini);
    expect(lost.code, lost.stderr).toBe(1);
    expect(log.task('task_login').worker).toBe('laptop-codex');

    // Renew, both with the task's correlation id and with an event id.
    const renewCmd = docCommand('palace logstream renew');
    ok(await palace(instantiate(renewCmd, { '<task|event>': 'task_login', X: 'laptop-codex' }), codex));
    ok(await palace(instantiate(renewCmd, { '<task|event>': request.id, X: 'laptop-codex' }, ['--lease']), codex));
    expect(log.task('task_login').lease_left_ms).toBeGreaterThan(29 * 60_000);

    // Reserve: the short form (no --from-agent) and the full form; a conflicting one is refused.
    const reserveCmd = docCommand('palace reserve');
    const reserved = ok(await palace([...instantiate(reserveCmd, { '<paths...>': 'src/auth/**', S: stream, ID: 'task_login' }, ['--exclusive', '--ttl', '--task']), '--json'], codex));
    const reservationId = (JSON.parse(reserved.stdout) as { reservation: { reservation_id: string; agent: string } }).reservation.reservation_id;
    const conflict = await palace(instantiate(reserveCmd, { '<paths...>': ['src/auth/login.ts'], S: stream, X: 'pi-gemini' }, ['--from-agent']), gemini);
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toContain('laptop-codex holds exclusive src/auth/**');
    const all = ok(await palace(instantiate(reserveCmd, { '<paths...>': ['docs/a.md', 'docs/b.md'], S: stream, ID: 'task_login', X: 'pi-gemini' }, ['--exclusive', '--ttl', '--task', '--force', '--from-agent']), gemini));
    expect(all.stdout).toContain('Reserved');

    const listed = ok(await palace([...instantiate(docCommand('palace reservations'), {}), '--json'], gemini));
    expect((JSON.parse(listed.stdout) as { reservations: Array<{ agent: string; paths: string[] }> }).reservations.map((r) => [r.agent, r.paths])).toEqual(
      expect.arrayContaining([['laptop-codex', ['src/auth/**']], ['pi-gemini', ['docs/a.md', 'docs/b.md']]]),
    );

    // The git guard, in a real repository: pi-gemini commits there.
    const repo = join(dirs.root, 'repo');
    mkdirSync(repo);
    const gitEnv = childEnv(dirs, { GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@example.invalid', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@example.invalid' });
    const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, env: gitEnv, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    git('init', '-q', '-b', 'main');
    writeFileSync(join(repo, 'README.md'), 'hello\n');
    git('add', '.');
    git('commit', '-q', '--no-verify', '-m', 'base');
    ok(await palace(instantiate(docCommand('palace guard install'), { DIR: repo, X: 'pi-gemini', S: stream }, ['--repo', '--agent', '--stream', '--force']), gemini));
    const hook = readFileSync(join(repo, '.git', 'hooks', 'pre-commit'), 'utf8');
    // The hook runs the command the doc shows.
    const hookCmd = docCommand('palace --palace <palace> guard check');
    expect(hook).toContain(hookCmd.slice(hookCmd.indexOf(' guard check')).replace(/:-X}"$/, ':-'));
    expect(hook).toMatch(/^AGENT='?pi-gemini'?$/m);
    mkdirSync(join(repo, 'src', 'auth'), { recursive: true });
    writeFileSync(join(repo, 'src', 'auth', 'login.ts'), 'x\n');
    git('add', '.');
    const commitEnv = { ...gitEnv, PALACE_AGENT_TOKEN: gemini.PALACE_AGENT_TOKEN as string };
    const refused = await run('git', ['commit', '-q', '-m', 'touch login'], commitEnv, repo);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('src/auth/login.ts: laptop-codex holds exclusive src/auth/**');
    // Override once: the doc's `PALACE_GUARD=off git commit ...`.
    const override = instantiate(docCommand('PALACE_GUARD=off git commit'), { '...': ['-q', '-m', 'touch login anyway'] });
    const [assignment, ...gitArgv] = override;
    expect(assignment).toBe('PALACE_GUARD=off');
    ok(await run(gitArgv[0] as string, gitArgv.slice(1), { ...commitEnv, PALACE_GUARD: 'off' }, repo));

    // Release the reservation: `palace release <id>` names no agent either.
    ok(await palace(instantiate(docCommand('palace release'), { '<id>': reservationId }), codex));
    expect(log.reservations({ agent: 'laptop-codex' })).toHaveLength(0);

    // Release the claim by hand: another agent is refused, the claimer may.
    const releaseCmd = docCommand('palace logstream release');
    const stolen = await palace([...instantiate(releaseCmd, { '<task|event>': 'task_login', X: 'pi-gemini', '...': 'mine now' }), '--json'], gemini);
    expect(stolen.code).toBe(1);
    expect(errorCode(stolen)).toBe('claim.not_yours');
    const released = ok(await palace([...instantiate(releaseCmd, { '<task|event>': 'task_login', X: 'laptop-codex', '...': 'handing it back' }), '--json'], codex));
    expect(JSON.parse((JSON.parse(released.stdout) as { body: string }).body)).toMatchObject({ reason: 'handing it back', released_by: 'laptop-codex' });
    expect(log.task('task_login')).toMatchObject({ status: 'open' });

    // Another agent's name with one's own secret is refused by every writing command.
    const forged = await palace([...instantiate(renewCmd, { '<task|event>': 'task_login', X: 'laptop-codex' }), '--json'], claude);
    expect(forged.code).not.toBe(0);
    expect(errorCode(forged)).toBe('identity.mismatch');

    // The stored projection agrees with a full scan.
    const repair = ok(await palace([...instantiate(docCommand('palace repair --tasks'), {}), '--json']));
    expect(JSON.parse(repair.stdout)).toMatchObject({ reservations: { differences: [] } });

    // With no hub running the CLI checks the secret itself (docs/identity.md): the short forms still bind.
    await h.close();
    hubs.splice(0);
    const offline = ok(await palace([...instantiate(reserveCmd, { '<paths...>': 'lib/**', S: stream }), '--json'], gemini));
    expect((JSON.parse(offline.stdout) as { reservation: { agent: string } }).reservation.agent).toBe('pi-gemini');
    const wrongSecret = await palace([...instantiate(reserveCmd, { '<paths...>': 'lib/**', S: stream }), '--json'], { PALACE_AGENT_TOKEN: 'pat_not-a-registered-secret-000000000000' });
    expect(wrongSecret.code).not.toBe(0);
    expect(errorCode(wrongSecret)).toBe('identity.unproven');
  });
});
