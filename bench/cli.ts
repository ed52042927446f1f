// The `cli` benchmark suite (issue 18): wall time of real `palace` processes (spawn -> exit) against a
// bare `node -e 0` timed the same way in the same run, alternating, with and without a live hub; the
// bytes of tools/list per tool profile; and a 1 MiB artifact get against a bare SELECT of the blob.

import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { Logstream } from '../hub/src/logstream/logstream.js';
import { BareDb } from './bare-sqlite.js';
import type { Figure, Suite, SuiteContext, SuiteResult } from './figure.js';
import { percentile, sleep, timeEach } from './stats.js';

const PALACE_BIN = fileURLToPath(new URL('../../bin/palace.js', import.meta.url));
const RUNS = 15;
const WARMUP = 2;

interface Case {
  name: string;
  args: string[];
  target: number;
  hub: boolean;
}

function envFor(home: string, palace: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('PALACE_')) env[key] = value;
  return { ...env, HOME: home, PALACE_HOME: join(home, '.palace'), PALACE_PALACE_PATH: palace, PALACE_MCP_IDLE_HOURS: '0' };
}

/** Wall ms of one process from spawn to exit; throws on a non-zero exit. */
function timeRun(args: readonly string[], env: NodeJS.ProcessEnv): number {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} exited ${r.status}: ${r.stderr.slice(0, 300)}`);
  return ms;
}

/** Median wall ms of the command and of `node -e 0`, runs alternating. */
function compare(args: readonly string[], env: NodeJS.ProcessEnv): { cli: number; bare: number } {
  const cli: number[] = [];
  const bare: number[] = [];
  for (let i = 0; i < WARMUP + RUNS; i++) {
    const c = timeRun([PALACE_BIN, ...args], env);
    const b = timeRun(['-e', '0'], env);
    if (i < WARMUP) continue;
    cli.push(c);
    bare.push(b);
  }
  return { cli: percentile(cli, 50), bare: percentile(bare, 50) };
}

async function startHub(env: NodeJS.ProcessEnv): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [PALACE_BIN, 'serve', '--port', '0'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /listening: (https?:\/\/\S+)/.exec(out);
      if (m?.[1]) resolve(m[1]);
    });
    void exited.then(() => reject(new Error('the hub exited before listening')));
  });
  for (let i = 0; i < 200; i++) {
    const ok = await fetch(`${url}/healthz`).then((r) => r.ok, () => false);
    if (ok) break;
    await sleep(10);
  }
  return {
    url,
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function toolListBytes(url: string, path: string): Promise<number> {
  const client = new Client({ name: 'bench-cli', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}${path}`)));
  try {
    const { tools } = await client.listTools();
    return Buffer.byteLength(JSON.stringify({ tools }));
  } finally {
    await client.close();
  }
}

/** Resident memory of a live process (Linux /proc), MB. */
function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m?.[1]) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(m[1]) / 1024;
}

const MCP_RSS_RUNS = 3;

/**
 * An idle `palace mcp` that has forwarded initialize and tools/list to the live hub, 1.5 s later,
 * against a bare `node -e 'setInterval(() => {}, 1000)'` started beside it: RSS, the median of a few pairs.
 */
