// Helpers for hub integration tests: temporary PALACE_HOME + palace directories, an in-process hub
// on port 0, a real child hub process (`node bin/palace.js --palace P serve --port 0`), MCP SDK
// clients over Streamable HTTP and stdio, and a small SSE frame reader. Real ports, files, processes.

import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

import { loadConfig } from '../../hub/src/config.js';
import { silentLogger } from '../../hub/src/log.js';
import {
  isPidAlive,
  readLiveRegistration,
  registrationPath,
  type Registration,
} from '../../hub/src/registration.js';
import { startHub, type Hub, type HubOptions } from '../../hub/src/server.js';

export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const PALACE_BIN = join(REPO_ROOT, 'bin', 'palace.js');
export const PALACE_MCP_BIN = join(REPO_ROOT, 'bin', 'palace-mcp.js');

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export function sha256Hex(text: string): string {
  return createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex');
}

/** A temporary HOME (with PALACE_HOME = HOME/.palace) and palace directory. */
export interface HubDirs {
  root: string;
  /** HOME for child processes. */
  home: string;
  /** PALACE_HOME (the state directory: server/, logs/). */
  palaceHome: string;
  /** The palace directory. */
  palace: string;
  /** The env handed to loadConfig for in-process hubs. */
  env: Record<string, string>;
  cleanup(): void;
}

export function makeHubDirs(prefix = 'palace-hub-'): HubDirs {
  const root = mkdtempSync(join(tmpdir(), prefix));
  const home = join(root, 'home');
  const palaceHome = join(home, '.palace');
  const palace = join(root, 'palace');
  mkdirSync(palaceHome, { recursive: true });
  mkdirSync(palace, { recursive: true });
  return {
    root,
    home,
    palaceHome,
    palace,
    // Tests mine temp dirs outside HOME: the temp dir is their mining root (the default stays HOME).
    env: { PALACE_HOME: palaceHome, PALACE_PALACE_PATH: palace, PALACE_MCP_IDLE_HOURS: '0', PALACE_MINE_ROOTS: tmpdir() },
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** Starts an in-process hub on 127.0.0.1, port 0, over the given directories. */
export async function startTestHub(
  dirs: HubDirs,
  options: Partial<Omit<HubOptions, 'config' | 'log'>> & { env?: Record<string, string> } = {},
): Promise<Hub> {
  const { env, ...rest } = options;
  const config = loadConfig({}, { ...dirs.env, ...env });
  return startHub({ config, log: silentLogger, host: '127.0.0.1', port: 0, ...rest });
}

/** The environment of a child process: this one's minus PALACE_*, with HOME and PALACE_HOME redirected. */
export function childEnv(dirs: HubDirs, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env))
    if (value !== undefined && !key.startsWith('PALACE_')) env[key] = value;
  return {
    ...env,
    HOME: dirs.home,
    USERPROFILE: dirs.home,
    PALACE_HOME: dirs.palaceHome,
    NO_COLOR: '1',
    PALACE_MCP_IDLE_HOURS: '0',
    PALACE_MINE_ROOTS: tmpdir(),
    ...extra,
  };
}

/** A spawned process with its captured output and exit. */
export interface ChildProc {
  child: ChildProcess;
  pid: number;
  stdout(): string;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  isRunning(): boolean;
  /** Why the process is gone, for a failure message: exit code or signal, the hang guard, stderr's tail. */
  describeExit(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
  stop(graceMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const children = new Set<ChildProc>();

/**
 * Spawns `node <script> ...args`; every child is tracked so `killChildren()` can end leftovers.
 * `killAfterMs` is a hang guard: the child is SIGKILLed that long after it started, so a test that
 * keeps a child longer (a long fuzz or soak) must raise it. A guard kill is reported on stderr and in
 * `describeExit()`, never silent.
 */
export function spawnNode(
  script: string,
  args: readonly string[],
  env: Record<string, string>,
  killAfterMs = 120_000,
): ChildProc {
  const child = spawn(process.execPath, [script, ...args], {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout?.on('data', (c: Buffer) => out.push(c));
  child.stderr?.on('data', (c: Buffer) => err.push(c));
  let running = true;
  let guardFired = false;
  let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const killer = setTimeout(() => {
    guardFired = true;
    process.stderr.write(`[test helper] hang guard: SIGKILL to pid ${child.pid} (${script}) after ${killAfterMs} ms\n`);
    child.kill('SIGKILL');
  }, killAfterMs);
  killer.unref();
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('close', (code, signal) => {
      running = false;
      exit = { code, signal };
      clearTimeout(killer);
      resolve({ code, signal });
    });
  });
  const proc: ChildProc = {
    child,
    pid: child.pid ?? -1,
    stdout: () => Buffer.concat(out).toString('utf8'),
    stderr: () => Buffer.concat(err).toString('utf8'),
    exited,
    isRunning: () => running,
    describeExit() {
      if (running) return `pid ${child.pid} is running`;
      const how = exit?.signal ? `signal ${exit.signal}` : `exit code ${exit?.code}`;
      const guard = guardFired ? ` by the test's ${killAfterMs} ms hang guard` : '';
      const tail = Buffer.concat(err).toString('utf8').slice(-2_000);
      return `pid ${child.pid} ended with ${how}${guard}; stderr tail:\n${tail}`;
    },
    async stop(graceMs = 5_000) {
      if (running) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      }
      return exited;
    },
  };
  children.add(proc);
  void exited.then(() => children.delete(proc));
  return proc;
}

/** Kills every child still running (afterEach/afterAll safety net). */
export async function killChildren(): Promise<void> {
  await Promise.all([...children].map((c) => c.stop(2_000)));
}

/** Resolves once `check` returns a value, or throws after `timeoutMs` (a hang guard, not an assertion). */
export async function waitUntil<T>(
  check: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  timeoutMs = 20_000,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(everyMs);
  }
}

export async function healthy(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) });
    return res.status === 200 && (await res.text()).trim() === 'ok';
  } catch {
    return false;
  }
}

