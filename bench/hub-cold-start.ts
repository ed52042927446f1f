// Hub cold start: spawn `node bin/palace.js --palace <fresh dir> serve --port 0` (HOME and
// PALACE_HOME in temp dirs), read the address from its stdout, and time until GET /healthz answers
// 200; then its idle RSS from /proc/<pid>/status. The reference is a bare
// `node -e "http.createServer(...).listen(0)"` timed the same way in the same run, runs alternating.
// Also `npm start -- --port 0` on the built, unchanged tree (its build step must find nothing to do).

import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import type { Figure, SuiteContext } from './figure.js';
import { percentile, sleep } from './stats.js';

const RUNS = 5;
const IDLE_BEFORE_RSS_MS = 1_000;
const START_TIMEOUT_MS = 20_000;
const PALACE_BIN = fileURLToPath(new URL('../../bin/palace.js', import.meta.url));
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const NPM_START_RUNS = 3;
const NPM_START_TARGET_MS = 2_000;

const BARE_SCRIPT = [
  "const s = require('http').createServer((q, r) => r.end('ok'));",
  "s.listen(0, '127.0.0.1', () => process.stdout.write('listening: http://127.0.0.1:' + s.address().port + '\\n'));",
].join(' ');

interface Start {
  /** ms from spawn() to the first 200 from /healthz. */
  readyMs: number;
  /** VmRSS in MB (10^6 bytes) after IDLE_BEFORE_RSS_MS of idling; NaN where /proc is missing. */
  rssMB: number;
}

function vmRssMB(pid: number): number {
  try {
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match?.[1] ? (Number(match[1]) * 1024) / 1e6 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

async function healthz(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/healthz`);
    return res.status === 200 && (await res.text()) === 'ok';
  } catch {
    return false;
  }
}

/** Spawns `command args`, times spawn -> first /healthz 200 (address from its stdout), reads RSS, stops it. */
async function timeStart(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  command: string = process.execPath,
): Promise<Start> {
  const t0 = performance.now();
  // Its own process group, so stopping `npm start` also stops the hub npm started.
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'], cwd: ROOT, detached: true });
  const stop = (signal: NodeJS.Signals): void => {
    try {
      if (child.pid) process.kill(-child.pid, signal);
    } catch {
      // already gone
    }
  };
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const address = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
      const match = /listening: (https?:\/\/\S+)/.exec(stdout);
      if (match?.[1]) resolve(match[1]);
    });
    void exited.then((code) =>
      reject(new Error(`exited (code ${code}) before listening: ${stderr.slice(0, 500)}`)),
    );
    setTimeout(
      () => reject(new Error(`no address on stdout within ${START_TIMEOUT_MS} ms`)),
      START_TIMEOUT_MS,
    ).unref();
  });
  try {
    const url = await address;
    while (!(await healthz(url))) {
      if (performance.now() - t0 > START_TIMEOUT_MS) throw new Error('/healthz never answered 200');
      await sleep(2);
    }
    const readyMs = performance.now() - t0;
    await sleep(IDLE_BEFORE_RSS_MS);
    return { readyMs, rssMB: child.pid ? vmRssMB(child.pid) : Number.NaN };
  } finally {
    stop('SIGTERM');
    const killer = setTimeout(() => stop('SIGKILL'), 5_000);
    await exited;
    clearTimeout(killer);
  }
}

/** This process's environment minus PALACE_*, with HOME and PALACE_HOME under `home`. */
function childEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('PALACE_')) env[key] = value;
  return {
    ...env,
    HOME: home,
    USERPROFILE: home,
    PALACE_HOME: join(home, '.palace'),
    PALACE_MCP_IDLE_HOURS: '0',
  };
}

/** The cold-start figures as failures (n/a), when `palace serve` could not be started at all. */
export function coldStartFailed(error: Error): { figures: Figure[]; notes: string[] } {
  return {
    figures: [
      {
        name: 'hub cold start: spawn -> /healthz 200, median',
        value: Number.NaN,
        unit: 'ms',
        target: { op: '<=', value: 1_500 },
      },
      {
        name: `hub idle RSS ${IDLE_BEFORE_RSS_MS / 1000} s after start, median`,
        value: Number.NaN,
        unit: 'MB',
        target: { op: '<=', value: 150 },
      },
    ],
    notes: [`Cold start: \`palace serve\` did not start: ${error.message.split('\n').slice(0, 3).join(' ')}`],
  };
}

