// checkHeads (issue 29) on a real SQLite replica: a head consistent with what was verified proves
// nothing; a conflicting one, validly signed, is recorded once with both statements; a head with a
// bad signature or past what was verified is skipped; and a peer repeating one origin's head 5,000
// times gets it looked at once (the signature check is the cost a peer could multiply).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { fakeIdentity, fakeLog } from '../../bench/fake-origin.js';
import { publicKeyFromRaw } from '../../hub/src/logstream/signatures.js';
import { SqliteEventStore } from '../../hub/src/logstream/sqlite-event-store.js';
import { checkHeads } from '../../hub/src/sync/equivocation.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function setup(): { store: SqliteEventStore; origin: ReturnType<typeof fakeIdentity>; one: ReturnType<typeof fakeLog>; two: ReturnType<typeof fakeLog> } {
  const dir = mkdtempSync(join(tmpdir(), 'palace-heads-'));
  dirs.push(dir);
  const store = new SqliteEventStore(join(dir, 'log.sqlite3'), { mintReplicaId: () => 'rep_0123456789ab' });
  const origin = fakeIdentity();
  const at = Date.now();
  const one = fakeLog(origin, 4, (i) => `one ${i}`, undefined, at);
  const two = fakeLog(origin, 4, (i) => `two ${i}`, one.events.map((e) => e.id), at);
  store.replica.rememberOriginKey({ origin: origin.replica, publicKey: origin.publicKey, source: 'pinned', vouchedBy: null }, null);
  const key = publicKeyFromRaw(origin.publicKey) ?? null;
  // Verified up to position 3 of chain one.
  const cp = one.checkpoints[2];
  if (!cp) throw new Error('no checkpoint');
  store.replica.applyRemotePage({ origin: origin.replica, after: 0, events: one.events.slice(0, 3), checkpoint: cp, artifacts: [], key });
  return { store, origin, one, two };
}

describe('checkHeads', () => {
  it('records a validly signed conflicting head once, and skips what proves nothing', () => {
    const { store, one, two } = setup();
    const replica = store.replica;
    const [c1, c2, c3, c4] = [one.checkpoints[0], one.checkpoints[1], one.checkpoints[2], two.checkpoints[3]];
    if (!c1 || !c2 || !c3 || !c4) throw new Error('checkpoints');
    expect(checkHeads(replica, [c1, c2, c3], 'p')).toEqual([]); // consistent (position 1 and 2 read back from the events)
    expect(checkHeads(replica, [c4], 'p')).toEqual([]); // past what this hub verified
    const forged = { ...(two.checkpoints[1] ?? c2), sig: c1.sig }; // a signature over another statement
    expect(checkHeads(replica, [forged], 'p')).toEqual([]);
    const conflicting = two.checkpoints[1];
    if (!conflicting) throw new Error('checkpoint');
    const errors = checkHeads(replica, [conflicting], 'relay');
    expect(errors.map((e) => e.code)).toEqual(['sync.equivocation']);
    const kept = replica.evidence.equivocations();
    expect(kept).toHaveLength(1);
    expect(kept[0]).toMatchObject({ pos: 2, via_peer: 'relay', theirs: conflicting });
    expect(kept[0]?.ours.chain_at_pos).toBe(c2.chain);
    expect(kept[0]?.ours.checkpoint).toEqual(c3); // the covering checkpoint, at position 3
    expect(replica.evidence.isEquivocating(conflicting.origin)).toBe(true);
    store.close();
  });

  it('looks at one head per origin however often a peer repeats it', () => {
    const { store, one } = setup();
    const replica = store.replica;
    let lookups = 0;
    const counting = new Proxy(replica, {
      get(target, prop, receiver) {
        if (prop === 'originKey')
          return (origin: string) => {
            lookups++;
            return target.originKey(origin);
          };
        const value = Reflect.get(target, prop, receiver) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const head = one.checkpoints[2];
    if (!head) throw new Error('checkpoint');
    expect(checkHeads(counting, Array.from({ length: 5_000 }, () => head), 'p')).toEqual([]);
    expect(lookups).toBe(1);
    store.close();
  });
});
