// A live feed of logstream events from a hub: Server-Sent Events resumed with Last-Event-ID, a
// palace_event_wait long-poll fallback while the stream is full (503), and reconnection with capped
// backoff while the hub is down. Holds only its cursor; callers keep the events.

import type { EventPage } from '../core/types.js';
import { createSseParser } from '../core/sse-frames.js';
import type { ArgsOf } from '../mcp/contract.js';
import { HubClientError, type HubClient, type StreamQuery } from './hub-client.js';

export const FEED_MODES = {
  connecting: 'connecting',
  stream: 'stream',
  poll: 'poll',
  down: 'down',
  unauthorized: 'unauthorized',
  stopped: 'stopped',
} as const;
export type FeedMode = (typeof FEED_MODES)[keyof typeof FEED_MODES];

export interface EventFeedOptions {
  client: HubClient;
  /** Resume strictly after this event; null = only events appended after connecting. */
  cursor?: string | null;
  /** Server-side filters, as palace_event_list takes them. */
  query?: StreamQuery;
  /** Called with every non-empty page, in append order. */
  onPage(page: EventPage): void;
  onMode?(mode: FeedMode, detail?: string): void;
  /** timeout_ms of each palace_event_wait in the fallback (default 25 s). */
  pollTimeoutMs?: number;
  /** While long-polling, try the stream again after this long (default 30 s). */
  streamRetryMs?: number;
  /** Reconnect backoff while the hub is unreachable (default 0.5 s doubling to 10 s). */
  retryMs?: { initial: number; max: number };
  /** No byte, not even a heartbeat, for this long: the connection is presumed dead (default 45 s). */
  idleTimeoutMs?: number;
  now?: () => number;
}

export interface EventFeed {
  start(): void;
  stop(): void;
  /** Skips a pending reconnect wait (e.g. when the hub is known to be back). */
  reconnectNow(): void;
  readonly cursor: string | null;
  readonly mode: FeedMode;
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

const isAbort = (err: unknown): boolean => (err as { name?: string } | null)?.name === 'AbortError';

export function createEventFeed(options: EventFeedOptions): EventFeed {
  const { client } = options;
  const query = options.query ?? {};
  const pollTimeoutMs = options.pollTimeoutMs ?? 25_000;
  const streamRetryMs = options.streamRetryMs ?? 30_000;
  const retry = options.retryMs ?? { initial: 500, max: 10_000 };
  const idleTimeoutMs = options.idleTimeoutMs ?? 45_000;
  const now = options.now ?? (() => Date.now());
  let cursor = options.cursor ?? null;
  let mode: FeedMode = FEED_MODES.stopped;
  let life: AbortController | undefined;
  let wake = new AbortController();

  const setMode = (next: FeedMode, detail?: string): void => {
    if (next === mode && detail === undefined) return;
    mode = next;
    options.onMode?.(next, detail);
  };

  const deliver = (page: EventPage, frameId?: string): void => {
    cursor = frameId || page.cursor || cursor;
    if (page.events.length > 0) options.onPage(page);
  };

  const readStream = async (res: Response, signal: AbortSignal, abort: () => void): Promise<void> => {
    if (!res.body) throw new HubClientError('rpc.bad_result', 'the stream has no body');
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    const parser = createSseParser();
    let watchdog = setTimeout(abort, idleTimeoutMs);
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done || signal.aborted) break;
        clearTimeout(watchdog);
        watchdog = setTimeout(abort, idleTimeoutMs);
        for (const frame of parser.push(decoder.decode(value, { stream: true })))
          // An `event: error` frame is the hub dropping a client that fell behind; the stream ends and
          // the loop reconnects from the cursor.
          if (frame.data !== undefined && frame.event === undefined) deliver(JSON.parse(frame.data) as EventPage, frame.id);
      }
    } finally {
      clearTimeout(watchdog);
      void reader.cancel().catch(() => undefined);
    }
  };

  const pollPhase = async (signal: AbortSignal): Promise<void> => {
    setMode(FEED_MODES.poll);
    const until = now() + streamRetryMs;
    while (!signal.aborted && now() < until) {
      const page = await client.call(
        'palace_event_wait',
        // The feed's filters are the stream's query strings: the same names palace_event_wait takes.
        { ...(query as ArgsOf<'palace_event_wait'>), ...(cursor ? { since_event_id: cursor } : {}), timeout_ms: pollTimeoutMs },
        { signal },
      );
      deliver(page);
    }
  };

  const run = async (signal: AbortSignal): Promise<void> => {
    let delay = retry.initial;
    while (!signal.aborted) {
      const connection = new AbortController();
      const stopConnection = (): void => connection.abort();
      signal.addEventListener('abort', stopConnection, { once: true });
      try {
        const res = await client.openStream(query, cursor, connection.signal);
        if (res.status === 503) {
          void res.body?.cancel().catch(() => undefined);
          await pollPhase(connection.signal);
          delay = retry.initial;
          continue;
        }
        if (res.status === 401 || res.status === 403) {
          void res.body?.cancel().catch(() => undefined);
          setMode(
            FEED_MODES.unauthorized,
            res.status === 401 ? 'the hub refused the token' : 'the hub refused this page',
          );
          return;
        }
        if (!res.ok)
          throw new HubClientError(`http.${res.status}`, `the stream answered ${res.status}`, res.status);
        setMode(FEED_MODES.stream);
        delay = retry.initial;
        await readStream(res, connection.signal, stopConnection);
        if (!signal.aborted) setMode(FEED_MODES.connecting);
      } catch (err) {
        if (signal.aborted) break;
        if (err instanceof HubClientError && (err.code === 'auth.unauthorized' || err.status === 401)) {
          setMode(FEED_MODES.unauthorized, err.message);
          return;
        }
        setMode(FEED_MODES.down, isAbort(err) ? 'the connection went quiet' : (err as Error).message);
        wake = new AbortController();
        await pause(delay, AbortSignal.any([signal, wake.signal]));
        delay = Math.min(retry.max, delay * 2);
        if (!signal.aborted) setMode(FEED_MODES.connecting);
      } finally {
        signal.removeEventListener('abort', stopConnection);
      }
    }
  };

  return {
    start() {
      if (life) return;
      life = new AbortController();
      setMode(FEED_MODES.connecting);
      void run(life.signal);
    },
    stop() {
      life?.abort();
      life = undefined;
      setMode(FEED_MODES.stopped);
    },
    reconnectNow() {
      wake.abort();
    },
    get cursor() {
      return cursor;
    },
    get mode() {
      return mode;
    },
  };
}
