// Atomic small-file writes (rooms.json, the mined-files manifest, …): write a temporary file beside
// the target, then rename it over. A failed write (a full disk) removes its temporary file.

import { renameSync, rmSync, writeFileSync } from 'node:fs';

/** Writes `text` to `path` atomically; on failure nothing changes and no `<path>.<pid>.tmp` is left. */
export function writeFileAtomic(path: string, text: string, mode = 0o600): void {
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, text, { mode });
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}
