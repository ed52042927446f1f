// Embedding worker entry, run as a child process (forked) or a worker thread: builds the embedder
// from the spec in its first message and answers embed requests, so inference never runs on the
// hub's event loop.

import { parentPort } from 'node:worker_threads';

import { createEmbedder } from './create-embedder.js';
import type { EmbedKind, Embedder } from './embedder.js';
import type { EmbedderSpec } from './spec.js';

interface Request {
  id: number;
  texts: string[];
  kind: EmbedKind;
}

type Incoming = Request | { type: 'init'; spec: EmbedderSpec } | { type: 'close' };

const port = parentPort;
const send = port
  ? (m: unknown, transfer?: ArrayBuffer[]): void => port.postMessage(m, transfer ?? [])
  : (m: unknown): void => void process.send?.(m);
if (!port && !process.send) throw new Error('embed-worker runs as a worker thread or a forked child process');

/** This worker's own memory: a child's RSS; a thread's V8 heap plus external buffers (rss is the whole process's). */
function memoryBytes(): number {
  const m = process.memoryUsage();
  return port ? m.heapTotal + m.external : m.rss;
}

let embedder: Embedder | undefined;

function onMessage(message: Incoming): void {
  if ('type' in message) {
    if (message.type === 'init') void init(message.spec);
    else void embedder?.close().then(() => (port ? port.close() : process.exit(0)));
    return;
  }
  const current = embedder;
  if (!current) return send({ type: 'error', id: message.id, message: 'the embedding worker is not ready' });
  current.embed(message.texts, message.kind).then(
    (vectors) => send({ type: 'result', id: message.id, vectors, memory: memoryBytes() }, vectors.map((v) => v.buffer as ArrayBuffer)),
    (err: unknown) => send({ type: 'error', id: message.id, message: (err as Error).message, code: (err as { code?: string }).code }),
  );
}

async function init(spec: EmbedderSpec): Promise<void> {
  try {
    embedder = await createEmbedder(spec);
    send({ type: 'ready', info: embedder.info(), memory: memoryBytes() });
  } catch (err) {
    send({ type: 'fatal', message: (err as Error).message, code: (err as { code?: string }).code });
  }
}

if (port) port.on('message', onMessage);
else {
  process.on('message', onMessage);
  // The hub is gone (its end of the channel closed): nothing is left to answer.
  process.on('disconnect', () => process.exit(0));
}
