// palace_mine reads only inside the mining roots, against real child hubs: by default the home
// directory minus credential folders; /etc/passwd, ~/.ssh and a symlink out of home are refused
// with one message whether or not the path exists; PALACE_MINE_ROOTS replaces the default; a hub
// on a network address mines nothing until roots are configured. dry_run keeps it fast (the
// refusal comes before anything is read, and a dry run lists exactly what would be read).

import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { killChildren, makeHubDirs, startChildHub, type HubDirs } from '../helpers/hub.js';

const TOKEN = 'a1b2c3d4'.repeat(8);

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
  await killChildren();
});

interface Answer {
  ok: boolean;
  value: Record<string, unknown>;
}

async function mine(url: string, args: Record<string, unknown>, token?: string): Promise<Answer> {
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'palace_mine', arguments: { dry_run: true, ...args } } }),
  });
  const text = await res.text();
  const data = text.startsWith('{') ? text : (text.split('\n').find((l) => l.startsWith('data: ')) ?? '').slice(6);
  const message = JSON.parse(data) as { result: { content: Array<{ text: string }>; isError?: boolean } };
  return { ok: !message.result.isError, value: JSON.parse(message.result.content[0]?.text ?? 'null') as Record<string, unknown> };
}

function refusal(answer: Answer): { code: string; message: string } {
  expect(answer.ok, JSON.stringify(answer.value)).toBe(false);
  return answer.value.error as { code: string; message: string };
}

/** A home with a project, credential folders and symlinks pointing out of it. */
function homeFixture(dirs: HubDirs): { project: string } {
  const project = join(dirs.home, 'code', 'app');
  mkdirSync(join(project, 'src'), { recursive: true });
  writeFileSync(join(project, 'README.md'), '# app\nA small project.\n');
  writeFileSync(join(project, 'src', 'main.ts'), 'export const answer = 42;\n');
  symlinkSync('/etc', join(project, 'etc-link'));
  symlinkSync('/etc/hostname', join(project, 'src', 'hostname.ts'));
  mkdirSync(join(dirs.home, '.ssh'), { recursive: true });
  writeFileSync(join(dirs.home, '.ssh', 'notes.md'), 'ssh config notes\n');
  symlinkSync('/etc', join(dirs.home, 'etc-escape'));
  return { project };
}

function dirsFor(prefix: string): HubDirs {
  const dirs = makeHubDirs(prefix);
  cleanups.push(() => dirs.cleanup());
  return dirs;
}

describe('mining roots', () => {
  it('default: home only; /etc, ~/.ssh and symlinks out are refused alike, existing or not', async () => {
    const dirs = dirsFor('palace-mine-roots-');
    const { project } = homeFixture(dirs);
    // '' = unset: the default policy, not the test helpers' temp-dir root.
    const hub = await startChildHub(dirs, { env: { PALACE_MINE_ROOTS: '' } });
    cleanups.push(() => void hub.stop());

    const passwd = refusal(await mine(hub.url, { source: '/etc/passwd' }));
    expect(passwd.code).toBe('mine.path_refused');
    const missing = refusal(await mine(hub.url, { source: '/etc/no-such-file-here' }));
    expect(missing.code).toBe('mine.path_refused');
    // The same words for a path that exists and one that does not: nothing leaks.
    expect(missing.message.replace('/etc/no-such-file-here', 'P')).toBe(passwd.message.replace('/etc/passwd', 'P'));
    expect(passwd.message).not.toMatch(/no such|exist/i);

    expect(refusal(await mine(hub.url, { source: join(dirs.home, '.ssh') })).code).toBe('mine.path_refused');
    expect(refusal(await mine(hub.url, { source: join(dirs.home, '.ssh', 'notes.md') })).code).toBe('mine.path_refused');
    expect(refusal(await mine(hub.url, { source: join(dirs.home, 'etc-escape') })).code).toBe('mine.path_refused');
    expect(refusal(await mine(hub.url, { source: join(dirs.home, 'etc-escape', 'passwd') })).code).toBe('mine.path_refused');
    expect(refusal(await mine(hub.url, { source: join(project, 'src', 'hostname.ts') })).code).toBe('mine.path_refused');
    expect(refusal(await mine(hub.url, { source: dirs.palaceHome })).code).toBe('mine.path_refused');

    // Inside home: mined, and nothing reached through a symlink is read.
    const ok = await mine(hub.url, { source: project });
    expect(ok.ok, JSON.stringify(ok.value)).toBe(true);
    const files = (ok.value.files as Array<{ file: string }>).map((f) => f.file).sort();
    expect(files).toEqual([join(project, 'README.md'), join(project, 'src', 'main.ts')]);
    // Home as a whole: the project yes, ~/.ssh no.
    const home = await mine(hub.url, { source: dirs.home });
    expect(home.ok, JSON.stringify(home.value)).toBe(true);
    const homeFiles = (home.value.files as Array<{ file: string }>).map((f) => f.file);
    expect(homeFiles).toContain(join(project, 'README.md'));
    expect(homeFiles.some((f) => f.includes('/.ssh/'))).toBe(false);

    // A missing path inside the roots may say so.
    expect(refusal(await mine(hub.url, { source: join(dirs.home, 'gone') })).code).toBe('mine.source_missing');
  }, 60_000);

  it('PALACE_MINE_ROOTS replaces the default', async () => {
    const dirs = dirsFor('palace-mine-roots-env-');
    const { project } = homeFixture(dirs);
    const other = join(dirs.home, 'other');
    mkdirSync(other);
    writeFileSync(join(other, 'notes.md'), 'other notes\n');
    const hub = await startChildHub(dirs, { env: { PALACE_MINE_ROOTS: project } });
    cleanups.push(() => void hub.stop());
    expect((await mine(hub.url, { source: project })).ok).toBe(true);
    expect(refusal(await mine(hub.url, { source: other })).code).toBe('mine.path_refused');
  }, 60_000);

  it('a hub on a network address mines nothing until roots are configured', async () => {
    const dirs = dirsFor('palace-mine-roots-net-');
    const { project } = homeFixture(dirs);
    const args = ['--host', '0.0.0.0', '--port', '0'];
    const closed = await startChildHub(dirs, { args, env: { PALACE_MCP_HTTP_TOKEN: TOKEN, PALACE_MINE_ROOTS: '' } });
    const refused = refusal(await mine(closed.url, { source: project }, TOKEN));
    expect(refused.code).toBe('mine.path_refused');
    expect(refused.message).toMatch(/PALACE_MINE_ROOTS/);
    await closed.stop();

    const open = await startChildHub(dirs, { args, env: { PALACE_MCP_HTTP_TOKEN: TOKEN, PALACE_MINE_ROOTS: project } });
    cleanups.push(() => void open.stop());
    const ok = await mine(open.url, { source: project }, TOKEN);
    expect(ok.ok, JSON.stringify(ok.value)).toBe(true);
    expect(refusal(await mine(open.url, { source: '/etc/passwd' }, TOKEN)).code).toBe('mine.path_refused');
  }, 60_000);
});
