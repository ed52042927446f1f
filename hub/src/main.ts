// Process entry for the hub (`palace serve`, `palace-mcp --transport http`): wiring only, and the
// only place that exits. Generates and stores a token for a non-loopback bind when `generateToken`.

import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

import { clientBaseUrl, clientConfigText } from './client-config.js';
import { loadConfig, type Env, type PalaceConfig } from './config.js';
import { HubError, exitCodeFor, toHubError } from './errors.js';
import { isLoopbackHost } from './http/middleware/host-guard.js';
import { makeLogger } from './log.js';
import { stdioCommand } from './launcher.js';
import { canonicalPalace, dialUrl, loadOrCreateToken } from './registration.js';
import { startHub, type Hub } from './server.js';

export interface ServeFlags {
  host?: string;
  port?: string | number;
  backend?: string;
  palace?: string;
  tlsCert?: string;
  tlsKey?: string;
  readOnly?: boolean;
  token?: string;
  allowInsecure?: boolean;
  /** `palace serve` generates a token for a non-loopback bind; `palace-mcp --transport http` refuses instead. */
  generateToken?: boolean;
}

/** --port, else PALACE_PORT, else 8765. */
function parsePort(value: string | number | undefined, env: Env): number {
  const fromEnv = env.PALACE_PORT?.trim();
  const raw = value ?? (fromEnv || undefined);
  if (raw === undefined) return 8765;
  const field = value === undefined ? 'PALACE_PORT' : '--port';
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new HubError('hub.config', `${field} must be 0-65535, got '${String(raw)}'`, { field });
  return n;
}

/** Runs a hub in the foreground until SIGINT/SIGTERM or idle exit. Resolves with the exit code. */
export async function serve(flags: ServeFlags, env: Env, out: (text: string) => void): Promise<number> {
  let hub: Hub;
  let exiting: ((code: number) => void) | undefined;
  const done = new Promise<number>((resolve) => (exiting = resolve));
  let config: PalaceConfig;
  let token: string | undefined;
  let created: { path: string } | undefined;
  const host = flags.host ?? '127.0.0.1';
  try {
    // Everything that can refuse (environment, flags, token file, bind) is reported like any other
    // command's error: `Error: <message>` and its exit code, never a stack trace.
    config = loadConfig({ palace: flags.palace, backend: flags.backend }, env);
    token = flags.token?.trim() || config.httpToken;
    if (!token && !isLoopbackHost(host) && !flags.allowInsecure && flags.generateToken) {
      const stored = loadOrCreateToken(config.home, canonicalPalace(config.palacePath), () => randomBytes(32).toString('hex'));
      token = stored.token;
      if (stored.created) created = { path: stored.path };
    }
    hub = await startHub({
      config,
      log: makeLogger('palace:hub'),
      host,
      port: parsePort(flags.port, env),
      token,
      readOnly: Boolean(flags.readOnly),
      allowInsecure: Boolean(flags.allowInsecure),
      tlsCert: flags.tlsCert,
      tlsKey: flags.tlsKey,
      onIdle: () => void hub.close().then(() => exiting?.(0)),
    });
  } catch (err) {
    const e = toHubError(err);
    process.stderr.write(`Error: ${e.message}\n`);
    return exitCodeFor(e.code);
  }
  const url = dialUrl(hub);
  const loopback = isLoopbackHost(host);
  const clientUrl = loopback ? url : clientBaseUrl(hub, hostname());
  out(
    [
      'palace hub',
      `  palace   : ${canonicalPalace(config.palacePath)}`,
      `  backend  : ${config.backend}`,
      `  listening: ${url} (${loopback ? 'loopback' : 'network-exposed'})`,
      `  tls      : ${hub.scheme === 'https' ? 'on' : 'off'}`,
      `  read-only: ${flags.readOnly ? 'yes' : 'no'}`,
      `  auth     : ${token ? 'bearer token' : loopback ? 'none (loopback)' : 'NONE (--allow-insecure: anyone who reaches this address can read and write)'}`,
      `  identity : ${hub.services.identity.mode === 'enforced' ? 'enforced (only registered agents write; palace agent add)' : 'open (unregistered agent names are believed; registered ones need their secret)'}, ${hub.services.identity.describe().agents} registered agent(s)`,
      ...(created ? [`  token    : ${token} (stored in ${created.path}; shown once)`] : []),
      '',
      'Connect a client:',
      clientConfigText({
        url: clientUrl,
        token: created ? token : undefined,
        needsToken: Boolean(token),
        palacePath: canonicalPalace(config.palacePath),
        stdio: stdioCommand(),
      }),
      'Each agent can prove who it is: palace agent add <name> prints its secret once; put it in that',
      'agent\'s MCP server "env" as PALACE_AGENT_TOKEN (palace mcp), or send it as its bearer token over HTTP.',
      '',
      `Liveness: curl ${url}/healthz`,
      '',
    ].join('\n'),
  );
  const stop = (): void => void hub.close().then(() => exiting?.(0));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return done;
}
