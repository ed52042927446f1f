// Local appends: each batch is one transaction (group commit when it holds several events, each of
// which succeeds or fails alone), stamped by this replica's clock and chained onto its own head.

import type Database from 'better-sqlite3';

import { HubError, toHubError } from '../errors.js';
import { canonicalEventText } from '../core/chain.js';
import { formatHlc, observe, tick } from '../core/hlc.js';
import type { LogEvent, NewEvent } from '../core/types.js';
import { EMPTY_HEAD, INSERT_LOCAL_SQL, localParams, type ChainHead } from './chain-rows.js';
import { nextChain } from './signatures.js';
import { storedEvent } from './sqlite-rows.js';
import type { StoreCore } from './store-core.js';

const NO_SHAS: readonly string[] = [];

export class LocalAppender {
  private head: ChainHead = EMPTY_HEAD;
  private readonly transaction: Database.Transaction<(batch: readonly NewEvent[], results: Array<LogEvent | HubError>) => void>;
  // The statements of every append, prepared once (not looked up by their SQL text per event).
  private readonly insert: Database.Statement;
  private readonly newestLocal: Database.Statement;

  constructor(private readonly core: StoreCore) {
    this.insert = core.stmt(INSERT_LOCAL_SQL);
    this.newestLocal = core.stmt('SELECT hlc, origin_seq, origin_pos, chain FROM events WHERE origin_replica = ? ORDER BY origin_seq DESC LIMIT 1');
    this.transaction = core.db.transaction((batch: readonly NewEvent[], results: Array<LogEvent | HubError>) => this.inTransaction(batch, results));
    this.observeLocalClock();
  }

  /** Appends a batch in one transaction; each event succeeds or fails alone (its error in its slot). */
  append(batch: readonly NewEvent[]): Array<LogEvent | HubError> {
    const results: Array<LogEvent | HubError> = [];
    try {
      this.transaction.immediate(batch, results);
    } catch (err) {
      const error = toHubError(err);
      return batch.map(() => error);
    }
    this.core.committed();
    return results;
  }

  /** The body of an append's transaction (wrapped once, in the constructor): stores `batch`, filling `results`. */
  private inTransaction(batch: readonly NewEvent[], results: Array<LogEvent | HubError>): void {
    const isolate = batch.length > 1;
    this.observeLocalClock();
    // The next seq, read once per transaction (the write lock is held until commit).
    let seq = this.core.topSeq() + 1;
    if (!isolate) {
      // One event: no savepoint, nothing to filter.
      for (const event of batch) results.push(this.insertEvent(event, seq));
      this.core.committing(results as LogEvent[]);
      return;
    }
    for (const event of batch) {
      const head = this.head;
      // Group commit: each event fails alone. An event without artifacts is one INSERT, which
      // SQLite undoes by itself when it fails; one with artifacts writes several rows, so it gets
      // a savepoint to roll back to.
      const several = event.artifact_ids.length > 0;
      if (several) this.core.stmt('SAVEPOINT one_event').run();
      try {
        results.push(this.insertEvent(event, seq));
        if (several) this.core.stmt('RELEASE one_event').run();
        seq++;
      } catch (err) {
        // Whatever ended the transaction itself (a full disk) ends the whole batch.
        if (!this.core.db.inTransaction) throw err;
        if (several) {
          this.core.stmt('ROLLBACK TO one_event').run();
          this.core.stmt('RELEASE one_event').run();
        }
        this.head = head;
        results.push(toHubError(err));
      }
    }
    this.core.committing(results.filter((r): r is LogEvent => !(r instanceof HubError)));
  }

  /**
   * Other connections (a CLI beside the hub) stamp with the same replica id: before stamping,
   * catch up with the newest local stamp in the file (one indexed lookup per transaction).
   */
  private observeLocalClock(): void {
    const row = this.newestLocal.get(this.core.replicaId) as { hlc: string; origin_seq: number; origin_pos: number | null; chain: Buffer | null } | undefined;
    if (row) this.core.clock = observe(this.core.clock, row.hlc);
    this.head =
      row && row.chain && row.origin_pos !== null
        ? { seq: row.origin_seq, pos: row.origin_pos, chain: row.chain }
        : EMPTY_HEAD;
  }

  /** Stores one local event at `seq` (the next one); throws, having written nothing, when it cannot. */
  private insertEvent(event: NewEvent, seq: number): LogEvent {
    const core = this.core;
    const shas = event.artifact_ids.length === 0 ? NO_SHAS : core.artifactShas(event.artifact_ids, unknownArtifact);
    core.clock = tick(core.clock, core.now());
    const hlc = formatHlc(core.clock, core.replicaId);
    const stamped = { ...event, origin_replica: core.replicaId, origin_seq: seq, hlc };
    const chain = nextChain(this.head.chain, canonicalEventText(stamped, shas));
    const pos = this.head.pos + 1;
    this.insert.run(localParams(seq, stamped, chain, pos));
    this.head = { seq, pos, chain };
    event.artifact_ids.forEach((artifactId, position) =>
      core.stmt('INSERT INTO event_artifacts (event_seq, artifact_id, position) VALUES (?, ?, ?)').run(seq, artifactId, position),
    );
    return storedEvent(stamped, seq);
  }
}

const unknownArtifact = (id: string): string => `artifact_ids references unknown artifact '${id}'`;
