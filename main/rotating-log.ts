// An append-only log file that rotates by size: hub.log, hub.log.1 … hub.log.<keep>. Synchronous
// writes (a hub's stderr is low-volume); never throws into the caller: a failed write is dropped.

import { closeSync, existsSync, mkdirSync, openSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

export interface RotatingLog {
  readonly path: string;
  write(chunk: string | Buffer): void;
  close(): void;
}

export interface RotatingLogOptions {
  path: string;
  /** Rotate when the file would grow past this (default 5 MiB). */
  maxBytes?: number;
  /** Older files kept (default 3). */
  keep?: number;
}

export function createRotatingLog(options: RotatingLogOptions): RotatingLog {
  const { path } = options;
  const maxBytes = options.maxBytes ?? 5 * 1024 * 1024;
  const keep = options.keep ?? 3;
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  let fd: number | undefined = openSync(path, 'a', 0o600);
  let size = statSync(path).size;

  const rotate = (): void => {
    if (fd !== undefined) closeSync(fd);
    rmSync(`${path}.${keep}`, { force: true });
    for (let i = keep - 1; i >= 1; i--)
      if (existsSync(`${path}.${i}`)) renameSync(`${path}.${i}`, `${path}.${i + 1}`);
    renameSync(path, `${path}.1`);
    fd = openSync(path, 'a', 0o600);
    size = 0;
  };

  return {
    path,
    write(chunk) {
      if (fd === undefined) return;
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
      try {
        if (size > 0 && size + bytes.length > maxBytes) rotate();
        writeSync(fd as number, bytes);
        size += bytes.length;
      } catch {
        // a full disk or a vanished directory must not take the tray down
      }
    },
    close() {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
  };
}
