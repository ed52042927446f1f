// The ReplicaStore acceptance suite: version vectors, paging one origin, applying remote events
// verbatim with new local seqs, dedupe, artifacts first, sha256 verification and validation of
// remote records. Every ReplicaStore adapter must pass it unchanged, on real files.

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { parseHlc } from '../../hub/src/core/hlc.js';
import { toReplicatedEvent, type ReplicatedEvent } from '../../hub/src/core/replication.js';
import type { LogEvent } from '../../hub/src/core/types.js';
import { HubError } from '../../hub/src/errors.js';
import type { ReplicaStore } from '../../hub/src/logstream/replica-store.js';
import type { SqliteEventStore } from '../../hub/src/logstream/sqlite-event-store.js';
import { catchHubError } from '../helpers/errors.js';
import { eventQueryOf, newArtifact, newEvent, nextHex } from '../helpers/fixtures.js';
import { makeTmpDir, type TmpDir } from '../helpers/tmp-dir.js';

/** A replica under test plus the local log it replicates (for local appends and reads). */
export interface ReplicaNode {
  replica: ReplicaStore;
  local: SqliteEventStore;
  close(): void;
}

type Node = Pick<
  ReplicaStore,
  'replicaId' | 'versionVector' | 'eventsAfter' | 'getArtifact' | 'hasArtifact' | 'applyRemoteArtifact' | 'applyRemoteEvents'
> &
  Pick<SqliteEventStore, 'append' | 'putArtifact' | 'getEvent' | 'countEvents' | 'query'>;

function nodeOf({ replica, local }: ReplicaNode): Node {
  return {
    replicaId: replica.replicaId,
    versionVector: () => replica.versionVector(),
    eventsAfter: (origin, after, limit) => replica.eventsAfter(origin, after, limit),
    getArtifact: (id) => replica.getArtifact(id),
    hasArtifact: (id) => replica.hasArtifact(id),
    applyRemoteArtifact: (artifact) => replica.applyRemoteArtifact(artifact),
    applyRemoteEvents: (events) => replica.applyRemoteEvents(events),
    append: (batch) => local.append(batch),
    putArtifact: (artifact) => local.putArtifact(artifact),
    getEvent: (id) => local.getEvent(id),
    countEvents: () => local.countEvents(),
    query: (q) => local.query(q),
  };
}

function appendOne(store: Node, overrides: Parameters<typeof newEvent>[0] = {}): LogEvent {
  const [result] = store.append([newEvent(overrides)]);
  if (!result || result instanceof HubError) throw result ?? new Error('no result');
  return result;
}

