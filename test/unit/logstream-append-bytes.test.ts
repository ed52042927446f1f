// The append path's stored bytes, checked against the reference encodings: each local event's chain
// value is sha256(previous || canonicalEvent(row)) recomputed from the stored row (Buffer form), its id
// and created_at come from one clock reading, and the task table equals the reducer. Guards the
// per-append shortcuts (chain hashed from the canonical string, prepared statements, one toISOString).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { canonicalEvent, canonicalEventText } from '../../hub/src/core/chain.js';
import { Logstream } from '../../hub/src/logstream/logstream.js';
import { GENESIS_CHAIN, nextChain } from '../../hub/src/logstream/signatures.js';
import type { EventRow } from '../../hub/src/logstream/sqlite-rows.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function open(): ReturnType<typeof Logstream.open> {
  const dir = mkdtempSync(join(tmpdir(), 'palace-append-bytes-'));
  dirs.push(dir);
  return Logstream.open(dir);
}

/** A stored event row with its chain columns. */
type Row = Omit<EventRow, 'seq'> & { chain: Buffer; origin_pos: number };

describe('local append bytes', () => {
  it('stores chain values equal to the reference canonical bytes, for own-transaction and group-committed events', async () => {
    const log = open();
    const base = { stream: 'project/x', room: 'coordination' };
    const art = log.putArtifact({ kind: 'note', created_by: 'alice', content: 'héllo wörld ✓' });
    log.appendNow({
      ...base,
      type: 'task.request',
      from_agent: 'alice',
      to_agent: 'bob',
      correlation_id: 't1',
      status: 'open',
      body: 'naïve café 🚀 — “quotes”',
      metadata: { z: 1, a: { y: [1, '✓'], b: null } },
    });
    log.appendNow({
      ...base,
      type: 'event.ack',
      from_agent: 'bob',
      to_agent: 'alice',
      correlation_id: 't1',
      status: 'claimed',
    });
    log.appendNow({
      ...base,
      type: 'note',
      from_agent: 'bob',
      body: 'with an artifact',
      artifact_ids: [art.id],
    });
    await Promise.all([
      log.append({ ...base, type: 'note', from_agent: 'carol', body: 'ü'.repeat(300) }),
      log.append({
        ...base,
        type: 'task.request',
        from_agent: 'carol',
        to_agent: 'dave',
        correlation_id: 't2',
        status: 'open',
        metadata: { k: 'v' },
      }),
      log.append({
        ...base,
        type: 'task.update',
        from_agent: 'bob',
        correlation_id: 't1',
        status: 'blocked',
        body: '\u{1F600}',
      }),
      log.append({ ...base, type: 'note', from_agent: 'carol', artifact_ids: [art.id, art.id] }),
      log.append({
        ...base,
        type: 'event.ack',
        from_agent: 'bob',
        to_agent: 'alice',
        correlation_id: 't1',
        status: 'blocked',
      }),
    ]);
    const rows = log.store.db
      .prepare('SELECT * FROM events WHERE origin_replica = ? ORDER BY origin_seq')
      .all(log.replicaId) as Row[];
    expect(rows).toHaveLength(8);
    let previous = GENESIS_CHAIN;
    rows.forEach((row, i) => {
      const artifactIds = JSON.parse(row.artifact_ids) as string[];
      const shas = artifactIds.map((id) => log.getArtifact(id).sha256);
      const fields = { ...row, status: row.status, artifact_ids: artifactIds };
      const reference = canonicalEvent(fields, shas);
      expect(Buffer.from(canonicalEventText(fields, shas), 'utf8').equals(reference)).toBe(true);
      const chain = nextChain(previous, reference);
      expect(row.chain.equals(chain), `chain of ${row.id}`).toBe(true);
      expect(row.origin_pos).toBe(i + 1);
      // The id's stamp and created_at are the same second.
      expect(row.id.slice(4, 19)).toBe(row.created_at.slice(0, 19).replace(/[-:]/g, ''));
      previous = chain;
    });
    // Metadata is stored with sorted keys, and the returned event carries it parsed.
    expect(rows[0]?.metadata_json).toBe('{"a":{"b":null,"y":[1,"✓"]},"z":1}');
    const check = await log.verifyTasks();
    expect(check.differences).toEqual([]);
    expect(check.count_drift).toEqual([]);
    expect(log.task('t1').status).toBe('blocked'); // the ack in the group commit moved the stored row
    log.close();
  });

  it('hashes a canonical string as its UTF-8 bytes', () => {
    const text = '["palace-event-v1","é","🚀"]';
    expect(nextChain(GENESIS_CHAIN, text).equals(nextChain(GENESIS_CHAIN, Buffer.from(text, 'utf8')))).toBe(
      true,
    );
  });
});
