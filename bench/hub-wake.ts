// Wake-up latency through the hub: an append made over MCP by one client, to (a) a pending
// palace_event_wait of another SDK client, and (b) 8 SSE clients on /logstream/stream. Each is timed
// end to end (from just before the append call) and from the commit inside the hub (stamped by a
// change listener in this process) to the waiter's client having the result. The reference is the
// bare node:http server doing the same with a held POST and an SSE stream; rounds alternate.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

import type { Figure, SuiteContext } from './figure.js';
import { postJson, sdkCall, SseClient } from './hub-clients.js';
import {
  CommitClock,
  hubListeners,
  seededRequests,
  untilCount,
  type AppendReply,
  type HubBench,
  type WaitReply,
} from './hub-harness.js';
import { percentile } from './stats.js';

const WAIT_ITERATIONS = 200;
const SSE_ITERATIONS = 200;
const SSE_CLIENTS = 8;
const WARMUP = 10;
const ROUNDS = 4;
const WAIT_TIMEOUT_MS = 10_000;

/** One wake-up: end to end from the append call, from the commit, and the append call alone. */
interface Wake {
  total: number;
  fromCommit: number;
  appendCall: number;
}

interface Side {
  /** One timed iteration. */
  once(): Promise<Wake>;
}

function expectWoken(reply: WaitReply, id: string): void {
  if (reply.timed_out) throw new Error('a palace_event_wait timed out instead of being woken');
  if (!reply.events.some((e) => e.id === id)) throw new Error(`a waiter woke without event ${id}`);
}

/** Hub: SDK waiter pending at the tip; the appender's SDK call wakes it. */
function hubWaitSide(bench: HubBench, waiter: Client, appender: Client, clock: CommitClock): Side {
  const log = bench.hub.services.logstream;
  const next = seededRequests(21);
  let tip = log.tipId();
  return {
    async once() {
      const before = hubListeners(log);
      let resolvedAt = 0;
      const pending = sdkCall<WaitReply>(
        waiter,
        'palace_event_wait',
        { to_agent: 'bench-waiter', since_event_id: tip ?? undefined, timeout_ms: WAIT_TIMEOUT_MS },
        WAIT_TIMEOUT_MS + 5_000,
      ).then((reply) => {
        resolvedAt = performance.now();
        return reply;
      });
      await untilCount(() => hubListeners(log), (before ?? 0) + 1, 'the wait to be pending in the hub');
      clock.arm();
      const t0 = performance.now();
      const event = await sdkCall<AppendReply>(appender, 'palace_event_append', next('bench-waiter'));
      const acked = performance.now();
      expectWoken(await pending, event.id);
      tip = event.id;
      return { total: resolvedAt - t0, fromCommit: resolvedAt - clock.read(), appendCall: acked - t0 };
    },
  };
}

/** Bare: a held POST /wait answered by the next POST /append. */
function bareWaitSide(bench: HubBench): Side {
  const { bare } = bench;
  const next = seededRequests(21);
  return {
    async once() {
      let resolvedAt = 0;
      const pending = postJson<WaitReply>(`${bare.url}/wait`, { to_agent: 'bench-waiter' }).then((reply) => {
        resolvedAt = performance.now();
        return reply;
      });
      await untilCount(() => bare.pendingWaits(), 1, 'the bare wait to be held');
      let commitAt = 0;
      bare.onCommit = (at) => (commitAt ||= at);
      const t0 = performance.now();
      const event = await postJson<AppendReply>(`${bare.url}/append`, next('bench-waiter'));
      const acked = performance.now();
      expectWoken(await pending, event.id);
      bare.onCommit = undefined;
      return { total: resolvedAt - t0, fromCommit: resolvedAt - commitAt, appendCall: acked - t0 };
    },
  };
}

/** Time from `t0` / the commit to the last of the SSE readers having event `id`. */
async function lastArrival(readers: readonly SseClient[], id: string): Promise<number> {
  const arrivals = await Promise.all(readers.map((r) => r.arrival(id)));
  return Math.max(...arrivals);
}

function hubSseSide(
  bench: HubBench,
  appender: Client,
  clock: CommitClock,
  readers: readonly SseClient[],
): Side {
  const next = seededRequests(31);
  return {
    async once() {
      clock.arm();
      const t0 = performance.now();
      const event = await sdkCall<AppendReply>(appender, 'palace_event_append', next('bench-sse'));
      const acked = performance.now();
      const last = await lastArrival(readers, event.id);
      return { total: last - t0, fromCommit: last - clock.read(), appendCall: acked - t0 };
    },
  };
}

function bareSseSide(bench: HubBench, readers: readonly SseClient[]): Side {
  const { bare } = bench;
  const next = seededRequests(31);
  return {
    async once() {
      let commitAt = 0;
      bare.onCommit = (at) => (commitAt ||= at);
      const t0 = performance.now();
      const event = await postJson<AppendReply>(`${bare.url}/append`, next('bench-sse'));
      const acked = performance.now();
      const last = await lastArrival(readers, event.id);
      bare.onCommit = undefined;
      return { total: last - t0, fromCommit: last - commitAt, appendCall: acked - t0 };
    },
  };
}

