// What sync keeps as evidence against a peer or an origin (issue 29, docs/sync-trust.md):
// - quarantine: the events a trust-on-first-use peer gave under a replica id whose real key the user
//   pinned later. They are re-homed, verbatim but for their origin, to a quarantine origin (a replica
//   id derived from the claimed one and the impostor's key) that has no key and no checkpoint: kept
//   and listed, never served onward, never that origin's truth. Its checkpoints move into the record.
// - equivocation: an origin signed two different chains at one position. Both signed statements are
//   kept (ours: the checkpoint covering our copy and our chain value at that position; theirs: the
//   head a peer showed), and the origin's events are no longer accepted from anyone.

import { createHash } from 'node:crypto';
import type Database from 'better-sqlite3';

import type { Checkpoint } from '../core/chain.js';

export const SYNC_EVIDENCE_DDL = `
  CREATE TABLE IF NOT EXISTS sync_quarantine (
    held_as TEXT PRIMARY KEY,
    origin_replica TEXT NOT NULL,
    public_key TEXT NOT NULL,
    source TEXT NOT NULL,
    events INTEGER NOT NULL,
    checkpoints_json TEXT NOT NULL,
    reason TEXT NOT NULL,
    quarantined_at TEXT NOT NULL
  ) STRICT;
  CREATE TABLE IF NOT EXISTS sync_equivocations (
    origin_replica TEXT NOT NULL,
    pos INTEGER NOT NULL,
    theirs_chain TEXT NOT NULL,
    ours_json TEXT NOT NULL,
    theirs_json TEXT NOT NULL,
    public_key TEXT NOT NULL,
    via_peer TEXT,
    detected_at TEXT NOT NULL,
    PRIMARY KEY (origin_replica, pos, theirs_chain)
  ) STRICT;
`;

/** Events moved out of an origin's name because they were signed by a key that is not the origin's. */
export interface QuarantineRecord {
  /** The quarantine origin the events are held under now (a replica id no hub owns). */
  held_as: string;
  /** The replica id they claimed. */
  origin: string;
  /** The key that signed them (raw base64url) and how it had been trusted. */
  public_key: string;
  source: string;
  events: number;
  /** The checkpoints that key signed, as they were held. */
  checkpoints: Checkpoint[];
  reason: string;
  quarantined_at: string;
}

/** Our side of an equivocation: the signed checkpoint covering our copy, and our chain value at the position. */
export interface HeldStatement {
  checkpoint: Checkpoint;
  /** Our chain value (hex) and origin_seq at `pos` (equal to the checkpoint's when it is at `pos`). */
  chain_at_pos: string;
  seq_at_pos: number;
}

export interface EquivocationRecord {
  origin: string;
  pos: number;
  ours: HeldStatement;
  theirs: Checkpoint;
  /** The origin key both statements verify with. */
  public_key: string;
  /** The peer that showed the other statement. */
  via_peer: string | null;
  detected_at: string;
}

interface CheckpointRow {
  origin_replica: string;
  origin_seq: number;
  pos: number;
  chain: string;
  sig: string;
}

const toCheckpoint = (r: CheckpointRow): Checkpoint => ({ origin: r.origin_replica, seq: r.origin_seq, pos: r.pos, chain: r.chain, sig: r.sig });

/** The replica id events of `origin` signed by `publicKey` are quarantined under (the n-th such set). */
export function quarantineOrigin(origin: string, publicKey: string, n: number): string {
  const digest = createHash('sha256').update(`palace-quarantine-v1\n${origin}\n${publicKey}\n${n}`).digest('hex');
  return `rep_${digest.slice(0, 12)}`;
}

export class SyncEvidence {
  private tables: boolean | undefined;

  /**
   * `create`: make the tables when missing (a writable log). They are created here, IF NOT EXISTS, not
   * by a numbered migration: an older palace opening the file ignores them, and nothing else changes.
   */
  constructor(
    private readonly db: Database.Database,
    private readonly now: () => number,
    create: boolean,
  ) {
    if (create) db.exec(SYNC_EVIDENCE_DDL);
  }

  /** Whether the evidence tables exist (a read-only log of an older schema has none: nothing to show). */
  private ready(): boolean {
    this.tables ??=
      this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sync_equivocations'").get() !== undefined;
    return this.tables;
  }

