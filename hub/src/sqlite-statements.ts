// The prepared-statement cache every palace SQLite store keeps: SQL text -> better-sqlite3 Statement,
// prepared on first use and reused for the life of the connection.

import type Database from 'better-sqlite3';

/** A statement by its SQL text, prepared on `db` the first time that text is asked for. */
export type StatementCache = (sql: string) => Database.Statement;

/** A cache of prepared statements for one connection (statements built from filters get one entry per shape). */
export function statementCache(db: Database.Database): StatementCache {
  const statements = new Map<string, Database.Statement>();
  return (sql) => {
    let s = statements.get(sql);
    if (!s) {
      s = db.prepare(sql);
      statements.set(sql, s);
    }
    return s;
  };
}
