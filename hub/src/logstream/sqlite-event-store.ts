// The SQLite EventStore over `<palace>/logstream.sqlite3`: the only code that talks SQL to the log.
// WAL mode; each append batch is one transaction; append order is the INTEGER PRIMARY KEY `seq`.

import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';

import { HubError, toHubError } from '../errors.js';
import { formatHlc, observe, tick, type HlcState } from '../core/hlc.js';
import { REPLICA_ID_PATTERN } from '../core/ids.js';
import type { Artifact, ArtifactMeta, EventPage, EventQuery, LogEvent, NewArtifact, NewEvent } from '../core/types.js';
import {
  checkRemoteArtifact,
  remoteEventRecord,
  type ApplyResult,
  type RemoteEventRecord,
  type ReplicatedArtifact,
  type ReplicatedEvent,
  type VersionVector,
} from '../core/replication.js';
import type { EventStore } from './event-store.js';
import { MAX_PAGE_EVENTS, type ReplicaStore } from './replica-store.js';
import { migrate } from './schema.js';
import {
  EVENT_COLUMNS,
  parseObject,
  previewEvent,
  toArtifact,
  toEvent,
  toReplicated,
  type ArtifactRow,
  type EventRow,
} from './sqlite-rows.js';

/** How hard a commit waits for the disk; see README "Durability". */
export type Durability = 'normal' | 'full';

export interface SqliteEventStoreOptions {
  durability?: Durability;
  now?: () => number;
  mintReplicaId: () => string;
  readonly?: boolean;
}

export class SqliteEventStore implements EventStore, ReplicaStore {
  readonly replicaId: string;
  readonly path: string;
  readonly db: Database.Database;
  private readonly now: () => number;
  private clock: HlcState;
  private readonly statements = new Map<string, Database.Statement>();
  private localCommits = 0;

