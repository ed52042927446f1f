// Rebuilds a palace's vectors with another embedder from the verbatim drawers (the content is the
// source of truth; vectors are derived). The old vectors stay aside until the new ones are complete.

import { existsSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import type { Embedder } from '../../embed/embedder.js';
import { embedderKey } from '../../embed/embedder.js';
import { writeEmbedderRecord } from '../../embed/select.js';
import type { Logger } from '../../log.js';
import { LanceDbVectorStore } from '../../vector/lancedb-vector-store.js';
import type { StoredDrawer } from '../../vector/vector-store.js';
import { embeddingInput } from '../drawers/embedding-input.js';

const BATCH = 64;

export interface ReembedProgress {
  done: number;
  total: number;
}

/** Re-embeds every drawer of the palace with `embedder` and records it. Returns how many drawers. */
export async function reembedPalace(
  palacePath: string,
  oldDimensions: number | undefined,
  embedder: Embedder,
  log: Logger,
  onProgress: (p: ReembedProgress) => void = () => undefined,
): Promise<number> {
  const info = embedder.info();
  const vectorsDir = join(palacePath, 'vectors');
  let drawers: StoredDrawer[] = [];
  if (existsSync(vectorsDir) && oldDimensions !== undefined) {
    const old = await LanceDbVectorStore.open({ palacePath, dimensions: oldDimensions, log });
    try {
      drawers = await old.scan({});
    } finally {
      await old.close();
    }
  }
  const aside = `${vectorsDir}.before-reembed-${Date.now()}`;
  if (existsSync(vectorsDir)) renameSync(vectorsDir, aside);
  try {
    const store = await LanceDbVectorStore.open({ palacePath, dimensions: info.dimensions, log });
    try {
      const key = embedderKey(info);
      for (let i = 0; i < drawers.length; i += BATCH) {
        const batch = drawers.slice(i, i + BATCH);
        const vectors = await embedder.embed(batch.map((d) => embeddingInput(d.content, d.metadata)), 'document');
        await store.upsert(batch.map((d, j) => ({ ...d, embedder: key, vector: vectors[j] ?? new Float32Array(0) })));
        onProgress({ done: Math.min(i + BATCH, drawers.length), total: drawers.length });
      }
    } finally {
      await store.close();
    }
  } catch (err) {
    rmSync(vectorsDir, { recursive: true, force: true });
    if (existsSync(aside)) renameSync(aside, vectorsDir);
    throw err;
  }
  writeEmbedderRecord(palacePath, info);
  rmSync(aside, { recursive: true, force: true });
  return drawers.length;
}
