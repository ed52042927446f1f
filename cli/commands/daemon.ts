// `palace daemon start|stop|status`: the hub in the background for people without the tray or a
// service manager. Logs go to ~/.palace/logs/hub.log; the token travels by environment only, and a
// token generated for a network bind is made here and shown once on this terminal, never in the log.

import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

import type { Command } from 'commander';

import { HubError } from '../../hub/src/errors.js';
import { isLoopbackHost } from '../../hub/src/http/middleware/host-guard.js';
import { canonicalPalace, dialUrl, readLiveRegistration, isPidAlive, loadOrCreateToken } from '../../hub/src/registration.js';
import { childEnv } from '../config.js';
import { action, type CommandContext } from '../context.js';
import { EXIT } from '../output.js';
import { addServeFlags } from './serve.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function healthy(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) });
    return res.status === 200;
  } catch {
    return false;
  }
}

function live(ctx: CommandContext) {
  return readLiveRegistration(ctx.config.home, canonicalPalace(ctx.config.palacePath));
}

async function start(ctx: CommandContext): Promise<number> {
  const existing = live(ctx);
  if (existing) {
    ctx.out.result({ running: true, already: true, url: dialUrl(existing), pid: existing.pid }, () => `Already running: ${dialUrl(existing)} (pid ${existing.pid})`);
    return EXIT.ok;
  }
  const o = ctx.opts;
  const logDir = join(ctx.config.home, 'logs');
  mkdirSync(logDir, { recursive: true, mode: 0o700 });
  const logPath = join(logDir, 'hub.log');
  const fd = openSync(logPath, 'a', 0o600);
  const args = [fileURLToPath(new URL('../../../bin/palace.js', import.meta.url)), '--palace', ctx.config.palacePath, 'serve'];
  for (const flag of ['host', 'port', 'backend', 'tlsCert', 'tlsKey'] as const)
    if (typeof o[flag] === 'string') args.push(`--${flag.replace(/[A-Z]/g, (c) => '-' + c.toLowerCase())}`, o[flag]);
  if (o.readOnly) args.push('--read-only');
  if (o.allowInsecure) args.push('--allow-insecure');
  // The hub prints a token it generates in its banner, which here goes to the log: so the token of a
  // network bind is loaded or generated here and handed over by environment; the hub sees it as
  // configured and never prints it.
  let token = (typeof o.token === 'string' ? o.token.trim() : '') || ctx.config.httpToken;
  let created: string | undefined;
  const host = typeof o.host === 'string' ? o.host : '127.0.0.1';
  if (!token && !isLoopbackHost(host) && !o.allowInsecure) {
    const stored = loadOrCreateToken(ctx.config.home, canonicalPalace(ctx.config.palacePath), () => randomBytes(32).toString('hex'));
    token = stored.token;
    if (stored.created) created = stored.path;
  }
  const env = childEnv(token ? { PALACE_MCP_HTTP_TOKEN: token } : {});
  const child = spawn(process.execPath, args, { detached: true, stdio: ['ignore', fd, fd], env });
  child.unref();
  closeSync(fd);
  for (let i = 0; i < 100; i++) {
    await sleep(100);
    const r = live(ctx);
    if (r && r.pid === child.pid && (await healthy(dialUrl(r)))) {
      const shown = created ? { token, token_file: created } : {};
      ctx.out.result({ running: true, url: dialUrl(r), pid: r.pid, log: logPath, ...shown }, () =>
        [
          `Started: ${dialUrl(r)} (pid ${r.pid}); log ${logPath}`,
          ...(created ? [`Token: ${token} (stored in ${created}; shown once, never logged)`] : []),
        ].join('\n'),
      );
      return EXIT.ok;
    }
    if (child.pid && !isPidAlive(child.pid)) break;
  }
  throw new HubError('hub.unreachable', `the hub did not come up; see ${logPath}`);
}

async function stop(ctx: CommandContext): Promise<number> {
  const r = live(ctx);
  if (!r) {
    ctx.out.result({ running: false }, () => 'Not running.');
    return EXIT.ok;
  }
  process.kill(r.pid, 'SIGTERM');
  for (let i = 0; i < 100 && isPidAlive(r.pid); i++) await sleep(100);
  if (isPidAlive(r.pid)) throw new HubError('hub.unreachable', `pid ${r.pid} did not stop within 10 s`);
  ctx.out.result({ running: false, stopped: r.pid }, () => `Stopped pid ${r.pid}.`);
  return EXIT.ok;
}

async function status(ctx: CommandContext): Promise<number> {
  const r = live(ctx);
  if (!r) {
    ctx.out.result({ running: false }, () => 'Not running.');
    return EXIT.error;
  }
  const ok = await healthy(dialUrl(r));
  ctx.out.result({ running: true, healthy: ok, url: dialUrl(r), pid: r.pid, read_only: r.read_only, version: r.version, started_at: r.started_at }, () =>
    `${ok ? 'Running' : 'Registered but not answering'}: ${dialUrl(r)} (pid ${r.pid}, version ${r.version}, since ${r.started_at})`,
  );
  return ok ? EXIT.ok : EXIT.error;
}

export function registerDaemon(program: Command): void {
  const daemon = program.command('daemon').description('run the hub in the background');
  addServeFlags(daemon.command('start').description('start a background hub for this palace'))
    .option('--json', 'machine-readable output')
    .action(action(start));
  daemon.command('stop').description('stop the background hub cleanly').option('--json', 'machine-readable output').action(action(stop));
  daemon.command('status').description('is a hub serving this palace, and is it healthy').option('--json', 'machine-readable output').action(action(status));
}
