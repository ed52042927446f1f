// The logstream.sqlite3 schema and its ordered migrations. Only this folder sends SQL to the log.
// Schema version lives in PRAGMA user_version; each migration runs once, in order, in a transaction.

import type Database from 'better-sqlite3';

import { canonicalEvent, type ChainedEventFields } from '../core/chain.js';
import { ROUTES, ROUTES_DDL, WATERMARK_SQL } from './event-routes.js';
import { GENESIS_CHAIN, nextChain } from './signatures.js';
import { RESERVATIONS_BUILT_SEQ_KEY, RESERVATIONS_DDL } from './reservation-projection.js';
import { BUILT_SEQ_KEY, PROJECTED_SEQ_KEY, TASKS_DDL, TASKS_QUIET_INDEX, TASKS_READY_INDEX, TASKS_STREAM_INDEX } from './task-projection.js';

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
  // Trusted sync (docs/sync-trust.md): every event gets its origin's hash chain value and its position
  // in that origin's log; signed checkpoints of other origins, artifact signatures, the origin keys
  // this hub trusts and per-peer artifact cursors. Events written before this are chained here, in
  // origin_seq order: this hub's own are then signed like any other (checkpoints are signed when
  // served); other origins' stay "unverified" until a checkpoint signed by their origin covers them.
  (db) => {
    db.exec(`
      ALTER TABLE events ADD COLUMN chain BLOB;
      ALTER TABLE events ADD COLUMN origin_pos INTEGER;
      ALTER TABLE artifacts ADD COLUMN sig TEXT;
      CREATE TABLE checkpoints (
        origin_replica TEXT NOT NULL,
        origin_seq INTEGER NOT NULL,
        pos INTEGER NOT NULL,
        chain TEXT NOT NULL,
        sig TEXT NOT NULL,
        PRIMARY KEY (origin_replica, origin_seq)
      ) STRICT;
      CREATE TABLE origin_keys (
        origin_replica TEXT PRIMARY KEY,
        public_key TEXT NOT NULL,
        source TEXT NOT NULL,
        vouched_by TEXT,
        vouch TEXT,
        added_at TEXT NOT NULL
      ) STRICT;
      CREATE TABLE sync_cursors (peer_replica TEXT PRIMARY KEY, artifact_rowid INTEGER NOT NULL) STRICT;
    `);
    const sha = db.prepare('SELECT sha256 FROM artifacts WHERE id = ?').pluck();
    const update = db.prepare('UPDATE events SET chain = ?, origin_pos = ? WHERE seq = ?');
    let origin: string | null = null;
    let chain: Buffer = GENESIS_CHAIN;
    let pos = 0;
    const rows = db
      .prepare(
        `SELECT seq, id, type, stream, room, from_agent, to_agent, correlation_id, branch, base_commit, status,
                artifact_ids, body, metadata_json, created_at, origin_replica, origin_seq, hlc
           FROM events ORDER BY origin_replica, origin_seq`,
      )
      .iterate() as IterableIterator<Record<string, unknown>>;
    const updates: Array<[Buffer, number, number]> = [];
    for (const row of rows) {
      if (row.origin_replica !== origin) {
        origin = row.origin_replica as string;
        chain = GENESIS_CHAIN;
        pos = 0;
      }
      const artifactIds = JSON.parse(row.artifact_ids as string) as string[];
      const shas = artifactIds.map((id) => (sha.get(id) as string | undefined) ?? '');
      chain = nextChain(chain, canonicalEvent({ ...(row as unknown as ChainedEventFields), artifact_ids: artifactIds }, shas));
      pos++;
      updates.push([chain, pos, row.seq as number]);
    }
    for (const [c, p, seq] of updates) update.run(c, p, seq);
  },
  // The task projection (task-projection.ts): one row per correlation_id, kept in step with every
  // append. A log that already holds events is marked unbuilt from seq 0; it is then built in slices
  // (Logstream.ensureTasks) rather than here, so opening a big palace stays quick.
  (db) => {
    db.exec(TASKS_DDL);
    if (db.prepare('SELECT 1 FROM events LIMIT 1').get() !== undefined)
      db.prepare(`INSERT INTO meta (key, value) VALUES ('${BUILT_SEQ_KEY}', '0')`).run();
  },
  // Coordination reads that do not grow with the log (docs/coordination.md): the reservations not
  // released (reservation-projection.ts), kept with every append like the task table and built in slices
  // for a log that already has events; and an index for the ready queue (open tasks of one addressee).
  (db) => {
    db.exec(RESERVATIONS_DDL);
    // status first: the planner then prefers it to tasks_status_idx for "status = 'open' AND to_agent IN".
    db.exec('CREATE INDEX tasks_ready_idx ON tasks(status, to_agent, created_at, first_seq)');
    if (db.prepare('SELECT 1 FROM events LIMIT 1').get() !== undefined)
      db.prepare(`INSERT INTO meta (key, value) VALUES ('${RESERVATIONS_BUILT_SEQ_KEY}', '0')`).run();
  },
  // "Quiet since" reads (palace_tasks last_event_before; the dashboard's stalled count: claimed with no
  // event for 10 minutes) counted on an index range instead of every task of the status.
  (db) => {
    db.exec('CREATE INDEX IF NOT EXISTS tasks_quiet_idx ON tasks(status, last_event_at)');
  },
  // Incremental task projection (issue 30): each row keeps the reducer's between-event memory (fold_json),
  // so an append applies its event to the row instead of folding the task's whole history again. Rows
  // from before have none: each is re-projected once, at its task's next event. The stream filter of
  // palace_tasks gets its own index (a stream's tasks in first_seq order; touched only when a task is new).
  // The ready queue's index holds open tasks only (it is read for status = 'open' alone), so a task's
  // moves between claimed, ready and done no longer rewrite it.
  (db) => {
    // Like the index statements, safe to run on a file that already has it (a copy restored over a newer one).
    const columns = (db.pragma('table_info(tasks)') as Array<{ name: string }>).map((c) => c.name);
    if (!columns.includes('fold_json')) db.exec('ALTER TABLE tasks ADD COLUMN fold_json TEXT');
    db.exec(`
      CREATE INDEX IF NOT EXISTS ${TASKS_STREAM_INDEX};
      DROP INDEX IF EXISTS tasks_ready_idx;
      CREATE INDEX ${TASKS_READY_INDEX};
    `);
  },
  // Fewer index pages per append (issue 30): an event without a recipient or a task has no entry in the
  // to_agent or correlation index (no read looks for a NULL there: every read names its values), and
  // the quiet index holds claimed tasks only (the stalled count), so a new task, and moves between
  // other statuses, leave it alone. Rebuilding the two event indexes reads the log once (~0.3 s at 100k events, loaded machine).
  (db) => {
    db.exec(`
      DROP INDEX IF EXISTS events_to_agent_idx;
      CREATE INDEX events_to_agent_idx ON events(to_agent, seq) WHERE to_agent IS NOT NULL;
      DROP INDEX IF EXISTS events_correlation_idx;
      CREATE INDEX events_correlation_idx ON events(correlation_id, seq) WHERE correlation_id IS NOT NULL;
      DROP INDEX IF EXISTS tasks_quiet_idx;
      CREATE INDEX ${TASKS_QUIET_INDEX};
    `);
  },
  // The task projection lags its log (issue 30, task-catch-up.ts): appends commit their events only and
  // the table follows in batches, up to a watermark that moves in the batch's transaction. Until now it
  // was kept in every append's transaction, so it holds every event there is (OR IGNORE: a copy
  // restored over a newer file keeps the watermark it had).
  (db) => {
    db.prepare(`INSERT OR IGNORE INTO meta (key, value) VALUES ('${PROJECTED_SEQ_KEY}', (SELECT coalesce(max(seq), 0) FROM events))`).run();
  },
  // The routing indexes leave the append (issue 30, event-routes.ts): the events of a recipient and of a
  // task are found in two side tables the task projection writes in its batches, under its watermark.
  // They are filled here for every event up to the watermark (those above it are pending: the next
  // batch adds them), each in one ordered INSERT that reads the old index in its key order, so each
  // table is written leaf after leaf; then the indexes go. 1.7-1.9 s at 1M events (docs/tasks.md).
  (db) => {
    db.exec(ROUTES_DDL);
    for (const r of ROUTES) {
      db.prepare(`DELETE FROM ${r.table}`).run(); // a file restored over a newer one may hold rows
      db.prepare(
        `INSERT INTO ${r.table} (${r.column}, seq) SELECT ${r.column}, seq FROM events
          WHERE ${r.column} IS NOT NULL AND seq <= ${WATERMARK_SQL} ORDER BY ${r.column}, seq`,
      ).run();
    }
    db.exec('DROP INDEX IF EXISTS events_to_agent_idx; DROP INDEX IF EXISTS events_correlation_idx;');
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
    // Minted only when a migration asks for it (the first one), never once per migration.
    let minted: string | undefined;
    const ctx = {
      get replicaId(): string {
        return (minted ??= mintReplicaId());
      },
    };
    for (let v = current; v < SCHEMA_VERSION; v++) MIGRATIONS[v]?.(db, ctx);
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}
