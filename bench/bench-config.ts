// The benchmarks' own settings, read from the environment once here (never the hub's config):
// sizes that can be shrunk to smoke-test a suite quickly on a shared machine.

/** Files in the `mine` suite's generated corpus: PALACE_BENCH_MINE_FILES, default 2,000. */
export const DEFAULT_MINE_FILES = 2000;

export interface BenchConfig {
  mineFiles: number;
  /** PALACE_BENCH_RETRIEVAL_FRESH=1: the retrieval suite re-mines its sets instead of reusing cached palaces. */
  retrievalFresh: boolean;
}

export function benchConfig(env: NodeJS.ProcessEnv = process.env): BenchConfig {
  const raw = env.PALACE_BENCH_MINE_FILES?.trim();
  const mineFiles = raw ? Number(raw) : DEFAULT_MINE_FILES;
  if (!Number.isInteger(mineFiles) || mineFiles < 1) throw new Error(`PALACE_BENCH_MINE_FILES must be a whole number ≥ 1, not '${raw}'`);
  return { mineFiles, retrievalFresh: env.PALACE_BENCH_RETRIEVAL_FRESH?.trim() === '1' };
}
