// The term associations of a palace's mined code, kept on disk (`<palace>/associations.sqlite3`) and
// updated by the mine write step file by file (Memory.fileSources / removeSources): a re-mined or
// removed file's old units are subtracted, its new ones added, in one transaction. A freshly started
// hub reads only what a query needs (the postings of the query's stems and the identifier stems of
// those units); nothing is built at start. search/expand.ts holds the statistic; TermAssociations
// there is the in-memory reference these counts are tested against (same units, same expansions).
//
// A palace mined before this file existed gets its counts once, in slices, by a long-running hub
// (search/association-index.ts backfillAssociations); until then `complete` is false and search
// does not expand (docs/decisions.md). Only this module sends SQL to the file.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';

import { statementCache, type StatementCache } from '../sqlite-statements.js';
import {
  associationUnit,
  expandsStem,
  MAX_POSTINGS,
  MIN_PAIR,
  pickExpansions,
  scoreStem,
  surfaceOf,
  type AssociationSource,
  type Expander,
  type Expansion,
} from './expand.js';

export const ASSOCIATIONS_FILE = 'associations.sqlite3';
/** Query stems whose candidates are kept in memory at most. */
const CACHE_STEMS = 4096;

type Migration = (db: Database.Database) => void;

/** Ordered migrations: index + 1 is the schema version each one produces. Never edit a shipped one. */
const MIGRATIONS: readonly Migration[] = [
  (db) => {
    db.exec(`
      CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL) STRICT;
      CREATE TABLE stems (id INTEGER PRIMARY KEY, stem TEXT NOT NULL UNIQUE) STRICT;
      -- Every source file counted (with no unit too: the backfill's progress), with its surface forms.
      CREATE TABLE files (file TEXT PRIMARY KEY, forms TEXT NOT NULL) STRICT;
      -- One code chunk: its description and identifier stem ids (little-endian uint32 arrays).
      CREATE TABLE units (id INTEGER PRIMARY KEY, file TEXT NOT NULL, desc BLOB NOT NULL, idents BLOB NOT NULL) STRICT;
      CREATE INDEX units_file ON units (file);
      CREATE TABLE postings (stem INTEGER NOT NULL, unit INTEGER NOT NULL, PRIMARY KEY (stem, unit)) STRICT, WITHOUT ROWID;
      CREATE TABLE ident_df (stem INTEGER PRIMARY KEY, df INTEGER NOT NULL) STRICT;
      CREATE TABLE surface (stem INTEGER NOT NULL, word TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (stem, word)) STRICT, WITHOUT ROWID;
    `);
  },
];

export const ASSOCIATIONS_SCHEMA_VERSION = MIGRATIONS.length;

function migrate(db: Database.Database): void {
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version > MIGRATIONS.length)
    throw new Error(
      `${ASSOCIATIONS_FILE} has schema version ${version}, newer than this palace (${MIGRATIONS.length})`,
    );
  for (let v = version; v < MIGRATIONS.length; v++)
    db.transaction(() => {
      MIGRATIONS[v]?.(db);
      db.pragma(`user_version = ${v + 1}`);
    })();
}

function pack(ids: readonly number[]): Buffer {
  const a = Uint32Array.from(ids);
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength);
}

function unpack(blob: Buffer): Uint32Array {
  const copy = new Uint8Array(blob.byteLength);
  copy.set(blob);
  return new Uint32Array(copy.buffer, 0, blob.byteLength >>> 2);
}

/** A file's drawers as the mine writes them (empty: the file no longer has chunks). */
export interface FileUnits {
  source_file: string;
  drawers: readonly AssociationSource[];
}

type Forms = Record<string, Record<string, number>>;

/** Per query stem: its scored candidates, cached until the counts change (here or in another process). */
type Scored = ReturnType<typeof scoreStem>;

