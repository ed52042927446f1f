// Creates an onnxruntime session on the requested device. onnxruntime-node throws (rather than falling
// back) when a GPU provider is missing, so each GPU provider is tried alone, then CPU; one log line says so.

import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

import * as ort from 'onnxruntime-node';

import type { EmbeddingDevice } from '../config.js';
import { HubError } from '../errors.js';
import type { Logger } from '../log.js';

export const EMBEDDING_DEVICES: readonly EmbeddingDevice[] = ['cpu', 'cuda', 'dml', 'coreml', 'auto'];

export interface DeviceSession {
  session: ort.InferenceSession;
  /** The execution provider actually in use: cpu, cuda, dml or coreml. */
  device: string;
}

/** GPU providers to try, in order, before CPU. `auto` follows CUDA ▸ CoreML ▸ DirectML where each can exist. */
export function gpuCandidates(
  device: EmbeddingDevice,
  platform: NodeJS.Platform = process.platform,
): string[] {
  if (device === 'cpu') return [];
  if (device !== 'auto') return [device];
  if (platform === 'darwin') return ['coreml'];
  if (platform === 'win32') return ['cuda', 'dml'];
  return ['cuda'];
}

export function parseDevice(device: string): EmbeddingDevice {
  const wanted = device.trim().toLowerCase();
  const found = EMBEDDING_DEVICES.find((d) => d === wanted);
  if (!found) {
    throw new HubError(
      'hub.config',
      `unknown embedding device "${device}": use ${EMBEDDING_DEVICES.join(', ')}`,
      {
        field: 'device',
      },
    );
  }
  return found;
}

/** Where onnxruntime-node keeps its native libraries for this platform (undefined if the layout differs). */
function bindingDir(): string | undefined {
  try {
    const main = createRequire(import.meta.url).resolve('onnxruntime-node');
    const dir = join(dirname(main), '..', 'bin', 'napi-v6', process.platform, process.arch);
    return existsSync(dir) ? dir : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Under `auto`, whether this onnxruntime-node build can have `provider`: it must be listed, and an
 * unbundled one (CUDA, opted into at install time) needs its provider library beside the binding.
 * Skipping the impossible ones keeps onnxruntime's own error line off stderr on every CPU-only start.
 */
function mayHaveProvider(provider: string): boolean {
  const backend = ort.listSupportedBackends().find((b) => b.name === provider);
  if (!backend) return false;
  if (backend.bundled) return true;
  const dir = bindingDir();
  if (dir === undefined) return true;
  const file =
    process.platform === 'win32'
      ? `onnxruntime_providers_${provider}.dll`
      : `libonnxruntime_providers_${provider}.${process.platform === 'darwin' ? 'dylib' : 'so'}`;
  return existsSync(join(dir, file));
}

/** intraOpThreads: onnxruntime's threads per session (undefined = its default, one per core). */
function baseOptions(intraOpThreads?: number): ort.InferenceSession.SessionOptions {
  return { graphOptimizationLevel: 'all', ...(intraOpThreads ? { intraOpNumThreads: intraOpThreads } : {}) };
}

/**
 * Opens `onnxPath` on `device`. A GPU provider that cannot start is logged once (warn when asked for
 * explicitly, info under auto) and the session is created on CPU; `device` in the result says which.
 */
export async function createDeviceSession(
  onnxPath: string,
  requested: string,
  logger: Logger,
  platform: NodeJS.Platform = process.platform,
  intraOpThreads?: number,
): Promise<DeviceSession> {
  const device = parseDevice(requested);
  const failures: string[] = [];
  for (const provider of gpuCandidates(device, platform)) {
    if (device === 'auto' && !mayHaveProvider(provider)) {
      failures.push(`${provider}: not installed with onnxruntime-node`);
      continue;
    }
    try {
      const session = await ort.InferenceSession.create(onnxPath, {
        ...baseOptions(intraOpThreads),
        executionProviders: [provider],
        // Quiet onnxruntime's own stderr line for a missing provider: we log our own, once.
        logSeverityLevel: 4,
      });
      return { session, device: provider };
    } catch (err) {
      failures.push(`${provider}: ${firstLine(err)}`);
    }
  }
  let session: ort.InferenceSession;
  try {
    session = await ort.InferenceSession.create(onnxPath, { ...baseOptions(intraOpThreads), executionProviders: ['cpu'] });
  } catch (err) {
    throw new HubError(
      'memory.embedder_missing',
      `onnxruntime cannot load ${onnxPath}: ${firstLine(err)}; replace the file`,
      {
        cause: err,
      },
    );
  }
  if (failures.length > 0) {
    const fields = { requested: device, tried: failures };
    if (device === 'auto') logger.info('no GPU execution provider available; embedding on cpu', fields);
    else logger.warn(`embedding device ${device} is unavailable; falling back to cpu`, fields);
  }
  return { session, device: 'cpu' };
}

function firstLine(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return (message.split('\n')[0] ?? message).slice(0, 300);
}
