// An unrelated request (palace_event_list through the SDK client, and GET /healthz) while 50
// palace_event_wait long-polls (50 separate SDK clients) are pending and 8 SSE clients are connected,
// against the same request with nothing pending, alternating in rounds. Each round ends with one
// broadcast append that wakes all 58; then a few more broadcast cycles time that fan-out itself
// against the bare server doing the same with 50 held POSTs and 8 SSE streams.

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

import type { Figure, SuiteContext } from './figure.js';
import { connectSdkClient, postJson, sdkCall, SseClient } from './hub-clients.js';
import {
  hubListeners,
  seededRequests,
  untilCount,
  untilAtMost,
  type AppendReply,
  type HubBench,
  type WaitReply,
} from './hub-harness.js';
import { percentile } from './stats.js';

const WAITERS = 50;
const SSE_CLIENTS = 8;
const ROUNDS = 3;
const SAMPLES_PER_ROUND = 100;
const FANOUT_CYCLES_PER_ROUND = 5;
const WAIT_TIMEOUT_MS = 120_000;
const ALLOWED_DELAY_MS = 20;

interface Load {
  waits: Array<Promise<WaitReply>>;
  readers: SseClient[];
}

/** 50 pending waits (one per SDK client, each its own agent) and 8 SSE streams, all subscribed. */
async function armHub(
  bench: HubBench,
  waiters: readonly Client[],
  readers: SseClient[] | undefined,
): Promise<Load> {
  const log = bench.hub.services.logstream;
  // Streams closed by the previous round leave once the hub sees their sockets close.
  if (!readers)
    await untilAtMost(() => hubListeners(log), bench.ownListeners, 'the previous streams to leave the hub');
  const streams =
    readers ??
    (await Promise.all(
      Array.from({ length: SSE_CLIENTS }, () => SseClient.open(bench.hub.url, '/logstream/stream')),
    ));
  // Counted once the streams are open (each subscribes before its opening comment, with whatever the
  // hub adds for its stream clients): the long-polls are then the only listeners still to come.
  const before = hubListeners(log) ?? 0;
  const tip = log.tipId() ?? undefined;
  const waits = waiters.map((client, i) =>
    sdkCall<WaitReply>(
      client,
      'palace_event_wait',
      { to_agent: `bench-idle-${i}`, since_event_id: tip, timeout_ms: WAIT_TIMEOUT_MS },
      WAIT_TIMEOUT_MS + 10_000,
    ),
  );
  await untilCount(
    () => hubListeners(log),
    before + WAITERS,
    'the long-polls and streams to be pending',
  );
  return { waits, readers: streams };
}

async function armBare(bench: HubBench): Promise<Array<Promise<WaitReply>>> {
  const waits = Array.from({ length: WAITERS }, (_, i) =>
    postJson<WaitReply>(`${bench.bare.url}/wait`, { to_agent: `bench-idle-${i}` }),
  );
  await untilCount(() => bench.bare.pendingWaits(), WAITERS, 'the bare long-polls to be held');
  return waits;
}

/** ms from just before the broadcast append to the last of the waits and streams having it. */
async function fanOut(
  append: () => Promise<AppendReply>,
  waits: ReadonlyArray<Promise<WaitReply>>,
  readers: readonly SseClient[],
): Promise<number> {
  const t0 = performance.now();
  const event = await append();
  const stamps = await Promise.all([
    ...waits.map((w) =>
      w.then((reply) => {
        const at = performance.now();
        if (reply.timed_out || !reply.events.some((e) => e.id === event.id))
          throw new Error('a long-poll was not woken by the broadcast');
        return at;
      }),
    ),
    ...readers.map((r) => r.arrival(event.id)),
  ]);
  return Math.max(...stamps) - t0;
}

