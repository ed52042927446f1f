// The hub's global request lock: serializes the tools that are not lock-free (palace memory writes).
// Logstream tools never take it, so a long wait or a mine never blocks coordination.

export interface RequestLock {
  run<T>(fn: () => Promise<T>): Promise<T>;
  readonly pending: number;
}

export function createRequestLock(): RequestLock {
  let tail: Promise<unknown> = Promise.resolve();
  let pending = 0;
  return {
    run<T>(fn: () => Promise<T>): Promise<T> {
      pending++;
      const result = tail.then(fn, fn);
      tail = result.then(
        () => pending--,
        () => pending--,
      );
      return result;
    },
    get pending() {
      return pending;
    },
  };
}
