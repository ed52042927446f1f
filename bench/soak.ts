// The soak run: N simulated agents drive the full delegation loop (task.request -> ack claimed ->
// patch_submit -> ack applied -> outcome drawer) through a real child hub with the official MCP SDK
// client for a set time, beside pending long-polls and SSE watchers. It reports throughput, p50/p99
// per operation, errors, lost or duplicated writes (checked against the log and the drawers at the
// end) and the hub's RSS over time with a growth verdict. With `hostile`, the second half of the run
// adds stalled SSE readers, a flood of long-polls past the cap and oversized list inputs, and the
// report compares the worst /healthz latency and the RSS of the two halves. Never asserts timings.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

import type { LogEvent } from '../hub/src/core/types.js';
import { Logstream } from '../hub/src/logstream/logstream.js';
import { readLiveRegistration } from '../hub/src/registration.js';
import { connectSdkClient, sdkCall, type ToolArgs } from './hub-clients.js';
import { prefillLog, startHealthProbe, startHostileLoad, type HostileCounts } from './soak-hostile.js';
import { percentile, sleep } from './stats.js';

/** The checkout root, from the sources (bench/) or the build (dist/bench/). */
function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'bin', 'palace.js'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('cannot find bin/palace.js above the soak module');
    dir = up;
  }
  return dir;
}

const REPO_ROOT = repoRoot();
const PALACE_BIN = join(REPO_ROOT, 'bin', 'palace.js');

export interface SoakOptions {
  agents: number;
  durationMs: number;
  longPollers: number;
  sseWatchers: number;
  /** File the outcome drawer at the end of each loop (default true; off isolates the logstream). */
  drawers?: boolean;
  /** How often the hub's RSS is sampled. */
  rssEveryMs: number;
  /** Where progress goes (stderr in the CLI, nowhere in tests). */
  progress?: (line: string) => void;
  /** The base environment for the hub child (PALACE_* is dropped, HOME is redirected). */
  env: Record<string, string | undefined>;
  /** Add the hostile load (stalled SSE readers, a wait flood past the cap, oversized lists) in the second half. */
  hostile?: boolean;
}

/** The hostile half's settings: the hub's bounds are scaled to the run, the attacks past them. */
export const HOSTILE = {
  stalledReaders: 4,
  stallMs: 2_000,
  /** Slots of the wait cap beyond what the agents and long-pollers use at most. */
  spareWaits: 32,
  floodWaits: 96,
  oversizedValues: 30_000,
  fillerEvents: 2_000,
  fillerBytes: 8 * 1024,
} as const;

/** /healthz latency and hub RSS of one half of the run. */
export interface PhaseFigures {
  healthzWorstMs: number;
  /** When the worst /healthz was sent, ms after the phase began. */
  healthzWorstAtMs: number;
  healthzP99Ms: number;
  healthzSamples: number;
  rssMaxMb: number;
}

export interface HostileReport extends HostileCounts {
  /** The run's first half, normal load only. */
  baseline: PhaseFigures;
  /** The second half: the same load plus the hostile one. */
  hostile: PhaseFigures;
  waitCap: number;
  /** Agents' waits refused by the cap and retried. */
  agentWaitRetries: number;
}

export interface OpStats {
  count: number;
  p50: number;
  p99: number;
}

export interface SoakReport {
  agents: number;
  durationMs: number;
  loopsCompleted: number;
  /** Completed delegation loops per second. */
  loopsPerSecond: number;
  /** Tool calls per second, all operations together. */
  callsPerSecond: number;
  ops: Record<string, OpStats>;
  errors: string[];
  lostEvents: number;
  duplicateEvents: number;
  lostDrawers: number;
  duplicateDrawers: number;
  sseMissed: number;
  rss: Array<{ atMs: number; mb: number }>;
  /** Least-squares slope of RSS over the second half of the run, MB per minute. */
  rssSlopeMbPerMin: number;
  rssVerdict: 'flat' | 'growing';
  /** Worst /healthz latency over the whole run (ms). */
  healthzWorstMs: number;
  hostile?: HostileReport;
}

interface Acked {
  events: Set<string>;
  drawers: Set<string>;
}

class Recorder {
  readonly samples = new Map<string, number[]>();
  readonly errors: string[] = [];
  waitRetries = 0;

