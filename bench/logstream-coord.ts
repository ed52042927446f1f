// Coordination reads on a big log: the ready queue (palace_task_ready) and the reservations in force
// (palace_reservations), plus a reservation (its conflict check and append), on the 100k-event palace
// after a deterministic share of dependencies and file reservations (most released or expired) is added.

import type { Logstream } from '../hub/src/logstream/logstream.js';
import { AGENTS } from './event-fixtures.js';
import type { Figure, SuiteContext } from './figure.js';
import { percentile, seededRandom, pick } from './stats.js';

const RESERVATIONS = 2_000;
const DEPENDENT_TASKS = 500;
const STREAMS = ['project/api', 'project/web', 'project/infra', 'project/docs'];
const CALLS = 200;
const WARMUP = 20;
const HOUR = 3_600_000;

/** Adds reservations (60% released, half of the rest expired) and requests with depends_on. */
export function addCoordination(log: Logstream): { events: number } {
  const random = seededRandom(11);
  const now = log.clock().getTime();
  const reserved: Array<{ id: string; stream: string; agent: string }> = [];
  const batch = (inputs: Array<Parameters<Logstream['prepareEvent']>[0]>): string[] => {
    const results = log.store.append(inputs.map((i) => log.prepareEvent(i)));
    return results.map((r) => {
      if (r instanceof Error) throw r;
      return r.id;
    });
  };
  let events = 0;
  for (let i = 0; i < RESERVATIONS; i += 100) {
    const inputs = Array.from({ length: 100 }, (_, j) => {
      const stream = pick(random, STREAMS);
      const agent = pick(random, AGENTS);
      const expires = now + (random() < 0.3 ? -HOUR : 24 * HOUR);
      const paths = [`src/mod${(i + j) % 97}/**`, `test/mod${(i + j) % 97}.test.ts`];
      return {
        type: 'file.reserved',
        stream,
        room: 'reservations',
        from_agent: agent,
        body: JSON.stringify({ paths, exclusive: random() < 0.2, expires_at: new Date(expires).toISOString() }),
      };
    });
    batch(inputs).forEach((id, j) => reserved.push({ id, stream: inputs[j]?.stream ?? '', agent: inputs[j]?.from_agent ?? '' }));
    events += inputs.length;
  }
  const releases = reserved.filter(() => random() < 0.6).map((r) => ({
    type: 'file.released',
    stream: r.stream,
    room: 'reservations',
    from_agent: r.agent,
    body: JSON.stringify({ reservation_id: r.id }),
  }));
  for (let i = 0; i < releases.length; i += 100) batch(releases.slice(i, i + 100));
  events += releases.length;
  const requests = Array.from({ length: DEPENDENT_TASKS }, (_, i) => ({
    type: 'task.request',
    status: 'open',
    stream: 'palace',
    room: 'coordination',
    from_agent: 'planner',
    to_agent: i % 5 === 0 ? '*' : pick(random, AGENTS),
    correlation_id: `dep-task-${i}`,
    body: 'a task that waits for others',
    depends_on: [`task-${1 + Math.floor(random() * 20_000)}`, ...(i > 0 ? [`dep-task-${Math.floor(random() * i)}`] : [])],
  }));
  for (let i = 0; i < requests.length; i += 100) batch(requests.slice(i, i + 100));
  events += requests.length;
  return { events };
}

function timed(calls: number, fn: (i: number) => unknown): number[] {
  const out: number[] = [];
  for (let i = 0; i < WARMUP + calls; i++) {
    const t0 = performance.now();
    fn(i);
    const ms = performance.now() - t0;
    if (i >= WARMUP) out.push(ms);
  }
  return out;
}

export function coordinationFigures(ctx: SuiteContext, log: Logstream): { figures: Figure[]; notes: string[] } {
  const size = log.store.countEvents();
  ctx.progress(`coordination: adding reservations and dependencies to the ${size}-event log`);
  const { events } = addCoordination(log);
  const total = log.store.countEvents();
  ctx.progress(`coordination: ${CALLS} calls each of ready, reservations and reserve`);
  const ready = timed(CALLS, (i) => log.ready({ agent: AGENTS[i % AGENTS.length] }));
  const head = timed(CALLS, (i) => log.ready({ agent: AGENTS[i % AGENTS.length], limit: 1 }));
  const held = timed(CALLS, (i) => log.reservations({ stream: STREAMS[i % STREAMS.length] }));
  const all = timed(CALLS, () => log.reservations({}));
  const reserve = timed(CALLS, (i) =>
    log.reserve({ paths: [`bench/path${i}.ts`], stream: STREAMS[i % STREAMS.length], from_agent: 'bench-reserver', ttl_ms: HOUR }),
  );
  const row = (name: string, samples: number[]): Figure[] => [
    { name: `${name} p50 @${Math.round(total / 1000)}k`, value: percentile(samples, 50), unit: 'ms' },
    { name: `${name} p99 @${Math.round(total / 1000)}k`, value: percentile(samples, 99), unit: 'ms' },
  ];
  return {
    figures: [
      ...row('palace_task_ready (Logstream.ready, one agent)', ready),
      ...row('palace_task_ready limit 1 (the head of the queue)', head),
      ...row('palace_reservations (one stream)', held),
      ...row('palace_reservations (all streams)', all),
      ...row('palace_reserve (conflict check + append)', reserve),
    ],
    notes: [
      `Coordination: on the list palace after it (${size.toLocaleString('en-US')} events) with ${events.toLocaleString('en-US')} more:` +
        ` ${RESERVATIONS.toLocaleString('en-US')} file.reserved over ${STREAMS.length} streams (~60% then released, ~30% already expired),` +
        ` ${DEPENDENT_TASKS} task.request with depends_on (1-2 tasks each); in-process calls, ${WARMUP} warm-up then ${CALLS} timed;` +
        ' ready rotates over the 20 agents (each has ~1,400 ready tasks in this traffic, all returned without a limit); reserve adds a reservation each call.',
    ],
  };
}
