// Splits concatenated transcript files ("mega-files") into one file per session, so each session is
// mined (and re-mined) on its own. JSONL splits on the session id; text on session banner lines.

import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';

import { listFiles } from './walk.js';

const SPLITTABLE: ReadonlySet<string> = new Set(['.jsonl', '.txt', '.md']);
/** A line that opens a new session in a text transcript (Claude Code banner, exported headers). */
const TEXT_BANNER = /^(?:╭─+|Claude Code v\d|={3,}\s*session\b|#{1,2}\s*session\b|session(?:\s+id)?:\s*\S)/i;

export interface SplitOptions {
  outputDir?: string;
  minSessions: number;
  dryRun: boolean;
}

export interface SplitReport {
  dry_run: boolean;
  min_sessions: number;
  files: Array<{ file: string; sessions: string[]; backup?: string }>;
}

function sessionOf(line: string): string | undefined {
  try {
    const v = JSON.parse(line) as { sessionId?: unknown; session_id?: unknown; type?: unknown; payload?: { id?: unknown } };
    if (typeof v.sessionId === 'string') return v.sessionId;
    if (typeof v.session_id === 'string') return v.session_id;
    if (v.type === 'session_meta' && typeof v.payload?.id === 'string') return v.payload.id;
  } catch {
    // not JSON: belongs to the current session
  }
  return undefined;
}

/** The sessions of one file's text, in order (one element: nothing to split). */
export function sessionsOf(file: string, text: string): string[] {
  const lines = text.split('\n');
  const parts: string[][] = [];
  if (extname(file) === '.jsonl') {
    let current: string | undefined;
    for (const line of lines) {
      if (!line.trim()) continue;
      const id = sessionOf(line);
      if (parts.length === 0 || (id !== undefined && id !== current)) {
        if (id !== undefined) current = id;
        if (parts.length === 0 || id !== undefined) parts.push([]);
      }
      parts.at(-1)?.push(line);
    }
    return parts.map((p) => p.join('\n') + '\n');
  }
  for (const line of lines) {
    if (parts.length === 0 || (TEXT_BANNER.test(line) && (parts.at(-1)?.some((l) => l.trim()) ?? false))) parts.push([]);
    parts.at(-1)?.push(line);
  }
  return parts.map((p) => p.join('\n').trim() + '\n').filter((p) => p.trim());
}

export function splitTranscripts(root: string, options: SplitOptions): SplitReport {
  const report: SplitReport = { dry_run: options.dryRun, min_sessions: options.minSessions, files: [] };
  for (const file of listFiles(root, { extensions: SPLITTABLE, gitignore: false })) {
    const sessions = sessionsOf(file, readFileSync(file, 'utf8'));
    if (sessions.length < Math.max(2, options.minSessions)) continue;
    const ext = extname(file);
    const stem = basename(file, ext);
    const outDir = options.outputDir ?? dirname(file);
    const names = sessions.map((_s, i) => join(outDir, `${stem}.session-${String(i + 1).padStart(3, '0')}${ext}`));
    const entry: SplitReport['files'][number] = { file, sessions: names };
    if (!options.dryRun) {
      mkdirSync(outDir, { recursive: true });
      sessions.forEach((s, i) => writeFileSync(names[i] ?? '', s));
      // Beside the original, the mega-file is kept under a name no mine reads, so it is not mined twice.
      if (!options.outputDir) {
        const backup = `${file}.mega_backup`;
        if (!existsSync(backup)) renameSync(file, backup);
        entry.backup = backup;
      }
    }
    report.files.push(entry);
  }
  return report;
}