  constructor(path: string, options: SqliteEventStoreOptions) {
    this.path = path;
    this.now = options.now ?? Date.now;
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    try {
      this.db = new Database(path, { timeout: 10_000, readonly: options.readonly ?? false });
      this.db.pragma('journal_mode = WAL');
      this.db.pragma(`synchronous = ${options.durability === 'full' ? 'FULL' : 'NORMAL'}`);
      this.db.pragma('foreign_keys = ON');
      if (!options.readonly) migrate(this.db, options.mintReplicaId);
      const row = this.db.prepare(`SELECT value FROM meta WHERE key = 'replica_id'`).get() as
        | { value: string }
        | undefined;
      if (!row) throw new Error('the log has no replica identity (meta.replica_id is missing)');
      // The identity is never re-minted: a damaged one must be restored, or peers would see a stranger.
      if (!REPLICA_ID_PATTERN.test(row.value))
        throw new Error(
          `the log's replica identity (meta.replica_id = ${JSON.stringify(row.value)}) is corrupt; refusing to mint a second identity for this palace: restore logstream.sqlite3 from a backup`,
        );
      this.replicaId = row.value;
      this.clock = { ms: 0, counter: 0 };
      this.observeLocalClock();
    } catch (err) {
      throw new HubError('store.failed', `cannot open the logstream at ${path}: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }

  private stmt(sql: string): Database.Statement {
    let s = this.statements.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.statements.set(sql, s);
    }
    return s;
  }

  append(batch: readonly NewEvent[]): Array<LogEvent | HubError> {
    const results: Array<LogEvent | HubError> = [];
    const isolate = batch.length > 1;
    try {
      this.db
        .transaction(() => {
          this.observeLocalClock();
          for (const event of batch) {
            if (!isolate) {
              results.push(this.insertEvent(event));
              continue;
            }
            // Group commit: each event in its own savepoint, so one bad event fails alone.
            this.stmt('SAVEPOINT one_event').run();
            try {
              results.push(this.insertEvent(event));
              this.stmt('RELEASE one_event').run();
            } catch (err) {
              this.stmt('ROLLBACK TO one_event').run();
              this.stmt('RELEASE one_event').run();
              results.push(toHubError(err));
            }
          }
        })
        .immediate();
    } catch (err) {
      const error = toHubError(err);
      return batch.map(() => error);
    }
    this.localCommits++;
    return results;
  }

  /**
   * Other connections (a CLI beside the hub) stamp with the same replica id: before stamping,
   * catch up with the newest local stamp in the file (one indexed lookup per transaction).
   */
  private observeLocalClock(): void {
    const row = this.stmt('SELECT hlc FROM events WHERE origin_replica = ? ORDER BY origin_seq DESC LIMIT 1').get(
      this.replicaId,
    ) as { hlc: string } | undefined;
    if (row) this.clock = observe(this.clock, row.hlc);
  }

  private insertEvent(event: NewEvent): LogEvent {
    for (const artifactId of event.artifact_ids) {
      if (!this.stmt('SELECT 1 FROM artifacts WHERE id = ?').get(artifactId))
        throw new HubError('artifact.unknown_ref', `artifact_ids references unknown artifact '${artifactId}'`, {
          field: 'artifact_ids',
        });
    }
    const top = this.stmt('SELECT coalesce(max(seq), 0) AS seq FROM events').get() as { seq: number };
    const seq = top.seq + 1;
    this.clock = tick(this.clock, this.now());
    const hlc = formatHlc(this.clock, this.replicaId);
    const artifactIds = JSON.stringify(event.artifact_ids);
    this.stmt(`INSERT INTO events (${EVENT_COLUMNS}) VALUES (${EVENT_COLUMNS.split(',').map(() => '?').join(',')})`).run(
      seq,
      event.id,
      event.type,
      event.stream,
      event.room,
      event.from_agent,
      event.to_agent,
      event.correlation_id,
      event.branch,
      event.base_commit,
      event.status,
      artifactIds,
      event.body,
      event.metadata_json,
      event.created_at,
      this.replicaId,
      seq,
      hlc,
    );
    event.artifact_ids.forEach((artifactId, position) =>
      this.stmt('INSERT INTO event_artifacts (event_seq, artifact_id, position) VALUES (?, ?, ?)').run(
        seq,
        artifactId,
        position,
      ),
    );
    return {
      id: event.id,
      seq,
      type: event.type,
      stream: event.stream,
      room: event.room,
      from_agent: event.from_agent,
      to_agent: event.to_agent,
      correlation_id: event.correlation_id,
      branch: event.branch,
      base_commit: event.base_commit,
      status: event.status,
      artifact_ids: [...event.artifact_ids],
      body: event.body,
      metadata: parseObject(event.metadata_json),
      created_at: event.created_at,
      origin_replica: this.replicaId,
      origin_seq: seq,
      hlc,
    };
  }

  private seqOf(field: string, id: string): number {
    const row = this.stmt('SELECT seq FROM events WHERE id = ?').get(id) as { seq: number } | undefined;
    if (!row)
      throw new HubError('log.unknown_cursor', `${field} '${id}' is not an event in this log`, { field });
    return row.seq;
  }

  query(q: EventQuery): EventPage {
    return this.db.transaction(() => this.queryInSnapshot(q))();
  }

  private queryInSnapshot(q: EventQuery): EventPage {
    const where: string[] = [];
    const params: unknown[] = [];
    const inList = (column: string, values: readonly string[], negate = false): void => {
      if (values.length === 0) return;
      where.push(`${column} ${negate ? 'NOT IN' : 'IN'} (${values.map(() => '?').join(',')})`);
      params.push(...values);
    };
    if (q.to_agent.length > 0) inList('to_agent', q.to_agent.includes('*') ? q.to_agent : [...q.to_agent, '*']);
    inList('from_agent', q.exclude_from_agent, true);
    inList('from_agent', q.from_agent);
    inList('type', q.type);
    inList('status', q.status);
    inList('correlation_id', q.correlation_id);
    inList('stream', q.stream);
    inList('room', q.room);
    if (q.since_event_id) {
      where.push('seq > ?');
      params.push(this.seqOf('since_event_id', q.since_event_id));
    }
    if (q.before_event_id) {
      where.push('seq < ?');
      params.push(this.seqOf('before_event_id', q.before_event_id));
    }
    if (q.since_created_at) {
      where.push('created_at >= ?');
      params.push(q.since_created_at);
    }
    const sql =
      `SELECT ${EVENT_COLUMNS} FROM events` +
      (where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '') +
      ` ORDER BY seq ${q.order === 'desc' ? 'DESC' : 'ASC'} LIMIT ?`;
    const rows = this.stmt(sql).all(...params, q.limit + 1) as EventRow[];
    const hasMore = rows.length > q.limit;
    const events = rows.slice(0, q.limit).map((row) => (q.preview ? previewEvent(toEvent(row)) : toEvent(row)));
    let cursor: string | null = null;
    if (q.order === 'asc' && !q.before_event_id) {
      // Every event up to the tip was examined when nothing more matched, so the tip is a safe resume point.
      cursor = hasMore ? (events.at(-1)?.id ?? null) : this.tipId() ?? q.since_event_id;
    }
    return { events, count: events.length, has_more: hasMore, cursor };
  }

  /** The id of the newest event, or null on an empty log. */
  tipId(): string | null {
    const row = this.stmt('SELECT id FROM events ORDER BY seq DESC LIMIT 1').get() as { id: string } | undefined;
    return row?.id ?? null;
  }

  getEvent(id: string): LogEvent | undefined {
    const row = this.stmt(`SELECT ${EVENT_COLUMNS} FROM events WHERE id = ?`).get(id) as EventRow | undefined;
    return row ? toEvent(row) : undefined;
  }

  putArtifact(a: NewArtifact): ArtifactMeta {
    try {
      this.stmt(
        `INSERT INTO artifacts (id, kind, sha256, size_bytes, content, created_by, created_at, metadata_json, origin_replica)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(a.id, a.kind, a.sha256, a.size_bytes, a.content, a.created_by, a.created_at, a.metadata_json, this.replicaId);
    } catch (err) {
      throw toHubError(err);
    }
    this.localCommits++;
    return {
      id: a.id,
      kind: a.kind,
      created_by: a.created_by,
      sha256: a.sha256,
      size_bytes: a.size_bytes,
      created_at: a.created_at,
      origin_replica: this.replicaId,
      metadata: parseObject(a.metadata_json),
    };
  }

  getArtifact(id: string): Artifact | undefined {
    const row = this.stmt('SELECT * FROM artifacts WHERE id = ?').get(id) as ArtifactRow | undefined;
    return row ? toArtifact(row) : undefined;
  }

  // ---- replication (ReplicaStore) ----

  versionVector(): VersionVector {
    // A skip-scan over the (origin_replica, origin_seq) index: O(origins x log n), not a full scan.
    const rows = this.stmt(
      `WITH RECURSIVE origins(r) AS (
         SELECT (SELECT min(origin_replica) FROM events)
         UNION ALL
         SELECT (SELECT min(origin_replica) FROM events WHERE origin_replica > origins.r) FROM origins WHERE origins.r IS NOT NULL
       )
       SELECT r AS origin, (SELECT max(origin_seq) FROM events WHERE origin_replica = r) AS top FROM origins WHERE r IS NOT NULL`,
    ).all() as Array<{ origin: string; top: number }>;
    const vector: VersionVector = {};
    for (const row of rows) vector[row.origin] = row.top;
    return vector;
  }

  eventsAfter(origin: string, after: number, limit: number): ReplicatedEvent[] {
    const n = Math.max(1, Math.min(MAX_PAGE_EVENTS, Math.floor(limit)));
    const rows = this.stmt(
      `SELECT ${EVENT_COLUMNS} FROM events WHERE origin_replica = ? AND origin_seq > ? ORDER BY origin_seq ASC LIMIT ?`,
    ).all(origin, after, n) as EventRow[];
    return rows.map(toReplicated);
  }

  hasArtifact(id: string): boolean {
    return this.stmt('SELECT 1 FROM artifacts WHERE id = ?').get(id) !== undefined;
  }

  applyRemoteArtifact(a: ReplicatedArtifact): boolean {
    const { bytes, metadata_json } = checkRemoteArtifact(a);
    const computed = createHash('sha256').update(a.content, 'utf8').digest('hex');
    if (computed !== a.sha256)
      throw new HubError(
        'sync.hash_mismatch',
        `remote artifact ${a.id} failed hash verification (claimed ${a.sha256.slice(0, 16)}..., computed ${computed.slice(0, 16)}...); refused`,
        { data: { artifact_id: a.id } },
      );
    if (this.hasArtifact(a.id)) return false;
    try {
      this.stmt(
        `INSERT OR IGNORE INTO artifacts (id, kind, sha256, size_bytes, content, created_by, created_at, metadata_json, origin_replica)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(a.id, a.kind, computed, bytes, a.content, a.created_by.trim(), a.created_at, metadata_json, a.origin_replica);
    } catch (err) {
      throw toHubError(err);
    }
    this.localCommits++;
    return true;
  }

  applyRemoteEvents(events: readonly ReplicatedEvent[]): ApplyResult {
    let result: ApplyResult = { applied: 0, duplicates: 0, lastOriginSeq: 0 };
    if (events.length === 0) return result;
    try {
      this.db
        .transaction(() => {
          result = { applied: 0, duplicates: 0, lastOriginSeq: 0 };
          for (const raw of events) {
            let record: RemoteEventRecord;
            try {
              record = remoteEventRecord(raw);
              if (record.origin_replica !== this.replicaId) this.requireArtifacts(record);
            } catch (err) {
              // Nothing of this event was written: stop here, keeping the events before it.
              result.failed = { event_id: String(raw.id), error: toHubError(err) };
              break;
            }
            // From here a failure can only be the storage's, and it rolls back the whole batch.
            if (record.origin_replica !== this.replicaId && this.insertRemote(record)) result.applied++;
            else result.duplicates++;
            result.lastOriginSeq = Math.max(result.lastOriginSeq, record.origin_seq);
          }
        })
        .immediate();
    } catch (err) {
      return { applied: 0, duplicates: 0, lastOriginSeq: 0, failed: { event_id: String(events[0]?.id), error: toHubError(err) } };
    }
    if (result.applied > 0) this.localCommits++;
    return result;
  }

  /** Every artifact a remote event references must already be stored (artifacts travel first). */
  private requireArtifacts(e: RemoteEventRecord): void {
    for (const artifactId of e.artifact_ids)
      if (!this.hasArtifact(artifactId))
        throw new HubError('artifact.unknown_ref', `remote event ${e.id} references artifact ${artifactId} not yet applied locally`, {
          field: 'artifact_ids',
        });
  }

  /**
   * Appends a remote event verbatim (id, created_at, hlc, origin stamps) at the next local seq. False
   * when it is already held: the unique indexes on id and on (origin_replica, origin_seq) decide.
   */
  private insertRemote(e: RemoteEventRecord): boolean {
    const columns = EVENT_COLUMNS.replace(/^seq, /, '');
    const info = this.stmt(`INSERT OR IGNORE INTO events (${columns}) VALUES (${columns.split(',').map(() => '?').join(',')})`).run(
      e.id,
      e.type,
      e.stream,
      e.room,
      e.from_agent,
      e.to_agent,
      e.correlation_id,
      e.branch,
      e.base_commit,
      e.status,
      JSON.stringify(e.artifact_ids),
      e.body,
      e.metadata_json,
      e.created_at,
      e.origin_replica,
      e.origin_seq,
      e.hlc,
    );
    if (info.changes === 0) return false;
    const seq = Number(info.lastInsertRowid); // seq is the rowid: the next one after the newest event
    e.artifact_ids.forEach((artifactId, position) =>
      this.stmt('INSERT OR IGNORE INTO event_artifacts (event_seq, artifact_id, position) VALUES (?, ?, ?)').run(seq, artifactId, position),
    );
    // Later local stamps sort after what we have seen.
    this.clock = observe(this.clock, e.hlc);
    return true;
  }

  changeToken(): number {
    // data_version moves when another connection commits; localCommits covers this connection.
    return (this.db.pragma('data_version', { simple: true }) as number) * 1_000_003 + this.localCommits;
  }

  /** Number of events in the log. */
  countEvents(): number {
    return (this.stmt('SELECT count(*) AS n FROM events').get() as { n: number }).n;
  }

  /** SQLite's own verdict on the file: 'ok' or the first problems it found. */
  integrityCheck(): string {
    const rows = this.db.pragma('quick_check') as Array<{ quick_check: string }>;
    return rows.map((r) => r.quick_check).join('; ');
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
