// The Milvus adapter against a real Milvus server when PALACE_TEST_MILVUS_URI names one (and
// PALACE_TEST_MILVUS_TOKEN its token, if any): the shared VectorStore contract. No server, no run.

import { describe, expect, it } from 'vitest';

import { MilvusVectorStore } from '../../hub/src/vector/milvus-vector-store.js';
import { rejectedHubError } from '../helpers/errors.js';
import { freshNamespace } from '../helpers/pglite-server.js';
import { CONTRACT_DIMENSIONS, runVectorStoreContract } from './vector-store.contract.js';

const url = process.env.PALACE_TEST_MILVUS_URI?.trim();
const token = process.env.PALACE_TEST_MILVUS_TOKEN?.trim() || undefined;
const settings = (namespace: string) => ({ milvusUri: url ?? '', milvusToken: token, milvusDbName: undefined, milvusConsistencyLevel: 'Strong' as const, namespace, timeoutSeconds: 30 });

if (!url) {
  describe.skip('skipped: no server (set PALACE_TEST_MILVUS_URI)', () => {
    it('runs the VectorStore contract against Milvus', () => undefined);
  });
} else {
  runVectorStoreContract(`MilvusVectorStore on ${url}`, async (dimensions) => {
    const store = await MilvusVectorStore.open({ settings: settings(freshNamespace('m')), dimensions });
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

  describe('MilvusVectorStore on a real server', () => {
    it('lets only one hub claim a collection; the claim is released on close', async () => {
      const namespace = freshNamespace('m');
      const first = await MilvusVectorStore.open({ settings: settings(namespace), dimensions: CONTRACT_DIMENSIONS, claimAs: 'hub-one' });
      const err = await rejectedHubError(MilvusVectorStore.open({ settings: settings(namespace), dimensions: CONTRACT_DIMENSIONS, claimAs: 'hub-two' }));
      expect(err.code).toBe('lease.held');
      expect(err.message).toContain('hub-one');
      await first.close();
      const second = await MilvusVectorStore.open({ settings: settings(namespace), dimensions: CONTRACT_DIMENSIONS, claimAs: 'hub-two' });
      await second.dropAll();
      await second.close();
    });
  });
}