async function mcpRssFigure(ctx: SuiteContext, env: NodeJS.ProcessEnv): Promise<Figure> {
  ctx.progress(`palace mcp idle RSS while forwarding: ${MCP_RSS_RUNS} pairs with a bare node`);
  const ratios: Array<{ mcp: number; bare: number }> = [];
  for (let i = 0; i < MCP_RSS_RUNS; i++) {
    const mcp = spawn(process.execPath, [PALACE_BIN, 'mcp'], { env, stdio: ['pipe', 'pipe', 'ignore'] });
    const bare = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    try {
      let answers = '';
      mcp.stdout.on('data', (c: Buffer) => (answers += c.toString('utf8')));
      const frame = (m: unknown): boolean => mcp.stdin.write(`${JSON.stringify(m)}\n`);
      frame({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } });
      frame({ jsonrpc: '2.0', method: 'notifications/initialized' });
      frame({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
      for (let t = 0; t < 300 && (answers.match(/\n/g) ?? []).length < 2; t++) await sleep(50);
      if ((answers.match(/\n/g) ?? []).length < 2) throw new Error('palace mcp did not answer initialize and tools/list');
      await sleep(1_500);
      ratios.push({ mcp: rssMb(mcp.pid ?? 0), bare: rssMb(bare.pid ?? 0) });
    } finally {
      mcp.kill();
      bare.kill();
    }
  }
  const mcp = percentile(ratios.map((r) => r.mcp), 50);
  const bare = percentile(ratios.map((r) => r.bare), 50);
  return {
    name: 'palace mcp idle while forwarding to the live hub: RSS, median',
    value: mcp / bare,
    unit: 'x',
    reference: { value: 1, label: `a bare idle node (${bare.toFixed(0)} MB; palace mcp ${mcp.toFixed(0)} MB)`, measured: true },
    target: { op: '<=', value: 1.5, note: 'issue 31' },
  };
}

const MIB = 1024 * 1024;
const GETS = 50;

/**
 * 1 MiB `artifact get` in-process (Logstream.getArtifactBytes: the stored bytes as a Buffer) against a
 * bare `SELECT CAST(content AS BLOB)` of the same content from a one-table database, alternating.
 */
function artifactGetFigure(ctx: SuiteContext, root: string): Figure {
  ctx.progress(`artifact get: ${GETS} gets of 1 MiB, alternating with a bare SELECT`);
  mkdirSync(join(root, 'artifact-bare'), { recursive: true });
  const log = Logstream.open(join(root, 'artifact-palace'));
  const bare = new BareDb(join(root, 'artifact-bare'));
  const palace: number[] = [];
  const raw: number[] = [];
  try {
    const line = '+  const value = await store.read(key); // a line of a patch, ASCII\n';
    const content = line.repeat(Math.ceil(MIB / line.length)).slice(0, MIB);
    const { id } = log.putArtifact({ kind: 'file', created_by: 'bench', content });
    bare.putArtifact('art_bench', content);
    const get = {
      palace: (): number => log.getArtifactBytes(id).bytes.length,
      bare: (): number => bare.artifactBytes('art_bench').length,
    };
    if (get.palace() !== MIB || get.bare() !== MIB) throw new Error('artifact get returned the wrong size');
    for (let i = 0; i < GETS + 5; i++) {
      const order = i % 2 === 0 ? (['palace', 'bare'] as const) : (['bare', 'palace'] as const);
      const [first = Number.NaN, second = Number.NaN] = timeEach(order, (which) => get[which]());
      if (i < 5) continue;
      palace.push(i % 2 === 0 ? first : second);
      raw.push(i % 2 === 0 ? second : first);
    }
  } finally {
    log.close();
    bare.close();
  }
  const p = percentile(palace, 50);
  const b = percentile(raw, 50);
  return {
    name: '1 MiB artifact get (Logstream.getArtifactBytes, in-process) p50',
    value: p / b,
    unit: 'x',
    reference: { value: 1, label: `bare SELECT CAST(content AS BLOB) of the same row (${b.toFixed(3)} ms; palace ${p.toFixed(3)} ms)`, measured: true },
    target: { op: '<=', value: 1.5, note: 'issue 18' },
  };
}

const APPEND = [
  'logstream', 'append', '--type', 'status', '--stream', 'project/bench', '--room', 'status', '--from-agent', 'bench-a', '--body', 'hello',
];

async function run(ctx: SuiteContext): Promise<SuiteResult> {
  const root = mkdtempSync(join(tmpdir(), 'palace-bench-cli-'));
  const home = join(root, 'home');
  mkdirSync(join(home, '.palace'), { recursive: true });
  const env = envFor(home, join(root, 'palace'));
  const figures: Figure[] = [];
  const notes: string[] = [];
  try {
    timeRun([PALACE_BIN, ...APPEND], env); // creates the log
    const cases: Case[] = [
      { name: 'palace --version', args: ['--version'], target: 1.5, hub: false },
      { name: 'palace --help', args: ['--help'], target: 1.5, hub: false },
      { name: 'palace logstream list --limit 1 --json', args: ['logstream', 'list', '--limit', '1', '--json'], target: 2.5, hub: false },
      { name: 'palace logstream append', args: APPEND, target: 2.5, hub: false },
    ];
    const measure = (c: Case, suffix: string): void => {
      ctx.progress(`${c.name}${suffix}: ${RUNS} runs alternating with node -e 0`);
      const { cli, bare } = compare(c.args, env);
      figures.push({
        name: `${c.name}${suffix}: spawn -> exit, median`,
        value: cli / bare,
        unit: 'x',
        reference: { value: 1, label: `node -e 0 (${bare.toFixed(0)} ms; palace ${cli.toFixed(0)} ms)`, measured: true },
        target: { op: '<=', value: c.target, note: 'issue 18' },
      });
    };
    for (const c of cases) measure(c, ' (no hub)');
    const hub = await startHub(env);
    try {
      for (const c of cases.slice(2)) measure(c, ' (live hub)');
      figures.push(await mcpRssFigure(ctx, env));
      // A Stop hook hands the transcript to the hub (a background mine) and returns; the first run
      // mines it, later runs find it unchanged.
      const transcript = join(root, 'session.jsonl');
      writeFileSync(transcript, `${JSON.stringify({ type: 'user', message: { role: 'user', content: 'hello palace' } })}\n`);
      const hook: Case = { name: 'palace hook run --hook stop', args: ['hook', 'run', '--hook', 'stop', '--transcript', transcript], target: 2.5, hub: true };
      timeRun([PALACE_BIN, ...hook.args], env);
      await sleep(3_000);
      measure(hook, ' (live hub)');
      for (const [profile, path] of [['full', '/mcp'], ['lean', '/mcp?profile=lean']] as const) {
        const bytes = await toolListBytes(hub.url, path);
        figures.push({
          name: `tools/list bytes, ${profile} profile`,
          value: bytes / 1024,
          unit: 'KB',
          ...(profile === 'lean' ? { target: { op: '<=' as const, value: 10, note: 'issue 18' } } : {}),
        });
      }
    } finally {
      await hub.stop();
    }
    figures.push(artifactGetFigure(ctx, root));
    notes.push(
      `Each figure is the median wall time of ${RUNS} \`node bin/palace.js …\` processes (after ${WARMUP} warm-ups) over the median of as many \`node -e 0\` runs, alternating, as a ratio. ` +
        'A command loads only its own command module (cli/command-index.ts); logstream, artifact and hook commands start from the CLI bundle (dist/cli/palace.bundle.cjs) with its V8 code cache, --version from the compiled CLI, --help from the text the build wrote (dist/cli/help.txt; docs/cli.md, Start-up). The mcp row: RSS of an idle `palace mcp` after forwarding initialize and tools/list to the live hub (it loads only the pass-through: no SQLite, LanceDB, zod or tool registry, and node:http instead of fetch), over a bare idle node started beside it, the median of 3 pairs. With a live hub, logstream append/list/wait/ack and artifact commands are MCP calls to the hub through the typed hub client (the hub wakes its waiters at once); with none, the called tool alone is served in-process over an in-memory MCP transport (buildServer\'s registration code, its zod schema). ' +
        'The hook row: `palace hook run --hook stop --transcript <1-line session>` against the live hub (a background mine is queued; the transcript was mined once before timing, so later runs find it unchanged). ' +
        'Artifact get: the median of 50 in-process gets of one 1 MiB artifact (Logstream.getArtifactBytes: metadata plus the stored bytes as a Buffer, no string round trip) over the median of as many bare `SELECT CAST(content AS BLOB)` of the same content from a one-table database, alternating. ' +
        'tools/list bytes: the JSON of the tools array a client receives (KB = 1,024 bytes).',
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  return { figures, notes };
}

export const cliSuite: Suite = { name: 'cli', title: 'CLI start-up and tool surface', run };
