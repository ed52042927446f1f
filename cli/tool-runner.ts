// Runs one palace tool for the CLI: through the live hub of this palace when there is one (so the
// hub stays the only writer), otherwise in-process from the same tool registry.

import type { PalaceConfig } from '../hub/src/config.js';
import { HubError, type ErrorCode } from '../hub/src/errors.js';
import { leaseHolder } from '../hub/src/lease.js';
import { silentLogger, makeLogger } from '../hub/src/log.js';
import { canonicalPalace, dialUrl, readLiveRegistration, readStoredToken } from '../hub/src/registration.js';
import { createLocalServices } from '../hub/src/local-services.js';
import { findTool } from '../hub/src/tools/registry.js';
import { sseData } from './stdio-proxy.js';

function unwrap(text: string, isError: boolean): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    if (isError) throw new HubError('internal', text);
    return text;
  }
  if (isError) {
    const e = (value as { error?: { code?: string; message?: string; field?: string } }).error;
    throw new HubError((e?.code as ErrorCode | undefined) ?? 'internal', e?.message ?? text, e?.field ? { field: e.field } : {});
  }
  return value;
}

/** Options of one CLI tool call. */
export interface RunToolOptions {
  /** Progress reports of a long tool (a mine): asked of the hub as MCP progress notifications. */
  onProgress?: (progress: number, total: number | undefined, message: string | undefined) => void;
}

/** Reads an SSE response incrementally, reporting progress notifications, and returns the last data frame. */
async function readFrames(response: Response, onProgress: NonNullable<RunToolOptions['onProgress']>): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return '';
  const decoder = new TextDecoder();
  let buffer = '';
  let last = '';
  const take = (block: string): void => {
    for (const data of sseData(block)) {
      try {
        const m = JSON.parse(data) as { method?: string; params?: { progress?: number; total?: number; message?: string } };
        if (m.method === 'notifications/progress') {
          onProgress(m.params?.progress ?? 0, m.params?.total, m.params?.message);
          continue;
        }
      } catch {
        // not JSON: keep it as the candidate result so the caller reports it
      }
      last = data;
    }
  };
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    const cut = buffer.lastIndexOf('\n\n');
    if (cut >= 0) {
      take(buffer.slice(0, cut + 2));
      buffer = buffer.slice(cut + 2);
    }
  }
  take(buffer);
  return last;
}

async function viaHub(
  config: Readonly<PalaceConfig>,
  base: string,
  name: string,
  args: Record<string, unknown>,
  options: RunToolOptions = {},
): Promise<unknown> {
  const token = readStoredToken(config.home, canonicalPalace(config.palacePath)) ?? config.httpToken;
  let response: Response;
  try {
    response = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        ...(token ? { Authorization: `Bearer ${token}` } : {}),
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name, arguments: args, ...(options.onProgress ? { _meta: { progressToken: 1 } } : {}) },
      }),
    });
  } catch (err) {
    throw new HubError('hub.unreachable', `the hub at ${base} is unreachable: ${(err as Error).message}`);
  }
  const sse = (response.headers.get('content-type') ?? '').includes('text/event-stream');
  const body = sse && options.onProgress && response.status === 200 ? await readFrames(response, options.onProgress) : await response.text();
  if (response.status === 401) throw new HubError('auth.unauthorized', `the hub at ${base} refused the token (HTTP 401); set PALACE_MCP_HTTP_TOKEN`);
  if (response.status === 403) throw new HubError('auth.forbidden', `the hub at ${base} refused the request (HTTP 403)`);
  if (response.status === 404) throw new HubError('http.not_found', `the hub at ${base} has no /mcp (HTTP 404)`);
  const payload = sse && !options.onProgress ? (sseData(body).at(-1) ?? '') : body;
  const message = JSON.parse(payload) as {
    result?: { content?: Array<{ text?: string }>; isError?: boolean };
    error?: { message?: string; data?: { code?: string } };
  };
  if (message.error) throw new HubError((message.error.data?.code as ErrorCode | undefined) ?? 'internal', message.error.message ?? 'hub error');
  return unwrap(message.result?.content?.[0]?.text ?? 'null', message.result?.isError === true);
}

async function locally(
  config: Readonly<PalaceConfig>,
  name: string,
  args: Record<string, unknown>,
  verbose: boolean,
  options: RunToolOptions = {},
): Promise<unknown> {
  const tool = findTool(name);
  if (!tool) throw new HubError('internal', `unknown tool ${name}`);
  const palacePath = canonicalPalace(config.palacePath);
  const holder = leaseHolder(palacePath);
  if (tool.mutating && !tool.lockFree && holder && holder.pid !== process.pid)
    throw new HubError(
      'lease.held',
      `the palace is held by a hub (pid ${holder.pid}${holder.address ? ` at ${holder.address}` : ''}); with PALACE_HUB_FORWARD=0 direct writes are refused. Unset it to write through the hub`,
    );
  const local = createLocalServices(config, palacePath, verbose ? makeLogger('palace') : silentLogger);
  try {
    const onProgress = options.onProgress;
    return await tool.handler(args as never, local.services, {
      signal: new AbortController().signal,
      progress: async (progress, total, message) => onProgress?.(progress, total, message),
    });
  } finally {
    await local.close();
  }
}

/** Calls a tool through the live hub (unless PALACE_HUB_FORWARD=0) or in-process. */
export async function runTool(
  config: Readonly<PalaceConfig>,
  name: string,
  args: Record<string, unknown>,
  options: RunToolOptions = {},
): Promise<unknown> {
  const hub = config.hubForward ? readLiveRegistration(config.home, canonicalPalace(config.palacePath)) : undefined;
  if (hub && hub.pid !== process.pid) return viaHub(config, dialUrl(hub), name, args, options);
  return locally(config, name, args, true, options);
}
