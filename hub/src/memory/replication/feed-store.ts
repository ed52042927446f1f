// `<palace>/memory-feed.sqlite3`: the memory feeds of shared wings (docs/memory-replication.md).
// This hub's own feeds (records appended as local writes happen, chained, signed on demand when
// served) and copies of other origins' feeds, verified against their signed checkpoints, kept to
// serve them on (gossip) and applied to the memory. Also the last-writer-wins register of every
// replicated drawer row (its winning clock stamp and kind) and this hub's memory clock.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';

import { formatHlc, observe, parseHlc, tick, type HlcState } from '../../core/hlc.js';
import {
  compareVersions,
  feedCheckpointBytes,
  feedRecordBytes,
  type FeedCheckpoint,
  type FeedRecord,
  type FeedRecordBody,
  type FeedRecordKind,
} from '../../core/memory-feed.js';
import { HubError } from '../../errors.js';
import { GENESIS_CHAIN, nextChain, signBytes, verifyBytes } from '../../logstream/signatures.js';
import type { KeyObject } from 'node:crypto';

export const FEED_FILE = 'memory-feed.sqlite3';
/** Records per served page at most. */
export const MAX_FEED_PAGE = 500;
/** A page stops growing past about this many bytes of record text (at least one record is sent). */
export const FEED_PAGE_BYTES = 8 * 1024 * 1024;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS records (
  origin TEXT NOT NULL, wing TEXT NOT NULL, seq INTEGER NOT NULL, hlc TEXT NOT NULL, body TEXT NOT NULL,
  chain BLOB NOT NULL, applied INTEGER NOT NULL DEFAULT 1, PRIMARY KEY (origin, wing, seq)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS records_pending ON records (applied) WHERE applied = 0;
CREATE TABLE IF NOT EXISTS checkpoints (
  origin TEXT NOT NULL, wing TEXT NOT NULL, seq INTEGER NOT NULL, chain TEXT NOT NULL, sig TEXT NOT NULL,
  PRIMARY KEY (origin, wing, seq)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS versions (
  id TEXT PRIMARY KEY, hlc TEXT NOT NULL, kind TEXT NOT NULL, wing TEXT NOT NULL, origin TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS seeded (wing TEXT PRIMARY KEY, at TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS reembed (id TEXT PRIMARY KEY, queued_at TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
`;

export interface FeedHead {
  origin: string;
  wing: string;
  seq: number;
}

/** The winning version of a drawer row here. */
export interface RowVersion {
  hlc: string;
  kind: FeedRecordKind;
  wing: string;
  origin: string;
}

export interface PendingRecord extends FeedRecord {
  origin: string;
  wing: string;
}

export interface FeedPage {
  records: FeedRecord[];
  checkpoint: FeedCheckpoint | null;
  hasMore: boolean;
}

export class FeedStore {
  readonly db: Database.Database;
  readonly path: string;
  private clock: HlcState;

  constructor(
    palacePath: string,
    readonly replicaId: string,
    private readonly signingKey: () => KeyObject,
  ) {
    mkdirSync(palacePath, { recursive: true });
    this.path = join(palacePath, FEED_FILE);
    this.db = new Database(this.path, { timeout: 10_000 });
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    this.db.exec(SCHEMA);
    const ms = Number(this.meta('clock_ms') ?? '0');
    const counter = Number(this.meta('clock_counter') ?? '0');
    this.clock = { ms, counter };
  }

  private meta(key: string): string | undefined {
    return (this.db.prepare('SELECT value FROM meta WHERE key = ?').pluck().get(key) as string | undefined) ?? undefined;
  }

  private saveClock(): void {
    const put = this.db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value');
    put.run('clock_ms', String(this.clock.ms));
    put.run('clock_counter', String(this.clock.counter));
  }

  /** A fresh local stamp, after every stamp seen. */
  private stamp(): string {
    this.clock = tick(this.clock, Date.now());
    return formatHlc(this.clock, this.replicaId);
  }

  private lastOf(origin: string, wing: string): { seq: number; chain: Buffer } {
    const row = this.db
      .prepare('SELECT seq, chain FROM records WHERE origin = ? AND wing = ? ORDER BY seq DESC LIMIT 1')
      .get(origin, wing) as { seq: number; chain: Buffer } | undefined;
    return row ?? { seq: 0, chain: GENESIS_CHAIN };
  }

  private chainAt(origin: string, wing: string, seq: number): Buffer | undefined {
    if (seq === 0) return GENESIS_CHAIN;
    return (this.db.prepare('SELECT chain FROM records WHERE origin = ? AND wing = ? AND seq = ?').pluck().get(origin, wing, seq) as Buffer | undefined) ?? undefined;
  }

  version(id: string): RowVersion | undefined {
    return (this.db.prepare('SELECT hlc, kind, wing, origin FROM versions WHERE id = ?').get(id) as RowVersion | undefined) ?? undefined;
  }

  setVersion(id: string, v: RowVersion): void {
    this.db
      .prepare('INSERT INTO versions (id, hlc, kind, wing, origin) VALUES (?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET hlc = excluded.hlc, kind = excluded.kind, wing = excluded.wing, origin = excluded.origin')
      .run(id, v.hlc, v.kind, v.wing, v.origin);
  }

  /**
   * Appends this hub's own records (one local write: several rows, several wings) in one transaction,
   * all with one stamp. With `onlyNew`, rows that already have a version are skipped (seeding).
   */
  appendLocal(items: ReadonlyArray<{ wing: string; body: FeedRecordBody }>, onlyNew = false): number {
    if (items.length === 0) return 0;
    const insert = this.db.prepare('INSERT INTO records (origin, wing, seq, hlc, body, chain, applied) VALUES (?, ?, ?, ?, ?, ?, 1)');
    const run = this.db.transaction(() => {
      const hlc = this.stamp();
      let n = 0;
      for (const { wing, body } of items) {
        if (onlyNew && this.version(body.id)) continue;
        const last = this.lastOf(this.replicaId, wing);
        const record: FeedRecord = { seq: last.seq + 1, hlc, body: JSON.stringify(body) };
        const chain = nextChain(last.chain, feedRecordBytes(this.replicaId, wing, record));
        insert.run(this.replicaId, wing, record.seq, hlc, record.body, chain);
        const current = this.version(body.id);
        if (!current || compareVersions(current, { hlc, kind: body.k }) < 0)
          this.setVersion(body.id, { hlc, kind: body.k, wing, origin: this.replicaId });
        n++;
      }
      this.saveClock();
      return n;
    });
    return run();
  }

  isSeeded(wing: string): boolean {
    return this.db.prepare('SELECT 1 FROM seeded WHERE wing = ?').get(wing) !== undefined;
  }

  markSeeded(wing: string): void {
    this.db.prepare('INSERT OR IGNORE INTO seeded (wing, at) VALUES (?, ?)').run(wing, new Date().toISOString());
  }

  /** The head of every feed of these wings this hub can serve (its own; others' up to a verified checkpoint). */
  heads(wings: ReadonlySet<string>): FeedHead[] {
    const out: FeedHead[] = [];
    const own = this.db.prepare('SELECT wing, max(seq) AS seq FROM records WHERE origin = ? GROUP BY wing').all(this.replicaId) as Array<{ wing: string; seq: number }>;
    for (const r of own) if (wings.has(r.wing)) out.push({ origin: this.replicaId, wing: r.wing, seq: r.seq });
    const others = this.db.prepare('SELECT origin, wing, max(seq) AS seq FROM checkpoints WHERE origin <> ? GROUP BY origin, wing').all(this.replicaId) as FeedHead[];
    for (const r of others) if (wings.has(r.wing)) out.push(r);
    return out;
  }

  /** How far this hub holds (verified) the feed of `origin` for `wing`. */
  head(origin: string, wing: string): number {
    return this.lastOf(origin, wing).seq;
  }

  /**
   * Records of one feed after `after`, ending at a checkpoint: this hub's own feed is signed here at
   * the page's end; another origin's is served only up to a checkpoint that origin signed.
   */
  page(origin: string, wing: string, after: number, limit: number): FeedPage {
    const own = origin === this.replicaId;
    let end: number;
    let stored: FeedCheckpoint | undefined;
    if (own) end = this.lastOf(origin, wing).seq;
    else {
      stored = this.db
        .prepare('SELECT origin, wing, seq, chain, sig FROM checkpoints WHERE origin = ? AND wing = ? AND seq > ? ORDER BY seq LIMIT 1')
        .get(origin, wing, after) as FeedCheckpoint | undefined;
      if (!stored) return { records: [], checkpoint: null, hasMore: false };
      end = stored.seq;
    }
    const rows = this.db
      .prepare('SELECT seq, hlc, body, chain FROM records WHERE origin = ? AND wing = ? AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?')
      .all(origin, wing, after, end, own ? Math.min(limit, MAX_FEED_PAGE) : MAX_FEED_PAGE) as Array<FeedRecord & { chain: Buffer }>;
    const records: FeedRecord[] = [];
    let bytes = 0;
    for (const r of rows) {
      if (own && records.length > 0 && bytes + r.body.length > FEED_PAGE_BYTES) break;
      records.push({ seq: r.seq, hlc: r.hlc, body: r.body });
      bytes += r.body.length;
    }
    const last = rows[records.length - 1];
    if (!last) return { records: [], checkpoint: null, hasMore: false };
    let checkpoint: FeedCheckpoint;
    if (own) {
      const body = { origin, wing, seq: last.seq, chain: last.chain.toString('hex') };
      checkpoint = { ...body, sig: signBytes(this.signingKey(), feedCheckpointBytes(body)) };
    } else {
      if (last.seq !== end) return { records: [], checkpoint: null, hasMore: false }; // a hole: never happens for verified copies
      checkpoint = stored as FeedCheckpoint;
    }
    const top = own ? this.lastOf(origin, wing).seq : ((this.db.prepare('SELECT max(seq) FROM checkpoints WHERE origin = ? AND wing = ?').pluck().get(origin, wing) as number | null) ?? 0);
    return { records, checkpoint, hasMore: last.seq < top };
  }

  /**
   * Verifies one page of another origin's feed and stores it, not yet applied, in one transaction:
   * records numbered exactly after this hub's head, the chain recomputed from this hub's own chain
   * value reaching the checkpoint, the checkpoint signed by the origin (`key`; null skips only the
   * signature). Records already held must chain identically. Returns the records newly stored.
   */
  ingest(origin: string, wing: string, after: number, records: readonly FeedRecord[], checkpoint: FeedCheckpoint, key: KeyObject | null): PendingRecord[] {
    const bad = (message: string, code: 'sync.bad_message' | 'sync.bad_signature' | 'sync.hash_mismatch' = 'sync.bad_message'): HubError => new HubError(code, `memory feed ${origin}/${wing}: ${message}`, { data: { origin, wing } });
    if (checkpoint.origin !== origin || checkpoint.wing !== wing) throw bad(`the checkpoint is for ${checkpoint.origin}/${checkpoint.wing}`);
    if (key && !verifyBytes(key, feedCheckpointBytes(checkpoint), checkpoint.sig))
      throw bad(`the checkpoint at seq ${checkpoint.seq} is not signed by ${origin}'s key`, 'sync.bad_signature');
    const start = this.chainAt(origin, wing, after);
    if (!start) throw bad(`this hub does not hold the feed up to ${after}`);
    if (records.length !== checkpoint.seq - after) throw bad(`a gap: ${records.length} record(s) served for seq ${after + 1}..${checkpoint.seq}`);
    let chain = start;
    let seq = after;
    for (const r of records) {
      if (r.seq !== seq + 1) throw bad(`record seq ${r.seq} is not the next one after ${seq}`);
      seq = r.seq;
      chain = nextChain(chain, feedRecordBytes(origin, wing, r));
    }
    if (chain.toString('hex') !== checkpoint.chain) throw bad(`the records do not hash to the origin's checkpoint: altered, reordered or forged`, 'sync.hash_mismatch');
    const insert = this.db.prepare('INSERT INTO records (origin, wing, seq, hlc, body, chain, applied) VALUES (?, ?, ?, ?, ?, ?, 0) ON CONFLICT DO NOTHING');
    const held = this.db.prepare('SELECT body, hlc FROM records WHERE origin = ? AND wing = ? AND seq = ?');
    const run = this.db.transaction(() => {
      const fresh: PendingRecord[] = [];
      let c = start;
      for (const r of records) {
        c = nextChain(c, feedRecordBytes(origin, wing, r));
        const have = held.get(origin, wing, r.seq) as { body: string; hlc: string } | undefined;
        if (have) {
          if (have.body !== r.body || have.hlc !== r.hlc) throw bad(`this hub's copy of seq ${r.seq} differs from the served record`, 'sync.hash_mismatch');
          continue;
        }
        insert.run(origin, wing, r.seq, r.hlc, r.body, c);
        this.clock = observe(this.clock, r.hlc);
        fresh.push({ ...r, origin, wing });
      }
      this.db
        .prepare('INSERT OR IGNORE INTO checkpoints (origin, wing, seq, chain, sig) VALUES (?, ?, ?, ?, ?)')
        .run(origin, wing, checkpoint.seq, checkpoint.chain, checkpoint.sig);
      this.saveClock();
      return fresh;
    });
    return run();
  }

  /** Records stored but not yet applied to the memory (a crash between the two), in arrival order. */
  pending(limit = 1000): PendingRecord[] {
    return this.db
      .prepare('SELECT origin, wing, seq, hlc, body FROM records WHERE applied = 0 ORDER BY origin, wing, seq LIMIT ?')
      .all(limit) as PendingRecord[];
  }

  /**
   * Records the winning versions, queues the rows stored without a usable vector for re-embedding,
   * and marks the batch applied, in one transaction.
   */
  commitApplied(
    versions: ReadonlyArray<{ id: string; version: RowVersion }>,
    batch: ReadonlyArray<{ origin: string; wing: string; seq: number }>,
    reembed: readonly string[] = [],
  ): void {
    const queue = this.db.prepare('INSERT OR IGNORE INTO reembed (id, queued_at) VALUES (?, ?)');
    const at = new Date().toISOString();
    this.db.transaction(() => {
      for (const v of versions) this.setVersion(v.id, v.version);
      for (const id of reembed) queue.run(id, at);
      this.markApplied(batch);
    })();
  }

  /** Rows waiting to be re-embedded here, oldest first (they survive a restart). */
  reembedBatch(limit: number): string[] {
    return this.db.prepare('SELECT id FROM reembed ORDER BY queued_at, id LIMIT ?').pluck().all(limit) as string[];
  }

  reembedDone(ids: readonly string[]): void {
    const del = this.db.prepare('DELETE FROM reembed WHERE id = ?');
    this.db.transaction(() => {
      for (const id of ids) del.run(id);
    })();
  }

  reembedWaiting(): number {
    return this.db.prepare('SELECT count(*) FROM reembed').pluck().get() as number;
  }

  markApplied(records: ReadonlyArray<{ origin: string; wing: string; seq: number }>): void {
    const mark = this.db.prepare('UPDATE records SET applied = 1 WHERE origin = ? AND wing = ? AND seq = ?');
    this.db.transaction(() => {
      for (const r of records) mark.run(r.origin, r.wing, r.seq);
    })();
  }

  /** Per wing: records held per origin (status). */
  summary(): Array<{ origin: string; wing: string; records: number; pending: number }> {
    return this.db
      .prepare('SELECT origin, wing, count(*) AS records, sum(applied = 0) AS pending FROM records GROUP BY origin, wing ORDER BY wing, origin')
      .all() as Array<{ origin: string; wing: string; records: number; pending: number }>;
  }

  /** Whether a stamp is well-formed and names `origin`. */
  static stampOf(hlc: string, origin: string): boolean {
    const p = parseHlc(hlc);
    return p !== undefined && p.replica === origin;
  }

  close(): void {
    this.db.close();
  }
}
