// SQLite's quick_check of logstream.sqlite3 on a worker thread with its own read-only connection:
// on a big log the check takes seconds, and /statusz must not stop the hub's event loop for it.

import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { freemem } from 'node:os';
import { Worker } from 'node:worker_threads';

import type { LogFile } from './event-store.js';

/**
 * The nice value of a background reader's thread (the check here, the lease sweeper's start): the
 * lowest priority, so the hub's event loop gets the core first. Set on Linux only, where the nice
 * value is per thread; on macOS and Windows the same call would lower the whole hub's priority.
 */
export const BACKGROUND_NICE = 19;

/** The log is read ahead in chunks of this size (the page cache then serves quick_check's reads). */
const READ_AHEAD_CHUNK = 4 * 1024 * 1024;
/**
 * Read-ahead rate at most, bytes per ms (64 MB/s: a 1.1 GB log in ~17 s): the rest of the disk's
 * bandwidth stays with the hub's own reads (a memory open, a cold page of the log).
 */
const READ_AHEAD_BYTES_PER_MS = 64 * 1024;

// Plain CommonJS run by the worker: lower its own thread's priority (the check is background work:
// on a 2-core machine it competed with the event loop for a core while a year-old palace opened;
// docs/evidence.md, "scale: /healthz"); read the log ahead into the page cache at a bounded rate,
// pausing while the hub says it is busy (a shared flag: 1 = hold); open read-only, check, post the
// verdict. Without the read-ahead quick_check reads the whole log from disk as fast as it can
// ("scale: a cold page cache").
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
// Linux only: elsewhere (macOS, Windows) the call sets the whole process's priority, the hub's too.
if (process.platform === 'linux') try { require('node:os').setPriority(workerData.nice); } catch {}
const Database = require(workerData.driver);
const sleeper = new Int32Array(new SharedArrayBuffer(4));
const sleep = (ms) => { if (ms > 0) Atomics.wait(sleeper, 0, 0, ms); };
function readAhead({ path, hold, chunk, bytesPerMs, maxHoldMs }) {
  const flag = hold ? new Int32Array(hold) : undefined;
  const fd = fs.openSync(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(chunk);
    for (let pos = 0; ; ) {
      // A hub that is never idle still gets its check: each chunk waits maxHoldMs at most.
      const until = Date.now() + maxHoldMs;
      while (flag && Atomics.load(flag, 0) === 1 && Date.now() < until) Atomics.wait(flag, 0, 1, Math.min(100, until - Date.now()));
      const started = Date.now();
      const n = fs.readSync(fd, buf, 0, chunk, pos);
      if (n <= 0) break;
      pos += n;
      sleep(n / bytesPerMs - (Date.now() - started));
    }
  } finally {
    fs.closeSync(fd);
  }
}
let db;
try {
  if (workerData.readAhead) readAhead(workerData.readAhead);
  db = new Database(workerData.path, { readonly: true, fileMustExist: true, timeout: 10000 });
  const rows = db.pragma('quick_check');
  parentPort.postMessage({ verdict: rows.map((r) => r.quick_check).join('; ') });
} catch (err) {
  parentPort.postMessage({ error: String(err && err.message || err) });
} finally {
  if (db) db.close();
}
`;

export interface QuickCheckOptions {
  /**
   * Whether the hub's foreground is busy now (asked every 50 ms while the log is read ahead): the
   * read-ahead pauses while it is (maxHoldMs per chunk at most). Without it the read-ahead never pauses.
   */
  busy?: () => boolean;
  /** How long each chunk of the read-ahead waits for the foreground at most (default 1 s: 4 MB/s at least). */
  maxHoldMs?: number;
}

/** What /statusz says of the log's integrity before the first check has given its verdict. */
export const INTEGRITY_CHECKING = 'checking';

/** The verdict of a check the hub's closing cut short (or never let start). */
export const INTEGRITY_CUT_SHORT = 'the integrity check was cut short';

/**
 * 'ok' or the problems SQLite found; the check runs off the main thread (in-line for `:memory:`). An
 * abort (the hub closing) ends the worker and answers that the check was cut short.
 */
export function quickCheckOffThread(store: Pick<LogFile, 'path' | 'integrityCheck'>, signal?: AbortSignal, options: QuickCheckOptions = {}): Promise<string> {
  if (store.path === ':memory:') return Promise.resolve(store.integrityCheck());
  if (signal?.aborted) return Promise.resolve(INTEGRITY_CUT_SHORT);
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const hold = options.busy ? new Int32Array(new SharedArrayBuffer(4)) : undefined;
  if (hold && options.busy?.()) hold[0] = 1;
  // Read ahead only a log the page cache can keep (else quick_check would read it from disk again).
  let size = 0;
  try {
    size = statSync(store.path).size;
  } catch {
    // the check reports a missing file itself
  }
  const readAhead = size > 0 && size <= freemem() / 2 ? { path: store.path, hold: hold?.buffer, chunk: READ_AHEAD_CHUNK, bytesPerMs: READ_AHEAD_BYTES_PER_MS, maxHoldMs: options.maxHoldMs ?? 1_000 } : undefined;
  return new Promise((resolve) => {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { path: store.path, driver, nice: BACKGROUND_NICE, readAhead } });
    let settled = false;
    const watch =
      hold && options.busy && readAhead
        ? setInterval(() => {
            const busy = options.busy?.() === true ? 1 : 0;
            if (Atomics.exchange(hold, 0, busy) !== busy && busy === 0) Atomics.notify(hold, 0);
          }, 50)
        : undefined;
    watch?.unref();
    const cut = (): void => done(INTEGRITY_CUT_SHORT);
    const done = (verdict: string): void => {
      if (settled) return;
      settled = true;
      clearInterval(watch);
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
