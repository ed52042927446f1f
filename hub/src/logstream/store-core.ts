// One open logstream.sqlite3 and what every part of the store shares: the connection and its statement
// cache, the replica identity and signing key, the hybrid logical clock, and the commit hook. Local
// appends, remote pages, artifacts and queries (their own files) are built on one StoreCore.

import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';

import type { Durability } from '../config.js';
import { HubError } from '../errors.js';
import { statementCache, type StatementCache } from '../sqlite-statements.js';
import { observe, parseHlc, type HlcState } from '../core/hlc.js';
import { REPLICA_ID_PATTERN } from '../core/ids.js';
import type { LogEvent } from '../core/types.js';
import { DEFAULT_MAX_SKEW_MS } from '../core/replication.js';
import { ephemeralKey, keyPathFor, loadSigningKey, type SigningKey } from './signing-key.js';
import { migrate } from './schema.js';

export interface SqliteEventStoreOptions {
  durability?: Durability;
  now?: () => number;
  mintReplicaId: () => string;
  readonly?: boolean;
  /** The signing key file (default `<log name>.key` beside the log; in memory for `:memory:`). */
  keyPath?: string;
  /** How far ahead of the local clock a remote stamp may be (default 5 min). */
  maxSkewMs?: number;
  /** When the task projection catches up with appends (task-catch-up.ts; tests force a lag with a big batch). */
  projection?: { batch?: number; flushMs?: number };
}

/**
 * Runs inside the transaction that stored `events` (local or remote, in seq order), before it
 * commits: a projection kept here is never behind its log. A throw rolls the whole transaction back.
 */
export type CommitHook = (events: readonly LogEvent[]) => void;

/**
 * WAL pages after which a commit checkpoints (SQLite's default is 1,000). An append writes ~10 pages
 * (its row and indexes, its task's row and indexes) where a bare one-row insert writes ~1, so at the
 * default every ~100th append paid for a checkpoint (the p99 tail); at 10,000 (~40 MB of WAL) a
 * checkpoint comes about as often per append as for bare SQLite, and pages rewritten meanwhile are
 * copied to the database once. docs/decisions.md.
 */
export const WAL_AUTOCHECKPOINT_PAGES = 10_000;

export class StoreCore {
  readonly path: string;
  readonly db: Database.Database;
  readonly stmt: StatementCache;
  readonly replicaId: string;
  readonly now: () => number;
  readonly maxSkewMs: number;
  readonly key: SigningKey | undefined;
  /** This replica's Ed25519 public key (raw, base64url); '' for a read-only log without its key file. */
  readonly publicKey: string;
  /** The clock local stamps come from; remote stamps move it forward (never past the skew bound). */
  clock: HlcState = { ms: 0, counter: 0 };
  /** Commits made through this connection (data_version only sees other connections'). */
  localCommits = 0;
  private readonly hooks: CommitHook[] = [];
  private readonly listeners: Array<() => void> = [];

  constructor(path: string, options: SqliteEventStoreOptions) {
    this.path = path;
    this.now = options.now ?? Date.now;
    this.maxSkewMs = options.maxSkewMs ?? DEFAULT_MAX_SKEW_MS;
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    try {
      this.db = new Database(path, { timeout: 10_000, readonly: options.readonly ?? false });
      this.stmt = statementCache(this.db);
      this.db.pragma('journal_mode = WAL');
      this.db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
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
      this.key = this.openKey(path, options);
      this.publicKey = this.key?.publicRaw ?? '';
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

  /** Adds a hook run in every transaction that stores events (the projections hang off it). */
  onCommit(hook: CommitHook): void {
    this.hooks.push(hook);
  }

  /** Adds a listener called after every commit that stored events (waking waiters). */
  onCommitted(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** Inside the transaction: hands what it stored to every commit hook. */
  committing(events: readonly LogEvent[]): void {
    if (events.length === 0) return;
    for (const hook of this.hooks) hook(events);
  }

  /** After a commit that stored events: counts it and tells the listeners. */
  committed(): void {
    this.localCommits++;
    for (const listener of this.listeners) listener();
  }

  /** Later local stamps sort after a remote stamp we have seen, but never past the skew bound. */
  observeRemote(hlc: string): void {
    const stamp = parseHlc(hlc);
    if (stamp && stamp.ms <= this.now() + this.maxSkewMs) this.clock = observe(this.clock, hlc);
  }

  /** The sha256 of each artifact, in order; throws artifact.unknown_ref for one not stored. */
  artifactShas(ids: readonly string[], missing: (id: string) => string): string[] {
    return ids.map((artifactId) => {
      const sha = this.stmt('SELECT sha256 FROM artifacts WHERE id = ?').pluck().get(artifactId) as string | undefined;
      if (sha === undefined)
        throw new HubError('artifact.unknown_ref', missing(artifactId), {
          field: 'artifact_ids',
        });
      return sha;
    });
  }

  /** The highest seq in the log, 0 when it is empty (one probe of the rowid's b-tree). */
  topSeq(): number {
    return this.stmt('SELECT coalesce(max(seq), 0) FROM events').pluck().get() as number;
  }

  changeToken(): number {
    // data_version moves when another connection commits; localCommits covers this connection.
    return (this.db.pragma('data_version', { simple: true }) as number) * 1_000_003 + this.localCommits;
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
