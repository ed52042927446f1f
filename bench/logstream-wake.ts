// Wake-up latency from an append to a pending `wait`: appended in this process (woken by the
// append itself) and appended by a child process on the same file (found by the change poll).

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

import type { Logstream } from '../hub/src/logstream/logstream.js';
import { bodyText } from './event-fixtures.js';
import type { Figure, Reference, SuiteContext } from './figure.js';
import { percentile, seededRandom, sleep, wallMs } from './stats.js';

const IN_PROCESS_ITERATIONS = 200;
const CROSS_PROCESS_ITERATIONS = 100;
const WARMUP = 10;
const TIMEOUT_MS = 5_000;
/** The child appends after a random pause up to this long, so appends land at any point of a poll period. */
const MAX_PAUSE_MS = 100;

const PYTHON_P50: Reference = {
  value: 127,
  text: '127-158 ms',
  label: 'Python reference, polling, from DESIGN.md (not measured here)',
  measured: false,
};
const PYTHON_P99: Reference = { ...PYTHON_P50, value: 325, text: '325-354 ms' };

function expectWoken(result: { timed_out: boolean; events: Array<{ id: string }> }, id?: string): void {
  if (result.timed_out) throw new Error('a waiter timed out instead of being woken');
  if (id && !result.events.some((e) => e.id === id)) throw new Error(`the waiter woke without event ${id}`);
}

/** ms from just before appendNow to the resolution of a wait pending in the same process. */
export async function inProcessWake(log: Logstream, agent: string): Promise<number[]> {
  const random = seededRandom(5);
  const out: number[] = [];
  for (let i = 0; i < WARMUP + IN_PROCESS_ITERATIONS; i++) {
    let resolvedAt = 0;
    const pending = log
      .wait({ to_agent: agent, since_event_id: log.tipId(), timeout_ms: TIMEOUT_MS })
      .then((result) => {
        resolvedAt = performance.now();
        return result;
      });
    await new Promise((resolve) => setImmediate(resolve));
    const t0 = performance.now();
    const event = log.appendNow({
      type: 'task.request',
      stream: 'palace',
      room: 'coordination',
      from_agent: 'bench-local',
      to_agent: agent,
      status: 'open',
      body: bodyText(random),
    });
    expectWoken(await pending, event.id);
    if (i >= WARMUP) out.push(resolvedAt - t0);
  }
  return out;
}

interface Reply {
  t: number;
  id?: string;
  ready?: boolean;
}

class AppendChild {
  private readonly waiting: Array<(reply: Reply) => void> = [];
  private readonly exited: Promise<void>;

  private constructor(private readonly child: ChildProcessWithoutNullStreams) {
    createInterface({ input: child.stdout }).on('line', (line) =>
      this.waiting.shift()?.(JSON.parse(line) as Reply),
    );
    this.exited = new Promise((resolve) => child.once('exit', () => resolve()));
  }

  static async start(palaceDir: string): Promise<AppendChild> {
    const script = fileURLToPath(new URL('./append-child.js', import.meta.url));
    const child = spawn(process.execPath, [script, palaceDir], { stdio: ['pipe', 'pipe', 'pipe'] });
    child.stderr.on('data', (chunk: Buffer) => process.stderr.write(`[append-child] ${chunk.toString()}`));
    const client = new AppendChild(child);
    const ready = client.next();
    const failed = new Promise<never>((_, reject) =>
      child.once('exit', (code) => reject(new Error(`append-child exited early (code ${code})`))),
    );
    await Promise.race([ready, failed]);
    return client;
  }

  private next(): Promise<Reply> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  request(line: string): Promise<Reply> {
    const reply = this.next();
    this.child.stdin.write(`${line}\n`);
    return reply;
  }

  async stop(): Promise<void> {
    this.child.stdin.end('quit\n');
    const killer = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
    await this.exited;
    clearTimeout(killer);
  }
}

/** Child clock minus ours, from the ping with the smallest round trip. */
async function clockOffset(child: AppendChild): Promise<{ offsetMs: number; rttMs: number }> {
  let best = { offsetMs: 0, rttMs: Number.POSITIVE_INFINITY };
  for (let i = 0; i < 30; i++) {
    const sent = wallMs();
    const { t } = await child.request('ping');
    const received = wallMs();
    if (received - sent < best.rttMs) best = { offsetMs: t - (sent + received) / 2, rttMs: received - sent };
  }
  return best;
}

/** ms from just before the child's append (its clock) to the resolution of our wait (ours). */
export async function crossProcessWake(
  log: Logstream,
  palaceDir: string,
  agent: string,
): Promise<{ samples: number[]; offsetMs: number; rttMs: number }> {
  const child = await AppendChild.start(palaceDir);
  const random = seededRandom(11);
  try {
    const { offsetMs, rttMs } = await clockOffset(child);
    const samples: number[] = [];
    for (let i = 0; i < WARMUP + CROSS_PROCESS_ITERATIONS; i++) {
      const pending = log
        .wait({ to_agent: agent, since_event_id: log.tipId(), timeout_ms: TIMEOUT_MS })
        .then((result) => ({ result, at: wallMs() }));
      await sleep(random() * MAX_PAUSE_MS);
      const reply = await child.request(`append ${agent}`);
      const { result, at } = await pending;
      expectWoken(result, reply.id);
      if (i >= WARMUP) samples.push(at - reply.t);
    }
    return { samples, offsetMs, rttMs };
  } finally {
    await child.stop();
  }
}

export async function wakeFigures(
  ctx: SuiteContext,
  log: Logstream,
  palaceDir: string,
): Promise<{ figures: Figure[]; notes: string[] }> {
  ctx.progress(`wake: ${IN_PROCESS_ITERATIONS} in-process wake-ups`);
  const local = await inProcessWake(log, 'bench-waiter');
  ctx.progress(`wake: ${CROSS_PROCESS_ITERATIONS} cross-process wake-ups (child appender)`);
  const remote = await crossProcessWake(log, palaceDir, 'bench-remote');
  const figure = (name: string, samples: number[], p: 50 | 99, limit: number): Figure => ({
    name: `${name} p${p}`,
    value: percentile(samples, p),
    unit: 'ms',
    reference: p === 50 ? PYTHON_P50 : PYTHON_P99,
    ...(p === 99 ? { target: { op: '<=' as const, value: limit } } : {}),
  });
  return {
    figures: [
      figure('wake in-process (appendNow -> wait)', local, 50, 10),
      figure('wake in-process (appendNow -> wait)', local, 99, 10),
      figure('wake cross-process (child append -> wait)', remote.samples, 50, 300),
      figure('wake cross-process (child append -> wait)', remote.samples, 99, 300),
    ],
    notes: [
      `Cross-process: the child appends after a random 0-${MAX_PAUSE_MS} ms pause so appends land anywhere in the` +
        ` waiter's change-poll period; both sides stamp performance.timeOrigin + performance.now().` +
        ` Estimated child-minus-parent clock offset ${remote.offsetMs.toFixed(3)} ms` +
        ` (ping round trip ${remote.rttMs.toFixed(3)} ms), not subtracted.`,
    ],
  };
}
