// The SQLite log over `<palace>/logstream.sqlite3`, composed from parts that each have one job:
// StoreCore (the connection, identity, clock and commit hook), LocalAppender (local appends and
// group commit), SqliteReplica (serving and applying verified remote pages, with the artifacts),
// EventQueries (reads), and the projections hung off the commit hook. WAL mode; each append batch is
// one transaction; append order is the INTEGER PRIMARY KEY `seq`.

import type Database from 'better-sqlite3';

import { HubError } from '../errors.js';
import type { Artifact, ArtifactMeta, EventPage, EventQuery, LogEvent, NewArtifact, NewEvent } from '../core/types.js';
import type { LogFile } from './event-store.js';
import { EventQueries } from './event-queries.js';
import { LocalAppender } from './local-append.js';
import { attachProjections } from './projections.js';
import type { ReservationProjection } from './reservation-projection.js';
import { SqliteReplica } from './replica-apply.js';
import { StoreCore, type SqliteEventStoreOptions } from './store-core.js';
import type { TaskTable } from './task-catch-up.js';

export type { SqliteEventStoreOptions } from './store-core.js';

export class SqliteEventStore implements LogFile {
  readonly replicaId: string;
  readonly path: string;
  readonly publicKey: string;
  /** The connection (tests and benchmarks read the file through it). */
  readonly db: Database.Database;
  readonly replica: SqliteReplica;
  readonly tasks: TaskTable;
  readonly reservations: ReservationProjection;
  private readonly core: StoreCore;
  private readonly local: LocalAppender;
  private readonly reads: EventQueries;

  constructor(path: string, options: SqliteEventStoreOptions) {
    this.core = new StoreCore(path, options);
    this.path = path;
    this.db = this.core.db;
    this.replicaId = this.core.replicaId;
    this.publicKey = this.core.publicKey;
    try {
      ({ tasks: this.tasks, reservations: this.reservations } = attachProjections(this.core, options.projection));
      this.local = new LocalAppender(this.core);
      this.replica = new SqliteReplica(this.core);
      this.reads = new EventQueries(this.core);
    } catch (err) {
      this.core.close();
      throw new HubError('store.failed', `cannot open the logstream at ${path}: ${(err as Error).message}`, { cause: err });
    }
  }

  append(batch: readonly NewEvent[]): Array<LogEvent | HubError> {
    return this.local.append(batch);
  }

  query(q: EventQuery): EventPage {
    return this.reads.query(q);
  }

  getEvent(id: string): LogEvent | undefined {
    return this.reads.getEvent(id);
  }

  tipId(): string | null {
    return this.reads.tipId();
  }

  putArtifact(a: NewArtifact): ArtifactMeta {
    return this.replica.putArtifact(a);
  }

  getArtifact(id: string): Artifact | undefined {
    return this.replica.getArtifact(id);
  }

  getArtifactBytes(id: string): { meta: ArtifactMeta; bytes: Buffer } | undefined {
    return this.replica.getArtifactBytes(id);
  }

  changeToken(): number {
    return this.core.changeToken();
  }

  onCommitted(listener: () => void): void {
    this.core.onCommitted(listener);
  }

  /** The highest seq in the log, 0 when it is empty (one probe of the rowid's b-tree). */
  topSeq(): number {
    return this.core.topSeq();
  }

  /**
   * Number of events in the log: the highest seq. seq is the rowid, every insert takes the highest
   * plus one (a rolled-back one leaves no gap) and no event is ever deleted, so the two are equal; a
   * count(*) would read the whole table (40-125 ms at a million events, on every /statusz and status).
   */
  countEvents(): number {
    return this.core.topSeq();
  }

  /** SQLite's own verdict on the file: 'ok' or the first problems it found. */
  integrityCheck(): string {
    const rows = this.core.db.pragma('quick_check') as Array<{ quick_check: string }>;
    return rows.map((r) => r.quick_check).join('; ');
  }

  close(): void {
    if (this.core.db.open) this.tasks.close();
    this.core.close();
  }
}
