// The benchmarks' own settings, read from the environment once here (never the hub's config):
// sizes that can be shrunk to smoke-test a suite quickly on a shared machine.

import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Files in the `mine` suite's generated corpus: PALACE_BENCH_MINE_FILES, default 2,000. */
export const DEFAULT_MINE_FILES = 2000;

export interface BenchConfig {
  mineFiles: number;
  /** PALACE_BENCH_MINE_PART=small: the `mine` suite runs only its 120-file fresh-pool part (a smoke run, not recorded). */
  mineSmallOnly: boolean;
  /** PALACE_BENCH_RETRIEVAL_FRESH=1: the retrieval suite re-mines its sets instead of reusing cached palaces. */
  retrievalFresh: boolean;
  /** Size factor of the `scale` suite's palace (PALACE_BENCH_SCALE, default 1 = 1M events, 200k drawers). */
  scale: number;
  /** Where built palaces are cached between runs (PALACE_BENCH_CACHE, default <tmp>/palace-bench-cache). */
  cacheDir: string;
  /** PALACE_BENCH_SCREENSHOTS=<dir>: the `scale` suite saves the dashboard it painted (Tasks, Status) there. */
  screenshots: string | undefined;
  /** PALACE_BENCH_MEMORY_PART=ingest: the `memory` suite runs only its live-hub ingest part (a smoke run, not recorded). */
  memoryIngestOnly: boolean;
  /** Events written per round of the `sync` suite (PALACE_BENCH_SYNC_EVENTS, default 10,000); fewer is a smoke run. */
  syncEvents: number;
}

export function benchConfig(env: NodeJS.ProcessEnv = process.env): BenchConfig {
  const raw = env.PALACE_BENCH_MINE_FILES?.trim();
  const mineFiles = raw ? Number(raw) : DEFAULT_MINE_FILES;
  if (!Number.isInteger(mineFiles) || mineFiles < 1) throw new Error(`PALACE_BENCH_MINE_FILES must be a whole number ≥ 1, not '${raw}'`);
  const rawScale = env.PALACE_BENCH_SCALE?.trim();
  const scale = rawScale ? Number(rawScale) : 1;
  if (!Number.isFinite(scale) || scale <= 0 || scale > 1) throw new Error(`PALACE_BENCH_SCALE must be a number in (0, 1], not '${rawScale}'`);
  const cacheDir = env.PALACE_BENCH_CACHE?.trim() || join(tmpdir(), 'palace-bench-cache');
  const screenshots = env.PALACE_BENCH_SCREENSHOTS?.trim() || undefined;
  const rawSync = env.PALACE_BENCH_SYNC_EVENTS?.trim();
  const syncEvents = rawSync ? Number(rawSync) : 10_000;
  if (!Number.isInteger(syncEvents) || syncEvents < 3) throw new Error(`PALACE_BENCH_SYNC_EVENTS must be a whole number ≥ 3, not '${rawSync}'`);
  const part = env.PALACE_BENCH_MINE_PART?.trim();
  if (part && part !== 'small') throw new Error(`PALACE_BENCH_MINE_PART must be 'small' (or unset), not '${part}'`);
  const memoryPart = env.PALACE_BENCH_MEMORY_PART?.trim();
  if (memoryPart && memoryPart !== 'ingest') throw new Error(`PALACE_BENCH_MEMORY_PART must be 'ingest' (or unset), not '${memoryPart}'`);
  return { mineFiles, mineSmallOnly: part === 'small', memoryIngestOnly: memoryPart === 'ingest', retrievalFresh: env.PALACE_BENCH_RETRIEVAL_FRESH?.trim() === '1', scale, cacheDir, screenshots, syncEvents };
}
