// Child-process entry of the LanceDB store a hub runs out of process (see lancedb-process-store.ts):
// opens LanceDbVectorStore on the palace and answers the parent's calls over the IPC channel. It
// reports its RSS with every answer so the parent can replace it before LanceDB's write path (which
// keeps ~100 KB of native memory per commit, lance-format/lance#1983) grows without bound.

import { makeLogger } from '../log.js';
import { toWire, type HostReply, type HostRequest } from './lancedb-host-protocol.js';
import { LanceDbVectorStore } from './lancedb-vector-store.js';

async function main(): Promise<void> {
  const send = (reply: HostReply): void => void process.send?.(reply);
  const [palacePath, dimensions] = [process.argv[2] ?? '', Number(process.argv[3])];
  let store: LanceDbVectorStore;
  try {
    store = await LanceDbVectorStore.open({ palacePath, dimensions, log: makeLogger('palace:hub:lancedb'), idFilter: true });
  } catch (err) {
    send({ type: 'open_failed', error: toWire(err) });
    process.disconnect?.();
    return;
  }
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => (closing ??= store.close());
  send({ type: 'ready', rss: process.memoryUsage.rss() });
  process.on('message', (request: HostRequest) => {
    if (request.method === 'close') {
      void close().finally(() => {
        send({ id: request.id, ok: true, value: null, rss: 0, busy: false });
        process.disconnect?.();
      });
      return;
    }
    const call = (store[request.method] as (...args: unknown[]) => Promise<unknown>).apply(store, request.args);
    call.then(
      (value) => send({ id: request.id, ok: true, value, rss: process.memoryUsage.rss(), busy: store.maintaining() }),
      (err: unknown) => send({ id: request.id, ok: false, error: toWire(err), rss: process.memoryUsage.rss(), busy: store.maintaining() }),
    );
  });
  // The parent gone (killed, or done after 'close') means nobody will ask again: leave at once, so a
  // restarted hub never shares the table with a leftover child finishing a compaction. A commit is
  // atomic; an interrupted compaction leaves only files no version refers to.
  process.on('disconnect', () => process.exit(0));
}

// Only ever run as the script of a child forked by LanceDbProcessStore (never imported).
if (!process.send) throw new Error('lancedb-host runs as a child process forked by the hub');
void main();
