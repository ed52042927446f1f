import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { parseHlc } from '../../hub/src/core/hlc.js';
import { REPLICA_ID_PATTERN } from '../../hub/src/core/ids.js';
import { HubError } from '../../hub/src/errors.js';
import { SCHEMA_VERSION } from '../../hub/src/logstream/schema.js';
import {
  SqliteEventStore,
  type SqliteEventStoreOptions,
} from '../../hub/src/logstream/sqlite-event-store.js';
import { catchHubError } from '../helpers/errors.js';
import { eventQueryOf, newArtifact, newEvent, nextHex } from '../helpers/fixtures.js';
import { makeTmpDir, type TmpDir } from '../helpers/tmp-dir.js';
import { runEventStoreContract } from './event-store.contract.js';

const mintReplicaId = (): string => `rep_${nextHex()}`;

runEventStoreContract('SqliteEventStore on a real file', () => {
  const dir = makeTmpDir();
  const store = new SqliteEventStore(join(dir.path, 'logstream.sqlite3'), { mintReplicaId });
  return {
    store,
    cleanup: () => {
      store.close();
      dir.cleanup();
    },
  };
});

describe('SqliteEventStore on disk', () => {
  let dir: TmpDir;
  let file: string;
  const opened: SqliteEventStore[] = [];

  const open = (options: Partial<SqliteEventStoreOptions> = {}): SqliteEventStore => {
    const store = new SqliteEventStore(file, { mintReplicaId, ...options });
    opened.push(store);
    return store;
  };

  const appendOk = (store: SqliteEventStore, count = 1): void => {
    for (const result of store.append(Array.from({ length: count }, () => newEvent())))
      if (result instanceof HubError) throw result;
  };

  beforeEach(() => {
    dir = makeTmpDir();
    file = join(dir.path, 'palace', 'logstream.sqlite3');
  });

  afterEach(() => {
    for (const store of opened.splice(0)) store.close();
    dir.cleanup();
  });

  it('creates the missing palace directory (owner-only) and the file in WAL mode', () => {
    const store = open();
    appendOk(store);
    expect(existsSync(file)).toBe(true);
    expect(statSync(join(dir.path, 'palace')).mode & 0o777).toBe(0o700);
    const raw = new Database(file, { readonly: true });
    try {
      expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(raw.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    } finally {
      raw.close();
    }
  });

  it('mints a replica id once and keeps it and the data across reopen', () => {
    let minted = 0;
    const mint = (): string => {
      minted += 1;
      return `rep_${nextHex()}`;
    };
    const first = open({ mintReplicaId: mint });
    const replicaId = first.replicaId;
    expect(replicaId).toMatch(REPLICA_ID_PATTERN);
    const art = first.putArtifact(newArtifact('kept\r\n'));
    const [event] = first.append([newEvent({ body: 'kept', artifact_ids: [art.id] })]);
    first.close();

    const second = open({ mintReplicaId: mint });
    expect(minted).toBe(1);
    expect(second.replicaId).toBe(replicaId);
    expect(second.getEvent((event as { id: string }).id)).toEqual(event);
    expect(second.getArtifact(art.id)?.content).toBe('kept\r\n');
    expect(second.countEvents()).toBe(1);
  });

  it('continues seq after reopen', () => {
    const first = open();
    appendOk(first, 3);
    first.close();
    const second = open();
    const [next] = second.append([newEvent()]);
    expect((next as { seq: number }).seq).toBe(4);
  });

  it('keeps the HLC monotonic across reopen even when the wall clock went backwards', () => {
    const first = open({ now: () => 2_000_000_000_000 });
    appendOk(first, 5);
    const before = first.query(eventQueryOf({ order: 'desc', limit: 1 })).events[0]?.hlc ?? '';
    first.close();

    const second = open({ now: () => 1_000_000_000_000 });
    appendOk(second, 3);
    const all = second.query(eventQueryOf()).events.map((e) => e.hlc);
    expect(all).toHaveLength(8);
    for (let i = 1; i < all.length; i++) expect((all[i] ?? '') > (all[i - 1] ?? '')).toBe(true);
    expect((all[5] ?? '') > before).toBe(true);
    expect(parseHlc(all[7] ?? '')?.ms).toBe(2_000_000_000_000);
  });

  it('keeps HLC stamps unique and in seq order when two connections write the same file', () => {
    // The hub and a CLI process may both append to one log; both stamp with the same replica id.
    const now = (): number => 1_800_000_000_000;
    const a = open({ now });
    const b = open({ now });
    appendOk(a, 3);
    appendOk(b, 1);
    appendOk(a, 1);
    appendOk(b, 2);
    const events = a.query(eventQueryOf()).events;
    expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(new Set(events.map((e) => e.hlc)).size).toBe(7);
    for (let i = 1; i < events.length; i++)
      expect((events[i]?.hlc ?? '') > (events[i - 1]?.hlc ?? '')).toBe(true);
  });

  it('moves the change token when another connection commits', () => {
    const reader = open();
    const writer = open();
    const before = reader.changeToken();
    appendOk(writer);
    expect(reader.changeToken()).not.toBe(before);
    expect(reader.query(eventQueryOf()).count).toBe(1);
  });

  it('reports the tip, the count and a clean integrity check', () => {
    const store = open();
    expect(store.tipId()).toBeNull();
    expect(store.countEvents()).toBe(0);
    const results = store.append([newEvent(), newEvent()]);
    expect(store.tipId()).toBe((results[1] as { id: string }).id);
    expect(store.countEvents()).toBe(2);
    expect(store.integrityCheck()).toBe('ok');
  });

  it('counts events exactly (the highest seq) across refused, rolled-back and later appends', () => {
    const store = open();
    const counted = (): number => {
      const db = new Database(file, { readonly: true });
      try {
        return (db.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n;
      } finally {
        db.close();
      }
    };
    store.append([newEvent(), newEvent(), newEvent()]);
    // A batch naming an unknown artifact is refused; whatever it did is rolled back, leaving no gap.
    const refused = store.append([newEvent(), newEvent({ artifact_ids: ['art_0000000000000000000000000000000000000000000000000000000000000000'] })]);
    expect(refused.some((r) => r instanceof HubError)).toBe(true);
    expect(store.countEvents()).toBe(counted());
    store.append([newEvent()]);
    expect(store.countEvents()).toBe(counted());
    expect(store.countEvents()).toBe(store.query(eventQueryOf({ limit: 500 })).count);
  });

  it('opens read-only on an existing log and reads it', () => {
    const writer = open();
    appendOk(writer, 2);
    const reader = open({ readonly: true });
    expect(reader.replicaId).toBe(writer.replicaId);
    expect(reader.query(eventQueryOf()).count).toBe(2);
  });

  it('refuses to open a missing file read-only', () => {
    const err = catchHubError(() => open({ readonly: true }));
    expect(err.code).toBe('store.failed');
  });

  it('refuses a log written by a newer schema, and leaves it alone', () => {
    open().close();
    const raw = new Database(file);
    raw.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    raw.close();
    const err = catchHubError(() => open());
    expect(err.code).toBe('store.failed');
    expect(err.message).toMatch(/newer/);
    const check = new Database(file, { readonly: true });
    try {
      expect(check.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION + 1);
    } finally {
      check.close();
    }
  });
});
