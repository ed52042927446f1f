// The SQLite EventStore over `<palace>/logstream.sqlite3`: the only code that talks SQL to the log.
// WAL mode; each append batch is one transaction; append order is the INTEGER PRIMARY KEY `seq`.

import { createHash, type KeyObject } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';

import type { Durability } from '../config.js';
import { HubError, toHubError } from '../errors.js';
import { statementCache, type StatementCache } from '../sqlite-statements.js';
import { artifactBytes, canonicalEvent, checkpointBytes, vouchBytes, type ChainedEventFields, type Checkpoint } from '../core/chain.js';
import { GENESIS_CHAIN, nextChain, signBytes, verifyBytes } from './signatures.js';
import { formatHlc, observe, parseHlc, tick, type HlcState } from '../core/hlc.js';
import { REPLICA_ID_PATTERN } from '../core/ids.js';
import type { Artifact, ArtifactMeta, EventPage, EventQuery, LogEvent, NewArtifact, NewEvent } from '../core/types.js';
import {
  DEFAULT_MAX_SKEW_MS,
  checkRemoteArtifact,
  checkRemoteClock,
  remoteEventRecord,
  type ApplyResult,
  type RemoteEventRecord,
  type ReplicatedArtifact,
  type ReplicatedEvent,
  type VersionVector,
} from '../core/replication.js';
import type { EventStore } from './event-store.js';
import {
  MAX_PAGE_EVENTS,
  type ArtifactListing,
  type OpsPage,
  type OriginKey,
  type OriginKeySource,
  type RemotePage,
  type ReplicaStore,
  type SignedArtifact,
} from './replica-store.js';
import { ephemeralKey, keyPathFor, loadSigningKey, type SigningKey } from './signing-key.js';
import { migrate } from './schema.js';
import { RESERVATION_TYPES, ReservationProjection } from './reservation-projection.js';
import { TaskProjection } from './task-projection.js';
import {
  EVENT_COLUMNS,
  parseObject,
  previewEvent,
  storedEvent,
  toArtifact,
  toArtifactMeta,
  toEvent,
  toReplicated,
  type ArtifactRow,
  type EventRow,
} from './sqlite-rows.js';


export interface SqliteEventStoreOptions {
  durability?: Durability;
  now?: () => number;
  mintReplicaId: () => string;
  readonly?: boolean;
  /** The signing key file (default `<log name>.key` beside the log; in memory for `:memory:`). */
  keyPath?: string;
  /** How far ahead of the local clock a remote stamp may be (default 5 min). */
  maxSkewMs?: number;
}

/** Rows with the chain columns trusted sync adds. */
type ChainedRow = EventRow & { chain: Buffer | null; origin_pos: number | null };

interface ChainHead {
  seq: number;
  pos: number;
  chain: Buffer;
}

const EMPTY_HEAD: ChainHead = { seq: 0, pos: 0, chain: GENESIS_CHAIN };

/** Every stored column of an event but `seq`, then its chain value and origin position. */
const CHAINED_COLUMNS = `${EVENT_COLUMNS.replace(/^seq, /, '')}, chain, origin_pos`;
const placeholders = (columns: string): string => columns.split(',').map(() => '?').join(',');
/** A local append: `seq` given (the next one), then chainedParams. */
const INSERT_LOCAL_SQL = `INSERT INTO events (seq, ${CHAINED_COLUMNS}) VALUES (?, ${placeholders(CHAINED_COLUMNS)})`;
/** A remote event: `seq` is the next rowid; an event already held (id or origin stamps) is ignored. */
const INSERT_REMOTE_SQL = `INSERT OR IGNORE INTO events (${CHAINED_COLUMNS}) VALUES (${placeholders(CHAINED_COLUMNS)})`;

/** The values of CHAINED_COLUMNS for one event, in order. */
function chainedParams(e: ChainedEventFields, chain: Buffer, pos: number): unknown[] {
  return [
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
    chain,
    pos,
  ];
}

const isReservationEvent = (e: { type: string }): boolean => (RESERVATION_TYPES as readonly string[]).includes(e.type);


