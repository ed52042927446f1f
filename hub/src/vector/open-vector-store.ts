// Picks the VectorStore for the configured backend (PALACE_BACKEND / --backend / config `backend`)
// and opens it. Networked stores are claimed by one palace on one host, so two hubs never share one.

import { hostname } from 'node:os';

import type { PalaceConfig } from '../config.js';
import type { Logger } from '../log.js';
import type { VectorStore } from './vector-store.js';

/** Who claims a networked collection: this host and palace (the palace's own lease covers processes). */
export function claimHolder(palacePath: string): string {
  return `${hostname()}:${palacePath}`;
}

export interface OpenVectorStoreOptions {
  /** A long-running hub: LanceDB goes in a child process that is replaced as it grows (config.lancedbRecycleMb). */
  longRunning?: boolean;
}

export async function openVectorStore(
  config: Readonly<PalaceConfig>,
  palacePath: string,
  dimensions: number,
  log: Logger,
  options: OpenVectorStoreOptions = {},
): Promise<VectorStore> {
  const settings = config.backendSettings;
  const claimAs = claimHolder(palacePath);
  switch (config.backend) {
    // Adapters load on first use, so a hub that only coordinates never pays for LanceDB or pg.
    case 'lancedb': {
      if (options.longRunning && config.lancedbRecycleMb > 0) {
        const { LanceDbProcessStore } = await import('./lancedb-process-store.js');
        return LanceDbProcessStore.open({ palacePath, dimensions, log, recycleBytes: config.lancedbRecycleMb * 1024 * 1024 });
      }
      const { LanceDbVectorStore } = await import('./lancedb-vector-store.js');
      return LanceDbVectorStore.open({ palacePath, dimensions, log });
    }
    case 'pgvector': {
      const { PgVectorStore } = await import('./pgvector-vector-store.js');
      return PgVectorStore.open({ settings, dimensions, claimAs });
    }
    // Qdrant and Milvus are spoken to over their REST APIs with fetch: no driver package to install.
    case 'qdrant': {
      const { QdrantVectorStore } = await import('./qdrant-vector-store.js');
      return QdrantVectorStore.open({ settings, dimensions, claimAs });
    }
    case 'milvus': {
      const { MilvusVectorStore } = await import('./milvus-vector-store.js');
      return MilvusVectorStore.open({ settings, dimensions, claimAs });
    }
  }
}
