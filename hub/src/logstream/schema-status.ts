// Reads the schema version of a palace's logstream.sqlite3 without migrating or creating it (for
// `palace migrate --dry-run`). Migrating is SqliteEventStore's job when it opens the file.

import { join } from 'node:path';
import Database from 'better-sqlite3';

import { LOGSTREAM_FILE } from './logstream.js';

/** PRAGMA user_version of the log; null when the file does not exist yet. */
export function readLogSchemaVersion(palacePath: string): number | null {
  let db: Database.Database;
  try {
    db = new Database(join(palacePath, LOGSTREAM_FILE), { readonly: true, fileMustExist: true });
  } catch {
    return null;
  }
  try {
    return db.pragma('user_version', { simple: true }) as number;
  } finally {
    db.close();
  }
}
