// Parses a unified diff (git diff output) into files, hunks and numbered lines for display. Pure;
// anything it does not recognise is kept as a context line, so no byte of the patch is hidden.

export type DiffLineKind = 'add' | 'del' | 'ctx' | 'note';

export interface DiffLine {
  kind: DiffLineKind;
  text: string;
  oldNo: number | null;
  newNo: number | null;
}

export interface DiffHunk {
  header: string;
  lines: DiffLine[];
}

export interface DiffFile {
  oldPath: string | null;
  newPath: string | null;
  /** Lines before the first hunk (index, mode, rename, binary notes). */
  meta: string[];
  hunks: DiffHunk[];
  added: number;
  removed: number;
}

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

function stripPrefix(path: string): string | null {
  const p = path.replace(/\t.*$/, '').trim();
  if (p === '/dev/null') return null;
  return p.replace(/^[ab]\//, '');
}

function emptyFile(): DiffFile {
  return { oldPath: null, newPath: null, meta: [], hunks: [], added: 0, removed: 0 };
}

/** Files of a unified diff. Hunk line counts decide what belongs to a hunk, so content lines that
 * look like headers (`--- x` removed from a file) are read as content. */
export function parseUnifiedDiff(text: string): DiffFile[] {
  const files: DiffFile[] = [];
  let file: DiffFile | undefined;
  let hunk: DiffHunk | undefined;
  let oldNo = 0;
  let newNo = 0;
  let oldLeft = 0;
  let newLeft = 0;
  const start = (): DiffFile => {
    const f = emptyFile();
    files.push(f);
    return f;
  };
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  for (const line of lines) {
    if (hunk && (oldLeft > 0 || newLeft > 0)) {
      const current = file as DiffFile;
      if (line.startsWith('+')) {
        hunk.lines.push({ kind: 'add', text: line.slice(1), oldNo: null, newNo: newNo++ });
        current.added++;
        newLeft--;
        continue;
      }
      if (line.startsWith('-')) {
        hunk.lines.push({ kind: 'del', text: line.slice(1), oldNo: oldNo++, newNo: null });
        current.removed++;
        oldLeft--;
        continue;
      }
      if (line.startsWith(' ') || line === '') {
        hunk.lines.push({ kind: 'ctx', text: line.slice(1), oldNo: oldNo++, newNo: newNo++ });
        oldLeft--;
        newLeft--;
        continue;
      }
    }
    if (line.startsWith('\\') && hunk) {
      hunk.lines.push({ kind: 'note', text: line, oldNo: null, newNo: null });
      continue;
    }
    const h = HUNK.exec(line);
    if (h) {
      file ??= start();
      hunk = { header: line, lines: [] };
      file.hunks.push(hunk);
      oldNo = Number(h[1]);
      newNo = Number(h[3]);
      oldLeft = h[2] === undefined ? 1 : Number(h[2]);
      newLeft = h[4] === undefined ? 1 : Number(h[4]);
      continue;
    }
    if (line.startsWith('diff --git ')) {
      file = start();
      hunk = undefined;
      const m = /^diff --git a\/(.*) b\/(.*)$/.exec(line);
      file.oldPath = m?.[1] ?? null;
      file.newPath = m?.[2] ?? null;
      continue;
    }
    if (line.startsWith('--- ')) {
      if (!file || file.hunks.length > 0) file = start();
      hunk = undefined;
      file.oldPath = stripPrefix(line.slice(4));
      continue;
    }
    if (line.startsWith('+++ ') && file && file.hunks.length === 0) {
      file.newPath = stripPrefix(line.slice(4));
      continue;
    }
    file ??= start();
    if (hunk) hunk.lines.push({ kind: 'ctx', text: line, oldNo: null, newNo: null });
    else file.meta.push(line);
  }
  return files;
}

/** The path a reader cares about: the new one, or the old one for deletions. */
export function displayPath(file: DiffFile): string {
  return file.newPath ?? file.oldPath ?? '(unnamed)';
}
