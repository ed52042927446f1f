// The hub supervisor, in plain Node (no electron import): spawns the hub as a child process, finds
// it through its registration file and /healthz, restarts it after ANY exit (the idle shutdown
// exits 0) with capped exponential backoff that resets only once the hub has stayed up a while,
// and stops it cleanly. A live hub already serving the palace is adopted rather than fought.

import { spawn as nodeSpawn, type ChildProcess, type SpawnOptions } from 'node:child_process';

import { dialUrl, isPidAlive, type Registration } from '../hub/src/registration.js';
import { HUB_STATES, type HubState } from './ipc-contract.js';
import type { RotatingLog } from './rotating-log.js';

export interface SupervisorStatus {
  state: HubState;
  url: string | null;
  pid: number | null;
  /** Restarts since start() (crashes and clean exits alike). */
  restarts: number;
  /** Delay before the pending restart, while one is scheduled. */
  nextRestartMs: number | null;
  lastExit: { code: number | null; signal: string | null } | null;
  /** Why it is not running, in words (the hub's last stderr line when it died). */
  message: string | null;
  /** The hub was already running when the supervisor found it; it did not spawn it. */
  adopted: boolean;
}

export interface SupervisorOptions {
  command: string;
  args: readonly string[];
  env?: Record<string, string>;
  cwd?: string;
  /** The live registration of the palace's hub (file present, pid alive), if any. */
  readRegistration: () => Registration | undefined;
  log?: RotatingLog;
  /** Restart delay: initialMs × 2^n, capped at maxMs (default 1 s … 30 s). */
  backoff?: { initialMs: number; maxMs: number };
  /** A hub up this long before exiting resets the backoff (default 60 s). */
  stableAfterMs?: number;
  /** Health check period while running (default 5 s); three failures in a row restart the hub. */
  healthEveryMs?: number;
  /** Give up on a start that is not healthy after this long (default 30 s). */
  startTimeoutMs?: number;
  /** SIGTERM, then SIGKILL after this long (default 5 s). */
  stopGraceMs?: number;
  spawn?: (command: string, args: readonly string[], options: SpawnOptions) => ChildProcess;
  fetch?: typeof fetch;
  now?: () => number;
}

type Listener = (status: SupervisorStatus) => void;

const STARTUP_POLL_MS = 150;
const UNHEALTHY_LIMIT = 3;

export class HubSupervisor {
  private child: ChildProcess | undefined;
  private adoptedPid: number | undefined;
  private wanted = false;
  private attempt = 0;
  private runningSince: number | null = null;
  private restartTimer: NodeJS.Timeout | undefined;
  private healthTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  private lastStderr = '';
  private exited: Promise<void> = Promise.resolve();
  private readonly listeners = new Set<Listener>();
  private current: SupervisorStatus = {
    state: HUB_STATES.stopped,
    url: null,
    pid: null,
    restarts: 0,
    nextRestartMs: null,
    lastExit: null,
    message: null,
    adopted: false,
  };
  private readonly now: () => number;
  private readonly doFetch: typeof fetch;

  constructor(private readonly options: SupervisorOptions) {
    this.now = options.now ?? (() => Date.now());
    this.doFetch = options.fetch ?? ((input, init) => fetch(input, init));
  }

  status(): SupervisorStatus {
    return this.current;
  }

