// The benchmarks' floor: bare better-sqlite3 with the logstream's pragmas (WAL, synchronous=NORMAL)
// on a plain table, or on the palace schema itself (to split schema cost from code cost).
// Used only as a same-run reference, in its own file.

import { createHash, randomBytes } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';

import type { AppendInput } from '../hub/src/logstream/logstream.js';
import { migrate } from '../hub/src/logstream/schema.js';

const COLUMNS =
  'id, type, stream, room, from_agent, to_agent, correlation_id, branch, base_commit, status, artifact_ids, body, metadata_json, created_at, origin_replica, origin_seq, hlc';

export type BareRow = unknown[];

/** Plain: one table, no secondary index. Palace: the real logstream schema with all its indexes. */
export type BareSchema = 'plain' | 'palace';

/**
 * The same fields an append stores, as rows (ids random like real ones, clocks made up, no
 * validation); `firstSeq` keeps origin_seq unique across calls.
 */
export function bareRows(inputs: readonly AppendInput[], firstSeq: number): BareRow[] {
  const stamp = new Date().toISOString().slice(0, 19);
  return inputs.map((input, index) => {
    const i = firstSeq + index;
    return [
      `evt_${stamp.replace(/[-:]/g, '')}_${randomBytes(6).toString('hex')}`,
      input.type,
      input.stream,
      input.room,
      input.from_agent,
      input.to_agent ?? null,
      input.correlation_id ?? null,
      input.branch ?? null,
      input.base_commit ?? null,
      input.status ?? null,
      '[]',
      input.body,
      JSON.stringify(input.metadata ?? {}),
      `${stamp}Z`,
      'rep_000000000000',
      i,
      `${Date.now().toString().padStart(15, '0')}-${i.toString().padStart(8, '0')}-rep_000000000000`,
    ];
  });
}

export class BareDb {
  /** The connection (the write bench turns off autocheckpoint and reads the WAL's size). */
  readonly db: Database.Database;
  /** The database file (its WAL is `${file}-wal`). */
  readonly file: string;
  private readonly insertEvent: Database.Statement;
  private readonly insertArtifact: Database.Statement;
  private readonly begin: Database.Statement;
  private readonly commit: Database.Statement;
  private selectArtifact: Database.Statement | undefined;

  constructor(dir: string, schema: BareSchema = 'plain', synchronous: 'NORMAL' | 'FULL' = 'NORMAL') {
    this.file = join(dir, `bare-${schema}.sqlite3`);
    this.db = new Database(this.file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma(`synchronous = ${synchronous}`);
    if (schema === 'palace') {
      migrate(this.db, () => 'rep_000000000000');
      this.db.exec(
        'CREATE TABLE bare_artifacts (id TEXT PRIMARY KEY, sha256 TEXT, size_bytes INTEGER, content TEXT)',
      );
    } else {
      this.db.exec(`
        CREATE TABLE events (seq INTEGER PRIMARY KEY, ${COLUMNS.split(', ')
          .map((c) => `${c} ${c === 'origin_seq' ? 'INTEGER' : 'TEXT'}`)
          .join(', ')});
        CREATE TABLE bare_artifacts (id TEXT PRIMARY KEY, sha256 TEXT, size_bytes INTEGER, content TEXT);
      `);
    }
    this.insertEvent = this.db.prepare(
      `INSERT INTO events (${COLUMNS}) VALUES (${COLUMNS.split(', ')
        .map(() => '?')
        .join(', ')})`,
    );
    this.insertArtifact = this.db.prepare(
      'INSERT INTO bare_artifacts (id, sha256, size_bytes, content) VALUES (?, ?, ?, ?)',
    );
    this.begin = this.db.prepare('BEGIN IMMEDIATE');
    this.commit = this.db.prepare('COMMIT');
  }

  /** Inserts rows, `perTransaction` rows in each BEGIN IMMEDIATE ... COMMIT. */
  insertRows(rows: readonly BareRow[], perTransaction: number): void {
    for (let i = 0; i < rows.length; i += perTransaction) {
      this.begin.run();
      const end = Math.min(rows.length, i + perTransaction);
      for (let j = i; j < end; j++) this.insertEvent.run(...(rows[j] ?? []));
      this.commit.run();
    }
  }

  /** One artifact's content as bytes: the least an artifact get must do. */
  artifactBytes(id: string): Buffer {
    this.selectArtifact ??= this.db.prepare('SELECT CAST(content AS BLOB) AS bytes FROM bare_artifacts WHERE id = ?');
    return (this.selectArtifact.get(id) as { bytes: Buffer }).bytes;
  }

  /** sha256 of the content, then one autocommit INSERT (what an artifact put must do at least). */
  putArtifact(id: string, content: string): void {
    const sha = createHash('sha256').update(content, 'utf8').digest('hex');
    this.insertArtifact.run(id, sha, Buffer.byteLength(content, 'utf8'), content);
  }

  close(): void {
    this.db.close();
  }
}