export async function coldStartFigures(
  ctx: SuiteContext,
  tempDir: (name: string) => string,
): Promise<{ figures: Figure[]; notes: string[] }> {
  ctx.progress(
    `cold start: 1 warm-up + ${RUNS} runs of palace serve and of a bare node http server, alternating`,
  );
  const hub: Start[] = [];
  const bare: Start[] = [];
  for (let run = 0; run <= RUNS; run++) {
    const root = tempDir(`cold-${run}`);
    const home = join(root, 'home');
    const palace = join(root, 'palace');
    mkdirSync(join(home, '.palace'), { recursive: true });
    const h = await timeStart([PALACE_BIN, '--palace', palace, 'serve', '--port', '0'], childEnv(home));
    const b = await timeStart(['-e', BARE_SCRIPT], childEnv(home));
    if (run === 0) continue; // warm-up: loads the files into the page cache
    hub.push(h);
    bare.push(b);
  }
  ctx.progress(`npm start: ${NPM_START_RUNS} runs of \`npm start -- --port 0\` on the built tree`);
  const npmStarts: Start[] = [];
  for (let run = 0; run < NPM_START_RUNS; run++) {
    const root = tempDir(`npm-start-${run}`);
    const home = join(root, 'home');
    mkdirSync(join(home, '.palace'), { recursive: true });
    const env = { ...childEnv(home), PALACE_PALACE_PATH: join(root, 'palace') };
    npmStarts.push(await timeStart(['start', '--silent', '--', '--port', '0'], env, NPM));
  }
  const median = (xs: Start[], key: keyof Start): number =>
    percentile(
      xs.map((x) => x[key]),
      50,
    );
  const list = (xs: Start[]): string => xs.map((x) => x.readyMs.toFixed(0)).join(', ');
  return {
    figures: [
      {
        name: 'hub cold start: spawn -> /healthz 200, median',
        value: median(hub, 'readyMs'),
        unit: 'ms',
        reference: {
          value: median(bare, 'readyMs'),
          label: 'node -e http.createServer().listen(0), spawn -> first 200',
          measured: true,
        },
        target: { op: '<=', value: 1_500 },
      },
      {
        name: `hub idle RSS ${IDLE_BEFORE_RSS_MS / 1000} s after start, median`,
        value: median(hub, 'rssMB'),
        unit: 'MB',
        reference: {
          value: median(bare, 'rssMB'),
          label: 'the bare node http server, same moment',
          measured: true,
        },
        target: { op: '<=', value: 150 },
      },
      {
        name: '`npm start` on a built, unchanged tree: spawn -> /healthz 200, median',
        value: median(npmStarts, 'readyMs'),
        unit: 'ms',
        reference: {
          value: median(hub, 'readyMs'),
          label: 'node bin/palace.js serve, the same moment (above)',
          measured: true,
        },
        target: { op: '<=', value: NPM_START_TARGET_MS, note: 'issue 18' },
      },
    ],
    notes: [
      `npm start: ${NPM_START_RUNS} runs of \`npm start --silent -- --port 0\` (PALACE_PALACE_PATH in a fresh temp dir); ` +
        'scripts/build-if-stale.mjs fingerprints the build inputs and skips the build when dist/ was built from them. ' +
        `Runs (ms): ${list(npmStarts)}.`,
      `Cold start: ${RUNS} runs after one warm-up (page cache), each \`node bin/palace.js --palace <fresh dir> serve --port 0\`` +
        ' with HOME/PALACE_HOME in a fresh temp dir (so it creates the log, takes the lease, writes the registration);' +
        ' the address is read from its stdout and /healthz polled every 2 ms. Hub runs (ms): ' +
        `${list(hub)}; bare: ${list(bare)}. RSS is VmRSS from /proc/<pid>/status (kB = KiB) in MB of 10^6 bytes.`,
    ],
  };
}
