// The Embedder interface: text in, unit-length vectors out, in our own terms. Providers:
// bundled (USE-lite, pure JS), onnx (sentence-transformers exports), openai-compat (HTTP).

/** Queries and documents may be embedded differently (e.g. bge's query prefix). */
export type EmbedKind = 'query' | 'document';

export interface EmbedderInfo {
  /** Provider: bundled, onnx or openai-compat. */
  provider: string;
  /** Model name recorded with the palace, e.g. `all-MiniLM-L6-v2` or `use-lite-en`. */
  model: string;
  dimensions: number;
  /** The execution provider actually in use (CPU, CUDA, ...), not the one asked for. */
  device: string;
}

export interface Embedder {
  /** What this embedder is; `model` + `dimensions` identify the vector space. */
  info(): EmbedderInfo;
  /** Embeds texts in order; every vector is L2-normalised and has `dimensions` entries. */
  embed(texts: readonly string[], kind: EmbedKind): Promise<Float32Array[]>;
  /** Releases model memory and threads. */
  close(): Promise<void>;
  /** Its workers, when it has any. */
  workers?(): EmbedWorkersStatus;
  /**
   * Starts the workers it lacks, up to its pool size, so work about to come finds their models
   * loaded; settles once they are (a failed start is not an error here: the next embed() reports it).
   */
  warm?(): Promise<void>;
}

/** L2-normalises a vector in place and returns it. */
export function normalize(vector: Float32Array): Float32Array {
  let sum = 0;
  for (const x of vector) sum += x * x;
  const norm = Math.sqrt(sum);
  if (norm > 0) for (let i = 0; i < vector.length; i++) vector[i] = (vector[i] ?? 0) / norm;
  return vector;
}

/** Identity of a vector space: two embedders are interchangeable only if these match. */
export function embedderKey(info: Pick<EmbedderInfo, 'model' | 'dimensions'>): string {
  return `${info.model}/${info.dimensions}`;
}

/** How an embedder's workers are doing (palace status and the dashboard show it). */
export interface EmbedWorkersStatus {
  /** Most workers at once (PALACE_EMBED_WORKERS). */
  size: number;
  /** An idle worker is ended after this long (PALACE_EMBED_IDLE_SECONDS; 0 = never). */
  idle_release_seconds: number;
  /** Workers started and ended for idleness since the embedder was opened. */
  started: number;
  released: number;
  /** Texts waiting for a free worker. */
  queued_texts: number;
  workers: Array<{
    worker: number;
    /** A worker process's pid. */
    pid?: number;
    state: 'starting' | 'idle' | 'busy';
    batches: number;
    texts: number;
    /** The worker's own memory: a worker process's RSS (a worker thread's V8 heap plus external buffers). */
    memory_mb: number;
    uptime_seconds: number;
  }>;
}
