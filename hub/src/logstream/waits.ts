// Long-polls on the log: a wait returns at once when events match, else is woken by the change feed
// (commits through this process at once, other processes' by a cheap poll) until one does, it times
// out, or the process ends every wait with `hub.shutting_down` and the cursor to resume from.

import { HubError } from '../errors.js';
import type { EventPage, EventQuery, WaitResult } from '../core/types.js';
import { ChangeFeed } from './change-feed.js';

export interface WaitOptions {
  signal?: AbortSignal;
  /** Called about every `progressEveryMs` while waiting, with the ms waited so far. */
  onProgress?: (elapsedMs: number, timeoutMs: number) => void;
  progressEveryMs?: number;
}

function shuttingDown(reason: string, cursor: string | null): HubError {
  return new HubError(
    'hub.shutting_down',
    `${reason}; no matching event arrived before it did. Call palace_event_wait again with since_event_id = data.cursor: the next hub (or the local server) answers it`,
    { data: { cursor } },
  );
}

export class Waits {
  private readonly feed: ChangeFeed;
  /** Pending waits, each ended by `endWaits` with the error it is handed. */
  private readonly waiters = new Set<(reason: string) => void>();
  private ending: string | undefined;

  constructor(
    private readonly store: { query(q: EventQuery): EventPage; changeToken(): number; onCommitted(listener: () => void): void },
    pollMs: number,
  ) {
    this.feed = new ChangeFeed({ changeToken: () => store.changeToken(), pollMs });
    // Every commit that stored events (a local append, a pulled page) wakes waiters and stream clients.
    store.onCommitted(() => this.feed.notify());
  }

  /** Waits for events matching `query` (validated) for up to `timeoutMs`. */
  async wait(query: EventQuery, timeoutMs: number, options: WaitOptions = {}): Promise<WaitResult> {
    const first = this.store.query(query);
    if (first.count > 0 || timeoutMs === 0 || options.signal?.aborted) return { ...first, timed_out: first.count === 0 };
    if (this.ending !== undefined) throw shuttingDown(this.ending, first.cursor);
    const started = Date.now();
    return new Promise((resolve, reject) => {
      let cursor = first.cursor;
      let settled = false;
      const settle = (): void => {
        settled = true;
        this.waiters.delete(end);
        unsubscribe();
        clearTimeout(timer);
        if (progress) clearInterval(progress);
        options.signal?.removeEventListener('abort', onAbort);
      };
      const finish = (result: WaitResult): void => {
        if (settled) return;
        settle();
        resolve(result);
      };
      const end = (reason: string): void => {
        check(); // an event appended just now still counts
        if (settled) return;
        settle();
        reject(shuttingDown(reason, cursor));
      };
      const timedOut = (): void => finish({ events: [], count: 0, has_more: false, cursor, timed_out: true });
      const check = (): void => {
        if (settled) return;
        let page: EventPage;
        try {
          page = this.store.query({ ...query, since_event_id: cursor });
        } catch {
          return; // a failing re-check must not kill the waiter; the timeout still ends it
        }
        if (page.count > 0) finish({ ...page, timed_out: false });
        else cursor = page.cursor ?? cursor;
      };
      const onAbort = (): void => timedOut();
      const unsubscribe = this.feed.subscribe(check);
      const timer = setTimeout(timedOut, timeoutMs);
      const progress =
        options.onProgress && options.progressEveryMs
          ? setInterval(() => options.onProgress?.(Date.now() - started, timeoutMs), options.progressEveryMs)
          : undefined;
      options.signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.add(end);
    });
  }

  /**
   * Ends every pending wait now, and every later one at once, with `hub.shutting_down` (carrying
   * the cursor to resume from): a process about to exit answers its long-polls instead of cutting them.
   */
  endWaits(reason: string): void {
    this.ending ??= reason;
    for (const end of [...this.waiters]) end(this.ending);
  }

  /** Subscribes to "the log changed" (appends here, or by other processes). */
  onChange(listener: () => void): () => void {
    return this.feed.subscribe(listener);
  }

  close(): void {
    this.feed.close();
  }
}