  /**
   * Re-homes every event held of `origin` (and the artifacts that travelled alone under its name with a
   * signature) to a quarantine origin, moves its checkpoints into the record and forgets the artifact
   * cursor kept for that replica id, in one transaction. The task and reservation tables are not
   * re-derived: rows the impostor's events made stay as they were (docs/decisions.md).
   * Returns the record, or null when nothing of `origin` was held.
   */
  quarantine(origin: string, signer: { publicKey: string; source: string }, reason: string): QuarantineRecord | null {
    return this.db.transaction((): QuarantineRecord | null => {
      const events = this.db.prepare('SELECT count(*) FROM events WHERE origin_replica = ?').pluck().get(origin) as number;
      const checkpoints = (
        this.db.prepare('SELECT * FROM checkpoints WHERE origin_replica = ? ORDER BY origin_seq').all(origin) as CheckpointRow[]
      ).map(toCheckpoint);
      if (events === 0 && checkpoints.length === 0) return null;
      let n = 0;
      let heldAs = quarantineOrigin(origin, signer.publicKey, n);
      while (this.db.prepare('SELECT 1 FROM sync_quarantine WHERE held_as = ?').get(heldAs) !== undefined)
        heldAs = quarantineOrigin(origin, signer.publicKey, ++n);
      this.db.prepare('UPDATE events SET origin_replica = ? WHERE origin_replica = ?').run(heldAs, origin);
      this.db.prepare('UPDATE artifacts SET origin_replica = ? WHERE origin_replica = ? AND sig IS NOT NULL').run(heldAs, origin);
      this.db.prepare('DELETE FROM checkpoints WHERE origin_replica = ?').run(origin);
      // The artifact-listing cursor kept for that replica id was the impostor's: the real one starts over.
      this.db.prepare('DELETE FROM sync_cursors WHERE peer_replica = ?').run(origin);
      const record: QuarantineRecord = {
        held_as: heldAs,
        origin,
        public_key: signer.publicKey,
        source: signer.source,
        events,
        checkpoints,
        reason,
        quarantined_at: new Date(this.now()).toISOString(),
      };
      this.db
        .prepare(
          `INSERT INTO sync_quarantine (held_as, origin_replica, public_key, source, events, checkpoints_json, reason, quarantined_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(heldAs, origin, signer.publicKey, signer.source, events, JSON.stringify(checkpoints), reason, record.quarantined_at);
      return record;
    }).immediate();
  }

  quarantined(): QuarantineRecord[] {
    if (!this.ready()) return [];
    const rows = this.db.prepare('SELECT * FROM sync_quarantine ORDER BY quarantined_at, held_as').all() as Array<{
      held_as: string;
      origin_replica: string;
      public_key: string;
      source: string;
      events: number;
      checkpoints_json: string;
      reason: string;
      quarantined_at: string;
    }>;
    return rows.map((r) => ({
      held_as: r.held_as,
      origin: r.origin_replica,
      public_key: r.public_key,
      source: r.source,
      events: r.events,
      checkpoints: JSON.parse(r.checkpoints_json) as Checkpoint[],
      reason: r.reason,
      quarantined_at: r.quarantined_at,
    }));
  }

  /**
   * Our signed statement about `origin` at position `pos`: the first checkpoint we hold at or past it
   * (verified when it was stored) and our chain value at `pos`; undefined when we hold none that far.
   */
  heldAt(origin: string, pos: number): HeldStatement | undefined {
    const row = this.db
      .prepare('SELECT * FROM checkpoints WHERE origin_replica = ? AND pos >= ? ORDER BY pos ASC LIMIT 1')
      .get(origin, pos) as CheckpointRow | undefined;
    if (!row) return undefined;
    const checkpoint = toCheckpoint(row);
    if (row.pos === pos) return { checkpoint, chain_at_pos: row.chain, seq_at_pos: row.origin_seq };
    // At most one page of rows back from the checkpoint (positions are dense, seqs ascend with them).
    const event = this.db
      .prepare('SELECT origin_seq, chain FROM events WHERE origin_replica = ? AND origin_seq <= ? AND origin_pos = ? ORDER BY origin_seq DESC LIMIT 1')
      .get(origin, row.origin_seq, pos) as { origin_seq: number; chain: Buffer | null } | undefined;
    if (!event?.chain) return undefined;
    return { checkpoint, chain_at_pos: event.chain.toString('hex'), seq_at_pos: event.origin_seq };
  }

  /** Keeps both statements of an equivocation; false when this very pair was already recorded. */
  recordEquivocation(e: Omit<EquivocationRecord, 'detected_at'>): boolean {
    const info = this.db
      .prepare(
        `INSERT OR IGNORE INTO sync_equivocations (origin_replica, pos, theirs_chain, ours_json, theirs_json, public_key, via_peer, detected_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(e.origin, e.pos, e.theirs.chain, JSON.stringify(e.ours), JSON.stringify(e.theirs), e.public_key, e.via_peer, new Date(this.now()).toISOString());
    return info.changes > 0;
  }

  equivocations(): EquivocationRecord[] {
    if (!this.ready()) return [];
    const rows = this.db.prepare('SELECT * FROM sync_equivocations ORDER BY detected_at, origin_replica, pos').all() as Array<{
      origin_replica: string;
      pos: number;
      ours_json: string;
      theirs_json: string;
      public_key: string;
      via_peer: string | null;
      detected_at: string;
    }>;
    return rows.map((r) => ({
      origin: r.origin_replica,
      pos: r.pos,
      ours: JSON.parse(r.ours_json) as HeldStatement,
      theirs: JSON.parse(r.theirs_json) as Checkpoint,
      public_key: r.public_key,
      via_peer: r.via_peer,
      detected_at: r.detected_at,
    }));
  }

  /** Whether `origin` was caught signing two chains (its events are then no longer accepted). */
  isEquivocating(origin: string): boolean {
    if (!this.ready()) return false;
    return this.db.prepare('SELECT 1 FROM sync_equivocations WHERE origin_replica = ? LIMIT 1').get(origin) !== undefined;
  }
}
