// An Embedder whose model runs in a pool of workers (child processes, or threads), fed one bounded
// batch at a time per worker so a long request never holds up a search or another agent's drawer.

import { availableParallelism } from 'node:os';

import { compiledScript } from '../compiled-script.js';
import type { PalaceConfig } from '../config.js';
import { HubError, toHubError, type ErrorCode } from '../errors.js';
import type { EmbedKind, EmbedWorkersStatus, Embedder, EmbedderInfo } from './embedder.js';
import { startEmbedWorker, type EmbedIsolation, type EmbedWorkerHandle } from './embed-process.js';
import type { EmbedderSpec } from './spec.js';

/**
 * Texts per message to a worker. The models' throughput is flat from 8 texts up, and one batch is
 * the longest anything waits behind (about a second with the bundled model on 2 cores).
 */
export const MAX_BATCH_TEXTS = 16;

/** How long a worker may sit idle before it is ended and its model memory freed (the last one too). */
export const DEFAULT_EMBED_IDLE_MS = 120_000;

/**
 * Workers by default: the available cores minus one (the hub's own thread and the vector store need
 * some), but two on a two-core machine, where the measured gain of a second worker is ~1.7x and the
 * hub's thread is mostly idle while embedding. Never more than the cores. See docs/embeddings.md.
 */
export function defaultEmbedWorkers(cores = availableParallelism()): number {
  return Math.max(1, Math.min(cores, Math.max(2, cores - 1)));
}

/** The smallest batch the rest of a burst is cut into (a batch has a fixed cost of its own). */
const MIN_SHARED_BATCH = 4;

/**
 * Texts in the next batch when `unsent` texts of its kind wait and `ready` workers have their model:
 * a full batch while there is one for every worker; below that, the rest is halved among them (each
 * worker that frees takes its share of what is left, down to MIN_SHARED_BATCH), so the end of a mine (or of any burst) is not one worker on a full batch while the others idle beside it.
 */
export function batchLimit(unsent: number, ready: number): number {
  if (ready <= 1 || unsent >= ready * MAX_BATCH_TEXTS) return MAX_BATCH_TEXTS;
  if (unsent < 2 * MIN_SHARED_BATCH) return Math.max(1, unsent); // too few to cut again
  return Math.max(MIN_SHARED_BATCH, Math.ceil(unsent / ready));
}

export interface WorkerEmbedderOptions {
  /** Most workers at once (default defaultEmbedWorkers()). They start on demand. */
  workers?: number;
  /** An idle worker is ended after this many ms (default DEFAULT_EMBED_IDLE_MS; 0 = never). */
  idleMs?: number;
  /**
   * process (default): each worker is a child process, and ending one gives all its memory back;
   * thread: worker threads in the hub's process (what a thread frees is not all returned to the system).
   */
  isolation?: EmbedIsolation;
  /**
   * Start every worker now, beside the first (a mine opening the memory: its models load while the
   * vector store opens and the first files are chunked), instead of the first alone.
   */
  warm?: boolean;
  /**
   * The vector space the palace records (embedder.json): no worker starts until the first embed or
   * warm(), and `info()` answers from it meanwhile (`device: 'not started'`). A palace opened to list,
   * read or move drawers never loads the model. The first worker to load it is checked against it: a
   * different model or size fails every embed with memory.embedder_mismatch.
   */
  expected?: Pick<EmbedderInfo, 'provider' | 'model' | 'dimensions'>;
  /** Hears every batch as it is handed to a worker (tests and benchmarks observe the scheduling). */
  onBatch?: (batch: { worker: number; kind: EmbedKind; texts: number }) => void;
}

/** One embed() call: its texts go to the workers in slices, its vectors come back in order. */
interface Request {
  texts: readonly string[];
  kind: EmbedKind;
  /** Texts already handed to a worker. */
  sent: number;
  /** Vectors received so far, by position. */
  vectors: Float32Array[];
  received: number;
  settled: boolean;
  resolve: (vectors: Float32Array[]) => void;
  reject: (err: Error) => void;
}

/** The part of a request carried by one batch. */
interface Slice {
  request: Request;
  start: number;
  count: number;
}

interface PoolWorker {
  n: number;
  worker: EmbedWorkerHandle;
  state: 'starting' | 'idle' | 'busy' | 'ending';
  inflight: { id: number; slices: Slice[] } | undefined;
  batches: number;
  texts: number;
  /** The worker's own memory in bytes: a child's RSS, or a thread's V8 heap + external buffers. */
  memoryBytes: number;
  idleTimer: NodeJS.Timeout | undefined;
  startedAt: number;
  /** Settles once its model is loaded (or its start failed). */
  ready: Promise<unknown>;
}