  async time<T>(op: string, fn: () => Promise<T>): Promise<T | undefined> {
    const t0 = performance.now();
    try {
      const value = await fn();
      const list = this.samples.get(op) ?? [];
      list.push(performance.now() - t0);
      this.samples.set(op, list);
      return value;
    } catch (err) {
      this.errors.push(`${op}: ${(err as Error).message}`);
      return undefined;
    }
  }
}

function childEnvironment(base: Record<string, string | undefined>, home: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(base))
    if (value !== undefined && !key.startsWith('PALACE_')) env[key] = value;
  return {
    ...env,
    HOME: home,
    PALACE_HOME: join(home, '.palace'),
    PALACE_MCP_IDLE_HOURS: '0',
    NO_COLOR: '1',
  };
}

async function startHub(
  palace: string,
  env: Record<string, string>,
): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [PALACE_BIN, '--palace', palace, 'serve', '--port', '0'], {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the hub exited: ${stderr}`);
    const r = readLiveRegistration(env.PALACE_HOME ?? '', palace);
    if (r && r.pid === child.pid) {
      const url = `http://127.0.0.1:${r.port}`;
      const ok = await fetch(`${url}/healthz`).then(
        (res) => res.ok,
        () => false,
      );
      if (ok) return { child, url };
    }
    if (Date.now() > deadline) throw new Error(`the hub did not come up: ${stderr}`);
    await sleep(50);
  }
}

function ownRssKb(pid: number): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0; // exited between the listing and the read
  }
}

/** Processes whose parent is `pid` (from /proc/<n>/stat: the field after the command's closing ')'). */
function childPids(pid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** RSS of the hub and its child processes (the LanceDB process) together, in MiB. */
function rssMb(pid: number): number {
  let kb = ownRssKb(pid);
  for (const child of childPids(pid)) kb += ownRssKb(child);
  return kb / 1024;
}

/** Least-squares slope of y over x. */
export function slope(points: ReadonlyArray<{ x: number; y: number }>): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((a, p) => a + p.x, 0) / n;
  const my = points.reduce((a, p) => a + p.y, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.x - mx) * (p.y - my);
    den += (p.x - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/** A fetch-based SSE watcher collecting every event id it is sent. */
async function openWatcher(url: string): Promise<{ ids: Set<string>; close: () => void }> {
  const controller = new AbortController();
  const res = await fetch(`${url}/logstream/stream`, {
    headers: { Accept: 'text/event-stream' },
    signal: controller.signal,
  });
  if (res.status !== 200 || !res.body) throw new Error(`SSE answered ${res.status}`);
  const ids = new Set<string>();
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let opened: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (opened = resolve));
  void (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += decoder.decode(value, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) opened();
            if (!line.startsWith('data:')) continue;
            const payload = JSON.parse(line.slice(5)) as { events?: Array<{ id: string }> };
            for (const e of payload.events ?? []) ids.add(e.id);
          }
        }
      }
    } catch {
      // closed
    }
  })();
  await ready;
  return { ids, close: () => controller.abort() };
}

interface Agent {
  name: string;
  client: Client;
}

/** palace_event_wait, retried while the hub's wait cap refuses it (http.busy), as a client should. */
async function waitCall<T>(client: Client, args: ToolArgs, rec: Recorder, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      return await sdkCall<T>(client, 'palace_event_wait', args, timeoutMs);
    } catch (err) {
      if (!(err as Error).message.includes('http.busy') || Date.now() > deadline) throw err;
      rec.waitRetries++;
      await sleep(250);
    }
  }
}

