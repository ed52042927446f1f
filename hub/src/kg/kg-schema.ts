// The knowledge_graph.sqlite3 schema and its ordered migrations (PRAGMA user_version), the same
// pattern as the logstream's. Only hub/src/kg/ sends SQL to this file.

import type Database from 'better-sqlite3';

type Migration = (db: Database.Database) => void;

/** Ordered migrations: index + 1 is the schema version each one produces. Never edit a shipped one. */
const MIGRATIONS: readonly Migration[] = [
  (db) => {
    db.exec(`
      CREATE TABLE entities (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        type TEXT NOT NULL DEFAULT 'unknown',
        created_at TEXT NOT NULL
      ) STRICT;
      -- valid_from/valid_to keep what the caller said (a date or an instant); from_ts/to_ts are the
      -- comparable instants: to_ts is an exclusive end (a date-only valid_to D ends at D+1 00:00Z).
      CREATE TABLE triples (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        subject_id TEXT NOT NULL REFERENCES entities(id),
        predicate TEXT NOT NULL,
        object_id TEXT NOT NULL REFERENCES entities(id),
        valid_from TEXT,
        valid_to TEXT,
        from_ts TEXT NOT NULL DEFAULT '',
        to_ts TEXT,
        confidence REAL NOT NULL DEFAULT 1.0,
        source_file TEXT,
        source_drawer_id TEXT,
        added_by TEXT,
        created_at TEXT NOT NULL,
        invalidated_at TEXT
      ) STRICT;
      CREATE INDEX triples_subject_idx ON triples(subject_id);
      CREATE INDEX triples_object_idx ON triples(object_id);
      CREATE INDEX triples_predicate_idx ON triples(predicate);
      CREATE INDEX triples_validity_idx ON triples(from_ts, to_ts);
    `);
  },
  // Memory replication (issue 34): the hub a fact was first stated on. NULL = this hub (every fact
  // held before replication existed was stated here).
  (db) => {
    db.exec(`ALTER TABLE triples ADD COLUMN origin TEXT;
      CREATE INDEX triples_subject_predicate_idx ON triples(subject_id, predicate);`);
  },
];

export const KG_SCHEMA_VERSION = MIGRATIONS.length;

/** Brings a KG file to the current schema. Refuses a file written by a newer palace. */
export function migrateKg(db: Database.Database): void {
  const version = (): number => db.pragma('user_version', { simple: true }) as number;
  const check = (current: number): void => {
    if (current > KG_SCHEMA_VERSION)
      throw new Error(`knowledge_graph.sqlite3 has schema version ${current}, newer than this palace understands (${KG_SCHEMA_VERSION}); upgrade palace`);
  };
  check(version());
  if (version() === KG_SCHEMA_VERSION) return;
  db.transaction(() => {
    const current = version();
    check(current);
    for (let v = current; v < KG_SCHEMA_VERSION; v++) MIGRATIONS[v]?.(db);
    db.pragma(`user_version = ${KG_SCHEMA_VERSION}`);
  }).immediate();
}
