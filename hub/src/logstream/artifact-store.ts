// The artifacts table: local puts and reads, and the replica side of artifacts (listing what can
// travel, storing a remote one once its hash, and when it travels alone its signature, checks out).

import { createHash, type KeyObject } from 'node:crypto';

import { HubError, toHubError } from '../errors.js';
import { artifactBytes } from '../core/chain.js';
import type { Artifact, ArtifactMeta, NewArtifact } from '../core/types.js';
import { checkRemoteArtifact, type ReplicatedArtifact } from '../core/replication.js';
import { MAX_PAGE_EVENTS, type ArtifactListing, type SignedArtifact } from './replica-store.js';
import { signBytes, verifyBytes } from './signatures.js';
import { parseObject, toArtifact, toArtifactMeta, type ArtifactRow } from './sqlite-rows.js';
import type { StoreCore } from './store-core.js';

export class ArtifactStore {
  constructor(protected readonly core: StoreCore) {}

  /** Stores a local artifact; returns its metadata. */
  putArtifact(a: NewArtifact): ArtifactMeta {
    try {
      this.core.stmt(
        `INSERT INTO artifacts (id, kind, sha256, size_bytes, content, created_by, created_at, metadata_json, origin_replica)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(a.id, a.kind, a.sha256, a.size_bytes, a.content, a.created_by, a.created_at, a.metadata_json, this.core.replicaId);
    } catch (err) {
      throw toHubError(err);
    }
    this.core.localCommits++;
    return {
      id: a.id,
      kind: a.kind,
      created_by: a.created_by,
      sha256: a.sha256,
      size_bytes: a.size_bytes,
      created_at: a.created_at,
      origin_replica: this.core.replicaId,
      metadata: parseObject(a.metadata_json),
    };
  }

  /** One artifact with its content, or undefined. */
  getArtifact(id: string): Artifact | undefined {
    const row = this.core.stmt('SELECT * FROM artifacts WHERE id = ?').get(id) as ArtifactRow | undefined;
    return row ? toArtifact(row) : undefined;
  }

  /** An artifact's metadata and its stored UTF-8 bytes as SQLite holds them: no decode to a string. */
  getArtifactBytes(id: string): { meta: ArtifactMeta; bytes: Buffer } | undefined {
    const row = this.core.stmt(
      'SELECT id, kind, sha256, size_bytes, created_by, created_at, metadata_json, origin_replica, CAST(content AS BLOB) AS bytes FROM artifacts WHERE id = ?',
    ).get(id) as (ArtifactRow & { bytes: Buffer | null }) | undefined;
    return row ? { meta: toArtifactMeta(row), bytes: row.bytes ?? Buffer.alloc(0) } : undefined;
  }

  /** Whether the artifact is stored here. */
  hasArtifact(id: string): boolean {
    return this.core.stmt('SELECT 1 FROM artifacts WHERE id = ?').get(id) !== undefined;
  }

  private artifactSignature(row: ArtifactRow & { sig: string | null }): string | null {
    if (row.origin_replica !== this.core.replicaId) return row.sig;
    if (!this.core.key) return null;
    return signBytes(this.core.key.privateKey, artifactBytes(row));
  }

  /** An artifact with its origin's signature (signed now when this replica is its origin; null when unsigned). */
  signedArtifact(id: string): SignedArtifact | undefined {
    const row = this.core.stmt('SELECT * FROM artifacts WHERE id = ?').get(id) as (ArtifactRow & { sig: string | null }) | undefined;
    return row ? { artifact: toArtifact(row), signature: this.artifactSignature(row) } : undefined;
  }

  /** Artifacts stored here after local row `after` that can travel (own, or carrying their origin's signature). */
  artifactsAfter(after: number, limit: number): ArtifactListing {
    const n = Math.max(1, Math.min(MAX_PAGE_EVENTS, Math.floor(limit)));
    const rows = this.core.stmt(
      `SELECT rowid, id, origin_replica FROM artifacts WHERE rowid > ? AND (origin_replica = ? OR sig IS NOT NULL) ORDER BY rowid LIMIT ?`,
    ).all(after, this.core.replicaId, n + 1) as Array<{ rowid: number; id: string; origin_replica: string }>;
    const items = rows.slice(0, n).map((r) => ({ id: r.id, origin_replica: r.origin_replica }));
    const top = (this.core.stmt('SELECT coalesce(max(rowid), 0) AS r FROM artifacts').get() as { r: number }).r;
    const next = rows.length > n ? (rows[n - 1]?.rowid ?? after) : top;
    return { items, next, hasMore: rows.length > n };
  }

  artifactCursor(peerReplica: string): number {
    return (this.core.stmt('SELECT artifact_rowid FROM sync_cursors WHERE peer_replica = ?').pluck().get(peerReplica) as number | undefined) ?? 0;
  }

  setArtifactCursor(peerReplica: string, rowid: number): void {
    this.core.stmt(
      'INSERT INTO sync_cursors (peer_replica, artifact_rowid) VALUES (?, ?) ON CONFLICT(peer_replica) DO UPDATE SET artifact_rowid = excluded.artifact_rowid',
    ).run(peerReplica, rowid);
  }

  /** Checks a remote artifact (fields, sha256 of its content) and returns what to store. */
  protected checkedArtifact(a: ReplicatedArtifact): { bytes: number; metadata_json: string } {
    const checked = checkRemoteArtifact(a);
    const computed = createHash('sha256').update(a.content, 'utf8').digest('hex');
    if (computed !== a.sha256)
      throw new HubError(
        'sync.hash_mismatch',
        `remote artifact ${a.id} failed hash verification (claimed ${a.sha256.slice(0, 16)}..., computed ${computed.slice(0, 16)}...); refused`,
        { data: { artifact_id: a.id } },
      );
    return checked;
  }

  protected insertArtifact(a: ReplicatedArtifact, checked: { bytes: number; metadata_json: string }, sig: string | null): boolean {
    const info = this.core.stmt(
      `INSERT OR IGNORE INTO artifacts (id, kind, sha256, size_bytes, content, created_by, created_at, metadata_json, origin_replica, sig)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(a.id, a.kind, a.sha256, checked.bytes, a.content, a.created_by.trim(), a.created_at, checked.metadata_json, a.origin_replica, sig);
    return info.changes > 0;
  }

  /** Stores a remote artifact once its sha256 checks out (no signature check: imports and tests). */
  applyRemoteArtifact(a: ReplicatedArtifact): boolean {
    const checked = this.checkedArtifact(a);
    if (this.hasArtifact(a.id)) return false;
    let stored: boolean;
    try {
      stored = this.insertArtifact(a, checked, null);
    } catch (err) {
      throw toHubError(err);
    }
    if (stored) this.core.localCommits++;
    return stored;
  }

  /**
   * Stores an artifact that travels on its own (no event of the page vouches for it): it must carry a
   * valid signature by its origin's key (`key` null skips the check: benchmark only).
   */
  applySignedArtifact(a: ReplicatedArtifact, signature: string | null, key: KeyObject | null): boolean {
    const checked = this.checkedArtifact(a);
    if (a.origin_replica === this.core.replicaId) return false;
    if (key) {
      if (!signature)
        throw new HubError('sync.bad_signature', `artifact ${a.id} of ${a.origin_replica} is unsigned; refused`);
      if (!verifyBytes(key, artifactBytes({ ...a, metadata_json: checked.metadata_json }), signature))
        throw new HubError('sync.bad_signature', `artifact ${a.id}: the signature is not ${a.origin_replica}'s; refused`);
    }
    if (this.hasArtifact(a.id)) return false;
    const stored = this.insertArtifact(a, checked, signature);
    if (stored) this.core.localCommits++;
    return stored;
  }
}
