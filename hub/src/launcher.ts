// The command that runs `palace` from this checkout or install, with no PATH assumption: the absolute
// node executable and the absolute bin/palace.js. Every printed client configuration uses it, so a
// config pasted into Claude Code, Codex or Cursor works whatever the client's PATH (nvm, a GUI app).

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import type { StdioCommand } from './client-config.js';

export type { StdioCommand };

/** bin/palace.js beside this module: compiled (dist/hub/src) or run from source (hub/src). */
export function launcherPath(): string | undefined {
  for (const rel of ['../../../bin/palace.js', '../../bin/palace.js']) {
    const path = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(path)) return path;
  }
  return undefined;
}

/** `node /abs/bin/palace.js` as this process runs it (under Electron: its binary as node). */
export function stdioCommand(execPath: string = process.execPath, electron = process.versions.electron !== undefined): StdioCommand | undefined {
  const launcher = launcherPath();
  if (!launcher) return undefined;
  return { command: execPath, args: [launcher], ...(electron ? { env: { ELECTRON_RUN_AS_NODE: '1' } } : {}) };
}
