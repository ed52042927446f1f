// The `cli` benchmark suite (issue 18): wall time of real `palace` processes (spawn -> exit) against a
// bare `node -e 0` timed the same way in the same run, alternating, with and without a live hub; and
// the bytes of tools/list per tool profile (what each agent session loads into its context).

import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import type { Figure, Suite, SuiteContext, SuiteResult } from './figure.js';
import { percentile, sleep } from './stats.js';

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
      for (const c of cases.slice(1)) measure(c, ' (live hub)');
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
    notes.push(
      `Each figure is the median wall time of ${RUNS} \`node bin/palace.js …\` processes (after ${WARMUP} warm-ups) over the median of as many \`node -e 0\` runs, alternating, as a ratio. ` +
        'A command loads only its own command module (cli/command-index.ts). With a live hub, logstream commands still read and write the SQLite log directly (WAL), and the hub wakes its waiters from the change feed. ' +
        'tools/list bytes: the JSON of the tools array a client receives (KB = 1,024 bytes).',
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  return { figures, notes };
}

export const cliSuite: Suite = { name: 'cli', title: 'CLI start-up and tool surface', run };
