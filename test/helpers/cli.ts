// Runs the real `palace` CLI (`node bin/palace.js`, compiled by `npm run build`) as a child process
// against a temporary HOME and palace directory. No mocks: every call is a separate Node process.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const PALACE_BIN = join(REPO_ROOT, 'bin', 'palace.js');

/** What a finished CLI process left behind. */
export interface CliResult {
  /** Exit code; null when the process was ended by a signal. */
  code: number | null;
  signal: NodeJS.Signals | null;
  /** stdout exactly as written (bytes). */
  stdoutBytes: Buffer;
  /** stdout decoded as UTF-8. */
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** Bytes written to the child's stdin (which is then closed). Without it stdin is closed empty. */
  stdin?: Buffer | string;
  /** Extra environment variables for this call. */
  env?: Record<string, string>;
  /** Kill the child (SIGKILL) after this long; a safety net, never an assertion. Default 60 s. */
  killAfterMs?: number;
  /** Do not add `--palace <dir>` (to test the default from HOME). */
  noPalaceFlag?: boolean;
}

/** A CLI process still running: its output so far, readiness polling, and its eventual result. */
export interface RunningCli {
  child: ChildProcess;
  stdoutSoFar(): string;
  stderrSoFar(): string;
  /** Resolves when stderr matches (or rejects when the process exits first / after `timeoutMs`). */
  waitForStderr(pattern: RegExp | string, timeoutMs?: number): Promise<void>;
  /** Resolves when stdout matches (or rejects when the process exits first / after `timeoutMs`). */
  waitForStdout(pattern: RegExp | string, timeoutMs?: number): Promise<void>;
  done: Promise<CliResult>;
}

/** One temporary HOME plus palace directory; `cleanup()` removes both. */
export interface TempPalace {
  root: string;
  home: string;
  /** `--palace <dir>` passed to every command. */
  dir: string;
  /** `$HOME/.palace`, the state directory. */
  stateDir: string;
  run(args: readonly string[], options?: RunOptions): Promise<CliResult>;
  start(args: readonly string[], options?: RunOptions): RunningCli;
  cleanup(): Promise<void>;
}

/** The environment for a child: this process's, minus every PALACE_* setting, with HOME replaced. */
function childEnvironment(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('PALACE_')) env[key] = value;
  // Tests mine temp dirs outside HOME: the temp dir is their mining root (the default stays HOME).
  return { ...env, HOME: home, USERPROFILE: home, NO_COLOR: '1', PALACE_MINE_ROOTS: tmpdir(), ...extra };
}

function matches(text: string, pattern: RegExp | string): boolean {
  return typeof pattern === 'string' ? text.includes(pattern) : pattern.test(text);
}

/** Spawns `node bin/palace.js ...args` with the given environment. */
export function startCli(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  options: RunOptions = {},
): RunningCli {
  const child = spawn(process.execPath, [PALACE_BIN, ...args], {
    cwd: REPO_ROOT,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const watchers = new Set<() => void>();
  const notify = (): void => {
    for (const w of [...watchers]) w();
  };
  child.stdout.on('data', (chunk: Buffer) => {
    out.push(chunk);
    notify();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    err.push(chunk);
    notify();
  });
  child.stdin.on('error', () => undefined); // the child may exit before reading stdin
  if (options.stdin !== undefined) child.stdin.end(options.stdin);
  else child.stdin.end();

  const killer = setTimeout(() => child.kill('SIGKILL'), options.killAfterMs ?? 60_000);
  let exited = false;
  const done = new Promise<CliResult>((resolve, reject) => {
    child.on('error', (e) => {
      clearTimeout(killer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      exited = true;
      clearTimeout(killer);
      notify();
      const stdoutBytes = Buffer.concat(out);
      resolve({
        code,
        signal,
        stdoutBytes,
        stdout: stdoutBytes.toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      });
    });
  });

  const stdoutSoFar = (): string => Buffer.concat(out).toString('utf8');
  const stderrSoFar = (): string => Buffer.concat(err).toString('utf8');
  const waitFor = (
    read: () => string,
    what: string,
    pattern: RegExp | string,
    timeoutMs = 30_000,
  ): Promise<void> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        if (matches(read(), pattern)) {
          stop();
          resolve();
        } else if (exited) {
          stop();
          reject(
            new Error(`process exited before ${what} matched ${String(pattern)}; stderr: ${stderrSoFar()}`),
          );
        }
      };
      const timer = setTimeout(() => {
        stop();
        reject(
          new Error(
            `${what} did not match ${String(pattern)} within ${timeoutMs} ms; stderr: ${stderrSoFar()}`,
          ),
        );
      }, timeoutMs);
      const stop = (): void => {
        clearTimeout(timer);
        watchers.delete(check);
      };
      watchers.add(check);
      check();
    });
  return {
    child,
    stdoutSoFar,
    stderrSoFar,
    waitForStderr: (pattern, timeoutMs) => waitFor(stderrSoFar, 'stderr', pattern, timeoutMs),
    waitForStdout: (pattern, timeoutMs) => waitFor(stdoutSoFar, 'stdout', pattern, timeoutMs),
    done,
  };
}