/** Warm-up, then `iterations` wakes per side in alternating rounds. */
async function alternate(hub: Side, bare: Side, iterations: number): Promise<{ hub: Wake[]; bare: Wake[] }> {
  for (let i = 0; i < WARMUP; i++) {
    await hub.once();
    await bare.once();
  }
  const out = { hub: [] as Wake[], bare: [] as Wake[] };
  const perRound = Math.ceil(iterations / ROUNDS);
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < perRound; i++) out.hub.push(await hub.once());
    for (let i = 0; i < perRound; i++) out.bare.push(await bare.once());
  }
  return out;
}

function wakeFigures(
  what: string,
  refWhat: string,
  samples: { hub: Wake[]; bare: Wake[] },
): { total: Figure[]; fromCommit: Figure[] } {
  const figure = (
    part: 'total' | 'fromCommit',
    name: string,
    p: 50 | 99,
    target?: number,
    note?: string,
  ): Figure => ({
    name: `${name} p${p}`,
    value: percentile(
      samples.hub.map((w) => w[part]),
      p,
    ),
    unit: 'ms',
    reference: {
      value: percentile(
        samples.bare.map((w) => w[part]),
        p,
      ),
      label: `bare node:http, ${refWhat}, same ${part === 'total' ? 'span' : 'span from its INSERT'}`,
      measured: true,
    },
    ...(target === undefined
      ? {}
      : { target: { op: '<=' as const, value: target, ...(note ? { note } : {}) } }),
  });
  const inHubNote =
    'DESIGN.md\'s 10 ms "in the hub process" applied to the part after the commit (the MCP request of the append excluded)';
  return {
    total: [
      figure('total', `wake ${what}: append call -> result, end to end`, 50),
      figure('total', `wake ${what}: append call -> result, end to end`, 99, 10),
    ],
    fromCommit: [
      figure('fromCommit', `wake ${what}: hub commit -> result at the client`, 50),
      figure('fromCommit', `wake ${what}: hub commit -> result at the client`, 99, 10, inHubNote),
    ],
  };
}

export async function wakeOverHttpFigures(
  ctx: SuiteContext,
  bench: HubBench,
  waiter: Client,
  appender: Client,
): Promise<{ figures: Figure[]; notes: string[] }> {
  const { hub } = bench;
  const clock = new CommitClock(hub.services.logstream);
  try {
    ctx.progress(
      `wake: ${WAIT_ITERATIONS} appends over MCP waking a pending palace_event_wait (and bare reference)`,
    );
    const waits = await alternate(
      hubWaitSide(bench, waiter, appender, clock),
      bareWaitSide(bench),
      WAIT_ITERATIONS,
    );

    ctx.progress(
      `wake: ${SSE_ITERATIONS} appends over MCP to ${SSE_CLIENTS} SSE clients (and bare reference)`,
    );
    const hubReaders = await Promise.all(
      Array.from({ length: SSE_CLIENTS }, () =>
        SseClient.open(hub.url, '/logstream/stream?to_agent=bench-sse'),
      ),
    );
    const bareReaders = await Promise.all(
      Array.from({ length: SSE_CLIENTS }, () => SseClient.open(bench.bare.url, '/stream')),
    );
    let sse: { hub: Wake[]; bare: Wake[] };
    try {
      sse = await alternate(
        hubSseSide(bench, appender, clock, hubReaders),
        bareSseSide(bench, bareReaders),
        SSE_ITERATIONS,
      );
    } finally {
      await Promise.all([...hubReaders, ...bareReaders].map((r) => r.close()));
    }

    const w = wakeFigures('palace_event_wait (SDK)', 'a held POST answered by the next append', waits);
    const s = wakeFigures(
      `${SSE_CLIENTS} SSE clients, last of 8`,
      `SSE frame to ${SSE_CLIENTS} fetch readers`,
      sse,
    );
    const p50 = (xs: Wake[], k: keyof Wake): string =>
      `${percentile(
        xs.map((x) => x[k]),
        50,
      ).toFixed(2)} ms`;
    return {
      figures: [...w.total, ...w.fromCommit, ...s.total, ...s.fromCommit],
      notes: [
        `Wake (wait): ${WAIT_ITERATIONS} iterations after ${WARMUP} warm-up, hub and bare alternating in ${ROUNDS} rounds.` +
          ' A second SDK client appends (palace_event_append) once the hub has the waiter subscribed' +
          " (palace_event_wait with to_agent and since_event_id at the tip, checked through the change feed's listener count)." +
          ' "End to end" runs from just before the append call to the wait call resolving in the waiter\'s SDK client;' +
          ' "hub commit -> result" from the commit inside the hub (a change listener in this process) to the same point,' +
          " so it holds the wake itself plus the wait response's trip back (serialising, loopback, SDK parsing)," +
          " and, as everything runs on this one thread, whatever of the append's own reply (the hub writing it, the" +
          ' appending SDK client parsing it) is interleaved before the waiter is served.' +
          ` The append call itself took p50 ${p50(waits.hub, 'appendCall')} (bare ${p50(waits.bare, 'appendCall')}).`,
        `Wake (SSE): ${SSE_CLIENTS} fetch streaming readers on /logstream/stream?to_agent=bench-sse parse frames as chunks arrive;` +
          ` per append the latest of the ${SSE_CLIENTS} arrivals counts; ${SSE_ITERATIONS} appends over MCP (SDK client).` +
          ` The append call itself took p50 ${p50(sse.hub, 'appendCall')} (bare ${p50(sse.bare, 'appendCall')}).`,
      ],
    };
  } finally {
    clock.close();
  }
}
