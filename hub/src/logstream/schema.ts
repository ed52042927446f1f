// The logstream.sqlite3 schema and its ordered migrations. Only this folder sends SQL to the log.
// Schema version lives in PRAGMA user_version; each migration runs once, in order, in a transaction.

import type Database from 'better-sqlite3';

type Migration = (db: Database.Database, ctx: { replicaId: string }) => void;

/** Ordered migrations: index + 1 is the schema version each one produces. Never edit a shipped one. */
const MIGRATIONS: readonly Migration[] = [
  (db, { replicaId }) => {
    db.exec(`
      CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
      CREATE TABLE events (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        type TEXT NOT NULL,
        stream TEXT NOT NULL,
        room TEXT NOT NULL,
        from_agent TEXT NOT NULL,
        to_agent TEXT,
        correlation_id TEXT,
        branch TEXT,
        base_commit TEXT,
        status TEXT,
        artifact_ids TEXT NOT NULL DEFAULT '[]',
        body TEXT NOT NULL DEFAULT '',
        metadata_json TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL,
        origin_replica TEXT NOT NULL,
        origin_seq INTEGER NOT NULL,
        hlc TEXT NOT NULL
      ) STRICT;
      CREATE UNIQUE INDEX events_origin_idx ON events(origin_replica, origin_seq);
      CREATE INDEX events_to_agent_idx ON events(to_agent, seq);
      CREATE INDEX events_correlation_idx ON events(correlation_id, seq);
      -- Few indexes on purpose: every index is another page written per commit. type and
      -- created_at filters ride on a seq-ordered scan from the cursor.
      CREATE TABLE artifacts (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        size_bytes INTEGER NOT NULL,
        content TEXT NOT NULL,
        created_by TEXT NOT NULL,
        created_at TEXT NOT NULL,
        metadata_json TEXT NOT NULL DEFAULT '{}',
        origin_replica TEXT NOT NULL
      ) STRICT;
      CREATE INDEX artifacts_sha256_idx ON artifacts(sha256);
      CREATE TABLE event_artifacts (
        event_seq INTEGER NOT NULL REFERENCES events(seq),
        artifact_id TEXT NOT NULL REFERENCES artifacts(id),
        position INTEGER NOT NULL,
        PRIMARY KEY (event_seq, artifact_id)
      ) STRICT;
      CREATE INDEX event_artifacts_artifact_idx ON event_artifacts(artifact_id);
    `);
    db.prepare(`INSERT INTO meta(key, value) VALUES ('replica_id', ?)`).run(replicaId);
  },
];

export const SCHEMA_VERSION = MIGRATIONS.length;

/** Brings a log file to the current schema. Refuses a file written by a newer palace. */
export function migrate(db: Database.Database, mintReplicaId: () => string): void {
  const version = (): number => db.pragma('user_version', { simple: true }) as number;
  const check = (current: number): void => {
    if (current > SCHEMA_VERSION)
      throw new Error(
        `logstream.sqlite3 has schema version ${current}, newer than this palace understands (${SCHEMA_VERSION}); upgrade palace`,
      );
  };
  check(version());
  if (version() === SCHEMA_VERSION) return;
  // One immediate transaction, re-reading the version inside it, so two processes opening a
  // fresh palace at once cannot both run the same migration.
  db.transaction(() => {
    const current = version();
    check(current);
    for (let v = current; v < SCHEMA_VERSION; v++) MIGRATIONS[v]?.(db, { replicaId: mintReplicaId() });
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}