  onChange(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private set(patch: Partial<SupervisorStatus>): void {
    this.current = { ...this.current, ...patch };
    for (const l of this.listeners) l(this.current);
  }

  /** Starts (or adopts) the hub and keeps it running until stop(). */
  start(): void {
    if (this.wanted) return;
    this.wanted = true;
    this.attempt = 0;
    this.set({ restarts: 0, message: null });
    const live = this.options.readRegistration();
    if (live && live.pid !== process.pid) this.adopt(live);
    else this.launch();
  }

  /** Stops the hub (SIGTERM, then SIGKILL after the grace period) and cancels any restart. */
  async stop(): Promise<void> {
    this.wanted = false;
    clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    clearTimeout(this.healthTimer);
    if (this.child) {
      this.set({ state: HUB_STATES.stopping, nextRestartMs: null });
      const child = this.child;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), this.options.stopGraceMs ?? 5_000);
      await this.exited;
      clearTimeout(killer);
    } else if (this.adoptedPid !== undefined) {
      this.set({ state: HUB_STATES.stopping });
      await this.endAdopted(this.adoptedPid);
    }
    this.adoptedPid = undefined;
    this.set({
      state: HUB_STATES.stopped,
      url: null,
      pid: null,
      nextRestartMs: null,
      adopted: false,
      message: null,
    });
  }

  async restart(): Promise<void> {
    await this.stop();
    this.start();
  }

  private async endAdopted(pid: number): Promise<void> {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      return;
    }
    const deadline = this.now() + (this.options.stopGraceMs ?? 5_000);
    while (isPidAlive(pid) && this.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    if (isPidAlive(pid)) process.kill(pid, 'SIGKILL');
  }

  private adopt(live: Registration): void {
    this.adoptedPid = live.pid;
    this.runningSince = this.now();
    this.set({
      state: HUB_STATES.running,
      url: dialUrl(live),
      pid: live.pid,
      adopted: true,
      message: null,
      nextRestartMs: null,
    });
    this.scheduleHealth();
  }

  private launch(): void {
    const spawn = this.options.spawn ?? nodeSpawn;
    this.lastStderr = '';
    this.runningSince = null;
    this.failures = 0;
    this.set({ state: HUB_STATES.starting, url: null, pid: null, nextRestartMs: null, adopted: false });
    const child = spawn(this.options.command, this.options.args, {
      env: this.options.env,
      cwd: this.options.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      windowsHide: true,
    });
    this.child = child;
    const startedAt = this.now();
    this.options.log?.write(
      `\n--- ${new Date().toISOString()} starting hub: ${this.options.args.slice(1).join(' ')}\n`,
    );
    child.stdout?.on('data', (chunk: Buffer) => this.options.log?.write(chunk));
    child.stderr?.on('data', (chunk: Buffer) => {
      this.options.log?.write(chunk);
      const lines = chunk
        .toString('utf8')
        .split('\n')
        .filter((l) => l.trim() !== '');
      if (lines.length > 0) this.lastStderr = (lines.at(-1) as string).slice(0, 300);
    });
    this.exited = new Promise((resolve) => {
      child.once('error', (err) => {
        this.lastStderr = `cannot start ${this.options.command}: ${err.message}`;
        if (child.exitCode === null && child.pid === undefined) this.onExit(child, null, null, resolve);
      });
      child.once('exit', (code, signal) => this.onExit(child, code, signal, resolve));
    });
    this.set({ pid: child.pid ?? null });
    this.waitForHealthy(child, startedAt);
  }

  private onExit(
    child: ChildProcess,
    code: number | null,
    signal: NodeJS.Signals | null,
    resolve: () => void,
  ): void {
    if (this.child !== child) return resolve();
    this.child = undefined;
    clearTimeout(this.healthTimer);
    const lastExit = { code, signal };
    this.options.log?.write(
      `--- ${new Date().toISOString()} hub exited (code ${code ?? '-'}, signal ${signal ?? '-'})\n`,
    );
    if (!this.wanted) {
      this.set({ lastExit });
      return resolve();
    }
    this.scheduleRestart(lastExit, this.describeExit(code, signal));
    resolve();
  }

  private describeExit(code: number | null, signal: NodeJS.Signals | null): string {
    if (code === 0) return 'the hub exited cleanly (idle shutdown or stop)';
    const why = signal ? `was ended by ${signal}` : `exited with code ${code}`;
    return this.lastStderr ? `the hub ${why}: ${this.lastStderr}` : `the hub ${why}`;
  }

  private scheduleRestart(lastExit: SupervisorStatus['lastExit'], why: string): void {
    const { initialMs, maxMs } = this.options.backoff ?? { initialMs: 1_000, maxMs: 30_000 };
    const stable = this.options.stableAfterMs ?? 60_000;
    if (this.runningSince !== null && this.now() - this.runningSince >= stable) this.attempt = 0;
    const delay = Math.min(maxMs, initialMs * 2 ** this.attempt);
    this.attempt++;
    this.runningSince = null;
    this.set({
      state: HUB_STATES.error,
      url: null,
      pid: null,
      lastExit,
      nextRestartMs: delay,
      message: `${why}; restarting in ${delay < 1000 ? `${delay} ms` : `${Math.round(delay / 1000)} s`}`,
      adopted: false,
    });
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (!this.wanted) return;
      this.set({ restarts: this.current.restarts + 1, nextRestartMs: null });
      this.launch();
    }, delay);
  }

  private async healthy(url: string): Promise<boolean> {
    try {
      const res = await this.doFetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) });
      return res.status === 200;
    } catch {
      return false;
    }
  }

  private waitForHealthy(child: ChildProcess, startedAt: number): void {
    const tick = async (): Promise<void> => {
      if (this.child !== child || !this.wanted) return;
      const reg = this.options.readRegistration();
      if (reg && reg.pid === child.pid && (await this.healthy(dialUrl(reg)))) {
        if (this.child !== child) return;
        this.runningSince = this.now();
        this.set({
          state: HUB_STATES.running,
          url: dialUrl(reg),
          pid: reg.pid,
          message: null,
          nextRestartMs: null,
        });
        this.scheduleHealth();
        return;
      }
      if (this.now() - startedAt > (this.options.startTimeoutMs ?? 30_000)) {
        this.lastStderr = this.lastStderr || 'it did not answer /healthz in time';
        child.kill('SIGKILL');
        return;
      }
      this.healthTimer = setTimeout(() => void tick(), STARTUP_POLL_MS);
    };
    this.healthTimer = setTimeout(() => void tick(), STARTUP_POLL_MS);
  }

  private scheduleHealth(): void {
    clearTimeout(this.healthTimer);
    this.healthTimer = setTimeout(() => void this.checkHealth(), this.options.healthEveryMs ?? 5_000);
  }

  /** While running: follow the registration (port) and count failed health checks. */
  private async checkHealth(): Promise<void> {
    if (!this.wanted) return;
    const pid = this.child?.pid ?? this.adoptedPid;
    const reg = this.options.readRegistration();
    const url = reg && reg.pid === pid ? dialUrl(reg) : this.current.url;
    const ok = url !== null && (await this.healthy(url));
    if (!this.wanted || (this.child?.pid ?? this.adoptedPid) !== pid) return;
    if (ok) {
      this.failures = 0;
      if (url !== this.current.url || this.current.message) this.set({ url, message: null });
      return this.scheduleHealth();
    }
    this.failures++;
    if (this.adoptedPid !== undefined && (!isPidAlive(this.adoptedPid) || this.failures >= UNHEALTHY_LIMIT)) {
      // The adopted hub is gone: from now on this supervisor runs its own.
      this.adoptedPid = undefined;
      return this.launch();
    }
    if (this.failures >= UNHEALTHY_LIMIT && this.child) {
      this.lastStderr = `it stopped answering /healthz (${this.failures} checks in a row)`;
      this.child.kill('SIGTERM');
      return;
    }
    this.set({ message: `/healthz did not answer (${this.failures} of ${UNHEALTHY_LIMIT})` });
    this.scheduleHealth();
  }
}