type WorkerMessage =
  | { type: 'ready'; info: EmbedderInfo; memory?: number }
  | { type: 'fatal'; message: string; code?: string }
  | { type: 'result'; id: number; vectors: Float32Array[]; memory?: number }
  | { type: 'error'; id: number; message: string; code?: string };

function asError(message: string, code?: string): HubError {
  const known = code && code.includes('.') ? (code as ErrorCode) : 'memory.embed_failed';
  return new HubError(known, message);
}

/** An embedder backed by a pool of workers, which can say how they are doing. */
export interface WorkerEmbedder extends Embedder {
  workers(): EmbedWorkersStatus;
  warm(): Promise<void>;
}

/**
 * Scheduling, across the pool. Each worker holds one batch at a time; a batch is built when a worker
 * is free, so whoever asks meanwhile is served next instead of behind a long request already handed over:
 * - queries go before documents (someone is waiting on a search);
 * - within a kind, requests not yet started go first, in arrival order, then the started ones in
 *   turn. A 1 MiB drawer (~1,300 chunks) thus delays a search by at most one batch (the first
 *   worker to finish takes the query), and other agents' small drawers by about one batch each.
 * Concurrent calls in the same event-loop turn are coalesced into one batch, then split back.
 * Batches are full (MAX_BATCH_TEXTS) while there is a full one for every worker; the rest is shared
 * evenly among the workers (batchLimit), so the last batch of a burst does not leave the others idle.
 * Workers start on demand, up to `workers`, while work waits and none is free, or all at once on
 * warm() (a mine about to embed calls it, so its first batch finds every model loaded); one idle
 * for `idleMs` is ended (the model is loaded again on the next call).
 */
