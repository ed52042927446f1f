// What a unified diff would touch, checked before `palace patch apply` runs git: no path under a
// `.git` directory, no path leaving the repository, and no symlink whose target leaves it or points
// into `.git` (a planted `hooklink -> .git/hooks` is how a patch turns into code execution). Pure.

const SYMLINK_MODE = '120000';

/** A path from a diff header: quotes and the a/ b/ prefix removed; null for /dev/null. */
function headerPath(raw: string): string | null {
  let p = raw.trim();
  const tab = p.indexOf('\t');
  if (tab >= 0) p = p.slice(0, tab);
  if (p.startsWith('"') && p.endsWith('"')) p = p.slice(1, -1).replace(/\\(.)/g, '$1');
  if (p === '/dev/null') return null;
  return p.replace(/^[ab]\//, '');
}

/** Normalises a repository-relative path; null when it is absolute or climbs out of the repository. */
function inside(path: string): string[] | null {
  if (path.startsWith('/') || /^[A-Za-z]:[\\/]/.test(path)) return null;
  const out: string[] = [];
  for (const part of path.split(/[\\/]+/)) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (out.length === 0) return null;
      out.pop();
    } else out.push(part);
  }
  return out;
}

const touchesGit = (parts: readonly string[]): boolean => parts.some((p) => p.toLowerCase() === '.git');

/** Every reason this diff is unsafe to apply to a repository (empty when it is safe). */
export function patchPathProblems(diff: string): string[] {
  const problems = new Set<string>();
  const checkPath = (path: string | null): void => {
    if (path === null) return;
    const parts = inside(path);
    if (parts === null) problems.add(`${path}: outside the repository`);
    else if (touchesGit(parts)) problems.add(`${path}: inside a .git directory`);
  };
  let file: string | null = null;
  let symlink = false;
  let inHunk = false;
  /** Lines of the current hunk still to come (old side, new side), from its @@ header. */
  let left = { old: 0, new: 0 };
  const target: string[] = [];
  const endFile = (): void => {
    if (file !== null && symlink && target.length > 0) {
      const link = target.join('');
      const dir = file.split('/').slice(0, -1).join('/');
      const parts = link.startsWith('/') ? null : inside(dir ? `${dir}/${link}` : link);
      if (parts === null) problems.add(`${file}: a symlink to ${link}, outside the repository`);
      else if (touchesGit(parts)) problems.add(`${file}: a symlink to ${link}, inside a .git directory`);
    }
    file = null;
    symlink = false;
    inHunk = false;
    target.length = 0;
  };
  for (const line of diff.split('\n')) {
    if (line.startsWith('diff --git ')) {
      endFile();
      const m = /^diff --git (?:"?a\/)(.*?)"? (?:"?b\/)(.*?)"?$/.exec(line);
      if (m) {
        checkPath(m[1] ?? null);
        checkPath(m[2] ?? null);
        file = m[2] ?? null;
      }
      continue;
    }
    if (!inHunk) {
      if (line.startsWith('--- ')) {
        checkPath(headerPath(line.slice(4)));
        continue;
      }
      if (line.startsWith('+++ ')) {
        const p = headerPath(line.slice(4));
        checkPath(p);
        if (p !== null) file = p;
        continue;
      }
      const rename = /^(rename|copy) (from|to) (.*)$/.exec(line);
      if (rename) {
        checkPath(headerPath(rename[3] ?? ''));
        continue;
      }
      if (/^(new file mode|new mode|index [0-9a-f]+\.\.[0-9a-f]+) 120000$/.test(line)) symlink = true;
    }
    const hunk = /^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@/.exec(line);
    if (hunk) {
      inHunk = true;
      left = { old: Number(hunk[1] ?? 1), new: Number(hunk[2] ?? 1) };
      continue;
    }
    if (!inHunk) continue;
    // Count the hunk's lines, so the next file's ---/+++ header (with no diff --git line) is read as one.
    if (line.startsWith('+')) {
      left.new -= 1;
      // The target of a symlink is its (only) added line.
      if (symlink) target.push(line.slice(1));
    } else if (line.startsWith('-')) left.old -= 1;
    else if (line.startsWith(' ') || line === '') {
      left.old -= 1;
      left.new -= 1;
    }
    if (left.old <= 0 && left.new <= 0) inHunk = false;
  }
  endFile();
  return [...problems];
}

/** The symlink mode in a diff's header lines (exported for the message naming the rule). */
export const PATCH_SYMLINK_MODE = SYMLINK_MODE;
