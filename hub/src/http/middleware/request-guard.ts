// Browser guards: only the hub's own origin (scheme://name:port, plus PALACE_MCP_EXTRA_ALLOWED_HOSTS)
// may call it from a page (Origin, else Sec-Fetch-Site), and every state-changing request must
// declare Content-Type: application/json, which no browser sends cross-origin without a preflight.

import type { Middleware } from 'koa';

import { HubError } from '../../errors.js';

const DEFAULT_PORT: Record<string, string> = { 'http:': '80', 'https:': '443' };

/** `scheme://host:port` with the port always spelled out, or undefined when not an http(s) origin. */
export function normalizeOrigin(origin: string): string | undefined {
  try {
    const url = new URL(origin);
    const port = url.port || DEFAULT_PORT[url.protocol];
    if (!port || url.username || url.password || (url.pathname !== '/' && url.pathname !== '')) return undefined;
    return `${url.protocol}//${url.hostname.toLowerCase()}:${port}`;
  } catch {
    return undefined;
  }
}

/** The hub's own origins: its scheme and port with each of its names. */
export function ownOrigins(scheme: 'http' | 'https', names: readonly string[], port: number): Set<string> {
  const out = new Set<string>();
  for (const name of names) {
    const normalized = normalizeOrigin(`${scheme}://${name}:${port}`);
    if (normalized) out.add(normalized);
  }
  return out;
}

export interface CrossOriginOptions {
  /** Normalized origins of the hub itself (filled in once it listens). */
  own: () => ReadonlySet<string>;
  /** PALACE_MCP_EXTRA_ALLOWED_HOSTS: `host` (any scheme and port) or `host:port` (that pair). */
  extraHosts: readonly string[];
}

function isExtra(origin: string, extra: readonly string[]): boolean {
  try {
    const url = new URL(origin);
    const port = url.port || DEFAULT_PORT[url.protocol] || '';
    const name = url.hostname.toLowerCase();
    return extra.includes(name) || extra.includes(`${name}:${port}`);
  } catch {
    return false;
  }
}

/**
 * Refuses browser requests from any other origin. With an Origin header it must be the hub's own;
 * without one, `Sec-Fetch-Site: same-site|cross-site` (a no-cors fetch, <script>, <img>, a frame)
 * is refused too, except a top-level navigation (a followed link shows the user their own hub).
 */
export function crossOriginGuard(options: CrossOriginOptions): Middleware {
  return async (ctx, next) => {
    const origin = ctx.get('Origin');
    if (origin) {
      const normalized = normalizeOrigin(origin);
      if (!(normalized && options.own().has(normalized)) && !isExtra(origin, options.extraHosts))
        throw new HubError('auth.forbidden', `Origin '${origin}' is not allowed: only pages served by this hub may call it`);
    } else {
      const site = ctx.get('Sec-Fetch-Site').toLowerCase();
      const topLevel =
        (ctx.method === 'GET' || ctx.method === 'HEAD') &&
        ctx.get('Sec-Fetch-Mode').toLowerCase() === 'navigate' &&
        ctx.get('Sec-Fetch-Dest').toLowerCase() === 'document';
      if ((site === 'cross-site' || site === 'same-site') && !topLevel)
        throw new HubError('auth.forbidden', `a ${site} browser request is not allowed: only pages served by this hub may call it`);
    }
    await next();
  };
}

const BODYLESS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** For router.use(): a route that changes state takes only `application/json` bodies (415 otherwise). */
export function jsonOnly(): Middleware {
  return async (ctx, next) => {
    // A DELETE with no body (MCP's end-of-session) has no content type to check.
    const emptyDelete = ctx.method === 'DELETE' && !ctx.get('Content-Type') && !ctx.get('Transfer-Encoding') && Number(ctx.get('Content-Length') || 0) === 0;
    if (!BODYLESS.has(ctx.method) && !emptyDelete) {
      const type = (ctx.get('Content-Type').split(';')[0] ?? '').trim().toLowerCase();
      if (type !== 'application/json')
        throw new HubError(
          'http.unsupported_media_type',
          `${ctx.method} ${ctx.path} takes Content-Type: application/json, got '${ctx.get('Content-Type') || 'none'}'`,
        );
    }
    await next();
  };
}