export async function createWorkerEmbedder(spec: EmbedderSpec, options: WorkerEmbedderOptions = {}): Promise<WorkerEmbedder> {
  const size = Math.max(1, Math.floor(options.workers ?? defaultEmbedWorkers()));
  const idleMs = options.idleMs ?? DEFAULT_EMBED_IDLE_MS;
  const isolation = options.isolation ?? 'process';
  // ONNX sessions share the cores: workers × intra-op threads stays within them (see docs/embeddings.md).
  if (spec.provider === 'onnx' && spec.intraOpThreads === undefined) spec = { ...spec, intraOpThreads: Math.max(1, Math.floor(availableParallelism() / size)) };
  const script = compiledScript(import.meta.url, './embed-worker.js', 'hub/src/embed/embed-worker.js', 'memory.embedder_missing');
  const pool: PoolWorker[] = [];
  let queue: Request[] = [];
  let nextId = 1;
  let nextWorker = 1;
  let scheduled = false;
  let closed: HubError | undefined;
  let info: EmbedderInfo | undefined;
  let started = 0;
  let released = 0;

  const reject = (request: Request, err: Error): void => {
    if (request.settled) return;
    request.settled = true;
    request.reject(err);
  };

  /** Requests with a slice in `slices` fail; they leave the queue (their other slices are dropped on return). */
  const failSlices = (slices: readonly Slice[], err: Error): void => {
    const failed = new Set(slices.map((s) => s.request));
    queue = queue.filter((r) => !failed.has(r));
    for (const request of failed) reject(request, err);
  };

  const remove = (w: PoolWorker): void => {
    const i = pool.indexOf(w);
    if (i >= 0) pool.splice(i, 1);
    if (w.idleTimer) clearTimeout(w.idleTimer);
    w.idleTimer = undefined;
  };

  const becomeIdle = (w: PoolWorker): void => {
    w.state = 'idle';
    w.worker.unref(); // an idle worker never keeps the process alive
    if (idleMs > 0) {
      w.idleTimer = setTimeout(() => {
        w.idleTimer = undefined;
        if (w.state !== 'idle') return;
        w.state = 'ending';
        remove(w);
        released++;
        void w.worker.terminate();
      }, idleMs);
      w.idleTimer.unref();
    }
  };

  /** The next batch by the scheduling rules above, taken off the queue. */
  const nextBatch = (): { kind: EmbedKind; slices: Slice[] } | undefined => {
    if (queue.length === 0) return undefined;
    const kind: EmbedKind = queue.some((r) => r.kind === 'query') ? 'query' : 'document';
    const ofKind = queue.filter((r) => r.kind === kind);
    const order = [...ofKind.filter((r) => r.sent === 0), ...ofKind.filter((r) => r.sent > 0)];
    const slices: Slice[] = [];
    const limit = batchLimit(
      ofKind.reduce((n, r) => n + r.texts.length - r.sent, 0),
      pool.filter((w) => w.state === 'idle' || w.state === 'busy').length,
    );
    let batch = 0;
    for (const request of order) {
      if (batch === limit) break;
      const count = Math.min(limit - batch, request.texts.length - request.sent);
      slices.push({ request, start: request.sent, count });
      request.sent += count;
      batch += count;
    }
    // Fully sent requests leave the queue; a started one goes to the back, taking turns with the others.
    const touched = new Set(slices.map((s) => s.request));
    queue = [...queue.filter((r) => !touched.has(r)), ...[...touched].filter((r) => r.sent < r.texts.length)];
    return { kind, slices };
  };

  const dispatch = (w: PoolWorker, batch: { kind: EmbedKind; slices: Slice[] }): void => {
    if (w.idleTimer) clearTimeout(w.idleTimer);
    w.idleTimer = undefined;
    const texts: string[] = [];
    for (const { request, start, count } of batch.slices) texts.push(...request.texts.slice(start, start + count));
    const id = nextId++;
    w.inflight = { id, slices: batch.slices };
    w.state = 'busy';
    w.worker.ref(); // pending work keeps the process alive until its answer arrives
    w.worker.send({ id, texts, kind: batch.kind });
    options.onBatch?.({ worker: w.n, kind: batch.kind, texts: texts.length });
  };

  /** Hands free workers their next batch, and starts another worker while work waits and none is free. */
  const pump = (): void => {
    if (closed) return;
    for (const w of pool) {
      if (w.state !== 'idle') continue;
      const batch = nextBatch();
      if (!batch) return;
      dispatch(w, batch);
    }
    const starting = pool.filter((w) => w.state === 'starting').length;
    if (queue.length > starting && pool.length < size) void spawn().catch(() => undefined);
  };

  const schedule = (): void => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      pump();
    });
  };

  const onResult = (w: PoolWorker, m: WorkerMessage): void => {
    if ((m.type !== 'result' && m.type !== 'error') || m.id !== w.inflight?.id) return;
    const { slices } = w.inflight;
    w.inflight = undefined;
    if (m.type === 'error') failSlices(slices, asError(m.message, m.code));
    else {
      if (m.memory) w.memoryBytes = m.memory;
      w.batches++;
      w.texts += m.vectors.length;
      let offset = 0;
      for (const { request, start, count } of slices) {
        for (let i = 0; i < count; i++) request.vectors[start + i] = m.vectors[offset + i] ?? new Float32Array(0);
        offset += count;
        request.received += count;
        if (request.received === request.texts.length && !request.settled) {
          request.settled = true;
          request.resolve(request.vectors);
        }
      }
    }
    if (w.state === 'ending') return;
    const batch = nextBatch();
    if (batch) dispatch(w, batch);
    else becomeIdle(w);
  };

  const onGone = (w: PoolWorker, err: HubError): void => {
    if (w.state === 'ending') return;
    w.state = 'ending';
    remove(w);
    if (w.inflight) failSlices(w.inflight.slices, err);
    w.inflight = undefined;
    schedule(); // another worker (or a new one) takes what still waits
  };

  /** Starts one worker; resolves once its model is loaded (it then takes work at once). */
  const spawn = (): Promise<PoolWorker> => {
    const worker = startEmbedWorker(script, spec, isolation);
    const w: PoolWorker = {
      n: nextWorker++,
      worker,
      state: 'starting',
      inflight: undefined,
      batches: 0,
      texts: 0,
      memoryBytes: 0,
      idleTimer: undefined,
      startedAt: Date.now(),
      ready: Promise.resolve(),
    };
    pool.push(w);
    started++;
    const ready = new Promise<PoolWorker>((resolve, rejectStart) => {
      const fail = (err: HubError): void => {
        if (w.state === 'ending') return;
        w.state = 'ending';
        remove(w);
        void worker.terminate();
        // Nothing else can serve what waits: it fails now rather than hang (a later call tries again).
        if (!pool.some((p) => p.state !== 'ending')) {
          const waiting = queue;
          queue = [];
          for (const request of waiting) reject(request, err);
        }
        rejectStart(err);
      };
      const onStartError = (err: Error): void => fail(asError(`embedding worker failed to start: ${err.message}`));
      const onStartExit = (code: number | null): void => fail(asError(`embedding worker exited while starting (code ${code})`));
      worker.events.once('error', onStartError);
      worker.events.once('exit', onStartExit);
      worker.events.once('message', (m: WorkerMessage) => {
        worker.events.off('error', onStartError);
        worker.events.off('exit', onStartExit);
        if (m.type === 'fatal') return fail(asError(m.message, m.code));
        if (m.type !== 'ready') return fail(asError('embedding worker sent no ready message'));
        const expected = options.expected;
        if (expected && (m.info.model !== expected.model || m.info.dimensions !== expected.dimensions)) {
          // Nothing this pool embeds could be stored beside the palace's vectors: every call fails from now on.
          closed ??= new HubError(
            'memory.embedder_mismatch',
            `this palace was built with ${expected.model} (${expected.dimensions}-d); the embedder loaded ${m.info.model} (${m.info.dimensions}-d). ` +
              `Run \`palace set-embedder --model ${m.info.model} --force\` and then \`palace repair --mode rebuild\` to re-embed every drawer`,
          );
          return fail(closed);
        }
        info ??= m.info;
        if (m.memory) w.memoryBytes = m.memory;
        worker.events.on('message', (msg: WorkerMessage) => onResult(w, msg));
        worker.events.on('error', (err: Error) => onGone(w, asError(`embedding worker crashed: ${err.message}`)));
        worker.events.on('exit', (code: number | null) => onGone(w, asError(`embedding worker exited (code ${code})`)));
        if (closed) {
          w.state = 'ending';
          remove(w);
          void worker.terminate();
        } else {
          w.state = 'idle';
          const batch = nextBatch();
          if (batch) dispatch(w, batch);
          else becomeIdle(w);
          pump();
        }
        resolve(w);
      });
    });
    w.ready = ready.catch(() => undefined);
    return ready;
  };

  let known: EmbedderInfo;
  if (options.expected && !options.warm) known = { ...options.expected, device: 'not started' };
  else {
    // The first worker starts now: it tells what the model is (its vector space), and a bad model fails here.
    const first = spawn();
    if (options.warm) for (let live = 1; live < size; live++) void spawn().catch(() => undefined);
    try {
      await first;
    } catch (err) {
      // Whatever else was started is ended (one still starting ends itself once ready: closed).
      closed = toHubError(err);
      await Promise.all(pool.map((w) => w.worker.terminate()));
      throw err;
    }
    if (!info) throw new HubError('memory.embed_failed', 'the embedding worker reported no model');
    known = info;
  }

  return {
    info: () => info ?? known,
    embed(texts, kind) {
      if (closed) return Promise.reject(closed);
      if (texts.length === 0) return Promise.resolve([]);
      return new Promise((resolve, rejectCall) => {
        queue.push({ texts, kind, sent: 0, vectors: Array.from({ length: texts.length }), received: 0, settled: false, resolve, reject: rejectCall });
        schedule();
      });
    },
    warm() {
      if (closed) return Promise.resolve();
      // Idempotent and bounded: only the workers the pool lacks are started (starting ones count).
      for (let live = pool.filter((w) => w.state !== 'ending').length; live < size; live++) void spawn().catch(() => undefined);
      return Promise.all(pool.map((w) => w.ready)).then(() => undefined);
    },
    workers(): EmbedWorkersStatus {
      return {
        size,
        idle_release_seconds: idleMs / 1000,
        started,
        released,
        queued_texts: queue.reduce((n, r) => n + r.texts.length - r.sent, 0),
        workers: pool
          .filter((w) => w.state !== 'ending')
          .map((w) => ({
            worker: w.n,
            ...(w.worker.pid === undefined ? {} : { pid: w.worker.pid }),
            state: w.state as 'starting' | 'idle' | 'busy',
            batches: w.batches,
            texts: w.texts,
            memory_mb: Math.round(w.memoryBytes / 1e5) / 10,
            uptime_seconds: Math.round((Date.now() - w.startedAt) / 1000),
          })),
      };
    },
    async close() {
      if (closed) return;
      const err = new HubError('memory.embed_failed', 'the embedder is closed');
      closed = err;
      const all = [...pool];
      for (const w of all) {
        w.state = 'ending';
        remove(w);
      }
      await Promise.all(all.map((w) => w.worker.terminate()));
      // Callers still waiting hear it once the threads are gone (as when a worker exits).
      const waiting = [...queue, ...all.flatMap((w) => w.inflight?.slices.map((s) => s.request) ?? [])];
      queue = [];
      for (const request of waiting) reject(request, err);
    },
  };
}

/** The pool's options from the configuration (PALACE_EMBED_WORKERS, PALACE_EMBED_IDLE_SECONDS). */
export function embedPoolOptions(config: Pick<PalaceConfig, 'embedWorkers' | 'embedIdleSeconds'>): WorkerEmbedderOptions {
  return { ...(config.embedWorkers === undefined ? {} : { workers: config.embedWorkers }), idleMs: config.embedIdleSeconds * 1000 };
}
