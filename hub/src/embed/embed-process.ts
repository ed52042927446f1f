// Starts one embedding worker: a child process (default; ending it gives all of its memory back to
// the system) or a worker thread (shares the hub's process). Both speak the messages of embed-worker.ts.

import { fork } from 'node:child_process';
import type { EventEmitter } from 'node:events';
import { Worker } from 'node:worker_threads';

import type { EmbedderSpec } from './spec.js';

/** process: a forked child per worker; thread: a worker_threads Worker per worker. */
export type EmbedIsolation = 'process' | 'thread';

/** What the pool needs of a worker, whichever kind it is. Events: 'message', 'error', 'exit'. */
export interface EmbedWorkerHandle {
  readonly events: EventEmitter;
  /** The child's pid (undefined for a thread). */
  readonly pid?: number | undefined;
  send(message: unknown): void;
  /** Pending work keeps the hub alive; an idle worker never does. */
  ref(): void;
  unref(): void;
  /** Ends it; resolves once it is gone. */
  terminate(): Promise<void>;
}

/**
 * Starts `script` with the spec. The spec travels as the first message, never in argv or the
 * environment (an openai-compat API key is in it).
 */
export function startEmbedWorker(script: URL, spec: EmbedderSpec, isolation: EmbedIsolation): EmbedWorkerHandle {
  if (isolation === 'thread') {
    // execArgv: [] so flags of the parent (e.g. --input-type, inspector) never break the worker.
    const worker = new Worker(script, { execArgv: [] });
    worker.postMessage({ type: 'init', spec });
    return {
      events: worker,
      send: (m) => worker.postMessage(m),
      ref: () => worker.ref(),
      unref: () => worker.unref(),
      terminate: async () => void (await worker.terminate()),
    };
  }
  const child = fork(script, [], {
    execArgv: [],
    serialization: 'advanced', // Float32Array vectors cross as they are
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  const channel = (): { ref?: () => void; unref?: () => void } | undefined => child.channel as { ref?: () => void; unref?: () => void } | undefined;
  child.send({ type: 'init', spec });
  return {
    events: child,
    pid: child.pid,
    send: (m) => {
      if (child.connected) child.send(m as object);
    },
    ref: () => {
      child.ref();
      channel()?.ref?.();
    },
    unref: () => {
      child.unref();
      channel()?.unref?.();
    },
    terminate: async () => {
      child.ref(); // an idle (unref'd) child must still be waited for, or its exit is never heard
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      killer.unref();
      await exited;
      clearTimeout(killer);
    },
  };
}
