// Reads the schema version of a palace's logstream.sqlite3 without migrating or creating it (for
// `palace migrate --dry-run`). Migrating is StoreCore's job when it opens the file.

import { join } from 'node:path';

import { LOGSTREAM_FILE } from '../core/palace-files.js';
import { readUserVersion } from '../sqlite-user-version.js';

/** PRAGMA user_version of the log; null when the file does not exist yet. */
export function readLogSchemaVersion(palacePath: string): number | null {
  return readUserVersion(join(palacePath, LOGSTREAM_FILE));
}
