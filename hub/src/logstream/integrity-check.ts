// SQLite's quick_check of logstream.sqlite3 on a worker thread with its own read-only connection:
// on a big log the check takes seconds, and /statusz must not stop the hub's event loop for it.

import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

import type { LogFile } from './event-store.js';

/**
 * The nice value of a background reader's thread (the check here, the lease sweeper's start): the
 * lowest priority, so the hub's event loop gets the core first. Set on Linux only, where the nice
 * value is per thread; on macOS and Windows the same call would lower the whole hub's priority.
 */
export const BACKGROUND_NICE = 19;

// Plain CommonJS run by the worker: lower its own thread's priority (the check is background work:
// on a 2-core machine it competed with the event loop for a core while a year-old palace opened;
// docs/evidence.md, "scale: /healthz"), open read-only, check, post the verdict.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
// Linux only: elsewhere (macOS, Windows) the call sets the whole process's priority, the hub's too.
if (process.platform === 'linux') try { require('node:os').setPriority(workerData.nice); } catch {}
const Database = require(workerData.driver);
let db;
try {
  db = new Database(workerData.path, { readonly: true, fileMustExist: true, timeout: 10000 });
  const rows = db.pragma('quick_check');
  parentPort.postMessage({ verdict: rows.map((r) => r.quick_check).join('; ') });
} catch (err) {
  parentPort.postMessage({ error: String(err && err.message || err) });
} finally {
  if (db) db.close();
}
`;

/** What /statusz says of the log's integrity before the first check has given its verdict. */
export const INTEGRITY_CHECKING = 'checking';

/** The verdict of a check the hub's closing cut short (or never let start). */
export const INTEGRITY_CUT_SHORT = 'the integrity check was cut short';

/**
 * 'ok' or the problems SQLite found; the check runs off the main thread (in-line for `:memory:`). An
 * abort (the hub closing) ends the worker and answers that the check was cut short.
 */
export function quickCheckOffThread(store: Pick<LogFile, 'path' | 'integrityCheck'>, signal?: AbortSignal): Promise<string> {
  if (store.path === ':memory:') return Promise.resolve(store.integrityCheck());
  if (signal?.aborted) return Promise.resolve(INTEGRITY_CUT_SHORT);
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  return new Promise((resolve) => {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { path: store.path, driver, nice: BACKGROUND_NICE } });
    let settled = false;
    const cut = (): void => done(INTEGRITY_CUT_SHORT);
    const done = (verdict: string): void => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', cut);
      void worker.terminate();
      resolve(verdict);
    };
    signal?.addEventListener('abort', cut, { once: true });
    worker.once('message', (m: { verdict?: string; error?: string }) => done(m.verdict ?? `the integrity check failed: ${m.error ?? 'no verdict'}`));
    worker.once('error', (err) => done(`the integrity check failed: ${err.message}`));
    worker.once('exit', (code) => done(`the integrity check stopped (exit ${code})`));
  });
}
