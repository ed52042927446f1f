// When the hub's background readers may run. The log's integrity check reads the whole log (1.1 GB
// at a year old) and the lease sweeper's start reads a page of it per claimed task: on a cold page
// cache they took the disk and a core exactly while a memory open read its own files, and /healthz
// waited behind them (docs/evidence.md, "scale: a cold page cache"). Foreground work (a memory open)
// goes first: the sweeper reads its next page once none is in progress, and the integrity check
// starts once none is and no request has come for a quiet moment (or, on a hub that is never quiet,
// after a deadline, so the check still runs).

/** How long waiting for the foreground ended. */
export type GateOutcome = 'quiet' | 'deadline' | 'aborted';

export interface BackgroundGate {
  /** A source of foreground work: asked each time, it answers the work in progress (undefined: none). */
  addForeground(source: () => PromiseLike<unknown> | undefined): void;
  /** A request that is not a health probe started or ended: the hub is not quiet. */
  touch(): void;
  /** Resolves once no foreground work is in progress (at once when none is); never rejects. */
  foregroundDone(): Promise<void>;
  /**
   * Resolves 'quiet' once no foreground work is in progress, every promise of `after` has settled
   * and nothing was touched for `quietMs`; 'deadline' once `maxWaitMs` have passed whatever the hub
   * does; 'aborted' when `signal` aborts.
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
  // The hub's start counts as activity: nothing background starts in its first quiet moment.
  let lastTouch = now();
  const inProgress = (): PromiseLike<unknown>[] => sources.map((s) => s()).filter((w): w is PromiseLike<unknown> => w !== undefined);
  const gate: BackgroundGate = {
    addForeground(source) {
      sources.push(source);
    },
    touch() {
      lastTouch = now();
    },
    async foregroundDone() {
      for (let work = inProgress(); work.length > 0; work = inProgress()) await Promise.allSettled(work);
    },
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
        const idle = now() - lastTouch;
        if (idle >= quietMs) return 'quiet';
        await settleFirst(undefined, Math.min(quietMs - idle, left), signal);
      }
    },
  };
  return gate;
}