/** One agent's requester side: delegate to `worker`, wait for the patch, ack applied, file the outcome. */
async function requesterLoop(
  me: Agent,
  worker: string,
  until: number,
  rec: Recorder,
  acked: Acked,
  done: { loops: number },
  drawers: boolean,
): Promise<void> {
  for (let k = 0; Date.now() < until; k++) {
    const corr = `task_${me.name}_${k}`;
    const request = await rec.time('task.request', () =>
      sdkCall<LogEvent>(me.client, 'palace_event_append', {
        type: 'task.request',
        stream: 'project/soak',
        room: 'delegation',
        from_agent: me.name,
        to_agent: worker,
        correlation_id: corr,
        status: 'open',
        body: `Please fix ${corr}`,
      }),
    );
    if (!request) return;
    acked.events.add(request.id);
    let patch: LogEvent | undefined;
    while (!patch) {
      const page = await rec.time('wait', () =>
        waitCall<{ events: LogEvent[] }>(me.client, { to_agent: me.name, type: 'patch.ready', correlation_id: corr, timeout_ms: 10_000 }, rec),
      );
      if (!page) return;
      patch = page.events[0];
      if (!patch && Date.now() > until + 30_000) {
        rec.errors.push(`${corr}: no patch.ready 30 s after the end`);
        return;
      }
    }
    const applied = await rec.time('ack.applied', () =>
      sdkCall<LogEvent>(me.client, 'palace_event_ack', {
        event_id: patch.id,
        from_agent: me.name,
        status: 'applied',
        body: 'applied cleanly',
      }),
    );
    if (!applied) return;
    acked.events.add(applied.id);
    if (!drawers) {
      done.loops++;
      continue;
    }
    const drawer = await rec.time('add_drawer', () =>
      sdkCall<{ drawer_id: string; filed: boolean }>(
        me.client,
        'palace_add_drawer',
        {
          wing: 'soak',
          room: 'outcomes',
          content: `Outcome of ${corr}: ${worker} fixed it for ${me.name}; the patch applied cleanly.`,
          added_by: me.name,
          force: true,
        },
        60_000,
      ),
    );
    if (!drawer) return;
    if (!drawer.filed) rec.errors.push(`${corr}: drawer not filed`);
    acked.drawers.add(drawer.drawer_id);
    done.loops++;
  }
}

/** One agent's worker side: take requests addressed to it, claim, submit a patch. */
async function workerLoop(me: Agent, stopAll: { at: number }, rec: Recorder, acked: Acked): Promise<void> {
  let cursor: string | undefined;
  while (Date.now() < stopAll.at) {
    const page = await rec.time('wait', () =>
      waitCall<{ events: LogEvent[] }>(
        me.client,
        { to_agent: me.name, type: 'task.request', timeout_ms: 2_000, ...(cursor ? { since_event_id: cursor } : {}) },
        rec,
      ),
    );
    if (!page) return;
    for (const request of page.events) {
      cursor = request.id;
      const claim = await rec.time('ack.claimed', () =>
        sdkCall<LogEvent>(me.client, 'palace_event_ack', {
          event_id: request.id,
          from_agent: me.name,
          status: 'claimed',
        }),
      );
      if (!claim) return;
      acked.events.add(claim.id);
      const content = `diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -1 +1 @@\n-old\n+${request.correlation_id ?? ''}\n`;
      const submitted = await rec.time('patch_submit', () =>
        sdkCall<{ event: LogEvent }>(me.client, 'palace_patch_submit', {
          content,
          from_agent: me.name,
          to_agent: request.from_agent,
          correlation_id: request.correlation_id ?? undefined,
          stream: 'project/soak',
          room: 'patches',
        }),
      );
      if (!submitted) return;
      acked.events.add(submitted.event.id);
    }
  }
}

/** Verifies the log and the drawers against what was acknowledged. */
function checkLog(palace: string, acked: Acked): { lost: number; duplicates: number; ids: string[] } {
  const log = Logstream.open(palace);
  try {
    const counts = new Map<string, number>();
    const logical = new Map<string, number>();
    let since: string | undefined;
    for (;;) {
      const page = log.list({ since_event_id: since, limit: 500 });
      for (const e of page.events) {
        counts.set(e.id, (counts.get(e.id) ?? 0) + 1);
        // The logical check covers the delegation loop; the hostile load writes the same status again and again on purpose.
        if (e.stream !== 'project/soak') continue;
        const key = `${e.type}|${e.correlation_id ?? ''}|${e.from_agent}|${e.status ?? ''}`;
        logical.set(key, (logical.get(key) ?? 0) + 1);
      }
      if (!page.has_more) break;
      since = page.events.at(-1)?.id;
    }
    let lost = 0;
    for (const id of acked.events) if (counts.get(id) !== 1) lost++;
    let duplicates = 0;
    for (const n of counts.values()) if (n > 1) duplicates += n - 1;
    for (const n of logical.values()) if (n > 1) duplicates += n - 1;
    return { lost, duplicates, ids: [...counts.keys()] };
  } finally {
    log.close();
  }
}

