// Watches the hub registration file and peers.json with chokidar, so the tray and the dashboard
// follow a hub restarted on another port and show peer changes at once. Plain Node; no electron.

import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

import { watch, type FSWatcher } from 'chokidar';

import { dialUrl, type Registration } from '../hub/src/registration.js';

export interface HubFileWatcherOptions {
  registrationPath: string;
  peersPath: string;
  /** Reads the live registration (file present and its pid alive). */
  readRegistration: () => Registration | undefined;
  /** The hub moved: a new pid or address, or it went away (undefined). */
  onHubMoved(registration: Registration | undefined): void;
  /** peers.json was created, changed or removed. */
  onPeersChanged(): void;
  /** Wait this long after a peers.json event for more (an editor saving in steps); default 100 ms. */
  peersDebounceMs?: number;
}

export interface HubFileWatcher {
  close(): Promise<void>;
}

function key(r: Registration | undefined): string {
  return r ? `${r.pid}@${dialUrl(r)}` : 'none';
}

export async function watchHubFiles(options: HubFileWatcherOptions): Promise<HubFileWatcher> {
  const regPath = resolve(options.registrationPath);
  const peersPath = resolve(options.peersPath);
  const dirs = [...new Set([dirname(regPath), dirname(peersPath)])];
  for (const dir of dirs) mkdirSync(dir, { recursive: true, mode: 0o700 });
  let last = key(options.readRegistration());
  let peersTimer: NodeJS.Timeout | undefined;

  const watcher: FSWatcher = watch(dirs, {
    ignoreInitial: true,
    depth: 0,
    // Only the two files matter; the palace directory also holds the busy SQLite files.
    ignored: (path: string) => {
      const p = resolve(path);
      return !dirs.includes(p) && p !== regPath && p !== peersPath;
    },
  });
  watcher.on('all', (_event, path) => {
    const p = resolve(path);
    if (p === regPath) {
      const reg = options.readRegistration();
      const k = key(reg);
      if (k !== last) {
        last = k;
        options.onHubMoved(reg);
      }
    } else if (p === peersPath) {
      clearTimeout(peersTimer);
      peersTimer = setTimeout(() => options.onPeersChanged(), options.peersDebounceMs ?? 100);
    }
  });
  await new Promise<void>((ready) => watcher.once('ready', () => ready()));
  return {
    async close() {
      clearTimeout(peersTimer);
      await watcher.close();
    },
  };
}
