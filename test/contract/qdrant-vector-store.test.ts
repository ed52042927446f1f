// The Qdrant adapter against a real Qdrant server when PALACE_TEST_QDRANT_URL names one (and
// PALACE_TEST_QDRANT_API_KEY its key, if any): the shared VectorStore contract. No server, no run.

import { describe, expect, it } from 'vitest';

import { QdrantVectorStore } from '../../hub/src/vector/qdrant-vector-store.js';
import { rejectedHubError } from '../helpers/errors.js';
import { freshNamespace } from '../helpers/pglite-server.js';
import { CONTRACT_DIMENSIONS, runVectorStoreContract } from './vector-store.contract.js';

const url = process.env.PALACE_TEST_QDRANT_URL?.trim();
const apiKey = process.env.PALACE_TEST_QDRANT_API_KEY?.trim() || undefined;
const settings = (namespace: string) => ({ qdrantUrl: url ?? '', qdrantApiKey: apiKey, namespace, timeoutSeconds: 30 });

if (!url) {
  describe.skip('skipped: no server (set PALACE_TEST_QDRANT_URL)', () => {
    it('runs the VectorStore contract against Qdrant', () => undefined);
  });
} else {
  runVectorStoreContract(`QdrantVectorStore on ${url}`, async (dimensions) => {
    const store = await QdrantVectorStore.open({ settings: settings(freshNamespace('q')), dimensions });
    let closed = false;
    const close = store.close.bind(store);
    store.close = async () => {
      closed = true;
      await close();
    };
    return {
      store,
      cleanup: async () => {
        await store.dropAll();
        if (!closed) await store.close();
      },
    };
  });

  describe('QdrantVectorStore on a real server', () => {
    it('lets only one hub claim a collection; the claim is released on close', async () => {
      const namespace = freshNamespace('q');
      const first = await QdrantVectorStore.open({ settings: settings(namespace), dimensions: CONTRACT_DIMENSIONS, claimAs: 'hub-one' });
      const err = await rejectedHubError(QdrantVectorStore.open({ settings: settings(namespace), dimensions: CONTRACT_DIMENSIONS, claimAs: 'hub-two' }));
      expect(err.code).toBe('lease.held');
      expect(err.message).toContain('hub-one');
      await first.close();
      const second = await QdrantVectorStore.open({ settings: settings(namespace), dimensions: CONTRACT_DIMENSIONS, claimAs: 'hub-two' });
      await second.dropAll();
      await second.close();
    });
  });
}
