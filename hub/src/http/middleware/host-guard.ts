// DNS-rebinding guard, on every bind: the Host header must name the hub itself (loopback names on a
// loopback bind; the bound address, the machine's host name and, on a wildcard bind, its interface
// addresses and loopback names otherwise) or a value listed in PALACE_MCP_EXTRA_ALLOWED_HOSTS.

import type { Middleware } from 'koa';

import { HubError } from '../../errors.js';

const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '::1', '[::1]'];
const WILDCARD_HOSTS = ['0.0.0.0', '::', '[::]', ''];

export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase();
  return LOOPBACK_NAMES.includes(h) || /^127\.\d+\.\d+\.\d+$/.test(h);
}

/** A bind on every interface (0.0.0.0, ::). */
export function isWildcardHost(host: string): boolean {
  return WILDCARD_HOSTS.includes(host.toLowerCase());
}

/** What the machine answers to besides loopback: its host name and interface addresses. */
export interface MachineNames {
  hostname: string;
  addresses: readonly string[];
}

/** A host as it appears in a Host header or URL: lower case, IPv6 literals in brackets. */
function asHostField(name: string): string {
  const n = name.toLowerCase();
  return n.includes(':') && !n.startsWith('[') ? `[${n}]` : n;
}

/** The names (no port) the hub accepts for itself on this bind address. */
export function hubNames(bindHost: string, machine: MachineNames): string[] {
  const names = isLoopbackHost(bindHost)
    ? [...LOOPBACK_NAMES, bindHost]
    : isWildcardHost(bindHost)
      ? [...LOOPBACK_NAMES, machine.hostname, ...machine.addresses]
      : [bindHost, machine.hostname];
  return [...new Set(names.filter((n) => n !== '').map(asHostField))];
}

/** The Host header values accepted: each name bare and with the port, plus the configured extras. */
export function allowedHosts(names: readonly string[], port: number, extra: readonly string[]): Set<string> {
  const out = new Set<string>();
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

export function hostGuard(allowed: () => ReadonlySet<string>): Middleware {
  return async (ctx, next) => {
    const host = (ctx.get('Host') || '').toLowerCase();
    if (!allowed().has(host))
      throw new HubError(
        'auth.forbidden',
        `Host '${host}' is not allowed (DNS-rebinding guard); add it to PALACE_MCP_EXTRA_ALLOWED_HOSTS if clients or a proxy use that name`,
      );
    await next();
  };
}
