// The watch cursor file: `{"cursor": <event id or null>, "updated_at", "agent"?}`, written
// atomically (temp file + rename). A corrupt file is reported, never trusted, never silently skipped.

import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export type WatchState =
  | { kind: 'absent' }
  | { kind: 'ok'; cursor: string }
  | { kind: 'empty' }
  | { kind: 'corrupt'; reason: string };

/** `~/.palace/<dir>/<agent>.json` (dir `watch` by default), with `_` doubled and `:`, `/`, `\` turned into `_`. */
export function defaultStatePath(home: string, agent: string, dir = 'watch'): string {
  const safe = agent.replace(/_/g, '__').replace(/[:/\\]/g, '_');
  return join(home, dir, `${safe}.json`);
}

export function readState(path: string): WatchState {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'absent' };
    return { kind: 'corrupt', reason: (err as Error).message };
  }
  try {
    const value = JSON.parse(text) as unknown;
    if (!value || typeof value !== 'object' || Array.isArray(value) || !('cursor' in value))
      return { kind: 'corrupt', reason: 'not an object with a "cursor" key' };
    const cursor = (value as { cursor: unknown }).cursor;
    if (cursor === null) return { kind: 'empty' };
    if (typeof cursor === 'string' && cursor.length > 0) return { kind: 'ok', cursor };
    return { kind: 'corrupt', reason: '"cursor" is neither an event id nor null' };
  } catch (err) {
    return { kind: 'corrupt', reason: `not valid JSON (${(err as Error).message})` };
  }
}

export function writeState(path: string, cursor: string | null, agent: string | undefined, now = new Date()): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.tmp`;
  const body = { cursor, updated_at: now.toISOString().slice(0, 19) + 'Z', ...(agent ? { agent } : {}) };
  writeFileSync(tmp, JSON.stringify(body) + '\n', { mode: 0o600 });
  renameSync(tmp, path);
}
