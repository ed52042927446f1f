// Owns fetching model files: downloadModel puts a known model into <home>/models/<name>/ and verifies it.
// Also the one import for callers (CLI set-embedder, selection): it re-exports the registry of model-files.ts.

import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';

import { HubError, invalid } from '../errors.js';
import type { KnownModel, ModelStatus } from './model-files.js';
import {
  HUGGING_FACE_URL,
  KNOWN_MODELS,
  fileUrl,
  folderStatus,
  knownModel,
  missingModelError,
  modelDir,
  nonEmptyFile,
} from './model-files.js';

export type { KnownModel, ModelFile, ModelStatus } from './model-files.js';
export {
  DEFAULT_MODEL,
  HUGGING_FACE_URL,
  KNOWN_MODELS,
  ONNX_PATHS,
  canonicalModelName,
  fileUrl,
  folderStatus,
  knownModel,
  missingModelError,
  modelDir,
  modelStatus,
  modelsDir,
  onnxSpecFor,
} from './model-files.js';

export interface DownloadProgress {
  model: string;
  /** Relative path of the file being fetched. */
  file: string;
  /** 1-based position of the file and the number of files. */
  fileIndex: number;
  fileCount: number;
  receivedBytes: number;
  /** From Content-Length; undefined when the server does not say. */
  totalBytes: number | undefined;
  /** 'downloading' per chunk, then 'done' | 'skipped' (already present) | 'absent' (optional, not on the server). */
  state: 'downloading' | 'done' | 'skipped' | 'absent';
}

export interface DownloadOptions {
  /** The fetch to use (injected; tests pass a local server's base URL instead of touching the network). */
  fetch?: typeof fetch;
  onProgress?: (progress: DownloadProgress) => void;
  /** Default https://huggingface.co; files come from <baseUrl>/<repo>/resolve/main/<path>. */
  baseUrl?: string;
  /** Fetch files again even when present. */
  force?: boolean;
  /** Abort when no response or no data arrives for this long (default 30 s). */
  timeoutMs?: number;
  /** Load the model in onnxruntime and embed one text after downloading (default true). */
  verify?: boolean;
  signal?: AbortSignal;
}

export interface DownloadResult {
  model: string;
  dir: string;
  downloaded: string[];
  skipped: string[];
  /** Optional files the repository does not have (HTTP 404). */
  absent: string[];
  /** Vector size measured by the verification run (the registry's figure when verify is false). */
  dimensions: number;
}

/**
 * Fetches a known model into <home>/models/<name>/ (each file to a temp name, then renamed), then
 * verifies it: every file non-empty, JSON files parse, the ONNX loads and embeds to the expected size.
 * Offline, fails with memory.embedder_missing listing exactly which files to place where.
 */
export async function downloadModel(
  home: string,
  name: string,
  options: DownloadOptions = {},
): Promise<DownloadResult> {
  const known = knownModel(name);
  if (!known) {
    throw invalid(
      'model',
      `"${name}" is not a model palace can download (known: ${KNOWN_MODELS.map((m) => m.name).join(', ')}); ` +
        `place another sentence-transformers ONNX export in ${modelDir(home, name)} by hand`,
    );
  }
  const dir = modelDir(home, known.name);
  const baseUrl = options.baseUrl ?? HUGGING_FACE_URL;
  const doFetch = options.fetch ?? fetch;
  const result: DownloadResult = {
    model: known.name,
    dir,
    downloaded: [],
    skipped: [],
    absent: [],
    dimensions: known.dimensions,
  };
  await mkdir(dir, { recursive: true });

  for (const [i, file] of known.files.entries()) {
    const base = { model: known.name, file: file.path, fileIndex: i + 1, fileCount: known.files.length };
    const dest = join(dir, file.path);
    const alreadyThere =
      file.path === 'onnx/model.onnx'
        ? folderStatus(dir, known.name).onnxFile !== undefined
        : nonEmptyFile(dest);
    if (alreadyThere && !options.force) {
      result.skipped.push(file.path);
      options.onProgress?.({ ...base, receivedBytes: 0, totalBytes: undefined, state: 'skipped' });
      continue;
    }
    const url = fileUrl(known.repo, file.path, baseUrl);
    const fetched = await fetchToFile(doFetch, url, dest, options, (receivedBytes, totalBytes) =>
      options.onProgress?.({ ...base, receivedBytes, totalBytes, state: 'downloading' }),
    ).catch((err: unknown) => {
      const reason = `could not download ${known.name} from ${baseUrl}: ${url} ${describeFailure(err)}`;
      throw missingModelError(folderStatus(dir, known.name), reason, { baseUrl, cause: err });
    });
    if (fetched === 'absent') {
      if (file.required) {
        throw missingModelError(
          folderStatus(dir, known.name),
          `could not download ${known.name}: ${url} answered 404`,
          { baseUrl },
        );
      }
      result.absent.push(file.path);
      options.onProgress?.({ ...base, receivedBytes: 0, totalBytes: undefined, state: 'absent' });
      continue;
    }
    result.downloaded.push(file.path);
    options.onProgress?.({ ...base, receivedBytes: fetched, totalBytes: fetched, state: 'done' });
  }

  if (options.verify !== false) result.dimensions = await verifyModel(dir, known);
  return result;
}