/** A child hub process with its registration. */
export interface ChildHub extends ChildProc {
  url: string;
  port: number;
  registration: Registration;
  registrationPath: string;
}

export interface ChildHubOptions {
  /** Extra CLI args after `serve` (default: `--port 0`). */
  args?: readonly string[];
  env?: Record<string, string>;
  /** Script to run (default bin/palace.js with `--palace P serve`). */
  command?: 'serve' | 'palace-mcp-http';
  /** Hang guard (default 120 s): the hub is SIGKILLed this long after it started. */
  killAfterMs?: number;
}

/** Spawns a real hub and resolves when its registration names it and /healthz answers. */
export async function startChildHub(dirs: HubDirs, options: ChildHubOptions = {}): Promise<ChildHub> {
  const extra = options.args ?? ['--port', '0'];
  const proc =
    options.command === 'palace-mcp-http'
      ? spawnNode(
          PALACE_MCP_BIN,
          ['--transport', 'http', '--palace', dirs.palace, ...extra],
          childEnv(dirs, options.env),
          options.killAfterMs,
        )
      : spawnNode(PALACE_BIN, ['--palace', dirs.palace, 'serve', ...extra], childEnv(dirs, options.env), options.killAfterMs);
  const regPath = registrationPath(dirs.palaceHome, dirs.palace);
  try {
    const registration = await waitUntil(
      async () => {
        if (!proc.isRunning()) throw new Error(`hub exited early: ${proc.stderr()}`);
        const r = readLiveRegistration(dirs.palaceHome, dirs.palace);
        if (!r || r.pid !== proc.pid) return undefined;
        const url = `${r.scheme}://127.0.0.1:${r.port}`;
        return (await healthy(url)) ? r : undefined;
      },
      'the child hub to register and answer /healthz',
      30_000,
    );
    return Object.assign(proc, {
      url: `${registration.scheme}://127.0.0.1:${registration.port}`,
      port: registration.port,
      registration,
      registrationPath: regPath,
    });
  } catch (err) {
    await proc.stop(1_000);
    throw err;
  }
}

/** A pid that certainly belonged to a process which has exited. */
export async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  const pid = child.pid ?? 0;
  await new Promise((resolve) => child.once('close', resolve));
  await waitUntil(() => !isPidAlive(pid), 'the short-lived process to be reaped');
  return pid;
}