/** Creates a temporary HOME and palace directory (the palace itself is created by the first command). */
export function makeTempPalace(prefix = 'palace-cli-'): TempPalace {
  const root = mkdtempSync(join(tmpdir(), prefix));
  const home = join(root, 'home');
  const dir = join(root, 'palace');
  const running = new Set<ChildProcess>();
  const palace: TempPalace = {
    root,
    home,
    dir,
    stateDir: join(home, '.palace'),
    start(args, options = {}) {
      const full = options.noPalaceFlag ? [...args] : ['--palace', dir, ...args];
      const proc = startCli(full, childEnvironment(home, options.env), options);
      running.add(proc.child);
      void proc.done.finally(() => running.delete(proc.child)).catch(() => undefined);
      return proc;
    },
    run(args, options = {}) {
      return palace.start(args, options).done;
    },
    async cleanup() {
      const leftovers = [...running];
      for (const child of leftovers) child.kill('SIGKILL');
      await Promise.all(
        leftovers.map(
          (child) =>
            new Promise<void>((resolve) =>
              child.exitCode !== null || child.signalCode !== null
                ? resolve()
                : child.once('close', () => resolve()),
            ),
        ),
      );
      rmSync(root, { recursive: true, force: true });
    },
  };
  return palace;
}

/** Parses a command's JSON stdout (pretty or single-line). */
export function parseJson<T = Record<string, unknown>>(result: CliResult): T {
  try {
    return JSON.parse(result.stdout) as T;
  } catch {
    throw new Error(
      `stdout is not JSON (exit ${String(result.code)}): ${result.stdout}\nstderr: ${result.stderr}`,
    );
  }
}

/** Parses NDJSON stdout: one JSON value per non-empty line. */
export function parseNdjson<T = Record<string, unknown>>(text: string): T[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as T);
}

/**
 * Resolves once a process has opened the palace's log: SQLite creates `logstream.sqlite3-wal` when
 * the first connection opens in WAL mode and removes it when the last one closes.
 */
export async function waitForLogOpen(palaceDir: string, proc: RunningCli, timeoutMs = 30_000): Promise<void> {
  const wal = join(palaceDir, 'logstream.sqlite3-wal');
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void proc.done.then(() => (exited = true)).catch(() => undefined);
  while (!existsSync(wal)) {
    if (exited) return; // it finished already; the caller asserts on its result
    if (Date.now() > deadline) throw new Error(`${wal} did not appear within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Appends one event through the CLI (`logstream append --json`) and returns it; throws on failure. */
export async function appendEvent(
  palace: TempPalace,
  fields: {
    type: string;
    from: string;
    to?: string;
    stream?: string;
    room?: string;
    correlationId?: string;
    status?: string;
    body?: string;
    extra?: string[];
  },
): Promise<EventJson> {
  const args = [
    'logstream',
    'append',
    '--json',
    '--type',
    fields.type,
    '--stream',
    fields.stream ?? 'project/demo',
    '--room',
    fields.room ?? 'delegation',
    '--from-agent',
    fields.from,
  ];
  if (fields.to !== undefined) args.push('--to-agent', fields.to);
  if (fields.correlationId !== undefined) args.push('--correlation-id', fields.correlationId);
  if (fields.status !== undefined) args.push('--status', fields.status);
  if (fields.body !== undefined) args.push('--body', fields.body);
  args.push(...(fields.extra ?? []));
  const result = await palace.run(args);
  if (result.code !== 0)
    throw new Error(`append failed (exit ${String(result.code)}): ${result.stdout} ${result.stderr}`);
  return parseJson<EventJson>(result);
}

/** Minimal shapes of the CLI's JSON output used by the tests. */
export interface EventJson {
  id: string;
  seq: number;
  type: string;
  stream: string;
  room: string;
  from_agent: string;
  to_agent: string | null;
  correlation_id: string | null;
  status: string | null;
  artifact_ids: string[];
  body: string;
  metadata: Record<string, unknown>;
  body_truncated?: boolean;
  body_length?: number;
}

export interface PageJson {
  events: EventJson[];
  count: number;
  has_more?: boolean;
  cursor: string | null;
  timed_out?: boolean;
}

export interface ErrorJson {
  error: { code: string; message: string; field?: string };
}