export async function loadFigures(
  ctx: SuiteContext,
  bench: HubBench,
  client: Client,
): Promise<{ figures: Figure[]; notes: string[] }> {
  const { hub } = bench;
  const next = seededRequests(41);
  const broadcast = (): Promise<AppendReply> =>
    sdkCall<AppendReply>(client, 'palace_event_append', next('*'));
  const bareBroadcast = (): Promise<AppendReply> =>
    postJson<AppendReply>(`${bench.bare.url}/append`, next('*'));
  ctx.progress(`load: connecting ${WAITERS} SDK clients for the long-polls`);
  const waiters = await Promise.all(
    Array.from({ length: WAITERS }, (_, i) => connectSdkClient(hub.url, `bench-waiter-${i}`)),
  );
  const listArgs = { to_agent: 'bench-list', limit: 50, preview: true };
  const samples = {
    idle: { list: [] as number[], health: [] as number[] },
    loaded: { list: [] as number[], health: [] as number[] },
  };
  const fanout = { hub: [] as number[], bare: [] as number[] };
  const measure = async (into: { list: number[]; health: number[] }, count: number): Promise<void> => {
    for (let i = 0; i < count; i++) {
      let t0 = performance.now();
      await sdkCall(client, 'palace_event_list', listArgs);
      into.list.push(performance.now() - t0);
      t0 = performance.now();
      const res = await fetch(`${hub.url}/healthz`);
      if ((await res.text()) !== 'ok') throw new Error('/healthz did not answer ok');
      into.health.push(performance.now() - t0);
    }
  };
  try {
    await measure({ list: [], health: [] }, 20); // warm-up
    for (let round = 0; round < ROUNDS; round++) {
      ctx.progress(
        `load: round ${round + 1}/${ROUNDS}: ${SAMPLES_PER_ROUND} list + /healthz idle, then with load`,
      );
      await measure(samples.idle, SAMPLES_PER_ROUND);
      const load = await armHub(bench, waiters, undefined);
      try {
        await measure(samples.loaded, SAMPLES_PER_ROUND);
        fanout.hub.push(await fanOut(broadcast, load.waits, load.readers));
        for (let cycle = 1; cycle < FANOUT_CYCLES_PER_ROUND; cycle++) {
          const again = await armHub(bench, waiters, load.readers);
          fanout.hub.push(await fanOut(broadcast, again.waits, load.readers));
        }
      } finally {
        await Promise.all(load.readers.map((r) => r.close()));
      }
      const bareReaders = await Promise.all(
        Array.from({ length: SSE_CLIENTS }, () => SseClient.open(bench.bare.url, '/stream')),
      );
      try {
        for (let cycle = 0; cycle < FANOUT_CYCLES_PER_ROUND; cycle++) {
          const waits = await armBare(bench);
          fanout.bare.push(await fanOut(bareBroadcast, waits, bareReaders));
        }
      } finally {
        await Promise.all(bareReaders.map((r) => r.close()));
      }
    }
  } finally {
    await Promise.all(waiters.map((c) => c.close()));
  }

  const figure = (what: string, key: 'list' | 'health', p: 50 | 99): Figure => {
    const reference = percentile(samples.idle[key], p);
    return {
      name: `${what} p${p} with ${WAITERS} long-polls + ${SSE_CLIENTS} SSE pending`,
      value: percentile(samples.loaded[key], p),
      unit: 'ms',
      reference: { value: reference, label: 'the same request with nothing pending', measured: true },
      target: {
        op: '<=',
        value: reference + ALLOWED_DELAY_MS,
        note: `no more than ${ALLOWED_DELAY_MS} ms over the same request with nothing pending, measured in the same run`,
      },
    };
  };
  return {
    figures: [
      figure('unrelated palace_event_list (SDK)', 'list', 50),
      figure('unrelated palace_event_list (SDK)', 'list', 99),
      figure('unrelated GET /healthz (fetch)', 'health', 50),
      figure('unrelated GET /healthz (fetch)', 'health', 99),
      {
        name: `broadcast append -> last of ${WAITERS} waits + ${SSE_CLIENTS} SSE woken, p50`,
        value: percentile(fanout.hub, 50),
        unit: 'ms',
        reference: {
          value: percentile(fanout.bare, 50),
          label: `bare node:http: ${WAITERS} held POSTs + ${SSE_CLIENTS} SSE streams answered by one append`,
          measured: true,
        },
      },
    ],
    notes: [
      `Load: ${WAITERS} separate SDK clients each hold a palace_event_wait (own to_agent, timeout ${WAIT_TIMEOUT_MS / 1000} s)` +
        ` and ${SSE_CLIENTS} unfiltered SSE clients are connected (all checked subscribed in the hub before measuring);` +
        ` ${ROUNDS} rounds of ${SAMPLES_PER_ROUND} palace_event_list (to_agent, limit 50, preview) + GET /healthz with` +
        ' nothing pending, then the same with the load; the load is woken by a broadcast at the end of each round.',
      `Fan-out: ${ROUNDS * FANOUT_CYCLES_PER_ROUND} broadcast appends (to_agent "*") over MCP, each re-arming the ${WAITERS}` +
        ` waits, timed from just before the append call to the last of the ${WAITERS + SSE_CLIENTS} clients having it;` +
        ` p99 ${percentile(fanout.hub, 99).toFixed(1)} ms (bare ${percentile(fanout.bare, 99).toFixed(1)} ms).`,
    ],
  };
}
