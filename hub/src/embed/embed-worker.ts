// Worker-thread entry: builds the embedder from the spec in workerData and answers embed requests,
// so model inference never runs on the hub's event loop.

import { parentPort, workerData } from 'node:worker_threads';

import { createEmbedder } from './create-embedder.js';
import type { EmbedKind } from './embedder.js';
import type { EmbedderSpec } from './spec.js';

interface Request {
  id: number;
  texts: string[];
  kind: EmbedKind;
}

/** This isolate's own memory (process.memoryUsage's rss is the whole process's, shared by all threads). */
function memory(): { heap: number; external: number } {
  const m = process.memoryUsage();
  return { heap: m.heapTotal, external: m.external };
}

const port = parentPort;
if (!port) throw new Error('embed-worker must run in a worker thread');

try {
  const embedder = await createEmbedder(workerData as EmbedderSpec);
  port.postMessage({ type: 'ready', info: embedder.info(), memory: memory() });
  port.on('message', (message: Request | { type: 'close' }) => {
    if ('type' in message) {
      void embedder.close().then(() => port.close());
      return;
    }
    embedder.embed(message.texts, message.kind).then(
      (vectors) => {
        const buffers = vectors.map((v) => v.buffer as ArrayBuffer);
        port.postMessage({ type: 'result', id: message.id, vectors, memory: memory() }, buffers);
      },
      (err: unknown) => port.postMessage({ type: 'error', id: message.id, message: (err as Error).message, code: (err as { code?: string }).code }),
    );
  });
} catch (err) {
  port.postMessage({ type: 'fatal', message: (err as Error).message, code: (err as { code?: string }).code });
}