export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const say = options.progress ?? (() => undefined);
  const root = mkdtempSync(join(tmpdir(), 'palace-soak-'));
  const home = join(root, 'home');
  const palace = join(root, 'palace');
  mkdirSync(join(home, '.palace'), { recursive: true });
  mkdirSync(palace);
  const env = childEnvironment(options.env, home);
  const waitCap = 2 * options.agents + options.longPollers + HOSTILE.spareWaits;
  let replayFrom = '';
  if (options.hostile) {
    // The same hub settings for both halves; the bounds scaled to the run so the hostile half reaches them.
    env.PALACE_SSE_MAX_CLIENTS = String(options.sseWatchers + HOSTILE.stalledReaders);
    env.PALACE_SSE_STALL_MS = String(HOSTILE.stallMs);
    env.PALACE_WAIT_MAX_CONCURRENT = String(waitCap);
    say(`prefilling the log with ${HOSTILE.fillerEvents} x ${HOSTILE.fillerBytes} B events for the stalled readers to replay`);
    replayFrom = prefillLog(palace, HOSTILE.fillerEvents, HOSTILE.fillerBytes);
  }
  const { child, url } = await startHub(palace, env);
  const probe = startHealthProbe(url);
  const rec = new Recorder();
  const acked: Acked = { events: new Set(), drawers: new Set() };
  const rss: Array<{ atMs: number; mb: number }> = [];
  const clients: Client[] = [];
  const watchers: Array<{ ids: Set<string>; close: () => void }> = [];
  try {
    const agents: Agent[] = [];
    for (let i = 0; i < options.agents; i++) {
      const client = await connectSdkClient(url, `soak-agent-${i}`);
      clients.push(client);
      agents.push({ name: `soak-agent-${i}`, client });
    }
    // Warm the embedder so the first drawer does not stand for the run.
    await sdkCall(agents[0]!.client, 'palace_search', { query: 'warm up', limit: 1 }, 120_000);
    for (let i = 0; i < options.sseWatchers; i++) watchers.push(await openWatcher(url));
    const pollers = Array.from({ length: options.longPollers }, () => connectSdkClient(url, 'soak-poller'));
    const pollerClients = await Promise.all(pollers);
    clients.push(...pollerClients);

    const started = performance.now();
    const t0 = Date.now();
    const until = t0 + options.durationMs;
    const stopAll = { at: Number.POSITIVE_INFINITY };
    const sampler = setInterval(() => {
      try {
        rss.push({ atMs: Date.now() - t0, mb: rssMb(child.pid ?? -1) });
      } catch {
        // the hub is gone: the errors say why
      }
    }, options.rssEveryMs);
    const ticker = setInterval(
      () =>
        say(
          `${Math.round((Date.now() - t0) / 1000)} s: ${rec.samples.get('add_drawer')?.length ?? 0} loops, ${rec.errors.length} errors`,
        ),
      10_000,
    );
    const polls = pollerClients.map(async (c) => {
      while (Date.now() < until)
        await rec.time('long_poll', () =>
          waitCall(c, { to_agent: 'nobody-listens-here', timeout_ms: 3_000 }, rec),
        );
    });
    const half = options.durationMs / 2;
    let hostileStarted = Number.POSITIVE_INFINITY;
    const hostileRun = options.hostile
      ? sleep(half).then(async () => {
          say('hostile load on: stalled SSE readers, a wait flood past the cap, oversized list inputs, issue 29 attacks (glob, escapes, unknown URL, hostile peer)');
          hostileStarted = Date.now() - t0;
          const load = startHostileLoad(url, { ...HOSTILE, replayFrom, palace });
          await sleep(Math.max(0, until - Date.now()));
          return load.stop();
        })
      : Promise.resolve(undefined);
    const done = { loops: 0 };
    const requesters = agents.map((a, i) =>
      requesterLoop(
        a,
        agents[(i + 1) % agents.length]!.name,
        until,
        rec,
        acked,
        done,
        options.drawers ?? true,
      ),
    );
    const workers = agents.map((a) => workerLoop(a, stopAll, rec, acked));
    await Promise.all([...requesters, ...polls]);
    const hostileCounts = await hostileRun;
    const hostileEnded = Date.now() - t0;
    stopAll.at = 0; // requesters are done: workers finish their current wait and stop
    await Promise.all(workers);
    const elapsedMs = performance.now() - started;
    clearInterval(sampler);
    clearInterval(ticker);
    await sleep(500); // the last SSE frames
    for (const w of watchers) w.close();

    let sseMissed = 0;
    for (const w of watchers) for (const id of acked.events) if (!w.ids.has(id)) sseMissed++;
    for (const c of clients.splice(0)) await c.close();
    // Drawers, checked through the hub before it stops.
    const checker = await connectSdkClient(url, 'soak-checker');
    const listed = await sdkCall<{ total: number; drawers: Array<{ drawer_id: string }> }>(
      checker,
      'palace_list_drawers',
      { wing: 'soak', limit: 1000 },
    );
    const seenDrawers = new Map<string, number>();
    let offset = 0;
    for (;;) {
      const page = await sdkCall<{ drawers: Array<{ drawer_id: string }> }>(checker, 'palace_list_drawers', {
        wing: 'soak',
        limit: 1000,
        offset,
      });
      for (const d of page.drawers) seenDrawers.set(d.drawer_id, (seenDrawers.get(d.drawer_id) ?? 0) + 1);
      if (page.drawers.length < 1000) break;
      offset += 1000;
    }
    await checker.close();
    await probe.stop();
    child.kill('SIGTERM');
    await new Promise((resolve) =>
      child.exitCode !== null ? resolve(undefined) : child.once('close', resolve),
    );
    const log = checkLog(palace, acked);

    let lostDrawers = 0;
    for (const id of acked.drawers) if (seenDrawers.get(id) !== 1) lostDrawers++;
    const duplicateDrawers =
      Math.max(0, listed.total - acked.drawers.size) + [...seenDrawers.values()].filter((n) => n > 1).length;
    const ops: Record<string, OpStats> = {};
    let calls = 0;
    for (const [op, list] of rec.samples) {
      calls += list.length;
      ops[op] = { count: list.length, p50: percentile(list, 50), p99: percentile(list, 99) };
    }
    const secondHalf = rss
      .filter((s) => s.atMs >= options.durationMs / 2)
      .map((s) => ({ x: s.atMs / 60_000, y: s.mb }));
    const rssSlope = slope(secondHalf);
    const meanMb = secondHalf.reduce((a, p) => a + p.y, 0) / Math.max(1, secondHalf.length);
    const phase = (from: number, to: number): PhaseFigures => {
      const inPhase = probe.samples.filter((p) => p.atMs - t0 >= from && p.atMs - t0 < to);
      const ms = inPhase.map((p) => p.ms);
      const worst = inPhase.reduce<{ atMs: number; ms: number } | undefined>((w, p) => (!w || p.ms > w.ms ? p : w), undefined);
      return {
        healthzWorstMs: worst?.ms ?? Number.NaN,
        healthzWorstAtMs: worst ? worst.atMs - t0 - from : Number.NaN,
        healthzP99Ms: percentile(ms, 99),
        healthzSamples: ms.length,
        rssMaxMb: Math.max(0, ...rss.filter((p) => p.atMs >= from && p.atMs < to).map((p) => p.mb)),
      };
    };
    if (hostileCounts) rec.errors.push(...hostileCounts.failures.map((f) => `hostile: ${f}`));
    const hostile: HostileReport | undefined = hostileCounts && {
      ...hostileCounts,
      baseline: phase(0, hostileStarted),
      hostile: phase(hostileStarted, hostileEnded),
      waitCap,
      agentWaitRetries: rec.waitRetries,
    };
    return {
      agents: options.agents,
      durationMs: Math.round(elapsedMs),
      loopsCompleted: done.loops,
      loopsPerSecond: (done.loops * 1000) / elapsedMs,
      callsPerSecond: (calls * 1000) / elapsedMs,
      ops,
      errors: rec.errors,
      lostEvents: log.lost,
      duplicateEvents: log.duplicates,
      lostDrawers,
      duplicateDrawers,
      sseMissed,
      rss,
      rssSlopeMbPerMin: rssSlope,
      // Growing: more than 2 MB/min and more than 5% of the mean per minute over the second half (GC noise stays under it).
      rssVerdict: rssSlope > 2 && rssSlope > meanMb * 0.05 ? 'growing' : 'flat',
      healthzWorstMs: Math.max(0, ...probe.samples.filter((p) => p.atMs >= t0).map((p) => p.ms)),
      ...(hostile ? { hostile } : {}),
    };
  } finally {
    await probe.stop();
    for (const w of watchers) w.close();
    for (const c of clients) await c.close().catch(() => undefined);
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    rmSync(root, { recursive: true, force: true });
  }
}

