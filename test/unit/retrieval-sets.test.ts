import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { describe, expect, it } from 'vitest';

import { codeRelevant, convoRelevant, hitLines, loadCodeSet, loadConvoSet, loadPackageSet, packageDir, packageSetFiles, REPO_ROOT } from '../../bench/retrieval-sets.js';

const FILE = ['// header', 'export function a() {', '  return 1;', '}', '', 'export function b() {', '  return 2;', '}', ''].join('\n');
const read = (path: string): string | undefined => (path === 'src/x.ts' ? FILE : undefined);

function commitAvailable(commit: string): boolean {
  try {
    execFileSync('git', ['cat-file', '-e', `${commit}^{commit}`], { cwd: REPO_ROOT, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('retrieval bench sets', () => {
  it('has at least 100 well-formed questions in each set, every conversation truth a session file', () => {
    const code = loadCodeSet();
    const convos = loadConvoSet();
    expect(code.questions.length).toBeGreaterThanOrEqual(100);
    expect(convos.questions.length).toBeGreaterThanOrEqual(100);
  });

  it('points every code truth at an existing line range of the pinned commit', () => {
    const code = loadCodeSet();
    if (!commitAvailable(code.commit)) return; // a shallow clone: the bench refuses to run there too
    const lengths = new Map<string, number>();
    for (const q of code.questions)
      for (const t of q.truth) {
        if (!lengths.has(t.path))
          lengths.set(t.path, execFileSync('git', ['show', `${code.commit}:${t.path}`], { cwd: REPO_ROOT, maxBuffer: 1 << 26 }).toString('utf8').split('\n').length);
        expect(t.lines[1], `${q.id} ${t.path}`).toBeLessThanOrEqual(lengths.get(t.path) ?? 0);
      }
  });

  it('has a second code set of at least 60 questions over an installed package, every truth an existing line range', () => {
    const files = packageSetFiles();
    expect(files.length).toBeGreaterThanOrEqual(1);
    for (const file of files) {
      const set = loadPackageSet(file);
      expect(set.questions.length, set.name).toBeGreaterThanOrEqual(60);
      const dir = packageDir(set);
      for (const q of set.questions)
        for (const t of q.truth) {
          const lines = readFileSync(join(dir, t.path), 'utf8').split('\n').length;
          expect(t.lines[1], `${q.id} ${t.path}`).toBeLessThanOrEqual(lines);
        }
    }
  });

  it('places a hit by its verbatim content, even with a header line a chunker prepended', () => {
    expect(hitLines({ content: 'export function b() {\n  return 2;\n}', source_file: '/r/src/x.ts' }, read, 'src/x.ts')).toEqual([6, 8]);
    expect(hitLines({ content: '// src/x.ts b()\nexport function b() {\n  return 2;', source_file: '/r/src/x.ts' }, read, 'src/x.ts')).toEqual([6, 7]);
    expect(hitLines({ content: 'not in the file', source_file: '/r/src/x.ts' }, read, 'src/x.ts')).toBeUndefined();
    expect(hitLines({ content: 'x', source_file: '/r/src/x.ts', location: { path: 'src/x.ts', line_start: 2, line_end: 4 } }, read, 'src/x.ts')).toEqual([2, 4]);
  });

  it('judges a code hit relevant only in the truth file and overlapping the truth lines', () => {
    const hitB = { content: 'export function b() {\n  return 2;\n}', source_file: '/r/src/x.ts' };
    expect(codeRelevant(hitB, '/r', [{ path: 'src/x.ts', lines: [7, 7] }], read)).toBe(true);
    expect(codeRelevant(hitB, '/r', [{ path: 'src/x.ts', lines: [2, 4] }], read)).toBe(false);
    expect(codeRelevant(hitB, '/r', [{ path: 'src/y.ts', lines: [6, 8] }], read)).toBe(false);
    expect(codeRelevant({ ...hitB, source_file: '/elsewhere/src/x.ts' }, '/r', [{ path: 'src/x.ts', lines: [6, 8] }], read)).toBe(false);
  });

  it('judges a conversation hit by its session file', () => {
    expect(convoRelevant({ content: 'x', source_file: '/tmp/c/s07-2025-02-03.txt' }, ['s07-2025-02-03'])).toBe(true);
    expect(convoRelevant({ content: 'x', source_file: '/tmp/c/s08-2025-02-05.txt' }, ['s07-2025-02-03'])).toBe(false);
  });
});
