// The `reservations` table of logstream.sqlite3: every file reservation not released (with a well-formed
// body), kept in the append's own transaction, plus the ids released so far (a release may arrive by sync
// before its reservation). Reads filter expiry (against the caller's clock) and task completion.

import type Database from 'better-sqlite3';

import { jsonBody, reservationOf, type Reservation } from '../core/task-state.js';
import type { LogEvent } from '../core/types.js';
import { statementCache, type StatementCache } from '../sqlite-statements.js';
import { BuildMarker } from './build-marker.js';

/** meta key present while the table is being built: events with seq above it are not applied yet. */
export const RESERVATIONS_BUILT_SEQ_KEY = 'reservations_built_seq';

/** The tables and index (schema migration 4 runs this; `reset` empties them). */
export const RESERVATIONS_DDL = `
  CREATE TABLE reservations (
    reservation_id TEXT PRIMARY KEY,
    seq INTEGER NOT NULL,
    stream TEXT NOT NULL,
    agent TEXT NOT NULL,
    correlation_id TEXT,
    paths_json TEXT NOT NULL,
    exclusive INTEGER NOT NULL,
    expires_at TEXT NOT NULL,
    created_at TEXT NOT NULL
  ) STRICT;
  -- Reads ask for expires_at > now: only reservations still running are visited, however many ended.
  CREATE INDEX reservations_expiry_idx ON reservations(expires_at);
  CREATE TABLE released_reservations (reservation_id TEXT PRIMARY KEY) STRICT, WITHOUT ROWID;
`;

/** What applying needs of an event (a stored local event, or a remote one at its new local seq). */
export type ReservationEvent = Pick<LogEvent, 'seq' | 'id' | 'type' | 'stream' | 'from_agent' | 'correlation_id' | 'body' | 'created_at'>;

export const RESERVATION_TYPES = ['file.reserved', 'file.released'] as const;

/** Filters of a read of the table (all optional; the path filter is applied by the caller). */
export interface HeldFilter {
  stream?: string | null;
  agent?: string | null;
  correlation_id?: string | null;
  /** Only reservations whose expires_at is after this ISO instant. */
  after?: string;
}

/** One difference between the table and a full scan of the log. */
export interface ReservationDiff {
  reservation_id: string;
  /** release_missing: a release in the log the table does not remember. */
  problem: 'missing' | 'extra' | 'different' | 'release_missing';
}

export interface ReservationCheck {
  /** Reservations not released, per the full scan. */
  held: number;
  differences: ReservationDiff[];
}

type Row = {
  reservation_id: string;
  seq: number;
  stream: string;
  agent: string;
  correlation_id: string | null;
  paths_json: string;
  exclusive: number;
  expires_at: string;
  created_at: string;
};

const COLUMNS = 'reservation_id, seq, stream, agent, correlation_id, paths_json, exclusive, expires_at, created_at';

function toReservation(r: Row): Reservation {
  return {
    reservation_id: r.reservation_id,
    agent: r.agent,
    stream: r.stream,
    paths: JSON.parse(r.paths_json) as string[],
    exclusive: r.exclusive === 1,
    expires_at: r.expires_at,
    correlation_id: r.correlation_id,
    created_at: r.created_at,
  };
}

/** The row a `file.reserved` event makes, or null when its body is not a reservation. */
function rowOf(e: ReservationEvent): Row | null {
  const r = reservationOf(e);
  if (!r) return null;
  return {
    reservation_id: e.id,
    seq: e.seq,
    stream: r.stream,
    agent: r.agent,
    correlation_id: e.correlation_id,
    paths_json: JSON.stringify(r.paths),
    exclusive: r.exclusive ? 1 : 0,
    expires_at: r.expires_at,
    created_at: e.created_at,
  };
}

/** The reservation id a `file.released` event names, if its body names one. */
function releasedId(e: Pick<LogEvent, 'body'>): string | null {
  const id = jsonBody(e)?.reservation_id;
  return typeof id === 'string' ? id : null;
}

export class ReservationProjection {
  private readonly stmt: StatementCache;
  private readonly built: BuildMarker;
  private present: boolean | undefined;

  /** `topSeq`: the log's highest seq (the store's). */
  constructor(
    private readonly db: Database.Database,
    private readonly topSeq: () => number,
  ) {
    this.stmt = statementCache(db);
    this.built = new BuildMarker(db, RESERVATIONS_BUILT_SEQ_KEY);
  }

