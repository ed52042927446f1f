// Worker-thread entry of the lease sweeper's start (lease-seed.ts): reads the claimed tasks' leases
// from the task projection on its own read-only connection, a page per message, so the cold pages of
// a year-old log are read off the hub's event loop, at the lowest priority. Messages: {rows}, then
// {done, nice} or {error}; after each page it waits for the hub's message to read the next.

import Database from 'better-sqlite3';
import { getPriority, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';

import { TaskTableReads } from './task-table-reads.js';

const port = parentPort;
if (!port) throw new Error('lease-seed-worker runs as a worker thread');
const { path, pageSize, nice } = workerData as { path: string; pageSize: number; nice: number };
// Linux only, where it is this thread's alone (BACKGROUND_NICE): elsewhere it would be the whole hub's.
if (process.platform === 'linux') {
  try {
    setPriority(nice); // background work: the event loop's core comes first
  } catch {
    // not permitted here: the read still runs, at the normal priority
  }
}

/** The hub's go-ahead for the next page (it holds it while its foreground work runs). */
const next = (): Promise<void> => new Promise((resolve) => port.once('message', () => resolve()));

let db: Database.Database | undefined;
try {
  db = new Database(path, { readonly: true, fileMustExist: true, timeout: 10_000 });
  const reads = new TaskTableReads(db);
  for (let after = 0; ; ) {
    const rows = reads.claimedLeases(after, pageSize);
    if (rows.length > 0) port.postMessage({ rows });
    const last = rows.at(-1);
    if (rows.length < pageSize || last === undefined) break;
    after = last.first_seq;
    // A read transaction is not held across the wait: each page is its own snapshot (the sweeper
    // re-reads from the projection any task an event touched while it seeds).
    await next();
  }
  port.postMessage({ done: true, nice: getPriority() });
} catch (err) {
  port.postMessage({ error: (err as Error).message });
} finally {
  db?.close();
}
