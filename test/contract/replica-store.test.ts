// Runs the ReplicaStore contract against the SQLite replica, on a bare store and under a Logstream
// (whose waiters its commits wake), plus what only the SQLite file can show: a corrupt identity is refused.

import { join } from 'node:path';

import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { Logstream } from '../../hub/src/logstream/logstream.js';
import { SqliteEventStore } from '../../hub/src/logstream/sqlite-event-store.js';
import { catchHubError } from '../helpers/errors.js';
import { nextHex } from '../helpers/fixtures.js';
import { makeTmpDir, type TmpDir } from '../helpers/tmp-dir.js';
import { runReplicaStoreContract } from './replica-store.contract.js';

runReplicaStoreContract('SqliteEventStore.replica', (dir, name, mintReplicaId) => {
  const store = new SqliteEventStore(join(dir, `${name}.sqlite3`), { mintReplicaId });
  return { replica: store.replica, local: store, close: () => store.close() };
});

runReplicaStoreContract('SqliteEventStore.replica under a Logstream', (dir, name, mintReplicaId) => {
  const log = new Logstream(new SqliteEventStore(join(dir, `${name}.sqlite3`), { mintReplicaId }));
  return { replica: log.store.replica, local: log.store, close: () => log.close() };
});

describe('SqliteEventStore replica identity', () => {
  let dir: TmpDir;
  beforeEach(() => {
    dir = makeTmpDir('palace-replica-');
  });
  afterEach(() => dir.cleanup());

  it('refuses to open a log whose replica identity is corrupt rather than minting another', () => {
    const file = join(dir.path, 'c.sqlite3');
    new SqliteEventStore(file, { mintReplicaId: () => `rep_${nextHex()}` }).close();
    const db = new Database(file);
    db.prepare(`UPDATE meta SET value = 'garbage' WHERE key = 'replica_id'`).run();
    db.close();
    let minted = 0;
    const err = catchHubError(
      () =>
        new SqliteEventStore(file, {
          mintReplicaId: () => `rep_${(++minted).toString(16).padStart(12, '0')}`,
        }),
    );
    expect(err.message).toMatch(/replica identity .* is corrupt; refusing to mint a second identity/);
    expect(minted).toBe(0);
  });
});
