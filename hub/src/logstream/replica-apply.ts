// The applying side of a replica: a page pulled from a peer is verified against its origin's signed
// checkpoint and stored all or nothing, in one transaction that also feeds the commit hook. With
// ReplicaServe (vectors, pages, keys) and ArtifactStore this is the whole ReplicaStore of one log.

import { HubError, toHubError } from '../errors.js';
import { canonicalEvent, checkpointBytes } from '../core/chain.js';
import type { LogEvent } from '../core/types.js';
import { checkRemoteClock, remoteEventRecord, type ApplyResult, type RemoteEventRecord, type ReplicatedEvent } from '../core/replication.js';
import { EMPTY_HEAD, INSERT_REMOTE_SQL, chainedParams, type ChainHead } from './chain-rows.js';
import type { RemotePage, ReplicaStore } from './replica-store.js';
import { ReplicaServe } from './replica-serve.js';
import { GENESIS_CHAIN, nextChain, verifyBytes } from './signatures.js';
import { storedEvent } from './sqlite-rows.js';

export class SqliteReplica extends ReplicaServe implements ReplicaStore {
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
    const core = this.core;
    let result: ApplyResult = { applied: 0, duplicates: 0, lastOriginSeq: 0 };
    if (page.events.length === 0) return result;
    const fail = (code: 'sync.bad_message' | 'sync.bad_signature', message: string): HubError =>
      new HubError(code, `origin ${origin}: ${message}`, { data: { origin } });
    core.db
      .transaction(() => {
        result = { applied: 0, duplicates: 0, lastOriginSeq: 0 };
        if (origin === this.replicaId) throw fail('sync.bad_message', "a peer served this hub's own events back");
        if (checkpoint.origin !== origin)
          throw fail('sync.bad_message', `the page's checkpoint is for origin ${checkpoint.origin}`);
        let start: ChainHead = EMPTY_HEAD;
        if (after > 0) {
          const row = core.stmt('SELECT origin_pos, chain FROM events WHERE origin_replica = ? AND origin_seq = ?').get(origin, after) as
            | { origin_pos: number | null; chain: Buffer | null }
            | undefined;
          if (!row?.chain || row.origin_pos === null)
            throw fail('sync.bad_message', `this hub holds no chained event at origin_seq ${after} to continue from`);
          start = { seq: after, pos: row.origin_pos, chain: row.chain };
        }
        const nowMs = core.now();
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
            const stored = core.stmt('SELECT sha256 FROM artifacts WHERE id = ?').pluck().get(id) as string | undefined;
            if (stored !== undefined) return stored;
            const a = fetched.get(id);
            if (!a) throw new HubError('artifact.unknown_ref', `origin ${origin}: event ${record.id} references artifact ${id}, which the peer did not serve`);
            this.checkedArtifact(a);
            return a.sha256;
          });
          const chain = nextChain(head.chain, canonicalEvent(record, shas));
          head = { seq: record.origin_seq, pos: head.pos + 1, chain };
          const held = core.stmt('SELECT id, chain FROM events WHERE origin_replica = ? AND origin_seq = ?').get(origin, record.origin_seq) as
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
        core.committing(stored);
        result.duplicates += page.events.length - fresh.length;
        result.lastOriginSeq = checkpoint.seq;
        core.stmt(
          'INSERT OR IGNORE INTO checkpoints (origin_replica, origin_seq, pos, chain, sig) VALUES (?, ?, ?, ?, ?)',
        ).run(origin, checkpoint.seq, checkpoint.pos, checkpoint.chain, checkpoint.sig);
      })
      .immediate();
    if (result.applied > 0) core.committed();
    else core.localCommits++;
    return result;
  }

  /** Appends remote events without signature checks (imports and tests); chains them onto what is held. */
  applyRemoteEvents(events: readonly ReplicatedEvent[]): ApplyResult {
    const core = this.core;
    let result: ApplyResult = { applied: 0, duplicates: 0, lastOriginSeq: 0 };
    if (events.length === 0) return result;
    try {
      core.db
        .transaction(() => {
          result = { applied: 0, duplicates: 0, lastOriginSeq: 0 };
          const stored: LogEvent[] = [];
          for (const raw of events) {
            let record: RemoteEventRecord;
            let shas: string[] = [];
            try {
              record = remoteEventRecord(raw);
              if (record.origin_replica !== this.replicaId)
                shas = core.artifactShas(record.artifact_ids, (id) => `remote event ${record.id} references artifact ${id} not yet applied locally`);
            } catch (err) {
              // Nothing of this event was written: stop here, keeping the events before it.
              result.failed = { event_id: String(raw.id), error: toHubError(err) };
              break;
            }
            // From here a failure can only be the storage's, and it rolls back the whole batch.
            let seq: number | null = null;
            if (record.origin_replica !== this.replicaId && !this.holds(record)) {
              const top = core.stmt(
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
          core.committing(stored);
        })
        .immediate();
    } catch (err) {
      return { applied: 0, duplicates: 0, lastOriginSeq: 0, failed: { event_id: String(events[0]?.id), error: toHubError(err) } };
    }
    if (result.applied > 0) core.committed();
    return result;
  }

  private holds(e: RemoteEventRecord): boolean {
    return (
      this.core.stmt('SELECT 1 FROM events WHERE id = ? OR (origin_replica = ? AND origin_seq = ?)').get(
        e.id,
        e.origin_replica,
        e.origin_seq,
      ) !== undefined
    );
  }

  /**
   * Appends a remote event verbatim (id, created_at, hlc, origin stamps) at the next local seq, which it
   * returns. Null when it is already held: the unique indexes on id and on (origin_replica, origin_seq) decide.
   */
  private insertRemote(e: RemoteEventRecord, chain: Buffer, pos: number): number | null {
    const info = this.core.stmt(INSERT_REMOTE_SQL).run(...chainedParams(e, chain, pos));
    if (info.changes === 0) return null;
    const seq = Number(info.lastInsertRowid); // seq is the rowid: the next one after the newest event
    e.artifact_ids.forEach((artifactId, position) =>
      this.core.stmt('INSERT OR IGNORE INTO event_artifacts (event_seq, artifact_id, position) VALUES (?, ?, ?)').run(seq, artifactId, position),
    );
    this.core.observeRemote(e.hlc);
    return seq;
  }
}