export class AssociationStore implements Expander {
  readonly path: string;
  private readonly db: Database.Database;
  private readonly stmt: StatementCache;
  private readonly stemIds = new Map<string, number>();
  private readonly cache = new Map<string, Scored | null>();
  private cacheVersion = '';
  /** Bumped by every write of this connection (data_version only sees other connections' commits). */
  private writes = 0;
  /** Files written by the mine since the backfill last looked (it must not overwrite them with older chunks). */
  private readonly touched = new Set<string>();

  private constructor(path: string, db: Database.Database) {
    this.path = path;
    this.db = db;
    this.stmt = statementCache(db);
  }

  /**
   * Opens (creating and migrating) a palace's association counts. A new file is complete at once
   * when the palace has no mined code yet (`hasMinedFiles` false); otherwise the backfill fills it.
   */
  static open(palacePath: string, options: { hasMinedFiles: () => boolean }): AssociationStore {
    mkdirSync(palacePath, { recursive: true, mode: 0o700 });
    const path = join(palacePath, ASSOCIATIONS_FILE);
    const db = new Database(path, { timeout: 10_000 });
    try {
      db.pragma('journal_mode = WAL');
      // Derived data: a lost tail is rebuilt by re-mining; no fsync per mine batch.
      db.pragma('synchronous = NORMAL');
      migrate(db);
      const store = new AssociationStore(path, db);
      db.transaction(() => {
        if (store.meta('complete') === undefined) {
          store.setMeta('units', 0);
          store.setMeta('complete', options.hasMinedFiles() ? 0 : 1);
        }
      }).immediate();
      return store;
    } catch (err) {
      db.close();
      throw err;
    }
  }

  private meta(key: string): number | undefined {
    return this.stmt('SELECT value FROM meta WHERE key = ?').pluck().get(key) as number | undefined;
  }