  /**
   * Applies reservation events; runs inside the caller's transaction. Order does not matter and
   * applying twice changes nothing: a release is remembered, and a released reservation never enters.
   */
  apply(events: Iterable<ReservationEvent>): void {
    for (const e of events) {
      if (e.type === 'file.reserved') {
        if (this.stmt('SELECT 1 FROM released_reservations WHERE reservation_id = ?').get(e.id) !== undefined) continue;
        const row = rowOf(e);
        if (row)
          this.stmt(`INSERT OR IGNORE INTO reservations (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`).run(
            row.reservation_id,
            row.seq,
            row.stream,
            row.agent,
            row.correlation_id,
            row.paths_json,
            row.exclusive,
            row.expires_at,
            row.created_at,
          );
      } else if (e.type === 'file.released') {
        const id = releasedId(e);
        if (id === null) continue;
        this.stmt('INSERT OR IGNORE INTO released_reservations (reservation_id) VALUES (?)').run(id);
        this.stmt('DELETE FROM reservations WHERE reservation_id = ?').run(id);
      }
    }
  }

  /** The table exists (a read-only hub on a log from before it has none) and is complete. */
  ready(): boolean {
    this.present ??= this.db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'reservations'`).get() !== undefined;
    return this.present && this.built.seq() === null;
  }

  private eventsIn(from: number, to: number): ReservationEvent[] {
    return this.stmt(
      `SELECT seq, id, type, stream, from_agent, correlation_id, body, created_at FROM events
        WHERE seq > ? AND seq <= ? AND type IN ('file.reserved', 'file.released') ORDER BY seq`,
    ).all(from, to) as ReservationEvent[];
  }

  /** Applies the reservation events among the next `rows` seqs, in one transaction; true when complete. */
  buildSlice(rows: number): boolean {
    return this.built.buildSlice((from) => {
      const to = from + rows;
      this.apply(this.eventsIn(from, to));
      return to >= this.topSeq() ? null : to;
    });
  }

  /** Empties the tables and marks them unbuilt from the first event (then build in slices). */
  reset(): void {
    this.db
      .transaction(() => {
        this.stmt('DELETE FROM reservations').run();
        this.stmt('DELETE FROM released_reservations').run();
        this.built.restart();
      })
      .immediate();
  }

  /** Reservations not released, oldest first, matching the filters (task completion is the caller's). */
  held(f: HeldFilter): Reservation[] {
    const where: string[] = [];
    const params: unknown[] = [];
    const eq = (column: string, value: string | null | undefined): void => {
      if (value === null || value === undefined) return;
      where.push(`${column} = ?`);
      params.push(value);
    };
    if (f.after !== undefined) {
      where.push('expires_at > ?');
      params.push(f.after);
    }
    eq('stream', f.stream);
    eq('agent', f.agent);
    eq('correlation_id', f.correlation_id);
    const sql = `SELECT ${COLUMNS} FROM reservations${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY seq`;
    return (this.stmt(sql).all(...params) as Row[]).map(toReservation);
  }

  /**
   * Compares the tables with a full scan of the log (reservation events read in slices of `rows`
   * seqs, yielding between them): every reservation not released and every release, by id.
   */
  async verify(rows: number, yieldNow: () => Promise<void>): Promise<ReservationCheck> {
    const expected = new Map<string, Row>();
    const released = new Set<string>();
    const top = this.topSeq();
    for (let from = 0; from < top; from += rows) {
      for (const e of this.eventsIn(from, from + rows)) {
        if (e.type === 'file.reserved') {
          const row = rowOf(e);
          if (row) expected.set(e.id, row);
        } else {
          const id = releasedId(e);
          if (id !== null) released.add(id);
        }
      }
      await yieldNow();
    }
    for (const id of released) expected.delete(id);
    return this.db.transaction((): ReservationCheck => {
      const differences: ReservationDiff[] = [];
      // Events appended after the scan may be in the tables: compare only what the scan saw.
      const stored = new Map((this.stmt(`SELECT ${COLUMNS} FROM reservations WHERE seq <= ?`).all(top) as Row[]).map((r) => [r.reservation_id, r]));
      const releasedNow = new Set(this.stmt('SELECT reservation_id FROM released_reservations').pluck().all() as string[]);
      for (const [id, row] of expected) {
        const have = stored.get(id);
        // A release appended since the scan removed it: not a difference.
        if (!have) {
          if (!releasedNow.has(id)) differences.push({ reservation_id: id, problem: 'missing' });
        } else if (JSON.stringify(have) !== JSON.stringify(row)) differences.push({ reservation_id: id, problem: 'different' });
      }
      for (const id of stored.keys()) if (!expected.has(id)) differences.push({ reservation_id: id, problem: 'extra' });
      for (const id of released) if (!releasedNow.has(id)) differences.push({ reservation_id: id, problem: 'release_missing' });
      return { held: expected.size, differences };
    })();
  }
}
