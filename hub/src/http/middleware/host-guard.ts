// DNS-rebinding guard: on a loopback bind the Host header must name a loopback host (or one listed
// in PALACE_MCP_EXTRA_ALLOWED_HOSTS); an Origin header, when present, must be a loopback origin.

import type { Middleware } from 'koa';

import { HubError } from '../../errors.js';

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '::1', '[::1]'];

export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase();
  return LOOPBACK_NAMES.includes(h) || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/** The Host header values accepted for a bind address and port. */
export function allowedHosts(bindHost: string, port: number, extra: readonly string[]): Set<string> {
  const out = new Set<string>();
  const names = isLoopbackHost(bindHost) ? [...LOOPBACK_NAMES, bindHost.toLowerCase()] : [bindHost.toLowerCase()];
  for (const name of names) {
    out.add(name);
    out.add(`${name}:${port}`);
  }
  for (const entry of extra) {
    out.add(entry);
    if (!/:\d+$/.test(entry) || entry.startsWith('[')) out.add(`${entry}:${port}`);
  }
  return out;
}

function originIsLoopback(origin: string): boolean {
  try {
    const url = new URL(origin);
    return isLoopbackHost(url.hostname) || url.hostname === '[::1]';
  } catch {
    return false;
  }
}

export interface HostGuardOptions {
  /** Enforce the Host allowlist (loopback binds); non-loopback binds rely on the token and Origin. */
  pinHost: boolean;
  allowed: () => ReadonlySet<string>;
  /** Extra origins allowed besides loopback (e.g. the public name behind a proxy). */
  extraOrigins: readonly string[];
}

export function hostGuard(options: HostGuardOptions): Middleware {
  return async (ctx, next) => {
    const host = (ctx.get('Host') || '').toLowerCase();
    if (options.pinHost && !options.allowed().has(host))
      throw new HubError('auth.forbidden', `Host '${host}' is not allowed (DNS-rebinding guard); add it to PALACE_MCP_EXTRA_ALLOWED_HOSTS if a proxy sends it`);
    const origin = ctx.get('Origin');
    if (origin && !originIsLoopback(origin)) {
      let originHost = '';
      try {
        originHost = new URL(origin).host.toLowerCase();
      } catch {
        // unparsable origins are refused below
      }
      if (!options.extraOrigins.includes(originHost) && !options.extraOrigins.includes(originHost.replace(/:\d+$/, '')))
        throw new HubError('auth.forbidden', `Origin '${origin}' is not allowed`);
    }
    await next();
  };
}
