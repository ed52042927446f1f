// SQLite's quick_check of logstream.sqlite3 on a worker thread with its own read-only connection:
// on a big log the check takes seconds, and /statusz must not stop the hub's event loop for it.

import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

import type { SqliteEventStore } from './sqlite-event-store.js';

// Plain CommonJS run by the worker: open read-only, check, post the verdict.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
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

/** 'ok' or the problems SQLite found; the check runs off the main thread (in-line for `:memory:`). */
export function quickCheckOffThread(store: SqliteEventStore): Promise<string> {
  if (store.path === ':memory:') return Promise.resolve(store.integrityCheck());
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  return new Promise((resolve) => {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { path: store.path, driver } });
    let settled = false;
    const done = (verdict: string): void => {
      if (settled) return;
      settled = true;
      void worker.terminate();
      resolve(verdict);
    };
    worker.once('message', (m: { verdict?: string; error?: string }) => done(m.verdict ?? `the integrity check failed: ${m.error ?? 'no verdict'}`));
    worker.once('error', (err) => done(`the integrity check failed: ${err.message}`));
    worker.once('exit', (code) => done(`the integrity check stopped (exit ${code})`));
  });
}