/** The report as text lines, one figure per line. */
export function reportLines(r: SoakReport): string[] {
  const lines = [
    `soak: ${r.agents} agents for ${(r.durationMs / 1000).toFixed(1)} s`,
    `  delegation loops: ${r.loopsCompleted} (${r.loopsPerSecond.toFixed(2)}/s); tool calls ${r.callsPerSecond.toFixed(1)}/s`,
  ];
  for (const [op, s] of Object.entries(r.ops))
    lines.push(
      `  ${op.padEnd(13)} n=${String(s.count).padStart(6)}  p50 ${s.p50.toFixed(1)} ms  p99 ${s.p99.toFixed(1)} ms`,
    );
  lines.push(
    `  errors: ${r.errors.length}${r.errors.length ? ` (first: ${r.errors[0]})` : ''}`,
    `  lost events: ${r.lostEvents}, duplicate events: ${r.duplicateEvents}, lost drawers: ${r.lostDrawers}, duplicate drawers: ${r.duplicateDrawers}, SSE deliveries missed: ${r.sseMissed}`,
    `  hub RSS with its LanceDB child (MB) over time: ${r.rss
      .filter((_, i) => i % Math.max(1, Math.ceil(r.rss.length / 30)) === 0 || i === r.rss.length - 1)
      .map((s) => `${(s.atMs / 1000).toFixed(1)}s=${s.mb.toFixed(0)}`)
      .join(' ')}`,
    `  RSS slope over the second half: ${r.rssSlopeMbPerMin.toFixed(2)} MB/min -> ${r.rssVerdict}`,
    `  worst /healthz latency over the run: ${r.healthzWorstMs.toFixed(1)} ms`,
  );
  const h = r.hostile;
  if (h) {
    const figures = (p: PhaseFigures): string =>
      `/healthz worst ${p.healthzWorstMs.toFixed(1)} ms (${(p.healthzWorstAtMs / 1000).toFixed(1)} s in), p99 ${p.healthzP99Ms.toFixed(1)} ms (n=${p.healthzSamples}); RSS max ${p.rssMaxMb.toFixed(0)} MB`;
    lines.push(
      `  without hostile load (first half):  ${figures(h.baseline)}`,
      `  with hostile load (second half):    ${figures(h.hostile)}`,
      `  hostile: ${h.stalledOpens} stalled SSE opens (${h.sseDrops} dropped with the last error frame), wait flood ${h.waitsAdmitted} admitted / ${h.waitsRefused} refused at cap ${h.waitCap} (agents' waits retried: ${h.agentWaitRetries}), ${h.oversizedRefused} oversized list inputs refused`,
      `  issue 29: ${h.globQueries} reservation queries against a backtracking glob answered, ${h.globsRefused} over-cap globs refused, ${h.escapeBodies} escape-laden bodies stored as data, ${h.unknownRoundsRefused} rounds at an unknown URL refused, ${h.hostilePeerRounds} rounds against a peer serving 10 x 20 MiB artifacts and an endless listing ended, ${h.latePins} late pins after a first-use impostor pulled the real events (forgeries quarantined), ${h.equivocations} equivocations refused`,
      `  worst /healthz under hostile load minus without: ${(h.hostile.healthzWorstMs - h.baseline.healthzWorstMs).toFixed(1)} ms (target <= 50 ms); RSS max growth ${(h.hostile.rssMaxMb - h.baseline.rssMaxMb).toFixed(0)} MB`,
    );
  }
  return lines;
}

/** Whether the run is clean: no errors, nothing lost or duplicated, every SSE watcher saw every write. */
export function soakPassed(r: SoakReport): boolean {
  return (
    r.errors.length === 0 &&
    r.lostEvents === 0 &&
    r.duplicateEvents === 0 &&
    r.lostDrawers === 0 &&
    r.duplicateDrawers === 0 &&
    r.sseMissed === 0
  );
}
