// The Milvus adapter against a real Milvus server when PALACE_TEST_MILVUS_URI names one (and
// PALACE_TEST_MILVUS_TOKEN its token, if any): the shared VectorStore contract. No server, no run.

import { MilvusVectorStore } from '../../hub/src/vector/milvus-vector-store.js';
import { runNetworkedStoreSuite } from './networked-store-suite.js';

const uri = process.env.PALACE_TEST_MILVUS_URI?.trim();
const token = process.env.PALACE_TEST_MILVUS_TOKEN?.trim() || undefined;

runNetworkedStoreSuite({
  name: 'MilvusVectorStore',
  envVar: 'PALACE_TEST_MILVUS_URI',
  server: uri,
  prefix: 'm',
  open: (namespace, dimensions, claimAs) =>
    MilvusVectorStore.open({
      settings: { milvusUri: uri ?? '', milvusToken: token, milvusDbName: undefined, milvusConsistencyLevel: 'Strong', namespace, timeoutSeconds: 30 },
      dimensions,
      ...(claimAs ? { claimAs } : {}),
    }),
});
