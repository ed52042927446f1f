// The Qdrant adapter against a real Qdrant server when PALACE_TEST_QDRANT_URL names one (and
// PALACE_TEST_QDRANT_API_KEY its key, if any): the shared VectorStore contract. No server, no run.

import { QdrantVectorStore } from '../../hub/src/vector/qdrant-vector-store.js';
import { runNetworkedStoreSuite } from './networked-store-suite.js';

const url = process.env.PALACE_TEST_QDRANT_URL?.trim();
const apiKey = process.env.PALACE_TEST_QDRANT_API_KEY?.trim() || undefined;

runNetworkedStoreSuite({
  name: 'QdrantVectorStore',
  envVar: 'PALACE_TEST_QDRANT_URL',
  server: url,
  prefix: 'q',
  open: (namespace, dimensions, claimAs) =>
    QdrantVectorStore.open({ settings: { qdrantUrl: url ?? '', qdrantApiKey: apiKey, namespace, timeoutSeconds: 30 }, dimensions, ...(claimAs ? { claimAs } : {}) }),
});