  private setMeta(key: string, value: number): void {
    this.stmt(
      'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    ).run(key, value);
  }

  /** Whether the counts cover every mined file (false while a palace mined before them is backfilled). */
  complete(): boolean {
    return this.meta('complete') === 1;
  }

  markComplete(): void {
    this.setMeta('complete', 1);
    this.writes++;
  }

  /** Units (code chunks) counted. */
  units(): number {
    return this.meta('units') ?? 0;
  }

  /** Whether a source file is counted (with or without units). */
  hasFile(sourceFile: string): boolean {
    return this.stmt('SELECT 1 FROM files WHERE file = ?').pluck().get(sourceFile) !== undefined;
  }

  /** The backfill's view: forgets which files the mine wrote, returning them. */
  takeTouched(): Set<string> {
    const out = new Set(this.touched);
    this.touched.clear();
    return out;
  }

  private stemId(stem: string, create: boolean): number | undefined {
    let id = this.stemIds.get(stem);
    if (id !== undefined) return id;
    id = this.stmt('SELECT id FROM stems WHERE stem = ?').pluck().get(stem) as number | undefined;
    if (id === undefined && create)
      id = Number(this.stmt('INSERT INTO stems (stem) VALUES (?)').run(stem).lastInsertRowid);
    if (id !== undefined) this.stemIds.set(stem, id);
    return id;
  }

  private stemOf(id: number): string {
    return (this.stmt('SELECT stem FROM stems WHERE id = ?').pluck().get(id) as string | undefined) ?? '';
  }

  /** Subtracts a file's units and forms (inside a transaction). */
  private subtract(file: string, df: Map<number, number>, surface: Map<string, number>): number {
    const units = this.stmt('SELECT id, desc, idents FROM units WHERE file = ?').all(file) as Array<{
      id: number;
      desc: Buffer;
      idents: Buffer;
    }>;
    for (const u of units) {
      for (const s of unpack(u.desc))
        this.stmt('DELETE FROM postings WHERE stem = ? AND unit = ?').run(s, u.id);
      for (const s of unpack(u.idents)) df.set(s, (df.get(s) ?? 0) - 1);
    }
    if (units.length > 0) this.stmt('DELETE FROM units WHERE file = ?').run(file);
    const row = this.stmt('SELECT forms FROM files WHERE file = ?').pluck().get(file) as string | undefined;
    if (row !== undefined) {
      for (const [s, words] of Object.entries(JSON.parse(row) as Forms)) {
        const id = this.stemId(s, true) ?? 0;
        for (const [w, n] of Object.entries(words))
          surface.set(`${id}\u0000${w}`, (surface.get(`${id}\u0000${w}`) ?? 0) - n);
      }
      this.stmt('DELETE FROM files WHERE file = ?').run(file);
    }
    return units.length;
  }

  private applyDeltas(df: Map<number, number>, surface: Map<string, number>, unitDelta: number): void {
    for (const [s, d] of df) {
      if (d === 0) continue;
      this.stmt(
        'INSERT INTO ident_df (stem, df) VALUES (?, ?) ON CONFLICT (stem) DO UPDATE SET df = df + excluded.df',
      ).run(s, d);
      if (d < 0) this.stmt('DELETE FROM ident_df WHERE stem = ? AND df <= 0').run(s);
    }
    for (const [key, d] of surface) {
      if (d === 0) continue;
      const at = key.indexOf('\u0000');
      const [stem, word] = [Number(key.slice(0, at)), key.slice(at + 1)];
      this.stmt(
        'INSERT INTO surface (stem, word, n) VALUES (?, ?, ?) ON CONFLICT (stem, word) DO UPDATE SET n = n + excluded.n',
      ).run(stem, word, d);
      if (d < 0) this.stmt('DELETE FROM surface WHERE stem = ? AND word = ? AND n <= 0').run(stem, word);
    }
    if (unitDelta !== 0) this.setMeta('units', this.units() + unitDelta);
    this.writes++;
  }

  /**
   * Replaces these files' counts with their drawers' (the mine write step, after the drawers are
   * stored). A file with no drawers is counted with no unit. One transaction.
   */
  replaceFiles(files: readonly FileUnits[], options: { fromBackfill?: boolean } = {}): void {
    this.write(() => {
      const df = new Map<number, number>();
      const surface = new Map<string, number>();
      let delta = 0;
      const tracking = !options.fromBackfill && !this.complete();
      for (const f of files) {
        if (tracking) this.touched.add(f.source_file);
        delta -= this.subtract(f.source_file, df, surface);
        const forms: Forms = {};
        for (const d of f.drawers) {
          const u = associationUnit(d);
          if (!u) continue;
          const desc = u.desc.map((s) => this.stemId(s, true) ?? 0);
          const idents = u.idents.map((s) => this.stemId(s, true) ?? 0);
          const unit = Number(
            this.stmt('INSERT INTO units (file, desc, idents) VALUES (?, ?, ?)').run(
              f.source_file,
              pack(desc),
              pack(idents),
            ).lastInsertRowid,
          );
          for (const s of desc) this.stmt('INSERT INTO postings (stem, unit) VALUES (?, ?)').run(s, unit);
          for (const s of idents) df.set(s, (df.get(s) ?? 0) + 1);
          for (const [s, words] of u.forms) {
            const id = this.stemId(s, true) ?? 0;
            const own = (forms[s] ??= {});
            for (const [w, n] of words) {
              own[w] = (own[w] ?? 0) + n;
              surface.set(`${id}\u0000${w}`, (surface.get(`${id}\u0000${w}`) ?? 0) + n);
            }
          }
          delta++;
        }
        this.stmt('INSERT INTO files (file, forms) VALUES (?, ?)').run(f.source_file, JSON.stringify(forms));
      }
      this.applyDeltas(df, surface, delta);
    });
  }

  /** One write transaction; a rolled-back one forgets the stem ids it may have cached (they were never stored). */
  private write(fn: () => void): void {
    try {
      this.db.transaction(fn).immediate();
    } catch (err) {
      this.stemIds.clear();
      throw err;
    }
  }

  /** Removes these files' counts (their drawers were deleted). */
  removeFiles(sourceFiles: readonly string[]): void {
    this.write(() => {
      const df = new Map<number, number>();
      const surface = new Map<string, number>();
      let delta = 0;
      const tracking = !this.complete();
      for (const f of sourceFiles) {
        if (tracking) this.touched.add(f);
        delta -= this.subtract(f, df, surface);
      }
      this.applyDeltas(df, surface, delta);
    });
  }

  /** The cache is valid while neither this connection nor another process has written. */
  private freshCache(): void {
    const version = `${this.writes}:${this.db.pragma('data_version', { simple: true }) as number}`;
    if (version !== this.cacheVersion) {
      this.cache.clear();
      this.cacheVersion = version;
    }
  }

  private scored(q: string, units: number): Scored | null {
    const hit = this.cache.get(q);
    if (hit !== undefined) return hit;
    let result: Scored | null = null;
    const id = this.stemId(q, false);
    if (id !== undefined) {
      const descDf = this.stmt('SELECT count(*) FROM postings WHERE stem = ?').pluck().get(id) as number;
      const identDf =
        (this.stmt('SELECT df FROM ident_df WHERE stem = ?').pluck().get(id) as number | undefined) ?? 0;
      if (expandsStem(descDf, identDf)) {
        const co = new Map<number, number>();
        const sample = Math.min(descDf, MAX_POSTINGS);
        // The most recently counted units first (the postings' key is (stem, unit); unit ids only grow).
        for (const blob of this.stmt(
          'SELECT u.idents FROM postings p JOIN units u ON u.id = p.unit WHERE p.stem = ? ORDER BY p.unit DESC LIMIT ?',
        )
          .pluck()
          .iterate(id, sample) as Iterable<Buffer>)
          for (const i of unpack(blob)) co.set(i, (co.get(i) ?? 0) + 1);
        const dfOf = this.stmt('SELECT df FROM ident_df WHERE stem = ?').pluck();
        const rows: Array<{ stem: string; co: number; df: number }> = [];
        for (const [i, c] of co)
          if (c >= MIN_PAIR)
            rows.push({ stem: this.stemOf(i), co: c, df: (dfOf.get(i) as number | undefined) ?? 1 });
        const forms = this.stmt(
          'SELECT s.word, s.n FROM surface s JOIN stems t ON t.id = s.stem WHERE t.stem = ?',
        ).raw();
        result = scoreStem(q, { units, descDf: sample, identDf, co: rows }, (s) =>
          surfaceOf(forms.all(s) as Array<[string, number]>),
        );
      }
    }
    // Distinct query stems of a long-running hub: bounded (a cleared cache only costs cold reads again).
    if (this.cache.size >= CACHE_STEMS) this.cache.clear();
    this.cache.set(q, result);
    return result;
  }

  /**
   * Computes the query stems' candidates not cached yet, one stem per turn of the event loop (a cold
   * stem reads up to MAX_POSTINGS units: a few ms each); expand() then finds them cached.
   */
  async prepare(queryStems: readonly string[]): Promise<void> {
    this.freshCache();
    if (!this.complete()) return;
    const units = this.units();
    if (units === 0) return;
    for (const q of new Set(queryStems)) {
      if (this.cache.has(q)) continue;
      await new Promise((resolve) => setImmediate(resolve));
      this.freshCache();
      this.scored(q, units);
    }
  }

  /** The expansions of a query's stems (search/expand.ts); none until the counts are complete. */
  expand(queryStems: readonly string[]): Expansion[] {
    this.freshCache();
    if (!this.complete()) return [];
    const units = this.units();
    if (units === 0) return [];
    const own = new Set(queryStems);
    const perStem: Scored[] = [];
    for (const q of own) {
      const s = this.scored(q, units);
      if (s) perStem.push(s);
    }
    return pickExpansions(own, perStem);
  }

  close(): void {
    this.db.close();
  }
}
