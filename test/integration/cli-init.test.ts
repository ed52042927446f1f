// `palace init <dir>` through the real CLI on a workspace made here: two projects (one a real git
// repository with two authors), a notes folder with a meeting transcript; the proposal is kept,
// never clobbered without --yes, and --yes declares the proposed rooms.

import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { namesInText } from '../../hub/src/mine/detect.js';
import { makeTempPalace, parseJson, type CliResult, type TempPalace } from '../helpers/cli.js';
import { writeTree } from '../helpers/transcripts.js';

const SLOW = { timeout: 120_000 };

interface InitJson {
  dir: string;
  home: string;
  palace: string;
  projects: Array<{ path: string; wing: string; markers: string[]; rooms: string[] }>;
  people: Array<{ name: string; sources: string[]; count: number }>;
  proposal_file: string;
  proposal_written: boolean;
  declared: Array<{ wing: string; room: string; created: boolean }>;
  skipped: Array<{ path: string; reason: string; why: string }>;
  next: string[];
}

function ok(result: CliResult): CliResult {
  if (result.code !== 0) throw new Error(`exit ${String(result.code)}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
  return result;
}

function git(cwd: string, ...args: string[]): void {
  execFileSync('git', ['-c', 'init.defaultBranch=main', '-c', 'commit.gpgsign=false', ...args], { cwd, stdio: 'ignore' });
}

describe('palace init', SLOW, () => {
  let palace: TempPalace;
  let workspace: string;

  beforeAll(() => {
    palace = makeTempPalace('palace-init-');
    workspace = join(palace.root, 'workspace');
    writeTree(workspace, {
      'alpha/package.json': '{"name": "alpha"}',
      'alpha/README.md': '# Alpha\n',
      'alpha/src/index.ts': 'export const a = 1;\n',
      'alpha/docs/design.md': 'Reviewed by Carol Diaz.\n',
      'alpha/node_modules/dep/index.js': 'x',
      'beta/pyproject.toml': '[project]\nname = "beta"\n',
      'beta/beta/__init__.py': '',
      'beta/tests/test_x.py': 'def test(): pass\n',
      'beta/.venv/lib/x.py': '',
      'notes/meeting.md':
        '# Sync\n\nAlice Martin: the hub should hold the lease.\nBob Stone: agreed, one writer.\nAlice Martin: ship it on Friday.\nBob Stone: thanks to Carol Diaz for the review.\n',
      'notes/api.md': 'Returns: a value.\nParameters: none.\nReturns: another.\nParameters: some.\n',
    });
    const alpha = join(workspace, 'alpha');
    git(alpha, 'init', '-q');
    git(alpha, 'add', '.');
    git(alpha, '-c', 'user.name=Alice Martin', '-c', 'user.email=alice@example.com', 'commit', '-qm', 'first');
    git(alpha, '-c', 'user.name=dependabot[bot]', '-c', 'user.email=bot@example.com', 'commit', '-q', '--allow-empty', '-m', 'bump');
    git(alpha, '-c', 'user.name=Dev Patel', '-c', 'user.email=dev@example.com', 'commit', '-q', '--allow-empty', '-m', 'second');
  });
  afterAll(async () => palace.cleanup());

  it('sets up ~/.palace (0700) and the palace, proposes wings, rooms and people, declares nothing unattended', async () => {
    const r = parseJson<InitJson>(ok(await palace.run(['init', workspace, '--json'])));
    expect(statSync(palace.stateDir).mode & 0o777).toBe(0o700);
    expect(existsSync(palace.dir)).toBe(true);
    expect(r.projects.map((p) => ({ wing: p.wing, rooms: p.rooms }))).toEqual([
      { wing: 'alpha', rooms: ['docs', 'src', 'general'] },
      { wing: 'beta', rooms: ['beta', 'tests', 'general'] },
    ]);
    expect(r.projects[0]?.markers).toEqual(['.git', 'package.json']);
    const people = Object.fromEntries(r.people.map((p) => [p.name, p.sources.sort()]));
    expect(people).toEqual({ 'Alice Martin': ['git', 'text'], 'Dev Patel': ['git'], 'Bob Stone': ['text'], 'Carol Diaz': ['text'] });
    expect(r.proposal_file.startsWith(join(palace.stateDir, 'init'))).toBe(true);
    expect(r.proposal_written).toBe(true);
    expect(JSON.parse(readFileSync(r.proposal_file, 'utf8'))).toMatchObject({ dir: workspace, projects: r.projects, people: r.people });
    expect(r.declared).toEqual([]);
    expect(r.next).toContain(`palace --palace ${palace.dir} mine ${join(workspace, 'alpha')}`);
    expect(r.next.some((n) => n.includes('--mode convos'))).toBe(true);
    expect(r.next[0]).toContain('--yes');
    // Sub-folders that are no project are named with the reason, and offered as plain folders to mine.
    expect(r.skipped).toEqual([{ path: join(workspace, 'notes'), reason: 'no_marker', why: expect.stringContaining('no project marker') }]);
    expect(r.next.some((n) => n.startsWith(`palace --palace ${palace.dir} mine ${join(workspace, 'notes')} `))).toBe(true);
    const text = ok(await palace.run(['init', workspace])).stdout;
    expect(text).toContain(`skipped ${join(workspace, 'notes')}/  (no project marker`);
  });

  it('proposes the sub-folders of a folder that holds most of a project as its rooms, as mine files them', async () => {
    const app = join(palace.root, 'app');
    writeTree(app, {
      'package.json': '{"name": "app"}',
      'src/api/routes.ts': 'export {};\n',
      'src/api/handlers.ts': 'export {};\n',
      'src/db/schema.ts': 'export {};\n',
      'src/db/migrate.ts': 'export {};\n',
      'docs/intro.md': '# Intro\n',
    });
    const r = parseJson<InitJson>(ok(await palace.run(['init', app, '--json'])));
    expect(r.projects.map((p) => p.rooms)).toEqual([['api', 'db', 'docs', 'general']]);
    expect(r.skipped).toEqual([]);
  });

  it('keeps an existing proposal without --yes; --yes replaces it and declares the rooms', async () => {
    const first = parseJson<InitJson>(ok(await palace.run(['init', workspace, '--json'])));
    const before = readFileSync(first.proposal_file, 'utf8');
    const text = ok(await palace.run(['init', workspace])).stdout;
    expect(text).toContain('kept the existing proposal');
    expect(text).toContain('Next:');
    expect(readFileSync(first.proposal_file, 'utf8')).toBe(before);

    const yes = parseJson<InitJson>(ok(await palace.run(['init', workspace, '--yes', '--json'])));
    expect(yes.proposal_written).toBe(true);
    expect(yes.declared).toHaveLength(6);
    expect(yes.declared.every((d) => d.created)).toBe(true);
    const rooms = parseJson<{ rooms: Array<{ wing: string; room: string; declared: boolean }> }>(ok(await palace.run(['rooms', 'list', '--json'])));
    expect(rooms.rooms.filter((x) => x.declared).map((x) => `${x.wing}/${x.room}`)).toEqual([
      'alpha/docs',
      'alpha/general',
      'alpha/src',
      'beta/beta',
      'beta/general',
      'beta/tests',
    ]);
    const again = parseJson<InitJson>(ok(await palace.run(['init', workspace, '--yes', '--json'])));
    expect(again.declared.some((d) => d.created)).toBe(false);
  });

  it('treats a folder that is itself a project (or holds none) as the one project; refuses a missing folder', async () => {
    const r = parseJson<InitJson>(ok(await palace.run(['init', join(workspace, 'beta'), '--json'])));
    expect(r.projects.map((p) => p.wing)).toEqual(['beta']);
    // No project markers anywhere: the folder itself is proposed, as `palace mine <dir>` would file it.
    const plain = parseJson<InitJson>(ok(await palace.run(['init', join(workspace, 'notes'), '--json'])));
    expect(plain.projects).toEqual([{ path: join(workspace, 'notes'), wing: 'notes', markers: [], rooms: ['general'] }]);
    const missing = await palace.run(['init', join(workspace, 'nope'), '--json']);
    expect(missing.code).toBe(2);
    expect(parseJson<{ error: { code: string } }>(missing).error.code).toBe('input.invalid');
  });

  it('finds names conservatively: speakers taking turns, names after by/with/thanks; not doc headings', () => {
    expect(namesInText('Returns: x\nParameters: y\nReturns: z\nParameters: w\n')).toEqual([]);
    expect(namesInText('Alice: hi\nBob: hello\nAlice: bye\nBob: bye\n')).toEqual(['Alice', 'Bob', 'Alice', 'Bob']);
    expect(namesInText('Alice: one line only\n')).toEqual([]);
    expect(namesInText('Paired with Dana Wu on this; by the way, thanks to Eve.')).toEqual(['Dana Wu', 'Eve']);
  });
});
