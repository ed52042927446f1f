// The diff check `palace patch apply` runs before git sees a patch (issue 28): paths under .git,
// paths leaving the repository, and symlinks pointing out of it or into .git are named; ordinary
// changes (a symlink inside the repository included) pass.

import { describe, expect, it } from 'vitest';

import { patchPathProblems } from '../../hub/src/core/patch-paths.js';

const file = (path: string, added = 'x'): string =>
  [`diff --git a/${path} b/${path}`, 'new file mode 100644', '--- /dev/null', `+++ b/${path}`, '@@ -0,0 +1 @@', `+${added}`].join('\n');
const link = (path: string, target: string): string =>
  [`diff --git a/${path} b/${path}`, 'new file mode 120000', '--- /dev/null', `+++ b/${path}`, '@@ -0,0 +1 @@', `+${target}`, '\\ No newline at end of file'].join('\n');

describe('patchPathProblems', () => {
  it('passes ordinary changes and a symlink that stays inside the repository', () => {
    expect(patchPathProblems(`${file('src/a.ts')}\n${link('docs/current', '../src/a.ts')}\n`)).toEqual([]);
    expect(patchPathProblems(file('src/.github/workflow.yml'))).toEqual([]);
  });

  it('names a path under .git, at the top or nested, whatever its case', () => {
    expect(patchPathProblems(file('.git/hooks/pre-commit', '#!/bin/sh'))).toEqual([expect.stringContaining('.git/hooks/pre-commit: inside a .git directory')]);
    expect(patchPathProblems(file('vendor/lib/.GIT/config'))).toHaveLength(1);
  });

  it('names paths that leave the repository', () => {
    expect(patchPathProblems(file('../outside.txt'))).toEqual([expect.stringContaining('outside the repository')]);
    expect(patchPathProblems(['--- a/x', '+++ /etc/passwd', '@@ -1 +1 @@', '-a', '+b'].join('\n'))).toEqual([expect.stringContaining('/etc/passwd')]);
  });

  it('names symlinks into .git or out of the repository', () => {
    expect(patchPathProblems(link('hooklink', '.git/hooks'))).toEqual(['hooklink: a symlink to .git/hooks, inside a .git directory']);
    expect(patchPathProblems(link('a/b/up', '../../../etc'))).toEqual(['a/b/up: a symlink to ../../../etc, outside the repository']);
    expect(patchPathProblems(link('abs', '/home/me/.ssh'))).toEqual(['abs: a symlink to /home/me/.ssh, outside the repository']);
  });

  it('reads the second file of a diff without diff --git headers (hunk lines are counted)', () => {
    const diff = ['--- a/ok.txt', '+++ b/ok.txt', '@@ -1,2 +1,2 @@', ' keep', '-old', '+new', '--- a/x', '+++ b/.git/config', '@@ -1 +1 @@', '-a', '+b', ''].join('\n');
    expect(patchPathProblems(diff)).toEqual(['.git/config: inside a .git directory']);
  });

  it('is not fooled by hunk content that looks like a header', () => {
    const diff = ['diff --git a/notes.md b/notes.md', '--- a/notes.md', '+++ b/notes.md', '@@ -1 +1,2 @@', ' title', '+++ b/.git/not-a-header', ''].join('\n');
    expect(patchPathProblems(diff)).toEqual([]);
  });
});