export class SqliteEventStore implements EventStore, ReplicaStore {
  readonly replicaId: string;
  readonly path: string;
  readonly db: Database.Database;
  private readonly now: () => number;
  private clock: HlcState;
  private readonly stmt: StatementCache;
  private localCommits = 0;
  private readonly key: SigningKey | undefined;
  /** This replica's Ed25519 public key (raw, base64url); '' for a read-only log without its key file. */
  readonly publicKey: string;
  readonly maxSkewMs: number;
  private head: ChainHead = EMPTY_HEAD;
  private lastSigned: Checkpoint | undefined;
  private readonly vouches = new Map<string, string>();
  /** The task projection table, refreshed in the same transaction as every append (local or remote). */
  readonly tasks: TaskProjection;
  /** The reservations not released, kept in the same transaction as every append (local or remote). */
  readonly reservations: ReservationProjection;
  /** What the commit hook feeds: the task table, then the reservations. */
  private readonly projections: ReadonlyArray<{ apply(events: readonly LogEvent[]): void }>;
  private readonly appendTransaction: Database.Transaction<(batch: readonly NewEvent[], results: Array<LogEvent | HubError>) => void>;

  constructor(path: string, options: SqliteEventStoreOptions) {
    this.path = path;
    this.now = options.now ?? Date.now;
    this.maxSkewMs = options.maxSkewMs ?? DEFAULT_MAX_SKEW_MS;
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    try {
      this.db = new Database(path, { timeout: 10_000, readonly: options.readonly ?? false });
      this.stmt = statementCache(this.db);
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
      this.tasks = new TaskProjection(this.db);
      this.reservations = new ReservationProjection(this.db, () => this.topSeq());
      this.appendTransaction = this.db.transaction((batch: readonly NewEvent[], results: Array<LogEvent | HubError>) => this.appendInTransaction(batch, results));
      this.projections = [this.tasks, { apply: (events) => this.reservations.apply(events.filter(isReservationEvent)) }];
      this.key = this.openKey(path, options);
      this.publicKey = this.key?.publicRaw ?? '';
      this.clock = { ms: 0, counter: 0 };
      this.observeLocalClock();
    } catch (err) {
      throw new HubError('store.failed', `cannot open the logstream at ${path}: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }

  /**
   * Loads (or mints) the signing key and binds it to the log: the first key seen is recorded in
   * meta.public_key, and a later different key file is refused rather than silently re-keying.
   */
  private openKey(path: string, options: SqliteEventStoreOptions): SigningKey | undefined {
    const readonly = options.readonly ?? false;
    let key: SigningKey | undefined;
    if (path === ':memory:' && !options.keyPath) key = ephemeralKey();
    else {
      const keyPath = options.keyPath ?? keyPathFor(path);
      try {
        key = loadSigningKey(keyPath, !readonly);
      } catch (err) {
        if (readonly) return undefined;
        throw err;
      }
    }
    const recorded = this.db.prepare(`SELECT value FROM meta WHERE key = 'public_key'`).pluck().get() as string | undefined;
    if (recorded === undefined) {
      if (!readonly) {
        this.db.prepare(`INSERT OR IGNORE INTO meta(key, value) VALUES ('public_key', ?)`).run(key.publicRaw);
        const now = new Date(this.now()).toISOString();
        this.db
          .prepare(`INSERT OR IGNORE INTO origin_keys (origin_replica, public_key, source, added_at) VALUES (?, ?, 'self', ?)`)
          .run(this.replicaId, key.publicRaw, now);
      }
    } else if (recorded !== key.publicRaw)
      throw new Error(
        `the signing key ${options.keyPath ?? keyPathFor(path)} is not the key this log recorded (public key ${recorded}); restore the original key file: a new key would make this hub a stranger to its peers`,
      );
    return key;
  }

  append(batch: readonly NewEvent[]): Array<LogEvent | HubError> {
    const results: Array<LogEvent | HubError> = [];
    try {
      this.appendTransaction.immediate(batch, results);
    } catch (err) {
      const error = toHubError(err);
      return batch.map(() => error);
    }
    this.localCommits++;
    return results;
  }

  /** The body of an append's transaction (wrapped once, in the constructor): stores `batch`, filling `results`. */
  private appendInTransaction(batch: readonly NewEvent[], results: Array<LogEvent | HubError>): void {
    const isolate = batch.length > 1;
    this.observeLocalClock();
    // The next seq, read once per transaction (the write lock is held until commit).
    let seq = this.topSeq() + 1;
    for (const event of batch) {
      if (!isolate) {
        results.push(this.insertEvent(event, seq));
        continue;
      }
      const head = this.head;
      // Group commit: each event fails alone. An event without artifacts is one INSERT, which
      // SQLite undoes by itself when it fails; one with artifacts writes several rows, so it gets
      // a savepoint to roll back to.
      const several = event.artifact_ids.length > 0;
      if (several) this.stmt('SAVEPOINT one_event').run();
      try {
        results.push(this.insertEvent(event, seq));
        if (several) this.stmt('RELEASE one_event').run();
        seq++;
      } catch (err) {
        // Whatever ended the transaction itself (a full disk) ends the whole batch.
        if (!this.db.inTransaction) throw err;
        if (several) {
          this.stmt('ROLLBACK TO one_event').run();
          this.stmt('RELEASE one_event').run();
        }
        this.head = head;
        results.push(toHubError(err));
      }
    }
    this.committing(results.filter((r): r is LogEvent => !(r instanceof HubError)));
  }

  /**
   * The commit hook: every event a transaction stored (local or remote, in seq order) goes to each
   * projection once, before the transaction commits, so a projection is never behind its log.
   */
  private committing(events: readonly LogEvent[]): void {
    if (events.length === 0) return;
    for (const projection of this.projections) projection.apply(events);
  }

  /**
   * Other connections (a CLI beside the hub) stamp with the same replica id: before stamping,
   * catch up with the newest local stamp in the file (one indexed lookup per transaction).
   */
  private observeLocalClock(): void {
    const row = this.stmt(
      'SELECT hlc, origin_seq, origin_pos, chain FROM events WHERE origin_replica = ? ORDER BY origin_seq DESC LIMIT 1',
    ).get(this.replicaId) as { hlc: string; origin_seq: number; origin_pos: number | null; chain: Buffer | null } | undefined;
    if (row) this.clock = observe(this.clock, row.hlc);
    this.head =
      row && row.chain && row.origin_pos !== null
        ? { seq: row.origin_seq, pos: row.origin_pos, chain: row.chain }
        : EMPTY_HEAD;
  }

  /** The sha256 of each artifact, in order; throws artifact.unknown_ref for one not stored. */
  private artifactShas(ids: readonly string[], missing: (id: string) => string): string[] {
    return ids.map((artifactId) => {
      const sha = this.stmt('SELECT sha256 FROM artifacts WHERE id = ?').pluck().get(artifactId) as string | undefined;
      if (sha === undefined)
        throw new HubError('artifact.unknown_ref', missing(artifactId), {
          field: 'artifact_ids',
        });
      return sha;
    });
  }

  /** Stores one local event at `seq` (the next one); throws, having written nothing, when it cannot. */
  private insertEvent(event: NewEvent, seq: number): LogEvent {
    const shas = this.artifactShas(event.artifact_ids, (id) => `artifact_ids references unknown artifact '${id}'`);
    this.clock = tick(this.clock, this.now());
    const hlc = formatHlc(this.clock, this.replicaId);
    const stamped = { ...event, origin_replica: this.replicaId, origin_seq: seq, hlc };
    const chain = nextChain(this.head.chain, canonicalEvent(stamped, shas));
    const pos = this.head.pos + 1;
    this.stmt(INSERT_LOCAL_SQL).run(seq, ...chainedParams(stamped, chain, pos));
    this.head = { seq, pos, chain };
    event.artifact_ids.forEach((artifactId, position) =>
      this.stmt('INSERT INTO event_artifacts (event_seq, artifact_id, position) VALUES (?, ?, ?)').run(
        seq,
        artifactId,
        position,
      ),
    );
    return storedEvent(stamped, seq);
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

  /** An artifact's metadata and its stored UTF-8 bytes as SQLite holds them: no decode to a string. */
  getArtifactBytes(id: string): { meta: ArtifactMeta; bytes: Buffer } | undefined {
    const row = this.stmt(
      'SELECT id, kind, sha256, size_bytes, created_by, created_at, metadata_json, origin_replica, CAST(content AS BLOB) AS bytes FROM artifacts WHERE id = ?',
    ).get(id) as (ArtifactRow & { bytes: Buffer | null }) | undefined;
    return row ? { meta: toArtifactMeta(row), bytes: row.bytes ?? Buffer.alloc(0) } : undefined;
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

  /** Highest origin_seq held under a checkpoint signed by its origin, per origin (this replica: its head). */
  verifiedVector(): VersionVector {
    const vector: VersionVector = {};
    const own = this.versionVector()[this.replicaId];
    if (own) vector[this.replicaId] = own;
    const rows = this.stmt(
      'SELECT origin_replica AS origin, max(origin_seq) AS top FROM checkpoints GROUP BY origin_replica',
    ).all() as Array<{ origin: string; top: number }>;
    for (const row of rows) if (row.origin !== this.replicaId) vector[row.origin] = row.top;
    return vector;
  }

  /** Events held of other origins that no checkpoint of their origin covers yet (legacy, pre-signing). */
  unverifiedCounts(): Record<string, number> {
    const verified = this.verifiedVector();
    const out: Record<string, number> = {};
    for (const origin of Object.keys(this.versionVector())) {
      if (origin === this.replicaId) continue;
      const n = (
        this.stmt('SELECT count(*) AS n FROM events WHERE origin_replica = ? AND origin_seq > ?').get(
          origin,
          verified[origin] ?? 0,
        ) as { n: number }
      ).n;
      if (n > 0) out[origin] = n;
    }
    return out;
  }

  eventsAfter(origin: string, after: number, limit: number): ReplicatedEvent[] {
    const n = Math.max(1, Math.min(MAX_PAGE_EVENTS, Math.floor(limit)));
    const rows = this.stmt(
      `SELECT ${EVENT_COLUMNS} FROM events WHERE origin_replica = ? AND origin_seq > ? ORDER BY origin_seq ASC LIMIT ?`,
    ).all(origin, after, n) as EventRow[];
    return rows.map(toReplicated);
  }

  private chainedAfter(origin: string, after: number, upTo: number, limit: number): ChainedRow[] {
    return this.stmt(
      `SELECT ${EVENT_COLUMNS}, chain, origin_pos FROM events
        WHERE origin_replica = ? AND origin_seq > ? AND origin_seq <= ? ORDER BY origin_seq ASC LIMIT ?`,
    ).all(origin, after, upTo, limit) as ChainedRow[];
  }

  private signCheckpoint(row: ChainedRow): Checkpoint {
    if (!this.key) throw new HubError('store.failed', 'this log was opened without its signing key');
    if (!row.chain || row.origin_pos === null)
      throw new HubError('store.failed', `event ${row.id} has no chain value (run palace migrate)`);
    const body = { origin: this.replicaId, seq: row.origin_seq, pos: row.origin_pos, chain: row.chain.toString('hex') };
    const last = this.lastSigned;
    if (last && last.seq === body.seq && last.chain === body.chain) return last;
    this.lastSigned = { ...body, sig: signBytes(this.key.privateKey, checkpointBytes(body)) };
    return this.lastSigned;
  }

  /**
   * One page of `origin`'s events after `after`, ending at a checkpoint signed by the origin: this
   * replica signs its own on demand; other origins' pages end at a checkpoint held from them (the
   * page may then run past `limit`). Events no checkpoint covers are not served.
   */
  opsPage(origin: string, after: number, limit: number, byteBudget: number): OpsPage {
    const n = Math.max(1, Math.min(MAX_PAGE_EVENTS, Math.floor(limit)));
    return this.db.transaction((): OpsPage => {
      const size = (r: ChainedRow): number => r.body.length + r.metadata_json.length + 512;
      const withinBudget = (rows: ChainedRow[]): ChainedRow[] => {
        let bytes = 0;
        const out: ChainedRow[] = [];
        for (const r of rows) {
          bytes += size(r);
          if (out.length > 0 && bytes > byteBudget) break;
          out.push(r);
        }
        return out;
      };
      if (origin === this.replicaId) {
        const rows = withinBudget(this.chainedAfter(origin, after, Number.MAX_SAFE_INTEGER, n));
        const last = rows.at(-1);
        if (!last) return { events: [], checkpoint: null, hasMore: false };
        const more = this.chainedAfter(origin, last.origin_seq, Number.MAX_SAFE_INTEGER, 1).length > 0;
        return { events: rows.map(toReplicated), checkpoint: this.signCheckpoint(last), hasMore: more };
      }
      const fetched = withinBudget(this.chainedAfter(origin, after, Number.MAX_SAFE_INTEGER, n));
      const end = fetched.at(-1)?.origin_seq ?? after;
      const checkpointAt = (sql: string, ...args: unknown[]): Checkpoint | undefined => {
        const row = this.stmt(sql).get(...args) as
          | { origin_replica: string; origin_seq: number; pos: number; chain: string; sig: string }
          | undefined;
        return row ? { origin: row.origin_replica, seq: row.origin_seq, pos: row.pos, chain: row.chain, sig: row.sig } : undefined;
      };
      const checkpoint =
        checkpointAt(
          'SELECT * FROM checkpoints WHERE origin_replica = ? AND origin_seq > ? AND origin_seq <= ? ORDER BY origin_seq DESC LIMIT 1',
          origin,
          after,
          end,
        ) ??
        checkpointAt(
          'SELECT * FROM checkpoints WHERE origin_replica = ? AND origin_seq > ? ORDER BY origin_seq ASC LIMIT 1',
          origin,
          after,
        );
      if (!checkpoint) return { events: [], checkpoint: null, hasMore: false };
      const rows = this.chainedAfter(origin, after, checkpoint.seq, Number.MAX_SAFE_INTEGER);
      const more = this.stmt('SELECT 1 FROM checkpoints WHERE origin_replica = ? AND origin_seq > ? LIMIT 1').get(origin, checkpoint.seq);
      return { events: rows.map(toReplicated), checkpoint, hasMore: more !== undefined };
    })();
  }

  hasArtifact(id: string): boolean {
    return this.stmt('SELECT 1 FROM artifacts WHERE id = ?').get(id) !== undefined;
  }

  private artifactSignature(row: ArtifactRow & { sig: string | null }): string | null {
    if (row.origin_replica !== this.replicaId) return row.sig;
    if (!this.key) return null;
    return signBytes(this.key.privateKey, artifactBytes(row));
  }

  /** An artifact with its origin's signature (signed now when this replica is its origin; null when unsigned). */
  signedArtifact(id: string): SignedArtifact | undefined {
    const row = this.stmt('SELECT * FROM artifacts WHERE id = ?').get(id) as (ArtifactRow & { sig: string | null }) | undefined;
    return row ? { artifact: toArtifact(row), signature: this.artifactSignature(row) } : undefined;
  }

  /** Artifacts stored here after local row `after` that can travel (own, or carrying their origin's signature). */
  artifactsAfter(after: number, limit: number): ArtifactListing {
    const n = Math.max(1, Math.min(MAX_PAGE_EVENTS, Math.floor(limit)));
    const rows = this.stmt(
      `SELECT rowid, id, origin_replica FROM artifacts WHERE rowid > ? AND (origin_replica = ? OR sig IS NOT NULL) ORDER BY rowid LIMIT ?`,
    ).all(after, this.replicaId, n + 1) as Array<{ rowid: number; id: string; origin_replica: string }>;
    const items = rows.slice(0, n).map((r) => ({ id: r.id, origin_replica: r.origin_replica }));
    const top = (this.stmt('SELECT coalesce(max(rowid), 0) AS r FROM artifacts').get() as { r: number }).r;
    const next = rows.length > n ? (rows[n - 1]?.rowid ?? after) : top;
    return { items, next, hasMore: rows.length > n };
  }

  artifactCursor(peerReplica: string): number {
    return (this.stmt('SELECT artifact_rowid FROM sync_cursors WHERE peer_replica = ?').pluck().get(peerReplica) as number | undefined) ?? 0;
  }

  setArtifactCursor(peerReplica: string, rowid: number): void {
    this.stmt(
      'INSERT INTO sync_cursors (peer_replica, artifact_rowid) VALUES (?, ?) ON CONFLICT(peer_replica) DO UPDATE SET artifact_rowid = excluded.artifact_rowid',
    ).run(peerReplica, rowid);
  }

  /** Checks a remote artifact (fields, sha256 of its content) and returns what to store. */
  private checkedArtifact(a: ReplicatedArtifact): { bytes: number; metadata_json: string } {
    const checked = checkRemoteArtifact(a);
    const computed = createHash('sha256').update(a.content, 'utf8').digest('hex');
    if (computed !== a.sha256)
      throw new HubError(
        'sync.hash_mismatch',
        `remote artifact ${a.id} failed hash verification (claimed ${a.sha256.slice(0, 16)}..., computed ${computed.slice(0, 16)}...); refused`,
        { data: { artifact_id: a.id } },
      );
    return checked;
  }

  private insertArtifact(a: ReplicatedArtifact, checked: { bytes: number; metadata_json: string }, sig: string | null): boolean {
    const info = this.stmt(
      `INSERT OR IGNORE INTO artifacts (id, kind, sha256, size_bytes, content, created_by, created_at, metadata_json, origin_replica, sig)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(a.id, a.kind, a.sha256, checked.bytes, a.content, a.created_by.trim(), a.created_at, checked.metadata_json, a.origin_replica, sig);
    return info.changes > 0;
  }

  /** Stores a remote artifact once its sha256 checks out (no signature check: imports and tests). */
  applyRemoteArtifact(a: ReplicatedArtifact): boolean {
    const checked = this.checkedArtifact(a);
    if (this.hasArtifact(a.id)) return false;
    let stored: boolean;
    try {
      stored = this.insertArtifact(a, checked, null);
    } catch (err) {
      throw toHubError(err);
    }
    if (stored) this.localCommits++;
    return stored;
  }

  /**
   * Stores an artifact that travels on its own (no event of the page vouches for it): it must carry a
   * valid signature by its origin's key (`key` null skips the check: benchmark only).
   */
  applySignedArtifact(a: ReplicatedArtifact, signature: string | null, key: KeyObject | null): boolean {
    const checked = this.checkedArtifact(a);
    if (a.origin_replica === this.replicaId) return false;
    if (key) {
      if (!signature)
        throw new HubError('sync.bad_signature', `artifact ${a.id} of ${a.origin_replica} is unsigned; refused`);
      if (!verifyBytes(key, artifactBytes({ ...a, metadata_json: checked.metadata_json }), signature))
        throw new HubError('sync.bad_signature', `artifact ${a.id}: the signature is not ${a.origin_replica}'s; refused`);
    }
    if (this.hasArtifact(a.id)) return false;
    const stored = this.insertArtifact(a, checked, signature);
    if (stored) this.localCommits++;
    return stored;
  }

  /**
   * Verifies and applies one page of an origin's events, all or nothing, in one transaction: every
   * event well-formed, its stamp within the skew bound, its artifacts present (or fetched with the
   * page, hash-checked), origin_seq ascending after `after`, the chain recomputed from this hub's own
   * value at `after` reaching exactly the page's checkpoint (position and hash), and the checkpoint
   * signed by the origin's key. Events already held must chain identically. Throws naming the first
   * violation; then nothing was written.
   */
  applyRemotePage(page: RemotePage): ApplyResult {
    const { origin, after, checkpoint } = page;
    let result: ApplyResult = { applied: 0, duplicates: 0, lastOriginSeq: 0 };
    if (page.events.length === 0) return result;
    const fail = (code: 'sync.bad_message' | 'sync.bad_signature', message: string): HubError =>
      new HubError(code, `origin ${origin}: ${message}`, { data: { origin } });
    this.db
      .transaction(() => {
        result = { applied: 0, duplicates: 0, lastOriginSeq: 0 };
        if (origin === this.replicaId) throw fail('sync.bad_message', "a peer served this hub's own events back");
        if (checkpoint.origin !== origin)
          throw fail('sync.bad_message', `the page's checkpoint is for origin ${checkpoint.origin}`);
        let start: ChainHead = EMPTY_HEAD;
        if (after > 0) {
          const row = this.stmt('SELECT origin_pos, chain FROM events WHERE origin_replica = ? AND origin_seq = ?').get(origin, after) as
            | { origin_pos: number | null; chain: Buffer | null }
            | undefined;
          if (!row?.chain || row.origin_pos === null)
            throw fail('sync.bad_message', `this hub holds no chained event at origin_seq ${after} to continue from`);
          start = { seq: after, pos: row.origin_pos, chain: row.chain };
        }
        const nowMs = this.now();
        const fetched = new Map(page.artifacts.map((a) => [a.id, a]));
        let head = start;
        const fresh: Array<{ record: RemoteEventRecord; chain: Buffer; pos: number }> = [];
        for (const raw of page.events) {
          const record = remoteEventRecord(raw);
          if (record.origin_replica !== origin)
            throw fail('sync.bad_message', `event ${record.id} names origin ${record.origin_replica}: a forged origin`);
          if (record.origin_seq <= head.seq)
            throw fail('sync.bad_message', `event ${record.id} has origin_seq ${record.origin_seq}, not after ${head.seq}`);
          if (record.origin_seq > checkpoint.seq)
            throw fail('sync.bad_message', `event ${record.id} jumps to origin_seq ${record.origin_seq}, past the signed checkpoint at ${checkpoint.seq}`);
          checkRemoteClock(record, nowMs, this.maxSkewMs);
          const shas = record.artifact_ids.map((id) => {
            const stored = this.stmt('SELECT sha256 FROM artifacts WHERE id = ?').pluck().get(id) as string | undefined;
            if (stored !== undefined) return stored;
            const a = fetched.get(id);
            if (!a) throw new HubError('artifact.unknown_ref', `origin ${origin}: event ${record.id} references artifact ${id}, which the peer did not serve`);
            this.checkedArtifact(a);
            return a.sha256;
          });
          const chain = nextChain(head.chain, canonicalEvent(record, shas));
          head = { seq: record.origin_seq, pos: head.pos + 1, chain };
          const held = this.stmt('SELECT id, chain FROM events WHERE origin_replica = ? AND origin_seq = ?').get(origin, record.origin_seq) as
            | { id: string; chain: Buffer | null }
            | undefined;
          if (held) {
            if (held.id !== record.id || (held.chain && !held.chain.equals(chain)))
              throw fail(
                'sync.bad_signature',
                `this hub's copy of origin_seq ${record.origin_seq} differs from the served event ${record.id} (events held from before trusted sync that the origin never wrote?)`,
              );
            continue;
          }
          fresh.push({ record, chain, pos: head.pos });
        }
        if (head.seq !== checkpoint.seq)
          throw fail('sync.bad_message', `the page ends at origin_seq ${head.seq}, not at its checkpoint ${checkpoint.seq}`);
        if (head.pos !== checkpoint.pos)
          throw fail(
            'sync.bad_message',
            `a gap: the origin signed ${checkpoint.pos - start.pos} event(s) after origin_seq ${after}, the page holds ${head.pos - start.pos}`,
          );
        if (head.chain.toString('hex') !== checkpoint.chain)
          throw fail('sync.bad_signature', `the events do not hash to the origin's checkpoint at origin_seq ${checkpoint.seq}: altered, reordered or forged`);
        if (page.key && !verifyBytes(page.key, checkpointBytes(checkpoint), checkpoint.sig))
          throw fail('sync.bad_signature', `the checkpoint at origin_seq ${checkpoint.seq} is not signed by ${origin}'s key`);
        // Verified: store the artifacts the new events need, the events, and the checkpoint.
        for (const { record } of fresh)
          for (const id of record.artifact_ids) {
            const a = fetched.get(id);
            if (a && !this.hasArtifact(id)) this.insertArtifact(a, this.checkedArtifact(a), null);
          }
        const stored: LogEvent[] = [];
        for (const { record, chain, pos } of fresh) {
          const seq = this.insertRemote(record, chain, pos);
          if (seq !== null) {
            result.applied++;
            stored.push(storedEvent(record, seq));
          } else result.duplicates++;
        }
        this.committing(stored);
        result.duplicates += page.events.length - fresh.length;
        result.lastOriginSeq = checkpoint.seq;
        this.stmt(
          'INSERT OR IGNORE INTO checkpoints (origin_replica, origin_seq, pos, chain, sig) VALUES (?, ?, ?, ?, ?)',
        ).run(origin, checkpoint.seq, checkpoint.pos, checkpoint.chain, checkpoint.sig);
      })
      .immediate();
    this.localCommits++;
    return result;
  }

  /** Appends remote events without signature checks (imports and tests); chains them onto what is held. */
  applyRemoteEvents(events: readonly ReplicatedEvent[]): ApplyResult {
    let result: ApplyResult = { applied: 0, duplicates: 0, lastOriginSeq: 0 };
    if (events.length === 0) return result;
    try {
      this.db
        .transaction(() => {
          result = { applied: 0, duplicates: 0, lastOriginSeq: 0 };
          const stored: LogEvent[] = [];
          for (const raw of events) {
            let record: RemoteEventRecord;
            let shas: string[] = [];
            try {
              record = remoteEventRecord(raw);
              if (record.origin_replica !== this.replicaId) shas = this.requireArtifacts(record);
            } catch (err) {
              // Nothing of this event was written: stop here, keeping the events before it.
              result.failed = { event_id: String(raw.id), error: toHubError(err) };
              break;
            }
            // From here a failure can only be the storage's, and it rolls back the whole batch.
            let seq: number | null = null;
            if (record.origin_replica !== this.replicaId && !this.holds(record)) {
              const top = this.stmt(
                'SELECT origin_pos, chain FROM events WHERE origin_replica = ? ORDER BY origin_seq DESC LIMIT 1',
              ).get(record.origin_replica) as { origin_pos: number | null; chain: Buffer | null } | undefined;
              const chain = nextChain(top?.chain ?? GENESIS_CHAIN, canonicalEvent(record, shas));
              seq = this.insertRemote(record, chain, (top?.origin_pos ?? 0) + 1);
            }
            if (seq !== null) {
              result.applied++;
              stored.push(storedEvent(record, seq));
            } else result.duplicates++;
            result.lastOriginSeq = Math.max(result.lastOriginSeq, record.origin_seq);
          }
          this.committing(stored);
        })
        .immediate();
    } catch (err) {
      return { applied: 0, duplicates: 0, lastOriginSeq: 0, failed: { event_id: String(events[0]?.id), error: toHubError(err) } };
    }
    if (result.applied > 0) this.localCommits++;
    return result;
  }

  private holds(e: RemoteEventRecord): boolean {
    return (
      this.stmt('SELECT 1 FROM events WHERE id = ? OR (origin_replica = ? AND origin_seq = ?)').get(
        e.id,
        e.origin_replica,
        e.origin_seq,
      ) !== undefined
    );
  }

  /** Every artifact a remote event references must already be stored (artifacts travel first). */
  private requireArtifacts(e: RemoteEventRecord): string[] {
    return this.artifactShas(e.artifact_ids, (id) => `remote event ${e.id} references artifact ${id} not yet applied locally`);
  }

  /**
   * Appends a remote event verbatim (id, created_at, hlc, origin stamps) at the next local seq, which it
   * returns. Null when it is already held: the unique indexes on id and on (origin_replica, origin_seq) decide.
   */
  private insertRemote(e: RemoteEventRecord, chain: Buffer, pos: number): number | null {
    const info = this.stmt(INSERT_REMOTE_SQL).run(...chainedParams(e, chain, pos));
    if (info.changes === 0) return null;
    const seq = Number(info.lastInsertRowid); // seq is the rowid: the next one after the newest event
    e.artifact_ids.forEach((artifactId, position) =>
      this.stmt('INSERT OR IGNORE INTO event_artifacts (event_seq, artifact_id, position) VALUES (?, ?, ?)').run(seq, artifactId, position),
    );
    // Later local stamps sort after what we have seen, but never past the skew bound.
    const stamp = parseHlc(e.hlc);
    if (stamp && stamp.ms <= this.now() + this.maxSkewMs) this.clock = observe(this.clock, e.hlc);
    return seq;
  }

  // ---- trust: origin keys ----

  originKey(origin: string): OriginKey | undefined {
    const row = this.stmt('SELECT public_key, source, vouched_by FROM origin_keys WHERE origin_replica = ?').get(origin) as
      | { public_key: string; source: OriginKeySource; vouched_by: string | null }
      | undefined;
    return row ? { origin, publicKey: row.public_key, source: row.source, vouchedBy: row.vouched_by } : undefined;
  }

  /** Records the key of an origin (first key wins unless `replace`, which a pin in peers.json may do). */
  rememberOriginKey(k: OriginKey, vouch: string | null, replace = false): void {
    this.stmt(
      `INSERT INTO origin_keys (origin_replica, public_key, source, vouched_by, vouch, added_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT(origin_replica) DO ${replace ? 'UPDATE SET public_key = excluded.public_key, source = excluded.source, vouched_by = excluded.vouched_by, vouch = excluded.vouch' : 'NOTHING'}`,
    ).run(k.origin, k.publicKey, k.source, k.vouchedBy, vouch, new Date(this.now()).toISOString());
  }

  /** Every origin key this hub holds, each vouched for by this hub's own signature (gossip of keys). */
  keyStatements(): Array<{ replica_id: string; public_key: string; vouch: string }> {
    if (!this.key) return [];
    const rows = this.stmt("SELECT origin_replica, public_key FROM origin_keys WHERE source != 'tofu' ORDER BY origin_replica").all() as Array<{
      origin_replica: string;
      public_key: string;
    }>;
    const key = this.key;
    // One signature per (origin, key) for the life of the store, not one per version_vector request.
    return rows.map((r) => {
      const cacheKey = `${r.origin_replica}:${r.public_key}`;
      let vouch = this.vouches.get(cacheKey);
      if (!vouch) {
        vouch = signBytes(key.privateKey, vouchBytes(this.replicaId, r.origin_replica, r.public_key));
        this.vouches.set(cacheKey, vouch);
      }
      return { replica_id: r.origin_replica, public_key: r.public_key, vouch };
    });
  }

  changeToken(): number {
    // data_version moves when another connection commits; localCommits covers this connection.
    return (this.db.pragma('data_version', { simple: true }) as number) * 1_000_003 + this.localCommits;
  }

  /** The highest seq in the log, 0 when it is empty (one probe of the rowid's b-tree). */
  topSeq(): number {
    return this.stmt('SELECT coalesce(max(seq), 0) FROM events').pluck().get() as number;
  }

  /**
   * Number of events in the log: the highest seq. seq is the rowid, every insert takes the highest
   * plus one (a rolled-back one leaves no gap) and no event is ever deleted, so the two are equal; a
   * count(*) would read the whole table (40-125 ms at a million events, on every /statusz and status).
   */
  countEvents(): number {
    return this.topSeq();
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
