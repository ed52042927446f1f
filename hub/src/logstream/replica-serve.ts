// The serving side of a replica: version vectors, pages of an origin's events ending at a checkpoint
// its origin signed, and the origin keys this hub trusts (with its own vouches for them). Artifacts
// come from ArtifactStore; applying what a peer serves is replica-apply.ts.

import { HubError } from '../errors.js';
import { checkpointBytes, vouchBytes, type Checkpoint } from '../core/chain.js';
import type { ReplicatedEvent, VersionVector } from '../core/replication.js';
import { ArtifactStore } from './artifact-store.js';
import type { ChainedRow } from './chain-rows.js';
import { MAX_PAGE_EVENTS, type OpsPage, type OriginKey, type OriginKeySource } from './replica-store.js';
import { signBytes } from './signatures.js';
import { EVENT_COLUMNS, toReplicated, type EventRow } from './sqlite-rows.js';
import type { StoreCore } from './store-core.js';
import { SyncEvidence } from './sync-evidence.js';

export class ReplicaServe extends ArtifactStore {
  /** This log's replica identity, minted once with the log; never synced, never rotated. */
  readonly replicaId: string;
  /** This replica's Ed25519 public key (raw, base64url). */
  readonly publicKey: string;
  /** How far ahead of the local clock a remote stamp may be, in ms. */
  readonly maxSkewMs: number;
  /** Quarantined impostor events and equivocation proofs (sync-evidence.ts). */
  readonly evidence: SyncEvidence;
  private lastSigned: Checkpoint | undefined;
  private readonly vouches = new Map<string, string>();

  constructor(core: StoreCore) {
    super(core);
    this.replicaId = core.replicaId;
    this.publicKey = core.publicKey;
    this.maxSkewMs = core.maxSkewMs;
    this.evidence = new SyncEvidence(core.db, core.now, !core.db.readonly);
  }

  /** Per origin the newest signed statement held: this replica's head signed now, others' newest checkpoint. */
  signedHeads(): Checkpoint[] {
    const heads: Checkpoint[] = [];
    const own = this.core
      .stmt(`SELECT ${EVENT_COLUMNS}, chain, origin_pos FROM events WHERE origin_replica = ? ORDER BY origin_seq DESC LIMIT 1`)
      .get(this.replicaId) as ChainedRow | undefined;
    if (own?.chain && own.origin_pos !== null && this.core.key) heads.push(this.signCheckpoint(own));
    const rows = this.core.stmt(
      `SELECT c.origin_replica, c.origin_seq, c.pos, c.chain, c.sig FROM checkpoints c
         JOIN (SELECT origin_replica AS o, max(origin_seq) AS m FROM checkpoints GROUP BY origin_replica) t
           ON c.origin_replica = t.o AND c.origin_seq = t.m
        WHERE c.origin_replica != ?`,
    ).all(this.replicaId) as Array<{ origin_replica: string; origin_seq: number; pos: number; chain: string; sig: string }>;
    for (const r of rows) heads.push({ origin: r.origin_replica, seq: r.origin_seq, pos: r.pos, chain: r.chain, sig: r.sig });
    return heads;
  }

  versionVector(): VersionVector {
    // A skip-scan over the (origin_replica, origin_seq) index: O(origins x log n), not a full scan.
    const rows = this.core.stmt(
      `WITH RECURSIVE origins(r) AS (
         SELECT (SELECT min(origin_replica) FROM events)
         UNION ALL
         SELECT (SELECT min(origin_replica) FROM events WHERE origin_replica > origins.r) FROM origins WHERE origins.r IS NOT NULL
       )
       SELECT r AS origin, (SELECT max(origin_seq) FROM events WHERE origin_replica = r) AS top FROM origins WHERE r IS NOT NULL`,
    ).all() as Array<{ origin: string; top: number }>;
    const vector: VersionVector = {};
    for (const row of rows) vector[row.origin] = row.top;
    return vector;
  }