/** Connects an SDK client to `<url>/mcp`, with an optional bearer token. */
export async function connectHttpClient(
  url: string,
  options: { token?: string; name?: string } = {},
): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), {
    requestInit: options.token ? { headers: { Authorization: `Bearer ${options.token}` } } : {},
  });
  const client = new Client({ name: options.name ?? 'palace-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** Connects an SDK client to `palace --palace P mcp` over stdio. */
export async function connectStdioClient(
  dirs: HubDirs,
  options: { env?: Record<string, string>; name?: string } = {},
): Promise<{ client: Client; transport: StdioClientTransport; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [PALACE_BIN, '--palace', dirs.palace, 'mcp'],
    env: childEnv(dirs, options.env),
    cwd: REPO_ROOT,
    stderr: 'pipe',
  });
  const errs: Buffer[] = [];
  transport.stderr?.on('data', (c: Buffer) => errs.push(c));
  const client = new Client({ name: options.name ?? 'palace-stdio-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport, stderr: () => Buffer.concat(errs).toString('utf8') };
}

/** The JSON text of a tool result's first content block, parsed. */
export function resultJson<T = Record<string, unknown>>(result: unknown): T {
  const content = (result as CallToolResult).content;
  const first = content[0];
  if (!first || first.type !== 'text')
    throw new Error(`tool result has no text content: ${JSON.stringify(result)}`);
  return JSON.parse(first.text) as T;
}

/** Calls a tool and returns its parsed JSON; fails when the result is an isError result. */
export async function callJson<T = Record<string, unknown>>(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
  timeoutMs = 30_000,
): Promise<T> {
  const result = await client.callTool({ name, arguments: args }, undefined, { timeout: timeoutMs });
  if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
  return resultJson<T>(result);
}

/** A raw HTTP request (node:http) so Host and Content-Length can be set to anything. */
export function rawRequest(
  url: string,
  options: {
    method?: string;
    path: string;
    headers?: OutgoingHttpHeaders;
    body?: string | Buffer;
    endBody?: boolean;
  },
): Promise<{ status: number; headers: IncomingHttpHeaders; body: string }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: target.hostname,
        port: Number(target.port),
        method: options.method ?? 'GET',
        path: options.path,
        headers: options.headers ?? {},
        setHost: !options.headers?.host,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          });
          req.destroy();
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.setTimeout(20_000, () => req.destroy(new Error('raw request timed out')));
    if (options.body !== undefined) req.write(options.body);
    if (options.endBody === false) req.flushHeaders();
    else req.end();
  });
}

/** One parsed SSE frame. */
export interface SseFrame {
  id?: string;
  event?: string;
  data?: string;
  comments: string[];
}

/** Reads Server-Sent Events frames from a fetch Response body. */
export class SseReader {
  private buffer = '';
  private readonly frames: SseFrame[] = [];
  private readonly decoder = new TextDecoder();
  private done = false;
  private pump: Promise<void>;
  private wake: (() => void) | undefined;

  constructor(
    readonly response: Response,
    private readonly controller: AbortController,
  ) {
    const reader = response.body?.getReader();
    if (!reader) throw new Error('SSE response has no body');
    this.pump = (async () => {
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          this.buffer += this.decoder.decode(value, { stream: true });
          this.parse();
        }
      } catch {
        // aborted by close()
      } finally {
        this.done = true;
        this.wake?.();
      }
    })();
  }

  private parse(): void {
    let at: number;
    while ((at = this.buffer.search(/\r?\n\r?\n/)) >= 0) {
      const block = this.buffer.slice(0, at);
      this.buffer = this.buffer.slice(at).replace(/^\r?\n\r?\n/, '');
      const frame: SseFrame = { comments: [] };
      const data: string[] = [];
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith(':')) frame.comments.push(line.slice(1).trim());
        else if (line.startsWith('id:')) frame.id = line.slice(3).trim();
        else if (line.startsWith('event:')) frame.event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (data.length > 0) frame.data = data.join('\n');
      this.frames.push(frame);
    }
    this.wake?.();
  }

  /** Every frame received so far (comments included). */
  all(): SseFrame[] {
    return [...this.frames];
  }

  /** Frames that carry data. */
  dataFrames(): SseFrame[] {
    return this.frames.filter((f) => f.data !== undefined);
  }

  /** Resolves when `predicate` holds for the frames so far; rejects after `timeoutMs` or at end of stream. */
  async until(predicate: (frames: SseFrame[]) => boolean, timeoutMs = 10_000): Promise<SseFrame[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (predicate(this.frames)) return [...this.frames];
      if (this.done)
        throw new Error(`SSE stream ended before the condition held; frames: ${JSON.stringify(this.frames)}`);
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(
          `SSE condition not met within ${timeoutMs} ms; frames: ${JSON.stringify(this.frames)}`,
        );
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 200));
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  /** Waits for the server's opening comment, so later appends are certainly "after connecting". */
  connected(timeoutMs = 10_000): Promise<SseFrame[]> {
    return this.until((frames) => frames.some((f) => f.comments.length > 0), timeoutMs);
  }

  async close(): Promise<void> {
    this.controller.abort();
    await this.pump;
  }
}

/** Opens GET /logstream/stream; returns the reader for a 200, or the plain response otherwise. */
export async function openStream(
  url: string,
  options: { query?: Record<string, string>; headers?: Record<string, string> } = {},
): Promise<{ status: number; response: Response; reader?: SseReader }> {
  const controller = new AbortController();
  const qs = new URLSearchParams(options.query ?? {}).toString();
  const response = await fetch(`${url}/logstream/stream${qs ? `?${qs}` : ''}`, {
    headers: { Accept: 'text/event-stream', ...options.headers },
    signal: controller.signal,
  });
  if (response.status !== 200) return { status: response.status, response };
  return { status: 200, response, reader: new SseReader(response, controller) };
}

/** Reads a JSON file (registration, lease). */
export function readJson<T = Record<string, unknown>>(path: string): T {
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}
