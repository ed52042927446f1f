// Calls the fast palace endpoints (/list, /memory/{id}, /graph, /stats) on this palace's live hub.
// Unreachable, 401, 403 or 404 → exit 1; any other error envelope → exit 2 (after printing it).

import type { PalaceConfig } from '../hub/src/config.js';
import { HubError } from '../hub/src/errors.js';
import { canonicalPalace, hubTokens, liveHub } from '../hub/src/registration.js';
import { httpFetch } from './http-fetch.js';
import { unauthorized } from './hub-auth.js';
import { ExitSignal, type Output } from './output.js';

/** The live hub's base URL, or undefined when none serves this palace (or forwarding is off). */
export function liveHubUrl(config: Readonly<PalaceConfig>): string | undefined {
  return liveHub(config)?.url;
}

export async function daemonRequest(
  config: Readonly<PalaceConfig>,
  out: Output,
  base: string,
  method: 'GET' | 'PATCH',
  path: string,
  body?: unknown,
): Promise<unknown> {
  const [token] = hubTokens(config.home, canonicalPalace(config.palacePath), config.httpToken);
  let response: Response;
  try {
    response = await httpFetch(`${base}${path}`, {
      method,
      headers: {
        Accept: 'application/json',
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        ...(token ? { Authorization: `Bearer ${token}` } : {}),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(120_000),
    });
  } catch (err) {
    throw new HubError('hub.unreachable', `the hub at ${base} is unreachable: ${(err as Error).message}`);
  }
  const text = await response.text();
  if (response.status === 401) throw unauthorized(base, token !== undefined);
  if (response.status === 403) throw new HubError('auth.forbidden', `the hub at ${base} refused ${method} ${path} (HTTP 403)`);
  if (response.status === 404) throw new HubError('http.not_found', `the hub at ${base} answered 404 for ${method} ${path}: ${text.slice(0, 300)}`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  if (!response.ok) {
    const error = (value as { error?: { code?: string; message?: string } } | undefined)?.error ?? { code: 'internal', message: text.slice(0, 300) };
    if (out.json) out.line(JSON.stringify({ error }, null, 2));
    else out.note(`Error: ${error.message ?? `HTTP ${response.status}`} (HTTP ${response.status})`);
    throw new ExitSignal(2);
  }
  return value;
}
