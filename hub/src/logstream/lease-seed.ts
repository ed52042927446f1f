// The lease sweeper's start on a file-backed log: the claimed tasks' leases read on a worker thread
// (lease-seed-worker.ts) with its own read-only connection. On a year-old palace whose pages are not
// in the page cache, the same reads on the hub's connection held the event loop 170-1,460 ms a pass
// of 250 tasks (docs/evidence.md, "scale: /healthz"): SQLite's reads block the thread that runs them.

import { Worker } from 'node:worker_threads';

import { compiledScript } from '../compiled-script.js';
import { BACKGROUND_NICE } from './integrity-check.js';

export interface ClaimedLease {
  correlation_id: string;
  first_seq: number;
  lease_expires_at: string | null;
  origin_replica: string | null;
}

/**
 * Claimed tasks per page of the worker: the hub holds the next page while a memory open runs, so a
 * page is how long the seed keeps reading once one starts. From a cold disk a page of 1,000 (a few
 * random reads each: the task row, the claim event) took ~3 s on the scale palace; 100 take a few
 * hundred ms, and a few µs each to take in.
 */
export const SEED_PAGE = 100;

/** How a read off the main thread ended: the nice value its thread ran at (undefined when aborted). */
export interface OffThreadRead {
  nice?: number;
}

/**
 * Reads every claimed task's lease at `path` off the main thread (a worker at the lowest priority),
 * handing each page to `onPage` as it comes; resolves when all are read, rejects on a read error. An
 * abort ends the worker (resolves). `beforePage`: the worker starts, and reads each page, only once
 * the promise it returns has settled (the hub's foreground work first: background-gate.ts).
 */
export function readClaimedLeasesOffThread(
  path: string,
  onPage: (rows: ClaimedLease[]) => void,
  signal?: AbortSignal,
  beforePage: () => PromiseLike<unknown> = () => Promise.resolve(),
): Promise<OffThreadRead> {
  return new Promise((resolve, reject) => {
    let worker: Worker | undefined;
    let settled = false;
    const finish = (err?: Error, read: OffThreadRead = {}): void => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', abort);
      void worker?.terminate();
      if (err) reject(err);
      else resolve(read);
    };
    const abort = (): void => finish();
    if (signal?.aborted) return finish();
    signal?.addEventListener('abort', abort, { once: true });
    /** Runs `then` once `beforePage` has settled, unless the read ended meanwhile. */
    const whenClear = (then: () => void): void => {
      const go = (): void => {
        if (settled) return;
        try {
          then();
        } catch (err) {
          finish(err as Error);
        }
      };
      void Promise.resolve(beforePage()).then(go, go);
    };
    whenClear(() => {
      // Throws (so rejects) when the worker's script is not built.
      const script = compiledScript(import.meta.url, './lease-seed-worker.js', 'hub/src/logstream/lease-seed-worker.js', 'store.failed');
      // execArgv: [] so the parent's flags (a profiler, an inspector) never reach the worker.
      const w = (worker = new Worker(script, { workerData: { path, pageSize: SEED_PAGE, nice: BACKGROUND_NICE }, execArgv: [] }));
      w.unref(); // never what keeps a closing hub alive
      w.on('message', (m: { rows?: ClaimedLease[]; done?: true; nice?: number; error?: string }) => {
        if (settled) return;
        if (m.rows) {
          try {
            onPage(m.rows);
          } catch (err) {
            finish(err as Error);
            return;
          }
          // The worker waits for this before it reads the next page.
          whenClear(() => w.postMessage('next'));
        } else if (m.done) finish(undefined, m.nice === undefined ? {} : { nice: m.nice });
        else finish(new Error(`the lease read failed: ${m.error ?? 'no reason given'}`));
      });
      w.once('error', (err) => finish(err));
      w.once('exit', (code) => finish(new Error(`the lease read stopped (exit ${code})`)));
    });
  });
}
