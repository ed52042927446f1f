// Small measuring helpers for the benchmarks: percentiles, a wall clock comparable across
// processes, and a seeded random source. No I/O.

import { setTimeout as sleepMs } from 'node:timers/promises';

/** Nearest-rank percentile (p in 0..100) of samples; NaN for no samples. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] ?? Number.NaN;
}

/** Milliseconds since the epoch with sub-millisecond resolution; comparable between processes. */
export function wallMs(): number {
  return performance.timeOrigin + performance.now();
}

/** Runs `fn` once per item, timing each call; returns the durations in ms. */
export function timeEach<T>(items: readonly T[], fn: (item: T) => unknown): number[] {
  const out: number[] = [];
  for (const item of items) {
    const t0 = performance.now();
    fn(item);
    out.push(performance.now() - t0);
  }
  return out;
}

/** Items per second for `count` items done in `ms` milliseconds. */
export function perSecond(count: number, ms: number): number {
  return (count * 1000) / ms;
}

export function sleep(ms: number): Promise<void> {
  return sleepMs(ms);
}

/** A deterministic PRNG (mulberry32) returning floats in [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function pick<T>(random: () => number, items: readonly T[]): T {
  const item = items[Math.floor(random() * items.length)];
  if (item === undefined) throw new Error('pick from an empty list');
  return item;
}
