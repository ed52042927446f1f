// Wake-up latency of `palace logstream watch --follow` (the real CLI, its own process) from an append
// made here on the same file until the watcher prints the event: the cross-process path of DESIGN.md.

import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import type { Logstream } from '../hub/src/logstream/logstream.js';
import { bodyText } from './event-fixtures.js';
import type { Figure, SuiteContext } from './figure.js';
import { percentile, seededRandom, sleep } from './stats.js';

const ITERATIONS = 60;
const WARMUP = 5;
const MAX_PAUSE_MS = 100;
const TIMEOUT_MS = 5_000;

export async function watchWakeFigures(ctx: SuiteContext, log: Logstream, palaceDir: string, stateDir: string): Promise<Figure[]> {
  ctx.progress(`wake: ${ITERATIONS} wake-ups of a spawned \`palace logstream watch --follow\``);
  const bin = fileURLToPath(new URL('../../bin/palace.js', import.meta.url));
  const agent = 'bench-watcher';
  const child = spawn(
    process.execPath,
    [bin, '--palace', palaceDir, 'logstream', 'watch', '--agent', agent, '--follow', '--json', '--state-file', join(stateDir, 'watch.json')],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const lines: Array<(line: string) => void> = [];
  createInterface({ input: child.stdout }).on('line', (line) => lines.shift()?.(line));
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const nextLine = (): Promise<string> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the watcher printed nothing for ${TIMEOUT_MS} ms; stderr: ${stderr}`)), TIMEOUT_MS);
      lines.push((line) => {
        clearTimeout(timer);
        resolve(line);
      });
      void exited.then((code) => reject(new Error(`the watcher exited (code ${code}); stderr: ${stderr}`)));
    });
  const random = seededRandom(23);
  const samples: number[] = [];
  try {
    // The first run starts at the latest event and says so on stderr (cli/watch.ts); an event appended
    // before that line would fall before its starting point and never be printed, so wait for it.
    for (let i = 0; i < 1_200 && !stderr.includes('Starting at the latest event'); i++) await sleep(25);
    if (!stderr.includes('Starting at the latest event')) throw new Error(`the watcher did not start within 30 s; stderr: ${stderr}`);
    for (let i = 0; i < WARMUP + ITERATIONS; i++) {
      await sleep(random() * MAX_PAUSE_MS);
      const printed = nextLine();
      const t0 = performance.now();
      const event = log.appendNow({ type: 'note', stream: 'palace', room: 'coordination', from_agent: 'bench-local', to_agent: agent, body: bodyText(random) });
      const line = await printed;
      const took = performance.now() - t0;
      if (!line.includes(event.id)) throw new Error(`the watcher printed a batch without ${event.id}`);
      if (i >= WARMUP) samples.push(took);
    }
  } finally {
    child.kill('SIGINT');
    await exited;
  }
  const reference = { value: 127, text: '127-158 ms', label: 'Python reference, polling, from DESIGN.md (not measured here)', measured: false };
  return [
    { name: 'wake `logstream watch --follow` (append here -> line printed by the CLI) p50', value: percentile(samples, 50), unit: 'ms', reference },
    { name: 'wake `logstream watch --follow` (append here -> line printed by the CLI) p99', value: percentile(samples, 99), unit: 'ms', reference: { ...reference, value: 325, text: '325-354 ms' }, target: { op: '<=', value: 300 } },
  ];
}