  /** Highest origin_seq held under a checkpoint signed by its origin, per origin (this replica: its head). */
  verifiedVector(): VersionVector {
    const vector: VersionVector = {};
    const own = this.versionVector()[this.replicaId];
    if (own) vector[this.replicaId] = own;
    const rows = this.core.stmt(
      'SELECT origin_replica AS origin, max(origin_seq) AS top FROM checkpoints GROUP BY origin_replica',
    ).all() as Array<{ origin: string; top: number }>;
    for (const row of rows) if (row.origin !== this.replicaId) vector[row.origin] = row.top;
    return vector;
  }

  /** Events held of other origins that no checkpoint of their origin covers yet (legacy, pre-signing). */
  unverifiedCounts(): Record<string, number> {
    const verified = this.verifiedVector();
    const out: Record<string, number> = {};
    for (const origin of Object.keys(this.versionVector())) {
      if (origin === this.replicaId) continue;
      const n = (
        this.core.stmt('SELECT count(*) AS n FROM events WHERE origin_replica = ? AND origin_seq > ?').get(
          origin,
          verified[origin] ?? 0,
        ) as { n: number }
      ).n;
      if (n > 0) out[origin] = n;
    }
    return out;
  }

  eventsAfter(origin: string, after: number, limit: number): ReplicatedEvent[] {
    const n = Math.max(1, Math.min(MAX_PAGE_EVENTS, Math.floor(limit)));
    const rows = this.core.stmt(
      `SELECT ${EVENT_COLUMNS} FROM events WHERE origin_replica = ? AND origin_seq > ? ORDER BY origin_seq ASC LIMIT ?`,
    ).all(origin, after, n) as EventRow[];
    return rows.map(toReplicated);
  }

  private chainedAfter(origin: string, after: number, upTo: number, limit: number): ChainedRow[] {
    return this.core.stmt(
      `SELECT ${EVENT_COLUMNS}, chain, origin_pos FROM events
        WHERE origin_replica = ? AND origin_seq > ? AND origin_seq <= ? ORDER BY origin_seq ASC LIMIT ?`,
    ).all(origin, after, upTo, limit) as ChainedRow[];
  }

  private signCheckpoint(row: ChainedRow): Checkpoint {
    const key = this.core.key;
    if (!key) throw new HubError('store.failed', 'this log was opened without its signing key');
    if (!row.chain || row.origin_pos === null)
      throw new HubError('store.failed', `event ${row.id} has no chain value (run palace migrate)`);
    const body = { origin: this.replicaId, seq: row.origin_seq, pos: row.origin_pos, chain: row.chain.toString('hex') };
    const last = this.lastSigned;
    if (last && last.seq === body.seq && last.chain === body.chain) return last;
    this.lastSigned = { ...body, sig: signBytes(key.privateKey, checkpointBytes(body)) };
    return this.lastSigned;
  }

