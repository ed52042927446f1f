// When the hub's background readers may run. The log's integrity check reads the whole log (1.1 GB
// at a year old) and the lease sweeper's start reads a page of it per claimed task: on a cold page
// cache they took the disk and a core exactly while a memory open read its own files, and /healthz
// waited behind them (docs/evidence.md, "scale: a cold page cache"). The foreground goes first: a
// memory open, and every request being served (health probes aside). The sweeper reads its next
// page once none runs (or after a short wait at most); the integrity check starts once none runs and
// none came for a quiet moment (or, on a hub that is never quiet, after a deadline: it still runs).

/** How waiting for the foreground ended. */
export type GateOutcome = 'quiet' | 'deadline' | 'aborted';

/**
 * A request in flight longer than this (a long-poll, a notification stream, a mine) no longer keeps
 * background work waiting: it is the hub's normal state, not its start.
 */
export const LONG_REQUEST_MS = 10_000;

/** While requests are in flight, the gate looks again at least this often (besides each request's end). */
const RECHECK_MS = 250;

export interface BackgroundGate {
  /** A source of foreground work: asked each time, it answers the work in progress (undefined: none). */
  addForeground(source: () => PromiseLike<unknown> | undefined): void;
  /** A request (not a health probe) begins; the function returned ends it. */
  request(): () => void;
  /** Whether foreground work runs or a request younger than LONG_REQUEST_MS is in flight, now. */
  busy(): boolean;
  /**
   * Resolves 'quiet' once no foreground work runs, no request younger than LONG_REQUEST_MS is in
   * flight, every promise of `after` has settled, and no request began or ended for `quietMs`;
   * 'deadline' once `maxWaitMs` have passed whatever the hub does; 'aborted' when `signal` aborts.
   */
  whenQuiet(options: { quietMs: number; maxWaitMs: number; after?: readonly PromiseLike<unknown>[]; signal?: AbortSignal }): Promise<GateOutcome>;
}

/** Settles when `work` settles, `ms` pass or `signal` aborts, whichever is first; never rejects. */
function settleFirst(work: PromiseLike<unknown> | undefined, ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    timer.unref();
    signal?.addEventListener('abort', done, { once: true });
    work?.then(done, done);
  });
}

export function createBackgroundGate(now: () => number = Date.now): BackgroundGate {
  const sources: Array<() => PromiseLike<unknown> | undefined> = [];
  /** Requests in flight: id -> when each began. */
  const inFlight = new Map<number, number>();
  let nextId = 0;
  /** Settles at the next end of a request (then replaced). */
  let ended: { promise: Promise<void>; resolve: () => void } = deferred();
  // The hub's start counts as activity: nothing background starts in its first quiet moment.
  let lastActivity = now();
  const inProgress = (): PromiseLike<unknown>[] => sources.map((s) => s()).filter((w): w is PromiseLike<unknown> => w !== undefined);
  /** How long until the youngest request in flight stops counting (0: none counts). */
  const busyFor = (): number => {
    let ms = 0;
    for (const began of inFlight.values()) ms = Math.max(ms, began + LONG_REQUEST_MS - now());
    return ms;
  };
  return {
    addForeground(source) {
      sources.push(source);
    },
    request() {
      const id = nextId++;
      lastActivity = now();
      inFlight.set(id, lastActivity);
      return () => {
        if (!inFlight.delete(id)) return;
        lastActivity = now();
        const { resolve } = ended;
        ended = deferred();
        resolve();
      };
    },
    busy: () => inProgress().length > 0 || busyFor() > 0,
    async whenQuiet({ quietMs, maxWaitMs, after = [], signal }) {
      const deadline = now() + maxWaitMs;
      let waiting = [...after];
      for (;;) {
        if (signal?.aborted) return 'aborted';
        const left = deadline - now();
        if (left <= 0) return 'deadline';
        const work = [...inProgress(), ...waiting];
        if (work.length > 0) {
          let settled = false;
          await settleFirst(
            Promise.allSettled(work).then(() => (settled = true)),
            left,
            signal,
          );
          // What settled is no longer waited for; foreground sources are asked afresh each time.
          if (settled) waiting = [];
          continue;
        }
        const busy = busyFor();
        if (busy > 0) {
          await settleFirst(ended.promise, Math.min(busy, left, RECHECK_MS), signal);
          continue;
        }
        const idle = now() - lastActivity;
        if (idle >= quietMs) return 'quiet';
        await settleFirst(undefined, Math.min(quietMs - idle, left), signal);
      }
    },
  };
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}