/** Runs the suite against replicas opened by `openNode(dir, name)` on fresh files. */
export function runReplicaStoreContract(
  name: string,
  openNode: (dir: string, name: string, mintReplicaId: () => string) => ReplicaNode,
): void {
  describe(`ReplicaStore contract: ${name}`, () => {
    let dir: TmpDir;
    const opened: ReplicaNode[] = [];
    const open = (file: string): Node => {
      const node = openNode(dir.path, file, () => `rep_${nextHex()}`);
      opened.push(node);
      return nodeOf(node);
    };

    beforeEach(() => {
      dir = makeTmpDir('palace-replica-');
    });

    afterEach(() => {
      for (const n of opened.splice(0)) n.close();
      dir.cleanup();
    });
    it('reports the highest origin_seq per origin and pages one origin in origin order', () => {
      const a = open('a');
      const b = open('b');
      expect(a.versionVector()).toEqual({});
      const local = [appendOne(a), appendOne(a), appendOne(a)];
      const remote = [appendOne(b), appendOne(b)];
      expect(a.applyRemoteEvents(remote.map(toReplicatedEvent))).toMatchObject({ applied: 2, duplicates: 0 });
      const later = appendOne(a);
      expect(later.origin_seq).toBe(6); // local origin_seq is the local seq; remote events took 4 and 5
      expect(a.versionVector()).toEqual({ [a.replicaId]: 6, [b.replicaId]: 2 });
      expect(a.eventsAfter(a.replicaId, 0, 500).map((e) => e.id)).toEqual([...local, later].map((e) => e.id));
      expect(a.eventsAfter(a.replicaId, 1, 2).map((e) => e.origin_seq)).toEqual([2, 3]);
      expect(a.eventsAfter(b.replicaId, 1, 500).map((e) => e.id)).toEqual([remote[1]?.id]);
      expect(a.eventsAfter(a.replicaId, 0, 10_000)).toHaveLength(4);
      expect(a.eventsAfter(a.replicaId, 0, 500)[0]).not.toHaveProperty('seq');
    });

    it('applies remote events verbatim at new local seqs, once, and observes their clock', () => {
      const a = open('a');
      const b = open('b');
      appendOne(a);
      const remote = appendOne(b, { body: 'from b', metadata_json: '{"k":1}', to_agent: 'a-codex' });
      // Ahead of the local clock, but within the skew bound (a stamp beyond it never moves the clock).
      const far = { ...toReplicatedEvent(remote), hlc: `${Date.now() + 60_000}-000005-${b.replicaId}` };
      expect(a.applyRemoteEvents([far])).toEqual({
        applied: 1,
        duplicates: 0,
        lastOriginSeq: remote.origin_seq,
      });
      const stored = a.getEvent(remote.id);
      expect(stored).toEqual({ ...remote, seq: 2, hlc: far.hlc });
      // Same id, or same (origin, origin_seq) under another id: both are duplicates.
      expect(a.applyRemoteEvents([far])).toMatchObject({ applied: 0, duplicates: 1 });
      const sameStamp = { ...far, id: `evt_20260131T120000_${nextHex()}` };
      expect(a.applyRemoteEvents([sameStamp])).toMatchObject({ applied: 0, duplicates: 1 });
      // Our own events coming back are never applied twice.
      const own = toReplicatedEvent(appendOne(a));
      expect(a.applyRemoteEvents([own])).toMatchObject({ applied: 0, duplicates: 1 });
      expect(a.countEvents()).toBe(3);
      // Local stamps after the remote one sort after it.
      const next = appendOne(a);
      expect(next.hlc > far.hlc).toBe(true);
      expect(parseHlc(next.hlc)?.replica).toBe(a.replicaId);
      // A since_event_id cursor taken before the sync sees the synced event.
      expect(
        a
          .query(eventQueryOf({ since_event_id: a.query(eventQueryOf()).events[0]?.id ?? null }))
          .events.map((e) => e.id),
      ).toContain(remote.id);
    });

    it('needs every referenced artifact first and stops at the first event it cannot apply', () => {
      const a = open('a');
      const b = open('b');
      const art = b.putArtifact(newArtifact('diff\n'));
      const first = appendOne(b);
      const needsArt = appendOne(b, { artifact_ids: [art.id] });
      const after = appendOne(b);
      const batch = [first, needsArt, after].map(toReplicatedEvent);
      const result = a.applyRemoteEvents(batch);
      expect(result).toMatchObject({ applied: 1, duplicates: 0, lastOriginSeq: first.origin_seq });
      expect(result.failed?.event_id).toBe(needsArt.id);
      expect(result.failed?.error.code).toBe('artifact.unknown_ref');
      expect(result.failed?.error.message).toContain(`references artifact ${art.id} not yet applied locally`);
      expect(a.getEvent(after.id)).toBeUndefined();

      const full = b.getArtifact(art.id);
      if (!full) throw new Error('artifact missing');
      expect(a.applyRemoteArtifact(full)).toBe(true);
      expect(a.applyRemoteArtifact(full)).toBe(false); // duplicate id: no-op
      expect(a.getArtifact(art.id)).toEqual(full); // origin kept
      expect(a.applyRemoteEvents(batch)).toMatchObject({ applied: 2, duplicates: 1 });
      expect(a.query(eventQueryOf({})).events.find((e) => e.id === needsArt.id)?.artifact_ids).toEqual([
        art.id,
      ]);
    });

    it('refuses an artifact whose content does not match its sha256, storing nothing', () => {
      const a = open('a');
      const b = open('b');
      const art = b.getArtifact(b.putArtifact(newArtifact('the real patch\n')).id);
      if (!art) throw new Error('artifact missing');
      const err = catchHubError(() => a.applyRemoteArtifact({ ...art, content: 'a different patch\n' }));
      expect(err.code).toBe('sync.hash_mismatch');
      expect(err.message).toMatch(
        new RegExp(
          `remote artifact ${art.id} failed hash verification \\(claimed ${art.sha256.slice(0, 16)}`,
        ),
      );
      expect(a.hasArtifact(art.id)).toBe(false);
      // A lying size is recomputed, not trusted.
      expect(a.applyRemoteArtifact({ ...art, size_bytes: 1 })).toBe(true);
      expect(a.getArtifact(art.id)?.size_bytes).toBe(Buffer.byteLength('the real patch\n'));
    });

    it('validates remote events like local appends and applies nothing from a bad one on', () => {
      const a = open('a');
      const b = open('b');
      const good = toReplicatedEvent(appendOne(b));
      const bad: Array<[string, Partial<ReplicatedEvent>]> = [
        ['id', { id: 'x' }],
        ['type', { type: 'Not A Type' }],
        ['origin', { origin_replica: 'someone' }],
        ['hlc', { hlc: 'yesterday' }],
        ['created_at', { created_at: 'now' }],
        ['body', { body: 'x'.repeat(300 * 1024) }],
        ['stream', { stream: '' }],
      ];
      for (const [what, change] of bad) {
        const event = { ...toReplicatedEvent(appendOne(b)), ...change };
        const result = a.applyRemoteEvents([event, good]);
        expect(result.applied, what).toBe(0);
        expect(result.failed?.error.code, what).toBe('sync.bad_message');
      }
      expect(a.countEvents()).toBe(0);
    });
  });
}
