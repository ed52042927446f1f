// Reads PRAGMA user_version (the schema version every palace SQLite store keeps) of a file without
// creating, migrating or writing it. Each store owns its own file; this only opens it read-only.

import Database from 'better-sqlite3';

/** The file's schema version; null when it does not exist or cannot be opened. */
export function readUserVersion(file: string): number | null {
  let db: Database.Database;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
  } catch {
    return null;
  }
  try {
    return db.pragma('user_version', { simple: true }) as number;
  } finally {
    db.close();
  }
}
