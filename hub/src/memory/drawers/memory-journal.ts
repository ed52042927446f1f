// The memory write journal `<palace>/memory-journal.sqlite3`: every drawer write (upsert, delete,
// patch) is appended here durably before the vector store applies it, and removed once applied. Only
// this module sends SQL to the file; it never talks to the vector store (journaled-vector-store does).

import { mkdirSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import Database from 'better-sqlite3';

import { HubError } from '../../errors.js';
import type { DrawerFilter, DrawerPatch, StoredDrawer } from '../../vector/vector-store.js';
import { readUserVersion } from '../../sqlite-user-version.js';

export const JOURNAL_FILE = 'memory-journal.sqlite3';

/** A drawer as journaled: everything but its vector, which travels beside it as raw floats. */
export type JournaledDrawer = Omit<StoredDrawer, 'vector'>;

/** One journaled write, in the order the vector store must apply it. */
export type JournalOp =
  | { op: 'upsert'; drawers: StoredDrawer[] }
  | { op: 'delete'; filter: DrawerFilter }
  | { op: 'patch'; filter: DrawerFilter; patch: DrawerPatch };

/** A pending entry: its write, who wrote it and when. */
export interface JournalEntry {
  seq: number;
  pid: number;
  written_at: string;
  write: JournalOp;
}

type Migration = (db: Database.Database) => void;

/** Ordered migrations: index + 1 is the schema version each one produces. Never edit a shipped one. */
const MIGRATIONS: readonly Migration[] = [
  (db) => {
    db.exec(`
      CREATE TABLE entries (
        seq INTEGER PRIMARY KEY,
        op TEXT NOT NULL,
        payload TEXT NOT NULL,
        vectors BLOB,
        dimensions INTEGER NOT NULL DEFAULT 0,
        pid INTEGER NOT NULL,
        written_at TEXT NOT NULL
      ) STRICT;
      -- Progress of long imports (palace migrate --from-mempalace): one row per source and phase.
      CREATE TABLE import_state (
        source TEXT NOT NULL,
        phase TEXT NOT NULL,
        cursor INTEGER NOT NULL DEFAULT 0,
        done INTEGER NOT NULL DEFAULT 0,
        counts TEXT NOT NULL DEFAULT '{}',
        updated_at TEXT NOT NULL,
        PRIMARY KEY (source, phase)
      ) STRICT;
    `);
  },
];

export const JOURNAL_SCHEMA_VERSION = MIGRATIONS.length;

/** The schema version of a palace's journal file without opening it for writing; null when absent. */
export function readJournalVersion(palacePath: string): number | null {
  return readUserVersion(join(palacePath, JOURNAL_FILE));
}

/** How many writes a palace's journal holds pending, read without opening it for writing. */
export function readJournalPending(palacePath: string): number {
  let db: Database.Database;
  try {
    db = new Database(join(palacePath, JOURNAL_FILE), { readonly: true, fileMustExist: true });
  } catch {
    return 0;
  }
  try {
    return (db.prepare('SELECT count(*) AS n FROM entries').get() as { n: number }).n;
  } catch {
    return 0;
  } finally {
    db.close();
  }
}

function packVectors(drawers: readonly StoredDrawer[]): { blob: Buffer; dimensions: number } {
  const dimensions = drawers[0]?.vector.length ?? 0;
  const all = new Float32Array(dimensions * drawers.length);
  drawers.forEach((d, i) => {
    if (d.vector.length === dimensions) all.set(d.vector, i * dimensions);
  });
  return { blob: Buffer.from(all.buffer, all.byteOffset, all.byteLength), dimensions };
}

function unpackVectors(blob: Buffer | null, dimensions: number, count: number): Float32Array[] {
  if (!blob || dimensions === 0 || blob.byteLength !== dimensions * count * 4) return Array.from({ length: count }, () => new Float32Array(0));
  const copy = new Float32Array(new Uint8Array(blob).buffer);
  return Array.from({ length: count }, (_, i) => copy.slice(i * dimensions, (i + 1) * dimensions));
}

interface EntryRow {
  seq: number;
  op: string;
  payload: string;
  vectors: Buffer | null;
  dimensions: number;
  pid: number;
  written_at: string;
}

/** Progress of one import phase. */
export interface ImportState {
  cursor: number;
  done: boolean;
  counts: Record<string, number>;
}

export class MemoryJournal {
  readonly path: string;
  private readonly db: Database.Database;
  private readonly now: () => Date;
  /** The statements of every drawer write (append, prune), prepared once: one group commit runs all four. */
  private readonly sql: Record<'insert' | 'prune' | 'normal' | 'full', Database.Statement>;

  private constructor(path: string, db: Database.Database, now: () => Date) {
    this.path = path;
    this.db = db;
    this.now = now;
    this.sql = {
      insert: db.prepare('INSERT INTO entries (op, payload, vectors, dimensions, pid, written_at) VALUES (?, ?, ?, ?, ?, ?)'),
      prune: db.prepare('DELETE FROM entries WHERE seq = ?'),
      normal: db.prepare('PRAGMA synchronous = NORMAL'),
      full: db.prepare('PRAGMA synchronous = FULL'),
    };
  }

  /** Opens (creating and migrating) the journal of a palace: WAL, synchronous=FULL. */
  static open(palacePath: string, options: { now?: () => Date } = {}): MemoryJournal {
    mkdirSync(palacePath, { recursive: true, mode: 0o700 });
    const path = join(palacePath, JOURNAL_FILE);
    let db: Database.Database | undefined;
    try {
      db = new Database(path, { timeout: 10_000 });
      db.pragma('journal_mode = WAL');
      // An acknowledged write must survive power loss too: the append is fsynced before the index write.
      db.pragma('synchronous = FULL');
      migrateJournal(db);
    } catch (err) {
      db?.close();
      throw new HubError('store.failed', `cannot open the memory journal at ${path}: ${(err as Error).message}`, { cause: err });
    }
    return new MemoryJournal(path, db, options.now ?? (() => new Date()));
  }

  /**
   * Appends a write and returns its sequence number, and `durable`, which resolves once the entry is
   * on disk. The insert itself is not fsynced on this thread (synchronous=NORMAL for it): the WAL is
   * fdatasynced on libuv's thread pool instead, so the hub's event loop does not wait out the disk
   * (~20-30 ms per write on a shared disk, measured, one per group commit of drawers). What reaches
   * the disk is what synchronous=FULL gives: the committed WAL frames, synced before `durable`.
   */
  append(write: JournalOp): { seq: number; durable: Promise<void> } {
    let payload: string;
    let vectors: { blob: Buffer; dimensions: number } | undefined;
    if (write.op === 'upsert') {
      payload = JSON.stringify(write.drawers.map(({ vector: _v, ...rest }) => rest));
      vectors = packVectors(write.drawers);
    } else if (write.op === 'delete') payload = JSON.stringify({ filter: write.filter });
    else payload = JSON.stringify({ filter: write.filter, patch: write.patch });
    this.sql.normal.run();
    let seq: number;
    try {
      const info = this.sql.insert.run(write.op, payload, vectors?.blob ?? null, vectors?.dimensions ?? 0, process.pid, this.now().toISOString());
      seq = Number(info.lastInsertRowid);
    } finally {
      this.sql.full.run();
    }
    return { seq, durable: this.syncWal() };
  }

  /** fdatasync of the WAL off this thread; without a WAL file to open, a FULL checkpoint (synchronous) instead. */
  private async syncWal(): Promise<void> {
    let handle: FileHandle | undefined;
    try {
      handle = await open(`${this.path}-wal`, 'r+');
    } catch {
      this.db.pragma('wal_checkpoint(FULL)');
      return;
    }
    try {
      await handle.datasync();
    } finally {
      await handle.close();
    }
  }

  /**
   * Marks a write applied: applied entries are pruned at once, so the file holds only pending work.
   * Not fsynced (synchronous=NORMAL for this statement): a prune lost to a power cut only means the
   * write is applied again on replay, and writes are idempotent in journal order (upserts by id,
   * deletes and patches by filter); the next append's sync makes it durable anyway. It was one more
   * fsync per drawer write on the hub's event loop (~11 ms each on a shared disk, measured).
   */
  markApplied(seq: number): void {
    this.sql.normal.run();
    try {
      this.sql.prune.run(seq);
    } finally {
      this.sql.full.run();
    }
  }

  /** Writes not yet applied, oldest first. */
  pending(): JournalEntry[] {
    const rows = this.db.prepare('SELECT * FROM entries ORDER BY seq').all() as EntryRow[];
    return rows.map((r) => ({ seq: r.seq, pid: r.pid, written_at: r.written_at, write: decode(r) }));
  }

  /** How many writes are pending. */
  pendingCount(): number {
    return (this.db.prepare('SELECT count(*) AS n FROM entries').get() as { n: number }).n;
  }

  importState(source: string, phase: string): ImportState | undefined {
    const row = this.db.prepare('SELECT cursor, done, counts FROM import_state WHERE source = ? AND phase = ?').get(source, phase) as
      | { cursor: number; done: number; counts: string }
      | undefined;
    return row ? { cursor: row.cursor, done: row.done === 1, counts: JSON.parse(row.counts) as Record<string, number> } : undefined;
  }

  saveImportState(source: string, phase: string, state: ImportState): void {
    this.db
      .prepare(
        `INSERT INTO import_state (source, phase, cursor, done, counts, updated_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT(source, phase) DO UPDATE SET cursor = excluded.cursor, done = excluded.done, counts = excluded.counts, updated_at = excluded.updated_at`,
      )
      .run(source, phase, state.cursor, state.done ? 1 : 0, JSON.stringify(state.counts), this.now().toISOString());
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

function decode(r: EntryRow): JournalOp {
  if (r.op === 'upsert') {
    const drawers = JSON.parse(r.payload) as JournaledDrawer[];
    const vectors = unpackVectors(r.vectors, r.dimensions, drawers.length);
    return { op: 'upsert', drawers: drawers.map((d, i) => ({ ...d, vector: vectors[i] ?? new Float32Array(0) })) };
  }
  const body = JSON.parse(r.payload) as { filter: DrawerFilter; patch?: DrawerPatch };
  if (r.op === 'delete') return { op: 'delete', filter: body.filter };
  return { op: 'patch', filter: body.filter, patch: body.patch ?? {} };
}

/** Brings a journal file to the current schema. Refuses a file written by a newer palace. */
function migrateJournal(db: Database.Database): void {
  const version = (): number => db.pragma('user_version', { simple: true }) as number;
  const check = (current: number): void => {
    if (current > JOURNAL_SCHEMA_VERSION)
      throw new Error(`${JOURNAL_FILE} has schema version ${current}, newer than this palace understands (${JOURNAL_SCHEMA_VERSION}); upgrade palace`);
  };
  check(version());
  if (version() === JOURNAL_SCHEMA_VERSION) return;
  db.transaction(() => {
    const current = version();
    check(current);
    for (let v = current; v < JOURNAL_SCHEMA_VERSION; v++) MIGRATIONS[v]?.(db);
    db.pragma(`user_version = ${JOURNAL_SCHEMA_VERSION}`);
  }).immediate();
}
