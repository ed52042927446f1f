// Opens a palace's memory lazily: the embedder (in a worker thread) and the vector store are
// loaded on first use, so a hub starts fast and small and coordination never waits for a model.

import type { PalaceConfig } from '../config.js';
import type { Logger } from '../log.js';
import { chooseEmbedder, checkAgainstRecord, readEmbedderRecord, writeEmbedderRecord } from '../embed/select.js';
import { createWorkerEmbedder } from '../embed/worker-embedder.js';
import { openVectorStore } from '../vector/open-vector-store.js';
import { Memory } from './memory.js';

export interface MemoryHandle {
  /** The memory, opened on first call; a failed open is retried on the next call. */
  get(): Promise<Memory>;
  /** Whether it has been opened (status reports counts only then, to stay cheap). */
  isOpen(): boolean;
  close(): Promise<void>;
}

export async function openMemory(config: Readonly<PalaceConfig>, palacePath: string, log: Logger): Promise<Memory> {
  const { spec, fallback } = chooseEmbedder(config, palacePath);
  if (fallback)
    log.info(
      `no ONNX model in ${config.home}/models/all-MiniLM-L6-v2; using the bundled embedder (Universal Sentence Encoder lite, 512-d). ` +
        'Run `palace set-embedder --model all-MiniLM-L6-v2` on a new palace to use MiniLM instead',
    );
  const embedder = await createWorkerEmbedder(spec);
  try {
    const info = embedder.info();
    checkAgainstRecord(palacePath, info);
    const store = await openVectorStore(config, palacePath, info.dimensions, log);
    const hasRecord = readEmbedderRecord(palacePath) !== undefined;
    if (!hasRecord && (await store.count()) > 0) writeEmbedderRecord(palacePath, info);
    return new Memory({
      store,
      embedder,
      // The palace is bound to its embedder by its first drawer, not by merely being opened.
      onFirstWrite: hasRecord ? undefined : () => void writeEmbedderRecord(palacePath, info),
    });
  } catch (err) {
    await embedder.close();
    throw err;
  }
}

export function createMemoryHandle(config: Readonly<PalaceConfig>, palacePath: string, log: Logger): MemoryHandle {
  let opening: Promise<Memory> | undefined;
  let opened = false;
  return {
    get() {
      opening ??= openMemory(config, palacePath, log).then(
        (m) => {
          opened = true;
          return m;
        },
        (err: unknown) => {
          opening = undefined;
          throw err;
        },
      );
      return opening;
    },
    isOpen: () => opened,
    async close() {
      if (opening) await (await opening.catch(() => undefined))?.close();
      opening = undefined;
      opened = false;
    },
  };
}
