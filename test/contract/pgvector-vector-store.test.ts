// The pgvector adapter against a real Postgres engine (PGlite + pgvector over the wire, real `pg`
// client): the VectorStore contract, plus the collection claim and the clear errors it owes.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { PgVectorStore } from '../../hub/src/vector/pgvector-vector-store.js';
import { rejectedHubError } from '../helpers/errors.js';
import { freshNamespace, startPgliteServer, type PgliteServer } from '../helpers/pglite-server.js';
import { axisVector, closingFixture, CONTRACT_DIMENSIONS, runVectorStoreContract, storedDrawer } from './vector-store.contract.js';

let server: PgliteServer;

beforeAll(async () => {
  server = await startPgliteServer();
}, 60_000);

afterAll(async () => {
  await server.stop();
});

const settings = (namespace: string, dsn = server.dsn) => ({ pgvectorDsn: dsn, pgvectorDatabase: undefined, timeoutSeconds: 10, namespace });

runVectorStoreContract('PgVectorStore on PGlite (pgvector) over the wire', async (dimensions) => {
  // PGlite is one Postgres session behind the socket: concurrent connections interleave their
  // extended-protocol messages, so the store's pool uses one connection here (a real server takes 4).
  const store = await PgVectorStore.open({ settings: settings(freshNamespace()), dimensions, maxConnections: 1 });
  return closingFixture(store, { beforeClose: () => store.dropAll() });
});

describe('PgVectorStore on Postgres', () => {
  it('keeps drawers across reopen and refuses another dimension by name', async () => {
    const namespace = freshNamespace();
    const first = await PgVectorStore.open({ settings: settings(namespace), dimensions: CONTRACT_DIMENSIONS });
    const kept = storedDrawer({ content: 'archipelago notes', vector: axisVector(2) });
    await first.upsert([kept]);
    await first.close();

    const second = await PgVectorStore.open({ settings: settings(namespace), dimensions: CONTRACT_DIMENSIONS });
    expect((await second.search(axisVector(2), {}, 1))[0]?.drawer.id).toBe(kept.id);
    await second.close();

    const err = await rejectedHubError(PgVectorStore.open({ settings: settings(namespace), dimensions: 16 }));
    expect(err.code).toBe('memory.embedder_mismatch');
    expect(err.message).toContain(`${CONTRACT_DIMENSIONS} dimensions`);
  });

  it('lets only one hub claim a collection; the claim is released on close', async () => {
    const namespace = freshNamespace();
    const first = await PgVectorStore.open({ settings: settings(namespace), dimensions: CONTRACT_DIMENSIONS, claimAs: 'hub-one' });
    const err = await rejectedHubError(PgVectorStore.open({ settings: settings(namespace), dimensions: CONTRACT_DIMENSIONS, claimAs: 'hub-two' }));
    expect(err.code).toBe('lease.held');
    expect(err.message).toContain('hub-one');
    expect(err.message).toContain(`${namespace}drawers`);
    // Another namespace on the same server is another collection.
    const other = await PgVectorStore.open({ settings: settings(freshNamespace()), dimensions: CONTRACT_DIMENSIONS, claimAs: 'hub-two' });
    await other.close();
    await first.close();
    const second = await PgVectorStore.open({ settings: settings(namespace), dimensions: CONTRACT_DIMENSIONS, claimAs: 'hub-two' });
    await second.close();
  });

  it('reports an unreachable server as backend.unreachable naming it, password hidden', async () => {
    const err = await rejectedHubError(
      PgVectorStore.open({ settings: settings(freshNamespace(), 'postgres://palace:s3cret@127.0.0.1:1/palace'), dimensions: CONTRACT_DIMENSIONS }),
    );
    expect(err.code).toBe('backend.unreachable');
    expect(err.message).toContain('127.0.0.1:1');
    expect(err.message).not.toContain('s3cret');
  });
});
