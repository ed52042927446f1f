// The shared VectorStore contract plus the one-claimant rule, for a networked adapter whose server
// is named by an environment variable. No server named: the suite reports itself skipped.

import { describe, expect, it } from 'vitest';

import type { VectorStore } from '../../hub/src/vector/vector-store.js';
import { rejectedHubError } from '../helpers/errors.js';
import { freshNamespace } from '../helpers/pglite-server.js';
import { closingFixture, CONTRACT_DIMENSIONS, runVectorStoreContract } from './vector-store.contract.js';

/** A networked store as the suite needs it: opened per namespace, droppable. */
export interface NetworkedStore extends VectorStore {
  dropAll(): Promise<void>;
}

export interface NetworkedSuite {
  /** Adapter name, e.g. `QdrantVectorStore`. */
  name: string;
  /** The variable naming the server (PALACE_TEST_QDRANT_URL, ...) and its value, if set. */
  envVar: string;
  server: string | undefined;
  /** Namespace prefix that keeps test collections apart. */
  prefix: string;
  open(namespace: string, dimensions: number, claimAs?: string): Promise<NetworkedStore>;
}

export function runNetworkedStoreSuite(suite: NetworkedSuite): void {
  if (!suite.server) {
    describe.skip(`skipped: no server (set ${suite.envVar})`, () => {
      it(`runs the VectorStore contract against ${suite.name}`, () => undefined);
    });
    return;
  }
  runVectorStoreContract(`${suite.name} on ${suite.server}`, async (dimensions) => {
    const store = await suite.open(freshNamespace(suite.prefix), dimensions);
    // dropAll works on a closed store too (it opens its own connection to the server).
    return closingFixture(store, { dispose: () => store.dropAll() });
  });

  describe(`${suite.name} on a real server`, () => {
    it('lets only one hub claim a collection; the claim is released on close', async () => {
      const namespace = freshNamespace(suite.prefix);
      const first = await suite.open(namespace, CONTRACT_DIMENSIONS, 'hub-one');
      const err = await rejectedHubError(suite.open(namespace, CONTRACT_DIMENSIONS, 'hub-two'));
      expect(err.code).toBe('lease.held');
      expect(err.message).toContain('hub-one');
      await first.close();
      const second = await suite.open(namespace, CONTRACT_DIMENSIONS, 'hub-two');
      await second.dropAll();
      await second.close();
    });
  });
}
