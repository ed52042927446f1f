// The hub registration file and token file, per palace, under ~/.palace/server/<key>/ (mode 0600 in
// a 0700 directory). A record is trusted only while its pid is alive.

import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export interface Registration {
  pid: number;
  host: string;
  port: number;
  scheme: 'http' | 'https';
  read_only: boolean;
  version: string;
  palace_path: string;
  started_at: string;
}

/** The canonical form of a palace path: absolute, links resolved when it exists. */
export function canonicalPalace(palacePath: string): string {
  const abs = resolve(palacePath);
  try {
    return realpathSync(abs);
  } catch {
    return abs;
  }
}

/** ~/.palace/server/<first 24 hex of sha256(canonical palace path)>/ */
export function serverDir(home: string, palacePath: string): string {
  const key = createHash('sha256').update(canonicalPalace(palacePath)).digest('hex').slice(0, 24);
  return join(home, 'server', key);
}

function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
}

/** Writes a file atomically with mode 0600. */
export function writePrivateFile(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}

export function isPidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function registrationPath(home: string, palacePath: string): string {
  return join(serverDir(home, palacePath), 'serverinfo.json');
}

export function writeRegistration(home: string, record: Registration): string {
  const dir = serverDir(home, record.palace_path);
  ensurePrivateDir(dir);
  const path = join(dir, 'serverinfo.json');
  writePrivateFile(path, JSON.stringify(record, null, 2) + '\n');
  return path;
}

/** The live hub serving this palace, or undefined (no file, unreadable, or its pid is dead). */
export function readLiveRegistration(home: string, palacePath: string): Registration | undefined {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(registrationPath(home, palacePath), 'utf8'));
  } catch {
    return undefined;
  }
  const r = value as Partial<Registration> | null;
  if (!r || typeof r !== 'object' || typeof r.pid !== 'number' || typeof r.port !== 'number' || !r.host) return undefined;
  if (!isPidAlive(r.pid)) return undefined;
  return r as Registration;
}

/** Removes the registration only if it is ours. */
export function removeRegistration(home: string, palacePath: string, pid = process.pid): void {
  const path = registrationPath(home, palacePath);
  try {
    const r = JSON.parse(readFileSync(path, 'utf8')) as Partial<Registration>;
    if (r.pid === pid) rmSync(path, { force: true });
  } catch {
    // nothing to remove
  }
}

/** The URL clients dial: wildcard binds are reached on loopback. */
export function dialUrl(r: Pick<Registration, 'scheme' | 'host' | 'port'>): string {
  const host = ['0.0.0.0', '::', '[::]', ''].includes(r.host) ? '127.0.0.1' : r.host.includes(':') && !r.host.startsWith('[') ? `[${r.host}]` : r.host;
  return `${r.scheme}://${host}:${r.port}`;
}

export function tokenPath(home: string, palacePath: string): string {
  return join(serverDir(home, palacePath), 'token');
}

/** The stored token for this palace, if any. */
export function readStoredToken(home: string, palacePath: string): string | undefined {
  try {
    const token = readFileSync(tokenPath(home, palacePath), 'utf8').trim();
    return token || undefined;
  } catch {
    return undefined;
  }
}

/**
 * The tokens a client of this palace's hub tries, in order: the stored token file, then the
 * PALACE_MCP_HTTP_TOKEN value (`envToken`), without duplicates. The one token lookup.
 */
export function hubTokens(home: string, palacePath: string, envToken: string | undefined): string[] {
  return [readStoredToken(home, palacePath), envToken].filter((t, i, all): t is string => Boolean(t) && all.indexOf(t) === i);
}

/** The live hub of a palace, as a client dials it. */
export interface LiveHub {
  url: string;
  registration: Registration;
  /** hubTokens(): the token file first, then the environment's. */
  tokens: string[];
}

/**
 * The live hub serving this palace from another process, or undefined (none, or `forward` is false:
 * PALACE_HUB_FORWARD=0).
 */
export function liveHub(config: { home: string; palacePath: string; httpToken?: string | undefined; hubForward?: boolean }): LiveHub | undefined {
  if (config.hubForward === false) return undefined;
  const palacePath = canonicalPalace(config.palacePath);
  const registration = readLiveRegistration(config.home, palacePath);
  if (!registration || registration.pid === process.pid) return undefined;
  return { url: dialUrl(registration), registration, tokens: hubTokens(config.home, palacePath, config.httpToken) };
}

/** Reuses the stored token or stores `fresh()` (mode 0600). Returns the token and whether it is new. */
export function loadOrCreateToken(home: string, palacePath: string, fresh: () => string): { token: string; created: boolean; path: string } {
  const path = tokenPath(home, palacePath);
  const existing = readStoredToken(home, palacePath);
  if (existing) return { token: existing, created: false, path };
  ensurePrivateDir(serverDir(home, palacePath));
  const token = fresh();
  writePrivateFile(path, token + '\n');
  return { token, created: true, path };
}
