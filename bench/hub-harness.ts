// What the hub benchmark's parts share: the in-process hub and the bare reference server, a way to
// know that a long-poll is really pending before appending, and commit stamps from both servers.

import type { LogEvent } from '../hub/src/core/types.js';
import type { Logstream } from '../hub/src/logstream/logstream.js';
import type { Hub } from '../hub/src/server.js';
import type { BareHttp } from './bare-http.js';
import { bodyText } from './event-fixtures.js';
import { seededRandom } from './stats.js';

export interface HubBench {
  /** The hub under test, started in this process with startHub (port 0, silent logger). */
  hub: Hub;
  /** The bare node:http reference server, also in this process. */
  bare: BareHttp;
  /** Change-feed listeners the hub has of its own, counted right after start (0 today). */
  ownListeners: number;
}

/** What palace_event_append / palace_event_wait return, as far as the benchmark reads them. */
export type AppendReply = Pick<LogEvent, 'id'>;
export interface WaitReply {
  events: Array<Pick<LogEvent, 'id'>>;
  timed_out: boolean;
}

/**
 * Listeners on the hub's change feed (pending waits plus SSE streams), read through the private
 * field `feed` of Logstream: bench-only introspection, so an append is made only once the hub has
 * the waiter subscribed. Undefined if the field is gone (then the caller falls back to a pause).
 */
export function hubListeners(log: Logstream): number | undefined {
  const feed = (log as unknown as { feed?: { size?: unknown } }).feed;
  return typeof feed?.size === 'number' ? feed.size : undefined;
}

/** Yields to the event loop until `count()` reaches `atLeast` (or pauses 20 ms if it is unknown). */
export function untilCount(
  count: () => number | undefined,
  atLeast: number,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  return until(count, (n) => n >= atLeast, `${what} (want ${atLeast})`, timeoutMs);
}

/** Yields to the event loop until `count()` is at most `atMost` (or pauses 20 ms if it is unknown). */
export function untilAtMost(
  count: () => number | undefined,
  atMost: number,
  what: string,
  timeoutMs = 10_000,
): Promise<void> {
  return until(count, (n) => n <= atMost, `${what} (want ${atMost})`, timeoutMs);
}

async function until(
  count: () => number | undefined,
  done: (n: number) => boolean,
  what: string,
  timeoutMs: number,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const n = count();
    if (n === undefined) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      return;
    }
    if (done(n)) return;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what} (now ${n})`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Stamps the first "log changed" signal after arm(): the hub calls it synchronously after a commit. */
export class CommitClock {
  private at = 0;
  private readonly unsubscribe: () => void;

  constructor(log: Logstream) {
    this.unsubscribe = log.onChange(() => this.stamp(performance.now()));
  }

  stamp(at: number): void {
    if (this.at === 0) this.at = at;
  }

  arm(): void {
    this.at = 0;
  }

  /** performance.now() of the commit since arm(); throws if none was seen. */
  read(): number {
    if (this.at === 0) throw new Error('no commit was signalled');
    return this.at;
  }

  close(): void {
    this.unsubscribe();
  }
}

/** A task.request to `to_agent` with a ~200-byte body, as MCP tool arguments. */
export function requestTo(random: () => number, toAgent: string): Record<string, unknown> {
  return {
    type: 'task.request',
    stream: 'project/bench',
    room: 'coordination',
    from_agent: 'bench-appender',
    to_agent: toAgent,
    status: 'open',
    body: bodyText(random),
  };
}

export function seededRequests(seed: number): (toAgent: string) => Record<string, unknown> {
  const random = seededRandom(seed);
  return (toAgent) => requestTo(random, toAgent);
}
