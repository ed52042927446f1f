// The SQLite EventStore over `<palace>/logstream.sqlite3`: the only code that talks SQL to the log.
// WAL mode; each append batch is one transaction; append order is the INTEGER PRIMARY KEY `seq`.

import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';

import { HubError, toHubError } from '../errors.js';
import { formatHlc, observe, tick, type HlcState } from '../core/hlc.js';
import type {
  Artifact,
  ArtifactMeta,
  EventPage,
  EventQuery,
  EventStatus,
  LogEvent,
  NewArtifact,
  NewEvent,
} from '../core/types.js';
import { LIMITS } from '../core/validate.js';
import type { EventStore } from './event-store.js';
import { migrate } from './schema.js';

/** How hard a commit waits for the disk; see README "Durability". */
export type Durability = 'normal' | 'full';

export interface SqliteEventStoreOptions {
  durability?: Durability;
  now?: () => number;
  mintReplicaId: () => string;
  readonly?: boolean;
}

interface EventRow {
  seq: number;
  id: string;
  type: string;
  stream: string;
  room: string;
  from_agent: string;
  to_agent: string | null;
  correlation_id: string | null;
  branch: string | null;
  base_commit: string | null;
  status: string | null;
  artifact_ids: string;
  body: string;
  metadata_json: string;
  created_at: string;
  origin_replica: string;
  origin_seq: number;
  hlc: string;
}

interface ArtifactRow {
  id: string;
  kind: string;
  sha256: string;
  size_bytes: number;
  content?: string;
  created_by: string;
  created_at: string;
  metadata_json: string;
  origin_replica: string;
}

const EVENT_COLUMNS =
  'seq, id, type, stream, room, from_agent, to_agent, correlation_id, branch, base_commit, status, artifact_ids, body, metadata_json, created_at, origin_replica, origin_seq, hlc';

function parseObject(json: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(json);
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function toEvent(row: EventRow): LogEvent {
  return {
    id: row.id,
    seq: row.seq,
    type: row.type,
    stream: row.stream,
    room: row.room,
    from_agent: row.from_agent,
    to_agent: row.to_agent,
    correlation_id: row.correlation_id,
    branch: row.branch,
    base_commit: row.base_commit,
    status: row.status as EventStatus | null,
    artifact_ids: JSON.parse(row.artifact_ids) as string[],
    body: row.body,
    metadata: parseObject(row.metadata_json),
    created_at: row.created_at,
    origin_replica: row.origin_replica,
    origin_seq: row.origin_seq,
    hlc: row.hlc,
  };
}

function toArtifactMeta(row: ArtifactRow): ArtifactMeta {
  return {
    id: row.id,
    kind: row.kind as ArtifactMeta['kind'],
    created_by: row.created_by,
    sha256: row.sha256,
    size_bytes: row.size_bytes,
    created_at: row.created_at,
    origin_replica: row.origin_replica,
    metadata: parseObject(row.metadata_json),
  };
}

/** Shortens a body to the preview length on a code-point boundary and says so. */
export function previewEvent(event: LogEvent): LogEvent {
  const points = [...event.body];
  const truncated = points.length > LIMITS.previewChars;
  return {
    ...event,
    body: truncated ? points.slice(0, LIMITS.previewChars).join('') : event.body,
    body_truncated: truncated,
    body_length: points.length,
  };
}

export class SqliteEventStore implements EventStore {
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
    if (!row) return undefined;
    return { ...toArtifactMeta(row), content: row.content ?? '' };
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
