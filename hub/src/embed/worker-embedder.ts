// An Embedder whose model runs in a worker thread, fed one bounded batch at a time so a long
// request never holds up a search or another agent's drawer (see createWorkerEmbedder).

import { Worker } from 'node:worker_threads';

import { compiledScript } from '../compiled-script.js';
import { HubError, type ErrorCode } from '../errors.js';
import type { EmbedKind, Embedder, EmbedderInfo } from './embedder.js';
import type { EmbedderSpec } from './spec.js';

/**
 * Texts per message to the worker. The models' throughput is flat from 8 texts up, and one batch is
 * the longest anything waits behind (about a second with the bundled model on 2 cores).
 */
const MAX_BATCH_TEXTS = 16;

/** One embed() call: its texts go to the worker in slices, its vectors come back in order. */
interface Request {
  texts: readonly string[];
  kind: EmbedKind;
  /** Texts already handed to the worker. */
  sent: number;
  vectors: Float32Array[];
  resolve: (vectors: Float32Array[]) => void;
  reject: (err: Error) => void;
}

/** The part of a request carried by one batch. */
interface Slice {
  request: Request;
  count: number;
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

/**
 * Scheduling. One batch is at the worker at a time, built when the previous one comes back, so
 * whoever asks meanwhile is served next instead of behind a long request already handed over:
 * - queries go before documents (someone is waiting on a search);
 * - within a kind, requests not yet started go first, in arrival order, then the started ones in
 *   turn. A 1 MiB drawer (~1,300 chunks) thus delays a search by at most one batch, and other
 *   agents' small drawers by about one batch each, instead of the whole drawer.
 * Concurrent calls in the same event-loop turn are coalesced into one batch, then split back.
 */
export async function createWorkerEmbedder(spec: EmbedderSpec): Promise<Embedder> {
  // execArgv: [] so flags of the parent (e.g. --input-type, inspector) never break the worker.
  const worker = new Worker(compiledScript(import.meta.url, './embed-worker.js', 'hub/src/embed/embed-worker.js', 'memory.embedder_missing'), { workerData: spec, execArgv: [] });
  let queue: Request[] = [];
  let inflight: { id: number; slices: Slice[] } | undefined;
  let nextId = 1;
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
    for (const slice of inflight?.slices ?? []) slice.request.reject(err);
    inflight = undefined;
    for (const request of queue) request.reject(err);
    queue = [];
  };

  /** Hands the worker its next batch, if it is idle and anything waits. */
  const pump = (): void => {
    if (inflight || dead || queue.length === 0) return;
    const kind: EmbedKind = queue.some((r) => r.kind === 'query') ? 'query' : 'document';
    const ofKind = queue.filter((r) => r.kind === kind);
    const order = [...ofKind.filter((r) => r.sent === 0), ...ofKind.filter((r) => r.sent > 0)];
    const slices: Slice[] = [];
    let size = 0;
    for (const request of order) {
      if (size === MAX_BATCH_TEXTS) break;
      const count = Math.min(MAX_BATCH_TEXTS - size, request.texts.length - request.sent);
      slices.push({ request, count });
      size += count;
    }
    const texts: string[] = [];
    for (const { request, count } of slices) {
      texts.push(...request.texts.slice(request.sent, request.sent + count));
      request.sent += count;
    }
    // Fully sent requests leave the queue; a started one goes to the back, taking turns with the others.
    const touched = new Set(slices.map((s) => s.request));
    queue = [...queue.filter((r) => !touched.has(r)), ...[...touched].filter((r) => r.sent < r.texts.length)];
    const id = nextId++;
    inflight = { id, slices };
    worker.ref(); // pending work keeps the process alive until its answer arrives
    worker.postMessage({ id, texts, kind });
  };

  worker.on('message', (m: WorkerMessage) => {
    if ((m.type !== 'result' && m.type !== 'error') || m.id !== inflight?.id) return;
    const { slices } = inflight;
    inflight = undefined;
    if (m.type === 'error') {
      const err = asError(m.message, m.code);
      const failed = new Set(slices.map((s) => s.request));
      queue = queue.filter((r) => !failed.has(r));
      for (const request of failed) request.reject(err);
    } else {
      let offset = 0;
      for (const { request, count } of slices) {
        request.vectors.push(...m.vectors.slice(offset, offset + count));
        offset += count;
        if (request.vectors.length === request.texts.length) request.resolve(request.vectors);
      }
    }
    pump();
    if (!inflight) worker.unref(); // an idle worker never keeps the process alive
  });
  worker.on('error', (err) => failAll(asError(`embedding worker crashed: ${err.message}`)));
  worker.on('exit', (code) => failAll(asError(`embedding worker exited (code ${code})`)));
  worker.unref();

  const embedder: Embedder = {
    info: () => info,
    embed(texts, kind) {
      if (dead) return Promise.reject(dead);
      if (texts.length === 0) return Promise.resolve([]);
      return new Promise((resolve, reject) => {
        queue.push({ texts, kind, sent: 0, vectors: [], resolve, reject });
        if (!scheduled) {
          scheduled = true;
          setImmediate(() => {
            scheduled = false;
            pump();
          });
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