  /**
   * One page of `origin`'s events after `after`, ending at a checkpoint signed by the origin: this
   * replica signs its own on demand; other origins' pages end at a checkpoint held from them (the
   * page may then run past `limit`). Events no checkpoint covers are not served.
   */
  opsPage(origin: string, after: number, limit: number, byteBudget: number): OpsPage {
    const n = Math.max(1, Math.min(MAX_PAGE_EVENTS, Math.floor(limit)));
    return this.core.db.transaction((): OpsPage => {
      const size = (r: ChainedRow): number => r.body.length + r.metadata_json.length + 512;
      const withinBudget = (rows: ChainedRow[]): ChainedRow[] => {
        let bytes = 0;
        const out: ChainedRow[] = [];
        for (const r of rows) {
          bytes += size(r);
          if (out.length > 0 && bytes > byteBudget) break;
          out.push(r);
        }
        return out;
      };
      if (origin === this.replicaId) {
        const rows = withinBudget(this.chainedAfter(origin, after, Number.MAX_SAFE_INTEGER, n));
        const last = rows.at(-1);
        if (!last) return { events: [], checkpoint: null, hasMore: false };
        const more = this.chainedAfter(origin, last.origin_seq, Number.MAX_SAFE_INTEGER, 1).length > 0;
        return { events: rows.map(toReplicated), checkpoint: this.signCheckpoint(last), hasMore: more };
      }
      const fetched = withinBudget(this.chainedAfter(origin, after, Number.MAX_SAFE_INTEGER, n));
      const end = fetched.at(-1)?.origin_seq ?? after;
      const checkpointAt = (sql: string, ...args: unknown[]): Checkpoint | undefined => {
        const row = this.core.stmt(sql).get(...args) as
          | { origin_replica: string; origin_seq: number; pos: number; chain: string; sig: string }
          | undefined;
        return row ? { origin: row.origin_replica, seq: row.origin_seq, pos: row.pos, chain: row.chain, sig: row.sig } : undefined;
      };
      const checkpoint =
        checkpointAt(
          'SELECT * FROM checkpoints WHERE origin_replica = ? AND origin_seq > ? AND origin_seq <= ? ORDER BY origin_seq DESC LIMIT 1',
          origin,
          after,
          end,
        ) ??
        checkpointAt(
          'SELECT * FROM checkpoints WHERE origin_replica = ? AND origin_seq > ? ORDER BY origin_seq ASC LIMIT 1',
          origin,
          after,
        );
      if (!checkpoint) return { events: [], checkpoint: null, hasMore: false };
      const rows = this.chainedAfter(origin, after, checkpoint.seq, Number.MAX_SAFE_INTEGER);
      const more = this.core.stmt('SELECT 1 FROM checkpoints WHERE origin_replica = ? AND origin_seq > ? LIMIT 1').get(origin, checkpoint.seq);
      return { events: rows.map(toReplicated), checkpoint, hasMore: more !== undefined };
    })();
  }

  // ---- trust: origin keys ----

  originKey(origin: string): OriginKey | undefined {
    const row = this.core.stmt('SELECT public_key, source, vouched_by FROM origin_keys WHERE origin_replica = ?').get(origin) as
      | { public_key: string; source: OriginKeySource; vouched_by: string | null }
      | undefined;
    return row ? { origin, publicKey: row.public_key, source: row.source, vouchedBy: row.vouched_by } : undefined;
  }

  /** Records the key of an origin (first key wins unless `replace`, which a pin in peers.json may do). */
  rememberOriginKey(k: OriginKey, vouch: string | null, replace = false): void {
    this.core.stmt(
      `INSERT INTO origin_keys (origin_replica, public_key, source, vouched_by, vouch, added_at) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT(origin_replica) DO ${replace ? 'UPDATE SET public_key = excluded.public_key, source = excluded.source, vouched_by = excluded.vouched_by, vouch = excluded.vouch' : 'NOTHING'}`,
    ).run(k.origin, k.publicKey, k.source, k.vouchedBy, vouch, new Date(this.core.now()).toISOString());
  }

  /** Every origin key this hub holds, each vouched for by this hub's own signature (gossip of keys). */
  keyStatements(): Array<{ replica_id: string; public_key: string; vouch: string }> {
    const key = this.core.key;
    if (!key) return [];
    const rows = this.core.stmt("SELECT origin_replica, public_key FROM origin_keys WHERE source != 'tofu' ORDER BY origin_replica").all() as Array<{
      origin_replica: string;
      public_key: string;
    }>;
    // One signature per (origin, key) for the life of the store, not one per version_vector request.
    return rows.map((r) => {
      const cacheKey = `${r.origin_replica}:${r.public_key}`;
      let vouch = this.vouches.get(cacheKey);
      if (!vouch) {
        vouch = signBytes(key.privateKey, vouchBytes(this.replicaId, r.origin_replica, r.public_key));
        this.vouches.set(cacheKey, vouch);
      }
      return { replica_id: r.origin_replica, public_key: r.public_key, vouch };
    });
  }
}
