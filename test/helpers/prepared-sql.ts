// The SQL of every statement a connection prepares while a function runs: lets a test explain the
// query plan of a statement exactly as the store builds it.
import type Database from 'better-sqlite3';

/** Records the SQL of every statement prepared on `db` while `fn` runs. */
export function preparedDuring(db: Database.Database, fn: () => unknown): string[] {
  const seen: string[] = [];
  const prepare = db.prepare.bind(db);
  db.prepare = ((sql: string) => {
    seen.push(sql);
    return prepare(sql);
  }) as typeof db.prepare;
  try {
    fn();
  } finally {
    db.prepare = prepare as typeof db.prepare;
  }
  return seen;
}
