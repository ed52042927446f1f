// The `scale` benchmark suite: a palace a year old (1M events, 200k drawers; PALACE_BENCH_SCALE
// shrinks it) built once and cached (scale-build.ts). Starts `palace serve` on it as a child process
// (cold start), then times every user-facing read (p50/p99) while polling /healthz concurrently, and
// the dashboard's first paint (Chromium, when installed) on each freshly started hub.

import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';

import { IN_FLIGHT_STATUSES, stalledFilter } from '../hub/src/core/task-state.js';
import { Logstream } from '../hub/src/logstream/logstream.js';
import { hasChromium, launchBrowser, type TestBrowser } from '../test/helpers/browser.js';
import { benchConfig } from './bench-config.js';
import type { Figure, Suite, SuiteContext, SuiteResult } from './figure.js';
import { connectSdkClient, sdkCall } from './hub-clients.js';
import { scalePalace, type ScalePalace } from './scale-build.js';
import { percentile, sleep } from './stats.js';

const PALACE_BIN = fileURLToPath(new URL('../../bin/palace.js', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RUNS = 30;
const WARMUP = 3;
const READ_TARGET_MS = 50;
const HEALTHZ_TARGET_MS = 50;
const COLD_START_TARGET_MS = 3_000;
const FIRST_PAINT_TARGET_MS = 2_000;
/** The Tasks view has painted its table and the true count of every task (a number in the "All" chip). */
const TASKS_PAINTED = `/\\d/.test(document.querySelector('[data-testid="task-chip-all"] .chip-count')?.textContent ?? '')`;
const START_TIMEOUT_MS = 120_000;

interface Child {
  url: string;
  readyMs: number;
  stop(): Promise<void>;
}

function childEnv(home: string, tree: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('PALACE_')) env[key] = value;
  return { ...env, HOME: home, PALACE_HOME: join(home, '.palace'), PALACE_MCP_IDLE_HOURS: '0', PALACE_MINE_ROOTS: tree };
}

/** Spawns `palace serve` on the palace; ready when /healthz answers 200. */
async function startChild(palace: string, env: NodeJS.ProcessEnv): Promise<Child> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [PALACE_BIN, '--palace', palace, 'serve', '--port', '0'], { env, stdio: ['ignore', 'pipe', 'pipe'], cwd: ROOT });
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const stop = async (): Promise<void> => {
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(killer);
  };
  try {
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (c: Buffer) => {
        stdout += c.toString();
        const match = /listening: (https?:\/\/\S+)/.exec(stdout);
        if (match?.[1]) resolve(match[1]);
      });
      void exited.then(() => reject(new Error(`palace serve exited before listening: ${stderr.slice(0, 500)}`)));
      setTimeout(() => reject(new Error('palace serve printed no address in time')), START_TIMEOUT_MS).unref();
    });
    for (;;) {
      const ok = await fetch(`${url}/healthz`).then((r) => r.status === 200, () => false);
      if (ok) break;
      if (performance.now() - t0 > START_TIMEOUT_MS) throw new Error('/healthz never answered');
      await sleep(2);
    }
    return { url, readyMs: performance.now() - t0, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Polls /healthz back to back until stopped; returns the worst latency seen. */
function pollHealthz(url: string): { stop(): Promise<number> } {
  let running = true;
  let worst = 0;
  const loop = (async () => {
    while (running) {
      const t = performance.now();
      await fetch(`${url}/healthz`).then((r) => r.text(), () => '');
      worst = Math.max(worst, performance.now() - t);
      await sleep(1);
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return worst;
    },
  };
}

interface Read {
  name: string;
  /** How the read is made (shown in the notes). */
  how: string;
  run(): Promise<unknown>;
  targeted: boolean;
}

async function getJson(url: string): Promise<unknown> {
  const res = await fetch(url);
  if (res.status !== 200) throw new Error(`${url}: HTTP ${res.status} ${(await res.text()).slice(0, 200)}`);
  return res.json();
}

function diskBytes(path: string): number {
  const s = statSync(path);
  if (!s.isDirectory()) return s.size;
  return readdirSync(path).reduce((n, name) => n + diskBytes(join(path, name)), 0);
}

/** From opening the dashboard on a hub that has just answered /healthz to its Tasks view painted with counts. */
async function firstPaint(browser: TestBrowser, url: string): Promise<number> {
  const t = performance.now();
  await browser.page.goto(`${url}/ui/#/tasks`);
  await browser.page.getByTestId('task-table').waitFor({ timeout: START_TIMEOUT_MS });
  await browser.page.waitForFunction(TASKS_PAINTED, null, { timeout: START_TIMEOUT_MS });
  return performance.now() - t;
}

/**
 * From the painted Tasks view, the Status view until its memory counts are shown (the hub loads its
 * store, census and embedder on that first ask): ms. With `dir`, both views are saved there as PNGs.
 */
async function statusCounts(browser: TestBrowser, dir: string | undefined): Promise<number> {
  if (dir) {
    mkdirSync(dir, { recursive: true });
    await browser.page.screenshot({ path: join(dir, 'scale-tasks.png') });
  }
  const t = performance.now();
  await browser.page.getByTestId('nav-status').click();
  await browser.page.getByTestId('memory-counts').getByText('Drawers').waitFor({ timeout: 300_000 });
  const ms = performance.now() - t;
  if (dir) await browser.page.screenshot({ path: join(dir, 'scale-status.png'), fullPage: true });
  return ms;
}

async function measure(ctx: SuiteContext, url: string, read: Read): Promise<Figure[]> {
  try {
    for (let i = 0; i < WARMUP; i++) await read.run();
  } catch (err) {
    ctx.progress(`${read.name}: not measured: ${(err as Error).message.slice(0, 200)}`);
    return [{ name: `${read.name} p50 (n/a: ${(err as Error).message.slice(0, 80)})`, value: Number.NaN, unit: 'ms', ...(read.targeted ? { target: { op: '<=', value: READ_TARGET_MS } } : {}) }];
  }
  const poll = pollHealthz(url);
  const samples: number[] = [];
  const timed = (async () => {
    for (let i = 0; i < RUNS; i++) {
      const t = performance.now();
      await read.run();
      samples.push(performance.now() - t);
    }
  })();
  await timed.catch(() => undefined);
  const worst = await poll.stop();
  await timed;
  ctx.progress(`${read.name}: p50 ${percentile(samples, 50).toFixed(1)} ms, p99 ${percentile(samples, 99).toFixed(1)} ms, worst /healthz ${worst.toFixed(1)} ms`);
  return [
    { name: `${read.name} p50`, value: percentile(samples, 50), unit: 'ms', ...(read.targeted ? { target: { op: '<=', value: READ_TARGET_MS } } : {}) },
    { name: `${read.name} p99`, value: percentile(samples, 99), unit: 'ms' },
    { name: `${read.name}: worst /healthz meanwhile`, value: worst, unit: 'ms', target: { op: '<=', value: HEALTHZ_TARGET_MS } },
  ];
}

const SEARCH_ARGS = { query: 'how is the writer lease kept', limit: 5 };

/**
 * A freshly started hub: the first ask that opens memory (store, census, embedder), then the first
 * search, which reads the term associations its query needs from the palace's counts
 * (search/association-store.ts; nothing is built at start). Each with the worst /healthz while it
 * runs. Their own times are one-offs, reported without a target.
 */
async function firstSearch(ctx: SuiteContext, url: string, client: Client): Promise<Figure[]> {
  const figures: Figure[] = [];
  const steps: Array<[string, () => Promise<unknown>]> = [
    ['memory opened on the freshly started hub (palace_status with memory counts, first ask)', () => sdkCall(client, 'palace_status', { include_memory: true }, 300_000)],
    ['first search on that hub (reads the term associations it needs from disk)', () => sdkCall(client, 'palace_search', SEARCH_ARGS, 300_000)],
  ];
  for (const [name, run] of steps) {
    const poll = pollHealthz(url);
    const t = performance.now();
    const error = await run().then(
      () => '',
      (err: unknown) => (err as Error).message.slice(0, 80),
    );
    const ms = performance.now() - t;
    const worst = await poll.stop();
    ctx.progress(`${name}: ${error ? `failed: ${error}` : `${ms.toFixed(0)} ms`}, worst /healthz ${worst.toFixed(1)} ms`);
    figures.push(
      { name: error ? `${name} (n/a: ${error})` : name, value: error ? Number.NaN : ms, unit: 'ms' },
      { name: `${name}: worst /healthz meanwhile`, value: worst, unit: 'ms', target: { op: '<=', value: HEALTHZ_TARGET_MS } },
    );
  }
  return figures;
}

function reads(p: ScalePalace, url: string, client: Client, log: Logstream): Read[] {
  const call = (name: string, args: Record<string, unknown>) => () => sdkCall(client, name, args, 120_000);
  return [
    { name: '`palace status` (palace_status with memory counts)', how: 'MCP palace_status {include_memory: true}', run: call('palace_status', { include_memory: true }), targeted: true },
    { name: 'wings (palace_list_wings)', how: 'MCP palace_list_wings', run: call('palace_list_wings', {}), targeted: true },
    { name: 'taxonomy (palace_get_taxonomy)', how: 'MCP palace_get_taxonomy', run: call('palace_get_taxonomy', {}), targeted: true },
    { name: 'GET /status/fast', how: 'HTTP GET /status/fast', run: () => getJson(`${url}/status/fast`), targeted: true },
    { name: `GET /list?wing=${p.listWing} (first page)`, how: `HTTP GET /list?wing=${p.listWing}&limit=50`, run: () => getJson(`${url}/list?wing=${p.listWing}&limit=50`), targeted: true },
    { name: 'wake-up (palace_wakeup)', how: 'MCP palace_wakeup {}', run: call('palace_wakeup', {}), targeted: true },
    {
      name: `mined-files check, unchanged tree (${p.treeFiles} files)`,
      how: `MCP palace_mine {source: tree, wing: ${p.treeWing}, dry_run: true}`,
      run: async () => {
        const r = await sdkCall<{ files_unchanged: number; files_seen: number }>(client, 'palace_mine', { source: p.tree, wing: p.treeWing, dry_run: true }, 120_000);
        if (r.files_unchanged !== r.files_seen) throw new Error(`the tree is not unchanged: ${JSON.stringify(r)}`);
      },
      targeted: true,
    },
    { name: 'palace_status (no memory)', how: 'MCP palace_status {}', run: call('palace_status', {}), targeted: true },
    { name: 'palace_tasks (first page)', how: 'MCP palace_tasks {limit: 50}', run: call('palace_tasks', { limit: 50 }), targeted: true },
    {
      name: 'palace_tasks in flight (first page)',
      how: `MCP palace_tasks {status: [${IN_FLIGHT_STATUSES.map((s) => `'${s}'`).join(', ')}], limit: 100}, as the dashboard's In flight list asks`,
      run: call('palace_tasks', { status: IN_FLIGHT_STATUSES, limit: 100 }),
      targeted: true,
    },
    {
      name: 'stalled count (palace_tasks claimed, quiet 10 min)',
      how: 'MCP palace_tasks {status: claimed, last_event_before: now - 10 min, limit: 1}, as the dashboard counts stalled tasks',
      run: () => sdkCall(client, 'palace_tasks', { ...stalledFilter(Date.now()), limit: 1 }, 120_000),
      targeted: true,
    },
    { name: '`logstream list --limit 50`', how: 'Logstream.list({limit: 50}) on the palace, as the CLI reads it', run: async () => log.list({ limit: 50 }), targeted: true },
    { name: '`logstream task <id>`', how: `Logstream.task('${p.sampleTask}'), as the CLI reads it`, run: async () => log.task(p.sampleTask), targeted: true },
    { name: 'search (palace_search, hybrid, with query embedding)', how: 'MCP palace_search {query, limit: 5}', run: call('palace_search', SEARCH_ARGS), targeted: false },
  ];
}

async function run(ctx: SuiteContext): Promise<SuiteResult> {
  const config = benchConfig();
  const p = await scalePalace(config.cacheDir, config.scale, ctx.progress);
  ctx.progress(p.built ? `built in ${p.buildSeconds.toFixed(0)} s` : `reusing ${p.dir}`);
  const home = mkdtempSync(join(tmpdir(), 'palace-bench-scale-home-'));
  const figures: Figure[] = [];
  const notes: string[] = [];
  try {
    const env = childEnv(home, p.tree);
    const starts: number[] = [];
    const paints: number[] = [];
    let statusMs = Number.NaN;
    let statusError = '';
    let paintError = hasChromium() ? '' : 'no Chromium at /usr/bin/chromium';
    const browser = paintError ? undefined : await launchBrowser();
    try {
      for (let i = 0; i < 3; i++) {
        const c = await startChild(p.palace, env);
        starts.push(c.readyMs);
        try {
          if (browser && !paintError) paints.push(await firstPaint(browser, c.url));
          if (browser && !paintError && i === 2)
            statusMs = await statusCounts(browser, config.screenshots).catch((err: unknown) => {
              statusError = (err as Error).message.split('\n')[0]?.slice(0, 80) ?? 'failed';
              ctx.progress(`status view counts not shown: ${statusError}`);
              return Number.NaN;
            });
        } catch (err) {
          paintError = (err as Error).message.split('\n')[0]?.slice(0, 80) ?? 'failed';
        } finally {
          await c.stop();
        }
      }
    } finally {
      await browser?.close();
    }
    figures.push({ name: 'hub cold start on the scale palace (spawn to /healthz 200, median of 3)', value: percentile(starts, 50), unit: 'ms', target: { op: '<=', value: COLD_START_TARGET_MS } });
    const paintName = 'dashboard first paint on the freshly started hub (Tasks view with counts, median of 3)';
    if (paintError) ctx.progress(`first paint not measured: ${paintError}`);
    figures.push({ name: paintError ? `${paintName} (n/a: ${paintError})` : paintName, value: paintError ? Number.NaN : percentile(paints, 50), unit: 'ms', target: { op: '<=', value: FIRST_PAINT_TARGET_MS } });
    const statusName = 'Status view memory counts on the freshly started hub (click to drawers/wings/rooms shown, third hub)';
    const statusWhy = paintError || statusError;
    // Reported without a target: issue #22 budgets the reads and the first paint, and this is neither;
    // the first ask opens memory (store, census load, embedder). docs/decisions.md.
    figures.push({ name: statusWhy ? `${statusName} (n/a: ${statusWhy})` : statusName, value: statusMs, unit: 'ms' });
    const hub = await startChild(p.palace, env);
    const log = Logstream.open(p.palace);
    let client: Client | undefined;
    try {
      client = await connectSdkClient(hub.url, 'bench-scale');
      figures.push(...(await firstSearch(ctx, hub.url, client)));
      ctx.progress('loading memory (embedder and store)');
      await sdkCall(client, 'palace_status', { include_memory: true }, 300_000);
      for (const read of reads(p, hub.url, client, log)) {
        ctx.progress(`measuring ${read.name}`);
        figures.push(...(await measure(ctx, hub.url, read)));
      }
      notes.push(
        `Reads: ${reads(p, hub.url, client, log)
          .map((r) => `${r.name} = ${r.how}`)
          .join('; ')}.`,
      );
    } finally {
      await client?.close();
      log.close();
      await hub.stop();
    }
    const disk = diskBytes(p.palace) / 1e6;
    figures.push({ name: 'palace on disk', value: disk, unit: 'MB' });
    notes.push(
      `Palace: ${p.events.toLocaleString('en')} events (bench/event-fixtures.ts traffic: task.request, event.ack, note, patch.ready with a ~1 KB patch artifact each, task.update) and ${p.drawers.toLocaleString('en')} drawers with generated 512-d unit vectors written straight into LanceDB (70% mined code in 12 wings x 12 rooms, chats, decisions, notes, diaries), built once and cached in ${p.dir}${p.built ? ` (built in this run in ${p.buildSeconds.toFixed(0)} s)` : ''}.`,
      `First paint: Chromium (headless, launched once) opens /ui/#/tasks as soon as each of the three cold-started hubs answers /healthz; timed until the task table is shown and the "All" chip has its count (the hub's true total). Status view: on the third of those hubs, right after its first paint, a click on Status timed until the memory card shows its counts (the hub opens memory on that first ask: store, census, embedder).`,
      `Hub: \`palace serve --port 0\` as a child process (LanceDB in its own child process, as a long-running hub runs it); each read ${WARMUP} warm-up calls, then ${RUNS} timed calls in a row, one MCP SDK client; /healthz polled back to back from this process while they run.`,
      `Load average (1 min) at the end: ${(loadavg()[0] ?? 0).toFixed(2)}; the machine is shared with other work.`,
    );
    return { figures, notes, ...(config.scale < 1 ? { smoke: `PALACE_BENCH_SCALE=${config.scale}` } : {}) };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

export const scaleSuite: Suite = { name: 'scale', title: 'A palace a year old (1M events, 200k drawers): every read within budget', run };