function describeFailure(err: unknown): string {
  if (err instanceof HubError) return err.message;
  const cause = (err as { cause?: { code?: unknown; message?: unknown } } | null)?.cause;
  const detail =
    typeof cause?.code === 'string'
      ? cause.code
      : typeof cause?.message === 'string'
        ? cause.message
        : undefined;
  const message = err instanceof Error ? err.message : String(err);
  return `is unreachable (${detail ? `${message}: ${detail}` : message})`;
}

/** Streams one URL into `dest` via a temp file; returns the byte count, or 'absent' on 404. */
async function fetchToFile(
  doFetch: typeof fetch,
  url: string,
  dest: string,
  options: DownloadOptions,
  onChunk: (received: number, total: number | undefined) => void,
): Promise<number | 'absent'> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const controller = new AbortController();
  const signal = options.signal ? AbortSignal.any([controller.signal, options.signal]) : controller.signal;
  let timer = setTimeout(() => controller.abort(new Error(`no data for ${timeoutMs} ms`)), timeoutMs);
  const touch = () => {
    clearTimeout(timer);
    timer = setTimeout(() => controller.abort(new Error(`no data for ${timeoutMs} ms`)), timeoutMs);
  };
  const temp = `${dest}.partial-${randomBytes(4).toString('hex')}`;
  try {
    const response = await doFetch(url, { signal, redirect: 'follow' });
    touch();
    if (response.status === 404) {
      await response.body?.cancel();
      return 'absent';
    }
    if (!response.ok || !response.body) {
      await response.body?.cancel();
      throw new HubError(
        'memory.embedder_missing',
        `answered HTTP ${response.status} ${response.statusText}`.trim(),
      );
    }
    const lengthHeader = response.headers.get('content-length');
    const total = lengthHeader !== null && /^\d+$/.test(lengthHeader) ? Number(lengthHeader) : undefined;
    await mkdir(dirname(dest), { recursive: true });
    const handle = await open(temp, 'w');
    let received = 0;
    try {
      for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
        touch();
        await handle.write(chunk);
        received += chunk.byteLength;
        onChunk(received, total);
      }
      await handle.sync();
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      throw new HubError('memory.embedder_missing', `broke off after ${received} bytes (${why})`, {
        cause: err,
      });
    } finally {
      await handle.close();
    }
    if (received === 0) throw new HubError('memory.embedder_missing', 'sent an empty file');
    if (total !== undefined && received !== total) {
      throw new HubError('memory.embedder_missing', `stopped after ${received} of ${total} bytes`);
    }
    if (dest.endsWith('.json')) {
      try {
        JSON.parse(readFileSync(temp, 'utf8'));
      } catch {
        throw new HubError('memory.embedder_missing', 'sent a file that is not valid JSON');
      }
    }
    await rename(temp, dest);
    return received;
  } finally {
    clearTimeout(timer);
    await rm(temp, { force: true });
  }
}

/** Loads the model in onnxruntime (CPU) and embeds one text; returns its dimensions. */
async function verifyModel(dir: string, known: KnownModel): Promise<number> {
  const { createOnnxEmbedder } = await import('./onnx-embedder.js');
  try {
    const embedder = await createOnnxEmbedder({
      provider: 'onnx',
      model: known.name,
      modelDir: dir,
      device: 'cpu',
    });
    try {
      const [vector] = await embedder.embed(['palace model check'], 'document');
      const dimensions = vector?.length ?? 0;
      if (dimensions !== known.dimensions) {
        throw new Error(`it produced ${dimensions}-d vectors, expected ${known.dimensions}`);
      }
      return dimensions;
    } finally {
      await embedder.close();
    }
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new HubError(
      'memory.embedder_missing',
      `the files of ${known.name} in ${dir} do not load as a working model: ${why}. ` +
        `Remove that folder and run \`palace set-embedder --model ${known.name}\` again, or replace the files by hand.`,
      { cause: err, data: { model: known.name, dir } },
    );
  }
}

/** Size on disk of a model folder's files that are present (for status output). */
export async function modelBytes(status: ModelStatus): Promise<number> {
  let total = 0;
  for (const file of status.present) total += (await stat(join(status.dir, file))).size;
  return total;
}
