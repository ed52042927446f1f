// An Embedder whose model runs in a worker thread. Concurrent embed() calls issued in the same
// event-loop turn are coalesced into one batch for the worker, then split back to their callers.

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

import { HubError, type ErrorCode } from '../errors.js';
import type { EmbedKind, Embedder, EmbedderInfo } from './embedder.js';
import type { EmbedderSpec } from './spec.js';

const MAX_BATCH_TEXTS = 64;

/** The compiled worker script (tests run from source, where the worker is taken from dist/). */
function workerScript(): URL {
  const here = new URL('./embed-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(here))) return here;
  const fromSource = new URL('../../../dist/hub/src/embed/embed-worker.js', import.meta.url);
  if (existsSync(fileURLToPath(fromSource))) return fromSource;
  throw new HubError('memory.embedder_missing', 'the embedding worker is not built: run `npm run build`');
}

interface Pending {
  texts: readonly string[];
  kind: EmbedKind;
  resolve: (vectors: Float32Array[]) => void;
  reject: (err: Error) => void;
}

type WorkerMessage =
  | { type: 'ready'; info: EmbedderInfo }
  | { type: 'fatal'; message: string; code?: string }
  | { type: 'result'; id: number; vectors: Float32Array[] }
  | { type: 'error'; id: number; message: string; code?: string };

function asError(message: string, code?: string): HubError {
  const known = code && code.includes('.') ? (code as ErrorCode) : 'memory.embed_failed';
  return new HubError(known, message);
}

export async function createWorkerEmbedder(spec: EmbedderSpec): Promise<Embedder> {
  // execArgv: [] so flags of the parent (e.g. --input-type, inspector) never break the worker.
  const worker = new Worker(workerScript(), { workerData: spec, execArgv: [] });
  const inflight = new Map<number, Pending[]>();
  let nextId = 1;
  let queue: Pending[] = [];
  let scheduled = false;
  let dead: HubError | undefined;

  const info = await new Promise<EmbedderInfo>((resolve, reject) => {
    const onMessage = (m: WorkerMessage): void => {
      if (m.type === 'ready') resolve(m.info);
      else if (m.type === 'fatal') reject(asError(m.message, m.code));
    };
    worker.once('message', onMessage);
    worker.once('error', (err) => reject(asError(`embedding worker failed to start: ${err.message}`)));
  });

  const failAll = (err: HubError): void => {
    dead = err;
    for (const group of inflight.values()) for (const p of group) p.reject(err);
    inflight.clear();
    for (const p of queue) p.reject(err);
    queue = [];
  };
  worker.on('message', (m: WorkerMessage) => {
    if (m.type !== 'result' && m.type !== 'error') return;
    const group = inflight.get(m.id);
    inflight.delete(m.id);
    if (inflight.size === 0) worker.unref(); // an idle worker never keeps the process alive
    if (!group) return;
    if (m.type === 'error') {
      for (const p of group) p.reject(asError(m.message, m.code));
      return;
    }
    let offset = 0;
    for (const p of group) {
      p.resolve(m.vectors.slice(offset, offset + p.texts.length));
      offset += p.texts.length;
    }
  });
  worker.on('error', (err) => failAll(asError(`embedding worker crashed: ${err.message}`)));
  worker.on('exit', (code) => failAll(asError(`embedding worker exited (code ${code})`)));
  worker.unref();

  const flush = (): void => {
    scheduled = false;
    while (queue.length > 0) {
      const kind = queue[0]?.kind ?? 'document';
      const group: Pending[] = [];
      let size = 0;
      while (queue.length > 0 && queue[0]?.kind === kind && (group.length === 0 || size + (queue[0]?.texts.length ?? 0) <= MAX_BATCH_TEXTS)) {
        const p = queue.shift() as Pending;
        group.push(p);
        size += p.texts.length;
      }
      const id = nextId++;
      inflight.set(id, group);
      worker.ref(); // pending work keeps the process alive until its answer arrives
      worker.postMessage({ id, texts: group.flatMap((p) => [...p.texts]), kind });
    }
  };

  const embedder: Embedder = {
    info: () => info,
    embed(texts, kind) {
      if (dead) return Promise.reject(dead);
      if (texts.length === 0) return Promise.resolve([]);
      // A long request goes in batches of at most MAX_BATCH_TEXTS, so one caller never hands the model
      // an unbounded batch (a 1 MiB drawer is ~1,300 chunks).
      if (texts.length > MAX_BATCH_TEXTS) {
        const parts: Array<Promise<Float32Array[]>> = [];
        for (let i = 0; i < texts.length; i += MAX_BATCH_TEXTS) parts.push(embedder.embed(texts.slice(i, i + MAX_BATCH_TEXTS), kind));
        return Promise.all(parts).then((vectors) => vectors.flat());
      }
      return new Promise((resolve, reject) => {
        queue.push({ texts, kind, resolve, reject });
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
    async close() {
      if (dead) return;
      dead = new HubError('memory.embed_failed', 'the embedder is closed');
      await worker.terminate();
    },
  };
  return embedder;
}
